# cli/view/: what ptrace-read shows a ring as -> libstrace_view.a,
# internal (cli/view/view.h; not installed): the per-event formatter
# (text, JSON lines) and the names as the formats show them, -F fields,
# the stack views (tree, report, folded), two reports compared, the
# viewer formats (chrome, fxt, svg, uftrace) and the buffered output they
# all write through, and source lines (srcline.c, over the decoder's DWARF
# layer). It uses libstrace and the decoder (a program that links it also
# links libstrace_decoder.a, libstrace.a and DECODER_LIBS: READ_LINK): the
# commands, the tests and the benchmarks link it instead of compiling its
# files again.
LIBSTRACE_VIEW_SRCS := $(wildcard cli/view/*.c)
LIBSTRACE_VIEW_A := $(O)/lib/libstrace_view.a

$(eval $(call archive,$(LIBSTRACE_VIEW_A),$(call objs,$(LIBSTRACE_VIEW_SRCS))))

LIBS += $(LIBSTRACE_VIEW_A)
