#include <stdio.h>

#include "afc.h"

int dot(afc_f64_1d xs, afc_f64_1d ys, double *out0);

int main(void) {
    double a[7] = {1, 2, 3, 4, 5, 6, 7}, b[7] = {1, 1, 1, 1, 1, 1, 2};
    afc_f64_1d xs = {a, {7}}, ys = {b, {7}};
    double r = 0;
    int rc = dot(xs, ys, &r);
    printf("rc=%d dot=%g\n", rc, r);
    ys.shape[0] = 6;
    rc = dot(xs, ys, &r);
    printf("rc=%d %s\n", rc, afc_last_error());
    return 0;
}
