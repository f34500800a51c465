/* core/atomicfile.h - files that appear whole or not at all.
 *
 * Everything prismlab writes for a person or another program (reports,
 * figures, exports, the simulator's WAV and truth CSV) is written to a
 * temporary in the destination's folder and renamed into place only when
 * complete: a crash, a full disk or an error half-way leaves the old file
 * (or no file), never half of a new one, and a reader never sees one
 * growing.
 *
 *     pl_atomicfile *af;
 *     if (pl_atomicfile_open(&af, path, err) != PL_OK) return err->code;
 *     fprintf(pl_atomicfile_stream(af), ...);
 *     return pl_atomicfile_commit(af, err);   // or pl_atomicfile_abort(af)
 *
 * Commit flushes, fsyncs the file, renames it over path and fsyncs the
 * folder, so that after it returns PL_OK the new file survives a power
 * cut.  The temporary is ".NAME.XXXXXX" beside NAME (a hidden name, so a
 * folder listing or a glob does not pick it up).  It is created with
 * mode 0666 less the umask, as fopen() would create path.
 *
 * Libraries that write by file name (PLplot, libsndfile) write to
 * pl_atomicfile_temp_path() instead and close their file before commit.
 *
 * A destination that is a symlink stays one: the file it names is
 * replaced.  One that is a device or a pipe (--csv /dev/stdout) cannot be
 * replaced and is written in place; commit and abort then only close it.
 *
 * "-" is standard output: the file is written whole to a private
 * temporary in $TMPDIR (or /tmp) and copied to stdout on commit, so that
 * writers that seek (a WAV header) work and an error writes nothing.
 */
#ifndef PL_CORE_ATOMICFILE_H
#define PL_CORE_ATOMICFILE_H

#include "core/error.h"

#include <stdio.h>

typedef struct pl_atomicfile pl_atomicfile;

/* Creates the temporary beside path and opens it for writing.  PL_EIO
 * naming the folder when it cannot be created there (missing folder, no
 * permission); PL_EINVAL when path is a folder. */
pl_status pl_atomicfile_open(pl_atomicfile **out, const char *path,
                             pl_err *err);

/* The stream to write to (binary-safe; owned by the handle). */
FILE *pl_atomicfile_stream(pl_atomicfile *af);

/* The temporary's name, for writers that open files by name. */
const char *pl_atomicfile_temp_path(const pl_atomicfile *af);

/* The destination given to pl_atomicfile_open(). */
const char *pl_atomicfile_path(const pl_atomicfile *af);

/* Flushes and fsyncs the temporary, renames it to the destination and
 * fsyncs the folder; frees the handle whatever happens.  On failure the
 * temporary is removed, the destination is as it was, and PL_EIO names
 * the file and the cause (a write error such as a full disk shows here). */
pl_status pl_atomicfile_commit(pl_atomicfile *af, pl_err *err);

/* Removes the temporary and frees the handle; the destination is left as
 * it was.  NULL is a no-op. */
void pl_atomicfile_abort(pl_atomicfile *af);

/* Creates the folder dir and any missing parents (like mkdir -p, mode
 * 0755); an existing folder is fine.  "-" and "" are refused, because an
 * output folder named "-" is always a mistyped "stdout".  On failure the
 * message names the part of the path that could not be made. */
pl_status pl_mkdirs(const char *dir, pl_err *err);

#endif
