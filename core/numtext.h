/* core/numtext.h - numbers as text that reads back to the same double.
 *
 * Metadata a person or another program reads (JSON, CSV headers, a run's
 * history, exports) prints each double as the shortest of %.15g, %.16g and
 * %.17g that strtod() reads back bit for bit: 0.0199, not
 * 0.019900000000000001 (%.17g), and 90, not 9e+01 (%.1g).  Fifteen digits
 * always suffice for a number a person typed with at most fifteen, so
 * what was typed comes back as typed.  No state; safe from any thread.
 */
#ifndef PL_CORE_NUMTEXT_H
#define PL_CORE_NUMTEXT_H

#include <stddef.h>

/* Room for any text these functions write, sign, exponent and NUL too. */
#define PL_NUM_TEXT_SIZE 32

/* Writes the shortest of %.15g, %.16g, %.17g of v that strtod() reads
 * back as v into buf (size >= PL_NUM_TEXT_SIZE) and returns buf; NaN and
 * the infinities as %g writes them ("nan", "inf", "-inf"). */
char *pl_num_text(char *buf, size_t size, double v);

/* The same for an angle stored in radians and shown in degrees: the
 * shortest degree text d for which d * M_PI / 180 or d * (M_PI / 180)
 * (both conversions are in use) is rad again, so that 7.2 deg stored as
 * radians reads 7.2, not 7.200000000000001. */
char *pl_deg_text(char *buf, size_t size, double rad);

/* "" when n is 1, else "s": a count and its noun agree in every message
 * ("1 run", "0 runs", "2 runs": printf("%d run%s", n, pl_plural_s(n))). */
const char *pl_plural_s(long long n);

#endif
