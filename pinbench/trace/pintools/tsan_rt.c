/*
 * tsan_rt.c -- pinbench: a cache-line sharing tracer behind the ThreadSanitizer ABI.
 *
 * A program compiled with -fsanitize=thread (gcc, g++, gfortran, clang, clang++)
 * calls __tsan_read8(addr), __tsan_write4(addr), __tsan_func_entry(pc), ... around
 * every memory access and function.  Linked with this runtime instead of libtsan
 * (compile flags and link flags kept apart, see pintools/README.md), the program
 * counts its accesses per (cache line, OpenMP thread) and writes the N x N
 * sharing matrix when it exits.
 *
 * - Thread id and whether the thread is inside an active parallel region:
 *   omp_get_thread_num() and omp_in_parallel() at every instrumented function entry
 *   (the outlined body of a parallel region or task always is one), cached per OS
 *   thread; code before the first entry asks once.  A function's exit gives its
 *   caller back the state the caller had when the function changed it (so the
 *   serial code after a parallel region in the same function is serial again).
 * - What counts: with the parallel-* weights (the default) only the accesses made
 *   while omp_in_parallel() holds; with common, min and events every access.
 * - Counting: per (OS thread, OpenMP thread) open-addressing hash tables
 *   (pb_core.h), no locks or shared writes on the access path, so the threads keep
 *   running in parallel; merged at exit.
 * - weight=events keeps, in addition, a shared shadow of 4 bytes per line (the two
 *   most recent distinct accessors), read and written with relaxed atomics.
 * - Options come from the environment (read once, at the first call):
 *     PINBENCH_TRACE_OUT      matrix CSV path; unset: nothing is traced or written
 *     PINBENCH_TRACE_JSON     sidecar path (default: OUT with its extension -> .json)
 *     PINBENCH_TRACE_WEIGHT   parallel-common (default) | parallel-min | parallel-events |
 *                             common | min | events
 *     PINBENCH_TRACE_LINE     line size in bytes, power of two 8..4096 (default 64)
 *     PINBENCH_TRACE_THREADS  least matrix size N (default: highest thread id + 1)
 *     PINBENCH_TRACE_RAW      optional path for "line,thread,count" records
 *     PINBENCH_TRACE_REGIONS  optional path: count per parallel region as well, and write
 *                             there the list of regions (JSON), each region's matrix and
 *                             sidecar beside it (PATH.<k>.csv, PATH.<k>.json)
 *   A bad value stops the program at start-up with one line on stderr, status 2.
 * - Per region (PINBENCH_TRACE_REGIONS): the link flags send the program's calls of
 *   libgomp's parallel entry points (GOMP_parallel and its loop, sections and reductions
 *   forms) to the wrappers here (-Wl,--wrap=GOMP_parallel...), which call libgomp's
 *   (__real_GOMP_parallel...; libomp's GOMP layer defines them too).  A region is
 *   the return address of that call; the calling thread says which region is open (one
 *   shared variable, read at every instrumented function entry, so nested regions count
 *   towards the innermost one that was opened last), and a thread's tables are kept per
 *   (region, OpenMP thread).  Each region's instances and wall time (the calling thread's,
 *   from the call to its return) are counted.  Calls that do not go through these entry
 *   points (clang's __kmpc_fork_call, a shared library's own regions) count outside any
 *   region (region 0, not listed).
 * - The atomic operations are performed (sequentially consistent) and counted as
 *   a read (load), a write (store) or both (read-modify-write, exchange, CAS).
 *
 * Build: cc -O2 -fPIC -c tsan_rt.c; ar rcs libpinbench_tsan.a tsan_rt.o tsan_wrap.o
 * (pinbench setup does it: pinbench/native.py).  The runtime itself must NOT be compiled
 * with -fsanitize=thread.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

static void pb_die(const char *msg, const char *detail);

static void *pb_mmap(size_t bytes, int noreserve)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (noreserve ? MAP_NORESERVE : 0), -1, 0);
    if (p == MAP_FAILED)
        pb_die("out of memory", NULL);
    return p;
}

#define PB_ALLOC(bytes) pb_mmap((bytes), 0)
#define PB_FREE(ptr, bytes) munmap((ptr), (bytes))
#define PB_FILE int
#define PB_NOFILE (-1)
#define PB_OPEN(path) open((path), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
#define PB_WRITE(f, buf, len) pb_write_all((f), (buf), (len))
#define PB_CLOSE(f) close(f)
#define PB_RENAME(a, b) rename((a), (b))

#include <stdio.h> /* rename */

static int pb_write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t n = write(fd, buf, len);
        if (n <= 0)
            return -1;
        buf += n, len -= (size_t)n;
    }
    return 0;
}

#include "pb_core.h"

#define PB_TLS __thread __attribute__((tls_model("initial-exec")))
#define PB_EXPORT __attribute__((visibility("default")))
#define PB_LIKELY(x) __builtin_expect(!!(x), 1)
#define PB_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* a marker, so that a traced binary can be recognised (strings, grep) */
PB_EXPORT const char pinbench_tsan_runtime[] = "pinbench-tsan-runtime 1";

/* the OpenMP runtime, if the program has one (gcc: libgomp, clang: libomp) */
extern int omp_get_thread_num(void) __attribute__((weak));
extern int omp_in_parallel(void) __attribute__((weak));

/* ------------------------------------------------------------------ state */

static int pb_state;        /* 0: not initialised, 3: being initialised, 1: tracing, 2: off */
static int pb_shift = 6;    /* log2 line bytes */
static int pb_events;       /* weight == events: keep the sharer shadow */
static int pb_weight;
static int pb_count = PB_COUNT_PARALLEL;
static uint64_t pb_min_threads;
static const char *pb_out, *pb_raw;
static char pb_json[4096];
static uint64_t pb_start_ns;
static pid_t pb_pid;
static pb_tbl *pb_tables;   /* every table of the process (pushed with CAS) */

/* per region (PINBENCH_TRACE_REGIONS; pb_core.h, pb_region): region 0 holds all when not */
static const char *pb_regions_out;
static int pb_region_now;   /* the region the innermost open fork call opened */
static pb_region pb_regions[PB_MAX_REGIONS];
static int pb_nregions = 1; /* regions known, region 0 included */
static int pb_region_lock;

/* pb_cur: the table of (this OS thread, its current OpenMP thread id), the one the
 * access path uses; it stays NULL when tracing is off, while the accesses do not
 * count and with weight=events, so that those cases take the slow path, which uses
 * pb_mine_cur (NULL when the accesses do not count). */
static PB_TLS pb_tbl *pb_cur;
static PB_TLS pb_tbl *pb_mine_cur;
/* pb_cur->ent and pb_cur->shift, copied here (side by side: one address for both) to
 * save a load on the access path; when pb_cur is NULL they name pb_nowhere, whose two
 * empty entries never match, so the access path needs no test of its own to take the
 * slow path.  A shift of PB_NOT_COUNTED (no table has 2^64 entries) says that the
 * thread's accesses are known not to count (tracing off, or outside parallel regions
 * with the parallel-* weights): the access path returns at once. */
#define PB_NOT_COUNTED 0
static pb_ent pb_nowhere[2];
static PB_TLS struct {
    pb_ent *ent;
    int shift;
} pb_fast = {pb_nowhere, 63};
/* The thread's state as of its last instrumented function entry or exit:
 * PB_STATE(region, OpenMP thread id, whether its accesses count), or PB_UNKNOWN (ask at
 * the next access). */
#define PB_STATE(region, tid, counts) (((region) * PB_MAX_THREADS + (tid)) * 2 + (counts))
#define PB_UNKNOWN (-1)
static PB_TLS int pb_cur_state = PB_UNKNOWN;
static PB_TLS pb_tbl ***pb_mine;        /* this OS thread's tables by region, thread id */
/* instrumented call depth, and the states to give back at the exit of the functions
 * whose entry changed the state (innermost last; deeper changes are not given back) */
#define PB_SAVED_MAX 64
static PB_TLS int pb_depth;
static PB_TLS int pb_nsaved;
static PB_TLS struct {
    int depth, state;
} pb_saved[PB_SAVED_MAX];

/* events: two-level shadow, 4 bytes per line, leaves of 2^20 lines made on demand */
#define PB_LEAF_BITS 20
static uint32_t **pb_shadow;
static uint64_t pb_shadow_n;

static size_t pb_strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

static void pb_die(const char *msg, const char *detail)
{
    static const char pre[] = "pinbench-tsan: ";
    pb_write_all(2, pre, sizeof pre - 1);
    pb_write_all(2, msg, pb_strlen(msg));
    if (detail) {
        pb_write_all(2, " ", 1);
        pb_write_all(2, detail, pb_strlen(detail));
    }
    pb_write_all(2, "\n", 1);
    _exit(2);
}

static uint64_t pb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void pb_atexit(void);

static void pb_init_once(void);

/* read the options once (normally in a constructor, before any thread exists; if
 * threads race here, one initialises and the others wait) */
static void pb_init(void)
{
    int s = __atomic_load_n(&pb_state, __ATOMIC_ACQUIRE);
    if (s == 1 || s == 2)
        return;
    int zero = 0;
    if (__atomic_compare_exchange_n(&pb_state, &zero, 3, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        pb_init_once();
    else
        while (__atomic_load_n(&pb_state, __ATOMIC_ACQUIRE) == 3)
            sched_yield();
}

__attribute__((constructor)) static void pb_ctor(void) { pb_init(); }

static void pb_init_once(void)
{
    const char *v;
    if ((v = getenv("PINBENCH_TRACE_WEIGHT")) && *v) {
        pb_weight = pb_parse_weight(v, &pb_count);
        if (pb_weight < 0)
            pb_die("PINBENCH_TRACE_WEIGHT must be " PB_WEIGHT_CHOICES ", not", v);
    }
    if ((v = getenv("PINBENCH_TRACE_LINE")) && *v) {
        pb_shift = pb_parse_line(v);
        if (pb_shift < 0)
            pb_die("PINBENCH_TRACE_LINE must be a power of two from 8 to 4096, not", v);
    }
    if ((v = getenv("PINBENCH_TRACE_THREADS")) && *v) {
        long long n = pb_parse_uint(v);
        if (n < 1 || n > PB_MAX_THREADS)
            pb_die("PINBENCH_TRACE_THREADS must be an integer from 1 to 4096, not", v);
        pb_min_threads = (uint64_t)n;
    }
    pb_out = getenv("PINBENCH_TRACE_OUT");
    if (!pb_out || !*pb_out) { /* not asked to trace */
        __atomic_store_n(&pb_state, 2, __ATOMIC_RELEASE);
        return;
    }
    v = getenv("PINBENCH_TRACE_JSON");
    const char *src = v && *v ? v : pb_out;
    size_t n = pb_strlen(src);
    if (n + 6 > sizeof pb_json)
        pb_die("output path too long:", pb_out);
    for (size_t i = 0; i <= n; i++)
        pb_json[i] = src[i];
    if (src == pb_out) { /* OUT with its extension replaced by .json */
        size_t dot = n;
        for (size_t i = n; i-- > 0 && pb_json[i] != '/';)
            if (pb_json[i] == '.') {
                dot = i;
                break;
            }
        for (size_t i = 0; i < 6; i++)
            pb_json[dot + i] = ".json"[i];
    }
    pb_raw = getenv("PINBENCH_TRACE_RAW");
    if (pb_raw && !*pb_raw)
        pb_raw = NULL;
    pb_regions_out = getenv("PINBENCH_TRACE_REGIONS");
    if (pb_regions_out && !*pb_regions_out)
        pb_regions_out = NULL;
    if (pb_regions_out && pb_strlen(pb_regions_out) + 16 > sizeof pb_json)
        pb_die("PINBENCH_TRACE_REGIONS path too long:", pb_regions_out);
    pb_events = pb_weight == PB_WEIGHT_EVENTS;
    if (pb_events) {
        int bits = 47 - pb_shift - PB_LEAF_BITS;
        pb_shadow_n = UINT64_C(1) << (bits > 0 ? bits : 0);
        pb_shadow = (uint32_t **)pb_mmap(pb_shadow_n * sizeof *pb_shadow, 1);
    }
    pb_pid = getpid();
    pb_start_ns = pb_now_ns();
    atexit(pb_atexit);
    __atomic_store_n(&pb_state, 1, __ATOMIC_RELEASE);
}

/* this OS thread is now in `state`: the table its accesses go to (made on demand),
 * NULL when they do not count (or the state is unknown) */
static __attribute__((noinline)) pb_tbl *pb_switch(int state)
{
    if (PB_UNLIKELY(pb_state != 1 && pb_state != 2))
        pb_init();
    pb_cur_state = state;
    if (pb_state != 1 || state == PB_UNKNOWN || !(state & 1)) {
        pb_fast.ent = pb_nowhere;
        pb_fast.shift = state == PB_UNKNOWN ? 63 : PB_NOT_COUNTED;
        return pb_cur = pb_mine_cur = NULL;
    }
    int tid = (state >> 1) % PB_MAX_THREADS, region = (state >> 1) / PB_MAX_THREADS;
    if (!pb_mine)
        pb_mine = (pb_tbl ***)PB_ALLOC(PB_MAX_REGIONS * sizeof *pb_mine);
    if (!pb_mine[region])
        pb_mine[region] = (pb_tbl **)PB_ALLOC(PB_MAX_THREADS * sizeof **pb_mine);
    pb_tbl *t = pb_mine[region][tid];
    if (!t) {
        t = (pb_tbl *)PB_ALLOC(sizeof *t);
        pb_tbl_init(t, (uint32_t)tid, pb_shift, 8);
        t->region = (uint32_t)region;
        if (pb_events)
            t->ev = (uint64_t *)PB_ALLOC(PB_MAX_THREADS * sizeof *t->ev);
        t->next = __atomic_load_n(&pb_tables, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(&pb_tables, &t->next, t, 1, __ATOMIC_RELEASE,
                                            __ATOMIC_RELAXED))
            ;
        pb_mine[region][tid] = t;
    }
    pb_mine_cur = t;
    pb_cur = pb_events ? NULL : t;
    pb_fast.ent = pb_cur ? t->ent : pb_nowhere;
    pb_fast.shift = pb_cur ? t->shift : 63;
    return t;
}

/* the state of this thread by the OpenMP runtime (a program without one: thread 0,
 * never inside a parallel region) and the region open now */
static inline int pb_omp_state(void)
{
    int tid = omp_get_thread_num ? omp_get_thread_num() : 0;
    if (tid >= PB_MAX_THREADS)
        tid = PB_MAX_THREADS - 1;
    return PB_STATE(__atomic_load_n(&pb_region_now, __ATOMIC_RELAXED), tid,
                    pb_count == PB_COUNT_ALL || (omp_in_parallel && omp_in_parallel()));
}

/* the table this thread's accesses go to now, NULL when they do not count */
static inline pb_tbl *pb_table_now(void)
{
    if (pb_mine_cur || pb_state == 2 || pb_cur_state != PB_UNKNOWN)
        return pb_mine_cur;
    return pb_switch(pb_omp_state());
}

static __attribute__((noinline)) uint32_t *pb_leaf(uint64_t hi)
{
    uint32_t *leaf = (uint32_t *)pb_mmap(sizeof(uint32_t) << PB_LEAF_BITS, 1);
    uint32_t *none = NULL;
    if (!__atomic_compare_exchange_n(&pb_shadow[hi], &none, leaf, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        munmap(leaf, sizeof(uint32_t) << PB_LEAF_BITS);
        return none;
    }
    pb_bytes_add((int64_t)(sizeof(uint32_t) << PB_LEAF_BITS));
    return leaf;
}

static void pb_event(pb_tbl *t, uint64_t line)
{
    uint64_t hi = line >> PB_LEAF_BITS;
    if (hi >= pb_shadow_n)
        return; /* beyond the 47-bit user address space */
    uint32_t *leaf = __atomic_load_n(&pb_shadow[hi], __ATOMIC_ACQUIRE);
    if (!leaf)
        leaf = pb_leaf(hi);
    uint32_t *s = &leaf[line & ((UINT64_C(1) << PB_LEAF_BITS) - 1)];
    uint32_t old = __atomic_load_n(s, __ATOMIC_RELAXED);
    uint32_t now = pb_event_update(old, t->tid, t->ev);
    if (now != old)
        __atomic_store_n(s, now, __ATOMIC_RELAXED);
}

/* count one access to line index `line` (slow path: any case) */
static __attribute__((noinline)) void pb_count_slow(pb_tbl *t, uint64_t line)
{
    if (pb_events)
        pb_event(t, line);
    (*pb_tbl_counter(t, line))++;
    if (t == pb_cur) { /* the table may have grown */
        pb_fast.ent = t->ent;
        pb_fast.shift = t->shift;
    }
}

/* the access path missed: another page of the table, or no table in use (state not
 * yet known, tracing off, accesses that do not count, weight=events) */
static __attribute__((noinline)) void pb_miss(uint64_t line)
{
    pb_tbl *t = pb_cur;
    if (PB_LIKELY(t != NULL) || (t = pb_table_now()) != NULL)
        pb_count_slow(t, line);
}

/* the access path of one line: a hit at the first probe of the current table */
static inline __attribute__((always_inline)) void pb_line(uint64_t line)
{
    int shift = pb_fast.shift;
    if (PB_UNLIKELY(shift == PB_NOT_COUNTED))
        return;
    uint64_t key = PB_KEY(line);
    pb_ent *e = &pb_fast.ent[PB_HASH(key, shift)];
    if (PB_LIKELY(e->key == key)) {
        (*PB_COUNTER(e->base, line))++;
        return;
    }
    pb_miss(line);
}

/* an access of `size` bytes that may straddle lines (or a range); also the path
 * of every access when pb_cur is NULL */
static __attribute__((noinline)) void pb_acc_range(uintptr_t a, size_t size)
{
    pb_tbl *t = pb_table_now();
    if (!size || !t)
        return;
    uint64_t first = a >> pb_shift, last = (a + size - 1) >> pb_shift;
    for (uint64_t l = first; l <= last; l++)
        if (pb_cur)
            pb_line(l);
        else
            pb_count_slow(t, l);
}

static inline __attribute__((always_inline)) void pb_acc(uintptr_t a)
{
    pb_line(a >> pb_shift);
}

static inline __attribute__((always_inline)) void pb_acc_n(uintptr_t a, size_t size)
{
    if (PB_LIKELY(((a ^ (a + size - 1)) >> pb_shift) == 0))
        pb_acc(a);
    else
        pb_acc_range(a, size);
}

/* for tsan_wrap.c (memcpy & co.): one access per line of [a, a+size) */
void pinbench_tsan_range(const void *a, size_t size) { pb_acc_range((uintptr_t)a, size); }

/* ------------------------------------------------------------------ exit: weigh and write */

/* whether code compiled with -fsanitize=thread called __tsan_init (its module constructor
 * does): a program built without it, or whose one compile-and-link command ended with
 * -fno-sanitize=thread, holds the runtime but calls it never */
static int pb_instrumented;

/* ------------------------------------------------------------------ per region: the fork calls */

/* the region of fork call site `ra` (registered when new; 0 beyond PB_MAX_REGIONS) */
static int pb_region_of(uintptr_t ra)
{
    int n = __atomic_load_n(&pb_nregions, __ATOMIC_ACQUIRE);
    for (int r = 1; r < n; r++)
        if (pb_regions[r].ra == ra)
            return r;
    while (__atomic_exchange_n(&pb_region_lock, 1, __ATOMIC_ACQUIRE))
        sched_yield();
    int r = 1;
    n = pb_nregions;
    while (r < n && pb_regions[r].ra != ra)
        r++;
    if (r == n && n < PB_MAX_REGIONS) {
        pb_regions[r].ra = ra;
        __atomic_store_n(&pb_nregions, n + 1, __ATOMIC_RELEASE);
    } else if (r == n) {
        r = 0;
    }
    __atomic_store_n(&pb_region_lock, 0, __ATOMIC_RELEASE);
    return r;
}

/* a fork call from `ra` starts: open its region; returns the region it replaces (-1: not
 * tracing per region) and the time in *t0 */
static int pb_region_begin(void *ra, uint64_t *t0)
{
    if (PB_UNLIKELY(pb_state != 1 && pb_state != 2))
        pb_init();
    if (pb_state != 1 || !pb_regions_out)
        return -1;
    int prev = __atomic_load_n(&pb_region_now, __ATOMIC_RELAXED);
    __atomic_store_n(&pb_region_now, pb_region_of((uintptr_t)ra), __ATOMIC_RELEASE);
    *t0 = pb_now_ns();
    return prev;
}

/* the fork call returned (its team joined): count the instance, give `prev` back */
static void pb_region_end(int prev, uint64_t t0)
{
    if (prev < 0)
        return;
    int r = __atomic_load_n(&pb_region_now, __ATOMIC_RELAXED);
    __atomic_add_fetch(&pb_regions[r].instances, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&pb_regions[r].time_ns, pb_now_ns() - t0, __ATOMIC_RELAXED);
    __atomic_store_n(&pb_region_now, prev, __ATOMIC_RELEASE);
}

/* libgomp's parallel entry points (gcc; libomp's GOMP layer too), as the program calls
 * them (-Wl,--wrap=NAME: pinbench/trace/build.py, TSAN_WRAPPED): each opens the region
 * of its call site around libgomp's own, __real_NAME.  The references to __real_NAME
 * also keep the OpenMP runtime among the program's libraries when it calls nothing else
 * of it (gcc links libgomp --as-needed). */
typedef void (*pb_fn)(void *);
#define PB_FORK(ret, name, params, args)                                                 \
    ret __real_##name params;                                                            \
    PB_EXPORT ret __wrap_##name params                                                   \
    {                                                                                    \
        uint64_t t0 = 0;                                                                 \
        int prev = pb_region_begin(__builtin_return_address(0), &t0);                    \
        PB_CALL_##ret(__real_##name args);                                               \
        pb_region_end(prev, t0);                                                         \
        PB_RETURN_##ret;                                                                 \
    }
#define PB_CALL_void(call) call
#define PB_RETURN_void return
#define PB_CALL_unsigned(call) unsigned got = call
#define PB_RETURN_unsigned return got
#define PB_LOOP(name)                                                                    \
    PB_FORK(void, name, (pb_fn fn, void *data, unsigned n, long start, long end, long incr, \
                         long chunk, unsigned flags),                                    \
            (fn, data, n, start, end, incr, chunk, flags))
#define PB_LOOP_RUNTIME(name)                                                            \
    PB_FORK(void, name, (pb_fn fn, void *data, unsigned n, long start, long end, long incr, \
                         unsigned flags),                                                \
            (fn, data, n, start, end, incr, flags))

PB_FORK(void, GOMP_parallel, (pb_fn fn, void *data, unsigned n, unsigned flags),
        (fn, data, n, flags))
PB_FORK(unsigned, GOMP_parallel_reductions, (pb_fn fn, void *data, unsigned n, unsigned flags),
        (fn, data, n, flags))
PB_FORK(void, GOMP_parallel_sections,
        (pb_fn fn, void *data, unsigned n, unsigned count, unsigned flags),
        (fn, data, n, count, flags))
PB_LOOP(GOMP_parallel_loop_static)
PB_LOOP(GOMP_parallel_loop_dynamic)
PB_LOOP(GOMP_parallel_loop_guided)
PB_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
PB_LOOP(GOMP_parallel_loop_nonmonotonic_guided)
PB_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
PB_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
PB_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

/* ------------------------------------------------------------------ per region: the output */

/* where a code address lies: the module (its path; "" for the program) and its load bias */
typedef struct pb_where {
    uintptr_t pc;
    const char *name;
    uintptr_t bias;
} pb_where;

static int pb_where_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    pb_where *w = (pb_where *)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && w->pc >= lo && w->pc < lo + ph->p_memsz) {
            w->name = info->dlpi_name;
            w->bias = info->dlpi_addr;
            return 1;
        }
    }
    return 0;
}

/* the module of a region's call site and its load bias (dl_iterate_phdr; the program
 * itself is named by /proc/self/exe) */
static void pb_region_module(uintptr_t ra, const char **module, uintptr_t *bias)
{
    static char exe[4096];
    if (!exe[0]) {
        ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[len > 0 ? len : 0] = 0;
    }
    pb_where w = {ra, "", 0};
    dl_iterate_phdr(pb_where_cb, &w);
    *module = w.name && *w.name ? w.name : exe;
    *bias = w.bias;
}

static void pb_atexit(void)
{
    if (pb_state != 1 || getpid() != pb_pid)
        return; /* not tracing, or a forked child */
    pb_state = 2; /* later accesses (destructors) are no longer counted ... */
    pb_cur = pb_mine_cur = NULL; /* ... in this thread (others may still count) */
    pb_fast.ent = pb_nowhere;
    pb_fast.shift = 63;
    pb_result res = {0};
    res.tracer = "tsan";
    res.thread_ids = "omp_get_thread_num() at instrumented function entry";
    res.weight = pb_weight;
    res.count = pb_count;
    res.parallel = ("accesses made while omp_in_parallel() held, as of the last instrumented "
                    "function entry (a function's exit restores its caller's state)");
    res.line_shift = pb_shift;
    res.instrumented = pb_instrumented;
    pb_tbl *tables = __atomic_load_n(&pb_tables, __ATOMIC_ACQUIRE);
    pb_result like = res;
    if (pb_finish(tables, pb_min_threads, &res, pb_out, pb_json, pb_raw, pb_now_ns,
                  pb_start_ns) != 0 ||
        (pb_regions_out && pb_regions_write(tables, pb_nregions, pb_regions, pb_region_module,
                                            pb_min_threads, &like, pb_regions_out, pb_now_ns,
                                            pb_start_ns) != 0)) {
        static const char msg[] = "pinbench-tsan: cannot write the matrix to ";
        pb_write_all(2, msg, sizeof msg - 1);
        pb_write_all(2, pb_out, pb_strlen(pb_out));
        pb_write_all(2, "\n", 1);
    }
}

/* ------------------------------------------------------------------ the ABI: set-up, functions */

PB_EXPORT void __tsan_init(void)
{
    pb_instrumented = 1;
    pb_init();
}

/* the state changes at a function entry: keep the caller's for the function's exit */
static __attribute__((noinline)) void pb_enter(int state)
{
    if (pb_nsaved < PB_SAVED_MAX) {
        pb_saved[pb_nsaved].depth = pb_depth;
        pb_saved[pb_nsaved].state = pb_cur_state;
        pb_nsaved++;
    }
    pb_switch(state);
}

/* the function whose entry changed the state returns: give its caller's back */
static __attribute__((noinline)) void pb_leave(void)
{
    pb_switch(pb_saved[--pb_nsaved].state);
}

PB_EXPORT void __tsan_func_entry(void *pc)
{
    (void)pc;
    int state = pb_omp_state();
    pb_depth++;
    if (PB_UNLIKELY(state != pb_cur_state))
        pb_enter(state);
}

PB_EXPORT void __tsan_func_exit(void)
{
    if (PB_UNLIKELY(pb_nsaved && pb_saved[pb_nsaved - 1].depth == pb_depth))
        pb_leave();
    pb_depth--;
}
PB_EXPORT void __tsan_ignore_thread_begin(void) {}
PB_EXPORT void __tsan_ignore_thread_end(void) {}

/* ------------------------------------------------------------------ the ABI: plain accesses */

/* aligned accesses of 1..8 bytes never straddle a line of >= 8 bytes */
#define PB_ALIGNED(kind, n)                                                              \
    PB_EXPORT void __tsan_##kind##n(void *a) { pb_acc((uintptr_t)a); }                   \
    PB_EXPORT void __tsan_##kind##n##_pc(void *a, void *pc)                              \
    {                                                                                    \
        (void)pc;                                                                        \
        pb_acc((uintptr_t)a);                                                            \
    }                                                                                    \
    PB_EXPORT void __tsan_volatile_##kind##n(void *a) { pb_acc((uintptr_t)a); }
/* 16-byte and unaligned accesses may straddle */
#define PB_MAYBE_SPLIT(kind, n)                                                          \
    PB_EXPORT void __tsan_unaligned_##kind##n(void *a) { pb_acc_n((uintptr_t)a, n); }    \
    PB_EXPORT void __tsan_unaligned_volatile_##kind##n(void *a)                          \
    {                                                                                    \
        pb_acc_n((uintptr_t)a, n);                                                       \
    }

PB_ALIGNED(read, 1)
PB_ALIGNED(read, 2)
PB_ALIGNED(read, 4)
PB_ALIGNED(read, 8)
PB_ALIGNED(write, 1)
PB_ALIGNED(write, 2)
PB_ALIGNED(write, 4)
PB_ALIGNED(write, 8)
PB_MAYBE_SPLIT(read, 2)
PB_MAYBE_SPLIT(read, 4)
PB_MAYBE_SPLIT(read, 8)
PB_MAYBE_SPLIT(read, 16)
PB_MAYBE_SPLIT(write, 2)
PB_MAYBE_SPLIT(write, 4)
PB_MAYBE_SPLIT(write, 8)
PB_MAYBE_SPLIT(write, 16)

PB_EXPORT void __tsan_read16(void *a) { pb_acc_n((uintptr_t)a, 16); }
PB_EXPORT void __tsan_write16(void *a) { pb_acc_n((uintptr_t)a, 16); }
PB_EXPORT void __tsan_read16_pc(void *a, void *pc) { (void)pc; pb_acc_n((uintptr_t)a, 16); }
PB_EXPORT void __tsan_write16_pc(void *a, void *pc) { (void)pc; pb_acc_n((uintptr_t)a, 16); }
PB_EXPORT void __tsan_volatile_read16(void *a) { pb_acc_n((uintptr_t)a, 16); }
PB_EXPORT void __tsan_volatile_write16(void *a) { pb_acc_n((uintptr_t)a, 16); }

/* clang's compound read-before-write (-tsan-compound-read-before-write): 2 accesses */
#define PB_RW(n)                                                                         \
    PB_EXPORT void __tsan_read_write##n(void *a)                                         \
    {                                                                                    \
        pb_acc_n((uintptr_t)a, n);                                                       \
        pb_acc_n((uintptr_t)a, n);                                                       \
    }                                                                                    \
    PB_EXPORT void __tsan_unaligned_read_write##n(void *a)                               \
    {                                                                                    \
        pb_acc_n((uintptr_t)a, n);                                                       \
        pb_acc_n((uintptr_t)a, n);                                                       \
    }
PB_RW(1)
PB_RW(2)
PB_RW(4)
PB_RW(8)
PB_RW(16)

/* ranges (memory intrinsics, Fortran array sections...): one access per line */
PB_EXPORT void __tsan_read_range(void *a, unsigned long size) { pb_acc_range((uintptr_t)a, size); }
PB_EXPORT void __tsan_write_range(void *a, unsigned long size) { pb_acc_range((uintptr_t)a, size); }
PB_EXPORT void __tsan_read_range_pc(void *a, unsigned long size, void *pc)
{
    (void)pc;
    pb_acc_range((uintptr_t)a, size);
}
PB_EXPORT void __tsan_write_range_pc(void *a, unsigned long size, void *pc)
{
    (void)pc;
    pb_acc_range((uintptr_t)a, size);
}

/* C++ virtual table pointers */
PB_EXPORT void __tsan_vptr_update(void **vptr, void *new_val)
{
    (void)new_val;
    pb_acc((uintptr_t)vptr);
}
PB_EXPORT void __tsan_vptr_read(void **vptr) { pb_acc((uintptr_t)vptr); }

/* annotations some libraries emit under __SANITIZE_THREAD__: nothing to do */
PB_EXPORT void __tsan_acquire(void *a) { (void)a; }
PB_EXPORT void __tsan_release(void *a) { (void)a; }
#define PB_MUTEX_HOOK(name)                                                              \
    PB_EXPORT void __tsan_mutex_##name(void *m, unsigned flags)                          \
    {                                                                                    \
        (void)m, (void)flags;                                                            \
    }
PB_MUTEX_HOOK(create)
PB_MUTEX_HOOK(destroy)
PB_MUTEX_HOOK(post_unlock)
PB_MUTEX_HOOK(pre_signal)
PB_MUTEX_HOOK(post_signal)
PB_MUTEX_HOOK(pre_divert)
PB_MUTEX_HOOK(post_divert)
PB_EXPORT void __tsan_mutex_pre_lock(void *m, unsigned f) { (void)m, (void)f; }
PB_EXPORT void __tsan_mutex_post_lock(void *m, unsigned f, int r) { (void)m, (void)f, (void)r; }
PB_EXPORT int __tsan_mutex_pre_unlock(void *m, unsigned f) { (void)m, (void)f; return 0; }

/* ------------------------------------------------------------------ the ABI: atomics */

#define PB_SC __ATOMIC_SEQ_CST
/* A compare-and-swap reads and writes its location: two accesses. Strong and weak alike. */
#define PB_CAS(N, T, KIND)                                                               \
    PB_EXPORT int __tsan_atomic##N##_compare_exchange_##KIND(volatile T *a, T *c, T v,   \
                                                             int mo, int fmo)            \
    {                                                                                    \
        (void)mo, (void)fmo;                                                             \
        pb_acc_n((uintptr_t)a, sizeof(T));                                               \
        pb_acc_n((uintptr_t)a, sizeof(T));                                               \
        return __atomic_compare_exchange_n(a, c, v, 0, PB_SC, PB_SC);                    \
    }

#define PB_ATOMIC(N, T)                                                                  \
    PB_EXPORT T __tsan_atomic##N##_load(const volatile T *a, int mo)                     \
    {                                                                                    \
        (void)mo;                                                                        \
        pb_acc_n((uintptr_t)a, sizeof(T));                                               \
        return __atomic_load_n(a, PB_SC);                                                \
    }                                                                                    \
    PB_EXPORT void __tsan_atomic##N##_store(volatile T *a, T v, int mo)                  \
    {                                                                                    \
        (void)mo;                                                                        \
        pb_acc_n((uintptr_t)a, sizeof(T));                                               \
        __atomic_store_n(a, v, PB_SC);                                                   \
    }                                                                                    \
    PB_RMW(N, T, exchange, __atomic_exchange_n)                                          \
    PB_RMW(N, T, fetch_add, __atomic_fetch_add)                                          \
    PB_RMW(N, T, fetch_sub, __atomic_fetch_sub)                                          \
    PB_RMW(N, T, fetch_and, __atomic_fetch_and)                                          \
    PB_RMW(N, T, fetch_or, __atomic_fetch_or)                                            \
    PB_RMW(N, T, fetch_xor, __atomic_fetch_xor)                                          \
    PB_RMW(N, T, fetch_nand, __atomic_fetch_nand)                                        \
    PB_CAS(N, T, strong)                                                                 \
    PB_CAS(N, T, weak)                                                                   \
    PB_EXPORT T __tsan_atomic##N##_compare_exchange_val(volatile T *a, T c, T v, int mo, \
                                                        int fmo)                         \
    {                                                                                    \
        (void)mo, (void)fmo;                                                             \
        pb_acc_n((uintptr_t)a, sizeof(T));                                               \
        pb_acc_n((uintptr_t)a, sizeof(T));                                               \
        __atomic_compare_exchange_n(a, &c, v, 0, PB_SC, PB_SC);                          \
        return c;                                                                        \
    }
#define PB_RMW(N, T, op, builtin)                                                        \
    PB_EXPORT T __tsan_atomic##N##_##op(volatile T *a, T v, int mo)                      \
    {                                                                                    \
        (void)mo;                                                                        \
        pb_acc_n((uintptr_t)a, sizeof(T));                                               \
        pb_acc_n((uintptr_t)a, sizeof(T));                                               \
        return builtin(a, v, PB_SC);                                                     \
    }

PB_ATOMIC(8, uint8_t)
PB_ATOMIC(16, uint16_t)
PB_ATOMIC(32, uint32_t)
PB_ATOMIC(64, uint64_t)
#ifdef __clang__ /* 16-byte atomics go through libatomic: that is the point */
#pragma clang diagnostic ignored "-Watomic-alignment"
#endif
PB_ATOMIC(128, unsigned __int128)

PB_EXPORT void __tsan_atomic_thread_fence(int mo)
{
    (void)mo;
    __atomic_thread_fence(PB_SC);
}
PB_EXPORT void __tsan_atomic_signal_fence(int mo)
{
    (void)mo;
    __atomic_signal_fence(PB_SC);
}
