/*
 * constructs.c -- pinbench: EPCC-style overheads of OpenMP constructs.
 *
 * In the spirit of the EPCC OpenMP microbenchmarks (Bull, "Measuring
 * synchronisation and scheduling overheads in OpenMP", EWOMP 1999) as the
 * scalability study of Iwainsky et al. ("How many threads will be too many?",
 * Euro-Par 2015) uses them: the time of `reps` instances of one construct,
 * each around a short delay, minus the time of the same delays without the
 * construct (the reference), divided by `reps`, is the overhead of one
 * instance.
 *
 * Usage: ./constructs construct=NAME [quick|ref] [key=value ...]
 *   construct  parallel | for | barrier | reduction | single | critical |
 *              lock | atomic (default barrier); a name, unlike the other keys
 *   reps       construct instances timed            quick 2000   ref 20000
 *   delay      iterations of the delay loop         quick 50     ref 50
 *
 * For critical, lock and atomic each thread runs reps / N instances; critical
 * and lock serialise them (time per instance: over all N * (reps / N)),
 * atomic updates run side by side (time per instance: over reps / N, each
 * thread's own sequence); the reference runs reps delays.
 *
 * Output (common.h's lines, and three more before the checksum):
 *   params: size=... reps=... delay=... threads=N
 *   kernel_time_s: <the timed construct loop>
 *   time_per_instance_s: <kernel time / reps>
 *   reference_us: <one delay, serial>
 *   overhead_us: <time per instance - reference>   (EPCC's overhead; may be < 0)
 *   checksum: <instances counted>
 *   validation: OK
 * Validation: every construct counts its instances (a reduction, or an update
 * inside the exclusive region); the count must be exactly what was asked.
 */
#include "common.h"

static param P[] = {
    {"reps", 2000, 20000, 1, 100000000, 0},
    {"delay", 50, 50, 0, 100000000, 0},
};

static const char *NAMES[] = {"parallel", "for", "barrier", "reduction",
                              "single", "critical", "lock", "atomic"};
enum { PARALLEL, FOR, BARRIER, REDUCTION, SINGLE, CRITICAL, LOCK, ATOMIC, NCONSTRUCTS };

/* a short delay the compiler cannot remove */
static void delay(long n)
{
    volatile double a = 0.0;
    for (long i = 0; i < n; i++)
        a += (double)i;
    (void)a;
}

/* construct=NAME: its index; the token is removed from argv for parse_args */
static int take_construct(int *argc, char **argv)
{
    int found = BARRIER;
    for (int i = 1; i < *argc; i++) {
        if (strncmp(argv[i], "construct=", 10))
            continue;
        found = -1;
        for (int k = 0; k < NCONSTRUCTS; k++)
            if (!strcmp(argv[i] + 10, NAMES[k]))
                found = k;
        if (found < 0)
            usage(argv[0], P, NPARAMS(P), "unknown construct '%s' (parallel, for, barrier, "
                  "reduction, single, critical, lock, atomic)", argv[i] + 10);
        for (int j = i; j + 1 < *argc; j++)
            argv[j] = argv[j + 1];
        (*argc)--;
        i--;
    }
    return found;
}

int main(int argc, char **argv)
{
    int construct = take_construct(&argc, argv);
    const char *size = parse_args(argc, argv, P, NPARAMS(P));
    const long reps = (long)P[0].val, d = (long)P[1].val;
    int nthreads = 0;
    long count = 0, expect = reps;
    omp_lock_t lock;
    omp_init_lock(&lock);

#pragma omp parallel /* start the team before timing */
    {
#pragma omp single
        nthreads = omp_get_num_threads();
    }
    double r0 = omp_get_wtime();
    for (long k = 0; k < reps; k++)
        delay(d);
    double reference = (omp_get_wtime() - r0) / (double)reps;

    double t0 = omp_get_wtime();
    switch (construct) {
    case PARALLEL:
        for (long k = 0; k < reps; k++) {
#pragma omp parallel reduction(+ : count)
            {
                delay(d);
                count += omp_get_thread_num() == 0;
            }
        }
        break;
    case FOR:
#pragma omp parallel reduction(+ : count)
        for (long k = 0; k < reps; k++) {
#pragma omp for schedule(static)
            for (int i = 0; i < nthreads; i++)
                delay(d);
            count += omp_get_thread_num() == 0;
        }
        break;
    case BARRIER:
#pragma omp parallel reduction(+ : count)
        for (long k = 0; k < reps; k++) {
            delay(d);
#pragma omp barrier
            count += omp_get_thread_num() == 0;
        }
        break;
    case REDUCTION:
        for (long k = 0; k < reps; k++) {
            long one = 0;
#pragma omp parallel reduction(+ : one)
            {
                delay(d);
                one += 1;
            }
            count += one == nthreads;
        }
        break;
    case SINGLE:
#pragma omp parallel
        for (long k = 0; k < reps; k++) {
#pragma omp single
            {
                delay(d);
                count++;
            }
        }
        break;
    case CRITICAL:
        expect = reps / nthreads * nthreads;
#pragma omp parallel
        for (long k = 0; k < reps / nthreads; k++) {
#pragma omp critical
            {
                delay(d);
                count++;
            }
        }
        break;
    case LOCK:
        expect = reps / nthreads * nthreads;
#pragma omp parallel
        for (long k = 0; k < reps / nthreads; k++) {
            omp_set_lock(&lock);
            delay(d);
            count++;
            omp_unset_lock(&lock);
        }
        break;
    case ATOMIC:
        expect = reps / nthreads * nthreads;
#pragma omp parallel
        for (long k = 0; k < reps / nthreads; k++) {
            delay(d);
#pragma omp atomic
            count++;
        }
        break;
    }
    double t1 = omp_get_wtime();
    omp_destroy_lock(&lock);
    long timed = construct == ATOMIC ? expect / nthreads : expect;
    double per_instance = (t1 - t0) / (double)(timed ? timed : 1);

    print_params(size, P, NPARAMS(P), nthreads);
    print_kernel_time(t1 - t0);
    printf("construct: %s\n", NAMES[construct]);
    printf("time_per_instance_s: %.6e\n", per_instance);
    printf("reference_us: %.6f\n", reference * 1e6);
    printf("overhead_us: %.6f\n", (per_instance - reference) * 1e6);
    print_checksum_u64((uint64_t)count);
    if (count == expect && expect > 0) {
        print_validation_ok();
        return 0;
    }
    print_validation_failed("%ld instances counted, %ld expected", count, expect);
    return 1;
}
