/* db/select.c - RUN... | --experiment E | --all, resolved to run ids. */
#include "db/select.h"

#include "db/run.h"

#include <stdlib.h>
#include <string.h>

pl_status pl_run_selection_open(pl_run_selection *sel, char *const *args,
                                int nargs, pl_err *err)
{
    sel->store = NULL;
    sel->ids = NULL;
    sel->n = 0;
    if ((nargs > 0) + (sel->experiment != NULL) + (sel->all != 0) != 1)
        return pl_err_set(err, PL_EINVAL, "give RUN ids, --experiment E or "
                          "--all (one of them)");
    if (pl_store_open(&sel->store, pl_cli_db_path(sel->db), 0, err) != PL_OK ||
        pl_run_select(sel->store, args, nargs, sel->experiment, &sel->ids,
                      &sel->n, err) != PL_OK) {
        pl_run_selection_close(sel);
        return err->code;
    }
    return PL_OK;
}

pl_status pl_run_selection_detach(pl_run_selection *sel, char **path, pl_err *err)
{
    *path = strdup(pl_store_path(sel->store));
    pl_store_close(sel->store);
    sel->store = NULL;
    return *path ? PL_OK : pl_err_set(err, PL_ENOMEM, "out of memory");
}

void pl_run_selection_close(pl_run_selection *sel)
{
    pl_store_close(sel->store);
    free(sel->ids);
    sel->store = NULL;
    sel->ids = NULL;
    sel->n = 0;
}
