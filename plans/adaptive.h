#pragma once
// Adaptive training runs (COPUS, papers.md T14): a run split into phases as the gradient noise
// scale grows, each phase on the (plan, global batch) of a finished training search that reaches
// the target soonest, with a checkpoint-and-restart charged where the layout changes.
//
// Statistical model (McCandlish et al. 2018, "An Empirical Model of Large-Batch Training"): at
// global batch B, a stretch of training that would take dE examples at the smallest batch takes
// dE (1 + B / b) examples, b the gradient noise scale there (so the statistical efficiency of B
// against B0 is (b + B0) / (b + B), as the search ranks it). The noise scale grows over the run
// from search.b_noise to search.b_noise_final geometrically in the progress p in [0, 1] (the share
// of the minimal examples E_min done): b(p) = b0 (b1 / b0)^p. The run is defined by the tokens it
// would train at the scenario's batch B0 (search.target_tokens): N0 = target_tokens / seq_len
// sequences = E_min x integral_0^1 (1 + B0 / b(p)) dp, which fixes E_min.
//
// Phase k covers p in [k/K, (k+1)/K]; plan c runs it in
//   E_min x integral_{p_k}^{p_k+1} (1 + B_c / b(p)) dp x seq_len / tokens_per_s(c) seconds.
// Changing only the global batch costs nothing (Megatron's --rampup-batch-size changes it in the
// run); any other change saves the training state (plans::checkpoint_bytes: weights in bf16 and 12
// bytes of fp32 master weights and Adam moments per parameter, 14 B/param, ZeRO paper, Rajbhandari
// et al. 2020, less the gradients) to the nodes' local SSDs (cluster.ssd, cluster.ssds_per_node striped), restarts
// (search.restart_s) and loads it again, every node reading its share from its SSD and fetching
// it over its NICs (the new layout's shards live elsewhere). A dynamic programme over the phases
// finds the cheapest sequence exactly.
#include "plans/search.h"

#include <cstdint>
#include <vector>

namespace fathom::plans {

struct AdaptivePhase {
    double progress_begin = 0, progress_end = 0;  // share of E_min
    double b_noise_begin = 0, b_noise_end = 0;    // sequences
    int64_t candidate = -1;                       // index into the search's candidates
    double sequences = 0;                         // trained in the phase
    double seconds = 0;                           // training time of the phase
    double reconfigure_s = 0;                     // checkpoint and restart before it (0: none)
};

struct AdaptiveRun {
    std::vector<AdaptivePhase> phases;
    double seconds = 0;  // training + reconfiguration
    double reconfigure_s = 0;
    int switches = 0;              // layout changes (checkpoint and restart)
    double checkpoint_bytes = 0;   // the training state
    double reconfigure_one_s = 0;  // one checkpoint-and-restart
    int64_t best_fixed = -1;       // the best single plan for the whole run
    double best_fixed_s = 0;
    double min_sequences = 0;  // E_min
};

// Seconds for plan `c` (global batch `batch`, `tokens_per_s` whole cluster) to cover progress
// [p0, p1] of a run of E_min = `min_sequences`.
double adaptive_phase_seconds(double min_sequences, int64_t seq_len, double batch, double tokens_per_s, double b0,
                              double b1, double p0, double p1);

// The adaptive run over the evaluated candidates of `result` (a finished training search).
// Throws InputError (key named) when the space gives no target, noise scale or phases, or the
// cluster has no SSD to checkpoint to while phases may change the layout.
AdaptiveRun plan_adaptive_run(const SearchResult& result, const SearchSpace& space, const models::ModelSpec& model,
                              const hardware::ClusterSpec& cluster, int64_t seq_len);

}  // namespace fathom::plans
