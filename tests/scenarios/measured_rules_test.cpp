// Each named rule of compare's translators alone (scenarios/measured_rules.h): on a case of a few
// fields, when it applies and what it writes into the scenario document and says. Every rule of the
// two tables has its test here (a rule added without one fails the coverage check at the end).
#include "scenarios/measured_rules.h"

#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

using namespace fathom;
using namespace fathom::scenarios::measured;

namespace {

// The scenario document's value at `key` as text ("" when unset).
std::string doc_value(const ScenarioDoc& doc, const std::string& key) {
    return doc.has(key) ? plans::format_value(doc.value(key)) : std::string();
}

bool said(const std::vector<std::string>& assumptions, const std::string& prefix) {
    for (const auto& a : assumptions)
        if (a.rfind(prefix, 0) == 0) return true;
    return false;
}

template <typename R>
const R& rule(const std::vector<R>& rules, const std::string& name) {
    for (const auto& r : rules)
        if (name == r.name) return r;
    FAIL("no rule " << name);
    return rules.front();
}

// A rule on a case: `setup` fills the draft as the translator would have by the rule's step;
// `check` (when the rule applies) looks at what it did.
template <typename Draft>
struct RuleCase {
    const char* rule;
    const char* yaml;
    std::function<void(Draft&)> setup;
    bool applies;
    std::function<void(const Draft&)> check;
};

models::ModelSpec moe_model() {
    models::ModelSpec m;
    m.layers = 48;
    m.moe.num_experts = 128;
    m.moe.top_k = 8;
    m.moe.expert_ffn = 768;
    return m;
}

std::set<std::string>& tested() {
    static std::set<std::string> names;
    return names;
}

template <typename Draft, typename R>
void run_rule_case(const RuleCase<Draft>& t, const std::vector<R>& rules) {
    INFO(t.rule << " on " << t.yaml);
    tested().insert(t.rule);
    const scenarios::measured::Case c(YAML::Load(t.yaml), "rule.yaml");
    std::vector<std::string> assumptions;
    Draft d(c, testing::source_catalog(), assumptions);
    if (t.setup) t.setup(d);
    const R& r = rule(rules, t.rule);
    REQUIRE(r.applies(d) == t.applies);
    if (!t.applies) return;
    r.apply(d);
    if (t.check) t.check(d);
}

}  // namespace

TEST_CASE("training rules, each alone", "[scenarios][compare][rules]") {
    using D = TrainingDraft;
    auto fw = [](const char* f) { return [f](D& d) { d.framework = f; }; };
    auto moe = [](const char* f) {
        return [f](D& d) {
            d.framework = f;
            d.model = moe_model();
        };
    };
    const std::vector<RuleCase<D>> cases = {
        {"megatron-lm-2021-stack", "{training: {tp: 8}}", fw("megatron-lm"), true,
         [](const D& d) { CHECK(d.preset->id == "megatron-lm-2021"); }},
        {"megatron-lm-2021-stack", "{training: {sequence_parallel: true}}", fw("megatron-lm"), false, {}},
        {"megatron-lm-2021-stack", "{training: {framework_version: core_r0.12}}", fw("megatron-lm"), false, {}},
        {"megatron-lm-2021-stack", "{training: {tp: 8}}", fw("nemo"), false, {}},
        // batch_per_dp_rank 8 over pp 4: 4 micro-batches of 2 (torchtitan's microbatch count is pp).
        {"torchtitan-local-batch", "{training: {batch_per_dp_rank: 8}}",
         [](D& d) {
             d.framework = "torchtitan";
             d.doc.set("parallel.pp", int64_t{4});
         },
         true,
         [](const D& d) {
             CHECK(doc_value(d.doc, "training.micro_batch_size") == "2");
             CHECK(said(d.assumptions, "micro_batch_size = 2 from batch_per_dp_rank / pp (torchtitan)"));
         }},
        {"torchtitan-local-batch",
         "{training: {batch_per_dp_rank: 8, micro_batch_size: 1}}",
         fw("torchtitan"),
         false,
         {}},
        {"torchtitan-interleaved-chunks", "{training: {pp: 4}}",
         [](D& d) {
             d.framework = "torchtitan";
             d.schedule = "interleaved-1f1b";
             d.doc.set("parallel.pp", int64_t{4});
         },
         true, [](const D& d) { CHECK(doc_value(d.doc, "parallel.vp") == "2"); }},
        {"torchtitan-interleaved-chunks",
         "{training: {pp: 4}}",
         [](D& d) {
             d.framework = "torchtitan";
             d.schedule = "1f1b";
         },
         false,
         {}},
        {"dualpipe-chunks", "{training: {pp: 8}}",
         [](D& d) {
             d.schedule = "dualpipe";
             d.model = moe_model();
         },
         true,
         [](const D& d) {
             CHECK(doc_value(d.doc, "parallel.vp") == "2");
             CHECK(doc_value(d.doc, "stack.ep_comm_overlap") == "true");
         }},
        {"dualpipe-chunks", "{training: {pp: 8, vp: 4}}", [](D& d) { d.schedule = "dualpipe"; }, true,
         [](const D& d) {
             CHECK_FALSE(d.doc.has("parallel.vp"));            // the case's own vp stays (the translator copied it)
             CHECK_FALSE(d.doc.has("stack.ep_comm_overlap"));  // a dense model has no all-to-alls
         }},
        {"megatron-core-expert-tp", "{training: {tp: 4}}",
         [](D& d) {
             d.model = moe_model();
             d.doc.set("parallel.tp", int64_t{4});
         },
         true, [](const D& d) { CHECK(doc_value(d.doc, "parallel.etp") == "4"); }},
        {"megatron-core-expert-tp",
         "{training: {tp: 4, etp: 1}}",
         [](D& d) {
             d.model = moe_model();
             d.doc.set("parallel.tp", int64_t{4});
         },
         false,
         {}},
        // No preset (d.preset stays null): tp 4 gets sequence parallelism; a stated value, tp 1 or a
        // preset does not.
        {"default-sequence-parallel", "{training: {tp: 4}}",
         [](D& d) {
             d.framework = "other";
             d.doc.set("parallel.tp", int64_t{4});
         },
         true,
         [](const D& d) {
             CHECK(doc_value(d.doc, "parallel.sequence_parallel") == "true");
             CHECK(said(d.assumptions,
                        "sequence parallelism with tensor parallelism (not stated; no stack preset "
                        "for framework 'other')"));
         }},
        {"default-sequence-parallel",
         "{training: {tp: 4, sequence_parallel: false}}",
         [](D& d) { d.doc.set("parallel.tp", int64_t{4}); },
         false,
         {}},
        {"default-sequence-parallel", "{training: {tp: 1}}", fw("other"), false, {}},
        {"default-sequence-parallel",
         "{training: {tp: 4}}",
         [](D& d) {
             d.preset = &d.catalog.stack("megatron-lm");
             d.doc.set("parallel.tp", int64_t{4});
         },
         false,
         {}},
        {"moe-sequence-parallel", "{training: {tp: 2}}",
         [](D& d) {
             d.model = moe_model();
             d.doc.set("parallel.tp", int64_t{2});
         },
         true, [](const D& d) { CHECK(doc_value(d.doc, "parallel.sequence_parallel") == "true"); }},
        {"moe-sequence-parallel", "{training: {tp: 1}}", moe("other"), false, {}},
        {"moe-balanced-routing", "{training: {}}", moe("other"), true,
         [](const D& d) { CHECK(doc_value(d.doc, "training.moe_zipf") == "0"); }},
        {"moe-balanced-routing", "{training: {}}", fw("other"), false, {}},
        {"software-deepep", "{training: {software: Megatron-Core with the flex dispatcher (HybridEP)}}", moe("other"),
         true, [](const D& d) { CHECK(doc_value(d.doc, "stack.moe_dispatcher") == "deepep"); }},
        {"software-deepep", "{training: {software: Megatron-Core with DeepEP}}", fw("other"), false, {}},
        {"software-cross-node-all-to-all", "{training: {software: 'HAI-LLM, custom cross-node all-to-all kernels'}}",
         moe("other"), true, [](const D& d) { CHECK(doc_value(d.doc, "stack.moe_dispatcher") == "deepep"); }},
        {"software-cross-node-all-to-all",
         "{training: {software: 'DeepEP, custom cross-node all-to-all'}}",
         moe("other"),
         false,
         {}},
        {"software-ep-overlap", "{training: {software: 'Megatron-Core 0.14, EP all-to-all overlap'}}", moe("other"),
         true, [](const D& d) { CHECK(doc_value(d.doc, "stack.ep_comm_overlap") == "true"); }},
        {"software-ep-overlap",
         "{training: {software: 'Megatron-Core 0.14, no EP all-to-all overlap'}}",
         moe("other"),
         false,
         {}},
        // A case that states it typed (fathom's extension training.ep_comm_overlap) is not read from prose.
        {"software-ep-overlap",
         "{training: {software: 'Megatron-Core 0.14, EP all-to-all overlap', ep_comm_overlap: false}}",
         moe("other"),
         false,
         {}},
        {"software-cross-entropy-fusion", "{training: {software: 'Primus, TE cross-entropy loss fusion'}}", fw("other"),
         true, [](const D& d) { CHECK(doc_value(d.doc, "stack.cross_entropy_fusion") == "true"); }},
        {"software-cross-entropy-fusion", "{training: {software: Megatron-LM}}", fw("other"), false, {}},
        {"eager-pytorch-elementwise", "{training: {torch_compile: false}}", fw("torchtitan"), true,
         [](const D& d) { CHECK(doc_value(d.doc, "stack.fused_elementwise") == "false"); }},
        {"eager-pytorch-elementwise", "{training: {torch_compile: false}}", fw("nemo"), false, {}},
        {"eager-pytorch-elementwise", "{training: {torch_compile: true}}", fw("other"), false, {}},
        {"megatron-distributed-optimizer", "{training: {}}", fw("megascale"), true,
         [](const D& d) { CHECK(d.fit.max_zero_stage == 1); }},
        {"megatron-distributed-optimizer", "{training: {}}", fw("torchtitan"), false, {}},
    };
    for (const auto& t : cases) run_rule_case(t, training_rules());
    for (const auto& r : training_rules()) CHECK(tested().count(r.name) == 1);
}

TEST_CASE("serving rules, each alone", "[scenarios][compare][rules]") {
    using D = ServingDraft;
    auto ep = [](int64_t n, const char* pool = "") {
        return [n, pool](D& d) {
            d.ep = n;
            d.measured_pool = pool;
            d.model = moe_model();
            d.model.moe.num_experts = 256;
        };
    };
    const std::vector<RuleCase<D>> cases = {
        {"nim-profile", "{serving: {packaging: nim}}", [](D& d) { d.engine = "other"; }, true,
         [](const D& d) {
             CHECK(d.nim);
             CHECK(d.preset->id == "tensorrt-llm");
         }},
        {"nim-profile",
         "{serving: {packaging: nim}}",
         [](D& d) {
             d.engine = "vllm";
             d.preset = d.catalog.engine_for("vllm");
         },
         false,
         {}},
        // A decode pool runs DeepEP's low-latency kernels (deepep_auto: SGLang deepep_mode auto), in
        // both pools; a prefill pool the normal ones; a stated mode is run as stated.
        {"deepep-dispatch", "{serving: {moe_dispatcher: deepep_auto}}", ep(72, "decode"), true,
         [](const D& d) {
             CHECK(doc_value(d.doc, "serving.disaggregation.decode.dispatcher") == "deepep_ll");
             CHECK(doc_value(d.doc, "serving.disaggregation.prefill.dispatcher") == "deepep_ll");
         }},
        {"deepep-dispatch", "{serving: {moe_dispatcher: deepep_auto}}", ep(32, "prefill"), true,
         [](const D& d) { CHECK(doc_value(d.doc, "serving.disaggregation.prefill.dispatcher") == "deepep"); }},
        {"deepep-dispatch", "{serving: {moe_dispatcher: deepep_low_latency}}", ep(8), true,
         [](const D& d) { CHECK(doc_value(d.doc, "serving.dispatcher") == "deepep_ll"); }},
        {"deepep-dispatch", "{serving: {moe_dispatcher: deepep_auto}}", ep(1), false, {}},
        {"deepep-dispatch", "{serving: {moe_dispatcher: alltoall}}", ep(8), false, {}},
        // The words of the free-text software description are not read (measured-format.md).
        {"deepep-dispatch", "{serving: {software: SGLang with DeepEP}}", ep(8), false, {}},
        {"alltoall-dispatch", "{serving: {software: SGLang with DeepEP}}", ep(8), true,
         [](const D& d) { CHECK(said(d.assumptions, "token dispatcher alltoall")); }},
        {"alltoall-dispatch", "{serving: {moe_dispatcher: alltoall}}", ep(8), false, {}},
        {"speculative",
         "{serving: {speculative: {method: eagle, tokens: 4, acceptance_length: 3.08}}}",
         {},
         true,
         [](const D& d) {
             CHECK(doc_value(d.doc, "serving.speculative.method") == "eagle");
             CHECK(doc_value(d.doc, "serving.speculative.tokens") == "4");
             CHECK(doc_value(d.doc, "serving.speculative.acceptance_length") == "3.08");
             CHECK(said(d.assumptions, "speculative decoding: eagle"));
         }},
        {"speculative", "{serving: {}}", {}, false, {}},
        {"two-batch-overlap", "{serving: {two_batch_overlap: true}}", ep(32), true,
         [](const D& d) { CHECK(doc_value(d.doc, "serving.two_batch_overlap") == "true"); }},
        {"two-batch-overlap", "{serving: {two_batch_overlap: false}}", ep(32), false, {}},
        {"two-batch-overlap", "{serving: {software: SGLang with two-batch overlap}}", ep(32), false, {}},
        // 256 experts over ep 72: 32 copies more make 288 = 72 x 4.
        {"eplb-redundant-experts", "{serving: {}}", ep(72), true,
         [](const D& d) {
             CHECK(doc_value(d.doc, "serving.redundant_experts") == "32");
             CHECK(said(d.assumptions, "EPLB: 32 redundant experts"));
         }},
        {"eplb-redundant-experts", "{serving: {}}", ep(32), false, {}},
        {"eplb-balanced-load", "{serving: {}}", ep(32), true,
         [](const D& d) { CHECK(doc_value(d.doc, "serving.expert_load") == "1"); }},
        {"eplb-balanced-load", "{serving: {}}", ep(1), false, {}},
        {"nim-fp8-kv-cache", "{precision: {dtype: fp8}}", [](D& d) { d.nim = true; }, true,
         [](const D& d) { CHECK(doc_value(d.doc, "serving.kv_dtype") == "fp8"); }},
        {"nim-fp8-kv-cache", "{precision: {dtype: fp8, kv_cache: bf16}}", [](D& d) { d.nim = true; }, false, {}},
        {"nim-fp8-kv-cache", "{precision: {dtype: fp8}}", {}, false, {}},
        {"trt-fp8-kv-cache", "{precision: {dtype: fp8}}", [](D& d) { d.engine = "tensorrt-llm"; }, true,
         [](const D& d) { CHECK(doc_value(d.doc, "serving.kv_dtype") == "fp8"); }},
        {"trt-fp8-kv-cache",
         "{precision: {dtype: fp8, kv_cache: fp16}}",
         [](D& d) { d.engine = "tensorrt-llm"; },
         false,
         {}},
        {"trt-fp8-kv-cache", "{precision: {dtype: fp16}}", [](D& d) { d.engine = "tensorrt-llm"; }, false, {}},
        {"trt-fp8-kv-cache", "{precision: {dtype: fp8}}", [](D& d) { d.engine = "vllm"; }, false, {}},
        // GptSession sizes its KV cache for the batch: all free memory, not 85-90% of it.
        {"trt-static-session-kv", "{serving: {batching: static}}", [](D& d) { d.engine = "tensorrt-llm"; }, true,
         [](const D& d) {
             CHECK(std::stod(doc_value(d.doc, "serving.gpu_memory_utilization")) == 1.0);
             CHECK(doc_value(d.doc, "serving.memory_fraction_of") == "free");
         }},
        {"trt-static-session-kv",
         "{serving: {batching: continuous}}",
         [](D& d) { d.engine = "tensorrt-llm"; },
         false,
         {}},
        {"trt-static-session-kv",
         "{serving: {batching: static, kv_cache_free_memory_fraction: 0.8}}",
         [](D& d) { d.engine = "tensorrt-llm"; },
         false,
         {}},
        // Llama 2 70B (64 heads, 8 KV heads): 0.5 has no XQA at all; 0.6.1 runs XQA only for an fp16
        // KV cache (fp8 from 0.7.1); MHA models have no groups to share.
        {"trt-mmha-gqa", "{serving: {engine_version: 0.5.0}, model: {heads: 64, kv_heads: 8}}",
         [](D& d) { d.engine = "tensorrt-llm"; }, true,
         [](const D& d) { CHECK(doc_value(d.doc, "serving.gqa_kv_sharing") == "false"); }},
        {"trt-mmha-gqa",
         "{serving: {engine_version: 0.6.1}, model: {heads: 64, kv_heads: 8}}",
         [](D& d) {
             d.engine = "tensorrt-llm";
             d.doc.set("serving.kv_dtype", std::string("fp8"));
         },
         true,
         {}},
        {"trt-mmha-gqa",
         "{serving: {engine_version: 0.6.1}, model: {heads: 64, kv_heads: 8}}",
         [](D& d) { d.engine = "tensorrt-llm"; },
         false,
         {}},
        {"trt-mmha-gqa",
         "{serving: {engine_version: 0.7.1}, model: {heads: 64, kv_heads: 8}}",
         [](D& d) {
             d.engine = "tensorrt-llm";
             d.doc.set("serving.kv_dtype", std::string("fp8"));
         },
         false,
         {}},
        {"trt-mmha-gqa",
         "{serving: {engine_version: 0.5.0}, model: {heads: 40, kv_heads: 40}}",
         [](D& d) { d.engine = "tensorrt-llm"; },
         false,
         {}},
        {"trt-mmha-gqa", "{model: {heads: 64, kv_heads: 8}}", [](D& d) { d.engine = "tensorrt-llm"; }, false, {}},
        // vLLM V0 without chunked prefill: budget max(max_model_len, 2048).
        {"vllm-v0-token-budget", "{serving: {}}",
         [](D& d) {
             d.engine = "vllm";
             d.preset = d.catalog.engine_for("vllm", "0.6.3");
             d.doc.set("serving.max_model_len", int64_t{4096});
         },
         true, [](const D& d) { CHECK(doc_value(d.doc, "serving.max_num_batched_tokens") == "4096"); }},
        {"vllm-v0-token-budget", "{serving: {}}",
         [](D& d) {
             d.engine = "vllm";
             d.preset = d.catalog.engine_for("vllm", "0.6.3");
             d.doc.set("serving.max_model_len", int64_t{1024});
         },
         true, [](const D& d) { CHECK(doc_value(d.doc, "serving.max_num_batched_tokens") == "2048"); }},
        {"vllm-v0-token-budget",
         "{serving: {}}",
         [](D& d) {
             d.engine = "vllm";
             d.preset = d.catalog.engine_for("vllm");
         },
         false,
         {}},
        {"vllm-no-chunked-prefill", "{serving: {chunked_prefill: false}}", [](D& d) { d.engine = "vllm"; }, true,
         [](const D& d) { CHECK(doc_value(d.doc, "serving.policy") == "vllm"); }},
        {"vllm-no-chunked-prefill",
         "{serving: {chunked_prefill: false}}",
         [](D& d) { d.engine = "sglang"; },
         false,
         {}},
    };
    for (const auto& t : cases) run_rule_case(t, serving_rules());
    for (const auto& r : serving_rules()) CHECK(tested().count(r.name) == 1);
}

TEST_CASE("an engine's preset is the one for the case's version: vLLM V0 before 0.8, TensorRT-LLM before 0.8",
          "[scenarios]") {
    const auto& cat = testing::source_catalog();
    REQUIRE(cat.engine_for("vllm") != nullptr);
    CHECK(cat.engine_for("vllm")->id == "vllm");  // no version: the newest
    CHECK(cat.engine_for("vllm", "0.6.3")->id == "vllm-v0");
    CHECK(cat.engine_for("vllm", "v0.7.3")->id == "vllm-v0");
    CHECK(cat.engine_for("vllm", "0.8")->id == "vllm");
    CHECK(cat.engine_for("vllm", "0.15.1")->id == "vllm");  // 15 > 8, not "15" < "8"
    CHECK(cat.engine_for("vllm", "latest")->id == "vllm");  // no digits: the newest
    CHECK(cat.engine_for("tensorrt-llm", "0.5.0")->id == "tensorrt-llm-0.7");
    CHECK(cat.engine_for("tensorrt-llm", "~1.0")->id == "tensorrt-llm");
    CHECK(cat.engine_for("sglang", "0.4.6")->id == "sglang");
    CHECK(cat.engine_for("tgi", "2.0") == nullptr);
    // Each engine's presets cover its versions once: one newest, no two holding the same version.
    for (const char* engine : {"vllm", "tensorrt-llm", "sglang"})
        for (const char* v : {"0.1", "0.5.0", "0.6.1", "0.7.9", "0.8.0", "1.2.0", "9.0"})
            CHECK(cat.engine_for(engine, v) != nullptr);
    CHECK(plans::compare_engine_versions("0.7", "0.7.0") == 0);
    CHECK(plans::compare_engine_versions("0.10.1", "0.9.2") == 1);
    CHECK_FALSE(plans::compare_engine_versions("dev", "0.7").has_value());
}
