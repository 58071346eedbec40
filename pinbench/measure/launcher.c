/* pinbench-launcher: starts and times the runs of one measuring process.
 *
 * A long-lived helper of the measuring Python process (affinity/measure/launcher.py builds
 * it with the system's C compiler and talks to it over its stdin and stdout). Per run it
 * reads one request, starts the program in a vfork-style child (clone with CLONE_VM |
 * CLONE_VFORK: no page tables copied, the parent resumes once the child has exec'd), waits
 * for it with a timeout, reaps it and writes one reply line. The child, before execve:
 *   - personality(ADDR_NO_RANDOMIZE), as `setarch -R` (address-space randomisation off);
 *   - prctl(PR_SET_PDEATHSIG, SIGKILL): it dies with this launcher, which dies with the
 *     measuring process (the launcher sets the same on itself at start);
 *   - setpgid(0, 0): its own process group, so a timeout kills the whole group. Not a
 *     session of its own (setsid): with the kernel's autogroup scheduling (on by default),
 *     every new session is a new scheduling group whose share starts from nothing, and on a
 *     busy machine a 4 ms program in one ran 15-90% slower at the median than with
 *     posix_spawn alone; in the launcher's session it runs as a bare spawn does;
 *   - stdin from /dev/null, stdout and stderr to two memory files (memfd) of the launcher,
 *     emptied before each run: no file system work per run, nothing read while it runs;
 *   - exactly the environment of the request; no other descriptor (all are close-on-exec).
 *
 * The launcher is the run's subreaper (PR_SET_CHILD_SUBREAPER): a process the program leaves
 * behind (a child it forked and did not wait for, in its group or not) becomes the
 * launcher's child when its parent exits. Once the program is reaped (outside the timed
 * span), one waitpid(-1, WNOHANG) says whether any such process is left (ECHILD: none, the
 * usual case); those left are killed (the run's group, then every descendant found in /proc),
 * reaped and counted in the reply, so that none writes into or slows a later run.
 *
 * While a program runs, the launcher looks at it now and then, from its own process (the
 * program's path to its exit is not touched; a run shorter than FIRST_LOOK_NS is never
 * looked at): every LOOK_NS at most (10, 20, 40, 80 ms, then every 100 ms) at how much it
 * wrote (the memory files' offsets), and past OUTPUT_HOLD bytes it frees all but the last
 * output_limit of them (a hole punched in the memory file: the program writes on, the file
 * holds at most OUTPUT_HOLD plus what it writes in LOOK_NS); at 10, 20, 40 ms and so on
 * (every second at most) at the CPUs each of its threads may run on (sched_getaffinity of each
 * task in /proc/PID/task): the union of what each thread was seen on, once it had run RAN_NS,
 * comes back with the reply, so that a program that moves its own threads (sched_setaffinity)
 * is caught; for a process's initial thread, what the last such look saw (its CPUs before
 * its runtime binds it are its parent's). A request for descendants makes each look cover
 * every process below the program too (found in /proc by their parents), and note which
 * executable each runs: a program run through a wrapper (a shell script, `perf stat`) is a
 * child or a grandchild of the process started, and the caller checks the processes that
 * run OpenMP.
 *
 * Counters (perf_event_open): before each run (outside the timed span) the launcher opens,
 * on itself, one event per counter of COUNTERS, disabled, enabled on exec and inherited. The
 * program's clone inherits them and its execve enables them there (the launcher's own stay
 * off: it never execs), and every thread and process of the program adds its counts to the
 * launcher's events when it exits. So the counts are the program's alone, from its execve to
 * its exit, and nothing runs inside the timed span to get them: the launcher reads the events
 * after the reaping and closes them. They are opened anew for every run: an event kept open
 * stops counting after its second inheriting child (Linux 6.1: a child's enable-on-exec
 * leaves the next ones off). Software events always (root, or perf_event_paranoid allowing them,
 * else without the kernel's share, but for the events counted in the kernel alone, context
 * switches and CPU migrations, which are then refused rather than counted as 0); hardware events where the machine exposes them (not in
 * most virtual machines: the reply says why a counter is missing, with its errno). Energy,
 * where the kernel has RAPL's powercap files (and to root): energy_uj, the packages' energy
 * from before the clone to after the reaping, machine-wide (the program's, the launcher's and
 * anything else running meanwhile).
 *
 * SIGINT, SIGTERM or SIGHUP to the launcher: the run under way is killed with every process it
 * left, then the launcher exits (status 128 + the signal), without a reply.
 *
 * Timing: CLOCK_MONOTONIC read just before the clone and when the child's pidfd says it has
 * exited; the CPUs the exited (unreaped) program's initial thread was last allowed are then
 * asked of the kernel (sched_getaffinity of the zombie: its Cpus_allowed_list, less CPUs
 * gone offline), outside the timed span; the clock runs again around wait4, which reaps it
 * and gives its rusage. Before the clone and after the reaping (outside the span) the
 * machine's CPU time is sampled from /proc/stat (kept open: one pread each), with this
 * launcher's own CPU time and its reaped children's, so the caller can tell what other
 * processes used during the run; after a run shorter than SHORTEST_SHARE_NS (too short for a
 * share: pinbench.measure.system.shortest_share_s) the first sample is sent twice instead.
 *
 * Request: an 8-byte little-endian length, then that many bytes of NUL-terminated fields:
 *   timeout_ns, output_limit, descendants (0 or 1), cwd ("": the launcher's), executable
 *   path, argc, argv[0..argc), envc, env[0..envc).
 * Reply, one line of space-separated fields:
 *   wall_ns user_us sys_us maxrss_kb wait_status timed_out errno
 *   busy_before total_before busy_after total_after own_cpu_us exit_cpus
 *   pid leftover stdout_total stderr_total stdout_bytes stderr_bytes threads_bytes
 *   processes_bytes counters
 * then the last stdout_bytes (at most output_limit) of what the program wrote to stdout,
 * the last stderr_bytes of its stderr, threads_bytes of the threads' CPUs seen while it
 * ran ("pid:tid=cpus;pid:tid=cpus", pid the task's process), and processes_bytes of the
 * executables of the processes looked at with descendants ("pid\0exe\0..."; none without).
 * errno is not 0 when the program could not be started (negative: its folder could not be
 * entered)
 * (wait_status is then 0 and the times are 0); exit_cpus is "-" when unknown (timeout, or
 * the kernel did not say); leftover is the number of processes the program left running,
 * killed; stdout_total and stderr_total are the bytes the program wrote to each; counters is
 * "name=count,..." for the counters counted (scaled by enabled over running time when the
 * kernel multiplexed them; "name=?" when never scheduled), then "name=!errno,..." for those the
 * kernel refused to open, "-" when there is none of either.
 *
 * The program starts in the folder the request names: the launcher moves there before the
 * clone (outside the timed span), and back to its own folder for a request that names none.
 *
 * Usage: pinbench-launcher PARENT_PID SHORTEST_SHARE_NS [EXIT_READ_DELAY_US]
 * (the delay, for tests only, sleeps after the read of the exited program's CPUs, to show
 * that the read is left out of the wall time).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define CHILD_STACK (64 * 1024)
/* The first look at a running program, the longest time between two looks at its output and
 * between two looks at its threads' CPUs (each gap twice the last, up to these). */
#define FIRST_LOOK_NS 10000000LL
#define LOOK_NS 100000000LL
#define SAMPLE_NS 1000000000LL
/* The CPU time a thread has had before its CPUs count (see sample_threads). */
#define RAN_NS 1000000LL
/* Bytes of a program's output held before all but the last output_limit are freed. */
#define OUTPUT_HOLD (16LL << 20)
/* How long the launcher tries to kill and reap the processes a program left. */
#define LEFTOVER_NS 2000000000LL

/* The counters of every run (see the comment at the top), by the names the reply gives. */
struct counter {
    const char *name;
    uint32_t type;
    uint64_t config;
    int kernel_only;           /* counted in the kernel alone: its user-space share is 0 */
    int fd, error;             /* the run's event, or -1 and the errno of perf_event_open */
};
static struct counter COUNTERS[] = {
    {"task_clock_ns", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 0, -1, 0},
    {"context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 1, -1, 0},
    {"cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 1, -1, 0},
    {"page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0, -1, 0},
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, -1, 0},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0, -1, 0},
    {"llc_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 0, -1, 0},
};
#define N_COUNTERS (sizeof COUNTERS / sizeof *COUNTERS)

/* Energy (RAPL): the packages' energy counters of the powercap interface, machine-wide (the
 * program's and everything else's), read before the clone and after the reaping. */
#define RAPL_MAX 16
static int rapl_fd[RAPL_MAX], rapl_n = -1, rapl_error;
static uint64_t rapl_range[RAPL_MAX], rapl_before[RAPL_MAX];

static uint64_t read_u64(int fd)
{
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    return strtoull(buf, NULL, 10);
}

/* The top-level powercap domains intel-rapl:N (one per package), opened once. */
static void rapl_open(void)
{
    rapl_n = 0;
    rapl_error = ENOENT;
    for (int i = 0; i < RAPL_MAX; i++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/class/powercap/intel-rapl:%d/energy_uj", i);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            if (errno != ENOENT)
                rapl_error = errno; /* e.g. EACCES: energy is root's since Linux 5.10 */
            continue;
        }
        snprintf(path, sizeof path, "/sys/class/powercap/intel-rapl:%d/max_energy_range_uj", i);
        int range = open(path, O_RDONLY | O_CLOEXEC);
        rapl_range[rapl_n] = range >= 0 ? read_u64(range) : 0;
        if (range >= 0)
            close(range);
        rapl_fd[rapl_n++] = fd;
    }
}

/* Open every counter's event for the next run (see the comment at the top). */
static void counters_open(void)
{
    for (size_t i = 0; i < N_COUNTERS; i++) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.type = COUNTERS[i].type;
        a.config = COUNTERS[i].config;
        a.disabled = 1;
        a.enable_on_exec = 1;
        a.inherit = 1;
        a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
        /* the user's share alone (perf_event_paranoid 2, not root); an event counted in the
         * kernel alone would count 0 there, so it stays refused */
        if (fd < 0 && (errno == EACCES || errno == EPERM) && !COUNTERS[i].kernel_only) {
            a.exclude_kernel = 1;
            a.exclude_hv = 1;
            fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
        }
        COUNTERS[i].fd = fd;
        COUNTERS[i].error = fd < 0 ? errno : 0;
    }
    if (rapl_n < 0)
        rapl_open();
    for (int i = 0; i < rapl_n; i++)
        rapl_before[i] = read_u64(rapl_fd[i]);
}

/* The reply's counters field: what each counted in the run, then the refused; the events
 * are closed. */
static void counters_text(char *out, size_t size)
{
    size_t at = 0;
    out[0] = '\0';
    for (int refused = 0; refused < 2; refused++)
        for (size_t i = 0; i < N_COUNTERS && at + 64 < size; i++) {
            struct counter *c = &COUNTERS[i];
            if ((c->fd < 0) != refused)
                continue;
            const char *sep = at ? "," : "";
            if (refused) {
                at += (size_t)snprintf(out + at, size - at, "%s%s=!%d", sep, c->name, c->error);
                continue;
            }
            uint64_t v[3] = {0, 0, 0};
            if (read(c->fd, v, sizeof v) != (ssize_t)sizeof v)
                v[0] = v[1] = v[2] = 0;
            uint64_t count = v[0], enabled = v[1], running = v[2];
            if (running == 0 && count == 0 && enabled > 0)
                at += (size_t)snprintf(out + at, size - at, "%s%s=?", sep, c->name);
            else
                at += (size_t)snprintf(out + at, size - at, "%s%s=%.0f", sep, c->name,
                                       running && running < enabled
                                           ? (double)count * (double)enabled / (double)running
                                           : (double)count);
        }
    if (rapl_n > 0) {
        uint64_t energy = 0;
        for (int i = 0; i < rapl_n; i++) { /* the counter wraps at max_energy_range_uj */
            uint64_t now = read_u64(rapl_fd[i]);
            energy += now >= rapl_before[i] ? now - rapl_before[i]
                                              : now + rapl_range[i] - rapl_before[i];
        }
        at += (size_t)snprintf(out + at, size - at, "%senergy_uj=%llu", at ? "," : "",
                               (unsigned long long)energy);
    } else {
        at += (size_t)snprintf(out + at, size - at, "%senergy_uj=!%d", at ? "," : "",
                               rapl_error);
    }
    for (size_t i = 0; i < N_COUNTERS; i++)
        if (COUNTERS[i].fd >= 0) {
            close(COUNTERS[i].fd);
            COUNTERS[i].fd = -1;
        }
}

/* The signal that asked the launcher to stop (SIGINT, SIGTERM, SIGHUP), 0 if none. */
static volatile sig_atomic_t stop_signal;

static void on_stop(int sig) { stop_signal = sig; }

struct child {
    const char *path;
    const char *cwd; /* the folder the program starts in; "" for the launcher's */
    int home;        /* the launcher's own folder (open) */
    char **argv;
    char **envp;
    int in_fd, out_fd, err_fd;
    pid_t launcher;
    volatile int error; /* written by the child when it cannot exec (memory is shared) */
};

static char child_stack[CHILD_STACK] __attribute__((aligned(16)));

/* Runs in the child, on its own stack, sharing the launcher's memory until execve:
 * system calls only, no allocation, no stdio. */
static int child_main(void *arg)
{
    struct child *c = arg;
    if (personality(ADDR_NO_RANDOMIZE) == -1 ||
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1)
        goto fail;
    if (getppid() != c->launcher) { /* the launcher is gone already */
        c->error = ESRCH;
        _exit(127);
    }
    if (setpgid(0, 0) == -1 || dup2(c->in_fd, 0) == -1 || dup2(c->out_fd, 1) == -1 ||
        dup2(c->err_fd, 2) == -1)
        goto fail;
    execve(c->path, c->argv, c->envp);
fail:
    c->error = errno ? errno : EINVAL;
    _exit(127);
}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int64_t tv_us(struct timeval t) { return (int64_t)t.tv_sec * 1000000 + t.tv_usec; }

/* This process's CPU time and that of its reaped children, in microseconds. */
static int64_t own_cpu_us(void)
{
    struct rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    return tv_us(self.ru_utime) + tv_us(self.ru_stime) + tv_us(children.ru_utime) +
           tv_us(children.ru_stime);
}

/* The machine's busy and total CPU ticks from the first line of /proc/stat (open as
 * stat_fd: the kernel writes the file anew at each read from offset 0), as
 * pinbench.measure.system.CpuTimes reads them. */
static void cpu_times(int stat_fd, int64_t *busy, int64_t *total)
{
    char buf[512];
    *busy = *total = 0;
    ssize_t n = pread(stat_fd, buf, sizeof buf - 1, 0);
    if (n <= 3)
        return;
    buf[n] = 0;
    char *p = buf + 3; /* "cpu" */
    int64_t f[8] = {0};
    for (int i = 0; i < 8; i++) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p)
            break;
        f[i] = v;
        p = end;
    }
    int64_t sum = 0;
    for (int i = 0; i < 8; i++)
        sum += f[i];
    *total = sum;
    *busy = sum - f[3] - f[4]; /* idle and iowait */
}

/* A CPU mask as large as the kernel's (sched_getaffinity refuses a smaller one). */
struct cpu_mask {
    cpu_set_t *set;
    size_t size;
    int cpus;
};

static int cpu_mask_init(struct cpu_mask *m)
{
    for (m->cpus = 1024; m->cpus <= (1 << 20); m->cpus *= 2) {
        m->set = CPU_ALLOC(m->cpus);
        m->size = CPU_ALLOC_SIZE(m->cpus);
        if (!m->set)
            return -1;
        if (sched_getaffinity(0, m->size, m->set) == 0)
            return 0;
        CPU_FREE(m->set);
        if (errno != EINVAL)
            return -1;
    }
    return -1;
}

/* A CPU set as the kernel lists it ("0-3,6") at out; its length, or -1 (out[0] then 0)
 * when it does not fit in size bytes. */
static int cpu_list(const cpu_set_t *set, const struct cpu_mask *m, char *out, size_t size)
{
    size_t len = 0;
    out[0] = 0;
    for (int cpu = 0; cpu < m->cpus; cpu++) {
        if (!CPU_ISSET_S(cpu, m->size, set))
            continue;
        int last = cpu;
        while (last + 1 < m->cpus && CPU_ISSET_S(last + 1, m->size, set))
            last++;
        int n = last > cpu ? snprintf(out + len, size - len, "%s%d-%d", len ? "," : "", cpu, last)
                           : snprintf(out + len, size - len, "%s%d", len ? "," : "", cpu);
        if (n < 0 || (size_t)n >= size - len) {
            out[0] = 0;
            return -1;
        }
        len += (size_t)n;
        cpu = last;
    }
    return (int)len;
}

/* The CPUs an exited, unreaped child may run on, as the kernel lists them ("0-3,6"; ""
 * when the kernel does not say or the list does not fit). */
static void exit_cpus(pid_t pid, struct cpu_mask *m, char *out, size_t size)
{
    out[0] = 0;
    if (sched_getaffinity(pid, m->size, m->set) == 0)
        cpu_list(m->set, m, out, size);
}

/* The CPUs each thread of the running program was seen allowed on: one entry per task. */
struct threads {
    pid_t *tids;
    pid_t *owners;    /* the process of each task (its thread group) */
    cpu_set_t **cpus; /* the union of the sets seen once the task had run RAN_NS; for a
                         process's initial thread, the set seen at the last such look */
    int count, capacity;
};

/* Makes *array (of elements of `size` bytes) hold `capacity` of them: 0, or -1 with *array
 * as it was when there is no memory. */
static int grow(void *array, size_t size, int capacity)
{
    void **at = array;
    void *grown = realloc(*at, size * (size_t)capacity);
    if (!grown)
        return -1;
    *at = grown;
    return 0;
}

/* The CPU time task tid of process pid has had (ns, /proc/PID/task/TID/schedstat), or -1
 * when the kernel does not say. */
static long long task_ran_ns(pid_t pid, pid_t tid)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
    FILE *file = fopen(path, "r");
    long long ran = -1;
    if (file) {
        if (fscanf(file, "%lld", &ran) != 1)
            ran = -1;
        fclose(file);
    }
    return ran;
}

/* Adds what the kernel says now of each task of process pid (sched_getaffinity per task of
 * /proc/PID/task); a task that ended meanwhile is left out. The CPUs of a task that has not
 * yet run RAN_NS are not added: a thread just created has its creator's CPUs until it is
 * bound (by glibc's pthread_create after the clone, or by itself as it starts: LLVM's
 * libomp), and on a busy machine it may wait past a look before it runs; a thread the
 * program moves runs on where it was moved. A process's initial thread keeps the set of the
 * last look instead: the process's CPUs before its runtime binds it (at its start, or at its
 * first parallel region) are its parent's, and the last look stands for its CPUs at exit. */
static void sample_threads(pid_t pid, struct cpu_mask *m, struct threads *t)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *dir = opendir(path);
    if (!dir)
        return;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        pid_t tid = (pid_t)atol(entry->d_name);
        long long ran = tid > 0 ? task_ran_ns(pid, tid) : 0; /* before the CPUs: not older */
        if (tid <= 0 || sched_getaffinity(tid, m->size, m->set) != 0)
            continue;
        int i = 0;
        while (i < t->count && t->tids[i] != tid)
            i++;
        if (i == t->count) {
            if (t->count == t->capacity) {
                int capacity = t->capacity ? 2 * t->capacity : 64;
                if (grow(&t->tids, sizeof *t->tids, capacity) ||
                    grow(&t->owners, sizeof *t->owners, capacity) ||
                    grow(&t->cpus, sizeof *t->cpus, capacity))
                    break;
                for (int k = t->capacity; k < capacity; k++)
                    t->cpus[k] = NULL;
                t->capacity = capacity;
            }
            if (!t->cpus[i] && !(t->cpus[i] = CPU_ALLOC(m->cpus)))
                break;
            CPU_ZERO_S(m->size, t->cpus[i]);
            t->tids[i] = tid;
            t->owners[i] = pid;
            t->count++;
        }
        if (ran >= 0 && ran < RAN_NS)
            continue;
        if (tid == pid)
            CPU_ZERO_S(m->size, t->cpus[i]);
        CPU_OR_S(m->size, t->cpus[i], t->cpus[i], m->set);
    }
    closedir(dir);
}

/* The threads' CPUs as "tid=cpus;tid=cpus" in buf (grown as needed); its length. */
static size_t threads_text(const struct threads *t, const struct cpu_mask *m, char **buf,
                           size_t *capacity)
{
    size_t len = 0;
    for (int i = 0; i < t->count; i++) {
        size_t need = len + 32 + (size_t)m->cpus * 8;
        if (need > *capacity) {
            char *grown = realloc(*buf, need);
            if (!grown)
                return len;
            *buf = grown;
            *capacity = need;
        }
        int n = snprintf(*buf + len, *capacity - len, "%s%d:%d=", len ? ";" : "",
                         (int)t->owners[i], (int)t->tids[i]);
        int cpus = cpu_list(t->cpus[i], m, *buf + len + n, *capacity - len - (size_t)n);
        if (cpus < 0)
            return len;
        len += (size_t)n + (size_t)cpus;
    }
    return len;
}

/* Frees all but the last `keep` bytes (rounded to whole pages) of what the program wrote
 * so far to a memory file, once it holds more than OUTPUT_HOLD: a hole is punched, the file's
 * size and the program's offset stay. *punched: where the data held starts. The offset is
 * asked with SEEK_CUR, which leaves it as it is (the program writes through it). */
static void free_output(int fd, int64_t keep, int64_t *punched)
{
    off_t written = lseek(fd, 0, SEEK_CUR);
    if (written - *punched <= OUTPUT_HOLD)
        return;
    int64_t end = (written - keep) / 4096 * 4096;
    if (end > *punched && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, *punched,
                                    end - *punched) == 0)
        *punched = end;
}

/* Each process's parent, from /proc/PID/stat: n entries of (pid, parent, zombie); -1 if
 * /proc cannot be read. */
struct process {
    pid_t pid, parent;
    int zombie, ours; /* ours: below the process asked of mark_below */
};

static int list_processes(struct process **list, int *capacity)
{
    DIR *dir = opendir("/proc");
    if (!dir)
        return -1;
    int n = 0;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        pid_t pid = (pid_t)atol(entry->d_name);
        if (pid <= 0)
            continue;
        char path[64], stat[512];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t len = read(fd, stat, sizeof stat - 1);
        close(fd);
        if (len <= 0)
            continue;
        stat[len] = 0;
        char *after = strrchr(stat, ')'); /* the name may hold spaces and parentheses */
        char state;
        int parent;
        if (!after || sscanf(after + 1, " %c %d", &state, &parent) != 2)
            continue;
        if (n == *capacity) {
            int grown_capacity = *capacity ? 2 * *capacity : 1024;
            struct process *grown = realloc(*list, sizeof *grown * (size_t)grown_capacity);
            if (!grown)
                break;
            *list = grown;
            *capacity = grown_capacity;
        }
        (*list)[n++] = (struct process){pid, (pid_t)parent, state == 'Z', 0};
    }
    closedir(dir);
    return n;
}

/* Marks (ours) every process of list below root: its children, theirs, and so on. */
static void mark_below(struct process *list, int n, pid_t root)
{
    for (int grew = 1; grew;) {
        grew = 0;
        for (int i = 0; i < n; i++) {
            if (list[i].ours)
                continue;
            int ours = list[i].parent == root;
            for (int k = 0; !ours && k < n; k++)
                ours = list[k].ours && list[k].pid == list[i].parent;
            if (ours)
                list[i].ours = grew = 1;
        }
    }
}

/* Kills every descendant of this launcher (all are what runs left: the launcher starts one
 * program at a time and reaps it first) and the process group `group`, reaps them, and
 * returns how many were still running; 0 at once when there is none (ECHILD). */
static int kill_leftovers(pid_t group)
{
    static struct process *list;
    static int capacity;
    static pid_t seen[4096];
    int running = 0, seen_count = 0;
    int64_t give_up = 0;
    for (;;) {
        pid_t reaped;
        while ((reaped = waitpid(-1, NULL, WNOHANG)) > 0)
            ;
        if (reaped < 0 && errno == ECHILD)
            return running; /* none left */
        if (!give_up)
            give_up = now_ns() + LEFTOVER_NS;
        else if (now_ns() > give_up) {
            fprintf(stderr, "pinbench-launcher: processes a run left did not die in %lld s\n",
                    LEFTOVER_NS / 1000000000);
            return running;
        }
        int n = list_processes(&list, &capacity);
        mark_below(list, n, getpid());
        for (int i = 0; i < n; i++) {
            if (!list[i].ours)
                continue;
            kill(list[i].pid, SIGKILL);
            int known = 0;
            for (int k = 0; k < seen_count && !known; k++)
                known = seen[k] == list[i].pid;
            if (!known && !list[i].zombie) {
                running++;
                if (seen_count < (int)(sizeof seen / sizeof *seen))
                    seen[seen_count++] = list[i].pid;
            }
        }
        kill(-group, SIGKILL); /* and any of its group /proc did not list in time */
        usleep(1000);
    }
}

/* The processes of a run seen by the looks below the program (descendants mode), each with
 * the executable it ran at the last look (a process that execs runs another). */
struct processes {
    pid_t *pids;
    char **exes;
    int count, capacity;
};

/* Notes the executable process pid runs now (its /proc/PID/exe). */
static void note_exe(pid_t pid, struct processes *p)
{
    char path[64], exe[4096];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    ssize_t len = readlink(path, exe, sizeof exe - 1);
    if (len <= 0)
        return;
    exe[len] = 0;
    int i = 0;
    while (i < p->count && p->pids[i] != pid)
        i++;
    if (i == p->count) {
        if (p->count == p->capacity) {
            int capacity = p->capacity ? 2 * p->capacity : 16;
            if (grow(&p->pids, sizeof *p->pids, capacity) ||
                grow(&p->exes, sizeof *p->exes, capacity))
                return;
            p->capacity = capacity;
        }
        p->pids[i] = pid;
        p->exes[i] = NULL;
        p->count++;
    }
    if (!p->exes[i] || strcmp(p->exes[i], exe) != 0) {
        free(p->exes[i]);
        p->exes[i] = strdup(exe);
    }
}

/* Forgets the processes of the last run. */
static void processes_clear(struct processes *p)
{
    for (int i = 0; i < p->count; i++)
        free(p->exes[i]);
    p->count = 0;
}

/* One look at the threads of the running program pid (see the top); with `descendants`, at
 * those of every process below it too (found in /proc by their parents), noting which
 * executable each process runs. */
static void look_at_threads(pid_t pid, int descendants, struct cpu_mask *m, struct threads *t,
                            struct processes *p)
{
    static struct process *list;
    static int capacity;
    sample_threads(pid, m, t);
    if (!descendants)
        return;
    note_exe(pid, p);
    int n = list_processes(&list, &capacity);
    mark_below(list, n, pid);
    for (int i = 0; i < n; i++)
        if (list[i].ours && !list[i].zombie) {
            sample_threads(list[i].pid, m, t);
            note_exe(list[i].pid, p);
        }
}

/* The processes as "pid\0exe\0" pairs in buf (grown as needed); its length. */
static size_t processes_text(const struct processes *p, char **buf, size_t *capacity)
{
    size_t len = 0;
    for (int i = 0; i < p->count; i++) {
        if (!p->exes[i])
            continue;
        size_t need = len + 16 + strlen(p->exes[i]) + 1;
        if (need > *capacity) {
            char *grown = realloc(*buf, need);
            if (!grown)
                return len;
            *buf = grown;
            *capacity = need;
        }
        int n = snprintf(*buf + len, *capacity - len, "%d", (int)p->pids[i]);
        len += (size_t)n + 1; /* the NUL snprintf wrote */
        size_t exe = strlen(p->exes[i]) + 1;
        memcpy(*buf + len, p->exes[i], exe);
        len += exe;
    }
    return len;
}

struct outcome {
    int64_t wall_ns;
    struct rusage usage;
    int status, timed_out, error, leftover;
    pid_t pid;
    char cpus[4096]; /* CPUs the exited program may run on (exit_cpus), "" if unknown */
};

static struct timespec span(int64_t ns) { return (struct timespec){ns / 1000000000, ns % 1000000000}; }

/* Kills a run (its group, and whatever it left) and exits: the launcher was asked to stop. */
static void stop_run(pid_t pid)
{
    kill(-pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    kill_leftovers(pid);
    exit(128 + stop_signal);
}

/* Moves the launcher to the folder `cwd` ("": its own, `home`), unless it is there already
 * (the last run's); -1 and errno when it cannot. */
static int move_to(const char *cwd, int home)
{
    static char *here; /* where the last run started; NULL: home */
    if (here ? strcmp(here, cwd) == 0 : !cwd[0])
        return 0;
    free(here);
    here = NULL;
    if (!cwd[0])
        return fchdir(home);
    if (chdir(cwd) != 0) {
        int error = errno;
        if (fchdir(home) != 0)
            exit(1);
        errno = error;
        return -1;
    }
    here = strdup(cwd);
    return 0;
}

/* Starts the program, waits for it (killing its process group after timeout_ns; looking at
 * its output and threads meanwhile, see the top), reads its CPUs at exit, reaps it and
 * kills what it left. The clock runs from the clone to the exit, and again around the
 * reaping. */
static void run_program(struct child *c, int64_t timeout_ns, int64_t output_limit, long delay_us,
                        int descendants, struct cpu_mask *mask, int out_fd, int err_fd,
                        struct threads *threads, struct processes *processes, struct outcome *o)
{
    if (move_to(c->cwd, c->home) != 0) {
        o->error = -errno; /* negative: the folder, not the program */
        return;
    }
    struct timespec first = span(timeout_ns < FIRST_LOOK_NS ? timeout_ns : FIRST_LOOK_NS);
    int64_t start = now_ns();
    pid_t pid = clone(child_main, child_stack + CHILD_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, c);
    if (pid < 0) {
        o->error = errno;
        return;
    }
    if (c->error) { /* the child could not exec: reap it */
        o->error = c->error;
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        return;
    }
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    struct pollfd ready = {.fd = pidfd, .events = POLLIN};
    int polled = ppoll(&ready, 1, &first, NULL);
    if (polled != 1) { /* still running: look at it until it exits, or past its time */
        int64_t look_gap = FIRST_LOOK_NS, sample_gap = FIRST_LOOK_NS, out_punched = 0,
                err_punched = 0, deadline = start + timeout_ns;
        int64_t next_look = start + FIRST_LOOK_NS, next_sample = next_look;
        while (pidfd >= 0 && polled != 1 && !(polled < 0 && errno != EINTR)) {
            if (stop_signal)
                stop_run(pid);
            int64_t now = now_ns();
            if (now >= deadline) {
                polled = 0;
                break;
            }
            if (polled == 0 && now >= next_look) {
                free_output(out_fd, output_limit, &out_punched);
                free_output(err_fd, output_limit, &err_punched);
                look_gap = look_gap * 2 < LOOK_NS ? look_gap * 2 : LOOK_NS;
                next_look = now + look_gap;
            }
            if (polled == 0 && now >= next_sample) {
                look_at_threads(pid, descendants, mask, threads, processes);
                sample_gap = sample_gap * 2 < SAMPLE_NS ? sample_gap * 2 : SAMPLE_NS;
                next_sample = now + sample_gap;
            }
            int64_t wake = next_look < next_sample ? next_look : next_sample;
            struct timespec limit = span((wake < deadline ? wake : deadline) - now);
            polled = ppoll(&ready, 1, &limit, NULL);
        }
    }
    if (pidfd < 0 || polled < 0) { /* no way to wait with a timeout (Linux < 5.3) */
        perror("pinbench-launcher: pidfd_open or ppoll");
        kill(-pid, SIGKILL);
        exit(1);
    }
    int64_t exited = now_ns(), untimed_end = exited;
    if (polled == 0) {
        o->timed_out = 1;
        kill(-pid, SIGKILL); /* its whole process group */
    } else {
        exit_cpus(pid, mask, o->cpus, sizeof o->cpus);
        if (delay_us)
            usleep((useconds_t)delay_us);
        untimed_end = now_ns();
    }
    close(pidfd);
    while (wait4(pid, &o->status, 0, &o->usage) < 0 && errno == EINTR)
        ;
    o->wall_ns = (exited - start) + (now_ns() - untimed_end);
    o->pid = pid;
    o->leftover = kill_leftovers(pid);
}

static int read_exact(int fd, void *buf, size_t size)
{
    char *p = buf;
    while (size) {
        ssize_t n = read(fd, p, size);
        if (n < 0 && errno == EINTR && !stop_signal)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        size -= (size_t)n;
    }
    return 0;
}

static void write_all(int fd, const char *buf, size_t size)
{
    while (size) {
        ssize_t n = write(fd, buf, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            exit(1); /* the measuring process is gone */
        buf += n;
        size -= (size_t)n;
    }
}

/* Empties a memory file and rewinds it (the program's writes then start at 0); one lseek
   when it is empty already (the program wrote nothing), which leaves it at 0. */
static int rewind_output(int fd)
{
    off_t end = lseek(fd, 0, SEEK_END);
    if (end == 0)
        return 0;
    return end > 0 && ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0 ? 0 : -1;
}

/* The last `limit` bytes of a memory file, in a buffer grown as needed; sets *size and
 * returns the file's size (all the program wrote to it). */
static off_t tail(int fd, int64_t limit, char **buf, size_t *capacity, size_t *size)
{
    /* the size from lseek, not fstat: a stat asks the file's times, after which the
       kernel stamps the next change of any file with a fine-grained time (multigrain
       timestamps), and the journal's mtime would then change with every run, which its
       fdatasync must write (see journal.py) */
    off_t end = lseek(fd, 0, SEEK_END);
    *size = 0;
    if (end <= 0)
        return 0;
    int64_t start = end > limit ? end - limit : 0;
    size_t want = (size_t)(end - start);
    if (want > *capacity) {
        char *grown = realloc(*buf, want);
        if (!grown)
            return end;
        *buf = grown;
        *capacity = want;
    }
    while (*size < want) {
        ssize_t n = pread(fd, *buf + *size, want - *size, start + (off_t)*size);
        if (n <= 0)
            break;
        *size += (size_t)n;
    }
    return end;
}

/* Splits the request into its fields; returns the number of fields, -1 if malformed. */
static long split(char *data, size_t size, char **fields, long max)
{
    long count = 0;
    char *p = data, *end = data + size;
    while (p < end) {
        char *nul = memchr(p, 0, (size_t)(end - p));
        if (!nul || count == max)
            return -1;
        fields[count++] = p;
        p = nul + 1;
    }
    return count;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s PARENT_PID SHORTEST_SHARE_NS [EXIT_READ_DELAY_US]\n",
                argv[0]);
        return 2;
    }
    pid_t parent = (pid_t)atol(argv[1]);
    int64_t shortest_share_ns = atoll(argv[2]);
    long delay_us = argc > 3 ? atol(argv[3]) : 0;
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 || getppid() != parent)
        return 1; /* the measuring process died before we could tie ourselves to it */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1) {
        perror("pinbench-launcher: PR_SET_CHILD_SUBREAPER");
        return 1;
    }
    struct sigaction stop = {.sa_handler = on_stop}; /* no SA_RESTART: waits end at once */
    sigemptyset(&stop.sa_mask);
    if (sigaction(SIGINT, &stop, NULL) || sigaction(SIGTERM, &stop, NULL) ||
        sigaction(SIGHUP, &stop, NULL)) {
        perror("pinbench-launcher: sigaction");
        return 1;
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL); /* the programs start with no signal blocked */
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int home = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int stat_fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    int out_fd = memfd_create("pinbench-stdout", MFD_CLOEXEC);
    int err_fd = memfd_create("pinbench-stderr", MFD_CLOEXEC);
    struct cpu_mask mask;
    if (devnull < 0 || home < 0 || stat_fd < 0 || out_fd < 0 || err_fd < 0 ||
        cpu_mask_init(&mask) != 0) {
        perror("pinbench-launcher: /dev/null, its folder, /proc/stat, memfd_create or "
               "sched_getaffinity");
        return 1;
    }
    char *out_buf = NULL, *err_buf = NULL, *threads_buf = NULL, *processes_buf = NULL;
    size_t out_capacity = 0, err_capacity = 0, threads_capacity = 0, processes_capacity = 0;
    struct threads threads = {0};
    struct processes processes = {0};
    /* stdin and stdout are the pipes to the measuring process: the programs get their own */
    fcntl(0, F_SETFD, FD_CLOEXEC);
    fcntl(1, F_SETFD, FD_CLOEXEC);

    char *data = NULL;
    size_t capacity = 0;
    char **fields = NULL;
    long max_fields = 0;
    for (;;) {
        unsigned char header[8];
        if (read_exact(0, header, sizeof header) != 0)
            return stop_signal ? 128 + stop_signal : 0; /* the pipe closed: done */
        uint64_t size = 0;
        for (int i = 7; i >= 0; i--)
            size = (size << 8) | header[i];
        if (size + 1 > capacity) {
            capacity = size + 1;
            data = realloc(data, capacity);
            max_fields = (long)capacity;
            fields = realloc(fields, sizeof *fields * (size_t)(max_fields + 1));
            if (!data || !fields) {
                fprintf(stderr, "pinbench-launcher: out of memory\n");
                return 1;
            }
        }
        if (read_exact(0, data, size) != 0)
            return stop_signal ? 128 + stop_signal : 0;
        long n = split(data, size, fields, max_fields);
        long argc_run = n >= 6 ? atol(fields[5]) : -1;
        long envc_at = 6 + argc_run;
        if (argc_run < 1 || envc_at >= n || 7 + argc_run + atol(fields[envc_at]) != n) {
            fprintf(stderr, "pinbench-launcher: malformed request\n");
            return 1;
        }
        int64_t timeout_ns = atoll(fields[0]), output_limit = atoll(fields[1]);
        int descendants = atoi(fields[2]);
        /* argv and env: the pointers are shifted down to make room for their NULL ends */
        char **run_argv = fields + 5, **run_env = fields + envc_at;
        memmove(run_argv, run_argv + 1, sizeof *fields * (size_t)argc_run);
        run_argv[argc_run] = NULL;
        long envc = atol(fields[envc_at]);
        memmove(run_env, run_env + 1, sizeof *fields * (size_t)envc);
        run_env[envc] = NULL;

        struct child c = {.path = fields[4], .cwd = fields[3], .home = home,
                          .argv = run_argv, .envp = run_env,
                          .in_fd = devnull, .out_fd = out_fd, .err_fd = err_fd,
                          .launcher = getpid(), .error = 0};
        struct outcome o = {0};
        if (rewind_output(out_fd) != 0 || rewind_output(err_fd) != 0) {
            perror("pinbench-launcher: emptying the output files");
            return 1;
        }
        int64_t busy0, total0, busy1, total1;
        cpu_times(stat_fd, &busy0, &total0);
        int64_t own0 = own_cpu_us();
        threads.count = 0;
        processes_clear(&processes);
        counters_open();
        run_program(&c, timeout_ns, output_limit, delay_us, descendants, &mask, out_fd, err_fd,
                    &threads, &processes, &o);
        busy1 = busy0, total1 = total0;
        int64_t own1 = own0; /* no share of a run too short for one: no need to ask */
        if (o.wall_ns >= shortest_share_ns) {
            cpu_times(stat_fd, &busy1, &total1);
            own1 = own_cpu_us();
        }
        size_t out_size, err_size;
        off_t out_total = tail(out_fd, output_limit, &out_buf, &out_capacity, &out_size);
        off_t err_total = tail(err_fd, output_limit, &err_buf, &err_capacity, &err_size);
        size_t threads_size = threads_text(&threads, &mask, &threads_buf, &threads_capacity);
        size_t processes_size = processes_text(&processes, &processes_buf, &processes_capacity);

        char counted[N_COUNTERS * 64];
        counters_text(counted, sizeof counted);
        char reply[sizeof o.cpus + sizeof counted + 256];
        int len = snprintf(reply, sizeof reply,
                           "%lld %lld %lld %ld %d %d %d %lld %lld %lld %lld %lld %s %d %d %lld "
                           "%lld %zu %zu %zu %zu %s\n",
                           (long long)o.wall_ns, (long long)tv_us(o.usage.ru_utime),
                           (long long)tv_us(o.usage.ru_stime), o.usage.ru_maxrss, o.status,
                           o.timed_out, o.error, (long long)busy0, (long long)total0,
                           (long long)busy1, (long long)total1, (long long)(own1 - own0),
                           o.cpus[0] ? o.cpus : "-", (int)o.pid, o.leftover,
                           (long long)out_total, (long long)err_total, out_size, err_size,
                           threads_size, processes_size, counted);
        write_all(1, reply, (size_t)len);
        write_all(1, out_buf, out_size);
        write_all(1, err_buf, err_size);
        write_all(1, threads_buf, threads_size);
        write_all(1, processes_buf, processes_size);
    }
}
