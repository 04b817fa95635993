/* afc_alloc (docs/abi.md, "Memory"): 64-byte alignment, the whole size
 * usable, freed blocks reused, every block counted; arrays of 2 MiB and
 * more start half a page away from where a large posix_memalign block
 * starts, modulo 4 KiB (no 4 KiB aliasing with a caller's arrays). */
#define _POSIX_C_SOURCE 200112L
#include "afc.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define CHECK(c, ...) do { if (!(c)) { printf("FAIL: " __VA_ARGS__); printf("\n"); fails++; } } while (0)

int main(void) {
    const size_t sizes[] = {1, 64, 4000, 4096, 100000, (1u << 20) - 64, 1u << 20, (2u << 20) - 100, 2u << 20, 20000000};
    int64_t live = afc_live_count();
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        char *p = afc_alloc(n);
        CHECK(p != NULL, "afc_alloc(%zu) failed", n);
        CHECK((uintptr_t)p % 64 == 0, "afc_alloc(%zu) = %p is not 64-byte aligned", n, (void *)p);
        memset(p, 0xab, n); /* the whole size is usable (valgrind, ASan) */
        if (n >= (2u << 20)) {
            void *q = NULL;
            CHECK(posix_memalign(&q, 64, n) == 0, "posix_memalign(%zu) failed", n);
            size_t d = (size_t)((uintptr_t)p - (uintptr_t)q) % 4096;
            CHECK(d >= 1024 && d <= 3072, "afc_alloc(%zu) lies %zu bytes past posix_memalign's block modulo 4 KiB", n, d);
            free(q);
        }
        afc_free(p);
        char *again = afc_alloc(n);
        CHECK(again == p, "afc_alloc(%zu) did not reuse the block just freed", n);
        afc_free(again);
    }
    CHECK(afc_live_count() == live, "%lld blocks live after freeing all", (long long)(afc_live_count() - live));
    CHECK(afc_alloc((size_t)1 << 62) == NULL, "an impossible size was granted");
    CHECK(afc_live_count() == live, "a refused allocation was counted");
    afc_free(NULL);
    printf(fails ? "%d failures\n" : "ok\n", fails);
    return fails != 0;
}
