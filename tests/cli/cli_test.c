/* tests/cli/cli_test.c - the prismlab binary as a user meets it: exit
 * status 0/1/2, --help on every command, the database path rules, and
 * `db check` naming a corrupted chunk.  Runs the real binary
 * ($PRISMLAB_BIN) against real database files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "db/run.h"
#include "db/store.h"
#include "tests/util/testutil.h"

#include <sndfile.h>
#include <stdint.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BUF = 1 << 16 };

typedef struct {
    char *dir, *db;
    char out[BUF], err[BUF];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_tmpdir("cli");
    f->db = tu_path(f->dir, "t.db");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->db);
    free(f);
    return 0;
}

#define RUN(f, ...) \
    tu_prismlab((f)->out, (f)->err, BUF, (const char *const[]){"prismlab", __VA_ARGS__, NULL})

static void every_command_has_help(void **state)
{
    static const char *const cmds[] = {"db", "prism", "ramp", "experiment", "run",
                                       "acquire", "export", "import", "sim", "process",
                                       "simulate", "validate", "roughplane", "sphere",
                                       "report"};
    fixture *f = *state;

    assert_int_equal(RUN(f, "--help"), 0);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        assert_non_null(strstr(f->out, cmds[i]));
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        assert_int_equal(RUN(f, cmds[i], "--help"), 0);
        assert_non_null(strstr(f->out, "usage: prismlab"));
    }
}

static void usage_errors_exit_1(void **state)
{
    fixture *f = *state;
    assert_int_equal(RUN(f, "no-such-command"), 1);
    assert_non_null(strstr(f->err, "'no-such-command' is not a prismlab command"));
    assert_int_equal(RUN(f, "db"), 1);
    assert_int_equal(RUN(f, "db", "frobnicate", "--db", f->db), 1);
    assert_int_equal(RUN(f, "prism", "add", "p", "--N", "2", "--a0", "0.01",
                         "--length", "0.05", "--material", "steel",
                         "--density", "7850", "--db", f->db), 1);
    assert_non_null(strstr(f->err, "option '--N': expected a value in [3, 10000], got 2"));
    assert_int_equal(RUN(f, "ramp", "add", "r", "--beta-deg", "abc",
                         "--mu-s", "0.1", "--material", "glass", "--db", f->db), 1);
    assert_non_null(strstr(f->err, "option '--beta-deg': expected a number, got 'abc'"));
    assert_int_equal(RUN(f, "run", "show", "x", "--db", f->db), 1);
    /* None of these created the database. */
    assert_int_equal(RUN(f, "db", "info", "--db", f->db), 2);
    assert_non_null(strstr(f->err, "does not exist"));
}

static void init_add_list_and_duplicates(void **state)
{
    fixture *f = *state;
    char version[64];
    assert_int_equal(RUN(f, "db", "init", "--db", f->db), 0);
    snprintf(version, sizeof version, "schema version %d",
             pl_store_latest_version());
    assert_non_null(strstr(f->out, version));
    assert_int_equal(RUN(f, "prism", "add", "steel-22", "--N", "22", "--a0",
                         "0.015", "--length", "0.05", "--material", "steel",
                         "--density", "7850", "--db", f->db), 0);
    assert_int_equal(RUN(f, "prism", "add", "steel-22", "--N", "24", "--a0",
                         "0.015", "--length", "0.05", "--material", "steel",
                         "--density", "7850", "--db", f->db), 2);
    assert_non_null(strstr(f->err, "already exists"));
    assert_int_equal(RUN(f, "prism", "list", "--db", f->db), 0);
    assert_non_null(strstr(f->out, "steel-22"));
    /* units in the header only (issue 30): "N=22", "a0=0.015 m" no more */
    assert_non_null(strstr(f->out, "name             N     a0_m     length_m  mass_kg   material\n"
                                   "steel-22         22    0.015    0.05      "));
    assert_null(strstr(f->out, " m "));
    assert_int_equal(RUN(f, "ramp", "add", "glass-a", "--beta-deg", "0.3702",
                         "--mu-s", "0.12", "--material", "glass", "--db", f->db), 0);
    assert_int_equal(RUN(f, "ramp", "list", "--db", f->db), 0);
    assert_non_null(strstr(f->out, "beta_deg"));
    assert_non_null(strstr(f->out, "glass-a          0.3702    0.12      0.12      glass\n"));
    assert_null(strstr(f->out, " deg "));
    assert_int_equal(RUN(f, "experiment", "add", "fig8", "--description",
                         "six steel prisms on glass", "--db", f->db), 0);
    assert_int_equal(RUN(f, "experiment", "list", "--db", f->db), 0);
    assert_non_null(strstr(f->out, "six steel prisms on glass"));
    assert_int_equal(RUN(f, "run", "list", "--db", f->db), 0);
    assert_int_equal(RUN(f, "run", "show", "7", "--db", f->db), 2);
    assert_non_null(strstr(f->err, "no run 7"));
}

static void csv_import_error_exits_2_with_line(void **state)
{
    fixture *f = *state;
    char *csv = tu_path(f->dir, "p.csv");
    char want[600];
    tu_write_file(csv, "name,n_edges,a0_m,length_m,density_kg_m3,material\n"
                       "a,22,0.015,0.05,7850,steel\n"
                       "b,22,0.015,0.05,heavy,steel\n");
    assert_int_equal(RUN(f, "db", "init", "--db", f->db), 0);
    assert_int_equal(RUN(f, "prism", "import", csv, "--db", f->db), 2);
    snprintf(want, sizeof want, "%s:3: column 'density_kg_m3': expected a "
             "number, got 'heavy'", csv);
    assert_non_null(strstr(f->err, want));
    assert_int_equal(RUN(f, "prism", "list", "--db", f->db), 0);
    assert_string_equal(f->out, "");
    free(csv);
}

static void env_var_names_the_database(void **state)
{
    fixture *f = *state;
    setenv("PRISMLAB_DB", f->db, 1);
    assert_int_equal(RUN(f, "db", "init"), 0);
    assert_non_null(strstr(f->out, f->db));
    unsetenv("PRISMLAB_DB");
}

/* Stores a run with chunks directly through SQLite's C API, exactly as the
 * schema documents it, then corrupts one chunk: `db check` must exit 2
 * and name run and chunk. */
static void db_check_names_a_corrupt_chunk(void **state)
{
    fixture *f = *state;
    sqlite3 *db;
    char want[128];

    assert_int_equal(RUN(f, "db", "init", "--db", f->db), 0);
    assert_int_equal(RUN(f, "db", "check", "--db", f->db), 0);
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    /* crc32 of four zero bytes is 0x2144df1c. */
    assert_int_equal(sqlite3_exec(db,
        "INSERT INTO run (id, started_utc, sample_rate_hz, n_channels, "
        " sample_format, byte_order, state, source_kind, n_frames) VALUES "
        " (3, '2026-01-01T00:00:00Z', 10000, 2, 's16', 'le', 'complete', 'wav', 2);"
        "INSERT INTO chunk (id, run_id, first_frame, n_frames, crc32, data) VALUES "
        " (41, 3, 0, 1, 558161692, zeroblob(4)),"
        " (42, 3, 1, 1, 558161692, x'00000100');",
        NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(RUN(f, "db", "check", "--db", f->db), 2);
    snprintf(want, sizeof want, "run 3 chunk 42");
    assert_non_null(strstr(f->out, want));
    assert_null(strstr(f->out, "chunk 41"));
    assert_non_null(strstr(f->err, "1 problem"));
}

/* seed 003's bodies from the command line: the last line's fields, the
 * CSV and the picture, and the errors. */
static void roughplane_bodies(void **state)
{
    fixture *f = *state;
    char *csv = tu_path(f->dir, "rod.csv"), *svg = tu_path(f->dir, "rod.svg");
    assert_int_equal(RUN(f, "roughplane", "--body", "rod", "--mass", "1", "--length", "0.5",
                         "--friction", "rough", "--mu", "0.3", "--v0", "1,0.5",
                         "--omega0", "3", "--csv", csv, "--plot", svg), 0);
    double ts, x, y, th;
    assert_int_equal(sscanf(strstr(f->out, "t_stop="), "t_stop=%lf x=%lf y=%lf theta=%lf",
                            &ts, &x, &y, &th), 4);
    assert_true(ts > 0.3 && ts < 0.5 && x > 0 && y > 0 && th > 0);
    FILE *c = fopen(csv, "r");
    assert_non_null(c);
    char line[256];
    assert_non_null(fgets(line, sizeof line, c));
    assert_string_equal(line, "t_s,x_m,y_m,theta_rad,vx_mps,vy_mps,omega_radps\n");
    int rows = 0;
    while (fgets(line, sizeof line, c))
        rows++;
    fclose(c);
    assert_int_equal(rows, 1001);
    FILE *g = fopen(svg, "r");
    assert_non_null(g);
    assert_non_null(fgets(line, sizeof line, g));
    assert_non_null(strstr(line, "<?xml"));
    fclose(g);
    /* the decoupled model stops the rod's spin at |w0| / (3 mu g / L) */
    assert_int_equal(RUN(f, "roughplane", "--body", "rod", "--mass", "1", "--length", "0.5",
                         "--friction", "rough", "--mu", "0.3", "--v0", "0,0",
                         "--omega0", "3", "--hack"), 0);
    assert_int_equal(sscanf(strstr(f->out, "t_stop="), "t_stop=%lf", &ts), 1);
    assert_true(fabs(ts - 3.0 / (3 * 0.3 * 9.80665 / 0.5)) < 1e-9);
    assert_int_equal(RUN(f, "roughplane", "--body", "cube", "--mu", "0.3", "--v0", "1,0"), 1);
    assert_non_null(strstr(f->err, "'cube'"));
    assert_int_not_equal(RUN(f, "roughplane", "--body", "board", "--mass", "1", "--length", "0.3",
                             "--mu", "0.3", "--v0", "1,0"), 0);
    assert_non_null(strstr(f->err, "width"));
    free(csv);
    free(svg);
}

/* A card recording of u16 codes (comedi's sampl_t) exports as 16-bit PCM:
 * each sample the code less 32768, the calibration in the comment, so an
 * audio editor opens it (it was refused before). */
static void export_wav_of_u16_codes(void **state)
{
    fixture *f = *state;
    pl_store *s = NULL;
    pl_err err = {0};
    pl_run_info info;
    pl_channel ch[2];
    uint16_t codes[2 * 100];
    char *wav = tu_path(f->dir, "card.wav");

    assert_int_equal(tu_init_db(f->db), 0);
    assert_int_equal(pl_store_open(&s, f->db, 0, &err), PL_OK);
    pl_run_info_init(&info);
    info.sample_rate_hz = 10000;
    info.n_channels = 2;
    info.format = PL_FMT_U16;
    snprintf(info.source_kind, sizeof info.source_kind, "comedi");
    memset(ch, 0, sizeof ch);
    for (int c = 0; c < 2; c++) {
        ch[c].beam_height_m = c ? 0.0116 : 0.0199;
        ch[c].beam_sign = c ? -1 : 1;
        ch[c].ldv_scale_mps_per_v = 0.025;
        ch[c].cal_kind = PL_CAL_LINEAR;
        ch[c].cal_order = 1;
        ch[c].cal_coef[0] = -10;
        ch[c].cal_coef[1] = 20.0 / 65535;
    }
    for (int i = 0; i < 200; i++)
        codes[i] = (uint16_t)(i % 2 ? 65535 - 300 * (i / 2) : 300 * (i / 2));
    assert_int_equal(pl_run_create(s, &info, ch, &err), PL_OK);
    assert_int_equal(pl_run_append_chunk(s, info.id, 0, 100, codes, sizeof codes, &err), PL_OK);
    pl_store_close(s);

    char id[16];
    snprintf(id, sizeof id, "%lld", info.id);
    assert_int_equal(RUN(f, "export", id, "--wav", wav, "--db", f->db), 0);
    SF_INFO si = {0};
    SNDFILE *sf = sf_open(wav, SFM_READ, &si);
    assert_non_null(sf);
    assert_int_equal(si.channels, 2);
    assert_int_equal(si.frames, 100);
    assert_int_equal(si.format & SF_FORMAT_SUBMASK, SF_FORMAT_PCM_16);
    short back[200];
    assert_int_equal(sf_readf_short(sf, back, 100), 100);
    for (int i = 0; i < 200; i++)
        assert_int_equal(back[i], (int)codes[i] - 32768);
    const char *comment = sf_get_string(sf, SF_STR_COMMENT);
    assert_non_null(comment);
    assert_non_null(strstr(comment, "code_offset=32768"));
    assert_non_null(strstr(comment, "cal=-10:0.000305180438:0:0,-10:0.000305180438:0:0"));
    sf_close(sf);
    free(wav);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_command_has_help, setup, teardown),
        cmocka_unit_test_setup_teardown(usage_errors_exit_1, setup, teardown),
        cmocka_unit_test_setup_teardown(init_add_list_and_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(csv_import_error_exits_2_with_line, setup, teardown),
        cmocka_unit_test_setup_teardown(env_var_names_the_database, setup, teardown),
        cmocka_unit_test_setup_teardown(db_check_names_a_corrupt_chunk, setup, teardown),
        cmocka_unit_test_setup_teardown(roughplane_bodies, setup, teardown),
        cmocka_unit_test_setup_teardown(export_wav_of_u16_codes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
