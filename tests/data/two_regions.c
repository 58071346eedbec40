/* Two parallel regions, A then B, each run REPS times (argv[1], default 3): the re-binding
 * shim's test program (tests/test_rebind.py). Each thread of each region instance prints
 * the CPU it runs on, as "region A|B INSTANCE THREAD CPU". */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 3;
    for (int r = 0; r < reps; r++) {
#pragma omp parallel
        {
#pragma omp critical
            printf("region A %d %d %d\n", r, omp_get_thread_num(), sched_getcpu());
        }
#pragma omp parallel
        {
#pragma omp critical
            printf("region B %d %d %d\n", r, omp_get_thread_num(), sched_getcpu());
        }
    }
    printf("validation: OK\n");
    return 0;
}
