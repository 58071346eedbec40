/*
 * stencil.c -- pinbench: 2-D Jacobi stencil, nearest-neighbour sharing.
 *
 * Sharing pattern: a 5-point Jacobi sweep over an n x n interior grid (plus a
 * fixed zero boundary) with `#pragma omp for schedule(static)` over rows, so
 * thread i owns one contiguous block of rows and reads the boundary row of
 * thread i-1 and of thread i+1 in every sweep (thread 0 and thread N-1 have a
 * single neighbour).  Both grids are first-touched with the same schedule.
 * Sharing volume per sweep is 2 rows per thread; placing neighbours in thread
 * number on cores that share a cache makes the halo exchange cheaper.
 *
 * Parameters (key=value):
 *   n      interior grid size (two (n+2)^2 double grids)  quick 512   ref 1024
 *   iters  Jacobi sweeps in the timed kernel               quick 400   ref 3000
 *
 * Validation: the initial field u0(x,y) = sin(pi x/(n+1)) sin(pi y/(n+1)) is
 * an eigenvector of the Jacobi operator with zero Dirichlet boundary, with
 * eigenvalue lambda = cos(pi/(n+1)).  After T sweeps the field must equal
 * lambda^T u0 (checked at every point, max abs error < 1e-9).  Every point is
 * computed by the same expression whatever the partition and the checksum
 * (sum of the final field) is summed serially in a fixed order, so it is
 * bit-identical for every thread count and placement.
 */
#include "common.h"
#include <math.h>

/* command line (common.h): key, quick, ref, min, max */
static param P[] = {
    {"n", 512, 1024, 1, 100000, 0},
    {"iters", 400, 3000, 1, 100000000, 0},
};

int main(int argc, char **argv)
{
    const char *size = parse_args(argc, argv, P, NPARAMS(P));
    const long n = (long)P[0].val, iters = (long)P[1].val, W = n + 2;
    const double pi = acos(-1.0);
    double *u = xalloc((size_t)W * W * sizeof *u), *v = xalloc((size_t)W * W * sizeof *v);
    double *s = xalloc((size_t)W * sizeof *s); /* s[i] = sin(pi i/(n+1)), 0 at the boundary */
    for (long i = 0; i < W; i++)
        s[i] = (i == 0 || i == n + 1) ? 0.0 : sin(pi * (double)i / (double)(n + 1));

    /* untimed: first touch with the kernel's row partition */
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (long y = 1; y <= n; y++)
            for (long x = 0; x < W; x++) {
                u[y * W + x] = s[y] * s[x];
                v[y * W + x] = 0.0;
            }
#pragma omp single
        for (long x = 0; x < W; x++)
            u[x] = v[x] = u[(n + 1) * W + x] = v[(n + 1) * W + x] = 0.0;
    }

    int nthreads = 0;
    double t0 = omp_get_wtime();
#pragma omp parallel
    {
        const double *src = u;
        double *dst = v;
        if (omp_get_thread_num() == 0)
            nthreads = omp_get_num_threads();
        for (long it = 0; it < iters; it++) {
#pragma omp for schedule(static)
            for (long y = 1; y <= n; y++)
                for (long x = 1; x <= n; x++)
                    dst[y * W + x] = 0.25 * ((src[(y - 1) * W + x] + src[(y + 1) * W + x]) +
                                             (src[y * W + x - 1] + src[y * W + x + 1]));
            const double *tmp = dst; /* implicit barrier above: swap roles */
            dst = (double *)src, src = tmp;
        }
    }
    double t1 = omp_get_wtime();

    const double *fin = iters % 2 ? v : u;
    const double scale = pow(cos(pi / (double)(n + 1)), (double)iters);
    double sum = 0.0, maxerr = 0.0;
    for (long y = 0; y < W; y++)
        for (long x = 0; x < W; x++) {
            double e = fabs(fin[y * W + x] - scale * s[y] * s[x]);
            if (!(e <= maxerr)) /* also catches NaN */
                maxerr = e;
            sum += fin[y * W + x];
        }

    print_params(size, P, NPARAMS(P), nthreads);
    print_kernel_time(t1 - t0);
    print_checksum_f64(sum);
    int ok = maxerr < 1e-9;
    if (ok)
        print_validation_ok();
    else
        print_validation_failed("max |u - lambda^T u0| = %.3g", maxerr);
    free(u); free(v); free(s);
    return ok ? 0 : 1;
}
