/* programs/normalize2.acc: against papers/000 Listing 1.1, the unfused
 * imperative normalize2, transcribed here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long long state = 4101842887655102017ULL;
static double uniform(void) {
    state ^= state << 13; state ^= state >> 7; state ^= state << 17;
    return (double)(state >> 11) / 9007199254740992.0;
}

static void listing_1_1(const double *xs, int64_t n, double *ys1, double *ys2) {
    double sum1 = 0;
    for (int64_t i = 0; i < n; i++) sum1 += xs[i];
    double *gts = malloc((n + 1) * sizeof *gts);
    int64_t gts_len = 0;
    for (int64_t i = 0; i < n; i++)
        if (xs[i] > 0) gts[gts_len++] = xs[i];
    double sum2 = 0;
    for (int64_t i = 0; i < gts_len; i++) sum2 += gts[i];
    for (int64_t i = 0; i < n; i++) ys1[i] = xs[i] / sum1;
    for (int64_t i = 0; i < n; i++) ys2[i] = xs[i] / sum2;
    free(gts);
}

static int close_to(double got, double want) {
    if (isnan(want) || isinf(want)) return isnan(want) ? isnan(got) : got == want;
    return fabs(got - want) <= 1e-12 * fabs(want) + 1e-300;
}

static int check(const char *what, double *xs, int64_t n) {
    double *w1 = malloc((n + 1) * sizeof(double)), *w2 = malloc((n + 1) * sizeof(double));
    listing_1_1(xs, n, w1, w2);
    afc_f64_1d in = {xs, {n}}, g1 = {0}, g2 = {0};
    int rc = normalize2(in, &g1, &g2);
    int ok = rc == 0 && g1.shape[0] == n && g2.shape[0] == n;
    for (int64_t i = 0; ok && i < n; i++) ok = close_to(g1.data[i], w1[i]) && close_to(g2.data[i], w2[i]);
    if (!ok) printf("MISMATCH %s n=%lld rc=%d\n", what, (long long)n, rc);
    if (rc == 0) {
        afc_free(g1.data);
        afc_free(g2.data);
    }
    free(w1);
    free(w2);
    return ok;
}

int main(void) {
    enum { N = 1000003 };
    static double xs[N];
    int ok = 0;
    int64_t sizes[] = {0, 1, 17, N};
    for (int s = 0; s < 4; s++) {
        for (int64_t i = 0; i < sizes[s]; i++) xs[i] = uniform() * 2 - 0.5;
        ok += check("mixed signs", xs, sizes[s]);
    }
    /* nothing positive: sum2 is 0 and ys2 divides by it */
    for (int64_t i = 0; i < 100; i++) xs[i] = -uniform();
    ok += check("no positives", xs, 100);
    printf("normalize2: %d inputs agree\n", ok);
    return 0;
}
