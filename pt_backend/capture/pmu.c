/* SPDX-License-Identifier: MIT */
/* pt_backend/capture/pmu.c - see pmu.h. */
#include "pmu.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <strace/error.h>

static void seterr(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void seterr(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* Read the first line of dir/name into buf; returns 0 or -errno. */
static int read_line(const char *dir, const char *name, char *buf, size_t len)
{
	char path[768];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Integer from a sysfs file in base (10 or 16); def if absent/invalid. */
static long long read_num(const char *dir, const char *name, int base,
			  long long def)
{
	char buf[64], *end;
	long long v;

	if (read_line(dir, name, buf, sizeof(buf)) < 0)
		return def;
	errno = 0;
	v = strtoll(buf, &end, base);
	if (errno || end == buf)
		return def;
	return v;
}

/* "config:N", "config:N-M", comma lists of those. Other fields: -EINVAL. */
static int parse_format(const char *s, uint64_t *mask)
{
	const char *p;
	uint64_t m = 0;

	if (strncmp(s, "config:", 7) != 0)
		return -EINVAL;
	p = s + 7;
	for (;;) {
		char *end;
		unsigned long lo, hi;

		lo = strtoul(p, &end, 10);
		if (end == p)
			return -EINVAL;
		hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			hi = strtoul(p, &end, 10);
			if (end == p)
				return -EINVAL;
			p = end;
		}
		if (lo > 63 || hi > 63 || hi < lo)
			return -EINVAL;
		for (unsigned long b = lo; b <= hi; b++)
			m |= 1ULL << b;
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p && !isspace((unsigned char)*p))
			return -EINVAL;
		break;
	}
	*mask = m;
	return 0;
}

static const char *const format_names[] = {
	"pt",  "cyc",	 "pwr_evt",  "fup_on_ptw", "mtc",	 "tsc",
	"noretcomp", "ptw", "branch", "event", "notnt", "mtc_period",
	"cyc_thresh", "psb_period",
};

int strace_pmu_load(const char *sysfs_root, struct strace_pmu *pmu)
{
	char buf[128], fdir[600];
	long long type;
	struct stat st;

	memset(pmu, 0, sizeof(*pmu));
	snprintf(pmu->dir, sizeof(pmu->dir),
		 "%s/bus/event_source/devices/intel_pt",
		 sysfs_root ? sysfs_root : "/sys");
	if (stat(pmu->dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return -STRACE_E_NOPT;
	type = read_num(pmu->dir, "type", 10, -1);
	if (type < 0 || type > UINT32_MAX)
		return -STRACE_E_NOPT;
	pmu->type = (uint32_t)type;
	pmu->nr_addr_filters = (int)read_num(pmu->dir, "nr_addr_filters", 10, 0);
	pmu->max_nonturbo_ratio = (long)read_num(pmu->dir, "max_nonturbo_ratio",
						 10, 0);

	/*
	 * The terms perf knows for intel_pt; the kernel may offer fewer
	 * (older CPUs/kernels) and a term the kernel lacks is unknown here too.
	 */
	snprintf(fdir, sizeof(fdir), "%s/format", pmu->dir);
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]);
	     i++) {
		struct strace_pmu_format *f = &pmu->formats[pmu->nformats];
		int err = read_line(fdir, format_names[i], buf, sizeof(buf));

		if (err == -ENOENT)
			continue;
		if (err < 0)
			return err;
		if (parse_format(buf, &f->mask) < 0)
			return -STRACE_E_BADARG;
		snprintf(f->name, sizeof(f->name), "%s", format_names[i]);
		pmu->nformats++;
	}

	snprintf(fdir, sizeof(fdir), "%s/caps", pmu->dir);
	pmu->caps.psb_cyc = (int)read_num(fdir, "psb_cyc", 16, -1);
	pmu->caps.mtc = (int)read_num(fdir, "mtc", 16, -1);
	pmu->caps.ip_filtering = (int)read_num(fdir, "ip_filtering", 16, -1);
	pmu->caps.topa_multiple_entries =
		(int)read_num(fdir, "topa_multiple_entries", 16, -1);
	pmu->caps.num_address_ranges =
		(int)read_num(fdir, "num_address_ranges", 16, -1);
	pmu->caps.cr3_filtering = (int)read_num(fdir, "cr3_filtering", 16, -1);
	pmu->caps.ptwrite = (int)read_num(fdir, "ptwrite", 16, -1);
	pmu->caps.power_event_trace =
		(int)read_num(fdir, "power_event_trace", 16, -1);
	pmu->caps.mtc_periods = read_num(fdir, "mtc_periods", 16, -1);
	pmu->caps.cycle_thresholds = read_num(fdir, "cycle_thresholds", 16, -1);
	pmu->caps.psb_periods = read_num(fdir, "psb_periods", 16, -1);
	return 0;
}

uint64_t strace_pmu_format_bits(const struct strace_pmu *pmu,
				const char *name)
{
	for (unsigned i = 0; i < pmu->nformats; i++)
		if (!strcmp(pmu->formats[i].name, name))
			return pmu->formats[i].mask;
	return 0;
}

/* Scatter val into the bits of mask, lowest bit first (perf's pmu_format_value). */
static int put_bits(uint64_t *config, uint64_t mask, uint64_t val)
{
	uint64_t out = 0;
	unsigned used = 0;

	for (unsigned b = 0; b < 64; b++) {
		if (!(mask & (1ULL << b)))
			continue;
		if (used < 64 && (val >> used) & 1)
			out |= 1ULL << b;
		used++;
	}
	if (used < 64 && (val >> used))
		return -1; /* does not fit */
	*config = (*config & ~mask) | out;
	return 0;
}

static uint64_t get_bits(uint64_t config, uint64_t mask)
{
	uint64_t v = 0;
	unsigned used = 0;

	for (unsigned b = 0; b < 64; b++) {
		if (!(mask & (1ULL << b)))
			continue;
		if (config & (1ULL << b))
			v |= 1ULL << used;
		used++;
	}
	return v;
}

/* perf's intel_pt_pick_bit(): the set bit at target, else the nearest below, else the lowest above. */
static int pick_bit(long long bits, int target)
{
	int pos, pick = -1;

	for (pos = 0; bits > 0; bits >>= 1, pos++) {
		if (bits & 1) {
			if (pos <= target || pick < 0)
				pick = pos;
			if (pos >= target)
				break;
		}
	}
	return pick;
}

static void set_term(const struct strace_pmu *pmu, uint64_t *config,
		     const char *name, uint64_t val)
{
	uint64_t m = strace_pmu_format_bits(pmu, name);

	if (m)
		put_bits(config, m, val);
}

uint64_t strace_pmu_default_config(const struct strace_pmu *pmu)
{
	uint64_t config = 0;
	int mtc = pmu->caps.mtc < 0 ? 1 : pmu->caps.mtc;
	int psb_cyc = pmu->caps.psb_cyc < 0 ? 1 : pmu->caps.psb_cyc;
	long long mtc_periods = 0;

	/* Same order and conditions as perf's "tsc,mtc,mtc_period=N,..." */
	set_term(pmu, &config, "tsc", 1);
	if (mtc) {
		mtc_periods = pmu->caps.mtc_periods < 0 ? 0 : pmu->caps.mtc_periods;
		if (mtc_periods) {
			set_term(pmu, &config, "mtc", 1);
			set_term(pmu, &config, "mtc_period",
				 (uint64_t)pick_bit(mtc_periods, 3));
		}
	}
	if (psb_cyc && mtc_periods) {
		long long pp = pmu->caps.psb_periods < 0 ? 0 : pmu->caps.psb_periods;

		if (pp)
			set_term(pmu, &config, "psb_period",
				 (uint64_t)pick_bit(pp, 3));
	}
	if (strace_pmu_format_bits(pmu, "pt") &&
	    strace_pmu_format_bits(pmu, "branch")) {
		set_term(pmu, &config, "pt", 1);
		set_term(pmu, &config, "branch", 1);
	}
	return config;
}

/* perf's intel_pt_val_config_term(). */
static int check_value(const struct strace_pmu *pmu, const char *name,
		       long long caps, int supported, uint64_t config,
		       char *errbuf, size_t errlen)
{
	uint64_t mask = strace_pmu_format_bits(pmu, name), v;
	unsigned long long valid = caps < 0 ? 0 : (unsigned long long)caps;
	char list[200];
	size_t p = 0;

	if (!mask)
		return 0;
	if (supported == 0)
		valid = 0;
	valid |= 1;
	v = get_bits(config, mask);
	if (v <= 63 && (valid & (1ULL << v)))
		return 0;
	list[0] = '\0';
	for (unsigned i = 0; i < 64 && p < sizeof(list) - 4; i++)
		if (valid & (1ULL << i))
			p += (size_t)snprintf(list + p, sizeof(list) - p, "%s%u",
					      p ? "," : "", i);
	seterr(errbuf, errlen,
	       "invalid %s=%" PRIu64 " for intel_pt; valid values are: %s",
	       name, v, list);
	return -STRACE_E_BADARG;
}

int strace_pmu_config(const struct strace_pmu *pmu, const char *terms,
		      uint64_t *config, struct strace_pmu_mods *mods,
		      char *errbuf, size_t errlen)
{
	char buf[512], *s, *save = NULL, *tok;
	const char *modstr = NULL;
	struct strace_pmu_mods m = {1, 0, 1};
	uint64_t c = strace_pmu_default_config(pmu);
	int err;

	if (!terms)
		terms = "";
	if (strlen(terms) >= sizeof(buf)) {
		seterr(errbuf, errlen, "event terms too long");
		return -STRACE_E_BADARG;
	}
	snprintf(buf, sizeof(buf), "%s", terms);
	s = buf;
	/* "intel_pt/terms/mods" or bare terms (with an optional ":mods"). */
	if (!strncmp(s, "intel_pt/", 9)) {
		char *close = strchr(s + 9, '/');

		if (!close) {
			seterr(errbuf, errlen, "missing '/' after intel_pt/%s",
			       s + 9);
			return -STRACE_E_BADARG;
		}
		*close = '\0';
		modstr = close + 1;
		if (*modstr == ':')
			modstr++;
		s += 9;
	} else {
		char *colon = strchr(s, ':');

		if (colon) {
			*colon = '\0';
			modstr = colon + 1;
		}
	}
	if (modstr && *modstr) {
		m.exclude_kernel = m.exclude_user = m.exclude_hv = 1;
		for (const char *p = modstr; *p; p++) {
			switch (*p) {
			case 'u': m.exclude_user = 0; break;
			case 'k': m.exclude_kernel = 0; break;
			case 'h': m.exclude_hv = 0; break;
			default:
				seterr(errbuf, errlen,
				       "unknown event modifier '%c' (use u, k)",
				       *p);
				return -STRACE_E_BADARG;
			}
		}
	}

	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		unsigned long long val = 1;
		uint64_t mask;

		while (isspace((unsigned char)*tok))
			tok++;
		if (!*tok)
			continue;
		if (eq) {
			char *end;

			*eq = '\0';
			errno = 0;
			val = strtoull(eq + 1, &end, 0);
			if (errno || end == eq + 1 || *end) {
				seterr(errbuf, errlen, "bad value for term %s: %s",
				       tok, eq + 1);
				return -STRACE_E_BADARG;
			}
		}
		mask = strace_pmu_format_bits(pmu, tok);
		if (!mask) {
			seterr(errbuf, errlen,
			       "unknown intel_pt term '%s' (this PMU has:", tok);
			for (unsigned i = 0; i < pmu->nformats && errbuf; i++) {
				size_t l = strlen(errbuf);

				snprintf(errbuf + l, errlen - l, " %s",
					 pmu->formats[i].name);
			}
			if (errbuf) {
				size_t l = strlen(errbuf);

				snprintf(errbuf + l, errlen - l, ")");
			}
			return -STRACE_E_BADARG;
		}
		if (put_bits(&c, mask, val) < 0) {
			seterr(errbuf, errlen, "value %llu does not fit term %s",
			       val, tok);
			return -STRACE_E_BADARG;
		}
	}

	/* perf forces pt=1: pt=0 makes no sense and the kernel would refuse. */
	if (strace_pmu_format_bits(pmu, "pt"))
		c |= strace_pmu_format_bits(pmu, "pt");

	err = check_value(pmu, "cyc_thresh", pmu->caps.cycle_thresholds,
			  pmu->caps.psb_cyc, c, errbuf, errlen);
	if (!err)
		err = check_value(pmu, "mtc_period", pmu->caps.mtc_periods,
				  pmu->caps.mtc, c, errbuf, errlen);
	if (!err)
		err = check_value(pmu, "psb_period", pmu->caps.psb_periods,
				  pmu->caps.psb_cyc, c, errbuf, errlen);
	if (err)
		return err;
	*config = c;
	if (mods)
		*mods = m;
	return 0;
}

void strace_pmu_attrs(const struct strace_pmu *pmu,
		      const struct strace_pmu_attr_opts *o,
		      struct perf_event_attr *pt, struct perf_event_attr *track)
{
	uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER;

	/* perf's timed decoding wants the cpu of every record too */
	if (o->sideband_time)
		st |= PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;

	memset(pt, 0, sizeof(*pt));
	pt->type = pmu->type;
	pt->size = sizeof(*pt);
	pt->config = o->config;
	pt->sample_period = 1;
	pt->sample_type = st;
	pt->read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
	pt->disabled = 1;
	pt->exclude_kernel = (unsigned)o->mods.exclude_kernel;
	pt->exclude_user = (unsigned)o->mods.exclude_user;
	pt->exclude_hv = (unsigned)o->mods.exclude_hv;
	pt->enable_on_exec = o->enable_on_exec ? 1 : 0;
	pt->sample_id_all = 1;
	/* perf: a quarter of the AUX area in full-trace mode, none in snapshot. */
	if (!o->snapshot)
		pt->aux_watermark = (uint32_t)(o->aux_bytes / 4);

	memset(track, 0, sizeof(*track));
	track->type = PERF_TYPE_SOFTWARE;
	track->size = sizeof(*track);
	track->config = PERF_COUNT_SW_DUMMY;
	track->sample_period = 1;
	track->sample_type = st;
	track->read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
	track->disabled = 1;
	/* perf 6.1's tracking event is always user-only (evlist__add_aux_dummy). */
	track->exclude_kernel = 1;
	track->exclude_hv = 1;
	track->mmap = 1;
	track->comm = 1;
	track->enable_on_exec = pt->enable_on_exec;
	track->task = 1;
	track->sample_id_all = 1;
	track->exclude_guest = 1;
	track->mmap2 = 1;
	track->comm_exec = 1;
	track->ksymbol = 1;
	track->bpf_event = 1;
	track->context_switch = o->context_switch ? 1 : 0;
}

/* -------- printing attrs the way perf -vv does -------- */

struct pbuf {
	char *buf;
	size_t len, pos;
};

static void pr(struct pbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void pr(struct pbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b->pos < b->len ? b->buf + b->pos : NULL,
		      b->pos < b->len ? b->len - b->pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->pos += (size_t)n;
}

static void pr_u(struct pbuf *b, const char *name, uint64_t v)
{
	if (v)
		pr(b, "  %-32s %" PRIu64 "\n", name, v);
}

static void pr_x(struct pbuf *b, const char *name, uint64_t v)
{
	if (v)
		pr(b, "  %-32s %#" PRIx64 "\n", name, v);
}

static void pr_bits(struct pbuf *b, const char *name, uint64_t v,
		    const char *const *names, unsigned n)
{
	char s[512];
	size_t p = 0;

	if (!v)
		return;
	s[0] = '\0';
	for (unsigned i = 0; i < 64; i++) {
		if (!(v & (1ULL << i)))
			continue;
		if (i < n && names[i])
			p += (size_t)snprintf(s + p, sizeof(s) - p, "%s%s",
					      p ? "|" : "", names[i]);
		else
			p += (size_t)snprintf(s + p, sizeof(s) - p, "%s%#llx",
					      p ? "|" : "", 1ULL << i);
		if (p >= sizeof(s))
			break;
	}
	pr(b, "  %-32s %s\n", name, s);
}

static const char *const sample_names[] = {
	"IP",	      "TID",	      "TIME",	     "ADDR",	    "READ",
	"CALLCHAIN",  "ID",	      "CPU",	     "PERIOD",	    "STREAM_ID",
	"RAW",	      "BRANCH_STACK", "REGS_USER",  "STACK_USER", "WEIGHT",
	"DATA_SRC",   "IDENTIFIER",   "TRANSACTION", "REGS_INTR",  "PHYS_ADDR",
	"AUX",	      "CGROUP",	      "DATA_PAGE_SIZE", "CODE_PAGE_SIZE",
	"WEIGHT_STRUCT",
};

static const char *const read_names[] = {
	"TOTAL_TIME_ENABLED", "TOTAL_TIME_RUNNING", "ID", "GROUP", "LOST",
};

/* aux_action: the u32 after aux_sample_size (see pmu.h) */
#define AUX_ACTION_AT (offsetof(struct perf_event_attr, aux_sample_size) + 4)
_Static_assert(AUX_ACTION_AT == 116, "aux_action is at byte 116");

void strace_pmu_set_aux_action(struct perf_event_attr *a, uint32_t bits)
{
	memcpy((char *)a + AUX_ACTION_AT, &bits, 4);
}

uint32_t strace_pmu_aux_action(const struct perf_event_attr *a)
{
	uint32_t v;

	memcpy(&v, (const char *)a + AUX_ACTION_AT, 4);
	return v;
}

int strace_pmu_attr_fprint(char *buf, size_t len,
			   const struct perf_event_attr *a)
{
	struct pbuf b = {buf, len, 0};

	if (len)
		buf[0] = '\0';
	pr(&b, "perf_event_attr:\n");
	pr_u(&b, "type", a->type);
	pr_u(&b, "size", a->size);
	pr_x(&b, "config", a->config);
	pr_u(&b, "{ sample_period, sample_freq }", a->sample_period);
	pr_bits(&b, "sample_type", a->sample_type, sample_names,
		sizeof(sample_names) / sizeof(sample_names[0]));
	pr_bits(&b, "read_format", a->read_format, read_names,
		sizeof(read_names) / sizeof(read_names[0]));
#define B(f) pr_u(&b, #f, a->f)
	B(disabled);
	B(inherit);
	B(pinned);
	B(exclusive);
	B(exclude_user);
	B(exclude_kernel);
	B(exclude_hv);
	B(exclude_idle);
	B(mmap);
	B(comm);
	B(freq);
	B(inherit_stat);
	B(enable_on_exec);
	B(task);
	B(watermark);
	B(precise_ip);
	B(mmap_data);
	B(sample_id_all);
	B(exclude_host);
	B(exclude_guest);
	B(exclude_callchain_kernel);
	B(exclude_callchain_user);
	B(mmap2);
	B(comm_exec);
	B(use_clockid);
	B(context_switch);
	B(write_backward);
	B(namespaces);
	B(ksymbol);
	B(bpf_event);
	B(aux_output);
	B(cgroup);
	B(text_poke);
	B(build_id);
	B(inherit_thread);
	B(remove_on_exec);
	B(sigtrap);
	pr_u(&b, "{ wakeup_events, wakeup_watermark }", a->wakeup_events);
	B(bp_type);
	pr_x(&b, "{ bp_addr, config1 }", a->config1);
	pr_x(&b, "{ bp_len, config2 }", a->config2);
	B(branch_sample_type);
	B(sample_regs_user);
	B(sample_stack_user);
	B(clockid);
	B(sample_regs_intr);
	B(aux_watermark);
	B(sample_max_stack);
	B(aux_sample_size);
	{
		/* perf 6.13's names for aux_action's bits */
		uint32_t act = strace_pmu_aux_action(a);

		if (act & STRACE_AUX_START_PAUSED)
			pr_u(&b, "aux_start_paused", 1);
		if (act & STRACE_AUX_PAUSE)
			pr_u(&b, "aux_pause", 1);
		if (act & STRACE_AUX_RESUME)
			pr_u(&b, "aux_resume", 1);
	}
	B(sig_data);
#undef B
	return (int)b.pos;
}

/* -------- address filters -------- */

static int parse_num(const char **pp, uint64_t *v)
{
	const char *p = *pp;
	char *end;

	errno = 0;
	*v = strtoull(p, &end, 0);
	if (errno || end == p)
		return -1;
	*pp = end;
	return 0;
}

int strace_pmu_filter(const char *in, int max_filters, char *out,
		      size_t outlen, char *errbuf, size_t errlen)
{
	const char *p = in;
	size_t pos = 0;
	int n = 0;

	if (!outlen)
		return -ENOSPC;
	out[0] = '\0';
	for (;;) {
		static const struct {
			const char *word, *kernel;
			int has_size; /* 1: size allowed, 2: default whole */
		} kinds[] = {
			{"filter", "filter", 1},
			{"tracestop", "stop", 1},
			{"start", "start", 1},
			{"stop", "stop", 1},
		};
		const char *kernel = NULL, *file = NULL;
		size_t filelen = 0;
		uint64_t addr, size = 0;
		int have_size = 0, w;

		while (*p == ' ' || *p == ',' || *p == '\t')
			p++;
		if (!*p)
			break;
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			size_t l = strlen(kinds[k].word);

			if (!strncmp(p, kinds[k].word, l) &&
			    (p[l] == ' ' || p[l] == '\t')) {
				kernel = kinds[k].kernel;
				p += l;
				break;
			}
		}
		if (!kernel) {
			seterr(errbuf, errlen,
			       "bad address filter at '%s': expected filter, "
			       "start, stop or tracestop",
			       p);
			return -STRACE_E_BADARG;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (parse_num(&p, &addr) < 0) {
			seterr(errbuf, errlen,
			       "bad address filter at '%s': expected an address "
			       "(symbols are not supported; use an address "
			       "from nm or objdump)",
			       p);
			return -STRACE_E_BADARG;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '/') {
			p++;
			while (*p == ' ' || *p == '\t')
				p++;
			if (parse_num(&p, &size) < 0 || !size) {
				seterr(errbuf, errlen,
				       "bad address filter size at '%s'", p);
				return -STRACE_E_BADARG;
			}
			have_size = 1;
			while (*p == ' ' || *p == '\t')
				p++;
		}
		if (*p == '@') {
			p++;
			file = p;
			filelen = strcspn(p, " ,\t");
			if (!filelen) {
				seterr(errbuf, errlen,
				       "missing file name after '@'");
				return -STRACE_E_BADARG;
			}
			p += filelen;
		}
		if (*p && *p != ' ' && *p != ',' && *p != '\t') {
			seterr(errbuf, errlen, "bad address filter at '%s'", p);
			return -STRACE_E_BADARG;
		}
		if (!strcmp(kernel, "filter") && !have_size) {
			seterr(errbuf, errlen,
			       "'filter %#" PRIx64 "' needs a size "
			       "(filter ADDR/SIZE[@FILE])",
			       addr);
			return -STRACE_E_BADARG;
		}
		if (++n > max_filters) {
			seterr(errbuf, errlen,
			       "number of address filters (%d) exceeds the "
			       "maximum (%d) of this CPU",
			       n, max_filters);
			return -STRACE_E_BADARG;
		}
		w = snprintf(out + pos, outlen - pos, "%s%s %#" PRIx64,
			     pos ? "," : "", kernel, addr);
		if (w < 0 || (size_t)w >= outlen - pos)
			return -ENOSPC;
		pos += (size_t)w;
		if (have_size) {
			w = snprintf(out + pos, outlen - pos, "/%#" PRIx64, size);
			if (w < 0 || (size_t)w >= outlen - pos)
				return -ENOSPC;
			pos += (size_t)w;
		}
		if (file) {
			w = snprintf(out + pos, outlen - pos, "@%.*s",
				     (int)filelen, file);
			if (w < 0 || (size_t)w >= outlen - pos)
				return -ENOSPC;
			pos += (size_t)w;
		}
	}
	if (!n) {
		seterr(errbuf, errlen, "empty address filter");
		return -STRACE_E_BADARG;
	}
	return n;
}

void strace_pmu_default_sizes(int privileged, size_t *aux_bytes,
			      size_t *data_bytes)
{
	*aux_bytes = privileged ? 4u << 20 : 128u << 10;
	*data_bytes = privileged ? 512u << 10 : 256u << 10;
}
