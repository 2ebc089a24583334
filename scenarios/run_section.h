#pragma once
// The `run` section of a training scenario (the run.* keys, plans/run_request.h): read, and checked
// as far as the scenario alone can tell (the target, the failure-rate profile, the checkpoint's
// tier, room and interval), so that its errors name the file, line and key.
#include "plans/catalog.h"
#include "plans/run_request.h"
#include "plans/search_space.h"
#include "scenarios/yaml_node.h"

namespace fathom::scenarios {

// `search`: the scenario's parsed search section, if any (its search.recovery may try elastic
// recovery, whose pause run.reconfigure then gives).
plans::RunRequest parse_run(const Node& root, const plans::Catalog& catalog, const models::ModelSpec& model,
                            const hardware::ClusterSpec& cluster, const workloads::TrainingPlan& plan,
                            const plans::SearchSpace* search = nullptr);

}  // namespace fathom::scenarios
