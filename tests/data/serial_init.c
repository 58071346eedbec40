/*
 * serial_init.c -- pinbench tracer test: serial phases that swamp the parallel sharing.
 *
 * A first parallel region starts the team (so the worker threads already exist), then
 * the master thread alone initialises two (n+2) x (n+2) grids.  `iters` Jacobi sweeps
 * follow, one parallel region each, rows split statically (`parallel for
 * schedule(static)`), so thread i owns one contiguous block of rows and reads only the
 * boundary rows of threads i-1 and i+1.  Between the sweeps the master alone sums the new
 * field (a serial phase between parallel regions), and at the end it checks every point.
 *
 * Counting every access, thread 0 shares every line of every block with its owner (the
 * initialisation and the serial phases): the matrix is a star around thread 0.  Counting
 * only the accesses made inside parallel regions leaves the nearest-neighbour sharing,
 * W[i][j] > 0 essentially only for |i - j| = 1.
 *
 * Usage: serial_init [n [iters]] (default 510 10; rows of n + 2 = 512 doubles are whole
 * 64-byte lines).  Prints "checksum: <sum>" and "validation: OK" (the initial field is an
 * eigenvector of the Jacobi operator, so after T sweeps it must be lambda^T times itself),
 * exit status 0; "validation: FAILED" and status 1 otherwise.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

/* one Jacobi sweep of rows [1, n] from src into dst; W = n + 2.  firstprivate: each
 * thread reads the master's copies once per region (clang would otherwise read them
 * through the master's stack at every row: true, but not the sharing this test is about) */
static void sweep(const double *src, double *dst, long n, long W)
{
#pragma omp parallel for schedule(static) default(none) firstprivate(src, dst, n, W)
    for (long y = 1; y <= n; y++)
        for (long x = 1; x <= n; x++)
            dst[y * W + x] = 0.25 * ((src[(y - 1) * W + x] + src[(y + 1) * W + x]) +
                                     (src[y * W + x - 1] + src[y * W + x + 1]));
}

int main(int argc, char **argv)
{
    const long n = argc > 1 ? atol(argv[1]) : 510, iters = argc > 2 ? atol(argv[2]) : 10;
    const long W = n + 2;
    if (n < 1 || iters < 1) {
        fprintf(stderr, "usage: serial_init [n [iters]] (both at least 1)\n");
        return 2;
    }
    int team = 0;
#pragma omp parallel /* start the team: the workers exist during the serial phases */
#pragma omp single
    team = omp_get_num_threads();

    const double pi = acos(-1.0);
    double *u = aligned_alloc(64, (size_t)(W * W) * sizeof *u);
    double *v = aligned_alloc(64, (size_t)(W * W) * sizeof *v);
    double *s = malloc((size_t)W * sizeof *s);
    if (!u || !v || !s) {
        fprintf(stderr, "serial_init: out of memory\n");
        return 2;
    }
    for (long i = 0; i < W; i++) /* the master alone: s, u and v */
        s[i] = (i == 0 || i == n + 1) ? 0.0 : sin(pi * (double)i / (double)(n + 1));
    for (long y = 0; y < W; y++)
        for (long x = 0; x < W; x++) {
            u[y * W + x] = s[y] * s[x];
            v[y * W + x] = 0.0;
        }

    double total = 0.0;
    for (long it = 0; it < iters; it++) {
        const double *src = it % 2 ? v : u;
        double *dst = it % 2 ? u : v;
        sweep(src, dst, n, W);
        total = 0.0; /* the master alone, between two parallel regions */
        for (long i = 0; i < W * W; i++)
            total += dst[i];
    }

    const double *fin = iters % 2 ? v : u;
    const double scale = pow(cos(pi / (double)(n + 1)), (double)iters);
    double maxerr = 0.0;
    for (long y = 0; y < W; y++)
        for (long x = 0; x < W; x++) {
            double e = fabs(fin[y * W + x] - scale * s[y] * s[x]);
            if (!(e <= maxerr)) /* also catches NaN */
                maxerr = e;
        }
    printf("threads: %d\nchecksum: %.17g\n", team, total);
    int ok = maxerr < 1e-9;
    printf("validation: %s\n", ok ? "OK" : "FAILED");
    free(u);
    free(v);
    free(s);
    return ok ? 0 : 1;
}
