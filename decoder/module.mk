# decoder/: process image, Capstone block summaries, the PT flow walker
# (fast inline path + libipt reference) -> libstrace_decoder.a.
# Users link: -lstrace_decoder -lstrace $(DECODER_LIBS): libipt, libelf, Capstone,
# pthreads, and the C++ runtime (for __cxa_demangle: -l:libstdc++.so.6, so
# that the run-time library suffices, no g++ needed)
DECODER_SRCS := $(wildcard decoder/*.c)
DECODER_OBJS := $(call objs,$(DECODER_SRCS))
decoder_CFLAGS = $(CAPSTONE_CFLAGS)
DECODER_LIBS = -pthread -lipt -lelf -l:libstdc++.so.6 $(CAPSTONE_LIBS)

$(O)/lib/libstrace_decoder.a: $(DECODER_OBJS)
	$(call msg,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

LIBS += $(O)/lib/libstrace_decoder.a

# Unit tests of the decoder (tests/unit/test_decoder_*.c).
DECODER_TESTS := $(patsubst tests/unit/%.c,$(O)/tests/%,$(wildcard tests/unit/test_decoder_*.c))
tests_unit_CFLAGS += -Itests $(CAPSTONE_CFLAGS)

$(DECODER_TESTS): $(O)/tests/%: $(O)/obj/tests/unit/%.o $(O)/lib/libstrace_decoder.a $(O)/lib/libstrace.a
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(O)/lib/libstrace_decoder.a $(O)/lib/libstrace.a $(DECODER_LIBS)

TEST_BINS += $(DECODER_TESTS)

# Micro-benchmark: fast walker vs reference on a synthetic stream.
tests_bench_CFLAGS += -I. -Itests
$(O)/bench/bench_decoder_walk: $(O)/obj/tests/bench/bench_decoder_walk.o $(O)/lib/libstrace_decoder.a $(O)/lib/libstrace.a
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(O)/lib/libstrace_decoder.a $(O)/lib/libstrace.a $(DECODER_LIBS)

BENCH_BINS += $(O)/bench/bench_decoder_walk
