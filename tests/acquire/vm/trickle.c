/* tests/acquire/vm/trickle.c - a slow client for the daemon in the comedi
 * VM (busybox's nc speaks no Unix sockets): connects to the socket in
 * argv[1] and sends argv[2] bytes of a line, one every argv[3] ms, as a
 * client on a bad link would.  Built static by comedi_vm_test.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: trickle SOCKET BYTES MS\n");
        return 1;
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", argv[1]);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        perror(argv[1]);
        return 1;
    }
    int n = atoi(argv[2]);
    long ms = atol(argv[3]);
    int sent = 0;
    for (int i = 0; i < n; i++) {
        if (send(fd, i == n - 1 ? "\n" : "x", 1, MSG_NOSIGNAL) != 1)
            break;   /* the daemon dropped us: what it should do */
        sent++;
        nanosleep(&(struct timespec){.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000}, NULL);
    }
    printf("trickle: sent %d of %d bytes\n", sent, n);
    close(fd);
    return 0;
}
