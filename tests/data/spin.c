/* Test program: every OpenMP thread spins for MS milliseconds (argument 1, default 50).
 * Exit status and output follow the bundled benchmarks' convention; "crash" as argument 2
 * makes it exit with status 3, "hang" makes it sleep forever, "bad" fails validation. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    double ms = argc > 1 ? atof(argv[1]) : 50.0;
    const char *mode = argc > 2 ? argv[2] : "";
    long total = 0;
#pragma omp parallel reduction(+ : total)
    {
        double end = omp_get_wtime() + ms / 1000.0;
        while (omp_get_wtime() < end) {
        }
        total += 1;
    }
    if (strcmp(mode, "crash") == 0) return 3;
    if (strcmp(mode, "hang") == 0) pause();
    printf("checksum: %ld\n", total);
    printf("kernel_time_s: %.6f\n", ms / 1000.0);
    printf("validation: %s\n", strcmp(mode, "bad") == 0 ? "FAILED" : "OK");
    return 0;
}
