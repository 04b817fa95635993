/* afc.h — the C ABI of functions compiled by afc, and its runtime.
 *
 * Each exported function takes its parameters in order (a rank-R array as a
 * descriptor passed by value), then one out-pointer per result leaf, and
 * returns 0 on success or one of the AFC_ERR_* codes below. On failure it
 * frees what it allocated, leaves the caller's memory and descriptors
 * untouched, and afc_last_error() describes what went wrong.
 *
 * An output descriptor whose data is NULL on entry receives memory the
 * caller releases with afc_free(); one whose data is not NULL is storage
 * with room for shape-many elements (the product of shape for rank 2 and 3),
 * and receives the result in place.
 */
#ifndef AFC_H
#define AFC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AFC_DESCRIPTORS(T, NAME)                          \
    typedef struct { T *data; int64_t shape[1]; } afc_##NAME##_1d; \
    typedef struct { T *data; int64_t shape[2]; } afc_##NAME##_2d; \
    typedef struct { T *data; int64_t shape[3]; } afc_##NAME##_3d;

AFC_DESCRIPTORS(bool, bool)
AFC_DESCRIPTORS(int32_t, i32)
AFC_DESCRIPTORS(int64_t, i64)
AFC_DESCRIPTORS(float, f32)
AFC_DESCRIPTORS(double, f64)

#undef AFC_DESCRIPTORS

/* Error codes returned by compiled functions. */
enum {
    AFC_OK = 0,
    AFC_ERR_INDEX = 1,           /* an index out of range */
    AFC_ERR_DIVISION_BY_ZERO = 2,/* integer division or remainder by zero */
    AFC_ERR_SIZE_MISMATCH = 3,   /* parameters that must share a size do not */
    AFC_ERR_NEGATIVE_SIZE = 4,   /* generate/iota of a negative size */
    AFC_ERR_OUTPUT_TOO_SMALL = 5,/* caller-provided output storage too small */
    AFC_ERR_OUT_OF_MEMORY = 6,   /* afc_alloc failed, or an array too large to allocate */
    AFC_ERR_EXTERN_RESULT = 7,   /* an extern fn returned 0 with a result descriptor that is not an array */
    AFC_ERR_RECURSION = 8        /* recursion deeper than AFC_MAX_RECURSION calls, or than the thread's stack allows */
};

/* How deep recursive afc functions may call each other on one thread. */
#define AFC_MAX_RECURSION 10000

/* Workers for parallel loops: 0 = all cores. Until it is called, the
 * number comes from the AFC_NUM_THREADS environment variable (all cores if
 * unset). Returns the number used. */
int afc_set_num_threads(int n);
/* The number of workers parallel loops use now. */
int afc_get_num_threads(void);
/* The message of the last failure on this thread ("" if none). */
const char *afc_last_error(void);
/* Sets this thread's error message (for extern functions). */
void afc_set_error(const char *msg);
/* 64-byte-aligned memory that afc_free releases; NULL when out of memory. */
void *afc_alloc(size_t bytes);
/* Releases memory from afc_alloc (and arrays compiled code returned); NULL is ignored. */
void afc_free(void *data);

/* Used by compiled code: formats and records a run-time error, returns code. */
int afc_rt_error(int code, const char *where, int64_t a, int64_t b);
/* Used by compiled recursive functions, around each call: enter counts one
 * more call on this thread and returns non-zero when that makes more than
 * `limit`, or leaves less than 64 KiB of the thread's stack; leave counts it
 * back (after either answer). */
int afc_rt_enter(int64_t limit);
/* Used by compiled code where a call ends or fails: frees the n arrays of
 * owned[] (a function's buffers, NULL where none is held). */
void afc_rt_free_owned(void **owned, int64_t n);
/* The same where a call succeeds: frees those of owned[] that are none of
 * the m pointers of kept[] (the arrays handed to the caller). */
void afc_rt_free_owned_except(void **owned, int64_t n, void *const *kept, int64_t m);
void afc_rt_leave(void);
/* Used by compiled code: runs body(ctx, c, lo, hi, fault) for each chunk
 * c of [0, n) (chunk positions each, the last one shorter) on the workers;
 * a chunk that fails records its first error in *fault and stops. Returns
 * 0, or the error of the first failing chunk (its message recorded as by
 * afc_rt_error on the calling thread). At most AFC_RT_MAX_CHUNKS chunks. */
#define AFC_RT_MAX_CHUNKS 256
typedef struct { int32_t code; const char *where; int64_t a, b; } afc_rt_fault;
typedef void (*afc_rt_chunk)(void *ctx, int64_t chunk, int64_t lo, int64_t hi, afc_rt_fault *fault);
int afc_rt_parallel(afc_rt_chunk body, void *ctx, int64_t n, int64_t chunk);
/* The same, reporting nothing: returns -1 when every chunk succeeds, else
 * the first failing chunk, its error copied to *fault. The first pass of a
 * two-pass nest uses it to learn how far its second pass must run before it
 * reports (the first error in index order may be one only that pass sees). */
int64_t afc_rt_parallel_until(afc_rt_chunk body, void *ctx, int64_t n, int64_t chunk, afc_rt_fault *fault);
/* Runs a two-pass nest chunk by chunk (look-back): chunks are handed out
 * in increasing order; for chunk c, totals(tctx, c, lo, hi, fault) runs
 * its first pass; once chunk c - 1 has published (at once for chunk 0),
 * carry(cctx, c, ...) makes chunk c + 1's start from c's start and total,
 * c publishes, and run(rctx, c, lo, hi, fault) runs its second pass. A
 * chunk whose first pass or carry fails publishes a stop: it still runs its
 * second pass (which finds the first error in its positions), the chunks
 * after it run nothing. Returns 0, or the error of the first failing chunk
 * (its second pass's error, else its first pass's or carry's), recorded
 * as by afc_rt_error. */
int afc_rt_look_back(afc_rt_chunk totals, void *tctx, afc_rt_chunk carry, void *cctx, afc_rt_chunk run, void *rctx, int64_t n, int64_t chunk);
/* The same as afc_rt_parallel, always on the calling thread, chunk after
 * chunk in order: a two-pass nest on one worker chains its chunks instead
 * of running a first pass. */
int afc_rt_in_order(afc_rt_chunk body, void *ctx, int64_t n, int64_t chunk);
/* Statistics of the allocator, for tests: allocations made so far, and
 * allocations not yet released (a leak check compares it before and after). */
int64_t afc_alloc_count(void);
int64_t afc_live_count(void);

#ifdef __cplusplus
}
#endif

#endif
