/*
 * tsan_wrap.c -- pinbench tsan runtime: memcpy, memmove and memset of the
 * instrumented program, counted as one access per line they read or write.
 *
 * libc is not recompiled, so its memcpy is invisible to the instrumentation;
 * gcc and clang 14 turn copy/zeroing loops and struct or array assignments
 * (Fortran, C++ containers) into calls to these functions.  The link flags add
 * -Wl,--wrap=memcpy (and the others below), which sends the program's calls to
 * __wrap_memcpy here; __real_memcpy is libc's.  Calls made inside libc, the
 * OpenMP runtime or other uninstrumented libraries are not seen.
 * Newer clang (16+) calls __tsan_memcpy & co. instead: defined here as well.
 */
#include <stddef.h>

void pinbench_tsan_range(const void *a, size_t size);

void *__real_memcpy(void *d, const void *s, size_t n);
void *__real_memmove(void *d, const void *s, size_t n);
void *__real_memset(void *d, int c, size_t n);
void *__real___memcpy_chk(void *d, const void *s, size_t n, size_t dn);
void *__real___memmove_chk(void *d, const void *s, size_t n, size_t dn);
void *__real___memset_chk(void *d, int c, size_t n, size_t dn);

#define PB_EXPORT __attribute__((visibility("default")))

PB_EXPORT void *__wrap_memcpy(void *d, const void *s, size_t n)
{
    pinbench_tsan_range(s, n);
    pinbench_tsan_range(d, n);
    return __real_memcpy(d, s, n);
}

PB_EXPORT void *__wrap_memmove(void *d, const void *s, size_t n)
{
    pinbench_tsan_range(s, n);
    pinbench_tsan_range(d, n);
    return __real_memmove(d, s, n);
}

PB_EXPORT void *__wrap_memset(void *d, int c, size_t n)
{
    pinbench_tsan_range(d, n);
    return __real_memset(d, c, n);
}

PB_EXPORT void *__wrap___memcpy_chk(void *d, const void *s, size_t n, size_t dn)
{
    pinbench_tsan_range(s, n);
    pinbench_tsan_range(d, n);
    return __real___memcpy_chk(d, s, n, dn);
}

PB_EXPORT void *__wrap___memmove_chk(void *d, const void *s, size_t n, size_t dn)
{
    pinbench_tsan_range(s, n);
    pinbench_tsan_range(d, n);
    return __real___memmove_chk(d, s, n, dn);
}

PB_EXPORT void *__wrap___memset_chk(void *d, int c, size_t n, size_t dn)
{
    pinbench_tsan_range(d, n);
    return __real___memset_chk(d, c, n, dn);
}

PB_EXPORT void *__tsan_memcpy(void *d, const void *s, size_t n)
{
    return __wrap_memcpy(d, s, n);
}

PB_EXPORT void *__tsan_memmove(void *d, const void *s, size_t n)
{
    return __wrap_memmove(d, s, n);
}

PB_EXPORT void *__tsan_memset(void *d, int c, size_t n)
{
    return __wrap_memset(d, c, n);
}
