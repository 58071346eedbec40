/* pinbench's OMPT tool: where each OpenMP thread's time goes, per run.
 *
 * Loaded by an OMPT runtime (LLVM's libomp) through OMP_TOOL_LIBRARIES=/abs/path.so.
 * Per thread, in thread-local counters (no lock, no allocation after a thread's first
 * event), it records with CLOCK_MONOTONIC:
 *   - team time: the time inside implicit tasks (a thread's share of parallel regions), up to
 *     the region's end: libomp reports a worker's end of the region's closing barrier and of
 *     its implicit task only when the worker wakes for the next region (or at exit), so a
 *     worker's wait and team time stop at the region's end (ompt_callback_parallel_end, on
 *     the encountering thread, kept per region in a ring of REGION_RING slots), and the time
 *     after it, the serial part between regions, is outside its team: idle between regions;
 *   - waits of the runtime's synchronisation (ompt_callback_sync_region_wait): implicit
 *     barriers (end of a region or of a worksharing construct), explicit barriers,
 *     taskwait, taskgroup, reductions; a thread waiting there runs tasks (the workers of
 *     a `single` that spawns tasks run them all at its barrier), and a task's time is
 *     work, so a wait's clock stops while a task it started runs (task_schedule) and
 *     waits nest (a taskwait inside a task run at a barrier);
 *   - mutex waits (ompt_callback_mutex_acquire .. acquired): locks, nest locks,
 *     critical sections, ordered;
 *   - counts: parallel regions started, barriers (implicit, explicit), taskwaits,
 *     taskgroups, tasks created and executed, worksharing loops, sections and singles,
 *     mutex acquisitions.
 * At ompt_finalize it writes one JSON record to the file named by PINBENCH_OMPT_OUT
 * (nothing when the variable is unset or empty). Threads are listed in the order their
 * first event was seen; the initial thread has "type": "initial".
 *
 * The analysis (stats/explain.py) turns a record and the run's wall time T_P into the
 * idle time I_P of Acar, Chargueraud and Rainey: every thread-second of P*T_P that is
 * neither work nor a mutex wait.
 */
#define _GNU_SOURCE
#include <omp-tools.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

enum wait_kind { W_BARRIER_IMPLICIT, W_BARRIER_EXPLICIT, W_TASKWAIT, W_TASKGROUP,
                 W_REDUCTION, W_OTHER_SYNC, W_LOCK, W_CRITICAL, W_ORDERED, W_OTHER_MUTEX,
                 W_KINDS };
static const char *const wait_names[W_KINDS] = {
    "barrier_implicit", "barrier_explicit", "taskwait", "taskgroup", "reduction",
    "other_sync", "lock", "critical", "ordered", "other_mutex"};

enum count_kind { C_REGIONS, C_IMPLICIT_TASKS, C_TASKS_CREATED, C_TASKS_EXECUTED, C_LOOPS,
                  C_SECTIONS, C_SINGLES, C_OTHER_WORK, C_KINDS };
static const char *const count_names[C_KINDS] = {
    "parallel_regions", "implicit_tasks", "tasks_created", "tasks_executed", "loops",
    "sections", "singles", "other_work"};

#define WAIT_DEPTH 256
/* Regions whose end a worker can still look up when it wakes: one that sits out more regions
 * than this (a smaller team) books the time until it wakes as it was reported. */
#define REGION_RING 4096

struct pb_thread {
    struct pb_thread *next;          /* the global list, pushed once per thread */
    int index;                       /* order of first event */
    int type;                        /* ompt_thread_t, 0 when not reported */
    uint64_t begin_ns, end_ns;       /* thread_begin .. thread_end (0: not seen) */
    uint64_t team_ns;                /* inside implicit tasks */
    uint64_t task_start_ns;          /* current implicit task's begin, 0 outside */
    uint64_t region;                 /* the current implicit task's region (its id) */
    uint64_t wait_ns[W_KINDS];
    uint64_t waits[W_KINDS];         /* number of waits of each kind */
    /* open sync waits, innermost last: begin (0: stopped while a task runs), kind, and
     * the task level they were opened at; deeper than WAIT_DEPTH: counted, not timed */
    uint64_t wait_start_ns[WAIT_DEPTH];
    unsigned char wait_kind_of[WAIT_DEPTH];
    int wait_level[WAIT_DEPTH];
    int wait_depth;
    int task_level;                  /* explicit tasks running nested on this thread */
    uint64_t mutex_start_ns;         /* current mutex acquire's begin */
    uint64_t counts[C_KINDS];
};

static _Atomic(struct pb_thread *) all_threads;
static atomic_int thread_count;
static __thread struct pb_thread *me;
static uint64_t init_ns;
static char runtime_version[128];
static char out_path[4096];
static ompt_set_callback_t set_callback;

/* Each region's id (parallel_data->value, from 1) and, once ended, its end in a ring slot: the
 * id is written after the time and read around it, so a slot being rewritten reads as unknown. */
static atomic_uint_fast64_t region_ids;
static struct { atomic_uint_fast64_t id, end_ns; } region_end[REGION_RING];

static inline uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct pb_thread *self(void) {
    if (__builtin_expect(me != NULL, 1))
        return me;
    struct pb_thread *t = calloc(1, sizeof *t);
    if (t == NULL)
        abort();
    t->index = atomic_fetch_add(&thread_count, 1);
    t->next = atomic_load(&all_threads);
    while (!atomic_compare_exchange_weak(&all_threads, &t->next, t)) {
    }
    me = t;
    return t;
}

static void on_thread_begin(ompt_thread_t type, ompt_data_t *data) {
    (void)data;
    struct pb_thread *t = self();
    t->type = (int)type;
    t->begin_ns = now_ns();
}

static void on_thread_end(ompt_data_t *data) {
    (void)data;
    self()->end_ns = now_ns();
}

static void on_parallel_begin(ompt_data_t *encountering_task_data,
                              const ompt_frame_t *encountering_task_frame,
                              ompt_data_t *parallel_data, unsigned int requested_parallelism,
                              int flags, const void *codeptr_ra) {
    (void)encountering_task_data; (void)encountering_task_frame; (void)parallel_data;
    (void)requested_parallelism; (void)flags; (void)codeptr_ra;
    parallel_data->value = atomic_fetch_add(&region_ids, 1) + 1;
    self()->counts[C_REGIONS]++;
}

static void on_parallel_end(ompt_data_t *parallel_data, ompt_data_t *encountering_task_data,
                            int flags, const void *codeptr_ra) {
    (void)encountering_task_data; (void)flags; (void)codeptr_ra;
    uint64_t id = parallel_data ? parallel_data->value : 0;
    if (id == 0)
        return;
    unsigned slot = (unsigned)(id % REGION_RING);
    atomic_store(&region_end[slot].id, 0);
    atomic_store(&region_end[slot].end_ns, now_ns());
    atomic_store(&region_end[slot].id, id);
}

/* When the region ``id`` ended, 0 when unknown (not ended, or its slot reused since). */
static uint64_t ended_at(uint64_t id) {
    if (id == 0)
        return 0;
    unsigned slot = (unsigned)(id % REGION_RING);
    if (atomic_load(&region_end[slot].id) != id)
        return 0;
    uint64_t end = atomic_load(&region_end[slot].end_ns);
    return atomic_load(&region_end[slot].id) == id ? end : 0;
}

/* ``now``, or the end of the thread's region when it ended between ``since`` and ``now``: a
 * wait or an implicit task reported after its region's end stops there. */
static uint64_t within_region(const struct pb_thread *t, uint64_t since, uint64_t now) {
    uint64_t end = ended_at(t->region);
    return end > since && end < now ? end : now;
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
                             ompt_data_t *task_data, unsigned int actual_parallelism,
                             unsigned int index, int flags) {
    (void)task_data; (void)actual_parallelism; (void)index;
    if (!(flags & ompt_task_implicit))
        return;  /* the initial task of a thread */
    struct pb_thread *t = self();
    uint64_t now = now_ns();
    if (endpoint == ompt_scope_begin) {
        t->task_start_ns = now;
        t->region = parallel_data ? parallel_data->value : 0;
        t->counts[C_IMPLICIT_TASKS]++;
    } else if (t->task_start_ns) {
        t->team_ns += within_region(t, t->task_start_ns, now) - t->task_start_ns;
        t->task_start_ns = 0;
    }
}

static enum wait_kind sync_kind(ompt_sync_region_t kind) {
    switch ((int)kind) {
    case ompt_sync_region_barrier:
    case ompt_sync_region_barrier_implicit:
    case ompt_sync_region_barrier_implicit_workshare:
    case ompt_sync_region_barrier_implicit_parallel:
    case ompt_sync_region_barrier_implementation:
        return W_BARRIER_IMPLICIT;
    case ompt_sync_region_barrier_explicit: return W_BARRIER_EXPLICIT;
    case ompt_sync_region_taskwait: return W_TASKWAIT;
    case ompt_sync_region_taskgroup: return W_TASKGROUP;
    case ompt_sync_region_reduction: return W_REDUCTION;
    default: return W_OTHER_SYNC;
    }
}

static void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                                ompt_data_t *parallel_data, ompt_data_t *task_data,
                                const void *codeptr_ra) {
    (void)parallel_data; (void)task_data; (void)codeptr_ra;
    struct pb_thread *t = self();
    uint64_t now = now_ns();
    enum wait_kind w = sync_kind(kind);
    if (endpoint == ompt_scope_begin) {
        int d = t->wait_depth++;
        if (d < WAIT_DEPTH) {
            t->wait_start_ns[d] = now;
            t->wait_kind_of[d] = (unsigned char)w;
            t->wait_level[d] = t->task_level;
        }
    } else if (t->wait_depth > 0) {
        int d = --t->wait_depth;
        t->waits[w]++;
        if (d < WAIT_DEPTH && t->wait_start_ns[d])
            t->wait_ns[w] += within_region(t, t->wait_start_ns[d], now) - t->wait_start_ns[d];
    }
}

/* The innermost open wait, when it was opened by the task running now (else NULL). */
static int current_wait(struct pb_thread *t) {
    int d = t->wait_depth - 1;
    return d >= 0 && d < WAIT_DEPTH && t->wait_level[d] == t->task_level ? d : -1;
}

static enum wait_kind mutex_kind(ompt_mutex_t kind) {
    switch (kind) {
    case ompt_mutex_lock:
    case ompt_mutex_test_lock:
    case ompt_mutex_nest_lock:
    case ompt_mutex_test_nest_lock: return W_LOCK;
    case ompt_mutex_critical: return W_CRITICAL;
    case ompt_mutex_ordered: return W_ORDERED;
    default: return W_OTHER_MUTEX;
    }
}

static void on_mutex_acquire(ompt_mutex_t kind, unsigned int hint, unsigned int impl,
                             ompt_wait_id_t wait_id, const void *codeptr_ra) {
    (void)kind; (void)hint; (void)impl; (void)wait_id; (void)codeptr_ra;
    self()->mutex_start_ns = now_ns();
}

static void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id,
                              const void *codeptr_ra) {
    (void)wait_id; (void)codeptr_ra;
    struct pb_thread *t = self();
    if (t->mutex_start_ns) {
        enum wait_kind w = mutex_kind(kind);
        t->wait_ns[w] += now_ns() - t->mutex_start_ns;
        t->waits[w]++;
        t->mutex_start_ns = 0;
    }
}

#define TASK_EXPLICIT 1u
#define TASK_STARTED 2u

static void on_task_create(ompt_data_t *encountering_task_data,
                           const ompt_frame_t *encountering_task_frame,
                           ompt_data_t *new_task_data, int flags, int has_dependences,
                           const void *codeptr_ra) {
    (void)encountering_task_data; (void)encountering_task_frame; (void)has_dependences;
    (void)codeptr_ra;
    if (!(flags & ompt_task_explicit))
        return;
    new_task_data->value = TASK_EXPLICIT;
    self()->counts[C_TASKS_CREATED]++;
}

static void on_task_schedule(ompt_data_t *prior_task_data, ompt_task_status_t prior_status,
                             ompt_data_t *next_task_data) {
    (void)prior_task_data;
    if (next_task_data == NULL)
        return;  /* a fulfilled event, no switch */
    struct pb_thread *t = self();
    if (prior_status == ompt_task_switch || prior_status == ompt_task_yield) {
        /* a task starts on this thread: the wait it runs inside stops, its time is work */
        int d = current_wait(t);
        if (d >= 0 && t->wait_start_ns[d]) {
            t->wait_ns[t->wait_kind_of[d]] += now_ns() - t->wait_start_ns[d];
            t->wait_start_ns[d] = 0;
        }
        t->task_level++;
        if ((next_task_data->value & TASK_EXPLICIT) && !(next_task_data->value & TASK_STARTED)) {
            next_task_data->value |= TASK_STARTED;
            t->counts[C_TASKS_EXECUTED]++;
        }
    } else if (t->task_level > 0) {
        /* the task finished (complete, cancel, detach): the wait it ran inside goes on */
        t->task_level--;
        int d = current_wait(t);
        if (d >= 0 && !t->wait_start_ns[d])
            t->wait_start_ns[d] = now_ns();
    }
}

static void on_work(ompt_work_t wstype, ompt_scope_endpoint_t endpoint,
                    ompt_data_t *parallel_data, ompt_data_t *task_data, uint64_t count,
                    const void *codeptr_ra) {
    (void)parallel_data; (void)task_data; (void)count; (void)codeptr_ra;
    if (endpoint != ompt_scope_begin)
        return;
    struct pb_thread *t = self();
    switch ((int)wstype) {
    case ompt_work_loop: t->counts[C_LOOPS]++; break;
    case ompt_work_sections: t->counts[C_SECTIONS]++; break;
    case ompt_work_single_executor: t->counts[C_SINGLES]++; break;
    default: t->counts[C_OTHER_WORK]++; break;
    }
}

static int tool_initialize(ompt_function_lookup_t lookup, int initial_device_num,
                           ompt_data_t *tool_data) {
    (void)initial_device_num; (void)tool_data;
    init_ns = now_ns();
    set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (set_callback == NULL)
        return 0;
#define REGISTER(event, fn) set_callback(ompt_callback_##event, (ompt_callback_t)(fn))
    REGISTER(thread_begin, on_thread_begin);
    REGISTER(thread_end, on_thread_end);
    REGISTER(parallel_begin, on_parallel_begin);
    REGISTER(parallel_end, on_parallel_end);
    REGISTER(implicit_task, on_implicit_task);
    REGISTER(sync_region_wait, on_sync_region_wait);
    REGISTER(mutex_acquire, on_mutex_acquire);
    REGISTER(mutex_acquired, on_mutex_acquired);
    REGISTER(task_create, on_task_create);
    REGISTER(task_schedule, on_task_schedule);
    REGISTER(work, on_work);
#undef REGISTER
    self();  /* the initial thread first */
    return 1;  /* keep the tool */
}

static double seconds(uint64_t ns) { return (double)ns * 1e-9; }

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void tool_finalize(ompt_data_t *tool_data) {
    (void)tool_data;
    uint64_t end = now_ns();
    if (out_path[0] == '\0')
        return;
    char tmp[sizeof out_path + 16];
    snprintf(tmp, sizeof tmp, "%s.part", out_path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return;
    int n = atomic_load(&thread_count);
    struct pb_thread **sorted = calloc((size_t)n + 1, sizeof *sorted);
    for (struct pb_thread *t = atomic_load(&all_threads); t && sorted; t = t->next)
        if (t->index < n)
            sorted[t->index] = t;
    fprintf(f, "{\"tool\": \"pinbench-ompt\", \"version\": 1, \"runtime\": ");
    json_string(f, runtime_version);
    fprintf(f, ", \"span_s\": %.9f, \"threads\": [", seconds(end - init_ns));
    for (int i = 0; i < n && sorted; i++) {
        struct pb_thread *t = sorted[i];
        if (t == NULL)
            continue;
        const char *type = t->type == ompt_thread_initial ? "initial"
                           : t->type == ompt_thread_worker ? "worker" : "other";
        uint64_t team = t->team_ns;
        if (t->task_start_ns)  /* still inside a region (cannot happen at a normal exit) */
            team += within_region(t, t->task_start_ns, end) - t->task_start_ns;
        uint64_t life_end = t->end_ns ? t->end_ns : end;
        uint64_t life_begin = t->begin_ns ? t->begin_ns : init_ns;
        fprintf(f, "%s\n  {\"index\": %d, \"type\": \"%s\", \"lifetime_s\": %.9f, "
                "\"team_s\": %.9f", i ? "," : "", t->index, type,
                seconds(life_end - life_begin), seconds(team));
        for (int w = 0; w < W_KINDS; w++)
            fprintf(f, ", \"%s_wait_s\": %.9f, \"%s_waits\": %llu", wait_names[w],
                    seconds(t->wait_ns[w]), wait_names[w], (unsigned long long)t->waits[w]);
        for (int c = 0; c < C_KINDS; c++)
            fprintf(f, ", \"%s\": %llu", count_names[c], (unsigned long long)t->counts[c]);
        fputc('}', f);
    }
    fprintf(f, "\n]}\n");
    free(sorted);
    if (fclose(f) == 0)
        rename(tmp, out_path);
}

EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
                                                  const char *version) {
    (void)omp_version;
    static ompt_start_tool_result_t result = {tool_initialize, tool_finalize, {0}};
    const char *out = getenv("PINBENCH_OMPT_OUT");
    if (out != NULL)
        snprintf(out_path, sizeof out_path, "%s", out);
    snprintf(runtime_version, sizeof runtime_version, "%s", version ? version : "");
    return &result;
}
