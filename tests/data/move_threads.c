/* Test program: each OpenMP thread moves itself onto CPU argv[1] (sched_setaffinity), as a
 * program that binds its own threads does, then spins argv[2] ms; "main" as argv[3] moves
 * the initial thread only. */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    int cpu = atoi(argv[1]);
    double ms = atof(argv[2]);
    int main_only = argc > 3 && strcmp(argv[3], "main") == 0;
#pragma omp parallel
    {
        if (!main_only || omp_get_thread_num() == 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            sched_setaffinity(0, sizeof set, &set);
        }
        double end = omp_get_wtime() + ms / 1000.0;
        while (omp_get_wtime() < end) {
        }
    }
    printf("validation: OK\n");
    return 0;
}
