# cli/ptrace-capture: decode perf.data (-i) or capture live (-p, -- CMD).
CAPTURE_LIBS := $(O)/lib/libptbackend.a $(O)/lib/libptlive.a $(O)/lib/libptbackend.a \
	$(O)/lib/libstrace_decoder.a $(O)/lib/libstrace.a
cli_CFLAGS += -I.

$(O)/bin/ptrace-capture: $(call objs,cli/ptrace-capture.c cli/capture_live.c cli/ringmsg.c) $(CAPTURE_LIBS)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(CAPTURE_LIBS) $(DECODER_LIBS) $(PTLIVE_LDLIBS)

BINS += $(O)/bin/ptrace-capture
MANPAGES += docs/man/ptrace-capture.1
