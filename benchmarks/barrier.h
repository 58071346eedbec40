/*
 * barrier.h -- pinbench: a barrier among a few threads of the team (pairs.c,
 * quads.c through groups.h, phases.c).
 *
 * Each thread has a progress counter in a cache line of its own; a group of
 * threads meets when every member's counter has reached the caller's.  Only
 * the members' lines move (no team-wide barrier), and a member whose partner
 * is not running yields the CPU, so an oversubscribed or busy machine does not
 * stall.  Every member must pass the same number of barriers.  The program
 * defines _POSIX_C_SOURCE (for sched_yield) before including common.h.
 */
#ifndef PINBENCH_BARRIER_H
#define PINBENCH_BARRIER_H

#include <sched.h>
#include <stdatomic.h>

/* Per-thread progress counter, one per cache line. */
typedef struct { _Alignas(64) atomic_ullong v; } counter;

/* Barrier among the `size` members of a group: publish my round count and
 * wait until every member has reached it (acquire/release ordering). */
static void group_barrier(counter *prog, int t, const int *mem, int size)
{
    unsigned long long mine =
        atomic_load_explicit(&prog[t].v, memory_order_relaxed) + 1;
    atomic_store_explicit(&prog[t].v, mine, memory_order_release);
    for (int m = 0; m < size; m++)
        for (int spins = 0;
             atomic_load_explicit(&prog[mem[m]].v, memory_order_acquire) < mine;)
            if (++spins > 200)
                sched_yield(); /* partner not running (oversubscribed) */
}

#endif /* PINBENCH_BARRIER_H */
