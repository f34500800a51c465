/* db/sqlite_private.h - the SQLite side of the store, for db/ only.
 *
 * Included by the .c files of db/ and by tests/db/ (which check what the
 * store holds with raw SQL); no other file may include it: stages ask db/
 * for what they need through db/store.h, db/run.h, db/catalog.h,
 * db/derived.h and db/validation.h, so SQL and sqlite3.h stay inside this
 * folder.
 * `make layering` checks that.
 */
#ifndef PL_DB_SQLITE_PRIVATE_H
#define PL_DB_SQLITE_PRIVATE_H

#include "core/error.h"
#include "db/store.h"

#include <sqlite3.h>
#include <stddef.h>

/* The underlying SQLite connection. */
sqlite3 *pl_store_db(pl_store *store);

/* Runs SQL with no result rows; errors name the statement's first words. */
pl_status pl_store_exec(pl_store *store, const char *sql, pl_err *err);

/* Prepares sql; on failure sets err with SQLite's message. */
pl_status pl_store_prepare(pl_store *store, const char *sql,
                           sqlite3_stmt **stmt, pl_err *err);

/* Sets err from the connection's last SQLite error, prefixed by what, and
 * returns PL_EDB. */
pl_status pl_store_fail(pl_store *store, const char *what, pl_err *err);

/* Binds v, or NULL when v is not finite (NaN marks "unknown" in structs). */
void pl_store_bind_real(sqlite3_stmt *st, int col, double v);

/* Reads a REAL column, NaN for NULL. */
double pl_store_column_real(sqlite3_stmt *st, int col);

/* Copies a TEXT column into dst (size n), "" for NULL; truncates. */
void pl_store_column_text(sqlite3_stmt *st, int col, char *dst, size_t n);

#endif
