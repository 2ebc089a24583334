#include "scenarios/refit.h"

#include "scenarios/catalog.h"
#include "scenarios/measured.h"
#include "scenarios/output_file.h"
#include "sim/error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;

namespace fathom::scenarios {

namespace {

// A constant of the catalog: where it lives in a Catalog, and in which file.
struct Knob {
    RefitConstant info;
    std::function<double&(plans::Catalog&)> ref;
};

std::string case_of(const std::string& entry) { return entry.substr(0, entry.find('#')); }

// The predictions of the entries `ids` (in order) with the catalog `catalog`.
std::vector<double> predict(const std::string& path, const plans::EvaluationContext& ctx,
                            std::shared_ptr<const plans::Catalog> catalog, const std::vector<std::string>& ids) {
    plans::EvaluationContext c = ctx;
    c.catalog = std::move(catalog);
    std::map<std::string, double> by_id;
    std::vector<std::string> cases;  // the ids of the cases (an entry "id#n" is one of id's other_metrics)
    for (const auto& id : ids)
        if (std::find(cases.begin(), cases.end(), case_of(id)) == cases.end()) cases.push_back(case_of(id));
    if (cases.size() <= 8) {
        for (const auto& id : cases)
            for (const auto& r : compare_measured(path, c, true, id)) by_id[r.id] = r.ok() ? r.predicted : NAN;
    } else {
        for (const auto& r : compare_measured(path, c, true)) by_id[r.id] = r.ok() ? r.predicted : NAN;
    }
    std::vector<double> out;
    for (const auto& id : ids) out.push_back(by_id.count(id) ? by_id[id] : NAN);
    return out;
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Median |log(p / m)| over the entries, but those of the case `skip` (none: "").
double objective(const std::vector<double>& p, const std::vector<double>& m, const std::vector<std::string>& ids,
                 const std::string& skip = "") {
    std::vector<double> e;
    for (size_t i = 0; i < p.size(); ++i)
        if (skip.empty() || case_of(ids[i]) != skip)
            e.push_back(std::isfinite(p[i]) && p[i] > 0 ? std::fabs(std::log(p[i] / m[i])) : 1e9);
    return median(e);
}

double median_error(const std::vector<double>& p, const std::vector<double>& m) {
    std::vector<double> e;
    for (size_t i = 0; i < p.size(); ++i) e.push_back(std::fabs(p[i] / m[i] - 1));
    return median(e);
}

// Fits `k` on the cases `ids` measured `m`: a grid of factors, refined around the best.
void fit(Knob& k, const std::string& path, const plans::EvaluationContext& ctx, const std::vector<std::string>& ids,
         const std::vector<double>& m, const std::function<void()>& tick) {
    plans::Catalog base = *ctx.catalog;
    k.info.before = k.ref(base);
    std::map<double, std::vector<double>> runs;  // factor -> predictions
    auto run = [&](double f) {
        const double key = std::round(f * 1000) / 1000;
        if (runs.count(key)) return;
        auto cat = std::make_shared<plans::Catalog>(base);
        k.ref(*cat) = k.info.before * key;
        runs[key] = predict(path, ctx, cat, ids);
        tick();
    };
    for (int i = 0; i <= 50; ++i) run(0.5 + 0.02 * i);
    k.info.sensitive = runs.at(1.0) != runs.at(0.9);
    // The factor of the least error; on a plateau (within 0.05% of it) the one nearest the
    // catalog's value: a constant moves only as far as the measurements ask.
    auto best = [&](const std::string& skip) {
        double bo = INFINITY;
        for (const auto& [f, p] : runs) bo = std::min(bo, objective(p, m, ids, skip));
        double bf = NAN;
        for (const auto& [f, p] : runs)
            if (objective(p, m, ids, skip) <= bo + 5e-4 && (std::isnan(bf) || std::fabs(f - 1) < std::fabs(bf - 1)))
                bf = f;
        return bf;
    };
    const double coarse = best("");
    for (int i = -5; i <= 5; ++i) run(std::clamp(coarse + 0.004 * i, 0.5, 1.5));
    const double f = best("");
    k.info.after = k.info.before * f;
    k.info.at_bound = f <= 0.5 || f >= 1.5;
    k.info.error_before = median_error(runs.at(1.0), m);
    k.info.error_after = median_error(runs.at(f), m);
    // Leave one case out (with its other_metrics entries): its entries' errors at the factor the
    // other cases give.
    std::vector<std::string> cases;
    for (const auto& id : ids)
        if (std::find(cases.begin(), cases.end(), case_of(id)) == cases.end()) cases.push_back(case_of(id));
    if (cases.size() > 1) {
        std::vector<double> loo;
        for (const auto& c : cases) {
            const double g = best(c);
            for (size_t i = 0; i < ids.size(); ++i)
                if (case_of(ids[i]) == c) loo.push_back(std::fabs(runs.at(g)[i] / m[i] - 1));
        }
        k.info.leave_one_out = median(loo);
    }
    k.info.cases = ids;
}

RefitConstant constant(const std::string& name, const std::string& load, const std::string& file) {
    RefitConstant c;
    c.name = name;
    c.load = load;
    c.file = file;
    return c;
}

// The serving clock of `device` (the table's on a tabled part), made explicit where the catalog
// leaves it 0 (the table's ops then take the device's serving clock, table_basis; the device's,
// its sustained clock).
double& serving_clock(plans::Catalog& c, const std::string& device, bool tabled) {
    auto& a = c.accelerators().at(device).calibration;
    if (tabled) {
        if (!(a.table_serving_clock > 0))
            a.table_serving_clock = a.serving_clock > 0           ? a.serving_clock
                                    : a.table_sustained_clock > 0 ? a.table_sustained_clock
                                                                  : a.sustained_clock;
        return a.table_serving_clock;
    }
    if (!(a.serving_clock > 0)) a.serving_clock = a.sustained_clock;
    return a.serving_clock;
}

std::string accelerator_file(const std::string& id) { return "hardware/catalog/accelerators/" + id + ".yaml"; }

// A collective's constants: one node's fabric (ring and NVLS bus bandwidth; its algorithm uses one),
// several nodes' NIC.
template <typename Add>
void add_collective(const CompareResult& r, Add&& add) {
    if (r.cluster->nodes == 1) {
        const std::string fabric = r.cluster->scale_up.id, file = "hardware/catalog/fabrics/" + fabric + ".yaml";
        add("busbw:" + fabric,
            {constant("busbw_efficiency", "collectives (one node)", file),
             [fabric](plans::Catalog& c) -> double& { return c.fabrics().at(fabric).busbw_efficiency; }},
            r);
        add("nvls:" + fabric,
            {constant("nvls_busbw_efficiency", "collectives (one node)", file),
             [fabric](plans::Catalog& c) -> double& { return c.fabrics().at(fabric).nvls_busbw_efficiency; }},
            r);
    } else {
        const std::string nic = r.cluster->nic.id;
        add("nic:" + nic,
            {constant("efficiency", "collectives (several nodes)", "hardware/catalog/nics/" + nic + ".yaml"),
             [nic](plans::Catalog& c) -> double& { return c.nics().at(nic).efficiency; }},
            r);
    }
}

}  // namespace

RefitResult refit_device(const std::string& path, const std::string& device, const plans::EvaluationContext& ctx,
                         const std::function<void(int64_t, int64_t)>& progress) {
    ctx.catalog->accelerator(device);  // an unknown id is an input error naming the catalog's
    RefitResult out;
    out.device = device;
    out.measured = path;
    const bool tabled = ctx.cost_tables.count(device) > 0;
    // The cases on the device that ran, by the constant that moves them.
    std::map<std::string, std::pair<std::vector<std::string>, std::vector<double>>> groups;
    std::map<std::string, Knob> knobs;
    std::vector<std::string> order;
    auto add = [&](const std::string& key, Knob k, const CompareResult& r) {
        if (!knobs.count(key)) {
            knobs.emplace(key, std::move(k));
            order.push_back(key);
        }
        groups[key].first.push_back(r.id);
        groups[key].second.push_back(r.measured);
    };
    for (const CompareResult& r : compare_measured(path, ctx, true)) {
        if (r.accelerator != device) continue;
        if (!r.ok() || !(r.measured > 0) || !(r.predicted > 0)) {
            out.not_used.push_back(r.id + ": " + (r.ok() ? "no positive measurement" : r.reason));
            continue;
        }
        const std::string acc = accelerator_file(device);
        if (r.kind == "training") {
            const char* name = tabled ? "table_sustained_clock" : "sustained_clock";
            add(name,
                {constant(name, "training", acc),
                 [device, tabled](plans::Catalog& c) -> double& {
                     auto& a = c.accelerators().at(device).calibration;
                     return tabled ? a.table_sustained_clock : a.sustained_clock;
                 }},
                r);
        } else if (r.kind == "serving") {
            const char* name = tabled ? "table_serving_clock" : "serving_clock";
            add(name,
                {constant(name, "serving", acc),
                 [device, tabled](plans::Catalog& c) -> double& { return serving_clock(c, device, tabled); }},
                r);
        } else if (r.kind == "microbench" && r.metric.find("busbw") != std::string::npos && r.cluster) {
            add_collective(r, add);
        } else {
            out.not_used.push_back(r.id + ": no constant of the refit covers a " + r.kind + " case's " + r.metric);
        }
    }
    if (order.empty())
        throw sim::InputError("no case ran on '" + device + "' with a metric the refit covers" +
                                  (out.not_used.empty() ? std::string() : " (" + out.not_used.front() + ")"),
                              path);
    int64_t done = 0;
    const int64_t total = static_cast<int64_t>(order.size()) * 56;
    for (const auto& key : order) {
        Knob& k = knobs.at(key);
        fit(k, path, ctx, groups[key].first, groups[key].second, [&] {
            if (progress) progress(++done, total);
        });
        out.constants.push_back(k.info);
    }
    return out;
}

std::vector<std::string> write_refit(const RefitResult& r, const std::string& out_dir) {
    std::map<std::string, std::string> texts;  // file -> its text, edited
    std::vector<std::string> order;
    for (const RefitConstant& c : r.constants) {
        if (!c.sensitive || !(c.error_after < c.error_before)) continue;
        if (!texts.count(c.file)) {
            std::ifstream in(data_dir() + "/" + c.file);
            if (!in) throw sim::InputError("cannot read the catalog file to refit", data_dir() + "/" + c.file);
            std::stringstream ss;
            ss << in.rdbuf();
            texts[c.file] = ss.str();
            order.push_back(c.file);
        }
        char value[64], errors[160];
        std::snprintf(value, sizeof value, "%.4g", c.after);
        std::snprintf(errors, sizeof errors, "median |error| %.1f%% -> %.1f%%", 100 * c.error_before,
                      100 * c.error_after);
        std::string source = "fathom calibrate refit " + fs::path(r.measured).filename().string() + ": " +
                             std::to_string(c.cases.size()) + " " + c.load + " entr" +
                             (c.cases.size() == 1 ? "y" : "ies") + " on " + r.device + ", " + errors;
        if (c.leave_one_out >= 0) {
            char loo[64];
            std::snprintf(loo, sizeof loo, ", leave-one-out %.1f%%", 100 * c.leave_one_out);
            source += loo;
        }
        char was[64];
        std::snprintf(was, sizeof was, "; was %.4g", c.before);
        source += was;
        const std::string line = c.name + ": {value: " + value + ", source: \"" + source + "\"}";
        std::string& t = texts[c.file];
        const std::regex existing("^( *)" + c.name + ": \\{value: [^\\n]*$", std::regex::multiline);
        std::smatch m;
        if (std::regex_search(t, m, existing)) {
            t = m.prefix().str() + m[1].str() + line + m.suffix().str();
        } else if (const size_t at = t.find("\ncalibration:\n"); at != std::string::npos) {
            t.insert(at + 14, "  " + line + "\n");
        } else {
            throw sim::InputError("no '" + c.name + "' entry to refit", data_dir() + "/" + c.file);
        }
    }
    std::vector<std::string> written;
    for (const auto& f : order) {
        const fs::path p = fs::path(out_dir) / f;
        std::error_code ec;
        fs::create_directories(p.parent_path(), ec);
        if (ec) throw sim::InputError("cannot create the directory (" + ec.message() + ")", p.parent_path().string());
        write_output_file(p.string(), texts[f]);
        written.push_back(p.string());
    }
    return written;
}

}  // namespace fathom::scenarios
