# pt_backend/live/: live capture through perf_event_open on the intel_pt
# PMU (PMU/attrs, data and AUX ring consumers, vDSO dump, initial stacks
# with libunwind-ptrace) -> libptlive.a. Kept in its own folder so that
# pt_backend/module.mk's wildcard does not pick these sources up.
PTLIVE_SRCS := $(wildcard pt_backend/live/*.c)
PTLIVE_OBJS := $(call objs,$(PTLIVE_SRCS))
PTLIVE_LDLIBS := -lunwind-ptrace -lunwind-generic -lunwind -lipt -lpthread

$(O)/lib/libptlive.a: $(PTLIVE_OBJS)
	$(call msg,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

LIBS += $(O)/lib/libptlive.a

# Unit tests: tests/unit/test_live_*.c, each linked with libptlive.a (and
# libptbackend.a for the perf.data writer, libstrace.a for error texts).
PTLIVE_TESTS := $(patsubst tests/unit/%.c,$(O)/tests/%,$(filter-out tests/unit/test_live_cli.c,$(wildcard tests/unit/test_live_*.c)))

$(PTLIVE_TESTS): $(O)/tests/%: $(O)/obj/tests/unit/%.o $(O)/lib/libptlive.a \
		$(O)/lib/libptbackend.a $(O)/lib/libstrace.a
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PTLIVE_LDLIBS)

TEST_BINS += $(PTLIVE_TESTS) $(O)/tests/test_live_cli

# Helper programs for the live tests (a child with a known call chain).
$(O)/tests/live_victim: $(O)/obj/tests/live/victim.o
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ -lpthread

TEST_TOOLS += $(O)/tests/live_victim
tests_live_CFLAGS := -O0 -fno-omit-frame-pointer -fno-inline
tests_unit_CFLAGS += -I.

# cli/capture_live.c (the live part of ptrace-capture, linked by the lead
# into the command) gets its own unit test here.
$(O)/tests/test_live_cli: $(O)/obj/tests/unit/test_live_cli.o \
		$(O)/obj/cli/capture_live.o $(O)/lib/libptlive.a \
		$(O)/lib/libptbackend.a $(O)/lib/libstrace.a
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PTLIVE_LDLIBS)

# live_replay: a recorded perf.data through the whole live path (fake
# kernel) into a -w perf.data; tests/live/e2e-live-replay.sh decodes both.
tests_live_CFLAGS += -I.
$(O)/tests/live_replay: $(O)/obj/tests/live/replay.o $(O)/lib/libptlive.a \
		$(O)/lib/libptbackend.a $(O)/lib/libstrace_decoder.a \
		$(O)/lib/libstrace.a
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PTLIVE_LDLIBS) $(DECODER_LIBS)

TEST_TOOLS += $(O)/tests/live_replay
