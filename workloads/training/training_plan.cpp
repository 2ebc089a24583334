#include "workloads/training/training_plan.h"

#include "hardware/spec.h"
#include "sim/stable_hash.h"

#include <cstdio>

namespace fathom::workloads {

std::string TrainingPlan::describe() const {
    const std::string ep = layout.ep > 1 || layout.etp > 1
                               ? "  ep " + std::to_string(layout.ep) + " (etp " + std::to_string(layout.etp) + ")"
                               : std::string();
    const std::string lora = training.lora_rank > 0 ? "  lora " + std::to_string(training.lora_rank) : std::string();
    const std::string block = training.recompute_num_layers > 0
                                  ? " (" + std::to_string(training.recompute_num_layers) + " layers per piece)"
                                  : std::string();
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "dp %d  tp %d%s  pp %d  vp %d  cp %d%s  micro-batch %d  global batch %d  seq %lld  %s  zero %d  "
                  "recompute %s%s%s%s%s  %s",
                  layout.dp, layout.tp, layout.sharding().sequence_parallel ? "+sp" : "", layout.pp, layout.vp,
                  layout.cp, ep.c_str(), training.micro_batch, training.global_batch,
                  static_cast<long long>(training.seq_len), sim::name(stack.kernels.gemm_dtype), training.zero_stage,
                  sim::name(training.recompute), block.c_str(), training.recompute_moe ? "+moe" : "",
                  training.recompute_mla_up_proj ? "+mla_up_proj" : "", lora.c_str(), training.schedule.c_str());
    return buf;
}

uint64_t TrainingPlan::hash() const {
    sim::StableHash h;
    std::apply([&h](const auto&... x) { (h.add(x), ...); }, layout.tie());
    std::apply([&h](const auto&... x) { (h.add(x), ...); }, training.tie());
    std::apply([&h](const auto&... x) { (h.add(x), ...); }, stack.tie());
    // Added after the hashes were pinned: hashed only when set, so that every earlier plan keeps its hash.
    if (training.recompute_num_layers > 0) h.add(training.recompute_num_layers);
    if (stack.activation_offload != ActivationOffload::None) h.add(static_cast<int>(stack.activation_offload));
    return h.value();
}

}  // namespace fathom::workloads
