#include "plans/report.h"

#include "plans/keys.h"
#include "sim/stable_hash.h"

#include <algorithm>
#include <cstdio>
#include <iterator>

namespace fathom::plans {

std::string op_class_pricing(CostModelKind kind, bool some_inside, bool some_outside) {
    switch (kind) {
        case CostModelKind::Roofline: return "roofline";
        case CostModelKind::Table: return !some_inside ? "roofline" : some_outside ? "table and roofline" : "table";
        case CostModelKind::Mixed: return "table on some pools, roofline on others";
    }
    return "roofline";
}

using models::GroupKind;

namespace {

// How each op class was priced: "op_costs.<class>.priced_by" (table, roofline, or table and roofline
// where some of its ops fell outside the table's measured range) and those ops.
void add_op_costs(Record& s, const workloads::OpSources& src, CostModelKind kind) {
    for (int c = 0; c < workloads::OpSources::kClasses; ++c) {
        if (!src.seen[static_cast<size_t>(c)]) continue;
        const auto& outside = src.outside[static_cast<size_t>(c)];
        const std::string key = std::string("op_costs.") + workloads::OpSources::class_name(c);
        s.add(key + ".priced_by", op_class_pricing(kind, src.inside[static_cast<size_t>(c)], !outside.empty()));
        s.add(key + ".outside_calibrated_range", std::vector<std::string>(outside.begin(), outside.end()));
    }
}

void add_training(Report& rep, const Outcome& o, const workloads::StepReport& r) {
    Record& s = rep.summary;
    s.add("step_time_s", r.step_time_s);
    s.add("tokens_per_s_per_gpu", r.tokens_per_s_per_gpu);
    s.add("mfu", r.mfu);
    s.add("model_tflops_per_gpu", r.model_tflops_per_gpu);
    s.add("bubble_fraction", r.bubble_fraction);
    s.add("exposed_comm_s", r.exposed_comm_s);
    s.add("packed_attention_scale", r.packed_attention_scale);
    s.add("packing_imbalance", r.packing_imbalance);
    s.add("peak_memory_bytes", r.peak_memory_bytes);
    s.add("memory_capacity_bytes", r.memory_capacity_bytes);
    s.add("out_of_memory", r.out_of_memory);
    s.add("events", static_cast<int64_t>(r.events));
    s.add("tasks", static_cast<int64_t>(r.tasks));
    if (r.flow_transfers > 0) {  // a flow network: the transfers that ran as flows
        s.add("flow_transfers", static_cast<int64_t>(r.flow_transfers));
        s.add("flows", static_cast<int64_t>(r.flows));
    }
    s.add("cost_model", std::string(sim::name(o.cost_model)));
    s.add("outside_calibrated_range", r.op_sources.outside_all());
    add_op_costs(s, r.op_sources, o.cost_model);
    std::vector<Record> stages;
    for (size_t i = 0; i < r.stages.size(); ++i) {
        const auto& st = r.stages[i];
        Record x;
        x.add("stage", static_cast<int64_t>(i));
        x.add("layers", static_cast<int64_t>(st.layers));
        x.add("compute_s", st.compute_s);
        add_comm_columns(x, st, r.comm_kinds);
        x.add("exposed_comm_s", st.exposed_comm_s);
        x.add("idle_s", st.idle_s);
        x.add("peak_in_flight", static_cast<int64_t>(st.peak_in_flight));
        x.add("activations_offloaded", st.activations_offloaded);
        x.add("memory_bytes.weights", st.memory.weights);
        x.add("memory_bytes.gradients", st.memory.gradients);
        x.add("memory_bytes.optimizer", st.memory.optimizer);
        x.add("memory_bytes.activations", st.memory.activations);
        x.add("memory_bytes.transient", st.memory.transient);
        x.add("memory_bytes.reserved", st.memory.reserved);
        x.add("memory_bytes.total", st.memory.total());
        stages.push_back(std::move(x));
    }
    rep.tables.emplace_back("stages", std::move(stages));
}

// A whole run: "run.*" fields (times in seconds, means over the seeds unless a percentile) and the
// table "run_interruptions" (a row per failure cause).
void add_run(Report& rep, const Outcome::Run& run) {
    Record& s = rep.summary;
    const RunPlan& p = run.plan;
    const RunSummary& r = run.summary;
    s.add("run.target_steps", p.spec.target_steps);
    s.add("run.tokens_per_step", p.tokens_per_step);
    s.add("run.productive_s", static_cast<double>(p.spec.target_steps) * p.spec.step_s);
    s.add("run.seeds", static_cast<int64_t>(r.seeds));
    s.add("run.time_to_target_s.mean", r.wall_mean_s);
    s.add("run.time_to_target_s.p10", r.wall_p10_s);
    s.add("run.time_to_target_s.p50", r.wall_p50_s);
    s.add("run.time_to_target_s.p90", r.wall_p90_s);
    s.add("run.ettr.mean", r.ettr_mean);
    s.add("run.ettr.p10", r.ettr_p10);
    s.add("run.ettr.p90", r.ettr_p90);
    s.add("run.lost_s.work", r.lost_work_s);
    s.add("run.lost_s.detect", r.detect_s);
    s.add("run.lost_s.node_wait", r.node_wait_s);
    s.add("run.lost_s.restart", r.restart_s);
    s.add("run.lost_s.load", r.load_s);
    s.add("run.lost_s.checkpoint_stall", r.checkpoint_stall_s);
    s.add("run.lost_s.stragglers", r.straggler_s);
    s.add("run.evictions", r.evictions);
    s.add("run.recovery", std::string(p.spec.elastic.enabled ? "elastic" : "restart"));
    if (p.spec.elastic.enabled) {
        s.add("run.lost_s.reconfigure", r.reconfigure_s);
        s.add("run.lost_s.degraded", r.degraded_s);
        s.add("run.elastic.drops", r.drops);
        s.add("run.elastic.restarts", r.restarts);
        s.add("run.elastic.reconfigure_s", p.spec.elastic.reconfigure_s);
        s.add("run.elastic.copy_s", p.spec.elastic.copy_s);
        s.add("run.elastic.replicas_per_node", static_cast<int64_t>(p.replicas_per_node));
    }
    s.add("run.interruptions", r.failures);
    s.add("run.checkpoints", r.checkpoints);
    s.add("run.failures_profile", p.profile);
    s.add("run.failures_per_hour", p.failures_per_hour());
    s.add("run.failure_shape", p.spec.failure_shape);
    s.add("run.checkpoint.method", std::string(sim::name(p.checkpoint.method)));
    s.add("run.checkpoint.tier", std::string(sim::name(p.checkpoint.tier)));
    s.add("run.checkpoint.tier_id", p.checkpoint.tier_id);
    s.add("run.checkpoint.bytes", p.checkpoint.bytes);
    s.add("run.checkpoint.stall_s", p.checkpoint.stall_s);
    s.add("run.checkpoint.durable_s", p.checkpoint.durable_s);
    s.add("run.checkpoint.load_s", p.checkpoint.load_s);
    s.add("run.checkpoint.drain_nic_share", p.checkpoint.drain_nic_share);
    s.add("run.checkpoint.drain_slowdown", p.spec.checkpoint.drain_slowdown);
    s.add("run.lost_s.drain", r.drain_s);
    s.add("run.checkpoint.node_local", p.checkpoint.node_local);
    s.add("run.checkpoint.ssd_replicas", static_cast<int64_t>(p.checkpoint.ssd_replicas));
    s.add("run.checkpoint.persist_every", p.checkpoint.persist_every);
    if (p.checkpoint.persist_every > 0) {
        s.add("run.checkpoint.persist_s", p.checkpoint.persist_s);
        s.add("run.checkpoint.persist_load_s", p.checkpoint.persist_load_s);
    }
    s.add("run.local_losses", r.local_losses);
    s.add("run.checkpoint.interval_s", p.spec.checkpoint.interval_s);
    s.add("run.checkpoint.young_daly_s", p.young_daly_s);
    s.add("run.detect_s", p.spec.detect_s);
    s.add("run.restart_s", p.spec.restart_s);
    s.add("run.spare_nodes", p.spec.pool.spares);
    s.add("run.repair_s", p.spec.pool.repair_s);
    if (r.expected_s > 0) s.add("run.closed_form_s", r.expected_s);
    std::vector<Record> causes;
    for (size_t i = 0; i < p.spec.failures.size(); ++i) {
        Record x;
        x.add("cause", p.spec.failures[i].name);
        x.add("category", p.categories[i]);
        x.add("per_hour", p.spec.failures[i].per_hour);
        x.add("takes_node", p.spec.failures[i].takes_node);
        x.add("interruptions", r.interruptions[i]);
        causes.push_back(std::move(x));
    }
    rep.tables.emplace_back("run_interruptions", std::move(causes));
}

void add_percentiles(Record& s, const std::string& name, const workloads::serving::Percentiles& p, double scale) {
    s.add(name + ".mean", p.mean * scale);
    s.add(name + ".p50", p.p50 * scale);
    s.add(name + ".p90", p.p90 * scale);
    s.add(name + ".p95", p.p95 * scale);
    s.add(name + ".p99", p.p99 * scale);
    s.add(name + ".max", p.max * scale);
}

// KV offloading's tiers and the shared store: the shares of prompt tokens loaded from them, and the
// TTFT by where each request's prefix came from.
void add_kv_tiers(Report& rep, const workloads::serving::ServingReport& r) {
    Record& s = rep.summary;
    if (r.offload_hit_rate >= 0) {
        s.add("offload_hit_tokens", r.offload_hit_tokens);
        s.add("offload_hit_rate", r.offload_hit_rate);
        if (r.offload_ssd_hit_rate >= 0) s.add("offload_ssd_hit_rate", r.offload_ssd_hit_rate);
        if (r.store_hit_rate >= 0) s.add("kv_store_hit_rate", r.store_hit_rate);
    }
    if (r.ttft_by_tier.empty()) return;
    std::vector<Record> rows;
    for (const auto& t : r.ttft_by_tier) {
        Record c;
        c.add("source", t.source);
        c.add("requests", t.requests);
        add_percentiles(c, "ttft_ms", t.ttft_s, 1e3);
        rows.push_back(std::move(c));
    }
    rep.tables.emplace_back("ttft_by_tier", std::move(rows));
}

void add_serving(Report& rep, const Outcome& o, const workloads::serving::ServingReport& r) {
    Record& s = rep.summary;
    s.add("requests", r.requests);
    s.add("warmup_requests", r.warmup_requests);
    s.add("duration_s", r.duration_s);
    s.add("requests_per_s", r.requests_per_s);
    s.add("input_tokens_per_s", r.input_tokens_per_s);
    s.add("output_tokens_per_s", r.output_tokens_per_s);
    s.add("total_tokens_per_s", r.total_tokens_per_s);
    const double g = r.gpus > 0 ? r.gpus : 1;
    s.add("output_tokens_per_s_per_gpu", r.output_tokens_per_s / g);
    s.add("total_tokens_per_s_per_gpu", r.total_tokens_per_s / g);
    s.add("serving_gpus", static_cast<int64_t>(r.gpus));
    add_percentiles(s, "ttft_ms", r.ttft_s, 1e3);
    add_percentiles(s, "ttft_service_ms", r.ttft_service_s, 1e3);
    add_percentiles(s, "queue_ms", r.queue_s, 1e3);
    add_percentiles(s, "tpot_ms", r.tpot_s, 1e3);
    add_percentiles(s, "itl_ms", r.itl_s, 1e3);
    add_percentiles(s, "e2e_latency_s", r.e2e_s, 1.0);
    if (r.kv_transfer_s.max > 0) add_percentiles(s, "kv_transfer_ms", r.kv_transfer_s, 1e3);
    s.add("latency_conventions",
          std::string("ttft: arrival to first token, queueing included (ttft_service: from first "
                      "scheduled); tpot: per request, (e2e - ttft) / (output tokens - 1); itl: every "
                      "gap between consecutive tokens; e2e: arrival to last token"));
    s.add("slo.ttft_ms", r.slo_ttft_s * 1e3);
    s.add("slo.tpot_ms", r.slo_tpot_s * 1e3);
    s.add("slo_attainment", r.slo_attainment);
    s.add("goodput_requests_per_s", r.goodput_requests_per_s);
    if (!r.slo_classes.empty()) {
        std::vector<Record> rows;
        for (const auto& k : r.slo_classes) {
            Record c;
            c.add("name", k.name);
            c.add("requests", k.requests);
            c.add("slo.ttft_ms", k.slo_ttft_s * 1e3);
            c.add("slo.tpot_ms", k.slo_tpot_s * 1e3);
            c.add("slo_attainment", k.slo_attainment);
            c.add("goodput_requests_per_s", k.goodput_requests_per_s);
            add_percentiles(c, "ttft_ms", k.ttft_s, 1e3);
            add_percentiles(c, "tpot_ms", k.tpot_s, 1e3);
            rows.push_back(std::move(c));
        }
        rep.tables.emplace_back("slo_classes", std::move(rows));
    }
    s.add("preemptions", r.preemptions);
    s.add("prefix_hit_tokens", r.prefix_hit_tokens);
    s.add("prefix_hit_rate", r.prefix_hit_rate);
    add_kv_tiers(rep, r);
    s.add("kv_utilization_mean", r.kv_utilization_mean);
    s.add("kv_utilization_max", r.kv_utilization_max);
    s.add("kv_blocks_per_replica", r.kv_blocks_per_replica);
    s.add("kv_tokens_per_replica", r.kv_tokens_per_replica);
    s.add("weight_bytes_per_gpu", r.weight_bytes_per_gpu);
    s.add("batch_size_mean", r.batch_size_mean);
    s.add("batch_tokens_mean", r.batch_tokens_mean);
    s.add("batch_decodes_mean", r.batch_decodes_mean);
    s.add("iteration_s_mean", r.iteration_s_mean);
    s.add("iterations", r.iterations);
    s.add("events", static_cast<int64_t>(r.events));
    s.add("cost_cache_entries", r.cost_cache_entries);
    if (r.lora_loads >= 0) s.add("lora_loads", r.lora_loads);
    if (const auto& a = r.autoscale) {
        s.add("autoscale.gpu_hours", a->gpu_hours);
        s.add("autoscale.replicas_mean", a->replicas_mean);
        s.add("autoscale.replicas_peak", a->replicas_peak);
        s.add("autoscale.scale_ups", a->scale_ups);
        s.add("autoscale.scale_downs", a->scale_downs);
        s.add("autoscale.cold_start_s", a->cold_start_s);
    }
    s.add("cost_model", std::string(sim::name(o.cost_model)));
    s.add("outside_calibrated_range", r.op_sources.outside_all());
    add_op_costs(s, r.op_sources, o.cost_model);
}

}  // namespace

// Stable across runs and platforms: every serving key's value, in declaration order.
uint64_t serving_hash(const workloads::serving::ServingPlan& p) {
    sim::StableHash h;
    const std::vector<workloads::serving::Pool> pools = p.pools();
    // The keys of the prefill and decode pools count only when the plan has them.
    auto absent_pool = [&](const std::string& path) {
        for (const char* role : {"prefill", "decode"}) {
            const std::string key = std::string("serving.disaggregation.") + role;
            if (path.rfind(key + ".", 0) == 0)
                return std::none_of(pools.begin(), pools.end(),
                                    [&](const workloads::serving::Pool& pool) { return pool.key == key; });
        }
        return false;
    };
    for (const auto& k : serving_plan_keys()) {
        if (absent_pool(k.info.path)) continue;
        // Speculative decoding's keys (added after hashes were pinned) count only when it is on.
        if (k.info.path.rfind("serving.speculative.", 0) == 0 && !p.speculative.enabled()) continue;
        if (k.info.path.rfind("serving.lora.", 0) == 0 && !p.lora.enabled()) continue;  // likewise
        if (k.info.path.rfind("serving.autoscale.", 0) == 0 && !p.autoscale.enabled()) continue;
        if (k.info.path == "serving.speculative.acceptance_profile" && p.speculative.acceptance_profile.empty())
            continue;
        if (k.info.path == "serving.kv_offload" && !(p.kv.offload_bytes > 0)) continue;
        if (k.info.path == "serving.kv_offload_ssd" && !(p.kv.offload_ssd_bytes > 0)) continue;
        if (k.info.path == "serving.kv_store" && !(p.kv.store_bytes > 0)) continue;
        if ((k.info.path == "serving.kv_offload_copy" || k.info.path == "serving.kv_offload_load") && !p.kv.any_tier())
            continue;
        if (k.info.path == "serving.kv_offload_chunk" && p.kv.offload_chunk == 0) continue;  // added later
        if (k.info.path == "serving.kv_offload_store_decode" && p.kv.offload_store_decode) continue;
        if (k.info.path == "serving.kv_offload_store" && p.kv.offload_store == "async") continue;
        // The multi-turn keys (added after hashes were pinned) count only when set.
        const auto& sessions = p.traffic.synthetic.sessions;
        if (k.info.path.rfind("traffic.sessions.first_prompt", 0) == 0 && !sessions.first_prompt_set() &&
            !sessions.first_prompt_scaled)
            continue;
        if (k.info.path == "traffic.sessions.turns_max" && sessions.turns_max == 0) continue;
        if (k.info.path == "traffic.sessions.conversations" && sessions.conversations == 0) continue;
        if ((k.info.path == "traffic.peak_to_trough" || k.info.path == "traffic.period" ||
             k.info.path == "traffic.peak_at") &&
            p.traffic.synthetic.arrival.kind != workloads::serving::ArrivalKind::Diurnal)
            continue;
        h.add(k.info.path);
        std::string v = format_value(k.get(p));
        // A trace is named by its file name: where the scenario was loaded from must not matter.
        if (k.info.path == "traffic.trace") v = v.substr(v.find_last_of('/') + 1);
        h.add(v);
    }
    for (const auto& c : p.slo.classes) {
        h.add("slo.classes." + c.name);
        h.add(format_value(c.ttft_s));
        h.add(format_value(c.tpot_s));
    }
    return h.value();
}

std::string comm_column(GroupKind g) { return std::string(sim::name(g)) + "_comm_s"; }

void add_comm_columns(Record& x, const workloads::StageReport& st, const std::vector<GroupKind>& kinds) {
    static const GroupKind always[] = {GroupKind::tp, GroupKind::cp, GroupKind::pp, GroupKind::dp, GroupKind::ep};
    for (GroupKind g : always) x.add(comm_column(g), st.comm(g));
    for (GroupKind g : kinds)
        if (std::find(std::begin(always), std::end(always), g) == std::end(always)) x.add(comm_column(g), st.comm(g));
}

std::vector<GroupKind> comm_kinds_of(const std::vector<workloads::StageReport>& stages) {
    std::vector<GroupKind> kinds;
    for (int g = 0; g < models::kGroupKinds; ++g)
        for (const auto& st : stages)
            if (st.comm(static_cast<GroupKind>(g)) > 0) {
                kinds.push_back(static_cast<GroupKind>(g));
                break;
            }
    return kinds;
}

const FieldValue* Record::find(const std::string& name) const {
    for (const auto& [k, v] : fields)
        if (k == name) return &v;
    return nullptr;
}

namespace {

std::vector<std::string> plan_features(const Scenario& s) {
    if (const auto* t = s.training()) return training_features(*t);
    if (const auto* p = s.serving()) return serving_features(*p);
    return {};
}

void add_intervals(Record& s, const Scenario& scenario, const Outcome& outcome, const IntervalTable& bands) {
    std::vector<std::string> notes;
    for (const BandedMetric& m : headline_intervals(scenario, outcome, bands)) {
        s.add("interval_90." + m.key + ".low", m.interval.low);
        s.add("interval_90." + m.key + ".high", m.interval.high);
        const std::string note = m.interval.regime + ": " + m.interval.note;
        if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
    }
    if (!notes.empty()) s.add("interval_90.notes", notes);
}

}  // namespace

std::vector<BandedMetric> headline_intervals(const Scenario& scenario, const Outcome& outcome,
                                             const IntervalTable& bands) {
    std::vector<std::pair<std::string, std::pair<double, std::string>>> metrics;  // key, (value, regime)
    if (const auto* r = outcome.training(); r && !r->out_of_memory) {
        const std::string regime = training_regime(scenario.model);
        metrics = {{"step_time_s", {r->step_time_s, regime}},
                   {"tokens_per_s_per_gpu", {r->tokens_per_s_per_gpu, regime}}};
    }
    if (const auto* r = outcome.serving())
        metrics = {{"output_tokens_per_s", {r->output_tokens_per_s, serving_regime("output_tokens_per_s")}},
                   {"ttft_ms.p50", {r->ttft_s.p50 * 1e3, serving_regime("ttft_ms")}},
                   {"ttft_ms.p90", {r->ttft_s.p90 * 1e3, serving_regime("ttft_ms")}},
                   {"tpot_ms.p50", {r->tpot_s.p50 * 1e3, serving_regime("tpot_ms")}},
                   {"e2e_latency_s.p50", {r->e2e_s.p50, serving_regime("e2e_latency_s")}}};
    const std::vector<std::string> features = plan_features(scenario);
    std::vector<BandedMetric> out;
    for (const auto& [key, vr] : metrics)
        if (const auto i = interval_of(bands, vr.second, vr.first, scenario.cluster.accelerator, features))
            out.push_back({key, vr.first, *i});
    return out;
}

Report make_report(const Scenario& scenario, const Outcome& outcome, const IntervalTable* bands) {
    Report rep;
    Record& s = rep.summary;
    s.add("scenario", scenario.name);
    s.add("kind", std::string(sim::name(scenario.kind())));
    s.add("model", scenario.model.id);
    s.add("accelerator", scenario.cluster.accelerator.id);
    s.add("gpus", static_cast<int64_t>(scenario.cluster.gpus()));
    char hash[24];
    if (const auto* t = scenario.training()) {
        std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(t->hash()));
        s.add("stack", t->stack_preset.empty() ? std::string("defaults") : t->stack_preset);
    } else if (const auto* rl = scenario.rl()) {
        std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(rl_hash(*rl)));
        s.add("stack", rl->trainer.stack_preset.empty() ? std::string("defaults") : rl->trainer.stack_preset);
        s.add("engine", rl->rollout.engine.preset.empty() ? std::string("defaults") : rl->rollout.engine.preset);
    } else {
        const auto& p = *scenario.serving();
        std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(serving_hash(p)));
        s.add("engine", p.engine.preset.empty() ? std::string("defaults") : p.engine.preset);
        s.add("policy", p.batching.policy);
    }
    s.add("plan_hash", std::string(hash));
    s.add("device_model", scenario.cluster.accelerator.device_model);
    if (!outcome.violations.empty()) {
        std::vector<std::string> v;
        for (const auto& x : outcome.violations) v.push_back(x.key + ": " + x.message);
        s.add("violations", v);
        return rep;
    }
    if (const auto* r = outcome.training()) add_training(rep, outcome, *r);
    if (outcome.run) add_run(rep, *outcome.run);
    if (const auto* r = outcome.serving()) add_serving(rep, outcome, *r);
    if (const auto* r = outcome.rl()) add_rl(rep, outcome, *r);
    if (bands && !bands->empty()) add_intervals(s, scenario, outcome, *bands);
    return rep;
}

}  // namespace fathom::plans
