#pragma once
// How unevenly a mixture-of-experts router loads the expert-parallel ranks, and what the busiest
// rank (the one every all-to-all combine waits for) receives relative to the mean.
//
// Expert popularity comes from one of:
//   balanced         every expert the same share (what an auxiliary balancing loss, or forced
//                    balancing in benchmarks, aims for);
//   zipf s > 0       the i-th most popular expert gets a share proportional to 1 / i^s; which
//                    experts are popular is random, so the busiest rank's load is the mean over
//                    64 seeded random placements of the popularity ranks onto experts (a fixed
//                    stream: the same plan gives the same load);
//   measured loads   tokens per expert as a run counted them (expert e's share = load_e / sum),
//                    experts placed as Megatron-Core places them: rank r of the EP group holds
//                    experts [r E/ep, (r+1) E/ep).
// A capacity factor c > 0 caps each expert at c x the mean tokens per expert and drops the rest
// (GShard/Switch token dropping); 0 is dropless.
#include "models/llm/model_spec.h"

#include <cstdint>
#include <tuple>
#include <vector>

namespace fathom::workloads {

struct MoeRouting {
    double zipf = 0;                    // popularity exponent (0: balanced)
    std::vector<int64_t> expert_loads;  // measured tokens per expert (empty: none)
    double capacity_factor = 0;         // 0: dropless

    auto tie() const { return std::tie(zipf, expert_loads, capacity_factor); }
};

// Tokens the busiest rank of the EP group processes, relative to the mean rank without drops.
// Expert shares above 1 / top_k are not clipped (a token picks distinct experts), which skews
// beyond that are outside this model.
double busiest_rank_load(const models::ModelSpec& model, int ep, const MoeRouting& routing);

// Each expert's share of the routed tokens (sums to 1), in expert order, for one placement draw
// (zipf: `draw` selects the placement; measured loads and balanced ignore it).
std::vector<double> expert_shares(const models::ModelSpec& model, const MoeRouting& routing, int draw);

}  // namespace fathom::workloads
