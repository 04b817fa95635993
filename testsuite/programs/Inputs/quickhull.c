/* programs/quickhull.acc: afc's Quickhull against Andrew's monotone chain,
 * written here: sort, then a lower and an upper chain, collinear points
 * dropped. Both give the hull counter-clockwise from the leftmost point. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct { double x, y; } point;

static unsigned long long state = 1181783497276652981ULL;
static double uniform(void) {
    state ^= state << 13; state ^= state >> 7; state ^= state << 17;
    return (double)(state >> 11) / 9007199254740992.0;
}

static int by_position(const void *a, const void *b) {
    const point *p = a, *q = b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    return p->y < q->y ? -1 : p->y > q->y;
}

static double turn(point o, point a, point b) { return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x); }

/* The hull of pts (sorted in place) into out; returns its size. */
static int64_t monotone_chain(point *pts, int64_t n, point *out) {
    qsort(pts, n, sizeof *pts, by_position);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i > 0 && pts[i].x == pts[i - 1].x && pts[i].y == pts[i - 1].y) continue;
        while (m >= 2 && turn(out[m - 2], out[m - 1], pts[i]) <= 0) m--;
        out[m++] = pts[i];
    }
    for (int64_t i = n - 2, lower = m + 1; i >= 0; i--) {
        while (m >= lower && turn(out[m - 2], out[m - 1], pts[i]) <= 0) m--;
        out[m++] = pts[i];
    }
    return m > 1 ? m - 1 : m; /* the last point is the first again */
}

static int check(const char *what, double *x, double *y, int64_t n) {
    point *pts = malloc((n + 1) * sizeof *pts), *want = malloc((2 * n + 2) * sizeof *want);
    for (int64_t i = 0; i < n; i++) pts[i] = (point){x[i], y[i]};
    int64_t m = monotone_chain(pts, n, want);

    afc_f64_1d xs = {x, {n}}, ys = {y, {n}}, gx = {0}, gy = {0};
    int rc = quickhull(xs, ys, &gx, &gy);
    int ok = rc == 0 && gx.shape[0] == m;
    for (int64_t i = 0; ok && i < m; i++) ok = gx.data[i] == want[i].x && gy.data[i] == want[i].y;
    if (!ok) printf("MISMATCH %s n=%lld: rc=%d %s hull of %lld points, want %lld\n", what, (long long)n, rc,
                    rc ? afc_last_error() : "", (long long)gx.shape[0], (long long)m);
    if (rc == 0) {
        afc_free(gx.data);
        afc_free(gy.data);
    }
    free(pts);
    free(want);
    return ok;
}

int main(void) {
    enum { N = 100000 };
    static double x[N], y[N];
    int ok = 0;
    int64_t sizes[] = {0, 1, 2, 3, 1000, N};
    for (int s = 0; s < 6; s++) {
        for (int64_t i = 0; i < sizes[s]; i++) { x[i] = uniform() * 2 - 1; y[i] = uniform() * 2 - 1; }
        ok += check("square", x, y, sizes[s]);
    }
    /* on a circle: every point is on the hull, a deep recursion */
    for (int64_t i = 0; i < 2000; i++) {
        double t = uniform() * 6.283185307179586;
        x[i] = cos(t);
        y[i] = sin(t);
    }
    ok += check("circle", x, y, 2000);
    /* one point repeated */
    for (int64_t i = 0; i < 10; i++) { x[i] = 0.5; y[i] = 0.25; }
    ok += check("one point", x, y, 10);
    printf("quickhull: %d inputs agree\n", ok);
    return 0;
}
