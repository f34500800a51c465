/* core/pair.c - two jobs side by side (pair.h). */
#include "core/pair.h"

#include <pthread.h>

void pl_run_pair(void *(*fn)(void *), void *first, void *second, int threads)
{
    pthread_t tid;
    int par = threads != 1 && pthread_create(&tid, NULL, fn, second) == 0;
    fn(first);
    if (par)
        pthread_join(tid, NULL);
    else
        fn(second);
}
