#include "plans/constraints.h"

#include <numeric>

#include "workloads/training/schedules/pipeline_schedule.h"

namespace fathom::plans {

std::vector<Violation> check_training_plan(const models::ModelSpec& m, const hardware::ClusterSpec& c,
                                           const workloads::TrainingPlan& p) {
    std::vector<Violation> v;
    auto add = [&v](std::string key, std::string msg) { v.push_back({std::move(key), std::move(msg)}); };
    const auto str = [](auto x) { return std::to_string(x); };
    for (auto [key, val] : {std::pair<const char*, int>{"dp", p.dp}, {"tp", p.tp}, {"pp", p.pp}, {"vp", p.vp},
                            {"cp", p.cp}, {"micro_batch_size", p.micro_batch}, {"global_batch_size", p.global_batch}}) {
        if (val < 1) add(key, std::string(key) + " must be >= 1, got " + str(val));
    }
    if (!v.empty()) return v;
    if (p.gpus() != c.gpus())
        add("dp", "plan uses dp x tp x pp x cp = " + str(p.dp) + " x " + str(p.tp) + " x " + str(p.pp) + " x " +
                      str(p.cp) + " = " + str(p.gpus()) + " GPUs but the cluster has " + str(c.gpus()));
    if (m.heads % p.tp != 0) add("tp", "tp = " + str(p.tp) + " does not divide the " + str(m.heads) + " attention heads");
    if (m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0)
        add("tp", "tp = " + str(p.tp) + " and the " + str(m.kv_heads) + " key/value heads do not divide one another");
    if (m.ffn % p.tp != 0) add("tp", "tp = " + str(p.tp) + " does not divide the MLP width " + str(m.ffn));
    const long stages = static_cast<long>(p.pp) * p.vp;
    if (!p.layers_per_virtual_stage.empty()) {
        if (static_cast<long>(p.layers_per_virtual_stage.size()) != stages)
            add("layers_per_stage", "needs pp x vp = " + str(stages) + " entries, got " +
                                        str(p.layers_per_virtual_stage.size()));
        else if (std::accumulate(p.layers_per_virtual_stage.begin(), p.layers_per_virtual_stage.end(), 0L) != m.layers)
            add("layers_per_stage", "entries must sum to the model's " + str(m.layers) + " layers");
    } else if (m.layers % stages != 0) {
        add("pp", "the model's " + str(m.layers) + " layers are not divisible by pp x vp = " + str(p.pp) + " x " +
                      str(p.vp) + " = " + str(stages));
    }
    if (p.global_batch % (p.dp * p.micro_batch) != 0)
        add("global_batch_size", "global batch " + str(p.global_batch) + " is not a multiple of dp x micro_batch_size = " +
                                     str(p.dp * p.micro_batch));
    if (p.seq_len < 1) add("seq_len", "seq_len must be >= 1");
    else if (p.seq_len % p.cp != 0) add("cp", "cp = " + str(p.cp) + " does not divide seq_len " + str(p.seq_len));
    if (p.zero_stage < 0 || p.zero_stage > 3) add("zero_stage", "zero_stage must be 0, 1, 2 or 3");
    const auto* sched = workloads::schedule_registry().find(p.schedule);
    if (!sched) {
        add("schedule", "unknown pipeline schedule '" + p.schedule + "'; valid: " + workloads::schedule_registry().names());
    } else if (p.global_batch % (p.dp * p.micro_batch) == 0) {
        const std::string why = sched->factory()->check(p.pp, p.vp, p.microbatches());
        if (!why.empty()) add(p.vp > 1 ? "vp" : "schedule", why);
    }
    if (p.dtype == hardware::Dtype::fp8 && !c.accelerator.has(hardware::Dtype::fp8))
        add("dtype", "accelerator '" + c.accelerator.id + "' has no fp8 tensor cores");
    return v;
}

}  // namespace fathom::plans
