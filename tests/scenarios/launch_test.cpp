// `fathom export` (scenarios/launch/): each framework's launch configuration read back through
// compare's translator gives the plan exported (the round trip the issue asks for), on cases of the
// frozen measurement file that ran on that framework; and a plan a framework cannot express is an
// error naming its key, never a different plan.
#include "scenarios/launch/launch.h"

#include "plans/keys.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"
#include "tests/support/measured_fixture.h"

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <string>

using namespace fathom;
using namespace fathom::scenarios::launch;
using testing::compare_one;
using testing::frozen_case;

namespace {

// The keys whose values differ between two plans, for the failure message.
std::string differences(const std::vector<std::pair<std::string, plans::KeyValue>>& changed) {
    std::string s;
    for (const auto& [k, v] : changed) s += k + " -> " + plans::format_value(v) + "; ";
    return s.empty() ? "none" : s;
}

// `from`'s fields written over `into`'s, mapping by mapping.
void merge(YAML::Node into, const YAML::Node& from) {
    for (const auto& kv : from) {
        const std::string k = kv.first.as<std::string>();
        if (kv.second.IsMap() && into[k].IsMap()) merge(into[k], kv.second);
        else into[k] = kv.second;
    }
}

// Compares the frozen case `id`, exports the plan compare ran for `framework`, merges what the
// files state back into the case, compares again: the plan must come out the same, key for key.
std::vector<LaunchFile> round_trip(const std::string& id, const std::string& framework) {
    YAML::Node c = frozen_case(id);
    REQUIRE(c);
    const auto first = compare_one(c, "launch_" + id + "_first.yaml");
    REQUIRE(first.front().ok());
    const auto& r = first.front();
    const Job job{id, "", r.model.get(), r.cluster.get(), r.training_plan.get(), r.serving_plan.get()};
    const auto files = export_launch(job, framework);
    const YAML::Node back = launch_registry().get(framework).factory.read(files, *r.model);
    merge(c, back);
    INFO(files.front().text);
    INFO(YAML::Dump(back));
    const auto second = compare_one(c, "launch_" + id + "_second.yaml");
    INFO(second.front().reason);
    REQUIRE(second.front().ok());
    if (r.training_plan) {
        const auto changed = plans::changed_training_keys(*r.training_plan, *second.front().training_plan);
        INFO("changed: " << differences(changed));
        CHECK(changed.empty());
        CHECK(*second.front().training_plan == *r.training_plan);
    } else {
        const auto changed = plans::changed_serving_keys(*r.serving_plan, *second.front().serving_plan);
        INFO("changed: " << differences(changed));
        CHECK(changed.empty());
    }
    return files;
}

// The scenario `name` of scenarios/examples with `sets`, exported for `framework`.
std::vector<LaunchFile> export_example(const std::string& name, const std::string& framework,
                                       const std::vector<std::string>& sets = {}) {
    const plans::Scenario s = scenarios::load_scenario(testing::example(name), testing::source_catalog(), sets);
    return export_launch(Job{s.name, s.file, &s.model, &s.cluster, s.training(), s.serving()}, framework);
}

// The error a plan the framework cannot express raises: its key.
std::string refused_key(const std::string& name, const std::string& framework, const std::vector<std::string>& sets) {
    try {
        export_example(name, framework, sets);
    } catch (const sim::InputError& e) {
        CHECK(e.file().find(name) != std::string::npos);
        return e.key();
    }
    FAIL("exported");
    return "";
}

}  // namespace

TEST_CASE("Megatron-LM arguments read back give the plan: MoE with interleaving and an uneven split",
          "[scenarios][launch]") {
    // Qwen3-235B-A22B on 256 H100 (Megatron MoE Model Zoo): tp 2, pp 8, vp 4, ep 32, selective
    // recompute, sequence parallel; 94 layers over 32 pieces count the embedding and the loss.
    const auto files = round_trip("trn-mzoo-qwen3-235b-h100-256-pp8ep32", "megatron");
    REQUIRE(files.size() == 1);
    const std::string& t = files.front().text;
    CHECK(t.find("--tensor-model-parallel-size 2 ") != std::string::npos);
    CHECK(t.find("--expert-model-parallel-size 32 ") != std::string::npos);
    CHECK(t.find("--account-for-embedding-in-pipeline-split \\\n") != std::string::npos);
    CHECK(t.find("--sequence-parallel \\\n") != std::string::npos);                   // a switch: no value after it
    CHECK(t.find("#   --expert-model-parallel-size  MPC:127") != std::string::npos);  // where it is defined
}

TEST_CASE("Megatron-LM arguments read back give the plan: 2021 dense, full recompute, fp16", "[scenarios][launch]") {
    const auto files = round_trip("trn-megatron2021-18.4b-256", "megatron");
    CHECK(files.front().text.find("--recompute-granularity full") != std::string::npos);
    CHECK(files.front().text.find("--fp16") != std::string::npos);
}

TEST_CASE("NeMo overrides read back give the plan: Llama 3 70B with interleaving and context parallelism",
          "[scenarios][launch]") {
    // NeMo 24.07's Llama 3 70B recipe on 64 H100: tp 4, pp 4, vp 5, cp 2, fp8, TP overlap.
    auto files = round_trip("trn-nemo2407-llama3-70b-64", "nemo");
    const std::string& t = files.front().text;
    CHECK(t.find("++model.virtual_pipeline_model_parallel_size=5 ") != std::string::npos);
    CHECK(t.find("++model.fp8=True ") != std::string::npos);
    // GPT-3 175B: GELU with biases, 96 layers over pp 8 x vp 6.
    files = round_trip("trn-nemo2407-gpt3-175b-128", "nemo");
    CHECK(files.front().text.find("++model.activation=gelu ") != std::string::npos);
}

TEST_CASE("a torchtitan TOML read back gives the plan: FSDP with tensor parallelism, fp8, full recompute",
          "[scenarios][launch]") {
    // Llama 3.1 70B on 256 H100 (torchtitan's 2D: FSDP x TP 8), float8 linears.
    const auto files = round_trip("trn-torchtitan-llama31-70b-2d-256", "torchtitan");
    const std::string& t = files.front().text;
    CHECK(t.find("flavor = \"70B\"") != std::string::npos);
    CHECK(t.find("data_parallel_shard_degree = 32") != std::string::npos);
    CHECK(t.find("converters = [\"quantize.linear.float8\"]") != std::string::npos);
}

TEST_CASE("a torchtitan TOML read back gives the plan: FSDP alone, selective (op) recompute", "[scenarios][launch]") {
    const auto files = round_trip("trn-torchtitan-llama31-8b-fsdp-8", "torchtitan");
    CHECK(files.front().text.find("selective_ac_option = \"op\"") != std::string::npos);
}

TEST_CASE("torchtitan: a pipeline of interleaved virtual stages, the embedding and output counted",
          "[scenarios][launch]") {
    // 405B's 126 layers over pp 8 x vp 4 (32 pieces, (126 + 2) / 32 = 4 a stage): torchtitan's
    // default split, the first and last stage one layer short.
    const auto files =
        export_example("quickstart.yaml", "torchtitan",
                       {"model=llama3.1-405b", "cluster.nodes=64", "parallel.tp=8", "parallel.pp=8", "parallel.vp=4",
                        "parallel.cp=1", "parallel.dp=8", "training.schedule=interleaved-1f1b",
                        "training.global_batch_size=512", "stack.preset=torchtitan", "training.zero_stage=3",
                        "training.layers_per_stage=[3,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,3]"});
    const std::string& t = files.front().text;
    INFO(t);
    CHECK(t.find("pipeline_parallel_schedule = \"Interleaved1F1B\"") != std::string::npos);
    CHECK(t.find("pipeline_parallel_layers_per_stage = 4") != std::string::npos);
    CHECK(t.find("pipeline_parallel_first_stage_less_layers = 1") != std::string::npos);
    CHECK(t.find("local_batch_size = 64") != std::string::npos);  // 512 sequences over dp 8, one pipeline pass
}

TEST_CASE("vllm serve command lines read back give the plan", "[scenarios][launch]") {
    // Llama 3.1 70B, TP 4 on 4 H100 (vLLM 0.15.1, prefix caching, 8192-token budget, 128 sequences).
    auto files = round_trip("srv-vllm0151-llama-3-1-70b-tp4-general-lite-4-1-exp60", "vllm");
    REQUIRE(files.size() == 1);
    // The case states its model inline: no repository to name, the command asks for it.
    CHECK(files.front().text.find("vllm serve \"${MODEL:?the checkpoint of ") != std::string::npos);
    CHECK(files.front().text.find("--max-num-seqs 128 ") != std::string::npos);
    // A MoE model in FP8 weights.
    files = round_trip("srv-vllm0151-llama-4-scout-17b-16e-tp2-general-lite-2-1-exp17", "vllm");
    CHECK(files.front().text.find("--quantization fp8") != std::string::npos);
}

TEST_CASE("vllm: one command per replica, each on its node, and disaggregated pools in two files",
          "[scenarios][launch]") {
    // 4 replicas of TP 4 on two 8-GPU nodes: two instances a node, each run where NODE_RANK says.
    auto files = export_example("serving-llama70b-8xh100.yaml", "vllm", {"cluster.nodes=2", "serving.replicas=4"});
    REQUIRE(files.size() == 1);
    const std::string& t = files.front().text;
    CHECK(t.find("vllm serve meta-llama/Llama-3.1-70B --port 8003") != std::string::npos);
    CHECK(t.find("if [ \"${NODE_RANK:-0}\" = 1 ]; then\nCUDA_VISIBLE_DEVICES=4,5,6,7 vllm serve") != std::string::npos);
    const YAML::Node back = launch_registry().get("vllm").factory.read(files, models::ModelSpec{});
    CHECK(back["serving"]["dp"].as<int>() == 4);
    CHECK(back["serving"]["tp"].as<int>() == 4);
    // Speculative decoding: the JSON config, its draft from the environment.
    files = export_example(
        "serving-llama70b-8xh100.yaml", "vllm",
        {"serving.speculative.method=eagle", "serving.speculative.tokens=3", "serving.speculative.acceptance=0.7"});
    CHECK(files.front().text.find("--speculative-config \"{\\\"method\\\":\\\"eagle\\\"") != std::string::npos);
    const YAML::Node spec = launch_registry().get("vllm").factory.read(files, models::ModelSpec{});
    CHECK(spec["serving"]["speculative"]["method"].as<std::string>() == "eagle");
    CHECK(spec["serving"]["speculative"]["tokens"].as<int>() == 3);
}

TEST_CASE("a plan vLLM cannot express is refused naming its key", "[scenarios][launch]") {
    CHECK(refused_key("serving-llama70b-8xh100.yaml", "vllm", {"serving.policy=orca"}) == "serving.policy");
    CHECK(refused_key("serving-llama70b-8xh100.yaml", "vllm", {"serving.engine=sglang"}) == "serving.engine");
    CHECK(refused_key("serving-llama70b-8xh100.yaml", "vllm", {"serving.kv_dtype=fp4"}) == "serving.kv_dtype");
}

TEST_CASE("SGLang command lines read back give the plan: DeepSeek-V3's expert-parallel prefill pool",
          "[scenarios][launch]") {
    // LMSYS's 96-H100 deployment: the prefill pool of 32 GPUs, DP attention over 32 ranks, EP 32,
    // DeepEP, two-batch overlap; each pool one engine over 4 nodes.
    const auto files = round_trip("srv-sglang-dsv3-prefill-ep32-32xh100-4096", "sglang");
    REQUIRE(files.size() == 2);  // prefill.sh and decode.sh
    const std::string& t = files.front().text;
    CHECK(files.front().name == "prefill.sh");
    CHECK(t.find("--tp-size 32 ") != std::string::npos);
    CHECK(t.find("--enable-dp-attention \\\n") != std::string::npos);
    CHECK(t.find("--moe-a2a-backend deepep ") != std::string::npos);
    CHECK(t.find("--disaggregation-mode prefill") != std::string::npos);
    CHECK(t.find("--nnodes 4 ") != std::string::npos);
}

TEST_CASE("a plan SGLang cannot express is refused naming its key", "[scenarios][launch]") {
    CHECK(refused_key("serving-llama70b-8xh100.yaml", "sglang", {}) == "serving.engine");  // a vLLM plan
    CHECK(refused_key("serving-llama70b-8xh100.yaml", "sglang", {"serving.engine=sglang", "serving.policy=orca"}) ==
          "serving.policy");
    CHECK(refused_key("serving-llama70b-8xh100.yaml", "sglang",
                      {"serving.engine=sglang", "serving.memory_fraction_of=free"}) == "serving.memory_fraction_of");
}

TEST_CASE("trtllm-serve command lines read back give the plan: a NIM fp8 TP 2 profile", "[scenarios][launch]") {
    // NVIDIA NIM 1.8 (TensorRT-LLM), Llama 3.3 70B, fp8 TP 2, 25 closed-loop clients.
    const auto files = round_trip("srv-nim180-llama33-70b-fp8-tp2-5000-500-c25", "trtllm");
    const std::string& t = files.front().text;
    CHECK(t.find("--backend pytorch") != std::string::npos);
    CHECK(t.find("--tp_size 2 ") != std::string::npos);
    CHECK(t.find("  dtype: fp8\n") != std::string::npos);  // the fp8 KV cache, in the LLM API YAML
}

TEST_CASE("a plan TensorRT-LLM cannot express is refused naming its key", "[scenarios][launch]") {
    // vLLM's KV share is of the device, TensorRT-LLM's of the memory left after the weights.
    CHECK(refused_key("serving-llama70b-8xh100.yaml", "trtllm",
                      {"serving.engine=tensorrt-llm", "serving.memory_fraction_of=device"}) ==
          "serving.memory_fraction_of");
}

TEST_CASE("a plan Megatron-LM cannot express is refused naming its key", "[scenarios][launch]") {
    CHECK(refused_key("quickstart.yaml", "megatron", {"training.schedule=zb-h1"}) == "training.schedule");
    CHECK(refused_key("quickstart.yaml", "megatron", {"training.zero_stage=3"}) == "training.zero_stage");
    // A serving scenario is not a training framework's.
    CHECK_THROWS_AS(export_example("serving-llama70b-8xh100.yaml", "megatron"), sim::InputError);
    CHECK_THROWS_AS(export_example("quickstart.yaml", "deepspeed"), sim::InputError);  // unknown framework
}

TEST_CASE("shell words: continuations, comments, quotes and default expansions", "[scenarios][launch]") {
    const auto w = shell_words("# a comment\ncmd --a ${X:-4} \\\n  --b 'x y' --c=\"q\" \"$@\" # tail\n");
    REQUIRE(w == std::vector<std::string>{"cmd", "--a", "4", "--b", "x y", "--c=q"});
    const auto f = flag_values(w, 1);
    CHECK(f.at("--a") == "4");
    CHECK(f.at("--b") == "x y");
    CHECK(f.at("--c") == "q");
    CHECK(shell_quote("{\"a\": 1}") == "'{\"a\": 1}'");
    CHECK(number_text(0.9) == "0.9");
}
