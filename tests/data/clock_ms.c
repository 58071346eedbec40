/* Test program: spins MS milliseconds (argument 1, default 50) in a parallel region and
 * prints its own clock in milliseconds, as some programs do: "Time consumed(ms): 54.79". */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    double ms = argc > 1 ? atof(argv[1]) : 50.0, start = omp_get_wtime();
#pragma omp parallel
    while (omp_get_wtime() < start + ms / 1000.0) {
    }
    printf("Time consumed(ms): %.2f\nvalidation: OK\n", 1000.0 * (omp_get_wtime() - start));
    return 0;
}
