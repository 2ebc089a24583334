// `fathom import` of kernel profiles (scenarios/imports/kernel_profile.cpp): torch.profiler's
// key_averages table and Chrome trace, nsys's cuda_gpu_kern_sum CSV become layers.csv rows with
// the kernel time of each op class, which `fathom calibrate layers` reads (scenarios/layer_check.h)
// and checks against the roofline's per-op sums of the same class. Fixtures (tests/data/import/,
// README.md there): the first section of hardware/calibration/h100-sxm-80gb/layers_profile.txt
// (tools/calibrate/layers.py on an H100, torch 2.11), a Chrome trace and an nsys report written by
// hand in those tools' formats.
#include "hardware/spec.h"
#include "models/cost/cost_model.h"
#include "scenarios/imports/imports.h"
#include "scenarios/layer_check.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"
#include "tests/support/import_fixture.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

using namespace fathom;
using namespace fathom::scenarios::imports;
using testing::kSource;

namespace {

Source fixture(const std::string& name) { return testing::import_fixture(name); }

// The rows `fathom import` writes for `file`, read back as `fathom calibrate layers` reads them.
std::vector<scenarios::LayerMeasurement> imported(const Source& file, const Context& context, const std::string& name) {
    const Importer& importer = importer_of(file, "");
    REQUIRE(importer.layer_rows);
    const std::string path = std::string(FATHOM_BINARY_DIR) + "/" + name;
    std::ofstream(path) << importer.layer_rows(file, context);
    return scenarios::read_layer_csv(path);
}

double us(const scenarios::LayerMeasurement& m, size_t op_class) { return m.class_seconds[op_class] * 1e6; }

}  // namespace

TEST_CASE("a torch.profiler kernel table becomes a layers.csv row that calibrate layers checks per op class",
          "[scenarios][import]") {
    const Context ctx{nullptr, &testing::source_catalog(), ""};
    const auto rows = imported(fixture("torch_key_averages_llama3_8b_train_h100.txt"), ctx, "import_table.csv");
    REQUIRE(rows.size() == 1);
    const auto& m = rows[0];
    // The label "== llama3-8b train s=4096": one layer's forward and backward, micro-batch 1.
    CHECK(m.model == "llama3-8b");
    CHECK(m.phase == "train");
    CHECK((m.batch == 1 && m.q_len == 4096 && m.kv_len == 4096));
    CHECK(m.seconds * 1e6 == Approx(9740.0));  // "Self CUDA time total: 9.740ms"
    // gemm: the six nvjet rows, 1620 + 1210 + 1209 + 1034 + 1024 + 602.51 us.
    CHECK(us(m, 0) == Approx(6699.51));
    // attention: cuDNN's sdpa fprop and bprop and its fusion helpers, 689.231 + 257.478 + 47.009 +
    // 38.337 + 32.897 us.
    CHECK(us(m, 1) == Approx(1064.952));
    CHECK(us(m, 2) == Approx(1962.86).margin(0.01));  // elementwise, cat, layer norm kernels
    CHECK(us(m, 3) == 0);                             // no NCCL
    CHECK(us(m, 4) == Approx(12.10).margin(0.01));    // "Memset (Device)", 12.096 us
    CHECK(us(m, 5) < 1);                              // the total's rounding
    // What calibrate layers prints for the row: the roofline's ops of each class beside them.
    const auto& acc = testing::source_catalog().accelerator("h100-sxm-80gb");
    const auto roof = models::make_roofline_cost(acc, models::Load::Kernel);
    const auto sum = scenarios::layer_op_sum(testing::source_catalog().model(m.model), m, *roof);
    std::array<double, 3> predicted{};
    for (const auto& [op, t] : sum.each) predicted[scenarios::op_class(op)] += t;
    CHECK(predicted[0] + predicted[1] + predicted[2] == Approx(sum.seconds));
    for (size_t k = 0; k < 3; ++k) {
        INFO(scenarios::kOpClasses[k] << " measured " << us(m, k) << " us, roofline " << predicted[k] * 1e6);
        CHECK(std::abs(predicted[k] * 1e6 / us(m, k) - 1) < 0.25);
    }
}

TEST_CASE("a torch.profiler Chrome trace: kernels by class per profiler step, the layer the training scenario's",
          "[scenarios][import]") {
    const plans::Scenario s = scenarios::load_scenario(testing::example("quickstart.yaml"), testing::source_catalog());
    const auto rows =
        imported(fixture("torch_chrome_trace_llama3_8b_layer.json"), {&s, nullptr, ""}, "import_chrome.csv");
    REQUIRE(rows.size() == 1);
    const auto& m = rows[0];
    CHECK((m.model == "llama3-8b" && m.phase == "train"));  // no label: the quickstart's micro-batch 1 x 8192
    CHECK((m.batch == 1 && m.q_len == 8192 && m.kv_len == 8192));
    // Two ProfilerStep# annotations: each sum halved. A step: gemm 3 x 1180 + 2620 + 2610 + 3 x 745;
    // attention 980 + 2640; elementwise 10 x 128 + 2 x 58; NCCL 350; 14 memsets of 0.9 us.
    CHECK(us(m, 0) == Approx(11005.0));
    CHECK(us(m, 1) == Approx(3620.0));
    CHECK(us(m, 2) == Approx(1396.0));
    CHECK(us(m, 3) == Approx(350.0));
    CHECK(us(m, 4) == Approx(12.6));
    CHECK(m.seconds * 1e6 == Approx(16033.6));  // all but the NCCL kernel
    CHECK_THROWS_WITH(importer_of(fixture("torch_chrome_trace_llama3_8b_layer.json"), "")
                          .layer_rows(fixture("torch_chrome_trace_llama3_8b_layer.json"), {}),
                      Catch::Contains("does not say which layer ran"));
}

TEST_CASE("an nsys cuda_gpu_kern_sum CSV: Total Time (ns) by class, its label the layer", "[scenarios][import]") {
    const Source nsys = fixture("nsys_cuda_gpu_kern_sum_llama3_8b_prefill.csv");
    const auto rows = imported(nsys, {nullptr, &testing::source_catalog(), ""}, "import_nsys.csv");
    REQUIRE(rows.size() == 1);
    const auto& m = rows[0];
    CHECK((m.phase == "prefill" && m.batch == 1 && m.q_len == 4096));  // "== llama3-8b prefill t=4096"
    CHECK(us(m, 0) == Approx(2421.0));                                 // 1612400 + 808600 ns
    CHECK(us(m, 1) == Approx(309.32));
    CHECK(us(m, 2) == Approx(725.8));  // 412300 + 215100 + 98400 ns: a name with commas, quoted
    CHECK(m.seconds * 1e6 == Approx(3456.12));
    // A measured-format import of a profile, the wrong tool, a report cut before its rows, a bad number.
    CHECK_THROWS_WITH(import_file(nsys, "", {}), Catch::Contains("gives layers.csv rows"));
    CHECK_THROWS_WITH(importer_of(nsys, "torch-profiler"), Catch::Contains("not a file of a torch.profiler"));
    Source cut = nsys;
    cut.text = cut.text.substr(0, cut.text.find("46.7,"));
    CHECK_THROWS_WITH(importer_of(cut, "").layer_rows(cut, {}), Catch::Contains("no kernel rows"));
    Source bad = nsys;
    bad.text.replace(bad.text.find("808600,1,"), 7, "80e600x");
    try {
        importer_of(bad, "").layer_rows(bad, {});
        FAIL("imported");
    } catch (const sim::InputError& e) {
        CHECK(e.key() == "Total Time (ns)");
        CHECK(e.line() == 7);
    }
    Source model = nsys;
    model.text.replace(0, 12, "== llama9-1b");
    CHECK_THROWS_WITH(importer_of(model, "").layer_rows(model, {nullptr, &testing::source_catalog(), ""}),
                      Catch::Contains("unknown model 'llama9-1b'"));
}
