/* tests/fuzz/socket_fuzz.c - the daemon's framing of what a client sends:
 * the bytes arrive in reads whose sizes the input's first byte picks, as
 * a trickling or flooding client would send them; every whole line must
 * fit its buffer and hold no newline. */
#include "acquire/daemon.h"
#include "tests/fuzz/fuzz.h"

static int fuzz_socket(const uint8_t *data, size_t n)
{
    if (n == 0)
        return 0;
    size_t step = (size_t)data[0] % 40 + 1;
    char in[128], line[128];
    size_t len = 0;
    for (size_t at = 1; at < n; at += step) {
        size_t k = n - at < step ? n - at : step;
        int whole = pl_daemon_take_line(in, &len, sizeof in, (const char *)data + at,
                                        k, line, sizeof line);
        if (whole > 0 && (strlen(line) >= sizeof line || strchr(line, '\n')))
            abort();
        if (whole != 0 || len > sizeof in)
            len = 0;   /* a new connection */
    }
    return 0;
}
FUZZ_ENTRY(fuzz_socket)
