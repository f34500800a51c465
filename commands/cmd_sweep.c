/* commands/cmd_sweep.c - `prismlab sweep`: run a sweep file into the
 * store (one machine or an MPI job), list, show and export stored sweeps,
 * draw the prism's phase map.  Only this file prints.  Two programs run
 * it: prismlab-sweep without MPI (pl_cmd_sweep) and prismlab-sweep-mpi
 * (cmd_sweep_mpi.c), which bin/prismlab runs when an MPI launcher started
 * it. */
#include "commands.h"
#include "core/atomicfile.h"
#include "core/cli.h"
#include "core/json.h"
#include "core/numtext.h"
#include "db/store.h"
#include "db/sweep.h"
#include "model/sweep/engine.h"
#include "model/sweep/launch.h"
#include "model/sweep/report.h"
#include "model/sweep/spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pl_cli_command run_cmd = {
    .name = "sweep",
    .usage =
    "usage: prismlab sweep FILE [--db FILE] [--resume] [--workers N]\n"
    "       mpirun -np K prismlab sweep FILE [--db FILE] [--resume]\n"
    "       srun --mpi=pmix -n K prismlab sweep FILE [--db FILE] [--resume]\n"
    "       prismlab sweep list|show|export|report|delete ... (--help on each)\n",
    .about =
    "Runs every point of a sweep file (docs/sweep.md: the model, its fixed\n"
    "parameters by the command's option names, the axes and repeats) and stores\n"
    "each point's parameters and summary in the database (tables sweep and\n"
    "sweep_point).  On one machine: one worker thread per CPU.  Started by\n"
    "mpirun or srun: the points are handed out over the ranks, rank 0 the only\n"
    "writer.  The stored rows are the same whatever the number of workers.  A\n"
    "sweep that was killed goes on with --resume, computing only the points\n"
    "without a row.\n",
    .footer =
    "Last line: sweep NAME: STORED/TOTAL points stored (BEFORE before, COMPUTED\n"
    "computed, FAILED refused or failed by the model) in WALL s by K workers\n"
    "(threads or ranks); compute S s (the model's time, summed); C chunks,\n"
    "scheduling U us a point (workers waiting for work), storing U us a point\n"
    "(the writer), cheapest point U us (its model time).\n",
    .max_args = 1};

typedef struct {
    const char *name;
} progress_ctx;

static void progress(void *ctx, long long stored, long long total, double wall)
{
    (void)wall;
    const progress_ctx *p = ctx;
    pl_cli_progress(p->name, (unsigned long long)stored, (unsigned long long)total);
}

static void print_summary(const char *name, const pl_sweep_stats *s)
{
    double pp = s->computed ? 1e6 / (double)s->computed : 0;
    printf("sweep %s: %lld/%lld points stored (%lld before, %lld computed, %lld refused "
           "or failed by the model) in %.3f s by %d workers; compute %.3f s; "
           "%lld chunks, scheduling %.3g us a point, storing %.3g us a point, cheapest "
           "point %.3g us\n", name, s->before + s->computed, s->total, s->before,
           s->computed, s->failed, s->wall_s, s->workers, s->compute_s, s->chunks,
           s->sched_s * pp, s->write_s * pp, s->min_cost_s * 1e6);
}

/* mpi: how to run over the ranks of an MPI job; NULL in the program
 * without MPI, which bin/prismlab does not run under a launcher. */
static int cmd_run(int argc, char **argv, const pl_sweep_mpi_ops *mpi)
{
    const char *db = NULL;
    int resume = 0;
    long workers = 0;
    pl_opt opts[] = {
        PL_OPT_DB(&db),
        PL_OPT_FLAG("resume", &resume, "go on with a sweep of the same file stored\n"
                    "before: compute only the points without a row"),
        PL_OPT_INT("workers", &workers, 1, 256, "N",
                   "worker threads on one machine (default one per CPU;\n"
                   "under MPI each rank is one worker)"),
        PL_OPT_END()};
    int nargs = 0;
    int rc = pl_cli_parse(&run_cmd, opts, argc, argv, &nargs);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    if (nargs != 1)
        return pl_cli_usage_error("sweep", "expected a sweep file (see --help)");
    const char *path = argv[1], *dbp = pl_cli_db_path(db);
    pl_err err = {0};
    pl_sweep_stats s;
    pl_sweep_opts o = {.workers = (int)workers, .resume = resume, .progress = progress};
    progress_ctx pc = {path};
    o.progress_ctx = &pc;
    int rank = 0;
    pl_status st;
    char name[96];
    if (pl_sweep_launch_check(&err) != PL_OK)
        return pl_cli_fail("sweep", &err);
    if (pl_sweep_mpi_launched() && !mpi) {
        pl_err_set(&err, PL_ESTATE, "an MPI launcher started this program, which has no "
                   "MPI: start bin/prismlab, which runs prismlab-sweep-mpi");
        return pl_cli_fail("sweep", &err);
    }
    if (pl_sweep_mpi_launched()) {
        int alone = 0;
        st = mpi->run(path, dbp, &o, &rank, &alone, &s, &err);
        snprintf(name, sizeof name, "%s", s.name);
        rc = st == PL_OK ? PL_EXIT_OK : pl_cli_exit_code(st);
        if (st != PL_OK && (rank == 0 || alone))   /* the others echo rank 0's */
            rc = pl_cli_fail("sweep", &err);
        else if (st == PL_OK && rank == 0)
            print_summary(name, &s);
        mpi->end(alone);
        return rc;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        pl_err_set(&err, PL_EIO, "cannot open sweep file '%s'", path);
        return pl_cli_fail("sweep", &err);
    }
    char *text = NULL;
    size_t cap = 0, len = 0, n;
    do {
        if (cap - len < 4096) {
            char *nb = realloc(text, cap = cap * 2 + 8192);
            if (!nb) {
                free(text);
                fclose(f);
                pl_err_set(&err, PL_ENOMEM, "out of memory reading '%s'", path);
                return pl_cli_fail("sweep", &err);
            }
            text = nb;
        }
        n = fread(text + len, 1, cap - len - 1, f);
        len += n;
    } while (n > 0);
    int bad = ferror(f);
    fclose(f);
    text[len] = 0;
    if (bad) {
        free(text);
        pl_err_set(&err, PL_EIO, "cannot read sweep file '%s'", path);
        return pl_cli_fail("sweep", &err);
    }
    pl_sweep_spec *spec = NULL;
    st = pl_sweep_text_resolve(&text, path, dbp, &err);
    if (st == PL_OK)
        st = pl_sweep_spec_parse(&spec, text, path, &err);
    free(text);
    if (st == PL_OK) {
        snprintf(name, sizeof name, "%s", pl_sweep_spec_name(spec));
        st = pl_sweep_run_local(spec, dbp, &o, &s, &err);
    }
    pl_sweep_spec_destroy(spec);
    if (st != PL_OK)
        return pl_cli_fail("sweep", &err);
    print_summary(name, &s);
    return PL_EXIT_OK;
}

/* --- list, show -------------------------------------------------------- */

static const pl_cli_command list_cmd = {
    .name = "sweep list",
    .usage = "usage: prismlab sweep list [--json] [--db FILE]\n",
    .about = "Lists the stored sweeps: name, model, points stored of all, failed.\n"
             "--json: a JSON array, an object a sweep.\n"};

/* Counts the sweeps printed; json: 1 for a JSON array. */
typedef struct {
    int json;
    long long n;
} list_ctx;

static void list_one_json(list_ctx *c, const pl_sweep_info *s)
{
    fputs(c->n++ ? ",\n " : "[", stdout);
    pl_json_key(stdout, "{", "name");
    pl_json_string(stdout, s->name);
    pl_json_key(stdout, ", ", "model");
    pl_json_string(stdout, s->model);
    printf(", \"points\": %lld, \"stored\": %lld, \"failed\": %lld",
           s->n_points, s->n_stored, s->n_failed);
    pl_json_key(stdout, ", ", "created_utc");
    pl_json_string(stdout, s->created_utc);
    pl_json_key(stdout, ", ", "axes");
    pl_json_string(stdout, s->axes);
    fputc('}', stdout);
}

static void list_one(void *ctx, const pl_sweep_info *s)
{
    list_ctx *c = ctx;
    if (c->json) {
        list_one_json(c, s);
        return;
    }
    c->n++;
    printf("%-24s %-9s %10lld/%-10lld %8lld failed  %s  axes %s\n", s->name, s->model,
           s->n_stored, s->n_points, s->n_failed, s->created_utc, s->axes);
}

/* Readers (list, show, export, report) open read-only; delete writes. */
static int open_store(const char *cmd, const char *db, unsigned flags, pl_store **store)
{
    pl_err err = {0};
    if (pl_store_open(store, pl_cli_db_path(db), flags, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    return PL_EXIT_OK;
}

static int cmd_list(int argc, char **argv)
{
    const char *db = NULL;
    list_ctx c = {0, 0};
    pl_opt opts[] = {PL_OPT_FLAG("json", &c.json, "print JSON"), PL_OPT_DB(&db),
                     PL_OPT_END()};
    int rc = pl_cli_parse(&list_cmd, opts, argc, argv, NULL);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    pl_store *store;
    if ((rc = open_store(list_cmd.name, db, PL_STORE_READONLY, &store)) != PL_EXIT_OK)
        return rc;
    pl_err err = {0};
    pl_status st = pl_sweep_list(store, list_one, &c, &err);
    pl_store_close(store);
    if (st != PL_OK)
        return pl_cli_fail(list_cmd.name, &err);
    if (c.json)
        puts(c.n ? "]" : "[]");
    return PL_EXIT_OK;
}

static const pl_cli_command show_cmd = {
    .name = "sweep show",
    .usage = "usage: prismlab sweep show NAME [--db FILE]\n",
    .about = "Shows a stored sweep: its record and the sweep file it was made from.\n",
    .max_args = 1};

static int cmd_show(int argc, char **argv)
{
    const char *db = NULL;
    pl_opt opts[] = {PL_OPT_DB(&db), PL_OPT_END()};
    int nargs = 0, rc = pl_cli_parse(&show_cmd, opts, argc, argv, &nargs);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    if (nargs != 1)
        return pl_cli_usage_error(show_cmd.name, "expected the sweep's name");
    pl_store *store;
    if ((rc = open_store(show_cmd.name, db, PL_STORE_READONLY, &store)) != PL_EXIT_OK)
        return rc;
    pl_err err = {0};
    pl_sweep_info s;
    char *spec = NULL;
    pl_status st = pl_sweep_find(store, argv[1], &s, &err);
    if (st == PL_OK)
        st = pl_sweep_read_spec(store, s.sweep_id, &spec, &err);
    pl_store_close(store);
    if (st != PL_OK)
        return pl_cli_fail(show_cmd.name, &err);
    printf("name:             %s\nmodel:            %s\npoints:           %lld\n"
           "stored:           %lld\nfailed:           %lld\naxes:             %s\n"
           "columns:          %s\nseries:           %s\ncreated:          %s\n"
           "software_version: %s\nspec_sha256:      %s\n--- sweep file ---\n%s",
           s.name, s.model, s.n_points, s.n_stored, s.n_failed, s.axes, s.columns,
           s.series[0] ? s.series : "-", s.created_utc, s.software_version,
           s.spec_sha256, spec);
    if (spec[0] && spec[strlen(spec) - 1] != '\n')
        putchar('\n');
    free(spec);
    return PL_EXIT_OK;
}

/* --- export ------------------------------------------------------------- */

static const pl_cli_command export_cmd = {
    .name = "sweep export",
    .usage = "usage: prismlab sweep export NAME [--db FILE] [-o FILE.csv] [--columns A,B,...]\n",
    .about =
    "Writes the stored points of a sweep as CSV, one row a point in index order:\n"
    "idx, ok, the axes (and for the simulate model the degrees its fractions gave),\n"
    "the model's summary, and error (why the model refused or failed a point).\n"
    "--columns picks any parameter or summary names instead.  Numbers are\n"
    "written so that they read back to the same double.\n",
    .max_args = 1};

typedef struct {
    FILE *f;
    size_t n;
} export_ctx;

static void csv_text(FILE *f, const char *t)
{
    if (!strpbrk(t, ",\"\n\r")) {
        fputs(t, f);
        return;
    }
    fputc('"', f);
    for (; *t; t++) {
        if (*t == '"')
            fputc('"', f);
        fputc(*t, f);
    }
    fputc('"', f);
}

static int export_row(void *ctx, const pl_sweep_point *p, const pl_sweep_cell *c,
                      size_t n)
{
    export_ctx *e = ctx;
    fprintf(e->f, "%lld,%d", p->idx, p->ok);
    for (size_t i = 0; i < n; i++) {
        fputc(',', e->f);
        if (c[i].kind == PL_SWEEP_NUM) {
            char t[PL_NUM_TEXT_SIZE];
            fputs(pl_num_text(t, sizeof t, c[i].num), e->f);
        } else if (c[i].kind == PL_SWEEP_TEXT) {
            csv_text(e->f, c[i].text);
        }
    }
    fputc('\n', e->f);
    e->n++;
    return 0;
}

/* Splits a comma list into names (pointers into buf), each name once: an
 * axis that is also a summary value (law) is written once. */
static size_t split(char *buf, const char **names, size_t max)
{
    size_t n = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save)) {
        size_t i = 0;
        while (i < n && strcmp(names[i], t))
            i++;
        if (i == n)
            names[n++] = t;
    }
    return n;
}

static int cmd_export(int argc, char **argv)
{
    const char *db = NULL, *out = NULL, *cols = NULL;
    pl_opt opts[] = {
        PL_OPT_DB(&db),
        PL_OPT_STRING_F("output", 'o', &out, 0, "FILE", "the CSV file (default: stdout)"),
        PL_OPT_STRING("columns", &cols, "A,B,...", "the values to write after idx and ok"),
        PL_OPT_END()};
    int nargs = 0, rc = pl_cli_parse(&export_cmd, opts, argc, argv, &nargs);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    if (nargs != 1)
        return pl_cli_usage_error(export_cmd.name, "expected the sweep's name");
    pl_store *store;
    if ((rc = open_store(export_cmd.name, db, PL_STORE_READONLY, &store)) != PL_EXIT_OK)
        return rc;
    pl_err err = {0};
    pl_sweep_info s;
    pl_status st = pl_sweep_find(store, argv[1], &s, &err);
    char buf[4096];
    const char *names[128];
    size_t n = 0;
    if (st == PL_OK) {
        if (cols) {
            snprintf(buf, sizeof buf, "%s", cols);
        } else {
            int deg = !strcmp(s.model, "simulate") && strstr(s.axes, "-frac");
            snprintf(buf, sizeof buf, "%s%s%s,%s,error", s.axes, s.axes[0] ? "," : "",
                     deg ? "beta-deg,lambda0-deg" : "", s.columns);
            if (!deg) {   /* no empty name between the commas */
                char *dd = strstr(buf, ",,");
                if (dd)
                    memmove(dd, dd + 1, strlen(dd));
            }
        }
        n = split(buf[0] == ',' ? buf + 1 : buf, names, 128);
    }
    pl_atomicfile *af = NULL;
    FILE *f = stdout;
    if (st == PL_OK && out) {
        st = pl_atomicfile_open(&af, out, &err);
        if (st == PL_OK)
            f = pl_atomicfile_stream(af);
    }
    if (st == PL_OK) {
        fputs("idx,ok", f);
        for (size_t i = 0; i < n; i++)
            fprintf(f, ",%s", names[i]);
        fputc('\n', f);
        export_ctx e = {f, 0};
        st = pl_sweep_points(store, s.sweep_id, names, n, export_row, &e, &err);
    }
    if (af)
        st = st == PL_OK ? pl_atomicfile_commit(af, &err) : (pl_atomicfile_abort(af), st);
    pl_store_close(store);
    return st == PL_OK ? PL_EXIT_OK : pl_cli_fail(export_cmd.name, &err);
}

/* --- delete --------------------------------------------------------------- */

static const pl_cli_command delete_cmd = {
    .name = "sweep delete",
    .usage = "usage: prismlab sweep delete NAME [--db FILE]\n",
    .about = "Deletes a stored sweep and all its points.\n",
    .max_args = 1};

static int cmd_delete(int argc, char **argv)
{
    const char *db = NULL;
    pl_opt opts[] = {PL_OPT_DB(&db), PL_OPT_END()};
    int nargs = 0, rc = pl_cli_parse(&delete_cmd, opts, argc, argv, &nargs);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    if (nargs != 1)
        return pl_cli_usage_error(delete_cmd.name, "expected the sweep's name");
    pl_store *store;
    if ((rc = open_store(delete_cmd.name, db, 0, &store)) != PL_EXIT_OK)
        return rc;
    pl_err err = {0};
    pl_status st = pl_sweep_delete(store, argv[1], &err);
    pl_store_close(store);
    return st == PL_OK ? PL_EXIT_OK : pl_cli_fail(delete_cmd.name, &err);
}

/* --- report --------------------------------------------------------------- */

static const pl_cli_command report_cmd = {
    .name = "sweep report",
    .usage = "usage: prismlab sweep report NAME -o DIR [--db FILE]\n",
    .about =
    "Draws a stored prism sweep (model simulate) as an HTML page, DIR/index.html,\n"
    "with PLplot figures: the settled speed omega* against N beside the closed form\n"
    "(docs/model.md section 10), and per N and law the rolling/stopping map in the\n"
    "(beta, lambda0) plane with the closed form's boundary and beta_c.\n",
    .max_args = 1};

static int cmd_report(int argc, char **argv)
{
    const char *db = NULL, *out = NULL;
    pl_opt opts[] = {
        PL_OPT_DB(&db),
        PL_OPT_STRING_F("output", 'o', &out, PL_OPT_REQUIRED, "DIR", "the report's folder"),
        PL_OPT_END()};
    int nargs = 0, rc = pl_cli_parse(&report_cmd, opts, argc, argv, &nargs);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    if (nargs != 1)
        return pl_cli_usage_error(report_cmd.name, "expected the sweep's name");
    pl_store *store;
    if ((rc = open_store(report_cmd.name, db, PL_STORE_READONLY, &store)) != PL_EXIT_OK)
        return rc;
    pl_err err = {0};
    pl_sweep_report_summary sum;
    pl_status st = pl_sweep_report(store, argv[1], out, &sum, &err);
    pl_store_close(store);
    if (st != PL_OK)
        return pl_cli_fail(report_cmd.name, &err);
    printf("sweep report %s: %s/index.html (%lld points, %d figures; omega* worst "
           "%.3g %% off the closed form, beta_c within the grid step for %d of %d N)\n",
           argv[1], out, sum.points, sum.figures, sum.omega_worst_pct, sum.beta_c_ok,
           sum.beta_c_n);
    return PL_EXIT_OK;
}

int pl_sweep_command(int argc, char **argv, const pl_sweep_mpi_ops *mpi)
{
    if (argc >= 2) {
        static const struct {
            const char *name;
            int (*fn)(int, char **);
        } subs[] = {{"list", cmd_list}, {"show", cmd_show}, {"export", cmd_export},
                    {"report", cmd_report}, {"delete", cmd_delete}};
        for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
            if (!strcmp(argv[1], subs[i].name))
                return subs[i].fn(argc - 1, argv + 1);
        if (!strcmp(argv[1], "run"))
            return cmd_run(argc - 1, argv + 1, mpi);
    }
    return cmd_run(argc, argv, mpi);
}

int pl_cmd_sweep(int argc, char **argv)
{
    return pl_sweep_command(argc, argv, NULL);
}
