#include "scenarios/measured_run.h"

#include <cstdio>

namespace fathom::scenarios::measured {

namespace {

std::string seconds(double s) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g s", s);
    return buf;
}

// The catalog's failure profile measured on `accelerator`, else the first one (an estimate, said).
std::string failure_profile(const plans::Catalog& catalog, const std::string& accelerator,
                            std::vector<std::string>& assumptions) {
    for (const auto& [id, rates] : catalog.failure_rates())
        if (rates.accelerator == accelerator) return id;
    if (catalog.failure_rates().empty()) throw Unsupported{"the catalog has no failure-rate profile"};
    const auto& [id, rates] = *catalog.failure_rates().begin();
    assumptions.push_back("failure rates: " + id + " (measured on " + rates.accelerator + "; the catalog has no " +
                          accelerator + " fleet's rates: an estimate)");
    return id;
}

}  // namespace

void translate_run(const Case& c, const plans::Catalog& catalog, const std::string& accelerator, ScenarioDoc& doc,
                   std::vector<std::string>& assumptions) {
    if (!c.has("training.run")) return;
    doc.section_origin("run", "training.run");
    const double days = c.number("training.run.days");
    if (!(days > 0)) c.fail("training.run.days", "expected a positive number of days");
    doc.set("run.target_time", seconds(days * 86400), "training.run.days");
    doc.set("run.failures", failure_profile(catalog, accelerator, assumptions), "training.run");
    if (c.has("training.run.storage")) {
        doc.set("cluster.storage", c.text("training.run.storage"), "training.run.storage");
        doc.set("run.checkpoint_tier", std::string("storage"), "training.run.storage");
    } else {
        doc.set("cluster.ssd", std::string("nvme-gen5-14gbs"), "training.run");
        doc.set("run.ssd_replicas", int64_t{1}, "training.run");
        assumptions.push_back(
            "checkpoints to one local NVMe SSD a node, each node's share copied to one other node's (nvme-gen5-14gbs; "
            "the storage is not stated)");
    }
    const std::string method = c.choice("training.run.checkpoint_method", {"sync", "async"}, "");
    if (method.empty()) assumptions.push_back("asynchronous checkpoints (the method is not stated)");
    doc.set("run.checkpoint_method", method.empty() ? std::string("async") : method, "training.run.checkpoint_method");
    if (c.has("training.run.checkpoint_interval_s"))
        doc.set("run.checkpoint_interval", seconds(c.number("training.run.checkpoint_interval_s")),
                "training.run.checkpoint_interval_s");
    else assumptions.push_back("checkpoint interval: the Young/Daly optimum (not stated)");
    if (c.has("training.run.detect_s")) {
        doc.set("run.detect", seconds(c.number("training.run.detect_s")), "training.run.detect_s");
    } else {
        doc.set("run.detect", std::string("10 min"), "training.run");
        assumptions.push_back(
            "detection 10 min (not stated; MegaScale, NSDI 2024 section 6.3: detection and "
            "diagnosis in under 10 minutes on average)");
    }
    if (c.has("training.run.restart_s")) {
        doc.set("run.restart", seconds(c.number("training.run.restart_s")), "training.run.restart_s");
    } else {
        doc.set("run.restart", std::string("5 min"), "training.run");
        assumptions.push_back("restart 5 min before the load (not stated: an estimate)");
    }
    doc.set("run.seeds", int64_t{200}, "training.run");
}

bool is_run_metric(const std::string& metric) { return metric == "interruptions_per_day" || metric == "ettr_percent"; }

double run_metric(const Case& c, const Evaluated& e, CompareResult& out) {
    const std::string metric = c.text("metric");
    if (!e.outcome->run) {
        if (!c.has("training.run")) throw Unsupported{"metric '" + metric + "' needs the case's training.run block"};
        throw Unsupported{"the plan does not fit in memory: no run"};
    }
    const plans::RunSummary& r = e.outcome->run->summary;
    char line[160];
    std::snprintf(line, sizeof line, "run: %d seeds, %.1f interruptions over %.2f days of wall clock, ETTR %.3f",
                  r.seeds, r.failures, r.wall_mean_s / 86400, r.ettr_mean);
    out.run_summary.push_back(line);
    if (metric == "interruptions_per_day") return r.failures / (r.wall_mean_s / 86400.0);
    return 100.0 * r.ettr_mean;
}

}  // namespace fathom::scenarios::measured
