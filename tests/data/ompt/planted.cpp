// The C++ variant of planted.c: thread 0 sleeps before an explicit barrier, R regions.
#include <omp.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char **argv) {
    int regions = argc > 1 ? std::atoi(argv[1]) : 3;
    int sleep_ms = argc > 2 ? std::atoi(argv[2]) : 200;
    std::vector<int> seen(regions, 0);
    for (int r = 0; r < regions; r++) {
#pragma omp parallel
        {
            if (omp_get_thread_num() == 0)
                std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
#pragma omp barrier
#pragma omp atomic
            seen[r]++;
        }
    }
    bool ok = true;
    for (int s : seen) ok = ok && s == omp_get_max_threads();
    std::printf("validation: %s\n", ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
