/* Adapters from the anchors' plain C signatures (../shared/bench/c/anchors.h)
 * to the functions afc compiles from anchors.acc: each wraps the caller's
 * arrays in descriptors (outputs as caller-provided storage of capacity n)
 * and calls afc's export. A failing call is a bug here: it aborts. */
#include <stdio.h>
#include <stdlib.h>

#include "anchors.h"
#include "anchors_afc.h"

#define IN(p, n) ((afc_f64_1d){(double *)(p), {(n)}})
#define OUT(p, n) ((afc_f64_1d){(p), {(n)}})

static void check(int rc, const char *what) {
  if (rc) {
    fprintf(stderr, "afc %s failed (%d): %s\n", what, rc, afc_last_error());
    abort();
  }
}

void afc_normalize2(int64_t n, const double *xs, double *ys1, double *ys2) {
  afc_f64_1d o1 = OUT(ys1, n), o2 = OUT(ys2, n);
  check(normalize2(IN(xs, n), &o1, &o2), "normalize2");
}

void afc_normalizeInc(int64_t n, const double *xs, double *norm) {
  afc_f64_1d o = OUT(norm, n);
  check(normalizeInc(IN(xs, n), &o), "normalizeInc");
}

int64_t afc_filterMax(int64_t n, const double *x, const double *y, double lx0, double ly0, double lx1, double ly1,
                      double *best, double *ax, double *ay) {
  afc_f64_1d oax = OUT(ax, n), oay = OUT(ay, n);
  check(filterMax(IN(x, n), IN(y, n), lx0, ly0, lx1, ly1, &best[0], &best[1], &oax, &oay), "filterMax");
  return oax.shape[0];
}

void afc_quadtree(int64_t n, const double *x, const double *y, double *bounds, double *const *qx, double *const *qy,
                  int64_t *counts) {
  afc_f64_1d q[8];
  for (int k = 0; k < 4; k++) {
    q[2 * k] = OUT(qx[k], n);
    q[2 * k + 1] = OUT(qy[k], n);
  }
  check(quadtree(IN(x, n), IN(y, n), &bounds[0], &bounds[1], &bounds[2], &bounds[3], &q[0], &q[1], &q[2], &q[3], &q[4],
                 &q[5], &q[6], &q[7]),
        "quadtree");
  for (int k = 0; k < 4; k++) counts[k] = q[2 * k].shape[0];
}

void afc_singleLoop(int64_t n, const double *as, double *out) {
  afc_f64_1d o = OUT(out, n);
  check(singleLoop(IN(as, n), &o), "singleLoop");
}

double afc_dotp(int64_t n, const double *xs, const double *ys) {
  double r;
  check(dotp(IN(xs, n), IN(ys, n), &r), "dotp");
  return r;
}

void afc_blackscholes(int64_t n, const double *S, const double *X, const double *T, const double *r, const double *v,
                      double *call, double *put) {
  afc_f64_1d oc = OUT(call, n), op = OUT(put, n);
  check(blackscholes(IN(S, n), IN(X, n), IN(T, n), IN(r, n), IN(v, n), &oc, &op), "blackscholes");
}
