/* LD_PRELOAD shim that makes a program believe in a faked machine: LLVM's libomp in
 * tests/test_kmp_libomp.py, likwid-pin in tests/test_user_placements.py.
 *
 * libomp keeps only the OS procs of its process affinity mask, which it reads with the raw
 * sched_getaffinity system call through libc's syscall() (kmp_affinity.h,
 * __kmp_affinity_determine_capable), and refuses a cpuinfo file with more processors than
 * sysconf(_SC_NPROCESSORS_CONF). With PINBENCH_FAKE_CPUS set (OS procs such as "0,2-5"):
 *   - sched_getaffinity returns that mask (in a mask as long as the kernel's, or longer when
 *     the procs need it and the caller's buffer holds it);
 *   - sched_setaffinity with a mask succeeds without binding anything (the procs need not
 *     exist here; libomp prints the binding it asked for);
 *   - sysconf's processor counts return PINBENCH_FAKE_NPROCS;
 *   - libc's sched_getaffinity and pthread_getaffinity_np (likwid's way) return that mask.
 * Every other call goes to libc. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Sets the bits of the faked procs in mask (size bytes; NULL to only measure) and returns the
 * highest proc, or -1 when PINBENCH_FAKE_CPUS is unset or empty. */
static long fake_cpus(unsigned char *mask, size_t size) {
    const char *p = getenv("PINBENCH_FAKE_CPUS");
    long top = -1;
    if (mask) memset(mask, 0, size);
    while (p && *p) {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;
        if (end == p) break; /* not a number */
        if (*end == '-') hi = strtol(end + 1, &end, 10);
        for (long cpu = lo; cpu <= hi; cpu++) {
            if (mask && (size_t)cpu / 8 < size) mask[cpu / 8] |= (unsigned char)(1u << (cpu % 8));
            if (cpu > top) top = cpu;
        }
        p = *end == ',' ? end + 1 : end;
    }
    return top;
}

long syscall(long number, ...) {
    static long (*real)(long, ...);
    if (!real) real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    va_list ap;
    va_start(ap, number);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
    long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
    va_end(ap);
    long top = fake_cpus(NULL, 0);
    if (top >= 0 && c != 0 && number == SYS_sched_getaffinity) {
        long size = real(number, a, b, c);
        long need = (top / 64 + 1) * 8;
        if (size < 0) return size;
        if (need > size) size = need;
        if (size > b) {
            errno = EINVAL;
            return -1;
        }
        fake_cpus((unsigned char *)c, (size_t)size);
        return size;
    }
    if (top >= 0 && c != 0 && number == SYS_sched_setaffinity) return 0;
    return real(number, a, b, c, d, e, f);
}

long sysconf(int name) {
    static long (*real)(int);
    if (!real) real = (long (*)(int))dlsym(RTLD_NEXT, "sysconf");
    const char *procs = getenv("PINBENCH_FAKE_NPROCS");
    if (procs && (name == _SC_NPROCESSORS_CONF || name == _SC_NPROCESSORS_ONLN))
        return atol(procs);
    return real(name);
}

long __sysconf(int name) { return sysconf(name); }

int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *mask) {
    static int (*real)(pid_t, size_t, cpu_set_t *);
    if (!real) real = (int (*)(pid_t, size_t, cpu_set_t *))dlsym(RTLD_NEXT, "sched_getaffinity");
    if (fake_cpus(NULL, 0) < 0) return real(pid, size, mask);
    fake_cpus((unsigned char *)mask, size);
    return 0;
}

int pthread_getaffinity_np(pthread_t thread, size_t size, cpu_set_t *mask) {
    (void)thread;
    return sched_getaffinity(0, size, mask);
}
