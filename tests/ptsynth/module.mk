# tests/ptsynth/: the PT trace synthesizer (build/bin/ptsynth, not
# installed) and ptblk, the libipt block-decoder checker (a test tool).
tests_ptsynth_CFLAGS = $(CAPSTONE_CFLAGS)
PTSYNTH_LIBS = $(CAPSTONE_LIBS) -lipt

$(O)/bin/ptsynth: $(call objs,tests/ptsynth/ptsynth.c tests/ptsynth/ptstep.c) $(O)/lib/libptbackend.a
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PTSYNTH_LIBS)

$(O)/tests/ptblk: $(call objs,tests/ptsynth/ptblk.c)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PTSYNTH_LIBS)

TEST_TOOLS += $(O)/bin/ptsynth $(O)/tests/ptblk

# The corpus traces other tests use ($(O)/corpus/NAME.{data,truth,sideband},
# see tests/corpus/corpus.sh link), made by `make tests`; cached by input
# hash under $(O)/corpus/traces/, so a rerun only checks the hashes.
$(O)/corpus/.linked: $(O)/bin/ptsynth tests/corpus/corpus.sh $(wildcard tests/corpus/*.c tests/corpus/*.cpp tests/corpus/*.ml)
	$(call msg,CORPUS,$(O)/corpus)
	$(Q)O=$(O) tests/corpus/corpus.sh link
	$(Q)touch $@

TEST_TOOLS += $(O)/corpus/.linked

# The benchmark trace for later benchmarks: >= 20M instructions of a real
# workload (sort of 5000 lines, 31M instructions), about a minute on an
# idle 2-core box. Kept out of $(O)/corpus/ so corpus-wide tests skip it.
#   make bench-trace -> $(O)/bench/bench.data (+ bench.truth, bench.sideband)
$(O)/bench/bench.data: $(O)/bin/ptsynth tests/corpus/corpus.sh
	$(call msg,PTSYNTH,$@)
	$(Q)O=$(O) tests/corpus/corpus.sh bench >/dev/null

bench-trace: $(O)/bench/bench.data

.PHONY: bench-trace

# ptfork: a per-CPU recording of several processes (fork, exec, CPU-wide
# switch records) made of ptsynth --per-cpu recordings of single programs
$(O)/bin/ptfork: $(call objs,tests/ptsynth/ptfork.c) $(O)/lib/libptbackend.a $(O)/lib/libstrace_decoder.a $(O)/lib/libstrace.a
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DECODER_LIBS)

TEST_TOOLS += $(O)/bin/ptfork
