/*
 * weights.c -- pinbench tracer test: known accesses, to check the weight definitions
 * by hand.  Compiled WITHOUT -fsanitize=thread but linked with the tsan runtime, it
 * calls the ThreadSanitizer entry points itself, so the runtime sees exactly these
 * accesses (in this order, barriers between the steps), and nothing else:
 *
 *   line A = buf[0..63]:    thread 0 reads 3 times, then thread 1 reads 5 times;
 *   line B = buf[64..127]:  thread 0 twice, then thread 1 once, then thread 2 4 times;
 *   line C = buf[128..191]: thread 2 7 times;
 *   then thread 1 reads 8 bytes at buf+124 (straddling B and C with 64-byte lines)
 *   and 8 bytes at buf+188 (straddling C and D = buf[192..255]).
 *
 * Needs exactly 3 threads (OMP_NUM_THREADS=3).  The expected matrices for each
 * weight and line size are worked out in tests/test_trace.py.
 */
#include <omp.h>
#include <stdio.h>

void __tsan_init(void);
void __tsan_func_entry(void *pc);
void __tsan_read8(void *addr);
void __tsan_unaligned_read8(void *addr);

static _Alignas(128) char buf[256];

static void reads(int t, int who, int offset, int times)
{
    if (t == who)
        for (int i = 0; i < times; i++)
            __tsan_read8(buf + offset);
#pragma omp barrier
}

/* what an instrumented module's constructor does: the runtime then knows compiled code
 * calls it */
__attribute__((constructor)) static void instrumented(void) { __tsan_init(); }

int main(void)
{
    int bad = 0;
#pragma omp parallel reduction(+ : bad)
    {
        __tsan_func_entry(0);
        int t = omp_get_thread_num();
        bad += omp_get_num_threads() != 3 && t == 0;
        reads(t, 0, 0, 3);   /* A */
        reads(t, 1, 8, 5);   /* A */
        reads(t, 0, 64, 2);  /* B */
        reads(t, 1, 72, 1);  /* B */
        reads(t, 2, 120, 4); /* B */
        reads(t, 2, 128, 7); /* C */
        if (t == 1) {
            __tsan_unaligned_read8(buf + 124); /* B and C */
            __tsan_unaligned_read8(buf + 188); /* C and D */
        }
    }
    if (bad) {
        fprintf(stderr, "weights: needs exactly 3 threads\n");
        return 1;
    }
    return 0;
}
