// `fathom calibrate fit`: a per-op cost table from kernel measurements.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "models/cost/calibration_table.h"
#include "scenarios/calibration_io.h"
#include "scenarios/catalog.h"
#include "sim/error.h"
#include "tools/cli/cli.h"

namespace fathom::cli {

int cmd_calibrate(const Args& a) {
    if (a.positional.size() != 2 || a.positional[0] != "fit")
        throw sim::InputError("usage: fathom calibrate fit MEASUREMENTS.csv --device ID [--out TABLE.yaml]");
    if (a.device.empty()) throw sim::InputError("calibrate fit needs --device (an accelerator id, see `fathom list hardware`)");
    const auto catalog = scenarios::load_catalog();
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
        std::printf("%-16s %-6s %5zu %11.1f%% %11.1f%% %13.1f%% %11.1f%%\n", g.op.c_str(), hardware::dtype_name(g.dtype),
                    er.size(), 100 * median_of(er), 100 * *std::max_element(er.begin(), er.end()), 100 * median_of(el),
                    100 * *std::max_element(el.begin(), el.end()));
    }
    std::printf("\nall ops: roofline median %.1f%% max %.1f%%; table (leave-one-out) median %.1f%% max %.1f%%\n",
                100 * median_of(all_roof), 100 * *std::max_element(all_roof.begin(), all_roof.end()),
                100 * median_of(all_loo), 100 * *std::max_element(all_loo.begin(), all_loo.end()));
    if (!file.launch_us.empty()) std::printf("launch overhead: median %.2f us over %zu rows\n", median_of(file.launch_us), file.launch_us.size());
    if (!a.out.empty()) {
        scenarios::write_calibration_table(table, a.out);
        std::printf("wrote %s (reference it from the accelerator's catalog entry as calibration_table)\n", a.out.c_str());
    }
    return 0;
}

}  // namespace fathom::cli
