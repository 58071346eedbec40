/*
 * pairs_nowait.c -- pinbench tracer test: planted pairs without a wait, for the comparison of
 * the Valgrind tool with lackey (tests/test_trace.py).
 *
 * N threads (OMP_NUM_THREADS, even), one parallel region: thread t and thread t + N/2 share
 * the buffer of pair t mod N/2, as in benchmarks/pairs.c, but no thread ever waits for
 * another inside the region (no barrier of its own, no spin): each, `rounds` times (first
 * argument, default 50), reads both halves of its pair's buffer and rewrites its own half.
 * The partner's half is read while the partner may be writing it: the values read feed
 * nothing printed, and every access is a volatile one that the compiler keeps. So each
 * thread makes the same accesses whatever the schedule, but for the runtime's start and end
 * of the region, where with OMP_WAIT_POLICY=passive a thread waits in the kernel rather
 * than spinning. Nothing printed depends on the time or on the values read.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define PAIRS 8    /* at most 16 threads */
#define WORDS 512  /* per half: 4 KiB, 64 lines */

static _Alignas(64) volatile uint64_t buf[PAIRS][2][WORDS];

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 50, n = omp_get_max_threads();
    if (n % 2 || n / 2 > PAIRS || rounds < 1) {
        fprintf(stderr, "pairs_nowait: an even number of threads up to %d, rounds >= 1\n",
                2 * PAIRS);
        return 2;
    }
#pragma omp parallel
    {
        int t = omp_get_thread_num(), pair = t % (n / 2), half = t / (n / 2);
        for (int r = 0; r < rounds; r++)
            for (int k = 0; k < WORDS; k++)
                buf[pair][half][k] = buf[pair][0][k] + buf[pair][1][k] + (uint64_t)r;
    }
    puts("validation: OK");
    return 0;
}
