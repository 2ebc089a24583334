#pragma once
// The `run` section of a training scenario (the run.* keys, plans/run_request.h): read, and checked
// as far as the scenario alone can tell (the target, the failure-rate profile, the checkpoint's
// tier, room and interval), so that its errors name the file, line and key.
#include "plans/catalog.h"
#include "plans/run_request.h"
#include "scenarios/yaml_node.h"

namespace fathom::scenarios {

plans::RunRequest parse_run(const Node& root, const plans::Catalog& catalog, const models::ModelSpec& model,
                            const hardware::ClusterSpec& cluster, const workloads::TrainingPlan& plan);

}  // namespace fathom::scenarios
