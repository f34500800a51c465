/* model/sweep/spec_private.h - what spec.c (the sweep file and its
 * points) and spec_models.c (the models a sweep runs) share: a parsed
 * sweep file and the table of models.  Not part of spec.h's interface. */
#ifndef PL_SWEEP_SPEC_PRIVATE_H
#define PL_SWEEP_SPEC_PRIVATE_H

#include "core/cli.h"
#include "model/sweep/jbuf.h"
#include "model/sweep/spec.h"

#include <stddef.h>

#define MAX_FIXED 48
#define MAX_AXES 12
#define MAX_PERTURB 8
#define MAX_SERIES 8
#define NAME_LEN 32
#define VALUE_LEN 64        /* a number or a word */
#define TEXT_LEN 4096       /* a value: a compound one holds up to 64 tuples */
#define MAX_COMP 4          /* fields of a compound value (M,X,Y) */
#define MAX_ITEMS 64        /* tuples of a repeated option (--particle) */
#define MAX_AXIS_VALUES 1000000
#define SWEEP_NAME_CAP 64   /* as the store's names (db/store.h PL_NAME_MAX + 1) */

/* A parameter's name as the file gives it: an option of the command
 * (v0, particle, hack), or a component of a compound one (v0.vx,
 * particle.2.x).  The components are the option's value names in its
 * --help ("VX,VY", "M,X,Y"), in lower case. */
typedef struct {
    char base[NAME_LEN];    /* the option */
    int kind;               /* its pl_opt_kind */
    int ncomp;              /* compound: its fields; 0: a simple value */
    int repeated;           /* given once per tuple (--particle) */
    int comp;               /* the component named, -1: the whole value */
    int item;               /* repeated: the tuple named, from 1; 0: none */
    char comps[MAX_COMP][NAME_LEN];
    char argh[NAME_LEN];    /* the value's name in the --help: "M,X,Y" */
} pname;

typedef struct {
    char name[NAME_LEN];
    char *value;            /* owned; a compound value canonical: "a,b/c,d" */
    pname pn;
    int line;
} kv;

/* Texts one after another. */
typedef struct {
    char *buf;
    size_t len, cap;
    size_t *off;
    size_t n, ncap;
} strlist;

typedef struct {
    char name[NAME_LEN];
    pname pn;
    int line;               /* of its section's first key */
    strlist vals;
} axis;


typedef struct model model;
typedef void (*run_fn)(const pl_sweep_spec *s, int argc, char **argv,
                       pl_sweep_out *out, pl_jbuf *res, pl_err *err);

struct model {
    const char *name;
    const char *columns;                  /* the result's names */
    const char *series;                   /* the series it can store */
    /* the command's option row of that name (its kind and value names) */
    int (*option)(const char *name, pl_opt *row);
    const char *repeated;                 /* options given once per tuple */
    /* the option parse and the checks every point shares (not the ranges
     * of one point's numbers, which the run reports as its result) */
    pl_status (*check)(int argc, char **argv, pl_err *err);
    run_fn run;
};

struct pl_sweep_spec {
    char *text;
    char path[256];
    char name[SWEEP_NAME_CAP];
    const model *m;
    kv fixed[MAX_FIXED];
    size_t nfixed;
    axis axes[MAX_AXES];
    size_t naxes;
    long repeats;                         /* 0: no [repeat] */
    unsigned long seed;
    kv perturb[MAX_PERTURB];              /* name, width as text */
    double perturb_w[MAX_PERTURB];
    size_t nperturb;
    int series[MAX_SERIES];               /* indices into the model's series */
    size_t nseries;
    double series_rate;
    long long npoints;
    char sha256[65];
    char axes_csv[1024], series_csv[256];
    /* parse state: the section, the line being read (the reader counts) */
    enum { SEC_NONE, SEC_SWEEP, SEC_FIXED, SEC_AXIS, SEC_REPEAT, SEC_CATALOGUE } sec;
    const char *next;
    int line, long_line;
    char raw[256];
    char msg[256];
    char series_text[256];
    int series_line;
    /* the catalogue: the names in [fixed], the numbers they gave */
    char prism[VALUE_LEN], ramp[VALUE_LEN];
    kv cat[MAX_FIXED];
    size_t ncat;
    int cat_section;
};

/* The models a sweep can run, pl_sweep_n_models of them. */
extern const model pl_sweep_models[];
extern const size_t pl_sweep_n_models;

/* The index of name in a comma-separated list, -1 when absent. */
int pl_sweep_find_name(const char *list, const char *name);

#endif
