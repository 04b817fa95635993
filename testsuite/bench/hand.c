/* The same programs fused by hand, as a C programmer would write them. */
#include <stdint.h>

void hand_normalizeInc(const double *restrict xs, int64_t n, double *restrict out) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += xs[i];
    for (int64_t i = 0; i < n; i++) out[i] = (xs[i] + 1.0) / s;
}

double hand_dotp(const double *restrict xs, const double *restrict ys, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += xs[i] * ys[i];
    return s;
}

void hand_diag(const double *restrict xs, int64_t n, double *restrict ys, double *restrict zs) {
    for (int64_t i = 0; i < n; i++) {
        double y = xs[i] * 2.0 + 1.0;
        ys[i] = y;
        zs[i] = y * y;
    }
}

void hand_normalize2(const double *restrict xs, int64_t n, double *restrict ys1, double *restrict ys2) {
    double sum1 = 0.0, sum2 = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double x = xs[i];
        sum1 += x;
        if (x > 0.0) sum2 += x;
    }
    for (int64_t i = 0; i < n; i++) {
        ys1[i] = xs[i] / sum1;
        ys2[i] = xs[i] / sum2;
    }
}

void hand_singleLoop(const double *restrict as, int64_t n, double *restrict out) {
    for (int64_t i = 0; i < n; i++) {
        double c = as[i] * 3.0;
        out[i] = as[n - 1 - i] + c + (c + 1.0);
    }
}

int hand_gathered(const int64_t *restrict is, int64_t m, const double *restrict xs, int64_t n, double *restrict out) {
    for (int64_t j = 0; j < m; j++) {
        int64_t k = is[j];
        if (k < 0 || k >= n) return 1;
        double x = xs[k];
        out[j] = (x * x + 1.0) + (double)k;
    }
    return 0;
}

double hand_crossDist(const double *restrict xs, int64_t n, const double *restrict ys, int64_t m) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) {
            double d = xs[i] - ys[j];
            s += d * d;
        }
    return s;
}
