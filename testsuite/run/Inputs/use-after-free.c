/* Reads an array after afc_free: the runtime keeps the block for reuse
 * (and hands it out again), but marks it off limits for valgrind and
 * AddressSanitizer, which must report the read (run/free.test). */
#include "afc.h"
#include <stdio.h>

int main(void) {
    double *p = afc_alloc(100000 * sizeof *p);
    for (int i = 0; i < 100000; i++) p[i] = i;
    afc_free(p);
    double *q = afc_alloc(100000 * sizeof *q);
    printf("reused %d\n", p == q);
    q[5] = 1.0;
    afc_free(q);
    printf("read after free: %g\n", p[7]);
    return 0;
}
