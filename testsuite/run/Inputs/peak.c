/* chain(xs) of testsuite/cluster/Inputs/chain.py: 40 maps, each its own
 * loop under --fusion=none, each array read by the next map only. Every
 * intermediate is freed once the next map has read it (docs/strategy.md,
 * "Freeing"), so the call's peak memory is a few arrays, not 40: prints
 * how many arrays of the input's size the peak resident size grew by, and
 * checks the sum against plain C. Built with -include of chain's header;
 * `peak N` runs it on N elements (default 2^20). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static long peak_kb(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

int main(int argc, char **argv) {
    const int64_t n = argc > 1 ? atoll(argv[1]) : 1 << 20;
    double *xs = malloc(n * sizeof *xs);
    for (int64_t i = 0; i < n; i++) xs[i] = (double)(i % 1000) / 7.0;
    double want = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = xs[i] + 1.0;
        for (int k = 1; k < 40; k++) a = a * 0.5 + xs[i];
        want += a;
    }
    long before = peak_kb();
    double got = 0;
    afc_f64_1d in = {xs, {n}};
    int rc = chain(in, &got);
    long grew = peak_kb() - before;
    printf("rc %d, sum %s, peak grew by %ld arrays\n", rc, fabs(got - want) <= 1e-9 * fabs(want) ? "ok" : "wrong", (grew * 1024 + n * 8 - 1) / (n * 8 > 0 ? n * 8 : 1));
    free(xs);
    return 0;
}
