/* programs/closest-points.acc: afc's divide and conquer against the plain
 * all-pairs minimum, computed here independently. Distances are computed
 * with the same formula and no contraction, so they agree exactly. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long long state = 88172645463325252ULL;
static double uniform(void) {
    state ^= state << 13; state ^= state >> 7; state ^= state << 17;
    return (double)(state >> 11) / 9007199254740992.0;
}

static double reference(const double *x, const double *y, int64_t n) {
    double best = INFINITY;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) {
            double dx = x[i] - x[j], dy = y[i] - y[j];
            double d = sqrt(dx * dx + dy * dy);
            if (d < best) best = d;
        }
    return best;
}

static int check(const char *what, double *x, double *y, int64_t n) {
    afc_f64_1d xs = {x, {n}}, ys = {y, {n}};
    double got = -1;
    int rc = closest(xs, ys, &got);
    double want = reference(x, y, n);
    if (rc != 0 || got != want) {
        printf("MISMATCH %s n=%lld: rc=%d got %.17g want %.17g %s\n", what, (long long)n, rc, got, want,
               rc ? afc_last_error() : "");
        return 0;
    }
    return 1;
}

int main(void) {
    enum { N = 3000 };
    static double x[N], y[N];
    int ok = 0;
    /* sizes around the base case's 32, and larger */
    int64_t sizes[] = {0, 1, 2, 31, 32, 33, 1000, N};
    for (int s = 0; s < 8; s++) {
        for (int64_t i = 0; i < sizes[s]; i++) { x[i] = uniform() * 100; y[i] = uniform() * 100; }
        ok += check("uniform", x, y, sizes[s]);
    }
    /* every point on one horizontal line: the halving makes no progress */
    for (int64_t i = 0; i < 500; i++) { x[i] = uniform(); y[i] = 7.0; }
    ok += check("one line", x, y, 500);
    printf("closest points: %d inputs agree\n", ok);
    return 0;
}
