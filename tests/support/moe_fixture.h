#pragma once
// A small mixture-of-experts test bed shared by the MoE tests (tests/models/moe_test.cpp and
// tests/workloads/moe_replay_test.cpp), and helpers to read a layer program.
#include "models/program/layer_program.h"
#include "tests/support/fixtures.h"
#include "tests/support/pipeline_fixture.h"
#include "workloads/training/training_plan.h"

#include <string>
#include <vector>

namespace fathom::testing {

inline const models::ModelSpec& catalog_model(const std::string& id) { return source_catalog().model(id); }

// A small MoE model on the pipeline test bed: 8 layers, all MoE, 16 SwiGLU experts of width 1024,
// top-2.
inline models::ModelSpec small_moe() {
    models::ModelSpec m = pipeline_model();
    m.ffn = 0;
    m.activation = models::Activation::Swiglu;
    m.moe.num_experts = 16;
    m.moe.top_k = 2;
    m.moe.expert_ffn = 1024;
    return m;
}

// One pipeline stage of the test bed's 4 GPUs as dp 4 with experts spread over `ep` ranks.
inline workloads::TrainingPlan one_stage_plan(int ep, int global_batch) {
    workloads::TrainingPlan p = pipeline_plan(1, "1f1b");
    p.layout.pp = 1;
    p.layout.dp = 4;
    p.layout.ep = ep;
    p.training.global_batch = global_batch;
    return p;
}

inline double sum_flops(const models::LayerProgram& p, models::OpRole role) {
    double f = 0;
    for (const auto& op : p.ops())
        if (op.role == role) f += op.flops;
    return f;
}

inline std::vector<models::CommStep> comms(const models::LayerProgram& p, models::GroupKind g) {
    std::vector<models::CommStep> out;
    for (const auto& s : p.steps)
        if (s.kind == models::ProgramStep::Kind::Comm && s.comm.group == g) out.push_back(s.comm);
    return out;
}

}  // namespace fathom::testing
