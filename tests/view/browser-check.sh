#!/usr/bin/env bash
# tests/view/browser-check.sh PROFILE SCREENSHOT.png NAME [NAME...] - a real
# browser loads one of our profiles: speedscope (npm, pinned in
# tests/view/package-lock.json) in Debian's headless Chromium, served from
# 127.0.0.1. PROFILE is Chrome Trace Event JSON or folded stacks (speedscope
# detects the format from the content; a name ending in .chrome.json or
# .collapsedstack.txt selects an importer by name instead).
#
# Exit 0 and "ok: ..." when the profile loaded, every NAME is a symbol of
# one of its threads, speedscope warned of no misnested frame and the
# screenshot is not blank; exit 1 and "not ok: ..." with what was seen;
# exit 77 and "skip: ..." when Chromium, node or the npm packages cannot be
# had. The first run installs the packages (npm ci, about 4 s); later runs
# reuse tests/view/node_modules while package-lock.json is unchanged.
# See docs/viewing-tests.md.
#
# browser-check.sh --svg FILE.svg SCREENSHOT.png NAME [options]: our own SVG
# flame graph (ptrace-read -f svg) in the same Chromium, driven by
# svg-check.js (hover, click to zoom, search; see there), with the same
# exits.
set -u
here=$(cd "$(dirname "$0")" && pwd)
js=browser-check.js
if [ "${1:-}" = --svg ]; then
	js=svg-check.js
	shift
fi
if [ $# -lt 3 ]; then
	echo "usage: $0 [--svg] PROFILE SCREENSHOT.png NAME [NAME...]" >&2
	exit 2
fi
chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
	echo "skip: $chromium is not installed (scripts/install-deps test installs Debian's chromium)"
	exit 77
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "skip: node and npm are needed (Node.js 20 or later)"
	exit 77
fi
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
	echo "skip: playwright-core needs Node.js 20 or later, this is $(node --version)"
	exit 77
fi
# npm ci only when node_modules is missing or was installed from another
# package-lock.json; never runs install scripts (nothing downloads a browser).
stamp=$here/node_modules/.view-judges-lock
if ! cmp -s "$here/package-lock.json" "$stamp" 2>/dev/null; then
	log=$(mktemp)
	if ! (cd "$here" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --ignore-scripts \
		--no-audit --no-fund --loglevel=error) >"$log" 2>&1; then
		echo "skip: npm ci in $here failed: $(tail -n 3 "$log" | tr '\n' ' ')"
		rm -f "$log"
		exit 77
	fi
	rm -f "$log"
	cp "$here/package-lock.json" "$stamp"
fi
exec node "$here/$js" "$@"
