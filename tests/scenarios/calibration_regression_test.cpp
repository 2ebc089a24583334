// CI guard of the cost models against every committed measurement set
// (hardware/calibration/<device>/measurements.csv with its fitted table.yaml): each measurement
// is predicted with the current cost model (the committed table, kernel load) and the test fails
// when the median per-op error passes 5% or any op passes 25%. It also refits the CSV and
// requires the committed table to match, so a table cannot go stale against its measurements,
// and reports the roofline's error on the same measurements (the "before calibration" figure).
#include "models/cost/calibration_table.h"
#include "plans/evaluate.h"
#include "plans/report.h"
#include "scenarios/calibration_io.h"
#include "scenarios/catalog.h"
#include "scenarios/layer_check.h"
#include "scenarios/scenario.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

using namespace fathom;
namespace fs = std::filesystem;

namespace {
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

TEST_CASE("committed calibration measurements are predicted within 5% median and 25% worst", "[calibration]") {
    const plans::Catalog& catalog = testing::source_catalog();
    const fs::path root = fs::path(FATHOM_SOURCE_DIR) / "hardware" / "calibration";
    REQUIRE(fs::is_directory(root));
    int sets = 0;
    for (const auto& dir : fs::directory_iterator(root)) {
        const fs::path csv = dir.path() / "measurements.csv", yaml = dir.path() / "table.yaml";
        if (!fs::is_regular_file(csv)) continue;
        ++sets;
        INFO("measurement set " << dir.path().string());
        REQUIRE(fs::is_regular_file(yaml));
        const auto table = scenarios::read_calibration_table(yaml.string());
        const auto& acc = catalog.accelerator(table.device);
        const auto file = scenarios::read_measurements_csv(csv.string());
        REQUIRE(!file.rows.empty());
        const models::TableCost cost(table, acc, models::Load::Kernel);
        const auto roof = models::make_roofline_cost(acc, models::Load::Kernel);
        std::vector<double> err, roof_err;
        for (const auto& m : file.rows) {
            err.push_back(std::fabs(cost.seconds(m.op) / m.seconds - 1));
            roof_err.push_back(std::fabs(roof->seconds(m.op) / m.seconds - 1));
        }
        WARN(table.device << ": " << file.rows.size() << " ops; table median " << 100 * median(err) << "% max "
                          << 100 * *std::max_element(err.begin(), err.end()) << "%; roofline median "
                          << 100 * median(roof_err) << "% max "
                          << 100 * *std::max_element(roof_err.begin(), roof_err.end()) << "%");
        CHECK(median(err) <= 0.05);
        CHECK(*std::max_element(err.begin(), err.end()) <= 0.25);
        // The committed table is the fit of the committed measurements.
        const auto refit = models::fit_calibration(file.rows, acc);
        const models::TableCost fresh(refit, acc, models::Load::Kernel);
        for (const auto& m : file.rows) CHECK(fresh.seconds(m.op) == Approx(cost.seconds(m.op)).epsilon(1e-9));
    }
    CHECK(sets >= 1);
}

TEST_CASE("an accelerator that names a calibration table gets table costs and range warnings", "[calibration]") {
    // The catalog's h100-sxm-80gb names its campaign's table: the quickstart (Llama 3 8B, seq 8192,
    // CP 2) is priced from it, and the ops beyond its measured range go to the roofline and are
    // reported: the fp32 logits GEMMs (a 128k vocabulary), the cross-entropy and the Adam step.
    const fs::path src(FATHOM_SOURCE_DIR);
    const auto& with_table = testing::source_context();
    REQUIRE(with_table.cost_table("h100-sxm-80gb") != nullptr);
    const auto s =
        scenarios::load_scenario((src / "scenarios" / "examples" / "quickstart.yaml").string(), *with_table.catalog);
    const plans::Outcome o_table = plans::evaluate(s, with_table);
    CHECK(o_table.cost_model == plans::CostModelKind::Table);
    const auto& r_table = *o_table.training();
    const auto r_roof = *plans::evaluate(s, plans::EvaluationContext{}).training();
    const std::vector<std::string> table_outside = r_table.op_sources.outside_all();
    for (const char* op : {"logits", "cross_entropy", "adam"})
        CHECK(std::find(table_outside.begin(), table_outside.end(), op) != table_outside.end());
    CHECK(r_roof.op_sources.outside_all().empty());
    CHECK(r_table.step_time_s != r_roof.step_time_s);
    // Per op class: GEMMs inside the table but the logits (table and roofline), attention inside,
    // the optimizer outside (roofline alone); on the roofline context every class says roofline.
    const auto& ops = r_table.op_sources;
    auto pricing = [&](models::OpKind k) {
        const auto c = static_cast<size_t>(workloads::OpSources::class_of(k));
        return plans::op_class_pricing(o_table.cost_model, ops.inside[c], !ops.outside[c].empty());
    };
    CHECK(pricing(models::OpKind::Gemm) == "table and roofline");
    CHECK(pricing(models::OpKind::AttentionFwd) == "table");
    CHECK(pricing(models::OpKind::Optimizer) == "roofline");
    CHECK(plans::op_class_pricing(plans::CostModelKind::Roofline, true, false) == "roofline");
}

TEST_CASE("a calibration table for another device, or without an op class, is refused naming the file",
          "[calibration][robustness]") {
    // The catalog's h100-sxm-80gb pointed at the H200's table, at the table of published H100
    // microbenchmarks (GEMMs and attention forward only: no attention backward, no memory-bound
    // kernels), and at a file that is not YAML.
    auto with_table = [](const std::string& table) {
        return scenarios::load_catalog(testing::catalog_copy_with(
            "fathom_bad_table_catalog", "hardware/catalog/accelerators/h100-sxm-80gb.yaml",
            "calibration_table: hardware/calibration/h100-sxm-80gb/table.yaml", "calibration_table: " + table));
    };
    CHECK_THROWS_WITH(scenarios::make_context(with_table("hardware/calibration/h200-sxm-141gb/table.yaml")),
                      Catch::Contains("h200-sxm-141gb/table.yaml") &&
                          Catch::Contains("calibration table is for 'h200-sxm-141gb', not 'h100-sxm-80gb'"));
    CHECK_THROWS_WITH(scenarios::make_context(with_table("hardware/calibration/h100-sxm-80gb-published/table.yaml")),
                      Catch::Contains("h100-sxm-80gb-published/table.yaml") &&
                          Catch::Contains("no attention backward, memory-bound group"));
    CHECK_THROWS_WITH(scenarios::make_context(with_table("hardware/calibration/h100-sxm-80gb/metadata.json")),
                      Catch::Contains("metadata.json"));
    fs::remove_all(fs::temp_directory_path() / "fathom_bad_table_catalog");
}

TEST_CASE("committed whole-layer measurements are reproduced by the per-op sums of their table", "[calibration]") {
    // hardware/calibration/<gpu>/layers.csv (tools/calibrate/layers.py): Llama 3 8B and 70B layers
    // timed in PyTorch on the GPU whose kernels the table beside it measured. The GPU-bound rows
    // (training forward+backward and forward, prefill chunks of 1,024 tokens or more, decode
    // iterations captured as CUDA graphs), eager or under torch.compile, must be reproduced by the
    // sum of the table's per-op predictions over fathom's layer program: median error within 5%,
    // every row within 25%.
    // Eager decode and short eager prefill rows are bound by PyTorch's host-side dispatch (about
    // 25 us per op, 19 ops a layer), which a per-op kernel sum does not model; they are reported
    // by `fathom calibrate layers`, not checked. At the commit of the first campaign: H100 median
    // 3.0%, worst 17% (70B decode of 128 sequences); H200 median 3.4%, worst 22% (the same row).
    const plans::Catalog& catalog = testing::source_catalog();
    const fs::path root = fs::path(FATHOM_SOURCE_DIR) / "hardware" / "calibration";
    int sets = 0;
    for (const auto& dir : fs::directory_iterator(root)) {
        const fs::path csv = dir.path() / "layers.csv", yaml = dir.path() / "table.yaml";
        if (!fs::is_regular_file(csv)) continue;
        ++sets;
        INFO("layer set " << csv.string());
        REQUIRE(fs::is_regular_file(yaml));
        const auto table = scenarios::read_calibration_table(yaml.string());
        const auto& acc = catalog.accelerator(table.device);
        const models::TableCost cost(table, acc, models::Load::Kernel);
        std::vector<double> err;
        const auto rows = scenarios::read_layer_csv(csv.string());
        scenarios::check_layer_models(rows, catalog, csv.string());
        for (const auto& m : rows) {
            const bool gpu_bound = m.phase == "train" || m.phase == "forward" || m.phase == "decode_graph" ||
                                   (m.phase == "prefill" && m.q_len >= 1024);
            if (!gpu_bound) continue;
            const double e = scenarios::layer_op_sum(catalog.model(m.model), m, cost).seconds / m.seconds - 1;
            INFO(m.model << " " << m.phase << " batch " << m.batch << " q " << m.q_len << " kv " << m.kv_len << ": "
                         << 100 * e << "%");
            CHECK(std::fabs(e) <= 0.25);
            err.push_back(std::fabs(e));
        }
        REQUIRE(err.size() >= 10);
        WARN(table.device << ": " << err.size() << " GPU-bound layers; per-op sum median " << 100 * median(err)
                          << "% max " << 100 * *std::max_element(err.begin(), err.end()) << "%");
        CHECK(median(err) <= 0.05);
    }
    CHECK(sets >= 1);
}

TEST_CASE("committed mixture-of-experts layers bound the per-op sums of their table", "[calibration]") {
    // hardware/calibration/<gpu>/moe_layers.csv (tools/calibrate/moe_layers.py): Qwen3-30B-A3B
    // (128 experts, top-8) and Mixtral 8x7B (8, top-2) layers at EP 1 in eager PyTorch, experts as
    // torch._grouped_mm. fathom's MoE layer program prices them below the measurement: the
    // grouped GEMM runs below the dense GEMM's efficiency at a few rows an expert (H100, Qwen
    // decode of 64 sequences: 455 us for 595 MB of expert weights, 1.3 TB/s; the H200 takes 410 us,
    // so it is not bandwidth-bound), and eager PyTorch adds strided SiLU x up copies and sorts that
    // fused MoE kernels do not run. At the commit of the measurements the table's sums were 9-39%
    // (H100) and 10-42% (H200) below the GPU-bound rows. Checked: every GPU-bound row within 45%
    // and the median within 35%. The bound catches the mechanism this set measured first: pricing
    // every expert's weights for a decode batch that reaches only top-k of them put one Mixtral
    // decode sequence at +137% and one Qwen sequence at +167% (H100).
    const plans::Catalog& catalog = testing::source_catalog();
    const fs::path root = fs::path(FATHOM_SOURCE_DIR) / "hardware" / "calibration";
    int sets = 0;
    for (const auto& dir : fs::directory_iterator(root)) {
        const fs::path csv = dir.path() / "moe_layers.csv", yaml = dir.path() / "table.yaml";
        if (!fs::is_regular_file(csv)) continue;
        ++sets;
        INFO("MoE layer set " << csv.string());
        REQUIRE(fs::is_regular_file(yaml));
        const auto table = scenarios::read_calibration_table(yaml.string());
        const models::TableCost cost(table, catalog.accelerator(table.device), models::Load::Kernel);
        const auto rows = scenarios::read_layer_csv(csv.string());
        scenarios::check_layer_models(rows, catalog, csv.string());
        std::vector<double> err;
        for (const auto& m : rows) {
            // Eager rows of fewer than 4,096 tokens are host-dispatch bound (about 45 ops a layer).
            const bool gpu_bound = m.phase == "train" || m.phase == "forward" || m.phase == "decode_graph" ||
                                   (m.phase == "prefill" && m.q_len >= 4096);
            if (!gpu_bound) continue;
            const double e = scenarios::layer_op_sum(catalog.model(m.model), m, cost).seconds / m.seconds - 1;
            INFO(m.model << " " << m.phase << " batch " << m.batch << " q " << m.q_len << ": " << 100 * e << "%");
            CHECK(std::fabs(e) <= 0.45);
            err.push_back(std::fabs(e));
        }
        REQUIRE(err.size() >= 10);
        WARN(table.device << ": " << err.size() << " GPU-bound MoE layers; per-op sum median " << 100 * median(err)
                          << "% max " << 100 * *std::max_element(err.begin(), err.end()) << "%");
        CHECK(median(err) <= 0.35);
    }
    CHECK(sets >= 1);
}

TEST_CASE("a repeat campaign on another machine and day is predicted by the committed table", "[calibration]") {
    // hardware/calibration/h200-sxm-141gb/repeat-2026-11-28: the same fathom_calibrate and
    // attention.py kernels, on another lent H200 three days after the table's campaign. The table
    // fitted on the first run (it reproduces its own rows: median 0%) predicts the second within
    // the run-to-run spread, measured by comparing the two runs row by row: 791 shared rows,
    // median |difference| 0.94%, 90th percentile 4.9% (the outliers are launch-bound kernels of a
    // few microseconds, up to 49% on a small fp8 GEMM). Bounds: twice that median (2%), and at
    // most 5% of the ops beyond 15% (the 90th percentile's tail; 17 of 808 when measured, 2.1%).
    const fs::path dir = fs::path(FATHOM_SOURCE_DIR) / "hardware" / "calibration" / "h200-sxm-141gb";
    const auto table = scenarios::read_calibration_table((dir / "table.yaml").string());
    const auto& acc = testing::source_catalog().accelerator(table.device);
    const auto file = scenarios::read_measurements_csv((dir / "repeat-2026-11-28" / "measurements.csv").string());
    REQUIRE(file.rows.size() > 700);
    const models::TableCost cost(table, acc, models::Load::Kernel);
    std::vector<double> err;
    for (const auto& m : file.rows) err.push_back(std::fabs(cost.seconds(m.op) / m.seconds - 1));
    const auto beyond = std::count_if(err.begin(), err.end(), [](double e) { return e > 0.15; });
    WARN("repeat: " << err.size() << " ops, table median " << 100 * median(err) << "%, " << beyond << " beyond 15%");
    CHECK(median(err) <= 0.02);
    CHECK(static_cast<double>(beyond) <= 0.05 * static_cast<double>(err.size()));
}
