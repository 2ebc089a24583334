// `fathom calibrate refit` (scenarios/refit.h): a constant recovered from measurements fathom itself
// would predict with that constant scaled (the fit's closed form: the factor that makes every
// prediction the measurement), the insensitive constant of a collective's other algorithm left
// alone, and the catalog file written with the value and a source naming the measurements.
#include "scenarios/refit.h"

#include "scenarios/measured.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

using namespace fathom;
namespace fs = std::filesystem;

namespace {

const std::string kCase = "trn-nemo2407-llama3-8b-8";  // NeMo 24.07, Llama 3 8B on 8 H100 (tabled)

// A measured-format file of the frozen case `id` whose value is `value`.
std::string one_case_file(const std::string& name, const std::string& id, double value) {
    const YAML::Node all = YAML::LoadFile(testing::kSource + "/tests/data/measured_frozen.yaml");
    YAML::Node doc;
    doc["format_version"] = 1;
    for (const auto& c : all["cases"])
        if (c["id"].as<std::string>() == id) {
            YAML::Node copy = YAML::Clone(c);
            copy["value"] = value;
            copy.remove("other_metrics");
            doc["cases"].push_back(copy);
        }
    const fs::path p = fs::temp_directory_path() / name;
    std::ofstream(p) << YAML::Dump(doc);
    return p.string();
}

double predicted(const std::string& file, const plans::EvaluationContext& ctx) {
    return scenarios::compare_measured(file, ctx).at(0).predicted;
}

}  // namespace

TEST_CASE("refit recovers a sustained clock scaled by 0.9 from its own predictions", "[refit]") {
    const auto& ctx = testing::source_context();
    const std::string device = "h100-sxm-80gb";
    REQUIRE(ctx.cost_tables.count(device) == 1);  // tabled: the table's sustained clock is the constant
    const double before = ctx.catalog->accelerator(device).calibration.table_sustained_clock;
    // The "measurement": fathom's prediction with the constant at 0.9 of the catalog's.
    auto scaled = std::make_shared<plans::Catalog>(*ctx.catalog);
    scaled->accelerators().at(device).calibration.table_sustained_clock = 0.9 * before;
    plans::EvaluationContext c9 = ctx;
    c9.catalog = scaled;
    const std::string probe = one_case_file("refit_probe.yaml", kCase, 1.0);
    const double measured = predicted(probe, c9);
    REQUIRE(measured < predicted(probe, ctx));  // a slower clock, fewer tokens/s
    const std::string file = one_case_file("refit_case.yaml", kCase, measured);
    const scenarios::RefitResult r = scenarios::refit_device(file, device, ctx);
    REQUIRE(r.constants.size() == 1);
    const auto& k = r.constants[0];
    CHECK(k.name == "table_sustained_clock");
    CHECK(k.sensitive);
    CHECK(k.before == before);
    // 0.9 lies on the search's 0.02 grid: recovered exactly, the error gone.
    CHECK(k.after == Approx(0.9 * before).epsilon(1e-9));
    CHECK(k.error_before > 0.03);
    CHECK(k.error_after < 1e-9);
    CHECK(k.leave_one_out == -1);  // one case: nothing to leave out
    CHECK_FALSE(k.at_bound);

    // Written: the accelerator's catalog file with the value and a source naming the file.
    const fs::path out = fs::temp_directory_path() / "refit_out";
    fs::remove_all(out);
    const auto written = scenarios::write_refit(r, out.string());
    REQUIRE(written.size() == 1);
    std::ifstream in(written[0]);
    std::stringstream text;
    text << in.rdbuf();
    char line[128];
    std::snprintf(line, sizeof line, "  table_sustained_clock: {value: %.4g, source: \"fathom calibrate refit",
                  0.9 * before);
    CHECK(text.str().find(line) != std::string::npos);
    CHECK(text.str().find("refit_case.yaml: 1 training entry on h100-sxm-80gb") != std::string::npos);
    CHECK(text.str().find("was 0.83") != std::string::npos);
}

TEST_CASE("refit leaves a constant no prediction moves with alone and refuses a device without cases", "[refit]") {
    const auto& ctx = testing::source_context();
    const std::string file = one_case_file("refit_a100.yaml", kCase, 1000.0);
    // The case ran on H100: none on A100.
    CHECK_THROWS_AS(scenarios::refit_device(file, "a100-sxm-80gb", ctx), sim::InputError);
    // An unknown device is an input error too.
    CHECK_THROWS_AS(scenarios::refit_device(file, "h100-pcie-nope", ctx), sim::InputError);
    // The training case on H100 moves with the sustained clock and nothing else: a serving clock
    // is not among the constants (no serving case).
    const auto r = scenarios::refit_device(file, "h100-sxm-80gb", ctx);
    REQUIRE(r.constants.size() == 1);
    CHECK(r.constants[0].load == "training");
}
