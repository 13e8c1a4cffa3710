/* SPDX-License-Identifier: MIT */
/*
 * cli/view/fmt_svg.c - ptrace-read -f svg: a flame graph in one SVG file that a
 * browser opens by itself, with its script inline (nothing is fetched):
 * hovering a frame names it with its time and share, a click zooms into
 * it, a search colours the frames whose names match and says what share
 * of the time they hold (docs/viewing.md).
 *
 * Two pictures of the same frames:
 *   --flame merged (view_svg, the default): the folded stacks of -f folded
 *     (views.c collects them; view_folded_each() hands them over, with
 *     their self time in ns or their calls), merged into a tree: a frame
 *     is as wide as the weight of the stacks through it, the callers at
 *     the bottom, the callees of each frame side by side in the order of
 *     their names. Memory: one node per distinct stack prefix.
 *   --flame time (view_svg_time): every frame where it ran, a box from
 *     its begin to its end, one lane per thread under one time axis, the
 *     outermost frames on top (an icicle); the order of the trace is kept.
 *     A box's depth is the number of boxes of its thread around it,
 *     computed when written (a frame found late, begun at its thread's
 *     first event, then lies around the frames left before it, as
 *     docs/stacks.md has it).
 *
 * Bounded output: a box narrower than view_opts min_width pixels
 * (VIEW_MIN_WIDTH, 0.1, by default) of the FRAMES_W-pixel frame area is
 * left out with everything above it, and counted; the subtitle says how
 * many. A box's callees are never wider than it, so at most FRAMES_W /
 * min_width boxes lie side by side on a row (of a thread): a trace of
 * millions of frames gives a few MB. For --flame time the scale is known
 * only at the end: a frame is kept when it is wide enough at the span
 * seen so far, which only grows, so nothing dropped would have been
 * drawn; the kept boxes are pruned again when their array fills up and
 * at the end. Memory: about twice the boxes drawn.
 *
 * Each box is <g data-x data-w><title>name, time, share</title><rect/>
 * <text>label</text></g>: data-x and data-w are its place and width in
 * the picture's own integers (weight, or ns from the first begin), which
 * the script scales when it zooms. Names are XML text: &, <, >, " are
 * escaped; control characters and bytes that are no UTF-8 become '?'.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "frames.h"
#include "view.h"

#define IMG_W 1200                  /* the image's width, pixels */
#define PAD 10                      /* left and right margins */
#define FRAMES_W (IMG_W - 2 * PAD)  /* the frames' width */
#define ROW 16                      /* a row of boxes (15 + 1 apart) */
#define TOP 66                      /* above the frames: titles, search */
#define BOTTOM 32                   /* below: the details line */
#define LANE_HEAD 20                /* time: a thread's label */
#define LANE_GAP 6                  /* time: between two lanes */
#define CHAR_W 7.3                  /* a 12 px monospace character */
#define PROG "ptrace-read"

/* An interned name: valid UTF-8 without control characters, in pool. */
struct sname {
	uint32_t off, len;
	uint32_t chars; /* code points */
	uint32_t color; /* 0xRRGGBB */
	uint64_t hash;
};

/* label id (view_name_id()) -> name index; name 0: an empty slot */
struct idname {
	uint64_t id;
	uint32_t name; /* index + 1 */
};

/* merged: a stack prefix; node 0 is the root ("all") */
struct node {
	uint64_t w, x;  /* weight of the stacks through it; its offset */
	uint32_t parent, name, depth;
	uint32_t drawn; /* wide enough, and so is its caller */
};

/* time: a frame left, wide enough so far */
struct box {
	uint64_t b, e;  /* begin, end (ns) */
	uint64_t seq;   /* the order frames left: callers after callees */
	uint32_t tid, name, depth;
	uint32_t lane;
};

struct lane {
	uint32_t tid;
	uint32_t idx;   /* its place in the order of tids */
	uint32_t depth; /* the deepest box's depth */
	uint64_t first; /* its first begin */
	size_t from, to; /* its boxes, in boxes[] once sorted */
};

struct svg {
	struct view *v;
	struct out *out;
	int time, calls;
	double minw;
	/* names */
	struct sname *names;
	size_t nnames, namescap;
	char *pool;
	size_t npool, poolcap;
	struct idname *ids; /* open addressing, at most half full */
	size_t nids, idscap;
	uint32_t *byname; /* name hash -> index + 1, open addressing */
	size_t bynamecap;
	/* merged */
	struct node *nodes;
	size_t nnodes, nodecap;
	uint32_t *kids; /* (parent, name) -> node + 1, open addressing */
	size_t kidscap;
	/* time */
	struct box *boxes;
	size_t nboxes, boxcap;
	uint64_t lo, hi, seq;
	uint64_t frames; /* frames left (shown by the filters) */
	/* left out: boxes, and (merged) the weight of the outermost ones */
	uint64_t left, left_w;
	char scratch[FMT_NAME_MAX + 256];
};

/* --- helpers -------------------------------------------------------------- */

/* p grown to hold need items of size (from first), or NULL (p kept). */
static void *grow(void *p, size_t *cap, size_t need, size_t size,
		  size_t first)
{
	size_t c = *cap ? *cap : first;
	void *n;

	if (need <= *cap)
		return p;
	while (c < need)
		c *= 2;
	n = realloc(p, c * size);
	if (n)
		*cap = c;
	return n;
}

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* s[0..n) into d as XML may hold it: the views' one rule for names
 * (view_put_clean(): a '?' for each byte that is not part of a character
 * a terminal shows, which XML then takes too); returns the length, the
 * same n, *chars the characters. */
static size_t clean_name(char *d, const char *s, size_t n, uint32_t *chars)
{
	return (size_t)(view_put_clean(d, s, n, chars) - d);
}

/* XML text of s[0..n) (a cleaned name) at p: at most 6 bytes a byte. */
static char *put_xml(char *p, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '&':
			memcpy(p, "&amp;", 5), p += 5;
			break;
		case '<':
			memcpy(p, "&lt;", 4), p += 4;
			break;
		case '>':
			memcpy(p, "&gt;", 4), p += 4;
			break;
		case '"':
			memcpy(p, "&quot;", 6), p += 6;
			break;
		default:
			*p++ = s[i];
		}
	}
	return p;
}

/* A box's colour, from its name: warm for functions, blue for system
 * calls, grey-brown for what has no symbol ("[dso]+0x...", "[signal]"). */
static uint32_t color_of(const char *s, size_t n, uint64_t h)
{
	unsigned a = (unsigned)(h >> 40 & 0xff), b = (unsigned)(h >> 48 & 0xff),
		 c = (unsigned)(h >> 56);
	unsigned r, g, bl;

	if (n >= 8 && !memcmp(s, "[syscall", 8)) {
		r = 70 + a % 50, g = 140 + b % 60, bl = 205 + c % 45;
	} else if ((n && s[0] == '[') ||
		   (n > 1 && s[0] == '0' && s[1] == 'x')) {
		r = 175 + a % 40, g = 160 + b % 40, bl = 130 + c % 40;
	} else {
		r = 205 + a % 50, g = 70 + b % 160, bl = c % 60;
	}
	return r << 16 | g << 8 | bl;
}

/* "1.234 ms" (or "N ns", "N calls") at p */
static char *put_value(char *p, uint64_t v, int calls)
{
	if (calls)
		return p + sprintf(p, "%llu call%s", (unsigned long long)v,
				   v == 1 ? "" : "s");
	if (v < 1000)
		return p + sprintf(p, "%llu ns", (unsigned long long)v);
	if (v < 1000000)
		return p + sprintf(p, "%.3f us", (double)v / 1e3);
	if (v < 1000000000)
		return p + sprintf(p, "%.3f ms", (double)v / 1e6);
	return p + sprintf(p, "%.3f s", (double)v / 1e9);
}

/* a coordinate with at most 2 decimals, trailing zeros left out */
static char *put_px(char *p, double x)
{
	char *e = p + sprintf(p, "%.2f", x);

	while (e[-1] == '0')
		e--;
	if (e[-1] == '.')
		e--;
	return e;
}

/* --- names ---------------------------------------------------------------- */

/* The index of the name s[0..n) (raw bytes, cleaned here), interned.
 * Returns -ENOMEM. */
static long intern(struct svg *s, const char *str, size_t n)
{
	size_t k, mask;
	uint32_t chars;
	uint64_t h;
	void *q;

	if (!(q = grow(s->pool, &s->poolcap, s->npool + n + 1, 1, 65536)))
		return -ENOMEM;
	s->pool = q;
	n = clean_name(s->pool + s->npool, str, n, &chars);
	h = hash_bytes(s->pool + s->npool, n);
	if (2 * (s->nnames + 1) > s->bynamecap) {
		size_t cap = s->bynamecap ? 2 * s->bynamecap : 1024;
		uint32_t *t = calloc(cap, sizeof(*t));
		if (!t)
			return -ENOMEM;
		for (size_t i = 0; i < s->nnames; i++) {
			k = s->names[i].hash & (cap - 1);
			while (t[k])
				k = (k + 1) & (cap - 1);
			t[k] = (uint32_t)i + 1;
		}
		free(s->byname);
		s->byname = t;
		s->bynamecap = cap;
	}
	mask = s->bynamecap - 1;
	for (k = h & mask; s->byname[k]; k = (k + 1) & mask) {
		const struct sname *e = &s->names[s->byname[k] - 1];
		if (e->hash == h && e->len == n &&
		    !memcmp(s->pool + e->off, s->pool + s->npool, n))
			return (long)s->byname[k] - 1;
	}
	if (!(q = grow(s->names, &s->namescap, s->nnames + 1, sizeof(*s->names),
		       1024)))
		return -ENOMEM;
	s->names = q;
	struct sname *e = &s->names[s->nnames];
	e->off = (uint32_t)s->npool;
	e->len = (uint32_t)n;
	e->chars = chars;
	e->hash = h;
	e->color = color_of(s->pool + s->npool, n, h);
	s->npool += n;
	s->byname[k] = (uint32_t)s->nnames + 1;
	return (long)s->nnames++;
}

/* The index of the name of label id (view_name_id()): two ids of one
 * name (a function defined twice) are one name, as -f folded prints
 * them. Returns -ENOMEM. */
static long name_of(struct svg *s, uint64_t id)
{
	size_t j, mask;
	long idx;

	if (2 * (s->nids + 1) > s->idscap) {
		struct idname *old = s->ids;
		size_t ocap = s->idscap, cap = ocap ? 2 * ocap : 1024;
		struct idname *t = calloc(cap, sizeof(*t));
		if (!t)
			return -ENOMEM;
		for (size_t i = 0; i < ocap; i++) {
			if (!old[i].name)
				continue;
			j = hash_u64(old[i].id) & (cap - 1);
			while (t[j].name)
				j = (j + 1) & (cap - 1);
			t[j] = old[i];
		}
		free(old);
		s->ids = t;
		s->idscap = cap;
	}
	mask = s->idscap - 1;
	for (j = hash_u64(id) & mask; s->ids[j].name; j = (j + 1) & mask)
		if (s->ids[j].id == id)
			return s->ids[j].name - 1;
	idx = intern(s, s->scratch,
		     (size_t)(view_put_name_id(s->v, s->scratch, id) -
			      s->scratch));
	if (idx < 0)
		return idx;
	s->ids[j].id = id;
	s->ids[j].name = (uint32_t)idx + 1;
	s->nids++;
	return idx;
}

static int cmp_names(const struct svg *s, uint32_t a, uint32_t b)
{
	const struct sname *x = &s->names[a], *y = &s->names[b];
	int c = memcmp(s->pool + x->off, s->pool + y->off,
		       x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* --- writing -------------------------------------------------------------- */

/* The script, in pieces (a C string is at most 4095 bytes); its
 * constants are written before it (X0, FW, CHAR_W). */
static const char *const script[] = {
	"var NS='http://www.w3.org/2000/svg';\n",
	"var frames=document.getElementById('frames');\n",
	"var mode=frames.getAttribute('data-flame');\n",
	"var unit=frames.getAttribute('data-unit');\n",
	"var total=+frames.getAttribute('data-total');\n",
	"var details=document.getElementById('details');\n",
	"var matched=document.getElementById('matched');\n",
	"var resetB=document.getElementById('reset');\n",
	"var undoB=document.getElementById('undo');\n",
	"var input=document.getElementById('search');\n",
	"var HILITE='rgb(230,0,230)';\n",
	"var boxes=[],byG=new Map(),zoom=null,undo=[],lanes=new Map();\n",
	"(function(){\n",
	" var gs=frames.getElementsByTagName('g');\n",
	" for(var i=0;i<gs.length;i++){\n",
	"  var g=gs[i];\n",
	"  if(!g.hasAttribute('data-x'))continue;\n",
	"  var r=g.getElementsByTagName('rect')[0];\n",
	"  var tt=g.getElementsByTagName('title')[0].textContent;\n",
	"  var nl=tt.indexOf('\\n');\n",
	"  var lane=g.parentNode.hasAttribute('data-tid')?g.parentNode:null;\n",
	"  var name=nl<0?tt:tt.slice(0,nl);\n",
	"  var b={g:g,r:r,t:g.getElementsByTagName('text')[0]||null,\n",
	"   x:+g.getAttribute('data-x'),w:+g.getAttribute('data-w'),\n",
	"   y:+r.getAttribute('y'),name:name,chars:Array.from(name),\n",
	"   fill:r.getAttribute('fill'),lane:lane};\n",
	"  boxes.push(b);byG.set(g,b);\n",
	"  if(!lanes.has(lane))lanes.set(lane,[]);\n",
	"  lanes.get(lane).push(b);\n",
	" }\n",
	"})();\n",
	"function value(v){\n",
	" if(unit==='calls')return v+(v===1?' call':' calls');\n",
	" if(v<1e3)return v+' ns';\n",
	" if(v<1e6)return (v/1e3).toFixed(3)+' us';\n",
	" if(v<1e9)return (v/1e6).toFixed(3)+' ms';\n",
	" return (v/1e9).toFixed(3)+' s';\n",
	"}\n",
	"function pct(v,of){return of>0?(100*v/of).toFixed(2)+'%':'-';}\n",
	/* the time the intervals of a lane cover together */
	"function covered(list){\n",
	" list.sort(function(a,b){return a[0]-b[0];});\n",
	" var sum=0,s=-1,e=-1;\n",
	" list.forEach(function(iv){\n",
	"  if(iv[0]>e){if(e>s)sum+=e-s;s=iv[0];e=iv[1];}\n",
	"  else if(iv[1]>e)e=iv[1];\n",
	" });\n",
	" return sum+(e>s?e-s:0);\n",
	"}\n",
	/* time: the threads' time, to which a search's share is taken */
	"var lanesTime=total;\n",
	"if(mode==='time'){lanesTime=0;lanes.forEach(function(l){\n",
	" lanesTime+=covered(l.map(function(b){return [b.x,b.x+b.w];}));});}\n",
	"function label(b,px,wpx){\n",
	" var n=Math.floor((wpx-6)/CHAR_W),s='';\n",
	" if(n>=3)s=b.chars.length<=n?b.name:",
	"b.chars.slice(0,n-2).join('')+'..';\n",
	" if(!b.t){if(!s)return;b.t=document.createElementNS(NS,'text');",
	"b.g.appendChild(b.t);",
	"b.t.setAttribute('y',(b.y+11.5).toString());}\n",
	" b.t.setAttribute('x',(px+3).toFixed(2));\n",
	" b.t.textContent=s;\n",
	"}\n",
	/* the picture zoomed to box z (null: all of it) */
	"function show(z){\n",
	" var z0=z?z.x:0,zw=z?z.w:total,scale=FW/(zw>0?zw:1);\n",
	" boxes.forEach(function(b){\n",
	"  var vis,anc=false;\n",
	"  if(!z)vis=true;\n",
	"  else if(mode==='time')vis=b.x<z0+zw&&b.x+b.w>z0;\n",
	"  else if(b.y>z.y){vis=b.x<=z0&&b.x+b.w>=z0+zw;anc=vis;}\n",
	"  else vis=b.x>=z0&&b.x+b.w<=z0+zw;\n",
	"  if(!vis){b.g.style.display='none';return;}\n",
	"  b.g.style.display='';\n",
	"  var x0=Math.max(b.x,z0),x1=Math.min(b.x+b.w,z0+zw);\n",
	"  var px=X0+(x0-z0)*scale,wpx=(x1-x0)*scale;\n",
	"  b.r.setAttribute('x',px.toFixed(2));\n",
	"  b.r.setAttribute('width',wpx.toFixed(2));\n",
	"  label(b,px,wpx);\n",
	"  if(anc)b.g.classList.add('anc');else b.g.classList.remove('anc');\n",
	" });\n",
	" resetB.style.display=z?'':'none';\n",
	" undoB.style.display=undo.length?'':'none';\n",
	"}\n",
	"function zoomTo(b){undo.push(zoom);zoom=b;show(b);}\n",
	"function reset(){undo=[];zoom=null;show(null);}\n",
	"function back(){zoom=undo.length?undo.pop():null;show(zoom);}\n",
	"function describe(b){\n",
	" var s=b.name+': '+value(b.w);\n",
	" if(mode==='time'){\n",
	"  s+=' ('+pct(b.w,total)+' of the span), at +'+value(b.x);\n",
	"  if(b.lane)s+=', thread '+b.lane.getAttribute('data-tid');\n",
	" }else{\n",
	"  s+=', '+pct(b.w,total);\n",
	"  if(zoom&&zoom.y>=b.y&&zoom!==b)",
	"s+=' ('+pct(b.w,zoom.w)+' of '+zoom.name+')';\n",
	" }\n",
	" return s;\n",
	"}\n",
	"function search(term){\n",
	" var re=null;\n",
	" if(term){try{re=new RegExp(term);}catch(e){\n",
	"  re=new RegExp(term.replace(/[.*+?^${}()|[\\]\\\\]/g,'\\\\$&'));}}\n",
	" var per=new Map(),n=0;\n",
	" boxes.forEach(function(b,i){\n",
	/* (merged: not the root, "all") */
	"  var m=re!==null&&(mode==='time'||i>0)&&re.test(b.name);\n",
	"  b.r.setAttribute('fill',m?HILITE:b.fill);\n",
	"  if(!m)return;\n",
	"  n++;\n",
	"  if(!per.has(b.lane))per.set(b.lane,[]);\n",
	"  per.get(b.lane).push([b.x,b.x+b.w]);\n",
	" });\n",
	" if(!re){matched.textContent='';return;}\n",
	" var sum=0;per.forEach(function(l){sum+=covered(l);});\n",
	" matched.textContent='Matched: '+pct(sum,lanesTime)+' ('+n+' frame'+",
	"(n===1?'':'s')+')';\n",
	"}\n",
	"frames.addEventListener('mouseover',function(e){\n",
	" var g=e.target.closest('g[data-x]');\n",
	" if(g)details.textContent=describe(byG.get(g));\n",
	"});\n",
	"frames.addEventListener('mouseout',function(e){\n",
	" if(e.target.closest('g[data-x]'))details.textContent=' ';\n",
	"});\n",
	"frames.addEventListener('click',function(e){\n",
	" var g=e.target.closest('g[data-x]');\n",
	" if(!g)return;\n",
	" var b=byG.get(g);\n",
	" if(mode!=='time'&&b===boxes[0])reset();\n",
	" else zoomTo(b);\n",
	"});\n",
	"resetB.addEventListener('click',reset);\n",
	"undoB.addEventListener('click',back);\n",
	"input.addEventListener('input',function(){search(input.value);});\n",
	"document.addEventListener('keydown',function(e){\n",
	" if((e.ctrlKey||e.metaKey)&&e.key==='f'){e.preventDefault();",
	"input.focus();return;}\n",
	" if(e.key==='Escape'){\n",
	"  if(document.activeElement===input&&input.value){input.value='';",
	"search('');}\n",
	"  else reset();\n",
	" }\n",
	"});\n",
	"show(null);\n",
	NULL,
};

static int write_head(struct svg *s, unsigned height, const char *title,
		      const char *sub)
{
	struct out *o = s->out;
	char *p = o->p;

	p += sprintf(
		p,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%u\" "
		"viewBox=\"0 0 %d %u\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>\n"
		"text{font-family:monospace;font-size:12px;fill:#000}\n"
		"#title{font-size:17px;font-family:sans-serif}\n"
		"#subtitle{fill:#555}\n"
		".btn{cursor:pointer;fill:#1a4f9c;text-decoration:underline}\n"
		"#frames g[data-x]{cursor:pointer}\n"
		"#frames text{pointer-events:none}\n"
		"#frames g[data-x]:hover rect{stroke:#000;stroke-width:0.5}\n"
		".anc rect{fill-opacity:0.5}\n"
		".lanelabel{font-weight:bold}\n"
		"input{font:12px monospace;width:280px;box-sizing:border-box}\n"
		"</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" "
		"fill=\"#f8f8f2\"/>\n"
		"<text id=\"title\" x=\"%d\" y=\"24\" "
		"text-anchor=\"middle\">%s</text>\n"
		"<text id=\"subtitle\" x=\"%d\" y=\"44\" "
		"text-anchor=\"middle\">",
		IMG_W, height, IMG_W, height, IMG_W, height, IMG_W / 2, title,
		IMG_W / 2);
	p = put_xml(p, sub, strlen(sub));
	p += sprintf(
		p,
		"</text>\n"
		"<text id=\"reset\" class=\"btn\" x=\"%d\" y=\"24\" "
		"style=\"display:none\">Reset zoom</text>\n"
		"<text id=\"undo\" class=\"btn\" x=\"%d\" y=\"24\" "
		"style=\"display:none\">Undo zoom</text>\n"
		"<foreignObject x=\"%d\" y=\"8\" width=\"290\" height=\"24\">"
		"<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"search\" "
		"type=\"search\" placeholder=\"Search (regex), Ctrl-F\"/>"
		"</foreignObject>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%u\" "
		"text-anchor=\"end\"></text>\n",
		PAD, PAD + 100, IMG_W - PAD - 290, PAD, height - 12,
		IMG_W - PAD, height - 12);
	o->p = p;
	return out_room(o);
}

static int write_tail(struct svg *s)
{
	struct out *o = s->out;

	o->p += sprintf(o->p,
			"</g>\n<script type=\"text/javascript\"><![CDATA[\n"
			"var X0=%d,FW=%d,CHAR_W=%.1f;\n",
			PAD, FRAMES_W, CHAR_W);
	for (size_t i = 0; script[i]; i++) {
		size_t n = strlen(script[i]);
		memcpy(o->p, script[i], n);
		o->p += n;
		if (out_room(o) < 0)
			return -1;
	}
	memcpy(o->p, "]]></script>\n</svg>\n", 20);
	o->p += 20;
	return out_room(o);
}

/* One box: its name's text, tip (after the name), place and size. */
static int write_box(struct svg *s, uint32_t name, uint64_t x, uint64_t w,
		     double px, double wpx, unsigned y, const char *tip)
{
	const struct sname *e = &s->names[name];
	const char *str = s->pool + e->off;
	struct out *o = s->out;
	char *p = o->p;
	long fit = (long)((wpx - 6) / CHAR_W);

	p += sprintf(p, "<g data-x=\"%llu\" data-w=\"%llu\"><title>",
		     (unsigned long long)x, (unsigned long long)w);
	p = put_xml(p, str, e->len);
	*p++ = '\n';
	p = put_xml(p, tip, strlen(tip));
	memcpy(p, "</title><rect x=\"", 17);
	p = put_px(p + 17, px);
	p += sprintf(p, "\" y=\"%u\" width=\"", y);
	p = put_px(p, wpx);
	p += sprintf(p, "\" height=\"%d\" fill=\"#%06x\"/>", ROW - 1,
		     (unsigned)e->color);
	if (fit >= 3) {
		size_t len = e->len;
		int cut = 0;
		if (e->chars > (uint32_t)fit) {
			/* the first fit - 2 characters, then ".." */
			uint32_t c = 0;
			len = 0;
			while (c < (uint32_t)fit - 2) {
				/* (a cleaned name: its lead bytes
				 * say each character's length) */
				unsigned char b = (unsigned char)str[len];
				len += b < 0xc0 ? 1 : b < 0xe0 ? 2
						 : b < 0xf0 ? 3 : 4;
				c++;
			}
			cut = 1;
		}
		memcpy(p, "<text x=\"", 9);
		p = put_px(p + 9, px + 3);
		p += sprintf(p, "\" y=\"%.1f\">", y + 11.5);
		p = put_xml(p, str, len);
		if (cut)
			*p++ = '.', *p++ = '.';
		memcpy(p, "</text>", 7);
		p += 7;
	}
	memcpy(p, "</g>\n", 5);
	o->p = p + 5;
	return out_room(o);
}

/* --- merged: the folded stacks as a tree ---------------------------------- */

/* The node of name under parent, made when new. Returns -ENOMEM. */
static long child(struct svg *s, uint32_t parent, uint32_t name)
{
	size_t j, mask;
	uint64_t key = (uint64_t)parent << 32 | name;
	void *q;

	if (2 * (s->nnodes + 1) > s->kidscap) {
		size_t cap = s->kidscap ? 2 * s->kidscap : 4096;
		uint32_t *t = calloc(cap, sizeof(*t));
		if (!t)
			return -ENOMEM;
		for (size_t i = 1; i < s->nnodes; i++) {
			const struct node *n = &s->nodes[i];
			j = hash_u64((uint64_t)n->parent << 32 | n->name) &
			    (cap - 1);
			while (t[j])
				j = (j + 1) & (cap - 1);
			t[j] = (uint32_t)i + 1;
		}
		free(s->kids);
		s->kids = t;
		s->kidscap = cap;
	}
	mask = s->kidscap - 1;
	for (j = hash_u64(key) & mask; s->kids[j]; j = (j + 1) & mask) {
		const struct node *n = &s->nodes[s->kids[j] - 1];
		if (n->parent == parent && n->name == name)
			return (long)s->kids[j] - 1;
	}
	if (!(q = grow(s->nodes, &s->nodecap, s->nnodes + 1, sizeof(*s->nodes),
		       4096)))
		return -ENOMEM;
	s->nodes = q;
	struct node *n = &s->nodes[s->nnodes];
	memset(n, 0, sizeof(*n));
	n->parent = parent;
	n->name = name;
	n->depth = s->nodes[parent].depth + 1;
	s->kids[j] = (uint32_t)s->nnodes + 1;
	return (long)s->nnodes++;
}

static int add_stack(void *arg, const uint64_t *ids, size_t n, uint64_t w)
{
	struct svg *s = arg;
	uint32_t at = 0;

	s->nodes[0].w += w;
	for (size_t i = 0; i < n; i++) {
		long name = name_of(s, ids[i]), k;
		if (name < 0 || (k = child(s, at, (uint32_t)name)) < 0)
			return -ENOMEM;
		s->nodes[k].w += w;
		at = (uint32_t)k;
	}
	return 0;
}

/* by depth, then caller, then name: a caller is placed before its callees,
 * and the callees of one caller lie side by side in the order of names */
static int cmp_nodes(const void *a, const void *b, void *arg)
{
	const struct svg *s = arg;
	const struct node *x = &s->nodes[*(const uint32_t *)a];
	const struct node *y = &s->nodes[*(const uint32_t *)b];

	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return cmp_names(s, x->name, y->name);
}

static int merged_finish(struct view *v)
{
	struct svg *s = view_state(v);
	uint32_t *ord = NULL, maxd = 0;
	uint64_t total, run = 0;
	uint32_t last = UINT32_MAX;
	long all;
	int rc = -1;
	char sub[256], *p, tip[128];

	all = intern(s, "all", 3);
	if (all < 0 || view_folded_each(v, add_stack, s) < 0 ||
	    !(ord = malloc(s->nnodes * sizeof(*ord)))) {
		fprintf(stderr, PROG ": out of memory\n");
		return -1;
	}
	total = s->nodes[0].w;
	for (size_t i = 0; i < s->nnodes; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord + 1, s->nnodes - 1, sizeof(*ord), cmp_nodes, s);
	s->nodes[0].drawn = total > 0;
	for (size_t i = 1; i < s->nnodes; i++) {
		struct node *n = &s->nodes[ord[i]];
		const struct node *up = &s->nodes[n->parent];
		if (n->parent != last) {
			run = up->x;
			last = n->parent;
		}
		n->x = run;
		run += n->w;
		n->drawn = up->drawn &&
			   (double)n->w * FRAMES_W >= s->minw * (double)total;
		if (n->drawn) {
			if (n->depth > maxd)
				maxd = n->depth;
		} else {
			s->left++;
			if (up->drawn)
				s->left_w += n->w;
		}
	}

	p = sub;
	p += sprintf(p, "%s merged by stack, ",
		     s->calls ? "Calls" : "Self time");
	p = put_value(p, total, s->calls);
	p += sprintf(p, " in all; %llu frame%s narrower than %g px left out",
		     (unsigned long long)s->left, s->left == 1 ? "" : "s",
		     s->minw);
	if (s->left)
		p += sprintf(p, " (%.2f%% of the %s)",
			     total ? 100.0 * (double)s->left_w / (double)total
				   : 0.0,
			     s->calls ? "calls" : "time");
	unsigned height = TOP + (maxd + 1) * ROW + BOTTOM;
	if (write_head(s, height, "Flame graph", sub) < 0)
		goto out;
	s->out->p += sprintf(s->out->p,
			     "<g id=\"frames\" data-flame=\"merged\" "
			     "data-unit=\"%s\" data-total=\"%llu\">\n",
			     s->calls ? "calls" : "ns",
			     (unsigned long long)total);
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct node *n = &s->nodes[ord[i]];
		if (!n->drawn)
			continue;
		p = put_value(tip, n->w, s->calls);
		sprintf(p, ", %.2f%%", 100.0 * (double)n->w / (double)total);
		if (write_box(s, i ? n->name : (uint32_t)all, n->x, n->w,
			      PAD + (double)n->x * FRAMES_W / (double)total,
			      (double)n->w * FRAMES_W / (double)total,
			      TOP + (maxd - n->depth) * ROW, tip) < 0)
			goto out;
	}
	rc = write_tail(s);
out:
	free(ord);
	return rc;
}

/* --- time: every frame where it ran --------------------------------------- */

static void time_enter(void *state, const struct strace_frame *f)
{
	(void)state;
	(void)f;
}

/* Whether a box of d ns is wide enough at the span seen so far (which
 * only grows: a box too narrow now stays too narrow). */
static inline int wide(const struct svg *s, uint64_t d)
{
	return d && (double)d * FRAMES_W >= s->minw * (double)(s->hi - s->lo);
}

/* Keep the boxes wide enough now; count the others. */
static void prune(struct svg *s)
{
	size_t k = 0;

	for (size_t i = 0; i < s->nboxes; i++) {
		if (wide(s, s->boxes[i].e - s->boxes[i].b))
			s->boxes[k++] = s->boxes[i];
		else
			s->left++;
	}
	s->nboxes = k;
}

static void time_leave(void *state, const struct strace_frame *f)
{
	struct svg *s = state;
	uint64_t end = f->end > f->begin ? f->end : f->begin;
	long name;

	if (!s->frames++ || f->begin < s->lo)
		s->lo = f->begin;
	if (s->frames == 1 || end > s->hi)
		s->hi = end;
	s->seq++;
	if (!wide(s, end - f->begin)) {
		s->left++;
		return;
	}
	if (s->nboxes == s->boxcap) {
		prune(s);
		if (2 * s->nboxes >= s->boxcap) {
			void *q = grow(s->boxes, &s->boxcap, s->boxcap + 1,
				       sizeof(*s->boxes), 4096);
			if (!q) {
				fprintf(stderr, PROG ": out of memory\n");
				view_fail(s->v, -1);
				return;
			}
			s->boxes = q;
		}
	}
	if ((name = name_of(s, view_name_id(s->v, f))) < 0) {
		fprintf(stderr, PROG ": out of memory\n");
		view_fail(s->v, -1);
		return;
	}
	struct box *b = &s->boxes[s->nboxes++];
	b->b = f->begin;
	b->e = end;
	b->seq = s->seq;
	b->tid = f->tid;
	b->name = (uint32_t)name;
	b->depth = 0;
	b->lane = 0;
}

/* by thread, then begin; of equal begins the longer first, then the one
 * left later (a caller leaves after its callees) */
static int cmp_boxes(const void *a, const void *b)
{
	const struct box *x = a, *y = b;

	if (x->lane != y->lane)
		return x->lane < y->lane ? -1 : 1;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	if (x->e != y->e)
		return x->e > y->e ? -1 : 1;
	return x->seq > y->seq ? -1 : x->seq < y->seq;
}

static int cmp_lanes(const void *a, const void *b)
{
	const struct lane *x = a, *y = b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_tid(const void *a, const void *b)
{
	const struct box *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int time_finish(struct view *v)
{
	struct svg *s = view_state(v);
	struct lane *lanes = NULL;
	uint64_t *ends = NULL;
	uint32_t *rank = NULL;
	size_t nlanes = 0, sp;
	uint64_t span = s->hi - s->lo;
	unsigned height = TOP + BOTTOM, y;
	int rc = -1;
	char sub[256], *p, tip[128];

	prune(s);
	/* the threads, in the order they began */
	if (s->nboxes)
		qsort(s->boxes, s->nboxes, sizeof(*s->boxes), cmp_tid);
	for (size_t i = 0; i < s->nboxes; i++)
		if (!i || s->boxes[i].tid != s->boxes[i - 1].tid)
			nlanes++;
	lanes = calloc(nlanes + 1, sizeof(*lanes));
	rank = malloc((nlanes + 1) * sizeof(*rank));
	ends = malloc((s->nboxes + 1) * sizeof(*ends));
	if (!lanes || !rank || !ends) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	for (size_t i = 0, k = 0; i < s->nboxes; i++) {
		if (i && s->boxes[i].tid != s->boxes[i - 1].tid)
			k++;
		if (!i || s->boxes[i].tid != s->boxes[i - 1].tid) {
			lanes[k].tid = s->boxes[i].tid;
			lanes[k].idx = (uint32_t)k;
			lanes[k].first = s->boxes[i].b;
		}
		if (s->boxes[i].b < lanes[k].first)
			lanes[k].first = s->boxes[i].b;
		s->boxes[i].lane = (uint32_t)k;
	}
	if (nlanes)
		qsort(lanes, nlanes, sizeof(*lanes), cmp_lanes);
	for (size_t l = 0; l < nlanes; l++)
		rank[lanes[l].idx] = (uint32_t)l;
	for (size_t i = 0; i < s->nboxes; i++)
		s->boxes[i].lane = rank[s->boxes[i].lane];
	if (s->nboxes)
		qsort(s->boxes, s->nboxes, sizeof(*s->boxes), cmp_boxes);
	/* depths: the boxes of a lane around each, by a sweep in the order
	 * of begins (ends[] holds the ends of the boxes around) */
	for (size_t i = 0, l = 0; i < s->nboxes; l++) {
		struct lane *ln = &lanes[l];
		ln->from = i;
		sp = 0;
		for (; i < s->nboxes && s->boxes[i].lane == l; i++) {
			struct box *b = &s->boxes[i];
			while (sp && ends[sp - 1] <= b->b)
				sp--;
			b->depth = (uint32_t)sp;
			if (sp > ln->depth)
				ln->depth = (uint32_t)sp;
			ends[sp++] = b->e;
		}
		ln->to = i;
		height += LANE_HEAD + (ln->depth + 1) * ROW + LANE_GAP;
	}

	p = sub;
	p += sprintf(p, "Frames in time order, %zu thread%s, ", nlanes,
		     nlanes == 1 ? "" : "s");
	p = put_value(p, span, 0);
	p += sprintf(p, " from the first begin to the last end; %llu frame%s "
			"narrower than %g px left out",
		     (unsigned long long)s->left, s->left == 1 ? "" : "s",
		     s->minw);
	if (write_head(s, height, "Flame chart", sub) < 0)
		goto out;
	s->out->p += sprintf(s->out->p,
			     "<g id=\"frames\" data-flame=\"time\" "
			     "data-unit=\"ns\" data-total=\"%llu\">\n",
			     (unsigned long long)span);
	y = TOP;
	for (size_t l = 0; l < nlanes; l++) {
		const struct lane *ln = &lanes[l];
		struct strace_names *nm = view_names(v);
		const struct strace_name *t =
			nm ? strace_names_thread(nm, ln->tid) : NULL;
		uint32_t chars;
		p = s->out->p;
		p += sprintf(p,
			     "<g class=\"lane\" data-tid=\"%u\">"
			     "<text class=\"lanelabel\" x=\"%d\" y=\"%u\">"
			     "thread %u",
			     ln->tid, PAD, y + 14, ln->tid);
		if (t) {
			size_t n = t->len < 256 ? t->len : 256;
			n = clean_name(s->scratch, t->str, n, &chars);
			*p++ = ' ';
			p = put_xml(p, s->scratch, n);
		}
		memcpy(p, "</text>\n", 8);
		s->out->p = p + 8;
		y += LANE_HEAD;
		for (size_t i = ln->from; i < ln->to; i++) {
			const struct box *b = &s->boxes[i];
			uint64_t d = b->e - b->b;
			p = put_value(tip, d, 0);
			p += sprintf(p, ", %.2f%% of the span, at +",
				     100.0 * (double)d / (double)span);
			put_value(p, b->b - s->lo, 0);
			if (write_box(s, b->name, b->b - s->lo, d,
				      PAD + (double)(b->b - s->lo) * FRAMES_W /
						    (double)span,
				      (double)d * FRAMES_W / (double)span,
				      y + b->depth * ROW, tip) < 0)
				goto out;
		}
		memcpy(s->out->p, "</g>\n", 5);
		s->out->p += 5;
		y += (ln->depth + 1) * ROW + LANE_GAP;
	}
	rc = write_tail(s);
out:
	free(lanes);
	free(rank);
	free(ends);
	return rc;
}

/* --- the format ----------------------------------------------------------- */

static int svg_open(struct view *v)
{
	const struct view_opts *o = view_opts(v);
	struct svg *s = calloc(1, sizeof(*s));

	if (!s) {
		fprintf(stderr, PROG ": out of memory\n");
		return -1;
	}
	view_set_state(v, s);
	s->v = v;
	s->out = view_out(v);
	s->time = o->flame == VIEW_FLAME_TIME;
	s->calls = o->weight_calls;
	s->minw = o->min_width;
	if (!s->time) {
		s->nodecap = 4096;
		s->nodes = calloc(s->nodecap, sizeof(*s->nodes));
		if (!s->nodes) {
			fprintf(stderr, PROG ": out of memory\n");
			return -1;
		}
		s->nnodes = 1; /* the root */
	}
	return 0;
}

static void svg_close(struct view *v)
{
	struct svg *s = view_state(v);

	if (s) {
		free(s->names);
		free(s->pool);
		free(s->ids);
		free(s->byname);
		free(s->nodes);
		free(s->kids);
		free(s->boxes);
	}
	free(s);
	view_set_state(v, NULL);
}

const struct view_format view_svg = {svg_open, NULL, NULL, NULL,
				     merged_finish, svg_close};
const struct view_format view_svg_time = {svg_open, NULL, time_enter,
					  time_leave, time_finish, svg_close};
