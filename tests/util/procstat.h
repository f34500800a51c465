/* tests/util/procstat.h - what /proc says of another process, for the
 * benches that watch the recording daemon (daemon_bench, live_bench). */
#ifndef PL_TESTS_PROCSTAT_H
#define PL_TESTS_PROCSTAT_H

#include <sys/types.h>

/* pid's CPU time so far (user + system), s; -1 when it cannot be read. */
double tu_proc_cpu_s(pid_t pid);

/* pid's resident memory (VmRSS), MB; negative when it cannot be read. */
double tu_proc_rss_mb(pid_t pid);

#endif
