/* tests/acquire/vm/events.c - the live search's events in the comedi VM
 * (busybox's nc speaks no Unix sockets): connects to the daemon's socket
 * in argv[1], streams, and prints each E line (acquire/live.h) until the
 * stop event or argv[2] seconds.  Built static by comedi_vm_test.sh with
 * tests/util/livestream.c. */
#include "tests/util/livestream.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int print_event(void *ctx, const char *line)
{
    (void)ctx;
    if (line[0] != 'E')
        return 0;
    printf("%s\n", line);
    fflush(stdout);
    return tu_is_event(line, "stop");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: events SOCKET SECONDS\n");
        return 2;
    }
    int fd = tu_stream_open(argv[1], 10);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    int stopped = tu_stream_read(fd, atof(argv[2]), print_event, NULL);
    close(fd);
    return stopped ? 0 : 1;
}
