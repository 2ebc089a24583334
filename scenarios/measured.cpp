#include "scenarios/measured.h"

#include "scenarios/catalog.h"
#include "scenarios/measured_case.h"
#include "scenarios/measured_schema.h"
#include "scenarios/source_supplement.h"
#include "scenarios/yaml_node.h"
#include "sim/error.h"

#include <algorithm>
#include <cmath>

namespace fathom::scenarios {
namespace detail {

std::string opt_str(const YAML::Node& n, const char* key, const std::string& fallback) {
    return n && n[key] ? n[key].as<std::string>() : fallback;
}
bool has(const YAML::Node& n, const char* key) { return n && n[key]; }

namespace {

// `section[key]` as an integer from `lo` to 2^31 - 1 (BadCase otherwise, at its line).
int int_from(const YAML::Node& section, const std::string& where, const char* key, long long lo) {
    const YAML::Node n = section[key];
    const int line = n ? n.Mark().line + 1 : section.Mark().line + 1;
    long long v = 0;
    try {
        v = n.as<long long>();
    } catch (const YAML::Exception&) {
        throw BadCase{where + "." + key,
                      lo == 1 ? "expected a positive integer" : "expected an integer >= " + std::to_string(lo), line};
    }
    if (v < lo || v > 2147483647LL)
        throw BadCase{where + "." + key,
                      "must be an integer from " + std::to_string(lo) + " to 2147483647, got " + std::to_string(v),
                      line};
    return static_cast<int>(v);
}

}  // namespace

int positive_int(const YAML::Node& section, const std::string& where, const char* key) {
    return int_from(section, where, key, 1);
}

std::string choice(const YAML::Node& section, const std::string& where, const char* key,
                   std::initializer_list<const char*> allowed, const std::string& fallback) {
    if (!has(section, key)) return fallback;
    const YAML::Node n = section[key];
    const std::string v = n.IsScalar() ? n.Scalar() : std::string();
    std::string all;
    for (const char* a : allowed) {
        if (v == a) return v;
        all += std::string(all.empty() ? "" : ", ") + a;
    }
    throw BadCase{where.empty() ? key : where + "." + key, "expected one of " + all + ", got '" + v + "'",
                  n.Mark().line + 1};
}

int nonnegative_int(const YAML::Node& section, const std::string& where, const char* key) {
    return int_from(section, where, key, 0);
}

// The NIC of a case: named by the fabric id where it fixes the generation; otherwise the
// 200 Gb/s generation when the case gives <= 25 GB/s per GPU, or gives nothing on an A100 (the
// A100 generation's NIC), else the 400 Gb/s generation; RoCE or InfiniBand by the fabric id.
std::string choose_nic(const YAML::Node& so, const std::string& accel, double per_gpu) {
    const std::string fabric = opt_str(so, "fabric");
    if (fabric == "infiniband-hdr") return "ib-hdr-200g";
    if (fabric == "infiniband-ndr" || fabric == "infiniband-xdr") return "ib-ndr-400g";
    const bool gen200 = per_gpu > 0 ? per_gpu <= 25 : accel.rfind("a100", 0) == 0;
    if (fabric == "roce") return gen200 ? "roce-200g" : "roce-400g";
    return gen200 ? "ib-hdr-200g" : "ib-ndr-400g";
}

std::string case_accelerator(const YAML::Node& hw, const plans::Catalog& cat, CompareResult& out) {
    std::string accel = hw["accelerator"].as<std::string>();
    if (accel == "h100-unspecified") {
        accel = "h100-sxm-80gb";
        out.assumptions.push_back("H100 form factor not stated: SXM 80GB");
    }
    if (!cat.accelerators().count(accel)) throw Unsupported{"accelerator '" + accel + "' is not in the catalog"};
    return accel;
}

namespace {

// Standard vocabularies by model family, matched on the lower-cased model name (first match wins;
// sources: each family's released tokenizer config): Llama 3 128256 (meta-llama/Llama-3.1-8B
// config.json), Llama 2 and Mixtral 32000 (meta-llama/Llama-2-7b-hf, mistralai/Mixtral-8x7B-v0.1),
// Qwen3 151936 (Qwen/Qwen3-8B), DeepSeek-V3 129280 and V2 102400 (deepseek-ai config.json),
// Nemotron-4 256000 (Parmar et al. 2024, arXiv:2402.16819), GPT-3 and Megatron GPT 51200 (GPT-2 BPE
// 50257 padded to a multiple of 1024 by Megatron's --make-vocab-size-divisible-by), MPT 50432
// (mosaicml/mpt-7b config.json).
struct VocabFamily {
    const char* key;
    int64_t vocab;
};
constexpr VocabFamily kVocabFamilies[] = {
    {"llama 3", 128256},  {"llama-3", 128256}, {"llama3", 128256}, {"llama 2", 32000},      {"llama-2", 32000},
    {"llama2", 32000},    {"mixtral", 32000},  {"qwen3", 151936},  {"deepseek-v3", 129280}, {"deepseek-v2", 102400},
    {"nemotron", 256000}, {"gpt-3", 51200},    {"gpt3", 51200},    {"megatron", 51200},     {"mpt", 50432},
};

}  // namespace

models::ModelSpec case_model(const YAML::Node& m, std::vector<std::string>& assumptions) {
    const std::string arch = opt_str(m, "architecture");
    if (arch != "dense" && arch != "moe") throw Unsupported{"architecture '" + arch + "' is not simulated"};
    models::ModelSpec s;
    s.id = "case";
    s.name = opt_str(m, "name");
    s.layers = positive_int(m, "model", "layers");
    s.hidden = positive_int(m, "model", "hidden");
    s.heads = positive_int(m, "model", "heads");
    s.kv_heads = positive_int(m, "model", "kv_heads");
    if (has(m, "head_dim")) s.head_dim = positive_int(m, "model", "head_dim");
    if (has(m, "ffn")) s.ffn = nonnegative_int(m, "model", "ffn");
    if (has(m, "vocab")) {
        s.vocab = positive_int(m, "model", "vocab");
    } else {
        std::string name = s.name;
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        for (const auto& f : kVocabFamilies)
            if (name.find(f.key) != std::string::npos) {
                s.vocab = f.vocab;
                break;
            }
        if (s.vocab == 0) throw Unsupported{"no vocabulary, and '" + s.name + "' is not a family with a known one"};
        assumptions.push_back("vocab = " + std::to_string(s.vocab) + " (the family's standard; the case gives none)");
    }
    if (arch == "moe") {
        const YAML::Node e = m["moe"];
        s.moe.num_experts = positive_int(e, "model.moe", "num_experts");
        s.moe.top_k = positive_int(e, "model.moe", "top_k");
        s.moe.expert_ffn = positive_int(e, "model.moe", "expert_ffn");
        if (has(e, "shared_experts")) s.moe.shared_experts = nonnegative_int(e, "model.moe", "shared_experts");
        if (has(e, "dense_layers")) s.moe.dense_layers = nonnegative_int(e, "model.moe", "dense_layers");
        if (has(e, "moe_layer_frequency")) s.moe.layer_frequency = positive_int(e, "model.moe", "moe_layer_frequency");
    }
    if (has(m, "mla")) {
        const YAML::Node a = m["mla"];
        if (has(a, "q_lora_rank")) s.mla.q_lora_rank = nonnegative_int(a, "model.mla", "q_lora_rank");
        s.mla.kv_lora_rank = positive_int(a, "model.mla", "kv_lora_rank");
        s.mla.qk_nope_head_dim = positive_int(a, "model.mla", "qk_nope_head_dim");
        s.mla.qk_rope_head_dim = positive_int(a, "model.mla", "qk_rope_head_dim");
        s.mla.v_head_dim = positive_int(a, "model.mla", "v_head_dim");
        s.kv_heads = s.heads;  // the latent expands into one key/value head per head
    }
    if (s.ffn == 0 && s.moe_layers() < s.layers) throw Unsupported{"dense layers without an MLP width (ffn)"};
    const std::string act =
        choice(m, "model", "activation", {"gelu", "relu", "squared_relu", "swiglu", "geglu"}, "gelu");
    s.activation = act == "swiglu"         ? models::Activation::Swiglu
                   : act == "geglu"        ? models::Activation::Geglu
                   : act == "squared_relu" ? models::Activation::SquaredRelu
                   : act == "relu"         ? models::Activation::Relu
                                           : models::Activation::Gelu;
    s.norm = choice(m, "model", "norm", {"layernorm", "rmsnorm"}, "layernorm") == "rmsnorm" ? models::Norm::RmsNorm
                                                                                            : models::Norm::LayerNorm;
    const std::string pos = choice(m, "model", "position_embedding", {"rope", "alibi", "learned", "none"}, "rope");
    s.position = pos == "learned" ? models::PositionEmbedding::Learned
                 : pos == "alibi" ? models::PositionEmbedding::Alibi
                 : pos == "none"  ? models::PositionEmbedding::None
                                  : models::PositionEmbedding::Rope;
    if (has(m, "tied_embeddings")) s.tied_embeddings = m["tied_embeddings"].as<bool>();
    if (has(m, "max_seq_len")) s.max_seq_len = positive_int(m, "model", "max_seq_len");
    return s;
}

}  // namespace detail

namespace {

using namespace detail;

CompareResult run_case(const YAML::Node& c, const plans::EvaluationContext& ctx) {
    CompareResult out;
    out.id = c["id"].as<std::string>();
    out.kind = c["kind"].as<std::string>();
    out.metric = c["metric"].as<std::string>();
    out.unit = opt_str(c, "unit");
    out.measured = c["value"].as<double>();
    if (!(out.measured > 0) || !std::isfinite(out.measured))
        throw BadCase{"value", "the measurement must be a positive finite number", c["value"].Mark().line + 1};
    out.status = "unsupported";
    try {
        if (out.kind == "serving") return predict_serving_case(c, ctx, out);
        if (out.kind == "microbench") {
            out = predict_microbench_case(c, ctx, out);
            out.error = (out.predicted - out.measured) / out.measured;
            out.status = "ok";
            return out;
        }
        if (out.kind != "training") throw Unsupported{out.kind + " cases are not simulated yet"};
        out = predict_training_case(c, ctx, out);
        out.status = "ok";
    } catch (const Unsupported& u) {
        out.reason = u.reason;
    } catch (const YAML::Exception& e) {
        out.reason = "missing or malformed field: " + e.msg;
    } catch (const sim::InputError& e) {
        out.reason = e.what();
    }
    return out;
}

}  // namespace

namespace {

// The case with one other_metrics entry as its headline and the entry's variant applied; the
// fields it derives are added to `derived` as assumptions.
YAML::Node variant_case(const YAML::Node& c, const YAML::Node& entry, std::string& described,
                        std::vector<std::string>& derived) {
    YAML::Node v = YAML::Clone(c);
    for (const char* q : {"metric", "value", "unit", "statistic", "scope", "flops_convention", "attention_flops",
                          "peak_tflops", "direction", "link"}) {
        if (entry[q]) v[q] = YAML::Clone(entry[q]);
        else v.remove(q);
    }
    bool gpus_changed = false, dp_set = false, nodes_set = false, batch_set = false;
    if (entry["variant"]) {
        for (const auto& kv : entry["variant"]) {
            // A configuration field's path (check_case_fields refused any other), nested or not.
            const std::string path = kv.first.as<std::string>();
            described += (described.empty() ? "" : ", ") + path + "=" + kv.second.as<std::string>();
            set_field(v, path, kv.second);
            gpus_changed = gpus_changed || path == "cluster.gpus" || path == "training.cp";
            dp_set = dp_set || path == "training.dp";
            batch_set = batch_set || path == "training.global_batch_size";
            nodes_set = nodes_set || path == "cluster.nodes";
        }
    }
    if (gpus_changed && v["training"]) {
        // measured-format section 13: dp = gpus / (tp x pp x cp) follows unless the variant sets it.
        const int gpus = v["cluster"]["gpus"].as<int>();
        const int tp = v["training"]["tp"].as<int>(), pp = v["training"]["pp"].as<int>();
        const int cp = v["training"]["cp"] ? v["training"]["cp"].as<int>() : 1;
        if (!dp_set && tp * pp * cp > 0 && gpus % (tp * pp * cp) == 0) v["training"]["dp"] = gpus / (tp * pp * cp);
        // The global batch follows the data-parallel degree where the source fixes the batch per
        // rank (batch_per_dp_rank; or micro-batch x accumulation steps); otherwise it stays.
        const YAML::Node t = v["training"];
        if (!batch_set && t["dp"]) {
            const long long dp = t["dp"].as<long long>();
            long long per_rank = 0;
            std::string how;
            if (t["batch_per_dp_rank"]) per_rank = t["batch_per_dp_rank"].as<long long>(), how = "batch_per_dp_rank";
            else if (t["micro_batch_size"] && t["grad_accum"])
                per_rank = t["micro_batch_size"].as<long long>() * t["grad_accum"].as<long long>(),
                how = "micro_batch_size x grad_accum";
            if (per_rank > 0 && dp * per_rank <= 2147483647LL &&
                t["global_batch_size"].as<long long>() != dp * per_rank) {
                v["training"]["global_batch_size"] = dp * per_rank;
                derived.push_back("variant: global batch " + std::to_string(dp * per_rank) + " = dp " +
                                  std::to_string(dp) + " x " + how + " " + std::to_string(per_rank));
            }
        }
        const int per_node = v["cluster"]["gpus_per_node"].as<int>();
        if (!nodes_set && per_node > 0 && gpus % per_node == 0) v["cluster"]["nodes"] = std::max(1, gpus / per_node);
    }
    return v;
}

}  // namespace

plans::Record compare_record(const CompareResult& r) {
    plans::Record j;
    j.add("id", r.id);
    j.add("kind", r.kind);
    j.add("metric", r.metric);
    j.add("unit", r.unit);
    j.add("measured", r.measured);
    if (!r.variant.empty()) j.add("variant", r.variant);
    if (r.status != "ok") {
        j.add("status", std::string("unsupported"));
        j.add("reason", r.reason);
        return j;
    }
    j.add("status", std::string("ok"));
    j.add("predicted", r.predicted);
    j.add("error", r.error);
    j.add("step_time_s", r.step_time_s);
    j.add("peak_memory_bytes", r.peak_memory_bytes);
    j.add("memory_capacity_bytes", r.memory_capacity_bytes);
    j.add("out_of_memory", r.out_of_memory);
    j.add("assumptions", r.assumptions);
    j.add("stack", r.stack);
    if (!r.plan.empty()) j.add("plan", r.plan);
    if (!r.range_key.empty()) {
        j.add("range.key", r.range_key);
        j.add("range.low", r.range_low);
        j.add("range.high", r.range_high);
    }
    return j;
}

std::vector<CompareResult> compare_measured(const std::string& path, const plans::EvaluationContext& ctx,
                                            bool include_other_metrics, const std::string& only_case,
                                            const std::function<void(int64_t, int64_t)>& progress) {
    const Node root = load_yaml_file(path);
    root.allow_only({"format_version", "cases"});
    if (root.integer("format_version") != 1) root.fail("format_version", "only format_version 1 is supported");
    std::vector<CompareResult> out;
    const auto supplements = load_source_supplements(data_dir() + "/scenarios/sources");
    const auto items = root.child("cases").items();
    int64_t done = 0;
    for (const auto& item : items) {
        if (progress) progress(done, static_cast<int64_t>(items.size()));
        ++done;
        const YAML::Node& raw = item.raw();
        if (!raw.IsMap() || !raw["id"] || !raw["kind"] || !raw["metric"] || !raw["value"])
            item.fail("", "a case needs id, kind, metric and value");
        if (!only_case.empty() && (!raw["id"].IsScalar() || raw["id"].Scalar() != only_case)) continue;
        check_case_fields(raw, path);
        // What the source states outside its table (scenarios/sources/) fills the case first.
        std::vector<std::string> supplied;
        const YAML::Node c = supplement_case(raw, supplements, supplied);
        // `entry`: the other_metrics entry whose variant `which` applies (null for the case itself).
        // The case ran before its variants, so a bad value in a variant run is the variant's: the
        // error names the entry's line (the variant's values are copies without a line of their own).
        auto run = [&](const YAML::Node& which, const YAML::Node* entry = nullptr) {
            try {
                return run_case(which, ctx);
            } catch (const BadCase& b) {
                if (!entry) throw sim::InputError(b.message, path, b.line, b.key);
                throw sim::InputError(b.message + " (under this entry's variant)", path, entry->Mark().line + 1, b.key);
            }
        };
        // A value of the wrong shape deep in a case (a mapping where a number goes) surfaces as
        // yaml-cpp's conversion error: an input error at the value's line (a fuzzer found these
        // ending as internal errors).
        try {
            out.push_back(run(c));
            out.back().assumptions.insert(out.back().assumptions.begin(), supplied.begin(), supplied.end());
            if (!include_other_metrics || !c["other_metrics"]) continue;
            int n = 0;
            const std::string case_id = out.back().id;
            for (const auto& entry : c["other_metrics"]) {
                ++n;
                std::string described;
                std::vector<std::string> derived;
                // The variant's own run of the source (a variant may change the model).
                std::vector<std::string> variant_supplied;
                const YAML::Node v =
                    supplement_case(variant_case(raw, entry, described, derived), supplements, variant_supplied);
                CompareResult r = run(v, &entry);
                r.assumptions.insert(r.assumptions.begin(), derived.begin(), derived.end());
                r.assumptions.insert(r.assumptions.begin(), variant_supplied.begin(), variant_supplied.end());
                r.id = case_id + "#" + std::to_string(n);
                r.variant = described;
                out.push_back(std::move(r));
            }
        } catch (const YAML::Exception& e) {
            throw sim::InputError("a value of the wrong type (" + e.msg + ")", path, e.mark.line + 1);
        }
    }
    if (!only_case.empty() && out.empty()) throw sim::InputError("no case with id '" + only_case + "'", path);
    return out;
}

}  // namespace fathom::scenarios
