/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/pipeline/offline_scan.c - the pass over a perf.data's records:
 * sideband (mappings, threads and their names, forks, execs, exits,
 * schedules, losses) and the AUX buffers of each queue; the processor and
 * walker flags the recording asks for.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "offline_int.h"

void offline_warn(struct ctx *c, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	if (!c->o->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->o->warn(c->o->cb_arg, buf);
}


/* A copy of a name the file holds: the file may change under its mapping
 * (rewritten, cut short), and a name read there again later might have
 * lost its NUL meanwhile. NULL if out of memory. */
const char *offline_keep_name(struct ctx *c, const char *s)
{
	char *d = strdup(s);

	if (d && VEC_PUSH(c->strs, d) == 0)
		return d;
	free(d);
	return NULL;
}

struct thread *offline_find_thread(struct ctx *c, uint32_t tid)
{
	for (size_t i = c->threads.n; i-- > 0;)
		if (c->threads.v[i].tid == tid)
			return &c->threads.v[i];
	return NULL;
}

static int note_thread(struct ctx *c, uint32_t pid, uint32_t tid,
		       const char *comm)
{
	struct thread *t = offline_find_thread(c, tid);
	if (t) {
		t->pid = pid;
		if (comm)
			t->comm = comm;
		return 0;
	}
	struct thread nt = {tid, pid, comm};
	return VEC_PUSH(c->threads, nt);
}

static struct queue *find_queue(struct ctx *c, uint32_t idx, uint32_t tid,
				uint32_t cpu)
{
	for (size_t i = 0; i < c->queues.n; i++)
		if (c->queues.v[i].idx == idx && c->queues.v[i].tid == tid)
			return &c->queues.v[i];
	struct queue q = {idx, tid, cpu, NULL, 0, 0, 0};
	if (VEC_PUSH(c->queues, q))
		return NULL;
	return &c->queues.v[c->queues.n - 1];
}

/* A task runs on the record's CPU from its time on (needs both). */
static int note_sched(struct ctx *c, const struct strace_perf_rec *r,
		      uint32_t pid, uint32_t tid)
{
	if (!r->sid.has_time || !r->sid.has_cpu)
		return 0;
	struct sched sc = {r->sid.cpu, pid, tid, r->sid.time, c->scheds.n,
			   r->type != PFMT_RECORD_SWITCH_CPU_WIDE};
	return VEC_PUSH(c->scheds, sc);
}

/* A record's fixed part, copied out: a record lies where it is in the file,
 * and one after AUX data that was not padded to 8 bytes is not aligned
 * for its struct. strace_perf_next() checked the body is that long. */
#define BODY(r, var) memcpy(&(var), (r).body, sizeof(var))

/* An MMAP or MMAP2 record: an executable mapping, and the DSO
 * definition that names it. */
static int on_mmap(struct ctx *c, const struct strace_perf_rec *r,
		   size_t blen)
{
	struct strace_perf_map pm;
	const char *path;

	if (strace_perf_map_parse(r->type, r->misc, r->body, blen,
				  &pm) < 0)
		return -STRACE_E_PERF_RECORD;
	if (!pm.exec || !pm.len)
		return 0;
	if (!(path = offline_keep_name(c, pm.path)))
		return -ENOMEM;
	struct mapping m = {pm.pid, pm.addr, pm.len, pm.pgoff,
			    path,
			    r->sid.has_time ? r->sid.time
					   : UINT64_MAX,
			    -1, NULL, 0};
	struct def d = {STRACE_EV_DSO, pm.pid, pm.addr,
			pm.addr, pm.len, path};
	if (VEC_PUSH(c->maps, m) || VEC_PUSH(c->defs, d))
		return -ENOMEM;
	return 0;
}

/* A COMM record: a process or thread named; with
 * PERF_RECORD_MISC_COMM_EXEC, an exec. */
static int on_comm(struct ctx *c, const struct strace_perf_rec *r,
		   size_t blen)
{
	struct pfmt_comm cm;
	const char *name = strace_perf_string(
		(const char *)r->body + sizeof(cm),
		blen - sizeof(cm));
	if (!name)
		return -STRACE_E_PERF_RECORD;
	if (!(name = offline_keep_name(c, name)))
		return -ENOMEM;
	BODY(*r, cm);
	struct def d = {cm.pid == cm.tid ? STRACE_EV_PROCESS
					 : STRACE_EV_THREAD,
			cm.tid, cm.pid, cm.tid, cm.pid, name};
	if (note_thread(c, cm.pid, cm.tid, name) ||
	    VEC_PUSH(c->defs, d))
		return -ENOMEM;
	if (r->misc & PFMT_MISC_COMM_EXEC) {
		/* a new image from here on; on its CPU the
		 * stream moves to it like at a switch */
		struct exec_rec ex = {
			cm.pid,
			r->sid.has_time ? r->sid.time : UINT64_MAX,
			c->nrec};
		if (VEC_PUSH(c->execs, ex) ||
		    note_sched(c, r, cm.pid, cm.tid))
			return -ENOMEM;
	}
	return 0;
}

/* A FORK record: a thread, or a process forked from its
 * parent. */
static int on_fork(struct ctx *c, const struct strace_perf_rec *r)
{
	struct pfmt_fork f;
	BODY(*r, f);
	if (note_thread(c, f.pid, f.tid, NULL))
		return -ENOMEM;
	if (f.pid != f.ppid) {
		struct fork_rec fr = {
			f.pid, f.ppid,
			r->sid.has_time ? r->sid.time : UINT64_MAX,
			c->nrec};
		if (VEC_PUSH(c->forks, fr))
			return -ENOMEM;
		/* a new process, named as its parent until
		 * it execs (perf writes no COMM for it) */
		const struct thread *pt = offline_find_thread(c, f.ptid);
		if (!pt || !pt->comm)
			pt = offline_find_thread(c, f.ppid);
		if (pt && pt->comm) {
			struct def d = {STRACE_EV_PROCESS, f.tid,
					f.pid, f.pid, 0,
					pt->comm};
			if (note_thread(c, f.pid, f.tid,
					pt->comm) ||
			    VEC_PUSH(c->defs, d))
				return -ENOMEM;
		}
	}
	return 0;
}

/* An AUXTRACE record: an AUX buffer of a queue (a thread's
 * or a CPU's). */
static int on_auxtrace(struct ctx *c, const struct strace_perf_rec *r)
{
	struct pfmt_auxtrace at;
	BODY(*r, at);
	/* a per-thread buffer has cpu -1; a per-CPU one may
	 * carry the workload's pid as its tid */
	if (at.cpu != UINT32_MAX)
		c->perf.per_cpu = 1;
	struct queue *q = find_queue(c, at.idx, at.tid,
				     at.cpu);
	struct abuf b = {r->aux_data, r->aux_size, at.offset};
	if (!q || VEC_PUSH(*q, b))
		return -ENOMEM;
	if (r->aux_missing) {
		struct lost_rec l = {at.tid, STRACE_LOST_AUX,
				     0, r->aux_missing};
		offline_warn(c, "the file ends inside the AUX data of "
				"thread %u: %llu bytes of trace are "
				"missing (a truncated copy?)",
			     at.tid,
			     (unsigned long long)r->aux_missing);
		if (VEC_PUSH(c->losts, l))
			return -ENOMEM;
	}
	q->bytes += r->aux_size;
	c->total_bytes += r->aux_size;
	return 0;
}

/* Pass over the records: sideband and the AUX buffers of each queue. */
int offline_scan(struct ctx *c, uint64_t *err_off)
{
	struct strace_perf_rec r;
	int rc;

	while ((rc = strace_perf_next(&c->perf, &r)) > 0) {
		size_t blen = (size_t)r.size - 8;
		c->nrec++;
		switch (r.type) {
		case PFMT_RECORD_MMAP:
		case PFMT_RECORD_MMAP2:
			rc = on_mmap(c, &r, blen);
			break;
		case PFMT_RECORD_COMM:
			rc = on_comm(c, &r, blen);
			break;
		case PFMT_RECORD_FORK:
			rc = on_fork(c, &r);
			break;
		case PFMT_RECORD_EXIT: {
			struct pfmt_fork f; /* EXIT has FORK's layout */
			BODY(r, f);
			struct exit_rec ex = {
				f.pid, f.tid,
				r.sid.has_time ? r.sid.time : UINT64_MAX};
			if (VEC_PUSH(c->exits, ex))
				return -ENOMEM;
			break;
		}
		case PFMT_RECORD_ITRACE_START: {
			struct pfmt_itrace_start it;
			BODY(r, it);
			if (!offline_find_thread(c, it.tid) &&
			    note_thread(c, it.pid, it.tid, NULL))
				return -ENOMEM;
			if (note_sched(c, &r, it.pid, it.tid))
				return -ENOMEM;
			break;
		}
		case PFMT_RECORD_SWITCH:
			/* the task of the record switched in (or out) */
			if (!(r.misc & PFMT_MISC_SWITCH_OUT) &&
			    note_sched(c, &r, r.sid.pid, r.sid.tid))
				return -ENOMEM;
			break;
		case PFMT_RECORD_SWITCH_CPU_WIDE: {
			struct pfmt_switch_cpu_wide sw;
			/* out: the body names the next task; in: the record's
			 */
			int out = !!(r.misc & PFMT_MISC_SWITCH_OUT);
			if (blen < sizeof(sw))
				return -STRACE_E_PERF_RECORD;
			BODY(r, sw);
			if (note_sched(c, &r,
				       out ? sw.next_prev_pid : r.sid.pid,
				       out ? sw.next_prev_tid : r.sid.tid))
				return -ENOMEM;
			break;
		}
		case PFMT_RECORD_AUX: {
			struct pfmt_aux a;
			BODY(r, a);
			if (a.flags & PFMT_AUX_FLAG_TRUNCATED) {
				struct lost_rec l = {r.sid.tid,
						     STRACE_LOST_AUX,
						     r.sid.time, a.aux_size};
				if (VEC_PUSH(c->losts, l))
					return -ENOMEM;
			}
			break;
		}
		case PFMT_RECORD_LOST: {
			struct pfmt_lost l;
			BODY(r, l);
			struct lost_rec lr = {r.sid.tid, STRACE_LOST_PERF,
					      r.sid.time, l.lost};
			if (VEC_PUSH(c->losts, lr))
				return -ENOMEM;
			break;
		}
		case PFMT_RECORD_AUXTRACE:
			rc = on_auxtrace(c, &r);
			break;
		default:
			break;
		}
		if (rc < 0)
			return rc;
	}
	if (rc == -STRACE_E_PERF_TRUNCATED && c->queues.n) {
		/* Decode what the file holds; say where it stops. */
		offline_warn(c,
			     "the file is cut off at offset 0x%llx (inside a "
			     "record): decoding what comes before",
			     (unsigned long long)r.offset);
		struct lost_rec l = {UINT32_MAX, STRACE_LOST_PERF, 0, 1};
		return VEC_PUSH(c->losts, l);
	}
	if (rc < 0)
		*err_off = r.offset;
	return rc;
}

/* c->walk.cpu: the processor perf recorded on (the CPUID header, a perf string
 * "GenuineIntel,6,85,4"); it chooses the errata workarounds. Without one
 * (or one we cannot read), the cpu stays unknown. */
void offline_find_cpu(struct ctx *c)
{
	const uint8_t *feat;
	uint64_t size;
	char buf[128];

	memset(&c->walk.cpu, 0, sizeof(c->walk.cpu));
	if (strace_perf_feature(&c->perf, PFMT_FEAT_CPUID, &feat, &size) != 1 ||
	    !strace_perf_feature_string(feat, size, 0, buf, sizeof(buf)))
		return;
	if (strace_pt_cpu_parse(buf, &c->walk.cpu) < 0)
		memset(&c->walk.cpu, 0, sizeof(c->walk.cpu));
}

/* c->walk: the recording's time conversion, and the walker flags: the
 * caller's, and the PEBS-via-PT records as events when the recording
 * asked for them: an event with aux_output (perf
 * record -e intel_pt//u,cycles/aux-output/u), whose PEBS records the
 * hardware writes into the trace; and the ptwrite payloads when its
 * intel_pt event has the ptw bit (perf record -e intel_pt/ptw/u), which
 * makes the hardware write them. */
void offline_find_walk_flags(struct ctx *c)
{
	c->walk.time =
		c->perf.time; /* (AUXTRACE_INFO's, offline_scan() saw it) */
	c->walk.has_time = c->perf.has_time;
	c->walk.flags = c->o->walk_flags;
	for (size_t i = 0; i < c->perf.nattrs; i++)
		if (c->perf.attrs[i].attr.aux_output)
			c->walk.flags |= STRACE_WALK_PEBS;
	if (c->perf.pt_config & PFMT_IPT_CFG_PTW)
		c->walk.flags |= STRACE_WALK_PTWRITE;
}
