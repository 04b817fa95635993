#include <stdio.h>

int main(void) {
    int64_t in[3] = {1, 2, 3};
    afc_i64_1d xs = {in, {3}};
    int64_t room[3] = {-1, -1, -1};
    afc_i64_1d out = {room, {3}};
    int rc = twice(xs, &out);
    printf("fits: rc=%d shape=%lld data=%lld %lld %lld\n", rc, (long long)out.shape[0], (long long)room[0], (long long)room[1], (long long)room[2]);

    int64_t small[2] = {-1, -1};
    afc_i64_1d out2 = {small, {2}};
    rc = twice(xs, &out2);
    printf("too small: rc=%d shape=%lld untouched=%d\n", rc, (long long)out2.shape[0], small[0] == -1 && small[1] == -1);
    printf("message: %s\n", afc_last_error());

    /* 100 / (x - 2): the first element is written in place, the second fails. */
    int64_t room3[3] = {-7, -7, -7};
    afc_i64_1d out3 = {room3, {3}};
    rc = quot(xs, 2, &out3);
    printf("failing call: rc=%d descriptor untouched=%d\n", rc, out3.data == room3 && out3.shape[0] == 3);
    printf("written in place before the failure: %lld\n", (long long)room3[0]);
    return 0;
}
