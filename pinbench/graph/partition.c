/* partition.c: the swap refinement of a k-way partition (stage 3 of pinbench/graph/partition.py,
 * which documents it), called through ctypes: moves of one item to a part with room and swaps
 * of two items between parts, each kept only if it lowers the cut within the capacities; per
 * pass every item's best move and best swap, applied in decreasing order of gain (ties: the
 * lowest item; a move before a swap of equal gain; the lowest part and partner), each
 * re-checked against the current state, until a pass applies none.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct {
    int n, k;
    const double *w;       /* n x n integer weights, diagonal zero */
    const int64_t *size, *cap;
    int64_t *part, *load;
    double *aff;           /* n x k: affinity of item i to part p */
} parts;

static void relocate(parts *s, int item, int to)
{
    int from = (int)s->part[item];
    const double *row = s->w + (size_t)item * s->n;
    for (int i = 0; i < s->n; i++) {
        s->aff[(size_t)i * s->k + from] -= row[i];
        s->aff[(size_t)i * s->k + to] += row[i];
    }
    s->load[from] -= s->size[item], s->load[to] += s->size[item];
    s->part[item] = to;
}

static int try_move(parts *s, int a, int to)
{
    int from = (int)s->part[a];
    const double *aa = s->aff + (size_t)a * s->k;
    if (from == to || s->load[to] + s->size[a] > s->cap[to] || aa[to] <= aa[from])
        return 0;
    relocate(s, a, to);
    return 1;
}

/* Whether items a and b may swap parts (different parts, both within capacity after). */
static int swappable(const parts *s, int a, int b)
{
    int64_t pa = s->part[a], pb = s->part[b], grow = s->size[b] - s->size[a];
    return pa != pb && s->load[pa] + grow <= s->cap[pa] && s->load[pb] - grow <= s->cap[pb];
}

static double swap_gain(const parts *s, int a, int b)
{
    const double *aa = s->aff + (size_t)a * s->k, *ab = s->aff + (size_t)b * s->k;
    int64_t pa = s->part[a], pb = s->part[b];
    return aa[pb] - aa[pa] + ab[pa] - ab[pb] - 2 * s->w[(size_t)a * s->n + b];
}

static int try_swap(parts *s, int a, int b)
{
    if (!swappable(s, a, b) || swap_gain(s, a, b) <= 0)
        return 0;
    int pa = (int)s->part[a], pb = (int)s->part[b];
    relocate(s, a, pb), relocate(s, b, pa);
    return 1;
}

typedef struct {
    double gain;
    int32_t item;
} step;

static int by_gain(const void *p, const void *q)  /* decreasing gain, then item */
{
    const step *a = p, *b = q;
    return a->gain > b->gain ? -1 : a->gain < b->gain ? 1 : (a->item > b->item) - (a->item < b->item);
}

/* Refines part[0..n) in place; returns 0, or -1 when out of memory. */
int refine_parts(int n, int k, const double *w, const int64_t *size, const int64_t *cap,
                 int64_t *part)
{
    parts s = {n, k, w, size, cap, part, calloc(k, sizeof(int64_t)),
               calloc((size_t)n * k, sizeof(double))};
    double *move = malloc(sizeof(double) * n), *swap = malloc(sizeof(double) * n);
    double *into = malloc(sizeof(double) * (size_t)k * k);
    int32_t *to = malloc(sizeof(int32_t) * n), *with = malloc(sizeof(int32_t) * n);
    step *order = malloc(sizeof(step) * n);
    int mixed = 0, status = -1;
    if (!s.load || !s.aff || !move || !swap || !into || !to || !with || !order)
        goto out;
    for (int i = 0; i < n; i++) {
        s.load[part[i]] += size[i];
        mixed |= size[i] != size[0];
        for (int j = 0; j < n; j++)
            s.aff[(size_t)i * k + part[j]] += w[(size_t)i * n + j];
    }
    for (int applied = 1; applied;) {
        /* into[q][p]: the best gain of moving alone an item of part q to part p */
        for (int q = 0; q < k * k; q++)
            into[q] = -INFINITY;
        for (int b = 0; b < n; b++) {
            const double *ab = s.aff + (size_t)b * k;
            for (int p = 0; p < k; p++) {
                double g = ab[p] - ab[part[b]];
                if (g > into[part[b] * k + p])
                    into[part[b] * k + p] = g;
            }
        }
        for (int a = 0; a < n; a++) {
            const double *aa = s.aff + (size_t)a * k;
            double own = aa[part[a]], bound = -INFINITY;
            move[a] = -INFINITY, to[a] = 0;
            for (int p = 0; p < k; p++) {
                if (p == part[a])
                    continue;
                if (s.load[p] + size[a] <= cap[p] && aa[p] - own > move[a])
                    move[a] = aa[p] - own, to[a] = p;
                if (aa[p] - own + into[p * k + part[a]] > bound)
                    bound = aa[p] - own + into[p * k + part[a]];
            }
            swap[a] = -INFINITY, with[a] = 0;
            if (bound <= 0)  /* no swap of a can gain: g_a(q) + g_b(part a) bounds them */
                continue;
            for (int b = 0; b < n; b++) {
                if (part[b] == part[a] || (mixed && !swappable(&s, a, b)))
                    continue;
                double g = swap_gain(&s, a, b);
                if (g > swap[a])
                    swap[a] = g, with[a] = b;
            }
        }
        for (int a = 0; a < n; a++)
            order[a].gain = move[a] > swap[a] ? move[a] : swap[a], order[a].item = a;
        qsort(order, n, sizeof(step), by_gain);
        applied = 0;
        for (int i = 0; i < n && order[i].gain > 0; i++) {
            int a = order[i].item;
            applied |= move[a] >= swap[a] ? try_move(&s, a, to[a]) : try_swap(&s, a, with[a]);
        }
    }
    status = 0;
out:
    free(s.load), free(s.aff), free(move), free(swap), free(into), free(to), free(with),
        free(order);
    return status;
}
