/* SPDX-License-Identifier: MIT */
/* pt_backend/capture/probe.c - see probe.h. */
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <limits.h>
#include <linux/hw_breakpoint.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <strace/error.h>
#include "strace/internal/grow.h"
#include "decoder/decoder.h" /* the image: ELF symbols, their aliases */
#include "vdso.h" /* strace_maps_parse */

/* ---------------- the objects to look in ---------------- */

static int objlist_add(struct strace_objlist *l, const char *path)
{
	char real[PATH_MAX], **v;

	if (!realpath(path, real))
		return 0; /* gone, or not there: nothing to look in */
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], real))
			return 0;
	if (l->n == l->cap) {
		if (!(v = strace_grow(l->v, &l->cap, sizeof(*v), 4)))
			return -ENOMEM;
		l->v = v;
	}
	if (!(l->v[l->n] = strdup(real)))
		return -ENOMEM;
	l->n++;
	return 1;
}

void strace_objlist_fini(struct strace_objlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

int strace_objlist_pid(struct strace_objlist *l, const char *procfs_root,
		       pid_t pid)
{
	char path[512], line[4608];
	struct strace_maps_line ml;
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/%d/maps",
		 procfs_root ? procfs_root : "/proc", (int)pid);
	if (!(f = fopen(path, "re")))
		return errno == ENOENT ? -STRACE_E_NOPID : -errno;
	/* the executable is mapped first (its read-only first page), before
	 * the loader and the libraries */
	while (err >= 0 && fgets(line, sizeof(line), f))
		if (!strace_maps_parse(line, &ml) && ml.name[0] == '/')
			err = objlist_add(l, ml.name);
	fclose(f);
	return err < 0 ? err : 0;
}

/* Whether path is a regular 64-bit x86 ELF file (what the loader takes). */
static int is_elf64(const char *path)
{
	Elf64_Ehdr eh;
	struct stat st;
	int fd, ok;

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	ok = read(fd, &eh, sizeof(eh)) == (ssize_t)sizeof(eh) &&
	     !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	     eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_machine == EM_X86_64;
	close(fd);
	return ok;
}

/* Find name in the ':'-separated dirs ($ORIGIN: origin's folder). */
static int search_dirs(const char *dirs, const char *origin, const char *name,
		       char *out, size_t outlen)
{
	const char *p = dirs;

	while (p && *p) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char dir[PATH_MAX];

		if (n >= 7 && !strncmp(p, "$ORIGIN", 7))
			snprintf(dir, sizeof(dir), "%s%.*s", origin,
				 (int)(n - 7), p + 7);
		else
			snprintf(dir, sizeof(dir), "%.*s", (int)n, p);
		if (n && (size_t)snprintf(out, outlen, "%s/%s", dir, name) <
				 outlen &&
		    is_elf64(out))
			return 1;
		p = e ? e + 1 : NULL;
	}
	return 0;
}

/* The directories of /etc/ld.so.conf and its includes, ':'-joined. */
static void ldconf_dirs(const char *conf, char *out, size_t outlen, int depth)
{
	char line[PATH_MAX];
	FILE *f = fopen(conf, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " \t");

		s[strcspn(s, "#\r\n")] = 0;
		for (size_t n = strlen(s); n && (s[n - 1] == ' ' || s[n - 1] == '\t');)
			s[--n] = 0;
		if (!*s)
			continue;
		if (!strncmp(s, "include", 7) && (s[7] == ' ' || s[7] == '\t')) {
			glob_t g;

			s += 8 + strspn(s + 8, " \t");
			if (depth < 4 && !glob(s, 0, NULL, &g)) {
				for (size_t i = 0; i < g.gl_pathc; i++)
					ldconf_dirs(g.gl_pathv[i], out, outlen,
						    depth + 1);
				globfree(&g);
			}
			continue;
		}
		if (strlen(out) + strlen(s) + 2 < outlen) {
			if (*out)
				strcat(out, ":");
			strcat(out, s);
		}
	}
	fclose(f);
}

/* The objects path needs (DT_NEEDED), found through its DT_RPATH and
 * DT_RUNPATH as the loader finds them, added to l. */
static int each_needed(const char *path, const char *sysdirs,
		       struct strace_objlist *l)
{
	char origin[PATH_MAX], found[PATH_MAX];
	const char *rpath = NULL, *runpath = NULL, *env;
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd, err = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	elf_version(EV_CURRENT);
	if (!(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL))) {
		close(fd);
		return 0;
	}
	snprintf(origin, sizeof(origin), "%s", path);
	*strrchr(origin, '/') = 0; /* canonical: it has one */
	env = getenv("LD_LIBRARY_PATH");
	for (int pass = 0; pass < 2 && err >= 0; pass++) {
		scn = NULL;
		while (err >= 0 && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			GElf_Dyn dyn;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC ||
			    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
				continue;
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize &&
					   gelf_getdyn(d, (int)i, &dyn) &&
					   err >= 0;
			     i++) {
				const char *s = elf_strptr(elf, sh.sh_link,
							   dyn.d_un.d_val);

				if (!s)
					continue;
				if (pass == 0) { /* the search paths first */
					if (dyn.d_tag == DT_RPATH)
						rpath = s;
					else if (dyn.d_tag == DT_RUNPATH)
						runpath = s;
					continue;
				}
				if (dyn.d_tag != DT_NEEDED)
					continue;
				if (strchr(s, '/')) {
					err = objlist_add(l, s);
					continue;
				}
				/* the loader's order (ld.so(8)) */
				if ((!runpath && rpath &&
				     search_dirs(rpath, origin, s, found,
						 sizeof(found))) ||
				    search_dirs(env, origin, s, found,
						sizeof(found)) ||
				    search_dirs(runpath, origin, s, found,
						sizeof(found)) ||
				    search_dirs(sysdirs, origin, s, found,
						sizeof(found)))
					err = objlist_add(l, found);
			}
		}
	}
	elf_end(elf);
	close(fd);
	return err;
}

int strace_objlist_cmd(struct strace_objlist *l, const char *argv0)
{
	char exe[PATH_MAX], sysdirs[8192] = "";
	const char *path = getenv("PATH");
	int err;

	if (strchr(argv0, '/')) {
		snprintf(exe, sizeof(exe), "%s", argv0);
	} else if (!search_dirs(path ? path : "/usr/local/bin:/usr/bin:/bin",
				"", argv0, exe, sizeof(exe))) {
		return -ENOENT;
	}
	if (!is_elf64(exe))
		return -ENOENT;
	if ((err = objlist_add(l, exe)) < 0)
		return err;
	ldconf_dirs("/etc/ld.so.conf", sysdirs, sizeof(sysdirs), 0);
	strncat(sysdirs, ":/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:"
			 "/lib64:/usr/lib64:/lib:/usr/lib",
		sizeof(sysdirs) - strlen(sysdirs) - 1);
	/* breadth first: each object's needs, as the list grows */
	for (size_t i = 0; i < l->n; i++)
		if ((err = each_needed(l->v[i], sysdirs, l)) < 0)
			return err;
	return 0;
}

/* ---------------- file offsets and objdump's addresses ---------------- */

/* An object's PT_LOAD segments: file offsets and objdump's addresses. */
#define MAX_SEGS 32
struct segs {
	size_t n;
	struct seg {
		uint64_t off, vaddr, filesz;
		int exec;
	} v[MAX_SEGS];
};

/* The segments of the ELF file at path (none if it is no ELF file). */
static void segs_load(const char *path, struct segs *sg)
{
	size_t n = 0;
	int fd;
	Elf *elf;

	sg->n = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && !elf_getphdrnum(elf, &n)) {
		for (size_t i = 0; i < n && sg->n < MAX_SEGS; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) ||
			    ph.p_type != PT_LOAD)
				continue;
			sg->v[sg->n++] = (struct seg){ph.p_offset, ph.p_vaddr,
						      ph.p_filesz,
						      !!(ph.p_flags & PF_X)};
		}
	}
	elf_end(elf);
	close(fd);
}

/* in through the segment that holds it: a vaddr (of an executable
 * segment: an address to probe must be code) to a file offset (to_off),
 * or a file offset to a vaddr. Returns 0, or -ENOENT. */
static int seg_convert(const struct segs *sg, uint64_t in, int to_off,
		       uint64_t *out)
{
	for (size_t i = 0; i < sg->n; i++) {
		const struct seg *g = &sg->v[i];

		if (to_off && g->exec && in >= g->vaddr &&
		    in < g->vaddr + g->filesz) {
			*out = in - g->vaddr + g->off;
			return 0;
		}
		if (!to_off && in >= g->off && in < g->off + g->filesz) {
			*out = in - g->off + g->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/* seg_convert() in the file at path. */
static int convert(const char *path, uint64_t in, int to_off, uint64_t *out)
{
	struct segs sg;

	segs_load(path, &sg);
	return seg_convert(&sg, in, to_off, out);
}

/* ---------------- symbols ---------------- */

/* The functions of one object, with file offsets as addresses. */
static int object_image(const char *path, struct strace_image **img)
{
	struct strace_image_opts io = {.size = sizeof(io),
				       .plt_style = STRACE_PLT_PLAIN};
	struct stat st;
	int err;

	if (stat(path, &st) < 0)
		return -errno;
	if (!st.st_size)
		return -ENOENT;
	if ((err = strace_image_new(&io, img)) < 0)
		return err;
	if ((err = strace_image_add_file(*img, 0, (uint64_t)st.st_size, 0,
					 path)) < 0) {
		strace_image_free(*img);
		*img = NULL;
	}
	return err;
}

/* Whether a symbol (its image's name, aliases) is called want. */
static int sym_is(struct strace_image *img, const struct strace_symbol *s,
		  const char *want)
{
	const char *al[16];
	size_t n, wl = strlen(want);

	if (!strcmp(s->name, want))
		return 1;
	/* a demangled name without its parameters */
	if (!strncmp(s->name, want, wl) && s->name[wl] == '(')
		return 1;
	n = strace_image_aliases(img, s->start, al, 16);
	for (size_t i = 0; i < n && i < 16; i++)
		if (!strcmp(al[i], want))
			return 1;
	return 0;
}

struct find {
	struct strace_image *img;
	const char *want;
	uint64_t off[4], size;
	const char *name;
	size_t n;
};

static int on_find(void *arg, const struct strace_symbol *s, uint64_t off)
{
	struct find *f = arg;

	if (!sym_is(f->img, s, f->want))
		return 0;
	for (size_t i = 0; i < f->n && i < 4; i++)
		if (f->off[i] == off)
			return 0; /* an alias of one already found */
	if (f->n < 4)
		f->off[f->n] = off;
	if (!f->n++) {
		f->size = s->size;
		f->name = s->name;
	}
	return 0;
}

/* obj names o: its path, or its file name */
static int obj_is(const char *o, const char *obj)
{
	const char *base = strrchr(o, '/');

	if (!strcmp(o, obj) || (base && !strcmp(base + 1, obj)))
		return 1;
	if (strchr(obj, '/')) {
		char real[PATH_MAX];
		return realpath(obj, real) && !strcmp(real, o);
	}
	return 0;
}

/* The spec's parts. */
struct spec {
	char sym[256], obj[PATH_MAX];
	uint64_t addr, add;
	int is_addr, ret;
};

static int parse_num(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return *end || errno ? -1 : 0;
}

static int parse_spec(const char *spec, const struct strace_objlist *objs,
		      struct spec *p, char *err, size_t errlen)
{
	char s[PATH_MAX + 256], *at, *plus;
	size_t n = strlen(spec);

	memset(p, 0, sizeof(*p));
	if (!n || n >= sizeof(s) - 1) {
		snprintf(err, errlen, "'%s': %s", spec,
			 n ? "too long" : "empty: name a function or 0xADDR");
		return -STRACE_E_BADARG;
	}
	memcpy(s, spec, n + 1);
	if (n > 4 && !strcmp(s + n - 4, ":ret")) {
		p->ret = 1;
		s[n - 4] = 0;
	}
	/* @OBJ: the last '@' when what follows names an object (a symbol
	 * may carry a version, parse@@V1) */
	if ((at = strrchr(s, '@')) && at > s && at[-1] != '@') {
		int names = strchr(at + 1, '/') || strstr(at + 1, ".so");

		for (size_t i = 0; i < objs->n && !names; i++)
			names = obj_is(objs->v[i], at + 1);
		if (names) {
			snprintf(p->obj, sizeof(p->obj), "%s", at + 1);
			*at = 0;
		}
	}
	if (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2)) {
		if (parse_num(s, &p->addr) < 0) {
			snprintf(err, errlen, "'%s': not an address (0x and "
					      "hex digits)", spec);
			return -STRACE_E_BADARG;
		}
		p->is_addr = 1;
	} else {
		if ((plus = strrchr(s, '+')) && plus > s &&
		    !parse_num(plus + 1, &p->add))
			*plus = 0;
		size_t len = strlen(s);

		if (len >= sizeof(p->sym)) {
			snprintf(err, errlen, "'%s': the name is too long", spec);
			return -STRACE_E_BADARG;
		}
		memcpy(p->sym, s, len + 1);
	}
	if (p->ret && (p->is_addr || p->add)) {
		snprintf(err, errlen, "'%s': ':ret' probes a function's "
				      "return, so it takes the function's name "
				      "alone (no +OFF, no address)", spec);
		return -STRACE_E_BADARG;
	}
	return 0;
}

/* A run-time address of process pid: its object and file offset. */
static int from_maps(const char *procfs, pid_t pid, uint64_t addr,
		     struct strace_probe *out)
{
	char path[512], line[4608];
	struct strace_maps_line ml;
	FILE *f;
	int rc = -ENOENT;

	snprintf(path, sizeof(path), "%s/%d/maps", procfs ? procfs : "/proc",
		 (int)pid);
	if (!(f = fopen(path, "re")))
		return -STRACE_E_NOPID;
	while (rc && fgets(line, sizeof(line), f)) {
		if (strace_maps_parse(line, &ml) || addr < ml.start ||
		    addr >= ml.end || ml.name[0] != '/' || ml.perms[2] != 'x')
			continue;
		snprintf(out->path, sizeof(out->path), "%s", ml.name);
		out->off = addr - ml.start + ml.pgoff;
		rc = 0;
	}
	fclose(f);
	return rc;
}

static void objects_named(const struct strace_objlist *objs, char *buf,
			  size_t len)
{
	size_t at = 0;

	buf[0] = 0;
	for (size_t i = 0; i < objs->n && at < len; i++) {
		const char *b = strrchr(objs->v[i], '/');

		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "",
				       b ? b + 1 : objs->v[i]);
	}
}

static int resolve_addr(const struct spec *p, const char *spec,
			const struct strace_objlist *objs, const char *procfs,
			pid_t pid, struct strace_probe *out, char *err,
			size_t errlen)
{
	const char *obj = NULL;

	if (p->obj[0]) {
		for (size_t i = 0; i < objs->n && !obj; i++)
			if (obj_is(objs->v[i], p->obj))
				obj = objs->v[i];
		if (!obj)
			obj = p->obj; /* a path the process does not map yet */
	} else if (pid > 0) {
		if (from_maps(procfs, pid, p->addr, out) < 0) {
			snprintf(err, errlen, "'%s': process %d maps no file's "
					      "code at that address (see "
					      "/proc/%d/maps)",
				 spec, (int)pid, (int)pid);
			return -STRACE_E_BADARG;
		}
		convert(out->path, out->off, 0, &out->vaddr);
		return 0;
	} else if (objs->n) {
		obj = objs->v[0];
	}
	if (!obj || convert(obj, p->addr, 1, &out->off) < 0) {
		snprintf(err, errlen, "'%s': no code of %s is at that address "
				      "(give it as objdump -d prints it)",
			 spec, obj ? obj : "the program");
		return -STRACE_E_BADARG;
	}
	if (!realpath(obj, out->path))
		snprintf(out->path, sizeof(out->path), "%s", obj);
	out->vaddr = p->addr;
	return 0;
}

/* SYM of spec in the object at path: 1 and *out, 0 (not there), or
 * -STRACE_E_BADARG (ambiguous, past the end: err says). */
static int find_in(const char *path, const struct spec *p, const char *spec,
		   struct strace_probe *out, char *err, size_t errlen)
{
	struct find f = {NULL, p->sym, {0}, 0, NULL, 0};
	int rc = 0;

	if (object_image(path, &f.img) < 0)
		return 0;
	strace_image_each_symbol(f.img, 0, on_find, &f);
	if (f.n > 1) {
		uint64_t va[2] = {0};

		for (size_t k = 0; k < 2; k++)
			convert(path, f.off[k], 0, &va[k]);
		snprintf(err, errlen,
			 "'%s': %zu functions of %s are called %s (at 0x%llx, "
			 "0x%llx%s): pick one by address, 0xADDR@%s",
			 spec, f.n, path, p->sym, (unsigned long long)va[0],
			 (unsigned long long)va[1], f.n > 2 ? ", ..." : "",
			 path);
		rc = -STRACE_E_BADARG;
	} else if (f.n == 1 && f.size && p->add >= f.size) {
		snprintf(err, errlen,
			 "'%s': %s is %llu bytes long; +0x%llx is past its end",
			 spec, f.name, (unsigned long long)f.size,
			 (unsigned long long)p->add);
		rc = -STRACE_E_BADARG;
	} else if (f.n == 1) {
		if (!realpath(path, out->path))
			snprintf(out->path, sizeof(out->path), "%s", path);
		snprintf(out->name, sizeof(out->name), "%s", f.name);
		out->off = f.off[0] + p->add;
		out->size = f.size;
		convert(out->path, out->off, 0, &out->vaddr);
		rc = 1;
	}
	strace_image_free(f.img);
	return rc;
}

int strace_probe_resolve(const char *spec, const struct strace_objlist *objs,
			 const char *procfs_root, pid_t pid,
			 struct strace_probe *out, char *err, size_t errlen)
{
	char list[1024];
	struct spec p;
	int rc, named = 0;

	memset(out, 0, sizeof(*out));
	if ((rc = parse_spec(spec, objs, &p, err, errlen)) < 0)
		return rc;
	snprintf(out->spec, sizeof(out->spec), "%s", spec);
	out->ret = p.ret;
	if (p.is_addr)
		return resolve_addr(&p, spec, objs, procfs_root, pid, out, err,
				    errlen);
	for (size_t i = 0; i < objs->n; i++) {
		if (p.obj[0] && !obj_is(objs->v[i], p.obj))
			continue;
		named = 1;
		if ((rc = find_in(objs->v[i], &p, spec, out, err, errlen)))
			return rc < 0 ? rc : 0;
	}
	/* a path the program does not load (yet: dlopen) */
	if (!named && strchr(p.obj, '/')) {
		if (!is_elf64(p.obj)) {
			snprintf(err, errlen, "'%s': %s is not a 64-bit x86 "
					      "ELF file", spec, p.obj);
			return -STRACE_E_BADARG;
		}
		named = 1;
		if ((rc = find_in(p.obj, &p, spec, out, err, errlen)))
			return rc < 0 ? rc : 0;
	}
	objects_named(objs, list, sizeof(list));
	if (p.obj[0] && !named)
		snprintf(err, errlen, "'%s': the program does not load %s (it "
				      "loads %s)", spec, p.obj, list);
	else
		snprintf(err, errlen,
			 "'%s': no function called %s in %s (--list-symbols "
			 "REGEX lists the functions there)",
			 spec, p.sym, p.obj[0] ? p.obj : list);
	return -STRACE_E_BADARG;
}

struct listing {
	regex_t *re;
	const char *obj;
	struct segs sg; /* obj's, read once for all its symbols */
	strace_probe_list_fn fn;
	void *arg;
};

static int on_list(void *arg, const struct strace_symbol *s, uint64_t off)
{
	struct listing *l = arg;
	struct strace_symbol sym = *s;
	uint64_t va = 0;

	if (l->re && regexec(l->re, s->name, 0, NULL, 0))
		return 0;
	sym.start = off;
	sym.dso = l->obj;
	seg_convert(&l->sg, off, 0, &va);
	return l->fn(l->arg, l->obj, &sym, va);
}

int strace_probe_list(const struct strace_objlist *objs, const char *re,
		      strace_probe_list_fn fn, void *arg, char *err,
		      size_t errlen)
{
	regex_t rx;
	struct listing l = {.fn = fn, .arg = arg};
	int rc = 0;

	if (re && *re) {
		int e = regcomp(&rx, re, REG_EXTENDED | REG_NOSUB);

		if (e) {
			char why[256];

			regerror(e, &rx, why, sizeof(why));
			snprintf(err, errlen, "'%s' is not a regular expression: "
					      "%s", re, why);
			return -STRACE_E_BADARG;
		}
		l.re = &rx;
	}
	for (size_t i = 0; i < objs->n && !rc; i++) {
		struct strace_image *img;

		if (object_image(objs->v[i], &img) < 0)
			continue;
		l.obj = objs->v[i];
		segs_load(l.obj, &l.sg);
		rc = strace_image_each_symbol(img, 0, on_list, &l);
		strace_image_free(img);
	}
	if (l.re)
		regfree(l.re);
	return rc;
}

/* ---------------- the events ---------------- */

int strace_uprobe_pmu_load(const char *sysfs_root, struct strace_uprobe_pmu *u)
{
	char path[512];
	FILE *f;
	unsigned bit;
	int ok;

	memset(u, 0, sizeof(*u));
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/uprobe/type",
		 sysfs_root ? sysfs_root : "/sys");
	if (!(f = fopen(path, "re")))
		return -ENOENT;
	ok = fscanf(f, "%u", &u->type) == 1;
	fclose(f);
	if (!ok)
		return -ENOENT;
	snprintf(path, sizeof(path),
		 "%s/bus/event_source/devices/uprobe/format/retprobe",
		 sysfs_root ? sysfs_root : "/sys");
	/* "config:0" on every kernel that has the PMU */
	u->retprobe = 1;
	if ((f = fopen(path, "re"))) {
		if (fscanf(f, "config:%u", &bit) == 1 && bit < 64)
			u->retprobe = 1ull << bit;
		fclose(f);
	}
	return 0;
}

static void sampling(struct perf_event_attr *a)
{
	a->size = sizeof(*a);
	a->sample_period = 1; /* every hit */
	a->wakeup_events = 1; /* ... wakes the poll */
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

void strace_probe_uprobe_attr(const struct strace_uprobe_pmu *u,
			      const struct strace_probe *p,
			      struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = u->type;
	a->config = p->ret ? u->retprobe : 0;
	a->config1 = (uint64_t)(uintptr_t)p->path; /* uprobe_path */
	a->config2 = p->off;                        /* probe_offset */
	sampling(a);
}

void strace_probe_bp_attr(uint64_t addr, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_BREAKPOINT;
	a->bp_type = HW_BREAKPOINT_X;
	a->bp_addr = addr;
	a->bp_len = sizeof(long); /* what the kernel wants for X */
	sampling(a);
}
