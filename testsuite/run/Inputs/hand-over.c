/* Driver of hand-over.acc: calls `many` with no storage given, with all of
 * it given and with some, then with a failing division; prints the
 * results and how many blocks are live beyond what it holds. */
#include <stdio.h>
#include <string.h>

static char *show(const afc_f64_1d *a, char *buf) {
    buf[0] = 0;
    for (int64_t i = 0; i < a->shape[0]; i++)
        sprintf(buf + strlen(buf), "%s%g", i ? "," : "", a->data[i]);
    return buf;
}

static void call(const char *what, int given, int mask, bool c, int64_t d) {
    double in[4] = {1, 2, 3, 4};
    afc_f64_1d xs = {in, {4}};
    double room[6][4];
    afc_f64_1d out[6];
    for (int k = 0; k < 6; k++) {
        int mine = given && (mask >> k & 1);
        out[k].data = mine ? room[k] : NULL;
        out[k].shape[0] = mine ? 4 : 0;
    }
    int64_t s = 0;
    int64_t before = afc_live_count();
    int rc = many(xs, c, d, &out[0], &out[1], &out[2], &out[3], &out[4], &out[5], &s);
    char b[6][64];
    if (rc == 0) {
        printf("%s: rc=%d a=%s b=%s xs=%s a2=%s f=%s r=%s s=%lld", what, rc, show(&out[0], b[0]), show(&out[1], b[1]), show(&out[2], b[2]),
               show(&out[3], b[3]), show(&out[4], b[4]), show(&out[5], b[5]), (long long)s);
        for (int k = 0; k < 6; k++)
            if (out[k].data != room[k]) afc_free(out[k].data);
        printf(" leaked=%lld\n", (long long)(afc_live_count() - before));
    } else {
        printf("%s: rc=%d leaked=%lld\n", what, rc, (long long)(afc_live_count() - before));
    }
}

int main(void) {
    call("given none", 0, 0, true, 0);
    call("given all", 1, 0x3f, false, 0);
    call("given some", 1, 0x2a, true, 0);
    call("failing", 1, 0x15, true, 3);
    return 0;
}
