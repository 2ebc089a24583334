// add_rl and rl_hash (plans/report.h): an RL outcome as report fields, and its plan's hash.
#include "plans/keys.h"
#include "plans/report.h"
#include "sim/stable_hash.h"

namespace fathom::plans {

uint64_t rl_hash(const workloads::rl::RlPlan& p) {
    sim::StableHash h;
    h.add(p.trainer.hash());
    h.add(serving_hash(p.rollout));
    for (const auto& k : rl_keys()) {
        h.add(k.info.path);
        h.add(format_value(k.get(p)));
    }
    return h.value();
}

void add_rl(Report& rep, const Outcome& o, const workloads::rl::RlReport& r) {
    Record& s = rep.summary;
    s.add("iteration_time_s", r.iteration_s);
    s.add("samples_per_s", r.samples_per_s);
    s.add("samples_per_s_per_gpu", r.samples_per_s_per_gpu);
    s.add("response_tokens_per_s", r.response_tokens_per_s);
    s.add("train_tokens_per_s", r.train_tokens_per_s);
    s.add("rollout_gpus", r.rollout_gpus);
    s.add("trainer_gpus", r.trainer_gpus);
    const auto& m = r.mean;
    s.add("breakdown.rollout_s", m.rollout_s);
    s.add("breakdown.long_tail_s", m.tail_s);
    s.add("breakdown.forward_s", m.forward_s);
    s.add("breakdown.update_s", m.update_s);
    s.add("breakdown.sync_s", m.sync_s);
    s.add("breakdown.offload_s", m.offload_s);
    s.add("utilization.rollout", r.pipeline.rollout_busy);
    s.add("utilization.trainer", r.pipeline.trainer_busy);
    s.add("staleness.mean", r.pipeline.mean_staleness);
    s.add("staleness.max", static_cast<int64_t>(r.pipeline.staleness_counts.size()) - 1);
    s.add("iterations_simulated", static_cast<int64_t>(r.phases.size()));
    s.add("mean_response_tokens", r.mean_response_tokens);
    s.add("shared_prompt_reduction", r.shared_prompt_reduction);
    s.add("update_sequences", r.update_sequences);
    s.add("optimizer_steps", r.optimizer_steps);
    s.add("forward_share", r.forward_share);
    s.add("sync_bytes", r.sync_bytes);
    s.add("out_of_memory", r.out_of_memory);
    const auto& g = r.rollout;
    s.add("rollout.output_tokens_per_s", g.output_tokens_per_s);
    s.add("rollout.prefix_hit_rate", g.prefix_hit_rate);
    s.add("rollout.preemptions", g.preemptions);
    s.add("rollout.batch_size_mean", g.batch_size_mean);
    s.add("rollout.kv_utilization_mean", g.kv_utilization_mean);
    s.add("rollout.tpot_ms.p50", g.tpot_s.p50 * 1e3);
    const auto& u = r.update;
    s.add("update.step_time_s", u.step_time_s);
    s.add("update.mfu", u.mfu);
    s.add("update.tokens_per_s_per_gpu", u.tokens_per_s_per_gpu);
    s.add("update.peak_memory_bytes", u.peak_memory_bytes);
    s.add("update.memory_capacity_bytes", u.memory_capacity_bytes);
    s.add("cost_model", std::string(sim::name(o.cost_model)));
    std::vector<Record> rows;
    for (size_t i = 0; i < r.pipeline.spans.size(); ++i) {
        const auto& sp = r.pipeline.spans[i];
        const auto& ph = r.phases[i];
        Record x;
        x.add("iteration", static_cast<int64_t>(i));
        x.add("version", static_cast<int64_t>(sp.version));
        x.add("staleness", static_cast<int64_t>(sp.staleness));
        x.add("rollout_start_s", sp.rollout_start);
        x.add("rollout_end_s", sp.rollout_end);
        x.add("train_start_s", sp.train_start);
        x.add("train_end_s", sp.train_end);
        x.add("sync_end_s", sp.sync_end);
        x.add("rollout_s", ph.rollout_s);
        x.add("long_tail_s", ph.tail_s);
        x.add("forward_s", ph.forward_s);
        x.add("update_s", ph.update_s);
        rows.push_back(std::move(x));
    }
    rep.tables.emplace_back("iterations", std::move(rows));
}

}  // namespace fathom::plans
