/* core/plot.c - PLplot panels into SVG.  See plot.h. */
#include "core/plot.h"

#include "core/atomicfile.h"

#include <math.h>
#include <plplot.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* White background, black axes, then a palette that stays apart on white
 * and in grey print (Okabe-Ito's colour-blind-safe set). */
static const int palette[12][3] = {
    {255, 255, 255}, {0, 0, 0},
    {0, 114, 178}, {213, 94, 0}, {0, 158, 115}, {204, 121, 167},
    {230, 159, 0}, {86, 180, 233}, {120, 120, 120}, {240, 228, 66},
    {0, 0, 0}, {160, 30, 30},
};

enum { MAX_POINTS = 900 };

/* Edge k (0 .. n) of the cells centred on v[0 .. n-1]. */
static double cell_edge(const double *v, size_t n, size_t k)
{
    if (n == 1)
        return k == 0 ? v[0] - 0.5 : v[0] + 0.5;
    if (k == 0)
        return v[0] - 0.5 * (v[1] - v[0]);
    if (k == n)
        return v[n - 1] + 0.5 * (v[n - 1] - v[n - 2]);
    return 0.5 * (v[k - 1] + v[k]);
}

static void range(const pl_plot_panel *p, const pl_plot_grid *grid, double *lo,
                  double *hi, int ydir)
{
    double a = INFINITY, b = -INFINITY;
    if (grid) {   /* the cells' outer edges */
        const double *v = ydir ? grid->y : grid->x;
        size_t n = ydir ? grid->ny : grid->nx;
        a = fmin(cell_edge(v, n, 0), cell_edge(v, n, n));
        b = fmax(cell_edge(v, n, 0), cell_edge(v, n, n));
    }
    for (size_t s = 0; s < p->n_series; s++) {
        const double *v = ydir ? p->series[s].y : p->series[s].x;
        size_t n = p->series[s].n * (ydir && p->series[s].style == PL_PLOT_BARS ? 2 : 1);
        for (size_t i = 0; i < n; i++)
            if (isfinite(v[i])) {
                a = v[i] < a ? v[i] : a;
                b = v[i] > b ? v[i] : b;
            }
    }
    if (!isfinite(a)) {
        a = 0;
        b = 1;
    }
    if (b - a < 1e-12 * (fabs(a) + fabs(b)) || b == a) {
        a -= 0.5 + fabs(a) * 0.05;
        b += 0.5 + fabs(b) * 0.05;
    }
    int points = 0;
    for (size_t k = 0; k < p->n_series; k++)
        points |= p->series[k].style == PL_PLOT_POINTS;
    if (!grid && (ydir || points)) {   /* air above and below; points off the frame's edge */
        double m = 0.05 * (b - a);
        a -= m;
        b += m;
    }
    double want_lo = ydir ? p->ymin : p->xmin, want_hi = ydir ? p->ymax : p->xmax;
    *lo = isnan(want_lo) ? a : want_lo;
    *hi = isnan(want_hi) ? b : want_hi;
}

/* A series' colour index in the palette: color < 0 is black (the style
 * keys of a legend), else one of the ten colours. */
static PLINT colour_of(const pl_plot_series *ser)
{
    return ser->color < 0 ? 1 : 2 + ser->color % 10;
}

/* A line's pattern: PLplot's own 3 (marks of 2 mm, 2 mm apart) for a
 * dashed one; a dotted one is drawn with marks of DOT_MARK um, DOT_SPACE
 * um apart (PLplot has no dotted pattern of its own: its 2, 1 mm marks,
 * was once the "dashed" line that a caption's reader saw dotted), and
 * its legend key as a row of dots (draw_legend()). */
enum { DOT_MARK = 350, DOT_SPACE = 1100, DOT_KEYS = 5 };

static PLINT line_style(int style)
{
    return style == PL_PLOT_DASHED ? 3 : 1;
}

static void set_line_style(int style)
{
    PLINT mark = DOT_MARK, space = DOT_SPACE;
    if (style == PL_PLOT_DOTTED)
        plstyl(1, &mark, &space);
    else
        pllsty(line_style(style));
}

/* The heat map's cells, each a filled rectangle of colour map 1. */
static void draw_grid(const pl_plot_grid *g)
{
    /* a blue-to-yellow ramp (viridis' ends and middle) */
    PLFLT pos[3] = {0, 0.5, 1}, r[3] = {0.27, 0.13, 0.99}, gr[3] = {0.00, 0.57, 0.91},
          b[3] = {0.33, 0.55, 0.14};
    plscmap1l(1, 3, pos, r, gr, b, NULL);
    double span = g->zmax > g->zmin ? g->zmax - g->zmin : 1;
    for (size_t i = 0; i < g->nx; i++)
        for (size_t j = 0; j < g->ny; j++) {
            double z = g->z[i * g->ny + j];
            if (!isfinite(z))
                continue;
            double f = (z - g->zmin) / span;
            plcol1(f < 0 ? 0 : f > 1 ? 1 : f);
            PLFLT x0 = cell_edge(g->x, g->nx, i), x1 = cell_edge(g->x, g->nx, i + 1);
            PLFLT y0 = cell_edge(g->y, g->ny, j), y1 = cell_edge(g->y, g->ny, j + 1);
            PLFLT cx[4] = {x0, x1, x1, x0}, cy[4] = {y0, y0, y1, y1};
            plfill(4, cx, cy);
        }
    plcol0(1);
}

/* --- text that fits the page ----------------------------------------------
 * PLplot's SVG driver leaves the text to the browser's sans-serif and
 * PLplot does not export its string-length estimate (plstrl), so widths
 * are estimated here: PLCHAR_EM of the character height a character
 * (UTF-8 counted as characters).  Measured in Chromium on this project's
 * SVGs (tests/util/svgfit.sh) a title's characters average 0.57 of
 * PLplot's character height; 0.7 leaves room for other fonts and capitals.
 * (The legends need no estimate: pllegend() lays them out, and
 * legend_frac() measures that.) */
#define PLCHAR_EM 0.7

static size_t text_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* The page's width and the current character height, in mm. */
static double page_mm(void)
{
    PLFLT x0, x1, y0, y1;
    plgspa(&x0, &x1, &y0, &y1);
    return x1 - x0;
}

static double char_mm(void)
{
    PLFLT def, ht;
    plgchr(&def, &ht);
    return ht;
}

/* The estimated width of s at the current character height, in mm. */
static double text_mm(const char *s)
{
    return PLCHAR_EM * char_mm() * (double)text_chars(s);
}

/* The frames' right edge leaves room for a legend box of frac of the
 * page's width (as measured with the frame ending at FRAME_RIGHT; it
 * does not narrow with the frame), 0.02 of the frame's width off it.
 * The frame gives way down to half the page; then the legend's text
 * shrinks. */
#define FRAME_LEFT 0.12
#define FRAME_RIGHT 0.97
/* room above the first frame for a title of two lines */
#define FRAME_TOP 0.91
#define LEGEND_CHR 0.62

typedef struct {
    double right;          /* the frames' right edge, page fraction */
    double legend_chr;     /* the legend's character scale */
} layout;

static layout fit_legend(double frac, double chr)
{
    layout l = {FRAME_RIGHT, chr};
    if (frac <= 0)
        return l;
    /* right + 0.02 (right - FRAME_LEFT) + frac <= 0.985 */
    l.right = (0.985 + 0.02 * FRAME_LEFT - frac) / 1.02;
    if (l.right > 0.8)
        l.right = 0.8;      /* a narrow legend: the frame keeps some air */
    if (l.right < 0.5) {
        double room = 0.985 - 0.5 - 0.02 * (0.5 - FRAME_LEFT);
        l.legend_chr = chr * fmax(0.3, room / frac);
        l.right = 0.5;
    }
    return l;
}

/* A line of the title disp character heights above the frame [FRAME_LEFT,
 * right]: centred on the frame when it fits there, else from the page's
 * left margin, and at a smaller height when it is wider than the page. */
static void title_line(const char *s, double disp, double right)
{
    double W = page_mm(), w = text_mm(s), fw = right - FRAME_LEFT;
    double mid = FRAME_LEFT + fw / 2, margin = 0.015;
    if (w / W / 2 <= fmin(mid, 1 - mid) - margin) {
        plmtex("t", disp, 0.5, 0.5, s);
        return;
    }
    double avail = 1 - 2 * margin;
    if (w / W > avail)
        plschr(0, 0.9 * avail / (w / W));
    plmtex("t", disp, (margin - FRAME_LEFT) / fw, 0.0, s);
    plschr(0, 0.9);
}

/* The title over the frame: one line, or two broken at the space nearest
 * the middle when one would not fit the page. */
static void draw_title(const char *title, double right)
{
    if (!title || !*title)
        return;
    plschr(0, 0.9);
    size_t n = strlen(title);
    if (text_mm(title) <= 0.97 * page_mm() || n >= 512) {
        title_line(title, 1.6, right);
        return;
    }
    size_t cut = 0;
    for (size_t i = 1; i + 1 < n; i++)
        if (title[i] == ' ' && (cut == 0 || labs((long)(2 * i) - (long)n) <
                                            labs((long)(2 * cut) - (long)n)))
            cut = i;
    if (cut == 0) {
        title_line(title, 1.6, right);
        return;
    }
    char line[512];
    memcpy(line, title, cut);
    line[cut] = 0;
    title_line(line, 2.9, right);
    title_line(title + cut + 1, 1.6, right);
}

/* --- panels ------------------------------------------------------------ */

/* Whether a panel has a point to draw. */
static int has_data(const pl_plot_panel *p)
{
    for (size_t s = 0; s < p->n_series; s++)
        for (size_t i = 0; i < p->series[s].n; i++)
            if (isfinite(p->series[s].x[i]) && isfinite(p->series[s].y[i]))
                return 1;
    return 0;
}

/* The frame, its axes, labels and title.  A panel without data gets an
 * empty frame that says so: PLplot would refuse its window (the limits
 * are equal, "plwind: Invalid window limits") and draw axes of nothing. */
static void draw_frame(const pl_plot_panel *p, const pl_plot_grid *grid, double y0,
                       double y1, double right)
{
    int empty = !grid && !has_data(p);
    double xlo = 0, xhi = 1, ylo = 0, yhi = 1;
    if (!empty) {
        range(p, grid, &xlo, &xhi, 0);
        range(p, grid, &ylo, &yhi, 1);
    }
    plvpor(FRAME_LEFT, right, y0, y1);
    plwind(xlo, xhi, ylo, yhi);
    plcol0(1);
    plwidth(1.0);
    plschr(0, 0.9);
    /* plain numbers on the axes (up to 6 digits) rather than a shared
     * "x10^n" factor a reader can miss */
    plsxax(6, 0);
    plsyax(8, 0);
    if (grid)
        draw_grid(grid);
    if (empty) {
        plbox("bc", 0, 0, "bc", 0, 0);
        plptex(0.5, 0.5, 1, 0, 0.5, "no data to draw");
    } else {
        plbox(grid ? "bcnst" : "bcnstg", 0, 0, grid ? "bcnstv" : "bcnstvg", 0, 0);
    }
    /* the labels set off from the tick numbers by their widest (6
     * digits and a sign), which pllab's fixed offsets do not allow for */
    plmtex("b", 3.0, 0.5, 0.5, p->xlabel ? p->xlabel : "");
    plmtex("l", 6.2, 0.5, 0.5, p->ylabel ? p->ylabel : "");
    draw_title(p->title, right);
}

/* A line through every k-th point (and the last) of a series of more
 * points than a figure has pixels, which would only make the file heavy. */
static void draw_line(const pl_plot_series *ser)
{
    size_t k = ser->n > MAX_POINTS ? (ser->n + MAX_POINTS - 1) / MAX_POINTS : 1;
    if (k == 1) {
        plline((PLINT)ser->n, ser->x, ser->y);
        return;
    }
    size_t m = 0;
    double *x = malloc((ser->n / k + 2) * sizeof *x);
    double *y = malloc((ser->n / k + 2) * sizeof *y);
    if (x && y) {
        for (size_t i = 0; i < ser->n; i += k, m++) {
            x[m] = ser->x[i];
            y[m] = ser->y[i];
        }
        x[m] = ser->x[ser->n - 1];
        y[m] = ser->y[ser->n - 1];
        plline((PLINT)(m + 1), x, y);
    }
    free(x);
    free(y);
}

static void draw_series(const pl_plot_series *ser)
{
    if (ser->n == 0)
        return;
    plcol0(colour_of(ser));
    if (ser->style == PL_PLOT_BARS) {
        plwidth(1.2);
        plerry((PLINT)ser->n, ser->x, ser->y, ser->y + ser->n);
    } else if (ser->style == PL_PLOT_POINTS) {
        plssym(0, 1.2);
        plpoin((PLINT)ser->n, ser->x, ser->y, 17);
    } else {
        set_line_style(ser->style);
        plwidth(1.6);
        draw_line(ser);
        pllsty(1);
    }
}

/* The legend of the labelled series, right of the frame, outside it;
 * *w receives its box's width (viewport fraction), 0 for none. */
static void draw_legend(const pl_plot_panel *p, double chr, PLFLT *w)
{
    *w = 0;
    size_t nleg = 0;
    for (size_t s = 0; s < p->n_series; s++)
        nleg += p->series[s].label != NULL;
    if (nleg == 0)
        return;
    PLINT *opt = calloc(nleg, sizeof *opt), *col = calloc(nleg, sizeof *col);
    PLINT *lsty = calloc(nleg, sizeof *lsty), *zero = calloc(nleg, sizeof *zero);
    PLINT *nsym = calloc(nleg, sizeof *nsym);
    PLFLT *lw = calloc(nleg, sizeof *lw), *scale = calloc(nleg, sizeof *scale);
    const char **text = calloc(nleg, sizeof *text), **sym = calloc(nleg, sizeof *sym);
    if (opt && col && lsty && zero && nsym && lw && scale && text && sym) {
        size_t k = 0;
        for (size_t s = 0; s < p->n_series; s++) {
            const pl_plot_series *ser = &p->series[s];
            if (!ser->label)
                continue;
            int pts = ser->style == PL_PLOT_POINTS, dots = ser->style == PL_PLOT_DOTTED;
            opt[k] = pts || dots ? PL_LEGEND_SYMBOL : PL_LEGEND_LINE;
            col[k] = colour_of(ser);
            lsty[k] = line_style(ser->style);
            lw[k] = 1.6;
            scale[k] = dots ? 0.5 : 0.8;
            nsym[k] = pts ? 1 : dots ? DOT_KEYS : 0;
            text[k] = ser->label;
            sym[k] = "#[0x2022]";   /* the dot plpoin()'s code 17 draws */
            k++;
        }
        PLFLT h;
        plschr(0, chr);
        pllegend(w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
                 PL_POSITION_RIGHT | PL_POSITION_OUTSIDE,
                 0.02, 0.0, 0.06, 0, 1, 1, (PLINT)nleg, 1, (PLINT)nleg, opt,
                 1.0, 1.0, 2.4, 0.0, col, text, zero, zero, scale, lw, col,
                 lsty, lw, col, scale, nsym, sym);
    }
    free(opt);
    free(col);
    free(lsty);
    free(zero);
    free(nsym);
    free(lw);
    free(scale);
    free(text);
    free(sym);
}

/* One panel in the viewport [FRAME_LEFT, l->right] x [y0, y1]; the
 * legend, when there is one, goes to the right of the frame, outside the
 * data. */
static void draw_panel(const pl_plot_panel *p, const pl_plot_grid *grid, double y0,
                       double y1, const layout *l)
{
    draw_frame(p, grid, y0, y1, l->right);
    if (has_data(p))
        for (size_t s = 0; s < p->n_series; s++)
            draw_series(&p->series[s]);
    PLFLT w;
    draw_legend(p, l->legend_chr, &w);
}

/* The map's legend (a colour box a named category) right of the frame;
 * *w receives its box's width (viewport fraction), 0 for none. */
static void map_legend(const pl_plot_map *m, double chr, PLFLT *w)
{
    PLINT opt[10], col[10], zero[10] = {0}, pat[10] = {0};
    PLFLT scale[10], lw[10];
    const char *text[10];
    PLINT n = 0;
    *w = 0;
    for (size_t c = 0; c < m->n_names && c < 10; c++) {
        if (!m->names[c])
            continue;
        opt[n] = PL_LEGEND_COLOR_BOX;
        col[n] = 2 + (PLINT)c;
        scale[n] = 0.8;
        lw[n] = 1;
        text[n] = m->names[c];
        n++;
    }
    if (n == 0)
        return;
    PLFLT h;
    plschr(0, chr);
    pllegend(w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
             PL_POSITION_RIGHT | PL_POSITION_OUTSIDE, 0.02, 0.0, 0.06, 0, 1, 1,
             n, 1, n, opt, 1.0, 1.0, 2.0, 0.0, col, text, col, pat, scale, lw,
             zero, zero, lw, zero, scale, zero, NULL);
}

/* The cells of a category map, a run of equal cells of a row at a time,
 * in the viewport [FRAME_LEFT, l->right] x [0.12, FRAME_TOP], its marks and
 * legend. */
static void draw_map(const pl_plot_map *m, const layout *l)
{
    double right = l->right;
    double dx = m->nx > 1 ? (m->xmax - m->xmin) / (double)(m->nx - 1) : 1;
    double dy = m->ny > 1 ? (m->ymax - m->ymin) / (double)(m->ny - 1) : 1;
    double x0 = m->xmin - dx / 2, x1 = m->xmax + dx / 2;
    double y0 = m->ymin - dy / 2, y1 = m->ymax + dy / 2;
    plvpor(FRAME_LEFT, right, 0.12, FRAME_TOP);
    plwind(x0, x1, y0, y1);
    for (size_t iy = 0; iy < m->ny; iy++)
        for (size_t ix = 0; ix < m->nx;) {
            int c = m->cell[iy * m->nx + ix];
            size_t e = ix + 1;
            while (e < m->nx && m->cell[iy * m->nx + e] == c)
                e++;
            if (c >= 0) {
                PLFLT px[4] = {x0 + (double)ix * dx, x0 + (double)e * dx,
                               x0 + (double)e * dx, x0 + (double)ix * dx};
                PLFLT py[4] = {y0 + (double)iy * dy, y0 + (double)iy * dy,
                               y0 + (double)(iy + 1) * dy, y0 + (double)(iy + 1) * dy};
                plcol0(2 + c % 10);
                plfill(4, px, py);
            }
            ix = e;
        }
    plcol0(1);
    plwidth(1.0);
    plschr(0, 0.9);
    plsxax(6, 0);
    plsyax(8, 0);
    plbox("bcnst", 0, 0, "bcnstv", 0, 0);
    plmtex("b", 3.0, 0.5, 0.5, m->xlabel ? m->xlabel : "");
    plmtex("l", 6.2, 0.5, 0.5, m->ylabel ? m->ylabel : "");
    draw_title(m->title, right);
    if (m->n_marks) {
        plcol0(1);
        plssym(0, 2.0);
        plwidth(2.0);
        plpoin((PLINT)m->n_marks, m->mark_x, m->mark_y, 5);
    }
    PLFLT w;
    map_legend(m, l->legend_chr, &w);
}

/* The widest legend of the figure as a fraction of the page's width, as
 * pllegend() lays it out with the frame ending at FRAME_RIGHT: drawn on an
 * SVG stream of the same page into /dev/null, since PLplot tells a
 * legend's size only once it is drawn (and its "null" device warns about
 * the legend's fill).  The browsers' fonts are narrower than PLplot's own
 * widths, so what fits here fits there. */
static double legend_frac(int width, int height, const pl_plot_panel *panels,
                          size_t n_panels, const pl_plot_map *map, double chr)
{
    PLINT caller, tmp;
    plgstrm(&caller);
    plmkstrm(&tmp);
    if (tmp < 0)
        return 0;
    plsdev("svg");
    plsfnam("/dev/null");
    plspage(0, 0, width, height, 0, 0);
    plsfont(PL_FCI_SANS, -1, -1);
    plinit();
    pladv(0);
    plvpor(FRAME_LEFT, FRAME_RIGHT, 0.1, 0.9);
    plwind(0, 1, 0, 1);
    PLFLT w = 0, widest = 0;
    if (map) {
        map_legend(map, chr, &w);
        widest = w;
    }
    for (size_t i = 0; i < n_panels; i++) {
        draw_legend(&panels[i], chr, &w);
        widest = fmax(widest, w);
    }
    plend1();
    plsstrm(caller);
    return widest * (FRAME_RIGHT - FRAME_LEFT);
}

/* One figure through one PLplot device ("svg", "pdfcairo", "pngcairo")
 * into path, written whole or not at all: the panels (the first over grid
 * when grid is not NULL), or the map when map is not NULL. */
static pl_status plot_device(const char *device, const char *path, int width,
                             int height, const pl_plot_panel *panels,
                             size_t n_panels, const pl_plot_map *map,
                             const pl_plot_grid *grid, pl_err *err)
{
    /* PLplot writes by name and says nothing when it cannot: the
     * temporary, made here, is known to be writable */
    pl_atomicfile *af;
    if (pl_atomicfile_open(&af, path, err) != PL_OK)
        return err->code;
    PLINT caller, mine;
    plgstrm(&caller);
    plmkstrm(&mine);
    if (mine < 0) {
        pl_atomicfile_abort(af);
        return pl_err_set(err, PL_EIO, "%s: PLplot has no free stream", path);
    }
    plsdev(device);
    plsfnam(pl_atomicfile_temp_path(af));
    plspage(0, 0, width, height, 0, 0);
    for (int i = 0; i < 12; i++)
        plscol0(i, palette[i][0], palette[i][1], palette[i][2]);
    plsfont(PL_FCI_SANS, -1, -1);
    plinit();
    pladv(0);
    /* every panel of a figure keeps the same frame, so that time axes
     * line up; the legend's room is on the right of all of them */
    double chr = map ? 0.7 : LEGEND_CHR;
    layout l = fit_legend(legend_frac(width, height, panels, n_panels, map, chr), chr);
    if (map) {
        if (l.right > 0.72)
            l.right = 0.72;     /* the map's cells stay near square */
        draw_map(map, &l);
        plend1();
        plsstrm(caller);
        return pl_atomicfile_commit(af, err);
    }
    double top = FRAME_TOP, bottom = 0.12, gap = 0.16;
    double h = (top - bottom - gap * (double)(n_panels - 1)) / (double)n_panels;
    for (size_t i = 0; i < n_panels; i++) {
        double y1 = top - (double)i * (h + gap);
        draw_panel(&panels[i], grid, y1 - h, y1, &l);
    }
    plend1();
    plsstrm(caller);
    return pl_atomicfile_commit(af, err);
}

pl_status pl_plot_svg(const char *path, int width, int height,
                      const pl_plot_panel *panels, size_t n_panels,
                      pl_err *err)
{
    if (n_panels == 0)
        return pl_err_set(err, PL_EINVAL, "%s: a figure needs a panel", path);
    return plot_device("svg", path, width, height, panels, n_panels, NULL, NULL, err);
}

pl_status pl_plot_grid_svg(const char *path, int width, int height,
                           const pl_plot_panel *panel, const pl_plot_grid *grid,
                           pl_err *err)
{
    if (!grid || !grid->nx || !grid->ny)
        return pl_err_set(err, PL_EINVAL, "%s: a heat map needs cells", path);
    return plot_device("svg", path, width, height, panel, 1, NULL, grid, err);
}

pl_status pl_plot_files(const char *base, int width, int height,
                        const pl_plot_panel *panels, size_t n_panels,
                        pl_err *err)
{
    static const char *const devices[3][2] = {
        {"svg", "svg"}, {"pdfcairo", "pdf"}, {"pngcairo", "png"}};
    char path[4096];
    if (n_panels == 0)
        return pl_err_set(err, PL_EINVAL, "%s: a figure needs a panel", base);
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s.%s", base, devices[i][1]);
        if (plot_device(devices[i][0], path, width, height, panels, n_panels,
                        NULL, NULL, err) != PL_OK)
            return err->code;
    }
    return PL_OK;
}

pl_status pl_plot_map_png(const char *path, int width, int height,
                          const pl_plot_map *m, pl_err *err)
{
    if (m->nx == 0 || m->ny == 0 || !m->cell)
        return pl_err_set(err, PL_EINVAL, "%s: a map needs cells", path);
    return plot_device("pngcairo", path, width, height, NULL, 0, m, NULL, err);
}
