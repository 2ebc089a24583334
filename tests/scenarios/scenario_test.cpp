// Scenario files -> typed scenarios: the quickstart example's fields, stack presets, --set
// overrides, input errors that carry file, line and key, and warnings for keys that cannot change
// the result.
#include "scenarios/scenario.h"

#include "sim/error.h"
#include "tests/support/fixtures.h"
#include "workloads/training/training_memory.h"

#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace fathom;
using testing::example;

namespace {

const plans::Catalog& catalog() { return testing::source_catalog(); }

// A scenario file in the temp directory, unique per test process, removed on scope exit.
class TempFile {
public:
    TempFile(const std::string& stem, const std::string& text)
        : path_(
              (std::filesystem::temp_directory_path() / (stem + "-" + std::to_string(::getpid()) + ".yaml")).string()) {
        std::ofstream(path_) << text;
    }
    ~TempFile() { std::remove(path_.c_str()); }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// A one-node Llama 3 8B scenario with the `training:` block's body given (from line 9).
std::string scenario_with_training(const std::string& training_body) {
    return "name: t\n"                       // line 1
           "kind: training\n"                // line 2
           "model: llama3-8b\n"              // line 3
           "cluster:\n"                      // line 4
           "  accelerator: h100-sxm-80gb\n"  // line 5
           "  nodes: 1\n"                    // line 6
           "  gpus_per_node: 8\n"            // line 7
           "training:\n"                     // line 8
           + training_body;                  // from line 9
}
const std::string kBatch =
    "  seq_len: 2048\n"         // line 9
    "  global_batch_size: 8\n"  // line 10
    "  micro_batch_size: 1\n";  // line 11

sim::InputError load_error(const std::string& path, const std::vector<std::string>& sets = {}) {
    try {
        scenarios::load_scenario(path, catalog(), sets);
    } catch (const sim::InputError& e) {
        return e;
    }
    FAIL("expected an InputError from " << path);
    return sim::InputError("unreachable");
}

const workloads::TrainingPlan& plan_of(const plans::Scenario& s) {
    REQUIRE(s.training() != nullptr);
    return *s.training();
}

}  // namespace

TEST_CASE("the quickstart example loads with its fields", "[scenarios]") {
    const auto s = scenarios::load_scenario(example("quickstart.yaml"), catalog());
    CHECK(s.name == "llama3-8b-dgx-h100");
    CHECK(s.seed == 1);
    CHECK(s.kind() == plans::WorkloadKind::Training);
    CHECK(s.model.id == "llama3-8b");
    CHECK(s.model.layers == 32);
    CHECK(s.model.hidden == 4096);
    CHECK(s.cluster.accelerator.id == "h100-sxm-80gb");
    CHECK(s.cluster.nodes == 1);
    CHECK(s.cluster.gpus_per_node == 8);
    CHECK(s.cluster.gpus() == 8);
    CHECK(s.cluster.scale_up.id == "nvlink4-nvswitch");  // the accelerator's default fabric
    CHECK(s.cluster.nic.id == "ib-ndr-400g");            // the default NIC
    CHECK(s.warnings.empty());
    const auto& p = plan_of(s);
    CHECK(p.training.seq_len == 8192);
    CHECK(p.training.global_batch == 128);
    CHECK(p.training.micro_batch == 1);
    CHECK(p.layout.tp == 1);
    CHECK(p.layout.pp == 1);
    CHECK(p.layout.cp == 2);
    CHECK(p.layout.vp == 1);
    CHECK(p.layout.dp == 4);  // dp omitted: 8 GPUs / (tp 1 x pp 1 x cp 2)
    CHECK(p.gpus() == s.cluster.gpus());
    CHECK(p.microbatches() == 32);  // 128 sequences / (dp 4 x micro-batch 1)
    CHECK(p.training.zero_stage == 1);
    CHECK(p.training.recompute == workloads::Recompute::None);
    CHECK(p.training.schedule == "1f1b");  // default for vp = 1
    CHECK(p.stack_preset == "nemo-24.07");
    CHECK(p.stack.grad_dtype == workloads::GradDtype::Bf16);  // from the preset: bf16 gradient reduction
    CHECK(p.stack.tp_comm_overlap);                           // from the preset
    CHECK(p.stack.kernels.gemm_dtype == hardware::Dtype::bf16);
}

TEST_CASE("a stack preset sets its values, the scenario's own keys override it", "[scenarios][stacks]") {
    const auto& nemo = catalog().stack("nemo-24.07");
    workloads::TrainingPlan p;
    nemo.apply(p);
    CHECK(p.stack.grad_dtype == workloads::GradDtype::Bf16);
    CHECK(p.training.zero_stage == 1);
    CHECK(p.layout.sequence_parallel);
    // Every preset setting names a declared key and carries a source.
    for (const auto& [id, preset] : catalog().stacks()) {
        INFO("preset " << id);
        CHECK(!preset.settings.empty());
        for (const auto& setting : preset.settings) {
            CHECK(plans::find_key(setting.key) != nullptr);
            CHECK(!setting.source.empty());
        }
    }
    // The scenario's zero_stage beats the preset's, its grad_dtype too.
    const TempFile f("fathom-preset", scenario_with_training(kBatch + "  zero_stage: 0\n") +
                                          "stack:\n  preset: nemo-24.07\n  grad_dtype: fp32\n");
    const auto s = scenarios::load_scenario(f.path(), catalog());
    CHECK(plan_of(s).training.zero_stage == 0);
    CHECK(plan_of(s).stack.grad_dtype == workloads::GradDtype::Fp32);
    CHECK(plan_of(s).stack.tp_comm_overlap);  // not overridden
    // An unknown preset names the key.
    const TempFile g("fathom-bad-preset", scenario_with_training(kBatch) + "stack: nemo-99\n");
    const auto e = load_error(g.path());
    CHECK(e.key() == "stack");
    CHECK_THAT(e.what(), Catch::Contains("unknown stack preset 'nemo-99'") && Catch::Contains("nemo-24.07"));
}

TEST_CASE("Megatron-LM's gradient dtype: fp32 with bf16 and fp8 training, fp16 with fp16", "[scenarios][stacks]") {
    // NVIDIA/Megatron-LM a8d172b (2021) megatron/arguments.py:133-145 and d98e8a64 (2025)
    // megatron/training/arguments.py:1204-1217: --bf16 forces fp32 gradient accumulation and
    // all-reduce, --fp16 does not. Both presets say so (stack.grad_dtype fp32-for-bf16).
    for (const char* preset : {"megatron-lm-2021", "megatron-lm"}) {
        // The memory model keeps gradients of that size: states of P parameters (tp 1, no ZeRO-2)
        // hold bytes x P of gradients, against the bf16 run's 4 P.
        const auto bf16 = scenarios::load_scenario(example("quickstart.yaml"), catalog(),
                                                   {std::string("stack.preset=") + preset, "stack.dtype=bf16"});
        const double bf16_gradients =
            workloads::estimate_training_memory(bf16.model, bf16.cluster, plan_of(bf16)).stages[0].memory.gradients;
        for (const auto& [dtype, bytes] : {std::pair<std::string, double>{"fp16", 2}, {"bf16", 4}, {"fp8", 4}}) {
            INFO(preset << " " << dtype);
            const auto s = scenarios::load_scenario(example("quickstart.yaml"), catalog(),
                                                    {std::string("stack.preset=") + preset, "stack.dtype=" + dtype});
            CHECK(plan_of(s).stack.main_grad_bytes() == bytes);
            const auto m = workloads::estimate_training_memory(s.model, s.cluster, plan_of(s));
            CHECK(m.stages[0].memory.gradients == Approx(bf16_gradients * bytes / 4));
        }
    }
    // The key reads back as set; a plain fp32 does not follow the parameters.
    const auto t =
        scenarios::load_scenario(example("quickstart.yaml"), catalog(), {"stack.grad_dtype=fp32", "stack.dtype=fp16"});
    CHECK(plan_of(t).stack.main_grad_bytes() == 4);
}

TEST_CASE("set overrides (--set key=value) change the plan before validation", "[scenarios]") {
    const auto base = scenarios::load_scenario(example("quickstart.yaml"), catalog());
    const auto s = scenarios::load_scenario(example("quickstart.yaml"), catalog(), {"parallel.tp=2"});
    CHECK(plan_of(s).layout.tp == 2);
    CHECK(plan_of(s).layout.dp == plan_of(base).layout.dp / 2);  // re-derived: 8 GPUs / (tp 2 x pp 1 x cp 2) = 2
    const auto t = scenarios::load_scenario(example("quickstart.yaml"), catalog(),
                                            {"parallel.pp=2", "parallel.vp=2", "training.global_batch_size=64"});
    CHECK(plan_of(t).layout.pp == 2);
    CHECK(plan_of(t).layout.vp == 2);
    CHECK(plan_of(t).training.schedule == "interleaved-1f1b");  // default for vp > 1
    CHECK(plan_of(t).training.global_batch == 64);
    CHECK(plan_of(t).gpus() == 8);
    // A new key can be added by an override too (here a list, given inline).
    const auto u = scenarios::load_scenario(example("quickstart.yaml"), catalog(),
                                            {"parallel.pp=2", "training.layers_per_stage=[20,12]"});
    CHECK(plan_of(u).training.layers_per_virtual_stage == std::vector<int>{20, 12});
    // A stack key next to a scalar `stack: <preset>`.
    const auto v =
        scenarios::load_scenario(example("nemotron4-340b-128xh100.yaml"), catalog(), {"stack.grad_dtype=fp32"});
    CHECK(plan_of(v).stack.grad_dtype == workloads::GradDtype::Fp32);
    CHECK(plan_of(v).stack_preset == "nemo-24.07");

    // An override that makes the plan impossible is reported like a file error, naming the key.
    const auto e = load_error(example("quickstart.yaml"), {"parallel.dp=3"});
    CHECK(e.key() == "parallel.dp");
    CHECK(e.file() == example("quickstart.yaml"));
    CHECK_THAT(e.what(), Catch::Contains("GPUs but the cluster has 8"));
    // Malformed override (no '=').
    CHECK_THROWS_WITH(scenarios::load_scenario(example("quickstart.yaml"), catalog(), {"parallel.tp"}),
                      Catch::Contains("key=value"));
}

TEST_CASE("input errors name the file, the line and the key", "[scenarios][errors]") {
    SECTION("unknown key, with a suggestion") {
        const TempFile f("fathom-unknown-key", scenario_with_training(kBatch + "  zero_stag: 2\n"));  // line 12
        const auto e = load_error(f.path());
        CHECK(e.file() == f.path());
        CHECK(e.line() == 12);
        CHECK(e.key() == "training.zero_stag");
        CHECK_THAT(e.what(),
                   Catch::Contains("unknown key 'zero_stag'") && Catch::Contains("did you mean 'zero_stage'"));
        CHECK_THAT(e.what(), Catch::StartsWith(f.path() + ":12: key 'training.zero_stag'"));
    }
    SECTION("a key in the wrong section says where it belongs") {
        const TempFile f("fathom-moved-key", scenario_with_training(kBatch + "  tp: 2\n"));  // line 12
        const auto e = load_error(f.path());
        CHECK(e.line() == 12);
        CHECK(e.key() == "training.tp");
        CHECK_THAT(e.what(), Catch::Contains("belongs in 'parallel' (parallel.tp)"));
    }
    SECTION("quantity without a unit") {
        const TempFile f("fathom-missing-unit",
                         scenario_with_training(kBatch) + "stack:\n  runtime_reserved: 2\n");  // line 13
        const auto e = load_error(f.path());
        CHECK(e.line() == 13);
        CHECK(e.key() == "stack.runtime_reserved");
        CHECK_THAT(e.what(), Catch::Contains("missing unit"));
    }
    SECTION("values outside the declared range, and numbers that are not finite") {
        const TempFile zero("fathom-zero-stage", scenario_with_training(kBatch + "  zero_stage: 4\n"));
        CHECK_THAT(load_error(zero.path()).what(),
                   Catch::Contains("training.zero_stage") && Catch::Contains("between 0 and 3"));
        const TempFile huge("fathom-huge-tp", scenario_with_training(kBatch) + "parallel: {tp: 99999999999}\n");
        CHECK_THAT(load_error(huge.path()).what(), Catch::Contains("parallel.tp") && Catch::Contains("too large"));
        const TempFile nan("fathom-nan", scenario_with_training(kBatch) + "stack: {bucket_size: nan}\n");
        CHECK_THAT(load_error(nan.path()).what(), Catch::Contains("stack.bucket_size") && Catch::Contains("finite"));
        const TempFile choice("fathom-choice", scenario_with_training(kBatch + "  recompute: some\n"));
        CHECK_THAT(load_error(choice.path()).what(), Catch::Contains("expected none, selective or full, got 'some'"));
    }
    SECTION("impossible plan points at the offending key") {
        const TempFile f("fathom-bad-tp", scenario_with_training(kBatch) +
                                              "parallel:\n"  // line 12
                                              "  tp: 8\n"    // line 13
                                              "  pp: 3\n");  // line 14
        // 8 GPUs / (tp 8 x pp 3) is not an integer: dp cannot be derived.
        const auto e = load_error(f.path());
        CHECK(e.file() == f.path());
        CHECK(e.key() == "parallel.tp");
        CHECK(e.line() == 13);
        CHECK_THAT(e.what(), Catch::Contains("does not divide"));
    }
    SECTION("a file that does not exist") {
        CHECK_THROWS_WITH(scenarios::load_scenario(testing::kSource + "/no/such/file.yaml", catalog()),
                          Catch::Contains("cannot open the YAML file: no such file"));
    }
    SECTION("a directory given as the scenario") {
        CHECK_THROWS_WITH(scenarios::load_scenario(testing::kSource + "/scenarios", catalog()),
                          Catch::Contains("cannot open the YAML file: it is a directory"));
    }
}

TEST_CASE("keys that cannot change the result are warned about, with file, line and key", "[scenarios][warnings]") {
    const std::string text =
        "name: t\n"           // line 1
        "seed: 7\n"           // line 2
        "model: llama3-8b\n"  // line 3
        "cluster:\n"          // line 4
        "  accelerator: h100-sxm-80gb\n"
        "  nodes: 1\n"
        "  gpus_per_node: 8\n"
        "  ssd: nvme-gen5-14gbs\n"           // line 8
        "  scale_out: {nic: ib-hdr-200g}\n"  // line 9
        "training:\n" +
        kBatch;
    const TempFile f("fathom-warnings", text);
    const auto s = scenarios::load_scenario(f.path(), catalog());
    REQUIRE(s.warnings.size() == 3);
    CHECK(s.warnings[0].key == "seed");
    CHECK(s.warnings[0].line == 2);
    CHECK(s.warnings[1].key == "cluster.ssd");
    CHECK(s.warnings[1].line == 8);
    CHECK(s.warnings[2].key == "cluster.scale_out");
    CHECK_THAT(s.warnings[2].text(),
               Catch::StartsWith(f.path() + ":9: key 'cluster.scale_out'") && Catch::Contains("single-node"));
    // Two nodes: the NIC matters, the rail-optimized / fat-tree-2 choice does not.
    const auto two = scenarios::load_scenario(
        f.path(), catalog(),
        {"cluster.nodes=2", "cluster.scale_out.topology=fat-tree-2", "training.global_batch_size=16"});
    bool topology = false;
    for (const auto& w : two.warnings) topology = topology || w.key == "cluster.scale_out.topology";
    CHECK(topology);
}
