#pragma once
// Token-length distributions: how many tokens a prompt, an output or a packed training document
// has. Serving traffic draws prompt and output lengths from them (workloads/serving/traffic/), and
// training draws packed documents (workloads/training/packing.h), so they belong to neither.
// Draws come from a sim::RandomStream, so the same seed gives bit-identical lengths everywhere.
#include "sim/enum_names.h"
#include "sim/random.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fathom::workloads {

enum class LengthKind { Fixed, Uniform, Normal, Lognormal, Zipf, Histogram };
constexpr auto enum_names(LengthKind) {
    return sim::name_table<LengthKind>({{LengthKind::Fixed, "fixed"},
                                        {LengthKind::Uniform, "uniform"},
                                        {LengthKind::Normal, "normal"},
                                        {LengthKind::Lognormal, "lognormal"},
                                        {LengthKind::Zipf, "zipf"},
                                        {LengthKind::Histogram, "histogram"}});
}

// Token counts, always integers in [min, max] (draws outside are clamped; min >= 1). Normal and
// lognormal draws are rounded to the nearest integer, then clamped; a fixed value and histogram
// bins are clamped too. Uniform and Zipf draw from [min, max] itself (both need max).
struct LengthDistribution {
    LengthKind kind = LengthKind::Fixed;
    int64_t value = 0;            // Fixed
    int64_t min = 1, max = 0;     // Uniform: inclusive bounds; all kinds: clamp (max 0 = no upper clamp)
    double mean = 0, stddev = 0;  // Normal (of the tokens), Lognormal (mean and stddev of the tokens,
                                  // not of their logarithm)
    double zipf_s = 1.1;          // Zipf: P(k) ~ k^-s on [min, max] (max required)
    std::vector<int64_t> bins;    // Histogram: bin values (tokens)...
    std::vector<double> weights;  // ...and their relative weights (>= 0, sum > 0)

    // One draw (parameters must pass check()). Zipf inverts a cumulative table over [min, max]
    // (binary search), built by the first draw and kept in `zipf_table`.
    int64_t sample(sim::RandomStream& r) const;
    // Mean of the distribution sample() draws from, clamped and rounded: exact for fixed, uniform,
    // Zipf and histogram; for normal and lognormal a numeric evaluation of the same quantity
    // (closed-form clamped moments plus the exact rounding correction near the bulk; error below
    // 1e-6 tokens for any realistic parameters).
    double expected() const;
    // Empty when the parameters make sense, else why not (names the field).
    std::string check() const;

    // Zipf's cumulative table, a cache rather than a parameter: a copy starts without it (so copies
    // never share mutable state), a change of min, max or zipf_s rebuilds it, and concurrent
    // sample() calls on one object are safe.
    class ZipfTable {
    public:
        struct Cdf;
        ZipfTable() = default;
        ZipfTable(const ZipfTable&) {}
        ZipfTable& operator=(const ZipfTable&) { return *this; }
        // The table for these parameters (built on first use).
        std::shared_ptr<const Cdf> get(int64_t lo, int64_t hi, double s) const;

    private:
        mutable std::shared_ptr<const Cdf> cdf_;
    };
    ZipfTable zipf_table;
};

}  // namespace fathom::workloads
