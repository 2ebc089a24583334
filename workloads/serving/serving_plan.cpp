#include "workloads/serving/serving_plan.h"

#include "sim/error.h"

namespace fathom::workloads::serving {

std::vector<Pool> ServingPlan::pools() const {
    auto pool = [](PoolRole role, const PoolLayout& layout, bool simulated, const char* key) {
        return Pool{role, &layout, simulated, simulated ? layout.gpus() : 0, key};
    };
    if (!prefill) return {pool(PoolRole::Aggregated, replica, true, "serving")};
    FATHOM_CHECK(decode.has_value(), "a disaggregated plan without its decode pool");
    return {pool(PoolRole::Prefill, *prefill, isolate != PoolIsolation::Decode, "serving.disaggregation.prefill"),
            pool(PoolRole::Decode, *decode, isolate != PoolIsolation::Prefill, "serving.disaggregation.decode")};
}

int64_t ServingPlan::gpus() const {
    int64_t n = 0;
    for (const Pool& p : pools()) n += p.gpus;
    return n;
}

}  // namespace fathom::workloads::serving
