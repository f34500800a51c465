/* core/plot.h - figures for the reports, drawn by PLplot into SVG files.
 *
 * A thin layer over PLplot: a figure is one or more panels stacked
 * vertically, each with axes (labels with units), any number of series
 * (lines or points) and a legend.  Every call makes its own PLplot stream
 * and ends it, and restores the caller's current stream, so nothing of
 * PLplot's state is left behind between figures.
 *
 * Lines of more than 900 points are drawn through every k-th point: a
 * figure is about 900 pixels wide, and the SVG stays small.
 *
 * Why PLplot: a well-kept C plotting library in Debian with an SVG driver
 * (no X server, no fonts to ship) whose output every browser shows, and
 * cairo drivers for PDF and PNG (plplot-driver-cairo).
 */
#ifndef PL_CORE_PLOT_H
#define PL_CORE_PLOT_H

#include "core/error.h"

#include <stddef.h>

/* PL_PLOT_BARS: vertical error bars at x[i] from y[i] to y[n + i] (y
 * holds 2n values). */
enum { PL_PLOT_LINE = 0, PL_PLOT_POINTS = 1, PL_PLOT_DASHED = 2,
       PL_PLOT_DOTTED = 3, PL_PLOT_BARS = 4 };

typedef struct {
    const double *x, *y;
    size_t n;
    const char *label;       /* legend text; NULL: not in the legend.  A
                                labelled series of no points is a legend
                                entry only (a style key) */
    int color;               /* 0..9, a fixed palette readable on white;
                                -1: black */
    int style;               /* PL_PLOT_LINE (solid), _POINTS, _DASHED
                                (dashes 2 mm long, 2 mm apart), _DOTTED
                                (marks of 1 mm, 1 mm apart, which read as
                                dots), _BARS */
} pl_plot_series;

/* A heat map under a panel's series: cell (i, j) centred on (x[i], y[j])
 * (cell edges halfway to the neighbours), coloured by z[i * ny + j] on a
 * blue-to-yellow scale from zmin to zmax; a NaN cell is left white. */
typedef struct {
    size_t nx, ny;
    const double *x, *y, *z;
    double zmin, zmax;
} pl_plot_grid;

typedef struct {
    const char *title, *xlabel, *ylabel;
    double xmin, xmax, ymin, ymax;   /* NaN: from the data */
    const pl_plot_series *series;
    size_t n_series;
} pl_plot_panel;

/* Draws the panels (top to bottom) into an SVG file of width x height
 * pixels, the legend to the right of the frame, outside the data.
 * PL_EIO when the file cannot be written; PL_EINVAL for a panel without
 * data. */
pl_status pl_plot_svg(const char *path, int width, int height,
                      const pl_plot_panel *panels, size_t n_panels,
                      pl_err *err);

/* The same figure as BASE.svg, BASE.pdf and BASE.png (PLplot's cairo
 * drivers, for a paper's manuscript and slides). */
pl_status pl_plot_files(const char *base, int width, int height,
                        const pl_plot_panel *panels, size_t n_panels,
                        pl_err *err);

/* A map of categories over a grid (a basin map): cell[iy * nx + ix] is
 * the category of the point (x_ix, y_iy), the grid spanning [xmin, xmax]
 * x [ymin, ymax] with its ends; < 0 is no category (white).  Category c
 * is drawn in the palette's colour c and named names[c] in the legend
 * (names[c] NULL: not in the legend).  Marks are drawn as crosses. */
typedef struct {
    const char *title, *xlabel, *ylabel;
    double xmin, xmax, ymin, ymax;
    size_t nx, ny;
    const int *cell;
    const char *const *names;
    size_t n_names;
    const double *mark_x, *mark_y;
    size_t n_marks;
} pl_plot_map;

/* Draws the map into a PNG file (PLplot's cairo driver: a raster, which
 * for 40,000 cells is a small file where an SVG is megabytes). */
pl_status pl_plot_map_png(const char *path, int width, int height,
                          const pl_plot_map *m, pl_err *err);

/* Draws one panel over a heat map (its series on top) into an SVG file,
 * as pl_plot_svg(). */
pl_status pl_plot_grid_svg(const char *path, int width, int height,
                           const pl_plot_panel *panel, const pl_plot_grid *grid,
                           pl_err *err);

#endif
