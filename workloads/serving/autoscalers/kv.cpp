// KV: the share of the KV cache the serving replicas' sequences use (vLLM's kv_cache_usage_perc,
// llm-d's KV-cache saturation). Proposes (the shares summed) / target replicas: HPA's
// current x mean / target. Requests waiting at the front door ask for one replica at least (the
// autoscaler's floor).
#include "workloads/serving/autoscale.h"

namespace fathom::workloads::serving {
namespace {

class KvAutoscaler final : public AutoscalePolicy {
public:
    double desired(const FleetView& v) const override {
        double used = 0;
        for (const ReplicaLoad& l : v.loads)
            if (l.available) used += l.kv_used;
        return used / v.target;
    }
};

}  // namespace

std::unique_ptr<AutoscalePolicy> make_kv_autoscaler() { return std::make_unique<KvAutoscaler>(); }

}  // namespace fathom::workloads::serving
