/* Driver of run/rows.acc: every function on matrices of 0, 1, 2, 3, 15, 16
 * and 17 rows whose rows have lengths around the chunk boundaries (chunks
 * of 1000 positions, 1/256 of the row beyond 256000), on 1, 2, 3 and 8
 * workers; SMALL=1 (under valgrind) stops at rows of 3000. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int64_t nrows[] = {0, 1, 2, 3, 15, 16, 17};
static const int64_t ncols[] = {0, 1, 999, 1000, 1001, 2047, 256000, 256001};
#define NR (int)(sizeof nrows / sizeof nrows[0])
#define NC (int)(sizeof ncols / sizeof ncols[0])
static const int workers[] = {1, 2, 3, 8};

static void fail(const char *what, int64_t r, int64_t c, int t) {
    printf("FAIL %s at %lld x %lld, %d workers: %s\n", what, (long long)r, (long long)c, t, afc_last_error());
    exit(1);
}

/* Everything each function returns for an r x c matrix on t workers, as
 * bytes; integer results checked against C's. */
static size_t run_all(int64_t r, int64_t c, int t, double *xs, int64_t *is, char *out) {
    size_t len = 0;
    int64_t n = r * c;
    afc_set_num_threads(t);
    afc_f64_2d m = {xs, {r, c}};
    afc_f64_1d rs = {NULL, {0}};
    double tot;
    if (rowsums(m, &rs, &tot)) fail("rowsums", r, c, t);
    memcpy(out + len, rs.data, (size_t)r * 8); len += (size_t)r * 8;
    memcpy(out + len, &tot, 8); len += 8;
    afc_free(rs.data);

    afc_i64_2d im = {is, {r, c}}, sq = {NULL, {0, 0}};
    afc_i64_1d s = {NULL, {0}};
    if (isums(im, &s, &sq)) fail("isums", r, c, t);
    for (int64_t i = 0; i < r; i++) {
        int64_t want = 7;
        for (int64_t j = 0; j < c; j++) {
            int64_t x = is[i * c + j];
            want += x * x - 3;
            if (sq.data[i * c + j] != x * x - 3) fail("isums' squares", r, c, t);
        }
        if (s.data[i] != want) fail("isums' sums", r, c, t);
    }
    afc_free(s.data);
    afc_free(sq.data);

    afc_i64_1d bv = {NULL, {0}}, bj = {NULL, {0}};
    if (best(im, &bv, &bj)) fail("best", r, c, t);
    for (int64_t i = 0; i < r; i++) {
        int64_t v = -INT64_MAX, at = -1;
        for (int64_t j = 0; j < c; j++)
            if (is[i * c + j] > v) v = is[i * c + j], at = j;
        if (bv.data[i] != v || bj.data[i] != at) fail("best's picks", r, c, t);
    }
    afc_free(bv.data);
    afc_free(bj.data);

    /* A cube of r x 3 x c/3. */
    int64_t d = c / 3;
    afc_i64_3d cb = {is, {r, 3, d}};
    afc_i64_2d mx = {NULL, {0, 0}};
    if (cube(cb, &mx)) fail("cube", r, c, t);
    for (int64_t i = 0; i < r * 3; i++) {
        int64_t want = -INT64_MAX;
        for (int64_t k = 0; k < d; k++) want = is[i * d + k] > want ? is[i * d + k] : want;
        if (mx.data[i] != want) fail("cube's maxima", r, c, t);
    }
    afc_free(mx.data);
    (void)n;
    return len;
}

/* pick with bad indices at `bad` (row-major positions, in this order): the
 * error reported names the first in index order, whatever the workers;
 * quotient with zeros there fails with a division by zero. */
static void first_error(int64_t r, int64_t c, const int64_t *bad, int nbad) {
    int64_t n = r * c;
    int64_t *xs = malloc((size_t)n * 8 + 8), *is = malloc((size_t)n * 8 + 8);
    for (int64_t i = 0; i < n; i++) xs[i] = i + 1, is[i] = n - 1 - i;
    int64_t first = n;
    for (int b = 0; b < nbad; b++) {
        is[bad[b]] = -1 - bad[b];
        xs[bad[b]] = 0;
        if (bad[b] < first) first = bad[b];
    }
    char want[128];
    snprintf(want, sizeof want, "index %lld, length %lld", (long long)(-1 - first), (long long)n);
    for (int wi = 0; wi < 4; wi++) {
        afc_set_num_threads(workers[wi]);
        afc_i64_1d x = {xs, {n}};
        afc_i64_2d ix = {is, {r, c}}, out = {NULL, {0, 0}};
        int64_t before = afc_live_count();
        if (pick(x, ix, &out) != AFC_ERR_INDEX || !strstr(afc_last_error(), want) || out.data != NULL || afc_live_count() != before)
            fail(want, r, c, workers[wi]);
        afc_i64_2d m = {xs, {r, c}};
        afc_i64_1d q = {NULL, {0}};
        if (quotient(m, 5, &q) != AFC_ERR_DIVISION_BY_ZERO || q.data != NULL || afc_live_count() != before)
            fail("division by zero", r, c, workers[wi]);
    }
    free(xs);
    free(is);
}

int main(void) {
    int64_t start = afc_live_count();
    int64_t most = nrows[NR - 1] * ncols[NC - 1];
    double *xs = malloc((size_t)most * 8 + 8);
    int64_t *is = malloc((size_t)most * 8 + 8);
    for (int64_t i = 0; i < most; i++) {
        xs[i] = (double)((i * 7919) % 1013) / 97.0 - 5.0;
        is[i] = (i * 7919) % 2003 - 1000;
    }
    for (int ri = 0; ri < NR; ri++) {
        for (int ci = 0; ci < NC; ci++) {
            int64_t r = nrows[ri], c = ncols[ci];
            if (getenv("SMALL") && c > 3000) break;
            size_t cap = (size_t)r * 16 + 64;
            char *ref = malloc(cap), *got = malloc(cap);
            size_t len = run_all(r, c, 1, xs, is, ref);
            for (int wi = 1; wi < 4; wi++)
                if (run_all(r, c, workers[wi], xs, is, got) != len || memcmp(ref, got, len) != 0)
                    fail("bits differ from 1 worker", r, c, workers[wi]);
            free(ref);
            free(got);
        }
    }
    printf("shapes agree on 1, 2, 3, 8 workers\n");

    const int64_t b1[] = {0}, b2[] = {2 * 5000 + 0, 5000 + 999}, b3[] = {5000 + 0, 4999}, b4[] = {1000, 999};
    const int64_t b5[] = {299999, 150000}, b6[] = {16 * 3000 + 2999, 15 * 3000 + 1};
    first_error(3, 5000, b1, 1);
    first_error(3, 5000, b2, 2);
    first_error(3, 5000, b3, 2);
    first_error(1, 5000, b4, 2);
    first_error(1, 300000, b5, 2);
    first_error(17, 3000, b6, 2);
    printf("first errors in index order\n");

    free(xs);
    free(is);
    if (afc_live_count() != start) fail("a leak", 0, 0, 0);
    printf("no leak\n");
    return 0;
}
