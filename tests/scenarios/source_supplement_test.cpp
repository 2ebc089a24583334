// What a source states outside its table (scenarios/sources/): the runs of the Megatron-LM SC21
// artifact fill the Table 1 cases' micro-batch size, virtual stages and data-parallel
// implementation; a field the case states is kept; a malformed supplement is an input error naming
// its file, line and key.
#include "scenarios/source_supplement.h"

#include "scenarios/measured.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"
#include "tests/support/measured_fixture.h"

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace fathom;

namespace {

using testing::stated;

YAML::Node frozen(const std::string& id) {
    YAML::Node c = testing::frozen_case(id);
    if (!c) FAIL("no frozen case " << id);
    return c;
}

scenarios::CompareResult compare(const YAML::Node& c, const std::string& name) {
    const auto r = testing::compare_one(c, name);
    REQUIRE(r.size() == 1);
    REQUIRE(r[0].ok());
    return r[0];
}

std::vector<scenarios::SourceSupplement> project_supplements() {
    return scenarios::load_source_supplements(std::string(FATHOM_SOURCE_DIR) + "/scenarios/sources");
}

}  // namespace

TEST_CASE("a Table 1 case of the Megatron-LM SC21 paper runs the artifact's micro-batch and DDP",
          "[scenarios][compare]") {
    // The table omits the micro-batch size; examples/sc21/run_table_1.sh runs the 18.4B model
    // (TP 8, PP 1, 256 GPUs, batch 1024) with MBS 8 under PyTorch DDP. By Eq. 3 (recomputation
    // included) a step is 96 B s l h^2 (1 + s/6h + V/16lh) = 3.249e17 FLOPs, 1.269e15 per GPU: the
    // published 135 TFLOP/s is a 9.40 s step. With micro-batch 1 and the gradient all-reduce after
    // the backward (Megatron's own DDP, the stack's default) fathom took 10.74 s (-12.5%): 32
    // micro-batches of 2048-token TP all-reduces and an exposed 0.48 s all-reduce. With the
    // artifact's run, 4 micro-batches of 8 sequences and the all-reduce under the last backward.
    const YAML::Node c = frozen("trn-megatron2021-18.4b-256");
    REQUIRE_FALSE(c["training"]["micro_batch_size"]);
    const auto filled = compare(c, "supplement_18b.yaml");
    CHECK(stated(filled, "training.micro_batch_size = 8 (megatron-lm-sc21-table1: 18B"));
    CHECK(stated(filled, "training.dp_comm_overlap = true (megatron-lm-sc21-table1"));
    CHECK_FALSE(stated(filled, "micro_batch_size = 1 (not stated)"));
    CHECK(filled.plan.find("micro-batch 8") != std::string::npos);
    CHECK(std::fabs(filled.error) < 0.04);

    // Cited differently (another paper), the case falls back to the format's rule: micro-batch 1.
    YAML::Node other = YAML::Clone(c);
    other["source"]["title"] = "Some other paper";
    const auto plain = compare(other, "supplement_18b_other.yaml");
    CHECK(stated(plain, "micro_batch_size = 1 (not stated)"));
    CHECK(plain.step_time_s > filled.step_time_s * 1.08);

    // A field the case states is kept, and the disagreement is reported.
    YAML::Node stated_mbs = YAML::Clone(c);
    stated_mbs["training"]["micro_batch_size"] = 1;
    const auto kept = compare(stated_mbs, "supplement_18b_stated.yaml");
    CHECK(stated(kept, "training.micro_batch_size = 1 as the case states; megatron-lm-sc21-table1"));
    CHECK(kept.plan.find("micro-batch 1 ") != std::string::npos);
    // Still under PyTorch DDP (the artifact's, not stated by the case): faster than the plain run.
    CHECK(kept.step_time_s > filled.step_time_s * 1.03);
    CHECK(kept.step_time_s < plain.step_time_s);
}

TEST_CASE("the source's artifact outranks what the recorder assumed, never what the case states",
          "[scenarios][compare]") {
    // The 1T row records pp_schedule interleaved-1f1b as an assumption (measured-format `assumed`:
    // "paper default for large runs"); run_table_1.sh gives the 1T run no virtual stages, so it
    // runs plain 1F1B: 128 layers over 64 stages, 512 micro-batches, the bubble (p - 1) / m = 12%
    // of the work (interleaved over 2 chunks it would be 6%), so the prediction drops.
    const YAML::Node c = frozen("trn-megatron2021-1008b-3072");
    REQUIRE(c["training"]["pp_schedule"].as<std::string>() == "interleaved-1f1b");
    const auto artifact = compare(c, "supplement_1t.yaml");
    CHECK(stated(artifact, "training.pp_schedule = 1f1b (megatron-lm-sc21-table1: 1T"));
    CHECK(artifact.plan.find("  1f1b") != std::string::npos);
    CHECK(artifact.range_key.empty());
    // Stated rather than assumed, the case's schedule stands and the disagreement is listed.
    YAML::Node stated_schedule = YAML::Clone(c);
    YAML::Node kept_assumed(YAML::NodeType::Sequence);
    for (const auto& a : c["assumed"])
        if (a.as<std::string>() != "training.pp_schedule") kept_assumed.push_back(a);
    stated_schedule["assumed"] = kept_assumed;
    const auto kept = compare(stated_schedule, "supplement_1t_stated.yaml");
    CHECK(stated(kept, "training.pp_schedule = interleaved-1f1b as the case states; megatron-lm-sc21-table1"));
    CHECK(kept.plan.find("interleaved-1f1b") != std::string::npos);
    CHECK(kept.step_time_s < artifact.step_time_s);
}

TEST_CASE("the SC21 artifact's runs: one per Table 1 model, virtual stages from layers per virtual stage",
          "[scenarios]") {
    const auto all = project_supplements();
    const auto it =
        std::find_if(all.begin(), all.end(), [](const auto& s) { return s.id == "megatron-lm-sc21-table1"; });
    REQUIRE(it != all.end());
    CHECK(it->runs.size() == 10);
    // 145B: 80 layers over PP 8 are 10 a stage, 5 a virtual stage: vp 2; 530B: 105 over 35, one a
    // virtual stage: vp 3; 76B: 60 over 4, 5 a virtual stage: vp 3.
    auto run = [&](int64_t layers) {
        for (const auto& r : it->runs)
            if (r.layers == layers) return r.fields;
        FAIL("no run with " << layers << " layers");
        return YAML::Node();
    };
    CHECK(run(80)["vp"].as<int>() == 2);
    CHECK(run(105)["vp"].as<int>() == 3);
    CHECK(run(60)["vp"].as<int>() == 3);
    CHECK(run(40)["micro_batch_size"].as<int>() == 8);
    CHECK(run(128)["pp_schedule"].as<std::string>() == "1f1b");
}

TEST_CASE("the LMSYS DeepSeek blog's supplement types the MoE dispatch and overlap its cases state in prose",
          "[scenarios]") {
    // The decode case's software text names DeepEP low-latency dispatch and two-batch overlap;
    // compare reads neither from it, only the typed fields the supplement (keyed by the blog's
    // title, any of its tables) writes: deepep_auto, whose decode pool runs the low-latency kernels.
    const auto r = compare(frozen("srv-sglang-dsv3-decode-ep72-72xh100-bs256-2000"), "supplement_dsv3.yaml");
    CHECK(stated(r, "serving.moe_dispatcher = deepep_auto (lmsys-2025-05-deepseek-96xh100"));
    CHECK(stated(r, "serving.two_batch_overlap = true (lmsys-2025-05-deepseek-96xh100"));
    CHECK(stated(r, "DeepEP low-latency dispatch"));
    CHECK(stated(r, "two-batch overlap"));
    // Without the supplement's fields the same case runs the all-to-all dispatcher and says so.
    YAML::Node other = YAML::Clone(frozen("srv-sglang-dsv3-decode-ep72-72xh100-bs256-2000"));
    other["source"]["title"] = "another blog";
    const auto plain = compare(other, "supplement_dsv3_other.yaml");
    CHECK(stated(plain, "token dispatcher alltoall (the case states none)"));
    CHECK_FALSE(stated(plain, "two-batch overlap"));
    CHECK(plain.predicted != r.predicted);
}

TEST_CASE("a malformed source supplement is an input error naming its file, line and key", "[scenarios][bad-input]") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(FATHOM_BINARY_DIR) / "bad_supplements";
    const std::string good_head =
        "kind: source-supplement\nid: s\nsource: \"a script\"\napplies_to: {cites: \"1234\", table: \"Table "
        "1\"}\nruns:\n";
    struct Bad {
        std::string text, key, message;
        int line;
    };
    const std::vector<Bad> bad = {
        {good_head + "  - model: {layers: 2, hidden: 8}\n    training: {micro_batch: 2}\n    what: x\n",
         "runs[0].training.micro_batch", "unknown key", 7},
        {good_head + "  - model: {layers: 2, hidden: 8}\n    training: {micro_batch_size: two}\n    what: x\n",
         "runs[0].training.micro_batch_size", "", 7},
        {good_head + "  - model: {layers: 2, hidden: 8}\n    training: {vp: 0}\n    what: x\n", "runs[0].training.vp",
         "positive", 7},
        {good_head + "  - model: {layers: 2, hidden: 8}\n    training: {pp_schedule: zigzag}\n    what: x\n",
         "runs[0].training.pp_schedule", "unknown pipeline schedule 'zigzag'; valid: gpipe, 1f1b", 7},
        {good_head + "  - model: {layers: 2, hidden: 8}\n    training: {vp: 2}\n    what: x\n"
                     "  - model: {layers: 2, hidden: 8}\n    training: {vp: 3}\n    what: y\n",
         "runs[1].model", "second run", 9},
        {"kind: source-supplement\nid: t\nsource: \"a script\"\napplies_to: {cites: \"1\", table: \"T\"}\nruns: []\n",
         "id", "file name", 2},
        {"kind: stack\nid: s\n", "kind", "source-supplement", 1},
        {good_head + "  - model: {layers: 2, hidden: 8}\n    serving: {moe_dispatcher: deepep_fast}\n    what: x\n",
         "runs[0].serving.moe_dispatcher", "unknown value 'deepep_fast'; valid: alltoall, deepep", 7},
        {good_head + "  - model: {layers: 2, hidden: 8}\n    serving: {tp: 8}\n    what: x\n", "runs[0].serving.tp",
         "unknown key", 7},
        {good_head + "  - model: {layers: 2, hidden: 8}\n    training: {vp: 2}\n    serving: {packaging: nim}\n"
                     "    what: x\n",
         "runs[0]", "either training or serving", 6},
    };
    for (const auto& b : bad) {
        fs::remove_all(dir);
        fs::create_directories(dir);
        std::ofstream(dir / "s.yaml") << b.text;
        INFO(b.text);
        try {
            scenarios::load_source_supplements(dir.string());
            FAIL("accepted");
        } catch (const sim::InputError& e) {
            INFO(e.what());
            CHECK(e.file().find("s.yaml") != std::string::npos);
            CHECK(e.key() == b.key);
            CHECK(e.line() == b.line);
            CHECK(std::string(e.what()).find(b.message) != std::string::npos);
        }
    }
    fs::remove_all(dir);
    CHECK(scenarios::load_source_supplements(dir.string()).empty());  // no directory: no supplements
}
