/* db/migrations.h - the schema migrations compiled into the binary.
 *
 * The table is generated at build time from schemas/NNN_*.sql by
 * schemas/embed.sh.  Entry i has number i + 1; applying entries
 * user_version .. count-1 in order brings any older database up to date.
 */
#ifndef PL_DB_MIGRATIONS_H
#define PL_DB_MIGRATIONS_H

typedef struct {
    int number;        /* NNN of the file name, also the PRAGMA user_version after it */
    const char *name;  /* file name without .sql, for messages */
    const char *sql;   /* the whole file */
} pl_migration;

extern const pl_migration pl_migrations[];
extern const int pl_migration_count;

#endif
