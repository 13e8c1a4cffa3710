# cli/: the commands, thin over the libraries.
#   ptrace-read     read a ring (text, jsonl, raw, saved ring), --generate,
#                   --stat, -f report --diff (report_diff.c), -F
#                   (fields.c); format.c,
#                   sample.c and ringmsg.c are shared with the tests and
#                   benchmarks (CLI_COMMON)
#   ptrace-capture  decode perf.data (-i) or raw PT (--pt), or capture
#                   live (-p, -- CMD; capture_live.c); bundles of a
#                   recording and its code (--archive, -i BUNDLE.tar;
#                   capture_archive.c)
CLI_COMMON := cli/format.c cli/sample.c cli/ringmsg.c cli/out.c cli/views.c \
	cli/pluginpath.c \
	cli/fmt_chrome.c cli/fmt_fxt.c cli/fmt_uftrace.c cli/fmt_svg.c \
	cli/control.c
CLI_COMMON_OBJS := $(call objs,$(CLI_COMMON))

$(eval $(call program,$(O)/bin/ptrace-read,cli/ptrace-read.c cli/report_diff.c cli/fields.c $(CLI_COMMON),$(LIBSTRACE_A),NO_LDLIBS))
$(eval $(call program,$(O)/bin/ptrace-capture,cli/ptrace-capture.c cli/capture_ring.c cli/capture_offline.c cli/capture_raw.c cli/capture_run_live.c cli/capture_archive.c cli/capture_live.c cli/ringmsg.c cli/control.c cli/pluginpath.c,$(PIPELINE_LINK),PIPELINE_LDLIBS))

BINS += $(O)/bin/ptrace-read $(O)/bin/ptrace-capture
MANPAGES += docs/man/ptrace-read.1 docs/man/ptrace-capture.1
