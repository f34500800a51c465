/* commands/cmd_serve.c - `prismlab serve`: the web view of the database. */
#include "commands.h"
#include "core/cli.h"
#include "web/server.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static const pl_cli_command serve_cmd = {
    .name = "serve",
    .usage = "usage: prismlab serve [--db FILE] [--listen HOST:PORT] [--socket PATH] [--control]\n",
    .about =
    "Serves the database to a browser: the runs, a run's zoomable plots\n"
    "(v_p1, v_p2, omega, L_p, the simulation, the impacts, the residual's\n"
    "spectrum), an experiment's validation report, and the live view of the\n"
    "recording daemon.  Bound to 127.0.0.1:8080 unless told otherwise;\n"
    "read-only unless --control, which prints a token that the live page's\n"
    "arm, start and stop buttons must send.  Stops on SIGINT or SIGTERM.\n",
    .footer = "Open the URL it prints.  docs/web.md describes the pages and the URLs.\n",
};

int pl_cmd_serve(int argc, char **argv)
{
    const char *cmd = "serve";
    const char *db = NULL, *listen_at = "127.0.0.1:8080", *sock = NULL;
    int control = 0;
    pl_opt opts[] = {
        PL_OPT_DB(&db),
        PL_OPT_STRING("listen", &listen_at, "HOST:PORT",
                      "the address to serve (127.0.0.1:8080; port 0: any free one)"),
        PL_OPT_STRING("socket", &sock, "PATH", "the daemon's socket (default <db>.sock)"),
        PL_OPT_FLAG("control", &control, "allow arm, start and stop (with the printed token)"),
        PL_OPT_END(),
    };
    int rc = pl_cli_parse(&serve_cmd, opts, argc, argv, NULL);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    pl_web_options o = {.db = pl_cli_db_path(db), .listen = listen_at, .socket = sock,
                        .control = control};
    pl_cli_on_stop(on_signal);
    signal(SIGPIPE, SIG_IGN);
    pl_web *w;
    pl_err err = {0};
    if (pl_web_start(&w, &o, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    printf("prismlab serve: %s (database %s, %s)\n", pl_web_url(w), o.db,
           control ? "control on" : "read-only");
    if (control)
        printf("prismlab serve: control token %s (open %slive?token=%s)\n",
               pl_web_token(w), pl_web_url(w), pl_web_token(w));
    fflush(stdout);
    while (!stop_flag)
        pause();
    pl_web_stop(w);
    printf("prismlab serve: stopped\n");
    return PL_EXIT_OK;
}
