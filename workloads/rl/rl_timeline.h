#pragma once
// An RL outcome's iterations as a Chrome/Perfetto trace (`fathom run --trace` of kind rl): a
// process per pool (one for colocated GPUs), each phase of each iteration a span (weight load,
// rollout, host copies, forward passes, update, weight sync) with its iteration and, for a
// rollout, the policy version that generated it.
#include "workloads/rl/rl_plan.h"
#include "workloads/rl/rl_report.h"

#include <ostream>

namespace fathom::workloads::rl {

void write_timeline(const RlReport& r, Layout layout, std::ostream& out);

}  // namespace fathom::workloads::rl
