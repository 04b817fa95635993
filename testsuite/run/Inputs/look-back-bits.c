/* Driver of run/look-back-bits.acc: f built twice (look-back, barrier). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "afc.h"

int f_look(const afc_f64_1d xs, afc_f64_1d *s, afc_f64_1d *p, double *sum);
int f_barrier(const afc_f64_1d xs, afc_f64_1d *s, afc_f64_1d *p, double *sum);

int main(void) {
  const int64_t sizes[] = {0, 1, 999, 1000, 1001, 4096, 100000, 255999, 256000, 256001, 1000003};
  const int threads[] = {1, 2, 3, 8};
  int bad = 0;
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    int64_t n = sizes[si];
    double *x = malloc((size_t)(n + 1) * sizeof(double));
    srand((unsigned)si + 1);
    for (int64_t i = 0; i < n; i++) x[i] = rand() / (double)RAND_MAX - 0.2;
    afc_f64_1d xs = {x, {n}}, s0 = {0}, p0 = {0};
    double sum0 = 0;
    for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
      afc_set_num_threads(threads[t]);
      for (int barrier = 0; barrier < 2; barrier++) {
        afc_f64_1d s = {0}, p = {0};
        double sum;
        int rc = barrier ? f_barrier(xs, &s, &p, &sum) : f_look(xs, &s, &p, &sum);
        if (rc) {
          printf("error %d: %s\n", rc, afc_last_error());
          return 1;
        }
        if (t == 0 && !barrier) {
          s0 = s, p0 = p, sum0 = sum;
          continue;
        }
        if (s.shape[0] != s0.shape[0] || memcmp(s.data, s0.data, (size_t)s.shape[0] * sizeof(double)) ||
            memcmp(p.data, p0.data, (size_t)n * sizeof(double)) || memcmp(&sum, &sum0, sizeof sum)) {
          printf("differ: n = %lld, %d workers, %s\n", (long long)n, threads[t], barrier ? "barrier" : "look-back");
          bad = 1;
        }
        afc_free(s.data);
        afc_free(p.data);
      }
    }
    afc_free(s0.data);
    afc_free(p0.data);
    free(x);
  }
  printf(bad ? "bits differ\n" : "same bits\n");
  return bad;
}
