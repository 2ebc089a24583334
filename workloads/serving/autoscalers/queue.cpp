// Queue: requests queued or running per serving replica, with those waiting at the front door
// (Knative's concurrency target, KServe's and vLLM production-stack's vllm:num_requests_running /
// num_requests_waiting). Proposes (all of them) / target replicas: HPA's current x mean / target.
#include "workloads/serving/autoscale.h"

namespace fathom::workloads::serving {
namespace {

class QueueAutoscaler final : public AutoscalePolicy {
public:
    double desired(const FleetView& v) const override {
        double outstanding = static_cast<double>(v.waiting);
        for (const ReplicaLoad& l : v.loads)
            if (l.available) outstanding += static_cast<double>(l.outstanding);
        return outstanding / v.target;
    }
};

}  // namespace

std::unique_ptr<AutoscalePolicy> make_queue_autoscaler() { return std::make_unique<QueueAutoscaler>(); }

}  // namespace fathom::workloads::serving
