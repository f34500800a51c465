/* commands/cmd_db.c - `prismlab db|prism|ramp|experiment|run`: the store's own
 * commands.  Each parses its options, opens the store and delegates to
 * db/store.c, db/catalog.c and db/run.c; only this file prints. */
#include "commands.h"
#include "core/cli.h"
#include "core/json.h"
#include "core/numtext.h"
#include "db/catalog.h"
#include "db/derived.h"
#include "db/quality.h"
#include "db/run.h"
#include "db/store.h"
#include "db/work.h"
#include "model/validate/answer.h"

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

/* --- JSON, for --json ------------------------------------------------------ */

/* "name": "text" or null when empty, with the separator before it. */
static void json_field_text(FILE *out, const char *sep, const char *name,
                            const char *text)
{
    fprintf(out, "%s\"%s\": ", sep, name);
    if (text[0])
        pl_json_string(out, text);
    else
        fputs("null", out);
}

/* --- prismlab db ---------------------------------------------------------- */

static const pl_cli_command db_command = {
    .name = "db",
    .usage = "usage: prismlab db init|check|info [--json] [--db FILE]\n",
    .about =
    "  init    create the database (or migrate an older one) and print its\n"
    "          schema version\n"
    "  check   run SQLite's integrity check and verify every chunk's CRC-32;\n"
    "          exit status 2 when anything is wrong, naming run and chunk\n"
    "  info    schema version, journal mode and what the store holds\n"
    "          (--json: one JSON object)\n",
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

/* db info as one JSON object: the same fields, numbers as numbers. */
static int db_info_json(pl_store *store, const char *const *tables,
                        size_t n, long long frames)
{
    pl_json_key(stdout, "{", "database");
    pl_json_string(stdout, pl_store_path(store));
    printf(", \"schema_version\": %d, \"latest_schema_version\": %d, "
           "\"journal_mode\": \"wal\", \"rows\": {",
           pl_store_schema_version(store), pl_store_latest_version());
    for (size_t i = 0; i < n; i++) {
        pl_json_key(stdout, i ? ", " : "", tables[i]);
        printf("%lld", count_rows(store, tables[i]));
    }
    printf("}, \"frames_stored\": %lld}\n", frames);
    return PL_EXIT_OK;
}

static int db_info(pl_store *store, int json)
{
    static const char *const tables[] = {
        "prism", "ramp", "experiment", "run", "channel", "chunk",
        "processing", "series", "impact", "simulation", "validation",
        "run_change"};
    long long frames = 0;
    pl_err err = {0};

    if (json) {
        if (pl_run_total_frames(store, &frames, &err) != PL_OK)
            frames = 0;
        return db_info_json(store, tables, sizeof tables / sizeof *tables,
                            frames);
    }
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
    int json = 0;
    pl_store *store;
    pl_opt opts[] = {PL_OPT_FLAG("json", &json, "info: print JSON"),
                     PL_OPT_DB(&db), PL_OPT_END()};
    int nargs, rc = pl_cli_parse(&db_command, opts, argc, argv, &nargs);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    if (nargs != 1)
        return pl_cli_usage_error("db", "expected one of init, check, info");
    verb = argv[1];
    if (strcmp(verb, "init") && strcmp(verb, "check") && strcmp(verb, "info"))
        return pl_cli_usage_error("db", "unknown action '%s'", verb);
    if (json && strcmp(verb, "info"))
        return pl_cli_usage_error("db", "'db %s' takes no option --json", verb);
    rc = open_store("db", db, !strcmp(verb, "init") ? PL_STORE_CREATE
                                                    : PL_STORE_READONLY, &store);
    if (rc)
        return rc;
    if (!strcmp(verb, "init")) {
        printf("%s: schema version %d\n", pl_store_path(store),
               pl_store_schema_version(store));
        rc = PL_EXIT_OK;
    } else if (!strcmp(verb, "info")) {
        rc = db_info(store, json);
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
    int json, n;      /* list: --json, rows printed */
} catalog_entry;

static void catalog_entry_init(catalog_entry *c)
{
    c->db = NULL;
    c->json = c->n = 0;
    pl_prism_init(&c->p);
    pl_ramp_init(&c->r);
    memset(&c->e, 0, sizeof c->e);
}

/* The separator before a JSON row, or the header before the first text
 * row. */
static void list_row(catalog_entry *c, const char *header)
{
    if (c->json)
        fputs(c->n ? ",\n " : "[", stdout);
    else if (!c->n)
        fputs(header, stdout);
    c->n++;
}

static int print_prism(void *ctx, const pl_prism *p)
{
    catalog_entry *c = ctx;
    /* units in the header only: cells are numbers a script can read */
    list_row(c, "name             N     a0_m     length_m  mass_kg   material\n");
    if (c->json) {
        json_field_text(stdout, "{", "name", p->name);
        printf(", \"n_edges\": %d, \"a0_m\": ", p->n_edges);
        pl_json_number(stdout, p->a0_m);
        fputs(", \"length_m\": ", stdout);
        pl_json_number(stdout, p->length_m);
        fputs(", \"mass_kg\": ", stdout);
        pl_json_number(stdout, pl_prism_mass(p));
        json_field_text(stdout, ", ", "material", p->material);
        fputs("}", stdout);
        return 0;
    }
    printf("%-16s %-5d %-8.4g %-9.4g %-9.4g %s\n", p->name, p->n_edges,
           p->a0_m, p->length_m, pl_prism_mass(p), p->material);
    return 0;
}

static int print_ramp(void *ctx, const pl_ramp *r)
{
    catalog_entry *c = ctx;
    list_row(c, "name             beta_deg  mu_s      mu        material\n");
    if (c->json) {
        json_field_text(stdout, "{", "name", r->name);
        fputs(", \"beta_deg\": ", stdout);
        pl_json_degrees(stdout, r->beta_rad);
        fputs(", \"beta_sd_deg\": ", stdout);
        pl_json_degrees(stdout, r->beta_sd_rad);
        fputs(", \"mu_s\": ", stdout);
        pl_json_number(stdout, r->mu_s);
        fputs(", \"mu\": ", stdout);
        pl_json_number(stdout, isfinite(r->mu) ? r->mu : r->mu_s);
        fputs(", \"length_m\": ", stdout);
        pl_json_number(stdout, r->length_m);
        json_field_text(stdout, ", ", "material", r->material);
        fputs("}", stdout);
        return 0;
    }
    printf("%-16s %-9.4f %-9.3g %-9.3g %s\n", r->name, r->beta_rad / DEG,
           r->mu_s, isfinite(r->mu) ? r->mu : r->mu_s, r->material);
    return 0;
}

static int print_experiment(void *ctx, const pl_experiment *e)
{
    catalog_entry *c = ctx;
    list_row(c, "name                     created_utc           description\n");
    if (c->json) {
        json_field_text(stdout, "{", "name", e->name);
        json_field_text(stdout, ", ", "created_utc", e->created_utc);
        json_field_text(stdout, ", ", "description", e->description);
        fputs("}", stdout);
        return 0;
    }
    printf("%-24s %s  %s\n", e->name, e->created_utc, e->description);
    return 0;
}

static int catalog_list(kind_t kind, catalog_entry *c, pl_store *store,
                        pl_err *err)
{
    pl_status s = kind == KIND_PRISM ? pl_prism_list(store, print_prism, c, err)
                : kind == KIND_RAMP  ? pl_ramp_list(store, print_ramp, c, err)
                : pl_experiment_list(store, print_experiment, c, err);
    if (s != PL_OK)
        return pl_cli_fail(kind_name[kind], err);
    if (c->json)
        puts(c->n ? "]" : "[]");
    return PL_EXIT_OK;
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
    else {
        printf("added %s '%s'\n", cmd, name);
        if (kind == KIND_RAMP && !(c->r.length_m > 0))
            fprintf(stderr, "prismlab ramp: warning: '%s' has no --length: "
                    "simulations on it roll on an endless ramp\n", name);
    }
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
    rc = nargs == 1 ? catalog_list(kind, c, store, &err)
                    : catalog_import(kind, store, argv[2], &err);
    pl_store_close(store);
    return rc;
}

static const pl_cli_command prism_command = {
    .name = "prism",
    .usage =
    "usage: prismlab prism add NAME --N N --a0 M --length M --material TEXT\n"
    "                          (--mass KG | --density KG_PER_M3) [--source TEXT]\n"
    "       prismlab prism list [--json]\n"
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
        PL_OPT_FLAG("json", &c.json, "list: print JSON"),
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
    "       prismlab ramp list [--json]\n"
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
        PL_OPT_FLAG("json", &c.json, "list: print JSON"),
        PL_OPT_DB(&c.db),
        PL_OPT_END()};
    return catalog_cmd(KIND_RAMP, &ramp_command, opts, &c, argc, argv);
}

static const pl_cli_command experiment_command = {
    .name = "experiment",
    .usage =
    "usage: prismlab experiment add NAME [--description TEXT]\n"
    "       prismlab experiment list [--json]\n"
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
        PL_OPT_FLAG("json", &c.json, "list: print JSON"),
        PL_OPT_DB(&c.db),
        PL_OPT_END()};
    return catalog_cmd(KIND_EXPERIMENT, &experiment_command, opts, &c, argc, argv);
}

/* --- prismlab run ----------------------------------------------------------- */

static const pl_cli_command run_command = {
    .name = "run",
    .usage =
    "usage: prismlab run list [--experiment NAME] [--json]\n"
    "       prismlab run show RUN [--json]\n"
    "       prismlab run set RUN [--prism P] [--ramp R] [--experiment E]\n"
    "                        [--h1 M] [--h2 M] [--sign1 +-1] [--sign2 +-1]\n"
    "                        [--ldv-scale MPS_PER_V] [--lambda0-deg DEG |\n"
    "                        --no-lambda0] [--notes TEXT]\n"
    "       prismlab run delete RUN... --yes\n"
    "  (all take --db FILE)\n",
    .about =
    "list prints one line per run, newest first, under a header row; show\n"
    "prints everything stored about one run, its channels and calibration,\n"
    "its processing, its data quality (good, degraded, suspect or refused,\n"
    "with each fault in words) and the history of its corrections, where its\n"
    "start time comes from, its samples' SHA-256 and the earlier run that\n"
    "holds the same samples, if one does.  Simulated runs are marked\n"
    "SYNTHETIC.  --json prints the same as JSON.\n"
    "\n"
    "set corrects what was written down about a run (a wrong prism, swapped\n"
    "beam heights or signs, a missing release angle) without touching its\n"
    "samples: each change is kept in the run's history (when, field, old\n"
    "and new value; shown by 'run show'), and what was derived from the old\n"
    "values (processing, simulations, validations) is dropped, so process\n"
    "and validate the run again.  h1/sign1 are the first channel's.\n"
    "\n"
    "delete removes runs with their samples and everything derived; --yes\n"
    "is required.  All the runs named go, or none.\n",
    .max_args = PL_CLI_ANY_ARGS};

static void json_run(FILE *out, const pl_run_info *r)
{
    fprintf(out, "{\"id\": %lld", r->id);
    json_field_text(out, ", ", "started_utc", r->started_utc);
    json_field_text(out, ", ", "started_from", r->started_from);
    json_field_text(out, ", ", "ended_utc", r->ended_utc);
    json_field_text(out, ", ", "imported_utc", r->imported_utc);
    json_field_text(out, ", ", "state", pl_run_state_name(r->state));
    json_field_text(out, ", ", "experiment", r->experiment);
    json_field_text(out, ", ", "prism", r->prism);
    json_field_text(out, ", ", "ramp", r->ramp);
    json_field_text(out, ", ", "source_kind", r->source_kind);
    json_field_text(out, ", ", "source_detail", r->source_detail);
    json_field_text(out, ", ", "source_sha256", r->source_sha256);
    if (r->cut_first_frame >= 0) {
        fprintf(out, ", \"cut_first_frame\": %lld, \"cut_at_s\": ", r->cut_first_frame);
        pl_json_number(out, r->cut_first_frame / r->sample_rate_hz);
    } else {
        fputs(", \"cut_first_frame\": null, \"cut_at_s\": null", out);
    }
    fprintf(out, ", \"synthetic\": %s, \"sample_rate_hz\": ",
            r->synthetic ? "true" : "false");
    pl_json_number(out, r->sample_rate_hz);
    fprintf(out, ", \"n_frames\": %lld, \"duration_s\": ", r->n_frames);
    pl_json_number(out, r->n_frames / r->sample_rate_hz);
    fprintf(out, ", \"n_channels\": %d", r->n_channels);
    json_field_text(out, ", ", "sample_format", pl_sample_format_name(r->format));
    fputs(", \"lambda0_deg\": ", out);
    pl_json_degrees(out, r->lambda0_rad);
    json_field_text(out, ", ", "notes", r->notes);
}

typedef struct {
    pl_store *store;
    int json, n;
} list_ctx;

/* The quality column of `run list`: the record's word, "unknown" for a
 * run processed before prismlab recorded it, "" (shown "-", JSON null)
 * for one neither processed nor refused. */
static const char *list_quality(pl_store *store, long long id)
{
    pl_quality q;
    pl_err err = {0};
    if (pl_quality_get(store, id, &q, &err) != PL_OK)
        return "";
    if (!q.quality[0])
        return "unknown";
    /* the column's CHECK allows these four */
    return strcmp(q.quality, "good") == 0       ? "good"
           : strcmp(q.quality, "degraded") == 0 ? "degraded"
           : strcmp(q.quality, "suspect") == 0  ? "suspect"
                                                : "refused";
}

static int print_run_line(void *ctx, const pl_run_info *r)
{
    list_ctx *c = ctx;
    const char *quality = list_quality(c->store, r->id);
    if (c->json) {
        fputs(c->n++ ? ",\n " : "[", stdout);
        json_run(stdout, r);
        json_field_text(stdout, ", ", "quality", quality);
        fputs("}", stdout);
        return 0;
    }
    if (!c->n++)
        printf("%5s  %-20s %-10s %-9s %-8s %-11s %11s  %-12s %-12s %s\n", "id",
               "started_utc", "source", "state", "quality", "experiment",
               "duration", "prism", "ramp", "file or device");
    printf("%5lld  %-20s %-10s %-9s %-8s %-11s %9.3f s  %-12s %-12s %s%s\n", r->id,
           r->started_utc, r->source_kind, r->state == PL_RUN_IMPORTED ? "imported"
           : pl_run_state_name(r->state), quality[0] ? quality : "-",
           r->experiment[0] ? r->experiment : "-",
           r->n_frames / r->sample_rate_hz, r->prism[0] ? r->prism : "-",
           r->ramp[0] ? r->ramp : "-", r->synthetic ? "SYNTHETIC " : "",
           r->source_detail);
    return 0;
}

/* What a run's started_utc is, in words (schemas/011). */
static const char *started_from_words(const char *from)
{
    static const struct { const char *key, *words; } w[] = {
        {"clock", "the recorder's clock as the run began"},
        {"metadata", "the file's prismlab metadata (started_utc=)"},
        {"bwf", "the WAV's broadcast extension (BWF origination date and time, "
                "the recorder's own clock: no zone given)"},
        {"riff", "the WAV's creation date (LIST INFO ICRD)"},
        {"mtime", "the file's modification time less the recording's length "
                  "(the file says nothing of its own)"},
        {"import", "the import's time (imported before prismlab read a "
                   "recording's own time)"}};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        if (!strcmp(from, w[i].key))
            return w[i].words;
    return "not known";
}

/* Whether another run holds the same samples (docs/data-model.md, "Runs
 * that hold the same samples"): the record says so, so that nobody counts
 * the two as two measurements. */
static int print_same_samples(pl_store *store, const pl_run_info *r, int json,
                              pl_err *err)
{
    char text[512];
    long long other = 0;
    if (pl_run_same_samples(store, r->id, &other, err) != PL_OK ||
        pl_run_same_samples_text(store, r->id, text, sizeof text, err) != PL_OK)
        return -1;
    if (json) {
        json_field_text(stdout, ", ", "samples_sha256", r->samples_sha256);
        if (other)
            printf(", \"same_samples_as\": %lld", other);
        else
            fputs(", \"same_samples_as\": null", stdout);
        return 0;
    }
    printf("samples_sha256: %s\n", r->samples_sha256[0] ? r->samples_sha256
           : "not checked (no frames, or still recording)");
    if (text[0])
        printf("same_samples:   %s\n", text);
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
    printf("started_from:   %s\n", started_from_words(r->started_from));
    printf("ended_utc:      %s\n", r->ended_utc[0] ? r->ended_utc : "-");
    if (r->imported_utc[0])
        printf("imported_utc:   %s\n", r->imported_utc);
    printf("experiment:     %s\n", r->experiment[0] ? r->experiment : "-");
    printf("prism:          %s\n", r->prism[0] ? r->prism : "-");
    printf("ramp:           %s\n", r->ramp[0] ? r->ramp : "-");
    printf("source:         %s %s\n", r->source_kind, r->source_detail);
    if (r->source_sha256[0])
        printf("source_sha256:  %s\n", r->source_sha256);
    if (r->cut_first_frame >= 0)   /* import --split-releases (schemas/013) */
        printf("cut:            cut from %s at frame %lld (%.3f s)\n", r->source_detail,
               r->cut_first_frame, r->cut_first_frame / r->sample_rate_hz);
    printf("sample_rate:    %g Hz\n", r->sample_rate_hz);
    printf("frames:         %lld (%.3f s)\n", r->n_frames,
           r->n_frames / r->sample_rate_hz);
    printf("format:         %s %s, %d channel%s\n",
           pl_sample_format_name(r->format), r->little_endian ? "le" : "be",
           r->n_channels, pl_plural_s(r->n_channels));
    if (isfinite(r->lambda0_rad))
        printf("lambda0:        %.4f deg\n", r->lambda0_rad / DEG);
    if (r->pretrigger_frames)
        printf("pretrigger:     %lld frame%s\n", r->pretrigger_frames,
               pl_plural_s(r->pretrigger_frames));
    if (r->notes[0])
        printf("notes:          %s\n", r->notes);
    for (int i = 0; i < r->n_channels; i++)
        printf("channel %d:      %s h%d=%.4g m sign%d=%+d scale=%g m/s/V cal=%s "
               "V=%g%+g*(c-%g)%+g*(c-%g)^2%+g*(c-%g)^3\n", i + 1, ch[i].name,
               i + 1, ch[i].beam_height_m, i + 1, ch[i].beam_sign,
               ch[i].ldv_scale_mps_per_v,
               pl_cal_kind_name(ch[i].cal_kind), ch[i].cal_coef[0],
               ch[i].cal_coef[1], ch[i].cal_origin, ch[i].cal_coef[2],
               ch[i].cal_origin, ch[i].cal_coef[3], ch[i].cal_origin);
    /* a line of its own (the channel lines above are read by scripts):
     * the LDV decoders' delays at DC, channel by channel */
    fputs("decoder_delay: ", stdout);
    for (int i = 0; i < r->n_channels; i++)
        if (ch[i].decoder_delay_s > 0)
            printf("%s%.6g s", i ? ", " : " ", ch[i].decoder_delay_s);
        else
            printf("%snot known", i ? ", " : " ");
    putchar('\n');
}

static void json_channels(const pl_run_info *r, const pl_channel *ch)
{
    fputs(", \"channels\": [", stdout);
    for (int i = 0; i < r->n_channels; i++) {
        printf("%s{\"channel\": %d", i ? ", " : "", i + 1);
        json_field_text(stdout, ", ", "name", ch[i].name);
        fputs(", \"beam_height_m\": ", stdout);
        pl_json_number(stdout, ch[i].beam_height_m);
        printf(", \"beam_sign\": %d, \"ldv_scale_mps_per_v\": ", ch[i].beam_sign);
        pl_json_number(stdout, ch[i].ldv_scale_mps_per_v);
        fputs(", \"decoder_delay_s\": ", stdout);
        pl_json_number(stdout, ch[i].decoder_delay_s > 0 ? ch[i].decoder_delay_s : NAN);
        json_field_text(stdout, ", ", "cal_kind", pl_cal_kind_name(ch[i].cal_kind));
        fputs(", \"cal_origin\": ", stdout);
        pl_json_number(stdout, ch[i].cal_origin);
        fputs(", \"cal_coef\": [", stdout);
        for (int k = 0; k < 4; k++) {
            fputs(k ? ", " : "", stdout);
            pl_json_number(stdout, ch[i].cal_coef[k]);
        }
        fputs("]}", stdout);
    }
    fputs("]", stdout);
}

/* What the impacts' t_s are (issue 33): the transitions' centres or the
 * contacts, and where the decoder's delay came from. */
static void print_impact_t(const pl_processing *p, int json)
{
    char what[32], from[32], shift[32];
    pl_processing_param(p, "impact_t", what, sizeof what);
    pl_processing_param(p, "decoder_delay_from", from, sizeof from);
    pl_processing_param(p, "decoder_shift_s", shift, sizeof shift);
    if (json) {
        json_field_text(stdout, ", ", "impact_t", what);
        json_field_text(stdout, ", ", "decoder_delay_from", from);
        fputs(", \"decoder_shift_s\": ", stdout);
        pl_json_number(stdout, shift[0] ? strtod(shift, NULL) : NAN);
        return;
    }
    if (what[0])
        printf("impact_t:       %s (decoder delay from: %s; t_s moved by %s s)\n", what,
               from[0] ? from : "-", shift[0] ? shift : "0");
}

/* What processing derived, when the run is processed. */
static void print_processing(pl_store *store, long long id, int json)
{
    pl_processing p;
    pl_quality q;
    pl_err err = {0};
    char busy[256];
    if (pl_derived_get(store, id, &p, &err) != PL_OK) {
        if (json)
            fputs(", \"processing\": null", stdout);
        else if (pl_quality_get(store, id, &q, &err) == PL_OK &&
                 strcmp(q.quality, "refused") == 0)
            printf("processing:     none: refused (quality below)\n");
        else if (pl_work_describe(store, id, busy, sizeof busy))
            printf("processing:     none yet: %s\n", busy);
        else
            printf("processing:     none (prismlab process %lld)\n", id);
        return;
    }
    if (json) {
        json_field_text(stdout, ", \"processing\": {", "processed_utc",
                        p.processed_utc);
        json_field_text(stdout, ", ", "version", p.version);
        fputs(", \"release_t_s\": ", stdout);
        pl_json_number(stdout, p.release_t_s);
        fputs(", \"end_t_s\": ", stdout);
        pl_json_number(stdout, p.end_t_s);
        printf(", \"n_impacts\": %lld, \"lp_end\": ", p.n_impacts);
        pl_json_number(stdout, p.lp_end);
        fputs(", \"omega_last_mean\": ", stdout);
        pl_json_number(stdout, p.omega_last_mean);
        fputs(", \"ratio_mean\": ", stdout);
        pl_json_number(stdout, p.ratio_mean);
        fputs(", \"ratio_sd\": ", stdout);
        pl_json_number(stdout, p.ratio_sd);
        print_impact_t(&p, 1);
        json_field_text(stdout, ", ", "warnings", p.warnings);
        fputs("}", stdout);
        return;
    }
    printf("processed_utc:  %s (prismlab %s)\n", p.processed_utc, p.version);
    printf("window:         %.4f .. %.4f s (frames %lld .. %lld)\n",
           p.release_t_s, p.end_t_s, p.release_frame, p.end_frame);
    printf("impacts:        %lld\n", p.n_impacts);
    printf("Lp_end:         %.4f\n", p.lp_end);
    printf("omega_last:     %.4f rad/s (mean over the last second)\n",
           p.omega_last_mean);
    printf("omega+/omega-:  %.5f +- %.5f (1 sd of one impact's ratio; the mean's %.2g)\n",
           p.ratio_mean, p.ratio_sd, p.ratio_mean_se);
    print_impact_t(&p, 0);
    if (p.warnings[0]) {
        char *save = NULL;
        for (char *l = strtok_r(p.warnings, "\n", &save); l;
             l = strtok_r(NULL, "\n", &save))
            printf("warning:        %s\n", l);
    }
}

/* One fault as a JSON object: "kind" and its fields, numbers as numbers;
 * a line that does not parse as {"kind": null, "line": "..."}. */
static int json_fault(void *ctx, const pl_fault *f, const char *line, size_t len)
{
    int *n = ctx;
    char text[2048];
    fputs((*n)++ ? ", " : "", stdout);
    if (!f) {
        snprintf(text, sizeof text, "%.*s", (int)len, line);
        fputs("{\"kind\": null, \"line\": ", stdout);
        pl_json_string(stdout, text);
        fputs("}", stdout);
        return 0;
    }
    fputs("{\"kind\": ", stdout);
    pl_json_string(stdout, f->kind);
    for (int i = 0; i < f->n; i++) {
        const pl_fault_field *fld = &f->field[i];
        double v[PL_FAULT_TEXT_MAX / 2];
        size_t nv = pl_fault_numbers(fld, v, sizeof v / sizeof *v);
        printf(", \"%s\": ", fld->key);   /* a key is [a-z0-9_] */
        if (fld->type == PL_FAULT_STRING)
            pl_json_string(stdout, fld->text);
        else if (fld->type == PL_FAULT_NUMBER)
            pl_json_number(stdout, fld->number);
        else {
            fputs("[", stdout);
            for (size_t k = 0; k < nv; k++) {
                fputs(k ? ", " : "", stdout);
                pl_json_number(stdout, v[k]);
            }
            fputs("]", stdout);
        }
    }
    fputs("}", stdout);
    return 0;
}

/* One fault a line, in words, under the quality line. */
static int print_fault(void *ctx, const pl_fault *f, const char *line, size_t len)
{
    char words[2048];
    (void)ctx;
    if (f)
        pl_fault_describe(f, words, sizeof words);
    else
        snprintf(words, sizeof words, "%.*s", (int)len, line);
    printf("                %s\n", words);
    return 0;
}

/* The data-quality record: its word and its faults (docs/data-model.md,
 * "Data quality"); JSON "quality": null for a run neither processed nor
 * refused, or processed before prismlab recorded it. */
static void print_quality(pl_store *store, long long id, int json)
{
    pl_quality q;
    pl_err err = {0};
    int n = 0;
    if (pl_quality_get(store, id, &q, &err) != PL_OK) {
        if (json)
            fputs(", \"quality\": null, \"faults\": []", stdout);
        return;
    }
    if (json) {
        json_field_text(stdout, ", ", "quality", q.quality);
        fputs(", \"faults\": [", stdout);
        pl_faults_each(q.faults, json_fault, &n);
        fputs("]", stdout);
        return;
    }
    printf("quality:        %s", pl_quality_words(q.quality));
    if (strcmp(q.quality, "refused") == 0)
        printf(" by prismlab %s at %s", q.version, q.recorded_utc);
    printf("\n");
    pl_faults_each(q.faults, print_fault, NULL);
}

static int print_change(void *ctx, const pl_run_change *c)
{
    int *n = ctx;
    if (*n < 0) {    /* JSON */
        fputs(*n == -1 ? "" : ", ", stdout);
        json_field_text(stdout, "{", "changed_utc", c->changed_utc);
        json_field_text(stdout, ", ", "field", c->field);
        json_field_text(stdout, ", ", "old", c->old_value);
        json_field_text(stdout, ", ", "new", c->new_value);
        json_field_text(stdout, ", ", "version", c->version);
        fputs("}", stdout);
        *n = -2;
        return 0;
    }
    printf("corrected:      %s %s: %s -> %s (prismlab %s)\n", c->changed_utc,
           c->field, c->old_value[0] ? c->old_value : "(none)",
           c->new_value[0] ? c->new_value : "(none)", c->version);
    return 0;
}

/* One law's fitted (or recorded) lambda0 in the words of every page
 * (pl_lambda0_words()), or as a JSON object with its 95 % interval (null
 * when not validated under it). */
static void print_law(const char *name, const pl_answer_law *l, int fits, int json)
{
    double half = l->half95_rad / DEG;
    const char *flag = pl_fit_flag_words(l->flag);
    if (json) {
        if (!l->has) {
            printf("\"%s\": null", name);
            return;
        }
        printf("\"%s\": {\"fit\": \"%s\", \"lambda0_deg\": ", name, l->v.fit);
        pl_json_degrees(stdout, l->v.lambda0_rad);
        fputs(", \"lambda0_lo95_deg\": ", stdout);
        pl_json_number(stdout, l->v.lambda0_rad / DEG - half);
        fputs(", \"lambda0_hi95_deg\": ", stdout);
        pl_json_number(stdout, l->v.lambda0_rad / DEG + half);
        fputs(", \"lambda0_stat_sd_deg\": ", stdout);
        pl_json_number(stdout, l->stat_sd_rad / DEG);
        fputs(", \"lambda0_sys_sd_deg\": ", stdout);
        pl_json_number(stdout, l->sys_sd_rad / DEG);
        fputs(", \"max_rel_err\": ", stdout);
        pl_json_number(stdout, l->v.max_rel_err_lp);
        fputs(", \"rms_impacts\": ", stdout);
        pl_json_number(stdout, l->v.rms_err_lp);
        printf(", \"fits\": %s", fits ? "true" : "false");
        json_field_text(stdout, ", ", "flag", flag);
        fputs("}", stdout);
        return;
    }
    printf("lambda0 %s:%*s", name, (int)(8 - strlen(name)), "");
    if (!l->has) {
        printf("-\n");
        return;
    }
    char words[192];
    pl_lambda0_words(&l->v, 1, words, sizeof words);
    printf("%s; ", words);
    /* no relative error where the measured L_p never reached one impact */
    if (isfinite(l->v.max_rel_err_lp))
        printf("max rel. L_p error %.3f %%", 100 * l->v.max_rel_err_lp);
    else
        printf("max rel. L_p error none (the measured L_p never reached 1 impact)");
    printf("; rms %.3f impacts (%s)", l->v.rms_err_lp,
           fits ? "fits" : "does not fit");
    /* the +-'s parts: the fit's statistics and the inputs' stated
     * precision (docs/validation.md) */
    if (l->flag == PL_FIT_FLAG_NONE && isfinite(half) && isfinite(l->sys_sd_rad))
        printf("; its parts (1 sd): stat %.*f, sys %.*f deg", pl_fit_decimals(l->stat_sd_rad / DEG),
               l->stat_sd_rad / DEG, pl_fit_decimals(l->sys_sd_rad / DEG), l->sys_sd_rad / DEG);
    putchar('\n');
}

/* s as one shell word: as it is when it holds only safe characters, else
 * in single quotes (a quote inside as '\\'') */
static void shell_quote(const char *s, char *out, size_t size)
{
    size_t k = 0;
    int safe = *s != 0 && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+") == strlen(s);
    if (!safe)
        out[k++] = '\'';
    for (; *s && k + 6 < size; s++) {
        if (*s == '\'') {
            memcpy(out + k, "'\\''", 4);
            k += 4;
        } else {
            out[k++] = *s;
        }
    }
    if (!safe)
        out[k++] = '\'';
    out[k] = 0;
}

/* The validation's answer: the verdict (as the experiment's report works
 * it out), each law's lambda0, and where the report is.  The store keeps
 * no report path (a report is written where -o says), so this says how to
 * make one. */
static void print_answer(pl_store *store, const pl_run_info *r, int json)
{
    pl_answer a;
    pl_err err = {0};
    char cmd[16 * PL_NAME_BYTES] = "", q[4 * PL_NAME_BYTES + 3];
    if (r->experiment[0]) {
        shell_quote(r->experiment, q, sizeof q);
        snprintf(cmd, sizeof cmd, "prismlab report --experiment %s -o out/%s", q, q);
    }
    int ok = pl_answer_get(store, r->id, &a, &err) == PL_OK;
    char busy[256];
    pl_work w;
    pl_err e = {0};
    if (pl_work_get(store, r->id, &w, &e) == PL_OK && w.step == PL_WORK_VALIDATING)
        pl_work_words(&w, busy, sizeof busy);
    else
        busy[0] = '\0';
    if (json) {
        fputs(", \"validation\": {\"under_way\": ", stdout);
        if (busy[0])
            pl_json_string(stdout, busy);
        else
            fputs("null", stdout);
        fputs(", \"verdict\": ", stdout);
        if (ok && a.verdict.law != PL_VERDICT_NONE)
            pl_json_string(stdout, pl_verdict_name(a.verdict.law));
        else
            fputs("null", stdout);
        fputs(", \"laws\": {", stdout);
        print_law("line", &a.law[0], a.fits[0], 1);
        fputs(", ", stdout);
        print_law("plastic", &a.law[1], a.fits[1], 1);
        fputs("}, \"report\": null", stdout);
        json_field_text(stdout, ", ", "report_command", cmd);
        if (!ok || a.why[0])
            json_field_text(stdout, ", ", "error", ok ? a.why : err.msg);
        fputs(", \"withheld\": ", stdout);
        if (ok && a.withheld[0])
            pl_json_string(stdout, a.withheld);
        else
            fputs("null", stdout);
        fputs("}", stdout);
        return;
    }
    if (!ok) {
        printf("verdict:        ? (%s)\n", err.msg);
        return;
    }
    if (!a.law[0].has && !a.law[1].has) {
        if (busy[0])
            printf("verdict:        none yet: %s\n", busy);
        else
            printf("verdict:        none: not validated (prismlab validate %lld)\n", r->id);
        return;
    }
    if (busy[0])
        printf("under way:      %s; below, the validation before it\n", busy);
    if (a.why[0])
        printf("verdict:        ? (%s)", a.why);
    else if (a.withheld[0])
        printf("verdict:        none: %s", a.withheld);
    else
        printf("verdict:        %s", pl_verdict_words(a.verdict.law));
    if (a.verdict.law != PL_VERDICT_NONE)
        printf(" (t = %.3g over %zu blocks, 95 %% level %.3g; rms plastic / line %.3g)",
               a.verdict.t_stat, a.verdict.blocks, a.verdict.t_crit, a.verdict.rms_ratio);
    printf("\n");
    print_law("line", &a.law[0], a.fits[0], 0);
    print_law("plastic", &a.law[1], a.fits[1], 0);
    if (cmd[0])
        printf("report:         not kept by the store; write it with: %s\n", cmd);
    else
        printf("report:         none: the run has no experiment (prismlab run set %lld --experiment E)\n",
               r->id);
}

/* The frames the recording skipped (db/run.h's gaps: a CSV's time column
 * jumping), stored as a line: one line each, or a JSON list; nothing
 * (text) for a run without. */
static int print_gaps(pl_store *store, const pl_run_info *r, int json, pl_err *err)
{
    pl_run_gap *g = NULL;
    size_t n = 0;
    if (pl_run_gaps(store, r->id, &g, &n, err) != PL_OK)
        return -1;
    if (json)
        fputs(", \"gaps\": [", stdout);
    for (size_t k = 0; k < n; k++) {
        double at = (double)g[k].first_frame / r->sample_rate_hz;
        double len = (double)g[k].n_frames / r->sample_rate_hz;
        if (json) {
            printf("%s{\"first_frame\": %lld, \"n_frames\": %lld, \"at_s\": ",
                   k ? ", " : "", g[k].first_frame, g[k].n_frames);
            pl_json_number(stdout, at);
            fputs(", \"missing_s\": ", stdout);
            pl_json_number(stdout, len);
            fputs("}", stdout);
        } else {
            printf("gap:            %lld frame%s (%.1f ms) missing at %.3f s (frame %lld): "
                   "not measured, stored as a line\n", g[k].n_frames,
                   pl_plural_s(g[k].n_frames), 1e3 * len, at, g[k].first_frame);
        }
    }
    if (json)
        fputs("]", stdout);
    free(g);
    return 0;
}

static int run_show(pl_store *store, long long id, int json)
{
    pl_run_info info;
    pl_channel ch[64];
    pl_err err = {0};
    int n = json ? -1 : 0;
    if (pl_run_get(store, id, &info, &err) ||
        pl_run_channels(store, id, ch, 64, &err))
        return pl_cli_fail("run", &err);
    if (json) {
        json_run(stdout, &info);
        json_channels(&info, ch);
        if (print_same_samples(store, &info, 1, &err) != 0 ||
            print_gaps(store, &info, 1, &err) != 0)
            return pl_cli_fail("run", &err);
        print_processing(store, id, 1);
        print_quality(store, id, 1);
        print_answer(store, &info, 1);
        fputs(", \"corrections\": [", stdout);
    } else {
        print_run(&info, ch);
        if (print_same_samples(store, &info, 0, &err) != 0 ||
            print_gaps(store, &info, 0, &err) != 0)
            return pl_cli_fail("run", &err);
        print_processing(store, id, 0);
        print_quality(store, id, 0);
        print_answer(store, &info, 0);
    }
    if (pl_run_history(store, id, print_change, &n, &err) != PL_OK)
        return pl_cli_fail("run", &err);
    if (json)
        fputs("]}\n", stdout);
    return PL_EXIT_OK;
}

/* The options of `run set`, as given. */
typedef struct {
    const char *db, *experiment, *prism, *ramp, *notes;
    double h[2], ldv, lambda0_deg;
    int sign[2], no_lambda0, yes, json;
} run_args;

static int run_set(pl_store *store, long long id, const run_args *a)
{
    pl_run_edit e;
    pl_err err = {0};
    int changed;

    pl_run_edit_init(&e);
    e.prism = a->prism;
    e.ramp = a->ramp;
    e.experiment = a->experiment;
    e.h[0] = a->h[0];
    e.h[1] = a->h[1];
    e.sign[0] = a->sign[0];
    e.sign[1] = a->sign[1];
    e.ldv_scale_mps_per_v = a->ldv;
    e.lambda0_rad = a->lambda0_deg * DEG;
    e.clear_lambda0 = a->no_lambda0;
    e.notes = a->notes;
    if (pl_run_set(store, id, &e, &changed, &err) != PL_OK)
        return pl_cli_fail("run set", &err);
    if (!changed)
        printf("run %lld: nothing changed\n", id);
    else
        printf("run %lld: %d field%s corrected (see 'prismlab run show %lld'); "
               "its processing and validations were dropped: run 'prismlab "
               "process %lld' and 'prismlab validate %lld'\n", id, changed,
               changed == 1 ? "" : "s", id, id, id);
    return PL_EXIT_OK;
}

/* Fails run delete with err, rolled back; a disk too full for the
 * delete's own writes says what to do. */
static int delete_failed(pl_store *store, pl_err *err)
{
    int full = pl_store_disk_full(store);
    pl_store_rollback(store);
    pl_err_prefix(err, "nothing deleted: ");
    if (full) {
        /* SQLite writes the change to its WAL before the pages are free:
         * even a delete needs a little room first */
        char cause[sizeof err->msg];
        snprintf(cause, sizeof cause, "%s", err->msg);
        pl_err_set(err, err->code, "%.300s: the disk is full (or a file size "
                   "limit is set), and a delete "
                   "needs room for SQLite's write-ahead log first (some 250 kB "
                   "a run): free that much on that disk (move or remove "
                   "another file) and delete again", cause);
    }
    return pl_cli_fail("run delete", err);
}

static int run_delete(pl_store *store, const long long *ids, int n)
{
    pl_err err = {0};
    if (pl_store_begin(store, &err) != PL_OK)
        return delete_failed(store, &err);
    for (int i = 0; i < n; i++)
        if (pl_run_delete(store, ids[i], &err) != PL_OK)
            return delete_failed(store, &err);
    if (pl_store_commit(store, &err) != PL_OK)
        return delete_failed(store, &err);
    for (int i = 0; i < n; i++)
        printf("deleted run %lld\n", ids[i]);
    return PL_EXIT_OK;
}

/* RUN arguments argv[1..n] as ids. */
static int parse_ids(char **args, int n, long long *ids)
{
    for (int i = 0; i < n; i++) {
        char *end;
        long long id = strtoll(args[i], &end, 10);
        if (end == args[i] || *end || id < 1 || id > 0x7fffffffLL)
            return pl_cli_usage_error("run", "'%s' is not a run id (a "
                                      "number)", args[i]);
        ids[i] = id;
    }
    return PL_EXIT_OK;
}

/* Options given that the verb does not take: a usage error naming one. */
static int check_verb_options(const char *verb, const pl_opt *opts,
                              const char *const *allowed)
{
    for (const pl_opt *o = opts; o->kind != PL_OPTK_END; o++) {
        int ok = !o->seen || !o->name || !strcmp(o->name, "db");
        for (const char *const *a = allowed; !ok && *a; a++)
            ok = !strcmp(o->name, *a);
        if (!ok)
            return pl_cli_usage_error("run", "'run %s' takes no option --%s",
                                      verb, o->name);
    }
    return PL_EXIT_OK;
}

int pl_cmd_run(int argc, char **argv)
{
    static const char *const list_opts[] = {"experiment", "json", NULL};
    static const char *const show_opts[] = {"json", NULL};
    static const char *const delete_opts[] = {"yes", NULL};
    static const char *const set_opts[] = {
        "experiment", "prism", "ramp", "h1", "h2", "sign1", "sign2",
        "ldv-scale", "lambda0-deg", "no-lambda0", "notes", NULL};
    run_args a = {.h = {NAN, NAN}, .ldv = NAN, .lambda0_deg = NAN};
    const char *verb;
    pl_store *store;
    pl_err err = {0};
    pl_opt opts[] = {
        PL_OPT_STRING("experiment", &a.experiment, "NAME",
                      "list: its runs only; set: file the run under it"),
        PL_OPT_FLAG("json", &a.json, "list, show: print JSON"),
        PL_OPT_GROUP("set:"),
        PL_OPT_STRING("prism", &a.prism, "P", "the prism (a catalogue name)"),
        PL_OPT_STRING("ramp", &a.ramp, "R", "the ramp (a catalogue name)"),
        PL_OPT_DOUBLE("h1", &a.h[0], 0, 10, "M", "beam height of channel 1, m"),
        PL_OPT_DOUBLE("h2", &a.h[1], 0, 10, "M", "beam height of channel 2, m"),
        PL_OPT_SIGN("sign1", &a.sign[0], "the sign that makes channel 1 downhill"),
        PL_OPT_SIGN("sign2", &a.sign[1], "likewise for channel 2"),
        PL_OPT_DOUBLE("ldv-scale", &a.ldv, 1e-9, 1e3, "MPS_PER_V",
                      "the LDV decoder scale of every channel"),
        PL_OPT_DOUBLE("lambda0-deg", &a.lambda0_deg, -180, 180, "DEG",
                      "the release angle the operator set"),
        PL_OPT_FLAG("no-lambda0", &a.no_lambda0, "forget the recorded release angle"),
        PL_OPT_STRING("notes", &a.notes, "TEXT", "replace the run's notes"),
        PL_OPT_GROUP("delete:"),
        PL_OPT_FLAG("yes", &a.yes, "really delete the runs named"),
        PL_OPT_DB(&a.db),
        PL_OPT_END()};
    int nargs, rc = pl_cli_parse(&run_command, opts, argc, argv, &nargs);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    if (nargs == 0)
        return pl_cli_usage_error("run", "expected an action (list, show, "
                                  "set, delete)");
    verb = argv[1];
    if (!strcmp(verb, "list") && nargs == 1) {
        list_ctx c = {NULL, a.json, 0};
        if ((rc = check_verb_options(verb, opts, list_opts)) ||
            (rc = open_store("run", a.db, PL_STORE_READONLY, &store)))
            return rc;
        c.store = store;
        rc = pl_run_list(store, a.experiment, print_run_line, &c, &err)
                 ? pl_cli_fail("run", &err) : PL_EXIT_OK;
        if (rc == PL_EXIT_OK && a.json)
            puts(c.n ? "]" : "[]");
        else if (rc == PL_EXIT_OK && !c.n)
            fprintf(stderr, "prismlab run: no runs%s%s in '%s'\n",
                    a.experiment ? " in experiment " : "",
                    a.experiment ? a.experiment : "", pl_store_path(store));
    } else if ((!strcmp(verb, "show") || !strcmp(verb, "set")) && nargs == 2) {
        long long id = 0;
        int show = !strcmp(verb, "show");
        if ((rc = check_verb_options(verb, opts, show ? show_opts : set_opts)) ||
            (rc = parse_ids(argv + 2, 1, &id)))
            return rc;
        if (!show && a.no_lambda0 && !isnan(a.lambda0_deg))
            return pl_cli_usage_error("run", "give --lambda0-deg or "
                                      "--no-lambda0, not both");
        if ((rc = open_store("run", a.db, show ? PL_STORE_READONLY : 0, &store)))
            return rc;
        rc = show ? run_show(store, id, a.json) : run_set(store, id, &a);
    } else if (!strcmp(verb, "delete") && nargs >= 2) {
        long long *ids = malloc(sizeof *ids * (size_t)nargs);
        if (!ids)
            return PL_EXIT_DATA;
        if ((rc = check_verb_options(verb, opts, delete_opts)) ||
            (rc = parse_ids(argv + 2, nargs - 1, ids))) {
            free(ids);
            return rc;
        }
        if (!a.yes) {
            free(ids);
            return pl_cli_usage_error("run", "'run delete' removes the runs' "
                                      "samples and everything derived from "
                                      "them: add --yes to do it");
        }
        if ((rc = open_store("run", a.db, 0, &store))) {
            free(ids);
            return rc;
        }
        rc = run_delete(store, ids, nargs - 1);
        free(ids);
    } else
        return pl_cli_usage_error("run", "unknown action or wrong number of "
                                  "arguments: '%s' (expected list, show RUN, "
                                  "set RUN, delete RUN...)", verb);
    pl_store_close(store);
    return rc;
}
