/* pinbench's re-binding shim: each chosen parallel region of a program on its own placement.
 *
 * Loaded with LD_PRELOAD into a run whose placement has per-region entries (pinbench/measure/
 * rebind.py writes the plan and reads the record back; docs/rebind.md is the design note).
 * Inactive, every entry point below only forwards, when PINBENCH_REBIND_PLAN is unset.
 *
 * Plan (PINBENCH_REBIND_PLAN names the file): one line per placement, "KEY CPU,CPU,...", CPU i
 * being OpenMP thread i's; the key "default" is the whole-program placement, every other key
 * a parallel region's: "<module basename>+0x<hex>", hex the file address (the address less
 * the module's load bias, dlpi_addr / l_addr) of the return address of the call into the
 * runtime's parallel entry.
 *
 * Where a region starts:
 *   - libgomp (a gcc build): GOMP_parallel and its combined forms (GOMP_parallel_loop_*,
 *     GOMP_parallel_sections, GOMP_parallel_reductions) are wrapped: the wrapper, in the
 *     encountering thread, finds the region's key from __builtin_return_address(0), then calls
 *     the real entry point (dlsym RTLD_NEXT) with the outlined function wrapped, so that each
 *     thread of the team re-binds itself before it runs the region's body;
 *   - LLVM's libomp (a clang build): OMPT. ompt_start_tool, found by libomp in the preloaded
 *     library, registers parallel_begin (the key, from codeptr_ra) and implicit_task (each
 *     thread re-binds itself at its implicit task's begin). A gcc build run on libomp goes
 *     through the wrappers alone (their regions are skipped by the OMPT callbacks). When
 *     OMP_TOOL_LIBRARIES names another tool (an explained run), the shim leaves OMPT to it.
 * Each thread re-binds (sched_setaffinity on itself) to its plan's CPU, the region's when the
 * region's key is in the plan, else the default: a thread goes back to the whole-program
 * placement at the start of the next region that is not chosen, not at the end of a chosen
 * one (the initial thread runs the serial code between them where the last region left it).
 * A thread already bound to that CPU by the shim makes no call. Nested regions (started inside
 * a region) and teams constructs are left alone; threads beyond the plan are not bound.
 *
 * Record (PINBENCH_REBIND_OUT names the file), written when the program exits, by a process
 * that ran a parallel region (of several, the last to exit):
 *   "pinbench-rebind 1"
 *   "region KEY PLAN INSTANCES": each call site seen, in the order first seen, PLAN its key
 *     when chosen, else "default";
 *   "sample KEY INSTANCE THREAD TEAM PLANNED CPU ALLOWED FIRST ERRNO": thread THREAD of a
 *     team of TEAM at that instance's start, after re-binding: the plan's CPU (-1: none),
 *     sched_getcpu, how many CPUs it was allowed and the first of them, the errno of a failed
 *     sched_setaffinity (0). Sampled: the first SAMPLE_FIRST instances of each call site, then
 *     every SAMPLE_EVERY-th; a thread keeps at most SAMPLES_PER_THREAD;
 *   "total SHIM_NS REBINDS DROPPED": nanoseconds all threads spent in the shim at regions'
 *     starts, sched_setaffinity calls made, samples not kept.
 * A failed re-binding is also said once on stderr, in one line.
 *
 * pinbench_rebind_calibrate (called by pinbench setup through ctypes) measures the cost of
 * one sched_setaffinity that moves the calling thread, and of one re-binding of T threads.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define SAMPLE_FIRST 8
#define SAMPLE_EVERY 64
#define SAMPLES_PER_THREAD 4096
#define MAX_PLANS 256
#define MAX_SITES 1024
#define KEY_LEN 288

/* --- the few OMPT declarations used (OpenMP 5.0, section 4; the ABI libomp implements) --- */
typedef union ompt_data_t { uint64_t value; void *ptr; } ompt_data_t;
typedef void (*ompt_interface_fn_t)(void);
typedef ompt_interface_fn_t (*ompt_function_lookup_t)(const char *);
typedef int (*ompt_set_callback_t)(int event, ompt_interface_fn_t callback);
typedef struct {
    int (*initialize)(ompt_function_lookup_t, int, ompt_data_t *);
    void (*finalize)(ompt_data_t *);
    ompt_data_t tool_data;
} ompt_start_tool_result_t;
enum { OMPT_PARALLEL_BEGIN = 3, OMPT_IMPLICIT_TASK = 7, OMPT_SCOPE_BEGIN = 1,
       OMPT_SCOPE_END = 2, OMPT_TASK_IMPLICIT = 2, OMPT_PARALLEL_LEAGUE = 0x40000000 };

struct plan { char key[KEY_LEN]; int n; int *cpus; };
struct site {                 /* one call site of a parallel entry point */
    const void *ra;
    int plan;                 /* index in plans (0: default) */
    char key[KEY_LEN];
    atomic_ullong instances;
};
struct sample { int site, thread, team, planned, cpu, allowed, first, error; uint64_t instance; };
struct thread_state {
    struct thread_state *next;
    int bound_to;             /* the CPU the shim bound this thread to, -1: none */
    int depth;                /* regions this thread is inside */
    uint64_t shim_ns, rebinds, dropped;
    cpu_set_t *set;
    int n_samples;
    struct sample samples[SAMPLES_PER_THREAD];
};

static struct plan plans[MAX_PLANS];
static int n_plans;           /* 0: inactive */
static size_t set_size;
static int set_cpus;
static struct site sites[MAX_SITES + 1];  /* the last: every site beyond MAX_SITES */
static atomic_int n_sites;
static pthread_mutex_t sites_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct thread_state *) all_threads;
static __thread struct thread_state *me;
static __thread int in_gomp;  /* inside a wrapped entry point: OMPT leaves the region alone */
static atomic_int said;
static char out_path[4096];
static char exe_name[256];
static int (*thread_num)(void);
static int (*num_threads)(void);

static inline uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static struct thread_state *self(void)
{
    if (me)
        return me;
    me = calloc(1, sizeof *me);
    if (!me)
        abort();
    me->bound_to = -1;
    me->set = CPU_ALLOC((size_t)set_cpus);
    struct thread_state *head = atomic_load(&all_threads);
    do
        me->next = head;
    while (!atomic_compare_exchange_weak(&all_threads, &head, me));
    return me;
}

/* --- the plan --- */
static void read_plan(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "pinbench-rebind: cannot read the plan %s: %s\n", path, strerror(errno));
        return;
    }
    char line[1 << 16];
    int max_cpu = 0;
    while (n_plans < MAX_PLANS && fgets(line, sizeof line, f)) {
        char *cpus = strchr(line, ' ');
        if (!cpus || line[0] == '#')
            continue;
        *cpus++ = '\0';
        struct plan *p = &plans[n_plans];
        snprintf(p->key, sizeof p->key, "%.*s", KEY_LEN - 1, line);
        p->cpus = calloc(strlen(cpus) / 2 + 2, sizeof *p->cpus);
        for (char *at = cpus, *end; p->cpus && *at && *at != '\n'; at = *end ? end + 1 : end) {
            long cpu = strtol(at, &end, 10);
            if (end == at || cpu < 0 || cpu >= (1 << 20))
                break;
            p->cpus[p->n++] = (int)cpu;
            max_cpu = cpu > max_cpu ? (int)cpu : max_cpu;
        }
        /* the default first */
        if (strcmp(p->key, "default") == 0 && n_plans > 0) {
            struct plan t = plans[0];
            plans[0] = *p;
            *p = t;
        }
        n_plans++;
    }
    fclose(f);
    if (n_plans && strcmp(plans[0].key, "default") != 0) {
        fprintf(stderr, "pinbench-rebind: the plan %s has no default line: not re-binding\n",
                path);
        n_plans = 0;
    }
    set_cpus = max_cpu + 1;
    set_size = CPU_ALLOC_SIZE((size_t)set_cpus);
}

__attribute__((constructor)) static void start(void)
{
    const char *plan = getenv("PINBENCH_REBIND_PLAN");
    if (!plan || !*plan)
        return;
    const char *out = getenv("PINBENCH_REBIND_OUT");
    snprintf(out_path, sizeof out_path, "%s", out ? out : "");
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    const char *base = strrchr(exe, '/');
    snprintf(exe_name, sizeof exe_name, "%.*s", (int)sizeof exe_name - 1, base ? base + 1 : exe);
    read_plan(plan);
}

/* The call site of ``ra``: its key and plan found the first time it is seen. */
static struct site *site_of(const void *ra)
{
    int n = atomic_load_explicit(&n_sites, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (sites[i].ra == ra)
            return &sites[i];
    pthread_mutex_lock(&sites_lock);
    n = atomic_load(&n_sites);
    struct site *s = NULL;
    for (int i = 0; i < n && !s; i++)
        if (sites[i].ra == ra)
            s = &sites[i];
    if (!s) {
        s = &sites[n < MAX_SITES ? n : MAX_SITES];
        s->ra = ra;
        s->plan = 0;
        Dl_info info;
        struct link_map *map = NULL;
        if (n >= MAX_SITES) {
            snprintf(s->key, sizeof s->key, "other-sites");
        } else if (dladdr1(ra, &info, (void **)&map, RTLD_DL_LINKMAP) && map) {
            const char *name = map->l_name && map->l_name[0] ? map->l_name : exe_name;
            const char *base = strrchr(name, '/');
            snprintf(s->key, sizeof s->key, "%s+0x%lx", base ? base + 1 : name,
                     (unsigned long)((uintptr_t)ra - (uintptr_t)map->l_addr));
        } else {
            snprintf(s->key, sizeof s->key, "unknown+0x%lx", (unsigned long)(uintptr_t)ra);
        }
        for (int i = 1; i < n_plans; i++)
            if (strcmp(plans[i].key, s->key) == 0)
                s->plan = i;
        if (n < MAX_SITES)
            atomic_store_explicit(&n_sites, n + 1, memory_order_release);
    }
    pthread_mutex_unlock(&sites_lock);
    return s;
}

/* Thread ``index`` of a team of ``team`` at the start of ``instance`` of site ``s``:
 * re-bind to the plan's CPU, and record where it is when the instance is sampled. */
static void enter(struct site *s, uint64_t instance, int index, int team)
{
    uint64_t start = now_ns();
    struct thread_state *t = self();
    const struct plan *p = &plans[s->plan];
    int want = index >= 0 && index < p->n ? p->cpus[index] : -1, error = 0;
    if (want >= 0 && t->bound_to != want) {
        CPU_ZERO_S(set_size, t->set);
        CPU_SET_S((size_t)want, set_size, t->set);
        t->rebinds++;
        if (sched_setaffinity(0, set_size, t->set) == 0) {
            t->bound_to = want;
        } else {
            error = errno;
            t->bound_to = -1;
            if (atomic_exchange(&said, 1) == 0)
                fprintf(stderr, "pinbench-rebind: thread %d cannot be bound to CPU %d "
                        "(region %s): %s\n", index, want, s->key, strerror(error));
        }
    }
    if (instance < SAMPLE_FIRST || instance % SAMPLE_EVERY == 0) {
        if (t->n_samples < SAMPLES_PER_THREAD) {
            struct sample *r = &t->samples[t->n_samples++];
            r->site = (int)(s - sites);
            r->instance = instance;
            r->thread = index;
            r->team = team;
            r->planned = want;
            r->cpu = sched_getcpu();
            r->error = error;
            r->allowed = 0;
            r->first = -1;
            cpu_set_t *now = CPU_ALLOC(CPU_SETSIZE);
            size_t now_size = CPU_ALLOC_SIZE(CPU_SETSIZE);
            if (now && sched_getaffinity(0, now_size, now) == 0) {
                r->allowed = CPU_COUNT_S(now_size, now);
                for (int c = 0; c < CPU_SETSIZE && r->first < 0; c++)
                    if (CPU_ISSET_S((size_t)c, now_size, now))
                        r->first = c;
            }
            CPU_FREE(now);
        } else {
            t->dropped++;
        }
    }
    t->shim_ns += now_ns() - start;
}

__attribute__((destructor)) static void finish(void)
{
    /* a process that ran no region (a wrapper around the program) leaves the file alone */
    if (!n_plans || !out_path[0] || !atomic_load(&n_sites))
        return;
    char part[4200];
    snprintf(part, sizeof part, "%s.part", out_path);
    FILE *f = fopen(part, "w");
    if (!f)
        return;
    fprintf(f, "pinbench-rebind 1\n");
    int n = atomic_load(&n_sites);
    for (int i = 0; i < n; i++)
        fprintf(f, "region %s %s %llu\n", sites[i].key,
                sites[i].plan ? plans[sites[i].plan].key : "default",
                (unsigned long long)atomic_load(&sites[i].instances));
    uint64_t ns = 0, rebinds = 0, dropped = 0;
    for (struct thread_state *t = atomic_load(&all_threads); t; t = t->next) {
        for (int i = 0; i < t->n_samples; i++) {
            struct sample *r = &t->samples[i];
            fprintf(f, "sample %s %llu %d %d %d %d %d %d %d\n", sites[r->site].key,
                    (unsigned long long)r->instance, r->thread, r->team, r->planned, r->cpu,
                    r->allowed, r->first, r->error);
        }
        ns += t->shim_ns;
        rebinds += t->rebinds;
        dropped += t->dropped;
    }
    fprintf(f, "total %llu %llu %llu\n", (unsigned long long)ns, (unsigned long long)rebinds,
            (unsigned long long)dropped);
    if (fclose(f) == 0)
        rename(part, out_path);
}

/* --- libgomp: the parallel entry points, wrapped --- */
struct call { void (*fn)(void *); void *data; struct site *site; uint64_t instance; };

static void body(void *arg)
{
    struct call *c = arg;
    struct thread_state *t = self();
    t->depth++;
    enter(c->site, c->instance, thread_num ? thread_num() : 0,
          num_threads ? num_threads() : 0);
    c->fn(c->data);
    t->depth--;
}

static void *next(const char *name)
{
    void *real = dlsym(RTLD_NEXT, name);
    if (!real) {
        fprintf(stderr, "pinbench-rebind: %s not found in the OpenMP runtime\n", name);
        abort();
    }
    return real;
}

/* The call of a wrapped entry point from ``ra``: whether its team re-binds (active, the
 * runtime found, not nested), with ``c`` made for body() when it does. */
static int begin(struct call *c, void (*fn)(void *), void *data, const void *ra)
{
    if (!n_plans || self()->depth)
        return 0;
    if (!thread_num) {
        thread_num = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_thread_num");
        num_threads = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_num_threads");
        if (!thread_num)
            return 0;
    }
    *c = (struct call){fn, data, site_of(ra), 0};
    c->instance = atomic_fetch_add(&c->site->instances, 1);
    return 1;
}

static void leave(int *gomp) { in_gomp -= *gomp; }

/* A wrapper of the entry point NAME(fn, data, num_threads, ...) returning RET: PARAMS and
 * ARGS are the parameters after num_threads and their names. While the real one runs, the
 * OMPT callbacks (a gcc build on libomp) leave the region alone. */
#define WRAP(RET, NAME, PARAMS, ARGS)                                                        \
    EXPORT RET NAME(void (*fn)(void *), void *data, unsigned threads PARAMS)                  \
    {                                                                                        \
        static RET (*real)(void (*)(void *), void *, unsigned PARAMS);                       \
        if (!real)                                                                           \
            real = next(#NAME);                                                              \
        struct call c;                                                                       \
        int gomp __attribute__((cleanup(leave))) = n_plans > 0;                              \
        in_gomp += gomp;                                                                     \
        if (begin(&c, fn, data, __builtin_return_address(0)))                                \
            fn = body, data = &c;                                                            \
        return (RET)real(fn, data, threads ARGS);                                            \
    }
#define COMMA ,

WRAP(void, GOMP_parallel, COMMA unsigned flags, COMMA flags)
WRAP(void, GOMP_parallel_sections, COMMA unsigned count COMMA unsigned flags,
     COMMA count COMMA flags)
WRAP(unsigned, GOMP_parallel_reductions, COMMA unsigned flags, COMMA flags)
#define LOOP(NAME)                                                                           \
    WRAP(void, NAME, COMMA long start COMMA long end COMMA long incr COMMA long chunk        \
         COMMA unsigned flags, COMMA start COMMA end COMMA incr COMMA chunk COMMA flags)
#define LOOP_RUNTIME(NAME)                                                                   \
    WRAP(void, NAME, COMMA long start COMMA long end COMMA long incr COMMA unsigned flags,   \
         COMMA start COMMA end COMMA incr COMMA flags)
LOOP(GOMP_parallel_loop_static)
LOOP(GOMP_parallel_loop_dynamic)
LOOP(GOMP_parallel_loop_guided)
LOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
LOOP(GOMP_parallel_loop_nonmonotonic_guided)
LOOP_RUNTIME(GOMP_parallel_loop_runtime)
LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

/* --- libomp: OMPT --- */
static void on_parallel_begin(ompt_data_t *task, const void *frame, ompt_data_t *parallel,
                              unsigned requested, int flags, const void *codeptr_ra)
{
    (void)task, (void)frame, (void)requested;
    parallel->value = 0;
    if (in_gomp || self()->depth || (flags & OMPT_PARALLEL_LEAGUE) || !codeptr_ra)
        return;
    struct site *s = site_of(codeptr_ra);
    uint64_t instance = atomic_fetch_add(&s->instances, 1);
    parallel->value = instance << 11 | ((uint64_t)(s - sites) + 1);
}

static void on_implicit_task(int endpoint, ompt_data_t *parallel, ompt_data_t *task,
                             unsigned team, unsigned index, int flags)
{
    (void)task;
    if (!(flags & OMPT_TASK_IMPLICIT))
        return;
    struct thread_state *t = self();
    if (endpoint == OMPT_SCOPE_END) {
        t->depth -= t->depth > 0;
        return;
    }
    if (endpoint != OMPT_SCOPE_BEGIN)
        return;
    if (parallel && parallel->value && !t->depth)
        enter(&sites[(parallel->value & 2047) - 1], parallel->value >> 11, (int)index,
              (int)team);
    t->depth++;
}

static int ompt_initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *data)
{
    (void)device, (void)data;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set)
        return 0;
    set(OMPT_PARALLEL_BEGIN, (ompt_interface_fn_t)on_parallel_begin);
    set(OMPT_IMPLICIT_TASK, (ompt_interface_fn_t)on_implicit_task);
    return 1;
}

static void ompt_finalize(ompt_data_t *data) { (void)data; }

EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned version, const char *runtime)
{
    (void)version, (void)runtime;
    static ompt_start_tool_result_t result = {ompt_initialize, ompt_finalize, {0}};
    const char *other = getenv("OMP_TOOL_LIBRARIES");
    return n_plans && !(other && *other) ? &result : NULL;
}

/* --- calibration --- */
struct calibration {
    pthread_barrier_t *barrier;
    const int *cpus;
    int n, index, rounds, rebind;
};

static int bind_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

static void *calibration_thread(void *arg)
{
    struct calibration *c = arg;
    for (int r = 0; r < c->rounds; r++) {
        pthread_barrier_wait(c->barrier);
        if (c->rebind)
            bind_to(c->cpus[(c->index + r) % c->n]);
    }
    pthread_barrier_wait(c->barrier);
    return NULL;
}

/* Seconds of ``rounds`` rounds of ``threads`` threads meeting at a barrier, each re-binding
 * itself to the next of ``cpus`` at each round when ``rebind``; -1 on failure. */
static double rounds_s(const int *cpus, int n, int threads, int rounds, int rebind)
{
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, (unsigned)threads);
    pthread_t ids[threads];
    struct calibration cs[threads];
    for (int i = 0; i < threads; i++)
        cs[i] = (struct calibration){&barrier, cpus, n, i, rounds, rebind};
    int started = 1;
    for (int i = 1; i < threads; i++)
        started += pthread_create(&ids[i], NULL, calibration_thread, &cs[i]) == 0;
    double seconds = -1;
    if (started == threads) {
        uint64_t t0 = now_ns();
        calibration_thread(&cs[0]);
        seconds = (double)(now_ns() - t0) * 1e-9;
    }
    for (int i = 1; i < started; i++)
        pthread_join(ids[i], NULL);
    pthread_barrier_destroy(&barrier);
    return seconds;
}

/* out[0]: seconds of one sched_setaffinity of the calling thread, moving it between the
 * first two of ``cpus`` (its own CPUs when only one); out[1]: seconds a team of ``threads``
 * threads needs to re-bind each to another of ``cpus`` (rounds that re-bind less rounds
 * that only meet). The calling thread's CPUs are restored. Returns 0, or an errno. */
EXPORT int pinbench_rebind_calibrate(const int *cpus, int n, int threads, int calls,
                                     double *out)
{
    cpu_set_t saved;
    if (n < 1 || threads < 1 || calls < 1 || sched_getaffinity(0, sizeof saved, &saved))
        return EINVAL;
    uint64_t t0 = now_ns();
    for (int i = 0; i < calls; i++)
        if (bind_to(cpus[i % (n > 1 ? 2 : 1)]))
            return sched_setaffinity(0, sizeof saved, &saved), errno;
    out[0] = (double)(now_ns() - t0) * 1e-9 / calls;
    double with = rounds_s(cpus, n, threads, calls, 1);
    double without = rounds_s(cpus, n, threads, calls, 0);
    sched_setaffinity(0, sizeof saved, &saved);
    out[1] = with < 0 || without < 0 ? -1 : (with - without) / calls;
    return 0;
}
