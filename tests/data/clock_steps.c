/* Test program: STEPS steps (argument 2, default 20) of MS / STEPS milliseconds each (MS:
 * argument 1, default 100), each spun in a parallel region; after every step it prints the
 * step's time in milliseconds and a running clock in seconds: the last "Wall clock" line is
 * the total, the first the first step's. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    double ms = argc > 1 ? atof(argv[1]) : 100.0, start = omp_get_wtime();
    int steps = argc > 2 ? atoi(argv[2]) : 20;
    for (int step = 1; step <= steps; step++) {
        double begun = omp_get_wtime();
#pragma omp parallel
        while (omp_get_wtime() < begun + ms / steps / 1000.0) {
        }
        printf("step %d: %.3f ms\n", step, 1000.0 * (omp_get_wtime() - begun));
        printf("Wall clock %.6f\n", omp_get_wtime() - start);
    }
    printf("validation: OK\n");
    return 0;
}
