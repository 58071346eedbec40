/*
 * array.c -- pinbench: the array microbenchmark of Acar, Chargueraud and
 * Rainey, "Parallel Work Inflation, Memory Effects, and their Empirical
 * Analysis", Section 4 "Sources of Work Inflation", paragraph "The
 * benchmark" (and its use in "Input size and work inflation", Figure 5, and
 * "Work inflation and optimization", Figure 6).
 *
 * As described there: an array of M cells, each one 64-bit integer.  Every
 * cell is processed once, and this whole pass is repeated R times.
 * Processing a cell performs L integer additions using the value of the cell
 * and writes the result back into the cell.  The parallel loop over the M
 * items is implemented by splitting the range in halves until pieces of at
 * most 1000 items remain, which are processed sequentially (here: recursive
 * OpenMP tasks, one half spawned as a task, the other run by the current
 * task, then taskwait; a pass completes before the next one starts).  With
 * gap G the i-th item processed is the cell at index
 *     (i*G + floor(i*G / M)) mod M,
 * so a piece of 1000 items touches cells G apart (G = 1: consecutive cells).
 * This index map visits every cell exactly once only if G divides M, so
 * M mod G = 0 is required (the paper's G = 32 with M a multiple of 32).
 * Each of the L additions adds 1; an empty asm statement keeps the compiler
 * from merging them into a single addition.
 *
 * Sharing pattern: no datum is shared by design, but which thread gets which
 * piece is decided dynamically by the task scheduler in every pass, so
 * cells migrate between the threads' caches from pass to pass; with G > 1
 * a cache line is touched by up to G different pieces, i.e. possibly by
 * different threads in the same pass.  Memory-bound for small L.
 *
 * Parameters (key=value):
 *   M  array size (cells)           quick 1000000   ref 4000000
 *   L  additions per cell           quick 1         ref 1
 *   G  gap                          quick 32        ref 32
 *   R  passes over the array        quick 30        ref 100
 * ref uses the paper's Figure 5 setting: G = 32, M*R = 4e8 operations.
 *
 * Validation: cells start as a[c] = c, so after the kernel every cell must
 * hold exactly c + R*L (which also proves that each cell was processed
 * exactly once per pass), and checksum = sum of the cells (mod 2^64) must
 * equal M(M-1)/2 + M*R*L; neither depends on N.
 */
#include "common.h"

/* command line (common.h): key, quick, ref, min, max */
static param P[] = {
    {"M", 1000000, 4000000, 1, 1LL << 34, 0},
    {"L", 1, 1, 1, 1000000, 0},
    {"G", 32, 32, 1, 1 << 20, 0},
    {"R", 30, 100, 1, 1000000000, 0},
};

#define GRAIN 1000 /* pieces of at most 1000 items run sequentially (as in the paper) */

/* keep each addition: the compiler may not fold the L additions into one */
#if defined(__GNUC__)
#define KEEP(x) __asm__ volatile("" : "+r"(x))
#else
#define KEEP(x) ((void)0)
#endif

/* process items [lo, hi) of one pass */
static void pass(uint64_t *a, uint64_t lo, uint64_t hi, uint64_t M, uint64_t L, uint64_t G)
{
    if (hi - lo > GRAIN) {
        uint64_t mid = lo + (hi - lo) / 2;
#pragma omp task firstprivate(a, lo, mid, M, L, G)
        pass(a, lo, mid, M, L, G);
        pass(a, mid, hi, M, L, G);
#pragma omp taskwait
        return;
    }
    /* item i -> cell (iG + floor(iG/M)) mod M, computed incrementally */
    uint64_t q = lo * G / M, r = lo * G % M;
    for (uint64_t i = lo; i < hi; i++) {
        uint64_t c = r + q < M ? r + q : r + q - M;
        uint64_t x = a[c];
        for (uint64_t l = 0; l < L; l++) {
            x += 1;
            KEEP(x);
        }
        a[c] = x;
        r += G;
        if (r >= M)
            r -= M, q++;
    }
}

int main(int argc, char **argv)
{
    const char *size = parse_args(argc, argv, P, NPARAMS(P));
    const uint64_t M = (uint64_t)P[0].val, L = (uint64_t)P[1].val,
                   G = (uint64_t)P[2].val, R = (uint64_t)P[3].val;
    if (M % G != 0)
        usage(argv[0], P, NPARAMS(P), "invalid parameters M=%" PRIu64 " G=%" PRIu64
              " (M must be a multiple of G)", M, G);
    uint64_t *a = xalloc(M * sizeof *a);

#pragma omp parallel for schedule(static) /* untimed: first touch, start the team */
    for (uint64_t c = 0; c < M; c++)
        a[c] = c;

    int nthreads = 0;
    double t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
    {
        nthreads = omp_get_num_threads();
        for (uint64_t rep = 0; rep < R; rep++)
            pass(a, 0, M, M, L, G);
    }
    double t1 = omp_get_wtime();

    uint64_t sum = 0, bad = M;
    for (uint64_t c = 0; c < M; c++) {
        if (bad == M && a[c] != c + R * L)
            bad = c;
        sum += a[c];
    }
    uint64_t expect = (M % 2 ? (M - 1) / 2 * M : M / 2 * (M - 1)) + M * R * L;

    print_params(size, P, NPARAMS(P), nthreads);
    print_kernel_time(t1 - t0);
    print_checksum_u64(sum);
    int ok = bad == M && sum == expect;
    if (ok)
        print_validation_ok();
    else if (bad < M)
        print_validation_failed("a[%" PRIu64 "] = %" PRIu64 ", expected %" PRIu64,
                                bad, a[bad], bad + R * L);
    else
        print_validation_failed("sum %" PRIu64 " != expected %" PRIu64, sum, expect);
    free(a);
    return ok ? 0 : 1;
}
