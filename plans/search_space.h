#pragma once
// The `search` section of a training scenario: the axes a plan search (plans/search.h) crosses and
// what it ranks by. Each axis is a list of values of one plan key; an empty list means the axis's
// default, derived from the model and cluster when the search starts (search.cpp says how).
#include <cstdint>
#include <string>
#include <vector>

namespace fathom::plans {

struct TrainingSearchSpace {
    std::vector<int64_t> tp, pp, vp, cp, ep;  // parallel degrees; dp = GPUs / (tp x pp x cp)
    std::vector<int64_t> micro_batch, global_batch, zero_stage;
    std::vector<std::string> recompute;  // none | selective | full
    std::vector<std::string> schedule;   // registered schedules, or "auto" (1f1b, interleaved-1f1b when vp > 1)
    std::vector<std::string> dtype;      // GEMM dtype (stack.dtype)
    // Gradient noise scale in sequences (McCandlish et al. 2018): a step of global batch B is worth
    // (b_noise + B0) / (b_noise + B) of one at the scenario's batch B0, per sequence. 0: not given
    // (statistical efficiency 1, goodput = throughput).
    double b_noise = 0;
    double price_per_gpu_hour = 0;          // USD; 0: no cost column
    std::string objective = "goodput";      // goodput | throughput | cost
    int top = 10;                           // rows of the printed table
};

}  // namespace fathom::plans
