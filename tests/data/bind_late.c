/* Test program: OpenMP thread 1 waits on CPU argv[1], without running, for the first 15 ms
 * after main started, then goes to the place the runtime gave it, as a thread just created
 * has its creator's CPUs until its runtime binds it; every thread spins to argv[2] ms. */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
    double start = omp_get_wtime();
    int cpu = atoi(argv[1]);
    double ms = atof(argv[2]);
#pragma omp parallel
    {
        if (omp_get_thread_num() == 1) {
            cpu_set_t place, early;
            sched_getaffinity(0, sizeof place, &place);
            CPU_ZERO(&early);
            CPU_SET(cpu, &early);
            sched_setaffinity(0, sizeof early, &early);
            double left = start + 0.015 - omp_get_wtime();
            struct timespec wait = {0, left > 0 ? (long)(left * 1e9) : 0};
            nanosleep(&wait, NULL);
            sched_setaffinity(0, sizeof place, &place);
        }
        while (omp_get_wtime() < start + ms / 1000.0) {
        }
    }
    printf("validation: OK\n");
    return 0;
}
