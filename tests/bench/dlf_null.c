/* SPDX-License-Identifier: MIT */
/*
 * tests/bench/dlf_null.c - the floor for the dlfilter benchmark: a perf
 * dlfilter that drops every sample as early as perf allows
 * (filter_event_early returns 1, so perf does no more work on it). What
 * `perf script --itrace=b --dlfilter` costs with it is perf's own decoder.
 */
#define EXPORT __attribute__((visibility("default")))

struct perf_dlfilter_sample;

EXPORT int filter_event_early(void *data,
			      const struct perf_dlfilter_sample *sample,
			      void *ctx);

int filter_event_early(void *data, const struct perf_dlfilter_sample *sample,
		       void *ctx)
{
	(void)data;
	(void)sample;
	(void)ctx;
	return 1;
}
