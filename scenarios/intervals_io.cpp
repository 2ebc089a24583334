#include "scenarios/intervals_io.h"

#include "scenarios/catalog.h"
#include "scenarios/output_file.h"
#include "scenarios/yaml_node.h"
#include "sim/error.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace fathom::scenarios {

namespace {

// A training case's step, however the source counted it (its peak memory is another matter).
const std::set<std::string> kStepMetrics = {"step_time_s", "tokens_per_s_per_gpu", "tokens_per_s",
                                            "model_tflops_per_gpu", "mfu_percent"};

}  // namespace

std::string regime_of(const CompareResult& r) {
    if (r.kind == "training") {
        if (!r.model || kStepMetrics.count(r.metric) == 0) return "";
        return plans::training_regime(*r.model);
    }
    if (r.kind == "serving") return plans::serving_regime(r.metric);
    if (r.kind == "microbench") return "microbench/" + r.metric;
    return "";
}

namespace {

// The regime of a result that counts as a residual ("" if it does not).
std::string residual_regime(const CompareResult& r) {
    if (!r.ok() || !(r.predicted > 0) || !(r.measured > 0)) return "";
    // A training case once: its other metrics restate the same step.
    if (r.kind == "training" && r.id.find('#') != std::string::npos) return "";
    return regime_of(r);
}

}  // namespace

std::vector<plans::Residual> residuals_of(const std::vector<CompareResult>& results) {
    std::vector<plans::Residual> out;
    for (const CompareResult& r : results) {
        const std::string regime = residual_regime(r);
        if (regime.empty()) continue;
        out.push_back({regime, r.accelerator, std::fabs(std::log(r.predicted / r.measured)),
                       r.training_plan  ? plans::training_features(*r.training_plan)
                       : r.serving_plan ? plans::serving_features(*r.serving_plan)
                                        : std::vector<std::string>{}});
    }
    return out;
}

std::vector<std::optional<CaseInterval>> leave_one_out_intervals(const std::vector<CompareResult>& results) {
    std::map<std::string, std::vector<std::pair<size_t, double>>> by_regime;
    for (size_t i = 0; i < results.size(); ++i) {
        const std::string regime = residual_regime(results[i]);
        if (!regime.empty())
            by_regime[regime].emplace_back(i, std::fabs(std::log(results[i].predicted / results[i].measured)));
    }
    std::vector<std::optional<CaseInterval>> out(results.size());
    for (const auto& [regime, members] : by_regime)
        for (const auto& [i, own] : members) {
            std::vector<double> others;
            for (const auto& [j, r] : members)
                if (j != i) others.push_back(r);
            const double w = plans::conformal_half_width(others);
            CaseInterval c;
            c.regime = regime;
            c.low = std::isfinite(w) ? results[i].predicted * std::exp(-w) : 0.0;
            c.high = results[i].predicted * std::exp(w);
            c.covered = own <= w;
            out[i] = c;
        }
    return out;
}

plans::IntervalTable fit_intervals_of(const std::vector<CompareResult>& results, const std::string& file,
                                      bool other_metrics) {
    const std::string name = std::filesystem::path(file).filename().string();
    return plans::fit_intervals(residuals_of(results),
                                name + ", fathom compare" + (other_metrics ? " --other-metrics" : ""));
}

void write_intervals(const std::string& path, const plans::IntervalTable& t) {
    std::ostringstream f;
    f << "# 90% prediction bands from fathom's residuals on published measurements (plans/intervals.h).\n"
         "# Written by `fathom compare MEASURED.yaml --other-metrics --intervals FILE`; do not edit.\n"
         "kind: intervals\n";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", t.level);
    f << "level: " << buf << "\nmethod: split-conformal on |log(predicted / measured)|\nsource: \"" << t.source
      << "\"\nregimes:\n";
    for (const auto& [regime, b] : t.bands) {
        if (std::isfinite(b.half_width)) std::snprintf(buf, sizeof buf, "%.6f", b.half_width);
        else std::snprintf(buf, sizeof buf, "inf");  // too few cases for a finite band
        f << "  " << regime << ": {cases: " << b.cases << ", half_width: " << buf << ", accelerators: [";
        bool first = true;
        for (const auto& a : b.accelerators) {
            f << (first ? "" : ", ") << a;
            first = false;
        }
        f << "]";
        if (!b.features.empty()) {
            f << ", features: [";
            first = true;
            for (const auto& x : b.features) {
                f << (first ? "\"" : ", \"") << x << "\"";
                first = false;
            }
            f << "]";
        }
        f << "}\n";
    }
    write_output_file(path, f.str());
}

plans::IntervalTable read_intervals(const std::string& path) {
    const Node n = load_yaml_file(path);
    if (n.str("kind") != "intervals") n.fail("kind", "expected kind: intervals");
    n.allow_only({"kind", "level", "method", "source", "regimes"});
    plans::IntervalTable t;
    t.level = n.number("level");
    // Every report labels its intervals 90%: a table of another level would be mislabelled.
    if (t.level != plans::kIntervalLevel) n.fail("level", "expected 0.90 (fathom reports 90% intervals)");
    t.source = n.str("source");
    const Node regimes = n.child("regimes");
    for (const std::string& name : regimes.keys()) {
        const Node r = regimes.child(name);
        r.allow_only({"cases", "half_width", "accelerators", "features"});
        plans::ErrorBand b;
        b.cases = static_cast<int>(r.integer("cases"));
        if (b.cases < 1) r.fail("cases", "expected a positive number of cases");
        b.half_width = r.number("half_width");
        if (!(b.half_width >= 0)) r.fail("half_width", "expected a non-negative log half-width");
        for (const Node& a : r.child("accelerators").items()) b.accelerators.insert(a.scalar());
        if (const auto f = r.find("features"))
            for (const Node& x : f->items()) b.features.insert(x.scalar());
        t.bands.emplace(name, std::move(b));
    }
    return t;
}

}  // namespace fathom::scenarios
