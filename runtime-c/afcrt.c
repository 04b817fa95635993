/* The afc runtime: errors, aligned allocation with reuse, thread settings. */
#define _GNU_SOURCE
#include "afc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ errors */

static _Thread_local char last_error[512];

const char *afc_last_error(void) { return last_error; }

void afc_set_error(const char *msg) {
    snprintf(last_error, sizeof last_error, "%s", msg ? msg : "");
}

int afc_rt_error(int code, const char *where, int64_t a, int64_t b) {
    switch (code) {
    case AFC_ERR_INDEX:
        snprintf(last_error, sizeof last_error, "%s: index %lld, length %lld", where, (long long)a, (long long)b);
        break;
    case AFC_ERR_SIZE_MISMATCH:
        snprintf(last_error, sizeof last_error, "%s (%lld and %lld)", where, (long long)a, (long long)b);
        break;
    case AFC_ERR_NEGATIVE_SIZE:
        snprintf(last_error, sizeof last_error, "%s %lld", where, (long long)a);
        break;
    case AFC_ERR_OUTPUT_TOO_SMALL:
        snprintf(last_error, sizeof last_error, "%s: room for %lld elements, %lld needed", where, (long long)a, (long long)b);
        break;
    case AFC_ERR_RECURSION:
        snprintf(last_error, sizeof last_error, "%s (more than %lld calls deep, or out of stack)", where, (long long)a);
        break;
    case AFC_ERR_OUT_OF_MEMORY:
        if (b > 0) /* a cross of a x b elements: the count overflows */
            snprintf(last_error, sizeof last_error, "%s (%lld x %lld elements)", where, (long long)a, (long long)b);
        else
            snprintf(last_error, sizeof last_error, "%s (%llu bytes)", where, (unsigned long long)a);
        break;
    default:
        snprintf(last_error, sizeof last_error, "%s", where);
    }
    return code;
}

/* ------------------------------------------------------------ recursion
 *
 * A recursive afc function calls enter first: it fails once the calls on
 * this thread exceed the limit, or once the stack left is below a margin,
 * so deep recursion is an error code, never a stack overflow. The stack's
 * end is read once per thread. */

#define STACK_MARGIN (64 * 1024)

static _Thread_local int64_t depth;
static _Thread_local char *stack_floor; /* the lowest address calls may reach */

static void find_stack_floor(void) {
    pthread_attr_t attr;
    void *lo = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &lo, &size);
        pthread_attr_destroy(&attr);
    }
    stack_floor = lo ? (char *)lo + STACK_MARGIN : (char *)1;
}

int afc_rt_enter(int64_t limit) {
    char here;
    depth++;
    if (!stack_floor) find_stack_floor();
    return depth > limit || &here < stack_floor;
}

void afc_rt_leave(void) { depth--; }

/* ------------------------------------------------------------ memory
 *
 * Fresh pages cost a page fault each on first touch, often more than the
 * work done on them, so freed blocks are kept in per-size-class free lists
 * (powers of two from 4 KiB) and handed out again. A header just before
 * each block's data records its class.
 *
 * Large arrays start half a page (COLOUR bytes) further in. Large blocks
 * of glibc's malloc, aligned_alloc and of this pool itself start a few
 * dozen bytes past a page boundary, so an array computed from a caller's
 * array would otherwise start a few cache lines after it modulo 4 KiB:
 * the 4 KiB aliasing under which afc's compiled loops give up streaming
 * stores (docs/strategy.md, "Stores"). Arrays of one class share the
 * colour, so afc's own arrays stay at distance 0 from each other. */

#define ALIGN 64
#define MIN_CLASS 12 /* 4 KiB */
#define MAX_CLASS 40
#define KEEP_PER_CLASS 8
#define COLOUR 2048
#define COLOUR_FROM 21 /* classes of 2 MiB and up */

typedef struct block { struct block *next; int cls; } block;

/* A pooled block's data is off limits until it is handed out again, for
 * the memory checkers: under valgrind (its client requests, no-ops
 * otherwise, where its header is installed) and AddressSanitizer, a read
 * or write of an array after afc_free is an error even though the block
 * was kept, in compiled code too (valgrind). */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define POOLED_VG(p, n) VALGRIND_MAKE_MEM_NOACCESS(p, n)
#define REUSED_VG(p, n) VALGRIND_MAKE_MEM_UNDEFINED(p, n)
#endif
#endif
#ifndef POOLED_VG
#define POOLED_VG(p, n) ((void)0)
#define REUSED_VG(p, n) ((void)0)
#endif
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POOLED(p, n) (POOLED_VG(p, n), ASAN_POISON_MEMORY_REGION(p, n))
#define REUSED(p, n) (ASAN_UNPOISON_MEMORY_REGION(p, n), REUSED_VG(p, n))
#else
#define POOLED(p, n) POOLED_VG(p, n)
#define REUSED(p, n) REUSED_VG(p, n)
#endif

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static block *pool[MAX_CLASS + 1];
static int pool_len[MAX_CLASS + 1];
static int64_t alloc_count;
static int64_t live_count;

/* Where a class's data starts past its allocation: its colour, then room
 * for the header. */
static size_t offset_of(int cls) { return (cls >= COLOUR_FROM ? COLOUR : 0) + ALIGN; }

/* The bytes a block of class `cls` holds from its data on. */
static size_t room_of(int cls) { return ((size_t)1 << cls) - offset_of(cls); }

static int class_of(size_t bytes) {
    int c = MIN_CLASS;
    while (c < MAX_CLASS && ((size_t)1 << c) < bytes + offset_of(c)) c++;
    return c;
}

void *afc_alloc(size_t bytes) {
    if (bytes > ((size_t)1 << MAX_CLASS)) return NULL;
    int cls = class_of(bytes);
    if (((size_t)1 << cls) < bytes + offset_of(cls)) return NULL;
    block *b = NULL;
    pthread_mutex_lock(&pool_lock);
    alloc_count++;
    live_count++;
    if (pool[cls]) {
        b = pool[cls];
        pool[cls] = b->next;
        pool_len[cls]--;
    }
    pthread_mutex_unlock(&pool_lock);
    if (!b) {
        void *p = NULL;
        if (posix_memalign(&p, ALIGN, (size_t)1 << cls) != 0) {
            /* Nothing was handed out: the counts go back. */
            pthread_mutex_lock(&pool_lock);
            alloc_count--;
            live_count--;
            pthread_mutex_unlock(&pool_lock);
            return NULL;
        }
        b = (block *)((char *)p + offset_of(cls) - ALIGN);
    } else {
        REUSED((char *)b + ALIGN, room_of(cls));
    }
    b->cls = cls;
    return (char *)b + ALIGN;
}

void afc_free(void *data) {
    if (!data) return;
    block *b = (block *)((char *)data - ALIGN);
    int cls = b->cls;
    pthread_mutex_lock(&pool_lock);
    live_count--;
    if (cls >= MIN_CLASS && cls <= MAX_CLASS && pool_len[cls] < KEEP_PER_CLASS) {
        b->next = pool[cls];
        pool[cls] = b;
        pool_len[cls]++;
        POOLED(data, room_of(cls));
        b = NULL;
    }
    pthread_mutex_unlock(&pool_lock);
    if (b) free((char *)b - (offset_of(cls) - ALIGN));
}

void afc_rt_free_owned(void **owned, int64_t n) {
    for (int64_t i = 0; i < n; i++) afc_free(owned[i]);
}

void afc_rt_free_owned_except(void **owned, int64_t n, void *const *kept, int64_t m) {
    for (int64_t i = 0; i < n; i++) {
        int64_t j = 0;
        while (j < m && kept[j] != owned[i]) j++;
        if (j == m) afc_free(owned[i]);
    }
}

int64_t afc_alloc_count(void) {
    pthread_mutex_lock(&pool_lock);
    int64_t n = alloc_count;
    pthread_mutex_unlock(&pool_lock);
    return n;
}

int64_t afc_live_count(void) {
    pthread_mutex_lock(&pool_lock);
    int64_t n = live_count;
    pthread_mutex_unlock(&pool_lock);
    return n;
}

/* ------------------------------------------------------------ threads
 *
 * Parallel loop nests run on OpenMP's thread pool (libgomp, or LLVM's
 * libomp, which provides the same entry points): started on the first
 * parallel call and reused by every later one. A nest is cut into chunks
 * by the compiled code (how many depends on the size only, never on the
 * number of threads, so results are the same for every thread count); the
 * chunks are shared out among the workers.
 *
 * Policy (docs/abi.md): a call made while this process is already running
 * a parallel afc loop — from another user thread, or from inside an OpenMP
 * region of the user's own — runs its chunks on the calling thread, in
 * order. Nothing waits for anything else, so nothing can deadlock, and the
 * machine never runs more than the configured workers plus the callers. */

#include <omp.h>
#include <sched.h>
#include <stdatomic.h>

static atomic_int num_threads;   /* 0 until configured */
static atomic_int busy;          /* a parallel afc loop is running */
static pthread_once_t threads_once = PTHREAD_ONCE_INIT;

static int all_cores(void) {
    int n = omp_get_num_procs();
    return n > 0 ? n : 1;
}

static void threads_from_env(void) {
    const char *env = getenv("AFC_NUM_THREADS");
    int n = env ? atoi(env) : 0;
    int expected = 0;
    atomic_compare_exchange_strong(&num_threads, &expected, n > 0 ? n : all_cores());
}

int afc_set_num_threads(int n) {
    pthread_once(&threads_once, threads_from_env);
    if (n <= 0) n = all_cores();
    atomic_store(&num_threads, n);
    return n;
}

int afc_get_num_threads(void) {
    pthread_once(&threads_once, threads_from_env);
    return atomic_load(&num_threads);
}

/* Runs the chunks; returns -1 when every one succeeds, else the first
 * failing chunk (which holds the failing element first in index order:
 * each chunk stops at its own first), with its fault copied to *first. */
static int64_t run_chunks(afc_rt_chunk body, void *ctx, int64_t n, int64_t chunk, int spread, afc_rt_fault *first) {
    if (n <= 0) return -1;
    if (chunk <= 0) chunk = n;
    int64_t chunks = n / chunk + (n % chunk != 0);
    int threads = spread && chunks > 1 ? afc_get_num_threads() : 1;
    if (threads > chunks) threads = (int)chunks;
    int expected = 0;
    /* (Compiled code never asks for more than AFC_RT_MAX_CHUNKS chunks;
     * more would run on the calling thread.) */
    if (threads > 1 && chunks <= AFC_RT_MAX_CHUNKS && !omp_in_parallel() && atomic_compare_exchange_strong(&busy, &expected, 1)) {
        afc_rt_fault faults[AFC_RT_MAX_CHUNKS];
        for (int64_t c = 0; c < chunks; c++) faults[c].code = 0;
        /* Chunks go to whichever worker is free: a slower core (a shared
         * vCPU) then takes fewer. Each chunk's results have slots of their
         * own, so the bits do not depend on who ran it. */
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
        for (int64_t c = 0; c < chunks; c++) {
            int64_t lo = c * chunk, hi = lo + chunk < n ? lo + chunk : n;
            body(ctx, c, lo, hi, &faults[c]);
        }
        atomic_store(&busy, 0);
        for (int64_t c = 0; c < chunks; c++)
            if (faults[c].code) {
                *first = faults[c];
                return c;
            }
        return -1;
    }
    for (int64_t c = 0; c < chunks; c++) {
        afc_rt_fault fault = {0, NULL, 0, 0};
        int64_t lo = c * chunk, hi = lo + chunk < n ? lo + chunk : n;
        body(ctx, c, lo, hi, &fault);
        if (fault.code) {
            *first = fault;
            return c;
        }
    }
    return -1;
}

int afc_rt_parallel(afc_rt_chunk body, void *ctx, int64_t n, int64_t chunk) {
    afc_rt_fault fault;
    if (run_chunks(body, ctx, n, chunk, 1, &fault) < 0) return 0;
    return afc_rt_error(fault.code, fault.where, fault.a, fault.b);
}

int afc_rt_in_order(afc_rt_chunk body, void *ctx, int64_t n, int64_t chunk) {
    afc_rt_fault fault;
    if (run_chunks(body, ctx, n, chunk, 0, &fault) < 0) return 0;
    return afc_rt_error(fault.code, fault.where, fault.a, fault.b);
}

int64_t afc_rt_parallel_until(afc_rt_chunk body, void *ctx, int64_t n, int64_t chunk, afc_rt_fault *fault) {
    return run_chunks(body, ctx, n, chunk, 1, fault);
}

/* ------------------------------------------------------------ look-back
 *
 * A two-pass nest run chunk by chunk (docs/strategy.md, "Filters"). The
 * workers take chunks from a shared counter, so chunk c - 1 is always
 * taken before chunk c, by a worker that waits only for chunks before it:
 * the waits end. Each chunk publishes as soon as it knows the next one's
 * start, before its second pass, so the second passes overlap and a
 * chunk's inputs are still in cache when it reads them again. */

enum { LB_PENDING, LB_GO, LB_STOP };

typedef struct {
    afc_rt_chunk totals, carry, run;
    void *tctx, *cctx, *rctx;
    int64_t n, chunk, chunks;
    _Atomic int64_t next;
    atomic_int state[AFC_RT_MAX_CHUNKS];
    afc_rt_fault faults[AFC_RT_MAX_CHUNKS];
} look_back;

static void pause_briefly(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Waits until chunk c has published; spins briefly, then yields the core
 * (a worker of an oversubscribed machine may be descheduled). */
static int wait_for(look_back *s, int64_t c) {
    for (int spins = 0;; spins++) {
        int st = atomic_load_explicit(&s->state[c], memory_order_acquire);
        if (st != LB_PENDING) return st;
        if (spins < 256) pause_briefly();
        else sched_yield();
    }
}

static void look_back_chunk(look_back *s, int64_t c) {
    int64_t lo = c * s->chunk, hi = lo + s->chunk < s->n ? lo + s->chunk : s->n;
    afc_rt_fault first = {0, NULL, 0, 0};
    s->totals(s->tctx, c, lo, hi, &first);
    if (c > 0 && wait_for(s, c - 1) == LB_STOP) {
        atomic_store_explicit(&s->state[c], LB_STOP, memory_order_release);
        return;
    }
    if (!first.code) s->carry(s->cctx, c, lo, hi, &first);
    atomic_store_explicit(&s->state[c], first.code ? LB_STOP : LB_GO, memory_order_release);
    s->run(s->rctx, c, lo, hi, &s->faults[c]);
    /* The second pass checks everything the first does; should it not
     * fail, the first pass's error stands. */
    if (first.code && !s->faults[c].code) s->faults[c] = first;
}

int afc_rt_look_back(afc_rt_chunk totals, void *tctx, afc_rt_chunk carry, void *cctx, afc_rt_chunk run, void *rctx, int64_t n, int64_t chunk) {
    if (n <= 0) return 0;
    if (chunk <= 0) chunk = n;
    int64_t chunks = n / chunk + (n % chunk != 0);
    /* (Compiled code never asks for more than AFC_RT_MAX_CHUNKS chunks;
     * more would run on the calling thread.) */
    int threads = chunks > 1 && chunks <= AFC_RT_MAX_CHUNKS ? afc_get_num_threads() : 1;
    if (threads > chunks) threads = (int)chunks;
    int expected = 0;
    if (threads > 1 && !omp_in_parallel() && atomic_compare_exchange_strong(&busy, &expected, 1)) {
        look_back s;
        s.totals = totals, s.carry = carry, s.run = run;
        s.tctx = tctx, s.cctx = cctx, s.rctx = rctx;
        s.n = n, s.chunk = chunk, s.chunks = chunks;
        atomic_init(&s.next, 0);
        for (int64_t c = 0; c < chunks; c++) {
            atomic_init(&s.state[c], LB_PENDING);
            s.faults[c].code = 0;
        }
#pragma omp parallel num_threads(threads)
        for (;;) {
            int64_t c = atomic_fetch_add(&s.next, 1);
            if (c >= chunks) break;
            look_back_chunk(&s, c);
        }
        atomic_store(&busy, 0);
        for (int64_t c = 0; c < chunks; c++)
            if (s.faults[c].code) return afc_rt_error(s.faults[c].code, s.faults[c].where, s.faults[c].a, s.faults[c].b);
        return 0;
    }
    /* In order on the calling thread: nothing to wait for, and the first
     * failing chunk is the last to run. */
    for (int64_t c = 0; c < chunks; c++) {
        int64_t lo = c * chunk, hi = lo + chunk < n ? lo + chunk : n;
        afc_rt_fault first = {0, NULL, 0, 0}, fault = {0, NULL, 0, 0};
        totals(tctx, c, lo, hi, &first);
        if (!first.code) carry(cctx, c, lo, hi, &first);
        run(rctx, c, lo, hi, &fault);
        if (!fault.code) fault = first;
        if (fault.code) return afc_rt_error(fault.code, fault.where, fault.a, fault.b);
    }
    return 0;
}
