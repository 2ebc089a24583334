// NeMo 24.07 (Megatron-Core): NeMo's GPT pretraining script with Hydra overrides, as the
// NeMo-Framework-Launcher 24.07 (8325688d) recipes set them. Keys of NVIDIA/NeMo r2.0.0rc1 (the
// 24.07 container's NeMo; an assumption, the launcher pins no commit): NC =
// examples/nlp/language_modeling/conf/megatron_gpt_config.yaml, BM and GM = megatron_base_model.py
// and megatron_gpt_model.py of nemo/collections/nlp/models/language_modeling/. Every override is
// written `++key=value` (Hydra: set, adding the key where the base config lacks it). NeMo's
// virtual_pipeline_model_parallel_size is model chunks per pipeline rank (BM:172-189), fathom's vp.
#include "scenarios/launch/dialects.h"

#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fathom::scenarios::launch {
namespace {

constexpr const char* kFw = "nemo";
constexpr const char* kSources = "NVIDIA/NeMo r2.0.0rc1 (NeMo 24.07): NC = megatron_gpt_config.yaml, BM, GM";

void check(const Job& j) {
    const auto& p = *j.training;
    const auto& t = p.training;
    const auto& m = *j.model;
    if (t.zero_stage >= 2)
        cannot(j, kFw, "training.zero_stage",
               "NeMo's distributed optimizer shards optimizer states only (zero_stage 1)");
    if (t.schedule != "1f1b" && t.schedule != "interleaved-1f1b")
        cannot(j, kFw, "training.schedule",
               "NeMo 24.07 runs Megatron-Core's 1f1b or interleaved-1f1b, not '" + t.schedule + "'");
    if (p.layout.etp != 1 && p.layout.ep > 1)
        cannot(j, kFw, "parallel.etp", "NeMo 24.07 has no expert tensor parallelism");
    if (m.mla.enabled()) cannot(j, kFw, "model.mla", "NeMo 24.07 has no latent attention (MLA)");
    if (m.moe.enabled() &&
        (m.moe.shared_experts > 0 || m.moe.dense_layers > 0 || m.moe.layer_frequency > 1 || m.moe.expert_ffn != m.ffn))
        cannot(j, kFw, "model.moe",
               "NeMo 24.07's MoE keys give experts of the dense FFN's width in every layer (no shared experts, "
               "dense layers or expert width of their own)");
    if (t.lora_rank > 0)
        cannot(j, kFw, "training.lora_rank", "LoRA runs NeMo's fine-tuning script (PEFT), not exported yet");
    if (!t.layers_per_virtual_stage.empty())
        cannot(j, kFw, "training.layers_per_stage", "NeMo 24.07 splits the layers evenly over the pipeline");
    if (p.stack.pp_comm_overlap && p.layout.pp > 1 && p.layout.vp == 1)
        cannot(j, kFw, "stack.pp_comm_overlap", "Megatron-Core overlaps pipeline sends only with virtual stages");
    if (p.stack.tp_comm_overlap && p.layout.tp > 1 && !p.layout.sequence_parallel)
        cannot(j, kFw, "stack.tp_comm_overlap", "ub_tp_comm_overlap needs sequence parallelism (BM:998-1006)");
    if (t.recompute_moe || t.recompute_mla_up_proj)
        cannot(j, kFw, "training.recompute_moe", "NeMo 24.07 has no module-level recompute");
    if (p.stack.activation_offload != workloads::ActivationOffload::None)
        cannot(j, kFw, "stack.activation_offload", "NeMo does not offload activations to SSDs");
}

// One override a line, each with where its key is defined.
class Overrides {
public:
    void set(const std::string& key, const std::string& value, const char* cite) {
        lines_ += "    ++" + key + "=" + value + " \\\n";
        cites_ += "#   " + key + "  " + cite + "\n";
    }
    void set(const std::string& key, int64_t value, const char* cite) { set(key, std::to_string(value), cite); }
    void set_bool(const std::string& key, bool value, const char* cite) {
        set(key, std::string(value ? "True" : "False"), cite);
    }
    const std::string& lines() const { return lines_; }
    const std::string& cites() const { return cites_; }

private:
    std::string lines_, cites_;
};

void model_overrides(const Job& j, Overrides& o) {
    const models::ModelSpec& m = *j.model;
    o.set("model.num_layers", int64_t{m.layers}, "NC:88");
    o.set("model.hidden_size", int64_t{m.hidden}, "NC:89");
    o.set("model.ffn_hidden_size", int64_t{m.ffn}, "NC:90");
    o.set("model.num_attention_heads", int64_t{m.heads}, "NC:91");
    if (m.kv_heads != m.heads) o.set("model.num_query_groups", int64_t{m.kv_heads}, "NC:119");
    if (m.head_dim > 0 && m.head_dim * m.heads != m.hidden) o.set("model.kv_channels", int64_t{m.head_dim}, "NC:97");
    o.set("model.max_position_embeddings", std::max<int64_t>(m.max_seq_len, j.training->training.seq_len), "NC:87");
    o.set("model.activation",
          std::string(m.activation == models::Activation::Swiglu  ? "fast-swiglu"
                      : m.activation == models::Activation::Geglu ? "fast-geglu"
                                                                  : "gelu"),
          "NC:107");
    o.set("model.normalization", std::string(m.norm == models::Norm::RmsNorm ? "rmsnorm" : "layernorm"), "NC:99");
    o.set_bool("model.bias", m.bias, "NC:106");
    o.set("model.position_embedding_type",
          std::string(m.position == models::PositionEmbedding::Rope ? "rope" : "learned_absolute"), "NC:112");
    o.set_bool("model.share_embeddings_and_output_weights", m.tied_embeddings, "NC:115");
    if (m.moe.enabled()) {
        o.set("model.num_moe_experts", int64_t{m.moe.num_experts}, "GM:2082");
        o.set("model.moe_router_topk", int64_t{m.moe.top_k}, "GM:2084");
    }
}

void plan_overrides(const Job& j, Overrides& o) {
    const auto& p = *j.training;
    const auto& l = p.layout;
    const auto& t = p.training;
    const auto& s = p.stack;
    const int64_t per_node = std::min<int64_t>(p.gpus(), j.cluster->gpus_per_node);
    o.set("trainer.num_nodes", (p.gpus() + per_node - 1) / per_node, "NC:9");
    o.set("trainer.devices", per_node, "NC:8");
    const hardware::Dtype dt = s.kernels.gemm_dtype;
    o.set("trainer.precision", std::string(dt == hardware::Dtype::fp16 ? "16" : "bf16"), "NC:11");
    o.set_bool("model.megatron_amp_O2", true, "NC:146, GM:316-320");
    o.set("model.tensor_model_parallel_size", int64_t{l.tp}, "NC:80");
    o.set("model.pipeline_model_parallel_size", int64_t{l.pp}, "NC:81");
    if (l.vp > 1) o.set("model.virtual_pipeline_model_parallel_size", int64_t{l.vp}, "NC:82");
    o.set("model.context_parallel_size", int64_t{l.cp}, "BM:192");
    if (l.ep > 1) o.set("model.expert_model_parallel_size", int64_t{l.ep}, "NC:83");
    o.set_bool("model.sequence_parallel", l.sequence_parallel && l.tp > 1, "NC:218");
    o.set("model.micro_batch_size", int64_t{t.micro_batch}, "NC:77");
    o.set("model.global_batch_size", int64_t{t.global_batch}, "NC:78");
    o.set("model.encoder_seq_length", t.seq_len, "NC:86");
    o.set("model.data.seq_length", t.seq_len, "NC:276");
    if (t.recompute != workloads::Recompute::None) {
        const bool full = t.recompute == workloads::Recompute::Full;
        o.set("model.activations_checkpoint_granularity", std::string(full ? "full" : "selective"), "NC:192");
        if (full) {
            o.set("model.activations_checkpoint_method", std::string(t.recompute_num_layers > 0 ? "block" : "uniform"),
                  "NC:193");
            o.set("model.activations_checkpoint_num_layers",
                  int64_t{t.recompute_num_layers > 0 ? t.recompute_num_layers : 1}, "NC:197");
        }
    }
    o.set("model.optim.name",
          std::string(t.zero_stage == 1 ? (l.ep > 1 ? "mcore_distributed_optim" : "distributed_fused_adam")
                                        : "fused_adam"),
          "BM:142-143, GM:322-326");
    if (t.zero_stage == 1) {
        o.set_bool("model.optim.overlap_grad_sync", s.dp_comm_overlap, "launcher llama3_70b.yaml:156");
        o.set_bool("model.optim.overlap_param_sync", s.param_gather_overlap && s.dp_comm_overlap,
                   "launcher llama3_70b.yaml:157");
    }
    if (s.grad_dtype == workloads::GradDtype::Bf16) o.set("model.optim.grad_sync_dtype", std::string("bf16"), "GM:534");
    if (l.tp > 1) o.set_bool("model.ub_tp_comm_overlap", s.tp_comm_overlap, "NC:231, BM:1168");
    if (l.vp > 1) o.set_bool("model.overlap_p2p_comm", s.pp_comm_overlap, "NC:116");
    o.set_bool("model.transformer_engine", true, "GM:2066");
    if (dt == hardware::Dtype::fp8) {
        o.set_bool("model.fp8", true, "NC:222");
        o.set_bool("model.fp8_hybrid", true, "NC:224");
    }
}

std::vector<LaunchFile> write(const Job& j) {
    check(j);
    Overrides o;
    model_overrides(j, o);
    plan_overrides(j, o);
    std::string text =
        "#!/usr/bin/env bash\n# " + j.name + " (" + j.model->name + ") on " + std::to_string(j.training->gpus()) +
        " x " + j.cluster->accelerator.id +
        ": NeMo 24.07, written by fathom export.\n"
        "# In the NeMo container, on every node (srun or the launcher sets the ranks); add the data\n"
        "# and tokenizer (model.data.data_prefix, model.tokenizer.*) and trainer.max_steps after it.\n"
        "# The same overrides go to NeMo-Framework-Launcher as training.<key> (launcher_scripts/main.py).\n"
        "# Where each key is defined (" +
        std::string(kSources) + "):\n" + o.cites() +
        "python3 /opt/NeMo/examples/nlp/language_modeling/megatron_gpt_pretraining.py \\\n" + o.lines() +
        "    \"$@\"\n";
    return {{"nemo.sh", text}};
}

YAML::Node read(const std::vector<LaunchFile>& files, const models::ModelSpec&) {
    std::map<std::string, std::string> v;
    for (const std::string& w : shell_words(files.at(0).text)) {
        const size_t eq = w.find('=');
        if (w.rfind("++", 0) == 0 && eq != std::string::npos) v[w.substr(2, eq - 2)] = w.substr(eq + 1);
    }
    auto get = [&](const std::string& k, const std::string& d) { return v.count(k) ? v.at(k) : d; };
    auto num = [&](const std::string& k, int64_t d) { return std::stoll(get(k, std::to_string(d))); };
    auto yes = [&](const std::string& k) { return get(k, "False") == "True"; };
    YAML::Node out;
    YAML::Node t = out["training"];
    t["framework"] = "nemo";
    const int64_t tp = num("model.tensor_model_parallel_size", 1), pp = num("model.pipeline_model_parallel_size", 1),
                  cp = num("model.context_parallel_size", 1), vp = num("model.virtual_pipeline_model_parallel_size", 1);
    t["tp"] = tp;
    t["pp"] = pp;
    t["cp"] = cp;
    t["vp"] = vp;
    t["dp"] = num("trainer.num_nodes", 1) * num("trainer.devices", 1) / (tp * pp * cp);
    t["ep"] = num("model.expert_model_parallel_size", 1);
    if (tp > 1) {
        t["sequence_parallel"] = yes("model.sequence_parallel");
        t["tp_comm_overlap"] = yes("model.ub_tp_comm_overlap");
    }
    if (pp > 1) t["pp_comm_overlap"] = vp > 1 && yes("model.overlap_p2p_comm");
    t["micro_batch_size"] = num("model.micro_batch_size", 1);
    t["global_batch_size"] = num("model.global_batch_size", 1);
    const std::string optim = get("model.optim.name", "fused_adam");
    t["zero_stage"] = optim == "fused_adam" ? 0 : 1;
    if (optim != "fused_adam") t["dp_comm_overlap"] = yes("model.optim.overlap_grad_sync");
    const std::string granularity = get("model.activations_checkpoint_granularity", "none");
    t["recompute"] = granularity;
    if (granularity == "full" && get("model.activations_checkpoint_method", "uniform") == "block")
        t["recompute_num_layers"] = num("model.activations_checkpoint_num_layers", 1);
    t["pp_schedule"] = vp > 1 ? "interleaved-1f1b" : "1f1b";
    out["precision"]["dtype"] = yes("model.fp8") ? "fp8" : get("trainer.precision", "bf16") == "16" ? "fp16" : "bf16";
    return out;
}

}  // namespace

Dialect nemo_dialect() { return {"training", write, read}; }

}  // namespace fathom::scenarios::launch
