#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
long syscall(long n, ...)
{
	static long (*real)(long, ...);
	va_list ap; long a[6];
	va_start(ap, n); for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long); va_end(ap);
	if (!real) real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (n == __NR_perf_event_open) {
		struct perf_event_attr *at = (struct perf_event_attr *)a[0];
		if (at->type == 42) {
			struct perf_event_attr c = *at;
			c.type = PERF_TYPE_SOFTWARE; c.config = PERF_COUNT_SW_DUMMY;
			c.aux_watermark = 0;
			return real(n, &c, a[1], a[2], a[3], a[4]);
		}
	}
	return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
#include <stdio.h>
#include <sys/ioctl.h>
int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	va_list ap; va_start(ap, req); void *arg = va_arg(ap, void *); va_end(ap);
	if (!real) real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	if (req == PERF_EVENT_IOC_SET_FILTER) {
		fprintf(stderr, "SHIM_SET_FILTER fd %d: %s\n", fd, (const char *)arg);
		return 0;
	}
	return real(fd, req, arg);
}
