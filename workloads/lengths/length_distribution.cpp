// Length distributions: every draw written out from the uniform and exponential draws of
// sim::RandomStream (never std::*_distribution), so a seed gives the same lengths everywhere.
#include "workloads/lengths/length_distribution.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

namespace fathom::workloads {

// Zipf's cumulative weights over [min, max] and the parameters they were built for.
struct LengthDistribution::ZipfTable::Cdf {
    int64_t min = 0, max = 0;
    double s = 0;
    std::vector<double> cumulative;  // cumulative[i] = sum of k^-s for k = min .. min + i
};
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kInf = std::numeric_limits<double>::infinity();
// The upper clamp of a length with no max: far beyond any context, exactly representable.
constexpr int64_t kNoMax = int64_t{1} << 53;
// Widest Zipf range (values in [min, max]); its table is 8 bytes a value.
constexpr int64_t kZipfMaxValues = 1000000;
// Terms of the exact rounding sum in expected() (see clamped_rounded_mean).
constexpr int64_t kExactTerms = 200000;

int64_t lower_bound_of(const LengthDistribution& d) { return std::max<int64_t>(1, d.min); }
int64_t upper_bound_of(const LengthDistribution& d) { return d.max > 0 ? d.max : kNoMax; }

// An integer length clamped to [max(1, min), max].
int64_t clamp_tokens(const LengthDistribution& d, int64_t n) {
    return std::clamp(n, lower_bound_of(d), std::max(lower_bound_of(d), upper_bound_of(d)));
}

// A continuous draw rounded to the nearest integer (halves away from zero), then clamped. The
// clamp comes first in floating point so that huge or infinite draws never reach llround.
int64_t clamp_round(const LengthDistribution& d, double x) {
    const int64_t lo = lower_bound_of(d), hi = upper_bound_of(d);
    if (!(x < static_cast<double>(hi))) return hi;
    if (x < static_cast<double>(lo)) return lo;
    return clamp_tokens(d, static_cast<int64_t>(std::llround(x)));
}

// Lognormal parameters of a length whose tokens have the given mean and standard deviation:
// sigma^2 = ln(1 + (sd/mean)^2), mu = ln(mean) - sigma^2 / 2.
struct LogParams {
    double mu, sigma2;
};
LogParams log_params(const LengthDistribution& d) {
    const double s2 = std::log1p((d.stddev / d.mean) * (d.stddev / d.mean));
    return {std::log(d.mean) - s2 / 2, s2};
}

// Index of the first cumulative weight above u x total (a draw by inversion; zero weights are
// never picked).
size_t pick(const std::vector<double>& cumulative, sim::RandomStream& r) {
    const double u = r.uniform() * cumulative.back();
    const size_t i =
        static_cast<size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
    return std::min(i, cumulative.size() - 1);
}

// ---- expected value of a rounded, clamped normal or lognormal --------------------------------

// P(Z > z) for a standard normal Z, and P(za < Z <= zb) without cancellation in either tail.
double upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }
double between(double za, double zb) {
    return za > 0 ? upper_tail(za) - upper_tail(zb) : upper_tail(-zb) - upper_tail(-za);
}
double std_density(double z) { return std::isinf(z) ? 0.0 : std::exp(-0.5 * z * z) / std::sqrt(2.0 * kPi); }

// The continuous X behind a normal (X ~ N(mu, sigma)) or lognormal (ln X ~ N(mu, sigma)) length.
struct Continuous {
    bool log;
    double mu, sigma;

    // S(x) = P(X > x).
    double survival(double x) const {
        if (log) return x <= 0 ? 1.0 : upper_tail((std::log(x) - mu) / sigma);
        return upper_tail((x - mu) / sigma);
    }
    // E[X; a < X <= b] for a < b (b may be infinite).
    double partial_mean(double a, double b) const {
        if (log) {
            // x f(x) is e^(mu + sigma^2/2) times the density of a lognormal with mu + sigma^2.
            const double shift = mu + sigma * sigma;
            const double za = a <= 0 ? -kInf : (std::log(a) - shift) / sigma, zb = (std::log(b) - shift) / sigma;
            return std::exp(mu + 0.5 * sigma * sigma) * between(za, zb);
        }
        const double za = (a - mu) / sigma, zb = (b - mu) / sigma;
        return mu * between(za, zb) + sigma * (std_density(za) - std_density(zb));
    }
    // Integral of S(x) over [a, b] = b S(b) - a S(a) + E[X; a < X <= b] (by parts).
    double survival_integral(double a, double b) const {
        if (!(b > a)) return 0;
        const double tail_b = std::isinf(b) ? 0.0 : b * survival(b);
        return tail_b - a * survival(a) + partial_mean(a, b);
    }
};

// E[Y] for Y = clamp(round(X), lo, hi), lo >= 1. Y is an integer in [lo, hi], so
//   E[Y] = lo + sum_{n = lo}^{hi - 1} P(Y > n) = lo + sum_{n = lo}^{hi - 1} S(n + 1/2)
// (Y > n exactly when X >= n + 1/2). The sum is the midpoint rule for the integral of S over
// [lo, hi], which has a closed form; the two differ only where S bends on the scale of one token,
// so over a window around the bulk of X (8 sigma, or its logarithm's) the sum is taken term by
// term and the integral replaced there. Outside the window the midpoint error is about
// (f(left) - f(right)) / 24 for the density f, negligible (f < 1e-14 there, or < 1e-5 / sigma when
// the window is cut at kExactTerms terms).
double clamped_rounded_mean(const Continuous& x, int64_t lo, int64_t hi, bool unbounded) {
    const double lo_d = static_cast<double>(lo), hi_d = unbounded ? kInf : static_cast<double>(hi);
    double mean = lo_d + x.survival_integral(lo_d, hi_d);
    const double from = x.log ? std::exp(x.mu - 8 * x.sigma) : x.mu - 8 * x.sigma;
    const double to = x.log ? std::exp(x.mu + 8 * x.sigma) : x.mu + 8 * x.sigma;
    // Window [a, b] of integers within [lo, hi], at most kExactTerms wide.
    const auto to_int = [&](double v) {
        return v <= lo_d ? lo : v >= static_cast<double>(hi) ? hi : static_cast<int64_t>(std::floor(v));
    };
    const int64_t a = to_int(from), b = std::min(to_int(std::ceil(to)), a + kExactTerms);
    if (b > a) {
        double exact = 0;
        for (int64_t n = a; n < b; ++n) exact += x.survival(static_cast<double>(n) + 0.5);
        mean += exact - x.survival_integral(static_cast<double>(a), static_cast<double>(b));
    }
    return mean;
}
}  // namespace

std::shared_ptr<const LengthDistribution::ZipfTable::Cdf> LengthDistribution::ZipfTable::get(int64_t lo, int64_t hi,
                                                                                             double s) const {
    std::shared_ptr<const Cdf> t = std::atomic_load(&cdf_);
    if (t && t->min == lo && t->max == hi && !(t->s < s) && !(t->s > s)) return t;
    auto fresh = std::make_shared<Cdf>();
    fresh->min = lo;
    fresh->max = hi;
    fresh->s = s;
    fresh->cumulative.reserve(static_cast<size_t>(hi - lo + 1));
    double acc = 0;
    for (int64_t k = lo; k <= hi; ++k) {
        acc += std::pow(static_cast<double>(k), -s);
        fresh->cumulative.push_back(acc);
    }
    t = fresh;
    // Two threads racing here build equal tables; whichever is stored, each caller keeps its own.
    std::atomic_store(&cdf_, t);
    return t;
}

std::string LengthDistribution::check() const {
    if (min < 1) return "min must be >= 1";
    if (max < 0) return "max must be >= min (or 0: no upper clamp)";
    if (max != 0 && max < min) return "max must be >= min";
    switch (kind) {
        case LengthKind::Fixed:
            if (value < 1) return "value must be >= 1";
            break;
        case LengthKind::Uniform:
            if (max == 0) return "max must be set for uniform (the range is [min, max])";
            break;
        case LengthKind::Normal:
        case LengthKind::Lognormal:
            if (!(mean >= 1) || !std::isfinite(mean)) return "mean must be >= 1";
            if (!(stddev >= 0) || !std::isfinite(stddev)) return "stddev must be >= 0";
            break;
        case LengthKind::Zipf:
            if (max == 0) return "max must be set for zipf (the range is [min, max])";
            if (max - min >= kZipfMaxValues) return "max - min must be < 1000000 for zipf (the range is tabulated)";
            if (!(zipf_s > 0) || !std::isfinite(zipf_s)) return "zipf_s must be > 0";
            break;
        case LengthKind::Histogram: {
            if (bins.empty() || bins.size() != weights.size())
                return "histogram needs bins and weights of equal length (at least one bin)";
            double sum = 0;
            for (double w : weights) {
                if (!(w >= 0) || !std::isfinite(w)) return "weights must be >= 0 with a positive sum";
                sum += w;
            }
            if (!(sum > 0) || !std::isfinite(sum)) return "weights must be >= 0 with a positive sum";
            for (int64_t b : bins)
                if (b < 1) return "bins must be >= 1 (tokens)";
            break;
        }
    }
    return "";
}

int64_t LengthDistribution::sample(sim::RandomStream& r) const {
    switch (kind) {
        case LengthKind::Fixed: return clamp_tokens(*this, value);
        case LengthKind::Uniform: {
            // floor(u n) for u in [0, 1) is uniform on 0 .. n - 1 (the min() only guards rounding).
            const int64_t n = max - min + 1;
            return min + std::min(n - 1, static_cast<int64_t>(r.uniform() * static_cast<double>(n)));
        }
        case LengthKind::Normal: return clamp_round(*this, mean + stddev * r.standard_normal());
        case LengthKind::Lognormal: {
            const LogParams p = log_params(*this);
            return clamp_round(*this, std::exp(p.mu + std::sqrt(p.sigma2) * r.standard_normal()));
        }
        case LengthKind::Zipf: {
            const auto table = zipf_table.get(min, max, zipf_s);
            return min + static_cast<int64_t>(pick(table->cumulative, r));
        }
        case LengthKind::Histogram: {
            // The same inversion as pick(), walking the weights (histograms are short; no table).
            double total = 0;
            for (double w : weights) total += w;
            const double u = r.uniform() * total;
            double acc = 0;
            for (size_t i = 0; i < weights.size(); ++i) {
                acc += weights[i];
                if (u < acc) return clamp_tokens(*this, bins[i]);
            }
            return clamp_tokens(*this, bins.back());
        }
    }
    return value;
}

double LengthDistribution::expected() const {
    switch (kind) {
        case LengthKind::Fixed: return static_cast<double>(clamp_tokens(*this, value));
        case LengthKind::Uniform: return 0.5 * (static_cast<double>(min) + static_cast<double>(max));
        case LengthKind::Zipf: {
            // sum k p(k) with p(k) = k^-s / sum_j j^-s over [min, max].
            double norm = 0, sum = 0;
            for (int64_t k = min; k <= max; ++k) {
                const double p = std::pow(static_cast<double>(k), -zipf_s);
                norm += p;
                sum += p * static_cast<double>(k);
            }
            return sum / norm;
        }
        case LengthKind::Histogram: {
            double norm = 0, sum = 0;
            for (size_t i = 0; i < bins.size() && i < weights.size(); ++i) {
                norm += weights[i];
                sum += weights[i] * static_cast<double>(clamp_tokens(*this, bins[i]));
            }
            return sum / norm;
        }
        case LengthKind::Normal:
        case LengthKind::Lognormal: {
            const bool log = kind == LengthKind::Lognormal;
            const LogParams p = log ? log_params(*this) : LogParams{mean, stddev * stddev};
            // A zero spread is a point mass at what sample() returns.
            if (!(p.sigma2 > 0)) return static_cast<double>(clamp_round(*this, log ? std::exp(p.mu) : mean));
            const Continuous x{log, p.mu, std::sqrt(p.sigma2)};
            return clamped_rounded_mean(x, lower_bound_of(*this), upper_bound_of(*this), max <= 0);
        }
    }
    return 0;
}
}  // namespace fathom::workloads
