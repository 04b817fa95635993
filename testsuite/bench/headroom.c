/* headroom: how much faster a second core makes compute-bound work on this
 * machine, now — the yardstick for afc's speed-up on all cores.
 *
 * On a virtual machine the second vCPU can be a hyperthread of the first, or
 * shared with other guests: a perfectly parallel loop then gains anywhere
 * from 1.2x to 1.9x, from one minute to the next. So afc's speed-up on
 * blackscholes is timed in one process, interleaved round-robin, beside the
 * same program in C (c_fused's blackscholes) run by OpenMP in the chunks
 * afc uses. Both are medians of REPS; the ratio of the two speed-ups is the
 * comparable figure.
 *
 * usage: headroom N REPS WORKERS   (linked with c_fused's and afc's objects)
 * WORKERS may be a list, "2,4,8,16": each count is timed in the same rounds.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "afc.h"
#include "anchors.h"

ANCHOR_SIGNATURES(c_fused_)
ANCHOR_SIGNATURES(afc_)

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int64_t n;
static double *in[5], *out[2];

/* c_fused's loop in afc's chunks (256, taken by the workers as they come:
 * docs/strategy.md), so that the two differ by their code only. */
static void c_chunked(int workers) {
  const int64_t chunks = 256, chunk = (n + chunks - 1) / chunks;
#pragma omp parallel for num_threads(workers) schedule(dynamic, 1)
  for (int64_t c = 0; c < chunks; c++) {
    int64_t lo = c * chunk < n ? c * chunk : n, hi = lo + chunk < n ? lo + chunk : n;
    c_fused_blackscholes(hi - lo, in[0] + lo, in[1] + lo, in[2] + lo, in[3] + lo, in[4] + lo, out[0] + lo,
                         out[1] + lo);
  }
}

static void afc_on(int workers) {
  afc_set_num_threads(workers);
  afc_blackscholes(n, in[0], in[1], in[2], in[3], in[4], out[0], out[1]);
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int k) {
  qsort(v, k, sizeof *v, by_value);
  return v[k / 2];
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: headroom N REPS WORKERS[,WORKERS...]\n");
    return 2;
  }
  n = atoll(argv[1]);
  int reps = atoi(argv[2]), counts[16], k = 0;
  for (char *w = argv[3], *end; *w && k < 16; w = *end ? end + 1 : end) {
    counts[k] = (int)strtol(w, &end, 10);
    if (end == w || counts[k] < 1) {
      fprintf(stderr, "headroom: WORKERS must be positive numbers, separated by commas\n");
      return 2;
    }
    k++;
  }
  if (n < 1 || reps < 1 || k == 0) {
    fprintf(stderr, "headroom: N, REPS and WORKERS must be positive\n");
    return 2;
  }
  for (int i = 0; i < 5; i++) in[i] = malloc(n * sizeof(double));
  for (int i = 0; i < 2; i++) out[i] = malloc(n * sizeof(double));
  for (int i = 0; i < 5; i++)
    if (!in[i]) return 1;
  for (int i = 0; i < 2; i++)
    if (!out[i]) return 1;
  /* the anchors driver's ranges: S, X, T, r, v */
  static const double lo[5] = {5, 1, 0.25, 0.01, 0.1}, hi[5] = {30, 100, 10, 0.05, 0.5};
  srand(7);
  for (int i = 0; i < 5; i++)
    for (int64_t j = 0; j < n; j++) in[i][j] = lo[i] + (hi[i] - lo[i]) * rand() / RAND_MAX;
  /* t[0], t[1]: C and afc on one worker; t[2 + 2w], t[3 + 2w]: on counts[w] */
  double *t[2 + 2 * 16];
  for (int j = 0; j < 2 + 2 * k; j++) t[j] = malloc(reps * sizeof(double));
  for (int w = 0; w < k; w++) {
    c_chunked(counts[w]); /* touch every page and start OpenMP's threads */
    afc_on(counts[w]);
  }
  for (int r = 0; r < reps; r++) {
    double t0 = now_ms();
    c_chunked(1);
    double t1 = now_ms();
    afc_on(1);
    double t2 = now_ms();
    t[0][r] = t1 - t0, t[1][r] = t2 - t1;
    for (int w = 0; w < k; w++) {
      t0 = now_ms();
      c_chunked(counts[w]);
      t1 = now_ms();
      afc_on(counts[w]);
      t2 = now_ms();
      t[2 + 2 * w][r] = t1 - t0, t[3 + 2 * w][r] = t2 - t1;
    }
  }
  double c1 = median(t[0], reps), a1 = median(t[1], reps);
  for (int w = 0; w < k; w++) {
    double cw = median(t[2 + 2 * w], reps), aw = median(t[3 + 2 * w], reps);
    printf("blackscholes  %-18s %.2f ms on 1 thread, %.2f ms on %d: x%.2f\n", "C, OpenMP chunks:", c1, cw, counts[w],
           c1 / cw);
    printf("blackscholes  %-18s %.2f ms on 1 worker, %.2f ms on %d: x%.2f (%.2f of C's speed-up)\n", "afc:", a1, aw,
           counts[w], a1 / aw, (a1 / aw) / (c1 / cw));
  }
  for (int i = 0; i < 5; i++) free(in[i]);
  for (int i = 0; i < 2; i++) free(out[i]);
  for (int j = 0; j < 2 + 2 * k; j++) free(t[j]);
  return 0;
}
