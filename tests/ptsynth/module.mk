# tests/ptsynth/: the PT trace synthesizer (build/bin/ptsynth, not
# installed) and ptblk, the libipt block-decoder checker (a test tool).
tests_ptsynth_CFLAGS := $(shell $(PKG_CONFIG) --cflags capstone)
PTSYNTH_LIBS := $(shell $(PKG_CONFIG) --libs capstone) -lipt

$(O)/bin/ptsynth: $(call objs,tests/ptsynth/ptsynth.c) $(O)/lib/libptbackend.a
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PTSYNTH_LIBS)

$(O)/tests/ptblk: $(call objs,tests/ptsynth/ptblk.c)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PTSYNTH_LIBS)

TEST_TOOLS += $(O)/bin/ptsynth $(O)/tests/ptblk

# The corpus (tests/corpus/corpus.sh builds it on demand, cached by input
# hash) and the benchmark trace for later benchmarks: >= 20M instructions
# of a real workload (sort), made in well under 3 minutes.
#   make bench-trace   -> $(O)/corpus/bench.data (+ bench.truth, bench.sideband)
$(O)/corpus/bench.data: $(O)/bin/ptsynth tests/corpus/corpus.sh
	$(call msg,PTSYNTH,$@)
	$(Q)O=$(O) tests/corpus/corpus.sh bench >/dev/null
	$(Q)ln -sf bench/trace.data $@
	$(Q)ln -sf bench/trace.truth $(O)/corpus/bench.truth
	$(Q)ln -sf bench/trace.sideband $(O)/corpus/bench.sideband

bench-trace: $(O)/corpus/bench.data

.PHONY: bench-trace
