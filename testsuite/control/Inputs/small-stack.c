/* control/recursion.acc: deep recursion on a thread with a small stack
 * fails with AFC_ERR_RECURSION before the stack runs out; shallow
 * recursion on the same thread works. */
#include "afc.h"
#include <pthread.h>
#include <stdio.h>
int depth(int64_t n, int64_t *out0);
static void *run(void *arg) {
    (void)arg;
    int64_t d = -1;
    int rc = depth(9000, &d);
    printf("rc=%d %s\n", rc, afc_last_error());
    rc = depth(500, &d);
    printf("rc=%d depth=%lld\n", rc, (long long)d);
    return NULL;
}
int main(void) {
    pthread_attr_t a;
    pthread_t t;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 256 * 1024);
    if (pthread_create(&t, &a, run, NULL) != 0) return 1;
    pthread_join(t, NULL);
    return 0;
}
