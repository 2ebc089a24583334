#include "plans/run.h"

#include "plans/run_elastic.h"
#include "sim/error.h"
#include "sim/stats.h"
#include "workloads/training/step_costs.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace fathom::plans {

namespace {

std::string fmt(const char* format, double x) {
    char buf[256];
    std::snprintf(buf, sizeof buf, format, x);
    return buf;
}

CheckpointTier resolve_tier(const hardware::ClusterSpec& c, CheckpointTier asked) {
    if (asked != CheckpointTier::Auto) return asked;
    return c.storage ? CheckpointTier::Storage : CheckpointTier::Ssd;
}

}  // namespace

double tokens_per_step(const workloads::TrainingPlan& plan) {
    return static_cast<double>(plan.training.global_batch) * static_cast<double>(plan.training.seq_len);
}

int64_t target_steps(const RunRequest& r, const workloads::TrainingPlan& plan, double step_s,
                     std::vector<Violation>& out) {
    const double per_step = tokens_per_step(plan);
    if ((r.target_tokens > 0) + (r.target_steps > 0) + (r.target_time_s > 0) != 1) {
        out.push_back({"run.target_tokens",
                       "give the target as run.target_tokens, run.target_steps or run.target_time (one of them)"});
        return 0;
    }
    if (r.target_time_s > 0 && !(step_s > 0)) return 0;  // known once the step is priced
    const double steps_given =
        r.target_time_s > 0 ? std::ceil(r.target_time_s / step_s - 1e-9) : static_cast<double>(r.target_steps);
    const double target = r.target_tokens > 0 ? r.target_tokens : steps_given * per_step;
    if (r.trained_tokens >= target) {
        out.push_back({"run.trained_tokens", fmt("%.6g tokens already trained: the target (", r.trained_tokens) +
                                                 fmt("%.6g tokens) is reached", target)});
        return 0;
    }
    const double steps = std::ceil((target - r.trained_tokens) / per_step - 1e-9);
    if (steps > 1e15) {
        const char* key = r.target_tokens > 0  ? "run.target_tokens"
                          : r.target_steps > 0 ? "run.target_steps"
                                               : "run.target_time";
        out.push_back({key, fmt("%.6g steps of this plan's global batch: more than 1e15", steps)});
        return 0;
    }
    return static_cast<int64_t>(steps);
}

namespace {

// Each tier's write and read of a node's share `per_node` of a checkpoint of `bytes` (tier_id,
// write_s, read_s), and the violations that keep it from holding checkpoints; false when it cannot
// be priced at all.
bool price_ssd(const hardware::ClusterSpec& c, const RunRequest& r, double per_node, CheckpointPlan& out) {
    CheckpointCost& k = out.cost;
    if (!c.ssd) {
        out.violations.push_back(
            {r.tier == CheckpointTier::Auto ? "run.checkpoint_tier" : "cluster.ssd",
             "the cluster has neither a shared file system (cluster.storage) nor local SSDs (cluster.ssd) to "
             "checkpoint to (`fathom list hardware`)"});
        return false;
    }
    const hardware::SsdSpec& ssd = *c.ssd;
    k.tier_id = ssd.id;
    // Its own share and ssd_replicas peers' on its SSDs; its share to the peers over its NICs.
    const double copies = 1.0 + r.ssd_replicas;
    k.write_s = std::max(copies * per_node / (c.ssds_per_node * ssd.write_bandwidth),
                         r.ssd_replicas * per_node / c.node_nic_achievable());
    k.read_s = per_node / (c.ssds_per_node * ssd.read_bandwidth);
    if (r.ssd_replicas > c.nodes - 1)
        out.violations.push_back(
            {"run.ssd_replicas",
             fmt("a copy of each node's share on %.0f other nodes, but the cluster has ", r.ssd_replicas) +
                 fmt("%.0f other nodes", static_cast<double>(c.nodes - 1))});
    if (2 * copies * per_node > c.ssds_per_node * ssd.capacity)
        out.violations.push_back(
            {"cluster.ssds_per_node",
             fmt("a node's share of two checkpoints (the last durable one stays while "
                 "the next is written) is %.1f GB",
                 2 * per_node / 1e9) +
                 (r.ssd_replicas > 0 ? fmt(" (x%.0f with its peers' copies)", copies) : "") +
                 fmt(", more than its SSDs hold (%.1f GB)", c.ssds_per_node * ssd.capacity / 1e9)});
    return true;
}

// Each node's share to memory_replicas peers over its NICs, read back from one of them.
bool price_memory(const hardware::ClusterSpec& c, const RunRequest& r, double per_node, CheckpointPlan& out) {
    CheckpointCost& k = out.cost;
    const double nics = c.node_nic_achievable();
    k.tier_id = "peer host memory";
    k.write_s = per_node * r.memory_replicas / nics;
    k.read_s = per_node / nics;
    if (!(c.host_memory > 0)) {
        out.violations.push_back({"cluster.host_memory",
                                  "run.checkpoint_tier memory needs a node's host DRAM "
                                  "(cluster.host_memory: 2 TB on a DGX H100)"});
        return false;
    }
    if (r.memory_replicas > c.nodes - 1) {
        out.violations.push_back(
            {"run.memory_replicas",
             fmt("%.0f copies on other nodes, but the cluster has ", static_cast<double>(r.memory_replicas)) +
                 fmt("%.0f other nodes", static_cast<double>(c.nodes - 1))});
        return false;
    }
    const double held = 2.0 * (1 + r.memory_replicas) * per_node;  // own and peers', last and next
    if (held > c.host_memory)
        out.violations.push_back(
            {"run.memory_replicas",
             fmt("a node would hold %.1f GB of checkpoints (its own share and ", held / 1e9) +
                 fmt("%.0f peers', the last durable ones and the next), ", static_cast<double>(r.memory_replicas)) +
                 fmt("more than its host memory (%.1f GB)", c.host_memory / 1e9)});
    return true;
}

// A checkpoint of `bytes` to or from the file system: the slower of its aggregate bandwidth and
// the nodes' clients together (each node's share over its client).
double fs_write_s(const hardware::FileSystemSpec& fs, double bytes, double per_node) {
    return std::max(bytes / fs.write_bandwidth, fs.client_bandwidth > 0 ? per_node / fs.client_bandwidth : 0.0);
}
double fs_read_s(const hardware::FileSystemSpec& fs, double bytes, double per_node) {
    return std::max(bytes / fs.read_bandwidth, fs.client_bandwidth > 0 ? per_node / fs.client_bandwidth : 0.0);
}

// Multi-level: every persist_every-th checkpoint also drained from host memory to the file system.
void price_persist(const hardware::ClusterSpec& c, const RunRequest& r, double per_node, CheckpointPlan& out) {
    CheckpointCost& k = out.cost;
    k.persist_every = r.persist_every;
    if (r.persist_every <= 0) return;
    if (k.tier == CheckpointTier::Storage)
        return out.violations.push_back({"run.persist_every",
                                         "checkpoints on the shared file system (run.checkpoint_tier) persist "
                                         "already"});
    if (!c.storage)
        return out.violations.push_back({"run.persist_every",
                                         "a persistent level needs a shared file system (cluster.storage, `fathom "
                                         "list hardware`)"});
    const hardware::FileSystemSpec& fs = *c.storage;
    k.persist_write_s = std::max(fs_write_s(fs, k.bytes, per_node), k.writer_s - k.snapshot_s);
    k.persist_s = k.snapshot_s + k.persist_write_s;
    k.persist_load_s = fs_read_s(fs, k.bytes, per_node) + k.snapshot_s;
    if (fs.capacity > 0 && 2 * k.bytes > fs.capacity)
        out.violations.push_back(
            {"cluster.storage", fmt("two persisted checkpoints are %.1f TB, ", 2 * k.bytes / 1e12) +
                                    fmt("more than the file system holds (%.1f TB)", fs.capacity / 1e12)});
}

// The slower of the file system's aggregate bandwidth and the nodes' clients together.
bool price_storage(const hardware::ClusterSpec& c, double per_node, CheckpointPlan& out) {
    CheckpointCost& k = out.cost;
    if (!c.storage) {
        out.violations.push_back({"run.checkpoint_tier",
                                  "storage: the cluster has no shared file system (set "
                                  "cluster.storage, `fathom list hardware`)"});
        return false;
    }
    const hardware::FileSystemSpec& fs = *c.storage;
    k.tier_id = fs.id;
    k.write_s = fs_write_s(fs, k.bytes, per_node);
    k.read_s = fs_read_s(fs, k.bytes, per_node);
    if (fs.capacity > 0 && 2 * k.bytes > fs.capacity)
        out.violations.push_back(
            {"cluster.storage", fmt("two checkpoints (the last durable one stays while the "
                                    "next is written) are %.1f TB, ",
                                    2 * k.bytes / 1e12) +
                                    fmt("more than the file system holds (%.1f TB)", fs.capacity / 1e12)});
    return true;
}

}  // namespace

double checkpoint_bytes(const models::ModelSpec& model, const workloads::TrainingPlan& plan) {
    return 2.0 * model.total_params(plan.training.seq_len) + 12.0 * workloads::trained_params(model, plan);
}

double checkpoint_rank_bytes(const models::ModelSpec& model, const workloads::TrainingPlan& plan,
                             CheckpointLayout layout) {
    const double gpus = static_cast<double>(plan.gpus());
    const double weights = 2.0 * model.total_params(plan.training.seq_len);
    const double optimizer = 12.0 * workloads::trained_params(model, plan);
    if (layout == CheckpointLayout::Even || plan.training.zero_stage >= 3) return (weights + optimizer) / gpus;
    const double replica = gpus / plan.layout.dp;  // the ranks of one data-parallel replica
    return plan.training.zero_stage == 0 ? (weights + optimizer) / replica : weights / replica + optimizer / gpus;
}

CheckpointPlan plan_checkpoint(const models::ModelSpec& model, const hardware::ClusterSpec& c,
                               const workloads::TrainingPlan& plan, const RunRequest& r) {
    CheckpointPlan out;
    CheckpointCost& k = out.cost;
    k.method = r.method;
    k.tier = resolve_tier(c, r.tier);
    k.bytes = checkpoint_bytes(model, plan);
    k.rank_bytes = checkpoint_rank_bytes(model, plan, r.layout);
    k.snapshot_s = k.rank_bytes / c.pcie.achievable_bandwidth();
    // A node's share: its ranks' (the first replica's nodes write the most under DeepSpeed's layout).
    const double per_node = r.layout == CheckpointLayout::Even ? k.bytes / c.nodes : k.rank_bytes * c.gpus_per_node;
    const bool priced = k.tier == CheckpointTier::Ssd      ? price_ssd(c, r, per_node, out)
                        : k.tier == CheckpointTier::Memory ? price_memory(c, r, per_node, out)
                                                           : price_storage(c, per_node, out);
    if (!priced) return out;
    if (r.writer_rank_rate > 0) {
        if (k.tier == CheckpointTier::Memory)
            out.violations.push_back({"run.checkpoint_writer",
                                      "a checkpoint writer writes files: checkpoint_tier memory copies each share "
                                      "to peers' memory without one"});
        k.writer_s = k.rank_bytes / r.writer_rank_rate;  // a rank's save, its snapshot included
        k.write_s = std::max(k.write_s, k.writer_s - k.snapshot_s);
    }
    k.stall_s = r.method == CheckpointMethod::Sync ? k.snapshot_s + k.write_s : k.snapshot_s;
    k.durable_s = k.snapshot_s + k.write_s;
    k.load_s = k.read_s + k.snapshot_s;  // back to the GPUs over the same links
    k.ssd_replicas = r.ssd_replicas;
    if (r.ssd_replicas > 0 && k.tier != CheckpointTier::Ssd)
        out.violations.push_back({"run.ssd_replicas", "copies on other nodes' SSDs are for run.checkpoint_tier ssd"});
    k.node_local = k.tier == CheckpointTier::Ssd && r.ssd_replicas == 0;
    k.drain_nic_bytes = k.tier == CheckpointTier::Storage  ? per_node
                        : k.tier == CheckpointTier::Memory ? per_node * r.memory_replicas
                                                           : per_node * r.ssd_replicas;
    if (r.method == CheckpointMethod::Async && k.write_s > 0) {
        const double nics = c.node_nic_achievable();
        k.drain_nic_share = std::min(k.drain_nic_bytes / k.write_s, nics / 2) / nics;
    }
    price_persist(c, r, per_node, out);
    if (r.checkpoint_interval_s > 0 && k.persist_every > 0 &&
        k.persist_s > static_cast<double>(k.persist_every) * r.checkpoint_interval_s)
        out.violations.push_back(
            {"run.persist_every", fmt("a persisted checkpoint drains for %.4g s, ", k.persist_s) +
                                      fmt("longer than %.0f intervals: the file system would fall behind",
                                          static_cast<double>(k.persist_every))});
    // An asynchronous checkpoint drains beside training: the next may not start before it is
    // durable. A synchronous one is durable when training resumes, so any interval works.
    const double drain_s = k.durable_s - k.stall_s;
    if (r.checkpoint_interval_s > 0 && r.checkpoint_interval_s < drain_s)
        out.violations.push_back(
            {"run.checkpoint_interval", fmt("%.4g s is shorter than one checkpoint's write ", r.checkpoint_interval_s) +
                                            fmt("(%.4g s: ", drain_s) + fmt("%.4g GB to ", k.bytes / 1e9) + k.tier_id +
                                            ", drained beside training)"});
    return out;
}

double RunPlan::failures_per_hour() const {
    double x = 0;
    for (const auto& f : spec.failures) x += f.per_hour;
    return x;
}

RunPlan plan_run(const Scenario& s, double step_s, const Catalog& catalog, const RunSteps& steps) {
    const workloads::TrainingPlan& plan = *s.training();
    const RunRequest& r = *s.run;
    RunPlan out;
    std::vector<Violation> violations;
    out.spec.step_s = step_s;
    out.spec.target_steps = target_steps(r, plan, step_s, violations);
    CheckpointPlan k = plan_checkpoint(s.model, s.cluster, plan, r);
    violations.insert(violations.end(), k.violations.begin(), k.violations.end());
    const std::vector<Violation> ev = elastic_violations(s.cluster, plan, r);
    violations.insert(violations.end(), ev.begin(), ev.end());
    if (!violations.empty()) throw plan_error(violations, s.file);
    out.checkpoint = k.cost;
    out.tokens_per_step = tokens_per_step(plan);
    out.profile = r.failures;
    if (r.failures != "none") {
        const hardware::FailureRatesSpec& rates = catalog.failure_rates(r.failures);
        out.profile_accelerator = rates.accelerator;
        for (const auto& c : rates.causes) {
            out.spec.failures.push_back(
                {c.name, rates.per_hour(c, s.cluster.gpus()) * r.failure_scale, c.takes_node()});
            out.categories.push_back(c.category);
        }
    }
    const double lambda = out.failures_per_hour() / 3600.0;
    out.young_daly_s = lambda > 0 ? workloads::run::young_daly_interval_s(k.cost.stall_s, lambda)
                                  : std::numeric_limits<double>::infinity();
    out.interval_given = r.checkpoint_interval_s > 0 || r.checkpoint_every > 0;
    out.interval_key = r.checkpoint_every > 0 ? "run.checkpoint_every" : "run.checkpoint_interval";
    double interval = r.checkpoint_every > 0        ? static_cast<double>(r.checkpoint_every) * step_s
                      : r.checkpoint_interval_s > 0 ? r.checkpoint_interval_s
                                                    : std::max(out.young_daly_s, k.cost.durable_s);
    if (r.checkpoint_every > 0 && interval < k.cost.durable_s - k.cost.stall_s)
        throw plan_error(
            {{"run.checkpoint_every", fmt("%.0f steps ", static_cast<double>(r.checkpoint_every)) +
                                          fmt("(%.4g s) are shorter than one checkpoint's write ", interval) +
                                          fmt("(%.4g s, drained beside training)", k.cost.durable_s - k.cost.stall_s)}},
            s.file);
    // At a step's end: whole steps (none at all when nothing fails and no interval is given).
    interval = std::isfinite(interval) ? std::ceil(interval / step_s - 1e-9) * step_s : 0.0;
    out.spec.checkpoint = {interval,          k.cost.stall_s,       k.cost.durable_s, k.cost.load_s,
                           k.cost.node_local, k.cost.persist_every, k.cost.persist_s, k.cost.persist_load_s};
    if (k.cost.drain_nic_share > 0 && steps.drain_step_s > 0)
        out.spec.checkpoint.drain_slowdown = std::max(1.0, steps.drain_step_s / step_s);
    if (k.cost.persist_every > 0 && k.cost.persist_s > static_cast<double>(k.cost.persist_every) * interval)
        throw plan_error(
            {{"run.persist_every", fmt("a persisted checkpoint drains for %.4g s, ", k.cost.persist_s) +
                                       fmt("longer than %.0f intervals ", static_cast<double>(k.cost.persist_every)) +
                                       fmt("of %.4g s: the file system would fall behind (persist "
                                           "less often, or checkpoint less often)",
                                           interval)}},
            s.file);
    out.spec.detect_s = r.detect_s;
    out.spec.restart_s = r.restart_s;
    out.spec.pool = {r.spare_nodes, r.repair_s};
    out.spec.failure_shape = r.failure_shape;
    out.spec.stragglers = {r.stragglers_per_node_day * s.cluster.nodes / 24.0, r.straggler_slowdown,
                           r.straggler_detect_s};
    if (r.recovery == Recovery::Elastic) {
        workloads::run::Elastic& e = out.spec.elastic;
        e.enabled = true;
        e.reconfigure_s = r.reconfigure_s;
        e.copy_s = steps.state_bytes_per_gpu * s.cluster.gpus_per_node / s.cluster.node_nic_achievable();
        out.replicas_per_node = replicas_per_node(s.cluster, plan);
        if (steps.degraded_step_s)
            e.slowdown = [degraded = steps.degraded_step_s, step_s](int out_nodes) {
                const double t = degraded(out_nodes);
                return t > 0 && std::isfinite(t) ? std::max(1.0, t / step_s) : 0.0;
            };
    }
    out.seeds = r.seeds;
    out.seed = s.seed;
    if (const std::string why = out.spec.check(); !why.empty()) throw sim::InputError("run: " + why, s.file, 0, "run");
    if (const Violation v = check_run_size(out); !v.key.empty()) throw plan_error({v}, s.file);
    return out;
}

Violation check_run_size(const RunPlan& p, double max_events) {
    // Each segment between checkpoints (the whole run without them) restarts from its beginning
    // e^(lambda a) - 1 times on average (expected_segment_s's renewal argument). The engine passes
    // the checkpoints between two failures at once: a failure costs about three events. A
    // straggler's eviction rolls the job back as a failure does: their rates add. An elastic run
    // is bounded as if every failure restarted it (conservative: most go on without the node).
    const double lambda = (p.failures_per_hour() + p.spec.stragglers.per_hour) / 3600.0;
    const double target = static_cast<double>(p.spec.target_steps) * p.spec.step_s;
    const workloads::run::CheckpointPolicy& k = p.spec.checkpoint;
    const double tau = k.interval_s;
    const double segments = tau > 0 ? std::ceil(target / tau) : 1.0;
    const double length = tau > 0 ? tau + k.stall_s : target;
    const double per_segment = std::expm1(lambda * length);
    // On a node-local tier a node's loss goes back to the last persisted checkpoint (or the start):
    // for those failures the segments are persist_every intervals long (or the whole run).
    double node_lambda = p.spec.stragglers.per_hour / 3600.0;
    for (const auto& f : p.spec.failures)
        if (f.takes_node) node_lambda += f.per_hour / 3600.0;
    const bool levels = k.node_local && k.persist_every > 0 && tau > 0;
    const double safe_segments = !k.node_local ? 0.0 : levels ? std::ceil(segments / k.persist_every) : 1.0;
    const double safe_length = levels ? static_cast<double>(k.persist_every) * length : target + segments * k.stall_s;
    const double per_safe = k.node_local ? std::expm1(node_lambda * safe_length) : 0.0;
    const double events = 3.0 * p.seeds * (segments * per_segment + safe_segments * per_safe + 1.0);
    if (std::isfinite(events) && events <= max_events) return {};
    if (!std::isfinite(per_segment) || per_segment > 1e3)
        return {"run.checkpoint_interval",
                (std::isfinite(per_segment)
                     ? fmt("the job fails %.3g times on average before it gets through one checkpoint interval",
                           per_segment)
                     : std::string("the job fails more often than can be counted before it gets through one checkpoint "
                                   "interval")) +
                    fmt(" (%.4g s of training at ", length) +
                    fmt("%.3g failures and evictions an hour): it would almost never ", lambda * 3600) +
                    "reach its target; checkpoint more often"};
    if (k.node_local && (!std::isfinite(per_safe) || per_safe > 1e3))
        return {k.persist_every > 0 ? "run.persist_every" : "run.ssd_replicas",
                std::string("a node's failure loses its share of the checkpoints on its SSDs, and the job goes back ") +
                    (k.persist_every > 0 ? "to its last persisted checkpoint" : "to the start") +
                    fmt(" (up to %.4g s of training", safe_length) +
                    fmt(" at %.3g node failures and evictions an hour): it would almost never reach its target; ",
                        node_lambda * 3600) +
                    "keep copies on other nodes (run.ssd_replicas) or persist more often (run.persist_every)"};
    return {"run.seeds", fmt("the runs would simulate about %.3g events", events) +
                             fmt(" (at most %.3g): fewer seeds or a longer checkpoint interval", max_events)};
}

RunSummary simulate_runs(const RunPlan& plan) {
    RunSummary out;
    out.seeds = plan.seeds;
    out.interruptions.assign(plan.spec.failures.size(), 0.0);
    std::vector<double> wall, ettr;
    wall.reserve(plan.seeds);
    ettr.reserve(plan.seeds);
    for (int i = 0; i < plan.seeds; ++i) {
        const workloads::run::RunReport r =
            workloads::run::simulate_run(plan.spec, plan.seed + static_cast<uint64_t>(i));
        wall.push_back(r.wall_s);
        ettr.push_back(r.ettr);
        out.lost_work_s += r.lost_work_s;
        out.detect_s += r.detect_s;
        out.restart_s += r.restart_s;
        out.node_wait_s += r.node_wait_s;
        out.straggler_s += r.straggler_s;
        out.reconfigure_s += r.reconfigure_s;
        out.degraded_s += r.degraded_s;
        out.drops += static_cast<double>(r.drops);
        out.local_losses += static_cast<double>(r.local_losses);
        out.drain_s += r.drain_s;
        out.restarts += static_cast<double>(r.restarts());
        out.evictions += static_cast<double>(r.evictions);
        out.load_s += r.load_s;
        out.checkpoint_stall_s += r.checkpoint_stall_s;
        out.checkpoints += static_cast<double>(r.checkpoints);
        out.failures += static_cast<double>(r.failures());
        for (size_t c = 0; c < r.interruptions.size(); ++c)
            out.interruptions[c] += static_cast<double>(r.interruptions[c]);
    }
    const double n = plan.seeds;
    for (double* x : {&out.drain_s, &out.local_losses, &out.reconfigure_s, &out.degraded_s, &out.drops, &out.restarts,
                      &out.straggler_s, &out.evictions, &out.lost_work_s, &out.detect_s, &out.node_wait_s,
                      &out.restart_s, &out.load_s, &out.checkpoint_stall_s, &out.checkpoints, &out.failures})
        *x /= n;
    for (double& x : out.interruptions) x /= n;
    double sum = 0;
    for (double w : wall) sum += w;
    out.wall_mean_s = sum / n;
    out.wall_p10_s = sim::quantile(wall, 0.1);
    out.wall_p50_s = sim::quantile(wall, 0.5);
    out.wall_p90_s = sim::quantile(wall, 0.9);
    double esum = 0;
    for (double e : ettr) esum += e;
    out.ettr_mean = esum / n;
    out.ettr_p10 = sim::quantile(ettr, 0.1);
    out.ettr_p90 = sim::quantile(ettr, 0.9);
    if (plan.checkpoint.method == CheckpointMethod::Sync && plan.spec.failure_shape == 1 && plan.spec.pool.spares < 0 &&
        plan.spec.stragglers.per_hour == 0 && !plan.spec.elastic.enabled && !plan.spec.checkpoint.node_local)
        out.expected_s = workloads::run::expected_sync_run_s(plan.spec);
    return out;
}

}  // namespace fathom::plans
