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
#include <errno.h>
#include <inttypes.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- command line: [quick|ref] [key=value ...] (same in every benchmark) */
typedef struct { const char *key; long long quick, ref, min, max, val; } param;
static param P[] = {
    {"n", 2000000, 16000000, 1, 1LL << 32, 0},
    {"iters", 30, 150, 1, 1000000, 0},
};
enum { NP = sizeof P / sizeof P[0] };

static void usage(const char *prog, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "; usage: %s [quick|ref] [key=value ...], keys:", prog);
    for (int k = 0; k < NP; k++)
        fprintf(stderr, " %s", P[k].key);
    fprintf(stderr, "\n");
    exit(2);
}

static const char *parse_args(int argc, char **argv)
{
    const char *size = "quick";
    int i = 1;
    if (argc > 1 && !strchr(argv[1], '=')) {
        if (strcmp(argv[1], "quick") && strcmp(argv[1], "ref"))
            usage(argv[0], "unknown argument '%s'", argv[1]);
        size = argv[i++];
    }
    for (int k = 0; k < NP; k++)
        P[k].val = strcmp(size, "ref") ? P[k].quick : P[k].ref;
    for (; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        int k = 0;
        while (eq && k < NP && (strncmp(P[k].key, argv[i], eq - argv[i]) ||
                                P[k].key[eq - argv[i]]))
            k++;
        if (!eq || k == NP)
            usage(argv[0], "unknown argument '%s'", argv[i]);
        char *end;
        errno = 0;
        long long v = strtoll(eq + 1, &end, 10);
        if (errno || end == eq + 1 || *end || v < P[k].min || v > P[k].max)
            usage(argv[0], "invalid value '%s' (allowed %lld..%lld)", argv[i],
                  P[k].min, P[k].max);
        P[k].val = v;
        size = "custom";
    }
    return size;
}
/* ---- end of command line */

static void *xalloc(size_t bytes)
{
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) {
        printf("validation: FAILED cannot allocate %zu bytes\n", bytes);
        exit(1);
    }
    return p;
}

/* sum_{i<n} (i mod m) */
static uint64_t sum_mod(uint64_t n, uint64_t m)
{
    uint64_t r = n % m;
    return n / m * (m * (m - 1) / 2) + r * (r - 1) / 2;
}

int main(int argc, char **argv)
{
    const char *size = parse_args(argc, argv);
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

    printf("params: size=%s n=%ld iters=%ld threads=%d\n", size, n, iters, nthreads);
    printf("kernel_time_s: %.6f\n", t1 - t0);
    printf("checksum: %" PRIu64 "\n", sum);
    int ok = bad < 0 && sum == expect;
    if (ok)
        printf("validation: OK\n");
    else if (bad >= 0)
        printf("validation: FAILED a[%ld] = %.17g, expected %ld\n", bad, a[bad],
               bad % 1024 + 3 * (bad % 7));
    else
        printf("validation: FAILED sum %" PRIu64 " != expected %" PRIu64 "\n", sum, expect);
    free(a); free(b); free(c);
    return ok ? 0 : 1;
}
