#include "workloads/serving/serving_plan.h"

namespace fathom::workloads::serving {

const char* preemption_name(Preemption p) { return p == Preemption::Swap ? "swap" : "recompute"; }

}  // namespace fathom::workloads::serving
