/* acquire/cmd_import.c - `prismlab import`: stored recordings into the
 * store, one file or a manifest of many.  Only this file prints. */
#include "acquire/import.h"
#include "commands.h"
#include "core/cli.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: prismlab import FILE [--format wav|csv] [--prism P] [--ramp R]\n"
    "                       [--experiment E] [--h1 M --h2 M] [--ldv-scale MPS_PER_V]\n"
    "                       [--sign1 +-1 --sign2 +-1] [--full-scale-v V] [--rate HZ]\n"
    "                       [--lambda0-deg DEG] [--synthetic] [--channels I,J]\n"
    "                       [--columns A,B] [--time-column NAME|none]\n"
    "                       [--units volts|mps] [--delimiter C] [--decimal C]\n"
    "                       [--force] [--sync normal|full]\n"
    "                       [--db FILE]\n"
    "       prismlab import --manifest FILE.csv [--sync normal|full] [--db FILE]\n\n"
    "Stores a recording made elsewhere (a WAV or CSV file) as a run, exactly as\n"
    "the file holds it, with its SHA-256.  Options override the file's prismlab\n"
    "metadata; what neither gives is an error naming the option.  A file that\n"
    "turns out bad half-way stores nothing.\n\n"
    "  --format wav|csv      default: from the file name\n"
    "  --prism, --ramp       catalogue names; --experiment is created if new\n"
    "  --h1 M, --h2 M        beam heights of channels 1 and 2, m\n"
    "  --ldv-scale MPS_PER_V the LDV decoder scale of both channels\n"
    "  --sign1, --sign2      +1 or -1: the sign that makes downhill positive\n"
    "  --full-scale-v V      WAV: the volts at digital full scale\n"
    "  --rate HZ             CSV without a t_s column or rate metadata\n"
    "  --lambda0-deg DEG     the release angle the operator set\n"
    "  --synthetic           mark the run as simulated\n"
    "  --channels I,J        WAV: the file channels that hold LDV 1, LDV 2 (from 0)\n"
    "  --force               import a file whose SHA-256 is already in the store\n"
    "  --columns A,B         CSV: the LDV columns, by header name or index from 0\n"
    "                        (default: every column named <name>_V)\n"
    "  --time-column NAME    CSV: the time column in s (default t_s if present;\n"
    "                        none: no time column, give --rate)\n"
    "  --units volts|mps     CSV: values are volts (default) or m/s\n"
    "  --delimiter C, --decimal C   CSV: field separator (,) and decimal mark (.)\n"
    "  --manifest FILE       import every row of a manifest (docs/acquire.md)\n"
    "  --sync full           survive a power cut (slower); default normal\n\n"
    "Prints: run=<id> frames=<n> file=<path> (a manifest: one run=<id> line a file)\n";

enum { O_FORMAT = 1000, O_PRISM, O_RAMP, O_EXP, O_H1, O_H2, O_LDV, O_SIGN1,
       O_SIGN2, O_FS, O_RATE, O_LAMBDA0, O_SYN, O_MANIFEST, O_SYNC, O_DB,
       O_CHANNELS, O_FORCE, O_COLUMNS, O_TIMECOL, O_UNITS, O_DELIM, O_DECIMAL,
       O_HELP };

typedef struct {
    const char *label;
} progress_ctx;

static void progress(void *ctx, long long frames, long long total)
{
    const progress_ctx *p = ctx;
    if (total > 0)
        pl_cli_progress(p->label, (unsigned long long)frames,
                        (unsigned long long)total);
}

static void each(void *ctx, int row, int rows, long long run_id,
                 const char *path)
{
    (void)ctx;
    printf("run=%lld %s\n", run_id, path);
    pl_cli_progress("import", (unsigned long long)row + 1, (unsigned long long)rows);
}

int pl_cmd_import(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, 0, O_FORMAT},
        {"prism", required_argument, 0, O_PRISM}, {"ramp", required_argument, 0, O_RAMP},
        {"experiment", required_argument, 0, O_EXP},
        {"h1", required_argument, 0, O_H1}, {"h2", required_argument, 0, O_H2},
        {"ldv-scale", required_argument, 0, O_LDV},
        {"sign1", required_argument, 0, O_SIGN1}, {"sign2", required_argument, 0, O_SIGN2},
        {"full-scale-v", required_argument, 0, O_FS},
        {"rate", required_argument, 0, O_RATE},
        {"lambda0-deg", required_argument, 0, O_LAMBDA0},
        {"synthetic", no_argument, 0, O_SYN},
        {"manifest", required_argument, 0, O_MANIFEST},
        {"sync", required_argument, 0, O_SYNC},
        {"db", required_argument, 0, O_DB}, {"channels", required_argument, 0, O_CHANNELS},
        {"force", no_argument, 0, O_FORCE}, {"columns", required_argument, 0, O_COLUMNS},
        {"time-column", required_argument, 0, O_TIMECOL}, {"units", required_argument, 0, O_UNITS},
        {"delimiter", required_argument, 0, O_DELIM}, {"decimal", required_argument, 0, O_DECIMAL},
        {"help", no_argument, 0, O_HELP},
        {0, 0, 0, 0}};
    const char *cmd = "import";
    pl_err err = {0};
    pl_import_options o;
    pl_import_options_init(&o);
    const char *db = NULL, *manifest = NULL;
    double v, lam = NAN;
    optind = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        pl_status st = PL_OK;
        switch (c) {
        case O_FORMAT:
            if (strcmp(optarg, "wav") && strcmp(optarg, "csv"))
                return pl_cli_usage_error(cmd, "option '--format': expected wav or csv, got '%s'", optarg);
            o.format = optarg;
            break;
        case O_PRISM: o.prism = optarg; break;
        case O_RAMP: o.ramp = optarg; break;
        case O_EXP: o.experiment = optarg; break;
        case O_H1: st = pl_parse_double("h1", optarg, 0, 10, &o.beams.beam_height_m[0], &err); break;
        case O_H2: st = pl_parse_double("h2", optarg, 0, 10, &o.beams.beam_height_m[1], &err); break;
        case O_LDV:
            st = pl_parse_double("ldv-scale", optarg, 1e-9, 1e3, &v, &err);
            for (int i = 0; i < PL_SOURCE_MAX_CHANNELS; i++)
                o.beams.ldv_scale_mps_per_v[i] = v;
            break;
        case O_SIGN1: st = pl_parse_sign("sign1", optarg, &o.beams.beam_sign[0], &err); break;
        case O_SIGN2: st = pl_parse_sign("sign2", optarg, &o.beams.beam_sign[1], &err); break;
        case O_FS: st = pl_parse_double("full-scale-v", optarg, 1e-9, 1e6, &o.wav.full_scale_v, &err); break;
        case O_RATE: st = pl_parse_double("rate", optarg, 1e-3, 1e9, &o.csv.rate_hz, &err); break;
        case O_LAMBDA0: st = pl_parse_double("lambda0-deg", optarg, -180, 180, &lam, &err); break;
        case O_SYN: o.synthetic = 1; break;
        case O_MANIFEST: manifest = optarg; break;
        case O_SYNC:
            if (!strcmp(optarg, "full")) o.sync_full = 1;
            else if (strcmp(optarg, "normal"))
                return pl_cli_usage_error(cmd, "option '--sync': expected normal or full, got '%s'", optarg);
            break;
        case O_DB: db = optarg; break;
        case O_FORCE: o.force = 1; break;
        case O_COLUMNS: snprintf(o.csv.columns, sizeof o.csv.columns, "%s", optarg); break;
        case O_TIMECOL: snprintf(o.csv.time_column, sizeof o.csv.time_column, "%s", optarg); break;
        case O_UNITS:
            if (!strcmp(optarg, "mps")) o.csv.mps = 1;
            else if (strcmp(optarg, "volts"))
                return pl_cli_usage_error(cmd, "option '--units': expected volts or mps, got '%s'", optarg);
            break;
        case O_DELIM:
        case O_DECIMAL:
            if (strlen(optarg) != 1)
                return pl_cli_usage_error(cmd, "option '--%s': expected one character, got '%s'",
                                          c == O_DELIM ? "delimiter" : "decimal", optarg);
            if (c == O_DELIM) o.csv.delimiter = optarg[0];
            else o.csv.decimal = optarg[0];
            break;
        case O_CHANNELS: {
            char buf[128];
            snprintf(buf, sizeof buf, "%s", optarg);
            char *save = NULL;
            int n = 0;
            for (char *t = strtok_r(buf, ",", &save); t && st == PL_OK; t = strtok_r(NULL, ",", &save)) {
                long v;
                if (n >= PL_SOURCE_MAX_CHANNELS)
                    return pl_cli_usage_error(cmd, "option '--channels': at most %d", PL_SOURCE_MAX_CHANNELS);
                st = pl_parse_long("channels", t, 0, 63, &v, &err);
                o.wav.channels[n++] = (int)v;
            }
            o.wav.n_channels = n;
            break;
        }
        case O_HELP: fputs(usage, stdout); return PL_EXIT_OK;
        default: return pl_cli_usage_error(cmd, "unknown option");
        }
        if (st != PL_OK)
            return pl_cli_fail(cmd, &err);
    }
    const char *path = pl_cli_db_path(db);
    if (manifest) {
        if (optind < argc)
            return pl_cli_usage_error(cmd, "give a FILE or --manifest, not both");
        int count = 0;
        pl_status st = pl_import_manifest(path, manifest, o.sync_full, each, NULL,
                                          &count, &err);
        printf("imported %d runs from %s into %s\n", count, manifest, path);
        return st == PL_OK ? PL_EXIT_OK : pl_cli_fail(cmd, &err);
    }
    if (optind != argc - 1)
        return pl_cli_usage_error(cmd, "expected one FILE (or --manifest FILE)");
    o.path = argv[optind];
    if (!isnan(lam))
        o.lambda0_rad = lam * M_PI / 180.0;
    progress_ctx pc = {.label = "import"};
    o.progress = progress;
    o.progress_ctx = &pc;
    long long id = 0, frames = 0;
    if (pl_import_file(path, &o, &id, &frames, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    printf("run=%lld frames=%lld file=%s\n", id, frames, o.path);
    return PL_EXIT_OK;
}
