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

/* LANES running maxima with their positions, combined in lane order (the
 * first position of the largest distance, as filterMax's c_fused keeps). */
void hand_farthest(const double *restrict x, const double *restrict y, int64_t n, double lx0, double ly0, double lx1,
                   double ly1, double *best) {
  const double dx = lx1 - lx0, dy = ly1 - ly0;
  double bd[LANES];
  int64_t bi[LANES];
  for (int l = 0; l < LANES; l++) { bd[l] = -__builtin_inf(); bi[l] = -1; }
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int l = 0; l < LANES; l++) {
      double d = dx * (y[i + l] - ly0) - dy * (x[i + l] - lx0);
      int gt = d > bd[l];
      bd[l] = gt ? d : bd[l];
      bi[l] = gt ? i + l : bi[l];
    }
  for (; i < n; i++) {
    double d = dx * (y[i] - ly0) - dy * (x[i] - lx0);
    if (d > bd[0] || (d == bd[0] && i < bi[0])) { bd[0] = d; bi[0] = i; }
  }
  double d = bd[0];
  int64_t at = bi[0];
  for (int l = 1; l < LANES; l++)
    if (bd[l] > d || (bd[l] == d && bi[l] >= 0 && bi[l] < at)) { d = bd[l]; at = bi[l]; }
  best[0] = at >= 0 ? x[at] : 0.0;
  best[1] = at >= 0 ? y[at] : 0.0;
}

/* Eight independent partial sums of the heavy map, in lanes as afc keeps
   them (the remainder into lane 0). */
double hand_heavyFold(const double *restrict x, const double *restrict y, int64_t n) {
  double acc[LANES] = {0};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int l = 0; l < LANES; l++) {
      double a = x[i + l], b = y[i + l];
      acc[l] += __builtin_sqrt(a) / (a + 1.5) + __builtin_sqrt(b) / (b + 2.5) + __builtin_sqrt(a * b + 1.0) / (a + b + 3.0) + a / (b + 4.0) + b / (a + 5.0);
    }
  for (; i < n; i++) {
    double a = x[i], b = y[i];
    acc[0] += __builtin_sqrt(a) / (a + 1.5) + __builtin_sqrt(b) / (b + 2.5) + __builtin_sqrt(a * b + 1.0) / (a + b + 3.0) + a / (b + 4.0) + b / (a + 5.0);
  }
  double s = 0.0;
  for (int l = 0; l < LANES; l++) s += acc[l];
  return s;
}

/* The running sum of heavyFold's map: in blocks that stay in L1, the map
   into the output (vectorised), then the sum through it. */
void hand_heavyScan(const double *restrict x, const double *restrict y, int64_t n, double *restrict out) {
  enum { BLOCK = 512 };
  double acc = 0.0;
  for (int64_t b = 0; b < n; b += BLOCK) {
    int64_t e = b + BLOCK < n ? b + BLOCK : n;
    for (int64_t i = b; i < e; i++) {
      double a = x[i], c = y[i];
      out[i] = __builtin_sqrt(a) / (a + 1.5) + __builtin_sqrt(c) / (c + 2.5) + __builtin_sqrt(a * c + 1.0) / (a + c + 3.0) + a / (c + 4.0) + c / (a + 5.0);
    }
    for (int64_t i = b; i < e; i++) out[i] = acc += out[i];
  }
}
