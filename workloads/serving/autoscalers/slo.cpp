// SLO headroom: the TTFT and TPOT of the requests finished since the last evaluation, at the SLO's
// attainment quantile (slo.target), over target x the SLO (target 0.8: run at 80% of it). The
// worse of the two ratios scales the serving replicas (HPA's current x metric / target, the metric
// a latency). With no request finished in the interval it keeps the fleet as it is, unless
// requests wait at the front door.
#include "workloads/serving/autoscale.h"
#include "workloads/serving/serving_plan.h"

#include <algorithm>

namespace fathom::workloads::serving {
namespace {

class SloAutoscaler final : public AutoscalePolicy {
public:
    double desired(const FleetView& v) const override {
        const auto serving = static_cast<double>(v.serving);
        if (v.finished == 0) return serving;
        double ratio = 0;
        if (v.slo.ttft_s > 0) ratio = std::max(ratio, v.ttft_s / (v.target * v.slo.ttft_s));
        if (v.slo.tpot_s > 0) ratio = std::max(ratio, v.tpot_s / (v.target * v.slo.tpot_s));
        return serving * ratio;
    }
};

}  // namespace

std::unique_ptr<AutoscalePolicy> make_slo_autoscaler() { return std::make_unique<SloAutoscaler>(); }

}  // namespace fathom::workloads::serving
