/*
 * phases.c -- pinbench: two parallel regions that share data in opposite ways.
 *
 * Sharing pattern: with N threads (team size) and h = N/2 (rounded down), the
 * threads form pairs twice, in two phases of the same work:
 *   phase A (the first parallel region):  thread i and thread i + h (i < h),
 *                                         as in pairs.c;
 *   phase B (the second parallel region): threads 2g and 2g + 1, neighbours.
 * If N is odd, the last thread works alone in both phases.  A placement that
 * puts A's pairs on cores sharing a cache splits B's, and the other way round:
 * no single placement serves both phases, a placement per region does.
 *
 * Work (fixed, independent of N): in each phase `jobs` jobs; job j runs in pair
 * j mod (number of pairs).  A job fills a buffer of `kib` KiB (two copies of
 * two halves) from (phase, j) and runs `rounds` rounds of, for both halves q
 * and every word k (uint64, mod 2^64),
 *     new[q][k] = old[q][k] + (old[0][k] + old[1][k]) + (r + 1);
 * member m of a pair owns half m (a lone thread both), and the pair meets at
 * its own barrier (barrier.h) after every round; a pair without a job of the
 * batch passes the same barriers, so that every thread passes as many.  The phases
 * use buffers of their own, so each phase's lines are shared by its pairs only.
 *
 * Parameters (key=value):
 *   kib     buffer per pair in KiB (both copies)   quick 64    ref 64
 *   jobs    jobs per phase                         quick 8     ref 16
 *   rounds  rounds per job                         quick 300   ref 6000
 *
 * Validation: as in pairs.c, after R rounds
 *     x_R[q][k] = x_0[q][k] + a_R (x_0[0][k] + x_0[1][k]) + u_R,
 *     a_{r+1} = 3 a_r + 1,  u_{r+1} = 3 u_r + (r + 1),  a_0 = u_0 = 0;
 * the position-weighted sum of every job's final halves is compared with it.
 * checksum = the sum of those sums over both phases (mod 2^64), which does not
 * depend on N or on the placement.
 */
#define _POSIX_C_SOURCE 200809L
#include "common.h"
#include "barrier.h"

/* command line (common.h): key, quick, ref, min, max */
static param P[] = {
    {"kib", 64, 64, 1, 1 << 20, 0},
    {"jobs", 8, 16, 1, 1 << 20, 0},
    {"rounds", 300, 6000, 1, 100000000, 0},
};

/* the pair of thread t in a team of N in phase 0 (A: t, t+h) or 1 (B: 2g, 2g+1); sets
 * *rank (0 or 1) and *size (2, or 1 for the lone last thread of an odd team) */
static int pair_of(int phase, int t, int N, int *rank, int *size, int mem[2])
{
    int h = N / 2;
    if (t >= 2 * h) {
        *rank = 0, *size = 1, mem[0] = t;
        return h;
    }
    int g = phase ? t / 2 : t % h;
    *size = 2;
    *rank = phase ? t % 2 : t / h;
    mem[0] = phase ? 2 * g : g, mem[1] = phase ? 2 * g + 1 : g + h;
    return g;
}

/* the first word of job j of phase p, half q (splitmix64 of the position) */
static uint64_t first_word(uint64_t p, uint64_t j, uint64_t q, uint64_t k, uint64_t n)
{
    uint64_t z = (((p * (1u << 20) + j) * 2 + q) * n + k + 1) * UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* thread t's share of one phase: the jobs of its pair (a pair barrier after every round,
 * the same number for every thread); res[j * 2 + q] gets job j's weighted sum of half q */
static void phase_work(int phase, int t, int N, uint64_t *buf, size_t n, long jobs,
                       long rounds, counter *prog, uint64_t *res)
{
    int rank, size, mem[2], g = pair_of(phase, t, N, &rank, &size, mem), pairs = N - N / 2;
    uint64_t *x = buf + (size_t)g * 4 * n, *y = x + 2 * n;
    for (long first = 0; first < jobs; first += pairs) {
        long j = first + g;
        int mine = j < jobs;
        for (int q = rank; mine && q < 2; q += size)
            for (size_t k = 0; k < n; k++)
                x[q * n + k] = first_word((uint64_t)phase, (uint64_t)j, (uint64_t)q, k, n);
        group_barrier(prog, t, mem, size);
        for (long r = 0; r < rounds; r++) {
            const uint64_t *src = r % 2 ? y : x;
            uint64_t *dst = r % 2 ? x : y, c = (uint64_t)r + 1;
            for (int q = rank; mine && q < 2; q += size)
                for (size_t k = 0; k < n; k++)
                    dst[q * n + k] = src[q * n + k] + (src[k] + src[n + k]) + c;
            group_barrier(prog, t, mem, size);
        }
        const uint64_t *fin = rounds % 2 ? y : x;
        for (int q = rank; mine && q < 2; q += size) {
            uint64_t sum = 0;
            for (size_t k = 0; k < n; k++)
                sum += fin[q * n + k] * (2 * (q * n + k) + 1);
            res[j * 2 + q] = sum;
        }
    }
}

int main(int argc, char **argv)
{
    const char *size = parse_args(argc, argv, P, NPARAMS(P));
    const long kib = (long)P[0].val, jobs = (long)P[1].val, rounds = (long)P[2].val;
    const size_t n = (size_t)kib * 1024 / (4 * sizeof(uint64_t)); /* words per half */
    const int nmax = omp_get_max_threads(), pairs = nmax - nmax / 2;
    uint64_t *buf_a = xalloc((size_t)pairs * 4 * n * sizeof *buf_a);
    uint64_t *buf_b = xalloc((size_t)pairs * 4 * n * sizeof *buf_b);
    uint64_t *res = xalloc((size_t)2 * jobs * 2 * sizeof *res);
    counter *prog = xalloc((size_t)nmax * sizeof *prog);
    for (int t = 0; t < nmax; t++)
        atomic_init(&prog[t].v, 0);
    int nthreads = 0;

#pragma omp parallel /* untimed: start the team; each half (both copies) first-touched by its owner */
    for (int phase = 0; phase < 2; phase++) {
        int t = omp_get_thread_num(), N = omp_get_num_threads(), rank, sz, mem[2];
        uint64_t *x = (phase ? buf_b : buf_a) + (size_t)pair_of(phase, t, N, &rank, &sz, mem) * 4 * n;
        for (int q = rank; q < 2; q += sz) {
            memset(x + q * n, 0, n * sizeof *x);
            memset(x + (2 + q) * n, 0, n * sizeof *x);
        }
    }

    double t0 = omp_get_wtime();
#pragma omp parallel /* phase A: pairs i, i + N/2 */
    {
        int t = omp_get_thread_num(), N = omp_get_num_threads();
        if (t == 0)
            nthreads = N;
        phase_work(0, t, N, buf_a, n, jobs, rounds, prog, res);
    }
#pragma omp parallel /* phase B: neighbours 2g, 2g + 1 */
    {
        int t = omp_get_thread_num(), N = omp_get_num_threads();
        phase_work(1, t, N, buf_b, n, jobs, rounds, prog, res + 2 * jobs);
    }
    double t1 = omp_get_wtime();

    /* expected values from the closed form */
    uint64_t a = 0, u = 0, checksum = 0;
    for (long r = 0; r < rounds; r++)
        a = 3 * a + 1, u = 3 * u + (uint64_t)r + 1;
    long bad = -1;
    for (long i = 0; i < 2 * jobs * 2; i++) {
        uint64_t phase = (uint64_t)(i / (2 * jobs)), j = (uint64_t)(i / 2 % jobs), q = i % 2;
        uint64_t expect = 0;
        for (size_t k = 0; k < n; k++) {
            uint64_t s = first_word(phase, j, 0, k, n) + first_word(phase, j, 1, k, n);
            expect += (first_word(phase, j, q, k, n) + a * s + u) * (2 * (q * n + k) + 1);
        }
        if (bad < 0 && res[i] != expect)
            bad = i;
        checksum += res[i];
    }

    print_params(size, P, NPARAMS(P), nthreads);
    print_kernel_time(t1 - t0);
    print_checksum_u64(checksum);
    if (bad < 0)
        print_validation_ok();
    else
        print_validation_failed("phase %c job %ld half %ld differs from closed form",
                                bad < 2 * jobs ? 'A' : 'B', bad / 2 % jobs, bad % 2);
    free(buf_a); free(buf_b); free(res); free(prog);
    return bad < 0 ? 0 : 1;
}
