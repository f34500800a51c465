/* command_main.c - main() of one command's program,
 * libexec/prismlab/prismlab-NAME: the Makefile compiles this file once a
 * command of commands.h, with -DPL_COMMAND=pl_cmd_NAME, and links it with
 * -Wl,--as-needed, so the program loads only the shared libraries that
 * command's code calls (docs/layout.md, "Start-up").
 *
 * bin/prismlab (prismlab.c) execs it with argv as the command parses it:
 * argv[0] the user's prismlab, argv[1] the command's name, the global
 * options already moved behind the command.  main() does only what is
 * process-wide: it turns GSL's abort-on-error handler off (library code
 * checks GSL's return codes instead), makes stdout line-buffered for
 * scripts that read progress, and calls the command.
 */
#include "commands.h"
#include "core/cli.h"

#include <gsl/gsl_errno.h>
#include <stdio.h>

/* Weak, so that this reference alone does not make the linker load libgsl
 * into a program whose command calls no GSL function (where GSL's handler
 * can never be reached): there it is NULL and not called. */
#pragma weak gsl_set_error_handler_off

int main(int argc, char **argv)
{
    if (gsl_set_error_handler_off)
        gsl_set_error_handler_off();
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "prismlab: this is one command's program: run it as 'prismlab "
                "COMMAND ...' (bin/prismlab)\n");
        return PL_EXIT_USAGE;
    }
    return PL_COMMAND(argc - 1, argv + 1);
}
