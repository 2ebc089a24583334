// The generic parts of the training replay, each against a hand derivation: schedules that run the
// weight gradients apart (BackwardInput / BackwardWeight passes), schedules with their own
// virtual-stage mapping (V shape), the pure memory estimate, the stream-busy collector, a pass
// ending in a blocking collective holding the compute stream, and block recomputation.
#include "hardware/network/network_model.h"
#include "models/cost/cost_model.h"
#include "models/memory/activation_memory.h"
#include "plans/constraints.h"
#include "sim/simulator.h"
#include "sim/task_graph.h"
#include "tests/support/fixtures.h"
#include "tests/support/pipeline_fixture.h"
#include "workloads/metrics/stream_busy.h"
#include "workloads/replay/pass_chain.h"
#include "workloads/training/stage_map.h"
#include "workloads/training/step_costs.h"
#include "workloads/training/training_memory.h"
#include "workloads/training/training_step.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace fathom;
using workloads::PassKind;
using workloads::PipelineSlot;

namespace {

// Two stages, one chunk, a fixed order per stage (given in the test), interleaved mapping.
class FixedOrder final : public workloads::PipelineSchedule {
public:
    explicit FixedOrder(std::vector<std::vector<PipelineSlot>> orders) : orders_(std::move(orders)) {}
    std::vector<PipelineSlot> order(int stage, int, int, int) const override {
        return orders_[static_cast<size_t>(stage)];
    }
    std::string check(int, int, int) const override { return ""; }

private:
    std::vector<std::vector<PipelineSlot>> orders_;
};

// Chunk 1 of stage s holds virtual stage 2P - 1 - s: the model goes down the stages and back up.
class VShape final : public workloads::PipelineSchedule {
public:
    explicit VShape(std::vector<std::vector<PipelineSlot>> orders) : orders_(std::move(orders)) {}
    std::vector<PipelineSlot> order(int stage, int, int, int) const override {
        return orders_[static_cast<size_t>(stage)];
    }
    std::string check(int, int chunks, int) const override { return chunks == 2 ? "" : "V shape needs 2 chunks"; }
    int virtual_stage(int stage, int chunk, int stages, int) const override {
        return chunk == 0 ? stage : 2 * stages - 1 - stage;
    }

private:
    std::vector<std::vector<PipelineSlot>> orders_;
};

struct Bed {
    models::ModelSpec model = testing::pipeline_model();
    hardware::ClusterSpec cluster = testing::pipeline_cluster();
    std::unique_ptr<models::CostModel> cost;
    std::unique_ptr<hardware::NetworkModel> network;
    explicit Bed(int gpus) {
        cluster.gpus_per_node = gpus;
        cost = models::make_roofline_cost(cluster.accelerator, models::Load::Sustained);
        network = hardware::make_analytical_network(cluster);
    }
    workloads::StepReport run(const workloads::TrainingPlan& p, const workloads::PipelineSchedule& s) const {
        const workloads::StepInputs in{model, cluster, p, *cost, *network, &s};
        return workloads::simulate_training_step(in);
    }
    workloads::StepCosts costs(const workloads::TrainingPlan& p) const {
        workloads::ProgramCoster coster(*cost, *network, p.layout);
        return workloads::cost_training_step(model, p, coster);
    }
};

PipelineSlot F(int mb) { return {mb, 0, PassKind::Forward}; }
PipelineSlot B(int mb) { return {mb, 0, PassKind::Backward}; }
PipelineSlot Bi(int mb) { return {mb, 0, PassKind::BackwardInput}; }
PipelineSlot W(int mb) { return {mb, 0, PassKind::BackwardWeight}; }

}  // namespace

TEST_CASE("a schedule that defers weight gradients shortens the step by what it moves off the critical path",
          "[workloads][replay]") {
    // Two stages of 4 layers, two micro-batches, tp = dp = 1, communication ~0. Per stage s: forward
    // f_s, input gradients bi_s, weight gradients w_s, b_s = bi_s + w_s.
    //   1F1B  (s0: F0 F1 B0 B1, s1: F0 B0 F1 B1): stage 0 ends last at
    //         f0 + 2 f1 + 2 b1 + b0 = f0 + 2 f1 + 2 bi1 + 2 w1 + bi0 + w0.
    //   split (s0: F0 F1 Bi0 Bi1 W0 W1, s1: F0 Bi0 F1 Bi1 W0 W1): stage 0's Bi1 waits for stage 1's
    //         Bi1 (f0 + 2 f1 + 2 bi1), then runs Bi1, W0, W1: f0 + 2 f1 + 2 bi1 + bi0 + 2 w0
    //         (stage 1 ends at f0 + 2 f1 + 2 bi1 + 2 w1, earlier as bi0 > 0).
    // Each stage's optimizer step follows its last pass, so the difference is 2 w1 - w0.
    const Bed bed(2);
    workloads::TrainingPlan p = testing::pipeline_plan(1, "1f1b");
    p.layout.pp = 2;
    p.training.global_batch = 8;  // 8 / (dp 1 x micro-batch 4) = 2 micro-batches
    const FixedOrder one_f_one_b({{F(0), F(1), B(0), B(1)}, {F(0), B(0), F(1), B(1)}});
    const FixedOrder split({{F(0), F(1), Bi(0), Bi(1), W(0), W(1)}, {F(0), Bi(0), F(1), Bi(1), W(0), W(1)}});
    const auto r1 = bed.run(p, one_f_one_b);
    const auto r2 = bed.run(p, split);

    const auto c = bed.costs(p);
    const double w_layer = c.dense.pass[workloads::pass_index(PassKind::BackwardWeight)].compute;
    const double w0 = 4 * w_layer + c.embedding[workloads::pass_index(PassKind::BackwardWeight)]->compute;
    const double w1 = 4 * w_layer + c.head[workloads::pass_index(PassKind::BackwardWeight)]->compute;
    INFO("1F1B " << r1.step_time_s << " s, split " << r2.step_time_s << " s, w0 " << w0 << " s, w1 " << w1 << " s");
    CHECK(r1.step_time_s - r2.step_time_s == Approx(2 * w1 - w0).epsilon(1e-6));
    // The same work either way: each stage computes as long in both (weights split from inputs).
    for (size_t s = 0; s < 2; ++s) CHECK(r2.stages[s].compute_s == Approx(r1.stages[s].compute_s).epsilon(1e-9));
    // Activations are freed by the input-gradient pass: the same peak as 1F1B.
    CHECK(r2.stages[0].peak_in_flight == 2);
    CHECK(r2.stages[1].peak_in_flight == 1);
}

TEST_CASE("a schedule's virtual-stage mapping decides where chunks, sends and the embedding live",
          "[workloads][replay]") {
    // V shape, 2 stages x 2 chunks, one micro-batch: virtual stages 0 (s0), 1 (s1), 2 (s1), 3 (s0).
    // Every pass waits for the one before it, so the step is the serial sum
    //   sum over v of (F_v + B_v) + the optimizer of stage 0 (it finishes last),
    // with 2 layers per chunk, the embedding in chunk v0 and the head in v3, both on stage 0. Only
    // v0 -> v1 and v2 -> v3 (and back) cross stages: 4 sends, none between v1 and v2.
    const Bed bed(2);
    workloads::TrainingPlan p = testing::pipeline_plan(2, "1f1b");
    p.layout.pp = 2;
    p.training.global_batch = 4;  // one micro-batch
    const VShape v_shape(
        {{{0, 0, PassKind::Forward}, {0, 1, PassKind::Forward}, {0, 1, PassKind::Backward}, {0, 0, PassKind::Backward}},
         {{0, 0, PassKind::Forward},
          {0, 1, PassKind::Forward},
          {0, 1, PassKind::Backward},
          {0, 0, PassKind::Backward}}});
    const workloads::StageMap map(bed.model, p, v_shape);
    CHECK(map.owner(0) == 0);
    CHECK(map.owner(1) == 1);
    CHECK(map.owner(2) == 1);
    CHECK(map.owner(3) == 0);
    CHECK(map.holds_embedding(0));
    CHECK(map.holds_head(0));
    CHECK_FALSE(map.holds_head(1));

    const auto r = bed.run(p, v_shape);
    const auto c = bed.costs(p);
    const size_t f = workloads::pass_index(PassKind::Forward), b = workloads::pass_index(PassKind::Backward);
    const double passes = 4 * 2 * (c.dense.pass[f].compute + c.dense.pass[b].compute) + c.embedding[f]->compute +
                          c.embedding[b]->compute + c.head[f]->compute + c.head[b]->compute;
    models::OpDesc adam = models::memory_op("adam", map.stage_params(0) * (12 + 4 + 12 + 2));
    adam.kind = models::OpKind::Optimizer;
    // Within the four ~30 ps sends and the picosecond rounding of 26 tasks.
    CHECK(r.step_time_s == Approx(passes + bed.cost->seconds(adam)).epsilon(1e-8));
    // Sends: 4 pipeline sends (2 tasks per stage), each ~0 s on this network.
    CHECK(r.tasks == static_cast<size_t>(/* compute */ 4 * 2 * 2 + 4 + /* optimizer */ 2 + /* sends */ 4));
    // Stage 0 holds 4 layers, the embedding and the (untied) output layer.
    const double layer = bed.model.layer_params();
    CHECK(r.stages[0].memory.weights == Approx(2 * (4 * layer + 2 * 128.0 * 2048)).epsilon(1e-12));
    CHECK(r.stages[1].memory.weights == Approx(2 * 4 * layer).epsilon(1e-12));
}

TEST_CASE("the memory estimate needs no simulation and matches the closed form", "[workloads][memory]") {
    // One stage (pp 1), 8 micro-batches of 4 x 2048 tokens, no ZeRO, fp32 gradients: with 1F1B on one
    // stage one micro-batch is in flight. With P parameters (8 layers, embedding, output layer):
    //   weights 2P, gradients 4P, Adam 12P, activations 8 x one layer's (models/memory), transient
    //   the logits + fp32 softmax: T x vocab x (2 + 4), reserved the stack's 1.5 GB.
    const auto model = testing::pipeline_model();
    auto cluster = testing::pipeline_cluster();
    cluster.gpus_per_node = 1;
    workloads::TrainingPlan p = testing::pipeline_plan(1, "1f1b");
    p.layout.pp = 1;
    const auto m = workloads::estimate_training_memory(model, cluster, p);
    REQUIRE(m.stages.size() == 1);
    const double P = 8 * model.layer_params() + 2 * 128.0 * 2048;
    const auto& mem = m.stages[0].memory;
    CHECK(m.stages[0].peak_in_flight == 1);
    CHECK(mem.weights == Approx(2 * P));
    CHECK(mem.gradients == Approx(4 * P));
    CHECK(mem.optimizer == Approx(12 * P));
    models::LayerInputs in;
    in.batch = models::TokenBatch::uniform(4, 2048, 2048);
    CHECK(mem.activations == Approx(8 * models::layer_activation_bytes(model, in)));
    CHECK(mem.transient == Approx(4 * 2048.0 * 128 * 6));
    {
        // A fused cross-entropy (Megatron-LM --cross-entropy-loss-fusion) works on the bf16 logits
        // in place: 2 bytes per logit instead of 2 + 4.
        workloads::TrainingPlan f = p;
        f.stack.kernels.fused_cross_entropy = true;
        CHECK(workloads::estimate_training_memory(model, cluster, f).stages[0].memory.transient ==
              Approx(4 * 2048.0 * 128 * 2));
    }
    CHECK(mem.reserved == 1.5e9);
    CHECK(m.peak_bytes == Approx(mem.total()));
    CHECK_FALSE(m.out_of_memory);
    // The simulated report carries the same estimate.
    const auto r = testing::predict(model, cluster, p);
    CHECK(r.peak_memory_bytes == m.peak_bytes);
    // ZeRO-3 over 4 ranks shards weights, gradients and optimizer states by 4 and adds two gathered
    // layers of bf16 weights.
    cluster.gpus_per_node = 4;
    p.layout.dp = 4;
    p.training.global_batch = 128;
    p.training.zero_stage = 3;
    const auto z = workloads::estimate_training_memory(model, cluster, p).stages[0].memory;
    CHECK(z.weights == Approx(2 * P / 4 + 2 * 2 * model.layer_params()));
    CHECK(z.gradients == Approx(4 * P / 4));
    CHECK(z.optimizer == Approx(12 * P / 4));
}

TEST_CASE("ZeRO-3 prefetches the next layer's gather ahead of the previous layer's reduce-scatter",
          "[workloads][replay]") {
    // One stage, dp 4, ZeRO-3, one micro-batch of 4 x 2048 tokens per rank, on a 25 GB/s link:
    // each layer's bf16 gather (~100 MB, 3/4 of it moved) takes ~3 ms and its fp32 reduce-scatter
    // ~6 ms, against ~1.1 ms of forward and ~2.2 ms of backward compute, so the dp stream is the
    // bottleneck. FSDP issues the gather of layer i+1 before the reduce-scatter of layer i, so the
    // stream never waits for a compute it does not need: the step is the dp stream's busy time plus
    // the little the stream waits (here ~0.1 ms: the backward's first two gathers need no compute,
    // and each reduce-scatter's layer has finished by the time the stream reaches it). Issued the
    // other way round, each backward layer runs gather, compute, reduce-scatter in series: the
    // step is dp busy + the backward compute, 21.8 ms (0.68 of the compute) over it.
    const auto model = testing::pipeline_model();
    auto cluster = testing::pipeline_cluster();
    cluster.scale_up.bandwidth_per_gpu = cluster.scale_up.link_bandwidth = 25e9;
    workloads::TrainingPlan p = testing::pipeline_plan(1, "1f1b");
    p.layout.pp = 1;
    p.layout.dp = 4;
    p.training.global_batch = 16;
    p.training.zero_stage = 3;
    const auto r = testing::predict(model, cluster, p);
    REQUIRE(r.stages.size() == 1);
    const auto& st = r.stages[0];
    INFO("step " << r.step_time_s << " dp " << st.comm(models::GroupKind::dp) << " compute " << st.compute_s);
    CHECK(st.comm(models::GroupKind::dp) > 2 * st.compute_s);  // the test bed is communication-bound
    CHECK(r.step_time_s >= st.comm(models::GroupKind::dp));
    CHECK(r.step_time_s < st.comm(models::GroupKind::dp) + 0.25 * st.compute_s);
}

TEST_CASE("the stream-busy collector measures busy, idle and exposed communication", "[workloads][metrics]") {
    // compute: [0, 2] and [5, 6]; comm: [1, 4] (starts after a 1 us task on its stream).
    //   busy: compute 3, comm 3 (+1 for the lead task) -> union of everything [0, 4] + [5, 6] = 5
    //   idle = makespan 6 - 5 = 1; exposed = 5 - compute's 3 = 2.
    sim::Simulator sim;
    sim::TaskGraph g(sim);
    const auto compute = g.add_stream("compute", "dev"), comm = g.add_stream("comm", "dev");
    const uint32_t n = g.intern("t");
    const auto us = [](int64_t x) { return sim::Time::from_us(x); };
    const auto c1 = g.add_task(compute, us(2), n);
    g.add_task(comm, us(1), n);
    const auto m1 = g.add_task(comm, us(3), n);
    const auto c2 = g.add_task(compute, us(1), n);
    g.add_dependency(m1, c2);  // starts at 4... plus a gap task on its own stream:
    const auto gap = g.add_stream("gap", "other");
    const auto wait = g.add_task(gap, us(5), n);
    g.add_dependency(wait, c2);  // c2 starts at 5
    (void)c1;
    const workloads::StreamBusyCollector busy(g);
    g.start();
    sim.run();
    CHECK(busy.makespan_s() == Approx(6e-6));
    CHECK(busy.busy_s(compute) == Approx(3e-6));
    CHECK(busy.busy_s(comm) == Approx(4e-6));
    const auto u = workloads::device_utilization(busy, compute, {comm});
    CHECK(u.busy_s == std::vector<double>{busy.busy_s(compute), busy.busy_s(comm)});
    CHECK(u.idle_s == Approx(1e-6));
    CHECK(u.exposed_comm_s == Approx(2e-6));
}

TEST_CASE("blocking pipeline sends put one send on the critical path of a two-stage 1F1B step", "[workloads][replay]") {
    // Two stages, two micro-batches, 1F1B (s0: F0 F1 B0 B1, s1: F0 B0 F1 B1), send time p. With
    // overlapped sends, s1 starts F1 as soon as it has sent B0's gradient; with blocking sends
    // (Megatron-LM without --overlap-p2p-communication) it first waits p for that send. Every later
    // pass on the critical path (s1: F1 B1, the send, s0: B1) shifts by p; stage 0's own blocked
    // sends (after F0 and F1) fall in time it spends waiting for B0's gradient anyway. So the step
    // is exactly p longer.
    Bed bed(2);
    bed.cluster.scale_up.bandwidth_per_gpu = bed.cluster.scale_up.link_bandwidth = 3e11;  // sends << passes
    bed.network = hardware::make_analytical_network(bed.cluster);
    workloads::TrainingPlan p = testing::pipeline_plan(1, "1f1b");
    p.layout.pp = 2;
    p.training.global_batch = 8;  // 2 micro-batches of 4
    const FixedOrder order({{F(0), F(1), B(0), B(1)}, {F(0), B(0), F(1), B(1)}});
    const auto overlapped = bed.run(p, order);
    p.stack.pp_comm_overlap = false;
    const auto blocking = bed.run(p, order);
    const double send = bed.costs(p).p2p;
    REQUIRE(send > 0);
    INFO("overlapped " << overlapped.step_time_s << " s, blocking " << blocking.step_time_s << " s, send " << send
                       << " s");
    CHECK(blocking.step_time_s - overlapped.step_time_s == Approx(send).epsilon(1e-6));
}

TEST_CASE("a pass ending in a blocking collective holds the compute stream until it ends", "[workloads][replay]") {
    // One device, two passes in schedule order. Pass A computes 3 us, then a blocking TP collective
    // of 2 us follows its compute (Placement::After: the framework waits for it, a synchronous
    // torch.distributed call). Pass B, independent of A, computes 1 us. The compute stream is in
    // order and the framework's stream waits for A's collective, so B runs in [5, 6] us, not
    // beside the collective in [3, 4]. A collective running beside the chain (overlap) does not hold
    // it: B then runs in [3, 4].
    for (const bool overlapped : {false, true}) {
        sim::Simulator sim;
        sim::TaskGraph g(sim);
        const workloads::StageStreams streams = workloads::add_stage_streams(g, "stage 0", {models::GroupKind::tp});
        const std::vector<uint32_t> names = {g.intern("compute"), g.intern("tp")};
        workloads::TaskStyle style;
        style.compute_tag = 0;
        style.comm_tag[static_cast<size_t>(models::GroupKind::tp)] = 1;
        style.names = &names;
        const workloads::CommMoves none;
        workloads::PassChain a(g, streams, style, std::nullopt, nullptr);
        const sim::TaskId ca = a.add_compute(3e-6, 0, 0);
        a.chain(ca);
        const sim::TaskId ta = a.add_comm(models::GroupKind::tp, 2e-6, none, workloads::kAllParts, 0, 0);
        if (overlapped) {
            g.add_dependency(ca, ta);
            a.overlap(models::GroupKind::tp);
        } else {
            a.follow(ca, ta);
        }
        const sim::TaskId end_a = a.finish(0);
        workloads::PassChain b(g, streams, style, std::nullopt, nullptr);
        const sim::TaskId cb = b.add_compute(1e-6, 1, 0);
        b.chain(cb);
        const sim::TaskId end_b = b.finish(1);
        g.start();
        sim.run();
        const double start_b = g.start_time(cb).us(), end = std::max(g.end_time(end_a).us(), g.end_time(end_b).us());
        INFO((overlapped ? "overlapped" : "blocking")
             << ": B starts at " << start_b << " us, the passes end at " << end << " us");
        CHECK(start_b == Approx(overlapped ? 3.0 : 5.0));
        CHECK(end == Approx(overlapped ? 5.0 : 6.0));
    }
}

TEST_CASE("block recomputation recomputes the first N layers of a piece and keeps the others' activations",
          "[workloads][replay][memory]") {
    // One stage of 8 layers (pp 1, tp 1, dp 1, 8 micro-batches, communication ~0), recompute full
    // with recompute_num_layers N (Megatron-Core --recompute-method block): each micro-batch's
    // backward recomputes the forward of N layers, so the step is N x m x f longer than without
    // recomputation (f one layer's forward compute, m = 8 micro-batches); N = 8 is full
    // recomputation. Memory: N layers keep their inputs, 8 - N their whole activations.
    const auto model = testing::pipeline_model();
    auto cluster = testing::pipeline_cluster();
    cluster.gpus_per_node = 1;
    workloads::TrainingPlan p = testing::pipeline_plan(1, "1f1b");
    p.layout.pp = 1;
    const auto none = testing::predict(model, cluster, p);
    p.training.recompute = workloads::Recompute::Full;
    const auto full = testing::predict(model, cluster, p);
    p.training.recompute_num_layers = 3;
    const auto three = testing::predict(model, cluster, p);
    const Bed bed(1);
    const double f = bed.costs(p).dense.pass[workloads::pass_index(PassKind::Forward)].compute;
    INFO("none " << none.step_time_s << " s, 3 layers " << three.step_time_s << " s, full " << full.step_time_s
                 << " s, f " << f << " s");
    CHECK(three.step_time_s - none.step_time_s == Approx(3 * 8 * f).epsilon(1e-6));
    CHECK(full.step_time_s - none.step_time_s == Approx(8 * 8 * f).epsilon(1e-6));
    p.training.recompute_num_layers = 8;
    CHECK(testing::predict(model, cluster, p).step_time_s == Approx(full.step_time_s).epsilon(1e-12));

    models::LayerInputs in;
    in.batch = models::TokenBatch::uniform(4, 2048, 2048);
    p.training.recompute_num_layers = 3;
    const auto mem = workloads::estimate_training_memory(model, cluster, p).stages[0].memory;
    CHECK(mem.activations ==
          Approx(3 * models::layer_input_bytes(model, in) + 5 * models::layer_activation_bytes(model, in)));
    // It counts the layers of full recomputation: with selective recomputation it is an error.
    p.training.recompute = workloads::Recompute::Selective;
    const auto bad = plans::check_training_plan(model, cluster, p);
    REQUIRE_FALSE(bad.empty());
    CHECK(bad.front().key == "training.recompute_num_layers");
}
