/* Times extra.acc's programs: hand-fused C, afc fused, afc unfused; median
 * of REPS runs on N elements, outputs in caller-provided storage (reused).
 * usage: extra [N] [REPS] */
#define _POSIX_C_SOURCE 199309L
#include "afc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DECL(name, ...) int name##_fused(__VA_ARGS__); int name##_unfused(__VA_ARGS__);
DECL(diag, afc_f64_1d, afc_f64_1d *, afc_f64_1d *)
DECL(gathered, afc_i64_1d, afc_f64_1d, afc_f64_1d *)
DECL(crossDist, afc_f64_1d, afc_f64_1d, double *)
DECL(farthest, afc_f64_1d, afc_f64_1d, double, double, double, double, double *, double *)
DECL(heavyFold, afc_f64_1d, afc_f64_1d, double *)
DECL(heavyScan, afc_f64_1d, afc_f64_1d, afc_f64_1d *)
void hand_diag(const double *, int64_t, double *, double *);
int hand_gathered(const int64_t *, int64_t, const double *, int64_t, double *);
double hand_crossDist(const double *, int64_t, const double *, int64_t);
void hand_farthest(const double *, const double *, int64_t, double, double, double, double, double *);
double hand_heavyFold(const double *, const double *, int64_t);
void hand_heavyScan(const double *, const double *, int64_t, double *);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int RUNS;
static double sink;

#define TIME(var, ...)                                                              \
  do {                                                                              \
    double t_[64];                                                                  \
    for (int r_ = 0; r_ < RUNS; r_++) { double t0_ = now(); __VA_ARGS__; t_[r_] = now() - t0_; } \
    qsort(t_, RUNS, sizeof(double), cmp);                                           \
    var = t_[RUNS / 2];                                                             \
  } while (0)

static void report(const char *name, double hand, double fused, double unfused) {
  printf("%-13s %10.2f %10.2f %10.2f %11.2f %14.2f\n", name, hand * 1e3, fused * 1e3, unfused * 1e3, fused / hand,
         unfused / fused);
}

int main(int argc, char **argv) {
  int64_t N = argc > 1 ? atoll(argv[1]) : 20000000;
  RUNS = argc > 2 ? atoi(argv[2]) : 9;
  if (RUNS > 64) RUNS = 64;
  if (RUNS < 1) RUNS = 1;
  double *xs = afc_alloc(N * sizeof(double)), *ys = afc_alloc(N * sizeof(double));
  double *o1 = afc_alloc(N * sizeof(double)), *o2 = afc_alloc(N * sizeof(double));
  for (int64_t i = 0; i < N; i++) { xs[i] = (double)(i % 1000) / 7.0; ys[i] = 1.0 / (1 + i % 13); }
  memset(o1, 0, N * sizeof(double));
  memset(o2, 0, N * sizeof(double));
  afc_f64_1d X = {xs, {N}};
  printf("%-13s %10s %10s %10s %11s %14s\n", "benchmark", "hand C", "afc fused", "afc unfused", "fused/hand", "unfused/fused");
  double h, f, u;

  TIME(h, hand_diag(xs, N, o1, o2));
  TIME(f, { afc_f64_1d a = {o1, {N}}, b = {o2, {N}}; if (diag_fused(X, &a, &b)) abort(); });
  TIME(u, { afc_f64_1d a = {o1, {N}}, b = {o2, {N}}; if (diag_unfused(X, &a, &b)) abort(); });
  report("diag", h, f, u);

  int64_t *is = afc_alloc(N * sizeof(int64_t));
  for (int64_t i = 0; i < N; i++) is[i] = (i * 7919) % N;
  afc_i64_1d I = {is, {N}};
  TIME(h, if (hand_gathered(is, N, xs, N, o1)) abort());
  TIME(f, { afc_f64_1d a = {o1, {N}}; if (gathered_fused(I, X, &a)) abort(); });
  TIME(u, { afc_f64_1d a = {o1, {N}}; if (gathered_unfused(I, X, &a)) abort(); });
  report("gathered", h, f, u);

  /* n·m = N pairs from two arrays of about sqrt(N) elements. */
  int64_t n = 1;
  while ((n + 1) * (n + 1) <= N) n++;
  afc_f64_1d A = {xs, {n}}, B = {ys, {N / n}};
  TIME(h, sink += hand_crossDist(xs, n, ys, N / n));
  TIME(f, { double d; if (crossDist_fused(A, B, &d)) abort(); sink += d; });
  TIME(u, { double d; if (crossDist_unfused(A, B, &d)) abort(); sink += d; });
  report("crossDist", h, f, u);

  afc_f64_1d Y0 = {ys, {N}};
  double hs = 0, fs = 0, us = 0;
  TIME(h, hs = hand_heavyFold(xs, ys, N));
  TIME(f, if (heavyFold_fused(X, Y0, &fs)) abort());
  TIME(u, if (heavyFold_unfused(X, Y0, &us)) abort());
  /* The same sum in another order (lanes, the unfused map's array) agrees
     to a few ulps. */
  if (!(fabs(fs - hs) <= 1e-12 * fabs(hs) && fabs(us - hs) <= 1e-12 * fabs(hs))) {
    fprintf(stderr, "heavyFold: afc and hand C disagree\n");
    return 1;
  }
  report("heavyFold", h, f, u);

  TIME(h, hand_heavyScan(xs, ys, N, o2));
  TIME(f, { afc_f64_1d a = {o1, {N}}; if (heavyScan_fused(X, Y0, &a)) abort(); });
  /* Chunks and lanes rebracket the running sum of up to N terms: each
     bracketing is within about N rounding errors of the exact sum. */
  for (int64_t i = 0; i < N; i += 997)
    if (!(fabs(o1[i] - o2[i]) <= 1e-16 * (double)(i + 1) * fabs(o2[i]))) {
      fprintf(stderr, "heavyScan: afc fused and hand C disagree at %lld: %.17g, %.17g\n", (long long)i, o1[i], o2[i]);
      return 1;
    }
  TIME(u, { afc_f64_1d a = {o1, {N}}; if (heavyScan_unfused(X, Y0, &a)) abort(); });
  report("heavyScan", h, f, u);

  /* Random points (the distance's arg-max moves unpredictably). */
  srand(1);
  for (int64_t i = 0; i < N; i++) { xs[i] = rand() / (double)RAND_MAX; ys[i] = rand() / (double)RAND_MAX; }
  afc_f64_1d Y = {ys, {N}};
  double hb[2], fb[2], ub[2];
  TIME(h, hand_farthest(xs, ys, N, 0.1, 0.2, 0.9, 0.7, hb));
  TIME(f, if (farthest_fused(X, Y, 0.1, 0.2, 0.9, 0.7, &fb[0], &fb[1])) abort());
  TIME(u, if (farthest_unfused(X, Y, 0.1, 0.2, 0.9, 0.7, &ub[0], &ub[1])) abort());
  if (hb[0] != fb[0] || hb[1] != fb[1] || hb[0] != ub[0] || hb[1] != ub[1]) {
    fprintf(stderr, "farthest: afc and hand C disagree\n");
    return 1;
  }
  report("farthest", h, f, u);

  if (sink == 42.0) printf("\n");
  return 0;
}
