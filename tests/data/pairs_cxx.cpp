// pairs_cxx.cpp -- pinbench tracer test: C++ OpenMP program with planted pair sharing.
//
// With N threads and h = N/2, threads i and i+h (i < h) share one buffer: each round,
// member m rewrites its half from both halves of the previous copy (double buffered,
// a team barrier between rounds), so every line of a pair's buffer is touched by both
// members and by no other thread.  Nothing else is shared on purpose: the buffers are
// 64-byte aligned and padded, first touched by their owners, and the master does not
// touch them.  C++ features on the access path: a class with a virtual step function,
// a template, std::vector for per-thread scratch.  A lone last thread (N odd) idles.
// Usage: pairs_cxx [rounds]   (prints "checksum: <n>")
#include <omp.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr std::size_t kWords = 1024;      // words per copy of a pair's buffer (8 KiB)
constexpr std::size_t kStride = kWords + 16; // padding: pairs never share a line

struct Kernel {
    virtual ~Kernel() = default;
    virtual void step(std::uint64_t *dst, const std::uint64_t *src, std::size_t lo,
                      std::size_t hi, std::uint64_t c) const = 0;
};

template <typename Op>
struct PairKernel final : Kernel {
    Op op;
    void step(std::uint64_t *dst, const std::uint64_t *src, std::size_t lo, std::size_t hi,
              std::uint64_t c) const override
    {
        const std::size_t half = kWords / 2;
        for (std::size_t k = lo; k < hi; k++)
            dst[k] = op(src[k], src[(k + half) % kWords], c);
    }
};

struct Mix {
    std::uint64_t operator()(std::uint64_t own, std::uint64_t other, std::uint64_t c) const
    {
        return own * 3 + other + c;
    }
};

} // namespace

int main(int argc, char **argv)
{
    const long rounds = argc > 1 ? std::atol(argv[1]) : 200;
    const int nmax = omp_get_max_threads();
    const int pairs = nmax / 2 > 0 ? nmax / 2 : 1;
    auto *buf = static_cast<std::uint64_t *>(
        std::aligned_alloc(64, sizeof(std::uint64_t) * 2 * kStride * pairs));
    const PairKernel<Mix> kernel;
    const Kernel &k = kernel;
    std::uint64_t total = 0;

#pragma omp parallel reduction(+ : total)
    {
        const int t = omp_get_thread_num(), n = omp_get_num_threads(), h = n / 2;
        const bool active = h > 0 && t < 2 * h;
        const int p = active ? t % h : 0, m = active ? t / h : 0;
        const std::size_t lo = m * kWords / 2, hi = lo + kWords / 2;
        std::uint64_t *copy[2] = {buf + 2 * kStride * p, buf + 2 * kStride * p + kStride};
        std::vector<std::uint64_t> scratch; // private to the thread
        if (active)
            for (std::size_t w = lo; w < hi; w++)
                copy[0][w] = w + 1;
#pragma omp barrier
        for (long r = 0; r < rounds; r++) {
            if (active)
                k.step(copy[(r + 1) % 2], copy[r % 2], lo, hi, static_cast<std::uint64_t>(r));
#pragma omp barrier
        }
        if (active) {
            scratch.assign(copy[rounds % 2] + lo, copy[rounds % 2] + hi);
            for (std::uint64_t v : scratch)
                total += v;
        }
    }
    std::printf("checksum: %llu\n", static_cast<unsigned long long>(total));
    std::free(buf);
    return 0;
}
