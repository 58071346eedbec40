/* Planted phases for the explained runs' checks (tests/test_explain.py): R parallel regions,
 * a serial part between them, and a work that may depend on the run.
 * In each region the team works (sleeps) WORK_MS, each thread its share, thread 0 WAIT_MS more,
 * so that the others wait that long at the region's end barrier; then every thread takes one
 * critical section.
 * Between two regions (and after the last) the initial thread works alone SERIAL_MS: the
 * workers are outside any region. TARGET_MS > 0: the program calibrates itself, as benchmarks
 * that size their repetitions to a target time do: it runs regions until TARGET_MS have passed,
 * so the number of regions, barriers and critical sections varies between runs. ONE_FACTOR: a
 * one-thread run works that many times WORK_MS in each region (other work at one thread).
 * Usage: phases R WORK_MS WAIT_MS SERIAL_MS [TARGET_MS [ONE_FACTOR]] */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(double ms) {
    if (ms > 0)
        usleep((useconds_t)(ms * 1e3));
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: phases R WORK_MS WAIT_MS SERIAL_MS [TARGET_MS [ONE_FACTOR]]\n");
        return 2;
    }
    int regions = atoi(argv[1]);
    double work_ms = atof(argv[2]), wait_ms = atof(argv[3]), serial_ms = atof(argv[4]);
    double target_ms = argc > 5 ? atof(argv[5]) : 0.0;
    double one_factor = argc > 6 ? atof(argv[6]) : 1.0;
    if (omp_get_max_threads() == 1)
        work_ms *= one_factor;
    long entered = 0;
    int done = 0;
    double start = now_s();
    while (target_ms > 0 ? (now_s() - start) * 1e3 < target_ms : done < regions) {
#pragma omp parallel reduction(+ : entered)
        {
            sleep_ms(work_ms / omp_get_num_threads() + (omp_get_thread_num() == 0 ? wait_ms : 0));
#pragma omp critical
            entered++;
        }
        done++;
        sleep_ms(serial_ms);
    }
    printf("regions: %d\ncritical sections: %ld\nvalidation: %s\n", done, entered,
           entered >= done ? "OK" : "FAILED");
    return entered >= done ? 0 : 1;
}
