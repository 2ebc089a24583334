// Mixture-of-experts in the training replay, each number against a derivation in the comment: the
// expert all-to-alls on their own stream, routing skew and capacity, DeepEP's per-destination
// sends and EP overlap, serving's TP-split experts, ZeRO-3 and MLA recomputation.
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

TEST_CASE("DeepEP sends a token once per destination rank or node, EP overlap hides the all-to-alls", "[models][moe]") {
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
