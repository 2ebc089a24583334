#pragma once
// Sample statistics shared by the front ends and the plans.
#include <algorithm>
#include <vector>

namespace fathom::sim {

// The q-quantile (q in [0, 1]) of a sample, interpolated linearly between order statistics (the
// "type 7" of Hyndman and Fan, NumPy's default); 0 for an empty sample.
inline double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const double at = q * static_cast<double>(v.size() - 1);
    const size_t lo = static_cast<size_t>(at), hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

}  // namespace fathom::sim
