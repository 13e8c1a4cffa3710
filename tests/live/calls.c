/* SPDX-License-Identifier: MIT */
/*
 * tests/live/calls.c - a program that calls its function tick() (and
 * libc's usleep()) a known number of times, for the trigger tests:
 *
 *   live_calls N MS [WAIT_MS]
 *
 * waits WAIT_MS milliseconds (default 300: time for a tracer to attach or
 * to place a breakpoint), then calls tick() N times, MS milliseconds
 * apart (usleep). For each call it prints the CLOCK_MONOTONIC time just
 * before, in nanoseconds ("call K T"), and at the end "tick N" with the
 * number of calls it made: the count the triggers' hits are judged by.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long work;

unsigned long tick(unsigned long i);

__attribute__((noinline)) unsigned long tick(unsigned long i)
{
	for (unsigned long k = 0; k < 1000; k++)
		work += i ^ k;
	return work;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	       (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5;
	long ms = argc > 2 ? atol(argv[2]) : 50;
	long wait = argc > 3 ? atol(argv[3]) : 300;
	long calls = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	usleep((useconds_t)wait * 1000);
	for (long i = 0; i < n; i++) {
		printf("call %ld %llu\n", i + 1, now_ns());
		tick((unsigned long)i);
		calls++;
		usleep((useconds_t)ms * 1000);
	}
	printf("tick %ld\n", calls);
	return 0;
}
