#pragma once
// Whole-run tests (issue 38): a scenario loaded from text against the source catalog, and the
// input error loading one raises (the test fails when it loads).
#include "plans/scenario.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>

#include <string>

namespace fathom::testing {

inline plans::Scenario load_text(const std::string& yaml, const std::string& file) {
    return scenarios::load_scenario_text(yaml, file, source_catalog());
}

inline sim::InputError load_error(const std::string& yaml, const std::string& file) {
    try {
        load_text(yaml, file);
    } catch (const sim::InputError& e) {
        return e;
    }
    FAIL("accepted");
    throw;
}

}  // namespace fathom::testing
