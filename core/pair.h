/* core/pair.h - two jobs side by side, for the stages that work on the
 * two LDV channels at once. */
#ifndef PL_CORE_PAIR_H
#define PL_CORE_PAIR_H

/* Runs fn(second) on a thread of its own and fn(first) on the caller's,
 * and returns when both are done; both on the caller's, one after the
 * other, when threads is 1 or no thread can be started.  fn's result is
 * not read: jobs report through their argument. */
void pl_run_pair(void *(*fn)(void *), void *first, void *second, int threads);

#endif
