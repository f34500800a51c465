/* core/fastfloat.c - Clinger's fast path for decimal numbers (see the
 * header for why it is exact). */
#include "core/fastfloat.h"

#include <float.h>
#include <stddef.h>
#include <stdint.h>

/* Powers of ten that doubles hold exactly (5^22 < 2^53). */
static const double pow10_exact[] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

enum { MAX_DIGITS = 19, MAX_POW10 = 22, MAX_EXP_DIGITS = 4 };

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The exponent after e|E at p: its end, or NULL when it has no digits or
 * too many to be worth reading here. */
static const char *exponent(const char *p, const char *end, int *e)
{
    int neg = 0, n = 0, v = 0;
    if (p < end && (*p == '+' || *p == '-'))
        neg = *p++ == '-';
    for (; p < end && is_digit(*p); p++) {
        if (++n > MAX_EXP_DIGITS)   /* before v can overflow */
            return NULL;
        v = 10 * v + (*p - '0');
    }
    if (n == 0)
        return NULL;
    *e = neg ? -v : v;
    return p;
}

const char *pl_fastfloat(const char *p, const char *end, char mark, double *out)
{
#if FLT_EVAL_METHOD != 0
    /* x87-style excess precision rounds twice: no longer strtod's value */
    (void)p, (void)end, (void)mark, (void)out;
    return NULL;
#else
    int neg = 0;
    uint64_t w = 0;
    if (p < end && (*p == '+' || *p == '-'))
        neg = *p++ == '-';
    const char *first = p;
    for (; p < end && is_digit(*p); p++)
        w = 10 * w + (uint64_t)(*p - '0');
    long digits = p - first, frac = 0;
    if (p < end && mark && *p == mark) {
        const char *point = ++p;
        for (; p < end && is_digit(*p); p++)
            w = 10 * w + (uint64_t)(*p - '0');
        frac = p - point;
        digits += frac;
    }
    /* 19 digits cannot overflow 64 bits (more may have wrapped w); 2^53
     * is where doubles stop holding every integer */
    if (digits == 0 || digits > MAX_DIGITS || w > (UINT64_C(1) << 53))
        return NULL;
    /* strtod reads "0x1p3" as hex, past where a decimal ends */
    if (p < end && (*p == 'x' || *p == 'X'))
        return NULL;
    int e = 0;
    if (p < end && (*p == 'e' || *p == 'E') &&
        !(p = exponent(p + 1, end, &e)))
        return NULL;
    long k = e - frac;
    if (k < -MAX_POW10 || k > MAX_POW10)
        return NULL;
    double v = (double)w;
    v = k < 0 ? v / pow10_exact[-k] : v * pow10_exact[k];
    *out = neg ? -v : v;
    return p;
#endif
}
