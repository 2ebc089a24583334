// Mixture-of-experts and latent attention, each number against a published figure or a derivation
// in the comment: parameter counts of the catalog's MoE models, FLOPs per token against the counts
// measured.yaml's sources state, the MoE layer program's collectives and expert GEMMs, routing
// load, expert-parallel memory sharding, plan checks, and the replay's expert all-to-all stream.
#include "models/llm/dense_layer.h"
#include "models/llm/moe_layer.h"
#include "models/memory/activation_memory.h"
#include "models/memory/memory_model.h"
#include "plans/constraints.h"
#include "tests/support/fixtures.h"
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

namespace {

const models::ModelSpec& catalog_model(const std::string& id) { return testing::source_catalog().model(id); }

// A small MoE model on the pipeline test bed: 8 layers, all MoE, 16 SwiGLU experts of width 1024,
// top-2.
models::ModelSpec small_moe() {
    models::ModelSpec m = testing::pipeline_model();
    m.ffn = 0;
    m.activation = models::Activation::Swiglu;
    m.moe.num_experts = 16;
    m.moe.top_k = 2;
    m.moe.expert_ffn = 1024;
    return m;
}

// One pipeline stage of the test bed's 4 GPUs as dp 4 with experts spread over `ep` ranks.
workloads::TrainingPlan one_stage_plan(int ep, int global_batch) {
    workloads::TrainingPlan p = testing::pipeline_plan(1, "1f1b");
    p.layout.pp = 1;
    p.layout.dp = 4;
    p.layout.ep = ep;
    p.training.global_batch = global_batch;
    return p;
}

double sum_flops(const models::LayerProgram& p, models::OpRole role) {
    double f = 0;
    for (const auto& op : p.ops())
        if (op.role == role) f += op.flops;
    return f;
}

std::vector<models::CommStep> comms(const models::LayerProgram& p, GroupKind g) {
    std::vector<models::CommStep> out;
    for (const auto& s : p.steps)
        if (s.kind == models::ProgramStep::Kind::Comm && s.comm.group == g) out.push_back(s.comm);
    return out;
}

}  // namespace

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

TEST_CASE("the replay runs the expert all-to-alls on their own stream", "[workloads][moe]") {
    // On links made slow for the test: with ep 4 each rank computes the same routed rows as with
    // ep 1 (balanced routing), its EP stream is busy, and nothing hides the all-to-alls: the step
    // is at least the compute plus them.
    const models::ModelSpec m = small_moe();
    auto cluster = testing::pipeline_cluster();
    cluster.scale_up.bandwidth_per_gpu = cluster.scale_up.link_bandwidth = 50e9;
    workloads::TrainingPlan p = one_stage_plan(1, 16);
    const auto alone = testing::predict(m, cluster, p);
    p.layout.ep = 4;
    const auto spread = testing::predict(m, cluster, p);
    CHECK(alone.stages[0].comm(models::GroupKind::ep) == 0);
    CHECK(spread.stages[0].comm(models::GroupKind::ep) > 0);
    CHECK(spread.stages[0].compute_s == Approx(alone.stages[0].compute_s).epsilon(0.05));
    CHECK(spread.step_time_s >= spread.stages[0].compute_s + 0.99 * spread.stages[0].comm(models::GroupKind::ep));
    // Regression: ZeRO-3 without gradient-reduction overlap once deadlocked the dp stream (its
    // reduce-scatters held back behind gathers the backward waits for).
    p.training.zero_stage = 3;
    p.stack.dp_comm_overlap = false;
    const auto z3 = testing::predict(m, cluster, p);
    CHECK(z3.step_time_s > 0);
}

TEST_CASE("routing skew and capacity: the busiest expert-parallel rank's load", "[workloads][moe]") {
    models::ModelSpec m = small_moe();
    workloads::MoeRouting r;
    // Balanced: every rank holds the mean.
    CHECK(workloads::busiest_rank_load(m, 4, r) == Approx(1.0));
    // Measured loads, 4 experts over 2 ranks (experts 0-1 on rank 0): loads 3, 1, 1, 1 give shares
    // 1/2, 1/6, 1/6, 1/6; rank 0 holds 2/3 against a mean of 1/2: load 4/3.
    m.moe.num_experts = 4;
    r.expert_loads = {3, 1, 1, 1};
    CHECK(workloads::busiest_rank_load(m, 2, r) == Approx(4.0 / 3));
    // Capacity factor 1.2 caps each expert at 1.2 / 4 = 0.3 of the tokens: rank 0 takes
    // 0.3 + 1/6 = 0.4667, rank 1 1/3; the busiest holds 0.4667 / 0.5 = 0.933 of the mean (drops).
    r.capacity_factor = 1.2;
    CHECK(workloads::busiest_rank_load(m, 2, r) == Approx((0.3 + 1.0 / 6) * 2));
    // Zipf s = 1 over 8 experts, one per rank: placement does not matter; the busiest rank holds
    // the top expert, 1 / H_8 = 1 / 2.717857 of the tokens, against 1/8: load 8 / H_8 = 2.9435.
    m.moe.num_experts = 8;
    r = workloads::MoeRouting{};
    r.zipf = 1.0;
    CHECK(workloads::busiest_rank_load(m, 8, r) == Approx(8 / 2.717857).epsilon(1e-5));
    // One rank holding every expert sees the mean, whatever the skew.
    CHECK(workloads::busiest_rank_load(m, 1, r) == Approx(1.0));
    // The shares of one placement sum to 1 and are a permutation of the Zipf popularities.
    const auto s = workloads::expert_shares(m, r, 3);
    double sum = 0, top = 0;
    for (double x : s) sum += x, top = std::max(top, x);
    CHECK(sum == Approx(1.0));
    CHECK(top == Approx(1 / 2.717857).epsilon(1e-5));
    // The step follows: a skewed router makes the step slower than balanced routing.
    auto cluster = testing::pipeline_cluster();
    workloads::TrainingPlan p = one_stage_plan(4, 16);
    const models::ModelSpec moe = small_moe();
    const double balanced = testing::predict(moe, cluster, p).step_time_s;
    p.training.moe_routing.zipf = 1.0;
    CHECK(testing::predict(moe, cluster, p).step_time_s > 1.1 * balanced);
}

TEST_CASE("DeepEP sends a token once per destination rank or node; EP overlap hides the all-to-alls", "[models][moe]") {
    // Expected destinations among p equal parts of E experts, k drawn without replacement:
    // p (1 - C(E - E/p, k) / C(E, k)). One expert per part: exactly k; one part: 1; E 4, k 2, p 2:
    // 2 (1 - 1/6) = 5/3.
    CHECK(models::moe_destinations(16, 2, 16) == Approx(2.0));
    CHECK(models::moe_destinations(16, 2, 1) == Approx(1.0));
    CHECK(models::moe_destinations(4, 2, 2) == Approx(5.0 / 3));
    const models::ModelSpec m = small_moe();  // 16 experts, top-2
    models::LayerInputs in;
    in.batch = models::TokenBatch::uniform(1, 4096, 4096);
    in.shard.ep = 16;
    in.shard.ep_ranks_per_node = 8;
    in.shard.ep_nodes = 2;
    const double row = 2048.0 * 2, T = 4096;
    CHECK(models::moe_dispatch_bytes(m, in) == Approx(T * 2 * row));  // all-to-all: every pair
    in.shard.dispatcher = models::MoeDispatcher::DeepEp;
    // Two nodes of 8 experts: a token reaches 2 (1 - C(8,2)/C(16,2)) = 1.5333 nodes, half of them
    // remote; the pairwise model sends (n - g)/n = 1/2 of its buffer across nodes, so the buffer
    // is 1.5333 x 1/2 x 2 = 1.5333 rows per token.
    CHECK(models::moe_dispatch_bytes(m, in) == Approx(T * (2 * (1 - 28.0 / 120)) * row));
    // Within one node of 16 ranks (one expert each): once per destination rank, k = 2 of them.
    in.shard.ep_ranks_per_node = 16;
    in.shard.ep_nodes = 1;
    CHECK(models::moe_dispatch_bytes(m, in) == Approx(T * 2 * row));
    // In the replay: with EP overlap the all-to-alls leave the layer chain, and the step is shorter.
    auto cluster = testing::pipeline_cluster();
    cluster.scale_up.bandwidth_per_gpu = cluster.scale_up.link_bandwidth = 50e9;
    workloads::TrainingPlan p = one_stage_plan(4, 16);
    const auto blocking = testing::predict(m, cluster, p);
    p.stack.ep_comm_overlap = true;
    const auto overlapped = testing::predict(m, cluster, p);
    CHECK(overlapped.stages[0].comm(models::GroupKind::ep) == Approx(blocking.stages[0].comm(models::GroupKind::ep)));
    CHECK(overlapped.step_time_s < blocking.step_time_s - 0.5 * blocking.stages[0].comm(models::GroupKind::ep));
}

TEST_CASE("serving's TP-split experts: every rank routes all tokens, partial sums all-reduced",
          "[models][moe][serving]") {
    // vLLM's fused MoE under TP: no sequence parallelism, each of the tp ranks holds 1/tp of every
    // expert's width and sees all T tokens: T k rows, no gather, and one all-reduce of [T, h]
    // after the experts (besides the attention's).
    const models::ModelSpec m = small_moe();
    models::LayerInputs in;
    in.batch = models::TokenBatch::uniform(1, 512, 512);
    in.shard.tp = in.shard.etp = 2;
    const auto fwd = models::moe_layer_forward(m, in);
    CHECK(models::moe_expert_rows(m, in) == 512.0 * 2);
    int all_gathers = 0, all_reduces = 0;
    for (const auto& c : comms(fwd, GroupKind::tp)) {
        if (c.collective == Collective::AllGather) ++all_gathers;
        if (c.collective == Collective::AllReduce) {
            ++all_reduces;
            CHECK(c.bytes == 512.0 * 2048 * 2);
        }
    }
    CHECK(all_gathers == 0);
    CHECK(all_reduces == 2);  // attention output projection, experts
    for (const auto& op : fwd.ops())
        if (op.role == models::OpRole::ExpertUp) CHECK(op.n == 2 * 1024 / 2);  // gated, half the width
}

TEST_CASE("review regressions: uneven EP nodes, replicated weights, recompute working set", "[models][moe]") {
    // DeepEP over an EP group of 12 on 8-GPU nodes spans 2 nodes (8 + 4): a token crosses the
    // network once per remote destination node, D(2) x 1/2 of them, and the pairwise model sends
    // (12 - 8)/12 of its buffer across: buffer = D(2) / 2 x 12 / 4 rows per token.
    const models::ModelSpec m = small_moe();
    models::LayerInputs in;
    in.batch = models::TokenBatch::uniform(1, 1024, 1024);
    in.shard.ep = 12;
    in.shard.ep_ranks_per_node = 8;
    in.shard.ep_nodes = 2;
    in.shard.dispatcher = models::MoeDispatcher::DeepEp;
    const double d2 = models::moe_destinations(16, 2, 2);
    CHECK(models::moe_dispatch_bytes(m, in) == Approx(1024.0 * d2 / 2 * 12 / 4 * 2048 * 2));
    // Tensor parallelism replicates the norms, latent down projections and router: a DeepSeek-V3
    // MoE layer at tp 8 holds (non-expert - replicated) / 8 + replicated, replicated = 2 h norms +
    // h (1536 + 512 + 64) down projections + 1536 + 512 latent norms + h x 256 router.
    const auto& v3 = catalog_model("deepseek-v3");
    const double h = 7168;
    const double replicated = 2 * h + h * (1536 + 512 + 64) + 1536 + 512 + h * 256;
    CHECK(v3.replicated_params(true) == replicated);
    workloads::ParallelLayout l;
    l.tp = 8;
    CHECK(workloads::layer_rank_params(v3, l, true) ==
          Approx((v3.moe_layer_nonexpert_params() - replicated) / 8 + replicated));
    // Selective recomputation leaves the router's and permutation's outputs kept.
    models::LayerInputs one;
    one.batch = models::TokenBatch::uniform(1, 1024, 1024);
    for (const auto& op : models::selective_recompute(models::moe_layer_forward(m, one)).ops())
        CHECK((op.role != models::OpRole::Router && op.role != models::OpRole::Permute));
    // Recomputing the MoE block brings its activations back in the layer's backward: the memory
    // estimate holds them as the transient working set.
    auto cluster = testing::pipeline_cluster();
    workloads::TrainingPlan p = one_stage_plan(4, 16);
    p.training.recompute_moe = true;
    const auto mem = workloads::estimate_training_memory(m, cluster, p);
    const models::LayerInputs mi = workloads::microbatch_inputs(m, p);
    CHECK(mem.stages[0].memory.transient >=
          models::layer_activation_bytes(m, mi, true) - models::moe_recomputed_layer_bytes(m, mi, false));
}

TEST_CASE("ZeRO-3 on a dense model with one data-parallel rank adds no traffic", "[workloads][moe]") {
    // The expert data-parallel group only matters for experts: a dense model at tp 4, dp 1 has
    // nothing to shard, so ZeRO-3 replays exactly the tasks of ZeRO-0.
    const models::ModelSpec m = testing::pipeline_model();
    const auto cluster = testing::pipeline_cluster();
    workloads::TrainingPlan p = testing::pipeline_plan(1, "1f1b");
    p.layout.pp = 1;
    p.layout.tp = 4;
    p.training.global_batch = 4;
    const auto zero0 = testing::predict(m, cluster, p);
    p.training.zero_stage = 3;
    const auto zero3 = testing::predict(m, cluster, p);
    CHECK(zero3.tasks == zero0.tasks);
    CHECK(zero3.step_time_s == zero0.step_time_s);
}

TEST_CASE("recomputing MLA up-projections drops Q, K, V and reruns their GEMMs", "[models][moe][mla][memory]") {
    // DeepSeek-V3 at tp 1, one sequence of 4096 tokens: the up-projections' outputs are Q (128 x
    // 192), K (128 x 192) and V (128 x 128) per token, bf16: 4096 x 128 x 512 x 2 bytes = 512 MiB a
    // layer, which the recompute no longer keeps (the latents stay).
    const auto& v3 = catalog_model("deepseek-v3");
    models::LayerInputs in;
    in.batch = models::TokenBatch::uniform(1, 4096, 4096);
    CHECK(models::mla_up_projection_bytes(v3, in) == 4096.0 * 128 * (192 + 192 + 128) * 2);
    CHECK(models::mla_up_projection_bytes(testing::pipeline_model(), in) == 0.0);
    // The recompute program: the two up-projection GEMMs and the rotary embedding, 2 t n k FLOPs
    // for q_up (1536 -> 128 x 192) and kv_up (512 -> 128 x 256).
    const auto rec = models::mla_up_projection_recompute(models::moe_layer_forward(v3, in));
    double flops = 0;
    for (const auto& op : rec.ops()) flops += op.flops;
    CHECK(flops == Approx(2.0 * 4096 * (1536.0 * 128 * 192 + 512.0 * 128 * 256)));
    CHECK(
        models::mla_up_projection_recompute(models::dense_layer_forward(testing::pipeline_model(), in)).ops().empty());
    // Without query compression (DeepSeek-V2-Lite) the query comes from q_proj, rerun as well:
    // 2 t x 2048 x 16 x 192 FLOPs, with kv_up's 2 t x 512 x 16 x 256.
    const auto& lite = catalog_model("deepseek-v2-lite");
    double lite_flops = 0;
    for (const auto& op : models::mla_up_projection_recompute(models::moe_layer_forward(lite, in)).ops())
        lite_flops += op.flops;
    CHECK(lite_flops == Approx(2.0 * 4096 * (2048.0 * 16 * 192 + 512.0 * 16 * 256)));
    // A plan with it: each stage keeps that much less per layer and micro-batch in flight, and the
    // check names the key on a model without latent attention.
    auto cluster = testing::pipeline_cluster();
    cluster.accelerator.memory_capacity = 1e13;
    workloads::TrainingPlan p = one_stage_plan(4, 16);
    p.training.recompute = workloads::Recompute::Selective;
    models::ModelSpec small = v3;
    small.layers = 8;
    small.moe.dense_layers = 0;
    small.moe.num_experts = 16;
    const auto base = workloads::estimate_training_memory(small, cluster, p).stages[0];
    p.training.recompute_mla_up_proj = true;
    const auto less = workloads::estimate_training_memory(small, cluster, p).stages[0];
    const models::LayerInputs mi = workloads::microbatch_inputs(small, p);
    CHECK(base.memory.activations - less.memory.activations ==
          Approx(8 * base.peak_in_flight * models::mla_up_projection_bytes(small, mi)));
    const auto bad = plans::check_training_plan(testing::pipeline_model(), cluster, p);
    REQUIRE_FALSE(bad.empty());
    CHECK(bad.front().key == "training.recompute_mla_up_proj");
}
