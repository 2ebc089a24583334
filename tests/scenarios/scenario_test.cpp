// Scenario files -> typed specs: the quickstart example's fields, --set overrides, and input
// errors that carry file, line and key.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "scenarios/catalog.h"
#include "scenarios/scenario.h"
#include "sim/error.h"

using namespace fathom;

namespace {

const std::string kSource = FATHOM_SOURCE_DIR;

const scenarios::Catalog& catalog() {
    static const scenarios::Catalog c(kSource);
    return c;
}

std::string example(const std::string& name) { return kSource + "/scenarios/examples/" + name; }

// A scenario file in the temp directory, unique per test process, removed on scope exit.
class TempFile {
public:
    TempFile(const std::string& stem, const std::string& text)
        : path_((std::filesystem::temp_directory_path() /
                 (stem + "-" + std::to_string(::getpid()) + ".yaml")).string()) {
        std::ofstream(path_) << text;
    }
    ~TempFile() { std::remove(path_.c_str()); }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// The quickstart scenario with the `training:` block's body replaced.
std::string scenario_with_training(const std::string& training_body) {
    return "name: t\n"                      // line 1
           "kind: training\n"               // line 2
           "model: llama3-8b\n"             // line 3
           "cluster:\n"                     // line 4
           "  accelerator: h100-sxm-80gb\n"  // line 5
           "  nodes: 1\n"                   // line 6
           "  gpus_per_node: 8\n"           // line 7
           "training:\n"                    // line 8
           + training_body;                 // from line 9
}

sim::InputError load_error(const std::string& path, const std::vector<std::string>& sets = {}) {
    try {
        scenarios::load_scenario(path, catalog(), sets);
    } catch (const sim::InputError& e) {
        return e;
    }
    FAIL("expected an InputError from " << path);
    return sim::InputError("unreachable");
}

}  // namespace

TEST_CASE("the quickstart example loads with its fields", "[scenarios]") {
    const auto s = scenarios::load_scenario(example("quickstart.yaml"), catalog());
    CHECK(s.name == "llama3-8b-dgx-h100");
    CHECK(s.seed == 1);
    CHECK(s.model.id == "llama3-8b");
    CHECK(s.model.layers == 32);
    CHECK(s.model.hidden == 4096);
    CHECK(s.cluster.accelerator.id == "h100-sxm-80gb");
    CHECK(s.cluster.nodes == 1);
    CHECK(s.cluster.gpus_per_node == 8);
    CHECK(s.cluster.gpus() == 8);
    CHECK(s.cluster.scale_up.id == "nvlink4-nvswitch");  // the accelerator's default fabric
    CHECK(s.cluster.nic.id == "ib-ndr-400g");
    CHECK(s.cluster.nics_per_node == 8);
    const auto& p = s.plan;
    CHECK(p.training.seq_len == 8192);
    CHECK(p.training.global_batch == 128);
    CHECK(p.training.micro_batch == 1);
    CHECK(p.layout.tp == 1);
    CHECK(p.layout.pp == 1);
    CHECK(p.layout.cp == 2);
    CHECK(p.layout.vp == 1);
    CHECK(p.layout.dp == 4);                // dp omitted: 8 GPUs / (tp 1 x pp 1 x cp 2)
    CHECK(p.gpus() == s.cluster.gpus());
    CHECK(p.microbatches() == 32);   // 128 sequences / (dp 4 x micro-batch 1)
    CHECK(p.training.zero_stage == 1);
    CHECK(p.stack.grad_bytes == 2);        // grad_dtype: bf16
    CHECK(p.training.recompute == workloads::Recompute::None);
    CHECK(p.stack.kernels.gemm_dtype == hardware::Dtype::bf16);
    CHECK(p.training.schedule == "1f1b");     // default for vp = 1
}

TEST_CASE("set overrides (--set key=value) change the plan before validation", "[scenarios]") {
    const auto base = scenarios::load_scenario(example("quickstart.yaml"), catalog());
    const auto s = scenarios::load_scenario(example("quickstart.yaml"), catalog(), {"training.tp=2"});
    CHECK(s.plan.layout.tp == 2);
    CHECK(s.plan.layout.dp == base.plan.layout.dp / 2);  // re-derived: 8 GPUs / (tp 2 x pp 1 x cp 2) = 2
    CHECK(s.plan.layout.dp * s.plan.layout.tp * s.plan.layout.pp * s.plan.layout.cp == 8);
    const auto t = scenarios::load_scenario(example("quickstart.yaml"), catalog(),
                                            {"training.pp=2", "training.vp=2", "training.global_batch_size=64"});
    CHECK(t.plan.layout.pp == 2);
    CHECK(t.plan.layout.vp == 2);
    CHECK(t.plan.training.schedule == "interleaved-1f1b");  // default for vp > 1
    CHECK(t.plan.training.global_batch == 64);
    CHECK(t.plan.layout.dp * t.plan.layout.tp * t.plan.layout.pp * t.plan.layout.cp == 8);
    // A new key can be added by an override too (here a list, given inline).
    const auto u = scenarios::load_scenario(example("quickstart.yaml"), catalog(),
                                            {"training.pp=2", "training.layers_per_stage=[20,12]"});
    CHECK(u.plan.training.layers_per_virtual_stage == std::vector<int>{20, 12});

    // An override that makes the plan impossible is reported like a file error, naming the key.
    const auto e = load_error(example("quickstart.yaml"), {"training.dp=3"});
    CHECK(e.key() == "training.dp");
    CHECK(e.file() == example("quickstart.yaml"));
    CHECK_THAT(e.what(), Catch::Contains("GPUs but the cluster has 8"));
    // Malformed override (no '=').
    CHECK_THROWS_WITH(scenarios::load_scenario(example("quickstart.yaml"), catalog(), {"training.tp"}),
                      Catch::Contains("key=value"));
}

TEST_CASE("input errors name the file, the line and the key", "[scenarios][errors]") {
    SECTION("unknown key, with a suggestion") {
        const TempFile f("fathom-unknown-key", scenario_with_training("  seq_len: 2048\n"         // line 9
                                                                      "  global_batch_size: 8\n"  // line 10
                                                                      "  micro_batch_size: 1\n"   // line 11
                                                                      "  tpp: 2\n"));             // line 12
        const auto e = load_error(f.path());
        CHECK(e.file() == f.path());
        CHECK(e.line() == 12);
        CHECK(e.key() == "training.tpp");
        CHECK_THAT(e.what(), Catch::Contains("unknown key 'tpp'") && Catch::Contains("did you mean 'tp'"));
        CHECK_THAT(e.what(), Catch::StartsWith(f.path() + ":12: key 'training.tpp'"));
    }
    SECTION("quantity without a unit") {
        const TempFile f("fathom-missing-unit", scenario_with_training("  seq_len: 2048\n"         // line 9
                                                                       "  global_batch_size: 8\n"  // line 10
                                                                       "  micro_batch_size: 1\n"   // line 11
                                                                       "  runtime_reserved: 2\n"));  // line 12
        const auto e = load_error(f.path());
        CHECK(e.line() == 12);
        CHECK(e.key() == "training.runtime_reserved");
        CHECK_THAT(e.what(), Catch::Contains("missing unit"));
    }
    SECTION("impossible plan points at the offending key") {
        const TempFile f("fathom-bad-tp", scenario_with_training("  seq_len: 2048\n"         // line 9
                                                                 "  global_batch_size: 8\n"  // line 10
                                                                 "  micro_batch_size: 1\n"   // line 11
                                                                 "  tp: 8\n"                 // line 12
                                                                 "  pp: 3\n"));              // line 13
        // 8 GPUs / (tp 8 x pp 3) is not an integer: dp cannot be derived.
        const auto e = load_error(f.path());
        CHECK(e.file() == f.path());
        CHECK(e.key() == "training.tp");
        CHECK(e.line() == 12);
        CHECK_THAT(e.what(), Catch::Contains("does not divide"));
    }
    SECTION("a file that does not exist") {
        CHECK_THROWS_WITH(scenarios::load_scenario(kSource + "/no/such/file.yaml", catalog()),
                          Catch::Contains("cannot open file"));
    }
}
