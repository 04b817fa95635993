/* Driver of run/parallel.acc: every function at sizes around the chunk
 * boundaries (chunks of 1000 positions, 1024 in an aligned nest, 1/256 of
 * the loop beyond 256000, rounded up to 64 positions in an aligned nest
 * beyond 262144), on 1, 2, 3 and 8 workers (WORKERS="1 2 4 16", say,
 * names others: testsuite/bench/scaling.sh runs it on a many-core machine);
 * SMALL=1 (under valgrind) stops at 300001 elements. */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int64_t sizes[] = {0, 1, 2, 999, 1000, 1001, 1023, 1024, 1025, 2047, 5000, 255999, 256000, 256001, 262145, 300001, 2000003, 4194303, 4194305};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])
static int workers[32] = {1, 2, 3, 8}, nworkers = 4;

/* WORKERS: a list of worker counts, the first of which is the reference. */
static void read_workers(void) {
    const char *w = getenv("WORKERS");
    if (!w) return;
    nworkers = 0;
    for (char *end; *w && nworkers < 32; w = end) {
        long t = strtol(w, &end, 10);
        if (end == w) { end = (char *)w + 1; continue; }
        if (t < 1) { printf("FAIL WORKERS: %ld is not a number of workers\n", t); exit(1); }
        workers[nworkers++] = (int)t;
    }
    if (nworkers == 0) { printf("FAIL WORKERS names no worker count\n"); exit(1); }
}

static int fail(const char *what, int64_t n, int t) {
    printf("FAIL %s at n = %lld, %d workers: %s\n", what, (long long)n, t, afc_last_error());
    exit(1);
}

/* Everything each function returns at size n on t workers, as bytes. */
static size_t run_all(int64_t n, int t, double *xs, int64_t *is, char *out) {
    size_t len = 0;
    afc_set_num_threads(t);
    afc_f64_1d x = {xs, {n}}, y = {NULL, {0}};
    if (scale(x, 0.5, &y)) fail("scale", n, t);
    memcpy(out + len, y.data, (size_t)n * 8); len += (size_t)n * 8;
    for (int64_t i = 0; i < n; i++)
        if (y.data[i] != xs[i] * 0.5 + 1.0) fail("scale's values", n, t);
    afc_free(y.data);

    afc_i64_1d ix = {is, {n}};
    int64_t s, lo, hi, h; bool any;
    if (stats(ix, &s, &lo, &hi, &h, &any)) fail("stats", n, t);
    int64_t cs = 0, clo = INT64_MAX, chi = -INT64_MAX, ch = 0; bool cany = false;
    for (int64_t i = 0; i < n; i++) {
        cs += is[i]; clo = is[i] < clo ? is[i] : clo; chi = is[i] > chi ? is[i] : chi;
        ch ^= is[i] * 3; cany = cany || is[i] == 77;
    }
    if (s != cs || lo != clo || hi != chi || h != ch || any != cany) fail("stats' values", n, t);

    int64_t rows = n / 37 + (n % 2), cols = 37;
    afc_i64_2d tb = {NULL, {0, 0}};
    if (table(rows, cols, &tb)) fail("table", n, t);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            if (tb.data[i * cols + j] != i * 1000 + j) fail("table's values", n, t);
    afc_free(tb.data);

    afc_i64_1d p = {NULL, {0}};
    int64_t *where = malloc((size_t)(n + 1) * 8);
    for (int64_t i = 0; i < n; i++) where[i] = (i * 7) % n;
    afc_i64_1d w = {where, {n}};
    if (pick(ix, w, &p)) fail("pick", n, t);
    for (int64_t i = 0; i < n; i++)
        if (p.data[i] != is[(i * 7) % n] + 1) fail("pick's values", n, t);
    afc_free(p.data);
    free(where);

    int64_t q;
    if (quotient(ix, 1000000, &q)) fail("quotient", n, t);
    memcpy(out + len, &q, 8); len += 8;

    double tot;
    if (total(x, &tot)) fail("total", n, t);
    memcpy(out + len, &tot, 8); len += 8;

    afc_i64_1d k = {NULL, {0}};
    int64_t ks, cks = 0, nk = 0;
    if (kept(ix, &k, &ks)) fail("kept", n, t);
    for (int64_t i = 0; i < n; i++)
        if (is[i] % 3 == 0) {
            if (nk >= k.shape[0] || k.data[nk++] != is[i]) fail("kept's values", n, t);
            cks += is[i];
        }
    if (nk != k.shape[0] || ks != cks) fail("kept's count and sum", n, t);
    afc_free(k.data);

    /* Scans (integers: exactly C's on any number of workers). */
    afc_i64_1d s1 = {NULL, {0}}, s2 = {NULL, {0}}, s3 = {NULL, {0}};
    if (sums(ix, &s1, &s2, &s3)) fail("sums", n, t);
    int64_t run = 5, best = -100, back = 0;
    for (int64_t i = 0; i < n; i++) {
        run += is[i];
        if (s1.data[i] != run || s2.data[i] != best) fail("sums' values", n, t);
        best = is[i] > best ? is[i] : best;
    }
    for (int64_t i = n - 1; i >= 0; i--) {
        back += is[i];
        if (s3.data[i] != back) fail("scanr's values", n, t);
    }
    afc_free(s1.data); afc_free(s2.data); afc_free(s3.data);

    int64_t *ms = malloc((size_t)(n + 1) * 8);
    for (int64_t i = 0; i < n; i++) ms[i] = is[i] % 5 - 2;
    afc_i64_1d m = {ms, {n}}, a0 = {NULL, {0}}, a1 = {NULL, {0}};
    if (affine(m, ix, &a0, &a1)) fail("affine", n, t);
    uint64_t p0 = 1, p1 = 0;
    for (int64_t i = 0; i < n; i++) {
        p1 = p1 * (uint64_t)ms[i] + (uint64_t)is[i];
        p0 *= (uint64_t)ms[i];
        if ((uint64_t)a0.data[i] != p0 || (uint64_t)a1.data[i] != p1) fail("affine's values", n, t);
    }
    afc_free(a0.data); afc_free(a1.data);
    free(ms);

    afc_i64_1d r = {NULL, {0}};
    if (runs(ix, &r)) fail("runs", n, t);
    int64_t nr = 0, acc = 0;
    for (int64_t i = 0; i < n; i++)
        if (is[i] > 0) {
            acc += is[i];
            if (nr >= r.shape[0] || r.data[nr++] != acc) fail("runs' values", n, t);
        }
    if (nr != r.shape[0]) fail("runs' length", n, t);
    afc_free(r.data);

    afc_f64_1d fr = {NULL, {0}};
    if (running(x, &fr)) fail("running", n, t);
    memcpy(out + len, fr.data, (size_t)n * 8); len += (size_t)n * 8;
    afc_free(fr.data);

    afc_f64_1d fh = {NULL, {0}};
    if (fhist(ix, x, &fh)) fail("fhist", n, t);
    memcpy(out + len, fh.data, 64 * 8); len += 64 * 8;
    afc_free(fh.data);

    afc_i64_1d wd = {NULL, {0}};
    if (wide(ix, ix, &wd)) fail("wide", n, t);
    int64_t *cw = malloc(5000 * 8);
    for (int j = 0; j < 5000; j++) cw[j] = j;
    for (int64_t i = 0; i < n; i++) {
        int64_t b = (is[i] * 7) % 5000;
        if (b >= 0) cw[b] += is[i];
    }
    for (int j = 0; j < 5000; j++)
        if (wd.data[j] != cw[j]) fail("wide's values", n, t);
    free(cw);
    afc_free(wd.data);

    int64_t *hx = malloc((size_t)(n + 1) * 8);
    for (int64_t i = 0; i < n; i++) hx[i] = (i * 31) % 65 - 1;
    afc_i64_1d hix = {hx, {n}}, h1 = {NULL, {0}}, h2 = {NULL, {0}};
    afc_bool_1d h3 = {NULL, {0}};
    if (hist(hix, ix, &h1, &h2, &h3)) fail("hist", n, t);
    int64_t c1[64], c2[64];
    bool c3[64];
    for (int j = 0; j < 64; j++) c1[j] = j, c2[j] = -5000, c3[j] = false;
    for (int64_t i = 0; i < n; i++)
        if (hx[i] >= 0) {
            c1[hx[i]] += is[i];
            c2[hx[i]] = is[i] > c2[hx[i]] ? is[i] : c2[hx[i]];
            c3[hx[i]] = c3[hx[i]] || is[i] > 900;
        }
    for (int j = 0; j < 64; j++)
        if (h1.data[j] != c1[j] || h2.data[j] != c2[j] || h3.data[j] != c3[j]) fail("hist's values", n, t);
    afc_free(h1.data); afc_free(h2.data); afc_free(h3.data);
    free(hx);

    int64_t mx, at, cmx = -INT64_MAX, cat = -1;
    if (argmax(ix, &mx, &at)) fail("argmax", n, t);
    for (int64_t i = 0; i < n; i++)
        if (is[i] > cmx) cmx = is[i], cat = i;
    if (mx != cmx || at != cat) fail("argmax's values", n, t);
    return len;
}

/* hist: indices out of range at two places; the first in index order is
 * the one reported. */
static void hist_error(int64_t n, int64_t b1, int64_t b2) {
    int64_t *ix = malloc((size_t)n * 8), *ws = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) ix[i] = i % 64, ws[i] = i;
    ix[b1] = 64 + b1;
    ix[b2] = 64 + b2;
    char want[128];
    snprintf(want, sizeof want, "index %lld, length 64", (long long)(64 + (b1 < b2 ? b1 : b2)));
    for (int wi = 0; wi < nworkers; wi++) {
        afc_set_num_threads(workers[wi]);
        afc_i64_1d x = {ix, {n}}, w = {ws, {n}}, h1 = {NULL, {0}}, h2 = {NULL, {0}};
        afc_bool_1d h3 = {NULL, {0}};
        int64_t before = afc_live_count();
        if (hist(x, w, &h1, &h2, &h3) != AFC_ERR_INDEX || !strstr(afc_last_error(), want) || h1.data != NULL || afc_live_count() != before)
            fail(want, n, workers[wi]);
    }
    free(ix); free(ws);
}

/* walk: the first pass checks xs[is[i]] only; the second also xs[p], p a
 * running sum of ds. The error reported is the first in index order. */
static void walk_error(int64_t n, int64_t bad_p, int64_t bad_i) {
    int64_t *xs = malloc((size_t)n * 8), *ds = calloc((size_t)n, 8), *is = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) xs[i] = i, is[i] = i;
    ds[bad_p] = -10 * n;
    is[bad_i] = -7;
    char want[128];
    snprintf(want, sizeof want, "index %lld, length %lld", (long long)(bad_p < bad_i ? -10 * n : -7), (long long)n);
    for (int wi = 0; wi < nworkers; wi++) {
        afc_set_num_threads(workers[wi]);
        afc_i64_1d x = {xs, {n}}, d = {ds, {n}}, ix = {is, {n}}, out = {NULL, {0}};
        int64_t before = afc_live_count();
        if (walk(x, d, ix, &out) != AFC_ERR_INDEX || !strstr(afc_last_error(), want) || out.data != NULL || afc_live_count() != before)
            fail(want, n, workers[wi]);
    }
    free(xs); free(ds); free(is);
}

/* A bad index at each of `bad` (in this order), to check the reported one is
 * the first in index order whatever the workers. */
static void first_error(int64_t n, const int64_t *bad, int nbad) {
    int64_t *xs = malloc((size_t)n * 8), *is = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) xs[i] = i, is[i] = n - 1 - i;
    int64_t first = n;
    for (int b = 0; b < nbad; b++) {
        is[bad[b]] = -1 - bad[b];
        if (bad[b] < first) first = bad[b];
    }
    char want[128];
    snprintf(want, sizeof want, "index %lld, length %lld", (long long)(-1 - first), (long long)n);
    for (int wi = 0; wi < nworkers; wi++) {
        afc_set_num_threads(workers[wi]);
        afc_i64_1d x = {xs, {n}}, ix = {is, {n}}, out = {NULL, {0}};
        int64_t before = afc_live_count();
        int rc = pick(x, ix, &out);
        if (rc != AFC_ERR_INDEX || !strstr(afc_last_error(), want) || out.data != NULL || afc_live_count() != before)
            fail(want, n, workers[wi]);
        /* Division by zero: x = 0 at the same positions. */
        for (int b = 0; b < nbad; b++) xs[bad[b]] = -2000;
        int64_t q;
        rc = quotient(x, 5, &q);
        if (rc != AFC_ERR_DIVISION_BY_ZERO) fail("division by zero", n, workers[wi]);
        for (int b = 0; b < nbad; b++) xs[bad[b]] = bad[b];
    }
    free(xs);
    free(is);
}

static void *user_thread(void *arg) {
    int64_t n = 300001, id = (int64_t)(intptr_t)arg;
    int64_t *is = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) is[i] = (i * 13 + id) % 1001;
    afc_i64_1d ix = {is, {n}};
    for (int rep = 0; rep < 20; rep++) {
        int64_t s, lo, hi, h; bool any;
        if (stats(ix, &s, &lo, &hi, &h, &any)) return (void *)1;
        int64_t cs = 0, clo = INT64_MAX, chi = INT64_MIN;
        for (int64_t i = 0; i < n; i++) {
            cs += is[i];
            clo = is[i] < clo ? is[i] : clo;
            chi = is[i] > chi ? is[i] : chi;
        }
        if (s != cs || lo != clo || hi != chi) return (void *)1;
    }
    free(is);
    return NULL;
}

int main(void) {
    read_workers();
    int64_t start = afc_live_count();
    int64_t most = sizes[NSIZES - 1];
    double *xs = malloc((size_t)most * 8);
    int64_t *is = malloc((size_t)most * 8);
    for (int64_t i = 0; i < most; i++) {
        xs[i] = (double)((i * 7919) % 1013) / 97.0 - 5.0;
        is[i] = (i * 7919) % 2003 - 1000;
    }
    for (int si = 0; si < NSIZES; si++) {
        int64_t n = sizes[si];
        if (getenv("SMALL") && n > 300001) break;
        size_t cap = (size_t)n * 16 + 4096;
        char *ref = malloc(cap), *got = malloc(cap);
        size_t len = run_all(n, workers[0], xs, is, ref);
        for (int wi = 1; wi < nworkers; wi++) {
            if (run_all(n, workers[wi], xs, is, got) != len || memcmp(ref, got, len) != 0)
                fail("bits differ from the first worker count", n, workers[wi]);
        }
        free(ref);
        free(got);
    }
    printf("sizes agree on");
    for (int wi = 0; wi < nworkers; wi++) printf("%s %d", wi == 0 ? "" : ",", workers[wi]);
    printf(" workers\n");

    const int64_t b1[] = {0}, b2[] = {999}, b3[] = {1000}, b4[] = {255999, 1001}, b5[] = {299999, 150000, 150001};
    first_error(5000, b1, 1);
    first_error(5000, b2, 1);
    first_error(5000, b3, 1);
    first_error(256000, b4, 2);
    first_error(300000, b5, 3);
    hist_error(5000, 4000, 2500);
    hist_error(5000, 999, 1000);
    hist_error(300000, 299999, 150001);
    walk_error(5000, 1500, 3000);
    walk_error(5000, 1500, 1200);
    walk_error(5000, 500, 200);
    walk_error(5000, 4999, 4998);
    walk_error(300000, 1500, 299999);
    printf("first errors in index order\n");

    afc_set_num_threads(2);
    int bad = 0;
#pragma omp parallel num_threads(2) reduction(+ : bad)
    {
        afc_i64_1d ix = {is, {300001}};
        int64_t s, lo, hi, h; bool any;
        bad += stats(ix, &s, &lo, &hi, &h, &any) != 0;
    }
    pthread_t th[4];
    for (int t = 0; t < 4; t++) pthread_create(&th[t], NULL, user_thread, (void *)(intptr_t)t);
    for (int t = 0; t < 4; t++) {
        void *r;
        pthread_join(th[t], &r);
        bad += r != NULL;
    }
    if (bad) fail("nested or concurrent calls", 300001, 2);
    printf("inside OpenMP and from 4 user threads\n");

    free(xs);
    free(is);
    if (afc_live_count() != start) fail("a leak", 0, 0);
    printf("no leak\n");
    return 0;
}
