# cli/: the commands, thin over the libraries.
#   ptrace-read     read a ring (text, jsonl, raw, saved ring), --generate,
#                   --stat, -f report --diff, -F; what it shows a ring as
#                   is cli/view/ (libstrace_view.a, cli/view/module.mk);
#                   sample.c is shared with the tests and benchmarks
#   ptrace-capture  decode perf.data (-i) or raw PT (--pt), or capture
#                   live (-p, -- CMD; capture_live.c); bundles of a
#                   recording and its code (--archive, -i BUNDLE.tar;
#                   capture_archive.c)
READ_LINK := $(LIBSTRACE_VIEW_A) $(DECODER_A) $(LIBSTRACE_A)

# ptrace-read: main() parses and dispatches (ptrace-read.c); a file per
# command (read_*.c), their shared state and messages in read.h,
# read_common.c
READ_SRCS := cli/ptrace-read.c cli/read_common.c cli/read_events.c \
	cli/read_open.c cli/read_view.c cli/read_plugins.c cli/read_diff.c \
	cli/read_generate.c cli/read_stat.c cli/read_list.c cli/read_gc.c cli/read_types.c \
	cli/read_inline.c cli/read_cov.c
$(eval $(call program,$(O)/bin/ptrace-read,$(READ_SRCS) cli/choice.c cli/sample.c cli/ringmsg.c cli/pluginpath.c cli/control.c cli/control_lines.c,$(READ_LINK),DECODER_LIBS))
$(eval $(call program,$(O)/bin/ptrace-capture,cli/ptrace-capture.c cli/capture_ring.c cli/capture_offline.c cli/capture_raw.c cli/capture_run_live.c cli/capture_archive.c cli/capture_live.c cli/ringmsg.c cli/control.c cli/control_lines.c cli/pluginpath.c cli/choice.c,$(LIBSTRACE_VIEW_A) $(PIPELINE_LINK),PIPELINE_LDLIBS))

BINS += $(O)/bin/ptrace-read $(O)/bin/ptrace-capture
MANPAGES += docs/man/ptrace-read.1 docs/man/ptrace-capture.1
