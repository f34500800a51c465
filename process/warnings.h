/* process/warnings.h - a processing record's warnings beside its faults.
 *
 * Processing says most of what it finds twice: as a fault line for
 * programs (db/quality.h: "dropouts channel=1 count=2 total_s=0.0018") and
 * as a warning for the person at the terminal ("channel 1: 2 drop-outs (1.8
 * ms in all) bridged from the other beam").  Where both are shown (the
 * report, the run page) each finding is shown once: the fault in words,
 * and the warnings that say what no fault says (a short lead-in, steps
 * near the noise, the integral's drift, ...).
 */
#ifndef PL_PROCESS_WARNINGS_H
#define PL_PROCESS_WARNINGS_H

#include <stddef.h>

/* Whether one of faults (fault lines, one a line) says what the warning
 * line (len bytes, as processing wrote it) says: the same kind of
 * finding, on the same beam and at the same instant (to the millisecond)
 * where the warning names them. */
int pl_warning_restated(const char *line, size_t len, const char *faults);

/* Calls fn for each non-empty line of warnings that no fault in faults
 * restates, in order (line not NUL-terminated, len bytes); stops at fn's
 * first nonzero return and returns it, 0 when all were seen.  faults may
 * be NULL or "" (every warning is shown). */
int pl_warnings_each(const char *warnings, const char *faults,
                     int (*fn)(void *ctx, const char *line, size_t len),
                     void *ctx);

/* How many warnings pl_warnings_each() calls its fn for. */
size_t pl_warnings_count(const char *warnings, const char *faults);

#endif
