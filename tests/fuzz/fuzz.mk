# tests/fuzz/fuzz.mk (included by tests/module.mk): fuzz targets. Each
# is built two ways:
#
#   $(O)/tests/fuzz_<target>  with fuzz_main.c, the replay driver that
#       make check runs: the target's corpus and deterministic mutants of
#       it; FUZZ_REPRO=1 adds tests/fuzz/repro/<corpus>/, reproducers of
#       bugs not fixed yet (make check FUZZ_REPRO=1)
#   build/fuzz/fuzz_<target>  for libFuzzer (make fuzz): clang, the static
#       libraries instrumented with -fsanitize=fuzzer-no-link,address,
#       undefined, the target linked with -fsanitize=fuzzer,address,undefined
#
# The targets, and the corpus (tests/fuzz/corpus/<corpus>/) each reads:
#   perf      perf.data -> ring with the fast walker (ptrace-capture -i)  perf
#   perf_ref  the same with libipt's reference decoder (--decoder
#             reference): slower, so a target of its own            perf
#   ring      a ring file, read as ptrace-read reads it                  ring
#   blockfile a block cache file (docs/cache.md), sealed to claim
#             /usr/bin/true (else the target's own executable), used by
#             an image                                          blockfile
#   rawpt     a raw PT stream after a header saying how /usr/bin/true
#             (else the target's own executable) is mapped
#             (ptrace-capture --pt with --raw or --elf)          rawpt
#   damage    a damage to a corpus trace (tests/decoder/damage.h): the
#             fast walker and libipt must agree on whether it is an
#             error, but for libipt's own differences; its replay needs
#             the corpus traces, so tests/decoder/e2e-damage-diff.sh runs
#             it, not the unit tier                               damage
#   control   a control FIFO's bytes (cli/control_lines.c), fed in pieces
#             the first byte sizes: the same lines as fed whole, none a
#             command the rules forbid                           control
#
#   make fuzz                                  build every libFuzzer target
#   make fuzz-run FUZZ_TARGET=ring FUZZ_SECONDS=900
#       fuzz one target (default perf) in one process, from a copy of
#       its corpus in build/fuzz/corpus-<target>; a crash, hang or leak
#       ends the run, saved in build/fuzz/artifacts-<target>/
#   make fuzz-merge FUZZ_TARGET=ring
#       add to tests/fuzz/corpus/<corpus>/ what fuzz-run found that covers
#       more (libFuzzer's -merge=1), none over FUZZ_MAX_LEN bytes
FUZZ_TARGETS := perf perf_ref ring blockfile rawpt damage control
FUZZ_CORPUS_perf := perf
FUZZ_CORPUS_perf_ref := perf
FUZZ_CORPUS_ring := ring
FUZZ_CORPUS_blockfile := blockfile
FUZZ_CORPUS_rawpt := rawpt
FUZZ_CORPUS_damage := damage
FUZZ_CORPUS_control := control

# What each target links besides its object (static libraries in link
# order), and which defines its object is compiled with.
FUZZ_perf_DEPS := $(PTPIPELINE_A) $(PTPERF_A) $(DECODER_A) $(LIBSTRACE_A)
FUZZ_perf_LDLIBS = $(DECODER_LIBS)
FUZZ_perf_ref_DEPS := $(FUZZ_perf_DEPS)
FUZZ_perf_ref_LDLIBS = $(DECODER_LIBS)
FUZZ_perf_ref_SRC := tests/fuzz/fuzz_perf.c
FUZZ_perf_ref_DEFS := -DFUZZ_PERF_REFERENCE
# the ring target reads as ptrace-read does: cli/view/'s formatters
FUZZ_ring_DEPS := $(LIBSTRACE_VIEW_A) $(DECODER_A) $(LIBSTRACE_A)
FUZZ_ring_LDLIBS = $(DECODER_LIBS)
FUZZ_blockfile_DEPS := $(DECODER_A) $(LIBSTRACE_A)
FUZZ_blockfile_LDLIBS = $(DECODER_LIBS)
FUZZ_rawpt_DEPS := $(FUZZ_perf_DEPS)
FUZZ_rawpt_LDLIBS = $(DECODER_LIBS)
# the control target: the line cutter alone (no library)
FUZZ_control_DEPS := $(O)/obj/cli/control_lines.o
FUZZ_damage_DEPS := $(O)/obj/tests/decoder/damage.o $(FUZZ_perf_DEPS)
FUZZ_damage_LDLIBS = $(DECODER_LIBS)

# Per target: its object, the replay driver compiled for it (FUZZ_TARGET
# names it, FUZZ_CORPUS its corpus), and what each program links.
define FUZZ_TARGET_RULES
$(O)/obj/tests/fuzz/target_$(1).o: $(or $(FUZZ_$(1)_SRC),tests/fuzz/fuzz_$(1).c)
	$$(call msg,CC,$$@)
	@mkdir -p $$(@D)
	$$(Q)$$(CC) $$(ALL_CFLAGS) $$(tests_fuzz_CFLAGS) $(FUZZ_$(1)_DEFS) \
		-MMD -MP -c -o $$@ $$<

$(O)/obj/tests/fuzz/replay_$(1).o: tests/fuzz/fuzz_main.c
	$$(call msg,CC,$$@)
	@mkdir -p $$(@D)
	$$(Q)$$(CC) $$(ALL_CFLAGS) $$(tests_fuzz_CFLAGS) -DFUZZ_TARGET='"$(1)"' \
		-DFUZZ_CORPUS='"$(FUZZ_CORPUS_$(1))"' -MMD -MP -c -o $$@ $$<

$(O)/tests/fuzz_$(1): $(O)/obj/tests/fuzz/replay_$(1).o
$(O)/tests/fuzz_$(1) $(O)/fuzz_$(1): $(O)/obj/tests/fuzz/target_$(1).o \
	$(FUZZ_$(1)_DEPS)
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call FUZZ_TARGET_RULES,$(t))))

# The replay programs (make check) and the libFuzzer ones (make fuzz, with
# O=build/fuzz): objects first, then the static libraries.
$(O)/tests/fuzz_%:
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(filter %.a,$^) \
		$(FUZZ_$*_LDLIBS)

FUZZ_LINK := -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer

$(O)/fuzz_%:
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(FUZZ_LINK) $(LDFLAGS) -o $@ $(filter %.o,$^) \
		$(filter %.a,$^) $(FUZZ_$*_LDLIBS)

# (damage's replay needs the corpus traces: a tool that
# tests/decoder/e2e-damage-diff.sh runs)
FUZZ_REPLAYS := $(foreach t,$(filter-out damage,$(FUZZ_TARGETS)),$(O)/tests/fuzz_$(t))
TEST_TOOLS += $(O)/tests/fuzz_damage

# The ring target's seeds (tests/fuzz/corpus/ring/) come from this tool;
# capture.srb from a ring of make check's trace corpus:
#   build/bin/ptrace-capture -i build/corpus/threads-percpu.data -o CAP.srb
#   build/tests/ring_seeds tests/fuzz/corpus/ring CAP.srb
$(eval $(call tool,$(O)/tests/ring_seeds,tests/fuzz/ring_seeds.c cli/sample.c,$(LIBSTRACE_A),NO_LDLIBS))

# libFuzzer builds: `make fuzz` runs make again with O=build/fuzz, clang and
# the sanitizers, for the fuzz targets only: not the shared libraries (an
# -fsanitize=address .so does not link with -z defs) nor anything else the
# targets do not need.
FUZZ_O := build/fuzz
FUZZ_SAN := fuzzer-no-link,address,undefined
# The decoder's comparisons are not traced (-fsanitize-coverage=trace-cmp,
# which fuzzer-no-link turns on). Most of them compare the addresses the
# walk reaches with block ends and jump targets, thousands an input, and
# libFuzzer can make nothing of those (a PT packet's address is
# compressed against the last one); the packet parser's 1- and 2-byte
# comparisons of opcodes feed only -use_value_profile, which is off, and
# its PSB test is a memcmp(), which libFuzzer sees either way. Tracing
# them took a third of the perf target's time. The decoder's edges are
# still counted; the perf.data reader's comparisons (pt_backend/) and
# the ring's (events/) are still traced.
FUZZ_DECODER_CFLAGS := -fno-sanitize-coverage=trace-cmp

fuzz-bins: $(foreach t,$(FUZZ_TARGETS),$(O)/fuzz_$(t))

deps-fuzz:
	@scripts/install-deps fuzz

fuzz: deps-fuzz
	@$(MAKE) --no-print-directory O=$(FUZZ_O) CC=clang SAN=$(FUZZ_SAN) \
		FUZZ_DECODER_CFLAGS=$(FUZZ_DECODER_CFLAGS) fuzz-bins

FUZZ_TARGET ?= perf
FUZZ_SECONDS ?= 60
FUZZ_MAX_LEN ?= 65536
# -timeout: an input that takes longer is a hang (saved as timeout-*).
# One process, libFuzzer's own way: the run stops at the first crash,
# hang, leak or out-of-memory, saved in FUZZ_ARTIFACTS, and make fails.
# (-fork=1 would go on after one, but on this 2-core VM it ran at half
# the rate: each of its jobs, 1 s long at first, starts a process that
# reads the objects and their symbols again, runs its seeds first, and
# its inputs are merged again by the parent.)
FUZZ_FLAGS ?= -timeout=10 -rss_limit_mb=4096 -max_len=$(FUZZ_MAX_LEN)
FUZZ_SRC_CORPUS = tests/fuzz/corpus/$(FUZZ_CORPUS_$(FUZZ_TARGET))
FUZZ_CORPUS_DIR = $(FUZZ_O)/corpus-$(FUZZ_TARGET)
FUZZ_ARTIFACTS = $(FUZZ_O)/artifacts-$(FUZZ_TARGET)

fuzz-check-target:
	@case " $(FUZZ_TARGETS) " in *" $(FUZZ_TARGET) "*) ;; \
	*) echo "FUZZ_TARGET=$(FUZZ_TARGET): no such target (one of: $(FUZZ_TARGETS))" >&2; \
	   exit 2;; esac

fuzz-run: fuzz-check-target fuzz
	mkdir -p $(FUZZ_CORPUS_DIR) $(FUZZ_ARTIFACTS)
	cp -n $(FUZZ_SRC_CORPUS)/* $(FUZZ_CORPUS_DIR)/
	$(FUZZ_O)/fuzz_$(FUZZ_TARGET) $(FUZZ_FLAGS) \
		-max_total_time=$(FUZZ_SECONDS) \
		-artifact_prefix=$(FUZZ_ARTIFACTS)/ $(FUZZ_CORPUS_DIR)

# -merge=1 adds to the first directory only the inputs of the others that
# cover something it does not; -use_counters=0: code it does not reach at
# all (not the same code more often), so that the corpus stays small;
# inputs over FUZZ_MAX_LEN stay out.
FUZZ_MERGE_FLAGS ?= -use_counters=0
fuzz-merge: fuzz-check-target fuzz
	@test -d $(FUZZ_CORPUS_DIR) || \
		{ echo "$(FUZZ_CORPUS_DIR): nothing to merge (make fuzz-run FUZZ_TARGET=$(FUZZ_TARGET) first)" >&2; exit 2; }
	rm -rf $(FUZZ_O)/merge-$(FUZZ_TARGET)
	mkdir -p $(FUZZ_O)/merge-$(FUZZ_TARGET)
	find $(FUZZ_CORPUS_DIR) -type f -size -$$(($(FUZZ_MAX_LEN) + 1))c \
		-exec cp {} $(FUZZ_O)/merge-$(FUZZ_TARGET)/ \;
	$(FUZZ_O)/fuzz_$(FUZZ_TARGET) -merge=1 $(FUZZ_MERGE_FLAGS) -timeout=10 \
		-rss_limit_mb=4096 -max_len=$(FUZZ_MAX_LEN) $(FUZZ_SRC_CORPUS) \
		$(FUZZ_O)/merge-$(FUZZ_TARGET)

.PHONY: fuzz fuzz-bins fuzz-run fuzz-merge fuzz-check-target deps-fuzz
