// `fathom calibrate fit`: a per-op cost table from kernel measurements.
// `fathom calibrate layers`: measured whole layers against the per-op sums (roofline and table).
// `fathom calibrate refit`: a device's constants refitted to a measurement file (scenarios/refit.h).
#include "models/cost/calibration_table.h"
#include "scenarios/calibration_io.h"
#include "scenarios/catalog.h"
#include "scenarios/layer_check.h"
#include "scenarios/refit.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "tools/cli/cli.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace fathom::cli {

namespace {

std::string gemm_shape(const models::OpDesc& op) {
    char b[96];
    std::snprintf(b, sizeof b, "%lldx%lldx%lld%s", static_cast<long long>(op.m), static_cast<long long>(op.n),
                  static_cast<long long>(op.k), op.batch > 1 ? (" x" + std::to_string(op.batch)).c_str() : "");
    return b;
}

// A row's measured kernel time per op class (its *_us columns) against the roofline's sums of the
// layer's ops of that class; classes without ops in the layer program (communication, copies,
// kernels no class names) are shown as measured.
void print_classes(const scenarios::LayerMeasurement& m, const scenarios::LayerSum& r) {
    if (std::all_of(m.class_seconds.begin(), m.class_seconds.end(), [](double s) { return s < 0; })) return;
    std::array<double, 3> predicted{};
    for (const auto& [op, t] : r.each) predicted[scenarios::op_class(op)] += t;
    for (size_t k = 0; k < scenarios::kOpClasses.size(); ++k) {
        const double s = m.class_seconds[k];
        if (s < 0) continue;
        std::printf("    %-13s measured %10.1f us", scenarios::kOpClasses[k], s * 1e6);
        if (k < predicted.size() && s > 0)
            std::printf("  roofline %10.1f us %+6.1f%%", predicted[k] * 1e6, 100 * (predicted[k] / s - 1));
        else if (k >= predicted.size()) std::printf("  (no op of the layer program)");
        std::printf("\n");
    }
}

// Measured layers (layers.csv) against the per-op sums of the roofline and, when table.yaml lies
// beside the CSV, of the calibrated table; both at kernel load (short benchmarks, full clocks).
int calibrate_layers(const Args& a, const plans::Catalog& catalog) {
    const auto& acc = catalog.accelerator(a.device);
    const std::string csv = a.positional[1];
    const auto rows = scenarios::read_layer_csv(csv);
    const auto table_path = std::filesystem::path(csv).parent_path() / "table.yaml";
    std::unique_ptr<models::TableCost> table;
    if (std::filesystem::is_regular_file(table_path)) {
        auto t = scenarios::read_calibration_table(table_path.string());
        if (t.device != acc.id)
            throw sim::InputError("table " + table_path.string() + " is for '" + t.device + "', not '" + acc.id + "'");
        table = std::make_unique<models::TableCost>(std::move(t), acc, models::Load::Kernel);
    }
    scenarios::check_layer_models(rows, catalog, csv);  // before anything is printed
    const auto roof = models::make_roofline_cost(acc, models::Load::Kernel);
    std::printf("%-11s %-13s %5s %6s %6s %6s %11s %11s %7s %11s %7s\n", "model", "phase", "batch", "q_len", "kv_len",
                "ops", "measured_us", "roofline_us", "err", "table_us", "err");
    std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_phase;
    for (const auto& m : rows) {
        const auto& model = catalog.model(m.model);
        auto r = scenarios::layer_op_sum(model, m, *roof);
        const double er = r.seconds / m.seconds - 1;
        const std::string phase = m.fused_elementwise ? m.phase + "/fused" : m.phase;  // torch.compile rows
        by_phase[phase].first.push_back(er);
        std::printf("%-11s %-13s %5lld %6lld %6lld %6d %11.1f %11.1f %+6.1f%%", m.model.c_str(), phase.c_str(),
                    static_cast<long long>(m.batch), static_cast<long long>(m.q_len), static_cast<long long>(m.kv_len),
                    static_cast<int>(r.each.size()), m.seconds * 1e6, r.seconds * 1e6, 100 * er);
        if (table) {
            const double t = scenarios::layer_op_sum(model, m, *table).seconds;
            by_phase[phase].second.push_back(t / m.seconds - 1);
            std::printf(" %11.1f %+6.1f%%", t * 1e6, 100 * (t / m.seconds - 1));
        }
        std::printf("\n");
        print_classes(m, r);
        if (a.ops) {
            std::stable_sort(r.each.begin(), r.each.end(),
                             [](const auto& x, const auto& y) { return x.second > y.second; });
            for (const auto& [op, t] : r.each)
                std::printf("    %-28s %-10s %10.1f us  %5.1f%%  %s\n", op.name.c_str(), sim::name(op.kind), t * 1e6,
                            100 * t / r.seconds, op.kind == models::OpKind::Gemm ? gemm_shape(op).c_str() : "");
        }
    }
    auto abs_median = [](std::vector<double> v) {
        for (auto& x : v) x = std::fabs(x);
        return 100 * median_of(v);
    };
    std::printf("\n%-13s %5s %22s %22s\n", "phase", "rows", "roofline median |err|", "table median |err|");
    for (const auto& [phase, e] : by_phase) {
        std::printf("%-13s %5zu %21.1f%%", phase.c_str(), e.first.size(), abs_median(e.first));
        if (!e.second.empty()) std::printf(" %21.1f%%", abs_median(e.second));
        std::printf("\n");
    }
    return 0;
}

// The device's constants refitted to a measured-format file; -o DIR writes the catalog files.
int calibrate_refit(const Args& a) {
    const auto catalog = scenarios::load_catalog();
    const plans::EvaluationContext ctx = cli_context(catalog, 1, a);
    scenarios::RefitResult r;
    {
        Progress bar("refit: simulations");
        r = scenarios::refit_device(a.positional[1], a.device, ctx, [&bar](int64_t d, int64_t t) { bar(d, t); });
    }
    std::printf("refit of %s to %s\n\n", r.device.c_str(), r.measured.c_str());
    std::printf("%-22s %-27s %7s %9s %9s %9s %9s %9s  %s\n", "constant", "load", "entries", "catalog", "refit",
                "err_now", "err_refit", "loo_err", "file");
    for (const auto& c : r.constants) {
        const std::string file = std::filesystem::path(c.file).stem().string();
        if (!c.sensitive) {
            std::printf("%-22s %-27s %7zu %9.4g %9s  insensitive: no prediction moved with it   %s\n", c.name.c_str(),
                        c.load.c_str(), c.cases.size(), c.before, "-", file.c_str());
            continue;
        }
        std::printf("%-22s %-27s %7zu %9.4g %9.4g %8.1f%% %8.1f%% ", c.name.c_str(), c.load.c_str(), c.cases.size(),
                    c.before, c.after, 100 * c.error_before, 100 * c.error_after);
        if (c.leave_one_out >= 0) std::printf("%8.1f%%", 100 * c.leave_one_out);
        else std::printf("%9s", "-");
        std::printf("  %s%s\n", file.c_str(),
                    c.at_bound ? "  (at the search's bound, x0.5 or x1.5 the catalog's: check the cases)" : "");
    }
    for (const auto& n : r.not_used) std::printf("not used: %s\n", n.c_str());
    if (!a.out.empty()) {
        const auto files = scenarios::write_refit(r, a.out);
        std::printf("\n%s\n", files.empty() ? "nothing written: no constant lowered the error"
                                            : "written (copy over the data directory, FATHOM_DATA_DIR):");
        for (const auto& f : files) std::printf("  %s\n", f.c_str());
    }
    return 0;
}

}  // namespace

int cmd_calibrate(const Args& a) {
    const bool fit = a.positional.size() == 2 && a.positional[0] == "fit";
    const bool layers = a.positional.size() == 2 && a.positional[0] == "layers";
    const bool refit = a.positional.size() == 2 && a.positional[0] == "refit";
    if (!fit && !layers && !refit)
        throw sim::InputError(
            "usage: fathom calibrate fit MEASUREMENTS.csv --device ID [--out TABLE.yaml]\n"
            "       fathom calibrate layers LAYERS.csv --device ID\n"
            "       fathom calibrate refit MEASURED.yaml --device ID [--out DIR]");
    if (a.device.empty())
        throw sim::InputError(std::string("calibrate ") + a.positional[0] +
                                  " needs --device (an accelerator id, see `fathom list hardware`)",
                              "command line");
    if (refit) return calibrate_refit(a);
    const auto catalog = scenarios::load_catalog();
    if (layers) return calibrate_layers(a, *catalog);
    const auto& acc = catalog->accelerator(a.device);
    const std::string csv = a.positional[1];
    const auto file = scenarios::read_measurements_csv(csv);
    if (file.rows.empty())
        throw sim::InputError("no measurement rows to fit (only a header, or only launch-overhead rows)", csv, 1);
    auto table = models::fit_calibration(file.rows, acc);
    table.source = "fathom calibrate fit " + csv;
    const models::TableCost tcost(table, acc, models::Load::Kernel);
    const auto roof = models::make_roofline_cost(acc, models::Load::Kernel);
    std::printf("%-16s %-6s %5s %12s %12s %14s %12s\n", "op", "dtype", "n", "roofline_med", "roofline_max",
                "table_loo_med", "table_loo_max");
    std::vector<double> all_roof, all_loo;
    for (const auto& g : table.groups) {
        std::vector<double> er, el;
        int idx = 0;
        for (const auto& m : file.rows) {
            if (models::find_group(table, m.op) != &g) continue;
            er.push_back(std::fabs(roof->seconds(m.op) / m.seconds - 1));
            el.push_back(std::fabs(tcost.table_seconds(g, m.op, idx) / m.seconds - 1));
            ++idx;
        }
        all_roof.insert(all_roof.end(), er.begin(), er.end());
        all_loo.insert(all_loo.end(), el.begin(), el.end());
        std::printf("%-16s %-6s %5zu %11.1f%% %11.1f%% %13.1f%% %11.1f%%\n", g.op.c_str(), sim::name(g.dtype),
                    er.size(), 100 * median_of(er), 100 * *std::max_element(er.begin(), er.end()), 100 * median_of(el),
                    100 * *std::max_element(el.begin(), el.end()));
    }
    std::printf("\nall ops: roofline median %.1f%% max %.1f%%; table (leave-one-out) median %.1f%% max %.1f%%\n",
                100 * median_of(all_roof), 100 * *std::max_element(all_roof.begin(), all_roof.end()),
                100 * median_of(all_loo), 100 * *std::max_element(all_loo.begin(), all_loo.end()));
    if (!file.launch_us.empty())
        std::printf("launch overhead: median %.2f us over %zu rows\n", median_of(file.launch_us),
                    file.launch_us.size());
    if (!a.out.empty()) {
        scenarios::write_calibration_table(table, a.out);
        std::printf("wrote %s (reference it from the accelerator's catalog entry as calibration_table)\n",
                    a.out.c_str());
    }
    return 0;
}

}  // namespace fathom::cli
