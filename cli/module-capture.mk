# cli/ptrace-capture: decode perf.data (and, with PT hardware, capture).
CAPTURE_LIBS := $(O)/lib/libptbackend.a $(O)/lib/libstrace_decoder.a $(O)/lib/libstrace.a
cli_CFLAGS += -I.

$(O)/bin/ptrace-capture: $(O)/obj/cli/ptrace-capture.o $(CAPTURE_LIBS)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(CAPTURE_LIBS) $(DECODER_LIBS)

BINS += $(O)/bin/ptrace-capture
