/* Test program: spins MS milliseconds (argument 1, default 50) in a parallel region and
 * prints its own clock, in seconds, on stderr (as Fortran codes often do), a line after it. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    double ms = argc > 1 ? atof(argv[1]) : 50.0, start = omp_get_wtime();
#pragma omp parallel
    while (omp_get_wtime() < start + ms / 1000.0) {
    }
    fprintf(stderr, "Wall clock %.6f\nFirst step overhead 0.0\n", omp_get_wtime() - start);
    printf("validation: OK\n");
    return 0;
}
