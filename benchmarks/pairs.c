/*
 * pairs.c -- pinbench: threads share data in pairs that are NOT neighbours.
 *
 * Sharing pattern: with N threads (team size) and h = N/2 (rounded down),
 * thread i and thread i + h form pair i (i < h).  If N is odd, the last
 * thread (N-1) forms a group of its own and works alone.  Each group owns one
 * buffer of `kib` KiB (two copies of 2 halves, sized to fit a private L1/L2
 * cache).  Every round, each member reads both halves and rewrites its own
 * half, so all of the pair's cache lines move between the two members every
 * round: a pair placed on cores that share a cache is cheap, a pair placed
 * far apart is expensive.  Members synchronise after every round with a
 * pair-local barrier (spinning on per-thread progress counters, yielding the
 * CPU when oversubscribed); there is no team-wide barrier in the kernel.
 *
 * Work (fixed, independent of N): `jobs` jobs; job j runs in group
 * j mod (number of groups).  A job initialises the buffer from j and runs
 * `rounds` rounds of, for both halves q and every word k (uint64, mod 2^64),
 *     new[q][k] = old[q][k] + (old[0][k] + old[1][k]) + (r + 1).
 * Member m of the pair owns half m; a lone thread owns both halves.
 *
 * Parameters (key=value):
 *   kib     buffer per pair in KiB (both copies)   quick 64    ref 64
 *   jobs    number of jobs                          quick 16    ref 16
 *   rounds  rounds per job                          quick 1000  ref 25000
 *
 * Validation: one round is x -> (I + J) x + c_r 1 with J the all-ones 2x2
 * matrix, so after R rounds
 *     x_R[q][k] = x_0[q][k] + a_R (x_0[0][k] + x_0[1][k]) + u_R,
 *     a_{r+1} = 3 a_r + 1,  u_{r+1} = 3 u_r + (r + 1),  a_0 = u_0 = 0.
 * For every job and half, the position-weighted sum of the final words is
 * compared with this closed form.  checksum = sum of those sums (mod 2^64),
 * which does not depend on N or on the placement.
 */
#define _POSIX_C_SOURCE 200809L
#define ROLES 2 /* parts of the shared buffer = threads per group */
#include "groups.h"

/* command line (common.h): key, quick, ref, min, max; groups.h expects this order */
static param P[] = {
    {"kib", 64, 64, 1, 1 << 20, 0},
    {"jobs", 16, 16, 1, 1 << 20, 0},
    {"rounds", 1000, 25000, 1, 100000000, 0},
};

/* Group of thread t in a team of N: pair t/t+h, lone last thread if N odd.
 * Fills the member thread ids, returns the group size; *g is the group id. */
static int group_of(int t, int N, int *g, int *rank, int mem[ROLES])
{
    int h = N / 2;
    if (t >= 2 * h) { /* N odd: the last thread works alone */
        *g = h, *rank = 0, mem[0] = t;
        return 1;
    }
    *g = t % h, *rank = t / h;
    mem[0] = *g, mem[1] = *g + h;
    return 2;
}
static int groups_of(int N) { return N - N / 2; }

int main(int argc, char **argv)
{
    return groups_main(argc, argv, P, NPARAMS(P));
}
