/* A program that misbehaves as its arguments say, several ways at once (issue 40): the fuzz
 * test of the measuring path (tests/test_fuzz_measure.py) and perf/fault_injection.py run it
 * with the behaviours tests/misbehaviours.py draws.
 *
 *   misbehave [WORD...]   each WORD is KEY=VALUE, done in this order:
 *     log=PATH       append this process's pid to PATH (the runs it made)
 *     trigger=PATH   claim the file PATH (rename it) if it is there and take its words too
 *     spin=MS        every OpenMP thread spins MS milliseconds (default 0)
 *     rebind=1       every OpenMP thread moves itself (sched_setaffinity) to a CPU it was
 *                    not allowed at the start (the first other CPU of the machine), or to
 *                    its allowed set's last CPU when it had every CPU
 *     noise=N        N bytes of random hex on stdout, 64 a line
 *     flood=N        N bytes of 'x' on stdout, 4096 a line
 *     binary=1       bytes that are not text on both streams: CR, a form feed, NEL, then
 *                    a last line of NUL, invalid UTF-8, ESC sequences and BEL
 *     time=HEX       the printed time's text, hex-encoded (any bytes; "" for an empty one)
 *     times=K        print the time line K times (default 1; 0: no time line)
 *     stream=1|2     the time line on stdout (1, default) or stderr (2)
 *     metric=HEX     print "rate: " and this text (hex-encoded, as time's)
 *     validate=0|1   print "validation: OK" (default 1)
 *     child=1        fork a child that sleeps 30 s, left running (its pid appended to
 *                    PATH.children with log=PATH)
 *     stop=WHO       WHO is launcher or self, with SIGSTOP; launcher-tstp or self-tstp with
 *                    SIGTSTP: a stop of the program's launcher (its parent) or of itself;
 *                    launcher-kill: SIGKILL to its launcher
 *     sleep=S        sleep S seconds (a float: past a short timeout)
 *     signal=N       raise signal N
 *     exit=N         exit with status N (default 0)
 */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORDS 64

static char *words[MAX_WORDS];
static int n_words;
static char trigger_words[1 << 16];

static const char *value(const char *key)
{
    size_t len = strlen(key);
    const char *found = NULL;
    for (int i = 0; i < n_words; i++)
        if (strncmp(words[i], key, len) == 0 && words[i][len] == '=')
            found = words[i] + len + 1; /* the last one wins: a trigger's over the command's */
    return found;
}

static double number(const char *key, double otherwise)
{
    const char *text = value(key);
    return text ? atof(text) : otherwise;
}

static void claim(const char *path)
{
    char claimed[4096];
    snprintf(claimed, sizeof claimed, "%s.%d", path, (int)getpid());
    if (rename(path, claimed) != 0)
        return;
    FILE *file = fopen(claimed, "r");
    if (!file)
        return;
    size_t len = fread(trigger_words, 1, sizeof trigger_words - 1, file);
    fclose(file);
    trigger_words[len] = '\0';
    for (char *word = strtok(trigger_words, " \n"); word && n_words < MAX_WORDS;
         word = strtok(NULL, " \n"))
        words[n_words++] = word;
}

static void rebind(void)
{
    cpu_set_t allowed, onto;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return;
    int target = -1, last = -1;
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    for (int cpu = 0; cpu < cpus && cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed) && target < 0)
            target = cpu;
        if (CPU_ISSET(cpu, &allowed))
            last = cpu;
    }
    CPU_ZERO(&onto);
    CPU_SET(target >= 0 ? target : last, &onto);
    sched_setaffinity(0, sizeof onto, &onto); /* may fail (a CPU not ours): it tried */
}

static int hex_digit(char c)
{
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* A line of ``prefix`` and the bytes ``hex`` encodes (none without ``hex``). */
static void print_hex(FILE *stream, const char *prefix, const char *hex)
{
    if (!hex)
        return;
    fputs(prefix, stream);
    for (size_t i = 0; hex[i] && hex[i + 1]; i += 2)
        fputc(hex_digit(hex[i]) << 4 | hex_digit(hex[i + 1]), stream);
    fputc('\n', stream);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc && n_words < MAX_WORDS; i++)
        words[n_words++] = argv[i];
    const char *log = value("log");
    if (log) {
        FILE *file = fopen(log, "a");
        if (!file)
            return 2;
        fprintf(file, "%d\n", (int)getpid());
        fclose(file);
    }
    if (value("trigger"))
        claim(value("trigger"));
    double spin_s = number("spin", 0) / 1000.0;
    int moves = (int)number("rebind", 0);
    long total = 0;
#pragma omp parallel reduction(+ : total)
    {
        if (moves)
            rebind();
        double end = omp_get_wtime() + spin_s;
        while (omp_get_wtime() < end) {
        }
        total += 1;
    }
    long noise = (long)number("noise", 0);
    for (long i = 0; i < noise; i++)
        printf("%x%s", rand() & 15, i % 64 == 63 ? "\n" : "");
    long flood = (long)number("flood", 0);
    static char line[4096];
    memset(line, 'x', sizeof line - 1);
    line[sizeof line - 1] = '\n';
    for (long left = flood; left > 0; left -= (long)sizeof line)
        fwrite(line, 1, left < (long)sizeof line ? (size_t)left : sizeof line, stdout);
    if (number("binary", 0)) {
        static const char junk[] = "\nback\r\f\x85" "bin\0\xff\xfe\xc3(\x1b[2J\x1b]0;title\a\n";
        fwrite(junk, 1, sizeof junk - 1, stdout);
        fwrite(junk, 1, sizeof junk - 1, stderr);
    }
    int times = (int)number("times", 1);
    FILE *stream = number("stream", 1) == 2 ? stderr : stdout;
    for (int i = 0; i < times; i++)
        print_hex(stream, "elapsed: ", value("time"));
    print_hex(stdout, "rate: ", value("metric"));
    printf("checksum: %ld\n", total);
    if (number("validate", 1))
        printf("validation: OK\n");
    fflush(stdout);
    fflush(stderr);
    if (number("child", 0) && fork() == 0) {
        if (log) {
            char children[4096];
            snprintf(children, sizeof children, "%s.children", log);
            FILE *file = fopen(children, "a");
            if (file) {
                fprintf(file, "%d\n", (int)getpid());
                fclose(file);
            }
        }
        sleep(30);
        _exit(0);
    }
    const char *stop = value("stop");
    if (stop) {
        int signum = strstr(stop, "tstp") ? SIGTSTP : strstr(stop, "kill") ? SIGKILL : SIGSTOP;
        kill(strncmp(stop, "self", 4) == 0 ? getpid() : getppid(), signum);
    }
    double sleep_s = number("sleep", 0);
    if (sleep_s > 0) {
        struct timespec pause = {(time_t)sleep_s, (long)((sleep_s - (time_t)sleep_s) * 1e9)};
        nanosleep(&pause, NULL);
    }
    if (value("signal"))
        raise((int)number("signal", 0));
    return (int)number("exit", 0);
}
