/* acquire/csv_source.h - a stored recording in a CSV file, as a source.
 *
 * Its own options: the file and its layout (which columns are the LDVs,
 * which is time, the field separator and decimal mark), the units of the
 * values and the rate when the file does not give it.  docs/acquire.md
 * describes the layout.
 */
#ifndef PL_ACQUIRE_CSV_SOURCE_H
#define PL_ACQUIRE_CSV_SOURCE_H

#include "acquire/source.h"

typedef struct {
    const char *path;
    char columns[256];           /* LDV columns by header name or index from
                                    0, comma-separated; "": every <name>_V */
    char time_column[64];        /* "": t_s when present; "none" */
    int mps;                     /* values are m/s, not volts */
    char delimiter, decimal;     /* 0: ',' and '.' */
    double rate_hz;              /* NaN: the metadata's or the time column's */
} pl_csv_options;

extern const pl_source_type pl_source_csv;

/* Defaults: no path, the layout of docs/acquire.md (t_s and <name>_V
 * columns, ',' and '.'), volts, the rate from the file. */
void pl_csv_options_init(pl_csv_options *o);

/* The file as a source spec: pl_source_csv with o and cfg (o is
 * borrowed). */
pl_source_spec pl_csv_spec(const pl_csv_options *o,
                           const pl_source_config *cfg);

#endif
