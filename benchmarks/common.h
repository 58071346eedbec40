/*
 * common.h -- pinbench: what every bundled benchmark shares.
 *
 * - The command line `[quick|ref] [key=value ...]`: a program describes its
 *   parameters in a `param` table and calls parse_args(); a bad argument
 *   gives a one-line usage error on stderr and exit status 2 (usage()).
 * - The output lines on stdout, in this order: print_params() ("params: ..."),
 *   print_kernel_time() ("kernel_time_s: ..."), print_checksum_u64() or
 *   print_checksum_f64() ("checksum: ..."), then print_validation_ok() or
 *   print_validation_failed() ("validation: ...").
 * - xalloc(): 64-byte aligned allocation that fails with a validation line.
 *
 * Header only (static inline functions, C11), so that each benchmark still
 * builds as a single file: cc -O2 -fopenmp -o X X.c -lm.  A program that
 * needs feature-test macros (e.g. _POSIX_C_SOURCE) defines them before
 * including this header.
 */
#ifndef PINBENCH_COMMON_H
#define PINBENCH_COMMON_H

#include <errno.h>
#include <inttypes.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define PINBENCH_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PINBENCH_PRINTF(f, a)
#endif

/* ---- command line: [quick|ref] [key=value ...] (same in every benchmark) */

/* One parameter: its key, its `quick` and `ref` values, the allowed range
 * [min, max] and, after parse_args(), the value in use. */
typedef struct { const char *key; long long quick, ref, min, max, val; } param;

/* number of entries of a param table (an array, not a pointer) */
#define NPARAMS(table) ((int)(sizeof(table) / sizeof((table)[0])))

/* Print "PROG: <message>; usage: ..." as one line on stderr and exit with
 * status 2.  Nothing is printed on stdout. */
PINBENCH_PRINTF(4, 5)
static inline _Noreturn void usage(const char *prog, const param *P, int np,
                                   const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "; usage: %s [quick|ref] [key=value ...], keys:", prog);
    for (int k = 0; k < np; k++)
        fprintf(stderr, " %s", P[k].key);
    fprintf(stderr, "\n");
    exit(2);
}

/* Set P[k].val for every parameter from the command line.  Returns the size
 * name for the params line: "quick", "ref", or "custom" once a key=value
 * token was given. */
static inline const char *parse_args(int argc, char **argv, param *P, int np)
{
    const char *size = "quick";
    int i = 1;
    if (argc > 1 && !strchr(argv[1], '=')) {
        if (strcmp(argv[1], "quick") && strcmp(argv[1], "ref"))
            usage(argv[0], P, np, "unknown argument '%s'", argv[1]);
        size = argv[i++];
    }
    for (int k = 0; k < np; k++)
        P[k].val = strcmp(size, "ref") ? P[k].quick : P[k].ref;
    for (; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        int k = 0;
        while (eq && k < np && (strncmp(P[k].key, argv[i], eq - argv[i]) ||
                                P[k].key[eq - argv[i]]))
            k++;
        if (!eq || k == np)
            usage(argv[0], P, np, "unknown argument '%s'", argv[i]);
        char *end;
        errno = 0;
        long long v = strtoll(eq + 1, &end, 10);
        if (errno || end == eq + 1 || *end || v < P[k].min || v > P[k].max)
            usage(argv[0], P, np, "invalid value '%s' (allowed %lld..%lld)", argv[i],
                  P[k].min, P[k].max);
        P[k].val = v;
        size = "custom";
    }
    return size;
}
/* ---- end of command line */

/* ---- output on stdout (the workflow parses these lines) */

/* "params: size=<size> <key>=<value> ... threads=<N>" */
static inline void print_params(const char *size, const param *P, int np, int nthreads)
{
    printf("params: size=%s", size);
    for (int k = 0; k < np; k++)
        printf(" %s=%lld", P[k].key, P[k].val);
    printf(" threads=%d\n", nthreads);
}

/* "kernel_time_s: <seconds>" */
static inline void print_kernel_time(double seconds)
{
    printf("kernel_time_s: %.6f\n", seconds);
}

/* "checksum: <value>", integer checksum */
static inline void print_checksum_u64(uint64_t checksum)
{
    printf("checksum: %" PRIu64 "\n", checksum);
}

/* "checksum: <value>", floating-point checksum (all 17 digits) */
static inline void print_checksum_f64(double checksum)
{
    printf("checksum: %.17g\n", checksum);
}

/* "validation: OK" (the program then exits with status 0) */
static inline void print_validation_ok(void)
{
    printf("validation: OK\n");
}

/* "validation: FAILED <reason>" (the program then exits with status 1) */
PINBENCH_PRINTF(1, 2)
static inline void print_validation_failed(const char *fmt, ...)
{
    va_list ap;
    printf("validation: FAILED ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

/* ---- end of output */

/* 64-byte aligned allocation (size rounded up to a multiple of 64); on
 * failure the run fails validation with exit status 1. */
static inline void *xalloc(size_t bytes)
{
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) {
        print_validation_failed("cannot allocate %zu bytes", bytes);
        exit(1);
    }
    return p;
}

#endif /* PINBENCH_COMMON_H */
