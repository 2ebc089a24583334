// Layer programs (models/program/layer_program.h, models/llm/dense_layer.h): the collectives a
// layer issues under TP, SP and CP and their backward conjugates, the input/weight-gradient split,
// ragged (varlen) attention, selection by role, and the calibration groups every emitted op finds.
#include "models/cost/calibration_table.h"
#include "models/cost/cost_model.h"
#include "models/llm/dense_layer.h"
#include "tests/support/fixtures.h"
#include "tests/support/model_fixture.h"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <tuple>

using namespace fathom;
using namespace fathom::models;
using hardware::Collective;

namespace {

// Llama-like layer: h 4096, 32 heads, 8 KV heads (head_dim 128), SwiGLU MLP 14336.
ModelSpec llama_like() {
    ModelSpec m = testing::dense_model(32, 4096, 32, 8, 14336, 128256);
    m.id = "llama-like";
    m.norm = Norm::RmsNorm;
    m.position = PositionEmbedding::Rope;
    return m;
}

LayerInputs inputs(int tp, bool sp, int cp, int64_t micro_batch, int64_t seq) {
    LayerInputs in;
    in.shard.tp = tp;
    in.shard.sequence_parallel = sp;
    in.shard.cp = cp;
    in.batch = TokenBatch::uniform(micro_batch, seq / cp, seq);
    return in;
}

// (collective, group, grad kind) -> (count, bytes of one)
using CommKey = std::tuple<Collective, GroupKind, GradKind>;
std::map<CommKey, std::pair<int, double>> comms(const LayerProgram& p) {
    std::map<CommKey, std::pair<int, double>> out;
    for (const auto& s : p.steps) {
        if (s.kind != ProgramStep::Kind::Comm || !s.comm.collective) continue;
        auto& e = out[{*s.comm.collective, s.comm.group, s.grad}];
        ++e.first;
        e.second = s.comm.bytes;
    }
    return out;
}

}  // namespace

TEST_CASE("tensor parallelism: the collectives of a layer and their backward conjugates", "[models][program]") {
    const ModelSpec m = llama_like();
    // T = 2 x 4096 tokens per rank; one [T, h] bf16 activation = 8192 x 4096 x 2 B = 64 MiB.
    const double act = 8192.0 * 4096 * 2;
    SECTION("sequence parallel: all-gather before QKV and FC1, reduce-scatter after the projections") {
        const LayerInputs in = inputs(8, true, 1, 2, 4096);
        const auto f = comms(dense_layer_forward(m, in));
        REQUIRE(f.size() == 2);
        CHECK(f.at({Collective::AllGather, GroupKind::tp, GradKind::None}) == std::make_pair(2, act));
        CHECK(f.at({Collective::ReduceScatter, GroupKind::tp, GradKind::None}) == std::make_pair(2, act));
        // Backward swaps them (the gradient of a gather is a scatter) on the input-gradient path.
        const auto b = comms(dense_layer_backward(m, in));
        REQUIRE(b.size() == 2);
        CHECK(b.at({Collective::ReduceScatter, GroupKind::tp, GradKind::Input}) == std::make_pair(2, act));
        CHECK(b.at({Collective::AllGather, GroupKind::tp, GradKind::Input}) == std::make_pair(2, act));
    }
    SECTION("no sequence parallelism: all-reduce after the projections forward, before QKV and FC1 backward") {
        const LayerInputs in = inputs(8, false, 1, 2, 4096);
        const auto f = comms(dense_layer_forward(m, in));
        REQUIRE(f.size() == 1);
        CHECK(f.at({Collective::AllReduce, GroupKind::tp, GradKind::None}) == std::make_pair(2, act));
        const auto b = comms(dense_layer_backward(m, in));
        REQUIRE(b.size() == 1);
        CHECK(b.at({Collective::AllReduce, GroupKind::tp, GradKind::Input}) == std::make_pair(2, act));
        // The backward all-reduces sit where the forward's f operators were: right after the QKV
        // and FC1 data gradients (the last step before each in reverse order).
        const LayerProgram bp = dense_layer_backward(m, in);
        for (size_t i = 0; i < bp.steps.size(); ++i) {
            if (bp.steps[i].kind != ProgramStep::Kind::Comm) continue;
            REQUIRE(i >= 2);
            const OpDesc& before = bp.steps[i - 1].op;  // the weight gradient of the same GEMM
            CHECK((before.role == OpRole::QkvProjection || before.role == OpRole::MlpUp));
        }
    }
    SECTION("fp8 gathers (torchao Float8 TP): all-gathers carry half the bytes both ways, reduce-scatters not") {
        LayerInputs in = inputs(8, true, 1, 2, 4096);
        in.kernels.gemm_dtype = hardware::Dtype::fp8;
        in.kernels.fp8_tp_all_gather = true;
        const auto f = comms(dense_layer_forward(m, in));
        CHECK(f.at({Collective::AllGather, GroupKind::tp, GradKind::None}) == std::make_pair(2, act / 2));
        CHECK(f.at({Collective::ReduceScatter, GroupKind::tp, GradKind::None}) == std::make_pair(2, act));
        const auto b = comms(dense_layer_backward(m, in));
        CHECK(b.at({Collective::ReduceScatter, GroupKind::tp, GradKind::Input}) == std::make_pair(2, act));
        CHECK(b.at({Collective::AllGather, GroupKind::tp, GradKind::Input}) == std::make_pair(2, act / 2));
        // Under a bf16 recipe the setting changes nothing.
        in.kernels.gemm_dtype = hardware::Dtype::bf16;
        CHECK(comms(dense_layer_forward(m, in)).at({Collective::AllGather, GroupKind::tp, GradKind::None}) ==
              std::make_pair(2, act));
    }
    SECTION("tp = 1: no collectives") {
        CHECK(comms(dense_layer_forward(m, inputs(1, true, 1, 2, 4096))).empty());
        CHECK(comms(dense_layer_backward(m, inputs(1, false, 1, 2, 4096))).empty());
    }
}

TEST_CASE("all-gather context parallelism gathers keys and values, and backward gathers again then reduce-scatters",
          "[models][program]") {
    const ModelSpec m = llama_like();
    // cp 2, tp 2: 8 KV heads / 2 = 4 per rank x 128 = 512 wide; K and V of the whole 4096-token
    // sequence, micro-batch 1: 2 x 4096 x 512 x 2 B = 8 MiB. (Ring and Ulysses exchanges:
    // tests/workloads/context_parallel_test.cpp.)
    LayerInputs in = inputs(2, true, 2, 1, 4096);
    in.shard.cp_comm = models::CpComm::AllGather;
    const double kv = 2 * 4096.0 * 512 * 2;
    const auto f = comms(dense_layer_forward(m, in));
    CHECK(f.at({Collective::AllGather, GroupKind::cp, GradKind::None}) == std::make_pair(1, kv));
    const auto b = comms(dense_layer_backward(m, in));
    CHECK(b.at({Collective::AllGather, GroupKind::cp, GradKind::Input}) == std::make_pair(1, kv));
    CHECK(b.at({Collective::ReduceScatter, GroupKind::cp, GradKind::Input}) == std::make_pair(1, kv));
}

TEST_CASE("backward splits into input-gradient and weight-gradient work of equal GEMM FLOPs", "[models][program]") {
    const ModelSpec m = llama_like();
    const LayerInputs in = inputs(4, true, 1, 1, 4096);
    const LayerProgram fwd = dense_layer_forward(m, in), bwd = dense_layer_backward(m, in);
    double gemm_fwd = 0, gemm_input = 0, gemm_weight = 0, attention_fwd = 0, attention_bwd = 0;
    for (const auto& op : fwd.ops()) {
        if (op.kind == OpKind::Gemm) gemm_fwd += op.flops;
        if (op.kind == OpKind::AttentionFwd) attention_fwd += op.flops;
    }
    for (const auto& s : bwd.steps) {
        if (s.kind != ProgramStep::Kind::Compute) continue;
        if (s.op.kind == OpKind::Gemm) (s.grad == GradKind::Input ? gemm_input : gemm_weight) += s.op.flops;
        if (s.op.kind == OpKind::AttentionBwd) {
            CHECK(s.grad == GradKind::Input);
            attention_bwd += s.op.flops;
        }
        if (s.op.kind == OpKind::MemoryBound) CHECK(s.grad == GradKind::Input);
    }
    // dX = dY W^T and dW = X^T dY each cost the forward GEMM's 2 M N K.
    CHECK(gemm_input == Approx(gemm_fwd).epsilon(1e-12));
    CHECK(gemm_weight == Approx(gemm_fwd).epsilon(1e-12));
    CHECK(attention_bwd == Approx(2.5 * attention_fwd).epsilon(1e-12));
    // The split is a partition: input + weight steps = the whole backward.
    CHECK(bwd.only({GradKind::Input}).steps.size() + bwd.only({GradKind::Weight}).steps.size() == bwd.steps.size());
}

TEST_CASE("ragged attention sums FLOPs and bytes over its sequence slices", "[models][ops]") {
    // A serving-like batch: one prefill chunk of 512 queries at the end of a 2048-token context,
    // and 3 decodes (1 query each) over 1000-token contexts. 32 heads, 8 KV heads, d 128.
    AttentionShape a;
    a.heads = 32;
    a.kv_heads = 8;
    a.head_dim = 128;
    a.causal = true;
    a.slices = {SequenceSlice{1, 512, 2048}, SequenceSlice{3, 1, 1000}};
    const OpDesc op = attention_op(false, a, Dtype::bf16);
    // Prefill chunk: 4 h q kv d (1 - q/(2kv)) = 4 x 32 x 512 x 2048 x 128 x (1 - 512/4096).
    const double prefill = 4.0 * 32 * 512 * 2048 * 128 * (1 - 512.0 / 4096);
    // Each decode: 4 x 32 x 1 x 1000 x 128 x (1 - 1/2000).
    const double decode = 4.0 * 32 * 1 * 1000 * 128 * (1 - 1.0 / 2000);
    CHECK(op.flops == Approx(prefill + 3 * decode).epsilon(1e-12));
    // Bytes: Q and O (2 x count x h x q x d) + K and V read (2 x count x kv_heads x kv x d), bf16.
    const double bytes =
        2.0 * (2 * 32 * 512 * 128 + 2 * 8 * 2048 * 128) + 3 * 2.0 * (2 * 32 * 1 * 128 + 2 * 8 * 1000 * 128);
    CHECK(op.bytes == Approx(bytes).epsilon(1e-12));

    // The roofline runs the batch as one kernel: each slice's compute at its own key length's
    // efficiency, summed; the whole traffic; one launch. So it equals the separate kernels' sum
    // less the extra launches when every slice is compute bound.
    hardware::AcceleratorSpec acc;
    acc.peak_flops[Dtype::bf16] = 1000e12;
    acc.memory_bandwidth = 1e15;  // memory never binds here
    acc.compute_units = 132;
    acc.launch_overhead = 5e-6;
    acc.calibration.memory_efficiency = 1;
    acc.calibration.attention_fwd_efficiency = 0.5;
    acc.calibration.attention_seq_half = 200;
    const auto cost = make_roofline_cost(acc);
    double separate = 0;
    for (const auto& x : a.slices) {
        AttentionShape one = a;
        one.slices = {x};
        separate += cost->seconds(attention_op(false, one, Dtype::bf16));
    }
    CHECK(cost->seconds(op) == Approx(separate - 1 * acc.launch_overhead).epsilon(1e-12));
}

TEST_CASE("selective recomputation picks ops by role, not by name", "[models][program]") {
    LayerInputs in = inputs(2, true, 1, 1, 2048);
    in.kernels.gemm_dtype = Dtype::fp8;
    in.kernels.flash_attention = false;
    const LayerProgram fwd = dense_layer_forward(llama_like(), in);
    std::map<OpRole, int> picked;
    for (const auto& op : selective_recompute(fwd).ops()) ++picked[op.role];
    CHECK(picked[OpRole::Norm] == 2);
    CHECK(picked[OpRole::Activation] == 1);
    CHECK(picked[OpRole::Fp8Cast] == 4);
    CHECK(picked[OpRole::AttentionSoftmax] == 1);
    CHECK(picked[OpRole::AttentionDropout] == 1);
    CHECK(picked.count(OpRole::Residual) == 0);  // kept
    CHECK(picked.count(OpRole::Rotary) == 0);    // kept
    CHECK(picked.count(OpRole::QkvProjection) == 0);
}

TEST_CASE("every op the catalog models emit finds its calibration group", "[models][calibration]") {
    // A synthetic measurement set with every kernel tools/calibrate measures: GEMMs in bf16 and fp8,
    // attention forward and backward, and each memory-bound kernel. Each group's range is made wide,
    // so the check is about matching groups, not ranges.
    const auto& acc = testing::source_catalog().accelerator("h100-sxm-80gb");
    const auto roof = make_roofline_cost(acc);
    std::vector<Measurement> data;
    auto add = [&](const OpDesc& op) { data.push_back({op, roof->seconds(op)}); };
    for (Dtype d : {Dtype::bf16, Dtype::fp8})
        for (int64_t s : {16, 1 << 17}) add(gemm_op("gemm", s, s / 2 + 8, s + 64, d));
    for (bool backward : {false, true})
        for (int64_t s : {128, 1 << 17}) {
            AttentionShape a;
            a.heads = 1;
            a.kv_heads = 1;
            a.head_dim = 64;
            a.slices = {SequenceSlice{1, s, s}};
            add(attention_op(backward, a, Dtype::bf16));
        }
    for (const auto& kernel : measured_memory_kernels())
        for (double bytes : {1e3, 1e13}) add(memory_op(kernel, bytes));
    const CalibrationTable table = fit_calibration(data, acc);

    for (const auto& [id, m] : testing::source_catalog().models()) {
        for (const bool sp : {false, true})
            for (const Dtype d : {Dtype::bf16, Dtype::fp8})
                for (const bool flash : {true, false})
                    for (const bool fused : {true, false}) {
                        LayerInputs in = inputs(m.heads % 2 == 0 ? 2 : 1, sp, 1, 1, 2048);
                        in.kernels = models::KernelStack{};
                        in.kernels.gemm_dtype = d;
                        in.kernels.flash_attention = flash;
                        in.kernels.fused_elementwise = fused;
                        for (const LayerProgram& p :
                             {dense_layer_forward(m, in), dense_layer_backward(m, in), embedding_forward(m, in),
                              embedding_backward(m, in), head_forward(m, in), head_backward(m, in)})
                            for (const auto& op : p.ops()) {
                                INFO(id << ": op " << op.name << " (" << sim::name(op.role) << ", kernel '" << op.kernel
                                        << "')");
                                CHECK(find_group(table, op) != nullptr);
                            }
                    }
    }
    // The optimizer step prices as the measured binary elementwise kernel.
    OpDesc adam = memory_op("adam", 1e9, OpRole::Optimizer, "residual_add");
    adam.kind = OpKind::Optimizer;
    CHECK(find_group(table, adam) != nullptr);
}
