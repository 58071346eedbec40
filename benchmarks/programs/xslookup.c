/* A stand-in for XSBench (the Monte Carlo neutron transport cross-section lookup proxy):
 * random lookups into a shared unionized energy grid, with XSBench's command line and habits.
 *   xslookup -t THREADS -s small|large -l LOOKUPS
 * It sets its own thread count from -t (omp_set_num_threads), as XSBench does, so a run
 * ignores OMP_NUM_THREADS; and like XSBench on several valid problems, it exits with
 * status 1 after a successful "large" run. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long lcg(unsigned long long *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

static int usage(const char *prog) {
    fprintf(stderr, "usage: %s -t THREADS -s small|large -l LOOKUPS\n", prog);
    return 64;
}

int main(int argc, char **argv) {
    int threads = 1, large = 0;
    long lookups = 100000;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) return usage(argv[0]);
        if (!strcmp(argv[i], "-t")) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-l")) lookups = atol(argv[++i]);
        else if (!strcmp(argv[i], "-s")) large = !strcmp(argv[++i], "large");
        else return usage(argv[0]);
    }
    if (threads < 1 || lookups < 1) return usage(argv[0]);
    omp_set_num_threads(threads);
    long gridpoints = large ? 1L << 17 : 1L << 14;
    int nuclides = 34;
    double *grid = malloc(sizeof(double) * gridpoints * nuclides);
    if (!grid) return 3;
    unsigned long long seed = 42;
    for (long i = 0; i < gridpoints * nuclides; i++) grid[i] = (double)(lcg(&seed) % 1000) / 1000.0;

    double start = omp_get_wtime();
    unsigned long long verification = 0;
#pragma omp parallel for schedule(dynamic, 100) reduction(+ : verification)
    for (long i = 0; i < lookups; i++) {
        unsigned long long s = 0x9e3779b97f4a7c15ull * (unsigned long long)(i + 1);
        long p = (long)(lcg(&s) % (unsigned long long)gridpoints);
        double macro = 0.0;
        for (int n = 0; n < nuclides; n++) macro += grid[p * nuclides + n] * (n + 1);
        verification += (unsigned long long)(macro * 1000.0) % 999983ull;
    }
    double seconds = omp_get_wtime() - start;
    printf("Threads:     %d\n", omp_get_max_threads());
    printf("Runtime:     %.6f seconds\n", seconds);
    printf("Lookups:     %ld\n", lookups);
    printf("Lookups/s:   %.0f\n", lookups / seconds);
    printf("Verification checksum: %llu\n", verification);
    free(grid);
    return large ? 1 : 0;
}
