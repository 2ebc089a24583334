// The blocks every kind of measured case shares, as scenario keys: the accelerator, the cluster
// (one reader for training, serving and microbenchmark cases) and the model.
#include "scenarios/measured_blocks.h"

#include <algorithm>
#include <cctype>

namespace fathom::scenarios::measured {
namespace {

// The format's scale-out fabric ids (measured-format.md section 6): the link layer each names and,
// where the id fixes the generation, its port rate per direction. RDMA without a link layer, and
// Ethernet without RDMA (no such NIC in the catalog yet), are priced as InfiniBand.
struct ScaleOutFabric {
    const char* id;
    const char* link;
    double port_gb_per_s;  // 0: the id does not fix the generation
};
constexpr ScaleOutFabric kScaleOutFabrics[] = {
    {"infiniband-hdr", "infiniband", 25},
    {"infiniband-ndr", "infiniband", 50},
    {"infiniband-xdr", "infiniband", 100},
    {"infiniband", "infiniband", 0},
    {"roce", "roce", 0},
    {"rdma", "infiniband", 0},
    {"ethernet", "infiniband", 0},
};

const ScaleOutFabric& scale_out_fabric(const Case& c) {
    const std::string id = c.choice(
        "cluster.scale_out.fabric",
        {"infiniband", "infiniband-hdr", "infiniband-ndr", "infiniband-xdr", "roce", "rdma", "ethernet"}, "infiniband");
    for (const auto& f : kScaleOutFabrics)
        if (id == f.id) return f;
    return kScaleOutFabrics[3];
}

// The NIC of the case: of the catalog's NICs of the fabric's link layer, the slowest that reaches the
// generation's bandwidth per GPU (the fastest when none does). The generation is the fabric id's
// where it names one, else the case's per-GPU bandwidth, else the NIC of the accelerator's reference
// system (hardware/catalog/accelerators `scale_out_nic`), else the scenario's default NIC.
std::string choose_nic(const Case& c, const plans::Catalog& cat, const hardware::AcceleratorSpec& accelerator) {
    const ScaleOutFabric& fabric = scale_out_fabric(c);
    double per_gpu = fabric.port_gb_per_s * 1e9;
    if (per_gpu == 0 && c.has("cluster.scale_out.gb_per_s_per_gpu"))
        per_gpu = std::max(0.0, c.number("cluster.scale_out.gb_per_s_per_gpu") * 1e9);
    if (per_gpu == 0)
        per_gpu = cat.nic(accelerator.scale_out_nic.empty() ? plans::ClusterRequest{}.nic : accelerator.scale_out_nic)
                      .bandwidth;
    const hardware::NicSpec* best = nullptr;
    for (const auto& [id, nic] : cat.nics()) {
        if (nic.link != fabric.link) continue;
        const bool reaches = nic.bandwidth >= per_gpu, best_reaches = best && best->bandwidth >= per_gpu;
        if (!best || (reaches && (!best_reaches || nic.bandwidth < best->bandwidth)) ||
            (!reaches && !best_reaches && nic.bandwidth > best->bandwidth))
            best = &nic;
    }
    if (!best) throw Unsupported{"no NIC of link layer '" + std::string(fabric.link) + "' in the catalog"};
    return best->id;
}

// The scale-up fabric: the accelerator's own when it is (a variant of) the fabric the case names
// (H800's cut NVLink 4 for nvlink4-nvswitch, the MI355X's mesh for infinity-fabric-mesh), else the
// named one where the catalog has it, else the accelerator's.
void translate_scale_up(const Case& c, const plans::Catalog& cat, const hardware::AcceleratorSpec& accelerator,
                        ScenarioDoc& doc) {
    const std::string named = c.text("cluster.intra_node.fabric");
    if (named.empty()) return;
    const hardware::ScaleUpSpec& own = cat.fabric(accelerator.scale_up);
    if (own.id == named || own.family == named) doc.set("cluster.scale_up", own.id, "cluster.intra_node.fabric");
    else if (cat.fabrics().count(named)) doc.set("cluster.scale_up", named, "cluster.intra_node.fabric");
}

// The node shape: gpus = nodes x gpus_per_node, or one node using fewer GPUs than it has. A case
// without gpus_per_node (a serving source naming only the GPU count) runs on nodes of up to 8.
int64_t translate_shape(const Case& c, ScenarioDoc& doc, std::vector<std::string>& unlisted) {
    int64_t nodes = c.has("cluster.nodes") ? c.integer("cluster.nodes", "cluster.nodes") : 0;
    int64_t per_node = c.has("cluster.gpus_per_node") ? c.integer("cluster.gpus_per_node", "cluster.gpus_per_node") : 0;
    const int64_t gpus = c.count("cluster.gpus");
    if (per_node == 0) {
        per_node = std::min<int64_t>(gpus, 8);
        unlisted.push_back("gpus_per_node not stated: " + std::to_string(per_node));
    }
    if (nodes == 0) nodes = (gpus + per_node - 1) / per_node;
    if (gpus != nodes * per_node) {
        if (nodes != 1) throw Unsupported{"gpus != nodes x gpus_per_node"};
        per_node = gpus;  // a single node using fewer GPUs than it has
    }
    doc.set("cluster.nodes", nodes, c.has("cluster.nodes") ? "cluster.nodes" : "cluster.gpus");
    doc.set("cluster.gpus_per_node", per_node, "cluster.gpus_per_node");
    return per_node;
}

}  // namespace

std::string translate_accelerator(const Case& c, const plans::Catalog& cat, ScenarioDoc& doc,
                                  std::vector<std::string>& assumptions) {
    std::string id = c.text("hardware.accelerator");
    if (id == "h100-unspecified") {
        id = "h100-sxm-80gb";
        assumptions.push_back("H100 form factor not stated: SXM 80GB");
    }
    if (!cat.accelerators().count(id)) throw Unsupported{"accelerator '" + id + "' is not in the catalog"};
    doc.set("cluster.accelerator", id, "hardware.accelerator");
    return id;
}

int64_t translate_cluster(const Case& c, const plans::Catalog& cat, const std::string& accelerator, ScenarioDoc& doc,
                          std::vector<std::string>& notes, std::vector<std::string>& unlisted) {
    doc.section_origin("cluster", "cluster");
    const int64_t per_node = translate_shape(c, doc, unlisted);
    const hardware::AcceleratorSpec& a = cat.accelerator(accelerator);
    translate_scale_up(c, cat, a, doc);
    const std::string nic = choose_nic(c, cat, a);
    doc.set("cluster.scale_out.nic", nic, "cluster.scale_out");
    if (!c.has("cluster.scale_out.fabric") || !c.has("cluster.scale_out.gb_per_s_per_gpu"))
        notes.push_back("scale-out NIC: " + nic);
    // One NIC per GPU unless the case says otherwise (the rail-optimized systems of every source).
    if (c.has("cluster.scale_out.nics_per_node"))
        doc.take(c, "cluster.scale_out.nics_per_node", "cluster.scale_out.nics_per_node");
    else doc.set("cluster.scale_out.nics_per_node", per_node, "cluster.gpus_per_node");
    return std::get<int64_t>(doc.value("cluster.nodes"));
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

void translate_vocab(const Case& c, const std::string& name, ScenarioDoc& doc, std::vector<std::string>& assumptions) {
    if (c.has("model.vocab")) {
        doc.take(c, "model.vocab", "model.vocab");
        return;
    }
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    for (const auto& f : kVocabFamilies)
        if (lower.find(f.key) != std::string::npos) {
            doc.set("model.vocab", f.vocab, "model.name");
            assumptions.push_back("vocab = " + std::to_string(f.vocab) +
                                  " (the family's standard; the case gives none)");
            return;
        }
    throw Unsupported{"no vocabulary, and '" + name + "' is not a family with a known one"};
}

// The experts (measured `moe`, with its own name for the layer frequency) and the latent attention.
void translate_experts(const Case& c, bool moe, ScenarioDoc& doc, models::ModelSpec& s) {
    auto take = [&](const char* field, const char* key, int64_t& into) {
        if (c.has(field)) into = std::get<int64_t>(doc.take(c, field, key));
    };
    if (moe) {
        take("model.moe.num_experts", "model.moe.num_experts", s.moe.num_experts);
        take("model.moe.top_k", "model.moe.top_k", s.moe.top_k);
        take("model.moe.expert_ffn", "model.moe.expert_ffn", s.moe.expert_ffn);
        take("model.moe.shared_experts", "model.moe.shared_experts", s.moe.shared_experts);
        take("model.moe.dense_layers", "model.moe.dense_layers", s.moe.dense_layers);
        take("model.moe.moe_layer_frequency", "model.moe.layer_frequency", s.moe.layer_frequency);
    }
    if (!c.has("model.mla")) return;
    take("model.mla.q_lora_rank", "model.mla.q_lora_rank", s.mla.q_lora_rank);
    take("model.mla.kv_lora_rank", "model.mla.kv_lora_rank", s.mla.kv_lora_rank);
    take("model.mla.qk_nope_head_dim", "model.mla.qk_nope_head_dim", s.mla.qk_nope_head_dim);
    take("model.mla.qk_rope_head_dim", "model.mla.qk_rope_head_dim", s.mla.qk_rope_head_dim);
    take("model.mla.v_head_dim", "model.mla.v_head_dim", s.mla.v_head_dim);
}

}  // namespace

models::ModelSpec translate_model(const Case& c, ScenarioDoc& doc, std::vector<std::string>& assumptions,
                                  std::vector<std::string>& unlisted) {
    doc.section_origin("model", "model");
    const std::string arch = c.text("model.architecture");
    if (arch != "dense" && arch != "moe") throw Unsupported{"architecture '" + arch + "' is not simulated"};
    doc.set("model.architecture", arch, "model.architecture");
    models::ModelSpec s;
    s.name = c.text("model.name");
    doc.set("model.name", s.name, "model.name");
    s.layers = std::get<int64_t>(doc.take(c, "model.layers", "model.layers"));
    doc.take(c, "model.hidden", "model.hidden");
    doc.take(c, "model.heads", "model.heads");
    // Latent attention expands into one key/value head per head: the case's kv_heads is not used.
    if (!c.has("model.mla")) doc.take(c, "model.kv_heads", "model.kv_heads");
    if (c.has("model.head_dim")) doc.take(c, "model.head_dim", "model.head_dim");
    if (c.has("model.ffn")) {
        // 0: no dense MLP (a mixture of experts in every layer).
        s.ffn = c.count("model.ffn", 0);
        if (s.ffn > 0) doc.take(c, "model.ffn", "model.ffn");
    }
    translate_vocab(c, s.name, doc, assumptions);
    translate_experts(c, arch == "moe", doc, s);
    if (s.ffn == 0 && s.moe_layers() < s.layers) throw Unsupported{"dense layers without an MLP width (ffn)"};
    if (c.has("model.activation")) {
        doc.take(c, "model.activation", "model.activation");
    } else {
        doc.set("model.activation", "gelu", "model");
        unlisted.push_back("activation not stated: gelu");
    }
    for (const char* key : {"model.norm", "model.position_embedding", "model.tied_embeddings"})
        if (c.has(key)) doc.take(c, key, key);
    return s;
}

}  // namespace fathom::scenarios::measured
