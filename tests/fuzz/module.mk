# tests/fuzz/: fuzz targets. make check replays the seed corpus and
# deterministic mutants (fuzz_main.c); `make fuzz` builds the libFuzzer
# binaries with clang (FUZZ_SECONDS=60 make fuzz-run runs one).
tests_fuzz_CFLAGS := -I. -DFUZZ_CORPUS='"tests/fuzz/corpus/perf"'
FUZZ_LIBS := $(O)/lib/libptbackend.a $(O)/lib/libstrace_decoder.a $(O)/lib/libstrace.a

$(O)/tests/fuzz_perf: $(call objs,tests/fuzz/fuzz_perf.c tests/fuzz/fuzz_main.c) $(FUZZ_LIBS)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(FUZZ_LIBS) $(DECODER_LIBS)

TEST_BINS += $(O)/tests/fuzz_perf

FUZZ_SECONDS ?= 60
fuzz:
	$(MAKE) O=build/fuzz CC=clang SAN=fuzzer-no-link,address,undefined build
	clang -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE -g -O1 -Iinclude -I. \
		-o build/fuzz/fuzz_perf tests/fuzz/fuzz_perf.c \
		build/fuzz/lib/libptbackend.a build/fuzz/lib/libstrace_decoder.a \
		build/fuzz/lib/libstrace.a $(DECODER_LIBS)

fuzz-run: fuzz
	mkdir -p build/fuzz/corpus && cp tests/fuzz/corpus/perf/* build/fuzz/corpus/
	build/fuzz/fuzz_perf -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=4096 build/fuzz/corpus

.PHONY: fuzz fuzz-run
