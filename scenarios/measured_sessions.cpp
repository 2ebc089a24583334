// fathom's extension of the measured format for multi-turn benchmarks and KV offloading
// (scenarios/measured-format-fathom.md): serving.workload.sessions, vLLM's multi-turn generator
// (benchmarks/multi_turn) in its own terms, and serving.kv_offload, the connector and its host
// memory. Both are written to the scenario through its keys, so the scenario parser checks them.
#include "scenarios/measured_rules.h"

#include <iomanip>
#include <sstream>
#include <string>

namespace fathom::scenarios::measured {
namespace {

// A length of the case at `path` (an integer, or a distribution block) as the scenario's `key`.
void take_length(ServingDraft& d, const std::string& path, const std::string& key) {
    const Case& c = d.c;
    if (c.at(path).IsScalar()) {
        d.doc.take(c, path, key);
        return;
    }
    for (const char* field : {"distribution", "value", "min", "max", "mean", "stddev"})
        if (c.has(path + "." + field)) d.doc.take(c, path + "." + field, key + "." + field);
}

}  // namespace

void translate_sessions(ServingDraft& d) {
    const Case& c = d.c;
    const std::string s = "serving.workload.sessions";
    // The shared format wants a dataset without input_len: the generator's (`other`), read here.
    if (c.peek("serving.workload.dataset") == "other") c.at("serving.workload.dataset");
    d.doc.take(c, s + ".conversations", "traffic.sessions.conversations");
    d.doc.take(c, s + ".turns_min", "traffic.sessions.turns");
    if (c.has(s + ".turns_max")) d.doc.take(c, s + ".turns_max", "traffic.sessions.turns_max");
    take_length(d, s + ".first_turn_len", "traffic.sessions.first_prompt");
    if (c.has(s + ".first_turn_scaled"))
        d.doc.take(c, s + ".first_turn_scaled", "traffic.sessions.first_prompt_scaled");
    take_length(d, s + ".turn_len", "traffic.prompt");
    take_length(d, s + ".output_len", "traffic.output");
    if (c.has(s + ".common_prefix_len")) {
        d.doc.set("traffic.shared_prefix.groups", int64_t{1}, s + ".common_prefix_len");
        d.doc.take(c, s + ".common_prefix_len", "traffic.shared_prefix.tokens");
        d.assumptions.push_back("the common prefix is one shared prefix of every conversation's first turn");
    }
    d.assumptions.push_back(
        "conversations' chat-template tokens and the generator's short connecting text "
        "(~20 tokens a first turn, ~10 a later one) not counted");
    // The engines' default context (vLLM, SGLang: the model's own).
    if (c.has("serving.max_model_len")) {
        d.doc.take(c, "serving.max_model_len", "serving.max_model_len");
    } else if (c.has("model.seq_len")) {
        d.doc.set("serving.max_model_len", c.count("model.seq_len"), "model.seq_len");
        d.assumptions.push_back("max_model_len: the model's context length (the engine's default)");
    } else {
        throw Unsupported{"a multi-turn case needs serving.max_model_len or model.seq_len"};
    }
}

void translate_kv_offload(ServingDraft& d) {
    const Case& c = d.c;
    if (!c.has("serving.kv_offload")) return;
    const std::string connector = c.choice("serving.kv_offload.connector", {"lmcache", "vllm", "hicache"});
    const double gb = c.number("serving.kv_offload.host_gb");
    std::ostringstream size;
    size << std::setprecision(15) << gb << " GB";
    d.doc.set("serving.kv_offload", size.str(), "serving.kv_offload.host_gb");
    if (connector == "lmcache") {
        // LMCache's vLLM connector (lmcache/integration/vllm/vllm_v1_adapter.py): the scheduler side's
        // get_num_new_matched_tokens returns (need_to_allocate, False), so the hit chunks load
        // synchronously in start_load_kv, before the forward that admits the request; its GPU
        // connector moves each chunk between the paged KV and one contiguous buffer with its own CUDA
        // kernel and copies that buffer whole, not one block at a time.
        d.doc.set("serving.kv_offload_copy", std::string("kernel"), "serving.kv_offload.connector");
        d.doc.set("serving.kv_offload_load", std::string("blocking"), "serving.kv_offload.connector");
        // lmcache/v1/config.py: chunk_size 256 and save_decode_cache False by default.
        if (c.has("serving.kv_offload.chunk_tokens"))
            d.doc.take(c, "serving.kv_offload.chunk_tokens", "serving.kv_offload_chunk");
        else d.doc.set("serving.kv_offload_chunk", int64_t{256}, "serving.kv_offload.connector");
        d.doc.set("serving.kv_offload_store_decode", false, "serving.kv_offload.connector");
        // Its stores run in wait_for_save at the end of each forward, before the next step.
        d.doc.set("serving.kv_offload_store", std::string("blocking"), "serving.kv_offload.connector");
        d.assumptions.push_back(
            "LMCache: whole chunks loaded before the iteration (blocking), one copy a chunk; "
            "answers not stored (save_decode_cache false); new blocks copied to host memory before the "
            "next iteration at the host link's bandwidth (LMCache's own gather and bookkeeping not priced)");
    } else {
        d.assumptions.push_back("KV offloading connector '" + connector + "': the engine preset's copy and load modes");
    }
}

}  // namespace fathom::scenarios::measured
