/* core/numtext.c - the shortest round-trip text of a double (numtext.h).
 * Why 15 first: DBL_DIG is 15, so any decimal of up to 15 significant
 * digits survives the trip through a double; printing v with 15 digits
 * then gives back exactly what was typed, and %g drops the zeros. */
#include "core/numtext.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

char *pl_num_text(char *buf, size_t size, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, size, "%g", v);
        return buf;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

char *pl_deg_text(char *buf, size_t size, double rad)
{
    double deg = rad * 180.0 / M_PI;
    if (!isfinite(rad))
        return pl_num_text(buf, size, rad);
    /* Degrees become radians as deg * M_PI / 180 (import, record, run
     * set) or deg * (M_PI / 180) (sim, the model's options), which can
     * differ in the last bit: the text is right when either gives rad
     * back.  When no text of up to 17 digits does (rad did not come from
     * degrees), the degrees' own round-trip text is the honest answer. */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, deg);
        double d = strtod(buf, NULL);
        if (d * M_PI / 180.0 == rad || d * (M_PI / 180.0) == rad)
            return buf;
    }
    return pl_num_text(buf, size, deg);
}

const char *pl_plural_s(long long n)
{
    return n == 1 ? "" : "s";
}
