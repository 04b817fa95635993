// Calls the variance program from C++17; built with CMake against an
// installed afc (find_package(afc), afc_add_library).
#include "variance.h"

#include <cstdio>
#include <vector>

int main() {
    std::vector<double> data = {2, 4, 4, 4, 5, 5, 7, 9};
    afc_f64_1d xs = {data.data(), {static_cast<int64_t>(data.size())}};
    double mean = 0, var = 0;
    if (variance(xs, &mean, &var) != AFC_OK) {
        std::fprintf(stderr, "variance: %s\n", afc_last_error());
        return 1;
    }
    std::printf("mean %.3f variance %.3f\n", mean, var);
    // Caller-provided storage: room for every element, nothing allocated.
    std::vector<double> room(data.size());
    afc_f64_1d out = {room.data(), {static_cast<int64_t>(room.size())}};
    if (above(xs, mean, &out) != AFC_OK) {
        std::fprintf(stderr, "above: %s\n", afc_last_error());
        return 1;
    }
    std::printf("%lld above the mean:", static_cast<long long>(out.shape[0]));
    for (int64_t i = 0; i < out.shape[0]; i++) std::printf(" %.1f", out.data[i]);
    std::printf("\n");
    return 0;
}
