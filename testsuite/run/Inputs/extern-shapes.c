/* C side of run/extern-shapes.acc (oracle: Inputs/extern-shapes-oracle.acc). */
#include "afc.h"
#include <stdbool.h>
int seed(int64_t *out) { *out = 7; return 0; }
int dup(afc_i32_1d xs, afc_i32_1d *out) {
  int64_t n = xs.shape[0];
  out->data = afc_alloc(2 * n * sizeof(int32_t));
  for (int64_t i = 0; i < 2 * n; i++) out->data[i] = xs.data[i % (n ? n : 1)];
  out->shape[0] = 2 * n; return 0; }
int pair(int64_t a0, double a1, bool b, double *x, int64_t *y, bool *z) { *x = a1 * a0; *y = a0 + 1; *z = !b; return 0; }
