/* SPDX-License-Identifier: MIT */
/*
 * tests/live/trigger.c - ptrace-capture's live session (cli/capture_live.c
 * and pt_backend/capture, the same code) on this machine's real kernel,
 * with only the Intel PT event simulated:
 *
 *   live_trigger SYSFS SNAPDIR [live options] (-p PID | -- CMD ...)
 *
 * SYSFS is a sysfs root with an intel_pt PMU (tests/live/sysfs) and,
 * for uprobe triggers, a link to the real uprobe PMU. Every perf event
 * the session opens is real (the tracking event and its MMAP2, COMM and
 * EXIT records, the uprobes, the hardware breakpoints, the window
 * events, poll) except the intel_pt one: it is opened as a software
 * dummy event (a real ring, real sideband), and its AUX area is memory a
 * producer thread fills while the event is enabled, with 8-byte words
 * that each hold the CLOCK_MONOTONIC time (ns) they were written at, 4
 * KiB every millisecond. An address filter set on it is printed
 * ("filter: ..."). Each snapshot the session takes is written to
 * SNAPDIR/snap-K (K from 1), and a line "aux K tid T bytes N" goes
 * to stdout; the session's own summary goes to stderr as ptrace-capture
 * prints it. With LIVE_TRIGGER_OLD_KERNEL=1 in the environment, every
 * open with an aux_action bit fails with EINVAL, as on kernels before
 * Linux 6.13 (those bits were reserved, and reserved bits must be 0):
 * the session's fallbacks for windows run. e2e-trigger.sh compares the hits with the traced program's
 * own count of calls and the snapshots' times with its call times.
 */

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli/capture_live.h"
#include "pt_backend/capture/pmu.h"

#define MAXF 256

struct fake {
	int fd;                          /* the dummy event standing in */
	struct perf_event_mmap_page *pg; /* its (real) ring's first page */
	uint8_t *aux;
	size_t aux_len;
	int enabled;
	pthread_mutex_t mu;
};

static struct fake F[MAXF];
static int nF;
static uint32_t pt_type;
static pthread_mutex_t flock = PTHREAD_MUTEX_INITIALIZER;
static volatile int done;

static struct fake *fake_of(int fd)
{
	for (int i = 0; i < nF; i++)
		if (F[i].fd == fd)
			return &F[i];
	return NULL;
}

static int h_open(void *arg, struct perf_event_attr *a, pid_t pid, int cpu,
		  int group, unsigned long flags)
{
	struct perf_event_attr d = *a;
	long fd;

	(void)arg;
	if (strace_pmu_aux_action(a) && getenv("LIVE_TRIGGER_OLD_KERNEL"))
		return -EINVAL;
	if (a->type == pt_type) {
		d.type = PERF_TYPE_SOFTWARE;
		d.config = PERF_COUNT_SW_DUMMY;
		d.aux_watermark = 0;
		strace_pmu_set_aux_action(&d, 0);
	}
	fd = syscall(SYS_perf_event_open, &d, pid, cpu, group, flags);
	if (fd < 0)
		return -errno;
	if (a->type == pt_type) {
		pthread_mutex_lock(&flock);
		if (nF < MAXF) {
			memset(&F[nF], 0, sizeof(F[nF]));
			F[nF].fd = (int)fd;
			F[nF].enabled = 1;
			pthread_mutex_init(&F[nF].mu, NULL);
			nF++;
		}
		pthread_mutex_unlock(&flock);
	}
	return (int)fd;
}

static void *h_map(void *arg, size_t len, int prot, int fd, off_t off,
		   int *err)
{
	struct fake *f = fake_of(fd);
	void *p;

	(void)arg;
	if (f && off) { /* the AUX area */
		p = aligned_alloc(4096, len);
		if (!p) {
			*err = -ENOMEM;
			return NULL;
		}
		memset(p, 0, len);
		pthread_mutex_lock(&f->mu);
		f->aux = p;
		f->aux_len = len;
		pthread_mutex_unlock(&f->mu);
		return p;
	}
	p = mmap(NULL, len, prot, MAP_SHARED, fd, off);
	if (p == MAP_FAILED) {
		*err = -errno;
		return NULL;
	}
	if (f) {
		pthread_mutex_lock(&f->mu);
		f->pg = p;
		pthread_mutex_unlock(&f->mu);
	}
	return p;
}

static int h_unmap(void *arg, void *p, size_t len)
{
	(void)arg;
	for (int i = 0; i < nF; i++)
		if (F[i].aux == p) {
			pthread_mutex_lock(&F[i].mu);
			F[i].aux = NULL;
			F[i].aux_len = 0;
			pthread_mutex_unlock(&F[i].mu);
			free(p);
			return 0;
		}
	return munmap(p, len) < 0 ? -errno : 0;
}

static int h_ioctl(void *arg, int fd, unsigned long req, unsigned long val)
{
	struct fake *f = fake_of(fd);

	(void)arg;
	if (f && req == PERF_EVENT_IOC_SET_FILTER) {
		printf("filter: %s\n", (const char *)(uintptr_t)val);
		return 0;
	}
	if (f && (req == PERF_EVENT_IOC_ENABLE || req == PERF_EVENT_IOC_DISABLE)) {
		/* taken after a write in progress: the head is then final */
		pthread_mutex_lock(&f->mu);
		f->enabled = req == PERF_EVENT_IOC_ENABLE;
		pthread_mutex_unlock(&f->mu);
	}
	return ioctl(fd, req, val) < 0 ? -errno : 0;
}

static int h_close(void *arg, int fd)
{
	struct fake *f = fake_of(fd);

	(void)arg;
	if (f)
		f->fd = -1;
	return close(fd) < 0 ? -errno : 0;
}

static int h_poll(void *arg, struct pollfd *p, unsigned long n, int timeout)
{
	int r = poll(p, (nfds_t)n, timeout);

	(void)arg;
	return r < 0 ? -errno : r;
}

static const struct strace_live_sys hybrid = {
	NULL, h_open, h_map, h_unmap, h_ioctl, h_close, h_poll,
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The simulated PT: 4 KiB of time stamps per millisecond per thread. */
static void *producer(void *arg)
{
	(void)arg;
	while (!done) {
		pthread_mutex_lock(&flock);
		for (int i = 0; i < nF; i++) {
			struct fake *f = &F[i];

			pthread_mutex_lock(&f->mu);
			if (f->aux && f->pg && f->enabled) {
				uint64_t head = f->pg->aux_head, t = now_ns();

				for (size_t k = 0; k < 4096; k += 8)
					memcpy(f->aux + ((head + k) &
							 (f->aux_len - 1)),
					       &t, 8);
				__atomic_store_n(&f->pg->aux_head, head + 4096,
						 __ATOMIC_RELEASE);
			}
			pthread_mutex_unlock(&f->mu);
		}
		pthread_mutex_unlock(&flock);
		usleep(1000);
	}
	return NULL;
}

static const char *snapdir;
static int nsnap;

static int on_aux(void *arg, pid_t tid, uint64_t offset, const void *p,
		  size_t len, unsigned flags)
{
	char path[4096];
	FILE *f;

	(void)arg;
	(void)offset;
	(void)flags;
	snprintf(path, sizeof(path), "%s/snap-%d", snapdir, ++nsnap);
	if (!(f = fopen(path, "w")) || fwrite(p, 1, len, f) != len) {
		fprintf(stderr, "live_trigger: cannot write %s\n", path);
		if (f)
			fclose(f);
		return -EIO;
	}
	fclose(f);
	printf("aux %d tid %d bytes %zu\n", nsnap, (int)tid, len);
	return 0;
}

int main(int argc, char **argv)
{
	struct capture_live_opts o;
	struct strace_live_cb cb = {0};
	struct option lopts[64];
	size_t n = 0;
	pid_t pid = 0;
	pthread_t th;
	char path[512];
	FILE *f;
	int c, status;

	if (argc < 4) {
		fprintf(stderr, "usage: live_trigger SYSFS SNAPDIR [options] "
				"(-p PID | -- CMD ...)\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/intel_pt/type",
		 argv[1]);
	if (!(f = fopen(path, "r")) || fscanf(f, "%u", &pt_type) != 1) {
		fprintf(stderr, "live_trigger: no %s\n", path);
		return 2;
	}
	fclose(f);
	snapdir = argv[2];
	capture_live_init(&o);
	while (capture_live_longopts[n].name && n < 62) {
		lopts[n] = capture_live_longopts[n];
		n++;
	}
	memset(&lopts[n], 0, sizeof(lopts[n]));
	optind = 3;
	while ((c = getopt_long(argc, argv, "+p:w:", lopts, NULL)) != -1) {
		if (c == 'p') {
			pid = (pid_t)atoi(optarg);
			continue;
		}
		if (capture_live_option(&o, c, optarg, stderr) != 1)
			return 2;
	}
	if (!pid && optind >= argc) {
		fprintf(stderr, "live_trigger: give -p PID or -- CMD\n");
		return 2;
	}
	o.lo.sys = &hybrid;
	o.lo.sysfs_root = argv[1];
	o.lo.no_stacks = 1;
	cb.aux = on_aux;
	if (o.list_symbols)
		return capture_live_list(&o, pid, argv + optind, stdout, stderr);
	pthread_create(&th, NULL, producer, NULL);
	status = capture_live_run(&o, pid, pid ? NULL : argv + optind, &cb,
				  NULL, stderr);
	done = 1;
	pthread_join(th, NULL);
	return status;
}
