#pragma once
// The drafter's GPU time in a speculative-decoding iteration (speculative.h): k sequential draft
// steps over the batch's decodes, each a decode iteration of the drafter on the replica's GPUs.
// EAGLE heads and MTP modules are one decoder layer of the target's shape and its output head
// (EAGLE-3's smaller draft vocabulary is not modelled: an overestimate of its head); a draft model
// is its own model at the pool's tensor parallelism; n-gram lookup costs no GPU time. The engine's
// own time around the drafter (SpeculativeSettings' overheads) is added once an iteration and once
// a step.
#include "workloads/serving/iteration_cost.h"
#include "workloads/serving/speculative.h"

#include <memory>

namespace fathom::workloads::serving {

class DraftCoster {
public:
    DraftCoster(const models::ModelSpec& target, const SpeculativeSettings& spec, const PoolLayout& pool,
                const models::KernelStack& kernels, const models::CostModel& cost,
                const hardware::NetworkModel& network);

    // Seconds of the k draft steps for `decodes` sequences whose KV lengths sum to `decode_kv`.
    double seconds(int64_t decodes, int64_t decode_kv);

private:
    int steps_ = 0;
    double overhead_s_ = 0;                     // the engine's time around the drafter, an iteration
    std::unique_ptr<models::ModelSpec> model_;  // the drafter (null: no GPU time)
    std::unique_ptr<IterationCoster> coster_;
};

}  // namespace fathom::workloads::serving
