/* The demo's driver: calls the compiled functions like any C library. */
#include "normalize.h"

#include <stdio.h>

int main(void) {
    double xs[] = {1.0, 2.0, 3.0, 4.0};
    double ys[] = {0.5, 0.25, 2.0, 1.0};
    afc_f64_1d x = {xs, {4}}, y = {ys, {4}};

    afc_f64_1d norm = {NULL, {0}}; /* data == NULL: afc allocates */
    if (normalizeInc(x, &norm) != 0) { fprintf(stderr, "%s\n", afc_last_error()); return 1; }
    printf("normalizeInc:");
    for (int64_t i = 0; i < norm.shape[0]; i++) printf(" %g", norm.data[i]);
    printf("\n");
    afc_free(norm.data);

    double d;
    if (dotp(x, y, &d) != 0) { fprintf(stderr, "%s\n", afc_last_error()); return 1; }
    printf("dotp: %g\n", d);

    double room[4];
    afc_f64_1d sq = {room, {4}}; /* caller-provided storage */
    double sum, sumsq;
    if (moments(x, &sum, &sumsq, &sq) != 0) { fprintf(stderr, "%s\n", afc_last_error()); return 1; }
    printf("moments: sum %g, sum of squares %g, squares %g %g %g %g\n", sum, sumsq, room[0], room[1], room[2], room[3]);

    y.shape[0] = 3; /* a size mismatch is a run-time error, not a crash */
    if (dotp(x, y, &d) != 0) printf("expected error: %s\n", afc_last_error());
    return 0;
}
