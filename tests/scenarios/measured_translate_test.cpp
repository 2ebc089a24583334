// compare's translators (scenarios/measured_kinds.h): the one cluster reader's fabric and NIC from
// the hardware catalogs, errors in translated values named by the case's own field and line, and
// every configuration field of measured-format v1 either read or listed as not modelled, and a
// Megatron pipeline split counting the embedding and the loss as layers.
#include "scenarios/measured.h"
#include "scenarios/measured_schema.h"
#include "sim/error.h"
#include "tests/support/measured_fixture.h"

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace fathom;
using testing::compare_one;
using testing::frozen_case;

namespace {

bool listed(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

scenarios::CompareResult one(const YAML::Node& c, const std::string& file) {
    const auto r = compare_one(c, file);
    REQUIRE(r.size() == 1);
    INFO(r[0].reason);
    REQUIRE(r[0].ok());
    return r[0];
}

// The error compare stops with on case `c`, and the line of the written file holding `text`.
std::pair<sim::InputError, int> error_at(const YAML::Node& c, const std::string& file, const std::string& text) {
    try {
        compare_one(c, file);
    } catch (const sim::InputError& e) {
        std::ifstream in(std::string(FATHOM_BINARY_DIR) + "/" + file);
        std::string line;
        int n = 0, found = 0;
        while (std::getline(in, line)) {
            ++n;
            if (line.find(text) != std::string::npos) {
                CHECK(found == 0);  // `text` names one line
                found = n;
            }
        }
        return {e, found};
    }
    FAIL("no error");
    return {sim::InputError(""), 0};
}

}  // namespace

TEST_CASE("one cluster reader: the scale-up fabric and the NIC from the hardware catalogs", "[scenarios][compare]") {
    // H800: the case names the NVLink 4 generation (nvlink4-nvswitch), the catalog's nvlink4-h800 is
    // its 8-link variant (fabrics/nvlink4-h800.yaml `family`).
    YAML::Node h800 = frozen_case("trn-nemo2407-llama3-8b-8");
    h800["hardware"]["accelerator"] = "h800-sxm-80gb";
    CHECK(one(h800, "h800_fabric.yaml").cluster->scale_up.id == "nvlink4-h800");
    CHECK(one(frozen_case("trn-primus-dsv2-mi355x-32"), "mi355x_fabric.yaml").cluster->scale_up.id ==
          "infinity-fabric-mesh-mi355x");
    // NICs: RoCE at 25 GB/s per GPU is the 200 Gb/s generation; without a bandwidth, the A100's
    // reference system (DGX A100: HDR 200 Gb/s) sets it; 50 GB/s per GPU the 400 Gb/s one; XDR
    // (800 Gb/s) has no NIC in the catalog yet: the fastest InfiniBand one.
    YAML::Node roce = frozen_case("trn-mpt-70b-a100-64");
    CHECK(one(roce, "nic_roce25.yaml").cluster->nic.id == "roce-200g");
    roce["cluster"]["scale_out"].remove("gb_per_s_per_gpu");
    const auto a100 = one(roce, "nic_roce_a100.yaml");
    CHECK(a100.cluster->nic.id == "roce-200g");
    CHECK(testing::stated(a100, "scale-out NIC: roce-200g"));
    roce["cluster"]["scale_out"]["gb_per_s_per_gpu"] = 50;
    CHECK(one(roce, "nic_roce50.yaml").cluster->nic.id == "roce-400g");
    roce["cluster"]["scale_out"]["fabric"] = "infiniband-xdr";
    CHECK(one(roce, "nic_xdr.yaml").cluster->nic.id == "ib-ndr-400g");
}

TEST_CASE("an error in a translated value names the case's own field and line", "[scenarios][compare]") {
    // A value the translator checks as the scenario key it maps to (training.tp -> parallel.tp).
    YAML::Node tp = frozen_case("trn-nemo2407-llama3-8b-8");
    tp["training"]["tp"] = 0;
    auto [e, line] = error_at(tp, "err_tp.yaml", "tp: 0");
    CHECK(e.key() == "training.tp");
    CHECK(e.line() == line);
    CHECK(std::string(e.what()).find("err_tp.yaml") != std::string::npos);
    // A check only the scenario parser makes (heads a multiple of kv_heads): reported against the
    // case's field, never a scenario path.
    YAML::Node heads = frozen_case("trn-nemo2407-llama3-8b-8");
    heads["model"]["kv_heads"] = 7;
    auto [h, hline] = error_at(heads, "err_heads.yaml", "kv_heads: 7");
    CHECK(h.key() == "model.kv_heads");
    CHECK(h.line() == hline);
    CHECK(h.bare_message() == "heads must be a multiple of kv_heads");
    // A value the translator derives (the unique part of a prompt after its shared prefix) is the
    // error of the case field it came from.
    YAML::Node prefix = frozen_case("srv-nim180-llama33-70b-fp8-tp2-5000-500-c100");
    prefix["serving"]["workload"]["shared_prefix"]["groups"] = 4;
    prefix["serving"]["workload"]["shared_prefix"]["prompts_per_group"] = 8;
    prefix["serving"]["workload"]["shared_prefix"]["prefix_len"] = 5000;
    auto [p, pline] = error_at(prefix, "err_prefix.yaml", "input_len: 5000");
    CHECK(p.key() == "serving.workload.input_len");
    CHECK(p.line() == pline);
    // A measured-format vocabulary the scenario keys do not share (precision.dtype) keeps its words.
    YAML::Node dtype = frozen_case("trn-nemo2407-llama3-8b-8");
    dtype["precision"]["dtype"] = "fp9";
    auto [d, dline] = error_at(dtype, "err_dtype.yaml", "dtype: fp9");
    CHECK(d.key() == "precision.dtype");
    CHECK(d.line() == dline);
    CHECK(d.bare_message().rfind("expected one of fp32, tf32, bf16, fp16, fp8", 0) == 0);
}

TEST_CASE("every configuration field of the format is read or listed as not modelled", "[scenarios][compare]") {
    // The fields the format defines as settings or qualifiers (not provenance, free text or
    // informational figures): the issue's examples among them, descriptions not.
    const auto fields = scenarios::configuration_fields();
    const std::set<std::string> config(fields.begin(), fields.end());
    for (const char* f : {"training.reshard_after_forward", "serving.cuda_graphs", "serving.num_scheduler_steps",
                          "precision.fp8_recipe", "training.tp", "serving.workload.slo.ttft_ms", "statistic"})
        CHECK(config.count(f) == 1);
    for (const char* f : {"model.description", "source.url", "hardware.peak_bf16_tflops", "training.software", "id"})
        CHECK(config.count(f) == 0);
    // What a translator does not read is listed per case; what it reads is not.
    YAML::Node t = frozen_case("trn-nemo2407-llama3-8b-8");
    t["training"]["reshard_after_forward"] = false;
    t["precision"]["fp8_recipe"] = "delayed";
    const auto trained = one(t, "not_modelled_training.yaml");
    CHECK(listed(trained.not_modelled, "training.reshard_after_forward"));
    CHECK(listed(trained.not_modelled, "precision.fp8_recipe"));
    for (const char* f : {"training.tp", "training.cp", "model.layers", "precision.dtype", "cluster.gpus"})
        CHECK_FALSE(listed(trained.not_modelled, f));
    YAML::Node s = frozen_case("srv-nim180-llama33-70b-fp8-tp2-5000-500-c100");
    s["serving"]["cuda_graphs"] = true;
    s["serving"]["num_scheduler_steps"] = 8;
    const auto served = one(s, "not_modelled_serving.yaml");
    CHECK(listed(served.not_modelled, "serving.cuda_graphs"));
    CHECK_FALSE(listed(served.not_modelled, "serving.num_scheduler_steps"));  // multi-step scheduling, read
    CHECK(served.ok());
    CHECK_FALSE(listed(served.not_modelled, "serving.tp"));
    // Over the frozen file: only configuration fields the case states are listed.
    const std::string path = testing::kSource + "/tests/data/measured_frozen.yaml";
    for (const auto& r : scenarios::compare_measured(path, testing::source_context())) {
        const YAML::Node c = frozen_case(r.id);
        for (const auto& f : r.not_modelled) {
            INFO(r.id << ": " << f);
            CHECK(config.count(f) == 1);
            YAML::Node at = c;
            std::stringstream parts(f);
            for (std::string part; std::getline(parts, part, '.');) at.reset(static_cast<const YAML::Node&>(at)[part]);
            CHECK(at.IsDefined());
        }
    }
}

TEST_CASE("a disaggregated system measured as a whole runs both pools as the case lays them out",
          "[scenarios][compare]") {
    // Llama 3 8B, one prefill and one decode H100 (1P1D), Poisson arrivals at 1 request/s of 2000
    // prompt and 100 output tokens. Neither pool is near saturation (a 2000-token prefill takes
    // ~50 ms, a decode step at batch ~1 ~7 ms), so the system's output rate is the arrival rate x the
    // output length: 100 tokens/s, within the run's edge effects (10%).
    const YAML::Node c = YAML::Load(R"(
id: pd-whole-system
kind: serving
source: {type: page, url: https://example.org, title: a test}
trust: low
completeness: partial
hardware: {accelerator: h100-sxm-80gb}
cluster: {gpus: 2, nodes: 1, gpus_per_node: 8, intra_node: {fabric: nvlink4-nvswitch}}
model: {name: Llama 3 8B, architecture: dense, layers: 32, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336,
        vocab: 128256, activation: swiglu, norm: rmsnorm, position_embedding: rope}
serving:
  engine: vllm
  disaggregation:
    measured: both
    prefill: {gpus: 1, tp: 1}
    decode: {gpus: 1, tp: 1}
  workload: {arrival: poisson, request_rate: 1, num_requests: 300, input_len: 2000, output_len: 100}
precision: {dtype: bf16}
metric: output_tokens_per_s
value: 100
unit: tokens/s
statistic: single
scope: system
)");
    const auto r = compare_one(c, "pd_whole_system.yaml");
    REQUIRE(r.size() == 1);
    INFO(r[0].reason);
    REQUIRE(r[0].ok());
    CHECK(listed(r[0].assumptions, "the whole disaggregated system: prefill and decode pools as the case gives them"));
    CHECK(r[0].predicted == Approx(100).epsilon(0.1));
    // A per-replica figure has no one replica to divide by; a static batch is not run through both.
    YAML::Node per_replica = YAML::Clone(c);
    per_replica["scope"] = "per_replica";
    CHECK_FALSE(compare_one(per_replica, "pd_whole_system_replica.yaml")[0].ok());
    YAML::Node no_decode = YAML::Clone(c);
    no_decode["serving"]["disaggregation"].remove("decode");
    CHECK(compare_one(no_decode, "pd_whole_system_half.yaml")[0].reason.find("decode pool's layout") !=
          std::string::npos);
}

TEST_CASE("an engine_version picks its preset, one that is not a version number is said, never silent",
          "[scenarios][compare]") {
    YAML::Node c = YAML::Clone(frozen_case("srv-vllm0151-qwen2-5-7b-instruct-tp1-roleplay-1-1-exp64"));
    REQUIRE(c);
    c["serving"]["engine_version"] = "0.6.3";
    CHECK(one(c, "engine_version_v0.yaml").stack == "vllm-v0");
    c["serving"]["engine_version"] = "nightly";
    const auto r = one(c, "engine_version_nightly.yaml");
    CHECK(r.stack == "vllm");
    CHECK(listed(r.assumptions, "engine_version 'nightly' is not a version number: vllm"));
}

TEST_CASE("a Megatron pipeline split two layers short of even counts the embedding and the loss as layers",
          "[scenarios][compare]") {
    // The Model Zoo's Qwen3-235B: 94 layers over pp 8 x vp 4 = 32 pieces. Its config sets
    // --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split: 96 slots,
    // 3 per piece, the first piece (stage 0) and the last (stage 7) one layer short: stages of 11,
    // 12 x 6, 11 layers. Without a Megatron-Core preset the first 30 pieces take the extra layer:
    // 12 x 6, 11, 11.
    YAML::Node c = frozen_case("trn-mzoo-qwen3-235b-h100-256-pp8ep32");
    const auto r = one(c, "split.yaml");
    REQUIRE(r.stages.size() == 8);
    CHECK(r.stages[0].layers == 11);
    CHECK(r.stages[1].layers == 12);
    CHECK(r.stages[7].layers == 11);
    CHECK(std::any_of(r.assumptions.begin(), r.assumptions.end(), [](const std::string& a) {
        return a.find("embedding and the loss each counted as a layer") != std::string::npos &&
               a.find("2, 3 x 30, 2") != std::string::npos;
    }));
    c["training"]["framework"] = "nemo";
    const auto n = one(c, "split_nemo.yaml");
    REQUIRE(n.stages.size() == 8);
    CHECK(n.stages[0].layers == 12);
    CHECK(n.stages[6].layers == 11);
    CHECK(n.stages[7].layers == 11);
}

TEST_CASE("a serving case's precision becomes a serving format", "[scenarios][compare]") {
    // precision.dtype int4 (AWQ, GPTQ) is weight-only w4a16; int8 with 16-bit activations w8a16 and
    // otherwise W8A8; fp4 on a device without fp4 tensor cores (H100) runs as w4a16, said as a
    // fill-in. Each runs (a bf16 KV cache for all, so that only the format differs).
    YAML::Node s = frozen_case("srv-nim180-llama33-70b-fp8-tp2-5000-500-c100");
    auto predicted = [&](const char* dtype, const char* activations, const char* file) {
        YAML::Node c = YAML::Clone(s);
        c["precision"]["dtype"] = dtype;
        c["precision"]["kv_cache"] = "bf16";  // NIM's fp8 and fp4 builds quantize the cache otherwise
        if (activations) c["precision"]["activations"] = activations;
        return one(c, file);
    };
    const auto fp8 = predicted("fp8", nullptr, "precision_fp8.yaml");
    const auto w4 = predicted("int4", nullptr, "precision_int4.yaml");
    const auto w8 = predicted("int8", "bf16", "precision_w8a16.yaml");
    const auto int8 = predicted("int8", nullptr, "precision_int8.yaml");
    const auto fp4 = predicted("fp4", nullptr, "precision_fp4.yaml");
    CHECK(fp4.predicted == Approx(w4.predicted).epsilon(0.05));  // fp4's 0.5625 bytes against int4's 0.516
    CHECK(std::any_of(fp4.fill_ins.begin(), fp4.fill_ins.end(),
                      [](const std::string& f) { return f.find("run as w4a16") != std::string::npos; }));
    CHECK(int8.predicted == Approx(fp8.predicted).epsilon(0.1));
    CHECK(w8.predicted != int8.predicted);
    CHECK_FALSE(listed(w8.not_modelled, "precision.activations"));
}
