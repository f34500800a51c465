/* db/cmd_db.c - `prismlab db|prism|ramp|experiment|run`: the store's own
 * commands.  Each parses its options, opens the store and delegates to
 * db/store.c, db/catalog.c and db/run.c; only this file prints. */
#include "commands.h"
#include "core/cli.h"
#include "db/catalog.h"
#include "db/derived.h"
#include "db/run.h"
#include "db/store.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEG (M_PI / 180.0)

/* Options every store command takes. */
enum { OPT_DB = 1000, OPT_HELP };

static int open_store(const char *cmd, const char *db, unsigned flags,
                      pl_store **store)
{
    pl_err err = {0};
    if (pl_store_open(store, pl_cli_db_path(db), flags, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    return PL_EXIT_OK;
}

/* --- prismlab db ---------------------------------------------------------- */

static const char db_usage[] =
    "usage: prismlab db init|check|info [--db FILE]\n\n"
    "  init    create the database (or migrate an older one) and print its\n"
    "          schema version\n"
    "  check   run SQLite's integrity check and verify every chunk's CRC-32;\n"
    "          exit status 2 when anything is wrong, naming run and chunk\n"
    "  info    schema version, journal mode and what the store holds\n";

static void print_problem(void *ctx, long long run, long long chunk,
                          const char *what)
{
    (void)ctx; (void)run; (void)chunk;
    printf("problem: %s\n", what);
}

static long long count_rows(pl_store *store, const char *table)
{
    char sql[96];
    sqlite3_stmt *st;
    long long n = -1;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    if (sqlite3_prepare_v2(pl_store_db(store), sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static int db_info(pl_store *store)
{
    static const char *const tables[] = {
        "prism", "ramp", "experiment", "run", "channel", "chunk",
        "processing", "series", "impact", "simulation", "validation"};
    long long frames = 0;
    sqlite3_stmt *st;

    printf("database: %s\n", pl_store_path(store));
    printf("schema_version: %d (this prismlab knows up to %d)\n",
           pl_store_schema_version(store), pl_store_latest_version());
    printf("journal_mode: wal\n");
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        printf("%s_rows: %lld\n", tables[i], count_rows(store, tables[i]));
    if (sqlite3_prepare_v2(pl_store_db(store),
                           "SELECT COALESCE(sum(n_frames),0) FROM run", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        frames = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    printf("frames_stored: %lld\n", frames);
    return PL_EXIT_OK;
}

int pl_cmd_db(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, OPT_DB},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0}};
    const char *db = NULL, *verb;
    pl_store *store;
    pl_err err = {0};
    int c, rc;

    optind = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == OPT_DB)
            db = optarg;
        else if (c == OPT_HELP) {
            fputs(db_usage, stdout);
            return PL_EXIT_OK;
        } else
            return pl_cli_usage_error("db", "unknown option");
    }
    if (optind + 1 != argc)
        return pl_cli_usage_error("db", "expected one of init, check, info");
    verb = argv[optind];
    if (strcmp(verb, "init") && strcmp(verb, "check") && strcmp(verb, "info"))
        return pl_cli_usage_error("db", "unknown action '%s'", verb);
    rc = open_store("db", db, !strcmp(verb, "init") ? PL_STORE_CREATE : 0,
                    &store);
    if (rc)
        return rc;
    if (!strcmp(verb, "init")) {
        printf("%s: schema version %d\n", pl_store_path(store),
               pl_store_schema_version(store));
        rc = PL_EXIT_OK;
    } else if (!strcmp(verb, "info")) {
        rc = db_info(store);
    } else {
        long long problems = 0;
        if (pl_store_check(store, print_problem, NULL, &problems, &err) != PL_OK)
            rc = pl_cli_fail("db check", &err);
        else if (problems) {
            fprintf(stderr, "prismlab db check: %lld problem%s in '%s'\n",
                    problems, problems == 1 ? "" : "s", pl_store_path(store));
            rc = PL_EXIT_DATA;
        } else {
            printf("%s: ok (integrity, foreign keys, chunk CRCs and tiling)\n",
                   pl_store_path(store));
            rc = PL_EXIT_OK;
        }
    }
    pl_store_close(store);
    return rc;
}

/* --- prismlab prism ------------------------------------------------------- */

static const char prism_usage[] =
    "usage: prismlab prism add NAME --N N --a0 M --length M --material TEXT\n"
    "                          (--mass KG | --density KG_PER_M3) [--source TEXT]\n"
    "       prismlab prism list\n"
    "       prismlab prism import FILE.csv\n"
    "  (all take --db FILE)\n\n"
    "  a0 is the distance from the centre of mass to each edge (m), length\n"
    "  the prism's length along its axis (m).  A CSV file has a header row\n"
    "  naming columns in any order: name, n_edges, a0_m, length_m, mass_kg,\n"
    "  density_kg_m3, material, source.  A bad row imports nothing.\n";

static int print_prism(void *ctx, const pl_prism *p)
{
    (void)ctx;
    printf("%-16s N=%-3d a0=%.4g m  length=%.4g m  mass=%.4g kg  %s\n",
           p->name, p->n_edges, p->a0_m, p->length_m, pl_prism_mass(p),
           p->material);
    return 0;
}

enum { P_N = 1, P_A0, P_LENGTH, P_MASS, P_DENSITY, P_MATERIAL, P_SOURCE,
       R_BETA_DEG, R_BETA_SD_DEG, R_MU_S, R_MU, R_LENGTH, E_DESCRIPTION };

static int parse_prism_opt(int c, pl_prism *p, pl_err *err)
{
    double v;
    switch (c) {
    case P_N:
        if (pl_parse_double("N", optarg, 3, 10000, &v, err))
            return -1;
        if (v != floor(v))
            return pl_err_set(err, PL_EINVAL, "option '--N': expected an "
                              "integer, got '%s'", optarg), -1;
        p->n_edges = (int)v;
        return 0;
    case P_A0: return pl_parse_double("a0", optarg, 1e-6, 10, &p->a0_m, err) ? -1 : 0;
    case P_LENGTH: return pl_parse_double("length", optarg, 1e-6, 10, &p->length_m, err) ? -1 : 0;
    case P_MASS: return pl_parse_double("mass", optarg, 1e-9, 1e6, &p->mass_kg, err) ? -1 : 0;
    case P_DENSITY: return pl_parse_double("density", optarg, 1, 1e5, &p->density_kg_m3, err) ? -1 : 0;
    case P_MATERIAL: snprintf(p->material, sizeof p->material, "%s", optarg); return 0;
    case P_SOURCE: snprintf(p->source, sizeof p->source, "%s", optarg); return 0;
    }
    return 1;
}

static int parse_ramp_opt(int c, pl_ramp *r, pl_err *err)
{
    double v;
    switch (c) {
    case R_BETA_DEG:
        if (pl_parse_double("beta-deg", optarg, 1e-9, 45, &v, err))
            return -1;
        r->beta_rad = v * DEG;
        return 0;
    case R_BETA_SD_DEG:
        if (pl_parse_double("beta-sd-deg", optarg, 0, 45, &v, err))
            return -1;
        r->beta_sd_rad = v * DEG;
        return 0;
    case R_MU_S: return pl_parse_double("mu-s", optarg, 1e-6, 5, &r->mu_s, err) ? -1 : 0;
    case R_MU: return pl_parse_double("mu", optarg, 1e-6, 5, &r->mu, err) ? -1 : 0;
    case R_LENGTH: return pl_parse_double("length", optarg, 1e-6, 1e3, &r->length_m, err) ? -1 : 0;
    case P_MATERIAL: snprintf(r->material, sizeof r->material, "%s", optarg); return 0;
    case P_SOURCE: snprintf(r->source, sizeof r->source, "%s", optarg); return 0;
    }
    return 1;
}

/* The shared shape of `prism`, `ramp` and `experiment`: VERB [NAME|FILE]
 * with options; kind selects the catalogue table. */
typedef enum { KIND_PRISM, KIND_RAMP, KIND_EXPERIMENT } kind_t;

static const struct option catalog_opts[] = {
    {"db", required_argument, NULL, OPT_DB},
    {"help", no_argument, NULL, OPT_HELP},
    {"N", required_argument, NULL, P_N},
    {"a0", required_argument, NULL, P_A0},
    {"length", required_argument, NULL, P_LENGTH},
    {"mass", required_argument, NULL, P_MASS},
    {"density", required_argument, NULL, P_DENSITY},
    {"material", required_argument, NULL, P_MATERIAL},
    {"source", required_argument, NULL, P_SOURCE},
    {"beta-deg", required_argument, NULL, R_BETA_DEG},
    {"beta-sd-deg", required_argument, NULL, R_BETA_SD_DEG},
    {"mu-s", required_argument, NULL, R_MU_S},
    {"mu", required_argument, NULL, R_MU},
    {"description", required_argument, NULL, E_DESCRIPTION},
    {NULL, 0, NULL, 0}};

static const char *const kind_name[] = {"prism", "ramp", "experiment"};

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

static int catalog_add(kind_t kind, pl_store *store, const char *name,
                       pl_prism *p, pl_ramp *r, pl_experiment *e, pl_err *err)
{
    pl_status s;
    if (kind == KIND_PRISM) {
        snprintf(p->name, sizeof p->name, "%s", name);
        s = pl_prism_add(store, p, err);
    } else if (kind == KIND_RAMP) {
        snprintf(r->name, sizeof r->name, "%s", name);
        s = pl_ramp_add(store, r, err);
    } else {
        snprintf(e->name, sizeof e->name, "%s", name);
        s = pl_experiment_add(store, e, err);
    }
    if (s != PL_OK)
        return pl_cli_fail(kind_name[kind], err);
    printf("added %s '%s'\n", kind_name[kind], name);
    return PL_EXIT_OK;
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

static int catalog_cmd(kind_t kind, const char *usage_text, int argc,
                       char **argv)
{
    const char *cmd = kind_name[kind], *db = NULL, *verb;
    pl_prism p;
    pl_ramp r;
    pl_experiment e;
    pl_store *store;
    pl_err err = {0};
    int c, rc, nargs;

    pl_prism_init(&p);
    pl_ramp_init(&r);
    memset(&e, 0, sizeof e);
    optind = 0;
    while ((c = getopt_long(argc, argv, "", catalog_opts, NULL)) != -1) {
        int used = 1;
        if (c == OPT_DB) { db = optarg; continue; }
        if (c == OPT_HELP) { fputs(usage_text, stdout); return PL_EXIT_OK; }
        if (kind == KIND_PRISM)
            used = parse_prism_opt(c, &p, &err);
        else if (kind == KIND_RAMP)
            used = parse_ramp_opt(c, &r, &err);
        else if (c == E_DESCRIPTION) {
            snprintf(e.description, sizeof e.description, "%s", optarg);
            used = 0;
        }
        if (used < 0)
            return pl_cli_usage_error(cmd, "%s", err.msg);
        if (used > 0)
            return pl_cli_usage_error(cmd, "option not valid here");
    }
    if (optind >= argc)
        return pl_cli_usage_error(cmd, "expected an action (add, list%s)",
                                  kind == KIND_EXPERIMENT ? "" : ", import");
    verb = argv[optind];
    nargs = argc - optind - 1;
    if (!strcmp(verb, "list") && nargs == 0) {
        if ((rc = open_store(cmd, db, 0, &store)))
            return rc;
        rc = catalog_list(kind, store, &err);
    } else if (!strcmp(verb, "add") && nargs == 1) {
        /* Validate before opening, so a bad command creates no file. */
        snprintf(p.name, sizeof p.name, "%s", argv[optind + 1]);
        snprintf(r.name, sizeof r.name, "%s", argv[optind + 1]);
        if ((kind == KIND_PRISM && pl_prism_validate(&p, &err)) ||
            (kind == KIND_RAMP && pl_ramp_validate(&r, &err)))
            return pl_cli_usage_error(cmd, "%s", err.msg);
        if ((rc = open_store(cmd, db, PL_STORE_CREATE, &store)))
            return rc;
        rc = catalog_add(kind, store, argv[optind + 1], &p, &r, &e, &err);
    } else if (!strcmp(verb, "import") && nargs == 1 && kind != KIND_EXPERIMENT) {
        if ((rc = open_store(cmd, db, PL_STORE_CREATE, &store)))
            return rc;
        rc = catalog_import(kind, store, argv[optind + 1], &err);
    } else
        return pl_cli_usage_error(cmd, "unknown action or wrong number of "
                                  "arguments: '%s'", verb);
    pl_store_close(store);
    return rc;
}

int pl_cmd_prism(int argc, char **argv)
{
    return catalog_cmd(KIND_PRISM, prism_usage, argc, argv);
}

static const char ramp_usage[] =
    "usage: prismlab ramp add NAME --beta-deg DEG --mu-s MU --material TEXT\n"
    "                         [--mu MU_SLIP] [--beta-sd-deg DEG] [--length M]\n"
    "                         [--source TEXT]\n"
    "       prismlab ramp list\n"
    "       prismlab ramp import FILE.csv\n"
    "  (all take --db FILE)\n\n"
    "  beta is the inclination, mu_s the static friction coefficient of the\n"
    "  prism on this surface, mu the slip coefficient (default mu_s).  CSV\n"
    "  columns: name, material, beta_deg or beta_rad, beta_sd_deg, mu_s, mu,\n"
    "  length_m, source.  A bad row imports nothing.\n";

int pl_cmd_ramp(int argc, char **argv)
{
    return catalog_cmd(KIND_RAMP, ramp_usage, argc, argv);
}

static const char experiment_usage[] =
    "usage: prismlab experiment add NAME [--description TEXT]\n"
    "       prismlab experiment list\n"
    "  (all take --db FILE)\n\n"
    "  An experiment is a named set of runs (e.g. six steel prisms on the\n"
    "  glass ramp); runs name it when they are recorded or imported, and\n"
    "  'prismlab report' writes one report per experiment.\n";

int pl_cmd_experiment(int argc, char **argv)
{
    return catalog_cmd(KIND_EXPERIMENT, experiment_usage, argc, argv);
}

/* --- prismlab run ----------------------------------------------------------- */

static const char run_usage[] =
    "usage: prismlab run list [--experiment NAME]\n"
    "       prismlab run show RUN\n"
    "  (all take --db FILE)\n\n"
    "  list prints one line per run, newest first; show prints everything\n"
    "  stored about one run, its channels and calibration.  Simulated runs\n"
    "  are marked SYNTHETIC.\n";

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
    static const struct option opts[] = {
        {"db", required_argument, NULL, OPT_DB},
        {"help", no_argument, NULL, OPT_HELP},
        {"experiment", required_argument, NULL, 'e'},
        {NULL, 0, NULL, 0}};
    const char *db = NULL, *experiment = NULL, *verb;
    pl_store *store;
    pl_err err = {0};
    int c, rc;

    optind = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == OPT_DB) db = optarg;
        else if (c == 'e') experiment = optarg;
        else if (c == OPT_HELP) { fputs(run_usage, stdout); return PL_EXIT_OK; }
        else return pl_cli_usage_error("run", "unknown option");
    }
    if (optind >= argc)
        return pl_cli_usage_error("run", "expected an action (list, show)");
    verb = argv[optind];
    if (!strcmp(verb, "list") && optind + 1 == argc) {
        if ((rc = open_store("run", db, 0, &store)))
            return rc;
        rc = pl_run_list(store, experiment, print_run_line, NULL, &err)
                 ? pl_cli_fail("run", &err) : PL_EXIT_OK;
    } else if (!strcmp(verb, "show") && optind + 2 == argc) {
        long id;
        pl_run_info info;
        pl_channel ch[64];
        if (pl_parse_long("RUN", argv[optind + 1], 1, 0x7fffffffL, &id, &err))
            return pl_cli_usage_error("run", "%s", err.msg);
        if ((rc = open_store("run", db, 0, &store)))
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
