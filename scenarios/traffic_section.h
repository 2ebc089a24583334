#pragma once
// The `traffic` section of a serving scenario (scenarios/traffic_section.cpp), read into the plan
// after the `serving` section; `given` collects the keys the scenario sets.
#include "plans/catalog.h"
#include "scenarios/yaml_node.h"
#include "workloads/serving/serving_plan.h"

#include <set>
#include <string>

namespace fathom::scenarios {

void read_traffic(const Node& root, const plans::Catalog& cat, workloads::serving::ServingPlan& p,
                  std::set<std::string>& given);

}  // namespace fathom::scenarios
