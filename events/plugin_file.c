/* SPDX-License-Identifier: MIT */
/*
 * events/plugin_file.c - a plugin's file checked before dlopen, and
 * dlopen with a bus error caught (plugin_file.h).
 *
 * dlopen opens its file blocking, so a FIFO given as a plugin hangs the
 * host (and, in a lossless ring's reader, the writer it holds back); it
 * maps the segments its program headers name, so a file cut short dies
 * of SIGBUS in the loader, where the host's own SIGBUS handler blames
 * whatever it maps itself (a ptrace-read ring). Both are refused here
 * first.
 *
 * The check runs on a descriptor of ours and dlopen then opens the path
 * again: what remains is a race with whoever can rename files in the
 * plugin's directory, who can put a FIFO or a shorter file there between
 * the check and dlopen's open. That one can replace the plugin's code
 * just as well, so the race gives nobody more than they have; the bus
 * error it may bring is still caught. dlopen of /proc/self/fd/N would
 * close the race, but the loader would then name the plugin
 * "/proc/self/fd/N" to debuggers (gdb reads it in its own process),
 * dladdr() and backtraces.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strace/error.h"
#include "plugin_file.h"

void plugin_say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static const char *kind(mode_t m)
{
	return S_ISFIFO(m)  ? "a FIFO"
	       : S_ISDIR(m) ? "a directory"
	       : S_ISCHR(m) ? "a character device"
	       : S_ISBLK(m) ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
			     : "not a regular file";
}

/* Whether pread gave all len bytes at off. */
static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(fd, buf, len, (off_t)off);

	return n >= 0 && (size_t)n == len;
}

/* The program headers of the ELF object in fd (size bytes) within it,
 * and each loadable segment's bytes too. Returns 0, -STRACE_E_PLUGIN
 * (err says why) or -ENOMEM. */
static int check_elf(int fd, uint64_t size, const char *path, char *err,
		     size_t len)
{
	ElfW(Ehdr) eh;
	ElfW(Phdr) *ph;
	uint64_t phsize;
	int rc = 0;

	if (size < sizeof(eh) || !read_at(fd, &eh, sizeof(eh), 0) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
		plugin_say(err, len,
		    "plugin %s: not a shared object (%s): give the path of a "
		    "plugin built as docs/plugins.md shows",
		    path, size < sizeof(eh) ? "too short for an ELF header"
					    : "no ELF header");
		return -STRACE_E_PLUGIN;
	}
	if (eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64
							 : ELFCLASS32) ||
	    eh.e_phentsize != sizeof(*ph) || !eh.e_phnum ||
	    eh.e_phnum == PN_XNUM) {
		plugin_say(err, len,
		    "plugin %s: not a shared object of this host's ELF class "
		    "(or its program header table is malformed): rebuild it as "
		    "docs/plugins.md shows",
		    path);
		return -STRACE_E_PLUGIN;
	}
	phsize = (uint64_t)eh.e_phnum * sizeof(*ph);
	if (eh.e_phoff > size || phsize > size - eh.e_phoff) {
		plugin_say(err, len,
		    "plugin %s: the file is cut short (%llu bytes, but its "
		    "program headers end at %llu): copy or rebuild it whole",
		    path, (unsigned long long)size,
		    (unsigned long long)eh.e_phoff + phsize);
		return -STRACE_E_PLUGIN;
	}
	ph = malloc(phsize);
	if (!ph)
		return -ENOMEM;
	errno = 0;
	if (!read_at(fd, ph, phsize, eh.e_phoff)) {
		plugin_say(err, len, "plugin %s: cannot read it: %s", path,
		    strerror(errno ? errno : EIO));
		free(ph);
		return -STRACE_E_PLUGIN;
	}
	/* a segment's page wholly past the end raises SIGBUS when touched */
	for (size_t i = 0; i < eh.e_phnum && !rc; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_offset > size ||
		    ph[i].p_filesz > size - ph[i].p_offset) {
			plugin_say(err, len,
			    "plugin %s: the file is cut short (%llu bytes, but "
			    "a segment of it runs from byte %llu to %llu): "
			    "copy or rebuild it whole",
			    path, (unsigned long long)size,
			    (unsigned long long)ph[i].p_offset,
			    (unsigned long long)ph[i].p_offset +
				    ph[i].p_filesz);
			rc = -STRACE_E_PLUGIN;
		}
	}
	free(ph);
	return rc;
}

int plugin_file_check(const char *path, char *err, size_t len)
{
	struct stat st;
	int fd, rc;

	if (!strchr(path, '/'))
		return 0;
	/* O_NONBLOCK: a FIFO's open does not wait for a writer */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		plugin_say(err, len,
		    "plugin %s: cannot load it: %s (give the path of a plugin "
		    "built as docs/plugins.md shows)",
		    path, strerror(errno));
		return -STRACE_E_PLUGIN;
	}
	if (fstat(fd, &st) < 0) {
		plugin_say(err, len, "plugin %s: cannot load it: %s", path,
		    strerror(errno));
		close(fd);
		return -STRACE_E_PLUGIN;
	}
	if (!S_ISREG(st.st_mode)) {
		plugin_say(err, len,
		    "plugin %s: cannot load it: it is %s, not a regular file "
		    "(give the path of a plugin's .so file, built as "
		    "docs/plugins.md shows)",
		    path, kind(st.st_mode));
		close(fd);
		return -STRACE_E_PLUGIN;
	}
	rc = check_elf(fd, (uint64_t)st.st_size, path, err, len);
	close(fd);
	return rc;
}

/* The load in progress: the thread that armed the handler and where it
 * goes back to. Plain globals, not thread-locals: the handler reads
 * them, and a thread-local of a dlopened libstrace may be allocated on
 * first use. */
static pthread_mutex_t bus_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile pid_t bus_tid;
static sigjmp_buf bus_jmp;
static struct sigaction bus_old;
static volatile sig_atomic_t loader_broken;

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	/* si_code > 0: a fault, not a kill() */
	if (bus_tid && gettid() == bus_tid && si->si_code > 0)
		siglongjmp(bus_jmp, 1);
	/* another thread's, or sent: the handler that was there takes it
	 * (the default one when the faulting access runs again) */
	if (bus_old.sa_flags & SA_SIGINFO)
		bus_old.sa_sigaction(sig, si, uc);
	else if (bus_old.sa_handler != SIG_DFL &&
		 bus_old.sa_handler != SIG_IGN)
		bus_old.sa_handler(sig);
	else if (!sigaction(SIGBUS, &bus_old, NULL) && si->si_code <= 0)
		raise(sig); /* a sent one happens only once */
}

void *plugin_file_dlopen(const char *path, int flags, char *err, size_t len)
{
	struct sigaction sa;
	sigset_t bus, mask;
	void *volatile h = NULL;

	if (loader_broken) {
		plugin_say(err, len,
		    "plugin %s: not loaded: an earlier plugin's load died of a "
		    "bus error inside the dynamic loader, which may be left "
		    "locked: restart the program to load plugins",
		    path);
		return NULL;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_bus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&bus);
	sigaddset(&bus, SIGBUS);
	pthread_mutex_lock(&bus_lock);
	sigaction(SIGBUS, &sa, &bus_old);
	/* a blocked SIGBUS from a fault kills the process: unblock it */
	pthread_sigmask(SIG_UNBLOCK, &bus, &mask);
	bus_tid = gettid();
	if (sigsetjmp(bus_jmp, 1) == 0) {
		h = dlopen(path, flags);
		if (!h)
			plugin_say(err, len,
			    "plugin %s: cannot load it: %s (give the path of a "
			    "plugin built as docs/plugins.md shows)",
			    path, dlerror());
	} else {
		loader_broken = 1;
		plugin_say(err, len,
		    "plugin %s: its load died of a bus error (the file was cut "
		    "short or rewritten while it was loaded, or its constructor "
		    "touched a page past the end of a mapped file): copy or "
		    "rebuild it whole, and run the program again",
		    path);
	}
	bus_tid = 0;
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	sigaction(SIGBUS, &bus_old, NULL);
	pthread_mutex_unlock(&bus_lock);
	return h;
}
