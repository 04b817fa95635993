/* extra.acc's programs fused by hand, written the way ../shared/bench's
 * c_fused programs are: one loop per cluster, independent accumulators for
 * reductions (LANES of them, so gcc vectorises without -ffast-math). */
#include <stdint.h>

#define LANES 8

void hand_diag(const double *restrict xs, int64_t n, double *restrict ys, double *restrict zs) {
  for (int64_t i = 0; i < n; i++) {
    double y = xs[i] * 2.0 + 1.0;
    ys[i] = y;
    zs[i] = y * y;
  }
}

/* Returns non-zero on an index out of range, as afc's code does. */
int hand_gathered(const int64_t *restrict is, int64_t m, const double *restrict xs, int64_t n, double *restrict out) {
  for (int64_t j = 0; j < m; j++) {
    int64_t k = is[j];
    if ((uint64_t)k >= (uint64_t)n) return 1;
    double x = xs[k];
    out[j] = (x * x + 1.0) + (double)k;
  }
  return 0;
}

double hand_crossDist(const double *restrict xs, int64_t n, const double *restrict ys, int64_t m) {
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) {
    double acc[LANES] = {0};
    int64_t j = 0;
    for (; j + LANES <= m; j += LANES)
      for (int l = 0; l < LANES; l++) {
        double d = xs[i] - ys[j + l];
        acc[l] += d * d;
      }
    for (; j < m; j++) {
      double d = xs[i] - ys[j];
      s += d * d;
    }
    for (int l = 0; l < LANES; l++) s += acc[l];
  }
  return s;
}
