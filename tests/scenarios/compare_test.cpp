// Accuracy against published measurements: predicts every training case of the frozen copy of the
// shared reference file (tests/data/measured_frozen.yaml, measured-format v1; every training case of
// shared/reference/measured.yaml) and checks that all 25 dense cases are simulated, that the median
// absolute error stays at the 5.2% reached when the file was frozen (bound 5.5%), and that no
// simulated case runs out of memory (the published runs did fit). tests/golden pins each number.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "scenarios/measured.h"
#include "tests/support/fixtures.h"

using namespace fathom;

TEST_CASE("training predictions match the published measurements", "[scenarios][compare][slow]") {
    const std::string source = FATHOM_SOURCE_DIR;
    const std::string path = source + "/tests/data/measured_frozen.yaml";
    REQUIRE(std::filesystem::exists(path));
    const auto results = scenarios::compare_measured(path, testing::source_context());

    std::vector<double> abs_errors;
    std::string table;  // one line per simulated case, shown if a check below fails
    int unsupported = 0;
    for (const auto& r : results) {
        if (r.kind != "training") continue;
        if (r.status != "ok") {
            ++unsupported;
            continue;
        }
        char line[256];
        std::snprintf(line, sizeof line, "%-44s %-22s measured %10.4g predicted %10.4g error %+6.1f%%  peak %6.1f / %5.1f GiB%s",
                      r.id.c_str(), r.metric.c_str(), r.measured, r.predicted, 100 * r.error,
                      r.peak_memory_bytes / 1073741824.0, r.memory_capacity_bytes / 1073741824.0,
                      r.out_of_memory ? "  OUT OF MEMORY" : "");
        table += std::string(line) + "\n";
        INFO(line);
        // A published run fitted on its hardware: predicting otherwise is a memory-model error.
        CHECK_FALSE(r.out_of_memory);
        CHECK(std::isfinite(r.error));
        abs_errors.push_back(std::fabs(r.error));
    }
    INFO("simulated training cases:\n" << table);
    REQUIRE(!abs_errors.empty());
    std::vector<double> sorted = abs_errors;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    const double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    const double max_err = sorted.back();
    WARN("training cases: " << n << " simulated, " << unsupported << " unsupported; median |error| "
                            << 100 * median << "%, max |error| " << 100 * max_err << "%");
    CHECK(n >= 25);
    CHECK(median < 0.055);
}

TEST_CASE("serving predictions match the published measurements", "[scenarios][compare][serving]") {
    // Every serving case of the frozen copy: the 26 dense cases with request lengths in the file
    // are simulated (MoE, per-pool disaggregated and dataset-length cases are unsupported), and the
    // median absolute error stays at the 13.7% reached (the bound is 15%). tests/golden pins
    // each number. History: 12.2% when serving landed; 13.7% once the TensorRT-LLM preset took its
    // documented KV defaults (free_gpu_memory_fraction of the free memory, GUARANTEED_NO_EVICT
    // reservation), which lowered the mean |error| from 14.2% to 12.5% while moving the median.
    const auto results = scenarios::compare_measured(std::string(FATHOM_SOURCE_DIR) + "/tests/data/measured_frozen.yaml",
                                                     testing::source_context());
    std::vector<double> errs;
    for (const auto& r : results) {
        if (r.kind != "serving" || r.status != "ok") continue;
        INFO(r.id << " measured " << r.measured << " predicted " << r.predicted);
        CHECK(std::isfinite(r.error));
        errs.push_back(std::fabs(r.error));
    }
    std::sort(errs.begin(), errs.end());
    REQUIRE(errs.size() >= 26);
    const size_t n = errs.size();
    const double median = n % 2 ? errs[n / 2] : 0.5 * (errs[n / 2 - 1] + errs[n / 2]);
    WARN("serving cases: " << n << " simulated; median |error| " << 100 * median << "%");
    CHECK(median <= 0.14);
}
