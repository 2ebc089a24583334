// SGLang (`python -m sglang.launch_server`), flag names of 0.5.x (the sglang engine preset's
// 0.4-0.5; --ep-size and --moe-a2a-backend replace 0.4's --enable-ep-moe / --enable-deepep-moe from
// 0.4.10). S = python/sglang/srt/server_args.py of sglang 0.5.4.post3, the line of each flag.
// Expert parallelism is one engine whose data-parallel attention ranks share the experts
// (--enable-dp-attention --dp-size, --tp-size the engine's GPUs, --ep-size).
#include "scenarios/launch/dialects.h"
#include "scenarios/launch/serving_launch.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace fathom::scenarios::launch {
namespace {

constexpr const char* kFw = "sglang";
constexpr const char* kSources = "SGLang 0.5.x, S = python/sglang/srt/server_args.py of 0.5.4.post3";

void check(const Job& j) {
    const auto& p = *j.serving;
    check_common(j, kFw);
    if (!p.engine.preset.empty() && p.engine.preset != "sglang")
        cannot(j, kFw, "serving.engine", "the plan's engine is '" + p.engine.preset + "': export it for that engine");
    if (p.batching.policy != "sarathi" && p.batching.policy != "static")
        cannot(
            j, kFw, "serving.policy",
            "SGLang chunks prefills within --chunked-prefill-size (fathom's sarathi), not '" + p.batching.policy + "'");
    if (p.kv.fraction_of_free)
        cannot(j, kFw, "serving.memory_fraction_of", "SGLang's --mem-fraction-static is a share of the device");
    if (serving_value(j, "serving.kv_dtype") == "fp4")
        cannot(j, kFw, "serving.kv_dtype", "fp4 KV caches came with SGLang 0.5.4 on Blackwell only; not written here");
    for (const auto& pool : p.pools()) {
        const auto& l = *pool.layout;
        if (l.ep > 1 && l.ep != int64_t{l.tp} * l.replicas)
            cannot(j, kFw, std::string(pool.key) + ".ep",
                   "SGLang's expert parallelism spans its engine's data-parallel attention ranks (ep = tp x replicas)");
        if (l.pp > 1 && l.ep > 1)
            cannot(j, kFw, std::string(pool.key) + ".pp", "SGLang's DP attention engine is not pipelined");
    }
}

std::string deepep_mode(workloads::serving::PoolLayout const& l) {
    return l.dispatcher == models::MoeDispatcher::DeepEpLowLatency ? "low_latency" : "normal";
}

void engine_flags(const Job& j, const PoolLaunch& pool, const Instance& in, CommandLine& c) {
    const auto& p = *j.serving;
    const auto& l = *pool.layout;
    if (l.ep > 1) {
        // One engine of tp x replicas GPUs: attention data-parallel over the replicas, experts over all.
        c.flag("--tp-size", int64_t{l.tp} * l.replicas, "S:2185");
        c.flag("--dp-size", l.replicas, "S:2490");
        c.on("--enable-dp-attention", "S:3216");
        c.flag("--ep-size", l.ep, "S:2795");
        if (l.dispatcher != models::MoeDispatcher::AllToAll) {
            c.flag("--moe-a2a-backend", "deepep", "S:2802");
            c.flag("--deepep-mode", deepep_mode(l), "S (deepep_mode)");
        }
    } else {
        c.flag("--tp-size", l.tp, "S:2185");
        if (l.pp > 1) c.flag("--pp-size", l.pp, "S:2192");
    }
    if (in.nodes > 1) {
        c.flag("--nnodes", in.nodes, "S (nnodes)");
        c.raw("--node-rank", "\"${NODE_RANK:-0}\"", "S (node_rank)");
        c.raw("--dist-init-addr", "\"${HEAD_ADDR:-127.0.0.1}:5000\"", "S (dist_init_addr)");
    }
    if (p.engine.two_batch_overlap) c.on("--enable-two-batch-overlap", "S (enable_two_batch_overlap)");
    c.flag("--max-running-requests", p.batching.max_num_seqs, "S:2071");
    c.flag("--chunked-prefill-size", p.batching.max_num_batched_tokens, "S:2090");
    if (p.batching.max_model_len > 0) c.flag("--context-length", p.batching.max_model_len, "S:1900");
    c.flag("--mem-fraction-static", number_text(p.kv.gpu_memory_utilization), "S:2065");
    c.flag("--page-size", p.kv.block_size, "S:2139");
    if (!p.kv.prefix_caching) c.on("--disable-radix-cache", "S:3124");
    const std::string dtype = serving_value(j, "serving.dtype");
    if (dtype == "fp8") c.flag("--quantization", "fp8", "S:1996");
    else if (dtype == "bf16" || dtype == "fp16") c.flag("--dtype", "auto", "S:1982");
    if (serving_value(j, "serving.kv_dtype") == "fp8") c.flag("--kv-cache-dtype", "fp8_e4m3", "S:2012");
    const auto& s = p.speculative;
    if (s.method != workloads::serving::SpecMethod::None) {
        const char* algo = s.method == workloads::serving::SpecMethod::Eagle   ? "EAGLE"
                           : s.method == workloads::serving::SpecMethod::Mtp   ? "NEXTN"
                           : s.method == workloads::serving::SpecMethod::Ngram ? "NGRAM"
                                                                               : "STANDALONE";
        c.flag("--speculative-algorithm", algo, "S:2669");
        if (s.method == workloads::serving::SpecMethod::Eagle || s.method == workloads::serving::SpecMethod::Draft)
            c.raw("--speculative-draft-model-path", "\"${SPEC_MODEL:?the draft of MODEL}\"", "S:2675");
        c.flag("--speculative-num-steps", s.tokens, "S:2698");
        c.flag("--speculative-eagle-topk", 1, "S:2704");
        c.flag("--speculative-num-draft-tokens", s.tokens + 1, "S:2710");
    }
    if (p.lora.enabled()) {
        c.on("--enable-lora", "S (enable_lora, 0.4.9+)");
        c.flag("--max-loras-per-batch", p.lora.max_loras, "S:2548");
        c.flag("--max-lora-rank", p.lora.slot_rank(), "S:2554");
    }
    if (pool.role != "aggregated") {
        c.flag("--disaggregation-mode", pool.role, "S:3445");
        c.flag("--disaggregation-transfer-backend", "mooncake", "S:3452");
    }
}

std::vector<LaunchFile> write(const Job& j) {
    check(j);
    const auto& p = *j.serving;
    const bool ep = any_expert_parallel(p);
    std::vector<LaunchFile> files;
    for (const PoolLaunch& pool : pool_launches(j, ep)) {
        std::string text = serving_header(j, "SGLang", kSources);
        if (pool.role != "aggregated")
            text += "# The " + pool.role +
                    " pool of a disaggregated layout (KV caches by Mooncake); route with sglang-router:\n"
                    "#   python -m sglang_router.launch_router --pd-disaggregation --prefill http://P:30000 "
                    "--decode http://D:31000\n";
        const int port = pool.role == "decode" ? 31000 : 30000;
        for (size_t i = 0; i < pool.instances.size(); ++i) {
            const Instance& in = pool.instances[i];
            CommandLine c((in.nodes > 1 ? std::string() : "CUDA_VISIBLE_DEVICES=" + in.gpus + " ") +
                          "python -m sglang.launch_server --model-path " + model_argument(j) + " --port " +
                          std::to_string(port + static_cast<int>(i)));
            engine_flags(j, pool, in, c);
            text += instance_text(pool, i, c, kSources, " and the next: run on each with NODE_RANK", true);
        }
        text += "wait\n";
        files.push_back({pool.role == "aggregated" ? "sglang.sh" : pool.role + ".sh", text});
    }
    return files;
}

YAML::Node read(const std::vector<LaunchFile>& files, const models::ModelSpec&) {
    YAML::Node out;
    YAML::Node s = out["serving"];
    s["engine"] = "sglang";
    std::map<std::string, std::string> modes;  // pool -> deepep mode
    for (const LaunchFile& file : files) {
        const auto words = shell_words(file.text);
        const Commands cmds = commands_of(words, {"-m", "sglang.launch_server"});
        const int64_t instances = cmds.count;
        const std::map<std::string, std::string>& f = cmds.flags;
        auto num = [&](const std::string& k, int64_t d) { return f.count(k) ? std::stoll(f.at(k)) : d; };
        const std::string role = file.name.substr(0, file.name.find('.'));
        YAML::Node pool = role == "sglang" ? s : s["disaggregation"][role];
        if (f.count("--enable-dp-attention")) {
            const int64_t dp = num("--dp-size", 1);
            pool["tp"] = num("--tp-size", 1) / dp;
            pool["dp"] = dp;
            pool["ep"] = num("--ep-size", 1);
            if (f.count("--moe-a2a-backend")) modes[role] = f.count("--deepep-mode") ? f.at("--deepep-mode") : "auto";
        } else {
            pool["tp"] = num("--tp-size", 1);
            pool["pp"] = num("--pp-size", 1);
            pool["dp"] = instances;
        }
        if (role != "sglang") pool["gpus"] = pool["tp"].as<int64_t>() * pool["dp"].as<int64_t>();
        s["max_num_seqs"] = num("--max-running-requests", 0);
        s["max_num_batched_tokens"] = num("--chunked-prefill-size", 0);
        if (f.count("--context-length")) s["max_model_len"] = num("--context-length", 0);
        s["gpu_memory_fraction"] =
            yaml_number(std::stod(f.count("--mem-fraction-static") ? f.at("--mem-fraction-static") : "0.9"));
        s["prefix_cache"] = f.count("--disable-radix-cache") == 0;
        s["chunked_prefill"] = true;
        s["two_batch_overlap"] = f.count("--enable-two-batch-overlap") > 0;
        if (f.count("--quantization")) out["precision"]["dtype"] = "fp8";
        else if (f.count("--dtype")) out["precision"]["dtype"] = "bf16";
        if (f.count("--kv-cache-dtype")) out["precision"]["kv_cache"] = "fp8";
        if (f.count("--speculative-algorithm")) {
            const std::string a = f.at("--speculative-algorithm");
            s["speculative"]["method"] = a == "EAGLE"   ? "eagle"
                                         : a == "NEXTN" ? "mtp"
                                         : a == "NGRAM" ? "ngram"
                                                        : "draft";
            s["speculative"]["tokens"] = num("--speculative-num-steps", 1);
        }
    }
    if (!modes.empty()) {
        const bool same =
            std::all_of(modes.begin(), modes.end(), [&](const auto& m) { return m.second == modes.begin()->second; });
        const std::string m = modes.begin()->second;
        s["moe_dispatcher"] = !same || m == "auto" ? "deepep_auto"
                              : m == "low_latency" ? "deepep_low_latency"
                                                   : "deepep";
    }
    return out;
}

}  // namespace

Dialect sglang_dialect() { return {"serving", write, read}; }

}  // namespace fathom::scenarios::launch
