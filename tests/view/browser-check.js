// tests/view/browser-check.js - load one profile into speedscope in headless
// Chromium and check that it loaded: speedscope's page title names the file,
// every NAME is a symbol of one of its profiles (threads; "NAME {...}", as
// speedscope shows a trace event with args, counts), speedscope warned
// of no misnested frame, and the screenshot is not blank.
//
// Usage: node browser-check.js PROFILE SCREENSHOT.png NAME...
// (tests/view/browser-check.sh installs the npm packages and calls this.)
//
// What speedscope's DOM exposes (it draws the flame chart on a canvas):
//   - document.title becomes "<file name> - speedscope" once a profile has
//     been imported (it stays "speedscope" while loading or on failure);
//   - the toolbar shows the current profile's name and "(k/N)", and a
//     hidden profile selector table lists every profile (a thread of a
//     Chrome trace: "proc (pid P), thread (tid T)"), one <tr title=...>;
//   - the sandwich view (key "3") is an HTML table whose "Symbol Name"
//     column lists the functions of the current profile; it is virtualized
//     (only the rows in view exist), so we scroll it to the end;
//   - key "n" shows the next profile;
//   - failures: an alert() ("Unrecognized format!", "...but it's empty!")
//     or the text "Something went wrong."; misnested input shows only as
//     console.warn ("Tried to end ...", "... still open at end of profile").
//
// Exit: 0 and "ok: ..." when loaded and every NAME was seen; 1 and
// "not ok: ..." with what was seen; 77 and "skip: ..." when Chromium
// cannot be started. Environment: CHROMIUM (default /usr/bin/chromium),
// VIEW_TIMEOUT_MS (default 30000), VIEW_ALLOW_WARNINGS=1 (speedscope's
// nesting warnings do not fail the check).
'use strict';
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');

const SPEEDSCOPE = path.join(__dirname, 'node_modules', 'speedscope', 'dist', 'release');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const TIMEOUT = Number(process.env.VIEW_TIMEOUT_MS || 30000);
const ALLOW_WARNINGS = process.env.VIEW_ALLOW_WARNINGS === '1';
const MAX_ROWS = 200000; // bound on symbol rows read per profile

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css',
  '.png': 'image/png', '.ico': 'image/x-icon', '.woff2': 'font/woff2',
  '.wasm': 'application/wasm', '.json': 'application/json', '.txt': 'text/plain',
};

function usage() {
  process.stderr.write('usage: browser-check.js PROFILE SCREENSHOT.png NAME [NAME...]\n');
  process.exit(2);
}

// Serves speedscope's dist/release at / and the one profile at
// /profile/<its file name>, on 127.0.0.1 only.
function serve(profile) {
  const profName = path.basename(profile);
  const server = http.createServer((req, res) => {
    let url;
    try {
      url = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    } catch (e) {
      res.writeHead(400); res.end(); return;
    }
    let file;
    if (url === '/profile/' + profName) file = profile;
    else if (url === '/') file = path.join(SPEEDSCOPE, 'index.html');
    else {
      file = path.join(SPEEDSCOPE, path.normalize(url));
      if (!file.startsWith(SPEEDSCOPE + path.sep)) { res.writeHead(403); res.end(); return; }
    }
    fs.readFile(file, (err, data) => {
      if (err) { res.writeHead(404); res.end(); return; }
      const type = file === profile ? 'application/octet-stream'
        : TYPES[path.extname(file)] || 'application/octet-stream';
      res.writeHead(200, { 'Content-Type': type, 'Access-Control-Allow-Origin': '*',
        'Cache-Control': 'no-store' });
      res.end(data);
    });
  });
  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

// Distinct colours in the PNG, and the share of "coloured" pixels (channel
// spread > 40: speedscope's frames are pastel, its chrome is grey) below
// the 24-pixel toolbar.
function pngStats(file) {
  const { PNG } = require('pngjs');
  const png = PNG.sync.read(fs.readFileSync(file));
  const colours = new Set();
  let coloured = 0, counted = 0;
  for (let y = 0; y < png.height; y++) {
    for (let x = 0; x < png.width; x++) {
      const i = (y * png.width + x) * 4;
      const r = png.data[i], g = png.data[i + 1], b = png.data[i + 2];
      colours.add((r << 16) | (g << 8) | b);
      if (y >= 24) {
        counted++;
        if (Math.max(r, g, b) - Math.min(r, g, b) > 40) coloured++;
      }
    }
  }
  return { width: png.width, height: png.height, colours: colours.size,
    colouredPct: counted ? (100 * coloured) / counted : 0 };
}

// A loaded flame chart has many colours (text is anti-aliased) and its
// frames cover far more than 0.5% of the area below the toolbar.
function isBlank(png) {
  return png.colours < 16 || png.colouredPct < 0.5;
}

function pngText(png) {
  return `${png.width}x${png.height}, ${png.colours} colours, ${png.colouredPct.toFixed(1)}% coloured`;
}

// In the page: the state speedscope shows.
function pageState() {
  const text = document.body ? document.body.innerText : '';
  let profiles = [...document.querySelectorAll('tr[title]')].map((tr) => tr.title);
  // One profile: no selector; its name is the toolbar's line after the tabs.
  if (profiles.length === 0) profiles = text.split('\n').slice(1, 2);
  const counter = [...document.querySelectorAll('span')]
    .map((s) => /^\((\d+)\/(\d+)\)$/.exec(s.textContent.trim())).find((m) => m);
  return {
    title: document.title,
    error: text.includes('Something went wrong.'),
    profiles,
    // one profile: no "(k/N)" counter
    index: counter ? Number(counter[1]) : 1,
    count: counter ? Number(counter[2]) : 1,
  };
}

// In the page: the sandwich table's scroller (the element after the table
// whose header is "Symbol Name"), or null.
function symbolScroller() {
  const th = [...document.querySelectorAll('th')].find((e) => e.textContent.trim() === 'Symbol Name');
  if (!th) return null;
  const table = th.closest('table');
  return table ? table.nextElementSibling : null;
}

async function readSymbols(page) {
  const names = new Set();
  // Scroll the virtualized table one screen at a time to its end.
  await page.evaluate(`(${symbolScroller.toString()})()?.scrollTo(0, 0)`);
  for (let step = 0; step < MAX_ROWS / 10; step++) {
    await page.waitForTimeout(step === 0 ? 50 : 20);
    const r = await page.evaluate(`(() => {
      const sc = (${symbolScroller.toString()})();
      if (!sc) return null;
      const rows = [...sc.querySelectorAll('tr')].map((tr) => {
        const td = tr.querySelectorAll('td');
        return td.length ? td[td.length - 1].textContent : null;
      }).filter((x) => x !== null);
      const end = sc.scrollTop + sc.clientHeight >= sc.scrollHeight - 1;
      if (!end) sc.scrollTop += Math.max(sc.clientHeight - 20, 20);
      return { rows, end };
    })()`);
    if (!r) return null;
    r.rows.forEach((n) => names.add(n));
    if (r.end || names.size >= MAX_ROWS) break;
  }
  return names;
}

async function main() {
  // --png-stats FILE: the blank-screenshot rule alone (for the tests).
  if (process.argv[2] === '--png-stats' && process.argv[3]) {
    const png = pngStats(process.argv[3]);
    const blank = isBlank(png);
    console.log(`${blank ? 'blank' : 'not blank'}: ${pngText(png)}`);
    process.exit(blank ? 1 : 0);
  }
  const [profile, shot, ...want] = process.argv.slice(2);
  if (!profile || !shot || want.length === 0) usage();
  if (!fs.existsSync(profile)) {
    console.log(`not ok: ${profile}: no such file`);
    process.exit(1);
  }
  if (!fs.existsSync(path.join(SPEEDSCOPE, 'index.html'))) {
    console.log(`skip: speedscope is not installed in ${SPEEDSCOPE} (run npm ci in tests/view)`);
    process.exit(77);
  }
  const { chromium } = require('playwright-core');
  const server = await serve(profile);
  const port = server.address().port;
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'view-chromium-'));
  const t0 = Date.now();
  let ctx;
  try {
    ctx = await chromium.launchPersistentContext(userDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1200, height: 700 },
      timeout: 60000,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        // speedscope draws with WebGL: SwiftShader (software) stands in for the GPU
        '--enable-unsafe-swiftshader'],
    });
  } catch (e) {
    server.close();
    fs.rmSync(userDir, { recursive: true, force: true });
    console.log(`skip: chromium (${CHROMIUM}) could not be started: ${String(e.message).split('\n')[0]}`);
    process.exit(77);
  }
  const tLaunch = Date.now() - t0;
  const seen = { dialogs: [], warnings: [], errors: [], webgl: false };
  let code = 1;
  const out = [];
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    page.on('dialog', (d) => { seen.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
    page.on('pageerror', (e) => seen.errors.push(e.message));
    page.on('console', (m) => {
      const t = m.text();
      if (t.startsWith('WebGL initialized')) seen.webgl = true;
      if (m.type() === 'warning' && /Tried to end|still open at end of profile/.test(t)) seen.warnings.push(t);
      if (m.type() === 'error') seen.errors.push(t);
    });
    // Anything but this server is refused: speedscope needs nothing else.
    await page.route((url) => !url.href.startsWith(`http://127.0.0.1:${port}/`), (r) => r.abort());
    const profName = path.basename(profile);
    const wantTitle = `${profName} - speedscope`;
    const t1 = Date.now();
    await page.goto(`http://127.0.0.1:${port}/#profileURL=${encodeURIComponent('/profile/' + profName)}`);
    // Loaded, failed, or timed out.
    let st;
    for (;;) {
      st = await page.evaluate(pageState);
      if (st.title === wantTitle) break;
      if (st.error || seen.dialogs.length || Date.now() - t1 > TIMEOUT) break;
      await page.waitForTimeout(50);
    }
    const tLoad = Date.now() - t1;
    if (st.title !== wantTitle) {
      const why = st.error ? 'speedscope shows "Something went wrong."'
        : seen.dialogs.length ? `speedscope said: ${seen.dialogs.join(' | ')}`
        : `not loaded after ${TIMEOUT} ms`;
      out.push(`not ok: ${profile} did not load: ${why}; page title "${st.title}"; WebGL ` +
        (seen.webgl ? 'initialized' : 'never initialized (speedscope needs it to load anything)'));
      if (seen.errors.length) out.push(`  errors: ${seen.errors.slice(0, 5).join(' | ')}`);
      await page.screenshot({ path: shot }).catch(() => {});
      return;
    }
    // Let the flame chart draw, then the screenshot of profile 1's time order.
    await page.waitForTimeout(300);
    await page.screenshot({ path: shot });
    const png = pngStats(shot);

    // Symbols of every profile, from the sandwich view.
    await page.keyboard.press('3');
    const found = new Map(); // name -> [profile index]
    const all = new Set();
    for (let k = 1; k <= st.count; k++) {
      if (k > 1) {
        await page.keyboard.press('n');
        await page.waitForFunction((want) => {
          const c = [...document.querySelectorAll('span')]
            .map((s) => /^\((\d+)\/(\d+)\)$/.exec(s.textContent.trim())).find((m) => m);
          return c && Number(c[1]) === want;
        }, k, { timeout: 5000 });
      }
      const syms = await readSymbols(page);
      if (!syms) { out.push(`not ok: no sandwich table for profile ${k}`); return; }
      for (const s of syms) {
        all.add(s);
        if (!found.has(s)) found.set(s, []);
        found.get(s).push(k);
      }
    }
    await page.keyboard.press('1');
    // A name as given: speedscope would show a trace event's args after
    // it ("main {...}"), which our -f chrome does not write
    const profilesOf = (n) => {
      const ks = found.get(n) || [];
      return ks.length ? [...new Set(ks)].sort((a, b) => a - b) : null;
    };
    const missing = want.filter((n) => !profilesOf(n));
    const blank = isBlank(png);
    const profText = `${st.count} profile${st.count === 1 ? '' : 's'}: ${st.profiles.join('; ')}`;
    if (missing.length || blank || (seen.warnings.length && !ALLOW_WARNINGS) || seen.errors.length) {
      out.push(`not ok: ${profile} loaded as "${st.title}" (${profText})`);
      if (missing.length) out.push(`  missing names: ${missing.join(', ')}`);
      out.push(`  symbols seen: ${[...all].slice(0, 60).join(', ')}${all.size > 60 ? ', ...' : ''}`);
      if (blank) out.push(`  screenshot looks blank: ${pngText(png)}`);
      if (seen.warnings.length) out.push(`  speedscope warnings: ${seen.warnings.slice(0, 5).join(' | ')}`);
      if (seen.errors.length) out.push(`  page errors: ${seen.errors.slice(0, 5).join(' | ')}`);
      return;
    }
    out.push(`ok: ${profile} loaded in speedscope as "${st.title}" (${profText}); ` +
      `names: ${want.map((n) => `${n} [${profilesOf(n).join(',')}]`).join(', ')}; ` +
      `screenshot ${shot} ${pngText(png)}; chromium ${tLaunch} ms, load ${tLoad} ms` +
      (seen.warnings.length ? `; ${seen.warnings.length} speedscope warnings allowed` : ''));
    code = 0;
  } catch (e) {
    out.push(`not ok: ${profile}: ${String(e.message).split('\n')[0]}`);
  } finally {
    await ctx.close().catch(() => {});
    server.close();
    fs.rmSync(userDir, { recursive: true, force: true });
    out.forEach((l) => console.log(l));
    process.exitCode = code;
  }
}

// svg-check.js uses the blank-screenshot rule too.
module.exports = { pngStats, isBlank, pngText };
if (require.main === module) {
  main().catch((e) => { console.log(`not ok: ${e.stack || e}`); process.exit(1); });
}
