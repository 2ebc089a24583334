// Elastic recovery from a scenario (run.recovery elastic; plans/run_elastic.h): the layouts with
// failed nodes' replicas out, the refusals, and the step model's slower steps in the run.
#include "plans/evaluate.h"
#include "plans/run.h"
#include "plans/run_elastic.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "tests/support/run_fixture.h"

#include <catch2/catch.hpp>

#include <string>

using namespace fathom;

namespace {

// Llama 3 8B with context parallelism 2 on `nodes` DGX H100 nodes (replicas of 2 GPUs, 4 to a
// node), 128 sequences a step; the `run` section's keys follow.
std::string scenario(int nodes, const std::string& run, const std::string& parallel = "  cp: 2\n") {
    return "name: elastic-test\nmodel: llama3-8b\ncluster:\n  accelerator: h100-sxm-80gb\n  nodes: " +
           std::to_string(nodes) + "\n  gpus_per_node: 8\n  ssd: nvme-gen5-14gbs\nparallel:\n" + parallel +
           "training:\n  seq_len: 8192\n  global_batch_size: 128\n  micro_batch_size: 1\n  zero_stage: 1\nrun:\n" + run;
}

plans::Scenario load(const std::string& yaml) { return testing::load_text(yaml, "elastic-test.yaml"); }

sim::InputError refusal(const std::string& yaml) { return testing::load_error(yaml, "elastic-test.yaml"); }

const std::string kRun =
    "  target_steps: 100000\n  failures: llama3-h100\n  failure_scale: 100\n  detect: 5 min\n"
    "  restart: 10 min\n  seeds: 20\n";

}  // namespace

TEST_CASE("elastic layouts drop a failed node's replicas and keep the global batch", "[plans][run]") {
    const plans::Scenario s = load(scenario(4, kRun));
    const workloads::TrainingPlan& plan = *s.training();
    REQUIRE(plan.layout.dp == 16);
    // Replicas of cp 2 = 2 GPUs: a node of 8 holds 4 of them.
    CHECK(plans::replicas_per_node(s.cluster, plan) == 4);
    // One node out: dp 12 on 3 nodes; 128 micro-batches over 12 replicas, the busiest runs
    // ceil(128 / 12) = 11: a step of 12 x 11 = 132 sequences' time.
    const auto one = plans::degraded_layout(s.cluster, plan, 1);
    REQUIRE(one);
    CHECK(one->plan.layout.dp == 12);
    CHECK(one->cluster.nodes == 3);
    CHECK(one->plan.training.global_batch == 132);
    CHECK(one->plan.microbatches() == 11);
    const auto three = plans::degraded_layout(s.cluster, plan, 3);
    REQUIRE(three);
    CHECK(three->plan.layout.dp == 4);
    CHECK(three->plan.microbatches() == 32);
    CHECK(!plans::degraded_layout(s.cluster, plan, 4));  // no replica left
    // A replica of tp 8 x pp 2 spans two nodes: a failed node takes one replica (two nodes) out.
    workloads::TrainingPlan wide = plan;
    wide.layout = {};
    wide.layout.dp = 2;
    wide.layout.tp = 8;
    wide.layout.pp = 2;
    CHECK(plans::replicas_per_node(s.cluster, wide) == 1);
    const auto w = plans::degraded_layout(s.cluster, wide, 1);
    REQUIRE(w);
    CHECK(w->cluster.nodes == 2);
    CHECK(w->plan.training.global_batch == 128);
}

TEST_CASE("elastic recovery's bad input names its key", "[plans][run][bad-input]") {
    const sim::InputError no_pause = refusal(scenario(4, kRun + "  recovery: elastic\n"));
    CHECK(no_pause.key() == "run.recovery");
    CHECK_THAT(std::string(no_pause.what()), Catch::Contains("run.reconfigure"));
    const sim::InputError stray = refusal(scenario(4, kRun + "  reconfigure: 1 s\n"));
    CHECK(stray.key() == "run.reconfigure");
    // One replica of the whole cluster (tp 8 on one node): nothing goes on without it.
    const sim::InputError lone = refusal(scenario(1, kRun + "  recovery: elastic\n  reconfigure: 1 s\n", "  tp: 8\n"));
    CHECK(lone.key() == "run.recovery");
    CHECK_THAT(std::string(lone.what()), Catch::Contains("every data-parallel replica"));
    // Replicas of tp 4 x pp 3 = 12 GPUs on nodes of 8: a node holds parts of two.
    hardware::ClusterSpec c;
    c.gpus_per_node = 8;
    c.nodes = 6;
    workloads::TrainingPlan odd;
    odd.layout.dp = 4;
    odd.layout.tp = 4;
    odd.layout.pp = 3;
    plans::RunRequest r;
    r.recovery = plans::Recovery::Elastic;
    const auto v = plans::elastic_violations(c, odd, r);
    REQUIRE(v.size() == 1);
    CHECK_THAT(v[0].message, Catch::Contains("neither fills whole nodes nor divides one"));
}

TEST_CASE("an elastic run prices its slower steps with the step model and beats restarts when spares are short",
          "[plans][run]") {
    // 4 nodes at 100x Llama 3's rates (~1.6 failures a day), no spares, 12-hour repairs: restarting
    // waits out every hardware failure's repair; going on elastically runs on fewer nodes meanwhile.
    const std::string pool = "  spare_nodes: 0\n  repair: 12 h\n";
    const plans::Scenario restart = load(scenario(4, kRun + pool));
    const plans::Scenario elastic = load(scenario(4, kRun + pool + "  recovery: elastic\n  reconfigure: 10 s\n"));
    const plans::Outcome a = plans::evaluate(restart, testing::source_context());
    const plans::Outcome b = plans::evaluate(elastic, testing::source_context());
    REQUIRE(a.run);
    REQUIRE(b.run);
    const workloads::run::Elastic& e = b.run->plan.spec.elastic;
    REQUIRE(e.enabled);
    // One node out: 11 micro-batches a replica for 8: the step at least 11/8 x as long less the
    // pipeline-free fixed part; at most 11/8 with the smaller data-parallel reduction.
    const double one = e.slowdown(1);
    CHECK(one > 1.2);
    CHECK(one <= 11.0 / 8.0 * 1.01);
    // A rejoining node copies a GPU's weights and optimizer state, 8 GPUs' over its 8 NICs: the
    // copy is that state over one GPU's NIC share.
    const auto& stage = b.training()->stages.front();
    const double state = stage.memory.weights + stage.memory.optimizer;
    CHECK(e.copy_s == Approx(state * 8 / elastic.cluster.node_nic_achievable()));
    const plans::RunSummary& r = b.run->summary;
    CHECK(r.drops > 0);
    CHECK(r.degraded_s > 0);
    CHECK(r.wall_mean_s < a.run->summary.wall_mean_s);
    const double productive = 100000 * b.training()->step_time_s;
    CHECK(r.wall_mean_s == Approx(productive + r.lost_work_s + r.detect_s + r.node_wait_s + r.restart_s + r.load_s +
                                  r.checkpoint_stall_s + r.straggler_s + r.reconfigure_s + r.degraded_s));
}
