/*
 * vg_pinbench.c -- pinbench: a Valgrind tool that writes the cache-line sharing
 * matrix of a program that cannot be rebuilt.
 *
 * Every load, store, guarded load/store, CAS, LL/SC and memory-touching dirty
 * helper of the client (all its code: the program, libc, the OpenMP runtime, the
 * dynamic loader) calls pb_access(addr, size) before it executes; the access is
 * counted once for every line it touches, in a table of the running thread
 * (pb_core.h).  Valgrind runs one thread at a time, so the current thread's table
 * is switched when the scheduler starts a thread (track_start_client_code) and
 * no locking is needed.  Thread i is the (i+1)-th thread Valgrind created (the
 * main thread is 0): the OpenMP thread number of the first team for libgomp and
 * libomp, whose worker threads start in order and live until the end.
 *
 * With the parallel-* weights (the default) an access counts only while a parallel
 * region is open: from the first instruction of one of the OpenMP runtime's fork calls
 * (pb_fork_fns: GOMP_parallel*, __kmpc_fork_call, ...; found by the entry addresses of
 * the debug info) until its caller's stack pointer is back above its value there,
 * which a guarded check at the start of every superblock notices.  While any thread
 * is inside one, every thread's accesses count (the workers only run team work then);
 * fork calls whose team was asked to be of one thread open no region.
 *
 * Options (command line, else the environment variable, else the default):
 *   --out=PATH          PINBENCH_TRACE_OUT      matrix CSV (required)
 *   --json=PATH         PINBENCH_TRACE_JSON     sidecar (OUT with extension .json)
 *   --weight=W          PINBENCH_TRACE_WEIGHT   [parallel-]common | [parallel-]min |
 *                                               [parallel-]events (parallel-common)
 *   --line-bytes=B      PINBENCH_TRACE_LINE     power of two 8..4096 (64)
 *   --threads=N         PINBENCH_TRACE_THREADS  least matrix size
 *   --raw=PATH          PINBENCH_TRACE_RAW      "line,thread,count" records
 *   --regions=PATH      PINBENCH_TRACE_REGIONS  per parallel region too: the list of
 *                                               regions, their matrices beside it
 *
 * Per region: a region is the return address of a fork call that opens one (read from
 * the stack at the call's first instruction: the program's call site, also through the
 * PLT); the region opened last and not yet closed is the one every thread's accesses
 * count toward (nested regions: the innermost), each thread keeping a table per region;
 * instances and Valgrind's wall time (milliseconds) per region.
 *
 * Built out of tree against Debian's valgrind package only (headers in
 * /usr/include/valgrind, libcoregrind and libvex in /usr/lib/x86_64-linux-gnu/valgrind);
 * pinbench/native.py has the exact command lines and makes VALGRIND_LIB.
 */
#include <stddef.h> /* offsetof (the compiler's header) */

#include "libvex_guest_amd64.h"
#include "pub_tool_basics.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_vki.h"

typedef ULong uint64_t;
typedef Long int64_t;
typedef UInt uint32_t;
typedef UWord uintptr_t;
#define UINT64_C(x) x##ULL

static void *pb_calloc(uint64_t bytes)
{
    return VG_(calloc)("pinbench.table", 1, (SizeT)bytes);
}

static Int pb_open(const char *path)
{
    SysRes r = VG_(open)(path, VKI_O_CREAT | VKI_O_TRUNC | VKI_O_WRONLY, 0644);
    return sr_isError(r) ? -1 : (Int)sr_Res(r);
}

static Int pb_write_all(Int fd, const char *buf, uint32_t len)
{
    while (len) {
        Int n = VG_(write)(fd, buf, (Int)len);
        if (n <= 0)
            return -1;
        buf += n, len -= (uint32_t)n;
    }
    return 0;
}

static Int pb_close(Int fd)
{
    VG_(close)(fd);
    return 0;
}

#define PB_ALLOC(bytes) pb_calloc(bytes)
#define PB_FREE(ptr, bytes) VG_(free)(ptr)
#define PB_FILE Int
#define PB_NOFILE (-1)
#define PB_OPEN(path) pb_open(path)
#define PB_WRITE(f, buf, len) pb_write_all((f), (buf), (len))
#define PB_CLOSE(f) pb_close(f)
#define PB_RENAME(a, b) VG_(rename)((a), (b))

#define PB_FORK_CALLS
#include "pb_core.h"

/* ------------------------------------------------------------------ options and state */

static const HChar *clo_out, *clo_json, *clo_weight, *clo_line, *clo_threads, *clo_raw;
static const HChar *clo_regions;

static int pb_weight = PB_WEIGHT_COMMON, pb_count = PB_COUNT_PARALLEL, pb_shift = 6;
static uint64_t pb_min_threads;
static HChar pb_json[4096];
static uint64_t pb_start_ns;
static Int pb_pid;

typedef struct pb_thread {
    pb_tbl *tbl;        /* its counts (in region `region`) */
    uint32_t region;
    pb_tbl **by_region; /* per region (--regions): its tables, made on demand */
    pb_forks forks;     /* the fork calls it is inside */
} pb_thread;

static pb_thread **pb_by_tid; /* by Valgrind ThreadId */
static uint32_t pb_ntid;      /* size of pb_by_tid */
static pb_tbl *pb_tables;     /* all tables, for pb_finish */
static pb_thread *pb_cur;     /* the running thread */
static pb_tbl pb_shared;      /* weight=events: per line the two most recent sharers */
static uint64_t pb_regions;   /* parallel regions open now, in all threads */
static uint64_t pb_watch_sp = ~UINT64_C(0); /* the running thread's pb_fork_watch */

/* per region (--regions; pb_core.h, pb_region): the regions seen, the one open now, and
 * the regions open, innermost last, with the region each replaced and when it opened */
static pb_region pb_rg[PB_MAX_REGIONS];
static const HChar *pb_rg_module[PB_MAX_REGIONS]; /* each call site's module ... */
static uintptr_t pb_rg_bias[PB_MAX_REGIONS];      /* ... and its load bias */
static int pb_nrg = 1;
static uint32_t pb_region_now;
#define PB_OPEN_MAX 64
static struct {
    uint32_t prev;
    uint64_t t0;
} pb_open_rg[PB_OPEN_MAX];
static int pb_nopen;

static uint64_t pb_now_ns(void)
{
    return (uint64_t)VG_(read_millisecond_timer)() * 1000000ULL;
}

static Bool pb_process_cmd_line_option(const HChar *arg)
{
    if VG_STR_CLO(arg, "--out", clo_out) {}
    else if VG_STR_CLO(arg, "--json", clo_json) {}
    else if VG_STR_CLO(arg, "--weight", clo_weight) {}
    else if VG_STR_CLO(arg, "--line-bytes", clo_line) {}
    else if VG_STR_CLO(arg, "--threads", clo_threads) {}
    else if VG_STR_CLO(arg, "--raw", clo_raw) {}
    else if VG_STR_CLO(arg, "--regions", clo_regions) {}
    else
        return False;
    return True;
}

static void pb_print_usage(void)
{
    VG_(printf)(
        "    --out=PATH            matrix CSV [$PINBENCH_TRACE_OUT]\n"
        "    --json=PATH           JSON sidecar [OUT with extension .json]\n"
        "    --weight=W            weight definition, " PB_WEIGHT_CHOICES "\n"
        "                          [" PB_WEIGHT_DEFAULT "]\n"
        "    --line-bytes=B        cache line size, power of two 8..4096 [64]\n"
        "    --threads=N           least matrix size [highest thread + 1]\n"
        "    --raw=PATH            also write line,thread,count records\n"
        "    --regions=PATH        also per parallel region: their list, matrices beside it\n");
}

static void pb_print_debug_usage(void) {}

static void pb_bad(const HChar *what, const HChar *value)
{
    VG_(fmsg)("pinbench: bad %s '%s'\n", what, value);
    VG_(exit)(2);
}

/* command-line value, else the environment's, else NULL */
static const HChar *pb_opt(const HChar *clo, const HChar *env)
{
    if (clo && *clo)
        return clo;
    const HChar *v = VG_(getenv)(env);
    return v && *v ? v : NULL;
}

static void pb_post_clo_init(void)
{
    const HChar *v;
    if ((v = pb_opt(clo_weight, "PINBENCH_TRACE_WEIGHT")) &&
        (pb_weight = pb_parse_weight(v, &pb_count)) < 0)
        pb_bad("weight (" PB_WEIGHT_CHOICES ")", v);
    if ((v = pb_opt(clo_line, "PINBENCH_TRACE_LINE")) && (pb_shift = pb_parse_line(v)) < 0)
        pb_bad("line size (power of two 8..4096)", v);
    if ((v = pb_opt(clo_threads, "PINBENCH_TRACE_THREADS"))) {
        long long n = pb_parse_uint(v);
        if (n < 1 || n > PB_MAX_THREADS)
            pb_bad("thread count (1..4096)", v);
        pb_min_threads = (uint64_t)n;
    }
    clo_out = pb_opt(clo_out, "PINBENCH_TRACE_OUT");
    if (!clo_out)
        pb_bad("output: give --out=PATH or PINBENCH_TRACE_OUT", "");
    clo_raw = pb_opt(clo_raw, "PINBENCH_TRACE_RAW");
    clo_regions = pb_opt(clo_regions, "PINBENCH_TRACE_REGIONS");
    if (clo_regions && VG_(strlen)(clo_regions) + 16 > 4200)
        pb_bad("regions path (too long)", clo_regions);
    const HChar *json = pb_opt(clo_json, "PINBENCH_TRACE_JSON");
    const HChar *src = json ? json : clo_out;
    SizeT n = VG_(strlen)(src);
    if (n + 6 > sizeof pb_json)
        pb_bad("output path (too long)", src);
    VG_(strcpy)(pb_json, src);
    if (!json) { /* OUT with its extension replaced by .json */
        SizeT dot = n;
        for (SizeT i = n; i-- > 0 && pb_json[i] != '/';)
            if (pb_json[i] == '.') {
                dot = i;
                break;
            }
        VG_(strcpy)(pb_json + dot, ".json");
    }
    if (pb_weight == PB_WEIGHT_EVENTS)
        pb_tbl_init(&pb_shared, 0, pb_shift, 12);
    pb_pid = VG_(getpid)();
    pb_start_ns = pb_now_ns();
}

/* ------------------------------------------------------------------ threads */

static pb_thread *pb_thread_of(ThreadId tid)
{
    if (tid >= pb_ntid) {
        uint32_t n = pb_ntid ? pb_ntid : 64;
        while (n <= tid)
            n *= 2;
        pb_thread **a = (pb_thread **)pb_calloc(n * sizeof *a);
        for (uint32_t i = 0; i < pb_ntid; i++)
            a[i] = pb_by_tid[i];
        if (pb_by_tid)
            VG_(free)(pb_by_tid);
        pb_by_tid = a;
        pb_ntid = n;
    }
    if (!pb_by_tid[tid]) {
        uint32_t index = tid >= 1 ? tid - 1 : 0;
        if (index >= PB_MAX_THREADS)
            index = PB_MAX_THREADS - 1;
        pb_thread *th = (pb_thread *)pb_calloc(sizeof *th);
        pb_tbl *t = th->tbl = (pb_tbl *)pb_calloc(sizeof *t);
        pb_tbl_init(t, index, pb_shift, 8);
        if (pb_weight == PB_WEIGHT_EVENTS)
            t->ev = (uint64_t *)pb_calloc(PB_MAX_THREADS * sizeof *t->ev);
        t->next = pb_tables;
        pb_tables = t;
        pb_by_tid[tid] = th;
    }
    return pb_by_tid[tid];
}

static void pb_start_client_code(ThreadId tid, ULong blocks_done)
{
    (void)blocks_done;
    pb_cur = pb_thread_of(tid);
    pb_watch_sp = pb_fork_watch(&pb_cur->forks);
}

/* the running thread (client code before the first thread start is not expected) */
static pb_thread *pb_running(void)
{
    return pb_cur ? pb_cur : (pb_cur = pb_thread_of(VG_(get_running_tid)()));
}

static void pb_regions_closed(int closed);

/* a thread that exits inside fork calls leaves them */
static void pb_thread_exit(ThreadId tid)
{
    if (tid < pb_ntid && pb_by_tid[tid]) {
        int closed = pb_fork_leave(&pb_by_tid[tid]->forks, ~UINT64_C(0));
        pb_regions -= closed;
        pb_regions_closed(closed);
    }
}

/* ------------------------------------------------------------------ parallel regions */

/* the region of fork call site `ra`, registered with its module when new (0 beyond
 * PB_MAX_REGIONS) */
static uint32_t pb_region_of(uintptr_t ra)
{
    for (int r = 1; r < pb_nrg; r++)
        if (pb_rg[r].ra == ra)
            return (uint32_t)r;
    if (pb_nrg == PB_MAX_REGIONS)
        return 0;
    DebugInfo *di = VG_(find_DebugInfo)(VG_(current_DiEpoch)(), ra);
    pb_rg[pb_nrg].ra = ra;
    pb_rg_module[pb_nrg] = di ? VG_(strdup)("pinbench.module", VG_(DebugInfo_get_filename)(di))
                              : "";
    pb_rg_bias[pb_nrg] = di ? (uintptr_t)VG_(DebugInfo_get_text_bias)(di) : 0;
    return (uint32_t)pb_nrg++;
}

static void pb_region_module(uintptr_t ra, const char **module, uintptr_t *bias)
{
    for (int r = 1; r < pb_nrg; r++)
        if (pb_rg[r].ra == ra) {
            *module = pb_rg_module[r];
            *bias = pb_rg_bias[r];
        }
}

/* `closed` regions closed (their calls returned): count their instances and time */
static void pb_regions_closed(int closed)
{
    for (; closed > 0 && clo_regions && pb_nopen; closed--) {
        pb_nopen--;
        pb_rg[pb_region_now].instances++;
        pb_rg[pb_region_now].time_ns += pb_now_ns() - pb_open_rg[pb_nopen].t0;
        pb_region_now = pb_open_rg[pb_nopen].prev;
    }
}

/* the running thread is at the first instruction of fork call k */
static VG_REGPARM(3) void pb_fork_entered(HWord k, HWord sp, HWord arg3)
{
    pb_thread *th = pb_running();
    int opened = pb_fork_enter(&th->forks, (int)k, sp, arg3);
    pb_regions += opened;
    pb_watch_sp = pb_fork_watch(&th->forks);
    if (opened && clo_regions && pb_nopen < PB_OPEN_MAX) {
        pb_open_rg[pb_nopen].prev = pb_region_now;
        pb_open_rg[pb_nopen].t0 = pb_now_ns();
        pb_nopen++;
        pb_region_now = pb_region_of(*(const uintptr_t *)sp); /* the return address */
    }
}

/* the running thread's stack pointer is above pb_watch_sp at a superblock's start */
static VG_REGPARM(1) void pb_fork_returned(HWord sp)
{
    pb_thread *th = pb_running();
    int closed = pb_fork_leave(&th->forks, sp);
    pb_regions -= closed;
    pb_regions_closed(closed);
    pb_watch_sp = pb_fork_watch(&th->forks);
}

/* the table of thread `th` in the region open now (made on demand) */
static pb_tbl *pb_region_table(pb_thread *th)
{
    if (!th->by_region) {
        th->by_region = (pb_tbl **)pb_calloc(PB_MAX_REGIONS * sizeof *th->by_region);
        th->by_region[th->region] = th->tbl;
    }
    pb_tbl *t = th->by_region[pb_region_now];
    if (!t) {
        t = th->by_region[pb_region_now] = (pb_tbl *)pb_calloc(sizeof *t);
        pb_tbl_init(t, th->tbl->tid, pb_shift, 8);
        t->region = pb_region_now;
        if (pb_weight == PB_WEIGHT_EVENTS)
            t->ev = (uint64_t *)pb_calloc(PB_MAX_THREADS * sizeof *t->ev);
        t->next = pb_tables;
        pb_tables = t;
    }
    th->region = pb_region_now;
    return th->tbl = t;
}

/* at a superblock's start: if SP > pb_watch_sp, call pb_fork_returned(SP) */
static void pb_add_return_check(IRSB *sb, const VexGuestLayout *layout)
{
    IRTemp sp = newIRTemp(sb->tyenv, Ity_I64), watch = newIRTemp(sb->tyenv, Ity_I64);
    IRTemp above = newIRTemp(sb->tyenv, Ity_I1);
    addStmtToIRSB(sb, IRStmt_WrTmp(sp, IRExpr_Get(layout->offset_SP, Ity_I64)));
    addStmtToIRSB(sb, IRStmt_WrTmp(watch, IRExpr_Load(Iend_LE, Ity_I64,
                                                      mkIRExpr_HWord((HWord)&pb_watch_sp))));
    addStmtToIRSB(sb, IRStmt_WrTmp(above, IRExpr_Binop(Iop_CmpLT64U, IRExpr_RdTmp(watch),
                                                       IRExpr_RdTmp(sp))));
    IRDirty *di = unsafeIRDirty_0_N(1, "pb_fork_returned", VG_(fnptr_to_fnentry)(pb_fork_returned),
                                    mkIRExprVec_1(IRExpr_RdTmp(sp)));
    di->guard = IRExpr_RdTmp(above);
    addStmtToIRSB(sb, IRStmt_Dirty(di));
}

/* before the instruction at `addr`: if it is the entry of a fork call, pb_fork_entered */
static void pb_add_entry_hook(IRSB *sb, const VexGuestLayout *layout, Addr addr)
{
    const HChar *name;
    int k;
    if (!VG_(get_fnname_if_entry)(VG_(current_DiEpoch)(), addr, &name) ||
        (k = pb_fork_lookup(name)) < 0)
        return;
    IRTemp sp = newIRTemp(sb->tyenv, Ity_I64), arg3 = newIRTemp(sb->tyenv, Ity_I64);
    addStmtToIRSB(sb, IRStmt_WrTmp(sp, IRExpr_Get(layout->offset_SP, Ity_I64)));
    addStmtToIRSB(sb, IRStmt_WrTmp(arg3, IRExpr_Get((Int)offsetof(VexGuestAMD64State, guest_RDX),
                                                    Ity_I64)));
    IRExpr **args = mkIRExprVec_3(mkIRExpr_HWord((HWord)k), IRExpr_RdTmp(sp), IRExpr_RdTmp(arg3));
    addStmtToIRSB(sb, IRStmt_Dirty(unsafeIRDirty_0_N(
                          3, "pb_fork_entered", VG_(fnptr_to_fnentry)(pb_fork_entered), args)));
}

/* ------------------------------------------------------------------ the access path */

static VG_REGPARM(2) void pb_access(Addr a, SizeT size)
{
    if (pb_count == PB_COUNT_PARALLEL && !pb_regions)
        return;
    pb_thread *th = pb_running();
    pb_tbl *t = th->region == pb_region_now ? th->tbl : pb_region_table(th);
    uint64_t line = a >> pb_shift, last = (a + (size ? size : 1) - 1) >> pb_shift;
    for (;; line++) {
        if (pb_weight == PB_WEIGHT_EVENTS) {
            uint64_t *s = pb_tbl_counter(&pb_shared, line);
            *s = pb_event_update((uint32_t)*s, t->tid, t->ev);
        }
        (*pb_tbl_counter(t, line))++;
        if (line == last)
            break;
    }
}

static void pb_add_call(IRSB *sb, IRExpr *addr, Int size, IRExpr *guard)
{
    IRExpr **args = mkIRExprVec_2(addr, mkIRExpr_HWord((HWord)size));
    IRDirty *di = unsafeIRDirty_0_N(2, "pb_access", VG_(fnptr_to_fnentry)(pb_access), args);
    if (guard)
        di->guard = guard;
    addStmtToIRSB(sb, IRStmt_Dirty(di));
}

static IRSB *pb_instrument(VgCallbackClosure *closure, IRSB *sbIn, const VexGuestLayout *layout,
                           const VexGuestExtents *vge, const VexArchInfo *archinfo_host,
                           IRType gWordTy, IRType hWordTy)
{
    (void)closure, (void)vge, (void)archinfo_host;
    if (gWordTy != hWordTy)
        VG_(tool_panic)("host/guest word size mismatch");
    IRTypeEnv *tyenv = sbIn->tyenv;
    IRSB *sbOut = deepCopyIRSBExceptStmts(sbIn);
    Bool first = True;
    for (Int i = 0; i < sbIn->stmts_used; i++) {
        IRStmt *st = sbIn->stmts[i];
        if (!st || st->tag == Ist_NoOp)
            continue;
        IRStmt *after = NULL; /* a call to add after the statement (SC) */
        switch (st->tag) {
        case Ist_IMark:
            if (pb_count == PB_COUNT_PARALLEL) {
                addStmtToIRSB(sbOut, st);
                if (first)
                    pb_add_return_check(sbOut, layout);
                pb_add_entry_hook(sbOut, layout, st->Ist.IMark.addr);
                first = False;
                continue;
            }
            break;
        case Ist_WrTmp: {
            IRExpr *data = st->Ist.WrTmp.data;
            if (data->tag == Iex_Load)
                pb_add_call(sbOut, data->Iex.Load.addr, sizeofIRType(data->Iex.Load.ty), NULL);
            break;
        }
        case Ist_Store:
            pb_add_call(sbOut, st->Ist.Store.addr,
                        sizeofIRType(typeOfIRExpr(tyenv, st->Ist.Store.data)), NULL);
            break;
        case Ist_StoreG: {
            IRStoreG *sg = st->Ist.StoreG.details;
            pb_add_call(sbOut, sg->addr, sizeofIRType(typeOfIRExpr(tyenv, sg->data)),
                        sg->guard);
            break;
        }
        case Ist_LoadG: {
            IRLoadG *lg = st->Ist.LoadG.details;
            IRType type = Ity_INVALID, wide = Ity_INVALID;
            typeOfIRLoadGOp(lg->cvt, &wide, &type);
            tl_assert(type != Ity_INVALID);
            pb_add_call(sbOut, lg->addr, sizeofIRType(type), lg->guard);
            break;
        }
        case Ist_Dirty: {
            IRDirty *d = st->Ist.Dirty.details;
            if (d->mFx != Ifx_None) {
                if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
                    pb_add_call(sbOut, d->mAddr, d->mSize, NULL);
                if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
                    pb_add_call(sbOut, d->mAddr, d->mSize, NULL);
            }
            break;
        }
        case Ist_CAS: { /* a read and a write of the location */
            IRCAS *cas = st->Ist.CAS.details;
            Int size = sizeofIRType(typeOfIRExpr(tyenv, cas->dataLo));
            if (cas->dataHi)
                size *= 2;
            pb_add_call(sbOut, cas->addr, size, NULL);
            pb_add_call(sbOut, cas->addr, size, NULL);
            break;
        }
        case Ist_LLSC:
            if (st->Ist.LLSC.storedata == NULL) { /* LL: count before it */
                pb_add_call(sbOut, st->Ist.LLSC.addr,
                            sizeofIRType(typeOfIRTemp(tyenv, st->Ist.LLSC.result)), NULL);
            } else { /* SC: count after it, nothing between LL and SC */
                IRExpr **args = mkIRExprVec_2(
                    st->Ist.LLSC.addr,
                    mkIRExpr_HWord((HWord)sizeofIRType(typeOfIRExpr(tyenv, st->Ist.LLSC.storedata))));
                after = IRStmt_Dirty(unsafeIRDirty_0_N(2, "pb_access",
                                                       VG_(fnptr_to_fnentry)(pb_access), args));
            }
            break;
        default:
            break;
        }
        addStmtToIRSB(sbOut, st);
        if (after)
            addStmtToIRSB(sbOut, after);
    }
    return sbOut;
}

/* ------------------------------------------------------------------ exit */

static void pb_fini(Int exitcode)
{
    (void)exitcode;
    if (VG_(getpid)() != pb_pid)
        return; /* a forked child */
    pb_result res;
    VG_(memset)(&res, 0, sizeof res);
    res.tracer = "valgrind";
    res.thread_ids = "Valgrind thread creation order (main thread 0)";
    res.weight = pb_weight;
    res.count = pb_count;
    res.parallel = ("accesses made while a thread was inside an OpenMP fork call "
                    "(GOMP_parallel*, __kmpc_fork_call, ...) not asked for a team of one");
    res.line_shift = pb_shift;
    res.instrumented = -1; /* every instruction is seen: nothing compiled in */
    pb_result like = res;
    if (pb_finish(pb_tables, pb_min_threads, &res, clo_out, pb_json, clo_raw, pb_now_ns,
                  pb_start_ns) != 0)
        VG_(umsg)("pinbench: cannot write the matrix to %s\n", clo_out);
    if (clo_regions && pb_regions_write(pb_tables, pb_nrg, pb_rg, pb_region_module,
                                        pb_min_threads, &like, clo_regions, pb_now_ns,
                                        pb_start_ns) != 0)
        VG_(umsg)("pinbench: cannot write the regions to %s\n", clo_regions);
}

static void pb_pre_clo_init(void)
{
    VG_(details_name)("pinbench");
    VG_(details_version)(NULL);
    VG_(details_description)("the cache-line sharing matrix of a program's threads");
    VG_(details_copyright_author)("pinbench; uses Valgrind's tool interface (GPL)");
    VG_(details_bug_reports_to)("the pinbench maintainers");
    VG_(details_avg_translation_sizeB)(275);
    VG_(basic_tool_funcs)(pb_post_clo_init, pb_instrument, pb_fini);
    VG_(needs_command_line_options)(pb_process_cmd_line_option, pb_print_usage,
                                    pb_print_debug_usage);
    VG_(track_start_client_code)(pb_start_client_code);
    VG_(track_pre_thread_ll_exit)(pb_thread_exit);
}

VG_DETERMINE_INTERFACE_VERSION(pb_pre_clo_init)
