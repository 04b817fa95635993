#include <stdio.h>

int main(void) {
    int64_t in[5] = {1, 7, 2, 9, 3};
    afc_i64_1d xs = {in, {5}};
    int64_t room[5] = {0};
    afc_i64_1d out = {room, {5}};
    int rc = positives(xs, &out);
    printf("room 5: rc=%d shape=%lld data=%lld %lld\n", rc, (long long)out.shape[0], (long long)room[0], (long long)room[1]);
    int64_t small[4] = {-1, -1, -1, -1};
    afc_i64_1d out2 = {small, {4}};
    rc = positives(xs, &out2);
    printf("room 4: rc=%d untouched=%d\n", rc, small[0] == -1 && out2.shape[0] == 4);
    afc_i64_1d out3 = {NULL, {0}};
    rc = positives(xs, &out3);
    printf("afc allocates: rc=%d shape=%lld data=%lld %lld\n", rc, (long long)out3.shape[0], (long long)out3.data[0], (long long)out3.data[1]);
    afc_free(out3.data);
    return 0;
}
