// Multi-level checkpoints from a scenario (plans/run.h: run.ssd_replicas, run.persist_every): the
// copies' and the persisted level's times in closed form, which tiers lose a node's share, the
// refusals by key, and a run on local SSDs against the same run with copies or a persisted level.
#include "plans/evaluate.h"
#include "plans/run.h"
#include "plans/run_steps.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "tests/support/run_fixture.h"

#include <catch2/catch.hpp>

#include <string>

using namespace fathom;

namespace {

// Llama 3 8B (context parallel 2) on `nodes` DGX H100 nodes with one local NVMe each (KIOXIA
// CM7-R: 6.75 GB/s write, 14 GB/s read) and a DGX SuperPOD file system (250 GB/s aggregate write,
// 500 read, 20 GB/s a node's client); the `run` section's keys follow.
std::string scenario(int nodes, const std::string& run) {
    return "name: levels-test\nmodel: llama3-8b\ncluster:\n  accelerator: h100-sxm-80gb\n  nodes: " +
           std::to_string(nodes) +
           "\n  gpus_per_node: 8\n  ssd: nvme-gen5-14gbs\n  storage: superpod-h100-best\nparallel:\n  cp: 2\n"
           "training:\n  seq_len: 8192\n  global_batch_size: 128\n  micro_batch_size: 1\n  zero_stage: 1\nrun:\n"
           "  target_steps: 100000\n  failures: llama3-h100\n  detect: 5 min\n  restart: 10 min\n  "
           "checkpoint_tier: ssd\n" +
           run;
}

plans::Scenario load(const std::string& yaml) { return testing::load_text(yaml, "levels-test.yaml"); }

plans::CheckpointCost cost(const plans::Scenario& s) {
    const plans::CheckpointPlan k = plans::plan_checkpoint(s.model, s.cluster, *s.training(), *s.run);
    REQUIRE(k.violations.empty());
    return k.cost;
}

sim::InputError refusal(const std::string& yaml) { return testing::load_error(yaml, "levels-test.yaml"); }

}  // namespace

TEST_CASE("checkpoint copies on other nodes' SSDs and a persisted level, in closed form", "[plans][run]") {
    const plans::Scenario bare = load(scenario(4, ""));
    const plans::CheckpointCost b = cost(bare);
    // The SSDs alone lose a node's share with the node.
    CHECK(b.node_local);
    CHECK(b.persist_every == 0);
    // Two peers' copies: each node writes three shares to its SSD (its own and two peers') and
    // sends its share to two peers over its NICs; the slower bounds the write.
    const plans::Scenario two = load(scenario(4, "  ssd_replicas: 2\n"));
    const plans::CheckpointCost c = cost(two);
    const double per_node = c.bytes / 4;
    CHECK(!c.node_local);
    CHECK(c.write_s == Approx(std::max(3 * per_node / 6.75e9, 2 * per_node / two.cluster.node_nic_achievable())));
    CHECK(c.read_s == Approx(b.read_s));
    // Every 4th checkpoint also to the file system: four nodes' clients at 20 GB/s bound it below
    // the 250 GB/s aggregate; persisted after the snapshot and that write, loaded back at the
    // client's bound plus the copy to the GPUs.
    const plans::Scenario persisted = load(scenario(4, "  persist_every: 4\n"));
    const plans::CheckpointCost p = cost(persisted);
    CHECK(p.node_local);
    CHECK(p.persist_every == 4);
    CHECK(p.persist_write_s == Approx(per_node / 20e9));
    CHECK(p.persist_s == Approx(p.snapshot_s + per_node / 20e9));
    CHECK(p.persist_load_s == Approx(per_node / 20e9 + p.snapshot_s));
    // The engine's policy carries them.
    const plans::RunPlan run = plans::plan_run(persisted, 1.0, testing::source_catalog());
    CHECK(run.spec.checkpoint.node_local);
    CHECK(run.spec.checkpoint.persist_every == 4);
    CHECK(run.spec.checkpoint.persist_s == p.persist_s);
    CHECK(run.spec.checkpoint.persist_load_s == p.persist_load_s);
}

TEST_CASE("multi-level checkpoints' bad input names its key", "[plans][run][bad-input]") {
    CHECK(refusal(scenario(4, "  ssd_replicas: 4\n")).key() == "run.ssd_replicas");  // 3 other nodes
    const std::string storage = "  checkpoint_tier: ssd\n";
    std::string on_fs = scenario(4, "  persist_every: 2\n");
    on_fs.replace(on_fs.find(storage), storage.size(), "  checkpoint_tier: storage\n");
    const sim::InputError fs = refusal(on_fs);
    CHECK(fs.key() == "run.persist_every");
    CHECK_THAT(std::string(fs.what()), Catch::Contains("persist already"));
    std::string no_fs = scenario(4, "  persist_every: 2\n");
    no_fs.replace(no_fs.find("  storage: superpod-h100-best\n"), 30, "");
    CHECK(refusal(no_fs).key() == "run.persist_every");
    // A persisted checkpoint drains for longer than persist_every intervals (1.4 s a node at 20 GB/s).
    const sim::InputError behind = refusal(scenario(4, "  persist_every: 1\n  checkpoint_interval: 1 s\n"));
    CHECK(behind.key() == "run.persist_every");
    CHECK_THAT(std::string(behind.what()), Catch::Contains("fall behind"));
    std::string copies_on_fs = scenario(4, "  ssd_replicas: 1\n");
    copies_on_fs.replace(copies_on_fs.find(storage), storage.size(), "  checkpoint_tier: storage\n");
    CHECK(refusal(copies_on_fs).key() == "run.ssd_replicas");
}

TEST_CASE("a run on local SSDs loses more to node failures than with copies or a persisted level", "[plans][run]") {
    // 4 nodes at 100x Llama 3's rates (~1.6 failures a day, 85% of them taking a node), 100,000
    // steps (about 4 days): on the SSDs alone each node failure goes back to the start; a persisted
    // level every 4th checkpoint bounds what it loses; copies on a peer lose only the work since
    // the last checkpoint.
    const std::string rate = "  failure_scale: 100\n  seeds: 20\n  checkpoint_interval: 30 min\n";
    const plans::Outcome alone = plans::evaluate(load(scenario(4, rate)), testing::source_context());
    const plans::Outcome levels =
        plans::evaluate(load(scenario(4, rate + "  persist_every: 4\n")), testing::source_context());
    const plans::Outcome copies =
        plans::evaluate(load(scenario(4, rate + "  ssd_replicas: 1\n")), testing::source_context());
    REQUIRE(alone.run);
    REQUIRE(levels.run);
    REQUIRE(copies.run);
    const plans::RunSummary &a = alone.run->summary, &l = levels.run->summary, &c = copies.run->summary;
    CHECK(a.local_losses > 0);
    CHECK(c.local_losses == 0);
    CHECK(a.lost_work_s > l.lost_work_s);
    CHECK(l.lost_work_s > c.lost_work_s);
    CHECK(a.wall_mean_s > l.wall_mean_s);
    CHECK(l.wall_mean_s > c.wall_mean_s);
}

TEST_CASE("an asynchronous drain over the NICs takes its share of them from training's steps", "[plans][run]") {
    // To the file system: each node's quarter at its client's 20 GB/s, a small share of the node's
    // 8 x 400G NICs; to peers' host memory: as fast as the NICs go, so half of them (max-min fair
    // with training's flows); to the node's own SSDs, or synchronous: none.
    std::string fs = scenario(4, "");
    fs.replace(fs.find("  checkpoint_tier: ssd\n"), 22, "  checkpoint_tier: storage\n");
    const plans::Scenario on_fs = load(fs);
    const plans::CheckpointCost f = cost(on_fs);
    const double nics = on_fs.cluster.node_nic_achievable();
    CHECK(f.drain_nic_bytes == Approx(f.bytes / 4));
    CHECK(f.drain_nic_share == Approx(20e9 / nics));
    std::string mem = scenario(4, "");
    mem.replace(mem.find("  checkpoint_tier: ssd\n"), 22, "  checkpoint_tier: memory\n");
    mem.replace(mem.find("  storage: superpod-h100-best\n"), 30, "  host_memory: 2 TB\n");
    const plans::Scenario in_memory = load(mem);
    CHECK(cost(in_memory).drain_nic_share == Approx(0.5));
    CHECK(cost(load(scenario(4, ""))).drain_nic_share == 0);
    std::string sync = mem;
    sync.replace(sync.find("  checkpoint_tier: memory\n"), 26,
                 "  checkpoint_tier: memory\n  checkpoint_method: sync\n");
    CHECK(cost(load(sync)).drain_nic_share == 0);
    // The step behind the drain is the step model's with half the NIC bandwidth: the 16
    // data-parallel replicas' gradient reduction crosses the nodes, so it is slower, and the run's
    // steps take that much longer while a drain is in flight.
    const plans::Outcome o = plans::evaluate(in_memory, testing::source_context());
    REQUIRE(o.run);
    const double step = o.training()->step_time_s;
    const double behind = plans::step_with_nics(in_memory, testing::source_context(), 0.5);
    CHECK(behind > step);
    CHECK(o.run->plan.spec.checkpoint.drain_slowdown == Approx(behind / step).epsilon(1e-12));
    CHECK(plans::step_with_nics(in_memory, testing::source_context(), 1.0) == step);
    CHECK(o.run->summary.drain_s > 0);
}
