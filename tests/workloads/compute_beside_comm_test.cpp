// Compute beside communication (workloads/replay/compute_beside_comm.h), against hand derivations:
// the observer stretches a compute task exactly while a contending collective runs beside it, the
// priced pass's stretch is the time-weighted mix of its op classes' slowdowns, and in a training
// step every data-parallel transfer hidden beside compute adds d (1 - 1/s) to the step.
#include "workloads/replay/compute_beside_comm.h"

#include "hardware/network/network_model.h"
#include "models/cost/cost_model.h"
#include "sim/simulator.h"
#include "sim/task_graph.h"
#include "tests/support/pipeline_fixture.h"
#include "workloads/replay/program_cost.h"
#include "workloads/training/training_step.h"

#include <catch2/catch.hpp>

#include <map>
#include <string>

using namespace fathom;
using sim::Time;

TEST_CASE("a compute task runs at 1/stretch exactly while a contending collective runs beside it",
          "[workloads][beside_comm]") {
    // Compute stream C: c1 (10 us, stretch 1.25), c2 (5 us, stretch 1.5). Contending stream D:
    // d1 (4 us) from 0, d2 (2 us) after c1. Stream T (a TP stream, not contending): t (6 us) from 0.
    //   c1: 0-4 us beside d1 at 1/1.25: 3.2 us of work; 6.8 us left alone: ends 10.8 us.
    //   c2: starts 10.8 beside d2 (10.8-12.8) at 1/1.5: 1.333 us of work; 3.667 left: ends 16.467 us.
    sim::Simulator sim;
    sim::TaskGraph g(sim);
    const sim::StreamId C = g.add_stream("compute", "dev"), D = g.add_stream("dp-comm", "dev"),
                        T = g.add_stream("tp-comm", "dev");
    workloads::ComputeBesideComm beside(g);
    beside.add_device(C, {D});
    const uint32_t n = g.intern("x");
    const sim::TaskId c1 = g.add_task(C, Time::from_us(10), n), c2 = g.add_task(C, Time::from_us(5), n);
    const sim::TaskId d1 = g.add_task(D, Time::from_us(4), n), d2 = g.add_task(D, Time::from_us(2), n);
    const sim::TaskId t = g.add_task(T, Time::from_us(6), n);
    g.add_dependency(c1, d2);
    beside.set_stretch(c1, 1.25);
    beside.set_stretch(c2, 1.5);
    g.start();
    sim.run();
    CHECK(g.end_time(d1).seconds() == Approx(4e-6));
    CHECK(g.end_time(t).seconds() == Approx(6e-6));
    CHECK(g.end_time(c1).seconds() == Approx(10.8e-6).margin(2e-12));
    CHECK(g.start_time(d2).seconds() == Approx(10.8e-6).margin(2e-12));
    CHECK(g.end_time(c2).seconds() == Approx(12.8e-6 + 5.5e-6 / 1.5).margin(2e-12));  // to the picosecond
}

namespace {

// Each op takes the time named for it.
class NamedCost final : public models::CostModel {
public:
    double seconds(const models::OpDesc& op) const override { return times.at(op.name); }
    std::map<std::string, double> times;
};

class NoNetwork final : public hardware::NetworkModel {
public:
    hardware::CollectiveCost collective(hardware::Collective, double, const hardware::CommGroup&) const override {
        return {0.0, "none"};
    }
    hardware::GroupLayout layout(const hardware::CommGroup& g) const override { return {g.count(), g.count(), 1}; }
};

}  // namespace

TEST_CASE("a priced pass's stretch beside collectives is its ops' time-weighted class slowdowns",
          "[workloads][beside_comm]") {
    // bf16 GEMM 3 ms at 1.2, fp8 GEMM 1 ms at 1.3, attention 1 ms at 1.1, norm 2 ms at 1.05:
    // beside a collective 3.6 + 1.3 + 1.1 + 2.1 = 8.1 ms of the 7 ms alone, a stretch of 8.1 / 7.
    NamedCost cost;
    cost.times = {{"qkv", 3e-3}, {"fc8", 1e-3}, {"attn", 1e-3}, {"norm", 2e-3}};
    NoNetwork net;
    workloads::ParallelLayout layout;
    models::LayerProgram p;
    p.compute(models::gemm_op("qkv", 64, 64, 64, hardware::Dtype::bf16));
    p.compute(models::gemm_op("fc8", 64, 64, 64, hardware::Dtype::fp8));
    models::OpDesc attn = models::memory_op("attn", 1e6);
    attn.kind = models::OpKind::AttentionFwd;
    p.compute(attn);
    p.compute(models::memory_op("norm", 1e6));
    workloads::ProgramCoster plain(cost, net, layout);
    CHECK(plain.cost(p).beside_comm_stretch() == 1.0);  // no slowdowns set: none
    workloads::ProgramCoster coster(cost, net, layout);
    coster.set_beside_comm({1.2, 1.3, 1.1, 1.05});
    const workloads::PassCost c = coster.cost(p);
    CHECK(c.compute == Approx(7e-3));
    CHECK(c.compute_beside_comm == Approx(8.1e-3));
    CHECK(c.beside_comm_stretch() == Approx(8.1 / 7));
}

TEST_CASE("each data-parallel transfer hidden beside compute adds d (1 - 1/s) to a step", "[workloads][beside_comm]") {
    // One stage (pp 1), dp 4 on links slow enough that each layer's gradient all-reduce takes time
    // yet hides beside the next layer's backward. With every op class slowed s beside a collective,
    // the compute loses d - d/s of work during each hidden transfer of length d and finishes that
    // much later; the transfers start when their layers' compute ends, so their own lengths and
    // what follows them shift with it: the step grows by H (1 - 1/s), H the hidden data-parallel
    // time of the unslowed step (its DP stream's busy time less what ran while compute was idle).
    // Exact but for the transfer that straddles the end of the compute: slowed, the compute covers
    // more of it (o s of its length instead of o), which shifts the step by under 0.1% of H here.
    workloads::TrainingPlan p = testing::pipeline_plan(1, "1f1b");
    p.layout.pp = 1;
    p.layout.dp = 4;
    p.training.global_batch = 32;  // two micro-batches of 4 per rank
    hardware::ClusterSpec cluster = testing::pipeline_cluster();
    cluster.scale_up.bandwidth_per_gpu = cluster.scale_up.link_bandwidth = 400e9;
    const models::ModelSpec model = testing::pipeline_model();
    const auto cost = models::make_roofline_cost(cluster.accelerator, models::Load::Sustained);
    const auto network = hardware::make_analytical_network(cluster);
    auto run = [&](double s) {
        cluster.accelerator.calibration.beside_comm = {s, s, s, s};
        const workloads::StepInputs in{model, cluster, p, *cost, *network, nullptr};
        return workloads::simulate_training_step(in);
    };
    const workloads::StepReport alone = run(1.0);
    const workloads::StageReport& st = alone.stages.at(0);
    const double hidden = st.comm(models::GroupKind::dp) - st.exposed_comm_s;
    REQUIRE(hidden > 0.05 * alone.step_time_s);  // the transfers matter
    REQUIRE(st.exposed_comm_s > 0);              // the last layers' reduction runs after the compute
    const double s = 1.25;
    const workloads::StepReport slowed = run(s);
    INFO("step alone " << alone.step_time_s << " s, hidden DP " << hidden << " s, slowed " << slowed.step_time_s);
    CHECK(slowed.step_time_s - alone.step_time_s == Approx(hidden * (1 - 1 / s)).epsilon(1e-3));
    // No contending stream (dp 1): not a picosecond more.
    p.layout.dp = 1;
    p.training.global_batch = 8;
    CHECK(run(s).step_time_s == run(1.0).step_time_s);
}
