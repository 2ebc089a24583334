#include "workloads/serving/speculative.h"

#include "sim/random.h"

#include <cmath>

namespace fathom::workloads::serving {

double SpeculativeSettings::rate() const {
    if (acceptance >= 0) return acceptance;
    if (!positions.empty()) return rate_for_length(mean_tokens(), tokens);
    return acceptance_length > 0 ? rate_for_length(acceptance_length, tokens) : 0.0;
}

double SpeculativeSettings::mean_tokens() const {
    if (positions.empty()) return expected_tokens(rate(), tokens);
    double n = 1;
    for (size_t i = 0; i < positions.size() && i < static_cast<size_t>(tokens); ++i) n += positions[i];
    return n;
}

double expected_tokens(double a, int k) {
    if (a >= 1) return k + 1.0;
    return (1 - std::pow(a, k + 1)) / (1 - a);
}

double rate_for_length(double length, int k) {
    if (length >= k + 1.0) return 1.0;
    if (length <= 1) return 0.0;
    double lo = 0, hi = 1;  // expected_tokens rises with a
    for (int i = 0; i < 100; ++i) {
        const double mid = 0.5 * (lo + hi);
        (expected_tokens(mid, k) < length ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

int accepted_drafts(const std::vector<double>& p, int k, uint64_t seed, int64_t request, int64_t position) {
    using sim::mix64;
    uint64_t h = mix64(seed ^ mix64(static_cast<uint64_t>(request) ^ mix64(static_cast<uint64_t>(position))));
    int n = 0;
    double before = 1;
    while (n < k && static_cast<size_t>(n) < p.size()) {
        h = mix64(h);
        const double u = static_cast<double>(h >> 11) * 0x1.0p-53;
        const double given = before > 0 ? p[static_cast<size_t>(n)] / before : 0.0;
        if (!(u < given)) break;
        before = p[static_cast<size_t>(n)];
        ++n;
    }
    return n;
}

int accepted_drafts(double a, int k, uint64_t seed, int64_t request, int64_t position) {
    using sim::mix64;
    uint64_t h = mix64(seed ^ mix64(static_cast<uint64_t>(request) ^ mix64(static_cast<uint64_t>(position))));
    int n = 0;
    while (n < k) {
        h = mix64(h);
        const double u = static_cast<double>(h >> 11) * 0x1.0p-53;
        if (!(u < a)) break;
        ++n;
    }
    return n;
}

}  // namespace fathom::workloads::serving
