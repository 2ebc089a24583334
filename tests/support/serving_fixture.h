#pragma once
// Shared by the serving tests: a serving scenario parsed from YAML text against the source tree's
// catalogs, and its evaluation, required to be a valid plan.
#include "tests/support/fixtures.h"

#include <string>

namespace fathom::testing {

inline plans::Scenario serving_scenario(const std::string& yaml) {
    return scenarios::parse_scenario(scenarios::load_yaml_string(yaml, "test.yaml"), source_catalog());
}

// `records`: keep every request's record (ServingReport::records).
inline workloads::serving::ServingReport serve(const plans::Scenario& s, bool records = false) {
    plans::EvaluateOptions o;
    o.keep_records = records;
    const plans::Outcome out = plans::evaluate(s, source_context(), o);
    INFO(plans::describe(out.violations));
    REQUIRE(out.ok());
    return *out.serving();
}

}  // namespace fathom::testing
