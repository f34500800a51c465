/* core/json.h - the few pieces of JSON the commands' --json print.
 *
 * Every `--json` of the command line (run list/show, prism/ramp/experiment
 * list, validate, process, db info, sweep list) writes through these, so
 * that text is escaped one way and numbers are the shortest text that
 * reads back to the same double (core/numtext.h).  The caller writes the
 * braces, brackets, keys and commas.  No state.
 */
#ifndef PL_CORE_JSON_H
#define PL_CORE_JSON_H

#include <stdio.h>

/* s as a JSON string, quotes included ("" for NULL). */
void pl_json_string(FILE *out, const char *s);

/* v as a JSON number in its shortest round-trip text; null for NaN and
 * the infinities (JSON has neither). */
void pl_json_number(FILE *out, double v);

/* An angle stored in radians as a JSON number of degrees: the shortest
 * text that reads back to the same radians (7.2, not 7.200000000000001:
 * core/numtext.h, pl_deg_text); null for NaN. */
void pl_json_degrees(FILE *out, double rad);

/* sep, then "key": (sep is "" for an object's first member, ", " after). */
void pl_json_key(FILE *out, const char *sep, const char *key);

#endif
