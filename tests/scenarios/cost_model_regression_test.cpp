// A cost-model change shows its effect before it lands: per op class of every committed
// calibration set (the roofline, the cost model every prediction uses today, at kernel load) and
// per kind of case of the frozen measured set, the median and worst |error| now against the
// committed baseline (tests/data/cost_model_baseline.tsv), printed as a table of changes. It fails
// when an op class's median rises more than 1 point above its baseline (the bound); everything else
// is reported, and the existing guards (calibration_regression_test, compare_test) keep their
// bounds. After an intended change, rewrite the baseline: FATHOM_WRITE_COST_BASELINE=1
// build/tests/fathom_tests "[cost-regression]" (tests/golden/update.sh does it).
#include "models/cost/calibration_table.h"
#include "scenarios/calibration_io.h"
#include "scenarios/measured.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace fathom;
namespace fs = std::filesystem;

namespace {

struct Errors {
    double median = 0, worst = 0;
    int n = 0;
};

Errors summarize(std::vector<double> v) {
    Errors e;
    e.n = static_cast<int>(v.size());
    if (v.empty()) return e;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    e.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    e.worst = v.back();
    return e;
}

// "<device> <op> <dtype>" -> roofline errors over the set's measurements, grouped as the fit groups.
std::map<std::string, Errors> op_class_errors() {
    const plans::Catalog& catalog = testing::source_catalog();
    std::map<std::string, Errors> out;
    for (const auto& dir : fs::directory_iterator(fs::path(FATHOM_SOURCE_DIR) / "hardware" / "calibration")) {
        const fs::path csv = dir.path() / "measurements.csv", yaml = dir.path() / "table.yaml";
        if (!fs::is_regular_file(csv) || !fs::is_regular_file(yaml)) continue;
        const auto table = scenarios::read_calibration_table(yaml.string());
        const auto& acc = catalog.accelerator(table.device);
        const auto rows = scenarios::read_measurements_csv(csv.string()).rows;
        const auto roof = models::make_roofline_cost(acc, models::Load::Kernel);
        std::map<std::string, std::vector<double>> by;
        for (const auto& m : rows) {
            const models::CalibrationGroup* g = models::find_group(table, m.op);
            const std::string key = dir.path().filename().string() + " " + (g ? g->op : std::string("other")) + " " +
                                    (g ? sim::name(g->dtype) : "-");
            by[key].push_back(std::fabs(roof->seconds(m.op) / m.seconds - 1));
        }
        for (auto& [k, v] : by) out[k] = summarize(std::move(v));
    }
    return out;
}

// "frozen <kind>" -> |error| of the frozen measured sets' headline cases (the shared file's frozen
// copy, and its microbenchmarks').
std::map<std::string, Errors> kind_errors() {
    std::map<std::string, std::vector<double>> by;
    for (const char* file : {"measured_frozen.yaml", "measured_microbench_frozen.yaml"})
        for (const auto& r : scenarios::compare_measured(std::string(FATHOM_SOURCE_DIR) + "/tests/data/" + file,
                                                         testing::source_context()))
            if (r.ok()) by["frozen " + r.kind].push_back(std::fabs(r.error));
    std::map<std::string, Errors> out;
    for (auto& [k, v] : by) out[k] = summarize(std::move(v));
    return out;
}

const fs::path kBaseline = fs::path(FATHOM_SOURCE_DIR) / "tests" / "data" / "cost_model_baseline.tsv";

std::map<std::string, Errors> read_baseline() {
    std::map<std::string, Errors> out;
    std::ifstream f(kBaseline);
    std::string line;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ss(line);
        std::string key;
        Errors e;
        std::getline(ss, key, '\t');
        ss >> e.n >> e.median >> e.worst;
        out[key] = e;
    }
    return out;
}

}  // namespace

TEST_CASE("cost-model changes against the committed baseline, per op class and kind of case",
          "[calibration][cost-regression][slow]") {
    std::map<std::string, Errors> now = op_class_errors();
    const std::map<std::string, Errors> kinds = kind_errors();
    now.insert(kinds.begin(), kinds.end());
    REQUIRE(now.size() >= 20);
    if (std::getenv("FATHOM_WRITE_COST_BASELINE")) {
        std::ofstream f(kBaseline);
        f << "# key\tn\tmedian |error|\tworst |error| (tests/scenarios/cost_model_regression_test.cpp)\n";
        char buf[160];
        for (const auto& [k, e] : now) {
            std::snprintf(buf, sizeof buf, "%s\t%d\t%.6f\t%.6f\n", k.c_str(), e.n, e.median, e.worst);
            f << buf;
        }
        WARN("wrote " << kBaseline.string());
        return;
    }
    const auto base = read_baseline();
    REQUIRE(!base.empty());
    std::ostringstream table;
    char buf[200];
    std::snprintf(buf, sizeof buf, "%-40s %5s %18s %18s\n", "class", "n", "median was -> now", "worst was -> now");
    table << buf;
    int moved = 0;
    for (const auto& [k, e] : now) {
        const auto it = base.find(k);
        if (it == base.end()) {
            std::snprintf(buf, sizeof buf, "%-40s %5d %18s %7.1f%% (new)\n", k.c_str(), e.n, "", 100 * e.median);
            table << buf;
            continue;
        }
        const Errors& b = it->second;
        const bool changed = std::fabs(e.median - b.median) > 1e-6 || std::fabs(e.worst - b.worst) > 1e-6;
        moved += changed ? 1 : 0;
        std::snprintf(buf, sizeof buf, "%-40s %5d %7.1f%% -> %5.1f%% %7.1f%% -> %5.1f%%%s\n", k.c_str(), e.n,
                      100 * b.median, 100 * e.median, 100 * b.worst, 100 * e.worst, changed ? "  *" : "");
        table << buf;
        // The bound: an op class of a committed calibration set may not get more than 1 point worse.
        if (k.rfind("frozen ", 0) != 0) {
            INFO(k << ": median |error| " << 100 * b.median << "% -> " << 100 * e.median << "%");
            CHECK(e.median <= b.median + 0.01);
        }
    }
    WARN(moved << " classes moved against tests/data/cost_model_baseline.tsv:\n" << table.str());
}
