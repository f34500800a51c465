#!/bin/sh
# tests/model/validate/report_text_test.sh - the report reads right (issue
# 45, "The report's text"), on the fig8 fixture runs processed and
# validated:
#   - the warnings cell lists each warning as an item of its own (a run
#     with no quality record shows every stored warning, one an item);
#   - no finding is printed twice for a run: the hum, each beam's
#     drop-outs and the prism leaving the beams once each, between the
#     quality list and the warnings; "beam N" throughout (never
#     "channel N"), instants to the millisecond (never "3.0998 s");
#   - each figure's caption names every line of its legend with the
#     style PLplot drew its key in (solid, dashed, dotted: read from the
#     SVG's strokes);
#   - each run has its figure of the impacts' ratios, the laws' ratios in
#     its caption the stored ones.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
db=$dir/r.db
fail() { echo "report_text_test: $*" >&2; exit 1; }

sh tests/util/catalogdb.sh "$bin" "$db"
$bin import --manifest fixtures/runs/manifest.csv --db "$db" >/dev/null
$bin process --experiment fig8 --db "$db" >/dev/null 2>&1
$bin validate --experiment fig8 --fit lambda0,t0,beta --db "$db" >/dev/null
# one run as processed before prismlab recorded data quality: no fault
# says any of its warnings, so each is listed
bare=$(sqlite3 "$db" "SELECT r.id FROM run r JOIN experiment e ON e.id = r.experiment_id WHERE e.name = 'fig8' ORDER BY r.id LIMIT 1 OFFSET 2")
sqlite3 "$db" "DELETE FROM run_quality WHERE run_id = $bare"
$bin report --experiment fig8 -o "$dir/report" --db "$db" >/dev/null

python3 - "$dir/report" "$db" "$bare" <<'EOF' || fail "the report's text (above)"
import html, re, sqlite3, sys
from html.parser import HTMLParser

out, db, bare = sys.argv[1], sys.argv[2], int(sys.argv[3])
page = open(out + '/index.html').read()
problems = []

class Rows(HTMLParser):
    """The rows of the table after <h2>Runs</h2>: per cell its bare text
    (outside list items) and its list items."""
    def __init__(self):
        super().__init__()
        self.rows, self.cell, self.item = [], None, None
    def handle_starttag(self, tag, attrs):
        if tag == 'tr':
            self.rows.append([])
        elif tag == 'td':
            self.cell = {'text': '', 'items': []}
            self.rows[-1].append(self.cell)
        elif tag == 'li' and self.cell is not None:
            self.item = ''
    def handle_endtag(self, tag):
        if tag == 'li' and self.item is not None:
            self.cell['items'].append(self.item)
            self.item = None
        elif tag == 'td':
            self.cell = None
    def handle_data(self, d):
        if self.item is not None:
            self.item += d
        elif self.cell is not None:
            self.cell['text'] += d

runs_html = page[page.index('<h2>Runs</h2>'):]
runs_html = runs_html[:runs_html.index('</table>')]
parser = Rows()
parser.feed(runs_html)
rows = {int(r[0]['text']): r for r in parser.rows if r and r[0]['text'].strip().isdigit()}
con = sqlite3.connect(db)
stored = dict(con.execute('SELECT run_id, warnings FROM processing'))

def topics(text):
    """What finding an item is about: the hum, a beam's drop-outs, the
    prism leaving the beams."""
    t = []
    if re.search(r'\bhum\b', text):
        t.append('hum')
    beam = re.search(r'\b(?:beam|channel) (\d)', text)
    if re.search(r'drop', text) and beam:
        t.append('drop-outs of beam ' + beam.group(1))
    if re.search(r'left the beams|lost the prism at', text):
        t.append('the prism leaving the beams')
    return t

seen_all = set()
for run, cells in sorted(rows.items()):
    quality, warnings = cells[-2], cells[-1]
    lines = [l for l in (stored.get(run) or '').split('\n') if l.strip()]
    if warnings['text'].strip():
        problems.append(f'run {run}: warnings run together outside list items: {warnings["text"].strip()!r}')
    for it in warnings['items']:
        if '\n' in it.strip():
            problems.append(f'run {run}: one item holds several warnings: {it!r}')
    if run == bare and warnings['items'] != lines:
        problems.append(f'run {run} (no quality record): warnings listed {warnings["items"]}, stored {lines}')
    findings = quality['items'] + warnings['items']
    count = {}
    for it in findings:
        for t in topics(it):
            count[t] = count.get(t, 0) + 1
        if re.search(r'\bchannel \d', it):
            problems.append(f'run {run}: "channel" where the lab says "beam": {it!r}')
        if re.search(r'\b(?:at|from|to|between|and|around) \d+\.\d{4,} s\b', it):
            problems.append(f'run {run}: an instant past the millisecond: {it!r}')
    for t, k in count.items():
        if k > 1:
            problems.append(f'run {run}: {t} printed {k} times: {findings}')
    seen_all |= set(count)
    print(f'report_text_test: run {run}: {len(quality["items"])} faults, {len(warnings["items"])} '
          f'warnings besides them')
for t in ('hum', 'drop-outs of beam 1', 'drop-outs of beam 2', 'the prism leaving the beams'):
    if t not in seen_all:
        problems.append(f'no run shows {t}: nothing to check it against')

# The legend's keys as PLplot drew them, by their labels.
def legend_styles(svg):
    text = open(svg).read()
    labels = []
    for m in re.finditer(r'<text[^>]*transform="matrix\(([^)]*)\)"[^>]*>(.*?)</text>', text, re.S):
        tx, ty = map(float, m.group(1).split()[-2:])
        labels.append((html.unescape(re.sub('<[^>]+>', '', m.group(2))).strip(), tx, ty))
    lines = []
    for m in re.finditer(r'<polyline[^>]*points="([^"]+)"', text):
        pts = [tuple(map(float, p.split(','))) for p in m.group(1).split()]
        if len(pts) == 2 and abs(pts[0][1] - pts[1][1]) < 0.01:
            lines.append((min(pts[0][0], pts[1][0]), max(pts[0][0], pts[1][0]), pts[0][1]))
    styles = {}
    for name, tx, ty in labels:
        if name not in ('measured', 'line-impact law', 'plastic law'):
            continue
        marks = [b - a for a, b, y in lines if abs(y - ty) < 1.5 and tx - 60 < a and b < tx]
        dots = [1 for n, x, y in labels if n == '\u2022' and abs(y - ty) < 10 and tx - 60 < x < tx]
        if len(dots) >= 3:
            styles[name] = 'dotted'
        elif not marks:
            continue     # a symbol: points, not a line
        elif len(marks) == 1 and marks[0] > 15:
            styles[name] = 'solid'
        else:
            styles[name] = 'dashed' if max(marks) >= 4.5 else 'dotted'
    return styles

WORDS = {'solid': 'solid', 'dashed': 'dashed', 'long dashes': 'dashed', 'dotted': 'dotted'}
figures = re.findall(r'<figure[^>]*><img src="([^"]+\.svg)"[^>]*><figcaption>(.*?)</figcaption>', page, re.S)
if len(figures) < 5:
    problems.append(f'{len(figures)} figures with captions')
for src, cap in figures:
    cap = html.unescape(re.sub('<[^>]+>', '', cap))
    drawn = legend_styles(out + '/' + src)
    for name, style in drawn.items():
        m = re.search(re.escape(name) + r"(?:'s(?: [a-z]+)?)? \((solid|dashed|long dashes|dotted)", cap)
        said = WORDS[m.group(1)] if m else None
        print(f'report_text_test: {src}: {name}: legend {style}, caption {said}')
        if said != style:
            problems.append(f'{src}: the legend draws {name} {style}, the caption says '
                            f'{m.group(1) if m else "nothing of its style"}: {cap[:160]}...')

# each run's figure of its impacts, the laws' ratios in its caption the stored ones
for run in rows:
    m = re.search(rf'<figure id="ratio-run{run}"><img src="(ratio_run{run}\.svg)"[^>]*><figcaption>(.*?)</figcaption>',
                  page, re.S)
    if not m:
        problems.append(f'run {run}: no figure of its impacts\' ratios')
        continue
    cap = html.unescape(re.sub('<[^>]+>', '', m.group(2)))
    for law, style in (('line', 'dashed'), ('plastic', 'dotted')):
        want = con.execute("SELECT ratio_pred FROM validation WHERE run_id = ? AND law = ? AND fit = 'fitted'",
                           (run, law)).fetchone()[0]
        if f'({style}, {want:.5f})' not in cap:
            problems.append(f'run {run}: the {law} law\'s ratio {want:.5f} ({style}) is not in its caption: {cap}')
    n = con.execute('SELECT count(*) FROM impact WHERE run_id = ? AND ratio IS NOT NULL', (run,)).fetchone()[0]
    # the points: the dots left of the legend (its keys are dots too)
    svg = open(out + '/' + m.group(1)).read()
    dots = [float(t.split()[-2]) for t in
            re.findall(r'transform="matrix\(([^)]*)\)"[^>]*>\s*<tspan[^>]*>&#x2022;</tspan>', svg, re.S)]
    legend_x = min(float(t.split()[-2]) for t, text in
                   re.findall(r'transform="matrix\(([^)]*)\)"[^>]*>\s*((?:<tspan[^>]*>[^<]*</tspan>)+)</text>', svg)
                   if html.unescape(re.sub('<[^>]+>', '', text)).startswith('impacts (bars'))
    points = sum(1 for x in dots if x < legend_x - 60)
    print(f'report_text_test: ratio_run{run}.svg: {points} points of {n} impacts with a ratio')
    if points != n or 'bars: 1 sd' not in cap:
        problems.append(f'run {run}: {points} points drawn of {n} impacts with a ratio, caption {cap}')

for p in problems:
    print('report_text_test: FAIL ' + p)
sys.exit(1 if problems else 0)
EOF
echo "report_text_test: ok"
