/* Eight threads call the same compiled functions at once, with afc-allocated
 * and caller-provided outputs, successes and run-time errors interleaved;
 * every result is checked against plain C, every error's code and message
 * (thread-local), and no call may leak. Run as is, under valgrind, and
 * built with ThreadSanitizer or AddressSanitizer (the runtime too). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define THREADS 8
#define CALLS 300

static int check(int t, int it) {
    int n = (t * 7 + it) % 97;
    double xs[97], room[97];
    for (int i = 0; i < n; i++) xs[i] = ((i * 37 + t * 11 + it) % 19) - 9.0;
    afc_f64_1d in = {xs, {n}};
    /* Plain C: the sum of the positive elements, and every element times it. */
    double sum = 0;
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (xs[i] > 0) {
            sum += xs[i];
            kept++;
        }
    double s = -1;
    afc_f64_1d ys = {NULL, {0}}, pos = {NULL, {0}};
    if (it % 2) {
        ys.data = room;
        ys.shape[0] = 97;
    }
    int rc = stats(in, &s, &ys, &pos);
    if (rc != AFC_OK) return printf("thread %d call %d: rc %d (%s)\n", t, it, rc, afc_last_error()), 1;
    if (s != sum || ys.shape[0] != n || pos.shape[0] != kept) return printf("thread %d call %d: wrong sizes or sum\n", t, it), 1;
    for (int i = 0; i < n; i++)
        if (ys.data[i] != xs[i] * sum) return printf("thread %d call %d: ys[%d] wrong\n", t, it, i), 1;
    if (!(it % 2)) afc_free(ys.data);
    afc_free(pos.data);
    /* An error: index n is out of range; the message is this thread's. */
    double e = 0;
    rc = element(in, n + t, &e);
    if (rc != AFC_ERR_INDEX) return printf("thread %d call %d: expected an index error, got %d\n", t, it, rc), 1;
    char want[64];
    snprintf(want, sizeof want, "index %d, length %d", n + t, n);
    if (!strstr(afc_last_error(), want)) return printf("thread %d call %d: message '%s'\n", t, it, afc_last_error()), 1;
    return 0;
}

static void *run(void *arg) {
    int t = (int)(long)arg;
    for (int it = 0; it < CALLS; it++)
        if (check(t, it)) return (void *)1;
    return NULL;
}

int main(void) {
    int64_t live0 = afc_live_count();
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        if (pthread_create(&th[t], NULL, run, (void *)t) != 0) return 2;
    int bad = 0;
    for (int t = 0; t < THREADS; t++) {
        void *r;
        pthread_join(th[t], &r);
        bad |= r != NULL;
    }
    if (afc_live_count() != live0) return printf("LEAK: %lld blocks\n", (long long)(afc_live_count() - live0)), 1;
    printf(bad ? "FAILED\n" : "%d threads x %d calls agree, no leak\n", THREADS, CALLS);
    return bad;
}
