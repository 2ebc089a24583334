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
    // The window: days of a run, or the steps of a benchmark (minutes: nothing is drawn to fail it,
    // so one seed tells all).
    const bool bench = c.has("training.run.steps");
    if (c.has("training.run.days") == bench) c.fail("training.run", "give the window as one of days and steps");
    if (bench) {
        const double steps = c.number("training.run.steps");
        if (!(steps >= 1 && steps <= 1e15 && steps == static_cast<double>(static_cast<int64_t>(steps))))
            c.fail("training.run.steps", "expected a positive whole number of steps");
        doc.set("run.target_steps", static_cast<int64_t>(steps), "training.run.steps");
        doc.set("run.failures", std::string("none"), "training.run.steps");
        assumptions.push_back("a benchmark of " + std::to_string(static_cast<int64_t>(steps)) +
                              " steps: no failures drawn");
    } else {
        const double days = c.number("training.run.days");
        if (!(days > 0)) c.fail("training.run.days", "expected a positive number of days");
        doc.set("run.target_time", seconds(days * 86400), "training.run.days");
        doc.set("run.failures", failure_profile(catalog, accelerator, assumptions), "training.run");
    }
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
    if (c.text("training.framework", "other") == "deepspeed") {
        doc.set("run.checkpoint_layout", std::string("first_replica"), "training.framework");
        assumptions.push_back(
            "DeepSpeed's checkpoint layout: data-parallel rank 0 alone saves the model states, every rank its ZeRO "
            "shard (deepspeed/runtime/engine.py _configure_checkpointing: 'only the first data parallel process "
            "needs to store the model checkpoint')");
    }
    if (c.has("training.run.checkpoint_writer"))
        doc.set("run.checkpoint_writer", c.text("training.run.checkpoint_writer"), "training.run.checkpoint_writer");
    const std::string method = c.choice("training.run.checkpoint_method", {"sync", "async"}, "");
    if (method.empty()) assumptions.push_back("asynchronous checkpoints (the method is not stated)");
    doc.set("run.checkpoint_method", method.empty() ? std::string("async") : method, "training.run.checkpoint_method");
    if (c.has("training.run.checkpoint_interval_s") && c.has("training.run.checkpoint_every_steps"))
        c.fail("training.run",
               "give the checkpoint interval as one of checkpoint_interval_s and checkpoint_every_steps");
    if (c.has("training.run.checkpoint_interval_s")) {
        doc.set("run.checkpoint_interval", seconds(c.number("training.run.checkpoint_interval_s")),
                "training.run.checkpoint_interval_s");
    } else if (c.has("training.run.checkpoint_every_steps")) {
        const double every = c.number("training.run.checkpoint_every_steps");
        if (!(every >= 1 && every <= 1e12 && every == static_cast<double>(static_cast<int64_t>(every))))
            c.fail("training.run.checkpoint_every_steps", "expected a positive whole number of steps");
        doc.set("run.checkpoint_every", static_cast<int64_t>(every), "training.run.checkpoint_every_steps");
    } else if (!bench) {
        assumptions.push_back("checkpoint interval: the Young/Daly optimum (not stated)");
    }
    if (c.has("training.run.detect_s")) {
        doc.set("run.detect", seconds(c.number("training.run.detect_s")), "training.run.detect_s");
    } else {
        doc.set("run.detect", std::string("10 min"), "training.run");
        if (!bench)  // a benchmark draws no failures: nothing to detect
            assumptions.push_back(
                "detection 10 min (not stated; MegaScale, NSDI 2024 section 6.3: detection and "
                "diagnosis in under 10 minutes on average)");
    }
    if (c.has("training.run.restart_s")) {
        doc.set("run.restart", seconds(c.number("training.run.restart_s")), "training.run.restart_s");
    } else {
        doc.set("run.restart", std::string("5 min"), "training.run");
        if (!bench) assumptions.push_back("restart 5 min before the load (not stated: an estimate)");
    }
    doc.set("run.seeds", int64_t{bench ? 1 : 200}, "training.run");
}

bool is_run_metric(const std::string& metric) {
    return metric == "interruptions_per_day" || metric == "ettr_percent" ||
           metric == "checkpoint_throughput_gb_per_s" || metric == "run_time_s";
}

double run_metric(const Case& c, const Evaluated& e, CompareResult& out) {
    const std::string metric = c.text("metric");
    if (!e.outcome->run) {
        if (!c.has("training.run")) throw Unsupported{"metric '" + metric + "' needs the case's training.run block"};
        throw Unsupported{"the plan does not fit in memory: no run"};
    }
    char line[200];
    if (metric == "checkpoint_throughput_gb_per_s") {
        // DataStates-LLM's definition (HPDC 2024, section 6.3): the checkpoint's size over the time
        // training is blocked for it (a synchronous write's whole stall; an asynchronous snapshot's).
        const plans::CheckpointCost& k = e.outcome->run->plan.checkpoint;
        std::snprintf(line, sizeof line,
                      "checkpoint: %.1f GB, training blocked %.3f s a checkpoint (snapshot %.3f s, write %.3f s; "
                      "a rank's save at the writer's rate %.3f s)",
                      k.bytes / 1e9, k.stall_s, k.snapshot_s, k.write_s, k.writer_s);
        out.run_summary.push_back(line);
        if (!(k.stall_s > 0)) throw Unsupported{"the checkpoint blocks training for no time"};
        return k.bytes / k.stall_s / 1e9;
    }
    const plans::RunSummary& r = e.outcome->run->summary;
    std::snprintf(line, sizeof line, "run: %d seeds, %.1f interruptions over %.2f days of wall clock, ETTR %.3f",
                  r.seeds, r.failures, r.wall_mean_s / 86400, r.ettr_mean);
    out.run_summary.push_back(line);
    if (metric == "interruptions_per_day") return r.failures / (r.wall_mean_s / 86400.0);
    if (metric == "run_time_s") return r.wall_mean_s;
    return 100.0 * r.ettr_mean;
}

}  // namespace fathom::scenarios::measured
