// vLLM V1 (`vllm serve`), flag names valid from 0.9.2 to 0.11 (the vllm engine preset's range; the
// JSON --speculative-config from 0.8.3, NixlConnector from 0.9.2). A = vllm/engine/arg_utils.py of
// vLLM v0.11.0, the line of each flag. V1 always chunks prefills within --max-num-batched-tokens
// (A:1544-1548), which is fathom's sarathi policy.
#include "scenarios/launch/dialects.h"
#include "scenarios/launch/serving_launch.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace fathom::scenarios::launch {
namespace {

constexpr const char* kFw = "vllm";
constexpr const char* kSources = "vLLM 0.9.2-0.11 (V1), A = vllm/engine/arg_utils.py of v0.11.0";

void check(const Job& j) {
    const auto& p = *j.serving;
    check_common(j, kFw);
    if (!p.engine.preset.empty() && p.engine.preset != "vllm")
        cannot(j, kFw, "serving.engine",
               "the plan's engine is '" + p.engine.preset + "': export it for that engine (vllm is V1's, preset vllm)");
    if (p.batching.policy != "sarathi" && p.batching.policy != "static")
        cannot(j, kFw, "serving.policy",
               "vLLM V1 always chunks prefills within max-num-batched-tokens (fathom's sarathi), not '" +
                   p.batching.policy + "'");
    if (p.kv.fraction_of_free)
        cannot(j, kFw, "serving.memory_fraction_of", "vLLM's --gpu-memory-utilization is a share of the device");
    const int64_t b = p.kv.block_size;
    if (b != 1 && b != 8 && b != 16 && b != 32 && b != 64 && b != 128)
        cannot(j, kFw, "serving.block_size", "vLLM's --block-size is 1, 8, 16, 32, 64 or 128 (A:763)");
    const std::string kv = serving_value(j, "serving.kv_dtype");
    if (kv == "fp4") cannot(j, kFw, "serving.kv_dtype", "vLLM 0.11's KV cache is 16-bit or fp8 (A:769)");
    for (const auto& pool : p.pools()) {
        const auto& l = *pool.layout;
        if (l.ep > 1 && l.ep != int64_t{l.tp} * l.replicas)
            cannot(j, kFw, std::string(pool.key) + ".ep",
                   "vLLM's expert parallelism spans all of an engine's data-parallel ranks (ep = tp x replicas)");
    }
}

std::string speculative_json(const Job& j) {
    const auto& s = j.serving->speculative;
    nlohmann::json c;
    switch (s.method) {
        case workloads::serving::SpecMethod::Eagle: c["method"] = "eagle"; break;
        case workloads::serving::SpecMethod::Mtp: c["method"] = "deepseek_mtp"; break;
        case workloads::serving::SpecMethod::Ngram: c["method"] = "ngram"; break;
        case workloads::serving::SpecMethod::Draft: c["method"] = "draft_model"; break;
        case workloads::serving::SpecMethod::None: return "";
    }
    if (s.method == workloads::serving::SpecMethod::Eagle || s.method == workloads::serving::SpecMethod::Draft)
        c["model"] = "SPEC_MODEL";
    c["num_speculative_tokens"] = s.tokens;
    // The draft's checkpoint from the environment: the JSON in double quotes so the shell expands it.
    std::string text = c.dump(), out;
    for (char ch : text) out += ch == '"' ? std::string("\\\"") : std::string(1, ch);
    const std::string what = s.method == workloads::serving::SpecMethod::Draft ? "the draft model " + s.draft_model
                                                                               : "the EAGLE head of MODEL";
    const size_t at = out.find("SPEC_MODEL");
    if (at != std::string::npos) out.replace(at, 10, "${SPEC_MODEL:?" + what + "}");
    return "\"" + out + "\"";
}

void engine_flags(const Job& j, const PoolLaunch& pool, CommandLine& c) {
    const auto& p = *j.serving;
    const auto& l = *pool.layout;
    c.flag("--tensor-parallel-size", l.tp, "A:655");
    c.flag("--pipeline-parallel-size", l.pp, "A:653");
    if (l.ep > 1) {
        c.flag("--data-parallel-size", l.replicas, "A:660");
        c.on("--enable-expert-parallel", "A:698");
    }
    c.flag("--max-num-seqs", p.batching.max_num_seqs, "A:885");
    c.flag("--max-num-batched-tokens", p.batching.max_num_batched_tokens, "A:883");
    if (p.batching.max_model_len > 0) c.flag("--max-model-len", p.batching.max_model_len, "A:546");
    c.flag("--gpu-memory-utilization", number_text(p.kv.gpu_memory_utilization), "A:764");
    c.flag("--block-size", p.kv.block_size, "A:763");
    c.on(p.kv.prefix_caching ? "--enable-prefix-caching" : "--no-enable-prefix-caching", "A:773");
    const std::string dtype = serving_value(j, "serving.dtype");
    if (dtype == "fp8") c.flag("--quantization", "fp8", "A:548");
    else if (dtype == "bf16" || dtype == "fp16") c.flag("--dtype", "auto", "A:530");
    if (serving_value(j, "serving.kv_dtype") == "fp8") c.flag("--kv-cache-dtype", "fp8", "A:769");
    if (const std::string spec = speculative_json(j); !spec.empty()) c.raw("--speculative-config", spec, "A:928");
    if (p.lora.enabled()) {
        c.on("--enable-lora", "A:831");
        c.flag("--max-loras", p.lora.max_loras, "A:836");
        c.flag("--max-lora-rank", p.lora.slot_rank(), "A:837");
    }
    if (pool.role != "aggregated")
        c.raw("--kv-transfer-config", "'{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'", "A:930");
}

std::vector<LaunchFile> write(const Job& j) {
    check(j);
    const auto& p = *j.serving;
    std::vector<LaunchFile> files;
    const bool ep = any_expert_parallel(p);
    for (const PoolLaunch& pool : pool_launches(j, ep)) {
        std::string text = serving_header(j, "vLLM", kSources);
        if (pool.role != "aggregated")
            text += "# The " + pool.role +
                    " pool of a disaggregated layout: KV caches move by NIXL (NixlConnector, vLLM 0.9.2+); a\n"
                    "# proxy sends each request to a prefill instance, then to a decode instance.\n";
        int port = pool.role == "decode" ? 8200 : pool.role == "prefill" ? 8100 : 8000;
        for (size_t i = 0; i < pool.instances.size(); ++i) {
            const Instance& in = pool.instances[i];
            CommandLine c("CUDA_VISIBLE_DEVICES=" + in.gpus + " vllm serve " + model_argument(j) + " --port " +
                          std::to_string(port + static_cast<int>(i)));
            engine_flags(j, pool, c);
            text +=
                instance_text(pool, i, c, kSources, " (and the next nodes: a multi-node engine, vLLM over Ray)", false);
        }
        text += "wait\n";
        files.push_back({pool.role == "aggregated" ? "vllm.sh" : pool.role + ".sh", text});
    }
    return files;
}

YAML::Node read(const std::vector<LaunchFile>& files, const models::ModelSpec&) {
    YAML::Node out;
    YAML::Node s = out["serving"];
    s["engine"] = "vllm";
    for (const LaunchFile& file : files) {
        const auto words = shell_words(file.text);
        // Each `vllm serve` starts an instance; the flags of the last one stand for its pool.
        const Commands cmds = commands_of(words, {"vllm", "serve"});
        const int64_t instances = cmds.count;
        const std::map<std::string, std::string>& f = cmds.flags;
        auto num = [&](const std::string& k, int64_t d) { return f.count(k) ? std::stoll(f.at(k)) : d; };
        YAML::Node pool = file.name == "vllm.sh" ? s : s["disaggregation"][file.name.substr(0, file.name.find('.'))];
        const int64_t tp = num("--tensor-parallel-size", 1), pp = num("--pipeline-parallel-size", 1);
        const int64_t dp = f.count("--enable-expert-parallel") ? num("--data-parallel-size", 1) : instances;
        pool["tp"] = tp;
        pool["pp"] = pp;
        pool["dp"] = dp;
        if (f.count("--enable-expert-parallel")) pool["ep"] = tp * dp;
        s["max_num_seqs"] = num("--max-num-seqs", 0);
        s["max_num_batched_tokens"] = num("--max-num-batched-tokens", 0);
        if (f.count("--max-model-len")) s["max_model_len"] = num("--max-model-len", 0);
        s["gpu_memory_fraction"] =
            yaml_number(std::stod(f.count("--gpu-memory-utilization") ? f.at("--gpu-memory-utilization") : "0.9"));
        s["prefix_cache"] = f.count("--enable-prefix-caching") > 0;
        s["chunked_prefill"] = true;
        if (f.count("--quantization") && f.at("--quantization") == "fp8") {
            out["precision"]["dtype"] = "fp8";
            out["precision"]["weights"] = "fp8";
        } else if (f.count("--dtype")) {
            out["precision"]["dtype"] = "bf16";
        }
        out["precision"]["kv_cache"] = f.count("--kv-cache-dtype") ? "fp8" : "bf16";
        if (f.count("--speculative-config")) {
            const auto c = nlohmann::json::parse(f.at("--speculative-config"), nullptr, false);
            if (c.is_object()) {
                const std::string m = c.value("method", "");
                s["speculative"]["method"] = m == "deepseek_mtp" ? "mtp" : m == "draft_model" ? "draft" : m;
                s["speculative"]["tokens"] = c.value("num_speculative_tokens", 0);
            }
        }
    }
    return out;
}

}  // namespace

Dialect vllm_dialect() { return {"serving", write, read}; }

}  // namespace fathom::scenarios::launch
