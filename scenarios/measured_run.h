#pragma once
// Whole runs in a training case (fathom's extension `training.run`, scenarios/measured-format-fathom.md):
// the case's window of a run as a `run` section, and the run metrics (interruptions per day, the
// effective training time ratio) from the simulated runs.
#include "scenarios/measured_case.h"
#include "scenarios/measured_kinds.h"

#include <string>
#include <vector>

namespace fathom::scenarios::measured {

// Adds the `run` section when the case has a `training.run` block: its window as run.target_time,
// the catalog's failure profile of the case's accelerator (another device's, said, when it has
// none), its storage and checkpoint policy, and what it leaves out as stated assumptions.
void translate_run(const Case& c, const plans::Catalog& catalog, const std::string& accelerator, ScenarioDoc& doc,
                   std::vector<std::string>& assumptions);

// Whether `metric` is one a run gives, and its value from the evaluated scenario's run.
bool is_run_metric(const std::string& metric);
double run_metric(const Case& c, const Evaluated& e, CompareResult& out);

}  // namespace fathom::scenarios::measured
