/* SPDX-License-Identifier: MIT */
/*
 * decoder/symbols.c - an object's function symbols, as perf reads them
 * (tools/perf/util/symbol-elf.c, symbol.c): .symtab if present else
 * .dynsym, or a separate debug file's; STT_FUNC/STT_GNU_IFUNC and
 * visible STT_NOTYPE labels in text sections; name@plt entries
 * synthesized for the PLT sections; aliases resolved like
 * choose_best_symbol() (perfsym.c); zero sizes extended to the next
 * symbol. Kept per object by file offset, as perf keeps them, so one
 * sorted table serves every mapping; read once, from the persistent
 * cache (image_cache.c) when it has them.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoder/image.h"
#include "decoder/perfsym.h"
#include "strace/internal/grow.h"

/* --- symbols ------------------------------------------------------------ */


struct symvec {
	struct sym *v;
	size_t n, cap;
};

static int symvec_push(struct symvec *sv, uint64_t start, uint64_t size,
		       const char *name, int bind, int type)
{
	if (sv->n == sv->cap) {
		struct sym *nv = strace_grow(sv->v, &sv->cap, sizeof(*nv), 1024);
		if (!nv)
			return -ENOMEM;
		sv->v = nv;
	}
	sv->v[sv->n] = (struct sym){.start = start,
				    .end = start + size,
				    .name = name,
				    .bind = (uint8_t)bind,
				    .type = (uint8_t)type,
				    .order = (uint32_t)sv->n};
	sv->n++;
	return 0;
}

static int symvec_push_pool(struct symvec *sv, struct object *o,
			    uint64_t start, uint64_t size, const char *name)
{
	long off = strace_dec_strpool_add(&o->pool, name);

	if (off < 0 || symvec_push(sv, start, size, NULL, STB_GLOBAL,
				   STT_FUNC) < 0)
		return -ENOMEM;
	sv->v[sv->n - 1].pooled = 1;
	sv->v[sv->n - 1].pool_off = (size_t)off;
	return 0;
}


static int vaddr_to_off(Elf *elf, uint64_t vaddr, uint64_t *off);

/*
 * Function symbols of symscn (in elf, which may be a separate debug file),
 * by file offset of the run-time file rt, through rt's PT_LOAD headers as
 * perf 6.1 does. Names from a debug file are copied (copy_names).
 */
static int read_symtab(struct object *o, Elf *elf, size_t shstrndx,
		       Elf_Scn *symscn, struct symvec *sv, Elf *rt,
		       int copy_names, int perf61, int no_demangle)
{
	int plain = o->plt_style == STRACE_PLT_PLAIN;
	static _Thread_local char vbuf[1024];
	GElf_Shdr symshdr;
	Elf_Data *data;
	size_t n;
	static _Thread_local char dbuf[4096];
	int copy;

	if (!gelf_getshdr(symscn, &symshdr) || !symshdr.sh_entsize)
		return 0;
	data = elf_getdata(symscn, NULL);
	if (!data)
		return 0;
	n = symshdr.sh_size / symshdr.sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Shdr shdr;
		Elf_Scn *sec;
		const char *name, *secname, *raw;
		int type, vis, old_ver, must_copy = copy_names;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		vis = GELF_ST_VISIBILITY(sym.st_other);
		if (!sym.st_name || sym.st_shndx == SHN_UNDEF ||
		    sym.st_shndx >= SHN_LORESERVE)
			continue;
		if (type != STT_FUNC && type != STT_GNU_IFUNC &&
		    !(perf61 && type == STT_OBJECT) &&
		    !(type == STT_NOTYPE && vis != STV_HIDDEN &&
		      vis != STV_INTERNAL))
			continue;
		sec = elf_getscn(elf, sym.st_shndx);
		if (!sec || !gelf_getshdr(sec, &shdr))
			continue;
		secname = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (perf61) {
			/* perf 6.1 dso__load_sym(): functions, objects and
			 * labels of allocated sections; labels only in
			 * sections named *text* or *data* */
			if (!(shdr.sh_flags & SHF_ALLOC))
				continue;
			if (type == STT_NOTYPE &&
			    (!secname || (!strstr(secname, "text") &&
					  !strstr(secname, "data"))))
				continue;
		} else {
			if (!(shdr.sh_flags & SHF_EXECINSTR))
				continue;
			if (type == STT_NOTYPE &&
			    (!secname || !strstr(secname, "text")))
				continue;
		}
		name = elf_strptr(elf, symshdr.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		raw = name;
		old_ver = 0;
		if (plain) {
			/* memcpy@@GLIBC_2.14 is memcpy, and
			 * cfree@GLIBC_2.2.5 cfree of an older version */
			const char *at = strchr(name, '@');
			if (at && at != name &&
			    (size_t)(at - name) < sizeof(vbuf)) {
				old_ver = at[1] != '@';
				memcpy(vbuf, name, (size_t)(at - name));
				vbuf[at - name] = 0;
				name = vbuf;
				must_copy = 1;
			}
			/* __GI_X is glibc's internal alias of X: where it is
			 * the only name (ld.so's), X is what a person types */
			if (!strncmp(name, "__GI_", 5) && name[5])
				name += 5;
		}
		/* perf stores names demangled (C++, OCaml) */
		if (!no_demangle) {
			const char *d = strace_demangle(name, dbuf, sizeof(dbuf));
			copy = must_copy || d != name;
			name = d;
		} else {
			copy = must_copy;
		}
		/* file offset, as perf keeps user symbols */
		uint64_t off;
		if (vaddr_to_off(rt, sym.st_value, &off))
			off = sym.st_value - shdr.sh_addr + shdr.sh_offset;
		if (symvec_push(sv, off, sym.st_size, copy ? NULL : name,
				GELF_ST_BIND(sym.st_info), type) < 0)
			return -ENOMEM;
		if (copy) {
			long po = strace_dec_strpool_add(&o->pool, name);
			if (po < 0)
				return -ENOMEM;
			sv->v[sv->n - 1].pooled = 1;
			sv->v[sv->n - 1].pool_off = (size_t)po;
		}
		if (plain && strcmp(raw, name)) {
			long ro = strace_dec_strpool_add(&o->pool, raw);
			if (ro < 0)
				return -ENOMEM;
			sv->v[sv->n - 1].raw_off = (size_t)ro + 1;
		}
		if (plain) {
			uint64_t end;

			sv->v[sv->n - 1].old_ver = (uint8_t)old_ver;
			if (shdr.sh_size &&
			    !vaddr_to_off(rt, shdr.sh_addr + shdr.sh_size - 1,
					  &end))
				sv->v[sv->n - 1].sec_end = end + 1;
		}
	}
	return 0;
}

struct rel {
	uint64_t offset;
	uint32_t sym;
	uint32_t type;
	uint64_t addend;
};

static int cmp_rel(const void *a, const void *b)
{
	const struct rel *x = a, *y = b;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Entry displacement of a .plt.got / .plt.sec entry: endbr64, bnd, jmp *. */
static uint32_t plt_entry_got(const uint8_t *p, size_t avail)
{
	size_t n = 0;
	uint32_t disp;

	if (avail >= 4 && !memcmp(p, "\xf3\x0f\x1e\xfa", 4))
		n += 4;
	if (n < avail && p[n] == 0xf2)
		n++;
	if (n + 6 <= avail && p[n] == 0xff && p[n + 1] == 0x25) {
		memcpy(&disp, p + n + 2, 4);
		return (uint32_t)(n + 6) + disp;
	}
	return 0;
}

static int better_plain(const struct sym *a, const char *na,
			const struct sym *b, const char *nb);

/* The name of s (a pooled one only until the pool grows again). */
static const char *sym_name(const struct object *o, const struct sym *s)
{
	return s->pooled ? o->pool.v + s->pool_off : s->name;
}

/* The IFUNC symbol at off: perf's first one, or (STRACE_PLT_PLAIN) the
 * one a person types, of its aliases. */
static const char *ifunc_name(const struct object *o, struct symvec *sv,
			      uint64_t off)
{
	const struct sym *best = NULL;

	for (size_t i = 0; i < sv->n; i++) {
		const struct sym *y = &sv->v[i];

		if (y->start != off || y->type != STT_GNU_IFUNC)
			continue;
		if (o->plt_style != STRACE_PLT_PLAIN) {
			if (!y->pooled)
				return y->name;
			continue;
		}
		if (!best ||
		    better_plain(best, sym_name(o, best), y, sym_name(o, y)))
			best = y;
	}
	return best ? sym_name(o, best) : NULL;
}

/* Offset of a virtual address in the file (through PT_LOAD headers). */
static int vaddr_to_off(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -1;
}

/* The .plt.got entries (STRACE_PLT_PERF62, STRACE_PLT_PLAIN), each named
 * through .rela.dyn by the GOT slot its jump reads. Returns 0, -ENOMEM. */
/* demangled names, before they get their @plt */
static _Thread_local char plt_dbuf[1000];

static int add_plt_got(struct object *o, Elf *elf, size_t shstrndx,
		       struct symvec *sv)
{
	GElf_Shdr gotsh, rdsh, dsh;
	Elf_Scn *scn, *rd;
	char buf[1024];
	size_t i;

	scn = strace_dec_section_by_name(elf, shstrndx, ".plt.got", &gotsh, NULL);
	rd = strace_dec_section_by_name(elf, shstrndx, ".rela.dyn", &rdsh, NULL);
	if (scn && gotsh.sh_entsize && gotsh.sh_type == SHT_PROGBITS &&
	    gotsh.sh_offset + gotsh.sh_size <= o->size) {
		struct rel *rd_rels = NULL;
		size_t nrd = 0;
		Elf_Data *rdd = rd ? elf_getdata(rd, NULL) : NULL;
		Elf_Scn *ds = rd && rdsh.sh_link ? elf_getscn(elf, rdsh.sh_link)
						 : NULL;
		Elf_Data *dd = ds && gelf_getshdr(ds, &dsh)
				       ? elf_getdata(ds, NULL)
				       : NULL;

		if (rdd && dd && rdsh.sh_entsize) {
			size_t n = rdsh.sh_size / rdsh.sh_entsize;
			rd_rels = calloc(n ? n : 1, sizeof(*rd_rels));
			if (!rd_rels)
				return -ENOMEM;
			for (i = 0; i < n; i++) {
				GElf_Rela ra;
				if (!gelf_getrela(rdd, (int)i, &ra))
					break;
				if (!GELF_R_SYM(ra.r_info))
					continue;
				rd_rels[nrd].offset = ra.r_offset;
				rd_rels[nrd].sym =
					(uint32_t)GELF_R_SYM(ra.r_info);
				nrd++;
			}
			qsort(rd_rels, nrd, sizeof(*rd_rels), cmp_rel);
		}
		for (i = 0; i < gotsh.sh_size; i += gotsh.sh_entsize) {
			const uint8_t *p = o->data + gotsh.sh_offset + i;
			uint32_t disp = plt_entry_got(p, gotsh.sh_size - i);
			const char *nm = NULL;
			if (disp && rd_rels) {
				struct rel key = {.offset = gotsh.sh_addr + i +
							    disp};
				struct rel *r =
					bsearch(&key, rd_rels, nrd,
						sizeof(*rd_rels), cmp_rel);
				GElf_Sym s;
				if (r && gelf_getsym(dd, (int)r->sym, &s))
					nm = elf_strptr(elf, dsh.sh_link,
							s.st_name);
			}
			if (nm && *nm)
				snprintf(buf, sizeof(buf), "%s@plt",
					 o->no_demangle
						 ? nm
						 : strace_demangle(
							   nm, plt_dbuf,
							   sizeof(plt_dbuf)));
			else
				snprintf(buf, sizeof(buf), "offset_%#llx@plt",
					 (unsigned long long)(gotsh.sh_offset +
							      i));
			if (symvec_push_pool(sv, o, gotsh.sh_offset + i,
					     gotsh.sh_entsize, buf)) {
				free(rd_rels);
				return -ENOMEM;
			}
		}
		free(rd_rels);
	}
	return 0;
}

static int add_plt_syms(struct object *o, Elf *elf, size_t shstrndx,
			size_t symtab_idx, size_t dynsym_idx, struct symvec *sv)
{
	GElf_Shdr plt, pltsec, relsh, symsh;
	Elf_Scn *relscn, *symscn;
	Elf_Data *reld, *symd;
	struct rel *rels = NULL;
	uint64_t entry, header, off;
	size_t nrel, i;
	int modern = o->plt_style == STRACE_PLT_PERF62 ||
		     o->plt_style == STRACE_PLT_PLAIN;
	int plain = o->plt_style == STRACE_PLT_PLAIN;
	int lazy = 1, have_sec = 0;
	char buf[1024];
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64)
		return 0;
	if (!strace_dec_section_by_name(elf, shstrndx, ".plt", &plt, NULL))
		return 0;
	entry = plt.sh_entsize;
	if (entry != 8 && entry != 16)
		entry = plt.sh_addralign == 8 ? 8 : 16;
	header = entry;

	if (modern) {
		if (add_plt_got(o, elf, shstrndx, sv) < 0)
			return -ENOMEM;
		if (strace_dec_section_by_name(elf, shstrndx, ".plt.sec", &pltsec, NULL)) {
			have_sec = 1;
			lazy = 0;
			entry = pltsec.sh_entsize;
			if (entry != 8 && entry != 16)
				entry = pltsec.sh_addralign == 8 ? 8 : 16;
		}
	}

	relscn = strace_dec_section_by_name(elf, shstrndx, ".rela.plt", &relsh, NULL);
	if (!relscn || relsh.sh_type != SHT_RELA || !relsh.sh_link ||
	    !relsh.sh_entsize)
		return 0;
	/* perf 6.1 names PLT entries only through .dynsym; a static
	 * executable's IRELATIVE .plt (linked to .symtab) is 6.2's */
	if (!modern && (!dynsym_idx || relsh.sh_link != dynsym_idx))
		return 0;
	if (relsh.sh_link != dynsym_idx && relsh.sh_link != symtab_idx)
		return 0;
	symscn = elf_getscn(elf, relsh.sh_link);
	if (!symscn || !gelf_getshdr(symscn, &symsh))
		return 0;
	reld = elf_getdata(relscn, NULL);
	symd = elf_getdata(symscn, NULL);
	if (!reld || !symd)
		return 0;
	nrel = relsh.sh_size / relsh.sh_entsize;
	rels = calloc(nrel ? nrel : 1, sizeof(*rels));
	if (!rels)
		return -ENOMEM;
	for (i = 0; i < nrel; i++) {
		GElf_Rela ra;
		if (!gelf_getrela(reld, (int)i, &ra))
			break;
		rels[i].offset = ra.r_offset;
		rels[i].sym = (uint32_t)GELF_R_SYM(ra.r_info);
		rels[i].type = (uint32_t)GELF_R_TYPE(ra.r_info);
		rels[i].addend = (uint64_t)ra.r_addend;
	}
	nrel = i;

	if (have_sec) {
		off = pltsec.sh_offset;
	} else {
		off = plt.sh_offset;
		if (modern && nrel * entry == plt.sh_size)
			lazy = 0; /* no header */
		else
			off += header;
	}
	if (modern) {
		/* the lazy-binding header (with .plt.sec: all of .plt, its
		 * entries' lazy halves) */
		if (have_sec || lazy)
			if (symvec_push_pool(sv, o, plt.sh_offset,
					     have_sec ? plt.sh_size : header,
					     plain ? "[plt0]" : ".plt"))
				goto nomem;
		qsort(rels, nrel, sizeof(*rels), cmp_rel);
	}
	for (i = 0; i < nrel; i++) {
		GElf_Sym s;
		const char *nm = "";

		if (gelf_getsym(symd, (int)rels[i].sym, &s))
			nm = elf_strptr(elf, symsh.sh_link, s.st_name);
		if (!nm)
			nm = "";
		if (*nm || !modern) {
			snprintf(buf, sizeof(buf), "%s@plt",
				 o->no_demangle
					 ? nm
					 : strace_demangle(nm, plt_dbuf,
							   sizeof(plt_dbuf)));
		} else {
			const char *ifn = NULL;
			uint64_t ioff;
			if (rels[i].type == R_X86_64_IRELATIVE &&
			    !vaddr_to_off(elf, rels[i].addend, &ioff))
				ifn = ifunc_name(o, sv, ioff);
			if (ifn)
				snprintf(buf, sizeof(buf), "%s@plt", ifn);
			else if (plain && rels[i].type == R_X86_64_IRELATIVE)
				/* objdump's name of it */
				snprintf(buf, sizeof(buf), "*ABS*+%#llx@plt",
					 (unsigned long long)rels[i].addend);
			else
				snprintf(buf, sizeof(buf), "offset_%#llx@plt",
					 (unsigned long long)off);
		}
		if (symvec_push_pool(sv, o, off, entry, buf))
			goto nomem;
		off += entry;
	}
	free(rels);
	return 0;
nomem:
	free(rels);
	return -ENOMEM;
}

/*
 * STRACE_PLT_PLAIN: 1 if b (named nb) is the name a person types rather
 * than a (na), of two symbols at one address: an exported one (global,
 * weak) before a local one (glibc's __GI_ aliases are local), the
 * default version before an older one, a function before a label, the
 * fewest leading underscores (puts, not _IO_puts; write, not __write;
 * __GI_ was taken off the name as it was read),
 * one with a size, the shortest, the first read.
 */
static int better_plain(const struct sym *a, const char *na,
			const struct sym *b, const char *nb)
{
	int ea = a->bind != STB_LOCAL, eb = b->bind != STB_LOCAL;
	int fa = a->type != STT_NOTYPE, fb = b->type != STT_NOTYPE;
	int ua = strace_dec_prefix_underscores(na);
	int ub = strace_dec_prefix_underscores(nb);
	size_t la = strlen(na), lb = strlen(nb);

	if (ea != eb)
		return eb;
	if (a->old_ver != b->old_ver)
		return a->old_ver;
	if (fa != fb)
		return fb;
	if (ua != ub)
		return ub < ua;
	if ((a->end > a->start) != (b->end > b->start))
		return b->end > b->start;
	if (la != lb)
		return lb < la;
	return b->order < a->order;
}

/* perf's choose_best_symbol() on our entries: 1 if b beats a. */
static int better(const struct sym *a, const struct sym *b)
{
	return strace_dec_perf_choose_best(a->end - a->start, a->bind,
					   a->name, b->end - b->start, b->bind,
					   b->name);
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* 1 if name is among the n names v[] */
static int has_name(const struct alias *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return 1;
	return 0;
}

/* The names of the k symbols g[] at one start other than best's own: the
 * other symbols' and the names as the ELF file has them, best's too, each
 * once, into o->aliases. */
static int add_aliases(struct object *o, const struct sym *g, size_t k,
		       const struct sym *best)
{
	size_t first = o->naliases;

	for (size_t i = 0; i < k; i++) {
		const char *names[2] = {g[i].name, g[i].raw};
		for (size_t j = 0; j < 2; j++) {
			const char *nm = names[j];
			/* (o->aliases may be NULL: NULL + 0 is undefined) */
			if (!nm || !strcmp(nm, best->name) ||
			    (o->aliases &&
			     has_name(o->aliases + first,
				      o->naliases - first, nm)))
				continue;
			if (strace_dec_grow_aliases(o) < 0)
				return -ENOMEM;
			o->aliases[o->naliases++] =
				(struct alias){g[i].start, nm};
		}
	}
	return 0;
}

/* Read o's symbols (once: see ensure_symbols()). */
static void load_symbols(struct object *o)
{
	struct symvec sv = {0};
	size_t shstrndx, symtab_idx = 0, dynsym_idx = 0, i, n, n_elf = 0;
	size_t n_symtab = 0;
	int perf61 = o->plt_style == STRACE_PLT_PERF61;
	int plain = o->plt_style == STRACE_PLT_PLAIN;
	GElf_Shdr sh;
	Elf_Scn *symtab, *dynsym;
	Elf *elf;

	if (o->size < 64 || memcmp(o->data, "\177ELF", 4))
		return;
	strace_dec_bc_ensure(o);
	if (strace_dec_bc_symbols(o) == 0)
		return;
	o->syms_dirty = o->bc_idn != 0;
	elf = elf_memory((char *)(uintptr_t)o->data, o->size);
	if (!elf)
		return;
	if (elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	symtab = strace_dec_section_by_name(elf, shstrndx, ".symtab", &sh, &symtab_idx);
	if (symtab && sh.sh_type != SHT_SYMTAB)
		symtab = NULL, symtab_idx = 0;
	dynsym = strace_dec_section_by_name(elf, shstrndx, ".dynsym", &sh, &dynsym_idx);
	if (dynsym && sh.sh_type != SHT_DYNSYM)
		dynsym = NULL, dynsym_idx = 0;
	/* the debug file the names come from, for the cache file's key:
	 * as it is now, not as it was when the key was made (none: 0) */
	memset(&o->debug_id, 0, sizeof(o->debug_id));
	if (!symtab && !o->no_debuginfo) {
		struct strace_dec_debugfile d = {0};
		if (strace_dec_debug_find(o->path, o->symfs, elf, shstrndx,
					  &d, NULL, 0)) {
			int rc = read_symtab(o, d.elf, d.shstrndx, d.symtab,
					     &sv, elf, 1, perf61,
					     o->no_demangle);
			o->debug_id = d.id;
			strace_dec_debug_close(&d);
			if (rc < 0)
				goto fail;
			/* perf: that file is the symbol source; its .dynsym
			 * is NOBITS in a debug file, so no second pass */
			dynsym = NULL;
			n_symtab = sv.n;
		}
	}
	if (symtab) {
		if (read_symtab(o, elf, shstrndx, symtab, &sv, elf, 0, perf61,
				o->no_demangle) < 0)
			goto fail;
		n_symtab = sv.n;
	}
	/* perf 6.1 loads .dynsym too, in a second pass after .symtab's
	 * fix-ups (their order decides which alias survives) */
	if (dynsym && (perf61 || !symtab))
		if (read_symtab(o, elf, shstrndx, dynsym, &sv, elf, 0, perf61,
				o->no_demangle) < 0)
			goto fail;
	n_elf = sv.n;
	if (add_plt_syms(o, elf, shstrndx, symtab_idx, dynsym_idx, &sv) < 0)
		goto fail;
	/* pool names are tagged offsets: make them pointers now */
	for (i = 0; i < sv.n; i++) {
		if (sv.v[i].pooled)
			sv.v[i].name = o->pool.v + sv.v[i].pool_off;
		if (sv.v[i].raw_off)
			sv.v[i].raw = o->pool.v + sv.v[i].raw_off - 1;
	}
	if (perf61) {
		o->psyms = malloc((sv.n ? sv.n : 1) * sizeof(*o->psyms));
		if (!o->psyms)
			goto fail;
		for (i = 0; i < sv.n; i++)
			o->psyms[i] = (struct perf_sym){sv.v[i].start,
							sv.v[i].end,
							sv.v[i].name,
							sv.v[i].bind, 0};
		o->npsyms = sv.n;
		if (strace_dec_perf61_index(o->psyms, n_symtab, n_elf, sv.n,
					    &o->iv, &o->niv) < 0) {
			free(o->psyms);
			o->psyms = NULL;
			goto fail;
		}
		free(sv.v);
		elf_end(elf);
		return;
	}
	qsort(sv.v, sv.n, sizeof(*sv.v), cmp_sym);
	/* perf's symbols__fixup_duplicate(), or the name a person types
	 * (and the others kept as its aliases) */
	for (i = 0, n = 0; i < sv.n;) {
		size_t best = i, end = i + 1;
		for (; end < sv.n && sv.v[end].start == sv.v[i].start; end++)
			if (plain ? better_plain(&sv.v[best], sv.v[best].name,
						 &sv.v[end], sv.v[end].name)
				  : better(&sv.v[best], &sv.v[end]))
				best = end;
		if (plain && add_aliases(o, sv.v + i, end - i, &sv.v[best]) < 0)
			goto fail;
		sv.v[n++] = sv.v[best];
		i = end;
	}
	/* perf's symbols__fixup_end() (plain: not past the section's end,
	 * where perf's reaches into the next one: _init over .plt) */
	for (i = 0; i + 1 < n; i++)
		if (sv.v[i].end == sv.v[i].start) {
			sv.v[i].end = sv.v[i + 1].start;
			if (plain && sv.v[i].sec_end > sv.v[i].start &&
			    sv.v[i].end > sv.v[i].sec_end)
				sv.v[i].end = sv.v[i].sec_end;
		}
	if (n && sv.v[n - 1].end == sv.v[n - 1].start)
		sv.v[n - 1].end = ((sv.v[n - 1].start + 4095) & ~4095ull) + 4096;
	o->syms = sv.v;
	o->nsyms = n;
	elf_end(elf);
	return;
fail:
	free(sv.v);
out:
	elf_end(elf);
}

/* o's symbols, read once (a file without symbols counts as loaded too) */
static void ensure_symbols(struct object *o)
{
	strace_dec_once(o, &o->syms_loaded, &o->syms_lock, load_symbols);
}

static int symbol_lookup(struct strace_image *img, uint64_t addr,
			 struct strace_symbol *out);


/* Per-thread memo of recent answers: the walker asks about the same
 * indirect-branch targets (PLT slots, callbacks) again and again, and so
 * does a sink that defines symbols. Keyed by image, generation, address. */
#define SYMC 512
static _Thread_local struct symc {
	const struct strace_image *img;
	uint64_t gen, addr;
	struct strace_symbol sym;
	int rc;
} symc[SYMC];

int strace_image_symbol(struct strace_image *img, uint64_t addr,
			struct strace_symbol *out)
{
	uint64_t h = addr * 0x9e3779b97f4a7c15ull;
	struct symc *c = &symc[(h >> 40) & (SYMC - 1)];

	if (likely(c->addr == addr && c->img == img &&
		   c->gen == img->generation)) {
		*out = c->sym;
		return c->rc;
	}
	c->rc = symbol_lookup(img, addr, &c->sym);
	c->img = img;
	c->gen = img->generation;
	c->addr = addr;
	*out = c->sym;
	return c->rc;
}

static int symbol_lookup(struct strace_image *img, uint64_t addr,
			 struct strace_symbol *out)
{
	const struct mapping *m = strace_dec_image_find_map(img, addr);
	struct object *o;
	uint64_t off;
	size_t lo, hi;

	if (!m)
		return -ENOENT;
	o = m->obj;
	ensure_symbols(o);
	off = addr - m->start + m->pgoff;
	if (o->iv) {
		/* perf 6.1's answer: the last point at or before off */
		const struct perf_sym *ps;
		int k;
		lo = 0;
		hi = o->niv;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (o->iv[mid].at <= off)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo)
			return -ENOENT;
		k = o->iv[lo - 1].at == off ? o->iv[lo - 1].point
					    : o->iv[lo - 1].after;
		if (k < 0)
			return -ENOENT;
		if (o->syms_in_file) {
			const struct strace_blockfile_sym *fs = &o->bc.syms[k];
			out->name = o->bc.pool + fs->name;
			out->start = fs->start - m->pgoff + m->start;
			out->size = fs->vis_end - fs->start;
		} else {
			ps = &o->psyms[k];
			out->name = ps->name;
			out->start = ps->start - m->pgoff + m->start;
			out->size = ps->vis_end - ps->start;
		}
		out->dso = o->path;
		return 0;
	}
	/* last symbol with start <= off */
	lo = 0;
	hi = o->nsyms;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (o->syms[mid].start <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	/* symbols may nest (perf's rbtree finds the first whose range holds
	 * off); walk back over the few that start at lower offsets */
	for (size_t i = lo; i-- > 0;) {
		const struct sym *s = &o->syms[i];
		if (off < s->end) {
			out->name = s->name;
			out->dso = o->path;
			out->start = s->start - m->pgoff + m->start;
			out->size = s->end - s->start;
			return 0;
		}
		if (lo - i > 4)
			break;
	}
	return -ENOENT;
}

size_t strace_image_aliases(struct strace_image *img, uint64_t start,
			    const char **out, size_t max)
{
	const struct mapping *m = strace_dec_image_find_map(img, start);
	struct object *o;
	uint64_t off;
	size_t lo = 0, hi, n = 0;

	if (!m)
		return 0;
	o = m->obj;
	ensure_symbols(o);
	off = start - m->start + m->pgoff;
	hi = o->naliases;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->aliases[mid].start < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < o->naliases && o->aliases[lo].start == off; lo++, n++)
		if (n < max)
			out[n] = o->aliases[lo].name;
	return n;
}

int strace_image_each_symbol(struct strace_image *img, uint64_t addr,
			     strace_symbol_fn fn, void *arg)
{
	const struct mapping *m = strace_dec_image_find_map(img, addr);
	struct object *o;

	if (!m)
		return -ENOENT;
	o = m->obj;
	ensure_symbols(o);
	for (size_t i = 0; i < o->nsyms; i++) {
		const struct sym *s = &o->syms[i];
		struct strace_symbol out = {
			s->name, o->path, s->start - m->pgoff + m->start,
			s->end - s->start,
		};
		int r = fn(arg, &out, s->start);

		if (r)
			return r;
	}
	return 0;
}

void strace_dec_image_load_all_symbols(struct strace_image *img)
{
	for (size_t i = 0; i < img->nmaps; i++)
		ensure_symbols(img->maps[i].obj);
}
