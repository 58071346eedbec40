/*
 * pinbench.cpp -- pinbench: an Intel Pin tool that writes the cache-line sharing
 * matrix of a program's threads, in the same format as the tsan runtime and the
 * Valgrind tool (pb_core.h does the counting, weighing and writing for all three).
 *
 * NOT COMPILED OR TESTED in the pinbench repository: Pin is not available there.
 * Written against the documented Pin 3.x API (pinatrace / MyPinTool conventions).
 *
 * Every memory operand of every instruction (read and/or written, predicated) calls
 * RecordAccess(thread, effective address, size) before the instruction; the access is
 * counted once for every line it touches, in the table of the running thread (Pin's
 * THREADID: creation order, main thread 0).  Tables are per thread and need no lock,
 * so the threads run in parallel; with -weight [parallel-]events the shared per-line
 * sharer state is updated under one lock.  The tables are merged and weighed at exit.
 *
 * With the parallel-* weights (the default) an access counts only while a parallel
 * region is open, as in the Valgrind tool: from the entry of one of the OpenMP
 * runtime's fork calls (pb_fork_fns, instrumented by name in every image) until the
 * calling thread's stack pointer is back above its value there, which an inlined check
 * at the head of every trace notices (a return address starts a trace; RTN IPOINT_AFTER
 * would miss GOMP_parallel's tail jump).  While any thread is inside one, every
 * thread's accesses count.
 *
 * Knobs:  -o PATH (required)  -json PATH  -weight [parallel-]common|min|events  -line BYTES
 *         -threads N (least matrix size)  -raw PATH (line,thread,count records)
 * Build:  make PIN_ROOT=<kit> obj-intel64/pinbench.so   (pinbench setup does it: pinbench/native.py)
 * Run:    $PIN_ROOT/pin -t obj-intel64/pinbench.so -o m.csv -- ./program args
 */
#include "pin.H"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <iostream>
#include <string>

static void *pb_calloc(uint64_t bytes)
{
    void *p = calloc(1, (size_t)bytes);
    if (!p) {
        fprintf(stderr, "pinbench: out of memory\n");
        PIN_ExitProcess(2);
    }
    return p;
}

static int pb_fwrite(FILE *f, const char *buf, uint32_t len)
{
    return fwrite(buf, 1, len, f) == len ? 0 : -1;
}

#define PB_ALLOC(bytes) pb_calloc(bytes)
#define PB_FREE(ptr, bytes) free(ptr)
#define PB_FILE FILE *
#define PB_NOFILE NULL
#define PB_OPEN(path) fopen((path), "w")
#define PB_WRITE(f, buf, len) pb_fwrite((f), (buf), (len))
#define PB_CLOSE(f) fclose(f)
#define PB_RENAME(a, b) rename((a), (b))

#define PB_FORK_CALLS
#include "../pb_core.h"

/* ------------------------------------------------------------------ knobs */

KNOB<std::string> KnobOut(KNOB_MODE_WRITEONCE, "pintool", "o", "", "matrix CSV (required)");
KNOB<std::string> KnobJson(KNOB_MODE_WRITEONCE, "pintool", "json", "",
                           "JSON sidecar [the -o path with extension .json]");
KNOB<std::string> KnobWeight(KNOB_MODE_WRITEONCE, "pintool", "weight", PB_WEIGHT_DEFAULT,
                             "weight definition: " PB_WEIGHT_CHOICES);
KNOB<std::string> KnobLine(KNOB_MODE_WRITEONCE, "pintool", "line", "64",
                           "cache line size in bytes (power of two, 8..4096)");
KNOB<UINT32> KnobThreads(KNOB_MODE_WRITEONCE, "pintool", "threads", "0",
                         "least matrix size [highest thread id + 1]");
KNOB<std::string> KnobRaw(KNOB_MODE_WRITEONCE, "pintool", "raw", "",
                          "also write line,thread,count records here");

/* ------------------------------------------------------------------ state */

static int pb_weight = PB_WEIGHT_COMMON;
static int pb_count = PB_COUNT_PARALLEL;
static int pb_shift = 6;
static std::string pb_csv, pb_json, pb_raw;
static uint64_t pb_start_ns;
static INT pb_pid;

static pb_tbl *pb_by_tid[PB_MAX_THREADS]; /* each written by its own thread only */
static pb_tbl *pb_tables;                 /* all tables, for pb_finish (under pb_lock) */
static pb_tbl pb_shared;                  /* weight=events: sharer state per line */
static PIN_LOCK pb_lock;

static pb_forks *pb_forks_by_tid[PB_MAX_THREADS]; /* the fork calls each thread is inside */
static uint64_t pb_watch[PB_MAX_THREADS];         /* pb_fork_watch of each thread */
static uint64_t pb_regions;                       /* parallel regions open, all threads */

static uint64_t pb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ analysis */

/* Pin's thread id, folded like the tracers' (PB_MAX_THREADS) */
static uint32_t pb_index(THREADID tid)
{
    return tid < PB_MAX_THREADS ? tid : PB_MAX_THREADS - 1;
}

static VOID PIN_FAST_ANALYSIS_CALL RecordAccess(THREADID tid, ADDRINT ea, UINT32 size)
{
    if (pb_count == PB_COUNT_PARALLEL && !__atomic_load_n(&pb_regions, __ATOMIC_RELAXED))
        return;
    pb_tbl *t = pb_by_tid[pb_index(tid)];
    if (!t)
        return; /* not expected: every thread starts with ThreadStart */
    uint64_t line = (uint64_t)ea >> pb_shift;
    uint64_t last = ((uint64_t)ea + (size ? size : 1) - 1) >> pb_shift;
    for (;; line++) {
        if (pb_weight == PB_WEIGHT_EVENTS) {
            PIN_GetLock(&pb_lock, (INT32)tid + 1);
            uint64_t *s = pb_tbl_counter(&pb_shared, line);
            *s = pb_event_update((uint32_t)*s, t->tid, t->ev);
            PIN_ReleaseLock(&pb_lock);
        }
        (*pb_tbl_counter(t, line))++;
        if (line == last)
            break;
    }
}

/* thread tid is at the entry of fork call k */
static VOID ForkEntered(THREADID tid, ADDRINT k, ADDRINT sp, ADDRINT arg3)
{
    pb_forks *f = pb_forks_by_tid[pb_index(tid)];
    __atomic_add_fetch(&pb_regions, (uint64_t)pb_fork_enter(f, (int)k, sp, arg3),
                       __ATOMIC_RELAXED);
    pb_watch[pb_index(tid)] = pb_fork_watch(f);
}

/* at a trace head: has thread tid's stack pointer risen above its innermost fork call? */
static ADDRINT PIN_FAST_ANALYSIS_CALL ForkMaybeReturned(THREADID tid, ADDRINT sp)
{
    return sp > pb_watch[pb_index(tid)];
}

static VOID ForkReturned(THREADID tid, ADDRINT sp)
{
    pb_forks *f = pb_forks_by_tid[pb_index(tid)];
    __atomic_sub_fetch(&pb_regions, (uint64_t)pb_fork_leave(f, sp), __ATOMIC_RELAXED);
    pb_watch[pb_index(tid)] = pb_fork_watch(f);
}

/* ------------------------------------------------------------------ instrumentation */

static VOID Image(IMG img, VOID *v)
{
    for (int k = 0; k < PB_FORK_FNS; k++) {
        RTN rtn = RTN_FindByName(img, pb_fork_fns[k].name);
        if (!RTN_Valid(rtn))
            continue;
        RTN_Open(rtn);
        RTN_InsertCall(rtn, IPOINT_BEFORE, (AFUNPTR)ForkEntered, IARG_THREAD_ID,
                       IARG_ADDRINT, (ADDRINT)k, IARG_REG_VALUE, REG_STACK_PTR,
                       IARG_FUNCARG_ENTRYPOINT_VALUE, 2, IARG_END);
        RTN_Close(rtn);
    }
}

static VOID Trace(TRACE trace, VOID *v)
{
    INS head = BBL_InsHead(TRACE_BblHead(trace));
    INS_InsertIfCall(head, IPOINT_BEFORE, (AFUNPTR)ForkMaybeReturned, IARG_FAST_ANALYSIS_CALL,
                     IARG_THREAD_ID, IARG_REG_VALUE, REG_STACK_PTR, IARG_END);
    INS_InsertThenCall(head, IPOINT_BEFORE, (AFUNPTR)ForkReturned, IARG_THREAD_ID,
                       IARG_REG_VALUE, REG_STACK_PTR, IARG_END);
}

static VOID Instruction(INS ins, VOID *v)
{
    /* vector gathers/scatters have no single effective address per operand
     * (IARG_MULTI_MEMORYACCESS_EA would give them): not counted, see README */
    if (INS_HasScatteredMemoryAccess(ins))
        return;
    UINT32 operands = INS_MemoryOperandCount(ins);
    for (UINT32 op = 0; op < operands; op++) {
        UINT32 size = INS_MemoryOperandSize(ins, op);
        if (INS_MemoryOperandIsRead(ins, op))
            INS_InsertPredicatedCall(ins, IPOINT_BEFORE, (AFUNPTR)RecordAccess,
                                     IARG_FAST_ANALYSIS_CALL, IARG_THREAD_ID,
                                     IARG_MEMORYOP_EA, op, IARG_UINT32, size, IARG_END);
        if (INS_MemoryOperandIsWritten(ins, op))
            INS_InsertPredicatedCall(ins, IPOINT_BEFORE, (AFUNPTR)RecordAccess,
                                     IARG_FAST_ANALYSIS_CALL, IARG_THREAD_ID,
                                     IARG_MEMORYOP_EA, op, IARG_UINT32, size, IARG_END);
    }
}

static VOID ThreadStart(THREADID tid, CONTEXT *ctxt, INT32 flags, VOID *v)
{
    uint32_t index = pb_index(tid);
    if (!pb_forks_by_tid[index])
        pb_forks_by_tid[index] = (pb_forks *)pb_calloc(sizeof(pb_forks));
    pb_tbl *t = (pb_tbl *)pb_calloc(sizeof *t);
    pb_tbl_init(t, index, pb_shift, 8);
    if (pb_weight == PB_WEIGHT_EVENTS)
        t->ev = (uint64_t *)pb_calloc(PB_MAX_THREADS * sizeof *t->ev);
    PIN_GetLock(&pb_lock, (INT32)tid + 1);
    t->next = pb_tables;
    pb_tables = t;
    if (!pb_by_tid[index])
        pb_by_tid[index] = t;
    PIN_ReleaseLock(&pb_lock);
}

/* a thread that exits inside fork calls leaves them */
static VOID ThreadFini(THREADID tid, const CONTEXT *ctxt, INT32 code, VOID *v)
{
    ForkReturned(tid, ~(ADDRINT)0);
}

static VOID Fini(INT32 code, VOID *v)
{
    if (PIN_GetPid() != pb_pid)
        return; /* a forked child */
    pb_result res;
    memset(&res, 0, sizeof res);
    res.tracer = "pin";
    res.thread_ids = "Pin thread id (creation order, main thread 0)";
    res.weight = pb_weight;
    res.count = pb_count;
    res.parallel = ("accesses made while a thread was inside an OpenMP fork call "
                    "(GOMP_parallel*, __kmpc_fork_call, ...) not asked for a team of one");
    res.line_shift = pb_shift;
    res.instrumented = -1; /* every instruction is seen: nothing compiled in */
    if (pb_finish(pb_tables, KnobThreads.Value(), &res, pb_csv.c_str(), pb_json.c_str(),
                  pb_raw.empty() ? NULL : pb_raw.c_str(), pb_now_ns, pb_start_ns) != 0)
        std::cerr << "pinbench: cannot write the matrix to " << pb_csv << std::endl;
}

static INT32 Usage(const std::string &problem)
{
    std::cerr << "pinbench: " << problem << std::endl
              << KNOB_BASE::StringKnobSummary() << std::endl;
    return 2;
}

int main(int argc, char *argv[])
{
    PIN_InitSymbols(); /* RTN_FindByName needs the images' symbols */
    if (PIN_Init(argc, argv))
        return Usage("bad command line");
    pb_csv = KnobOut.Value();
    if (pb_csv.empty())
        return Usage("-o PATH is required");
    if ((pb_weight = pb_parse_weight(KnobWeight.Value().c_str(), &pb_count)) < 0)
        return Usage("-weight must be " PB_WEIGHT_CHOICES);
    if ((pb_shift = pb_parse_line(KnobLine.Value().c_str())) < 0)
        return Usage("-line must be a power of two from 8 to 4096");
    if (KnobThreads.Value() > PB_MAX_THREADS)
        return Usage("-threads must be at most 4096");
    pb_json = KnobJson.Value();
    if (pb_json.empty()) { /* -o with its extension replaced by .json */
        size_t slash = pb_csv.rfind('/'), dot = pb_csv.rfind('.');
        pb_json = (dot != std::string::npos && (slash == std::string::npos || dot > slash))
                      ? pb_csv.substr(0, dot) + ".json"
                      : pb_csv + ".json";
    }
    pb_raw = KnobRaw.Value();
    PIN_InitLock(&pb_lock);
    if (pb_weight == PB_WEIGHT_EVENTS)
        pb_tbl_init(&pb_shared, 0, pb_shift, 12);
    pb_pid = PIN_GetPid();
    pb_start_ns = pb_now_ns();
    for (uint32_t i = 0; i < PB_MAX_THREADS; i++)
        pb_watch[i] = ~UINT64_C(0);

    INS_AddInstrumentFunction(Instruction, 0);
    if (pb_count == PB_COUNT_PARALLEL) {
        IMG_AddInstrumentFunction(Image, 0);
        TRACE_AddInstrumentFunction(Trace, 0);
    }
    PIN_AddThreadStartFunction(ThreadStart, 0);
    PIN_AddThreadFiniFunction(ThreadFini, 0);
    PIN_AddFiniFunction(Fini, 0);
    PIN_StartProgram(); /* never returns */
    return 0;
}
