/* Calls softmax from C99; built against an installed afc with pkg-config. */
#include "softmax.h"
#include <stdio.h>

int main(void) {
    double in[4] = {1.0, 2.0, 3.0, 4.0};
    afc_f64_1d xs = {in, {4}};
    afc_f64_1d out = {NULL, {0}};
    int rc = softmax(xs, &out);
    if (rc != AFC_OK) {
        fprintf(stderr, "softmax failed (%d): %s\n", rc, afc_last_error());
        return 1;
    }
    double sum = 0;
    for (int64_t i = 0; i < out.shape[0]; i++) {
        printf("%.6f\n", out.data[i]);
        sum += out.data[i];
    }
    printf("sum %.6f\n", sum);
    afc_free(out.data);
    return 0;
}
