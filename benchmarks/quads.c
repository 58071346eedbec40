/*
 * quads.c -- pinbench: groups of four threads with strided thread numbers.
 *
 * Sharing pattern: with N threads (team size) and Q = ceil(N/4), group g
 * (g < Q) is the threads {g, g+Q, g+2Q, g+3Q} that exist (< N); thread t is
 * member t / Q of group t mod Q.  Group members are therefore never
 * neighbours in thread number (except for N <= 4, where Q = 1 and all
 * threads form one group).  When N is not a multiple of 4, groups are
 * smaller: group g has ceil((N - g) / Q) members, e.g. N = 5 gives {0,2,4}
 * and {1,3}; N = 6 gives {0,2,4} and {1,3,5}; N = 9 gives three groups of 3;
 * N = 1, 2, 3 give a single group of 1, 2, 3 threads.
 * Each group owns one buffer of `kib` KiB (two copies of 4 quarters, sized to
 * fit a private L2 cache).  Every round, each member reads all four quarters
 * and rewrites the quarter(s) it owns, so the group's cache lines move between
 * all members every round: a group placed on cores that share a cache is
 * cheap, a group spread far apart is expensive.  Members synchronise after
 * every round with a group-local barrier (spinning on per-thread progress
 * counters, yielding the CPU when oversubscribed); no team-wide barrier.
 *
 * Work (fixed, independent of N): `jobs` jobs; job j runs in group j mod Q.
 * A job initialises the buffer from j and runs `rounds` rounds of, for every
 * quarter q and word k (uint64, mod 2^64),
 *     new[q][k] = old[q][k] + (old[0][k] + old[1][k] + old[2][k] + old[3][k]) + (r + 1).
 * Member m of a group of s members owns quarters m, m+s, ... (< 4).
 *
 * Parameters (key=value):
 *   kib     buffer per group in KiB (both copies)  quick 128   ref 128
 *   jobs    number of jobs                          quick 16    ref 16
 *   rounds  rounds per job                          quick 600   ref 10000
 *
 * Validation: one round is x -> (I + J) x + c_r 1 with J the all-ones 4x4
 * matrix, so after R rounds
 *     x_R[q][k] = x_0[q][k] + a_R (x_0[0][k] + ... + x_0[3][k]) + u_R,
 *     a_{r+1} = 5 a_r + 1,  u_{r+1} = 5 u_r + (r + 1),  a_0 = u_0 = 0.
 * For every job and quarter, the position-weighted sum of the final words is
 * compared with this closed form.  checksum = sum of those sums (mod 2^64),
 * which does not depend on N or on the placement.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <omp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROLES 4 /* parts of the shared buffer = threads per group */

/* ---- command line: [quick|ref] [key=value ...] (same in every benchmark) */
typedef struct { const char *key; long long quick, ref, min, max, val; } param;
static param P[] = {
    {"kib", 128, 128, 1, 1 << 20, 0},
    {"jobs", 16, 16, 1, 1 << 20, 0},
    {"rounds", 600, 10000, 1, 100000000, 0},
};
enum { NP = sizeof P / sizeof P[0] };

static void usage(const char *prog, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "; usage: %s [quick|ref] [key=value ...], keys:", prog);
    for (int k = 0; k < NP; k++)
        fprintf(stderr, " %s", P[k].key);
    fprintf(stderr, "\n");
    exit(2);
}

static const char *parse_args(int argc, char **argv)
{
    const char *size = "quick";
    int i = 1;
    if (argc > 1 && !strchr(argv[1], '=')) {
        if (strcmp(argv[1], "quick") && strcmp(argv[1], "ref"))
            usage(argv[0], "unknown argument '%s'", argv[1]);
        size = argv[i++];
    }
    for (int k = 0; k < NP; k++)
        P[k].val = strcmp(size, "ref") ? P[k].quick : P[k].ref;
    for (; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        int k = 0;
        while (eq && k < NP && (strncmp(P[k].key, argv[i], eq - argv[i]) ||
                                P[k].key[eq - argv[i]]))
            k++;
        if (!eq || k == NP)
            usage(argv[0], "unknown argument '%s'", argv[i]);
        char *end;
        errno = 0;
        long long v = strtoll(eq + 1, &end, 10);
        if (errno || end == eq + 1 || *end || v < P[k].min || v > P[k].max)
            usage(argv[0], "invalid value '%s' (allowed %lld..%lld)", argv[i],
                  P[k].min, P[k].max);
        P[k].val = v;
        size = "custom";
    }
    return size;
}
/* ---- end of command line */

static void *xalloc(size_t bytes)
{
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) {
        printf("validation: FAILED cannot allocate %zu bytes\n", bytes);
        exit(1);
    }
    return p;
}

/* Group of thread t in a team of N: {g, g+Q, g+2Q, g+3Q} with Q = ceil(N/4).
 * Fills the member thread ids, returns the group size; *g is the group id. */
static int group_of(int t, int N, int *g, int *rank, int mem[ROLES])
{
    int Q = (N + 3) / 4;
    *g = t % Q, *rank = t / Q;
    int size = (N - *g + Q - 1) / Q;
    for (int m = 0; m < size; m++)
        mem[m] = *g + m * Q;
    return size;
}
static int groups_of(int N) { return (N + 3) / 4; }

/* Per-thread progress counter, one per cache line. */
typedef struct { _Alignas(64) atomic_ullong v; } counter;

/* Barrier among the `size` members of a group: publish my round count and
 * wait until every member has reached it (acquire/release ordering). */
static void group_barrier(counter *prog, int t, const int *mem, int size)
{
    unsigned long long mine =
        atomic_load_explicit(&prog[t].v, memory_order_relaxed) + 1;
    atomic_store_explicit(&prog[t].v, mine, memory_order_release);
    for (int m = 0; m < size; m++)
        for (int spins = 0;
             atomic_load_explicit(&prog[mem[m]].v, memory_order_acquire) < mine;)
            if (++spins > 200)
                sched_yield(); /* partner not running (oversubscribed) */
}

/* One round for one part: dst[k] = own[k] + (sum over parts p of src[p][k]) + c */
static void update_part(uint64_t *restrict dst, const uint64_t *restrict src,
                        const uint64_t *restrict own, size_t n, uint64_t c)
{
    const uint64_t *s0 = src, *s1 = src + n, *s2 = src + 2 * n, *s3 = src + 3 * n;
    for (size_t k = 0; k < n; k++)
        dst[k] = own[k] + (s0[k] + s1[k] + s2[k] + s3[k]) + c;
}

/* initial value of word k of part q in job j (splitmix64 of the position) */
static uint64_t init_word(uint64_t j, uint64_t q, uint64_t k, uint64_t n)
{
    uint64_t z = ((j * ROLES + q) * n + k + 1) * UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    const char *size = parse_args(argc, argv);
    const long kib = (long)P[0].val, jobs = (long)P[1].val, rounds = (long)P[2].val;
    const size_t n = (size_t)kib * 1024 / (2 * ROLES * sizeof(uint64_t)); /* words per part */
    const int nmax = omp_get_max_threads();

    uint64_t *buf = xalloc((size_t)groups_of(nmax) * 2 * ROLES * n * sizeof *buf);
    uint64_t *res = xalloc((size_t)jobs * ROLES * sizeof *res);
    counter *prog = xalloc((size_t)nmax * sizeof *prog);
    for (int t = 0; t < nmax; t++)
        atomic_init(&prog[t].v, 0);
    int nthreads = 0;

    /* untimed: start the team, first-touch each part of the buffers by its owner */
#pragma omp parallel
    {
        int t = omp_get_thread_num(), N = omp_get_num_threads(), g, rank, mem[ROLES];
        int gs = group_of(t, N, &g, &rank, mem);
        for (int q = rank; q < ROLES; q += gs) {
            memset(buf + (g * 2 * ROLES + q) * n, 0, n * sizeof *buf);
            memset(buf + (g * 2 * ROLES + ROLES + q) * n, 0, n * sizeof *buf);
        }
    }

    double t0 = omp_get_wtime();
#pragma omp parallel
    {
        int t = omp_get_thread_num(), N = omp_get_num_threads(), g, rank, mem[ROLES];
        int gs = group_of(t, N, &g, &rank, mem);
        uint64_t *x = buf + (size_t)g * 2 * ROLES * n, *y = x + ROLES * n;
        if (t == 0)
            nthreads = N;
        for (long j = g; j < jobs; j += groups_of(N)) {
            for (int q = rank; q < ROLES; q += gs)
                for (size_t k = 0; k < n; k++)
                    x[q * n + k] = init_word(j, q, k, n);
            group_barrier(prog, t, mem, gs);
            for (long r = 0; r < rounds; r++) {
                const uint64_t *src = r % 2 ? y : x;
                uint64_t *dst = r % 2 ? x : y, c = (uint64_t)r + 1;
                for (int q = rank; q < ROLES; q += gs)
                    update_part(dst + q * n, src, src + q * n, n, c);
                group_barrier(prog, t, mem, gs);
            }
            const uint64_t *fin = rounds % 2 ? y : x;
            for (int q = rank; q < ROLES; q += gs) {
                uint64_t sum = 0;
                for (size_t k = 0; k < n; k++)
                    sum += fin[q * n + k] * (2 * (q * n + k) + 1);
                res[j * ROLES + q] = sum;
            }
        }
    }
    double t1 = omp_get_wtime();

    /* expected values from the closed form */
    uint64_t a = 0, u = 0, checksum = 0;
    for (long r = 0; r < rounds; r++)
        a = (ROLES + 1) * a + 1, u = (ROLES + 1) * u + (uint64_t)r + 1;
    long bad = -1;
    for (long j = 0; j < jobs; j++)
        for (int q = 0; q < ROLES; q++) {
            uint64_t expect = 0;
            for (size_t k = 0; k < n; k++) {
                uint64_t s = 0;
                for (int p = 0; p < ROLES; p++)
                    s += init_word(j, p, k, n);
                expect += (init_word(j, q, k, n) + a * s + u) * (2 * (q * n + k) + 1);
            }
            if (bad < 0 && res[j * ROLES + q] != expect)
                bad = j * ROLES + q;
            checksum += res[j * ROLES + q];
        }

    printf("params: size=%s kib=%ld jobs=%ld rounds=%ld threads=%d\n", size, kib,
           jobs, rounds, nthreads);
    printf("kernel_time_s: %.6f\n", t1 - t0);
    printf("checksum: %" PRIu64 "\n", checksum);
    if (bad < 0)
        printf("validation: OK\n");
    else
        printf("validation: FAILED job %ld part %ld differs from closed form\n",
               bad / ROLES, bad % ROLES);
    free(buf); free(res); free(prog);
    return bad < 0 ? 0 : 1;
}
