/* acquire/csv_source.h - a stored recording in a CSV file, as a source.
 *
 * Its own options: the file and its layout (which columns are the LDVs,
 * which is time and in what unit, the field separator and decimal mark),
 * the units of the values and the rate when the file does not give it.
 * Each is found from the file when not given; docs/acquire.md describes
 * the rules.
 */
#ifndef PL_ACQUIRE_CSV_SOURCE_H
#define PL_ACQUIRE_CSV_SOURCE_H

#include "acquire/source.h"

typedef struct {
    const char *path;
    char columns[256];           /* LDV columns by header name or index from
                                    0, comma-separated; "": every <name>_V
                                    column but trig* ones */
    char time_column[64];        /* by name or index; "none"; "": t_s, else
                                    the first column named <name>_s, _ms
                                    or _us */
    char time_unit[4];           /* "s", "ms", "us"; "": the time column's
                                    name suffix, else s */
    int mps;                     /* values are m/s, not volts */
    double volts_per_unit;       /* volts in one unit of the values (a
                                    logger writing mV: 1e-3); NaN: volts */
    char delimiter;              /* 0: of ',' ';' tab, the header's */
    char decimal;                /* 0: '.' with ',' separators, else the
                                    first mark a number shows */
    double rate_hz;              /* NaN: the metadata's or the time column's */
} pl_csv_options;

extern const pl_source_type pl_source_csv;

/* Defaults: no path, everything found from the file (docs/acquire.md):
 * separator, decimal mark, time column and unit, LDV columns, volts, the
 * rate from the metadata or the time column. */
void pl_csv_options_init(pl_csv_options *o);

/* Seconds per unit of a time column: "s" 1, "ms" 1e-3, "us" 1e-6;
 * PL_EINVAL naming the unit and the choices otherwise. */
pl_status pl_csv_time_unit(const char *name, double *seconds, pl_err *err);

/* The unit of the LDV columns by name into o: "volts" (or "V"), "mV"
 * (volts_per_unit 1e-3) or "mps" (m/s: the LDV scale turns them back into
 * the volts the decoder gave).  PL_EINVAL names the unit and the
 * choices; a volts_per_unit already given beside mV or mps is refused
 * too (one unit a file). */
pl_status pl_csv_units(const char *name, pl_csv_options *o, pl_err *err);

/* The file as a source spec: pl_source_csv with o and cfg (o is
 * borrowed). */
pl_source_spec pl_csv_spec(const pl_csv_options *o,
                           const pl_source_config *cfg);

#endif
