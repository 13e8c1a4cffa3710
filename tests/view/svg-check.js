// tests/view/svg-check.js - our SVG flame graph (ptrace-read -f svg,
// cli/view/fmt_svg.c) in headless Chromium, as a person uses it:
//   - it loads with no script error and fetches nothing but itself;
//   - its frames are drawn (boxes with a width), NAME among them;
//   - hovering NAME's widest box writes its name, time and share in the
//     details line (empty before);
//   - a click on it zooms: the box then spans the frame area (x 10,
//     width 1180), "Reset zoom" shows; "Undo zoom" and "Reset zoom" give
//     back its width;
//   - a search (--search TERM, default ^NAME$) colours the matching boxes
//     and says "Matched: P% (N frames)"; --expect-match P: within 0.01 of P
//     (the share the caller computed from the folded stacks);
//   - the screenshot (search on, NAME hovered) is not blank.
//
// Usage: node svg-check.js FILE.svg SCREENSHOT.png NAME [--search TERM]
//        [--expect-match PCT]
// (tests/view/browser-check.sh --svg checks for Chromium and node first.)
// Exit: 0 and "ok: ..."; 1 and "not ok: ..." with what was seen; 77 and
// "skip: ..." when Chromium cannot be started. CHROMIUM (default
// /usr/bin/chromium), VIEW_TIMEOUT_MS (default 30000).
'use strict';
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');
const { pngStats, isBlank, pngText } = require('./browser-check.js');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const TIMEOUT = Number(process.env.VIEW_TIMEOUT_MS || 30000);
const HILITE = 'rgb(230,0,230)';

function usage() {
  process.stderr.write('usage: svg-check.js FILE.svg SCREENSHOT.png NAME [--search TERM] [--expect-match PCT]\n');
  process.exit(2);
}

// Serves the one file at /<its name> on 127.0.0.1 and notes every other
// request (there must be none).
function serve(file, others) {
  const name = path.basename(file);
  const server = http.createServer((req, res) => {
    if (req.url === '/' + encodeURIComponent(name)) {
      res.writeHead(200, { 'Content-Type': 'image/svg+xml', 'Cache-Control': 'no-store' });
      res.end(fs.readFileSync(file));
      return;
    }
    others.push(req.url);
    res.writeHead(404);
    res.end();
  });
  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

// In the page: the boxes as drawn.
function boxesState() {
  const gs = [...document.querySelectorAll('#frames g[data-x]')];
  const shown = gs.filter((g) => g.style.display !== 'none');
  return {
    boxes: gs.length,
    shown: shown.length,
    drawn: shown.filter((g) => parseFloat(g.querySelector('rect').getAttribute('width')) > 0).length,
    names: [...new Set(gs.map((g) => g.querySelector('title').textContent.split('\n')[0]))],
    subtitle: (document.getElementById('subtitle') || {}).textContent,
    details: (document.getElementById('details') || {}).textContent,
    matched: (document.getElementById('matched') || {}).textContent,
    reset: document.getElementById('reset').style.display !== 'none',
    undo: document.getElementById('undo').style.display !== 'none',
  };
}

// In the page: the index of NAME's widest box, marked for the selector.
function markWidest(name) {
  let best = null, bw = -1;
  document.querySelectorAll('#frames g[data-x]').forEach((g) => {
    if (g.querySelector('title').textContent.split('\n')[0] !== name) return;
    const w = parseFloat(g.querySelector('rect').getAttribute('width'));
    if (w > bw) { bw = w; best = g; }
  });
  if (!best) return null;
  best.setAttribute('data-check', '1');
  return bw;
}

function rectOf() {
  const r = document.querySelector('g[data-check] rect');
  return { x: parseFloat(r.getAttribute('x')), width: parseFloat(r.getAttribute('width')) };
}

async function main() {
  const args = process.argv.slice(2);
  const [svg, shot, name] = args;
  if (!svg || !shot || !name) usage();
  let term = null, expect = null;
  for (let i = 3; i < args.length; i++) {
    if (args[i] === '--search' && i + 1 < args.length) term = args[++i];
    else if (args[i] === '--expect-match' && i + 1 < args.length) expect = Number(args[++i]);
    else usage();
  }
  if (term === null) term = `^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
  if (!fs.existsSync(svg)) {
    console.log(`not ok: ${svg}: no such file`);
    process.exit(1);
  }
  const head = fs.readFileSync(svg, 'utf8').slice(0, 400);
  const m = /<svg[^>]* height="(\d+)"/.exec(head);
  const height = Math.min(m ? Number(m[1]) : 800, 2000);
  const others = [];
  const server = await serve(svg, others);
  const port = server.address().port;
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svg-chromium-'));
  const { chromium } = require('playwright-core');
  let ctx;
  try {
    ctx = await chromium.launchPersistentContext(userDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1200, height },
      timeout: 60000,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  } catch (e) {
    server.close();
    fs.rmSync(userDir, { recursive: true, force: true });
    console.log(`skip: chromium (${CHROMIUM}) could not be started: ${String(e.message).split('\n')[0]}`);
    process.exit(77);
  }
  const errors = [], blocked = [];
  const out = [];
  let code = 1;
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (msg) => { if (msg.type() === 'error') errors.push(msg.text()); });
    await page.route((url) => !url.href.startsWith(`http://127.0.0.1:${port}/`),
      (r) => { blocked.push(r.request().url()); r.abort(); });
    await page.goto(`http://127.0.0.1:${port}/${encodeURIComponent(path.basename(svg))}`,
      { timeout: TIMEOUT });
    await page.waitForFunction(() => document.getElementById('frames') !== null, null, { timeout: TIMEOUT });
    const st0 = await page.evaluate(boxesState);
    const bad = [];
    if (!st0.drawn) bad.push('no box drawn');
    if (!st0.names.includes(name)) bad.push(`no box named ${name}`);
    if (bad.length) {
      out.push(`not ok: ${svg}: ${bad.join('; ')} (${st0.boxes} boxes; names: ${st0.names.slice(0, 30).join(', ')})`);
      return;
    }
    const w0 = await page.evaluate(markWidest, name);
    const el = page.locator('g[data-check] rect');
    await el.scrollIntoViewIfNeeded();

    // hover: the details line names the box, its time and share
    const before = st0.details;
    await el.hover({ force: true });
    await page.waitForTimeout(50);
    const hovered = (await page.evaluate(boxesState)).details;
    if (hovered === before || !hovered.startsWith(name + ': ') || !/%/.test(hovered)) {
      out.push(`not ok: hovering ${name} left the details "${before}" -> "${hovered}"`);
      return;
    }

    // click: the box spans the frame area
    await el.click({ force: true });
    await page.waitForTimeout(50);
    const z = await page.evaluate(rectOf);
    const st1 = await page.evaluate(boxesState);
    if (Math.abs(z.x - 10) > 0.6 || Math.abs(z.width - 1180) > 0.6 || !st1.reset) {
      out.push(`not ok: after a click on ${name} (width ${w0}) its box is at x ${z.x}, width ${z.width} ` +
        `(want 10 and 1180); reset ${st1.reset ? 'shown' : 'hidden'}`);
      return;
    }
    // undo, then zoom again and reset: the width it had
    await page.locator('#undo').click();
    await page.waitForTimeout(50);
    const u = await page.evaluate(rectOf);
    await el.scrollIntoViewIfNeeded();
    await el.click({ force: true });
    await page.waitForTimeout(50);
    await page.locator('#reset').click();
    await page.waitForTimeout(50);
    const r = await page.evaluate(rectOf);
    const st2 = await page.evaluate(boxesState);
    if (Math.abs(u.width - w0) > 0.02 || Math.abs(r.width - w0) > 0.02 || st2.reset ||
        st2.shown !== st0.shown) {
      out.push(`not ok: undo gave width ${u.width}, reset ${r.width} (want ${w0}); ` +
        `${st2.shown} boxes shown (want ${st0.shown}); reset ${st2.reset ? 'still shown' : 'hidden'}`);
      return;
    }

    // search
    await page.locator('#search').fill(term);
    await page.waitForTimeout(100);
    const st3 = await page.evaluate(boxesState);
    const lit = await page.evaluate((c) => [...document.querySelectorAll('#frames rect')]
      .filter((x) => x.getAttribute('fill') === c).length, HILITE);
    const mm = /^Matched: ([0-9.]+)% \((\d+) frames?\)$/.exec(st3.matched);
    if (!mm || Number(mm[2]) !== lit || lit === 0 ||
        (expect !== null && Math.abs(Number(mm[1]) - expect) > 0.011)) {
      out.push(`not ok: search "${term}": "${st3.matched}", ${lit} boxes coloured` +
        (expect !== null ? `, want ${expect.toFixed(2)}%` : ''));
      return;
    }

    // the screenshot: search on, NAME hovered
    await el.hover({ force: true });
    await page.waitForTimeout(100);
    await page.screenshot({ path: shot });
    const png = pngStats(shot);
    if (isBlank(png)) {
      out.push(`not ok: the screenshot looks blank: ${pngText(png)}`);
      return;
    }
    if (errors.length || blocked.length || others.length) {
      out.push(`not ok: ${svg}: page errors: ${errors.slice(0, 3).join(' | ')}; ` +
        `requests: ${blocked.concat(others).slice(0, 3).join(', ')}`);
      return;
    }
    out.push(`ok: ${svg}: ${st0.drawn} boxes drawn ("${st0.subtitle}"); hover: "${hovered}"; ` +
      `click: ${name} from width ${w0.toFixed(2)} to ${z.width} at x ${z.x}, ${st1.shown} boxes shown; ` +
      `undo and reset: width ${r.width}; search "${term}": "${st3.matched}"` +
      (expect !== null ? ` (want ${expect.toFixed(2)}%)` : '') + `; screenshot ${shot} ${pngText(png)}`);
    code = 0;
  } catch (e) {
    out.push(`not ok: ${svg}: ${String(e.message).split('\n')[0]}`);
  } finally {
    await ctx.close().catch(() => {});
    server.close();
    fs.rmSync(userDir, { recursive: true, force: true });
    out.forEach((l) => console.log(l));
    process.exitCode = code;
  }
}

main().catch((e) => { console.log(`not ok: ${e.stack || e}`); process.exit(1); });
