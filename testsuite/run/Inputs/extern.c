/* C implementations of the extern fns of run/extern.acc, written to the
 * extern contract: results allocated with afc_alloc, failures reported with
 * afc_set_error and a non-zero code. Inputs/extern-oracle.acc is the same
 * program with these functions written in .acc, for the interpreter. */
#include "afc.h"
#include <stdbool.h>
#include <stdint.h>

int smooth(afc_f64_1d xs, double w, afc_f64_1d *out) {
    int64_t n = xs.shape[0];
    double *d = afc_alloc((size_t)n * sizeof(double));
    if (!d) {
        afc_set_error("smooth: out of memory");
        return 6;
    }
    for (int64_t i = 0; i < n; i++) {
        double prev = xs.data[i > 0 ? i - 1 : 0];
        d[i] = w * xs.data[i] + (1.0 - w) * prev;
    }
    out->data = d;
    out->shape[0] = n;
    return 0;
}

/* The mean and the number of positive elements; an empty array is an error. */
int stats(afc_f64_1d xs, double *mean, int64_t *positive) {
    int64_t n = xs.shape[0];
    if (n == 0) {
        afc_set_error("stats: empty array");
        return 42;
    }
    double s = 0.0;
    int64_t p = 0;
    for (int64_t i = 0; i < n; i++) {
        s = s + xs.data[i];
        p += xs.data[i] > 0.0;
    }
    *mean = s / (double)n;
    *positive = p;
    return 0;
}

/* The first k elements with their indices, and the rest (negated if flag).
 * A negative k fails after allocating one result: the caller frees it. */
int split(afc_f64_1d xs, int64_t k, bool flag, afc_f64_1d *ps_0, afc_i32_1d *ps_1, afc_f64_1d *rest) {
    int64_t n = xs.shape[0];
    ps_0->data = afc_alloc(8);
    if (k < 0) {
        afc_set_error("split: negative count");
        return 9;
    }
    int64_t m = k < n ? k : n;
    afc_free(ps_0->data);
    ps_0->data = afc_alloc((size_t)m * sizeof(double));
    ps_1->data = afc_alloc((size_t)m * sizeof(int32_t));
    rest->data = afc_alloc((size_t)(n - m) * sizeof(double));
    for (int64_t i = 0; i < m; i++) {
        ps_0->data[i] = xs.data[i];
        ps_1->data[i] = (int32_t)i;
    }
    for (int64_t i = m; i < n; i++) rest->data[i - m] = flag ? -xs.data[i] : xs.data[i];
    ps_0->shape[0] = ps_1->shape[0] = m;
    rest->shape[0] = n - m;
    return 0;
}

/* Many arguments: the descriptors past the integer registers go in memory. */
int many(afc_i64_1d a, afc_i64_1d b, afc_i64_1d c, afc_i64_1d d, int64_t k, bool neg, afc_i64_1d *out) {
    int64_t n = a.shape[0];
    out->data = afc_alloc((size_t)n * sizeof(int64_t));
    for (int64_t i = 0; i < n; i++) {
        int64_t v = a.data[i] + 2 * b.data[i] + 3 * c.data[i] + 4 * d.data[i] + k;
        out->data[i] = neg ? -v : v;
    }
    out->shape[0] = n;
    return 0;
}

/* Breaks the contract: returns 0 with a negative size. */
int broken(afc_f64_1d xs, afc_f64_1d *out) {
    out->data = afc_alloc(8);
    out->shape[0] = xs.shape[0] > 2 ? -1 : 0;
    return 0;
}
