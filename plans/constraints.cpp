#include "plans/constraints.h"

#include <numeric>

#include "workloads/training/schedules/pipeline_schedule.h"

namespace fathom::plans {

std::vector<Violation> check_training_plan(const models::ModelSpec& m, const hardware::ClusterSpec& c,
                                           const workloads::TrainingPlan& p) {
    std::vector<Violation> v;
    auto add = [&v](std::string key, std::string msg) { v.push_back({std::move(key), std::move(msg)}); };
    const auto str = [](auto x) { return std::to_string(x); };
    for (auto [key, val] : {std::pair<const char*, int>{"dp", p.layout.dp}, {"tp", p.layout.tp}, {"pp", p.layout.pp}, {"vp", p.layout.vp},
                            {"cp", p.layout.cp}, {"micro_batch_size", p.training.micro_batch}, {"global_batch_size", p.training.global_batch}}) {
        if (val < 1) add(key, std::string(key) + " must be >= 1, got " + str(val));
    }
    if (!v.empty()) return v;
    if (p.gpus() != c.gpus())
        add("dp", "plan uses dp x tp x pp x cp = " + str(p.layout.dp) + " x " + str(p.layout.tp) + " x " + str(p.layout.pp) + " x " +
                      str(p.layout.cp) + " = " + str(p.gpus()) + " GPUs but the cluster has " + str(c.gpus()));
    if (m.heads % p.layout.tp != 0) add("tp", "tp = " + str(p.layout.tp) + " does not divide the " + str(m.heads) + " attention heads");
    if (m.kv_heads % p.layout.tp != 0 && p.layout.tp % m.kv_heads != 0)
        add("tp", "tp = " + str(p.layout.tp) + " and the " + str(m.kv_heads) + " key/value heads do not divide one another");
    if (m.ffn % p.layout.tp != 0) add("tp", "tp = " + str(p.layout.tp) + " does not divide the MLP width " + str(m.ffn));
    const long stages = static_cast<long>(p.layout.pp) * p.layout.vp;
    if (!p.training.layers_per_virtual_stage.empty()) {
        if (static_cast<long>(p.training.layers_per_virtual_stage.size()) != stages)
            add("layers_per_stage", "needs pp x vp = " + str(stages) + " entries, got " +
                                        str(p.training.layers_per_virtual_stage.size()));
        else if (std::accumulate(p.training.layers_per_virtual_stage.begin(), p.training.layers_per_virtual_stage.end(), 0L) != m.layers)
            add("layers_per_stage", "entries must sum to the model's " + str(m.layers) + " layers");
    } else if (m.layers % stages != 0) {
        add("pp", "the model's " + str(m.layers) + " layers are not divisible by pp x vp = " + str(p.layout.pp) + " x " +
                      str(p.layout.vp) + " = " + str(stages));
    }
    if (p.training.global_batch % (p.layout.dp * p.training.micro_batch) != 0)
        add("global_batch_size", "global batch " + str(p.training.global_batch) + " is not a multiple of dp x micro_batch_size = " +
                                     str(p.layout.dp * p.training.micro_batch));
    if (p.training.seq_len < 1) add("seq_len", "seq_len must be >= 1");
    else if (p.training.seq_len % p.layout.cp != 0) add("cp", "cp = " + str(p.layout.cp) + " does not divide seq_len " + str(p.training.seq_len));
    if (p.training.zero_stage < 0 || p.training.zero_stage > 3) add("zero_stage", "zero_stage must be 0, 1, 2 or 3");
    const auto* sched = workloads::schedule_registry().find(p.training.schedule);
    if (!sched) {
        add("schedule", "unknown pipeline schedule '" + p.training.schedule + "'; valid: " + workloads::schedule_registry().names());
    } else if (p.training.global_batch % (p.layout.dp * p.training.micro_batch) == 0) {
        const std::string why = sched->factory()->check(p.layout.pp, p.layout.vp, p.microbatches());
        if (!why.empty()) add(p.layout.vp > 1 ? "vp" : "schedule", why);
    }
    if (p.stack.kernels.gemm_dtype == hardware::Dtype::fp8 && !c.accelerator.has(hardware::Dtype::fp8))
        add("dtype", "accelerator '" + c.accelerator.id + "' has no fp8 tensor cores");
    return v;
}

}  // namespace fathom::plans
