#pragma once
// Scenario files -> typed scenarios (plans/scenario.h), with the keys plans/keys.h declares (their
// reference is scenarios/README.md). Unknown keys, values without units, values out of range and
// impossible plans are InputErrors naming file, line and key; keys that cannot change the result
// are kept as warnings on the scenario.
#include "plans/constraints.h"
#include "plans/context.h"
#include "plans/scenario.h"
#include "scenarios/catalog.h"

#include <memory>
#include <string>
#include <vector>

namespace fathom::scenarios {

// `overrides` are "dotted.key=value" strings (the CLI's --set), applied before validation.
plans::Scenario load_scenario(const std::string& path, const plans::Catalog& catalog,
                              const std::vector<std::string>& overrides = {});
// A dataset file's (workloads/datasets/) prompt and output lengths, read as a scenario's
// traffic.prompt and traffic.output are (both required).
void read_dataset_lengths(const Node& n, workloads::LengthDistribution& prompt, workloads::LengthDistribution& output);
plans::Scenario parse_scenario(const Node& root, const plans::Catalog& catalog);
// The same, but an impossible plan (plans/constraints.h) comes back in `violations` instead of as an
// InputError: for front ends that report such a plan as an answer (`fathom compare`'s unsupported
// cases).
plans::Scenario parse_scenario(const Node& root, const plans::Catalog& catalog,
                               std::vector<plans::Violation>* violations);
// A `cluster` section alone (the `cluster.*` keys) against the catalog.
hardware::ClusterSpec parse_cluster(const Node& cluster, const plans::Catalog& catalog);
// A scenario from YAML text (messages name it `name`), with the same key=value overrides.
plans::Scenario load_scenario_text(const std::string& yaml, const std::string& name, const plans::Catalog& catalog,
                                   const std::vector<std::string>& overrides = {});

// An evaluation context over `catalog` with the calibrated cost table of every accelerator whose
// catalog entry names one (read once here).
plans::EvaluationContext make_context(std::shared_ptr<const plans::Catalog> catalog, uint64_t seed = 1,
                                      const std::string& collective_algorithm = "");

}  // namespace fathom::scenarios
