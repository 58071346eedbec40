/*
 * count_rule.c -- pinbench tracer test: which accesses the parallel-* weights count.
 * Compiled WITHOUT -fsanitize=thread but linked with the tsan runtime, it calls the
 * ThreadSanitizer entry points itself (entries and exits as an instrumented program
 * makes them), so the runtime sees exactly these reads of one 64-byte line, in this
 * order, and nothing else:
 *
 *   main, serial:                        thread 0 reads 5 times;
 *   a region of one thread (not active): thread 0 reads twice;
 *   a region of 3 threads, in turn (barriers): thread t reads t + 1 times, one of them
 *     in a function it calls;
 *   main again, serial after the region: thread 0 reads 7 times.
 *
 * Every access: counts {0: 15, 1: 2, 2: 3}.  Inside active parallel regions only:
 * {0: 1, 1: 2, 2: 3} (the serial reads after the region count only if the runtime fails
 * to give main its serial state back when the region's function exits).  Needs exactly
 * 3 threads (OMP_NUM_THREADS=3); the matrices are worked out in tests/test_trace.py.
 */
#include <omp.h>
#include <stdio.h>

void __tsan_init(void);
void __tsan_func_entry(void *pc);
void __tsan_func_exit(void);
void __tsan_read8(void *addr);

static _Alignas(64) char line[64];

static void reads(int times)
{
    for (int i = 0; i < times; i++)
        __tsan_read8(line);
}

static void callee(void)
{
    __tsan_func_entry(0);
    reads(1);
    __tsan_func_exit();
}

/* what an instrumented module's constructor does: the runtime then knows compiled code
 * calls it */
__attribute__((constructor)) static void instrumented(void) { __tsan_init(); }

int main(void)
{
    __tsan_func_entry(0);
    reads(5);
#pragma omp parallel num_threads(1)
    {
        __tsan_func_entry(0);
        reads(2);
        __tsan_func_exit();
    }
    int bad = 0;
#pragma omp parallel reduction(+ : bad)
    {
        __tsan_func_entry(0);
        int t = omp_get_thread_num();
        bad += omp_get_num_threads() != 3 && t == 0;
        for (int turn = 0; turn < 3; turn++) {
            if (t == turn) {
                reads(t);
                callee();
            }
#pragma omp barrier
        }
        __tsan_func_exit();
    }
    reads(7);
    __tsan_func_exit();
    if (bad) {
        fprintf(stderr, "count_rule: needs exactly 3 threads\n");
        return 1;
    }
    return 0;
}
