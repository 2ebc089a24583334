#pragma once
// An RL scenario (kind: rl): the `rl` section (the loop), the `serving` section (the rollout
// engines, on the rollout pool's GPUs) and the `parallel`, `training` and `stack` sections (the
// trainer, on its pool's), read and checked so that errors name the file, line and key.
#include "plans/catalog.h"
#include "scenarios/yaml_node.h"
#include "workloads/rl/rl_plan.h"

namespace fathom::scenarios {

workloads::rl::RlPlan parse_rl(const Node& root, const plans::Catalog& catalog, const hardware::ClusterSpec& cluster);

}  // namespace fathom::scenarios
