/*
 * spmv.c -- pinbench: sparse matrix-vector products, an irregular-access kernel.
 *
 * Sharing pattern: irregular, all to all.  y = A x with A an n x n matrix in
 * CSR form (d nonzeros per row, at column positions drawn by a hash of the row
 * and the slot, so spread uniformly over the whole vector), repeated `iters`
 * times with x and y swapped in between.  Each thread computes a contiguous
 * block of rows (`schedule(static)`) and writes only its own part of y, but
 * reads x at random positions: the lines of x that one thread wrote are read
 * by every other thread in the next sweep.  The gather defeats the hardware
 * prefetchers, so the kernel is bound by memory latency rather than bandwidth.
 * The matrix and both vectors are first-touched in parallel with the compute
 * schedule.
 *
 * Parameters (key=value):
 *   n      rows (and columns)                 quick 1048576 ref 4194304
 *   d      nonzeros per row                   quick 8       ref 16
 *   iters  products in the timed kernel       quick 6       ref 8
 *
 * Arithmetic is on 32-bit unsigned integers (wrapping), so every y[i] is the
 * same for every thread count, placement and compiler.  Validation: after the
 * last product, 4096 rows spread over the matrix are recomputed serially from
 * the vector it read and compared; the checksum is the sum of the final vector.
 */
#include "common.h"

/* command line (common.h): key, quick, ref, min, max */
static param P[] = {
    {"n", 1048576, 4194304, 1, 1LL << 30, 0},
    {"d", 8, 16, 1, 1024, 0},
    {"iters", 6, 8, 1, 1000000, 0},
};

/* splitmix64: the column of slot k of row i, and the nonzero's value */
static inline uint64_t mix(uint64_t z)
{
    z += UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* row i of y = A x */
static inline uint32_t row_product(const uint32_t *col, const uint32_t *val, const uint32_t *x,
                                   long d, long i)
{
    uint32_t sum = 0;
    for (long k = i * d; k < (i + 1) * d; k++)
        sum += val[k] * x[col[k]];
    return sum;
}

int main(int argc, char **argv)
{
    const char *size = parse_args(argc, argv, P, NPARAMS(P));
    const long n = (long)P[0].val, d = (long)P[1].val, iters = (long)P[2].val;
    if (n * d > (1LL << 32))
        usage(argv[0], P, NPARAMS(P), "n*d must be at most 2^32");
    uint32_t *col = xalloc((size_t)(n * d) * sizeof *col);
    uint32_t *val = xalloc((size_t)(n * d) * sizeof *val);
    uint32_t *x = xalloc((size_t)n * sizeof *x), *y = xalloc((size_t)n * sizeof *y);

#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        for (long k = i * d; k < (i + 1) * d; k++) {
            uint64_t h = mix((uint64_t)k);
            col[k] = (uint32_t)((h >> 32) % (uint64_t)n);
            val[k] = (uint32_t)(h & 7) + 1;
        }
        x[i] = (uint32_t)(i % 1000) + 1;
        y[i] = 0;
    }

    int nthreads = 0;
    double t0 = omp_get_wtime();
#pragma omp parallel
    {
#pragma omp single nowait
        nthreads = omp_get_num_threads();
        for (long it = 0; it < iters; it++) {
            const uint32_t *in = it % 2 ? y : x;
            uint32_t *out = it % 2 ? x : y;
#pragma omp for schedule(static)
            for (long i = 0; i < n; i++)
                out[i] = row_product(col, val, in, d, i);
        }
    }
    double t1 = omp_get_wtime();

    /* the last product read `last_in` and wrote `last_out` */
    const uint32_t *last_in = iters % 2 ? x : y, *last_out = iters % 2 ? y : x;
    long bad = -1;
    uint32_t expect = 0;
    for (long s = 0; s < 4096 && bad < 0; s++) {
        long i = (long)(mix((uint64_t)s ^ UINT64_C(0x5eed)) % (uint64_t)n);
        expect = row_product(col, val, last_in, d, i);
        if (last_out[i] != expect)
            bad = i;
    }
    uint64_t sum = 0;
    for (long i = 0; i < n; i++)
        sum += last_out[i];

    print_params(size, P, NPARAMS(P), nthreads);
    print_kernel_time(t1 - t0);
    print_checksum_u64(sum);
    if (bad < 0)
        print_validation_ok();
    else
        print_validation_failed("y[%ld] = %" PRIu32 ", expected %" PRIu32, bad, last_out[bad],
                                expect);
    free(col); free(val); free(x); free(y);
    return bad < 0 ? 0 : 1;
}
