#pragma once
// Helpers for tests of `fathom compare`: a case of the frozen measurement file by id, a file of
// one (rewritten) case compared, and whether a result states an assumption.
#include "scenarios/measured.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace fathom::testing {

// One case of the frozen copy of the shared file (tests/data/measured_frozen.yaml), by id,
// cloned to be rewritten; null when there is none.
inline YAML::Node frozen_case(const std::string& id) {
    const YAML::Node file = YAML::LoadFile(kSource + "/tests/data/measured_frozen.yaml");
    for (const auto& c : file["cases"])
        if (c["id"].as<std::string>() == id) return YAML::Clone(c);
    return {};
}

// Compares a file holding the one case `c` (written to the build directory as `file_name`).
inline std::vector<scenarios::CompareResult> compare_one(const YAML::Node& c, const std::string& file_name,
                                                         bool other_metrics = false) {
    YAML::Node f;
    f["format_version"] = 1;
    f["cases"].push_back(c);
    const std::string path = std::string(FATHOM_BINARY_DIR) + "/" + file_name;
    std::ofstream(path) << f;
    return scenarios::compare_measured(path, source_context(), other_metrics);
}

// Whether a result states an assumption starting with `prefix`.
inline bool stated(const scenarios::CompareResult& r, const std::string& prefix) {
    return std::any_of(r.assumptions.begin(), r.assumptions.end(),
                       [&](const std::string& a) { return a.rfind(prefix, 0) == 0; });
}

}  // namespace fathom::testing
