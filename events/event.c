/* SPDX-License-Identifier: MIT */
/* events/event.c - the event type table and type filters. */
#include <errno.h>
#include <fnmatch.h>
#include <string.h>

#include "strace/event.h"
#include "strace/ring.h"

/* the types whose flags are not STRACE_FLK_BITS */
#define FLAGS_KIND(VAL) ((VAL) == STRACE_EV_ERROR ? STRACE_FLK_ERROR : STRACE_FLK_BITS)

static const struct strace_event_info infos[STRACE_EV_MAX] = {
#define STRACE_X_INFO(ID, VAL, NAME, FAM, AN, AK, BN, BK, DESC)                \
	[VAL] = {NAME,           AN,  BN, DESC, STRACE_FK_##AK, STRACE_FK_##BK, \
		 STRACE_FAM_##FAM, FLAGS_KIND(VAL)},
	STRACE_EVENT_TYPES(STRACE_X_INFO)
#undef STRACE_X_INFO
};

const struct strace_event_info *strace_event_info(unsigned type)
{
	if (type >= STRACE_EV_MAX || !infos[type].name)
		return NULL;
	return &infos[type];
}

int strace_event_type_by_name(const char *name)
{
	for (unsigned t = 0; t < STRACE_EV_MAX; t++)
		if (infos[t].name && strcmp(infos[t].name, name) == 0)
			return (int)t;
	return -1;
}

const char *strace_reason_name(uint64_t reason)
{
	switch (reason) {
#define STRACE_X_RNAME(ID, VAL, NAME)                                          \
	case VAL:                                                              \
		return NAME;
		STRACE_REASONS(STRACE_X_RNAME)
#undef STRACE_X_RNAME
	}
	return "unknown";
}

const char *strace_family_name(unsigned family)
{
	static const char *const names[] = {"control", "flow",  "gap",
					    "define",  "stack", "block",
					    "emu",     "sample"};
	return family < sizeof(names) / sizeof(names[0]) ? names[family] : "?";
}

void strace_typeset_all(struct strace_typeset *set)
{
	memset(set, 0, sizeof(*set));
	for (unsigned t = 1; t < STRACE_EV_MAX; t++)
		if (infos[t].name)
			set->bits[t / 64] |= 1ull << (t % 64);
}

int strace_typeset_parse(struct strace_typeset *set, const char *patterns,
			 const char **bad, size_t *bad_len)
{
	const char *p = patterns;
	int first = 1;

	memset(set, 0, sizeof(*set));
	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char pat[64];
		int neg = 0, matched = 0;

		if (len && *p == '-') {
			neg = 1;
			if (first)
				strace_typeset_all(set);
		}
		if (len - (size_t)neg == 0 || len - (size_t)neg >= sizeof(pat))
			goto bad;
		memcpy(pat, p + neg, len - (size_t)neg);
		pat[len - (size_t)neg] = '\0';
		for (unsigned t = 1; t < STRACE_EV_MAX; t++) {
			if (!infos[t].name || fnmatch(pat, infos[t].name, 0))
				continue;
			matched = 1;
			if (neg)
				set->bits[t / 64] &= ~(1ull << (t % 64));
			else
				set->bits[t / 64] |= 1ull << (t % 64);
		}
		if (!matched)
			goto bad;
		first = 0;
		if (!end)
			return 0;
		p = end + 1;
		continue;
bad:
		if (bad)
			*bad = p;
		if (bad_len)
			*bad_len = len;
		return -EINVAL;
	}
}

