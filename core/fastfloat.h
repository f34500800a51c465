/* core/fastfloat.h - decimal numbers read exactly as strtod() reads them,
 * in the cases where that is cheap to guarantee.
 *
 * strtod() is correctly rounded but slow (it is most of a CSV import's
 * time).  A decimal of at most 19 digits whose integer value w is at most
 * 2^53 and whose power of ten 10^k has |k| <= 22 is, in IEEE double
 * arithmetic, exactly w * 10^k or w / 10^-k: both operands are exact
 * doubles and one multiplication or division is correctly rounded, so the
 * result is strtod()'s, bit for bit (Clinger's fast path).  Anything else
 * is left to the caller's strtod(): the parser says so rather than guess.
 */
#ifndef PL_CORE_FASTFLOAT_H
#define PL_CORE_FASTFLOAT_H

/* The number that starts at p (not beyond end): an optional sign, digits
 * with at most one decimal mark `mark` among or after them (0: no mark
 * allowed), at least one digit, an optional exponent e|E[sign]digits.
 * Returns the first character after it, which is where strtod() stops,
 * with *out exactly strtod()'s value (mark read as '.'); NULL when p does not start such
 * a number or it is one this parser does not vouch for (too many digits,
 * too large a power of ten, an 'e' without digits): then ask strtod().
 * No leading spaces, no "inf", "nan" or hex: those get NULL too. */
const char *pl_fastfloat(const char *p, const char *end, char mark, double *out);

#endif
