#pragma once
// The time series of a serving run for the HTML report (`fathom run --html`), collected from the
// serving engine's signals (workloads/serving/serving_events.h): one sample per batch (when it
// started and ended, on which replica, its prefill tokens, prefills and decodes), the KV blocks
// each replica's sequences reference after each batch, and the tokens sampled (a sequence's first
// token when it finishes, the others per batch). Samples, not bins: the report bins them once the
// run's length is known. Seconds as in serving_requests.h: each engine time converted alone.
#include "workloads/serving/serving_events.h"

#include <cstdint>
#include <vector>

namespace fathom::workloads {

class ServingSeries {
public:
    struct Iteration {
        double start_s = 0, end_s = 0;
        int32_t replica = 0;
        int32_t prefills = 0, decodes = 0;
        int64_t prefill_tokens = 0;
    };
    struct KvUse {
        double t_s = 0;
        int32_t replica = 0;
        int64_t used = 0;  // blocks
    };
    struct Tokens {
        double t_s = 0;
        int64_t tokens = 0;
    };

    ServingSeries() = default;
    ServingSeries(const ServingSeries&) = delete;  // the signals refer to it once attached
    ServingSeries& operator=(const ServingSeries&) = delete;

    // Subscribes to `signals` (before the run); `kv_capacity`: each replica's KV blocks.
    void attach(serving::ServingSignals& signals, std::vector<int64_t> kv_capacity);

    const std::vector<Iteration>& iterations() const { return iterations_; }
    const std::vector<KvUse>& kv_use() const { return kv_; }
    const std::vector<Tokens>& tokens() const { return tokens_; }
    const std::vector<int64_t>& kv_capacity() const { return kv_capacity_; }

private:
    std::vector<Iteration> iterations_;
    std::vector<KvUse> kv_;
    std::vector<Tokens> tokens_;
    std::vector<int64_t> kv_capacity_;
};

}  // namespace fathom::workloads
