// `fathom run` of a training scenario: the per-stage table, and with a `run` section the whole run
// after the step.
#include "tools/cli/cli.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace fathom::cli {

namespace {

// A duration in the unit that reads best: s, min, h or days.
std::string span(double s) {
    char buf[48];
    if (!std::isfinite(s)) return "never";
    if (s < 1) std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
    else if (s < 120) std::snprintf(buf, sizeof buf, "%.1f s", s);
    else if (s < 7200) std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
    else if (s < 3 * 86400) std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
    else std::snprintf(buf, sizeof buf, "%.2f days", s / 86400);
    return buf;
}

std::string fixed(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2g", x);
    return buf;
}

// A size in GB or TB.
std::string size(double bytes) {
    char buf[48];
    if (bytes >= 1e12) std::snprintf(buf, sizeof buf, "%.2f TB", bytes / 1e12);
    else std::snprintf(buf, sizeof buf, "%.3g GB", bytes / 1e9);
    return buf;
}

// The checkpoint's tier, times and levels.
void print_checkpoint(const plans::RunPlan& p) {
    const auto& k = p.checkpoint;
    std::printf("checkpoint      %s to %s (%s): %s; stalls training %s, durable after %s; load %s\n",
                sim::name(k.method), k.tier_id.c_str(), sim::name(k.tier), size(k.bytes).c_str(),
                span(k.stall_s).c_str(), span(k.durable_s).c_str(), span(k.load_s).c_str());
    if (k.drain_nic_share > 0)
        std::printf(
            "                the drain takes %.2f%% of each node's NICs from training: steps %.4fx as long "
            "while it runs\n",
            100 * k.drain_nic_share, p.spec.checkpoint.drain_slowdown);
    if (k.ssd_replicas > 0)
        std::printf("                each node's share also on %d other %s SSDs (sent over its NICs)\n", k.ssd_replicas,
                    k.ssd_replicas == 1 ? "node's" : "nodes'");
    if (k.persist_every > 0)
        std::printf(
            "persisted       every %lld%s checkpoint also to the shared file system: persisted after %s, "
            "loaded in %s\n",
            static_cast<long long>(k.persist_every), k.persist_every == 1 ? "" : "th", span(k.persist_s).c_str(),
            span(k.persist_load_s).c_str());
    if (k.node_local)
        std::printf(
            "                a node's failure loses its share of the checkpoints on its SSDs: the job goes "
            "back to %s\n",
            k.persist_every > 0 ? "the last persisted one" : "the start (run.ssd_replicas, run.persist_every)");
}

}  // namespace

void print_stage_table(const std::vector<workloads::StageReport>& stages, const std::vector<models::GroupKind>& kinds,
                       const char* indent) {
    // A column per group kind the step moved data over: that stream's busy time.
    std::printf("%s%-6s %6s %10s", indent, "stage", "layers", "compute_s");
    for (models::GroupKind g : kinds) std::printf(" %10s", (std::string(sim::name(g)) + "_s").c_str());
    std::printf(" %10s %10s %12s\n", "exposed_s", "idle_s", "peak_mem");
    for (size_t i = 0; i < stages.size(); ++i) {
        const auto& st = stages[i];
        std::printf("%s%-6zu %6d %10.4f", indent, i, st.layers, st.compute_s);
        for (models::GroupKind g : kinds) std::printf(" %10.4f", st.comm(g));
        std::printf(" %10.4f %10.4f %12s\n", st.exposed_comm_s, st.idle_s, gib(st.memory.total()).c_str());
    }
}

void print_run(const plans::Outcome::Run& run) {
    const plans::RunPlan& p = run.plan;
    const plans::RunSummary& r = run.summary;
    const auto& k = p.checkpoint;
    const double productive = static_cast<double>(p.spec.target_steps) * p.spec.step_s;
    std::printf("\nwhole run       %lld steps of %.3g tokens: %s of training\n",
                static_cast<long long>(p.spec.target_steps), p.tokens_per_step, span(productive).c_str());
    const double per_hour = p.failures_per_hour();
    if (p.profile == "none") std::printf("failures        none (run.failures: none)\n");
    else
        std::printf(
            "failures        %s (measured on %s): %.2f per day for this job, one every %s%s\n", p.profile.c_str(),
            p.profile_accelerator.c_str(), per_hour * 24, span(3600 / per_hour).c_str(),
            p.spec.failure_shape == 1 ? "" : (", Weibull gaps of shape " + fixed(p.spec.failure_shape)).c_str());
    print_checkpoint(p);
    if (p.spec.checkpoint.interval_s > 0)
        std::printf("interval        %s of training (%s; the Young/Daly optimum for this stall: %s)\n",
                    span(p.spec.checkpoint.interval_s).c_str(), p.interval_given ? p.interval_key.c_str() : "default",
                    span(p.young_daly_s).c_str());
    else std::printf("interval        no checkpoints (nothing fails, and run.checkpoint_interval is not given)\n");
    std::printf("recovery        detect %s + restart %s + load %s\n", span(p.spec.detect_s).c_str(),
                span(p.spec.restart_s).c_str(), span(k.load_s).c_str());
    if (p.spec.elastic.enabled)
        std::printf(
            "elastic         a failed node takes %d data-parallel replica%s out, the rest go on with the "
            "global batch; each leave and rejoin pauses %s, a rejoining node copies its state from a peer "
            "in %s\n",
            p.replicas_per_node, p.replicas_per_node == 1 ? "" : "s", span(p.spec.elastic.reconfigure_s).c_str(),
            span(p.spec.elastic.copy_s).c_str());
    if (p.spec.stragglers.per_hour > 0)
        std::printf("stragglers      %.2f a day for this job, each slowing steps %.2fx for %s until evicted\n",
                    p.spec.stragglers.per_hour * 24, p.spec.stragglers.slowdown,
                    span(p.spec.stragglers.detect_s).c_str());
    if (p.spec.pool.spares >= 0)
        std::printf("spares          %lld nodes; a hardware failure's node is away %s for repair\n",
                    static_cast<long long>(p.spec.pool.spares), span(p.spec.pool.repair_s).c_str());
    std::printf("\ntime to target  %s median (p10 %s, p90 %s; mean %s over %d seeds)\n", span(r.wall_p50_s).c_str(),
                span(r.wall_p10_s).c_str(), span(r.wall_p90_s).c_str(), span(r.wall_mean_s).c_str(), r.seeds);
    std::printf("ETTR            %.3f mean (p10 %.3f, p90 %.3f): productive step time over wall clock\n", r.ettr_mean,
                r.ettr_p10, r.ettr_p90);
    std::printf("lost (mean)     work redone %s, detection %s, restarts %s, loads %s, checkpoint stalls %s\n",
                span(r.lost_work_s).c_str(), span(r.detect_s).c_str(), span(r.restart_s).c_str(),
                span(r.load_s).c_str(), span(r.checkpoint_stall_s).c_str());
    if (p.spec.pool.spares >= 0)
        std::printf("                waiting for a node out of repair %s\n", span(r.node_wait_s).c_str());
    if (k.drain_nic_share > 0)
        std::printf("                steps slowed behind checkpoint drains %s\n", span(r.drain_s).c_str());
    if (k.node_local)
        std::printf("                %.1f rollbacks past a local checkpoint lost with its node (in the work redone)\n",
                    r.local_losses);
    if (p.spec.stragglers.per_hour > 0)
        std::printf(
            "                slow steps behind stragglers %s (%.1f evicted: their restarts or elastic drops above)\n",
            span(r.straggler_s).c_str(), r.evictions);
    if (p.spec.elastic.enabled)
        std::printf(
            "                slower steps on fewer replicas %s, reconfigurations %s (%.1f went on "
            "elastically, %.1f restarted the job)\n",
            span(r.degraded_s).c_str(), span(r.reconfigure_s).c_str(), r.drops, r.restarts);
    std::printf("events (mean)   %.1f interruptions (%.2f per day of wall clock), %.0f checkpoints\n", r.failures,
                r.wall_mean_s > 0 ? r.failures / (r.wall_mean_s / 86400) : 0.0, r.checkpoints);
    if (r.expected_s > 0)
        std::printf(
            "closed form     %s expected (synchronous checkpoints, exponential failures, unlimited spares, "
            "no stragglers)\n",
            span(r.expected_s).c_str());
    if (p.spec.failures.empty() || r.failures <= 0) return;
    std::printf("\n%-24s %-22s %10s %14s\n", "cause", "category", "per day", "interruptions");
    for (size_t i = 0; i < p.spec.failures.size(); ++i)
        std::printf("%-24s %-22s %10.3f %14.2f\n", p.spec.failures[i].name.c_str(), p.categories[i].c_str(),
                    p.spec.failures[i].per_hour * 24, r.interruptions[i]);
}

}  // namespace fathom::cli
