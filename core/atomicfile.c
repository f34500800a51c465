/* core/atomicfile.c - write a temporary, fsync, rename into place.
 *
 * Why not mkstemp(): it creates the file with mode 0600, so a report
 * renamed into place would be unreadable by the rest of the lab.  The
 * temporary is made the way mkstemp makes it (O_CREAT | O_EXCL, retry on
 * a name taken) but with mode 0666, which the umask then trims exactly as
 * it trims fopen()'s files.
 */
#include "core/atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct pl_atomicfile {
    FILE *f;
    char *path;     /* the destination as given, for messages */
    char *target;   /* what is replaced: path, or the file a symlink names */
    char *temp;     /* ".NAME.XXXXXX" in the target's folder */
    char *dir;      /* the folder, for its fsync; "." for a bare name */
    int direct;     /* a device or pipe: written in place, never renamed */
    int to_stdout;  /* "-": a private temporary copied to stdout on commit */
};

enum { SUFFIX_LEN = 6, MAX_TRIES = 100 };

/* Six characters of [0-9a-z] from a mix of the time, the process and the
 * attempt: unpredictable enough that two writers rarely collide, and
 * O_EXCL settles the rare collision. */
static void random_suffix(char *out, const void *salt, unsigned attempt)
{
    static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
                 ((uint64_t)getpid() << 16) ^ (uint64_t)(uintptr_t)salt ^
                 ((uint64_t)attempt * 0x9e3779b97f4a7c15u);
    for (int i = 0; i < SUFFIX_LEN; i++) {
        x ^= x >> 33;   /* splitmix-style finaliser per character */
        x *= 0xff51afd7ed558ccdu;
        x ^= x >> 29;
        out[i] = alphabet[x % 36];
    }
    out[SUFFIX_LEN] = '\0';
}

/* Fills af->dir and allocates af->temp from af->target. */
static pl_status split_path(pl_atomicfile *af, pl_err *err)
{
    const char *slash = strrchr(af->target, '/');
    const char *base = slash ? slash + 1 : af->target;
    size_t dirlen = slash ? (size_t)(slash - af->target) : 0;

    if (!*base)
        return pl_err_set(err, PL_EINVAL, "'%s': a file name is needed, not "
                          "a folder", af->path);
    af->dir = malloc(dirlen + 2);
    /* dir + "/." + base + "." + suffix + NUL */
    af->temp = malloc(strlen(af->target) + SUFFIX_LEN + 4);
    if (!af->dir || !af->temp)
        return pl_err_set(err, PL_ENOMEM, "'%s': out of memory", af->path);
    if (!slash)
        strcpy(af->dir, ".");
    else if (dirlen == 0)
        strcpy(af->dir, "/");
    else {
        memcpy(af->dir, af->target, dirlen);
        af->dir[dirlen] = '\0';
    }
    return PL_OK;
}

static pl_status create_temp(pl_atomicfile *af, pl_err *err)
{
    const char *slash = strrchr(af->target, '/');
    const char *base = slash ? slash + 1 : af->target;
    int dirlen = slash ? (int)(slash - af->target) + 1 : 0;
    int fd = -1;

    for (unsigned attempt = 0; fd < 0 && attempt < MAX_TRIES; attempt++) {
        char suffix[SUFFIX_LEN + 1];
        random_suffix(suffix, af, attempt);
        sprintf(af->temp, "%.*s.%s.%s", dirlen, af->target, base, suffix);
        fd = open(af->temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            return pl_err_set(err, PL_EIO, "%s: cannot create a file in "
                              "folder '%s': %s", af->path, af->dir,
                              strerror(errno));
    }
    if (fd < 0)
        return pl_err_set(err, PL_EIO, "%s: no free temporary name in '%s' "
                          "after %d tries", af->path, af->dir, MAX_TRIES);
    if (!(af->f = fdopen(fd, "wb"))) {
        int e = errno;
        close(fd);
        unlink(af->temp);
        return pl_err_set(err, PL_EIO, "%s: %s", af->path, strerror(e));
    }
    return PL_OK;
}

/* A symlink is kept: the file it names is replaced.  A device or a pipe
 * (/dev/stdout, a FIFO) cannot be replaced and needs no protection from
 * half a file: it is written in place.  A folder is refused. */
static pl_status resolve(pl_atomicfile *af, pl_err *err)
{
    struct stat sb;
    if (lstat(af->path, &sb) == 0 && S_ISLNK(sb.st_mode))
        af->target = realpath(af->path, NULL);   /* NULL when dangling */
    if (!af->target && !(af->target = strdup(af->path)))
        return pl_err_set(err, PL_ENOMEM, "'%s': out of memory", af->path);
    if (stat(af->target, &sb) != 0 || S_ISREG(sb.st_mode))
        return PL_OK;
    if (S_ISDIR(sb.st_mode))
        return pl_err_set(err, PL_EINVAL, "'%s' is a folder: a file name is "
                          "needed", af->path);
    af->direct = 1;
    if (!(af->temp = strdup(af->target)))
        return pl_err_set(err, PL_ENOMEM, "'%s': out of memory", af->path);
    if (!(af->f = fopen(af->target, "wb")))
        return pl_err_set(err, PL_EIO, "%s: %s", af->path, strerror(errno));
    return PL_OK;
}

/* "-": the whole file is written to a private temporary first (writers
 * such as libsndfile seek back to fill in a header, which a pipe cannot
 * do) and copied to standard output on commit, so a failure half-way
 * writes nothing there either. */
static pl_status open_stdout_temp(pl_atomicfile *af, pl_err *err)
{
    const char *tmp = getenv("TMPDIR");
    int fd;
    if (!tmp || !*tmp)
        tmp = "/tmp";
    if (!(af->temp = malloc(strlen(tmp) + 32)))
        return pl_err_set(err, PL_ENOMEM, "'-': out of memory");
    sprintf(af->temp, "%s/.prismlab-stdout.XXXXXX", tmp);
    if ((fd = mkstemp(af->temp)) < 0)
        return pl_err_set(err, PL_EIO, "'-' (standard output): cannot create "
                          "a temporary in '%s': %s", tmp, strerror(errno));
    if (!(af->f = fdopen(fd, "w+b"))) {
        int e = errno;
        close(fd);
        unlink(af->temp);
        return pl_err_set(err, PL_EIO, "'-': %s", strerror(e));
    }
    af->to_stdout = 1;
    return PL_OK;
}

/* Copies the finished temporary to standard output and removes it. */
static pl_status copy_to_stdout(pl_atomicfile *af, pl_err *err)
{
    char buf[65536];
    size_t n;
    int e = 0;
    FILE *in = fopen(af->temp, "rb");

    unlink(af->temp);
    if (!in)
        return pl_err_set(err, PL_EIO, "'-': reading the temporary back: %s",
                          strerror(errno));
    while (!e && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, stdout) != n)
            e = errno ? errno : EIO;
    if (!e && ferror(in))
        e = EIO;
    fclose(in);
    if (!e && fflush(stdout) != 0)
        e = errno;
    if (e)
        return pl_err_set(err, PL_EIO, "writing to standard output failed: %s",
                          strerror(e));
    return PL_OK;
}

static void free_handle(pl_atomicfile *af)
{
    free(af->path);
    free(af->target);
    free(af->temp);
    free(af->dir);
    free(af);
}

pl_status pl_atomicfile_open(pl_atomicfile **out, const char *path,
                             pl_err *err)
{
    pl_atomicfile *af = calloc(1, sizeof *af);
    *out = NULL;
    if (!af || !(af->path = strdup(path))) {
        free(af);
        return pl_err_set(err, PL_ENOMEM, "'%s': out of memory", path);
    }
    if (!strcmp(path, "-")) {
        if (open_stdout_temp(af, err) != PL_OK) {
            free_handle(af);
            return err->code;
        }
        *out = af;
        return PL_OK;
    }
    if (resolve(af, err) != PL_OK ||
        (!af->direct && (split_path(af, err) != PL_OK || create_temp(af, err) != PL_OK))) {
        if (af->f)
            fclose(af->f);
        free_handle(af);
        return err->code;
    }
    *out = af;
    return PL_OK;
}

FILE *pl_atomicfile_stream(pl_atomicfile *af) { return af->f; }
const char *pl_atomicfile_temp_path(const pl_atomicfile *af) { return af->temp; }
const char *pl_atomicfile_path(const pl_atomicfile *af) { return af->path; }

/* fsync by name: a writer that opened the temporary by name may have
 * written through its own descriptor, so syncing ours is not enough. */
static int sync_path(const char *path, int flags)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | flags);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    /* some file systems cannot sync a folder: nothing more to do there */
    if (rc != 0 && (flags & O_DIRECTORY) && (errno == EINVAL || errno == ENOTSUP))
        rc = 0;
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

/* Closes the stream: 0, or the errno of the first failure (EIO for a
 * write that failed earlier without leaving its errno). */
static int close_stream(pl_atomicfile *af)
{
    int e = ferror(af->f) ? EIO : 0;
    if (fflush(af->f) != 0 && !e)
        e = errno;
    if (fclose(af->f) != 0 && !e)
        e = errno;
    af->f = NULL;
    return e;
}

/* fsync, rename over the target, fsync the folder; the temporary goes
 * when any of it fails. */
static pl_status put_in_place(pl_atomicfile *af, pl_err *err)
{
    if (sync_path(af->temp, 0) != 0)
        pl_err_set(err, PL_EIO, "%s: fsync failed: %s", af->path,
                   strerror(errno));
    else if (rename(af->temp, af->target) != 0)
        pl_err_set(err, PL_EIO, "%s: cannot rename '%s' into place: %s",
                   af->path, af->temp, strerror(errno));
    else if (sync_path(af->dir, O_DIRECTORY) != 0)
        return pl_err_set(err, PL_EIO, "%s: fsync of folder '%s' failed: %s",
                          af->path, af->dir, strerror(errno));
    else
        return PL_OK;
    unlink(af->temp);
    return PL_EIO;
}

pl_status pl_atomicfile_commit(pl_atomicfile *af, pl_err *err)
{
    pl_status st = PL_OK;
    int e = close_stream(af);

    if (e) {
        st = pl_err_set(err, PL_EIO, "%s: writing failed: %s", af->path,
                        strerror(e));
        if (!af->direct)
            unlink(af->temp);
    } else if (af->to_stdout) {
        st = copy_to_stdout(af, err);
    } else if (!af->direct) {
        st = put_in_place(af, err);
    }
    free_handle(af);
    return st;
}

void pl_atomicfile_abort(pl_atomicfile *af)
{
    if (!af)
        return;
    if (af->f)
        fclose(af->f);
    if (!af->direct)
        unlink(af->temp);
    free_handle(af);
}

pl_status pl_mkdirs(const char *dir, pl_err *err)
{
    if (dir[0] == '\0' || strcmp(dir, "-") == 0)
        return pl_err_set(err, PL_EINVAL,
                          "output folder '%s': a report is a folder of files; name a folder", dir);
    size_t n = strlen(dir);
    char *p = malloc(n + 1);
    if (!p)
        return pl_err_set(err, PL_ENOMEM, "out of memory");
    memcpy(p, dir, n + 1);
    pl_status st = PL_OK;
    /* Each prefix ending before a '/' is a parent; the whole path is last. */
    for (size_t i = 1; i <= n && st == PL_OK; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char c = p[i];
        p[i] = '\0';
        struct stat sb;
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            st = pl_err_set(err, PL_EIO, "cannot create folder '%s': %s", p, strerror(errno));
        else if (stat(p, &sb) != 0 || !S_ISDIR(sb.st_mode))
            st = pl_err_set(err, PL_EIO, "cannot create folder '%s': a file of that name is in the way", p);
        p[i] = c;
    }
    free(p);
    return st;
}
