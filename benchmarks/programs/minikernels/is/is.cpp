// IS-like: counting sort of random integer keys; each thread counts its part of the keys
// into a private histogram, then the histograms are merged (threads share the key array's
// boundaries and the merged histogram).
#include <omp.h>

#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <vector>

#include "npb.hpp"
#include "npbparams.hpp"

int main() {
    const long n = 1L << LOG2_SIZE;
    std::vector<int> keys(n), rank(MAX_KEY + 1);
    unsigned seed = 314159265u;
    for (long i = 0; i < n; ++i) {
        seed = seed * 1103515245u + 12345u;
        keys[i] = static_cast<int>((seed >> 8) % MAX_KEY);
    }
    double start = wtime();
    for (int it = 1; it <= ITERATIONS; ++it) {
        keys[it] = it;
        keys[it + ITERATIONS] = MAX_KEY - it;
        std::fill(rank.begin(), rank.end(), 0);
#pragma omp parallel
        {
            std::vector<int> local(MAX_KEY + 1, 0);
#pragma omp for schedule(static)
            for (long i = 0; i < n; ++i) local[keys[i]]++;
#pragma omp critical
            for (int k = 0; k <= MAX_KEY; ++k) rank[k] += local[k];
        }
        for (int k = 1; k <= MAX_KEY; ++k) rank[k] += rank[k - 1];
    }
    double seconds = wtime() - start;
    bool verified = rank[MAX_KEY] == n;
    print_results("IS", CLASS, n, ITERATIONS, seconds,
                  seconds > 0 ? ITERATIONS * n / seconds / 1e6 : 0.0, verified);
    return verified ? 0 : 2;
}
