#!/bin/sh
# tests/util/svgfit.sh - whether every text of PLplot SVG files lies inside
# its picture, as a browser draws it (its fonts, not PLplot's estimate):
#   svgfit.sh FILE.svg...
# Each file is put inline into a page that headless Chromium renders; the
# page compares each <text>'s box (getBoundingClientRect, which ignores
# PLplot's clip paths, so cut text shows) with the <svg>'s.  Prints one
# line a text that sticks out ("FILE: 'Figure 11: ...' 40 px off the
# left") and exits 1 if any does; 2 when Chromium is missing.
set -eu
command -v chromium >/dev/null || { echo "svgfit: chromium is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
flags="--headless --no-sandbox --disable-gpu --disable-background-networking --disable-dev-shm-usage"
bad=0
for svg in "$@"; do
    {
        echo '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0">'
        sed '1,/^<svg/{/^<svg/!d}' "$svg"
        cat <<'JS'
<pre id="svgfit"></pre>
<script>
var s = document.querySelector('svg').getBoundingClientRect(), out = [];
document.querySelectorAll('text').forEach(function (t) {
  var r = t.getBoundingClientRect(), w = [];
  if (r.width === 0) return;
  if (r.left < s.left - 0.5) w.push(Math.round(s.left - r.left) + ' px off the left');
  if (r.right > s.right + 0.5) w.push(Math.round(r.right - s.right) + ' px off the right');
  if (r.top < s.top - 0.5) w.push(Math.round(s.top - r.top) + ' px off the top');
  if (r.bottom > s.bottom + 0.5) w.push(Math.round(r.bottom - s.bottom) + ' px off the bottom');
  if (w.length) out.push("'" + t.textContent + "' " + w.join(', '));
});
document.body.setAttribute('data-svgfit', document.querySelectorAll('text').length + ' texts');
document.getElementById('svgfit').textContent = out.join('\n');
</script></body></html>
JS
    } >"$tmp/page.html"
    timeout 120 chromium $flags --virtual-time-budget=2000 --dump-dom "file://$tmp/page.html" \
        >"$tmp/dom.html" 2>/dev/null || true
    grep -q 'data-svgfit="[1-9][0-9]* texts"' "$tmp/dom.html" || {
        echo "$svg: the browser did not measure its texts"; bad=1; continue; }
    awk -v f="$svg" '{ if (!on && (i = index($0, "<pre id=\"svgfit\">"))) { on = 1; $0 = substr($0, i + 17) }
                       if (!on) next
                       if ((j = index($0, "</pre>"))) { $0 = substr($0, 1, j - 1); on = 0; done = 1 }
                       if ($0 != "") print f ": " $0
                       if (done) exit }' "$tmp/dom.html" >"$tmp/off"
    if [ -s "$tmp/off" ]; then
        cat "$tmp/off"
        bad=1
    fi
done
exit $bad
