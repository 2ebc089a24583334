// Whole training runs from a scenario's `run` section (plans/run.h): the failure rates against the
// published counts they come from, the checkpoint's size and times against their closed forms,
// the interval's default, the simulated runs against the closed form, and the section's refusals
// (file, line and key).
#include "plans/run.h"

#include "plans/evaluate.h"
#include "scenarios/measured.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

using namespace fathom;

namespace {

// Llama 3 8B (context parallel 2, as the quickstart) on `nodes` DGX H100 nodes with local NVMe (one KIOXIA CM7-R: 6.75
// GB/s write, 14 GB/s read, 7.68 TB) and PCIe 5.0 x16 host links; the `run` section's keys follow.
std::string scenario(int nodes, const std::string& run, const std::string& cluster_extra = "") {
    return "name: run-test\nmodel: llama3-8b\ncluster:\n  accelerator: h100-sxm-80gb\n  nodes: " +
           std::to_string(nodes) + "\n  gpus_per_node: 8\n  ssd: nvme-gen5-14gbs\n" + cluster_extra +
           "parallel:\n  cp: 2\ntraining:\n  seq_len: 8192\n  global_batch_size: 128\n  micro_batch_size: 1\n  "
           "zero_stage: 1\n"
           "run:\n" +
           run;
}

plans::Scenario load(const std::string& yaml) {
    return scenarios::load_scenario_text(yaml, "run-test.yaml", testing::source_catalog());
}

// The message of the InputError loading `yaml` throws (empty if none), with its line and key.
struct Refusal {
    std::string message, key;
    int line = 0;
};
Refusal refusal(const std::string& yaml) {
    try {
        load(yaml);
    } catch (const sim::InputError& e) {
        return {e.what(), e.key(), e.line()};
    }
    return {};
}

}  // namespace

TEST_CASE("the Llama 3 failure rates give 419 interruptions in 54 days to a 16,384-GPU job", "[plans][run]") {
    const auto& rates = testing::source_catalog().failure_rates("llama3-h100");
    double per_hour = 0, count = 0;
    for (const auto& c : rates.causes) {
        per_hour += rates.per_hour(c, 16384);
        count += c.count;
    }
    // Table 5's counts sum to the 419 unexpected interruptions of the 54-day snapshot; the rate of
    // a job of the snapshot's size is their count over its days.
    CHECK(count == 419);
    CHECK(per_hour * 24 == Approx(419.0 / 54));
    // Half the GPUs, half the rate (node-level causes scale with the nodes at 8 GPUs a node).
    CHECK(rates.per_hour(rates.causes.front(), 8192) == Approx(rates.per_hour(rates.causes.front(), 16384) / 2));
}

TEST_CASE("a checkpoint's size and times follow from the plan and the tiers", "[plans][run]") {
    const plans::Scenario s = load(scenario(4,
                                            "  target_tokens: 1e10\n  failures: llama3-h100\n  detect: 5 min\n"
                                            "  restart: 10 min\n  checkpoint_method: sync\n"));
    const plans::CheckpointPlan k = plans::plan_checkpoint(s.model, s.cluster, *s.training(), *s.run);
    REQUIRE(k.violations.empty());
    // 2 bytes of bf16 weights and 12 of fp32 master weights and Adam moments per parameter.
    const double params = s.model.total_params(8192);
    CHECK(k.cost.bytes == Approx(14 * params));
    // Each of the 32 GPUs copies its 1/32 over its PCIe 5.0 x16 link; each node writes its quarter to
    // its one SSD at 6.75 GB/s and reads it back at 14 GB/s.
    const double pcie = s.cluster.pcie.achievable_bandwidth();
    CHECK(k.cost.snapshot_s == Approx(14 * params / 32 / pcie));
    CHECK(k.cost.write_s == Approx(14 * params / 4 / 6.75e9));
    CHECK(k.cost.read_s == Approx(14 * params / 4 / 14e9));
    // Synchronous: the stall is the whole write; the load reads and copies it back.
    CHECK(k.cost.stall_s == Approx(k.cost.snapshot_s + k.cost.write_s));
    CHECK(k.cost.durable_s == Approx(k.cost.stall_s));
    CHECK(k.cost.load_s == Approx(k.cost.read_s + k.cost.snapshot_s));
    // Asynchronous: only the snapshot stalls; two SSDs a node halve the write.
    const plans::Scenario a =
        load(scenario(4, "  target_tokens: 1e10\n  failures: llama3-h100\n  detect: 5 min\n  restart: 10 min\n",
                      "  ssds_per_node: 2\n"));
    const plans::CheckpointPlan ka = plans::plan_checkpoint(a.model, a.cluster, *a.training(), *a.run);
    CHECK(ka.cost.stall_s == Approx(k.cost.snapshot_s));
    CHECK(ka.cost.durable_s == Approx(k.cost.snapshot_s + k.cost.write_s / 2));
    // The shared file system: the slower of its aggregate write bandwidth and the nodes' clients
    // (SuperPOD "best": 250 GB/s aggregate, 20 GB/s a node: four nodes reach 80 GB/s).
    const plans::Scenario f = load(scenario(4,
                                            "  target_tokens: 1e10\n  failures: llama3-h100\n  detect: 5 min\n"
                                            "  restart: 10 min\n  checkpoint_tier: storage\n",
                                            "  storage: superpod-h100-best\n"));
    const plans::CheckpointPlan kf = plans::plan_checkpoint(f.model, f.cluster, *f.training(), *f.run);
    CHECK(kf.cost.write_s == Approx(14 * params / (4 * 20e9)));
    CHECK(kf.cost.tier_id == "superpod-h100-best");
    // Peers' host memory (Gemini): each node's quarter to two peers over its 8 x 400G NICs at
    // their achievable fraction, read back from one.
    const plans::Scenario m = load(scenario(4,
                                            "  target_tokens: 1e10\n  failures: llama3-h100\n  detect: 5 min\n"
                                            "  restart: 10 min\n  checkpoint_tier: memory\n  memory_replicas: 2\n",
                                            "  host_memory: 2 TB\n"));
    const plans::CheckpointPlan km = plans::plan_checkpoint(m.model, m.cluster, *m.training(), *m.run);
    REQUIRE(km.violations.empty());
    const double nics = 8 * m.cluster.nic.bandwidth * m.cluster.nic.efficiency;
    CHECK(km.cost.write_s == Approx(14 * params / 4 * 2 / nics));
    CHECK(km.cost.read_s == Approx(14 * params / 4 / nics));
}

TEST_CASE("the run's interval defaults to the Young/Daly optimum in whole steps", "[plans][run]") {
    const plans::Scenario s = load(scenario(4,
                                            "  target_tokens: 1e10\n  failures: llama3-h100\n  detect: 5 min\n"
                                            "  restart: 10 min\n  checkpoint_method: sync\n  seeds: 50\n"
                                            "  ssd_replicas: 1\n"));  // a node's loss keeps its share
    const double step_s = 2.0;
    const plans::RunPlan p = plans::plan_run(s, step_s, testing::source_catalog());
    // 1e10 tokens in steps of 128 x 8192: ceil(9536.7) steps.
    CHECK(p.spec.target_steps == 9537);
    // 32 GPUs at 419 failures in 16,384 x 54 x 24 GPU-hours.
    const double lambda = 419.0 / (16384.0 * 54 * 24) * 32 / 3600;
    CHECK(p.failures_per_hour() == Approx(lambda * 3600));
    CHECK(p.young_daly_s == Approx(std::sqrt(2 * p.checkpoint.stall_s / lambda)));
    const double steps = std::ceil(p.young_daly_s / step_s);
    CHECK(p.spec.checkpoint.interval_s == Approx(steps * step_s));
    // The simulated runs against the closed form (synchronous checkpoints, exponential failures):
    // at this rate (one failure in ~84 h) few of the 50 seeds fail, so the mean sits within 1%.
    const plans::RunSummary r = plans::simulate_runs(p);
    REQUIRE(r.expected_s > 0);
    CHECK(r.wall_mean_s == Approx(r.expected_s).epsilon(0.01));
    CHECK(r.wall_p10_s <= r.wall_p50_s);
    CHECK(r.wall_p50_s <= r.wall_p90_s);
    CHECK(r.ettr_mean == Approx(p.spec.target_steps * step_s / r.wall_mean_s).epsilon(0.01));
}

TEST_CASE("a checkpoint every N steps, and synchronous ones at any interval", "[plans][run]") {
    // run.checkpoint_every 7 on a 2-second step: an interval of 14 s of training. A synchronous
    // checkpoint is durable when training resumes, so even a 1-second interval (rounded up to one
    // step) is a plan; an asynchronous one drains beside training and is refused below its drain.
    const std::string rest = "  target_steps: 1000\n  failures: none\n  detect: 5 min\n  restart: 10 min\n";
    const plans::Scenario every = load(scenario(1, rest + "  checkpoint_every: 7\n  checkpoint_method: sync\n"));
    const plans::RunPlan p = plans::plan_run(every, 2.0, testing::source_catalog());
    CHECK(p.spec.checkpoint.interval_s == Approx(14.0));
    CHECK(p.interval_key == "run.checkpoint_every");
    // 1000 steps: checkpoints after 7, 14, ..., 994 (142 of them; none at the target), no failures.
    const plans::RunSummary r = plans::simulate_runs(p);
    CHECK(r.wall_mean_s == Approx(1000 * 2.0 + 142 * p.checkpoint.stall_s));
    const plans::Scenario sync = load(scenario(1, rest + "  checkpoint_interval: 1 s\n  checkpoint_method: sync\n"));
    CHECK(plans::plan_run(sync, 2.0, testing::source_catalog()).spec.checkpoint.interval_s == Approx(2.0));
    const plans::Scenario async = load(scenario(1, rest + "  checkpoint_every: 1\n  checkpoint_method: async\n"));
    REQUIRE(async.run->method == plans::CheckpointMethod::Async);
    const plans::CheckpointPlan k = plans::plan_checkpoint(async.model, async.cluster, *async.training(), *async.run);
    const double drain = k.cost.durable_s - k.cost.stall_s;
    REQUIRE(drain > 1e-3);
    try {
        plans::plan_run(async, drain / 2, testing::source_catalog());
        FAIL("accepted");
    } catch (const sim::InputError& e) {
        CHECK_THAT(e.what(), Catch::Contains("run.checkpoint_every") && Catch::Contains("shorter than one checkpoint"));
    }
    CHECK(plans::plan_run(async, drain * 2, testing::source_catalog()).spec.checkpoint.interval_s == Approx(drain * 2));
    // Both ways of giving the interval at once: refused by key.
    const Refusal both = refusal(scenario(1, rest + "  checkpoint_every: 7\n  checkpoint_interval: 1 h\n"));
    CHECK(both.key == "run.checkpoint_every");
}

TEST_CASE("evaluate runs a scenario's whole run on its step, the same for the same seed", "[plans][run]") {
    const plans::Scenario s = load(scenario(1,
                                            "  target_steps: 200000\n  failures: llama3-h100\n"
                                            "  failure_scale: 100\n  detect: 5 min\n  restart: 10 min\n"
                                            "  seeds: 20\n"));
    const plans::Outcome a = plans::evaluate(s, testing::source_context());
    const plans::Outcome b = plans::evaluate(s, testing::source_context());
    REQUIRE(a.run);
    REQUIRE(b.run);
    CHECK(a.run->plan.spec.step_s == a.training()->step_time_s);
    CHECK(a.run->summary.wall_mean_s == b.run->summary.wall_mean_s);
    CHECK(a.run->summary.failures > 0);
    // Wall clock = productive time + every loss, on average as in each run.
    const auto& r = a.run->summary;
    const double productive = 200000 * a.training()->step_time_s;
    CHECK(r.wall_mean_s == Approx(productive + r.lost_work_s + r.detect_s + r.node_wait_s + r.restart_s + r.load_s +
                                  r.checkpoint_stall_s));
}

TEST_CASE("a run section's bad input names its file, line and key", "[plans][run][bad-input]") {
    const std::string ok_rest = "  failures: llama3-h100\n  detect: 5 min\n  restart: 10 min\n";
    SECTION("no target, or two") {
        const Refusal r = refusal(scenario(1, ok_rest));
        CHECK_THAT(r.message, Catch::Contains("run.target_tokens, run.target_steps or run.target_time"));
        const Refusal both = refusal(scenario(1, "  target_tokens: 1e9\n  target_steps: 10\n" + ok_rest));
        CHECK_THAT(both.message, Catch::Contains("one of them"));
    }
    SECTION("a target already reached") {
        const Refusal r = refusal(scenario(1, "  target_tokens: 1e9\n  trained_tokens: 2e9\n" + ok_rest));
        CHECK(r.key == "run.trained_tokens");
        CHECK(r.line == 17);
        CHECK_THAT(r.message, Catch::Contains("is reached"));
    }
    SECTION("an unknown failure profile, a negative scale") {
        const Refusal r =
            refusal(scenario(1, "  target_tokens: 1e9\n  failures: typo\n  detect: 5 min\n  restart: 1 min\n"));
        CHECK(r.key == "run.failures");
        CHECK_THAT(r.message, Catch::Contains("known: none, llama3-h100"));
        const Refusal n = refusal(scenario(1, "  target_tokens: 1e9\n  failure_scale: -1\n" + ok_rest));
        CHECK(n.key == "run.failure_scale");
    }
    SECTION("an interval shorter than one checkpoint's write") {
        const Refusal r = refusal(scenario(1, "  target_tokens: 1e9\n  checkpoint_interval: 1 s\n" + ok_rest));
        CHECK(r.key == "run.checkpoint_interval");
        CHECK(r.line == 17);
        CHECK_THAT(r.message, Catch::Contains("shorter than one checkpoint's write"));
    }
    SECTION("peer memory without the nodes' memory, or too little of it") {
        const Refusal r = refusal(scenario(1, "  target_tokens: 1e9\n  checkpoint_tier: memory\n" + ok_rest));
        CHECK(r.key == "cluster.host_memory");
        const Refusal alone = refusal(
            scenario(1, "  target_tokens: 1e9\n  checkpoint_tier: memory\n" + ok_rest, "  host_memory: 2 TB\n"));
        CHECK_THAT(alone.message, Catch::Contains("the cluster has 0 other nodes"));
        const Refusal small = refusal(
            scenario(2, "  target_tokens: 1e9\n  checkpoint_tier: memory\n" + ok_rest, "  host_memory: 100 GB\n"));
        CHECK(small.key == "run.memory_replicas");
        CHECK_THAT(small.message, Catch::Contains("more than its host memory"));
    }
    SECTION("stragglers without all three of their keys") {
        const Refusal r = refusal(scenario(1, "  target_tokens: 1e9\n  stragglers_per_node_day: 0.01\n" + ok_rest));
        CHECK(r.key == "run.stragglers_per_node_day");
        CHECK_THAT(r.message, Catch::Contains("go together"));
    }
    SECTION("spares without a repair time, or the reverse") {
        const Refusal r = refusal(scenario(1, "  target_tokens: 1e9\n  spare_nodes: 2\n" + ok_rest));
        CHECK(r.key == "run.spare_nodes");
        CHECK_THAT(r.message, Catch::Contains("go together"));
        const Refusal back = refusal(scenario(1, "  target_tokens: 1e9\n  repair: 2 days\n" + ok_rest));
        CHECK(back.key == "run.repair");
    }
    SECTION("a time without its unit") {
        const Refusal r =
            refusal(scenario(1, "  target_tokens: 1e9\n  failures: none\n  detect: 5\n  restart: 1 min\n"));
        CHECK(r.key == "run.detect");
    }
    SECTION("no tier to write to, or a tier too small") {
        std::string yaml = scenario(1, "  target_tokens: 1e9\n" + ok_rest);
        yaml.replace(yaml.find("  ssd: nvme-gen5-14gbs\n"), 23, "");
        CHECK_THAT(refusal(yaml).message, Catch::Contains("neither a shared file system"));
        // Llama 3.1 405B on one node: 14 x 406e9 bytes, two of them far past one 7.68 TB SSD.
        std::string big = scenario(1, "  target_tokens: 1e9\n" + ok_rest);
        big.replace(big.find("llama3-8b"), 9, "llama3.1-405b");
        const Refusal r = refusal(big);
        CHECK(r.key == "cluster.ssds_per_node");
        CHECK_THAT(r.message, Catch::Contains("more than its SSDs hold"));
    }
    SECTION("a run section in a serving scenario") {
        const Refusal r = refusal(
            "model: llama3-8b\nkind: serving\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 8}\n"
            "serving: {tp: 8}\ntraffic: {num_requests: 10, prompt: 100, output: 10}\nrun: {target_steps: 1}\n");
        CHECK_THAT(r.message, Catch::Contains("belongs to training scenarios"));
    }
}

TEST_CASE("spares: hardware failures take their node to repair, a short pool holds the job up", "[plans][run]") {
    // 4 nodes of Llama 3 8B at 100x Llama 3's rates (~1.6 failures a day, ~85% of them hardware),
    // 2-day repairs: without spares every hardware failure waits out its repair (less detection);
    // with as many spares as failures nothing waits; the software causes never take a node.
    const std::string base =
        "  target_steps: 100000\n  failures: llama3-h100\n  failure_scale: 100\n  detect: 5 min\n"
        "  restart: 10 min\n  seeds: 20\n";
    const plans::Scenario none = load(scenario(4, base + "  spare_nodes: 0\n  repair: 2 days\n"));
    const plans::Scenario plenty = load(scenario(4, base + "  spare_nodes: 100000\n  repair: 2 days\n"));
    const plans::RunPlan pn = plans::plan_run(none, 1.0, testing::source_catalog());
    const plans::RunPlan pp = plans::plan_run(plenty, 1.0, testing::source_catalog());
    for (const auto& f : pn.spec.failures)
        CHECK(f.takes_node == (f.name != "software_bug" && f.name != "nccl_watchdog" && f.name != "dependency"));
    const plans::RunSummary rn = plans::simulate_runs(pn), rp = plans::simulate_runs(pp);
    CHECK(rp.node_wait_s == 0);
    CHECK(rn.node_wait_s > 0);
    double hardware = 0;
    for (size_t i = 0; i < pn.spec.failures.size(); ++i)
        if (pn.spec.failures[i].takes_node) hardware += rn.interruptions[i];
    CHECK(rn.node_wait_s <= hardware * (2 * 86400 - 300) * (1 + 1e-12));
    CHECK(rn.wall_mean_s > rp.wall_mean_s);
}

TEST_CASE("stragglers per node and day become the job's rate, their slow steps a loss of their own", "[plans][run]") {
    // 0.05 stragglers a node-day on 4 nodes: 0.2 a day for the job (1/120 an hour); each slows steps
    // 2x for up to 1 h, so costs at most 30 min of slow steps, then an eviction's restart.
    const plans::Scenario s =
        load(scenario(4,
                      "  target_steps: 1000000\n  failures: none\n  detect: 5 min\n  restart: 10 min\n  seeds: 20\n"
                      "  stragglers_per_node_day: 0.05\n  straggler_slowdown: 2\n  straggler_detect: 1 h\n"));
    const plans::RunPlan p = plans::plan_run(s, 1.0, testing::source_catalog());
    CHECK(p.spec.stragglers.per_hour == Approx(0.2 / 24));
    const plans::RunSummary r = plans::simulate_runs(p);
    CHECK(r.evictions > 0);
    CHECK(r.straggler_s <= (r.evictions + 1) * 1800 * (1 + 1e-9));
    CHECK(r.expected_s < 0);  // no closed form with stragglers
}

TEST_CASE("published whole runs: Llama 3's interruptions in-sample, OPT-175B's and DataStates-LLM's out of sample",
          "[plans][run][compare]") {
    // scenarios/measured-runs.yaml. Llama 3's 419 unexpected interruptions in 54 days are the
    // profile's own counts over the snapshot's wall clock; the engine draws them per hour of up-time,
    // so the simulated rate per wall-clock day is the published one times the fraction of the
    // window the job was up (1 - detection, restart and load time / wall clock, ~0.92 here): below
    // the count, and by less than the 10% of down-time the report's ETTR bound allows.
    // Its ETTR sits above the report's 90% bound with compare's assumed recovery costs. OPT-175B's
    // A100 fleet restarted at least 1.75 times a day; the H100 fleet's rates give 0.47 (-73%):
    // pinned as a gap (more than 50% low), not hidden.
    // DataStates-LLM's checkpoint throughputs (size / blocked time). At data parallelism 1, in
    // closed form: DeepSpeed's synchronous torch.save blocks for a rank's share at 0.69 GB/s (the
    // writer's rate bounds it far above Eagle's 650 GB/s), so G GPUs give G x 0.69 GB/s;
    // DataStates-LLM's asynchronous snapshot blocks for a GPU's share over its PCIe 4.0 link
    // (31.5 GB/s x 0.83), G x 26.145 GB/s. DeepSpeed is within 60% of the published bars (-31% to
    // +58%). With data parallelism d, DeepSpeed's layout leaves the weights to the first replica, so
    // its ranks write 2/R + 12/(R d) of a parameter's 14 bytes a rank of R = G / d: the 13B sweep
    // keeps its -26% to -38% (the published scaling, 26 to 86 GB/s over d = 2..16, is followed),
    // while the 30B one saturates at ~25 GB/s, which fathom does not: over 90% high from d = 2 on.
    // DataStates-LLM blocks 0.3-0.4 s at least a checkpoint at any scale (a fixed cost fathom does
    // not model): over d > 1 fathom is 1.6 to 4.1 times too fast. Both pinned as gaps.
    // Their 50-iteration runs with a checkpoint every k (run.checkpoint_every): steps plus
    // ceil(50 / k) - 1 stalls (none at the target). DeepSpeed's are within 55% (-17% to +51%: the
    // stall is 1.4 to 1.6 times the published one at k = 1, the step 0.7 times); DataStates-LLM's
    // 28% to 53% short (fathom's step is 0.7 times Figure 4's, and at k = 1 the published runs
    // slow down under I/O pressure, which fathom does not model).
    const auto results = scenarios::compare_measured(std::string(FATHOM_SOURCE_DIR) + "/scenarios/measured-runs.yaml",
                                                     testing::source_context());
    REQUIRE(results.size() == 53);
    for (const auto& r : results) {
        INFO(r.id << " " << r.reason << " measured " << r.measured << " predicted " << r.predicted);
        REQUIRE(r.ok());
        if (r.id.rfind("e2e-datastates-", 0) == 0) {
            if (r.id.find("deepspeed-sync") != std::string::npos) CHECK(std::abs(r.error) < 0.55);
            else CHECK((r.error < -0.25 && r.error > -0.55));
        } else if (r.id.rfind("ckpt-datastates-", 0) == 0) {
            const auto x = r.id.find("xa100"), dash = r.id.rfind('-', x);
            const double gpus = std::stod(r.id.substr(dash + 1, x - dash - 1));
            const std::string model = r.id.substr(16, r.id.find('-', 16) - 16);
            const double nodes = model == "3b" ? 1 : model == "7b" ? 2 : model == "13b" ? 4 : model == "30b" ? 8 : 20;
            const double dp = gpus / (4 * nodes);
            const bool sync = r.id.find("deepspeed-sync") != std::string::npos;
            if (dp == 1) {
                CHECK(r.predicted == Approx(gpus * (sync ? 0.69 : 31.5 * 0.83)));
                if (sync) CHECK(std::abs(r.error) < 0.6);
            } else if (!sync) {
                CHECK(r.error > 0.6);
                CHECK(r.error < 3.1);
            } else if (model == "13b") {
                CHECK(std::abs(r.error) < 0.4);
            } else {
                CHECK(r.error > 0.9);
            }
        } else if (r.id == "run-llama3-405b-16384xh100-interruptions") {
            CHECK(r.predicted < r.measured);
            CHECK(r.predicted > 0.9 * r.measured);
        } else if (r.id == "run-llama3-405b-16384xh100-ettr") {
            CHECK(r.predicted > 90.0);
            CHECK(r.predicted < 100.0);
        } else {
            CHECK(r.error < -0.5);
        }
    }
}
