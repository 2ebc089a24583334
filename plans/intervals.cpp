#include "plans/intervals.h"

#include "workloads/serving/formats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace fathom::plans {

std::string training_regime(const models::ModelSpec& model) {
    return model.moe.num_experts > 0 ? "training/moe" : "training/dense";
}

std::vector<std::string> training_features(const workloads::TrainingPlan& p) {
    std::vector<std::string> f = {
        "schedule:" + p.training.schedule, "recompute:" + std::string(sim::name(p.training.recompute)),
        "zero:" + std::to_string(p.training.zero_stage), "dtype:" + std::string(sim::name(p.stack.kernels.gemm_dtype))};
    if (p.layout.cp > 1) f.push_back("cp");
    if (p.layout.ep > 1) f.push_back("ep");
    if (p.layout.pp > 1) f.push_back("pp");
    if (p.layout.tp > 1) f.push_back("tp");
    if (p.training.lora_rank > 0) f.push_back("lora");
    if (p.training.packed()) f.push_back("packed");
    return f;
}

std::vector<std::string> serving_features(const workloads::serving::ServingPlan& p) {
    std::vector<std::string> f = {"policy:" + p.batching.policy, "dtype:" + workloads::serving::format_name(p.kernels),
                                  "kv:" + std::string(sim::name(p.kv.dtype))};
    if (p.disaggregated()) f.push_back("disaggregated");
    if (p.kv.prefix_caching) f.push_back("prefix_caching");
    bool tp = false, pp = false, ep = false;
    for (const auto& pool : p.pools()) {
        tp = tp || pool.layout->tp > 1;
        pp = pp || pool.layout->pp > 1;
        ep = ep || pool.layout->ep > 1;
    }
    if (tp) f.push_back("tp");
    if (pp) f.push_back("pp");
    if (ep) f.push_back("ep");
    return f;
}

std::string serving_regime(const std::string& metric) {
    const std::string m = metric.substr(0, metric.find('.'));  // ttft_ms.p50 -> ttft_ms
    if (m.find("tokens_per_s") != std::string::npos || m.find("requests_per_s") != std::string::npos)
        return "serving/throughput";
    if (m.rfind("ttft", 0) == 0) return "serving/ttft";
    if (m.rfind("tpot", 0) == 0 || m.rfind("itl", 0) == 0) return "serving/tpot";
    if (m.rfind("e2e", 0) == 0) return "serving/e2e";
    return "";
}

const ErrorBand* IntervalTable::band(const std::string& regime) const {
    const auto it = bands.find(regime);
    return it == bands.end() ? nullptr : &it->second;
}

double conformal_half_width(std::vector<double> r, double level) {
    const size_t n = r.size();
    const auto k = static_cast<size_t>(std::ceil(static_cast<double>(n + 1) * level));
    if (n == 0 || k > n) return std::numeric_limits<double>::infinity();
    std::sort(r.begin(), r.end());
    return r[k - 1];
}

IntervalTable fit_intervals(const std::vector<Residual>& residuals, const std::string& source, double level) {
    IntervalTable t;
    t.level = level;
    t.source = source;
    std::map<std::string, std::vector<double>> by_regime;
    for (const Residual& r : residuals) {
        by_regime[r.regime].push_back(r.abs_log_ratio);
        t.bands[r.regime].accelerators.insert(r.accelerator);
        t.bands[r.regime].features.insert(r.features.begin(), r.features.end());
    }
    for (auto& [regime, values] : by_regime) {
        ErrorBand& b = t.bands[regime];
        b.cases = static_cast<int>(values.size());
        b.half_width = conformal_half_width(values, level);
    }
    return t;
}

bool Interval::finite() const { return std::isfinite(low) && std::isfinite(high); }

std::optional<Interval> interval_of(const IntervalTable& table, const std::string& regime, double value,
                                    const std::string& accelerator, bool estimated_device,
                                    const std::vector<std::string>& features) {
    const ErrorBand* b = table.band(regime);
    if (!b) return std::nullopt;
    Interval i;
    i.regime = regime;
    i.cases = b->cases;
    double w = b->half_width;
    i.note = "from " + std::to_string(b->cases) + " " + regime + " cases";
    std::vector<std::string> why;
    if (!accelerator.empty() && b->accelerators.count(accelerator) == 0)
        why.push_back("no validation case ran on " + accelerator);
    if (estimated_device) why.push_back("estimated device model");
    std::string unseen;
    if (!b->features.empty())
        for (const std::string& f : features)
            if (b->features.count(f) == 0) unseen += (unseen.empty() ? "" : ", ") + f;
    if (!unseen.empty()) why.push_back("features no validation case used: " + unseen);
    if (!why.empty()) {
        w *= kUnvalidatedWidening;
        i.widened = true;
        char x[32];
        std::snprintf(x, sizeof x, "%g", kUnvalidatedWidening);
        i.note += std::string(", widened x") + x + " in log space (an estimate): ";
        for (size_t k = 0; k < why.size(); ++k) i.note += (k ? "; " : "") + why[k];
    }
    if (!std::isfinite(w)) {
        i.low = 0;
        i.high = std::numeric_limits<double>::infinity();
        i.note += ": too few cases for a finite band";
        return i;
    }
    i.low = value * std::exp(-w);
    i.high = value * std::exp(w);
    return i;
}

std::optional<Interval> interval_of(const IntervalTable& table, const std::string& regime, double value,
                                    const hardware::AcceleratorSpec& accelerator,
                                    const std::vector<std::string>& features) {
    return interval_of(table, regime, value, accelerator.id, accelerator.device_model == "estimated", features);
}

std::optional<RankGap> rank_gap(const IntervalTable& table, const std::string& regime, double first, double second,
                                const hardware::AcceleratorSpec& accelerator) {
    if (!(first > 0) || !(second > 0)) return std::nullopt;
    const auto i = interval_of(table, regime, 1.0, accelerator);
    if (!i) return std::nullopt;
    RankGap g;
    g.difference = std::fabs(first / second - 1);
    g.band = i->finite() ? i->high - 1 : std::numeric_limits<double>::infinity();
    g.inside = g.difference <= g.band;
    char buf[96];
    std::snprintf(buf, sizeof buf, "rank 1 and 2 differ by %.1f%%, %s the 90%% interval (+-%.1f%%, ",
                  100 * g.difference, g.inside ? "inside" : "outside", 100 * g.band);
    g.text =
        std::string(buf) + i->note + ")" + (g.inside ? ": fathom's validated accuracy does not tell them apart" : "");
    return g;
}

}  // namespace fathom::plans
