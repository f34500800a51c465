/* tests/core/atomicfile_test.c - atomic files: a commit leaves exactly
 * the new file (with the umask's mode), an abort or a process that dies
 * before commit leaves the old file (or none), the old file is intact
 * until the commit, symlinks and devices are respected, and failures name
 * the file and remove the temporary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "core/atomicfile.h"
#include "tests/util/testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    char *dir, *path;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_tmpdir("atomicfile");
    f->path = tu_path(f->dir, "report.html");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->path);
    free(f);
    return 0;
}

/* The folder's entries (without . and ..), sorted, joined by spaces. */
static void listing(const char *dir, char *out, size_t n)
{
    struct dirent **names;
    int count = scandir(dir, &names, NULL, alphasort);
    assert_true(count >= 0);
    out[0] = '\0';
    for (int i = 0; i < count; i++) {
        if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
            snprintf(out + strlen(out), n - strlen(out), "%s%s",
                     out[0] ? " " : "", names[i]->d_name);
        free(names[i]);
    }
    free(names);
}

static void contents(const char *path, char *out, size_t n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t got = fread(out, 1, n - 1, f);
    out[got] = '\0';
    fclose(f);
}

static pl_atomicfile *open_ok(const char *path)
{
    pl_atomicfile *af = NULL;
    pl_err err = {0};
    if (pl_atomicfile_open(&af, path, &err) != PL_OK)
        fail_msg("open: %s", err.msg);
    return af;
}

static void commit_leaves_exactly_the_file(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    char list[512], text[64];
    struct stat sb;
    mode_t old = umask(027);
    pl_atomicfile *af = open_ok(f->path);

    assert_string_equal(pl_atomicfile_path(af), f->path);
    fputs("<p>done</p>\n", pl_atomicfile_stream(af));
    assert_int_equal(pl_atomicfile_commit(af, &err), PL_OK);
    umask(old);
    listing(f->dir, list, sizeof list);
    assert_string_equal(list, "report.html");
    contents(f->path, text, sizeof text);
    assert_string_equal(text, "<p>done</p>\n");
    /* the umask's mode, as fopen() gives, not mkstemp's 0600 */
    assert_int_equal(stat(f->path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0640);
}

static void old_file_stays_until_commit(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    char list[512], text[64], want[512];
    assert_int_equal(tu_write_file(f->path, "old\n"), 0);
    pl_atomicfile *af = open_ok(f->path);

    fputs("new\n", pl_atomicfile_stream(af));
    fflush(pl_atomicfile_stream(af));
    contents(f->path, text, sizeof text);
    assert_string_equal(text, "old\n");
    /* meanwhile the folder holds the old file and one hidden temporary */
    const char *temp = pl_atomicfile_temp_path(af);
    assert_memory_equal(temp, f->dir, strlen(f->dir));
    assert_int_equal(strncmp(temp + strlen(f->dir), "/.report.html.", 14), 0);
    snprintf(want, sizeof want, "%s report.html", temp + strlen(f->dir) + 1);
    listing(f->dir, list, sizeof list);
    assert_string_equal(list, want);

    assert_int_equal(pl_atomicfile_commit(af, &err), PL_OK);
    contents(f->path, text, sizeof text);
    assert_string_equal(text, "new\n");
    listing(f->dir, list, sizeof list);
    assert_string_equal(list, "report.html");
}

static void abort_leaves_nothing(void **state)
{
    fixture *f = *state;
    char list[512], text[64];

    pl_atomicfile *af = open_ok(f->path);
    fputs("half a report", pl_atomicfile_stream(af));
    pl_atomicfile_abort(af);
    listing(f->dir, list, sizeof list);
    assert_string_equal(list, "");

    assert_int_equal(tu_write_file(f->path, "old\n"), 0);
    af = open_ok(f->path);
    fputs("half a report", pl_atomicfile_stream(af));
    pl_atomicfile_abort(af);
    listing(f->dir, list, sizeof list);
    assert_string_equal(list, "report.html");
    contents(f->path, text, sizeof text);
    assert_string_equal(text, "old\n");
    pl_atomicfile_abort(NULL);
}

/* A process that dies before commit leaves the old file as it was, and
 * at most its hidden temporary beside it. */
static void death_before_commit_leaves_the_old_file(void **state)
{
    fixture *f = *state;
    char list[512], text[64];
    int status;
    assert_int_equal(tu_write_file(f->path, "old\n"), 0);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        pl_atomicfile *af = NULL;
        pl_err err = {0};
        if (pl_atomicfile_open(&af, f->path, &err) != PL_OK)
            _exit(3);
        fputs("new, but never committed\n", pl_atomicfile_stream(af));
        fflush(pl_atomicfile_stream(af));
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    contents(f->path, text, sizeof text);
    assert_string_equal(text, "old\n");
    listing(f->dir, list, sizeof list);
    assert_int_equal(strncmp(list, ".report.html.", 13), 0);
    assert_non_null(strstr(list, " report.html"));
}

/* PLplot and libsndfile open files by name: they write the temporary. */
static void writer_by_name(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    char list[512], text[64];
    pl_atomicfile *af = open_ok(f->path);

    FILE *g = fopen(pl_atomicfile_temp_path(af), "w");
    assert_non_null(g);
    fputs("<svg/>\n", g);
    assert_int_equal(fclose(g), 0);
    assert_int_equal(pl_atomicfile_commit(af, &err), PL_OK);
    contents(f->path, text, sizeof text);
    assert_string_equal(text, "<svg/>\n");
    listing(f->dir, list, sizeof list);
    assert_string_equal(list, "report.html");
}

static void bare_name_goes_to_the_working_folder(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    char cwd[1024], list[512];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(f->dir), 0);
    pl_atomicfile *af = NULL;
    pl_status st = pl_atomicfile_open(&af, "x.csv", &err);
    if (st == PL_OK) {
        fputs("a,b\n", pl_atomicfile_stream(af));
        st = pl_atomicfile_commit(af, &err);
    }
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(st, PL_OK);
    listing(f->dir, list, sizeof list);
    assert_string_equal(list, "x.csv");
}

static void open_errors_name_the_path(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    pl_atomicfile *af = (pl_atomicfile *)1;
    char *missing = tu_path(f->dir, "no/such/folder/r.html");

    assert_int_equal(pl_atomicfile_open(&af, missing, &err), PL_EIO);
    assert_null(af);
    assert_non_null(strstr(err.msg, missing));
    assert_non_null(strstr(err.msg, "No such file or directory"));
    free(missing);

    char *folder = tu_path(f->dir, "sub/");
    assert_int_equal(pl_atomicfile_open(&af, folder, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, folder));
    folder[strlen(folder) - 1] = '\0';
    assert_int_equal(mkdir(folder, 0755), 0);
    assert_int_equal(pl_atomicfile_open(&af, folder, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "is a folder"));
    free(folder);
}

/* A symlink stays a symlink: the file it names gets the new text. */
static void symlink_is_kept(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    char list[512], text[64], link[600];
    char *real = tu_path(f->dir, "real.csv");
    assert_int_equal(tu_write_file(real, "old\n"), 0);
    assert_int_equal(symlink("real.csv", f->path), 0);

    pl_atomicfile *af = open_ok(f->path);
    fputs("new\n", pl_atomicfile_stream(af));
    assert_int_equal(pl_atomicfile_commit(af, &err), PL_OK);
    ssize_t n = readlink(f->path, link, sizeof link - 1);
    assert_true(n > 0);
    link[n] = '\0';
    assert_string_equal(link, "real.csv");
    contents(real, text, sizeof text);
    assert_string_equal(text, "new\n");
    listing(f->dir, list, sizeof list);
    assert_string_equal(list, "real.csv report.html");
    free(real);
}

/* A device cannot be replaced: it is written in place and stays a device. */
static void device_is_written_in_place(void **state)
{
    pl_err err = {0};
    struct stat sb;
    (void)state;
    pl_atomicfile *af = open_ok("/dev/null");
    assert_string_equal(pl_atomicfile_temp_path(af), "/dev/null");
    fputs("gone\n", pl_atomicfile_stream(af));
    assert_int_equal(pl_atomicfile_commit(af, &err), PL_OK);
    af = open_ok("/dev/null");
    pl_atomicfile_abort(af);
    assert_int_equal(stat("/dev/null", &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
}

/* A write that fails (here: the descriptor is gone, as a full disk would
 * fail the flush) or a rename that cannot happen (the destination is a
 * folder) is PL_EIO, the destination untouched, no temporary left. */
static void commit_errors_leave_no_temporary(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    char list[512];
    struct stat sb;
    pl_atomicfile *af = open_ok(f->path);

    fputs("lost", pl_atomicfile_stream(af));
    close(fileno(pl_atomicfile_stream(af)));
    assert_int_equal(pl_atomicfile_commit(af, &err), PL_EIO);
    assert_non_null(strstr(err.msg, f->path));
    assert_non_null(strstr(err.msg, "writing failed"));
    listing(f->dir, list, sizeof list);
    assert_string_equal(list, "");

    af = open_ok(f->path);
    fputs("x", pl_atomicfile_stream(af));
    assert_int_equal(mkdir(f->path, 0755), 0);   /* a folder appeared meanwhile */
    assert_int_equal(pl_atomicfile_commit(af, &err), PL_EIO);
    assert_non_null(strstr(err.msg, "into place"));
    listing(f->dir, list, sizeof list);
    assert_string_equal(list, "report.html");
    assert_int_equal(stat(f->path, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));
}

/* Two handles on one destination never share a temporary; the last
 * commit wins whole. */
static void two_writers_do_not_mix(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    char text[64], list[512];
    pl_atomicfile *a = open_ok(f->path), *b = open_ok(f->path);

    assert_string_not_equal(pl_atomicfile_temp_path(a), pl_atomicfile_temp_path(b));
    fputs("from a\n", pl_atomicfile_stream(a));
    fputs("from b\n", pl_atomicfile_stream(b));
    assert_int_equal(pl_atomicfile_commit(b, &err), PL_OK);
    assert_int_equal(pl_atomicfile_commit(a, &err), PL_OK);
    contents(f->path, text, sizeof text);
    assert_string_equal(text, "from a\n");
    listing(f->dir, list, sizeof list);
    assert_string_equal(list, "report.html");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(commit_leaves_exactly_the_file, setup, teardown),
        cmocka_unit_test_setup_teardown(old_file_stays_until_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(abort_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(death_before_commit_leaves_the_old_file, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_by_name, setup, teardown),
        cmocka_unit_test_setup_teardown(bare_name_goes_to_the_working_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(open_errors_name_the_path, setup, teardown),
        cmocka_unit_test_setup_teardown(symlink_is_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(device_is_written_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(commit_errors_leave_no_temporary, setup, teardown),
        cmocka_unit_test_setup_teardown(two_writers_do_not_mix, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
