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
#define ROLES 4 /* parts of the shared buffer = threads per group */
#include "groups.h"

/* command line (common.h): key, quick, ref, min, max; groups.h expects this order */
static param P[] = {
    {"kib", 128, 128, 1, 1 << 20, 0},
    {"jobs", 16, 16, 1, 1 << 20, 0},
    {"rounds", 600, 10000, 1, 100000000, 0},
};

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

int main(int argc, char **argv)
{
    return groups_main(argc, argv, P, NPARAMS(P));
}
