/* model/sweep/spec.h - a parameter sweep: the sweep file (INI, read with
 * libinih like the rig file), its points, and one point's computation.
 * docs/sweep.md describes the file; in short:
 *
 *     [sweep]
 *     name = prism-phase          ; the sweep's name in the store
 *     model = simulate            ; simulate | dimer
 *     series = omega              ; optional: series stored per point
 *     series-rate = 100           ; their samples per second (default 100)
 *     [fixed]                     ; the command's options, without "--"
 *     a0 = 0.015
 *     duration = 7
 *     [axis N]                    ; one section per axis, slowest first
 *     values = 3, 4, 6, 10        ; a list (numbers or words: line, plastic)
 *     [axis beta-frac]
 *     linear = 0.05, 0.95, 19     ; from, to, count (both ends included)
 *     [axis mu-s]
 *     log = 0.01, 1, 5            ; from, to, count, equal ratios
 *     [catalogue]                 ; the numbers of a prism = and ramp = in
 *     N = 22                      ; [fixed], written by prismlab sweep
 *     [repeat]                    ; optional, the fastest axis
 *     count = 10
 *     seed = 1
 *     perturb = lambda0-deg 0.01  ; NAME WIDTH, ...: + uniform(-WIDTH, WIDTH)
 *
 * Point i runs with the fixed values and axis values given by i in mixed
 * radix (the last axis fastest); the simulate model also takes beta-frac
 * (beta over alpha = pi/N) and lambda0-frac (lambda0 over alpha + beta),
 * so one grid covers every N.  A point's parameters go through the
 * command's own option table, so a sweep refuses what the command
 * refuses, by the same words.
 *
 * A spec is immutable once parsed: any number of threads may compute
 * points of it at once, each with its own pl_sweep_out.
 */
#ifndef PL_MODEL_SWEEP_SPEC_H
#define PL_MODEL_SWEEP_SPEC_H

#include "core/error.h"

#include <stddef.h>

typedef struct pl_sweep_spec pl_sweep_spec;

/* Parses the sweep file's text; path names it in messages ("FILE:LINE:
 * what was expected").  PL_EFORMAT for a bad line, PL_EINVAL for a bad
 * value, an unknown model or series, or a sweep of no points. */
pl_status pl_sweep_spec_parse(pl_sweep_spec **out, const char *text,
                              const char *path, pl_err *err);

/* Frees the spec; NULL is a no-op. */
void pl_sweep_spec_destroy(pl_sweep_spec *s);

/* The [sweep] name, the model's name, and the text's SHA-256 (hex). */
const char *pl_sweep_spec_name(const pl_sweep_spec *s);
const char *pl_sweep_spec_model(const pl_sweep_spec *s);
const char *pl_sweep_spec_sha256(const pl_sweep_spec *s);
const char *pl_sweep_spec_text(const pl_sweep_spec *s);

/* 1 when [fixed] names a prism and a ramp of the catalogue (simulate) and
 * the text has no [catalogue] section with their numbers yet: such a spec
 * computes nothing until pl_sweep_text_resolve() (engine.h) has added it.
 * prism and ramp (may be NULL) receive the names. */
int pl_sweep_spec_unresolved(const pl_sweep_spec *s, const char **prism,
                             const char **ramp);

/* The shortest text that reads back as the same double, as every number
 * of a point is written ("null" for NaN and infinities). */
void pl_sweep_number_text(char out[32], double v);

/* Number of points (the product of the axes' lengths and the repeats). */
long long pl_sweep_spec_points(const pl_sweep_spec *s);

/* Comma-separated lists for the store: axis names (slowest first, "repeat"
 * last when there are repeats), the model's result names, the series. */
const char *pl_sweep_spec_axes(const pl_sweep_spec *s);
const char *pl_sweep_spec_columns(const pl_sweep_spec *s);
const char *pl_sweep_spec_series(const pl_sweep_spec *s);

/* What one point gives, in buffers the computation reuses. */
typedef struct {
    char *params;           /* JSON object: every parameter it ran with */
    char *result;           /* JSON object: the model's summary, or {"error": ...} */
    int ok;                 /* 0: the model refused the parameters or failed */
    double *series;         /* the series one after another */
    size_t series_n;        /* doubles in series */
    double cost_s;          /* the model's time (not stored: varies) */
    /* private: capacities */
    size_t params_cap, result_cap, series_cap;
} pl_sweep_out;

/* Computes point idx (0 .. points-1) into out.  A point the model refuses
 * or fails is not an error: out->ok = 0 and its result says why.  Errors
 * are for idx out of range and out of memory. */
pl_status pl_sweep_compute(const pl_sweep_spec *s, long long idx,
                           pl_sweep_out *out, pl_err *err);

/* Frees out's buffers (not out itself). */
void pl_sweep_out_free(pl_sweep_out *out);

#endif
