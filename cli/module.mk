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
CLI_COMMON := cli/format.c cli/fmt_names.c cli/sample.c cli/ringmsg.c \
	cli/out.c cli/views.c cli/views_label.c cli/views_report.c \
	cli/pluginpath.c \
	cli/fmt_chrome.c cli/fmt_fxt.c cli/fmt_uftrace.c cli/fmt_uftrace_dir.c \
	cli/fmt_uftrace_sym.c cli/fmt_uftrace_info.c cli/fmt_svg.c \
	cli/control.c
CLI_COMMON_OBJS := $(call objs,$(CLI_COMMON))

# ptrace-read: main() parses and dispatches (ptrace-read.c); a file per
# command (read_*.c), their shared state and messages in read.h,
# read_common.c
READ_SRCS := cli/ptrace-read.c cli/read_common.c cli/read_events.c \
	cli/read_open.c cli/read_view.c cli/read_plugins.c cli/read_diff.c \
	cli/read_generate.c cli/read_stat.c cli/read_list.c cli/read_gc.c cli/read_types.c \
	cli/read_cov.c
# (the decoder's archive for its DWARF layer: -F srcline, cli/srcline.c;
# -f lcov and coverage, cli/read_cov.c)
$(eval $(call program,$(O)/bin/ptrace-read,$(READ_SRCS) cli/choice.c cli/report_diff.c cli/fields.c cli/srcline.c $(CLI_COMMON),$(DECODER_A) $(LIBSTRACE_A),DECODER_LIBS))
$(eval $(call program,$(O)/bin/ptrace-capture,cli/ptrace-capture.c cli/capture_ring.c cli/capture_offline.c cli/capture_raw.c cli/capture_run_live.c cli/capture_archive.c cli/capture_live.c cli/ringmsg.c cli/control.c cli/pluginpath.c cli/choice.c,$(PIPELINE_LINK),PIPELINE_LDLIBS))

BINS += $(O)/bin/ptrace-read $(O)/bin/ptrace-capture
MANPAGES += docs/man/ptrace-read.1 docs/man/ptrace-capture.1
