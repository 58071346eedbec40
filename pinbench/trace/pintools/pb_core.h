/*
 * pb_core.h -- pinbench tracers: the code the ThreadSanitizer-ABI runtime
 * (tsan_rt.c), the Valgrind tool (vg_pinbench.c) and the Pin tool
 * (pin/pinbench.cpp) share, so that they count and weigh alike:
 *
 *   - pb_tbl: a per-thread table, line -> access count (counts kept by page of 64
 *     lines, found through an open-addressing hash table);
 *   - pb_event_update: the numalize-style "recent sharers" state of one line;
 *   - pb_fork_*: the parallel regions a thread is inside, from the OpenMP runtime's
 *     fork calls (the Valgrind and Pin tools; the tsan runtime asks the runtime);
 *   - pb_finish: merge the tables, compute the N x N matrix under one weight
 *     definition and write the CSV matrix and its JSON sidecar;
 *   - pb_regions_write: the same per parallel region, and the list of regions.
 *
 * Plain C99 that also compiles as C++ (the Pin tool), with no library calls:
 * the including file defines, before including this header,
 *   PB_ALLOC(bytes)          zero-filled memory, never NULL (abort inside)
 *   PB_FREE(ptr, bytes)
 *   PB_FILE                  a file handle type, PB_NOFILE its failure value
 *   PB_OPEN(path)            create/truncate for writing
 *   PB_WRITE(f, buf, len)    write all bytes, returns 0 on success
 *   PB_CLOSE(f)              returns 0 on success
 *   PB_RENAME(old, new)      returns 0 on success
 * and includes <stdint.h>-like types uint64_t/uint32_t/uintptr_t.  PB_FORK_CALLS, if
 * defined, adds what the tools that follow the OpenMP runtime's fork calls share.
 *
 * Weights (W is symmetric, diagonal 0; c_t(l) = counted accesses of thread t to line l):
 *   common: W[i][j] = sum over lines l touched by both i and j of c_i(l) + c_j(l)
 *   min:    W[i][j] = sum over lines l touched by both of min(c_i(l), c_j(l))
 *   events: W[i][j] = E[i][j] + E[j][i], E[i][j] = counted accesses of i to a line
 *           whose two most recent distinct counted accessors included j (numalize).
 * An access counts once for every line it touches (an access straddling two
 * lines counts on both).  Which accesses count (pintools/README.md, "What is counted"):
 *   all:      every access (the weight names common, min, events);
 *   parallel: only the accesses a thread makes inside an active parallel region
 *             (parallel-common, parallel-min, parallel-events; the default).  The tsan
 *             runtime asks omp_in_parallel(); the Valgrind and Pin tools follow the
 *             OpenMP runtime's fork calls (pb_fork_fns, pb_forks below).
 */
#ifndef PB_CORE_H
#define PB_CORE_H

#define PB_WEIGHT_COMMON 0
#define PB_WEIGHT_MIN 1
#define PB_WEIGHT_EVENTS 2

/* OpenMP thread ids beyond this are folded into the last one (documented) */
#define PB_MAX_THREADS 4096

#define PB_COUNT_ALL 0
#define PB_COUNT_PARALLEL 1

/* the weight names of PB_COUNT_PARALLEL are these with the prefix; the default is the first */
#define PB_PARALLEL_PREFIX "parallel-"
#define PB_WEIGHT_DEFAULT "parallel-common"
#define PB_WEIGHT_CHOICES "[parallel-]common, [parallel-]min or [parallel-]events"

static const char *const pb_weight_names[3] = {"common", "min", "events"};
static const char *const pb_weight_defs[3] = {
    "W[i][j] = sum over cache lines touched by both i and j of (accesses by i + accesses by j)",
    "W[i][j] = sum over cache lines touched by both i and j of min(accesses by i, accesses by j)",
    ("W[i][j] = E[i][j] + E[j][i]; E[i][j] = accesses by i to a line whose two most recent "
     "distinct accessors include j (numalize sharing events)"),
};
static const char *const pb_count_names[2] = {"all", "parallel"};
static const char pb_count_all_def[] = "every access";

/* ------------------------------------------------------------------ small string helpers */

static int pb_streq(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

/* weight name -> PB_WEIGHT_* (and *count -> PB_COUNT_*), or -1 */
static int pb_parse_weight(const char *s, int *count)
{
    const char *p = PB_PARALLEL_PREFIX, *rest = s;
    while (*p && *p == *rest)
        p++, rest++;
    *count = *p ? PB_COUNT_ALL : PB_COUNT_PARALLEL;
    if (*p)
        rest = s;
    for (int w = 0; w < 3; w++)
        if (pb_streq(rest, pb_weight_names[w]))
            return w;
    return -1;
}

/* decimal unsigned integer, or -1 on anything else */
static long long pb_parse_uint(const char *s)
{
    long long v = 0;
    if (!s || !*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 100000000000LL)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

/* line size in bytes (power of two, 8..4096) -> log2, or -1 */
static int pb_parse_line(const char *s)
{
    long long v = pb_parse_uint(s);
    for (int sh = 3; sh <= 12; sh++)
        if (v == (1LL << sh))
            return sh;
    return -1;
}

/* ------------------------------------------------------------------ the per-thread table */

/* The counts of a "page" of PB_PAGE_LINES consecutive lines (4 KiB of memory at 64-byte
 * lines) sit together, in blocks of memory (the arena) that the table takes from PB_ALLOC,
 * one page after the other in the order the thread first counts them.  An open-addressing
 * hash table of 16-byte entries maps a page to its counts; growing it moves no counts.
 * So the counts of an array that a thread reads at random take a compact block (9/64 of
 * the array at 64-byte lines) and one table entry per 4 KiB of it.  Each page's counts
 * are followed by one spare cache line: without it the counts of pages 8 apart (arrays
 * 32 KiB apart, read in step) would lie exactly 4 KiB apart, and the processor, which
 * first matches a load against earlier stores by the low 12 address bits, would stall
 * the loads of one behind the stores of the other. */
#define PB_PAGE_BITS 6
#define PB_PAGE_LINES (1 << PB_PAGE_BITS)
#define PB_PAGE_STRIDE (PB_PAGE_LINES + 8) /* uint64_t per page in the arena */
/* the key of line index `line` (< 2^61): its page index + 1 */
#define PB_KEY(line) (((line) + PB_PAGE_LINES) >> PB_PAGE_BITS)
/* an arena block holds as many pages as the table already has, from 8 to 4096 */
#define PB_ARENA_MIN 8
#define PB_ARENA_MAX 4096

typedef struct pb_ent {
    uint64_t key;   /* 0: empty, else page index + 1 */
    uintptr_t base; /* its counts' address less 8 x the page's first line index: the count
                       (or sharer state) of line l is at base + 8 l */
} pb_ent;

/* the counter of line `line` in the page whose entry has `base` */
#define PB_COUNTER(base, line) ((uint64_t *)((base) + ((line) << 3)))

typedef struct pb_tbl {
    uint64_t last_key;   /* key of the last page used (0: none) ... */
    uintptr_t last;      /* ... and its base */
    pb_ent *ent;         /* 2^bits entries */
    int shift;           /* 64 - bits */
    int line_shift;      /* log2 line bytes */
    uint32_t tid;        /* the thread these counts belong to */
    uint32_t region;     /* the parallel region they were made in (tsan, per region; else 0) */
    uint64_t mask;       /* 2^bits - 1 */
    uint64_t used;       /* occupied entries (pages) */
    uint64_t limit;      /* grow beyond this (load factor 1/2) */
    uint64_t *arena;     /* the next page's counts ... */
    uint64_t arena_left; /* ... and how many pages the arena block still holds */
    uint64_t *ev;        /* events row (PB_MAX_THREADS), NULL unless weight=events */
    struct pb_tbl *next; /* all tables of the process */
} pb_tbl;

static volatile uint64_t pb_table_bytes; /* bytes of all tables now (for the sidecar) */
static volatile uint64_t pb_table_bytes_peak;

#define PB_HASH(key, shift) (((key) * UINT64_C(0x9E3779B97F4A7C15)) >> (shift))

static void pb_bytes_add(int64_t delta)
{
    uint64_t now = __atomic_add_fetch(&pb_table_bytes, (uint64_t)delta, __ATOMIC_RELAXED);
    uint64_t peak = __atomic_load_n(&pb_table_bytes_peak, __ATOMIC_RELAXED);
    while (now > peak &&
           !__atomic_compare_exchange_n(&pb_table_bytes_peak, &peak, now, 0,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static void pb_tbl_init(pb_tbl *t, uint32_t tid, int line_shift, int bits)
{
    t->ent = (pb_ent *)PB_ALLOC(sizeof(pb_ent) << bits);
    pb_bytes_add((int64_t)(sizeof(pb_ent) << bits));
    t->mask = (UINT64_C(1) << bits) - 1;
    t->shift = 64 - bits;
    t->line_shift = line_shift;
    t->used = 0;
    t->limit = (UINT64_C(1) << bits) / 2;
    t->last_key = 0;
    t->last = 0;
    t->arena = 0;
    t->arena_left = 0;
    t->tid = tid;
    t->region = 0;
    t->ev = 0;
    t->next = 0;
}

/* double the table (the entries move, their counts stay where they are) */
static void pb_tbl_grow(pb_tbl *t)
{
    pb_ent *old = t->ent;
    uint64_t n = t->mask + 1;
    t->ent = (pb_ent *)PB_ALLOC(sizeof(pb_ent) * 2 * n);
    pb_bytes_add((int64_t)(sizeof(pb_ent) * 2 * n));
    t->mask = 2 * n - 1;
    t->shift -= 1;
    t->limit = n;
    for (uint64_t i = 0; i < n; i++)
        if (old[i].key) {
            uint64_t j = PB_HASH(old[i].key, t->shift);
            while (t->ent[j].key)
                j = (j + 1) & t->mask;
            t->ent[j] = old[i];
        }
    PB_FREE(old, sizeof(pb_ent) * n);
    pb_bytes_add(-(int64_t)(sizeof(pb_ent) * n));
}

/* zeroed counts for one more page */
static uint64_t *pb_tbl_page(pb_tbl *t)
{
    if (!t->arena_left) {
        uint64_t n = t->used < PB_ARENA_MIN ? PB_ARENA_MIN
                     : t->used > PB_ARENA_MAX ? PB_ARENA_MAX : t->used;
        t->arena = (uint64_t *)PB_ALLOC(sizeof(uint64_t) * PB_PAGE_STRIDE * n);
        pb_bytes_add((int64_t)(sizeof(uint64_t) * PB_PAGE_STRIDE * n));
        t->arena_left = n;
    }
    uint64_t *page = t->arena;
    t->arena += PB_PAGE_STRIDE;
    t->arena_left--;
    return page;
}

/* the base (see pb_ent) of the page of `key`, inserted (zero counts) if missing */
static uintptr_t pb_tbl_slot(pb_tbl *t, uint64_t key)
{
    uint64_t i = PB_HASH(key, t->shift);
    for (;;) {
        pb_ent *e = &t->ent[i];
        if (e->key == key)
            return e->base;
        if (e->key == 0) {
            if (t->used >= t->limit) {
                pb_tbl_grow(t);
                return pb_tbl_slot(t, key);
            }
            e->base = (uintptr_t)pb_tbl_page(t) - ((key - 1) << (PB_PAGE_BITS + 3));
            e->key = key;
            t->used++;
            return e->base;
        }
        i = (i + 1) & t->mask;
    }
}

/* the counter of line index `line` (its page becomes `last`) */
static inline uint64_t *pb_tbl_counter(pb_tbl *t, uint64_t line)
{
    uint64_t key = PB_KEY(line);
    if (key != t->last_key) {
        t->last = pb_tbl_slot(t, key);
        t->last_key = key;
    }
    return PB_COUNTER(t->last, line);
}

/* ------------------------------------------------------------------ sharing events */

/* One access by thread `tid` to a line whose sharer state is *state (two 16-bit
 * slots: most recent distinct accessor + 1, the one before + 1; 0 = none).
 * Counts events into `row` (row[j]: events of tid with j) and returns the new
 * state (the caller stores it only when it changed). */
static inline uint32_t pb_event_update(uint32_t state, uint32_t tid, uint64_t *row)
{
    uint32_t me = (tid >= 0xfffe ? 0xfffe : tid) + 1, a = state >> 16, b = state & 0xffff;
    if (a == me) {
        if (b)
            row[b - 1]++;
        return state;
    }
    if (a) {
        row[a - 1]++;
        if (b && b != me)
            row[b - 1]++;
    }
    return me << 16 | a;
}

/* ------------------------------------------------------------------ parallel regions (Valgrind, Pin) */

#ifdef PB_FORK_CALLS /* defined by the tools that follow the fork calls */

/* The entry points through which gcc (libgomp, and libomp's GOMP compatibility layer) and
 * clang (libomp) code runs a parallel region: the "fork calls".  The calling thread stays
 * inside until the call returns, after the team's join barrier, so a region is open from
 * the call's first instruction until the caller's stack pointer is back above its value
 * there.  `team_arg`: the third argument is the team size asked for (gcc passes 1 for
 * `if(false)` and num_threads(1)), and 1 opens no parallel region.  Aliases of one address
 * are all listed: a debugger names an address by any of them. */
typedef struct pb_fork_fn {
    const char *name;
    int team_arg;
} pb_fork_fn;

static const pb_fork_fn pb_fork_fns[] = {
    {"GOMP_parallel", 1},
    {"GOMP_parallel_reductions", 1},
    {"GOMP_parallel_sections", 1},
    {"GOMP_parallel_loop_static", 1},
    {"GOMP_parallel_loop_dynamic", 1},
    {"GOMP_parallel_loop_guided", 1},
    {"GOMP_parallel_loop_runtime", 1},
    {"GOMP_parallel_loop_nonmonotonic_dynamic", 1},
    {"GOMP_parallel_loop_nonmonotonic_guided", 1},
    {"GOMP_parallel_loop_nonmonotonic_runtime", 1},
    {"GOMP_parallel_loop_maybe_nonmonotonic_runtime", 1},
    {"GOMP_teams_reg", 1},
    {"__kmpc_fork_call", 0},
    {"__kmpc_fork_call_if", 0},
    {"__kmpc_fork_teams", 0},
};
#define PB_FORK_FNS ((int)(sizeof pb_fork_fns / sizeof pb_fork_fns[0]))

/* index in pb_fork_fns of the function named `sym` (a symbol, maybe with an @version
 * suffix), or -1 */
static int pb_fork_lookup(const char *sym)
{
    for (int k = 0; k < PB_FORK_FNS; k++) {
        const char *a = pb_fork_fns[k].name, *b = sym;
        while (*a && *a == *b)
            a++, b++;
        if (!*a && (!*b || *b == '@'))
            return k;
    }
    return -1;
}

/* the fork calls a thread is inside, innermost last (deeper ones are not followed) */
#define PB_FORK_DEPTH 64
typedef struct pb_forks {
    uint64_t sp[PB_FORK_DEPTH];    /* stack pointer at the call's first instruction */
    unsigned char par[PB_FORK_DEPTH]; /* whether it opened a parallel region */
    uint32_t n;
} pb_forks;

/* The thread enters fork call k with stack pointer sp and third argument arg3.
 * Returns the number of parallel regions it opens (0 or 1). */
static int pb_fork_enter(pb_forks *f, int k, uint64_t sp, uint64_t arg3)
{
    if ((f->n && f->sp[f->n - 1] == sp) || f->n == PB_FORK_DEPTH)
        return 0; /* the same call under another name (a stub), or too deep */
    int par = !(pb_fork_fns[k].team_arg && (uint32_t)arg3 == 1);
    f->sp[f->n] = sp;
    f->par[f->n] = (unsigned char)par;
    f->n++;
    return par;
}

/* The thread's stack pointer is sp: the fork calls whose frames are gone have returned
 * (or were left by a longjmp).  Returns the number of parallel regions that closed. */
static int pb_fork_leave(pb_forks *f, uint64_t sp)
{
    int closed = 0;
    while (f->n && sp > f->sp[f->n - 1])
        closed += f->par[--f->n];
    return closed;
}

/* pb_fork_leave has something to do once the stack pointer is above this */
static uint64_t pb_fork_watch(const pb_forks *f)
{
    return f->n ? f->sp[f->n - 1] : ~UINT64_C(0);
}

#endif /* PB_FORK_CALLS */

/* ------------------------------------------------------------------ merge and weigh */

typedef struct pb_rec {
    uint64_t line;
    uint64_t count;
    uint64_t tid;
} pb_rec;

/* sort by line (LSD radix sort, 11-bit digits, on the bits that vary), then
 * by thread within each line (insertion sort: a line has few records) */
static void pb_sort(pb_rec *r, uint64_t n)
{
    if (n < 2)
        return;
    uint64_t lo = r[0].line, hi = r[0].line;
    for (uint64_t i = 1; i < n; i++) {
        if (r[i].line < lo)
            lo = r[i].line;
        if (r[i].line > hi)
            hi = r[i].line;
    }
    pb_rec *tmp = (pb_rec *)PB_ALLOC(sizeof(pb_rec) * n);
    uint64_t *count = (uint64_t *)PB_ALLOC(sizeof(uint64_t) << 11);
    pb_rec *src = r, *dst = tmp;
    for (int sh = 0; sh < 64 && ((hi - lo) >> sh) != 0; sh += 11) {
        for (int d = 0; d < 2048; d++)
            count[d] = 0;
        for (uint64_t i = 0; i < n; i++)
            count[((src[i].line - lo) >> sh) & 2047]++;
        for (uint64_t d = 0, sum = 0; d < 2048; d++) {
            uint64_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (uint64_t i = 0; i < n; i++)
            dst[count[((src[i].line - lo) >> sh) & 2047]++] = src[i];
        pb_rec *x = src;
        src = dst;
        dst = x;
    }
    if (src != r)
        for (uint64_t i = 0; i < n; i++)
            r[i] = src[i];
    PB_FREE(count, sizeof(uint64_t) << 11);
    PB_FREE(tmp, sizeof(pb_rec) * n);
    for (uint64_t i = 1; i < n; i++)
        for (uint64_t j = i; j > 0 && r[j - 1].line == r[j].line && r[j - 1].tid > r[j].tid; j--) {
            pb_rec x = r[j];
            r[j] = r[j - 1];
            r[j - 1] = x;
        }
}

/* what pb_finish reports */
typedef struct pb_result {
    const char *tracer;      /* "tsan", "valgrind", "pin" */
    const char *thread_ids;  /* how thread ids were obtained */
    int weight;              /* PB_WEIGHT_* */
    int count;               /* PB_COUNT_* */
    const char *parallel;    /* how this tracer tells the accesses inside parallel regions */
    int line_shift;          /* log2 line bytes */
    uint64_t threads;        /* matrix size N (filled in) */
    uint64_t accesses;       /* total counted accesses (filled in) */
    uint64_t distinct_lines; /* (filled in) */
    uint64_t shared_lines;   /* lines touched by >= 2 threads (filled in) */
    uint64_t seconds_ns;     /* time from tracer start to the end of writing */
    uint64_t records;        /* (line, thread) pairs (filled in) */
    int instrumented;        /* tsan: 1 when compiled code called __tsan_init, 0 when none
                                did; -1: not a notion of this tracer (not written) */
} pb_result;

/* buffered writer over PB_FILE */
typedef struct pb_writer {
    PB_FILE f;
    int err;
    uint32_t len;
    char buf[1 << 16];
} pb_writer;

static void pb_flush(pb_writer *o)
{
    if (o->len && !o->err && PB_WRITE(o->f, o->buf, o->len) != 0)
        o->err = 1;
    o->len = 0;
}

static void pb_putc(pb_writer *o, char c)
{
    if (o->len == sizeof o->buf)
        pb_flush(o);
    o->buf[o->len++] = c;
}

static void pb_puts(pb_writer *o, const char *s)
{
    while (*s)
        pb_putc(o, *s++);
}

static void pb_putu(pb_writer *o, uint64_t v)
{
    char d[24];
    int n = 0;
    do
        d[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n)
        pb_putc(o, d[--n]);
}

/* a JSON string (escapes quotes, backslashes and control characters) */
static void pb_putjs(pb_writer *o, const char *s)
{
    pb_putc(o, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            pb_putc(o, '\\');
            pb_putc(o, (char)c);
        } else if (c < 0x20) {
            static const char hex[] = "0123456789abcdef";
            pb_puts(o, "\\u00");
            pb_putc(o, hex[c >> 4]);
            pb_putc(o, hex[c & 15]);
        } else {
            pb_putc(o, (char)c);
        }
    }
    pb_putc(o, '"');
}

/* ns as seconds with 6 decimals */
static void pb_putsec(pb_writer *o, uint64_t ns)
{
    uint64_t us = ns / 1000;
    pb_putu(o, us / 1000000);
    pb_putc(o, '.');
    char d[6];
    for (int i = 5; i >= 0; i--, us /= 10)
        d[i] = (char)('0' + us % 10);
    for (int i = 0; i < 6; i++)
        pb_putc(o, d[i]);
}

/* open `path`.tmp for writing; 0 on success */
static int pb_out_open(pb_writer *o, const char *path, char *tmp, uint32_t tmpsize)
{
    uint32_t n = 0;
    while (path[n] && n + 5 < tmpsize) {
        tmp[n] = path[n];
        n++;
    }
    if (path[n])
        return -1;
    tmp[n] = '.'; tmp[n + 1] = 't'; tmp[n + 2] = 'm'; tmp[n + 3] = 'p'; tmp[n + 4] = 0;
    o->f = PB_OPEN(tmp);
    o->err = o->f == PB_NOFILE;
    o->len = 0;
    return o->err ? -1 : 0;
}

static int pb_out_close(pb_writer *o, const char *tmp, const char *path)
{
    if (o->err)
        return -1;
    pb_flush(o);
    if (PB_CLOSE(o->f) != 0 || o->err)
        return -1;
    return PB_RENAME(tmp, path);
}

/*
 * Merge the tables (several tables may hold the same thread: their counts
 * add up), weigh, and write the matrix to `csv` and the sidecar to `json`
 * (each through a .tmp file renamed into place). `min_threads` is the least
 * matrix size (N = max(min_threads, highest thread id + 1)). `raw`, if not
 * NULL, also gets "line,thread,count" lines of the merged counts.
 * Returns 0, or -1 if a file could not be written.
 */
static int pb_finish(pb_tbl *tables, uint64_t min_threads, pb_result *res, const char *csv,
                     const char *json, const char *raw, uint64_t (*now_ns)(void),
                     uint64_t start_ns)
{
    uint64_t nrec = 0, N = min_threads ? min_threads : 1;
    for (pb_tbl *t = tables; t; t = t->next) {
        for (uint64_t i = 0; i <= t->mask; i++)
            if (t->ent[i].key) {
                uint64_t first = (t->ent[i].key - 1) << PB_PAGE_BITS;
                for (uint64_t l = first; l < first + PB_PAGE_LINES; l++)
                    nrec += *PB_COUNTER(t->ent[i].base, l) != 0;
            }
        if (t->tid + 1 > N)
            N = t->tid + 1;
    }
    /* every (line, thread) count, sorted by line then thread, duplicates merged */
    const uint64_t rec_bytes = sizeof(pb_rec) * (nrec ? nrec : 1);
    pb_rec *rec = (pb_rec *)PB_ALLOC(rec_bytes);
    uint64_t k = 0;
    for (pb_tbl *t = tables; t; t = t->next)
        for (uint64_t i = 0; i <= t->mask; i++)
            if (t->ent[i].key) {
                uint64_t first = (t->ent[i].key - 1) << PB_PAGE_BITS;
                for (uint64_t l = first; l < first + PB_PAGE_LINES; l++)
                    if (*PB_COUNTER(t->ent[i].base, l)) {
                        rec[k].line = l;
                        rec[k].count = *PB_COUNTER(t->ent[i].base, l);
                        rec[k].tid = t->tid;
                        k++;
                    }
            }
    nrec = k;
    pb_sort(rec, nrec);
    k = 0;
    for (uint64_t i = 0; i < nrec; i++) {
        if (k && rec[k - 1].line == rec[i].line && rec[k - 1].tid == rec[i].tid)
            rec[k - 1].count += rec[i].count;
        else
            rec[k++] = rec[i];
    }
    nrec = k;

    uint64_t *W = (uint64_t *)PB_ALLOC(sizeof(uint64_t) * N * N);
    res->threads = N;
    res->accesses = res->distinct_lines = res->shared_lines = 0;
    res->records = nrec;
    for (uint64_t i = 0; i < nrec;) {
        uint64_t j = i;
        while (j < nrec && rec[j].line == rec[i].line)
            res->accesses += rec[j++].count;
        res->distinct_lines++;
        if (j - i >= 2) {
            res->shared_lines++;
            if (res->weight != PB_WEIGHT_EVENTS)
                for (uint64_t a = i; a < j; a++)
                    for (uint64_t b = a + 1; b < j; b++) {
                        uint64_t ca = rec[a].count, cb = rec[b].count;
                        uint64_t w = res->weight == PB_WEIGHT_COMMON ? ca + cb
                                                                     : (ca < cb ? ca : cb);
                        W[rec[a].tid * N + rec[b].tid] += w;
                        W[rec[b].tid * N + rec[a].tid] += w;
                    }
        }
        i = j;
    }
    if (res->weight == PB_WEIGHT_EVENTS)
        for (pb_tbl *t = tables; t; t = t->next)
            if (t->ev)
                for (uint64_t j = 0; j < N && j < PB_MAX_THREADS; j++)
                    if (j != t->tid) {
                        W[t->tid * N + j] += t->ev[j];
                        W[j * N + t->tid] += t->ev[j];
                    }

    char tmp[4200];
    pb_writer *o = (pb_writer *)PB_ALLOC(sizeof(pb_writer));
    int bad = 0;
    if (raw) {
        if (pb_out_open(o, raw, tmp, sizeof tmp) == 0) {
            pb_puts(o, "line,thread,count\n");
            for (uint64_t i = 0; i < nrec; i++) {
                pb_putu(o, rec[i].line);
                pb_putc(o, ',');
                pb_putu(o, rec[i].tid);
                pb_putc(o, ',');
                pb_putu(o, rec[i].count);
                pb_putc(o, '\n');
            }
        }
        bad |= pb_out_close(o, tmp, raw);
    }
    if (pb_out_open(o, csv, tmp, sizeof tmp) == 0)
        for (uint64_t i = 0; i < N; i++)
            for (uint64_t j = 0; j < N; j++) {
                pb_putu(o, W[i * N + j]);
                pb_putc(o, j + 1 < N ? ',' : '\n');
            }
    bad |= pb_out_close(o, tmp, csv);

    res->seconds_ns = now_ns() - start_ns;
    if (pb_out_open(o, json, tmp, sizeof tmp) == 0) {
        pb_puts(o, "{\n  \"tracer\": ");
        pb_putjs(o, res->tracer);
        pb_puts(o, ",\n  \"weight\": \"");
        pb_puts(o, res->count == PB_COUNT_PARALLEL ? PB_PARALLEL_PREFIX : "");
        pb_puts(o, pb_weight_names[res->weight]);
        pb_puts(o, "\",\n  \"weight_definition\": ");
        pb_putjs(o, pb_weight_defs[res->weight]);
        pb_puts(o, ",\n  \"count\": ");
        pb_putjs(o, pb_count_names[res->count]);
        pb_puts(o, ",\n  \"count_definition\": ");
        pb_putjs(o, res->count == PB_COUNT_PARALLEL ? res->parallel : pb_count_all_def);
        pb_puts(o, ",\n  \"line_bytes\": ");
        pb_putu(o, UINT64_C(1) << res->line_shift);
        pb_puts(o, ",\n  \"threads\": ");
        pb_putu(o, N);
        pb_puts(o, ",\n  \"accesses\": ");
        pb_putu(o, res->accesses);
        pb_puts(o, ",\n  \"distinct_lines\": ");
        pb_putu(o, res->distinct_lines);
        pb_puts(o, ",\n  \"shared_lines\": ");
        pb_putu(o, res->shared_lines);
        pb_puts(o, ",\n  \"time_s\": ");
        pb_putsec(o, res->seconds_ns);
        pb_puts(o, ",\n  \"thread_ids\": ");
        pb_putjs(o, res->thread_ids);
        pb_puts(o, ",\n  \"line_thread_pairs\": ");
        pb_putu(o, nrec);
        pb_puts(o, ",\n  \"table_bytes_peak\": ");
        pb_putu(o, pb_table_bytes_peak);
        if (res->instrumented >= 0) {
            pb_puts(o, ",\n  \"instrumented\": ");
            pb_puts(o, res->instrumented ? "true" : "false");
        }
        pb_puts(o, "\n}\n");
    }
    bad |= pb_out_close(o, tmp, json);
    PB_FREE(o, sizeof(pb_writer));
    PB_FREE(W, sizeof(uint64_t) * N * N);
    PB_FREE(rec, rec_bytes);
    return bad ? -1 : 0;
}

/* ------------------------------------------------------------------ per parallel region */

/* Per region (the tsan runtime; the Valgrind tool): region k >= 1 is the k-th fork call
 * site seen, region 0 what no followed fork call opened.  Beyond PB_MAX_REGIONS call sites
 * the rest count as region 0. */
#define PB_MAX_REGIONS 256
typedef struct pb_region {
    uintptr_t ra;                /* the return address of the fork call */
    uint64_t instances, time_ns; /* how often it ran, and for how long in all */
} pb_region;

/* dst = base "." k ext */
static void pb_path(char *dst, const char *base, int k, const char *ext)
{
    uint32_t n = 0;
    for (; base[n]; n++)
        dst[n] = base[n];
    dst[n++] = '.';
    char d[12];
    int m = 0;
    do
        d[m++] = (char)('0' + k % 10);
    while ((k /= 10) != 0);
    while (m)
        dst[n++] = d[--m];
    for (; *ext; ext++)
        dst[n++] = *ext;
    dst[n] = 0;
}

/*
 * Each region's matrix and sidecar (pb_finish over the tables of that region: `region` of
 * every table) at `out`.<k>.csv and .json, and the list of regions at `out` (JSON: per
 * region its call site's module and file address, as `module_of` finds them, instances,
 * time and counted accesses).  Relinks the tables (call it after the whole program's
 * matrix is written).  `out` must leave room for a suffix of 16 bytes in 4200.
 */
static int pb_regions_write(pb_tbl *tables, int nregions, const pb_region *regions,
                            void (*module_of)(uintptr_t ra, const char **module, uintptr_t *bias),
                            uint64_t min_threads, const pb_result *like, const char *out,
                            uint64_t (*now_ns)(void), uint64_t start_ns)
{
    uint64_t ntab = 0;
    for (pb_tbl *t = tables; t; t = t->next)
        ntab++;
    const uint64_t all_bytes = sizeof(pb_tbl *) * (ntab ? ntab : 1);
    pb_tbl **all = (pb_tbl **)PB_ALLOC(all_bytes);
    ntab = 0;
    for (pb_tbl *t = tables; t; t = t->next)
        all[ntab++] = t;
    static char csv[4200], json[4200], tmp[4200];
    pb_writer *o = (pb_writer *)PB_ALLOC(sizeof(pb_writer));
    int bad = pb_out_open(o, out, tmp, sizeof tmp);
    pb_puts(o, "{\n  \"tracer\": ");
    pb_putjs(o, like->tracer);
    pb_puts(o, ",\n  \"regions\": [");
    for (int r = 1; r < nregions; r++) {
        pb_tbl *list = 0;
        for (uint64_t i = 0; i < ntab; i++)
            if (all[i]->region == (uint32_t)r) {
                all[i]->next = list;
                list = all[i];
            }
        pb_path(csv, out, r, ".csv");
        pb_path(json, out, r, ".json");
        pb_result res = *like;
        bad |= pb_finish(list, min_threads, &res, csv, json, 0, now_ns, start_ns);
        const char *module = "";
        uintptr_t bias = 0;
        module_of(regions[r].ra, &module, &bias);
        pb_puts(o, r > 1 ? ",\n    {\"module\": " : "\n    {\"module\": ");
        pb_putjs(o, module);
        pb_puts(o, ", \"address\": ");
        pb_putu(o, regions[r].ra - bias);
        pb_puts(o, ", \"instances\": ");
        pb_putu(o, regions[r].instances);
        pb_puts(o, ", \"time_ns\": ");
        pb_putu(o, regions[r].time_ns);
        pb_puts(o, ", \"accesses\": ");
        pb_putu(o, res.accesses);
        pb_puts(o, ", \"matrix\": ");
        pb_putjs(o, csv);
        pb_puts(o, "}");
    }
    pb_puts(o, "\n  ]\n}\n");
    bad |= pb_out_close(o, tmp, out);
    PB_FREE(o, sizeof(pb_writer));
    PB_FREE(all, all_bytes);
    return bad;
}

#endif /* PB_CORE_H */
