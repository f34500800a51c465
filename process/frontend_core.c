/* process/frontend_core.c - see frontend_core.h: the normal equations
 * every room of the front end solves. */
#include "process/frontend_core.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

int pl_fe_normal_solve(double *A, double *y, size_t P, double *c)
{
    gsl_matrix_view Av = gsl_matrix_view_array(A, P, P);
    gsl_vector_view yv = gsl_vector_view_array(y, P), cv = gsl_vector_view_array(c, P);
    return gsl_linalg_cholesky_decomp1(&Av.matrix) == GSL_SUCCESS &&
                   gsl_linalg_cholesky_solve(&Av.matrix, &yv.vector, &cv.vector) == GSL_SUCCESS
               ? 0
               : -1;
}
