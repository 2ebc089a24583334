// Synthetic serving traffic: arrival processes and the lazy generator. Every draw comes from
// sim::RandomStream's own distributions (never std::*_distribution), so a seed gives the same
// requests everywhere.
#include "workloads/serving/traffic/traffic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace fathom::workloads::serving {

std::string ArrivalProcess::check() const {
    if (kind == ArrivalKind::Offline) return "";
    if (!(rate > 0) || !std::isfinite(rate)) return "rate must be > 0 (requests/s)";
    if (kind == ArrivalKind::Gamma && (!(cv > 0) || !std::isfinite(cv))) return "cv must be > 0";
    if (kind == ArrivalKind::Bursty) {
        if (!(on_s > 0) || !std::isfinite(on_s)) return "on_s must be > 0 (mean on period, s)";
        if (!(off_s > 0) || !std::isfinite(off_s)) return "off_s must be > 0 (mean off period, s)";
    }
    if (kind == ArrivalKind::Diurnal) {
        if (!(peak_to_trough >= 1) || !std::isfinite(peak_to_trough))
            return "peak_to_trough must be >= 1 (the highest rate of a period over its lowest)";
        if (!(period_s > 0) || !std::isfinite(period_s)) return "period_s must be > 0";
        if (!std::isfinite(peak_s)) return "peak_s must be finite";
    }
    return "";
}

std::string SyntheticTraffic::check() const {
    if (num_requests < 1) return "num_requests must be >= 1";
    if (auto why = arrival.check(); !why.empty()) return why;
    if (auto why = prompt.check(); !why.empty()) return "prompt: " + why;
    if (auto why = output.check(); !why.empty()) return "output: " + why;
    if (shared_prefix.groups < 0) return "shared_prefix.groups must be >= 0";
    if (shared_prefix.prefix_tokens < 0) return "shared_prefix.prefix_tokens must be >= 0";
    if (shared_prefix.groups > 0 && shared_prefix.prefix_tokens < 1)
        return "shared_prefix.prefix_tokens must be >= 1 when shared_prefix.groups > 0";
    if (sessions.turns < 0) return "sessions.turns must be >= 0";
    if (sessions.turns >= 2 && sessions.concurrent < 1) return "sessions.concurrent must be >= 1";
    if (sessions.turns_max != 0 && sessions.turns_max < sessions.turns)
        return "sessions.turns_max must be >= sessions.turns";
    if (sessions.conversations < 0) return "sessions.conversations must be >= 0";
    if (sessions.first_prompt_set())
        if (auto why = sessions.first_prompt.check(); !why.empty()) return "sessions.first_prompt: " + why;
    if (sessions.first_prompt_scaled) {
        const auto k = sessions.first_prompt.kind;
        if (sessions.conversations < 1) return "sessions.first_prompt_scaled needs sessions.conversations";
        if (k != LengthKind::Normal && k != LengthKind::Lognormal)
            return "sessions.first_prompt_scaled needs a normal or lognormal sessions.first_prompt (its mean)";
    }
    return "";
}

namespace {

class SyntheticSource final : public RequestSource {
public:
    SyntheticSource(const SyntheticTraffic& t, uint64_t seed)
        : t_(t),
          arrivals_(named(seed, "serving.arrival")),
          prompt_(named(seed, "serving.prompt")),
          output_(named(seed, "serving.output")),
          prefix_(named(seed, "serving.prefix")),
          session_(named(seed, "serving.session")),
          first_(named(seed, "serving.session.first")) {
        // Bursty traffic starts at t = 0 in an on period.
        if (t.arrival.kind == ArrivalKind::Bursty) on_end_ = arrivals_.exponential(1.0 / t.arrival.on_s);
        if (t.sessions.turns >= 2 && t.sessions.first_prompt_scaled) scale_first_turns();
    }

    std::optional<Request> next() override {
        if (t_.sessions.turns >= 2) return turn(static_cast<size_t>(issued_ % t_.sessions.concurrent), next_arrival());
        return single(next_arrival());
    }

    std::optional<Request> next_for(int64_t client) override {
        if (t_.sessions.turns >= 2) return turn(static_cast<size_t>(client), 0);
        return next();
    }

    const std::vector<std::string>& slo_classes() const override { return classes_; }

private:
    struct Conversation {
        uint64_t key = 0;     // session key (0: the slot has not been opened)
        uint64_t group = 0;   // prefix group, kept for all turns
        int64_t turns = 0;    // turns issued so far
        int64_t length = 0;   // turns it has
        int64_t history = 0;  // session_tokens of the next turn
    };

    // Every conversation's first-turn tokens, drawn now and scaled to the distribution's mean.
    void scale_first_turns() {
        const LengthDistribution& d = t_.sessions.first_prompt;
        std::vector<double> draws(static_cast<size_t>(t_.sessions.conversations));
        double sum = 0;
        for (double& x : draws) sum += x = static_cast<double>(d.sample(first_));
        const double factor = d.mean * static_cast<double>(draws.size()) / sum;
        for (double x : draws) {
            int64_t n = std::max<int64_t>(d.min, std::llround(x * factor));
            if (d.max > 0) n = std::min(n, d.max);
            first_turns_.push_back(std::max<int64_t>(1, n));
        }
    }

    // A request without sessions.
    std::optional<Request> single(double arrival_s) {
        if (issued_ >= t_.num_requests) return std::nullopt;
        Request r = draw(arrival_s, std::max<int64_t>(1, t_.prompt.sample(prompt_)));
        finish(r, pick_group());
        return r;
    }

    // The next turn of the conversation in `slot` (a new conversation when it has none or its last
    // turn was sent); none past num_requests or the last conversation.
    std::optional<Request> turn(size_t slot, double arrival_s) {
        if (issued_ >= t_.num_requests) return std::nullopt;
        if (slot >= open_.size()) open_.resize(slot + 1);
        Conversation& c = open_[slot];
        const bool opens = c.key == 0 || c.turns >= c.length;
        if (opens) {
            if (t_.sessions.conversations > 0 && static_cast<int64_t>(sessions_) >= t_.sessions.conversations)
                return std::nullopt;
            c = Conversation{};
            c.key = ++sessions_;
            c.group = pick_group();
            c.length = t_.sessions.turns;
            if (t_.sessions.turns_max > t_.sessions.turns)
                c.length += static_cast<int64_t>(session_.uniform() *
                                                 static_cast<double>(t_.sessions.turns_max - t_.sessions.turns + 1));
            c.length = std::min(c.length, std::max(t_.sessions.turns, t_.sessions.turns_max));
        }
        const bool first_own = opens && t_.sessions.first_prompt_set();
        int64_t fresh = 0;
        if (!first_own) fresh = t_.prompt.sample(prompt_);
        else if (!first_turns_.empty()) fresh = first_turns_[static_cast<size_t>(c.key - 1)];
        else fresh = t_.sessions.first_prompt.sample(first_);
        fresh = std::max<int64_t>(1, fresh);
        Request r = draw(arrival_s, fresh);
        r.session = c.key;
        r.session_tokens = c.history;
        ++c.turns;
        // The next turn's history: this prompt after the prefix (history + fresh) and the output.
        c.history += fresh + r.output_tokens;
        finish(r, c.group);
        return r;
    }

    // A request of `fresh` own tokens and a drawn output (prompt_tokens set by finish()).
    Request draw(double arrival_s, int64_t fresh) {
        Request r;
        r.id = issued_;
        r.arrival_s = arrival_s;
        r.prompt_tokens = fresh;
        r.output_tokens = std::max<int64_t>(1, t_.output.sample(output_));
        return r;
    }

    // Adds the shared prefix of `group` and the history to the prompt; counts the request.
    void finish(Request& r, uint64_t group) {
        if (group) {
            r.prefix_group = group;
            r.prefix_tokens = t_.shared_prefix.prefix_tokens;
        }
        r.prompt_tokens += r.prefix_tokens + r.session_tokens;
        ++issued_;
    }

    static sim::RandomStream named(uint64_t seed, const char* name) { return sim::RandomStreams(seed).stream(name); }

    // A group uniform on 1..groups, or 0 without shared prefixes.
    uint64_t pick_group() {
        const int64_t g = t_.shared_prefix.groups;
        if (g <= 0) return 0;
        return 1 + std::min<uint64_t>(static_cast<uint64_t>(g - 1),
                                      static_cast<uint64_t>(prefix_.uniform() * static_cast<double>(g)));
    }

    double next_arrival() {
        const auto& a = t_.arrival;
        switch (a.kind) {
            case ArrivalKind::Offline: return 0;
            // i / rate rather than a running sum: no drift over millions of requests.
            case ArrivalKind::Constant: return static_cast<double>(issued_) / a.rate;
            case ArrivalKind::Poisson: return now_ += arrivals_.exponential(a.rate);
            case ArrivalKind::Gamma: {
                // Gamma(k, 1) / (rate k) has mean 1/rate and CV 1/sqrt(k) = cv.
                const double k = 1.0 / (a.cv * a.cv);
                return now_ += arrivals_.gamma(k) / (a.rate * k);
            }
            case ArrivalKind::Bursty: {
                // Poisson arrivals while on. A gap that runs past the end of the on period is cut
                // there; by memorylessness the arrival is then a fresh exponential gap into the next
                // on period (after an off period).
                double t = now_ + arrivals_.exponential(a.rate);
                while (t > on_end_) {
                    const double on_start = on_end_ + arrivals_.exponential(1.0 / a.off_s);
                    on_end_ = on_start + arrivals_.exponential(1.0 / a.on_s);
                    t = on_start + arrivals_.exponential(a.rate);
                }
                return now_ = t;
            }
            case ArrivalKind::Diurnal: {
                // Thinning: candidates at the peak rate, each kept with probability rate(t) / peak.
                const double amp = a.amplitude(), peak = a.rate * (1 + amp);
                constexpr double two_pi = 6.283185307179586;
                for (;;) {
                    now_ += arrivals_.exponential(peak);
                    const double phase = two_pi * (now_ - a.peak_time()) / a.period_s;
                    if (arrivals_.uniform() * (1 + amp) < 1 + amp * std::cos(phase)) return now_;
                }
            }
        }
        return 0;
    }

    SyntheticTraffic t_;
    sim::RandomStream arrivals_, prompt_, output_, prefix_, session_, first_;
    std::vector<Conversation> open_;    // open conversations by slot (at most `concurrent`)
    std::vector<int64_t> first_turns_;  // first_prompt_scaled: each conversation's first-turn tokens
    uint64_t sessions_ = 0;             // session keys issued
    int64_t issued_ = 0;
    double now_ = 0, on_end_ = 0;
    std::vector<std::string> classes_{"default"};
};

}  // namespace

std::unique_ptr<RequestSource> make_synthetic_source(const SyntheticTraffic& traffic, uint64_t seed) {
    return std::make_unique<SyntheticSource>(traffic, seed);
}

}  // namespace fathom::workloads::serving
