#include "workloads/serving/traffic/traffic.h"

#include <algorithm>
#include <cmath>
#include <deque>

namespace fathom::workloads::serving {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Standard normal by Box-Muller (the cosine branch; one draw per call keeps streams simple).
double standard_normal(sim::RandomStream& r) {
    double u1 = r.uniform();
    while (u1 <= 0) u1 = r.uniform();
    const double u2 = r.uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
}

// Gamma(shape k, scale 1) by Marsaglia and Tsang (2000); k < 1 through Gamma(k + 1) U^(1/k).
double gamma_unit(sim::RandomStream& r, double k) {
    if (k < 1) {
        double u = r.uniform();
        while (u <= 0) u = r.uniform();
        return gamma_unit(r, k + 1) * std::pow(u, 1.0 / k);
    }
    const double d = k - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    while (true) {
        double x, v;
        do {
            x = standard_normal(r);
            v = 1.0 + c * x;
        } while (v <= 0);
        v = v * v * v;
        const double u = r.uniform();
        if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
        if (u > 0 && std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
    }
}

int64_t clamp_len(const LengthDistribution& d, double x) {
    int64_t n = static_cast<int64_t>(std::llround(x));
    n = std::max(n, std::max<int64_t>(1, d.min));
    if (d.max > 0) n = std::min(n, d.max);
    return n;
}

// Zipf pmf weights k^-s on [min, max].
std::vector<double> zipf_cdf(const LengthDistribution& d) {
    std::vector<double> cdf;
    double acc = 0;
    for (int64_t k = d.min; k <= d.max; ++k) {
        acc += std::pow(static_cast<double>(k), -d.zipf_s);
        cdf.push_back(acc);
    }
    return cdf;
}

int64_t sample_cdf(const std::vector<double>& cdf, sim::RandomStream& r) {
    const double u = r.uniform() * cdf.back();
    return static_cast<int64_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
}

}  // namespace

const char* length_kind_name(LengthKind k) {
    switch (k) {
        case LengthKind::Fixed: return "fixed";
        case LengthKind::Uniform: return "uniform";
        case LengthKind::Normal: return "normal";
        case LengthKind::Lognormal: return "lognormal";
        case LengthKind::Zipf: return "zipf";
        case LengthKind::Histogram: return "histogram";
    }
    return "?";
}

const char* arrival_kind_name(ArrivalKind k) {
    switch (k) {
        case ArrivalKind::Offline: return "offline";
        case ArrivalKind::Poisson: return "poisson";
        case ArrivalKind::Gamma: return "gamma";
        case ArrivalKind::Bursty: return "bursty";
        case ArrivalKind::Constant: return "constant";
    }
    return "?";
}

std::string LengthDistribution::check() const {
    if (min < 1) return "min must be >= 1";
    if (max != 0 && max < min) return "max must be >= min";
    switch (kind) {
        case LengthKind::Fixed:
            if (value < 1) return "value must be >= 1 (tokens)";
            break;
        case LengthKind::Uniform:
            if (max < min || max == 0) return "uniform needs max >= min";
            break;
        case LengthKind::Normal:
        case LengthKind::Lognormal:
            if (!(mean >= 1)) return "mean must be >= 1";
            if (!(stddev >= 0) || !std::isfinite(stddev)) return "stddev must be >= 0";
            break;
        case LengthKind::Zipf:
            if (max == 0) return "zipf needs max";
            if (max - min > 10000000) return "zipf range too wide (at most 10^7 values)";
            if (!(zipf_s > 0)) return "zipf_s must be > 0";
            break;
        case LengthKind::Histogram: {
            if (bins.empty() || bins.size() != weights.size()) return "histogram needs bins and weights of equal length";
            double sum = 0;
            for (double w : weights) {
                if (!(w >= 0) || !std::isfinite(w)) return "weights must be >= 0 with a positive sum";
                sum += w;
            }
            if (!(sum > 0)) return "weights must be >= 0 with a positive sum";
            for (int64_t b : bins)
                if (b < 1) return "bins must be >= 1 token";
            break;
        }
    }
    return "";
}

int64_t LengthDistribution::sample(sim::RandomStream& r) const {
    switch (kind) {
        case LengthKind::Fixed: return value;
        case LengthKind::Uniform:
            return min + static_cast<int64_t>(r.uniform() * static_cast<double>(max - min + 1));
        case LengthKind::Normal: return clamp_len(*this, mean + stddev * standard_normal(r));
        case LengthKind::Lognormal: {
            const double s2 = std::log1p((stddev / mean) * (stddev / mean));
            const double mu = std::log(mean) - s2 / 2;
            return clamp_len(*this, std::exp(mu + std::sqrt(s2) * standard_normal(r)));
        }
        case LengthKind::Zipf: {
            // Inverse CDF over the (at most 10^7) values; rebuilt per call would be slow, so the
            // generator keeps a table (below); a bare sample() recomputes it.
            return min + sample_cdf(zipf_cdf(*this), r);
        }
        case LengthKind::Histogram: {
            std::vector<double> cdf;
            double acc = 0;
            for (double w : weights) cdf.push_back(acc += w);
            return bins[static_cast<size_t>(sample_cdf(cdf, r))];
        }
    }
    return value;
}

double LengthDistribution::expected() const {
    switch (kind) {
        case LengthKind::Fixed: return static_cast<double>(value);
        case LengthKind::Uniform: return 0.5 * static_cast<double>(min + max);
        case LengthKind::Zipf: {
            double n = 0, s = 0;
            for (int64_t k = min; k <= max; ++k) {
                const double p = std::pow(static_cast<double>(k), -zipf_s);
                n += p;
                s += p * static_cast<double>(k);
            }
            return s / n;
        }
        case LengthKind::Histogram: {
            double n = 0, s = 0;
            for (size_t i = 0; i < bins.size(); ++i) {
                n += weights[i];
                s += weights[i] * static_cast<double>(bins[i]);
            }
            return s / n;
        }
        case LengthKind::Normal:
        case LengthKind::Lognormal: {
            // The clamped, rounded distribution's mean by a deterministic average over 20000 draws.
            sim::RandomStream r(0x5EEDull);
            double s = 0;
            for (int i = 0; i < 20000; ++i) s += static_cast<double>(sample(r));
            return s / 20000;
        }
    }
    return 0;
}

std::string ArrivalProcess::check() const {
    if (kind == ArrivalKind::Offline) return "";
    if (!(rate > 0) || !std::isfinite(rate)) return "rate must be > 0 requests/s";
    if (kind == ArrivalKind::Gamma && !(cv > 0)) return "cv must be > 0";
    if (kind == ArrivalKind::Bursty && (!(on_s > 0) || !(off_s > 0))) return "bursty needs on and off periods > 0";
    return "";
}

std::string SyntheticTraffic::check() const {
    if (num_requests < 1) return "num_requests must be >= 1";
    if (auto w = arrival.check(); !w.empty()) return w;
    if (auto w = prompt.check(); !w.empty()) return "prompt: " + w;
    if (auto w = output.check(); !w.empty()) return "output: " + w;
    if (shared_prefix.groups < 0 || shared_prefix.prefix_tokens < 0) return "shared_prefix must be >= 0";
    if (sessions.turns >= 2 && sessions.concurrent < 1) return "sessions.concurrent must be >= 1";
    return "";
}

namespace {

class SyntheticSource final : public RequestSource {
public:
    SyntheticSource(const SyntheticTraffic& t, uint64_t seed)
        : t_(t), streams_(seed), arrival_(streams_.stream("serving.arrival")), prompt_(streams_.stream("serving.prompt")),
          output_(streams_.stream("serving.output")), prefix_(streams_.stream("serving.prefix")) {
        if (t.prompt.kind == LengthKind::Zipf) prompt_cdf_ = zipf_cdf(t.prompt);
        if (t.output.kind == LengthKind::Zipf) output_cdf_ = zipf_cdf(t.output);
        if (t.arrival.kind == ArrivalKind::Bursty) on_end_ = arrival_.exponential(1.0 / t.arrival.on_s);
    }

    std::optional<Request> next() override {
        if (issued_ >= t_.num_requests) return std::nullopt;
        Request r;
        r.id = issued_;
        r.arrival_s = next_arrival();
        const int64_t user = draw(t_.prompt, prompt_cdf_, prompt_);
        r.output_tokens = draw(t_.output, output_cdf_, output_);
        uint64_t group = 0;
        if (t_.sessions.turns >= 2) {
            // Conversation i % concurrent; its history is its last prompt (after the prefix) and output.
            if (open_.empty()) open_.resize(static_cast<size_t>(t_.sessions.concurrent));
            Conversation& c = open_[static_cast<size_t>(issued_ % t_.sessions.concurrent)];
            if (c.key == 0 || c.turns >= t_.sessions.turns) {
                c = Conversation{};
                c.key = ++sessions_;
                c.group = pick_group();
            }
            r.session = c.key;
            r.session_tokens = c.history;
            group = c.group;
            ++c.turns;
            c.history += user + r.output_tokens;
        } else {
            group = pick_group();
        }
        if (group) {
            r.prefix_group = group;
            r.prefix_tokens = t_.shared_prefix.prefix_tokens;
        }
        r.prompt_tokens = r.prefix_tokens + r.session_tokens + user;
        ++issued_;
        return r;
    }

    const std::vector<std::string>& slo_classes() const override { return classes_; }

private:
    struct Conversation {
        uint64_t key = 0;
        uint64_t group = 0;
        int64_t turns = 0;
        int64_t history = 0;
    };

    uint64_t pick_group() {
        if (t_.shared_prefix.groups <= 0) return 0;
        return 1 + static_cast<uint64_t>(prefix_.uniform() * static_cast<double>(t_.shared_prefix.groups));
    }

    static int64_t draw(const LengthDistribution& d, const std::vector<double>& cdf, sim::RandomStream& r) {
        if (d.kind == LengthKind::Zipf) return d.min + sample_cdf(cdf, r);
        return std::max<int64_t>(1, d.sample(r));
    }

    double next_arrival() {
        const auto& a = t_.arrival;
        switch (a.kind) {
            case ArrivalKind::Offline: return 0;
            case ArrivalKind::Constant: return static_cast<double>(issued_) / a.rate;
            case ArrivalKind::Poisson: return now_ += arrival_.exponential(a.rate);
            case ArrivalKind::Gamma: {
                const double k = 1.0 / (a.cv * a.cv);
                return now_ += gamma_unit(arrival_, k) / (a.rate * k);
            }
            case ArrivalKind::Bursty: {
                // Poisson arrivals while on; an arrival that would fall past the on period moves,
                // by memorylessness, to the next on period.
                double t = now_ + arrival_.exponential(a.rate);
                while (t > on_end_) {
                    const double off = arrival_.exponential(1.0 / a.off_s);
                    const double on_start = on_end_ + off;
                    on_end_ = on_start + arrival_.exponential(1.0 / a.on_s);
                    t = on_start + arrival_.exponential(a.rate);
                }
                return now_ = t;
            }
        }
        return 0;
    }

    SyntheticTraffic t_;
    sim::RandomStreams streams_;
    sim::RandomStream &arrival_, &prompt_, &output_, &prefix_;
    std::vector<double> prompt_cdf_, output_cdf_;
    std::vector<Conversation> open_;
    uint64_t sessions_ = 0;
    int64_t issued_ = 0;
    double now_ = 0, on_end_ = 0;
    std::vector<std::string> classes_{"default"};
};

}  // namespace

std::unique_ptr<RequestSource> make_synthetic_source(const SyntheticTraffic& traffic, uint64_t seed) {
    return std::make_unique<SyntheticSource>(traffic, seed);
}

}  // namespace fathom::workloads::serving
