// Checkpoint writers (run.checkpoint_writer, plans/run.h CheckpointCost::writer_s) and the
// accelerator's host link: a rank's save at the writer's rate bounds the write in closed form, the
// DataStates-LLM DeepSpeed case's throughput follows from it, and bad writers are refused by key.
#include "plans/run.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "tests/support/run_fixture.h"

#include <catch2/catch.hpp>

#include <string>

using namespace fathom;

namespace {

// A 30B-class dense model (64 layers, hidden 6656, LLaMA's FFN) on `nodes` Polaris-like nodes (four
// A100 40GB each) writing to ALCF Eagle (650 GB/s aggregate, no client bound); TP 4, PP = nodes.
std::string scenario(int nodes, const std::string& run) {
    const std::string n = std::to_string(nodes);
    return "name: writer-test\nmodel:\n  layers: 64\n  hidden: 6656\n  heads: 52\n  ffn: 17920\n  vocab: 32000\n"
           "  activation: swiglu\ncluster:\n  accelerator: a100-sxm-40gb\n  nodes: " +
           n + "\n  gpus_per_node: 4\n  storage: alcf-eagle\nparallel:\n  tp: 4\n  pp: " + n +
           "\ntraining:\n  seq_len: 2048\n  global_batch_size: 16\n  micro_batch_size: 1\n  zero_stage: 1\n"
           "run:\n  target_steps: 5\n  failures: none\n  detect: 1 min\n  restart: 1 min\n" +
           run;
}

plans::CheckpointCost cost(const std::string& yaml) {
    const plans::Scenario s = testing::load_text(yaml, "writer-test.yaml");
    const plans::CheckpointPlan k = plans::plan_checkpoint(s.model, s.cluster, *s.training(), *s.run);
    REQUIRE(k.violations.empty());
    return k.cost;
}

}  // namespace

TEST_CASE("a checkpoint writer's rank rate bounds the write, in closed form", "[plans][run]") {
    const plans::Scenario s = testing::load_text(scenario(8, ""), "writer-test.yaml");
    // An A100's host link is PCIe 4.0 x16 (the accelerator's host_link): 31.5 GB/s x 0.83.
    CHECK(s.cluster.pcie.id == "pcie-gen4-x16");
    const double pcie = 31.5e9 * 0.83;
    const plans::CheckpointCost bare = cost(scenario(8, "  checkpoint_method: sync\n"));
    const double per_gpu = bare.bytes / 32;
    CHECK(bare.snapshot_s == Approx(per_gpu / pcie));
    // Without a writer the tier bounds the write: 650 GB/s for the whole checkpoint.
    CHECK(bare.writer_s == 0);
    CHECK(bare.write_s == Approx(bare.bytes / 650e9));
    CHECK(bare.stall_s == Approx(bare.snapshot_s + bare.bytes / 650e9));
    // torch.save: a rank saves its share from device memory to the file at 0.69 GB/s, snapshot
    // included, so a synchronous checkpoint stalls per_gpu / 0.69 GB/s (far above the tier's), and
    // the throughput DataStates-LLM reports (size / blocked time) is 32 ranks x 0.69 = 22.08 GB/s.
    const plans::CheckpointCost ts = cost(scenario(8, "  checkpoint_method: sync\n  checkpoint_writer: torch-save\n"));
    CHECK(ts.writer_s == Approx(per_gpu / 0.69e9));
    CHECK(ts.write_s == Approx(per_gpu / 0.69e9 - ts.snapshot_s));
    CHECK(ts.stall_s == Approx(per_gpu / 0.69e9));
    CHECK(ts.bytes / ts.stall_s == Approx(32 * 0.69e9));
    // Asynchronous: the stall is the snapshot alone; the drain takes the writer's rest.
    const plans::CheckpointCost ta = cost(scenario(8, "  checkpoint_method: async\n  checkpoint_writer: torch-save\n"));
    CHECK(ta.stall_s == Approx(ta.snapshot_s));
    CHECK(ta.durable_s == Approx(per_gpu / 0.69e9));
}

TEST_CASE("checkpoint writers are refused by key when unknown or without files to write", "[plans][run]") {
    const sim::InputError unknown =
        testing::load_error(scenario(2, "  checkpoint_writer: pickle9\n"), "writer-test.yaml");
    CHECK_THAT(unknown.what(), Catch::Contains("checkpoint_writer") && Catch::Contains("pickle9") &&
                                   Catch::Contains("torch-save") && Catch::Contains("writer-test.yaml:"));
    const std::string memory = scenario(2, "  checkpoint_tier: memory\n  checkpoint_writer: torch-save\n");
    const sim::InputError m = testing::load_error(
        memory.substr(0, memory.find("  storage:")) + "  host_memory: 4 TB\n" + memory.substr(memory.find("parallel:")),
        "writer-test.yaml");
    CHECK_THAT(m.what(), Catch::Contains("checkpoint_writer") && Catch::Contains("memory"));
}

TEST_CASE("DeepSpeed's checkpoint layout leaves the weights to the first data-parallel replica", "[plans][run]") {
    // 8 nodes of 4 GPUs as two pipelines of 4 stages (TP 4, PP 4, DP 2): a checkpoint is 2 bytes a
    // parameter of weights and 12 of optimizer state. Even: every rank writes bytes / 32. DeepSpeed
    // (first_replica) with ZeRO 1: a first-replica rank writes the weights over its replica's 16
    // ranks and its optimizer shard over all 32: W / 16 + O / 32. ZeRO 0: everything over 16.
    // ZeRO 3 shards the weights too: even again.
    const auto with = [](const std::string& zero, const std::string& layout) {
        std::string yaml = scenario(8, "  checkpoint_method: sync\n  checkpoint_layout: " + layout + "\n");
        const auto at = yaml.find("  pp: 8");
        yaml.replace(at, 7, "  pp: 4");
        const auto z = yaml.find("zero_stage: 1");
        yaml.replace(z, 13, "zero_stage: " + zero);
        const auto g = yaml.find("global_batch_size: 16");
        yaml.replace(g, 21, "global_batch_size: 32");
        const plans::Scenario s = testing::load_text(yaml, "writer-test.yaml");
        const plans::CheckpointPlan k = plans::plan_checkpoint(s.model, s.cluster, *s.training(), *s.run);
        REQUIRE(k.violations.empty());
        return k.cost;
    };
    const plans::CheckpointCost even = with("1", "even");
    const double weights_share = 2.0 / 14, optimizer_share = 12.0 / 14;  // a dense model: every parameter trained
    CHECK(even.rank_bytes == Approx(even.bytes / 32));
    const plans::CheckpointCost first = with("1", "first_replica");
    CHECK(first.bytes == Approx(even.bytes));
    CHECK(first.rank_bytes == Approx(first.bytes * (weights_share / 16 + optimizer_share / 32)));
    CHECK(first.snapshot_s == Approx(first.rank_bytes / (31.5e9 * 0.83)));
    CHECK(with("0", "first_replica").rank_bytes == Approx(first.bytes / 16));
    CHECK(with("3", "first_replica").rank_bytes == Approx(first.bytes / 32));
}
