#include "workloads/serving/serving_plan.h"

namespace fathom::workloads::serving {

const char* preemption_name(Preemption p) { return p == Preemption::Swap ? "swap" : "recompute"; }

const char* pool_isolation_name(PoolIsolation i) {
    switch (i) {
        case PoolIsolation::None: return "none";
        case PoolIsolation::Prefill: return "prefill";
        case PoolIsolation::Decode: return "decode";
    }
    return "?";
}

}  // namespace fathom::workloads::serving
