/* core/json.c - JSON strings and numbers for --json (json.h). */
#include "core/json.h"

#include "core/numtext.h"

#include <math.h>

void pl_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

void pl_json_number(FILE *out, double v)
{
    char buf[PL_NUM_TEXT_SIZE];
    if (isfinite(v))
        fputs(pl_num_text(buf, sizeof buf, v), out);
    else
        fputs("null", out);
}

void pl_json_degrees(FILE *out, double rad)
{
    char buf[PL_NUM_TEXT_SIZE];
    if (isfinite(rad))
        fputs(pl_deg_text(buf, sizeof buf, rad), out);
    else
        fputs("null", out);
}

void pl_json_key(FILE *out, const char *sep, const char *key)
{
    fputs(sep, out);
    pl_json_string(out, key);
    fputs(": ", out);
}
