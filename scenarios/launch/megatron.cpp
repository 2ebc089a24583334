// Megatron-LM: pretrain_gpt.py's arguments under torchrun, as a shell script. Flag names are those
// of NVIDIA/Megatron-LM d98e8a64 (the megatron-lm stack preset's version). Most flags there are
// generated from config dataclasses (megatron/training/argument_utils.py:95-106: `--` + the field
// name with `-`), so a flag's citation is its field's line: A = megatron/training/arguments.py,
// MPC = megatron/core/model_parallel_config.py, TC = megatron/core/transformer/transformer_config.py,
// TRC = megatron/training/config/training_config.py.
#include "scenarios/launch/dialects.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace fathom::scenarios::launch {
namespace {

constexpr const char* kFw = "megatron";
constexpr const char* kArgs = "NVIDIA/Megatron-LM d98e8a64";

// The flags of an uneven pipeline split, {} when Megatron cannot write it ({"", ""} for an even one).
std::vector<std::pair<std::string, std::string>> split_flags(const workloads::TrainingPlan& p) {
    const auto& s = p.training.layers_per_virtual_stage;
    if (s.empty() || p.layout.pp == 1) return {{"", ""}};
    bool middle_even = true;
    for (size_t i = 2; i + 1 < s.size(); ++i) middle_even = middle_even && s[i] == s[1];
    if (!middle_even || s.size() < 3) return {};
    // Embedding and loss each counted as a layer: the first and the last piece one layer short.
    if (s.front() == s[1] - 1 && s.back() == s[1] - 1)
        return {{"--account-for-embedding-in-pipeline-split", ""}, {"--account-for-loss-in-pipeline-split", ""}};
    if (p.layout.vp == 1)
        return {{"--decoder-first-pipeline-num-layers", std::to_string(s.front())},
                {"--decoder-last-pipeline-num-layers", std::to_string(s.back())}};
    return {};
}

void check(const Job& j) {
    const auto& p = *j.training;
    const auto& t = p.training;
    if (t.zero_stage >= 2)
        cannot(j, kFw, "training.zero_stage",
               "Megatron-LM's distributed optimizer shards optimizer states (zero_stage 1); sharding gradients or "
               "parameters is Megatron FSDP's, not written here (torchtitan's FSDP2 runs zero_stage 3)");
    if (t.schedule != "1f1b" && t.schedule != "interleaved-1f1b")
        cannot(j, kFw, "training.schedule",
               "Megatron-LM runs 1f1b, or interleaved-1f1b with virtual stages; not '" + t.schedule + "'");
    if (t.schedule == "interleaved-1f1b" && p.layout.vp < 2)
        cannot(j, kFw, "parallel.vp", "interleaved-1f1b needs vp >= 2 (Megatron interleaves when vp > 1)");
    if (p.stack.pp_comm_overlap && p.layout.pp > 1 && p.layout.vp == 1)
        cannot(j, kFw, "stack.pp_comm_overlap",
               "Megatron-LM overlaps pipeline sends only with virtual stages (A:1010-1017 turn it off without vp)");
    if (p.stack.tp_comm_overlap && p.layout.tp > 1 && !p.layout.sequence_parallel)
        cannot(j, kFw, "stack.tp_comm_overlap", "--tp-comm-overlap needs --sequence-parallel (A:1441-1442)");
    if (t.lora_rank > 0) cannot(j, kFw, "training.lora_rank", "LoRA fine-tuning is NeMo's (PEFT), not Megatron-LM's");
    if (p.stack.activation_offload != workloads::ActivationOffload::None)
        cannot(j, kFw, "stack.activation_offload", "activations offloaded to SSDs have no Megatron-LM flag");
    if (t.recompute == workloads::Recompute::Selective &&
        p.stack.selective_policy != workloads::SelectivePolicy::NormsActivations)
        cannot(j, kFw, "training.recompute", "Megatron's selective recompute is its own op set, not torchtitan's");
    if (split_flags(p).empty() && !t.layers_per_virtual_stage.empty())
        cannot(j, kFw, "training.layers_per_stage",
               "Megatron-LM splits layers evenly, with the embedding and the loss counted as layers "
               "(--account-for-embedding-in-pipeline-split, --account-for-loss-in-pipeline-split), or with the "
               "first and last stage set apart (--decoder-first/last-pipeline-num-layers, without vp)");
}

void model_flags(const Job& j, CommandLine& c) {
    const models::ModelSpec& m = *j.model;
    c.flag("--num-layers", m.layers, "TC:65");
    c.flag("--hidden-size", m.hidden, "TC:145");
    c.flag("--num-attention-heads", m.heads, "TC:148");
    if (m.kv_heads != m.heads && !m.mla.enabled()) {
        c.on("--group-query-attention", "A:2382");
        c.flag("--num-query-groups", m.kv_heads, "TC:175");
    }
    if (m.head_dim > 0 && m.head_dim * m.heads != m.hidden) c.flag("--kv-channels", m.head_dim, "TC:184");
    if (m.ffn > 0) c.flag("--ffn-hidden-size", m.ffn, "TC:180");
    c.flag("--max-position-embeddings", std::max<int64_t>(m.max_seq_len, j.training->training.seq_len), "A:2394");
    if (m.activation == models::Activation::Swiglu) c.on("--swiglu", "A:2450");
    if (m.norm == models::Norm::RmsNorm) c.flag("--normalization", "RMSNorm", "TC:256");
    if (m.position == models::PositionEmbedding::Rope) c.flag("--position-embedding-type", "rope", "A:2397");
    if (!m.tied_embeddings) c.on("--untie-embeddings-and-output-weights", "A:2460");
    if (!m.bias) c.on("--disable-bias-linear", "TC:212");
    if (m.moe.enabled()) {
        c.flag("--num-experts", m.moe.num_experts, "A:3518");
        c.flag("--moe-router-topk", m.moe.top_k, "TC:760");
        c.flag("--moe-ffn-hidden-size", m.moe.expert_ffn, "TC:740");
        if (m.moe.shared_experts > 0)
            c.flag("--moe-shared-expert-intermediate-size", m.moe.shared_experts * m.moe.expert_ffn, "TC:701");
        if (m.moe.dense_layers > 0 || m.moe.layer_frequency > 1) {
            std::string pattern = "([";
            for (int64_t l = 0; l < m.layers; ++l)
                pattern += std::string(l ? "," : "") + (m.is_moe_layer(l) ? "1" : "0");
            c.flag("--moe-layer-freq", pattern, "A:3520");
        }
    }
    if (m.mla.enabled()) {
        c.on("--multi-latent-attention", "TC:288");
        if (m.mla.q_lora_rank > 0) c.flag("--q-lora-rank", m.mla.q_lora_rank, "A:3548");
        c.flag("--kv-lora-rank", m.mla.kv_lora_rank, "A:3550");
        c.flag("--qk-head-dim", m.mla.qk_nope_head_dim, "A:3552");
        c.flag("--qk-pos-emb-head-dim", m.mla.qk_rope_head_dim, "A:3554");
        c.flag("--v-head-dim", m.mla.v_head_dim, "A:3556");
    }
    c.flag("--vocab-size", m.vocab, "TRC:679");
}

void plan_flags(const Job& j, CommandLine& c) {
    const auto& p = *j.training;
    const auto& l = p.layout;
    const auto& t = p.training;
    const auto& s = p.stack;
    c.flag("--tensor-model-parallel-size", l.tp, "MPC:55");
    c.flag("--pipeline-model-parallel-size", l.pp, "MPC:83");
    if (l.vp > 1) c.flag("--num-virtual-stages-per-pipeline-rank", l.vp, "A:3116");
    if (l.cp > 1) c.flag("--context-parallel-size", l.cp, "MPC:100");
    if (l.ep > 1) c.flag("--expert-model-parallel-size", l.ep, "MPC:127");
    if (l.etp > 1 || (l.ep > 1 && l.tp > 1)) c.flag("--expert-tensor-parallel-size", l.etp, "MPC:130");
    if (l.sequence_parallel && l.tp > 1) c.on("--sequence-parallel", "MPC:94");
    for (const auto& [flag, value] : split_flags(p))
        if (!flag.empty()) c.flag(flag, value, "TC:137, TC:141, A:3095, A:3099");
    c.flag("--micro-batch-size", t.micro_batch, "TRC:11");
    c.flag("--global-batch-size", t.global_batch, "TRC:15");
    c.flag("--seq-length", t.seq_len, "A:3305");
    if (t.zero_stage == 1) c.on("--use-distributed-optimizer", "A:3156");
    if (t.recompute == workloads::Recompute::Selective) c.flag("--recompute-granularity", "selective", "TC:532");
    if (t.recompute == workloads::Recompute::Full) {
        c.flag("--recompute-granularity", "full", "TC:532");
        c.flag("--recompute-method", t.recompute_num_layers > 0 ? "block" : "uniform", "TC:543");
        c.flag("--recompute-num-layers", t.recompute_num_layers > 0 ? t.recompute_num_layers : 1, "TC:551");
    }
    std::string modules;
    if (t.recompute_moe) modules += " moe";
    if (t.recompute_mla_up_proj) modules += " mla_up_proj";
    if (!modules.empty()) {
        if (t.recompute == workloads::Recompute::None) c.flag("--recompute-granularity", "selective", "TC:532");
        c.on("--recompute-modules" + modules, "TC:560");
    }
    const hardware::Dtype dt = s.kernels.gemm_dtype;
    c.on(dt == hardware::Dtype::fp16 ? "--fp16" : "--bf16", dt == hardware::Dtype::fp16 ? "MPC:177" : "MPC:180");
    if (dt == hardware::Dtype::fp8) c.flag("--fp8-format", "hybrid", "TC:587");
    if (s.grad_dtype == workloads::GradDtype::Bf16) c.on("--grad-reduce-in-bf16", "A:3053");
    if (s.dp_comm_overlap) c.on("--overlap-grad-reduce", "A:3121");
    if (s.param_gather_overlap && s.dp_comm_overlap && t.zero_stage == 1) c.on("--overlap-param-gather", "A:3148");
    if (s.tp_comm_overlap && l.tp > 1) c.on("--tp-comm-overlap", "MPC:265");
    if (!s.pp_comm_overlap && l.vp > 1) c.on("--no-overlap-p2p-communication", "A:3118");
    if (l.cp > 1)
        c.flag("--cp-comm-type", s.cp_comm == models::CpComm::A2a         ? "a2a"
                                 : s.cp_comm == models::CpComm::AllGather ? "all_gather"
                                                                          : "p2p");
    if (l.ep > 1) {
        c.flag("--moe-token-dispatcher-type",
               s.moe_dispatcher == models::MoeDispatcher::AllToAll ? "alltoall" : "flex");
        if (s.moe_dispatcher != models::MoeDispatcher::AllToAll) c.on("--moe-enable-deepep", "TC (moe_enable_deepep)");
        if (s.ep_comm_overlap) {
            c.on("--overlap-moe-expert-parallel-comm", "MPC:343");
            c.on("--delay-wgrad-compute", "MPC:348");
        }
    }
    c.flag("--attention-backend", s.kernels.flash_attention ? "flash" : "unfused", "TC:151");
    if (s.kernels.fused_cross_entropy) c.on("--cross-entropy-loss-fusion", "TC (cross_entropy_loss_fusion)");
}

std::vector<LaunchFile> write(const Job& j) {
    check(j);
    const auto& c = *j.cluster;
    const int64_t gpus = j.training->gpus();
    const int64_t per_node = std::min<int64_t>(gpus, c.gpus_per_node);
    const int64_t nodes = (gpus + per_node - 1) / per_node;
    CommandLine cmd("torchrun --nnodes ${NNODES:-" + std::to_string(nodes) + "} --nproc-per-node " +
                    std::to_string(per_node) +
                    " --node-rank ${NODE_RANK:-0} --master-addr ${MASTER_ADDR:-localhost} --master-port "
                    "${MASTER_PORT:-6000} pretrain_gpt.py");
    model_flags(j, cmd);
    plan_flags(j, cmd);
    cmd.on("\"$@\"");
    const std::string text =
        "#!/usr/bin/env bash\n# " + j.name + " (" + j.model->name + ") on " + std::to_string(gpus) + " x " +
        c.accelerator.id + ": Megatron-LM, written by fathom export.\n" +
        "# dp = GPUs / (tp x pp x cp) is Megatron's own; run on every node with NODE_RANK set, and give the\n"
        "# data, tokenizer, checkpoint and iteration arguments (--data-path, --tokenizer-type, --save,\n"
        "# --train-iters ...) after the script's name.\n"
        "# Sources: A = megatron/training/arguments.py, MPC = megatron/core/model_parallel_config.py,\n"
        "# TC = megatron/core/transformer/transformer_config.py, TRC = megatron/training/config/training_config.py\n"
        "# (most flags are generated from these dataclasses' fields: megatron/training/argument_utils.py:95-106).\n" +
        cmd.text(kArgs);
    return {{"megatron.sh", text}};
}

YAML::Node read(const std::vector<LaunchFile>& files, const models::ModelSpec&) {
    const auto words = shell_words(files.at(0).text);
    const auto f = flag_values(words);
    auto get = [&](const std::string& k, const std::string& d) {
        const auto it = f.find(k);
        return it == f.end() ? d : it->second;
    };
    auto num = [&](const std::string& k, int64_t d) { return std::stoll(get(k, std::to_string(d))); };
    YAML::Node out;
    YAML::Node t = out["training"];
    t["framework"] = "megatron-lm";
    const int64_t tp = num("--tensor-model-parallel-size", 1), pp = num("--pipeline-model-parallel-size", 1),
                  cp = num("--context-parallel-size", 1), vp = num("--num-virtual-stages-per-pipeline-rank", 1);
    const int64_t world = num("--nnodes", 1) * num("--nproc-per-node", 1);
    t["tp"] = tp;
    t["pp"] = pp;
    t["cp"] = cp;
    t["dp"] = world / (tp * pp * cp);
    t["vp"] = vp;
    t["ep"] = num("--expert-model-parallel-size", 1);
    if (f.count("--expert-tensor-parallel-size")) t["etp"] = num("--expert-tensor-parallel-size", 1);
    // Switches that mean nothing at a degree of 1 are stated only above it (the preset's stand).
    if (tp > 1) {
        t["sequence_parallel"] = f.count("--sequence-parallel") > 0;
        t["tp_comm_overlap"] = f.count("--tp-comm-overlap") > 0;
    }
    if (pp > 1) t["pp_comm_overlap"] = vp > 1 && !f.count("--no-overlap-p2p-communication");
    t["micro_batch_size"] = num("--micro-batch-size", 1);
    t["global_batch_size"] = num("--global-batch-size", 1);
    t["zero_stage"] = f.count("--use-distributed-optimizer") ? 1 : 0;
    const std::string granularity = get("--recompute-granularity", "none");
    t["recompute"] = granularity;
    if (granularity == "full" && get("--recompute-method", "uniform") == "block")
        t["recompute_num_layers"] = num("--recompute-num-layers", 1);
    t["pp_schedule"] = vp > 1 ? "interleaved-1f1b" : "1f1b";
    t["dp_comm_overlap"] = f.count("--overlap-grad-reduce") > 0;
    if (num("--expert-model-parallel-size", 1) > 1)
        t["ep_comm_overlap"] = f.count("--overlap-moe-expert-parallel-comm") > 0;
    t["flash_attention"] = get("--attention-backend", "flash") != "unfused";
    out["precision"]["dtype"] = f.count("--fp8-format") ? "fp8" : f.count("--fp16") ? "fp16" : "bf16";
    return out;
}

}  // namespace

Dialect megatron_dialect() { return {"training", write, read}; }

}  // namespace fathom::scenarios::launch
