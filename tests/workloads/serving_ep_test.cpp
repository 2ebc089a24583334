// Serving mixture-of-experts models at scale: latent attention's compressed KV cache and absorbed
// decode, expert parallelism over data-parallel attention ranks (weights per GPU, the all-to-all
// sizes of DeepEP's two modes), two-batch overlap, and one disaggregated pool measured alone.
#include "models/llm/dense_layer.h"
#include "models/llm/moe_layer.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"
#include "tests/support/serving_fixture.h"
#include "workloads/replay/program_cost.h"
#include "workloads/serving/iteration_cost.h"
#include "workloads/serving/serving_memory.h"
#include "workloads/serving/two_batch_overlap.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

using namespace fathom;
using namespace fathom::workloads::serving;

using testing::serve;

namespace {

// DeepSeek-V3 as the prefill or decode pool of 32 H100s (4 nodes), one data-parallel attention
// rank per GPU, experts over all 32; `pool` and `traffic` complete the scenario.
std::string dsv3_pool(const std::string& isolate, const std::string& pool, const std::string& traffic) {
    return "kind: serving\nmodel: deepseek-v3\ncluster: {accelerator: h100-sxm-80gb, nodes: 4, gpus_per_node: 8}\n"
           "serving:\n  dtype: fp8\n  max_model_len: 8192\n  disaggregation:\n    isolate: " +
           isolate + "\n    prefill: " + pool + "\n    decode: " + pool + "\ntraffic:\n" + traffic;
}

}  // namespace

TEST_CASE("latent attention caches one compressed latent per token and layer", "[serving][mla]") {
    // DeepSeek-V3: kv_lora_rank 512 + qk_rope_head_dim 64 = 576 values per token and layer, bf16:
    // 1,152 B per layer, x 61 layers = 70,272 B per token, the same on each TP rank (no heads to
    // split), where expanded per-head K and V would be 2 x 128 x (192 + 128) / 2 x 2 B = 81,920 B
    // per layer.
    const auto& m = testing::source_catalog().model("deepseek-v3");
    PoolLayout pool;
    pool.accelerator = testing::h100_cluster(8, 1).accelerator;
    pool.tp = 8;
    KvSettings kv;
    kv.block_size = 1;
    const ReplicaMemory r = replica_memory(m, pool, models::KernelStack{}, kv, BatchingSettings{}, EngineSettings{});
    CHECK(r.kv_bytes_per_token == Approx(70272.0));
    CHECK(r.block_bytes == Approx(1152.0 * 61));  // one token's latent over the rank's 61 layers
}

TEST_CASE("expert parallelism puts (experts + redundant) / ep whole experts on each GPU", "[serving][ep]") {
    // DeepSeek-V3 (58 MoE layers of 256 experts of 3 x 7168 x 2048 = 44.04M parameters each) with
    // fp8 weights: at ep 72 with 32 redundant copies a GPU holds 288 / 72 = 4 experts per layer,
    // 252 fewer than the whole model: 58 x 252 x 44.04M = 643.7 GB less than one GPU holding all.
    const auto& m = testing::source_catalog().model("deepseek-v3");
    PoolLayout all, ep;
    all.accelerator = ep.accelerator = testing::h100_cluster(8, 9).accelerator;
    ep.ep = ep.replicas = 72;
    ep.redundant_experts = 32;
    models::KernelStack fp8;
    fp8.gemm_dtype = hardware::Dtype::fp8;
    const auto mem = [&](const PoolLayout& p) {
        return replica_memory(m, p, fp8, KvSettings{}, BatchingSettings{}, EngineSettings{}).weight_bytes;
    };
    const double expert = 3.0 * 7168 * 2048;
    CHECK(all.tp == 1);
    CHECK(mem(all) - mem(ep) == Approx(58.0 * 252.0 * expert).epsilon(1e-9));
    // Non-expert weights (attention, 3 dense layers, bf16 embedding and head) + 4 x 58 experts.
    CHECK(mem(ep) / 1e9 == Approx(29.2).margin(0.1));
}

TEST_CASE("absorbed latent decode reads the latent once and computes over 576 + 512 dimensions", "[serving][mla]") {
    // Two decodes attending to 1,000 keys each on one rank (128 heads): FLOPs 4 h q kv d with
    // d = (576 + 512) / 2 = 544 and the causal factor 1 - 1/(2 kv), per sequence; the cache read is
    // 2 x 1000 x 576 x 2 B (bf16) = 2.304 MB, plus queries and outputs 2 x 2 x 128 x 544 x 2 B.
    const auto& m = testing::source_catalog().model("deepseek-v3");
    models::LayerInputs in;
    in.kernels.mla_absorb = true;
    in.batch.slices.push_back({2, 1, 1000});
    const models::LayerProgram p = models::moe_layer_forward(m, in);
    const auto ops = p.ops();
    const auto it =
        std::find_if(ops.begin(), ops.end(), [](const models::OpDesc& o) { return o.name == "attention_mla_decode"; });
    REQUIRE(it != ops.end());
    CHECK(it->attn.kernel == models::AttentionKernel::MlaDecode);
    CHECK(it->flops == Approx(2 * 4.0 * 128 * 1000 * 544 * (1 - 1 / 2000.0)));
    CHECK(it->bytes == Approx(2 * 1000 * 576 * 2.0 + 2 * 2 * 128 * 544 * 2.0));
    // No per-head expansion of the cache for decodes: no kv_up GEMM, the absorptions instead.
    CHECK(std::none_of(ops.begin(), ops.end(), [](const models::OpDesc& o) { return o.name == "kv_up"; }));
    CHECK(std::count_if(ops.begin(), ops.end(),
                        [](const models::OpDesc& o) { return o.name == "q_absorb" || o.name == "v_absorb"; }) == 2);
    // A prefill chunk in the same batch expands the latent of its 300 keys (context 100 + 200 new).
    in.batch.slices.push_back({1, 200, 300});
    const auto mixed = models::moe_layer_forward(m, in).ops();
    const auto up = std::find_if(mixed.begin(), mixed.end(), [](const models::OpDesc& o) { return o.name == "kv_up"; });
    REQUIRE(up != mixed.end());
    CHECK(up->m == 300);
}

TEST_CASE("DeepEP's modes move the sizes their own figures count", "[serving][ep]") {
    // DeepSeek-V3, 128 tokens on one rank, top-8 of 256 experts, ep 64 over 8 nodes.
    //  - low latency: every (token, expert) pair, fp8 rows of 7,168 values + 56 float scales =
    //    7,392 B: 128 x 8 x 7,392 = 7.57 MB, DeepEP's own 98 GB/s x 77 us; combine bf16 14,336 B.
    //  - normal: once per destination node; the buffer is sized so that its network share
    //    (56 of 64 ranks) is 128 x E[remote nodes] x row.
    const auto& m = testing::source_catalog().model("deepseek-v3");
    models::LayerInputs in;
    in.batch.slices.push_back({128, 1, 1});
    in.kernels.gemm_dtype = hardware::Dtype::fp8;
    in.kernels.fp8_dispatch = true;
    in.shard.ep = 64;
    in.shard.ep_ranks_per_node = 8;
    in.shard.ep_nodes = 8;
    in.shard.dispatcher = models::MoeDispatcher::DeepEpLowLatency;
    CHECK(models::moe_dispatch_bytes(m, in) == Approx(128 * 8 * 7392.0));
    CHECK(models::moe_combine_bytes(m, in) == Approx(128 * 8 * 14336.0));
    in.shard.dispatcher = models::MoeDispatcher::DeepEp;
    const double remote = models::moe_destinations(256, 8, 8) * 7.0 / 8.0;
    CHECK(models::moe_dispatch_bytes(m, in) == Approx(128 * remote * 7392.0 * 64.0 / 56.0));
}

namespace {

// 64 decodes of DeepSeek-V3 at 1,000 keys on one rank of ep 32 (4 nodes) with `dispatcher`, with
// and without two-batch overlap. The halves are 32 decodes each and identical, with stages SHARED,
// ATTN-0, ATTN-1 (A = both), dispatch D, MLP, combine C. Under overlap each MoE layer takes, with
// DeepEP's normal kernels, DeepSeek's prefill schedule: max(C, A + S + f C) + max(D, A + f D) +
// max(D, M + f D) + max(C, M + S + f C), f the dispatcher's share of the SMs; with its low-latency
// kernels its decode schedule, 2 [max(S + A0, D) + M + max(A1, C)]; without overlap the whole
// batch's compute + its transfers. The dense (first three) layers have no
// collectives (tp 1): 2 C_half. The iteration adds the same embedding, head and engine terms either
// way, so serial - overlapped is exactly the layers' difference, returned with that difference
// priced here from the programs the coster builds.
struct OverlapCheck {
    double serial, overlapped, expected_difference;
};

OverlapCheck two_batch_overlap_check(models::MoeDispatcher dispatcher, double sm_share) {
    const auto& m = testing::source_catalog().model("deepseek-v3");
    const hardware::ClusterSpec cluster = testing::h100_cluster(8, 4);
    const auto cost = models::make_roofline_cost(cluster.accelerator, models::Load::Serving);
    const auto net = hardware::make_analytical_network(cluster);
    PoolLayout pool;
    pool.accelerator = cluster.accelerator;
    pool.ep = pool.replicas = 32;
    pool.dispatcher = dispatcher;
    models::KernelStack fp8;
    fp8.gemm_dtype = hardware::Dtype::fp8;
    EngineSettings plain, tbo;
    tbo.two_batch_overlap = true;
    IterationCoster a(m, pool, fp8, plain, *cost, *net), b(m, pool, fp8, tbo, *cost, *net);
    IterationShape shape;
    shape.decodes = shape.samples = shape.sequences = 64;
    shape.decode_kv = 64 * 1000;

    workloads::ParallelLayout layout;
    layout.ep = layout.dp = 32;
    workloads::ProgramCoster pc(*cost, *net, layout);
    auto inputs = [&](int64_t decodes) {
        models::LayerInputs in;
        in.kernels = fp8;
        in.kernels.mla_absorb = in.kernels.fp8_dispatch = true;
        in.kernels.expert_gemm_kernel = models::GemmKernel::DeepGemm;  // DeepEP's engines run DeepGEMM
        in.shard.ep = 32;
        in.shard.ep_ranks_per_node = 8;
        in.shard.ep_nodes = 4;
        in.shard.dispatcher = dispatcher;
        in.batch.slices.push_back({decodes, 1, 1000});
        return in;
    };
    auto comm = [](const workloads::PassCost& c) {
        double t = 0;
        for (size_t g = 0; g < c.lead.size(); ++g) t += c.lead[g] + c.trail[g];
        return t;
    };
    const workloads::PassCost whole = pc.cost(models::moe_layer_forward(m, inputs(64)));
    const workloads::PassCost half = pc.cost(models::moe_layer_forward(m, inputs(32)));
    const workloads::PassCost dense_whole = pc.cost(models::dense_layer_forward(m, inputs(64)));
    const workloads::PassCost dense_half = pc.cost(models::dense_layer_forward(m, inputs(32)));
    REQUIRE(comm(half) > 0);
    double overlapped_moe = std::max(2 * comm(half), 2 * half.compute + sm_share * 2 * comm(half));
    const MicroBatchStages st = moe_stages(models::moe_layer_forward(m, inputs(32)), pc);
    REQUIRE(st.compute() == Approx(half.compute).epsilon(1e-12));
    REQUIRE(st.dispatch + st.combine == Approx(comm(half)).epsilon(1e-12));
    if (dispatcher == models::MoeDispatcher::DeepEpLowLatency)
        overlapped_moe = 2 * (std::max(st.shared + st.attn0, st.dispatch) + st.mlp + std::max(st.attn1, st.combine));
    if (dispatcher == models::MoeDispatcher::DeepEp) {
        const double f = sm_share, attn = st.attn0 + st.attn1, d = st.dispatch, c = st.combine;
        overlapped_moe = std::max(c, attn + st.shared + f * c) + std::max(d, attn + f * d) +
                         std::max(d, st.mlp + f * d) + std::max(c, st.mlp + st.shared + f * c);
    }
    const double moe_diff = (whole.compute + comm(whole)) - overlapped_moe;
    const double dense_diff = dense_whole.compute - 2 * dense_half.compute;
    return {a.exact(shape).total(), b.exact(shape).total(), 58 * moe_diff + 3 * dense_diff};
}

}  // namespace

TEST_CASE("two-batch overlap: DeepSeek's decode schedule, stage by stage", "[serving][ep]") {
    // Hand-made stages (ms). Compute-bound: A0 0.1, A1 0.3, M 0.2, S 0.05, D 0.1, C 0.2 each:
    // max(0.15, 0.1) + 0.2 + max(0.3, 0.2) = 0.65 per micro-batch, 1.3 in all = the compute, every
    // transfer hidden. Communication-bound: D 0.3, C 0.6: max(0.15, 0.3) + 0.2 + max(0.3, 0.6) =
    // 1.1 per micro-batch, 2.2 in all, where one stream each would take max(1.3, 1.8) = 1.8: the
    // routed experts (M) never overlap a transfer. Unequal halves pair a's transfers with b's
    // stages: a's dispatch 0.4 beside S_a + A0_b = 0.05 + 0.2, a's combine 0.1 beside A1_b 0.5.
    MicroBatchStages x;
    x.attn0 = 0.1, x.attn1 = 0.3, x.mlp = 0.2, x.shared = 0.05, x.dispatch = 0.1, x.combine = 0.2;
    CHECK(decode_overlap_seconds(x, x) == Approx(1.3));
    MicroBatchStages y = x;
    y.dispatch = 0.3, y.combine = 0.6;
    CHECK(decode_overlap_seconds(y, y) == Approx(2.2));
    CHECK(stream_overlap_seconds(2 * y.compute(), 2 * (y.dispatch + y.combine), 0) == Approx(1.8));
    MicroBatchStages a = x, b = x;
    a.dispatch = 0.4, a.combine = 0.1;
    b.attn0 = 0.2, b.attn1 = 0.5;
    // max(0.05 + 0.2, 0.4) + 0.2 + max(0.5, 0.1) + max(0.05 + 0.1, 0.1) + 0.2 + max(0.3, 0.2)
    CHECK(decode_overlap_seconds(a, b) == Approx(0.4 + 0.2 + 0.5 + 0.15 + 0.2 + 0.3));
    // Collectives of other groups run in series.
    a.other = 0.07;
    CHECK(decode_overlap_seconds(a, b) == Approx(1.75 + 0.07));
}

TEST_CASE("two-batch overlap: DeepSeek's prefill schedule, stage by stage", "[serving][ep]") {
    // Stages (ms) A = ATTN-0 + ATTN-1 = 0.3, M 0.4, S 0.1, D 0.2, C 0.5, f = 0.2: stage(X, T) =
    // max(T, X + 0.2 T). stage(0.3 + 0.1, 0.5) = max(0.5, 0.5) = 0.5; stage(0.3, 0.2) = 0.34;
    // stage(0.4, 0.2) = 0.44; stage(0.4 + 0.1, 0.5) = 0.6. In all 1.88, where one stream each gives
    // max(1.4, 1.6 + 0.28) = 1.88 too (every transfer paired with enough compute); with C 0.9 the
    // first and last stages become transfer-bound: 0.9 + 0.34 + 0.44 + 0.9 = 2.58, against
    // max(2.2, 1.6 + 0.44) = 2.2 for two streams.
    MicroBatchStages x;
    x.attn0 = 0.1, x.attn1 = 0.2, x.mlp = 0.4, x.shared = 0.1, x.dispatch = 0.2, x.combine = 0.5;
    CHECK(prefill_overlap_seconds(x, x, 0.2) == Approx(1.88));
    CHECK(stream_overlap_seconds(2 * x.compute(), 2 * (x.dispatch + x.combine), 0.2) == Approx(1.88));
    x.combine = 0.9;
    CHECK(prefill_overlap_seconds(x, x, 0.2) == Approx(2.58));
    CHECK(stream_overlap_seconds(2 * x.compute(), 2 * (x.dispatch + x.combine), 0.2) == Approx(2.2));
}

TEST_CASE("two-batch overlap: the layer's stages and the coster's prices", "[serving][ep]") {
    // DeepSeek-V3's MoE layer program for 32 decodes cut into the schedule's stages: ATTN-0 is what
    // precedes the core attention (it has the norm and the latent projections), ATTN-1 starts at it,
    // MLP holds the routed experts, SHARED the shared experts; stage sums equal the pass's compute
    // and its two expert all-to-alls.
    const auto& m = testing::source_catalog().model("deepseek-v3");
    const hardware::ClusterSpec cluster = testing::h100_cluster(8, 4);
    const auto cost = models::make_roofline_cost(cluster.accelerator, models::Load::Serving);
    const auto net = hardware::make_analytical_network(cluster);
    workloads::ParallelLayout layout;
    layout.ep = layout.dp = 32;
    workloads::ProgramCoster pc(*cost, *net, layout);
    models::LayerInputs in;
    in.kernels.gemm_dtype = hardware::Dtype::fp8;
    in.kernels.mla_absorb = in.kernels.fp8_dispatch = true;
    in.shard.ep = 32;
    in.shard.ep_ranks_per_node = 8;
    in.shard.ep_nodes = 4;
    in.shard.dispatcher = models::MoeDispatcher::DeepEpLowLatency;
    in.batch.slices.push_back({32, 1, 1000});
    const models::LayerProgram p = models::moe_layer_forward(m, in);
    const MicroBatchStages st = moe_stages(p, pc);
    double attention = 0, experts = 0;
    for (const auto& op : p.ops()) {
        if (op.role == models::OpRole::Attention) attention += pc.seconds(op);
        if (op.role == models::OpRole::ExpertUp || op.role == models::OpRole::ExpertDown) experts += pc.seconds(op);
    }
    CHECK(st.attn0 > 0);
    CHECK(st.attn1 >= attention);
    CHECK(st.mlp >= experts);
    CHECK(st.shared > 0);
    CHECK(st.other == 0);
    const workloads::PassCost whole = pc.cost(p);
    CHECK(st.compute() == Approx(whole.compute).epsilon(1e-12));
    double comm = 0;
    for (size_t g = 0; g < whole.lead.size(); ++g) comm += whole.lead[g] + whole.trail[g];
    CHECK(st.dispatch + st.combine == Approx(comm).epsilon(1e-12));
    CHECK(st.combine > st.dispatch);  // bf16 rows back, fp8 rows out
    // DeepEP's low-latency kernels reach 0.90 of the all-to-all the network prices for their bytes.
    for (const auto& step : p.steps)
        if (step.kind == models::ProgramStep::Kind::Comm && step.comm.group == models::GroupKind::ep) {
            CHECK(step.comm.efficiency == 0.90);
            CHECK(st.dispatch == Approx(pc.collective(*step.comm.collective, step.comm.bytes, step.comm.group) / 0.90));
            break;
        }
}

TEST_CASE("two-batch overlap: a layer takes max(compute, communication) of the two halves", "[serving][ep]") {
    // DeepEP's low-latency kernels hold no SM while compute runs: f = 0; the decode schedule.
    const OverlapCheck c = two_batch_overlap_check(models::MoeDispatcher::DeepEpLowLatency, 0.0);
    CHECK(c.serial - c.overlapped == Approx(c.expected_difference).epsilon(1e-9));
    // At 64 decodes per GPU the halves read every weight twice, and that costs more than the
    // all-to-alls they hide: two-batch overlap is slower here (SGLang's blog measures its gain at
    // 256 tokens per GPU and more).
    CHECK(c.overlapped > c.serial);
}

TEST_CASE("two-batch overlap: compute beside DeepEP's normal kernels runs on the SMs they leave", "[serving][ep]") {
    // DeepEP's normal kernels hold Buffer.num_sms = 20 of the H100's 132 SMs while they run:
    // f = 20 / 132 = 0.1515, each stage max(T, X + f T).
    const OverlapCheck c = two_batch_overlap_check(models::MoeDispatcher::DeepEp, 20.0 / 132.0);
    CHECK(c.serial - c.overlapped == Approx(c.expected_difference).epsilon(1e-9));
    // The halves' compute outlasts their communication here, so the SMs' share shows: the same
    // layers priced with f = 0 would be shorter by 58 f 2 M_half.
    const OverlapCheck free = two_batch_overlap_check(models::MoeDispatcher::DeepEp, 0.0);
    CHECK(free.expected_difference > c.expected_difference);
    CHECK(c.serial - c.overlapped != Approx(free.expected_difference).epsilon(1e-3));
}

TEST_CASE("a decode pool measured alone: a static batch decodes from its first step", "[serving][disaggregation]") {
    // 2 requests per rank on 32 ranks, each arriving with its 1,000-token prompt's KV in place and
    // decoding 3 tokens: every rank runs exactly 3 iterations of 2 decodes (at 1,001, 1,002 and
    // 1,003 keys), so the pool emits 64 x 3 tokens in the time of those three iterations, and no
    // prompt token is computed.
    const auto s =
        testing::serving_scenario(dsv3_pool("decode", "{tp: 1, replicas: 32, ep: 32, dispatcher: deepep_ll}",
                                            "  arrival: offline\n  num_requests: 64\n  prompt: 1000\n  output: 3\n"));
    const ServingReport r = serve(s);
    CHECK(r.gpus == 32);
    CHECK(r.iterations == 3 * 32);
    CHECK(r.batch_tokens_mean == Approx(2.0));
    const auto& plan = std::get<ServingPlan>(s.plan);
    const hardware::ClusterSpec cluster = testing::h100_cluster(8, 4);
    const auto cost = models::make_roofline_cost(cluster.accelerator, models::Load::Serving);
    const auto net = hardware::make_analytical_network(cluster);
    IterationCoster c(s.model, *plan.decode, plan.kernels, plan.engine, *cost, *net);
    double t = 0;
    for (int step = 1; step <= 3; ++step) {
        IterationShape shape;
        shape.decodes = shape.samples = shape.sequences = 2;
        shape.decode_kv = 2 * (1000 + step);
        t += c.exact(shape).total();
    }
    CHECK(r.output_tokens_per_s == Approx(64 * 3 / t).epsilon(0.01));
    CHECK(r.input_tokens_per_s == Approx(64 * 1000 / t).epsilon(0.01));  // prompts counted, not computed
}

TEST_CASE("a prefill pool measured alone: requests end with their first token", "[serving][disaggregation]") {
    const auto s =
        testing::serving_scenario(dsv3_pool("prefill", "{tp: 1, replicas: 32, ep: 32, dispatcher: deepep}",
                                            "  arrival: offline\n  num_requests: 32\n  prompt: 2048\n  output: 50\n"));
    const ServingReport r = serve(s);
    CHECK(r.gpus == 32);
    CHECK(r.iterations == 32);                                    // one prompt per rank, one iteration each
    CHECK(r.output_tokens_per_s * r.duration_s == Approx(32.0));  // one token per request
}

TEST_CASE("expert-parallel serving plans are checked, naming the key", "[serving][ep]") {
    // The scenario loader checks the plan: the error names the file, line and key (exit 2).
    const auto error = [](const std::string& pool) -> std::string {
        try {
            testing::serving_scenario(
                dsv3_pool("prefill", pool, "  arrival: offline\n  num_requests: 8\n  prompt: 100\n  output: 2\n"));
        } catch (const sim::InputError& e) {
            return e.what();
        }
        return "";
    };
    using Catch::Matchers::Contains;
    CHECK_THAT(error("{tp: 2, replicas: 16, ep: 32}"),
               Contains("test.yaml:5") && Contains("prefill.ep") && Contains("tp = 1"));
    CHECK_THAT(error("{tp: 1, replicas: 24, ep: 24}"),
               Contains("prefill.ep") && Contains("does not divide the 256 experts"));
    CHECK(error("{tp: 1, replicas: 24, ep: 24, redundant_experts: 8}").empty());  // 264 / 24 = 11 per GPU
    CHECK_THAT(error("{tp: 1, replicas: 32, ep: 1, dispatcher: deepep}"), Contains("prefill.dispatcher"));
    // Redundant copies without ep: that one message, not the ep > 1 layout rules it does not meet.
    const std::string lone = error("{tp: 8, replicas: 4, redundant_experts: 8}");
    CHECK_THAT(lone, Contains("prefill.redundant_experts") && Contains("need expert parallelism"));
    CHECK_THAT(lone, !Contains("tp = 1") && !Contains("does not divide"));
}
