# tests/: every test program, test tool and benchmark, registered once,
# each with what it links (see docs/testing.md).
#
#   $(call unit,NAME,SOURCES,LIBS,LDLIBS-VARIABLE)
#       a unit test: $(O)/tests/NAME from SOURCES (the first is its
#       tests/unit/NAME.c), run by make check and make check-unit
#   $(call tool,OUT,SOURCES,LIBS,LDLIBS-VARIABLE)
#       a program the tests or benchmarks run, built by make tests
#
# The scripts need no registration: tests/run.sh runs every
# tests/e2e/*.sh and tests/*/e2e-*.sh (make check and make check-e2e);
# each begins with tests/e2e/lib.sh, which is not run itself.
# A tests/unit/test_*.c that no line below names stops the build.

tests_unit_CFLAGS = -Itests $(CAPSTONE_CFLAGS)
tests_live_CFLAGS := -O0 -fno-omit-frame-pointer -fno-inline
tests_bench_CFLAGS := -Itests
tests_ptsynth_CFLAGS = $(CAPSTONE_CFLAGS)
tests_fuzz_CFLAGS :=

UNIT_TESTS :=
UNIT_SOURCES :=
define unit
$(call program,$(O)/tests/$(1),$(2),$(3),$(4))
UNIT_TESTS += $(O)/tests/$(1)
UNIT_SOURCES += $(firstword $(2))
endef
define tool
$(call program,$(1),$(2),$(3),$(4))
TEST_TOOLS += $(1)
endef

CAPTURE_TEST_LINK := $(PTCAPTURE_A) $(PTPERF_A) $(DECODER_A) $(LIBSTRACE_A)
DECODER_LINK := $(DECODER_A) $(LIBSTRACE_A)
PTSYNTH_LIBS = $(CAPSTONE_LIBS) -lipt

# --- unit tests ---------------------------------------------------------------
# libstrace: the ring (unit and stress), names, the formatter of ptrace-read
$(eval $(call unit,test_ring,tests/unit/test_ring.c,$(LIBSTRACE_A),PTHREAD))
$(eval $(call unit,test_ring_stress,tests/unit/test_ring_stress.c,$(LIBSTRACE_A),PTHREAD))
$(eval $(call unit,test_names,tests/unit/test_names.c,$(LIBSTRACE_A),NO_LDLIBS))
$(eval $(call unit,test_opts,tests/unit/test_opts.c,$(LIBSTRACE_A),NO_LDLIBS))
$(eval $(call unit,test_errors,tests/unit/test_errors.c,$(LIBSTRACE_A),NO_LDLIBS))
$(eval $(call unit,test_stack,tests/unit/test_stack.c,$(LIBSTRACE_A),NO_LDLIBS))
$(eval $(call unit,test_stack_inline,tests/unit/test_stack_inline.c,$(LIBSTRACE_A),NO_LDLIBS))
$(eval $(call unit,test_plugins,tests/unit/test_plugins.c,$(LIBSTRACE_A),NO_LDLIBS))
$(eval $(call unit,test_control_lines,tests/unit/test_control_lines.c cli/control_lines.c,$(LIBSTRACE_A),NO_LDLIBS))
$(eval $(call unit,test_format,tests/unit/test_format.c,$(READ_LINK),DECODER_LIBS))
# the decoder
$(foreach t,blockfile cpu demangle dwarf errata evvec flow image image_block image_cache image_cov insn_len packet parallel perfsym ref segment spread stream summary symbols sysnr timing tnt_cache walk walk_vec,$(eval $(call unit,test_decoder_$(t),tests/unit/test_decoder_$(t).c,$(DECODER_LINK),DECODER_LIBS)))
# (this one also calls Capstone itself, as an oracle)
DECODER_BLOCK_LIBS = $(DECODER_LIBS) $(CAPSTONE_LIBS)
$(eval $(call unit,test_decoder_block,tests/unit/test_decoder_block.c,$(DECODER_LINK),DECODER_BLOCK_LIBS))
# the dlfilter's logic, with a fake perf
$(eval $(call unit,test_dlf,tests/unit/test_dlf.c,$(DLFCORE_A) $(DECODER_LINK),DECODER_LIBS))
# the tar files of ptrace-capture --archive
$(eval $(call unit,test_tar,tests/unit/test_tar.c,$(PTPERF_A) $(LIBSTRACE_A),NO_LDLIBS))
# the live capture, against fake sysfs, procfs and kernel rings
$(foreach t,pmu proc rings session,$(eval $(call unit,test_live_$(t),tests/unit/test_live_$(t).c,$(CAPTURE_TEST_LINK),PTCAPTURE_LDLIBS)))
$(eval $(call unit,test_live_cli,tests/unit/test_live_cli.c cli/capture_live.c cli/control.c cli/control_lines.c cli/choice.c,$(PTPIPELINE_A) $(CAPTURE_TEST_LINK),PTCAPTURE_LDLIBS))
$(eval $(call unit,test_live_run,tests/unit/test_live_run.c,$(PTPIPELINE_A) $(CAPTURE_TEST_LINK),PTCAPTURE_LDLIBS))

# --- plugins: the examples and the hosts' test variants (tests/plugins/) -----
# A plugin is a shared object from one source; tee links libstrace itself,
# its symbols hidden (-Wl,--exclude-libs,ALL), to write its own ring.
define plugin
$(O)/plugins/$(1).so: $(2) tests/plugins/args.h $(wildcard include/strace/*.h) $(3)
	$$(call msg,LD,$$@)
	@mkdir -p $$(@D)
	$$(Q)$$(CC) $$(ALL_CFLAGS) $(4) -shared -Wl,-z,defs $$(ALL_LDFLAGS) \
		-Wl,--exclude-libs,ALL -o $$@ $(2) $(3)
TEST_TOOLS += $(O)/plugins/$(1).so
endef
$(foreach p,callcount latency slow,$(eval $(call plugin,$(p),tests/plugins/$(p).c)))
$(eval $(call plugin,tee,tests/plugins/tee.c,$(LIBSTRACE_A)))
PLUGIN_VARIANTS := auto stop crash empty probe noversion oldversion noinit initfail badpattern many bus
$(foreach v,$(PLUGIN_VARIANTS),$(eval $(call plugin,test-$(v),tests/plugins/testplug.c,,-D$(shell echo $(v) | tr a-z A-Z))))

UNREGISTERED := $(filter-out $(UNIT_SOURCES),$(wildcard tests/unit/test_*.c))
ifneq ($(UNREGISTERED),)
$(error $(UNREGISTERED): a unit test that tests/module.mk does not register: add a line for it there (docs/testing.md))
endif

# The ring and its readers under ThreadSanitizer (make check-ring SAN=thread),
# and the parallel decode: its workers and the merge (test_decoder_flow).
RING_TESTS := $(O)/tests/test_ring $(O)/tests/test_ring_stress \
	$(O)/tests/test_decoder_flow

# --- tools the tests run ------------------------------------------------------
# ptsynth: real Intel PT traces of real programs, with their ground truth
# (docs/ptsynth.md); ptblk: libipt's block decoder over a raw stream;
# ptfork: a per-CPU recording of several processes made of ptsynth ones
$(eval $(call tool,$(O)/bin/ptsynth,tests/ptsynth/ptsynth.c tests/ptsynth/ptstep.c,$(PTPERF_A),PTSYNTH_LIBS))
$(eval $(call tool,$(O)/tests/ptblk,tests/ptsynth/ptblk.c,,PTSYNTH_LIBS))
$(eval $(call tool,$(O)/bin/ptfork,tests/ptsynth/ptfork.c,$(PTPERF_A) $(DECODER_LINK),DECODER_LIBS))
# damage_diff: differential error detection, the fast walker against
# libipt's block decoder on damaged corpus traces (tests/decoder/)
$(eval $(call tool,$(O)/tests/damage_diff,tests/decoder/damage_diff.c tests/decoder/damage.c,$(PIPELINE_LINK),PIPELINE_LDLIBS))
# pebs_insert: PEBS-via-PT records put into a raw PT stream (e2e-pebs.sh)
$(eval $(call tool,$(O)/tests/pebs_insert,tests/decoder/pebs_insert.c,$(DECODER_LINK),DECODER_LIBS))
# live tests: a child with a known call chain; a recorded perf.data
# through the whole live path (fake kernel) into a -w perf.data
$(eval $(call tool,$(O)/tests/live_victim,tests/live/victim.c,,PTHREAD))
$(eval $(call tool,$(O)/tests/live_replay,tests/live/replay.c,$(PIPELINE_LINK),PIPELINE_LDLIBS))
# the triggers and windows on this machine's kernel, PT simulated
$(eval $(call tool,$(O)/tests/live_trigger,tests/live/trigger.c cli/capture_live.c cli/control.c cli/control_lines.c cli/choice.c,$(PTPIPELINE_A) $(CAPTURE_TEST_LINK),PTCAPTURE_LDLIBS))
$(eval $(call tool,$(O)/tests/live_calls,tests/live/calls.c,,NO_LDLIBS))

# the call stacks of strace_stack against the truth of the stack pointer
$(eval $(call tool,$(O)/tests/stackcmp,tests/stack/stackcmp.c,$(LIBSTRACE_A),NO_LDLIBS))
# a ring with names that would inject into a terminal (tests/view/)
$(eval $(call tool,$(O)/tests/hostile_ring,tests/view/hostile_ring.c,$(LIBSTRACE_A),NO_LDLIBS))
$(eval $(call tool,$(O)/tests/stackfast,tests/stack/stackfast.c tests/stack/stack_nofast.c tests/stack/stack_counted.c,$(LIBSTRACE_A),NO_LDLIBS))

# The corpus traces other tests use ($(O)/corpus/NAME.{data,truth,sideband},
# see tests/corpus/corpus.sh link), made by `make tests`; cached by input
# hash under $(O)/corpus/traces/, so a rerun only checks the hashes.
$(O)/corpus/.linked: $(O)/bin/ptsynth tests/corpus/corpus.sh $(wildcard tests/corpus/*.c tests/corpus/*.cpp tests/corpus/*.ml)
	$(call msg,CORPUS,$(O)/corpus (the corpus programs run in QEMU: minutes the first time and cached after))
	$(Q)O=$(O) tests/corpus/corpus.sh link
	$(call msg,CORPUS,$(O)/corpus: $$(ls $(O)/corpus/*.data | wc -l) traces)
	$(Q)touch $@

TEST_TOOLS += $(O)/corpus/.linked

# --- benchmarks (make bench, tests/bench/run.sh) ------------------------------
#   bench_baseline     an ipmpsc-style ring (one shared mutex + condvar)
#   bench_ring         our ring: pipe, produce, consume, cast, text, json,
#                      populate, memory bandwidth
#   libdlf_null.so     the null perf dlfilter (drops every sample): the
#                      floor that tests/bench/dlfilter.sh compares with
#   bench_libipt_loop  the bare libipt loop (pt_blk_* over an image section
#                      cache, blocks and instructions counted): the floor
#                      under any libipt-based decoder
#   bench_decoder_walk the fast walker against the reference on a
#                      synthetic stream
#   bench_stack        strace_stack and the views of ptrace-read -f
#   ringrep            a big saved ring: a real one's events N times over
BENCH_BINS :=
define bench
$(call program,$(1),$(2),$(3),$(4))
BENCH_BINS += $(1)
endef
$(eval $(call bench,$(O)/bench/bench_baseline,tests/bench/bench_baseline.c,,PTHREAD))
$(eval $(call bench,$(O)/bench/bench_ring,tests/bench/bench_ring.c cli/sample.c,$(READ_LINK),DECODER_LIBS))
$(eval $(call bench,$(O)/bench/bench_libipt_loop,tests/bench/bench_libipt_loop.c,$(PTPERF_A) $(DECODER_LINK),DECODER_LIBS))
$(eval $(call bench,$(O)/bench/bench_stack,tests/bench/bench_stack.c,$(READ_LINK),DECODER_LIBS))
$(eval $(call bench,$(O)/bench/ringrep,tests/bench/ringrep.c,$(LIBSTRACE_A),NO_LDLIBS))
# (bench_ring plugin: the empty plugin of tests/plugins/testplug.c)
BENCH_BINS += $(O)/plugins/test-empty.so
$(eval $(call bench,$(O)/bench/bench_decoder_walk,tests/bench/bench_decoder_walk.c,$(DECODER_LINK),DECODER_LIBS))

$(O)/bench/libdlf_null.so: $(call objs,tests/bench/dlf_null.c)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -shared $(ALL_LDFLAGS) -o $@ $^

BENCH_BINS += $(O)/bench/libdlf_null.so

# The benchmark trace: >= 20M instructions of a real workload (sort of
# 5000 lines, 31M instructions), about a minute on an idle 2-core box.
# Kept out of $(O)/corpus/ so corpus-wide tests skip it.
#   make bench-trace -> $(O)/bench/bench.data (+ bench.truth, bench.sideband),
#   $(O)/bench/big.data
$(O)/bench/bench.data: $(O)/bin/ptsynth tests/corpus/corpus.sh
	$(call msg,PTSYNTH,$@ (sort of 5000 lines in QEMU: about a minute))
	$(Q)O=$(O) tests/corpus/corpus.sh bench >/dev/null
	$(call msg,PTSYNTH,$@: $$(du -h $@ | cut -f1))

# ... and the same program on 4x the input (issue 17's "a trace at least
# 4x bigger": 148M instructions, about six minutes once; no truth)
#   -> $(O)/bench/big.data (+ big.sideband)
$(O)/bench/big.data: $(O)/bin/ptsynth tests/corpus/corpus.sh
	$(call msg,PTSYNTH,$@ (sort of 20000 lines in QEMU: about six minutes))
	$(Q)O=$(O) tests/corpus/corpus.sh bench-big >/dev/null
	$(call msg,PTSYNTH,$@: $$(du -h $@ | cut -f1))

bench-trace: $(O)/bench/bench.data $(O)/bench/big.data

.PHONY: bench-trace

# --- fuzz targets: replayed as tests, and libFuzzer builds ----------------------
include tests/fuzz/fuzz.mk

TEST_BINS := $(UNIT_TESTS) $(FUZZ_REPLAYS)
# what the unit tests run besides themselves (make check-unit builds it):
# test_live_proc and test_live_session trace the victim, test_plugins
# loads the test plugins
UNIT_TOOLS := $(O)/tests/live_victim \
	$(foreach v,$(PLUGIN_VARIANTS),$(O)/plugins/test-$(v).so)
