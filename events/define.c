/* SPDX-License-Identifier: MIT */
/* events/define.c - definitions: a name, then the event that carries its
 * offset (strace/ring.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "strace/ring.h"

int strace_writer_define(struct strace_writer *w,
			 const struct strace_definition *d,
			 const struct strace_typeset *types)
{
	struct strace_ring *ring = strace_writer_ring(w);
	uint64_t off;
	int rc;

	rc = strace_ring_add_string(ring, d->type, d->key, d->aux, d->name,
				    strlen(d->name), &off);
	if (rc < 0 || (types && !strace_typeset_has(types, d->type)))
		return rc;
	return strace_writer_emit(w, d->type, 0, d->tid, d->time, d->a, off);
}

struct strace_symset {
	pthread_mutex_t lock;
	uint64_t *keys; /* open addressing; 0 = empty, a symbol at 0 is 1 */
	size_t cap, n;
};

int strace_symset_new(struct strace_symset **out)
{
	struct strace_symset *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	*out = s;
	return 0;
}

void strace_symset_free(struct strace_symset *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->lock);
	free(s->keys);
	free(s);
}

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

/* 1 if key was newly added, 0 if present, -ENOMEM. The caller locks. */
static int symset_add(struct strace_symset *s, uint64_t key)
{
	size_t j;

	key = key ? key : 1;
	if ((s->n + 1) * 2 > s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 1024;
		uint64_t *nk = calloc(nc, sizeof(*nk));
		if (!nk)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->keys[i])
				continue;
			j = slot_of(s->keys[i], nc);
			while (nk[j])
				j = (j + 1) & (nc - 1);
			nk[j] = s->keys[i];
		}
		free(s->keys);
		s->keys = nk;
		s->cap = nc;
	}
	j = slot_of(key, s->cap);
	while (s->keys[j]) {
		if (s->keys[j] == key)
			return 0;
		j = (j + 1) & (s->cap - 1);
	}
	s->keys[j] = key;
	s->n++;
	return 1;
}

int strace_writer_define_symbol(struct strace_writer *w,
				struct strace_symset *set,
				const struct strace_typeset *types,
				uint32_t tid, uint64_t time, uint64_t start,
				uint64_t size, const char *name)
{
	struct strace_definition d = {STRACE_EV_SYMBOL, tid, time, start,
				      start, size, name};
	uint64_t off;
	int rc, added;

	if (!set) {
		rc = strace_writer_define(w, &d, types);
		return rc < 0 ? rc : 1;
	}
	/* Named in the set only once the name is in the table: a thread
	 * that finds it named hands its events to the tap (in-process
	 * plugins name them at once), and the name must be there. */
	pthread_mutex_lock(&set->lock);
	rc = added = symset_add(set, start);
	if (added > 0)
		rc = strace_ring_add_string(strace_writer_ring(w), d.type,
					    d.key, d.aux, name, strlen(name),
					    &off);
	pthread_mutex_unlock(&set->lock);
	if (added <= 0 || rc < 0)
		return rc;
	if (types && !strace_typeset_has(types, d.type))
		return 1;
	rc = strace_writer_emit(w, d.type, 0, tid, time, d.a, off);
	return rc < 0 ? rc : 1;
}

/* A string-table entry no event carries, once per setkey in set (may be
 * NULL). Returns 1 if written now, 0 if before, or an error. */
static int name_once(struct strace_writer *w, struct strace_symset *set,
		     uint64_t setkey, unsigned kind, uint64_t key, uint64_t aux,
		     const char *name)
{
	uint64_t off;
	int rc, added;

	if (!set) {
		rc = strace_ring_add_string(strace_writer_ring(w), kind, key,
					    aux, name, strlen(name), &off);
		return rc < 0 ? rc : 1;
	}
	/* (as strace_writer_define_symbol(): in the set once in the
	 * table) */
	pthread_mutex_lock(&set->lock);
	rc = added = symset_add(set, setkey);
	if (added > 0)
		rc = strace_ring_add_string(strace_writer_ring(w), kind, key,
					    aux, name, strlen(name), &off);
	pthread_mutex_unlock(&set->lock);
	return rc < 0 ? rc : added;
}

/* (bits 63 and 62 keep a syscall site and a mapping's start apart from a
 * symbol starting there: user addresses have neither) */
int strace_writer_name_syscall(struct strace_writer *w,
			       struct strace_symset *set, uint64_t addr,
			       uint64_t nr, const char *name)
{
	return name_once(w, set, addr | 1ull << 63, STRACE_EV_SYSCALL, addr,
			 nr, name);
}

int strace_writer_name_alias(struct strace_writer *w, uint64_t start,
			     const char *name)
{
	int rc = name_once(w, NULL, 0, STRACE_NAME_ALIAS, start, 0, name);

	return rc < 0 ? rc : 0;
}

int strace_writer_name_dso_base(struct strace_writer *w,
				struct strace_symset *set, uint64_t start,
				uint64_t vaddr)
{
	return name_once(w, set, start | 1ull << 62, STRACE_NAME_DSO_BASE,
			 start, vaddr, "elf");
}

int strace_writer_name_info(struct strace_writer *w, enum strace_info what,
			    uint64_t aux, const char *value)
{
	int rc = name_once(w, NULL, 0, STRACE_NAME_INFO, (uint64_t)what, aux,
			   value);

	return rc < 0 ? rc : 0;
}

int strace_writer_name_coverage(struct strace_writer *w, const char *path,
				uint64_t vaddr, uint64_t len)
{
	int rc = name_once(w, NULL, 0, STRACE_NAME_COVERAGE, vaddr, len, path);

	return rc < 0 ? rc : 0;
}

int strace_writer_name_branch(struct strace_writer *w, const char *path,
			      uint64_t vaddr, unsigned seen)
{
	int rc = name_once(w, NULL, 0, STRACE_NAME_COVBRANCH, vaddr, seen,
			   path);

	return rc < 0 ? rc : 0;
}
