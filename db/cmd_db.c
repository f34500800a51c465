/* db/cmd_db.c - `prismlab db|prism|ramp|experiment|run`: the store's own
 * commands.  Each parses its options, opens the store and delegates to
 * db/store.c, db/catalog.c and db/run.c; only this file prints. */
#include "commands.h"
#include "core/cli.h"
#include "db/catalog.h"
#include "db/derived.h"
#include "db/run.h"
#include "db/store.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEG (M_PI / 180.0)

static int open_store(const char *cmd, const char *db, unsigned flags,
                      pl_store **store)
{
    pl_err err = {0};
    if (pl_store_open(store, pl_cli_db_path(db), flags, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    return PL_EXIT_OK;
}

/* --- prismlab db ---------------------------------------------------------- */

static const pl_cli_command db_command = {
    .name = "db",
    .usage = "usage: prismlab db init|check|info [--db FILE]\n",
    .about =
    "  init    create the database (or migrate an older one) and print its\n"
    "          schema version\n"
    "  check   run SQLite's integrity check and verify every chunk's CRC-32;\n"
    "          exit status 2 when anything is wrong, naming run and chunk\n"
    "  info    schema version, journal mode and what the store holds\n",
    .max_args = PL_CLI_ANY_ARGS};

static void print_problem(void *ctx, long long run, long long chunk,
                          const char *what)
{
    (void)ctx; (void)run; (void)chunk;
    printf("problem: %s\n", what);
}

static long long count_rows(pl_store *store, const char *table)
{
    long long n = -1;
    pl_err err = {0};
    return pl_store_count_rows(store, table, &n, &err) == PL_OK ? n : -1;
}

static int db_info(pl_store *store)
{
    static const char *const tables[] = {
        "prism", "ramp", "experiment", "run", "channel", "chunk",
        "processing", "series", "impact", "simulation", "validation"};
    long long frames = 0;
    pl_err err = {0};

    printf("database: %s\n", pl_store_path(store));
    printf("schema_version: %d (this prismlab knows up to %d)\n",
           pl_store_schema_version(store), pl_store_latest_version());
    printf("journal_mode: wal\n");
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        printf("%s_rows: %lld\n", tables[i], count_rows(store, tables[i]));
    if (pl_run_total_frames(store, &frames, &err) != PL_OK)
        frames = 0;
    printf("frames_stored: %lld\n", frames);
    return PL_EXIT_OK;
}

static int db_check(pl_store *store)
{
    pl_err err = {0};
    long long problems = 0;
    if (pl_store_check(store, print_problem, NULL, &problems, &err) != PL_OK)
        return pl_cli_fail("db check", &err);
    if (problems) {
        fprintf(stderr, "prismlab db check: %lld problem%s in '%s'\n",
                problems, problems == 1 ? "" : "s", pl_store_path(store));
        return PL_EXIT_DATA;
    }
    printf("%s: ok (integrity, foreign keys, chunk CRCs and tiling)\n",
           pl_store_path(store));
    return PL_EXIT_OK;
}

int pl_cmd_db(int argc, char **argv)
{
    const char *db = NULL, *verb;
    pl_store *store;
    pl_opt opts[] = {PL_OPT_DB(&db), PL_OPT_END()};
    int nargs, rc = pl_cli_parse(&db_command, opts, argc, argv, &nargs);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    if (nargs != 1)
        return pl_cli_usage_error("db", "expected one of init, check, info");
    verb = argv[1];
    if (strcmp(verb, "init") && strcmp(verb, "check") && strcmp(verb, "info"))
        return pl_cli_usage_error("db", "unknown action '%s'", verb);
    rc = open_store("db", db, !strcmp(verb, "init") ? PL_STORE_CREATE
                                                    : PL_STORE_READONLY, &store);
    if (rc)
        return rc;
    if (!strcmp(verb, "init")) {
        printf("%s: schema version %d\n", pl_store_path(store),
               pl_store_schema_version(store));
        rc = PL_EXIT_OK;
    } else if (!strcmp(verb, "info")) {
        rc = db_info(store);
    } else {
        rc = db_check(store);
    }
    pl_store_close(store);
    return rc;
}

/* --- prismlab prism, ramp, experiment --------------------------------------- */

/* The shared shape of `prism`, `ramp` and `experiment`: VERB [NAME|FILE]
 * with options; kind selects the catalogue table. */
typedef enum { KIND_PRISM, KIND_RAMP, KIND_EXPERIMENT } kind_t;

static const char *const kind_name[] = {"prism", "ramp", "experiment"};

/* What the options of one catalogue command fill. */
typedef struct {
    const char *db;
    pl_prism p;
    pl_ramp r;
    pl_experiment e;
} catalog_entry;

static void catalog_entry_init(catalog_entry *c)
{
    c->db = NULL;
    pl_prism_init(&c->p);
    pl_ramp_init(&c->r);
    memset(&c->e, 0, sizeof c->e);
}

static int print_prism(void *ctx, const pl_prism *p)
{
    (void)ctx;
    printf("%-16s N=%-3d a0=%.4g m  length=%.4g m  mass=%.4g kg  %s\n",
           p->name, p->n_edges, p->a0_m, p->length_m, pl_prism_mass(p),
           p->material);
    return 0;
}

static int print_ramp(void *ctx, const pl_ramp *r)
{
    (void)ctx;
    printf("%-16s beta=%.4f deg  mu_s=%.3g  mu=%.3g  %s\n", r->name,
           r->beta_rad / DEG, r->mu_s, isfinite(r->mu) ? r->mu : r->mu_s,
           r->material);
    return 0;
}

static int print_experiment(void *ctx, const pl_experiment *e)
{
    (void)ctx;
    printf("%-24s %s  %s\n", e->name, e->created_utc, e->description);
    return 0;
}

static int catalog_list(kind_t kind, pl_store *store, pl_err *err)
{
    pl_status s = kind == KIND_PRISM ? pl_prism_list(store, print_prism, NULL, err)
                : kind == KIND_RAMP  ? pl_ramp_list(store, print_ramp, NULL, err)
                : pl_experiment_list(store, print_experiment, NULL, err);
    return s == PL_OK ? PL_EXIT_OK : pl_cli_fail(kind_name[kind], err);
}

/* Validates before opening, so that a bad command creates no file. */
static int catalog_add(kind_t kind, catalog_entry *c, const char *name)
{
    const char *cmd = kind_name[kind];
    pl_store *store;
    pl_err err = {0};
    pl_status s;
    int rc;

    if (pl_name_check(cmd, name, &err) != PL_OK)
        return pl_cli_usage_error(cmd, "%s", err.msg);
    snprintf(c->p.name, sizeof c->p.name, "%s", name);
    snprintf(c->r.name, sizeof c->r.name, "%s", name);
    snprintf(c->e.name, sizeof c->e.name, "%s", name);
    if ((kind == KIND_PRISM && pl_prism_validate(&c->p, &err)) ||
        (kind == KIND_RAMP && pl_ramp_validate(&c->r, &err)))
        return pl_cli_usage_error(cmd, "%s", err.msg);
    if ((rc = open_store(cmd, c->db, 0, &store)))
        return rc;
    s = kind == KIND_PRISM ? pl_prism_add(store, &c->p, &err)
      : kind == KIND_RAMP  ? pl_ramp_add(store, &c->r, &err)
      : pl_experiment_add(store, &c->e, &err);
    if (s != PL_OK)
        rc = pl_cli_fail(cmd, &err);
    else
        printf("added %s '%s'\n", cmd, name);
    pl_store_close(store);
    return rc;
}

static int catalog_import(kind_t kind, pl_store *store, const char *path,
                          pl_err *err)
{
    int count;
    pl_status s = kind == KIND_PRISM ? pl_prism_import_csv(store, path, &count, err)
                                     : pl_ramp_import_csv(store, path, &count, err);
    if (s != PL_OK)
        return pl_cli_fail(kind_name[kind], err);
    printf("imported %d %s%s from %s\n", count, kind_name[kind],
           count == 1 ? "" : "s", path);
    return PL_EXIT_OK;
}

static int catalog_cmd(kind_t kind, const pl_cli_command *command,
                       pl_opt *opts, catalog_entry *c, int argc, char **argv)
{
    const char *cmd = kind_name[kind], *verb;
    pl_store *store;
    pl_err err = {0};
    int nargs, rc = pl_cli_parse(command, opts, argc, argv, &nargs);

    if (rc != PL_CLI_CONTINUE)
        return rc;
    if (nargs == 0)
        return pl_cli_usage_error(cmd, "expected an action (add, list%s)",
                                  kind == KIND_EXPERIMENT ? "" : ", import");
    verb = argv[1];
    if (!strcmp(verb, "add") && nargs == 2)
        return catalog_add(kind, c, argv[2]);
    if (!(!strcmp(verb, "list") && nargs == 1) &&
        !(!strcmp(verb, "import") && nargs == 2 && kind != KIND_EXPERIMENT))
        return pl_cli_usage_error(cmd, "unknown action or wrong number of "
                                  "arguments: '%s'", verb);
    if ((rc = open_store(cmd, c->db, nargs == 1 ? PL_STORE_READONLY : 0, &store)))
        return rc;
    rc = nargs == 1 ? catalog_list(kind, store, &err)
                    : catalog_import(kind, store, argv[2], &err);
    pl_store_close(store);
    return rc;
}

static const pl_cli_command prism_command = {
    .name = "prism",
    .usage =
    "usage: prismlab prism add NAME --N N --a0 M --length M --material TEXT\n"
    "                          (--mass KG | --density KG_PER_M3) [--source TEXT]\n"
    "       prismlab prism list\n"
    "       prismlab prism import FILE.csv\n"
    "  (all take --db FILE)\n",
    .about =
    "The prism catalogue.  A CSV file has a header row naming columns in any\n"
    "order: name, n_edges, a0_m, length_m, mass_kg, density_kg_m3, material,\n"
    "source.  A bad row imports nothing.\n",
    .max_args = PL_CLI_ANY_ARGS};

/* --N: a whole number, read as a number first so that the range message
 * is the one for numbers ("expected a value in [3, 10000]"). */
static pl_status parse_edges(const pl_opt *opt, const char *value, pl_err *err)
{
    double v;
    if (pl_parse_double("N", value, 3, 10000, &v, err) != PL_OK)
        return err->code;
    if (v != floor(v))
        return pl_err_set(err, PL_EINVAL, "option '--N': expected an "
                          "integer, got '%s'", value);
    *(int *)opt->dest = (int)v;
    return PL_OK;
}

int pl_cmd_prism(int argc, char **argv)
{
    catalog_entry c;
    catalog_entry_init(&c);
    pl_opt opts[] = {
        PL_OPT_CALLBACK("N", &c.p.n_edges, parse_edges, "N", "edges, 3 to 10000"),
        PL_OPT_DOUBLE("a0", &c.p.a0_m, 1e-6, 10, "M",
                      "the distance from the centre of mass to each edge, m"),
        PL_OPT_DOUBLE("length", &c.p.length_m, 1e-6, 10, "M",
                      "the prism's length along its axis, m"),
        PL_OPT_DOUBLE("mass", &c.p.mass_kg, 1e-9, 1e6, "KG", "its mass"),
        PL_OPT_DOUBLE("density", &c.p.density_kg_m3, 1, 1e5, "KG_PER_M3",
                      "or its density"),
        PL_OPT_TEXT("material", c.p.material, "TEXT", "e.g. steel"),
        PL_OPT_TEXT("source", c.p.source, "TEXT", "where the numbers come from"),
        PL_OPT_DB(&c.db),
        PL_OPT_END()};
    return catalog_cmd(KIND_PRISM, &prism_command, opts, &c, argc, argv);
}

static const pl_cli_command ramp_command = {
    .name = "ramp",
    .usage =
    "usage: prismlab ramp add NAME --beta-deg DEG --mu-s MU --material TEXT\n"
    "                         [--mu MU_SLIP] [--beta-sd-deg DEG] [--length M]\n"
    "                         [--source TEXT]\n"
    "       prismlab ramp list\n"
    "       prismlab ramp import FILE.csv\n"
    "  (all take --db FILE)\n",
    .about =
    "The ramp catalogue.  CSV columns: name, material, beta_deg or beta_rad,\n"
    "beta_sd_deg, mu_s, mu, length_m, source.  A bad row imports nothing.\n",
    .max_args = PL_CLI_ANY_ARGS};

int pl_cmd_ramp(int argc, char **argv)
{
    catalog_entry c;
    catalog_entry_init(&c);
    pl_opt opts[] = {
        PL_OPT_SCALED("beta-deg", &c.r.beta_rad, 1e-9, 45, DEG, "DEG",
                      "the inclination, degrees"),
        PL_OPT_SCALED("beta-sd-deg", &c.r.beta_sd_rad, 0, 45, DEG, "DEG",
                      "its stated uncertainty"),
        PL_OPT_DOUBLE("mu-s", &c.r.mu_s, 1e-6, 5, "MU",
                      "the static friction coefficient of the prism on it"),
        PL_OPT_DOUBLE("mu", &c.r.mu, 1e-6, 5, "MU_SLIP",
                      "the slip coefficient (default mu-s)"),
        PL_OPT_DOUBLE("length", &c.r.length_m, 1e-6, 1e3, "M", "its length, m"),
        PL_OPT_TEXT("material", c.r.material, "TEXT", "e.g. glass"),
        PL_OPT_TEXT("source", c.r.source, "TEXT", "where the numbers come from"),
        PL_OPT_DB(&c.db),
        PL_OPT_END()};
    return catalog_cmd(KIND_RAMP, &ramp_command, opts, &c, argc, argv);
}

static const pl_cli_command experiment_command = {
    .name = "experiment",
    .usage =
    "usage: prismlab experiment add NAME [--description TEXT]\n"
    "       prismlab experiment list\n"
    "  (all take --db FILE)\n",
    .about =
    "An experiment is a named set of runs (e.g. six steel prisms on the\n"
    "glass ramp); runs name it when they are recorded or imported, and\n"
    "'prismlab report' writes one report per experiment.\n",
    .max_args = PL_CLI_ANY_ARGS};

int pl_cmd_experiment(int argc, char **argv)
{
    catalog_entry c;
    catalog_entry_init(&c);
    pl_opt opts[] = {
        PL_OPT_TEXT("description", c.e.description, "TEXT", "what it is for"),
        PL_OPT_DB(&c.db),
        PL_OPT_END()};
    return catalog_cmd(KIND_EXPERIMENT, &experiment_command, opts, &c, argc, argv);
}

/* --- prismlab run ----------------------------------------------------------- */

static const pl_cli_command run_command = {
    .name = "run",
    .usage =
    "usage: prismlab run list [--experiment NAME]\n"
    "       prismlab run show RUN\n"
    "  (all take --db FILE)\n",
    .about =
    "list prints one line per run, newest first; show prints everything\n"
    "stored about one run, its channels and calibration.  Simulated runs\n"
    "are marked SYNTHETIC.\n",
    .max_args = PL_CLI_ANY_ARGS};

static int print_run_line(void *ctx, const pl_run_info *r)
{
    (void)ctx;
    printf("%5lld  %-20s %-10s %-9s %-11s %9.3f s  %-12s %-12s %s%s\n", r->id,
           r->started_utc, r->source_kind, r->state == PL_RUN_IMPORTED ? "imported"
           : pl_run_state_name(r->state), r->experiment[0] ? r->experiment : "-",
           r->n_frames / r->sample_rate_hz, r->prism[0] ? r->prism : "-",
           r->ramp[0] ? r->ramp : "-", r->synthetic ? "SYNTHETIC " : "",
           r->source_detail);
    return 0;
}

static void print_run(const pl_run_info *r, const pl_channel *ch)
{
    printf("run:            %lld%s\n", r->id,
           r->synthetic ? "   (SYNTHETIC: simulated, not measured)" : "");
    printf("state:          %s", pl_run_state_name(r->state));
    if (r->overrun_frame >= 0)
        printf(" (samples lost from frame %lld)", r->overrun_frame);
    printf("\nstarted_utc:    %s\n", r->started_utc);
    printf("ended_utc:      %s\n", r->ended_utc[0] ? r->ended_utc : "-");
    printf("experiment:     %s\n", r->experiment[0] ? r->experiment : "-");
    printf("prism:          %s\n", r->prism[0] ? r->prism : "-");
    printf("ramp:           %s\n", r->ramp[0] ? r->ramp : "-");
    printf("source:         %s %s\n", r->source_kind, r->source_detail);
    if (r->source_sha256[0])
        printf("source_sha256:  %s\n", r->source_sha256);
    printf("sample_rate:    %g Hz\n", r->sample_rate_hz);
    printf("frames:         %lld (%.3f s)\n", r->n_frames,
           r->n_frames / r->sample_rate_hz);
    printf("format:         %s %s, %d channels\n",
           pl_sample_format_name(r->format), r->little_endian ? "le" : "be",
           r->n_channels);
    if (isfinite(r->lambda0_rad))
        printf("lambda0:        %.4f deg\n", r->lambda0_rad / DEG);
    if (r->pretrigger_frames)
        printf("pretrigger:     %lld frames\n", r->pretrigger_frames);
    if (r->notes[0])
        printf("notes:          %s\n", r->notes);
    for (int i = 0; i < r->n_channels; i++)
        printf("channel %d:      %s h=%.4g m sign=%+d scale=%g m/s/V cal=%s "
               "V=%g%+g*(c-%g)%+g*(c-%g)^2%+g*(c-%g)^3\n", i, ch[i].name,
               ch[i].beam_height_m, ch[i].beam_sign, ch[i].ldv_scale_mps_per_v,
               pl_cal_kind_name(ch[i].cal_kind), ch[i].cal_coef[0],
               ch[i].cal_coef[1], ch[i].cal_origin, ch[i].cal_coef[2],
               ch[i].cal_origin, ch[i].cal_coef[3], ch[i].cal_origin);
}

/* What processing derived, when the run is processed. */
static void print_processing(pl_store *store, long long id)
{
    pl_processing p;
    pl_err err = {0};
    if (pl_derived_get(store, id, &p, &err) != PL_OK) {
        printf("processing:     none (prismlab process %lld)\n", id);
        return;
    }
    printf("processed_utc:  %s (prismlab %s)\n", p.processed_utc, p.version);
    printf("window:         %.4f .. %.4f s (frames %lld .. %lld)\n",
           p.release_t_s, p.end_t_s, p.release_frame, p.end_frame);
    printf("impacts:        %lld\n", p.n_impacts);
    printf("Lp_end:         %.4f\n", p.lp_end);
    printf("omega_last:     %.4f rad/s (mean over the last second)\n",
           p.omega_last_mean);
    printf("omega+/omega-:  %.5f +- %.5f\n", p.ratio_mean, p.ratio_sd);
    if (p.warnings[0]) {
        char *save = NULL;
        for (char *l = strtok_r(p.warnings, "\n", &save); l;
             l = strtok_r(NULL, "\n", &save))
            printf("warning:        %s\n", l);
    }
}

int pl_cmd_run(int argc, char **argv)
{
    const char *db = NULL, *experiment = NULL, *verb;
    pl_store *store;
    pl_err err = {0};
    pl_opt opts[] = {
        PL_OPT_STRING("experiment", &experiment, "NAME", "list: its runs only"),
        PL_OPT_DB(&db),
        PL_OPT_END()};
    int nargs, rc = pl_cli_parse(&run_command, opts, argc, argv, &nargs);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    if (nargs == 0)
        return pl_cli_usage_error("run", "expected an action (list, show)");
    verb = argv[1];
    if (!strcmp(verb, "list") && nargs == 1) {
        if ((rc = open_store("run", db, PL_STORE_READONLY, &store)))
            return rc;
        rc = pl_run_list(store, experiment, print_run_line, NULL, &err)
                 ? pl_cli_fail("run", &err) : PL_EXIT_OK;
    } else if (!strcmp(verb, "show") && nargs == 2) {
        long id;
        pl_run_info info;
        pl_channel ch[64];
        if (pl_parse_long("RUN", argv[2], 1, 0x7fffffffL, &id, &err))
            return pl_cli_usage_error("run", "%s", err.msg);
        if ((rc = open_store("run", db, PL_STORE_READONLY, &store)))
            return rc;
        if (pl_run_get(store, id, &info, &err) ||
            pl_run_channels(store, id, ch, 64, &err))
            rc = pl_cli_fail("run", &err);
        else {
            print_run(&info, ch);
            print_processing(store, id);
            rc = PL_EXIT_OK;
        }
    } else
        return pl_cli_usage_error("run", "unknown action or wrong number of "
                                  "arguments: '%s'", verb);
    pl_store_close(store);
    return rc;
}
