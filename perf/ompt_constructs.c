/* Micro-loops of OpenMP constructs for perf/ompt_overhead.py --constructs (what the OMPT tool
 * costs per construct) and tests/test_explain.py (the tool counts each exactly).
 * Usage: ompt_constructs KIND N, KIND one of
 *   barrier    one region, N explicit barriers;
 *   parallel   N empty parallel regions;
 *   lock       one region, each thread takes and releases one omp_lock_t N times;
 *   reduction  one region, N worksharing loops of one iteration per thread with a reduction.
 * Prints the loop's time (omp_get_wtime), the thread count and "validation: OK". */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: ompt_constructs barrier|parallel|lock|reduction N\n");
        return 2;
    }
    const char *kind = argv[1];
    long n = atol(argv[2]), total = 0, expected = 0;
    int threads = omp_get_max_threads();
    omp_lock_t lock;
    omp_init_lock(&lock);
    double start = omp_get_wtime();
    if (strcmp(kind, "barrier") == 0) {
#pragma omp parallel reduction(+ : total)
        for (long i = 0; i < n; i++) {
#pragma omp barrier
            total++;
        }
        expected = n * threads;
    } else if (strcmp(kind, "parallel") == 0) {
        for (long i = 0; i < n; i++) {
#pragma omp parallel
            {
#pragma omp master
                total++;
            }
        }
        expected = n;
    } else if (strcmp(kind, "lock") == 0) {
#pragma omp parallel
        for (long i = 0; i < n; i++) {
            omp_set_lock(&lock);
            total++;
            omp_unset_lock(&lock);
        }
        expected = n * threads;
    } else if (strcmp(kind, "reduction") == 0) {
#pragma omp parallel
        for (long i = 0; i < n; i++) {
#pragma omp for reduction(+ : total)
            for (int k = 0; k < omp_get_num_threads(); k++)
                total += 1;
        }
        expected = n * threads;
    } else {
        fprintf(stderr, "ompt_constructs: unknown kind %s\n", kind);
        return 2;
    }
    double seconds = omp_get_wtime() - start;
    omp_destroy_lock(&lock);
    printf("loop_time_s: %.9f\nthreads: %d\nvalidation: %s\n", seconds, threads,
           total == expected ? "OK" : "FAILED");
    return total == expected ? 0 : 1;
}
