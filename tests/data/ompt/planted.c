/* Planted facts for the OMPT tool's tests (tests/test_ompt_tool.py).
 * R parallel regions; in each, thread 0 sleeps SLEEP_MS before an explicit barrier (the
 * others wait that long there), then every thread holds one critical section for HOLD_MS
 * (the others wait for it), then thread 0 creates TASKS tasks, each sleeping TASK_MS, and waits
 * for them (the other threads run tasks at the region's end barrier). INFLATE_MS: when the team
 * has more than one thread, every thread also works (sleeps, outside any wait) that long in each
 * region: work that exists only in parallel, a planted work inflation of P x R x INFLATE_MS. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int regions = argc > 1 ? atoi(argv[1]) : 3;
    int sleep_ms = argc > 2 ? atoi(argv[2]) : 200;
    int hold_ms = argc > 3 ? atoi(argv[3]) : 50;
    int tasks = argc > 4 ? atoi(argv[4]) : 8;
    int task_ms = argc > 5 ? atoi(argv[5]) : 0;
    int inflate_ms = argc > 6 ? atoi(argv[6]) : 0;
    int done = 0;
    for (int r = 0; r < regions; r++) {
#pragma omp parallel
        {
            if (omp_get_thread_num() == 0)
                usleep(sleep_ms * 1000);
            if (omp_get_num_threads() > 1)
                usleep(inflate_ms * 1000);
#pragma omp barrier
#pragma omp critical
            usleep(hold_ms * 1000);
#pragma omp master
            {
                for (int t = 0; t < tasks; t++) {
#pragma omp task
                    {
                        if (task_ms)
                            usleep(task_ms * 1000);
#pragma omp atomic
                        done++;
                    }
                }
#pragma omp taskwait
            }
        }
    }
    printf("tasks done: %d\nvalidation: %s\n", done, done == regions * tasks ? "OK" : "FAILED");
    return done == regions * tasks ? 0 : 1;
}
