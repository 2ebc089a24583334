#pragma once
// The `search` section of a scenario: the axes a plan search crosses and what it ranks by. Each
// axis is a list of values of one plan key; an empty list means the axis's default, derived from
// the model and cluster when the search starts (search.cpp and serving_search.cpp say how).
// Training scenarios search the training axes (plans/search.h), serving scenarios the serving
// axes (plans/serving_search.h); tp, pp, objective, price_per_gpu_hour and top serve both, and a
// key of the other kind is an error naming it.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fathom::plans {

struct SearchSpace {
    // Both kinds.
    std::vector<int64_t> tp, pp;    // training: dp = GPUs / (tp x pp x cp); serving: one replica's degrees
    double price_per_gpu_hour = 0;  // USD; 0: no cost column
    // training: goodput | throughput | cost; serving: goodput | throughput | cost | capacity
    std::string objective = "goodput";
    int top = 10;  // rows of the printed table

    // Training.
    std::vector<int64_t> vp, cp, ep;
    std::vector<int64_t> micro_batch, global_batch, zero_stage;
    std::vector<std::string> recompute;  // none | selective | full
    std::vector<std::string> schedule;   // registered schedules, or "auto" (workloads::default_schedule)
    std::vector<std::string> dtype;      // GEMM dtype (stack.dtype)
    // Gradient noise scale in sequences (McCandlish et al. 2018): a step of global batch B is worth
    // (b_noise + B0) / (b_noise + B) of one at the scenario's batch B0, per sequence. 0: not given
    // (statistical efficiency 1, goodput = throughput).
    double b_noise = 0;
    // Adaptive runs (plans/adaptive.h): the noise scale at the end of the run (0: b_noise
    // throughout), the run's length in tokens at the scenario's global batch, the phases it is
    // split into (1: no adaptation), and the fixed cost of a restart on a new layout.
    double b_noise_final = 0;
    double target_tokens = 0;
    int phases = 1;
    double restart_s = 0;

    // Serving.
    std::vector<std::string> accelerator;     // device types tried (catalog ids, checked when loaded)
    std::vector<int64_t> replicas;            // replicas of tp x pp (both pools together when disaggregated)
    std::vector<std::string> disaggregation;  // off | on (every xPyD split of the replicas)
    std::vector<std::string> policy;          // batching policies
    std::vector<int64_t> max_num_seqs, max_num_batched_tokens;
    std::vector<std::pair<std::string, double>> prices;  // per accelerator id, USD per GPU-hour (search.prices)
};

// The keys of each kind only (the rest of the section's keys serve both).
bool is_training_search_key(const std::string& path);
bool is_serving_search_key(const std::string& path);

}  // namespace fathom::plans
