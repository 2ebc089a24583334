// Tensor-parallel communication overlap, against hand derivations: each TP collective hides behind
// the GEMM it is fused with (an all-gather behind the next GEMM, a reduce-scatter or all-reduce
// behind the previous one), max(0, T - G) stays exposed, min(T, G) runs beside the compute, and
// the stack's contention fraction of the hidden time is added to the compute. In the replay, a
// step whose transfers all hide takes exactly the contention's share of them longer than free
// hiding would.
#include "hardware/network/network_model.h"
#include "models/cost/cost_model.h"
#include "tests/support/pipeline_fixture.h"
#include "workloads/replay/program_cost.h"
#include "workloads/training/step_costs.h"
#include "workloads/training/training_step.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace fathom;
using hardware::Collective;
using models::GroupKind;

namespace {

// Each GEMM takes the time named for it; any other op 1 ms.
class NamedCost final : public models::CostModel {
public:
    double seconds(const models::OpDesc& op) const override {
        const auto it = times.find(op.name);
        return it != times.end() ? it->second : 1e-3;
    }
    std::map<std::string, double> times;
};

// Every collective takes 1 ns per byte.
class PerByte final : public hardware::NetworkModel {
public:
    hardware::CollectiveCost collective(Collective, double bytes, const hardware::CommGroup&) const override {
        return {bytes * 1e-9, "fixed"};
    }
    hardware::GroupLayout layout(const hardware::CommGroup& g) const override { return {g.count(), g.count(), 1}; }
};

models::CommStep tp_step(Collective c, double ms, bool gemm_fused = true) {
    models::CommStep s;
    s.collective = c;
    s.bytes = ms * 1e6;  // 1 ns per byte
    s.group = GroupKind::tp;
    s.gemm_fused = gemm_fused;  // a linear layer's TP boundary
    return s;
}

// TP AG 1.5 ms (gemm_fused) | qkv | CP ring send 4 ms beside 2 attention steps | attn | proj |
// TP RS 1.0 ms (gemm_fused) | EP all-to-all 0.7 ms.
models::LayerProgram placement_program() {
    models::LayerProgram p;
    p.comm(tp_step(Collective::AllGather, 1.5));
    p.compute(models::gemm_op("qkv", 64, 64, 64, hardware::Dtype::bf16));
    models::CommStep ring;
    ring.collective = Collective::SendRecv;
    ring.bytes = 4e6;
    ring.group = GroupKind::cp;
    ring.awaited = true;
    ring.attention_steps = 2;
    ring.overlapped = 1;
    p.comm(ring);
    models::OpDesc attn = models::memory_op("attn", 1e6);
    attn.role = models::OpRole::Attention;
    p.compute(attn);
    p.compute(models::gemm_op("proj", 64, 64, 64, hardware::Dtype::bf16));
    p.comm(tp_step(Collective::ReduceScatter, 1.0));
    models::CommStep a2a;
    a2a.collective = Collective::AllToAll;
    a2a.bytes = 0.7e6;
    a2a.group = GroupKind::ep;
    a2a.microbatch_overlap = true;
    p.comm(a2a);
    return p;
}

}  // namespace

TEST_CASE("a TP collective hides behind its fused GEMM up to the GEMM's length", "[workloads][tp]") {
    // Program (times in ms):  AG 1.5 | qkv 1 | norm 1 | proj 0.5 | RS 1.0 | AG 0.5 | fc1 2 | fc2 3 | RS 0.8
    //   AG 1.5 before qkv 1   -> exposed 0.5, hidden 1.0   (before any compute: lead)
    //   RS 1.0 after proj 0.5 -> exposed 0.5, hidden 0.5   (trail)
    //   AG 0.5 before fc1 2   -> exposed 0,   hidden 0.5
    //   RS 0.8 after fc2 3    -> exposed 0,   hidden 0.8
    // hidden = 2.8 ms; compute = 7.5 ms + contention x 2.8 ms. Without overlap: lead 1.5, trail 2.3.
    NamedCost cost;
    cost.times = {{"qkv", 1e-3}, {"proj", 0.5e-3}, {"fc1", 2e-3}, {"fc2", 3e-3}};
    PerByte net;
    workloads::ParallelLayout layout;
    layout.tp = 2;
    models::LayerProgram p;
    p.comm(tp_step(Collective::AllGather, 1.5));
    p.compute(models::gemm_op("qkv", 64, 64, 64, hardware::Dtype::bf16));
    p.compute(models::memory_op("norm", 1e6));
    p.compute(models::gemm_op("proj", 64, 64, 64, hardware::Dtype::bf16));
    p.comm(tp_step(Collective::ReduceScatter, 1.0));
    p.comm(tp_step(Collective::AllGather, 0.5));
    p.compute(models::gemm_op("fc1", 64, 64, 64, hardware::Dtype::bf16));
    p.compute(models::gemm_op("fc2", 64, 64, 64, hardware::Dtype::bf16));
    p.comm(tp_step(Collective::ReduceScatter, 0.8));

    SECTION("no overlap: every transfer on the chain") {
        workloads::ProgramCoster coster(cost, net, layout);
        const workloads::PassCost c = coster.cost(p);
        CHECK(c.compute == Approx(7.5e-3));
        CHECK(c.lead_of(GroupKind::tp) == Approx(1.5e-3));
        CHECK(c.trail_of(GroupKind::tp) == Approx(2.3e-3));
        CHECK(c.hidden_of(GroupKind::tp) == 0);
    }
    for (const double contention : {0.0, 0.25, 1.0}) {
        workloads::ProgramCoster coster(cost, net, layout);
        coster.set_tp_overlap(contention);
        const workloads::PassCost c = coster.cost(p);
        INFO("contention " << contention);
        CHECK(c.lead_of(GroupKind::tp) == Approx(0.5e-3));
        CHECK(c.trail_of(GroupKind::tp) == Approx(0.5e-3));
        CHECK(c.hidden_of(GroupKind::tp) == Approx(2.8e-3));
        CHECK(c.compute == Approx(7.5e-3 + contention * 2.8e-3));
    }
}

TEST_CASE("under TP overlap a step whose transfers all hide grows by the contention's share of them",
          "[workloads][tp]") {
    // One stage (pp 1), tp 2 on the fixture's near-infinite links: every TP transfer is far shorter
    // than its GEMM, so nothing is exposed and with contention 0 the step is the compute alone.
    // With contention k every pass's compute (layers, embedding, output layer) grows by k x its
    // hidden TP time, so the step grows by k x (sum over the stage's passes of their hidden time).
    workloads::TrainingPlan p = testing::pipeline_plan(1, "1f1b");
    p.layout.pp = 1;
    p.layout.tp = 2;
    p.layout.dp = 1;
    p.training.global_batch = 8;  // two micro-batches of 4
    p.stack.tp_comm_overlap = true;
    hardware::ClusterSpec cluster = testing::pipeline_cluster();
    // Slow the links so the transfers are long enough to matter, yet shorter than their GEMMs.
    cluster.scale_up.bandwidth_per_gpu = cluster.scale_up.link_bandwidth = 2000e9;
    const models::ModelSpec model = testing::pipeline_model();
    const auto cost = models::make_roofline_cost(cluster.accelerator, models::Load::Sustained);
    const auto network = hardware::make_analytical_network(cluster);
    auto run = [&](double k) {
        p.stack.tp_overlap_contention = k;
        const workloads::StepInputs in{model, cluster, p, *cost, *network, nullptr};
        return workloads::simulate_training_step(in).step_time_s;
    };
    workloads::ProgramCoster coster(*cost, *network, p.layout);
    coster.set_tp_overlap(0.0);
    const workloads::StepCosts c = workloads::cost_training_step(model, p, coster);
    const auto& f = c.dense.pass[workloads::pass_index(workloads::PassKind::Forward)];
    const auto& b = c.dense.pass[workloads::pass_index(workloads::PassKind::Backward)];
    REQUIRE(f.lead_of(GroupKind::tp) + f.trail_of(GroupKind::tp) == 0);  // all hidden
    REQUIRE(b.lead_of(GroupKind::tp) + b.trail_of(GroupKind::tp) == 0);
    double hidden_per_mb = model.layers * (f.hidden_of(GroupKind::tp) + b.hidden_of(GroupKind::tp));
    // The vocabulary-parallel embedding and output layer have TP collectives of their own.
    for (const auto pass : {workloads::PassKind::Forward, workloads::PassKind::Backward})
        for (const auto* part : {&c.embedding, &c.head})
            if (const auto& x = (*part)[workloads::pass_index(pass)]) hidden_per_mb += x->hidden_of(GroupKind::tp);
    REQUIRE(hidden_per_mb > 0);
    const double free = run(0.0), half = run(0.5);
    INFO("free " << free << " s, contention 0.5 " << half << " s, hidden per micro-batch " << hidden_per_mb << " s");
    CHECK(half - free == Approx(0.5 * 2 * hidden_per_mb).epsilon(1e-6));
}

TEST_CASE("TP overlap hides only linear layers' TP boundaries, not the MoE dispatcher's expert-TP gathers",
          "[workloads][tp]") {
    // Program (ms): fc1 2 | AG 0.5 (dispatcher, not GEMM-fused) | expert 3 | RS 0.8 (dispatcher) | fc2 1 | RS 0.4
    // (fused) Megatron-Core's token dispatcher gathers the expert-TP rows with plain NCCL calls between kernels
    // (megatron/core/transformer/moe/token_dispatcher.py gather_from_sequence_parallel_region /
    // reduce_scatter_to_sequence_parallel_region); userbuffers overlap covers TE linear layers. Under overlap: the
    // dispatcher's 0.5 + 0.8 stay exposed (trail, after compute), the fused RS 0.4 hides behind fc2 (1 ms): trail 1.3,
    // hidden 0.4, compute 6 + contention x 0.4.
    NamedCost cost;
    cost.times = {{"fc1", 2e-3}, {"expert", 3e-3}, {"fc2", 1e-3}};
    PerByte net;
    workloads::ParallelLayout layout;
    layout.tp = 2;
    models::LayerProgram p;
    p.compute(models::gemm_op("fc1", 64, 64, 64, hardware::Dtype::bf16));
    p.comm(tp_step(Collective::AllGather, 0.5, false));
    p.compute(models::gemm_op("expert", 64, 64, 64, hardware::Dtype::bf16));
    p.comm(tp_step(Collective::ReduceScatter, 0.8, false));
    p.compute(models::gemm_op("fc2", 64, 64, 64, hardware::Dtype::bf16));
    p.comm(tp_step(Collective::ReduceScatter, 0.4));
    workloads::ProgramCoster coster(cost, net, layout);
    coster.set_tp_overlap(0.5);
    const workloads::PassCost c = coster.cost(p);
    CHECK(c.trail_of(GroupKind::tp) == Approx(1.3e-3));
    CHECK(c.hidden_of(GroupKind::tp) == Approx(0.4e-3));
    CHECK(c.compute == Approx(6e-3 + 0.5 * 0.4e-3));
}

TEST_CASE("a priced layer places each collective by its step's flags, in the order a device issues them",
          "[workloads][tp]") {
    // Program (ms): TP AG 1.5 (gemm_fused) | qkv 1 | CP ring send 4 beside 2 attention steps of
    // 1 ms (attn 2) | proj 0.5 | TP RS 1.0 (gemm_fused) | EP all-to-all 0.7. Under TP and EP
    // overlap: TP hidden 1.0 + 0.5 = 1.5 (Fused, issued at the layer's start), TP exposed
    // 0.5 + 0.5 = 1.0 (After); CP stall 4 - 1 = 3 (Awaited) and hidden min(4, 1) = 1 (Beside); EP
    // 0.7 (Overlapped). Issue order: Awaited cp, Beside cp, Fused tp, After tp, Overlapped ep.
    // Without overlap: TP 1.5 + 1.0 = 2.5 After, EP 0.7 After (tp before ep).
    NamedCost cost;
    cost.times = {{"qkv", 1e-3}, {"attn", 2e-3}, {"proj", 0.5e-3}};
    PerByte net;
    workloads::ParallelLayout layout;
    layout.tp = layout.cp = layout.ep = 2;
    const models::LayerProgram p = placement_program();
    using workloads::Placement;
    struct Want {
        GroupKind kind;
        Placement at;
        double ms;
    };
    auto check = [](const workloads::PassCost& c, const std::vector<Want>& want) {
        const workloads::PlacedComms placed = c.placed();
        REQUIRE(placed.size == want.size());
        for (size_t i = 0; i < want.size(); ++i) {
            INFO("task " << i);
            CHECK(placed.items[i].kind == want[i].kind);
            CHECK(placed.items[i].at == want[i].at);
            CHECK(placed.items[i].seconds == Approx(want[i].ms * 1e-3));
        }
    };
    workloads::ProgramCoster overlapped(cost, net, layout);
    overlapped.set_tp_overlap(0.0);
    overlapped.set_ep_overlap(true);
    check(overlapped.cost(p), {{GroupKind::cp, Placement::Awaited, 3.0},
                               {GroupKind::cp, Placement::Beside, 1.0},
                               {GroupKind::tp, Placement::Fused, 1.5},
                               {GroupKind::tp, Placement::After, 1.0},
                               {GroupKind::ep, Placement::Overlapped, 0.7}});
    workloads::ProgramCoster blocking(cost, net, layout);
    check(blocking.cost(p), {{GroupKind::cp, Placement::Awaited, 3.0},
                             {GroupKind::cp, Placement::Beside, 1.0},
                             {GroupKind::tp, Placement::After, 2.5},
                             {GroupKind::ep, Placement::After, 0.7}});
}

TEST_CASE("a priced layer lists every collective it moves, split where its pricing splits it", "[workloads][tp]") {
    // The program of the test above under TP and EP overlap. TP: the all-gather (1.5e6 bytes, 1.5
    // ms) hides 1 ms behind qkv: its exposed third before the compute (lead), two thirds hidden;
    // the reduce-scatter (1.0 ms) hides 0.5 behind proj: half after the compute (trail), half
    // hidden. CP: the ring send (4 ms) beside a 1 ms attention step stalls it 3 ms (trail: it
    // comes after qkv) and hides 1. EP: the all-to-all, whole, after the compute. Each
    // collective's shares add to 1 and weigh its time into the task's: 1.5/3 + 1.0/2 = 1.0 ms TP
    // exposed, 1.5 hidden.
    NamedCost cost;
    cost.times = {{"qkv", 1e-3}, {"attn", 2e-3}, {"proj", 0.5e-3}};
    PerByte net;
    workloads::ParallelLayout layout;
    layout.tp = layout.cp = layout.ep = 2;
    workloads::ProgramCoster coster(cost, net, layout);
    coster.set_tp_overlap(0.0);
    coster.set_ep_overlap(true);
    coster.set_moves(true);
    const workloads::PassCost c = coster.cost(placement_program());
    using workloads::CommPart;
    struct Want {
        Collective op;
        double bytes;
        CommPart part;
        double share;
    };
    auto check = [&c](GroupKind g, const std::vector<Want>& want) {
        const workloads::CommMoves& m = c.moves_of(g);
        REQUIRE(m.size() == want.size());
        for (size_t i = 0; i < want.size(); ++i) {
            INFO(sim::name(g) << " move " << i);
            CHECK(m[i].collective == want[i].op);
            CHECK(m[i].bytes == want[i].bytes);
            CHECK(m[i].group == g);
            CHECK(m[i].part == want[i].part);
            CHECK(m[i].share == Approx(want[i].share));
            CHECK(m[i].count == 1);
        }
    };
    check(GroupKind::tp, {{Collective::AllGather, 1.5e6, CommPart::Lead, 1.0 / 3},
                          {Collective::AllGather, 1.5e6, CommPart::Hidden, 2.0 / 3},
                          {Collective::ReduceScatter, 1.0e6, CommPart::Trail, 0.5},
                          {Collective::ReduceScatter, 1.0e6, CommPart::Hidden, 0.5}});
    check(GroupKind::cp,
          {{Collective::SendRecv, 4e6, CommPart::Trail, 0.75}, {Collective::SendRecv, 4e6, CommPart::Hidden, 0.25}});
    check(GroupKind::ep, {{Collective::AllToAll, 0.7e6, CommPart::Trail, 1.0}});
    // The exposed seconds are the exposed shares of the collectives' times.
    CHECK(c.lead_of(GroupKind::tp) + c.trail_of(GroupKind::tp) == Approx(1.5e-3 / 3 + 1.0e-3 / 2));
    CHECK(c.hidden_of(GroupKind::tp) == Approx(1.5e-3 * 2 / 3 + 1.0e-3 / 2));
    // A recomputed forward joining a pass: its moves after the pass's own.
    workloads::PassCost joined = c;
    joined += c;
    REQUIRE(joined.moves_of(GroupKind::ep).size() == 2);
    CHECK(joined.moves_of(GroupKind::tp).size() == 8);
    // Without set_moves (the closed form, serving) the seconds are the same and no move is listed.
    workloads::ProgramCoster quiet(cost, net, layout);
    quiet.set_tp_overlap(0.0);
    quiet.set_ep_overlap(true);
    const workloads::PassCost q = quiet.cost(placement_program());
    for (const GroupKind g : {GroupKind::tp, GroupKind::cp, GroupKind::ep}) {
        CHECK(q.moves_of(g).empty());
        CHECK(q.lead_of(g) + q.trail_of(g) == c.lead_of(g) + c.trail_of(g));
        CHECK(q.hidden_of(g) == c.hidden_of(g));
    }
}
