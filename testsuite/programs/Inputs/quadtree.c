/* programs/quadtree.acc: afc's flattened quadtree against a pointer-based
 * one built here: nodes with four children, points copied into leaves,
 * then the leaves walked in quadrant order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct node {
    struct node *child[4]; /* all NULL for a leaf */
    double *x, *y;         /* a leaf's points, in input order */
    int64_t n;
} node;

static unsigned long long state = 2463534242ULL;
static double uniform(void) {
    state ^= state << 13; state ^= state >> 7; state ^= state << 17;
    return (double)(state >> 11) / 9007199254740992.0;
}

/* Bit 0: at or right of the middle; bit 1: at or above it. */
static int quadrant(double x, double y, double mx, double my) { return (x >= mx) | (y >= my) << 1; }

static node *build(const double *x, const double *y, int64_t n, double x0, double y0, double x1, double y1) {
    node *t = calloc(1, sizeof *t);
    if (n == 0) return t;
    if (n == 1 || (x1 - x0 < 1.0e-9 && y1 - y0 < 1.0e-9)) {
        t->x = malloc(n * sizeof(double));
        t->y = malloc(n * sizeof(double));
        memcpy(t->x, x, n * sizeof(double));
        memcpy(t->y, y, n * sizeof(double));
        t->n = n;
        return t;
    }
    double mx = (x0 + x1) / 2.0, my = (y0 + y1) / 2.0;
    double *qx = malloc(n * sizeof(double)), *qy = malloc(n * sizeof(double));
    for (int q = 0; q < 4; q++) {
        int64_t m = 0;
        for (int64_t i = 0; i < n; i++)
            if (quadrant(x[i], y[i], mx, my) == q) { qx[m] = x[i]; qy[m] = y[i]; m++; }
        double bx0 = q & 1 ? mx : x0, bx1 = q & 1 ? x1 : mx;
        double by0 = q & 2 ? my : y0, by1 = q & 2 ? y1 : my;
        t->child[q] = build(qx, qy, m, bx0, by0, bx1, by1);
    }
    free(qx);
    free(qy);
    return t;
}

/* Appends the leaves in quadrant order; empty subtrees add no leaf. */
static void flatten(const node *t, double *x, double *y, int64_t *npts, int64_t *sizes, int64_t *nleaves) {
    if (t->child[0]) {
        for (int q = 0; q < 4; q++) flatten(t->child[q], x, y, npts, sizes, nleaves);
    } else if (t->n > 0) {
        memcpy(x + *npts, t->x, t->n * sizeof(double));
        memcpy(y + *npts, t->y, t->n * sizeof(double));
        *npts += t->n;
        sizes[(*nleaves)++] = t->n;
    }
}

static void release(node *t) {
    for (int q = 0; q < 4; q++) if (t->child[q]) release(t->child[q]);
    free(t->x);
    free(t->y);
    free(t);
}

static int check(const char *what, double *x, double *y, int64_t n) {
    double x0 = 1.0 / 0.0, y0 = 1.0 / 0.0, x1 = -1.0 / 0.0, y1 = -1.0 / 0.0;
    for (int64_t i = 0; i < n; i++) {
        if (x[i] < x0) x0 = x[i];
        if (y[i] < y0) y0 = y[i];
        if (x[i] > x1) x1 = x[i];
        if (y[i] > y1) y1 = y[i];
    }
    node *t = build(x, y, n, x0, y0, x1, y1);
    double *wx = malloc((n + 1) * sizeof(double)), *wy = malloc((n + 1) * sizeof(double));
    int64_t *wsizes = malloc((n + 1) * sizeof(int64_t)), npts = 0, nleaves = 0;
    flatten(t, wx, wy, &npts, wsizes, &nleaves);
    release(t);

    afc_f64_1d xs = {x, {n}}, ys = {y, {n}};
    afc_f64_1d gx = {0}, gy = {0};
    afc_i64_1d gsizes = {0};
    int rc = quadtree(xs, ys, &gx, &gy, &gsizes);
    int ok = rc == 0 && gx.shape[0] == npts && gy.shape[0] == npts && gsizes.shape[0] == nleaves;
    for (int64_t i = 0; ok && i < npts; i++) ok = gx.data[i] == wx[i] && gy.data[i] == wy[i];
    for (int64_t i = 0; ok && i < nleaves; i++) ok = gsizes.data[i] == wsizes[i];
    if (!ok)
        printf("MISMATCH %s n=%lld: rc=%d %s points %lld/%lld leaves %lld/%lld\n", what, (long long)n, rc,
               rc ? afc_last_error() : "", (long long)gx.shape[0], (long long)npts, (long long)gsizes.shape[0],
               (long long)nleaves);
    if (rc == 0) {
        afc_free(gx.data);
        afc_free(gy.data);
        afc_free(gsizes.data);
    }
    free(wx);
    free(wy);
    free(wsizes);
    return ok;
}

int main(void) {
    enum { N = 20000 };
    static double x[N], y[N];
    int ok = 0;
    int64_t sizes[] = {0, 1, 2, 100, N};
    for (int s = 0; s < 5; s++) {
        for (int64_t i = 0; i < sizes[s]; i++) { x[i] = uniform() * 100; y[i] = uniform() * 100; }
        ok += check("uniform", x, y, sizes[s]);
    }
    /* clustered, with repeated points: leaves that hold several points */
    for (int64_t i = 0; i < 3000; i++) { x[i] = (double)(i % 7); y[i] = (double)(i % 5) * 0.5; }
    ok += check("repeated", x, y, 3000);
    /* every point the same */
    for (int64_t i = 0; i < 64; i++) { x[i] = 3.25; y[i] = -1.0; }
    ok += check("one point", x, y, 64);
    printf("quadtree: %d inputs agree\n", ok);
    return 0;
}
