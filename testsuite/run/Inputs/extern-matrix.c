/* C side of run/extern-matrix.acc (oracle: Inputs/extern-matrix-oracle.acc). */
#include "afc.h"
#include <stdlib.h>
/* The transpose of a matrix, in afc's allocator. */
int flip(afc_f64_2d m, afc_f64_2d *out) {
  int64_t r = m.shape[0], c = m.shape[1];
  out->data = afc_alloc((size_t)(r * c) * sizeof(double) + 1);
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < c; j++) out->data[j * r + i] = m.data[i * c + j];
  out->shape[0] = c; out->shape[1] = r; return 0; }
/* Row sums of a rank-3 array, as a matrix. */
int sums3(afc_i64_3d a, afc_i64_2d *out) {
  int64_t p = a.shape[0], q = a.shape[1], r = a.shape[2];
  out->data = afc_alloc((size_t)(p * q) * sizeof(int64_t) + 1);
  for (int64_t i = 0; i < p * q; i++) {
    int64_t s = 0;
    for (int64_t k = 0; k < r; k++) s += a.data[i * r + k];
    out->data[i] = s; }
  out->shape[0] = p; out->shape[1] = q; return 0; }
