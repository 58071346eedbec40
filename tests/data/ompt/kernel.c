/* Planted facts for the explanation's checks (tests/test_explain.py): like the NAS kernels, the
 * program prints the time of its kernel only ("Time in seconds = ").
 *   kernel INIT_MS KERNEL_MS [GOMP_MS [TOOL_MS]]
 * - initialisation, not in the printed time: INIT_MS of work shared by the threads (a
 *   worksharing loop of 20 chunks of INIT_MS / 20 each): neither idle time nor inflation;
 * - the kernel, printed: thread 0 works KERNEL_MS while the others wait at the region's end
 *   barrier, (P - 1) x KERNEL_MS of idle time;
 * - GOMP_MS: serial work before the kernel when the program runs on GCC's libgomp, not on
 *   LLVM's libomp (which has __kmpc_fork_call): a planted difference between the runtimes;
 * - TOOL_MS: serial work inside the kernel when the program runs under pinbench's OMPT tool
 *   (PINBENCH_OMPT_OUT set) on a binding (OMP_PLACES set): explained runs of a bound strategy
 *   that do not reproduce its timing runs. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int init_ms = argc > 1 ? atoi(argv[1]) : 300;
    int kernel_ms = argc > 2 ? atoi(argv[2]) : 60;
    int gomp_ms = argc > 3 ? atoi(argv[3]) : 0;
    int tool_ms = argc > 4 ? atoi(argv[4]) : 0;
    int chunks = 0;
#pragma omp parallel for schedule(static) reduction(+ : chunks)
    for (int i = 0; i < 20; i++) {
        usleep(init_ms * 50);  /* INIT_MS / 20, in microseconds */
        chunks++;
    }
    if (dlsym(RTLD_DEFAULT, "__kmpc_fork_call") == NULL)
        usleep(gomp_ms * 1000);
    double start = omp_get_wtime();
    if (getenv("PINBENCH_OMPT_OUT") && getenv("OMP_PLACES"))
        usleep(tool_ms * 1000);
#pragma omp parallel
    {
        if (omp_get_thread_num() == 0)
            usleep(kernel_ms * 1000);
    }
    printf("Time in seconds = %.3f\n", omp_get_wtime() - start);
    printf("validation: %s\n", chunks == 20 ? "OK" : "FAILED");
    return chunks == 20 ? 0 : 1;
}
