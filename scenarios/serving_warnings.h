#pragma once
// Warnings of a serving scenario's mechanism blocks stated while the mechanism is off (speculative
// decoding without a method, LoRA without adapters, autoscaling without a policy): keys that
// cannot change the result.
#include "scenarios/yaml_node.h"
#include "workloads/serving/serving_plan.h"

#include <functional>
#include <string>

namespace fathom::scenarios {

// warn(node, key, message): a warning at `key` of `node`.
using WarnAt = std::function<void(const Node&, const std::string&, const std::string&)>;

void serving_warnings(const Node& serving, const workloads::serving::ServingPlan& p, const WarnAt& warn);

}  // namespace fathom::scenarios
