// Mixture-of-experts and latent attention, each number against a published figure or a derivation
// in the comment: parameter counts of the catalog's MoE models, FLOPs per token against the counts
// measured.yaml's sources state, the MoE layer program's collectives and expert GEMMs,
// expert-parallel memory sharding and plan checks (the replay's side: moe_replay_test.cpp).
#include "models/llm/dense_layer.h"
#include "models/llm/moe_layer.h"
#include "models/memory/activation_memory.h"
#include "models/memory/memory_model.h"
#include "plans/constraints.h"
#include "tests/support/fixtures.h"
#include "tests/support/moe_fixture.h"
#include "tests/support/pipeline_fixture.h"
#include "workloads/training/moe_routing.h"
#include "workloads/training/stage_map.h"
#include "workloads/training/step_costs.h"
#include "workloads/training/training_memory.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace fathom;
using hardware::Collective;
using models::GroupKind;
using testing::catalog_model;
using testing::comms;
using testing::one_stage_plan;
using testing::small_moe;
using testing::sum_flops;

TEST_CASE("MoE and MLA parameter counts match the published totals", "[models][moe]") {
    // Published totals (model cards, technical reports; sources in models/catalog/*.yaml).
    CHECK(catalog_model("mixtral-8x7b").total_params(4096) / 1e9 == Approx(46.7).epsilon(0.005));
    CHECK(catalog_model("mixtral-8x7b").active_params(4096) / 1e9 == Approx(12.9).epsilon(0.01));
    CHECK(catalog_model("mixtral-8x22b").total_params(4096) / 1e9 == Approx(141).epsilon(0.005));
    CHECK(catalog_model("mixtral-8x22b").active_params(4096) / 1e9 == Approx(39).epsilon(0.01));
    CHECK(catalog_model("qwen3-30b-a3b").total_params(4096) / 1e9 == Approx(30.5).epsilon(0.005));
    CHECK(catalog_model("qwen3-30b-a3b").active_params(4096) / 1e9 == Approx(3.3).epsilon(0.03));
    CHECK(catalog_model("qwen3-235b-a22b").total_params(4096) / 1e9 == Approx(235).epsilon(0.005));
    CHECK(catalog_model("qwen3-235b-a22b").active_params(4096) / 1e9 == Approx(22).epsilon(0.03));
    CHECK(catalog_model("deepseek-v3").total_params(4096) / 1e9 == Approx(671).epsilon(0.002));
    CHECK(catalog_model("deepseek-v3").active_params(4096) / 1e9 == Approx(37).epsilon(0.02));
    CHECK(catalog_model("llama4-maverick").total_params(4096) / 1e9 == Approx(400).epsilon(0.005));
    CHECK(catalog_model("llama4-maverick").active_params(4096) / 1e9 == Approx(17).epsilon(0.03));
    CHECK(catalog_model("deepseek-v2").total_params(4096) / 1e9 == Approx(236).epsilon(0.005));
    CHECK(catalog_model("deepseek-v2").active_params(4096) / 1e9 == Approx(21).epsilon(0.03));
    CHECK(catalog_model("deepseek-v2-lite").total_params(4096) / 1e9 == Approx(15.7).epsilon(0.005));
    // DeepSeek and OpenAI count active parameters without the input embedding (a lookup).
    auto without_embedding = [](const models::ModelSpec& m) {
        return (m.active_params(4096) - m.embedding_params(4096)) / 1e9;
    };
    CHECK(without_embedding(catalog_model("deepseek-v2-lite")) == Approx(2.4).epsilon(0.03));
    CHECK(catalog_model("kimi-k2").total_params(4096) / 1e9 == Approx(1040).epsilon(0.02));
    CHECK(catalog_model("kimi-k2").active_params(4096) / 1e9 == Approx(32.6).epsilon(0.03));
    CHECK(catalog_model("grok-1").total_params(4096) / 1e9 == Approx(314).epsilon(0.01));
    CHECK(catalog_model("gpt-oss-120b").total_params(4096) / 1e9 == Approx(116.8).epsilon(0.005));
    CHECK(without_embedding(catalog_model("gpt-oss-120b")) == Approx(5.13).epsilon(0.01));
}

TEST_CASE("latent attention's projections, by hand for DeepSeek-V3", "[models][moe][mla]") {
    const auto& m = catalog_model("deepseek-v3");
    // q: 7168 x 1536 down, 1536 x 128 x 192 up; kv: 7168 x (512 + 64) down, 512 x 128 x (128 + 128)
    // up; output 128 x 128 x 7168.
    const double q = 7168.0 * 1536 + 1536.0 * 128 * 192;
    const double kv = 7168.0 * 576 + 512.0 * 128 * 256;
    const double o = 128.0 * 128 * 7168;
    CHECK(m.attention_gemm_params() == q + kv + o);
    // Attention FLOPs priced at the mean head dimension (192 + 128) / 2 = 160: 4 s^2 h d covers
    // QK^T (192) and PV (128) exactly.
    CHECK(m.attention_head_dim() == 160.0);
    CHECK(m.kv_heads == 128);  // the latent expands into one key/value head per head
    // Layers 0-2 dense, 3-60 MoE.
    CHECK_FALSE(m.is_moe_layer(2));
    CHECK(m.is_moe_layer(3));
    CHECK(m.moe_layers() == 58);
}

TEST_CASE("MoE FLOPs per token equal the counts measured.yaml's sources state", "[models][moe]") {
    // measured.yaml trn-mbridge260401-qwen3-30b-a3b-h100-16: the Megatron-Bridge count (causal
    // attention, 8 of 128 experts, logits) is 2.301e10 training FLOPs per token at seq 4096;
    // trn-mzoo-qwen3-235b-h100-256-pp8ep32: 1.480e11. Training = 3 x forward.
    CHECK(3 * catalog_model("qwen3-30b-a3b").forward_flops_per_token(4096, true) == Approx(2.301e10).epsilon(0.005));
    CHECK(3 * catalog_model("qwen3-235b-a22b").forward_flops_per_token(4096, true) == Approx(1.480e11).epsilon(0.005));
    // With full attention the same sources give 2.784e10 and 1.670e11.
    CHECK(3 * catalog_model("qwen3-30b-a3b").forward_flops_per_token(4096, false) == Approx(2.784e10).epsilon(0.005));
    CHECK(3 * catalog_model("qwen3-235b-a22b").forward_flops_per_token(4096, false) == Approx(1.670e11).epsilon(0.005));
}

TEST_CASE("the MoE layer program: dispatch, grouped experts, combine", "[models][moe]") {
    const models::ModelSpec m = small_moe();
    models::LayerInputs in;
    in.batch = models::TokenBatch::uniform(2, 2048, 2048);  // T = 4096 tokens
    in.shard.ep = 4;
    const double T = 4096, h = 2048, k = 2, ef = 1024;
    const auto fwd = models::moe_layer_forward(m, in);
    // Two all-to-alls on the EP group (dispatch, combine), each sending T k rows of h bf16 values.
    const auto a2a = comms(fwd, GroupKind::ep);
    REQUIRE(a2a.size() == 2);
    for (const auto& c : a2a) {
        CHECK(*c.collective == Collective::AllToAll);
        CHECK(*c.backward == Collective::AllToAll);
        CHECK(c.bytes == T * k * h * 2);
    }
    // Balanced routing: the rank's 16 / 4 = 4 experts see the T k rows it sends; grouped FC1 (gated
    // up, 2 ef wide) and FC2: 2 x rows x h x 3 ef FLOPs. Each of the 4 experts gets T k / 4 rows.
    const double rows = T * k;
    CHECK(sum_flops(fwd, models::OpRole::ExpertUp) + sum_flops(fwd, models::OpRole::ExpertDown) ==
          2 * rows * h * 3 * ef);
    for (const auto& op : fwd.ops())
        if (op.role == models::OpRole::ExpertUp) {
            CHECK(op.batch == 4);
            CHECK(op.m == static_cast<int64_t>(rows / 4));
        }
    CHECK(models::moe_expert_rows(m, in) == rows);
    // The router: [T, E] logits from [T, h].
    CHECK(sum_flops(fwd, models::OpRole::Router) == 2 * T * 16 * h);
    // The busiest rank at 1.5x the mean load: its expert work and receive size scale by 1.5.
    in.routing.busiest_rank_load = 1.5;
    const auto skewed = models::moe_layer_forward(m, in);
    CHECK(comms(skewed, GroupKind::ep)[0].bytes == 1.5 * T * k * h * 2);
    CHECK(sum_flops(skewed, models::OpRole::ExpertUp) == Approx(1.5 * sum_flops(fwd, models::OpRole::ExpertUp)));
    // Backward: the all-to-alls come back as all-to-alls (the gradients travel the same way).
    CHECK(comms(models::backward_program(fwd), GroupKind::ep).size() == 2);
    // The experts' grouped GEMMs run in the stack's expert kernel library; every other GEMM in the
    // vendor's.
    in.kernels.expert_gemm_kernel = models::GemmKernel::DeepGemm;
    int deepgemm = 0;
    for (const auto& op : models::moe_layer_forward(m, in).ops()) {
        if (op.kind != models::OpKind::Gemm) continue;
        const bool expert = op.role == models::OpRole::ExpertUp || op.role == models::OpRole::ExpertDown;
        CHECK((op.gemm_kernel == models::GemmKernel::DeepGemm) == expert);
        deepgemm += expert ? 1 : 0;
    }
    CHECK(deepgemm == 2);
}

TEST_CASE("expert-TP gathers are not GEMM-fused TP boundaries", "[models][moe][tp]") {
    // tp = etp = 2 with sequence parallelism: the attention block's all-gather before QKV and
    // reduce-scatter after the output projection are linear-layer TP boundaries (TP overlap fuses
    // them with those GEMMs); the token dispatcher's gather of the routed rows over the expert-TP
    // group and the scatter after the experts are plain NCCL calls in Megatron-Core
    // (token_dispatcher.py gather_from_sequence_parallel_region / reduce_scatter_to_sequence_parallel_region).
    // Forward and backward alike (the backward conjugates keep the mark).
    const models::ModelSpec m = small_moe();
    models::LayerInputs in;
    in.batch = models::TokenBatch::uniform(2, 2048, 2048);
    in.shard.tp = in.shard.etp = 2;
    in.shard.sequence_parallel = true;
    const auto fwd = models::moe_layer_forward(m, in);
    for (const auto& prog : {fwd, models::backward_program(fwd)}) {
        int fused = 0, plain = 0;
        for (const auto& c : comms(prog, GroupKind::tp)) (c.gemm_fused ? fused : plain) += 1;
        CHECK(fused == 2);
        CHECK(plain == 2);
    }
}

TEST_CASE("a small batch's grouped GEMMs run only the experts its tokens reach", "[models][moe]") {
    // Uniform routing: a token picks k distinct experts of E, so it misses a given expert with
    // probability 1 - k / E, and T tokens leave E (1 - k / E)^T of them idle. An idle expert's
    // weights are never loaded (a grouped GEMM has no tile for an empty group).
    const models::ModelSpec& mixtral = catalog_model("mixtral-8x7b");  // 8 experts, top-2
    const models::ModelSpec& qwen = catalog_model("qwen3-30b-a3b");    // 128 experts, top-8
    models::LayerInputs in;
    auto expert_gemm = [&](const models::ModelSpec& m) {
        for (const auto& op : models::moe_layer_forward(m, in).ops())
            if (op.role == models::OpRole::ExpertUp) return op;
        FAIL("no expert GEMM");
        return models::OpDesc{};
    };
    // One decode token: exactly k experts, each one row. Before this model the GEMM read all E
    // experts' weights: the measured Mixtral decode layer of one sequence (CUDA graph, H100,
    // hardware/calibration/h100-sxm-80gb/moe_layers.csv) took 456 us; pricing 8 experts predicted
    // 1,058 us (+137%), pricing 2 predicts 357 us.
    in.batch = models::TokenBatch::uniform(1, 1, 2048);
    CHECK(models::moe_active_experts(mixtral, in) == Approx(2.0));
    CHECK(expert_gemm(mixtral).batch == 2);
    CHECK(expert_gemm(mixtral).m == 1);
    CHECK(models::moe_active_experts(qwen, in) == Approx(8.0));
    CHECK(expert_gemm(qwen).batch == 8);
    // Eight tokens: 128 (1 - (120/128)^8) = 51.6 experts, 64 rows over 52 of them (2 rows each,
    // rounded up).
    in.batch = models::TokenBatch::uniform(8, 1, 2048);
    CHECK(models::moe_active_experts(qwen, in) == Approx(128.0 * (1.0 - std::pow(120.0 / 128.0, 8))));
    CHECK(expert_gemm(qwen).batch == 52);
    CHECK(expert_gemm(qwen).m == 2);
    // A training micro-batch reaches every expert: 128 batches of 4096 x 8 / 128 = 256 rows.
    in.batch = models::TokenBatch::uniform(1, 4096, 4096);
    CHECK(models::moe_active_experts(qwen, in) == Approx(128.0));
    CHECK(expert_gemm(qwen).batch == 128);
    CHECK(expert_gemm(qwen).m == 256);
    // Expert parallelism: EP 4 holds 32 experts a rank; 2 tokens on each of the 4 ranks reach
    // 128 (1 - (120/128)^8) / 4 = 12.9 of them in expectation (the rows a rank receives are
    // ep x its own: tokens = 4 x 16 rows / 8 = 8).
    in.batch = models::TokenBatch::uniform(2, 1, 2048);
    in.shard.ep = 4;
    CHECK(models::moe_active_experts(qwen, in) == Approx(32.0 * (1.0 - std::pow(120.0 / 128.0, 8))));
    CHECK(expert_gemm(qwen).batch == 13);
}

TEST_CASE("expert tensor parallelism gathers the routed rows over the TP group", "[models][moe]") {
    const models::ModelSpec m = small_moe();
    models::LayerInputs in;
    in.batch = models::TokenBatch::uniform(1, 4096, 4096);
    in.shard.tp = 2;
    in.shard.sequence_parallel = true;
    in.shard.ep = 2;
    in.shard.etp = 2;
    // Each rank routes its T / tp = 2048 tokens (4096 rows at top-2), sends them over EP, then the
    // TP pair all-gathers its received rows: 2 x 4096 rows of h bf16 (nccl-tests size: the gathered
    // buffer), reduce-scattered back after FC2. Experts are 1024 / 2 = 512 wide on each rank.
    const auto fwd = models::moe_layer_forward(m, in);
    CHECK(comms(fwd, GroupKind::ep)[0].bytes == 2048.0 * 2 * 2048 * 2);
    double gathered = 0;
    for (const auto& c : comms(fwd, GroupKind::tp))
        if (c.collective == Collective::AllGather && c.bytes == 2.0 * 4096 * 2048 * 2) gathered += 1;
    CHECK(gathered == 1);
    for (const auto& op : fwd.ops())
        if (op.role == models::OpRole::ExpertDown) CHECK(op.k == 512);
    CHECK(models::moe_expert_rows(m, in) == 2.0 * 4096);
}

TEST_CASE("expert states are sharded over the expert data-parallel group", "[models][moe][memory]") {
    // 8 MoE layers of 16 experts over ep 4 on 4 ranks (tp 1, dp 4): each rank holds 4 experts per
    // layer and is its own expert data-parallel group (edp = 4 / 4 = 1), so ZeRO-1 shards the dense
    // optimizer states by 4 and leaves the experts' whole.
    const models::ModelSpec m = small_moe();
    auto cluster = testing::pipeline_cluster();
    workloads::TrainingPlan p = one_stage_plan(4, 32);
    p.training.zero_stage = 1;
    CHECK(p.layout.group(GroupKind::edp).size == 1);
    CHECK(p.layout.group(GroupKind::ep).size == 4);
    auto sched = workloads::schedule_registry().get("1f1b").factory();
    const workloads::StageMap map(m, p, *sched);
    const double expert = 3.0 * 2048 * 1024;  // one gated expert
    CHECK(m.expert_params() == expert);
    CHECK(map.stage_expert_params(0) == 8 * 4 * expert);
    const double dense = map.stage_params(0);
    CHECK(dense == Approx(8 * (m.attention_params() + 2048.0 * 16) + 2 * 128.0 * 2048));
    const auto mem = workloads::estimate_training_memory(m, cluster, p).stages[0].memory;
    CHECK(mem.optimizer == Approx(12 * dense / 4 + 12 * 8 * 4 * expert));
    CHECK(mem.weights == Approx(2 * (dense + 8 * 4 * expert)));
    // ep 2 instead: each expert sits on two ranks (edp 2), its optimizer states halved by ZeRO-1.
    p.layout.ep = 2;
    const auto mem2 = workloads::estimate_training_memory(m, cluster, p).stages[0].memory;
    CHECK(mem2.optimizer == Approx(12 * dense / 4 + 12 * 8 * 8 * expert / 2));
}

TEST_CASE("MoE plan checks name the key at fault", "[plans][moe]") {
    const models::ModelSpec moe = small_moe();
    auto cluster = testing::pipeline_cluster();
    workloads::TrainingPlan p = one_stage_plan(1, 32);
    auto first_key = [&](const models::ModelSpec& m) {
        const auto v = plans::check_training_plan(m, cluster, p);
        return v.empty() ? std::string() : v.front().key;
    };
    p.layout.ep = 4;
    CHECK(first_key(moe).empty());
    CHECK(first_key(testing::pipeline_model()) == "parallel.ep");  // a dense model has no experts
    p.layout.ep = 3;
    CHECK(first_key(moe) == "parallel.ep");  // 3 does not divide 16 experts
    p.layout.ep = 1;
    p.layout.dp = 2;
    p.layout.tp = 2;
    p.training.global_batch = 16;
    CHECK(first_key(moe) == "parallel.sequence_parallel");  // MoE with tp > 1 needs SP
    p.layout.sequence_parallel = true;
    CHECK(first_key(moe).empty());
    p.layout.etp = 4;
    CHECK(first_key(moe) == "parallel.etp");  // 1 or tp only
    p.layout.etp = 1;
    p.training.moe_routing.expert_loads = {1, 2};
    CHECK(first_key(moe) == "training.moe_expert_loads");  // one entry per expert (16)
    p.training.moe_routing.expert_loads.clear();
    p.training.moe_routing.capacity_factor = 0.5;
    CHECK(first_key(moe) == "training.moe_capacity_factor");  // drops even when balanced
}
