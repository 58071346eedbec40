/*
 * falseshare.c -- pinbench: false sharing between all threads.
 *
 * Sharing pattern: each thread repeatedly updates its own 64-bit counter,
 * and the counters are packed adjacently in one 64-byte aligned array
 * (stride=1: 8 counters per cache line, so threads 0-7 share one line,
 * threads 8-15 the next, ...).  No datum is shared, but the line ping-pongs
 * between the cores of the threads that hit it.  Counters are accessed
 * through a volatile pointer, so every update is a real load and store.
 * stride=8 puts every counter in its own line (control without false sharing).
 *
 * Work (fixed, independent of N): the global iteration range [0, incs) is
 * split into N contiguous blocks; thread t runs block t and for every
 * iteration i of its block does counter[t] += i.
 *
 * Parameters (key=value):
 *   incs    total number of counter updates      quick 100000000  ref 1200000000
 *   stride  distance between counters in words   quick 1          ref 1
 *
 * Validation: every counter must equal the sum of the iteration numbers of
 * its block (closed form), and checksum = sum of all counters must equal
 * incs (incs - 1) / 2 (mod 2^64), which does not depend on N.
 */
#include "common.h"

/* command line (common.h): key, quick, ref, min, max */
static param P[] = {
    {"incs", 100000000, 1200000000, 1, 1LL << 40, 0},
    {"stride", 1, 1, 1, 1024, 0},
};

/* first iteration of block t when [0, total) is split into N blocks */
static uint64_t block_start(uint64_t total, int N, int t)
{
    uint64_t q = total / N, r = total % N;
    return q * t + ((uint64_t)t < r ? (uint64_t)t : r);
}

/* sum of the integers in [lo, hi), mod 2^64 */
static uint64_t range_sum(uint64_t lo, uint64_t hi)
{
    uint64_t a = hi - lo, b = lo + hi - 1; /* sum = a * b / 2, one of them is even */
    return a % 2 == 0 ? a / 2 * b : b / 2 * a;
}

int main(int argc, char **argv)
{
    const char *size = parse_args(argc, argv, P, NPARAMS(P));
    const uint64_t incs = (uint64_t)P[0].val;
    const long stride = (long)P[1].val;
    const int nmax = omp_get_max_threads();
    uint64_t *cnt = xalloc((size_t)nmax * stride * sizeof *cnt);
    memset(cnt, 0, (size_t)nmax * stride * sizeof *cnt);

#pragma omp parallel /* untimed: start the team */
    cnt[(long)omp_get_thread_num() * stride] = 0;

    int nthreads = 0;
    double t0 = omp_get_wtime();
#pragma omp parallel
    {
        int t = omp_get_thread_num(), N = omp_get_num_threads();
        volatile uint64_t *c = &cnt[(long)t * stride];
        uint64_t hi = block_start(incs, N, t + 1);
        if (t == 0)
            nthreads = N;
        for (uint64_t i = block_start(incs, N, t); i < hi; i++)
            *c += i;
    }
    double t1 = omp_get_wtime();

    uint64_t sum = 0;
    int bad = -1;
    for (int t = 0; t < nthreads; t++) {
        uint64_t v = cnt[(long)t * stride];
        if (bad < 0 && v != range_sum(block_start(incs, nthreads, t),
                                      block_start(incs, nthreads, t + 1)))
            bad = t;
        sum += v;
    }
    uint64_t expect = range_sum(0, incs);

    print_params(size, P, NPARAMS(P), nthreads);
    print_kernel_time(t1 - t0);
    print_checksum_u64(sum);
    int ok = bad < 0 && sum == expect;
    if (ok)
        print_validation_ok();
    else if (bad >= 0)
        print_validation_failed("counter of thread %d", bad);
    else
        print_validation_failed("sum %" PRIu64 " != expected %" PRIu64, sum, expect);
    free(cnt);
    return ok ? 0 : 1;
}
