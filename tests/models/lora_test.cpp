// LoRA fine-tuning (models/llm/lora.h): adapter GEMMs beside the frozen projections, no weight
// gradients for the base, states for the adapters only; each number against a hand derivation.
#include "models/llm/lora.h"

#include "hardware/network/network_model.h"
#include "models/cost/cost_model.h"
#include "models/llm/dense_layer.h"
#include "plans/constraints.h"
#include "tests/support/fixtures.h"
#include "tests/support/pipeline_fixture.h"
#include "workloads/training/step_costs.h"
#include "workloads/training/training_memory.h"

#include <catch2/catch.hpp>

#include <string>

using namespace fathom;
using models::GradKind;
using models::OpRole;

TEST_CASE("LoRA adds two adapter GEMMs per projection and drops the base weight gradients", "[models][lora]") {
    // The test bed's layer: hidden 2048, 16 heads of 128 (no GQA), MLP 8192 (GELU): projections
    // QKV 2048 -> 6144, out 2048 -> 2048, FC1 2048 -> 8192, FC2 8192 -> 2048. At rank 8 the
    // adapters hold 8 x ((2048 + 6144) + (2048 + 2048) + (2048 + 8192) + (8192 + 2048)) = 262144
    // parameters, and for T tokens add 2 T x 8 x (k + n) forward FLOPs per projection.
    const auto model = testing::pipeline_model();
    models::LayerInputs in;
    in.batch = models::TokenBatch::uniform(2, 2048, 2048);
    const double T = 4096;
    const auto fwd = models::dense_layer_forward(model, in);
    const auto lora = models::with_lora(fwd, 8);
    CHECK(models::lora_params(fwd, 8) == 262144.0);
    double adapter_flops = 0, base_flops = 0;
    int adapters = 0;
    for (const auto& op : lora.ops()) {
        if (op.role == OpRole::Lora) adapter_flops += op.flops, ++adapters;
        else if (op.kind == models::OpKind::Gemm) CHECK(op.frozen == models::lora_target(op.role));
    }
    for (const auto& op : fwd.ops()) base_flops += op.kind == models::OpKind::Gemm ? op.flops : 0.0;
    CHECK(adapters == 8);
    CHECK(adapter_flops == Approx(2 * T * 262144.0));
    CHECK(adapter_flops < 0.01 * base_flops);  // rank 8 adapters beside hidden-size projections
    // Backward: the frozen projections compute input gradients only; each adapter both.
    const auto bwd = models::backward_program(lora);
    int base_wgrad = 0, adapter_wgrad = 0, adapter_dgrad = 0;
    for (const auto& s : bwd.steps) {
        if (s.kind != models::ProgramStep::Kind::Compute || s.op.kind != models::OpKind::Gemm) continue;
        const bool adapter = s.op.role == OpRole::Lora;
        if (s.grad == GradKind::Weight) (adapter ? adapter_wgrad : base_wgrad)++;
        else if (adapter) ++adapter_dgrad;
    }
    CHECK(base_wgrad == 0);
    CHECK(adapter_wgrad == 8);
    CHECK(adapter_dgrad == 8);
    // The embedding and output layer are frozen too: no weight-gradient work left.
    CHECK(models::frozen(models::embedding_backward(model, in)).ops().empty());
    for (const auto& s : models::backward_program(models::frozen(models::head_forward(model, in))).steps)
        CHECK(s.grad != GradKind::Weight);
}

TEST_CASE("LoRA states and step time, by hand", "[workloads][lora]") {
    const auto model = testing::pipeline_model();
    auto cluster = testing::pipeline_cluster();
    workloads::TrainingPlan full = testing::pipeline_plan(1, "1f1b");
    full.layout.pp = 1;
    full.layout.dp = 4;
    full.training.global_batch = 16;
    workloads::TrainingPlan lora = full;
    lora.training.lora_rank = 8;
    // States of the one stage (8 layers, embedding + output layer 2 x 128 x 2048 = P_e): frozen
    // weights in bf16 2 P plus the adapters' 2 A, gradients 4 A and Adam 12 A (no ZeRO), A = 8 x
    // 262144.
    const double P = 8 * model.layer_params() + 2 * 128.0 * 2048, A = 8 * 262144.0;
    const auto m = workloads::estimate_training_memory(model, cluster, lora).stages[0].memory;
    CHECK(m.weights == Approx(2 * P + 2 * A));
    CHECK(m.gradients == Approx(4 * A));
    CHECK(m.optimizer == Approx(12 * A));
    // A layer's backward: the full backward minus the base weight gradients plus the adapters'
    // backward GEMMs; the forward gains the adapters' forward GEMMs.
    const auto cost = models::make_roofline_cost(cluster.accelerator, models::Load::Sustained);
    const auto network = hardware::make_analytical_network(cluster);
    workloads::ProgramCoster coster(*cost, *network, full.layout);
    const auto cf = workloads::cost_training_step(model, full, coster);
    const auto cl = workloads::cost_training_step(model, lora, coster);
    const models::LayerInputs in = workloads::microbatch_inputs(model, full);
    const auto fwd = models::dense_layer_forward(model, in);
    double base_wgrad = 0, adapter_fwd = 0, adapter_bwd = 0;
    for (const auto& op : models::backward_program(fwd).only({GradKind::Weight}).ops()) base_wgrad += cost->seconds(op);
    for (const auto& op : models::with_lora(fwd, 8).ops())
        adapter_fwd += op.role == OpRole::Lora ? cost->seconds(op) : 0.0;
    for (const auto& op : models::backward_program(models::with_lora(fwd, 8)).ops())
        adapter_bwd += op.role == OpRole::Lora ? cost->seconds(op) : 0.0;
    const size_t F = workloads::pass_index(workloads::PassKind::Forward),
                 B = workloads::pass_index(workloads::PassKind::Backward);
    CHECK(cl.dense.pass[F].compute == Approx(cf.dense.pass[F].compute + adapter_fwd).epsilon(1e-9));
    CHECK(cl.dense.pass[B].compute == Approx(cf.dense.pass[B].compute - base_wgrad + adapter_bwd).epsilon(1e-9));
    // Only the adapters' gradients are reduced over the data-parallel group.
    CHECK(cl.dense.params == Approx(262144.0));
    const auto rf = testing::predict(model, cluster, full), rl = testing::predict(model, cluster, lora);
    CHECK(rl.step_time_s < rf.step_time_s);
    // Model FLOPs: full training 3 x forward per token; LoRA 2 x forward (no base weight gradients)
    // plus 6 per adapter parameter (8 layers x 262144 at tp 1), so MFU counts only work done.
    const double tokens = 16.0 * 2048, per_token = model.forward_flops_per_token(2048);
    CHECK(rf.model_flops_per_step == Approx(3 * per_token * tokens));
    CHECK(rl.model_flops_per_step == Approx((2 * per_token + 6 * 8 * 262144.0) * tokens));
    CHECK(rl.stages[0].comm(models::GroupKind::dp) < 0.01 * rf.stages[0].comm(models::GroupKind::dp) + 1e-9);
    // Not on mixture-of-experts models yet: the check names the key.
    models::ModelSpec moe = model;
    moe.ffn = 0;
    moe.activation = models::Activation::Swiglu;
    moe.moe.num_experts = 4;
    moe.moe.top_k = 1;
    moe.moe.expert_ffn = 1024;
    const auto v = plans::check_training_plan(moe, cluster, lora);
    REQUIRE_FALSE(v.empty());
    CHECK(v.front().key == "training.lora_rank");
}
