// EP-like: Gaussian pairs by the polar method from a linear congruential stream; each thread
// draws its own part, the counts are reduced at the end (threads share almost nothing).
#include <omp.h>

#include <cmath>
#include <cstdio>

#include "npb.hpp"
#include "npbparams.hpp"

int main() {
    const long n = 1L << LOG2_SIZE;
    long accepted = 0;
    double sx = 0.0, sy = 0.0;
    double start = wtime();
#pragma omp parallel for reduction(+ : accepted, sx, sy) schedule(static)
    for (long i = 0; i < n; ++i) {
        unsigned long s = 271828183ul + 2 * static_cast<unsigned long>(i) * 1220703125ul;
        s = s * 6364136223846793005ul + 1442695040888963407ul;
        double x = 2.0 * static_cast<double>(s >> 11) / 9007199254740992.0 - 1.0;
        s = s * 6364136223846793005ul + 1442695040888963407ul;
        double y = 2.0 * static_cast<double>(s >> 11) / 9007199254740992.0 - 1.0;
        double t = x * x + y * y;
        if (t <= 1.0 && t > 0.0) {
            double f = std::sqrt(-2.0 * std::log(t) / t);
            sx += x * f;
            sy += y * f;
            ++accepted;
        }
    }
    double seconds = wtime() - start;
    bool verified = accepted > n / 2 && std::fabs(sx / accepted) < 0.1;
    print_results("EP", CLASS, n, ITERATIONS, seconds, seconds > 0 ? n / seconds / 1e6 : 0.0,
                  verified);
    return verified ? 0 : 2;
}
