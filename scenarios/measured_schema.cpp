#include "scenarios/measured_schema.h"

#include "scenarios/yaml_node.h"
#include "sim/error.h"

#include <vector>

namespace fathom::scenarios {

namespace {

// A field of the format: a leaf, or a block with its own fields. A leaf is a configuration field
// (a setting or a qualifier of the measurement: a translator reads it or reports it as not
// modelled) unless it is `info`: provenance, the measurement itself, free text for people, or
// figures the format calls informational.
struct Field {
    const char* name;
    std::vector<Field> fields;  // empty: a leaf
    bool info = false;
};

std::vector<Field> leaves(std::initializer_list<const char*> names) {
    std::vector<Field> v;
    for (const char* n : names) v.push_back({n, {}});
    return v;
}

std::vector<Field> info(std::initializer_list<const char*> names) {
    std::vector<Field> v;
    for (const char* n : names) v.push_back({n, {}, true});
    return v;
}

std::vector<Field> operator+(std::vector<Field> a, const std::vector<Field>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

const std::vector<Field>& metric_fields() {
    static const std::vector<Field> f =
        info({"metric", "value", "unit"}) +
        leaves({"statistic", "scope", "flops_convention", "direction", "link", "peak_tflops", "attention_flops"});
    return f;
}

// Declarative table: check_measured.py's CASE, block by block (the vocabularies are the readers' business).
const std::vector<Field>& case_fields() {
    static const std::vector<Field> f = [] {
        const std::vector<Field> pool =
            leaves({"gpus", "nodes", "instances", "tp", "pp", "dp", "ep"}) + info({"description"});
        std::vector<Field> c = {
            {"id", {}, true},
            {"kind", {}, true},
            {"source", info({"type", "repo", "mirror_of", "path", "commit", "table", "url", "title", "config",
                             "derivation", "transcription", "snapshot", "note"})},
            {"trust", {}, true},
            {"completeness", {}, true},
            {"missing", {}, true},
            {"assumed", {}, true},
            {"hardware", leaves({"accelerator", "power_limit_w"}) +
                             info({"description", "system", "peak_bf16_tflops", "peak_fp8_tflops", "hbm_tb_per_s"})},
            {"cluster",
             {{"gpus", {}},
              {"nodes", {}},
              {"gpus_per_node", {}},
              {"intra_node", leaves({"fabric", "gb_per_s_per_gpu"}) + info({"description"})},
              {"scale_out",
               leaves({"fabric", "gb_per_s_per_gpu", "nics_per_node"}) + info({"topology", "description"})}}},
            {"model",
             [] {
                 auto m = info({"name", "description", "params_b", "active_params_b"}) +
                          leaves({"architecture", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab",
                                  "seq_len", "activation", "norm", "position_embedding", "tied_embeddings"});
                 m.push_back({"moe", leaves({"num_experts", "top_k", "expert_ffn", "shared_experts", "dense_layers",
                                             "moe_layer_frequency"})});
                 m.push_back({"mla", leaves({"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                                             "v_head_dim"})});
                 return m;
             }()},
            {"training",
             [] {
                 auto t = info({"software"}) +
                          leaves({"framework", "framework_version", "tp", "pp", "cp", "vp", "dp", "ep", "etp",
                                  "sequence_parallel", "zero_stage", "fsdp", "reshard_after_forward",
                                  "micro_batch_size", "batch_per_dp_rank", "global_batch_size", "grad_accum",
                                  "recompute", "cpu_offload", "pp_schedule", "tp_comm_overlap", "dp_comm_overlap",
                                  "pp_comm_overlap", "torch_compile", "flash_attention",
                                  // fathom's extension (scenarios/measured-format-fathom.md)
                                  "recompute_num_layers", "ep_comm_overlap"});
                 t.push_back({"lora", leaves({"rank", "alpha"})});
                 // fathom's extension: a window of a whole run
                 t.push_back(
                     {"run", leaves({"days", "steps", "storage", "checkpoint_method", "checkpoint_writer",
                                     "checkpoint_interval_s", "checkpoint_every_steps", "detect_s", "restart_s"})});
                 return t;
             }()},
            {"serving",
             [&pool] {
                 auto s = info({"benchmark_tool", "software"}) +
                          leaves({"engine", "engine_version", "backend", "tp", "pp", "dp", "ep", "batching",
                                  "max_num_seqs", "max_num_batched_tokens", "max_model_len", "chunked_prefill",
                                  "prefix_cache", "num_scheduler_steps", "torch_compile", "cuda_graphs",
                                  "gpu_memory_fraction", "kv_cache_free_memory_fraction",
                                  // fathom's extension (scenarios/measured-format-fathom.md)
                                  "moe_dispatcher", "two_batch_overlap", "packaging", "router"});
                 // fathom's extension: KV offloading to host memory
                 s.push_back({"kv_offload", leaves({"connector", "host_gb", "chunk_tokens"})});
                 // fathom's extension: speculative decoding
                 s.push_back(
                     {"speculative", leaves({"method", "tokens", "acceptance", "acceptance_length", "draft_model"})});
                 auto w = leaves({"arrival", "request_rate", "concurrency", "num_requests", "batch_size", "input_len",
                                  "output_len", "dataset", "mlperf_scenario"});
                 w.push_back({"shared_prefix", leaves({"groups", "prompts_per_group", "prefix_len"})});
                 // fathom's extension: multi-turn conversations (vLLM's multi-turn generator)
                 {
                     const auto length = leaves({"distribution", "value", "min", "max", "mean", "stddev"});
                     auto sessions =
                         leaves({"conversations", "turns_min", "turns_max", "common_prefix_len", "first_turn_scaled"});
                     for (const char* l : {"first_turn_len", "turn_len", "output_len"}) sessions.push_back({l, length});
                     w.push_back({"sessions", sessions});
                 }
                 w.push_back({"slo", leaves({"ttft_ms", "tpot_ms", "percentile"})});
                 s.push_back({"workload", w});
                 s.push_back({"disaggregation",
                              {{"measured", {}},
                               {"prefill", pool},
                               {"decode", pool},
                               {"kv_transfer", leaves({"link", "library"}) + info({"description"})}}});
                 return s;
             }()},
            {"benchmark",
             info({"tool", "software", "env", "description"}) +
                 leaves({"op", "implementation", "library", "library_version", "dtype", "out_dtype", "fp8_format", "M",
                         "N", "K", "shape_sweep", "size_bytes", "ranks", "algorithm", "reduce_op", "in_place", "iters",
                         "warmup", "copy", "copy_method", "phase", "tokens", "hidden", "top_k", "batch", "seq_len",
                         "heads", "kv_heads", "head_dim", "causal", "paged_kv", "kv_block_size",
                         // fathom's extension
                         "groups"})},
            // fathom's extension: an RL post-training iteration (kind rl)
            {"rl",
             [] {
                 const auto length = leaves({"distribution", "value", "min", "max", "mean", "stddev"});
                 auto r = info({"software"}) + leaves({"framework", "framework_version", "algorithm", "prompts",
                                                       "samples", "layout", "staleness", "minibatches", "epochs",
                                                       "reference", "critic", "sync", "offload_trainer"});
                 r.push_back({"prompt_len", length});
                 r.push_back({"response_len", length});
                 r.push_back({"rollout", leaves({"engine", "engine_version", "gpus", "tp", "pp",
                                                 "gpu_memory_fraction", "max_model_len"})});
                 r.push_back({"trainer", leaves({"backend", "gpus", "tp", "pp", "cp", "ep", "dp", "zero_stage",
                                                 "micro_batch_size", "seq_len", "recompute", "sequence_parallel"})});
                 return r;
             }()},
            {"precision", leaves({"dtype", "fp8_recipe", "fp8_format", "weights", "activations", "kv_cache"}) +
                              info({"description"})},
            {"other_metrics", {}, true},
            {"notes", {}, true}};
        for (const Field& m : metric_fields()) c.push_back(m);
        return c;
    }();
    return f;
}

const Field* find(const std::vector<Field>& fields, const std::string& name) {
    for (const Field& f : fields)
        if (name == f.name) return &f;
    return nullptr;
}

int line_of(const YAML::Node& n) { return n.Mark().line + 1; }

std::string key_text(const YAML::Node& k) { return k.IsScalar() ? k.Scalar() : std::string("(not a name)"); }

void check_block(const YAML::Node& block, const std::vector<Field>& fields, const std::string& where,
                 const std::string& file) {
    if (!block.IsMap()) throw sim::InputError("expected a mapping", file, line_of(block), where);
    for (const auto& kv : block) {
        const std::string name = key_text(kv.first), path = where.empty() ? name : where + "." + name;
        const Field* f = find(fields, name);
        if (!f)
            throw sim::InputError("not a field of measured-format v1 (shared/reference/measured-format.md)", file,
                                  line_of(kv.first), path);
        if (!f->fields.empty()) check_block(kv.second, f->fields, path, file);
    }
}

// The leaf a dotted configuration path names, or nullptr.
const Field* resolve(const std::string& path) {
    static const char* const kConfig[] = {"cluster", "model", "training", "serving", "benchmark", "precision", "rl"};
    const auto parts = split_key_path(path);
    bool config = false;
    for (const char* b : kConfig) config = config || parts.front() == b;
    if (!config) return nullptr;
    const std::vector<Field>* fields = &case_fields();
    const Field* f = nullptr;
    for (const std::string& part : parts) {
        if (!(f = find(*fields, part))) return nullptr;  // a leaf has no fields below it
        fields = &f->fields;
    }
    return f->fields.empty() ? f : nullptr;
}

}  // namespace

void check_case_fields(const YAML::Node& c, const std::string& file) {
    check_block(c, case_fields(), "", file);
    const YAML::Node om = c["other_metrics"];
    if (!om) return;
    if (!om.IsSequence()) throw sim::InputError("expected a list", file, line_of(om), "other_metrics");
    std::vector<Field> entry = metric_fields();
    entry.push_back({"note", {}});
    entry.push_back({"variant", {}});
    int i = 0;
    for (const auto& e : om) {
        const std::string where = "other_metrics[" + std::to_string(i++) + "]";
        check_block(e, entry, where, file);
        const YAML::Node v = e["variant"];
        if (!v) continue;
        if (!v.IsMap() || v.size() == 0)
            throw sim::InputError("expected a mapping of field path -> value", file, line_of(v), where + ".variant");
        for (const auto& kv : v) {
            const std::string path = key_text(kv.first);
            if (!resolve(path))
                throw sim::InputError(
                    "'" + path +
                        "' is not a configuration field of measured-format v1 (a path under cluster, model, "
                        "training, serving, benchmark or precision naming one field)",
                    file, line_of(kv.first), where + ".variant." + path);
            if (!kv.second.IsScalar())
                throw sim::InputError("expected a single value", file, line_of(kv.second), where + ".variant." + path);
        }
    }
}

YAML::Node with_field(const YAML::Node& c, const std::string& path, const YAML::Node& value, NodeArena* arena) {
    // yaml-cpp nodes are handles, and assigning one node to another makes them share their data: a
    // mapping is copied entry by entry (each entry shared), and an entry is replaced by removing it
    // and adding the new one, never by assigning to it.
    YAML::Node copy = arena ? arena->map() : YAML::Node(YAML::NodeType::Map);
    if (c.IsMap())
        for (const auto& kv : c) copy[kv.first.Scalar()] = kv.second;
    if (path.empty()) return copy;
    const auto dot = path.find('.');
    const std::string head = path.substr(0, dot);
    const YAML::Node& cc = c;
    YAML::Node replaced =
        dot == std::string::npos
            ? value
            : with_field(c.IsMap() && cc[head] && cc[head].IsMap() ? cc[head] : YAML::Node(YAML::NodeType::Map),
                         path.substr(dot + 1), value, arena);
    copy.remove(head);
    copy[head] = replaced;
    return copy;
}

void set_field(YAML::Node& c, const std::string& path, const YAML::Node& value) { c.reset(with_field(c, path, value)); }

namespace {

void config_leaves(const YAML::Node& n, const std::vector<Field>& fields, const std::string& where,
                   std::vector<std::string>& out) {
    if (!n.IsMap()) return;
    for (const auto& kv : n) {
        const Field* f = kv.first.IsScalar() ? find(fields, kv.first.Scalar()) : nullptr;
        if (!f || f->info) continue;
        const std::string path = where.empty() ? f->name : where + "." + f->name;
        if (f->fields.empty()) out.push_back(path);
        else config_leaves(kv.second, f->fields, path, out);
    }
}

void all_config_leaves(const std::vector<Field>& fields, const std::string& where, std::vector<std::string>& out) {
    for (const Field& f : fields) {
        if (f.info) continue;
        const std::string path = where.empty() ? f.name : where + "." + f.name;
        if (f.fields.empty()) out.push_back(path);
        else all_config_leaves(f.fields, path, out);
    }
}

}  // namespace

std::vector<std::string> not_read_fields(const YAML::Node& c, const std::set<std::string>& read) {
    std::vector<std::string> present, out;
    config_leaves(c, case_fields(), "", present);
    for (const std::string& p : present)
        if (!read.count(p)) out.push_back(p);
    return out;
}

std::vector<std::string> configuration_fields() {
    std::vector<std::string> out;
    all_config_leaves(case_fields(), "", out);
    return out;
}

const std::vector<std::string>& serving_extension_choices(const std::string& field) {
    // moe_dispatcher: deepep_auto is SGLang's --deepep-mode auto (normal kernels for prefill
    // batches, low-latency ones for decode batches).
    static const std::vector<std::string> dispatchers = {"alltoall", "deepep", "deepep_low_latency", "deepep_auto"};
    static const std::vector<std::string> packaging = {"nim"};
    static const std::vector<std::string> speculative = {"draft", "eagle", "mtp", "ngram"};
    static const std::vector<std::string> none;
    if (field == "moe_dispatcher") return dispatchers;
    if (field == "packaging") return packaging;
    if (field == "speculative.method") return speculative;
    return none;
}

}  // namespace fathom::scenarios
