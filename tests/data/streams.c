/*
 * streams.c -- pinbench test program: exact per-(line, thread) counts through the tsan
 * runtime's access path under the patterns that a per-thread shortcut (a cached line or
 * page) would have to get right.  It calls the ThreadSanitizer ABI itself (no
 * instrumentation), from 2 threads; each thread t works on its own block of memory:
 *
 *   1. runs: RUN consecutive 8-byte reads of every word of its run area (RUN x 8 accesses
 *      per 64-byte line, then the next line);
 *   2. streams: ROUNDS rounds over STREAMS interleaved streams of WORDS words each (the
 *      accesses alternate between lines STREAM_BYTES apart, over many pages of the
 *      table): stream s, word k read once per round (write for the last stream);
 *   3. straddles: an unaligned 8-byte read at every 64-byte boundary of its run area,
 *      after the last run (one access on each of the two lines);
 *   4. alternation: a word and the word one page (4 KiB) further, read in turn ALT
 *      times each (one line, another, back: a one-entry cache misses every time).
 *
 * It prints "base <address>" (the 4 KiB-aligned start of the memory) and nothing
 * else; tests/test_trace.py works out every line's expected count from these
 * constants (keep them in step).
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void __tsan_init(void);
void __tsan_func_entry(void *pc);
void __tsan_read8(void *addr);
void __tsan_write8(void *addr);
void __tsan_unaligned_read8(void *addr);

#define RUN 5
#define RUN_LINES 100
#define STREAMS 6
#define WORDS 4096          /* 32 KiB per stream: 512 lines, 8 pages of the table */
#define STREAM_BYTES (WORDS * 8)
#define ROUNDS 3
#define ALT 7
/* per thread: the run area, then the streams, then the alternating pair */
#define BLOCK (RUN_LINES * 64 + STREAMS * STREAM_BYTES + 2 * 4096)

/* what an instrumented module's constructor does: the runtime then knows compiled code
 * calls it */
__attribute__((constructor)) static void instrumented(void) { __tsan_init(); }

int main(void)
{
    char *mem = aligned_alloc(4096, 2 * BLOCK);
    if (!mem)
        return 1;
    printf("base %lu\n", (unsigned long)(uintptr_t)mem);
    int bad = 0;
#pragma omp parallel num_threads(2) reduction(+ : bad)
    {
        __tsan_func_entry(0);
        int t = omp_get_thread_num();
        bad += omp_get_num_threads() != 2 && t == 0;
        char *b = mem + (size_t)t * BLOCK;
        for (int w = 0; w < RUN_LINES * 8; w++)
            for (int i = 0; i < RUN; i++)
                __tsan_read8(b + 8 * w);
        char *s = b + RUN_LINES * 64;
        for (int r = 0; r < ROUNDS; r++)
            for (int k = 0; k < WORDS; k++)
                for (int q = 0; q < STREAMS; q++) {
                    char *a = s + (size_t)q * STREAM_BYTES + 8 * k;
                    if (q == STREAMS - 1)
                        __tsan_write8(a);
                    else
                        __tsan_read8(a);
                }
        for (int l = 1; l < RUN_LINES; l++)
            __tsan_unaligned_read8(b + 64 * l - 4);
        char *p = s + STREAMS * STREAM_BYTES;
        for (int i = 0; i < ALT; i++) {
            __tsan_read8(p);
            __tsan_read8(p + 4096);
        }
    }
    if (bad) {
        fprintf(stderr, "streams: needs 2 threads\n");
        return 1;
    }
    return 0;
}
