/*
 * triad.c -- pinbench: STREAM-like triad, no sharing between threads.
 *
 * Sharing pattern: none.  a[i] = b[i] + s*c[i] over three double arrays,
 * `#pragma omp for schedule(static)` (one contiguous block per thread) in
 * every iteration, and the arrays are first-touched in parallel with the
 * same schedule, so each thread only ever touches its own pages.  The
 * benchmark is bound by memory bandwidth; placement matters through which
 * memory controllers / caches the threads use (and NUMA first touch).
 *
 * Parameters (key=value):
 *   n      elements per array (3 arrays of n doubles)   quick 2000000  ref 16000000
 *   iters  triad sweeps in the timed kernel              quick 30       ref 150
 *
 * Validation: b[i] = i mod 1024 and c[i] = i mod 7 are small integers and
 * s = 3, so every a[i] is an exact integer in double arithmetic (with or
 * without FMA).  Every a[i] is compared with (i mod 1024) + 3 (i mod 7), and
 * the checksum sum(a) (integer, exact) with its closed form.  The result is
 * therefore identical for every thread count and placement.
 */
#include "common.h"

/* command line (common.h): key, quick, ref, min, max */
static param P[] = {
    {"n", 2000000, 16000000, 1, 1LL << 32, 0},
    {"iters", 30, 150, 1, 1000000, 0},
};

/* sum_{i<n} (i mod m) */
static uint64_t sum_mod(uint64_t n, uint64_t m)
{
    uint64_t r = n % m;
    return n / m * (m * (m - 1) / 2) + r * (r - 1) / 2;
}

int main(int argc, char **argv)
{
    const char *size = parse_args(argc, argv, P, NPARAMS(P));
    const long n = (long)P[0].val, iters = (long)P[1].val;
    const double s = 3.0;
    double *a = xalloc(n * sizeof *a), *b = xalloc(n * sizeof *b),
           *c = xalloc(n * sizeof *c);

#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        a[i] = 0.0;
        b[i] = (double)(i % 1024);
        c[i] = (double)(i % 7);
    }

    int nthreads = 0;
    double t0 = omp_get_wtime();
#pragma omp parallel
    {
#pragma omp single nowait
        nthreads = omp_get_num_threads();
        for (long it = 0; it < iters; it++) {
#pragma omp for schedule(static)
            for (long i = 0; i < n; i++)
                a[i] = b[i] + s * c[i];
        }
    }
    double t1 = omp_get_wtime();

    uint64_t sum = 0;
    long bad = -1;
    for (long i = 0; i < n; i++) {
        if (bad < 0 && a[i] != (double)(i % 1024 + 3 * (i % 7)))
            bad = i;
        sum += (uint64_t)a[i];
    }
    uint64_t expect = sum_mod(n, 1024) + 3 * sum_mod(n, 7);

    print_params(size, P, NPARAMS(P), nthreads);
    print_kernel_time(t1 - t0);
    print_checksum_u64(sum);
    int ok = bad < 0 && sum == expect;
    if (ok)
        print_validation_ok();
    else if (bad >= 0)
        print_validation_failed("a[%ld] = %.17g, expected %ld", bad, a[bad],
                                bad % 1024 + 3 * (bad % 7));
    else
        print_validation_failed("sum %" PRIu64 " != expected %" PRIu64, sum, expect);
    free(a); free(b); free(c);
    return ok ? 0 : 1;
}
