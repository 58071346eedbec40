#include <omp.h>

#include <cstdio>

#include "npb.hpp"

// The results block as NAS prints it: the time with two decimals only.
void print_results(const char *name, char cls, long size, int iterations, double seconds,
                   double mops, bool verified) {
    std::printf("\n\n %s Benchmark Completed.\n", name);
    std::printf(" Class           =                        %c\n", cls);
    std::printf(" Size            =             %12ld\n", size);
    std::printf(" Iterations      =             %12d\n", iterations);
    std::printf(" Time in seconds =             %12.2f\n", seconds);
    std::printf(" Total threads   =             %12d\n", omp_get_max_threads());
    std::printf(" Mop/s total     =             %12.2f\n", mops);
    std::printf(" Verification    =             %12s\n", verified ? "SUCCESSFUL" : "UNSUCCESSFUL");
}
