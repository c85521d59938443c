#!/usr/bin/env bash
# The HTML viewer in headless Chromium: loads without errors and draws non-blank timeline rows.
# usage: bash tests/cli/view_chromium.sh /path/to/neuronsim   (from the repository root)
set -euo pipefail
neuronsim=$1
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

browser=""
for candidate in chromium chromium-browser google-chrome; do
  if command -v "$candidate" >/dev/null 2>&1; then browser=$(command -v "$candidate"); break; fi
done
if [[ -z "$browser" ]]; then
  echo "skipped: no chromium found (install Debian's chromium package)"
  exit 0
fi

# A trace from a real run when `run` works, else the committed synthetic fixture.
trace="$work/trace.json"
if "$neuronsim" run max_pooling_3d_backward --timing-only --trace "$trace" >"$work/run.log" 2>&1 && [[ -s "$trace" ]]; then
  echo "trace from: neuronsim run max_pooling_3d_backward"
else
  cp "$root/tests/traces/fixtures/pipeline.json" "$trace"
  echo "trace from: tests/traces/fixtures/pipeline.json (run not available: $(head -c 200 "$work/run.log"))"
fi
"$neuronsim" view "$trace" -o "$work/view.html"
[[ -s "$work/view.html" ]] || { echo "FAIL: view wrote nothing"; exit 1; }
if grep -qiE '(src|href)="https?:' "$work/view.html"; then echo "FAIL: page loads a network resource"; exit 1; fi

flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --window-size=1400,900)

timeout 120 "$browser" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$work")" --enable-logging=stderr --v=0 \
  --dump-dom "file://$work/view.html" >"$work/dom.html" 2>"$work/console.log" || true
status=$(grep -o 'data-status="[^"]*"' "$work/dom.html" | head -1 || true)
shown=$(grep -o '<span id="status">[^<]*' "$work/dom.html" | sed 's/.*>//' || true)
echo "page status: ${status:-none} (${shown:-no status text})"
if [[ "$status" != 'data-status="ok"' ]]; then
  echo "FAIL: the page did not finish drawing"; grep -i console "$work/console.log" | head -5 || true; exit 1
fi
if grep -E 'CONSOLE|Uncaught' "$work/console.log" | grep -qiE 'error|uncaught'; then
  echo "FAIL: console errors:"; grep -E 'CONSOLE|Uncaught' "$work/console.log" | head -5; exit 1
fi

# The page's self-test drives hover, wheel zoom, drag pan and double-click through DOM events.
timeout 120 "$browser" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$work")" \
  --dump-dom "file://$work/view.html#selftest" >"$work/selftest.html" 2>/dev/null || true
selftest=$(grep -o '<span id="status">[^<]*' "$work/selftest.html" | sed 's/.*>//' || true)
echo "self-test: ${selftest:-no status}"
[[ "$selftest" == *"selftest passed"* ]] || { echo "FAIL: interaction self-test"; exit 1; }

timeout 120 "$browser" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$work")" \
  --screenshot="$work/shot.png" "file://$work/view.html" >/dev/null 2>&1 || true
[[ -s "$work/shot.png" ]] || { echo "FAIL: no screenshot"; exit 1; }
read -r colored width height < <(python3 "$root/tests/browser/png_rows.py" "$work/shot.png")
echo "screenshot ${width}x${height}: $colored pixel rows of the timeline carry event colour"
# Each drawn track is a 14-pixel band; at least three non-blank tracks must show.
if (( colored < 40 )); then echo "FAIL: timeline rows are blank"; exit 1; fi
echo "PASS"
