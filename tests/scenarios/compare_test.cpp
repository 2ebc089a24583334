// Accuracy against published measurements: predicts every training case of the shared reference
// file (shared/reference/measured.yaml, measured-format v1, next to the source tree) and checks
// that enough cases are simulated, that the median absolute error is below 15%, and that no
// simulated case runs out of memory (the published runs did fit).
//
// The reference file is required: if it is missing this test FAILS (it does not skip), because a
// silently skipped accuracy test looks like a passing one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "scenarios/catalog.h"
#include "scenarios/measured.h"

using namespace fathom;

TEST_CASE("training predictions match the published measurements", "[scenarios][compare][slow]") {
    const std::string source = FATHOM_SOURCE_DIR;
    const std::string path = source + "/../shared/reference/measured.yaml";
    if (!std::filesystem::exists(path)) {
        FAIL("reference measurements not found at '" << path
                                                      << "': the shared/reference checkout must sit next to the fathom "
                                                         "source tree (../shared/reference/measured.yaml)");
    }
    const scenarios::Catalog catalog(source);
    const auto results = scenarios::compare_measured(path, catalog);

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
    CHECK(n >= 20);
    CHECK(median < 0.15);
}
