/* tests/util/procstat.c - see procstat.h. */
#include "tests/util/procstat.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

double tu_proc_cpu_s(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f || !fgets(buf, sizeof buf, f)) {
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    char *p = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    /* fields after the command: state ppid pgrp session tty tpgid flags
     * minflt cminflt majflt cmajflt utime stime */
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

double tu_proc_rss_mb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    double kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %lf kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb / 1024.0;
}
