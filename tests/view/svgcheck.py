#!/usr/bin/env python3
"""tests/view/svgcheck.py - judge an SVG flame graph of ptrace-read -f svg
against the text views of the same ring (docs/viewing.md, "SVG flame
graph"). Reads the SVG with Python's XML parser (a file that is not
well-formed XML fails), then:

  svgcheck.py merged SVG FOLDED [--min-width PX]
      --flame merged: the boxes form a tree (each box lies on one box of
      the row under it, the root "all" at the bottom); the path of names
      from the root to each box is a prefix of the folded stacks, and its
      weight (data-w) is the sum of the weights of the stacks that begin
      with it; the root's is their total; the callees of a box lie side
      by side from its left edge, in the order of their names (bytes);
      each box's place and width in pixels are its weight's share of the
      1180-pixel frame area (to 0.01 px), and no box is narrower than PX
      (default 0.1); the prefixes without a box are exactly those
      narrower than PX, and the subtitle's left-out count is their number.

  svgcheck.py time SVG TREE [--min-width PX]
      --flame time: the lanes in the order their threads' first boxes
      begin (of one begin, by tid); per lane, each box of depth d > 0
      lies within a box of depth d - 1 (in time: begin and end), boxes of
      one row do not overlap; each box's place and width in pixels are its begin and
      duration on the span (to 0.01 px); the boxes of each thread are the
      frames of -f tree (TREE) of that thread, name and duration (as the
      tree prints it), less those narrower than PX (those of no duration
      always), whose number the subtitle gives.

Names are compared as the SVG must write them (XML 1.0 text): each
control character, and each byte that is not part of a UTF-8 character
XML takes (C1 controls, U+FFFE and U+FFFF included), is a '?'.

Prints one line: what was checked, or what differs; exits 0 or 1.
"""
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict

NS = "{http://www.w3.org/2000/svg}"
PAD, FW, ROW = 10, 1180, 16
LEFT = re.compile(r"(\d+) frames? narrower than ([0-9.]+) px left out")


def clean(raw):
    """bytes -> the name as the SVG holds it"""
    out = []
    for c in raw.decode("utf-8", errors="surrogateescape"):
        o = ord(c)
        if 0xDC80 <= o <= 0xDCFF or o < 0x20 or o == 0x7F:
            out.append("?")
        elif 0x80 <= o < 0xA0:
            out.append("??")
        elif o in (0xFFFE, 0xFFFF):
            out.append("???")
        else:
            out.append(c)
    return "".join(out)


def lines(path):
    with open(path, "rb") as f:
        for raw in f:
            yield clean(raw.rstrip(b"\n"))


def fail(msg):
    print("not ok: " + msg)
    sys.exit(1)


def load(path, flame):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        fail("%s is not well-formed XML: %s" % (path, e))
    if root.tag != NS + "svg":
        fail("%s: the root element is %s, not svg" % (path, root.tag))
    frames = sub = None
    for el in root.iter():
        if el.get("id") == "frames":
            frames = el
        elif el.get("id") == "subtitle":
            sub = el.text or ""
    if frames is None or frames.get("data-flame") != flame:
        fail("%s: no frames of --flame %s" % (path, flame))
    m = LEFT.search(sub or "")
    if not m:
        fail("%s: the subtitle says nothing left out: %r" % (path, sub))
    for el in root.iter(NS + "script"):
        if el.get("src") or el.get("href"):
            fail("%s: a script from elsewhere" % path)
    return root, frames, int(m.group(1)), sub


def box(g):
    title = g.find(NS + "title").text or ""
    r = g.find(NS + "rect")
    return {
        "name": title.split("\n")[0],
        "x": int(g.get("data-x")),
        "w": int(g.get("data-w")),
        "rx": float(r.get("x")),
        "rw": float(r.get("width")),
        "y": int(float(r.get("y"))),
    }


def check_px(b, total, minw, what):
    want_x = PAD + b["x"] * FW / total
    want_w = b["w"] * FW / total
    if abs(b["rx"] - want_x) > 0.0051 or abs(b["rw"] - want_w) > 0.0051:
        fail("%s %s: drawn at x %.2f, width %.2f; its %d of %d make x %.4f, width %.4f"
             % (what, b["name"], b["rx"], b["rw"], b["w"], total, want_x, want_w))
    if b["w"] * FW < minw * total or b["w"] == 0:
        fail("%s %s: %.4f px wide, narrower than %g" % (what, b["name"], want_w, minw))


def parent_of(row, b):
    """The box of row (sorted by x) whose [x, x + w] holds b's, or None."""
    lo, hi = 0, len(row)
    while lo < hi:
        mid = (lo + hi) // 2
        if row[mid]["x"] <= b["x"]:
            lo = mid + 1
        else:
            hi = mid
    if lo == 0:
        return None
    p = row[lo - 1]
    # (of equal x, the last: boxes of one row do not overlap, a zero
    # width one cannot be there)
    return p if p["x"] <= b["x"] and b["x"] + b["w"] <= p["x"] + p["w"] else None


class Node:
    """A prefix of the folded stacks: its weight and its callees by name."""
    __slots__ = ("w", "kids", "box")

    def __init__(self):
        self.w, self.kids, self.box = 0, {}, None


def merged(svg, folded, minw):
    _, frames, left, sub = load(svg, "merged")
    total = int(frames.get("data-total"))
    boxes = [box(g) for g in frames.iter(NS + "g") if g.get("data-x") is not None]
    top = Node()
    nstacks = 0
    for line in lines(folded):
        stack, _, wt = line.rpartition(" ")
        n = top
        n.w += int(wt)
        for name in stack.split(";"):
            n = n.kids.setdefault(name, Node())
            n.w += int(wt)
        nstacks += 1
    if total != top.w:
        fail("total %d, the folded stacks' %d" % (total, top.w))
    if not boxes:
        if total:
            fail("no box for a total of %d" % total)
        print("ok: empty (total 0)")
        return
    ymax = max(b["y"] for b in boxes)
    rows = defaultdict(list)
    for b in boxes:
        if (ymax - b["y"]) % ROW:
            fail("box %s at y %d, not on a row" % (b["name"], b["y"]))
        b["d"] = (ymax - b["y"]) // ROW
        rows[b["d"]].append(b)
    for d in rows:
        rows[d].sort(key=lambda b: b["x"])
    if len(rows[0]) != 1 or rows[0][0]["name"] != "all" or rows[0][0]["x"] != 0 \
            or rows[0][0]["w"] != total:
        fail("the bottom row is not one box 'all' of the total: %s" % rows[0][:3])
    rows[0][0]["node"] = top
    top.box = rows[0][0]
    for d in sorted(rows):
        if d == 0:
            continue
        for b in rows[d]:
            p = parent_of(rows[d - 1], b)
            if p is None:
                fail("box %s (x %d, w %d, depth %d) lies on no box under it"
                     % (b["name"], b["x"], b["w"], d))
            n = p["node"].kids.get(b["name"])
            if n is None:
                fail("box %s (depth %d) on %s: no folded stack goes so"
                     % (b["name"], d, p["name"]))
            if n.box is not None:
                fail("two boxes %s on one box %s" % (b["name"], p["name"]))
            if n.w != b["w"]:
                fail("box %s (depth %d): weight %d, the folded stacks through it %d"
                     % (b["name"], d, b["w"], n.w))
            n.box = b
            b["node"] = n
            p.setdefault("kids", []).append(b)
    for b in boxes:
        check_px(b, total, minw, "box")
        # callees side by side in the order of names; without gaps when
        # all are drawn
        ks = b.get("kids", [])
        for i in range(1, len(ks)):
            if ks[i - 1]["name"].encode() >= ks[i]["name"].encode():
                fail("callees of %s not in the order of names: %s, %s"
                     % (b["name"], ks[i - 1]["name"], ks[i]["name"]))
        if left == 0:
            x = b["x"]
            for k in ks:
                if k["x"] != x:
                    fail("callee %s of %s at %d, want %d" % (k["name"], b["name"], k["x"], x))
                x += k["w"]
    # the prefixes without a box: narrower than minw, as many as said
    missing, nodes, todo = 0, 0, [top]
    while todo:
        n = todo.pop()
        nodes += 1
        if n.box is None:
            missing += 1
            if n.w * FW >= minw * total:
                fail("a stack prefix wide enough has no box (weight %d)" % n.w)
        todo.extend(n.kids.values())
    if missing != left:
        fail("%d stack prefixes without a box, the subtitle says %d: %r" % (missing, left, sub))
    print("ok: %d boxes are the %d prefixes of %d folded stacks (total %d) "
          "less %d narrower than %g px, as the subtitle says"
          % (len(boxes), nodes - 1, nstacks, total, left, minw))


TREE = re.compile(r"^\s*(?:([0-9]+)\.([0-9]{3}) (us|ms|s))?\s+\[\s*(\d+)\] \| ( *)(.*)$")


def tree_frames(path):
    """Per thread: Counter of (name, duration as the tree prints it)."""
    out = defaultdict(Counter)
    for line in lines(path):
        if line.startswith("#"):
            continue
        line = line.replace(" /* began before the trace */", "")
        m = TREE.match(line)
        if not m:
            continue
        whole, frac, unit, tid, _, text = m.groups()
        if whole is None:
            continue  # "name() {": its duration comes with "}"
        if text.startswith("} /* ") and text.endswith(" */"):
            name = text[5:-3]
        elif text.endswith("();"):
            name = text[:-3]
        else:
            continue
        out[int(tid)][(name, (int(whole), int(frac), unit))] += 1
    return out


def as_tree(ns):
    """A duration as the tree prints it (views.c, put_duration())."""
    if ns < 1000000:
        return (ns // 1000, ns % 1000, "us")
    if ns < 1000000000:
        return (ns // 1000000, ns // 1000 % 1000, "ms")
    return (ns // 1000000000, ns // 1000000 % 1000, "s")


def at_least(d):
    """The fewest ns a duration the tree printed can be."""
    whole, frac, unit = d
    scale = {"us": 1, "ms": 1000, "s": 1000000}[unit]
    return (whole * 1000 + frac) * scale


def time(svg, tree, minw):
    _, frames, left, sub = load(svg, "time")
    span = int(frames.get("data-total"))
    want = tree_frames(tree)
    nboxes = 0
    got_all = Counter()
    lanes = [g for g in frames.iter(NS + "g") if g.get("class") == "lane"]
    tids, firsts = [], []
    for lane in lanes:
        tid = int(lane.get("data-tid"))
        tids.append(tid)
        boxes = [box(g) for g in lane.iter(NS + "g") if g.get("data-x") is not None]
        if not boxes:
            fail("thread %d: an empty lane" % tid)
        firsts.append((min(b["x"] for b in boxes), tid))
        y0 = min(b["y"] for b in boxes)
        rows = defaultdict(list)
        for b in boxes:
            check_px(b, span, minw, "thread %d: box" % tid)
            if (b["y"] - y0) % ROW:
                fail("thread %d: box %s at y %d, not on a row" % (tid, b["name"], b["y"]))
            b["d"] = (b["y"] - y0) // ROW
            rows[b["d"]].append(b)
        for d in sorted(rows):
            row = sorted(rows[d], key=lambda b: b["x"])
            rows[d] = row
            for a, b in zip(row, row[1:]):
                if a["x"] + a["w"] > b["x"]:
                    fail("thread %d, depth %d: %s [%d, %d] overlaps %s from %d"
                         % (tid, d, a["name"], a["x"], a["x"] + a["w"], b["name"], b["x"]))
            if d == 0:
                continue
            for b in row:
                if parent_of(rows[d - 1], b) is None:
                    fail("thread %d: %s [%d, %d] at depth %d is inside no box of depth %d"
                         % (tid, b["name"], b["x"], b["x"] + b["w"], d, d - 1))
        got = Counter((b["name"], as_tree(b["w"])) for b in boxes)
        nboxes += len(boxes)
        extra = got - want[tid]
        if extra:
            fail("thread %d: boxes that are no frame of the tree: %s"
                 % (tid, list(extra.items())[:4]))
        got_all.update({(tid,) + k: v for k, v in got.items()})
    want_all = Counter()
    for tid, c in want.items():
        want_all.update({(tid,) + k: v for k, v in c.items()})
    if len(set(tids)) != len(tids):
        fail("two lanes of one thread")
    if firsts != sorted(firsts):
        fail("the lanes are not in the order their threads began: %s" % firsts[:6])
    missing = want_all - got_all
    narrow = [k for k in missing if at_least(k[2]) and at_least(k[2]) * FW >= minw * span]
    if narrow:
        fail("frames of the tree wide enough without a box: %s" % narrow[:4])
    if sum(missing.values()) != left:
        fail("%d frames of the tree without a box, the subtitle says %d: %r"
             % (sum(missing.values()), left, sub))
    print("ok: %d boxes in %d lanes nest in time and are the %d frames of the tree "
          "less %d narrower than %g px (span %d ns), as the subtitle says"
          % (nboxes, len(lanes), sum(want_all.values()), left, minw, span))


def main():
    a = sys.argv[1:]
    minw = 0.1
    if "--min-width" in a:
        i = a.index("--min-width")
        minw = float(a[i + 1])
        del a[i:i + 2]
    if len(a) != 3 or a[0] not in ("merged", "time"):
        sys.stderr.write(__doc__)
        sys.exit(2)
    (merged if a[0] == "merged" else time)(a[1], a[2], minw)


if __name__ == "__main__":
    main()
