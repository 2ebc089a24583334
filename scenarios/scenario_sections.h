#pragma once
// Internal to scenarios/: the section readers one workload kind's parser shares with another's
// (an RL scenario's trainer is a training plan's sections, its rollout engine a serving section).
#include "plans/catalog.h"
#include "scenarios/yaml_node.h"
#include "workloads/serving/serving_plan.h"
#include "workloads/training/training_plan.h"

#include <cstdint>
#include <set>
#include <string>

namespace fathom::scenarios {

// Fails at a dotted key path: its line when the file has the key, else its section's (or the top's).
[[noreturn]] void fail_at(const Node& root, const std::string& path, const std::string& message);

// The `parallel`, `training` and `stack` sections as a training plan on `gpus` GPUs (dp derived
// when not given); the required keys listed in `derived` may be absent.
workloads::TrainingPlan parse_training(const Node& root, const plans::Catalog& cat, int64_t gpus,
                                       const std::set<std::string>& derived = {});

// The `serving` section (the engine preset, then its keys and pools), the paths read into `given`.
void read_serving_section(const Node& root, const plans::Catalog& cat, workloads::serving::ServingPlan& p,
                          std::set<std::string>& given);
// The serving plan's derived defaults on `cluster` and the catalog ids it names.
void finish_serving(const Node& root, const plans::Catalog& cat, const hardware::ClusterSpec& cluster,
                    workloads::serving::ServingPlan& p, const std::set<std::string>& given);

}  // namespace fathom::scenarios
