// TensorRT-LLM (`trtllm-serve`, PyTorch backend, LLM API of 1.0): the command line with an
// --extra_llm_api_options YAML (the 1.0 layout: kv_cache_config.dtype, speculative_config), one
// script per pool that writes its YAML and starts its instances. Option names are those of
// tensorrt_llm/commands/serve.py (click options) and tensorrt_llm/llmapi/llm_args.py (TorchLlmArgs,
// KvCacheConfig, the decoding configs); cited by class and field, the stored sources giving no line
// numbers. Quantized weights come with the checkpoint (ModelOpt): MODEL must be one so quantized.
#include "scenarios/launch/dialects.h"
#include "scenarios/launch/serving_launch.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fathom::scenarios::launch {
namespace {

constexpr const char* kFw = "trtllm";
constexpr const char* kSources =
    "TensorRT-LLM 1.0, S = tensorrt_llm/commands/serve.py, L = tensorrt_llm/llmapi/llm_args.py (class.field)";

void check(const Job& j) {
    const auto& p = *j.serving;
    check_common(j, kFw);
    if (!p.engine.preset.empty() && p.engine.preset != "tensorrt-llm")
        cannot(j, kFw, "serving.engine",
               "the plan's engine is '" + p.engine.preset +
                   "': trtllm writes TensorRT-LLM's LLM API of 1.0 (engine preset tensorrt-llm)");
    if (p.batching.policy != "sarathi" && p.batching.policy != "static")
        cannot(j, kFw, "serving.policy",
               "TensorRT-LLM's in-flight batching chunks context within max_num_tokens (fathom's sarathi), not '" +
                   p.batching.policy + "'");
    if (!p.kv.fraction_of_free)
        cannot(j, kFw, "serving.memory_fraction_of",
               "TensorRT-LLM's KV share is of the memory left after the weights (memory_fraction_of: free)");
    if (serving_value(j, "serving.kv_dtype") == "fp4")
        cannot(j, kFw, "serving.kv_dtype", "an fp4 KV cache is not written here");
    if (p.speculative.method == workloads::serving::SpecMethod::Ngram)
        cannot(j, kFw, "serving.speculative.method", "NGram drafting's settings differ between 0.20 and 1.0");
    for (const auto& pool : p.pools()) {
        const auto& l = *pool.layout;
        if (l.ep > 1 && l.ep != int64_t{l.tp} * l.replicas)
            cannot(j, kFw, std::string(pool.key) + ".ep",
                   "TensorRT-LLM's attention data parallelism shares the experts over all of an engine's GPUs");
    }
}

// The LLM API options of one pool, as YAML.
std::string llm_api_yaml(const Job& j, const PoolLaunch& pool) {
    const auto& p = *j.serving;
    const auto& l = *pool.layout;
    std::ostringstream y;
    y << "enable_chunked_prefill: true  # L TorchLlmArgs.enable_chunked_prefill\n";
    if (l.ep > 1) {
        y << "enable_attention_dp: " << (l.replicas > 1 ? "true" : "false") << "  # L enable_attention_dp\n"
          << "moe_expert_parallel_size: " << l.ep << "  # L moe_expert_parallel_size\n";
    }
    y << "kv_cache_config:  # L KvCacheConfig\n  enable_block_reuse: " << (p.kv.prefix_caching ? "true" : "false")
      << "\n  free_gpu_memory_fraction: " << number_text(p.kv.gpu_memory_utilization) << "\n";
    if (serving_value(j, "serving.kv_dtype") == "fp8") y << "  dtype: fp8\n";
    const auto& s = p.speculative;
    if (s.method == workloads::serving::SpecMethod::Mtp)
        y << "speculative_config:  # L MTPDecodingConfig\n  decoding_type: MTP\n  num_nextn_predict_layers: "
          << s.tokens << "\n";
    if (s.method == workloads::serving::SpecMethod::Eagle || s.method == workloads::serving::SpecMethod::Draft)
        y << "speculative_config:  # L "
          << (s.method == workloads::serving::SpecMethod::Eagle ? "Eagle" : "DraftTarget")
          << "DecodingConfig\n  decoding_type: "
          << (s.method == workloads::serving::SpecMethod::Eagle ? "Eagle" : "DraftTarget")
          << "\n  max_draft_len: " << s.tokens << "\n  speculative_model_dir: ${SPEC_MODEL}\n";
    if (pool.role != "aggregated")
        y << "disable_overlap_scheduler: " << (pool.role == "prefill" ? "true" : "false")
          << "\ncache_transceiver_config:  # L CacheTransceiverConfig\n  backend: DEFAULT\n";
    return y.str();
}

std::vector<LaunchFile> write(const Job& j) {
    check(j);
    const auto& p = *j.serving;
    const bool ep = any_expert_parallel(p);
    std::vector<LaunchFile> files;
    for (const PoolLaunch& pool : pool_launches(j, ep)) {
        const auto& l = *pool.layout;
        const std::string yaml = pool.role + "-llm-api.yaml";
        std::string text = serving_header(j, "TensorRT-LLM (trtllm-serve)", kSources);
        if (pool.role != "aggregated")
            text += "# The " + pool.role +
                    " pool of a disaggregated layout: list the instances of both pools in a disagg_config.yaml\n"
                    "# (context_servers, generation_servers: num_instances, urls) and run `trtllm-serve disaggregated "
                    "-c` on it.\n";
        text += "cat > " + yaml + " <<'YAML'\n" + llm_api_yaml(j, pool) + "YAML\n";
        const int port = pool.role == "decode" ? 8200 : pool.role == "prefill" ? 8100 : 8000;
        for (size_t i = 0; i < pool.instances.size(); ++i) {
            const Instance& in = pool.instances[i];
            CommandLine c("CUDA_VISIBLE_DEVICES=" + in.gpus + " trtllm-serve " + model_argument(j) +
                          " --backend pytorch --host 0.0.0.0 --port " + std::to_string(port + static_cast<int>(i)));
            c.flag("--tp_size", ep ? int64_t{l.tp} * l.replicas : int64_t{l.tp}, "S (tp_size)");
            c.flag("--pp_size", l.pp, "S (pp_size)");
            if (l.ep > 1) c.flag("--ep_size", l.ep, "S (ep_size)");
            c.flag("--max_batch_size", p.batching.max_num_seqs, "S (max_batch_size)");
            c.flag("--max_num_tokens", p.batching.max_num_batched_tokens, "S (max_num_tokens)");
            if (p.batching.max_model_len > 0) c.flag("--max_seq_len", p.batching.max_model_len, "S (max_seq_len)");
            c.flag("--kv_cache_free_gpu_memory_fraction", number_text(p.kv.gpu_memory_utilization),
                   "S (kv_cache_free_gpu_memory_fraction)");
            c.flag("--extra_llm_api_options", yaml, "S (extra_llm_api_options)");
            text += instance_text(pool, i, c, kSources, " and the next", false);
        }
        text += "wait\n";
        files.push_back({pool.role == "aggregated" ? "trtllm.sh" : pool.role + ".sh", text});
    }
    return files;
}

YAML::Node read(const std::vector<LaunchFile>& files, const models::ModelSpec&) {
    YAML::Node out;
    YAML::Node s = out["serving"];
    s["engine"] = "tensorrt-llm";
    for (const LaunchFile& file : files) {
        // The LLM API YAML between the heredoc's markers, then the commands.
        const size_t a = file.text.find("<<'YAML'\n"), b = file.text.find("\nYAML\n");
        const YAML::Node api = a != std::string::npos && b != std::string::npos
                                   ? YAML::Load(file.text.substr(a + 9, b - a - 8))
                                   : YAML::Node();
        const auto words = shell_words(file.text.substr(b == std::string::npos ? 0 : b + 6));
        const Commands cmds = commands_of(words, {"trtllm-serve"});
        const int64_t instances = cmds.count;
        const std::map<std::string, std::string>& f = cmds.flags;
        auto num = [&](const std::string& k, int64_t d) { return f.count(k) ? std::stoll(f.at(k)) : d; };
        const std::string role = file.name.substr(0, file.name.find('.'));
        YAML::Node pool = role == "trtllm" ? s : s["disaggregation"][role];
        const bool adp = api["enable_attention_dp"] && api["enable_attention_dp"].as<bool>();
        const int64_t tp = num("--tp_size", 1), ep = num("--ep_size", 1);
        const int64_t dp = ep > 1 ? (adp ? tp : 1) : instances;
        pool["tp"] = ep > 1 ? tp / dp : tp;
        pool["pp"] = num("--pp_size", 1);
        pool["dp"] = dp;
        if (ep > 1) pool["ep"] = ep;
        if (role != "trtllm") pool["gpus"] = pool["tp"].as<int64_t>() * pool["pp"].as<int64_t>() * dp;
        s["max_num_seqs"] = num("--max_batch_size", 0);
        s["max_num_batched_tokens"] = num("--max_num_tokens", 0);
        if (f.count("--max_seq_len")) s["max_model_len"] = num("--max_seq_len", 0);
        s["kv_cache_free_memory_fraction"] = yaml_number(std::stod(
            f.count("--kv_cache_free_gpu_memory_fraction") ? f.at("--kv_cache_free_gpu_memory_fraction") : "0.9"));
        s["chunked_prefill"] = api["enable_chunked_prefill"] && api["enable_chunked_prefill"].as<bool>();
        const YAML::Node kv = api["kv_cache_config"];
        s["prefix_cache"] = kv && kv["enable_block_reuse"] && kv["enable_block_reuse"].as<bool>();
        out["precision"]["kv_cache"] = kv && kv["dtype"] && kv["dtype"].as<std::string>() == "fp8" ? "fp8" : "bf16";
        if (const YAML::Node spec = api["speculative_config"]) {
            const std::string t = spec["decoding_type"].as<std::string>();
            s["speculative"]["method"] = t == "MTP" ? "mtp" : t == "Eagle" ? "eagle" : "draft";
            s["speculative"]["tokens"] =
                t == "MTP" ? spec["num_nextn_predict_layers"].as<int64_t>() : spec["max_draft_len"].as<int64_t>();
        }
    }
    return out;
}

}  // namespace

Dialect trtllm_dialect() { return {"serving", write, read}; }

}  // namespace fathom::scenarios::launch
