# tests/bench/: benchmarks run by `make bench` (tests/bench/run.sh).
#   bench_baseline: an ipmpsc-style ring (one shared mutex + condvar)
#   bench_ring:     our ring: pipe, produce, consume, cast, text, json,
#                   populate, memory bandwidth
$(O)/bench/bench_baseline: $(call objs,tests/bench/bench_baseline.c)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ -lpthread

$(O)/bench/bench_ring: $(call objs,tests/bench/bench_ring.c) \
		$(CLI_COMMON_OBJS) $(O)/lib/libstrace.a
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ -lpthread

BENCH_BINS += $(O)/bench/bench_baseline $(O)/bench/bench_ring

# The null perf dlfilter (drops every sample): the floor that
# tests/bench/dlfilter.sh compares libstrace_dlf.so with.
$(O)/bench/libdlf_null.so: $(call objs,tests/bench/dlf_null.c)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -shared $(ALL_LDFLAGS) -o $@ $^

BENCH_BINS += $(O)/bench/libdlf_null.so

# The bare libipt loop (pt_blk_* over an image section cache, blocks and
# instructions counted, nothing else): the floor under any libipt-based
# decoder, a baseline row of tests/bench/decoder.sh. perf_read.o needs the
# decoder library's strerror.
$(O)/bench/bench_libipt_loop: $(call objs,tests/bench/bench_libipt_loop.c) \
		$(O)/lib/libptbackend.a $(O)/lib/libstrace_decoder.a \
		$(O)/lib/libstrace.a
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DECODER_LIBS)

BENCH_BINS += $(O)/bench/bench_libipt_loop
