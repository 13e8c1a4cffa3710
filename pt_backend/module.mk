# pt_backend/: three stages, a library each. A stage includes another
# only through its stage header (tests/e2e/layout.sh checks):
#   perf/      the perf.data codec: read, write, format, build-ids
#              -> libptperf.a
#   capture/   perf_event_open on intel_pt, the AUX and data rings, the
#              vDSO, the stacks at attach (libunwind-ptrace)
#              and the functions --trigger names
#              -> libptcapture.a (uses perf/, decoder/)
#   pipeline/  perf.data, raw PT and live streams through the decoder's
#              walkers into a ring -> libptpipeline.a (uses capture/,
#              perf/, decoder/)
PTPERF_A := $(O)/lib/libptperf.a
PTCAPTURE_A := $(O)/lib/libptcapture.a
PTPIPELINE_A := $(O)/lib/libptpipeline.a

$(eval $(call archive,$(PTPERF_A),$(call objs,$(wildcard pt_backend/perf/*.c))))
$(eval $(call archive,$(PTCAPTURE_A),$(call objs,$(wildcard pt_backend/capture/*.c))))
$(eval $(call archive,$(PTPIPELINE_A),$(call objs,$(wildcard pt_backend/pipeline/*.c))))

# (libunwind is loaded on first need: capture/unwind.c)
# capture/ names functions through the decoder (probe.c)
PTCAPTURE_LDLIBS = -lipt -lpthread $(DECODER_LIBS)
# What a program of the whole pipeline links, in order, each once.
PIPELINE_LINK := $(PTPIPELINE_A) $(PTCAPTURE_A) $(PTPERF_A) $(DECODER_A) \
	$(LIBSTRACE_A)
PIPELINE_LDLIBS = $(PTCAPTURE_LDLIBS) $(DECODER_LIBS)

LIBS += $(PTPERF_A) $(PTCAPTURE_A) $(PTPIPELINE_A)
