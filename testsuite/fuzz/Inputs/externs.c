/* The extern fns random programs may call (difftest.py), one set per element
 * type, written to the extern contract; externs.acc is the same in .acc,
 * the interpreter's oracle. */
#include "afc.h"
#include <stdbool.h>
#include <stdint.h>

/* The first n elements; n outside 0..length is an error. */
#define TAKE(T, CT)                                                        \
    int xf_take_##T(afc_##T##_1d xs, int64_t n, afc_##T##_1d *out) {       \
        if (n < 0 || n > xs.shape[0]) {                                    \
            afc_set_error("xf_take: count out of range");                  \
            return 17;                                                     \
        }                                                                  \
        out->data = afc_alloc((size_t)n * sizeof(CT));                     \
        if (!out->data) {                                                  \
            afc_set_error("xf_take: out of memory");                       \
            return 6;                                                      \
        }                                                                  \
        for (int64_t i = 0; i < n; i++) out->data[i] = xs.data[i];         \
        out->shape[0] = n;                                                 \
        return 0;                                                          \
    }

/* The elements in reverse order. */
#define REV(T, CT)                                                         \
    int xf_rev_##T(afc_##T##_1d xs, afc_##T##_1d *out) {                   \
        int64_t n = xs.shape[0];                                           \
        out->data = afc_alloc((size_t)n * sizeof(CT));                     \
        if (!out->data) {                                                  \
            afc_set_error("xf_rev: out of memory");                        \
            return 6;                                                      \
        }                                                                  \
        for (int64_t i = 0; i < n; i++) out->data[i] = xs.data[n - 1 - i]; \
        out->shape[0] = n;                                                 \
        return 0;                                                          \
    }

/* How many elements equal v, and the array's length. */
#define COUNT(T, CT)                                                       \
    int xf_count_##T(afc_##T##_1d xs, CT v, int64_t *count, int64_t *n) {  \
        int64_t c = 0;                                                     \
        for (int64_t i = 0; i < xs.shape[0]; i++) c += xs.data[i] == v;    \
        *count = c;                                                        \
        *n = xs.shape[0];                                                  \
        return 0;                                                          \
    }

/* (Not through a wrapper macro: it would expand `bool` to `_Bool`.) */
TAKE(bool, bool) REV(bool, bool) COUNT(bool, bool)
TAKE(i32, int32_t) REV(i32, int32_t) COUNT(i32, int32_t)
TAKE(i64, int64_t) REV(i64, int64_t) COUNT(i64, int64_t)
TAKE(f32, float) REV(f32, float) COUNT(f32, float)
TAKE(f64, double) REV(f64, double) COUNT(f64, double)
