#include "workloads/rl/rollout.h"

#include "sim/random.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace fathom::workloads::rl {
namespace {

// causal(n): the key-query pairs of causal attention over n tokens, n^2 / 2 (the diagonal's half
// is immaterial at these lengths and cancels in every comparison below).
double causal(double n) { return n * n / 2; }

class RolloutSource final : public serving::RequestSource {
public:
    explicit RolloutSource(const RolloutBatch& batch) : batch_(batch) {}
    std::optional<serving::Request> next() override {
        if (next_ >= batch_.answers()) return std::nullopt;
        const int64_t p = next_ / batch_.samples;
        serving::Request r;
        r.id = next_;
        r.arrival_s = 0;
        r.prompt_tokens = batch_.prompt[static_cast<size_t>(p)];
        r.output_tokens = batch_.response[static_cast<size_t>(next_)];
        r.prefix_group = static_cast<uint64_t>(p) + 1;
        r.prefix_tokens = r.prompt_tokens;
        ++next_;
        return r;
    }
    const std::vector<std::string>& slo_classes() const override { return classes_; }

private:
    const RolloutBatch& batch_;
    int64_t next_ = 0;
    std::vector<std::string> classes_{"default"};
};

}  // namespace

int64_t RolloutBatch::response_tokens() const {
    int64_t n = 0;
    for (int64_t r : response) n += r;
    return n;
}

int64_t RolloutBatch::train_tokens(bool shared_prompt) const {
    int64_t n = response_tokens();
    for (int64_t p : prompt) n += shared_prompt ? p : p * samples;
    return n;
}

std::vector<int64_t> RolloutBatch::documents(bool shared_prompt) const {
    std::vector<int64_t> out;
    for (int64_t p = 0; p < prompts(); ++p) {
        const double prompt_len = static_cast<double>(prompt[static_cast<size_t>(p)]);
        const auto first = response.begin() + p * samples, last = first + samples;
        if (!shared_prompt) {
            for (auto r = first; r != last; ++r) out.push_back(static_cast<int64_t>(prompt_len) + *r);
            continue;
        }
        // The kernel's pairs, and the answers' own when each stands alone.
        double pairs = causal(prompt_len), alone = 0;
        for (auto r = first; r != last; ++r) {
            pairs += static_cast<double>(*r) * prompt_len + causal(static_cast<double>(*r));
            alone += causal(static_cast<double>(*r));
        }
        double head = prompt_len;
        auto r = first;
        for (; r != last; ++r) {
            const double grown = head + static_cast<double>(*r);
            if (causal(grown) + alone - causal(static_cast<double>(*r)) > pairs) break;
            alone -= causal(static_cast<double>(*r));
            head = grown;
        }
        if (r == last) {
            out.push_back(static_cast<int64_t>(head));
            continue;
        }
        // The next answer split: x of its tokens onto the head so that the pairs match. Moving x
        // adds head x + x^2 - R x, so x solves x^2 + (head - R) x - deficit = 0.
        const double len = static_cast<double>(*r), deficit = pairs - causal(head) - alone;
        const double b = head - len;
        const double x = std::clamp((-b + std::sqrt(b * b + 4 * std::max(0.0, deficit))) / 2, 0.0, len);
        const auto moved = static_cast<int64_t>(std::llround(x));
        out.push_back(static_cast<int64_t>(head) + moved);
        if (*r - moved > 0) out.push_back(*r - moved);
        for (++r; r != last; ++r) out.push_back(*r);
    }
    return out;
}

RolloutBatch draw_rollout_batch(const RlSettings& rl, uint64_t seed, int iteration) {
    sim::RandomStreams streams(sim::mix64(seed) ^ static_cast<uint64_t>(iteration));
    sim::RandomStream& prompts = streams.stream("rl.prompt");
    sim::RandomStream& answers = streams.stream("rl.response");
    RolloutBatch b;
    b.samples = rl.samples;
    b.prompt.reserve(static_cast<size_t>(rl.prompts));
    b.response.reserve(static_cast<size_t>(rl.prompts * rl.samples));
    for (int64_t p = 0; p < rl.prompts; ++p) b.prompt.push_back(rl.prompt_len.sample(prompts));
    for (int64_t i = 0; i < rl.prompts * rl.samples; ++i) b.response.push_back(rl.response_len.sample(answers));
    return b;
}

RolloutBatch joined(const RolloutBatch& a, const RolloutBatch& b) {
    RolloutBatch out = a;
    out.prompt.insert(out.prompt.end(), b.prompt.begin(), b.prompt.end());
    out.response.insert(out.response.end(), b.response.begin(), b.response.end());
    return out;
}

std::unique_ptr<serving::RequestSource> rollout_source(const RolloutBatch& batch) {
    return std::make_unique<RolloutSource>(batch);
}

LengthDistribution histogram_of(const std::vector<int64_t>& lengths) {
    // At most kBins bins of equal counts (a drawn length is its bin's mean, rounded): a histogram
    // of thousands of distinct lengths would make every draw walk them all.
    constexpr size_t kBins = 256;
    std::vector<int64_t> sorted = lengths;
    std::sort(sorted.begin(), sorted.end());
    LengthDistribution d;
    d.kind = LengthKind::Histogram;
    const size_t n = sorted.size(), bins = std::min(n, kBins);
    for (size_t b = 0; b < bins; ++b) {
        const size_t lo = b * n / bins, hi = (b + 1) * n / bins;
        double sum = 0;
        for (size_t i = lo; i < hi; ++i) sum += static_cast<double>(sorted[i]);
        const auto mean = static_cast<int64_t>(std::llround(sum / static_cast<double>(hi - lo)));
        if (!d.bins.empty() && d.bins.back() == mean) d.weights.back() += static_cast<double>(hi - lo);
        else {
            d.bins.push_back(std::max<int64_t>(1, mean));
            d.weights.push_back(static_cast<double>(hi - lo));
        }
    }
    d.min = 1;
    return d;
}

}  // namespace fathom::workloads::rl
