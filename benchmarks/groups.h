/*
 * groups.h -- pinbench: the group-sharing kernel of pairs.c and quads.c.
 *
 * The threads of the team form groups; each group owns one buffer of `kib`
 * KiB (two copies of ROLES parts), runs the jobs j = g, g + groups, ... and,
 * in every one of `rounds` rounds, each member rewrites the part(s) it owns
 * from all ROLES parts of the previous copy:
 *     new[q][k] = old[q][k] + (old[0][k] + ... + old[ROLES-1][k]) + (r + 1),
 * then waits at a group-local barrier.  The result of every job and part is
 * checked against the closed form (see pairs.c); the checksum is the sum of
 * the position-weighted sums, mod 2^64.
 *
 * A program using it defines, before including this header,
 *     ROLES     parts of the buffer = largest group size (2 or 4), and any
 *               feature-test macro (_POSIX_C_SOURCE for sched_yield);
 * and, after it,
 *     P[]       its parameter table (common.h), in the order kib, jobs, rounds;
 *     group_of  the group of thread t in a team of N: sets *g (group id) and
 *               *rank (member number), fills mem[] with the member thread ids
 *               and returns the group size;
 *     groups_of the number of groups in a team of N;
 *     main      which returns groups_main(argc, argv, P, NPARAMS(P)).
 */
#ifndef PINBENCH_GROUPS_H
#define PINBENCH_GROUPS_H

#ifndef ROLES
#error "define ROLES (parts of the shared buffer) before including groups.h"
#endif

#include "common.h"
#include "barrier.h"

/* the group mapping, defined by the program */
static int group_of(int t, int N, int *g, int *rank, int mem[ROLES]);
static int groups_of(int N);

/* One round for one part: dst[k] = own[k] + (sum over parts p of src[p][k]) + c */
static void update_part(uint64_t *restrict dst, const uint64_t *restrict src,
                        const uint64_t *restrict own, size_t n, uint64_t c)
{
#if ROLES == 2
    const uint64_t *s0 = src, *s1 = src + n;
    for (size_t k = 0; k < n; k++)
        dst[k] = own[k] + (s0[k] + s1[k]) + c;
#elif ROLES == 4
    const uint64_t *s0 = src, *s1 = src + n, *s2 = src + 2 * n, *s3 = src + 3 * n;
    for (size_t k = 0; k < n; k++)
        dst[k] = own[k] + (s0[k] + s1[k] + s2[k] + s3[k]) + c;
#else
#error "groups.h: update_part is written for ROLES 2 and 4"
#endif
}

/* initial value of word k of part q in job j (splitmix64 of the position) */
static uint64_t init_word(uint64_t j, uint64_t q, uint64_t k, uint64_t n)
{
    uint64_t z = ((j * ROLES + q) * n + k + 1) * UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* the whole benchmark: command line, untimed start-up, timed kernel, validation,
 * output; returns the exit status */
static int groups_main(int argc, char **argv, param *P, int np)
{
    const char *size = parse_args(argc, argv, P, np);
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

    print_params(size, P, np, nthreads);
    print_kernel_time(t1 - t0);
    print_checksum_u64(checksum);
    if (bad < 0)
        print_validation_ok();
    else
        print_validation_failed("job %ld part %ld differs from closed form",
                                bad / ROLES, bad % ROLES);
    free(buf); free(res); free(prog);
    return bad < 0 ? 0 : 1;
}

#endif /* PINBENCH_GROUPS_H */
