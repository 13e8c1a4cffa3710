/* SPDX-License-Identifier: MIT */
/* pt_backend/pipeline/live_decode.c - live capture -> walkers -> ring. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pipeline.h"
#include "pt_backend/perf/perf.h"
#include "sink.h"
#include "strace/internal/grow.h"

/* Pending PT bytes beyond which a thread is decoded even without a PSB
 * (bounds memory when a trace has none). */
#define PENDING_MAX (64u << 20)

struct ld_map {
	uint64_t start, len, pgoff;
	char *path;
};

struct ld_proc {
	uint32_t pid;
	struct strace_image *img;
	struct ld_map *maps;
	size_t nmaps, mapscap;
	uint8_t *vdso;
	size_t vdso_len;
	uint64_t vdso_start;
	struct ld_proc *next;
};

struct ld_thread {
	uint32_t tid, pid;
	struct strace_walker *walker;
	struct strace_sink *sink;
	uint8_t *buf; /* pending bytes: from a PSB on */
	size_t len, cap;
	uint64_t next_off; /* AUX offset expected next */
	int have_off;
	int exited;         /* an EXIT record named it, at exit_time */
	uint64_t exit_time;
	struct ld_thread *next;
};

struct strace_live_decoder {
	struct strace_ring *ring;
	struct strace_writer *w;
	struct strace_walk_base walk; /* every thread's walker's */
	const struct strace_typeset *types;
	struct strace_symset *syms;
	struct strace_sink names; /* definitions that belong to no thread */
	struct ld_proc *procs;
	struct ld_thread *threads;
	struct strace_objcache *objects; /* with set_cache */
	int style; /* enum strace_plt_style: how symbols are named */
	struct strace_live_decoder_stats st;
	int err;
};

static struct ld_proc *proc_get(struct strace_live_decoder *ld, uint32_t pid)
{
	struct ld_proc *p;
	for (p = ld->procs; p; p = p->next)
		if (p->pid == pid)
			return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->next = ld->procs;
	ld->procs = p;
	return p;
}

static struct ld_thread *thread_get(struct strace_live_decoder *ld,
				    uint32_t tid, uint32_t pid)
{
	struct ld_thread *t;
	for (t = ld->threads; t; t = t->next)
		if (t->tid == tid)
			return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->pid = pid ? pid : tid;
	t->next = ld->threads;
	ld->threads = t;
	ld->st.threads++;
	return t;
}

static void note(struct strace_live_decoder *ld, int rc)
{
	if (rc < 0 && !ld->err)
		ld->err = rc;
}

static int map_into(struct ld_proc *p, const struct ld_map *m)
{
	if (!p->img)
		return 0;
	return strace_image_add_file(p->img, m->start, m->len, m->pgoff,
				     m->path);
}

/* The image of a process, made on first use from what is known of it. */
static struct strace_image *proc_image(struct strace_live_decoder *ld,
				       struct ld_proc *p)
{
	struct strace_image_opts io;

	if (p->img)
		return p->img;
	memset(&io, 0, sizeof(io));
	io.size = sizeof(io);
	io.objects = ld->objects;
	io.plt_style = ld->style;
	if (strace_image_new(&io, &p->img) < 0)
		return NULL;
	for (size_t i = 0; i < p->nmaps; i++)
		(void)map_into(p, &p->maps[i]); /* a missing file: NOMAP */
	if (p->vdso)
		(void)strace_image_add_bytes(p->img, p->vdso_start, p->vdso,
					     p->vdso_len, "[vdso]");
	return p->img;
}

static int add_map(struct ld_proc *p, uint64_t start, uint64_t len,
		   uint64_t pgoff, const char *path)
{
	if (p->nmaps == p->mapscap) {
		struct ld_map *nm =
			strace_grow(p->maps, &p->mapscap, sizeof(*nm), 4);
		if (!nm)
			return -ENOMEM;
		p->maps = nm;
	}
	struct ld_map *m = &p->maps[p->nmaps];
	m->path = strdup(path);
	if (!m->path)
		return -ENOMEM;
	m->start = start;
	m->len = len;
	m->pgoff = pgoff;
	p->nmaps++;
	return map_into(p, m);
}

static int thread_walker(struct strace_live_decoder *ld, struct ld_thread *t)
{
	if (t->walker)
		return 0;
	struct ld_proc *p = proc_get(ld, t->pid);
	struct strace_image *img = p ? proc_image(ld, p) : NULL;
	if (!img)
		return -ENOMEM;
	t->sink = calloc(1, sizeof(*t->sink));
	if (!t->sink)
		return -ENOMEM;
	t->sink->ring = ld->ring;
	t->sink->w = ld->w;
	t->sink->img = img;
	t->sink->types = ld->types;
	t->sink->syms = ld->syms;
	struct strace_walk_opts wo;
	strace_sink_walk_opts(&wo, &ld->walk, t->tid, t->sink);
	return strace_walker_new(img, &wo, &t->walker);
}

/* Decode what t has pending, up to its last complete PSB+ (all of it if
 * final: the stream stops here, for now). */
static void decode(struct strace_live_decoder *ld, struct ld_thread *t,
		   int final)
{
	size_t used = 0;
	if (!t->len)
		return;
	int rc = thread_walker(ld, t);
	if (rc == 0) {
		long k = strace_walker_decode_stream(t->walker, t->buf, t->len,
						     final, &used);
		if (k < 0 && k != -STRACE_E_NOSYNC)
			rc = (int)k;
		if (k == -STRACE_E_NOSYNC)
			used = t->len;
	}
	if (rc < 0) {
		note(ld, rc);
		used = t->len; /* drop what cannot be decoded */
	}
	ld->st.pt_bytes += used;
	memmove(t->buf, t->buf + used, t->len - used);
	t->len -= used;
}

static void flush_thread(struct strace_live_decoder *ld, struct ld_thread *t)
{
	decode(ld, t, 1);
}

static void lost(struct strace_live_decoder *ld, uint32_t tid, uint16_t who,
		 uint64_t time, uint64_t count)
{
	struct strace_event e = {STRACE_EV_LOST, who, tid, time, count, 0};
	ld->st.lost++;
	note(ld, strace_sink_emit(&ld->names, &e));
}

static int on_aux(void *arg, pid_t tid, uint64_t offset, const void *p,
		  size_t len, unsigned flags)
{
	struct strace_live_decoder *ld = arg;
	struct ld_thread *t = thread_get(ld, (uint32_t)tid, 0);
	if (!t)
		return -ENOMEM;
	/* A snapshot that wrapped, or a hole in the offsets: what is pending
	 * ends here; the new bytes start somewhere in the middle. */
	if ((flags & STRACE_AUX_SNAP_WRAPPED) ||
	    (t->have_off && offset != t->next_off)) {
		flush_thread(ld, t);
		if (t->have_off && offset > t->next_off)
			lost(ld, t->tid, STRACE_LOST_AUX, 0,
			     offset - t->next_off);
	}
	t->next_off = offset + len;
	t->have_off = 1;
	/* doubled until the len bytes fit */
	while (t->len + len > t->cap) {
		uint8_t *nb = strace_grow(t->buf, &t->cap, 1, 65536);
		if (!nb)
			return -ENOMEM;
		t->buf = nb;
	}
	memcpy(t->buf + t->len, p, len);
	t->len += len;
	/* Snapshots come whole; a full trace is decoded as it comes (and at
	 * once when no PSB shows up for too long). */
	decode(ld, t, (flags & STRACE_AUX_SNAP_WRAPPED) || t->len > PENDING_MAX);
	return 0;
}

static void define_name(struct strace_live_decoder *ld, unsigned type,
			uint32_t tid, uint64_t a, uint64_t key, uint64_t aux,
			const char *name)
{
	struct strace_definition d = {(uint16_t)type, tid, 0, a, key, aux,
				      name};

	int rc = strace_writer_define(ld->w, &d, ld->types);

	if (rc == 0 && (!ld->types || strace_typeset_has(ld->types, type)))
		ld->names.events++;
	note(ld, rc);
}

static int on_sideband(void *arg, pid_t tid, const struct pfmt_event_header *rec,
		       const struct strace_sb *sb)
{
	struct strace_live_decoder *ld = arg;
	struct ld_proc *p;
	uint64_t time = sb->has_sample_id ? sb->sid_time : 0;
	(void)rec;

	switch (sb->type) {
	case PFMT_RECORD_MMAP:
	case PFMT_RECORD_MMAP2:
		if (!sb->name || !sb->len ||
		    (sb->type == PFMT_RECORD_MMAP2 && sb->prot
			     ? !(sb->prot & PROT_EXEC)
			     : (sb->misc & PFMT_MISC_MMAP_DATA)))
			break;
		define_name(ld, STRACE_EV_DSO, sb->pid, sb->addr, sb->addr,
			    sb->len, sb->name);
		if (!strcmp(sb->name, "[vdso]"))
			break; /* the bytes come through on_vdso */
		p = proc_get(ld, sb->pid);
		if (!p)
			return -ENOMEM;
		(void)add_map(p, sb->addr, sb->len, sb->pgoff, sb->name);
		break;
	case PFMT_RECORD_COMM:
		if (!sb->name)
			break;
		/* An exec needs nothing special: the new program's MMAP2
		 * records replace what they overlap, as ptrace-capture -i
		 * does (and a command is traced from its exec on). */
		thread_get(ld, sb->tid, sb->pid);
		define_name(ld,
			    sb->pid == sb->tid ? STRACE_EV_PROCESS
					       : STRACE_EV_THREAD,
			    sb->tid, sb->pid, sb->tid, sb->pid, sb->name);
		break;
	case PFMT_RECORD_FORK:
		thread_get(ld, sb->tid, sb->pid);
		if (sb->pid != sb->ppid) {
			/* A new process starts with its parent's mappings. */
			struct ld_proc *parent = proc_get(ld, sb->ppid);
			p = proc_get(ld, sb->pid);
			if (!parent || !p)
				return -ENOMEM;
			for (size_t i = 0; i < parent->nmaps; i++)
				(void)add_map(p, parent->maps[i].start,
					      parent->maps[i].len,
					      parent->maps[i].pgoff,
					      parent->maps[i].path);
		}
		break;
	case PFMT_RECORD_EXIT: {
		/* Not the end of the thread's PT: its last AUX bytes are read
		 * after the EXIT record (when the event hangs up). Its
		 * thread_exit follows them (strace_live_decoder_finish()). */
		struct ld_thread *t = thread_get(ld, sb->tid, sb->pid);
		if (!t)
			return -ENOMEM;
		t->exited = 1;
		t->exit_time = time;
		break;
	}
	case PFMT_RECORD_ITRACE_START:
		thread_get(ld, sb->tid, sb->pid);
		break;
	case PFMT_RECORD_AUX:
		if (sb->aux_flags & PFMT_AUX_FLAG_TRUNCATED)
			lost(ld, (uint32_t)tid, STRACE_LOST_AUX, time,
			     sb->aux_size);
		break;
	case PFMT_RECORD_LOST:
		lost(ld, (uint32_t)tid, STRACE_LOST_PERF, time, sb->lost);
		break;
	default:
		break;
	}
	return 0;
}

static int on_vdso(void *arg, pid_t pid, uint64_t start, const void *b,
		   size_t len)
{
	struct strace_live_decoder *ld = arg;
	struct ld_proc *p = proc_get(ld, (uint32_t)pid);
	if (!p)
		return -ENOMEM;
	free(p->vdso);
	p->vdso = malloc(len);
	if (!p->vdso)
		return -ENOMEM;
	memcpy(p->vdso, b, len);
	p->vdso_len = len;
	p->vdso_start = start;
	if (p->img)
		(void)strace_image_add_bytes(p->img, start, b, len, "[vdso]");
	return 0;
}

static int on_stack(void *arg, const struct strace_unwound *stk)
{
	struct strace_live_decoder *ld = arg;
	struct strace_event ev[STRACE_UNWOUND_MAX];
	size_t n = strace_unwound_events(stk, 0, ev, STRACE_UNWOUND_MAX);
	struct ld_thread *t = thread_get(ld, (uint32_t)stk->tid, 0);
	if (!t)
		return -ENOMEM;
	struct ld_proc *p = proc_get(ld, t->pid);
	/* Name the frames with the process image. */
	ld->names.img = p ? proc_image(ld, p) : NULL;
	for (size_t i = 0; i < n; i++)
		note(ld, strace_sink_emit(&ld->names, &ev[i]));
	ld->names.img = NULL;
	return 0;
}

int strace_live_decoder_new(struct strace_ring *ring, unsigned walk_flags,
			    const struct strace_typeset *types,
			    struct strace_live_decoder **out)
{
	struct strace_live_decoder *ld = calloc(1, sizeof(*ld));
	if (!ld)
		return -ENOMEM;
	int rc = strace_writer_open(ring, &ld->w);
	if (rc == 0)
		rc = strace_symset_new(&ld->syms);
	if (rc < 0) {
		strace_writer_close(ld->w);
		free(ld);
		return rc;
	}
	ld->ring = ring;
	ld->walk.flags = walk_flags;
	strace_pt_cpu_host(&ld->walk.cpu); /* the trace is this machine's */
	ld->types = types;
	ld->names.ring = ring;
	ld->names.w = ld->w;
	ld->names.types = types;
	ld->names.syms = ld->syms;
	*out = ld;
	return 0;
}

void strace_live_decoder_set_names(struct strace_live_decoder *ld,
				   int names)
{
	ld->style = names;
}

int strace_live_decoder_set_cache(struct strace_live_decoder *ld,
				  const char *dir)
{
	int rc;

	if (!dir)
		return 0;
	rc = strace_objcache_new(&ld->objects);
	return rc < 0 ? rc : strace_objcache_set_dir(ld->objects, dir);
}

void strace_live_decoder_add_flags(struct strace_live_decoder *ld,
				   unsigned walk_flags)
{
	ld->walk.flags |= walk_flags;
}

void strace_live_decoder_set_time(struct strace_live_decoder *ld,
				  const struct strace_time_conv *tc,
				  int has_time)
{
	ld->walk.time = *tc;
	ld->walk.has_time = has_time;
}

int strace_live_decoder_session(struct strace_live_decoder *ld,
				const struct strace_live *l)
{
	struct strace_time_conv tc;
	int rc;

	memset(&tc, 0, sizeof(tc));
	rc = strace_live_time_conv(l, &tc);
	strace_live_decoder_set_time(ld, &tc,
				     rc == 0 && tc.cap_user_time_zero);
	if (strace_live_has_ptw(l))
		strace_live_decoder_add_flags(ld, STRACE_WALK_PTWRITE);
	return rc == -ERANGE ? -ERANGE : 0;
}

void strace_live_decoder_callbacks(struct strace_live_decoder *ld,
				   struct strace_live_cb *cb)
{
	memset(cb, 0, sizeof(*cb));
	cb->arg = ld;
	cb->sideband = on_sideband;
	cb->aux = on_aux;
	cb->vdso = on_vdso;
	cb->stack = on_stack;
}

int strace_live_decoder_finish(struct strace_live_decoder *ld,
			       struct strace_live_decoder_stats *st)
{
	struct strace_walk_stats ws;
	for (struct ld_thread *t = ld->threads; t; t = t->next) {
		flush_thread(ld, t);
		if (t->exited && t->sink) {
			/* as ptrace-capture -i: after the thread's trace */
			struct strace_event e = {STRACE_EV_THREAD_EXIT,
						 STRACE_EXIT_NO_STATUS, t->tid,
						 t->exit_time, t->pid, 0};
			note(ld, strace_sink_emit(t->sink, &e));
		}
	}
	while (ld->threads) {
		struct ld_thread *t = ld->threads;
		ld->threads = t->next;
		if (t->walker) {
			strace_walker_stats(t->walker, &ws);
			ld->st.errors += ws.errors;
			ld->st.overflows += ws.overflows;
		}
		if (t->sink)
			ld->st.events += t->sink->events;
		strace_walker_free(t->walker);
		free(t->sink);
		free(t->buf);
		free(t);
	}
	while (ld->procs) {
		struct ld_proc *p = ld->procs;
		ld->procs = p->next;
		strace_image_free(p->img);
		for (size_t i = 0; i < p->nmaps; i++)
			free(p->maps[i].path);
		free(p->maps);
		free(p->vdso);
		free(p);
	}
	if (ld->objects) {
		(void)strace_objcache_save(ld->objects, &ld->st.cache);
		strace_objcache_free(ld->objects);
	}
	ld->st.events += ld->names.events;
	note(ld, strace_writer_close(ld->w));
	strace_symset_free(ld->syms);
	if (st)
		*st = ld->st;
	int rc = ld->err;
	free(ld);
	return rc;
}
