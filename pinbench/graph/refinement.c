/* refinement.c: the swap refinement on J of pinbench/graph/refinement.py (which documents
 * the method), called through ctypes; the same passes, the same order of steps and ties,
 * the same give-up rule, hence the same placements as that module's description.
 *
 * The slots' levels: level h = 2..H has a row gid[l * m + x] (l = h - 2), the group (0, 1,
 * ...) of slot x, groups nested; level 1 is the slots themselves. cost[x * m + y] is the
 * slots' cost (pinbench/graph/objective.py), 1 + the levels at which x and y lie apart.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int n, m, L, G;        /* threads, slots, levels above the slots, groups in all */
    const double *w;       /* n x n affinity, diagonal zero */
    const int32_t *gid;    /* L x m groups of the slots, per level */
    const uint8_t *cost;   /* m x m slot costs */
    int32_t *off;          /* L: first row of level l in `near` */
    int32_t *parent;       /* G: the group above (absolute row), -1 at the top level */
} machine;

static int setup(machine *t, int n, int m, int L, const double *w, const int32_t *gid,
                 const int32_t *ngroups, const uint8_t *cost)
{
    t->n = n, t->m = m, t->L = L, t->w = w, t->gid = gid, t->cost = cost, t->G = 0;
    t->off = malloc(sizeof(int32_t) * (L + 1));
    if (!t->off)
        return -1;
    for (int l = 0; l < L; l++)
        t->off[l] = t->G, t->G += ngroups[l];
    t->parent = malloc(sizeof(int32_t) * (t->G + 1));
    if (!t->parent)
        return free(t->off), -1;
    for (int l = 0; l < L; l++)
        for (int x = 0; x < m; x++)
            t->parent[t->off[l] + gid[l * m + x]] = l + 1 < L ? t->off[l + 1] + gid[(l + 1) * m + x] : -1;
    return 0;
}

typedef struct {
    machine t;
    int32_t *pos, *owner;
    double *near;  /* G x n: near[off[l] + g][a] = affinity of a to the threads in group g of level l */
    double cost, tolerance;
} search;

/* Affinity of thread a to the threads around slot z, summed over the levels 1..H. */
static double around(const search *s, int a, int z)
{
    const machine *t = &s->t;
    double v = s->owner[z] >= 0 ? t->w[(size_t)a * t->n + s->owner[z]] : 0.0;
    for (int l = 0; l < t->L; l++)
        v += s->near[(size_t)(t->off[l] + t->gid[l * t->m + z]) * t->n + a];
    return v;
}

static void relocate(search *s, int th, int to)
{
    const machine *t = &s->t;
    int from = s->pos[th], n = t->n;
    const double *row = t->w + (size_t)th * n;
    for (int l = 0; l < t->L; l++) {
        int g = t->off[l] + t->gid[l * t->m + from], k = t->off[l] + t->gid[l * t->m + to];
        if (g == k)
            continue;
        double *out = s->near + (size_t)g * n, *into = s->near + (size_t)k * n;
        for (int a = 0; a < n; a++)
            out[a] -= row[a], into[a] += row[a];
    }
    s->pos[th] = to, s->owner[to] = th;
}

static int try_swap(search *s, int a, int b)
{
    int x = s->pos[a], y = s->pos[b];
    double change = around(s, a, x) - around(s, a, y) + around(s, b, y) - around(s, b, x)
                    + 2 * s->t.w[(size_t)a * s->t.n + b] * s->t.cost[(size_t)x * s->t.m + y];
    if (!(change < -s->tolerance))
        return 0;
    relocate(s, a, y), relocate(s, b, x);
    s->cost += change;
    return 1;
}

static int try_move(search *s, int a, int y)
{
    if (s->owner[y] >= 0)
        return 0;
    int x = s->pos[a];
    double change = around(s, a, x) - around(s, a, y);
    if (!(change < -s->tolerance))
        return 0;
    s->owner[x] = -1;
    relocate(s, a, y);
    s->cost += change;
    return 1;
}

typedef struct {
    double delta;
    int32_t thread;
} step;

static int by_delta(const void *p, const void *q)  /* increasing change, then thread */
{
    const step *a = p, *b = q;
    return a->delta < b->delta ? -1 : a->delta > b->delta ? 1 : (a->thread > b->thread) - (a->thread < b->thread);
}

/* One pass: every exchange and move evaluated at once, then the best one of every thread
 * applied in increasing order of its change of J, each re-checked against the placement as
 * it is then. Returns whether one applied. `up` holds G + 1 rows of n, `there` n x n. */
static int one_pass(search *s, double *there, double *up, double *delta, double *best,
                    int32_t *partner, int32_t *target, step *order)
{
    const machine *t = &s->t;
    int n = t->n, m = t->m, L = t->L, G = t->G;
    double *zero = up + (size_t)G * n;  /* the row above the top level */
    memset(zero, 0, sizeof(double) * n);
    for (int g = G - 1; g >= 0; g--) {  /* up[g][a]: a's affinity to g and the groups above it */
        const double *above = t->parent[g] >= 0 ? up + (size_t)t->parent[g] * n : zero;
        const double *row = s->near + (size_t)g * n;
        double *out = up + (size_t)g * n;
        for (int a = 0; a < n; a++)
            out[a] = row[a] + above[a];
    }
    for (int b = 0; b < n; b++) {  /* there[b][a]: a's affinity around b's slot */
        const double *wb = t->w + (size_t)b * n, *ub = L ? up + (size_t)t->gid[s->pos[b]] * n : zero;
        double *tb = there + (size_t)b * n;
        for (int a = 0; a < n; a++)
            tb[a] = wb[a] + ub[a];
    }
    for (int a = 0; a < n; a++)
        delta[a] = INFINITY, target[a] = -1;
    for (int y = 0; y < m; y++) {  /* the best free slot of every thread */
        if (s->owner[y] >= 0)
            continue;
        const double *uy = L ? up + (size_t)t->gid[y] * n : zero;
        for (int a = 0; a < n; a++)
            if (-uy[a] < delta[a])
                delta[a] = -uy[a], target[a] = y;
    }
    for (int a = 0; a < n; a++)
        delta[a] += there[(size_t)a * n + a];
    /* exchanges: symmetric in a and b, evaluated in tiles over the pairs a < b */
    for (int a = 0; a < n; a++)
        best[a] = INFINITY, partner[a] = -1;
    enum { TILE = 64 };
    for (int a0 = 0; a0 < n; a0 += TILE)
        for (int b0 = a0; b0 < n; b0 += TILE)
            for (int a = a0; a < a0 + TILE && a < n; a++) {
                const double *ta = there + (size_t)a * n, *wa = t->w + (size_t)a * n;
                const uint8_t *ca = t->cost + (size_t)s->pos[a] * m;
                double own = ta[a];
                for (int b = b0 > a + 1 ? b0 : a + 1; b < b0 + TILE && b < n; b++) {
                    double v = own - ta[b] + there[(size_t)b * n + b] - there[(size_t)b * n + a]
                               + 2 * wa[b] * ca[s->pos[b]];
                    if (v < best[a])
                        best[a] = v, partner[a] = b;
                    if (v < best[b] || (v == best[b] && a < partner[b]))
                        best[b] = v, partner[b] = a;
                }
            }
    for (int a = 0; a < n; a++) {
        if (best[a] < delta[a])
            delta[a] = best[a], target[a] = -1;
        order[a].delta = delta[a], order[a].thread = a;
    }
    qsort(order, n, sizeof(step), by_delta);
    int applied = 0;
    for (int k = 0; k < n; k++) {
        int a = order[k].thread;
        if (!(delta[a] < -s->tolerance))
            break;
        applied |= target[a] >= 0 ? try_move(s, a, target[a]) : try_swap(s, a, partner[a]);
    }
    return applied;
}

/* True when J's last three values (one per pass) extrapolate to a J far above `beat`:
 * the last two decreases d1 > d2 > 0 continued as a geometric series fall more than
 * `margin` times short of the gap (pinbench/graph/refinement.py documents the rule). */
static int hopeless(const double *last, double beat, double margin)
{
    double first = last[0] - last[1], second = last[1] - last[2];
    if (!(0 < second && second < first) || last[2] <= beat)
        return 0;
    double ratio = second / first;
    return last[2] - beat > margin * second * ratio / (1 - ratio);
}

/* J of the placement pos[0..n): the sum over pairs a > b of w[b][a] cost[pos[a]][pos[b]],
 * b outer, a inner (refine() starts from it; hierarchical compares placements by it). */
double placement_cost(int n, int m, const double *w, const uint8_t *cost, const int32_t *pos)
{
    double j = 0;
    for (int b = 0; b < n; b++) {
        const double *wb = w + (size_t)b * n;
        const uint8_t *cb = cost + (size_t)pos[b];
        for (int a = b + 1; a < n; a++)
            j += wb[a] * cb[(size_t)pos[a] * m];
    }
    return j;
}

/* Swap refinement of pos[0..n) (slots) on J; returns J after, or -1 when out of memory.
 * Stops early when `beat` looks out of reach (hopeless, `margin`); passes counted in *passes. */
double refine(int n, int m, int L, const double *w, const int32_t *gid, const int32_t *ngroups,
              const uint8_t *cost, int32_t *pos, double beat, double margin, int32_t *passes)
{
    search s;
    if (setup(&s.t, n, m, L, w, gid, ngroups, cost))
        return -1;
    const machine *t = &s.t;
    int G = t->G;
    s.pos = pos;
    s.owner = malloc(sizeof(int32_t) * m);
    s.near = calloc((size_t)(G + 1) * n, sizeof(double));
    double *there = malloc(sizeof(double) * (size_t)n * n);
    double *up = malloc(sizeof(double) * (size_t)(G + 1) * n), *delta = malloc(sizeof(double) * n);
    double *best = malloc(sizeof(double) * n);
    int32_t *partner = malloc(sizeof(int32_t) * n), *target = malloc(sizeof(int32_t) * n);
    step *order = malloc(sizeof(step) * n);
    double result = -1;
    if (!s.owner || !s.near || !there || !up || !delta || !best || !partner || !target || !order)
        goto out;
    for (int y = 0; y < m; y++)
        s.owner[y] = -1;
    for (int a = 0; a < n; a++)
        s.owner[pos[a]] = a;
    double total = 0, j = placement_cost(n, m, w, t->cost, pos);
    for (int b = 0; b < n; b++) {
        const double *wb = w + (size_t)b * n;
        double *row = L ? s.near + (size_t)gid[pos[b]] * n : NULL;
        for (int a = 0; a < n; a++) {
            total += wb[a];
            if (row)
                row[a] += wb[a];  /* level 2: b's affinity to every a (its own is 0) */
        }
    }
    for (int g = 0; g < G; g++)  /* each level from the one below */
        if (t->parent[g] >= 0) {
            double *above = s.near + (size_t)t->parent[g] * n;
            const double *row = s.near + (size_t)g * n;
            for (int a = 0; a < n; a++)
                above[a] += row[a];
        }
    s.cost = j;
    s.tolerance = 1e-12 * total * (L + 1);
    double history[3] = {j, j, j};
    int done = 0;
    while (one_pass(&s, there, up, delta, best, partner, target, order)) {
        done++;
        history[0] = history[1], history[1] = history[2], history[2] = s.cost;
        if (done >= 2 && hopeless(history, beat, margin))
            break;
    }
    *passes = done;
    result = s.cost;
out:
    free(s.owner), free(s.near), free(there), free(up), free(delta), free(best), free(partner),
        free(target), free(order);
    free(s.t.off), free(s.t.parent);
    return result;
}

