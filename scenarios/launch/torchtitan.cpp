// torchtitan: a job TOML for `torchrun ... -m torchtitan.train --job.config_file FILE` (run_train.sh).
// Sections and keys are those of pytorch/torchtitan v0.2.2 (73a0e697, the torchtitan stack preset's
// version), J = torchtitan/config/job_config.py; unknown keys are refused by its ConfigManager, so
// only keys of that file are written. Models are torchtitan's own definitions, by name and flavor.
#include "scenarios/launch/dialects.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace fathom::scenarios::launch {
namespace {

constexpr const char* kFw = "torchtitan";

struct Flavor {
    const char* model_id;                    // fathom's catalog id
    int64_t layers, hidden, heads, experts;  // to know a model stated inline (a measured case's)
    const char* name;                        // [model] name
    const char* flavor;                      // [model] flavor
    const char* cite;                        // where torchtitan defines it
};
constexpr Flavor kFlavors[] = {
    {"llama3-8b", 32, 4096, 32, 0, "llama3", "8B", "torchtitan/models/llama3/__init__.py:51"},
    {"llama3-70b", 80, 8192, 64, 0, "llama3", "70B", "torchtitan/models/llama3/__init__.py:82"},
    {"llama3.1-405b", 126, 16384, 128, 0, "llama3", "405B", "torchtitan/models/llama3/__init__.py:91"},
    {"llama4-maverick", 48, 5120, 40, 128, "llama4", "17bx128e", "torchtitan/models/llama4/__init__.py:51"},
    {"deepseek-v2-lite", 27, 2048, 16, 64, "deepseek_v3", "16B", "torchtitan/models/deepseek_v3/__init__.py:78"},
    {"deepseek-v2", 60, 5120, 128, 160, "deepseek_v3", "236B", "torchtitan/models/deepseek_v3/__init__.py:103"},
    {"deepseek-v3", 61, 7168, 128, 256, "deepseek_v3", "671B", "torchtitan/models/deepseek_v3/__init__.py:130"},
    {"qwen3-8b", 36, 4096, 32, 0, "qwen3", "8B", "torchtitan/models/qwen3/__init__.py:85"},
    {"qwen3-30b-a3b", 48, 2048, 32, 128, "qwen3", "30B-A3B", "torchtitan/models/qwen3/__init__.py:145"},
    {"qwen3-235b-a22b", 94, 4096, 64, 128, "qwen3", "235B-A22B", "torchtitan/models/qwen3/__init__.py:168"},
};

// fathom's schedules torchtitan runs (PyTorch's schedule classes, J:396).
constexpr std::pair<const char*, const char*> kSchedules[] = {
    {"1f1b", "1F1B"},          {"interleaved-1f1b", "Interleaved1F1B"},
    {"gpipe", "GPipe"},        {"breadth-first", "LoopedBFS"},
    {"zb-v", "ZBVZeroBubble"},
};

const Flavor& flavor_of(const Job& j) {
    const models::ModelSpec& m = *j.model;
    for (const Flavor& f : kFlavors)
        if (m.id == f.model_id ||
            (m.layers == f.layers && m.hidden == f.hidden && m.heads == f.heads && m.moe.num_experts == f.experts))
            return f;
    std::string known;
    for (const Flavor& f : kFlavors) known += std::string(known.empty() ? "" : ", ") + f.model_id;
    cannot(j, kFw, "model", "torchtitan v0.2.2 defines the models " + known + ", not '" + m.name + "'");
}

const char* schedule_of(const Job& j) {
    for (const auto& [ours, theirs] : kSchedules)
        if (j.training->training.schedule == ours) return theirs;
    cannot(j, kFw, "training.schedule",
           "torchtitan runs 1f1b, interleaved-1f1b, gpipe, breadth-first (LoopedBFS) and zb-v (ZBVZeroBubble); not '" +
               j.training->training.schedule + "'");
}

void check(const Job& j) {
    const auto& p = *j.training;
    const auto& t = p.training;
    const auto& s = p.stack;
    if (t.zero_stage == 1)
        cannot(j, kFw, "training.zero_stage",
               "torchtitan shards with FSDP2: parameters, gradients and optimizer states (zero_stage 3), or "
               "gradients and optimizer states with parameters kept gathered (zero_stage 2); nothing shards only "
               "the optimizer");
    if (s.kernels.gemm_dtype == hardware::Dtype::fp16)
        cannot(j, kFw, "stack.dtype", "torchtitan trains in bf16 (mixed precision) or fp8 (float8 converter)");
    if (s.grad_dtype == workloads::GradDtype::Bf16)
        cannot(j, kFw, "stack.grad_dtype", "torchtitan reduces gradients in float32 only (J:290)");
    if (p.layout.tp > 1 && !p.layout.sequence_parallel)
        cannot(j, kFw, "parallel.sequence_parallel", "torchtitan's tensor parallelism shards the norms by sequence");
    if (p.layout.etp != 1 && p.layout.etp != p.layout.tp)
        cannot(j, kFw, "parallel.etp", "torchtitan's expert tensor parallelism is 1 or the tensor-parallel degree");
    if (p.layout.cp > 1 && s.cp_comm == models::CpComm::A2a)
        cannot(j, kFw, "stack.cp_comm",
               "torchtitan's context parallelism rotates K/V (allgather, alltoall), no Ulysses");
    if (t.recompute == workloads::Recompute::Selective &&
        s.selective_policy != workloads::SelectivePolicy::EverySecondMatmul)
        cannot(j, kFw, "training.recompute", "torchtitan's selective recompute is op-level (save every second matmul)");
    if (t.recompute_num_layers > 0)
        cannot(j, kFw, "training.recompute_num_layers", "torchtitan recomputes every layer or none");
    if (t.recompute_moe || t.recompute_mla_up_proj)
        cannot(j, kFw, "training.recompute_moe", "torchtitan has no module-level recompute of MoE or MLA blocks");
    if (t.lora_rank > 0) cannot(j, kFw, "training.lora_rank", "torchtitan v0.2.2 has no LoRA fine-tuning");
    if (s.activation_offload != workloads::ActivationOffload::None)
        cannot(j, kFw, "stack.activation_offload", "torchtitan does not offload activations to SSDs");
}

// Layers per virtual stage, and how many fewer the first and last stage hold (torchtitan counts the
// embedding and the output as layers, J:377-389): an even split, or the embedding-and-loss one.
struct Split {
    int64_t per_stage = 0, first_less = 0, last_less = 0;
};
Split split_of(const Job& j) {
    const auto& p = *j.training;
    const int64_t pieces = int64_t{p.layout.pp} * p.layout.vp, layers = j.model->layers;
    const auto& s = p.training.layers_per_virtual_stage;
    if (s.empty() && layers % pieces == 0) return {layers / pieces, 0, 0};
    if (s.size() >= 2 && s.front() == s[1] - 1 && s.back() == s[1] - 1 &&
        std::all_of(s.begin() + 1, s.end() - 1, [&](int x) { return x == s[1]; }))
        return {s[1], 1, 1};
    cannot(j, kFw, "training.layers_per_stage",
           "torchtitan splits layers evenly, the embedding and the output counted as layers or not");
}

std::string toml_list(const std::vector<std::string>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", \"" : "\"") + v[i] + "\"";
    return s + "]";
}

std::vector<LaunchFile> write(const Job& j) {
    check(j);
    const Flavor& f = flavor_of(j);
    const auto& p = *j.training;
    const auto& l = p.layout;
    const auto& t = p.training;
    const auto& s = p.stack;
    const bool fp8 = s.kernels.gemm_dtype == hardware::Dtype::fp8;
    std::ostringstream o;
    o << "# " << j.name << " (" << j.model->name << ") on " << p.gpus() << " x " << j.cluster->accelerator.id
      << ": torchtitan, written by fathom export.\n"
      << "# Keys: pytorch/torchtitan v0.2.2 (73a0e697) torchtitan/config/job_config.py, line of each key below;\n"
      << "# the model: " << f.cite << ". Run: torchrun --nnodes N --nproc-per-node "
      << std::min<int64_t>(p.gpus(), j.cluster->gpus_per_node)
      << " -m torchtitan.train --job.config_file THIS.toml\n\n";
    o << "[model]\nname = \"" << f.name << "\"  # J:101\nflavor = \"" << f.flavor << "\"  # J:104\n";
    if (fp8) o << "converters = " << toml_list({"quantize.linear.float8"}) << "  # J:118\n";
    const int64_t local = l.pp > 1 ? t.global_batch / l.dp : t.micro_batch;
    o << "\n[training]\nlocal_batch_size = " << local << "  # J:253, per data-parallel rank\n"
      << "global_batch_size = " << t.global_batch << "  # J:256\nseq_len = " << t.seq_len << "  # J:261\n"
      << "mixed_precision_param = \"bfloat16\"  # J:282\nmixed_precision_reduce = \"float32\"  # J:290\n";
    const bool fsdp = t.zero_stage >= 2;
    o << "\n[parallelism]\ndata_parallel_replicate_degree = " << (fsdp ? 1 : l.dp) << "  # J:313\n"
      << "data_parallel_shard_degree = " << (fsdp ? l.dp : 1) << "  # J:324\n";
    if (t.zero_stage == 2) o << "fsdp_reshard_after_forward = \"never\"  # J:336\n";
    o << "tensor_parallel_degree = " << l.tp << "  # J:351\n";
    if (l.tp > 1 && s.tp_comm_overlap) o << "enable_async_tensor_parallel = true  # J:357\n";
    o << "pipeline_parallel_degree = " << l.pp << "  # J:360\n";
    if (l.pp > 1) {
        const Split sp = split_of(j);
        o << "pipeline_parallel_schedule = \"" << schedule_of(j) << "\"  # J:396\n"
          << "pipeline_parallel_microbatch_size = " << t.micro_batch << "  # J:412\n"
          << "pipeline_parallel_layers_per_stage = " << sp.per_stage << "  # J:389\n"
          << "pipeline_parallel_first_stage_less_layers = " << sp.first_less << "  # J:377\n"
          << "pipeline_parallel_last_stage_less_layers = " << sp.last_less << "  # J:383\n";
    }
    o << "context_parallel_degree = " << l.cp << "  # J:428\n";
    if (l.cp > 1)
        o << "context_parallel_rotate_method = \""
          << (s.cp_comm == models::CpComm::AllGather ? "allgather" : "alltoall") << "\"  # J:446\n";
    if (j.model->moe.enabled()) {
        o << "expert_parallel_degree = " << l.ep << "  # J:454\nexpert_tensor_parallel_degree = " << l.etp
          << "  # J:464\n";
        if (s.moe_dispatcher != models::MoeDispatcher::AllToAll)
            o << "expert_parallel_comm_backend = \"deepep\"  # J:474\n";
    }
    const char* mode = t.recompute == workloads::Recompute::Full        ? "full"
                       : t.recompute == workloads::Recompute::Selective ? "selective"
                                                                        : "none";
    o << "\n[activation_checkpoint]\nmode = \"" << mode << "\"  # J:652\n";
    if (t.recompute == workloads::Recompute::Selective) o << "selective_ac_option = \"op\"  # J:655\n";
    o << "\n[compile]\nenable = " << (s.kernels.fused_elementwise ? "true" : "false") << "  # J:722\n";
    if (fp8)
        o << "\n[quantize.linear.float8]\nenable_fsdp_float8_all_gather = " << (fsdp ? "true" : "false")
          << "  # J:732\nfilter_fqns = [\"output\"]  # J:741\n";
    return {{"torchtitan.toml", o.str()}};
}

// key = value of the TOML this dialect writes: "section.key" -> the value's text (quotes removed).
std::map<std::string, std::string> toml_values(const std::string& text) {
    std::map<std::string, std::string> out;
    std::istringstream in(text);
    std::string line, section;
    while (std::getline(in, line)) {
        const size_t hash = line.find("  #");
        if (hash != std::string::npos) line.resize(hash);
        if (line.empty() || line[0] == '#') continue;
        if (line.front() == '[') {
            section = line.substr(1, line.find(']') - 1);
            continue;
        }
        const size_t eq = line.find(" = ");
        if (eq == std::string::npos) continue;
        std::string v = line.substr(eq + 3);
        if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
        out[section + "." + line.substr(0, eq)] = v;
    }
    return out;
}

YAML::Node read(const std::vector<LaunchFile>& files, const models::ModelSpec& model) {
    const auto v = toml_values(files.at(0).text);
    auto get = [&](const std::string& k, const std::string& d) {
        const auto it = v.find(k);
        return it == v.end() ? d : it->second;
    };
    auto num = [&](const std::string& k, int64_t d) { return std::stoll(get(k, std::to_string(d))); };
    YAML::Node out;
    YAML::Node t = out["training"];
    t["framework"] = "torchtitan";
    const int64_t tp = num("parallelism.tensor_parallel_degree", 1),
                  pp = num("parallelism.pipeline_parallel_degree", 1);
    const int64_t replicate = num("parallelism.data_parallel_replicate_degree", 1),
                  shard = num("parallelism.data_parallel_shard_degree", 1);
    t["tp"] = tp;
    t["pp"] = pp;
    t["cp"] = num("parallelism.context_parallel_degree", 1);
    t["dp"] = replicate * shard;
    if (v.count("parallelism.expert_parallel_degree")) {
        t["ep"] = num("parallelism.expert_parallel_degree", 1);
        t["etp"] = num("parallelism.expert_tensor_parallel_degree", 1);
    }
    t["fsdp"] = shard > 1;
    t["zero_stage"] = shard > 1 ? (get("parallelism.fsdp_reshard_after_forward", "default") == "never" ? 2 : 3) : 0;
    const std::string schedule = get("parallelism.pipeline_parallel_schedule", "1F1B");
    for (const auto& [ours, theirs] : kSchedules)
        if (schedule == theirs && pp > 1) t["pp_schedule"] = ours;
    if (pp > 1) {
        const int64_t per = num("parallelism.pipeline_parallel_layers_per_stage", 1),
                      less = num("parallelism.pipeline_parallel_first_stage_less_layers", 1) +
                             num("parallelism.pipeline_parallel_last_stage_less_layers", 1);
        t["micro_batch_size"] = num("parallelism.pipeline_parallel_microbatch_size", 1);
        // Virtual stages: the layers (with the embedding and the output where they count) over the
        // layers a stage holds, ceil (pipeline_parallel.py:59-109), per pipeline rank.
        t["vp"] = (model.layers + less + per - 1) / per / pp;
    } else {
        t["micro_batch_size"] = num("training.local_batch_size", 1);
    }
    t["global_batch_size"] = num("training.global_batch_size", 1);
    const std::string mode = get("activation_checkpoint.mode", "selective");
    t["recompute"] = mode;
    if (tp > 1) t["tp_comm_overlap"] = get("parallelism.enable_async_tensor_parallel", "false") == "true";
    t["torch_compile"] = get("compile.enable", "false") == "true";
    out["precision"]["dtype"] = get("model.converters", "").find("float8") != std::string::npos ? "fp8" : "bf16";
    return out;
}

}  // namespace

Dialect torchtitan_dialect() { return {"training", write, read}; }

}  // namespace fathom::scenarios::launch
