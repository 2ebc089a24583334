#include "plans/keys.h"

#include <cmath>
#include <cstdio>

#include "plans/key_decl.h"
#include "plans/length_keys.h"
#include "sim/error.h"
#include "workloads/training/schedules/pipeline_schedule.h"

namespace fathom::plans {
namespace {

using workloads::TrainingPlan;
using namespace key_decl;

std::vector<std::string> schedule_names() {
    std::vector<std::string> out;
    for (const auto& e : workloads::schedule_registry().entries()) out.push_back(e.name);
    return out;
}

}  // namespace

const char* key_type_name(KeyType t) {
    switch (t) {
        case KeyType::Integer: return "integer";
        case KeyType::Number: return "number";
        case KeyType::Boolean: return "boolean";
        case KeyType::Choice: return "choice";
        case KeyType::Quantity: return "quantity";
        case KeyType::Text: return "text";
        case KeyType::IntegerList: return "integer list";
    }
    return "?";
}

std::string format_value(const KeyValue& v) {
    if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
    if (const auto* d = std::get_if<double>(&v)) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.15g", *d);
        return buf;
    }
    if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
    if (const auto* s = std::get_if<std::string>(&v)) return s->empty() ? "none" : *s;
    std::string out = "[";
    for (int64_t x : std::get<std::vector<int64_t>>(v)) out += (out.size() > 1 ? ", " : "") + std::to_string(x);
    return out + "]";
}

std::string KeyInfo::section() const {
    const auto dot = path.rfind('.');
    return dot == std::string::npos ? "" : path.substr(0, dot);
}

std::string KeyInfo::name() const {
    const auto dot = path.rfind('.');
    return dot == std::string::npos ? path : path.substr(dot + 1);
}

std::string check_value(const KeyInfo& k, const KeyValue& v) {
    auto in_range = [&k](double x) -> std::string {
        if (!std::isfinite(x)) return "expected a finite number";
        if (x >= k.min && x <= k.max) return "";
        char buf[160];
        const bool bounded = k.max < kMaxInt;  // a real upper bound, not the int representation limit
        if (bounded) std::snprintf(buf, sizeof buf, "must be between %.15g and %.15g, got %.15g", k.min, k.max, x);
        else if (x < k.min) std::snprintf(buf, sizeof buf, "must be >= %.15g, got %.15g", k.min, x);
        else std::snprintf(buf, sizeof buf, "is too large: at most %.15g, got %.15g", k.max, x);
        return buf;
    };
    switch (k.type) {
        case KeyType::Integer:
            if (!std::holds_alternative<int64_t>(v)) return "expected an integer";
            return in_range(static_cast<double>(std::get<int64_t>(v)));
        case KeyType::Number:
        case KeyType::Quantity:
            if (!std::holds_alternative<double>(v) && !std::holds_alternative<int64_t>(v)) return "expected a number";
            return in_range(to_double(v));
        case KeyType::Boolean: return std::holds_alternative<bool>(v) ? "" : "expected true or false";
        case KeyType::Text: return std::holds_alternative<std::string>(v) ? "" : "expected a string";
        case KeyType::Choice: {
            if (!std::holds_alternative<std::string>(v)) return "expected a string";
            for (const auto& c : k.choices)
                if (c == to_str(v)) return "";
            std::string all;
            for (size_t i = 0; i < k.choices.size(); ++i)
                all += (i == 0 ? "" : i + 1 == k.choices.size() ? " or " : ", ") + k.choices[i];
            return "expected " + all + ", got '" + to_str(v) + "'";
        }
        case KeyType::IntegerList:
            if (!std::holds_alternative<std::vector<int64_t>>(v)) return "expected a list of integers";
            for (int64_t x : std::get<std::vector<int64_t>>(v))
                if (auto e = in_range(static_cast<double>(x)); !e.empty()) return "each entry " + e;
            return "";
    }
    return "";
}

const std::vector<KeyInfo>& scenario_keys() {
    static const std::vector<KeyInfo> keys = {
        Decl("name", KeyType::Text, "label in reports").by_default("the file name"),
        Decl("kind", KeyType::Choice, "what the scenario simulates").choices({"training", "serving"}).by_default("training"),
        Decl("seed", KeyType::Integer, "seed of the named random streams; a training step is deterministic and ignores it")
            .range(0, 9.2e18)
            .by_default("1"),
        Decl("model", KeyType::Text, "catalog id (`fathom list models`) or an inline mapping of the `model.*` keys")
            .shown_as("text or mapping")
            .required(),
        Decl("cluster", KeyType::Text, "the `cluster.*` keys").shown_as("mapping").required(),
        Decl("parallel", KeyType::Text, "the `parallel.*` keys (how the model is laid out over the GPUs)")
            .shown_as("mapping")
            .by_default("all degrees 1"),
        Decl("training", KeyType::Text, "the `training.*` keys (what one optimizer step does)")
            .shown_as("mapping")
            .by_default("required for training"),
        Decl("training.documents", KeyType::Text,
             "packed variable-length documents: their token lengths, an integer or a mapping of the "
             "`training.documents.*` keys (the `traffic.prompt.*` distributions); documents are concatenated and cut "
             "into sequences, attention stays within each document, and the busiest data-parallel rank sets the step")
            .shown_as("integer or mapping")
            .by_default("none (every sequence one document)"),
        Decl("serving", KeyType::Text, "the `serving.*` keys (replicas, engine, batching, KV cache)")
            .shown_as("mapping")
            .by_default("required for serving"),
        Decl("traffic", KeyType::Text, "the `traffic.*` keys (serving: arrivals and request lengths)")
            .shown_as("mapping")
            .by_default("required for serving"),
        Decl("slo", KeyType::Text, "the `slo.*` keys (serving: latency targets)").shown_as("mapping").by_default("none"),
        Decl("capacity", KeyType::Text, "the `capacity.*` keys (`fathom capacity`: the request-rate search)")
            .shown_as("mapping")
            .by_default("the defaults below"),
        Decl("serving.disaggregation", KeyType::Text,
             "prefill/decode disaggregation: `prefill` and `decode` pools, each with the `serving.disaggregation.prefill.*` "
             "keys; the aggregated `tp`, `pp` and `replicas` are then unused")
            .shown_as("mapping")
            .by_default("aggregated"),
        Decl("serving.disaggregation.prefill", KeyType::Text, "the prefill pool").shown_as("mapping").by_default("required"),
        Decl("serving.disaggregation.decode", KeyType::Text, "the decode pool (same keys as prefill)")
            .shown_as("mapping")
            .by_default("required"),
        Decl("traffic.prompt", KeyType::Text,
             "prompt tokens: an integer, or a mapping of the `traffic.prompt.*` keys (the unique part when shared "
             "prefixes are set)")
            .shown_as("integer or mapping")
            .required(),
        Decl("traffic.output", KeyType::Text, "output tokens: an integer, or a mapping with the `traffic.prompt.*` keys")
            .shown_as("integer or mapping")
            .required(),
        Decl("traffic.shared_prefix", KeyType::Text, "synthetic shared prefixes (system prompts)").shown_as("mapping").by_default("none"),
        Decl("traffic.sessions", KeyType::Text, "multi-turn conversations").shown_as("mapping").by_default("none"),
        Decl("stack", KeyType::Text, "software stack: a preset id (`fathom list stacks`), or the `stack.*` keys")
            .shown_as("text or mapping")
            .by_default("fathom's defaults"),
        Decl("cluster.scale_out", KeyType::Text, "the `cluster.scale_out.*` keys (the network between nodes)")
            .shown_as("mapping")
            .by_default("the defaults below"),
        Decl("model.moe", KeyType::Text, "mixture-of-experts layers: the `model.moe.*` keys (with `architecture: moe`)")
            .shown_as("mapping")
            .by_default("dense"),
        Decl("model.mla", KeyType::Text, "multi-head latent attention (DeepSeek-V2/V3): the `model.mla.*` keys")
            .shown_as("mapping")
            .by_default("none"),
        Decl("stack.preset", KeyType::Text,
             "preset applied first (workloads/stacks/): its stack values, and its defaults for `training.zero_stage` and "
             "`parallel.sequence_parallel` where the scenario does not set them")
            .by_default("none"),
    };
    return keys;
}

const std::vector<Key<models::ModelSpec>>& model_keys() {
    using models::ModelSpec;
    static const std::vector<Key<ModelSpec>> keys = finish<ModelSpec>({
        {Decl("model.name", KeyType::Text, "display name").by_default("the id"),
         [](ModelSpec& m, const KeyValue& v) { m.name = to_str(v); }, [](const ModelSpec& m) -> KeyValue { return m.name; }},
        {Decl("model.architecture", KeyType::Choice, "model family: dense, or mixture of experts (moe, with `model.moe`)")
             .choices({"dense", "moe"})
             .by_default("dense"),
         [](ModelSpec&, const KeyValue&) {},
         [](const ModelSpec& m) -> KeyValue { return std::string(m.moe.enabled() ? "moe" : "dense"); }},
        {Decl("model.layers", KeyType::Integer, "transformer layers").range(1).required(),
         [](ModelSpec& m, const KeyValue& v) { m.layers = to_int(v); }, [](const ModelSpec& m) -> KeyValue { return m.layers; }},
        {Decl("model.hidden", KeyType::Integer, "hidden size").range(1).required(),
         [](ModelSpec& m, const KeyValue& v) { m.hidden = to_int(v); }, [](const ModelSpec& m) -> KeyValue { return m.hidden; }},
        {Decl("model.heads", KeyType::Integer, "attention (query) heads").range(1).required(),
         [](ModelSpec& m, const KeyValue& v) { m.heads = to_int(v); }, [](const ModelSpec& m) -> KeyValue { return m.heads; }},
        {Decl("model.kv_heads", KeyType::Integer, "key/value heads (grouped-query attention)").range(1).by_default("heads"),
         [](ModelSpec& m, const KeyValue& v) { m.kv_heads = to_int(v); }, [](const ModelSpec& m) -> KeyValue { return m.kv_heads; }},
        {Decl("model.head_dim", KeyType::Integer, "dimension of one head").range(1).by_default("hidden / heads"),
         [](ModelSpec& m, const KeyValue& v) { m.head_dim = to_int(v); }, [](const ModelSpec& m) -> KeyValue { return m.head_dim; }},
        {Decl("model.ffn", KeyType::Integer, "MLP width of the dense layers").range(1).by_default("required with dense layers"),
         [](ModelSpec& m, const KeyValue& v) { m.ffn = to_int(v); }, [](const ModelSpec& m) -> KeyValue { return m.ffn; }},
        {Decl("model.vocab", KeyType::Integer, "vocabulary size (as padded by the framework)").range(1).required(),
         [](ModelSpec& m, const KeyValue& v) { m.vocab = to_int(v); }, [](const ModelSpec& m) -> KeyValue { return m.vocab; }},
        {Decl("model.activation", KeyType::Choice, "MLP activation (swiglu and geglu are gated: two up projections)")
             .choices({"gelu", "relu", "squared_relu", "swiglu", "geglu"})
             .required(),
         [](ModelSpec& m, const KeyValue& v) {
             const std::string& a = to_str(v);
             m.activation = a == "relu" ? models::Activation::Relu
                            : a == "squared_relu" ? models::Activation::SquaredRelu
                            : a == "swiglu" ? models::Activation::Swiglu
                            : a == "geglu" ? models::Activation::Geglu
                                           : models::Activation::Gelu;
         },
         [](const ModelSpec& m) -> KeyValue { return std::string(models::activation_name(m.activation)); }},
        {Decl("model.norm", KeyType::Choice, "normalization").choices({"layernorm", "rmsnorm"}),
         [](ModelSpec& m, const KeyValue& v) { m.norm = to_str(v) == "rmsnorm" ? models::Norm::RmsNorm : models::Norm::LayerNorm; },
         [](const ModelSpec& m) -> KeyValue { return std::string(m.norm == models::Norm::RmsNorm ? "rmsnorm" : "layernorm"); }},
        {Decl("model.position_embedding", KeyType::Choice, "position embedding").choices({"rope", "alibi", "learned", "none"}),
         [](ModelSpec& m, const KeyValue& v) {
             const std::string& p = to_str(v);
             m.position = p == "alibi" ? models::PositionEmbedding::Alibi
                          : p == "learned" ? models::PositionEmbedding::Learned
                          : p == "none" ? models::PositionEmbedding::None
                                        : models::PositionEmbedding::Rope;
         },
         [](const ModelSpec& m) -> KeyValue {
             switch (m.position) {
                 case models::PositionEmbedding::Alibi: return std::string("alibi");
                 case models::PositionEmbedding::Learned: return std::string("learned");
                 case models::PositionEmbedding::None: return std::string("none");
                 default: return std::string("rope");
             }
         }},
        {Decl("model.tied_embeddings", KeyType::Boolean, "output layer shares the input embedding"),
         [](ModelSpec& m, const KeyValue& v) { m.tied_embeddings = to_bool(v); },
         [](const ModelSpec& m) -> KeyValue { return m.tied_embeddings; }},
        {Decl("model.max_seq_len", KeyType::Integer, "context length the model was trained for (0: not stated)").range(0),
         [](ModelSpec& m, const KeyValue& v) { m.max_seq_len = to_int(v); },
         [](const ModelSpec& m) -> KeyValue { return m.max_seq_len; }},
        {Decl("model.qkv_bias", KeyType::Boolean, "linear layers carry biases"),
         [](ModelSpec& m, const KeyValue& v) { m.bias = to_bool(v); }, [](const ModelSpec& m) -> KeyValue { return m.bias; }},
        {Decl("model.moe.num_experts", KeyType::Integer, "routed experts per MoE layer").range(2).required(),
         [](ModelSpec& m, const KeyValue& v) { m.moe.num_experts = to_int(v); },
         [](const ModelSpec& m) -> KeyValue { return m.moe.num_experts; }},
        {Decl("model.moe.top_k", KeyType::Integer, "experts each token is routed to").range(1).required(),
         [](ModelSpec& m, const KeyValue& v) { m.moe.top_k = to_int(v); }, [](const ModelSpec& m) -> KeyValue { return m.moe.top_k; }},
        {Decl("model.moe.expert_ffn", KeyType::Integer, "MLP width of one expert (gated like the dense MLP)").range(1).required(),
         [](ModelSpec& m, const KeyValue& v) { m.moe.expert_ffn = to_int(v); },
         [](const ModelSpec& m) -> KeyValue { return m.moe.expert_ffn; }},
        {Decl("model.moe.shared_experts", KeyType::Integer, "always-active experts of width expert_ffn").range(0),
         [](ModelSpec& m, const KeyValue& v) { m.moe.shared_experts = to_int(v); },
         [](const ModelSpec& m) -> KeyValue { return m.moe.shared_experts; }},
        {Decl("model.moe.dense_layers", KeyType::Integer, "leading dense layers (MLP width ffn) before the first MoE layer").range(0),
         [](ModelSpec& m, const KeyValue& v) { m.moe.dense_layers = to_int(v); },
         [](const ModelSpec& m) -> KeyValue { return m.moe.dense_layers; }},
        {Decl("model.moe.layer_frequency", KeyType::Integer,
              "every n-th layer after the dense ones is MoE, the others dense (2: Llama 4 Maverick's interleave)")
             .range(1),
         [](ModelSpec& m, const KeyValue& v) { m.moe.layer_frequency = to_int(v); },
         [](const ModelSpec& m) -> KeyValue { return m.moe.layer_frequency; }},
        {Decl("model.mla.q_lora_rank", KeyType::Integer, "query bottleneck rank (0: one query projection)").range(0),
         [](ModelSpec& m, const KeyValue& v) { m.mla.q_lora_rank = to_int(v); },
         [](const ModelSpec& m) -> KeyValue { return m.mla.q_lora_rank; }},
        {Decl("model.mla.kv_lora_rank", KeyType::Integer, "key/value latent rank").range(1).required(),
         [](ModelSpec& m, const KeyValue& v) { m.mla.kv_lora_rank = to_int(v); },
         [](const ModelSpec& m) -> KeyValue { return m.mla.kv_lora_rank; }},
        {Decl("model.mla.qk_nope_head_dim", KeyType::Integer, "per-head query/key dimensions without rotary").range(1).required(),
         [](ModelSpec& m, const KeyValue& v) { m.mla.qk_nope_head_dim = to_int(v); },
         [](const ModelSpec& m) -> KeyValue { return m.mla.qk_nope_head_dim; }},
        {Decl("model.mla.qk_rope_head_dim", KeyType::Integer, "per-head rotary query/key dimensions (one shared rotary key)")
             .range(1)
             .required(),
         [](ModelSpec& m, const KeyValue& v) { m.mla.qk_rope_head_dim = to_int(v); },
         [](const ModelSpec& m) -> KeyValue { return m.mla.qk_rope_head_dim; }},
        {Decl("model.mla.v_head_dim", KeyType::Integer, "per-head value dimensions").range(1).required(),
         [](ModelSpec& m, const KeyValue& v) { m.mla.v_head_dim = to_int(v); },
         [](const ModelSpec& m) -> KeyValue { return m.mla.v_head_dim; }},
    });
    return keys;
}

const std::vector<Key<ClusterRequest>>& cluster_keys() {
    using R = ClusterRequest;
    static const std::vector<Key<R>> keys = finish<R>({
        {Decl("cluster.accelerator", KeyType::Text, "accelerator catalog id (`fathom list hardware`)").required(),
         [](R& r, const KeyValue& v) { r.accelerator = to_str(v); }, [](const R& r) -> KeyValue { return r.accelerator; }},
        {Decl("cluster.nodes", KeyType::Integer, "nodes").range(1).required(),
         [](R& r, const KeyValue& v) { r.nodes = to_int32(v); }, [](const R& r) -> KeyValue { return int64_t{r.nodes}; }},
        {Decl("cluster.gpus_per_node", KeyType::Integer, "accelerators per node (one scale-up domain)").range(1).required(),
         [](R& r, const KeyValue& v) { r.gpus_per_node = to_int32(v); },
         [](const R& r) -> KeyValue { return int64_t{r.gpus_per_node}; }},
        {Decl("cluster.scale_up", KeyType::Text, "scale-up fabric catalog id").by_default("the accelerator's fabric"),
         [](R& r, const KeyValue& v) { r.scale_up = to_str(v); }, [](const R& r) -> KeyValue { return r.scale_up; }},
        {Decl("cluster.pcie", KeyType::Text, "host link catalog id (no workload uses it yet: a warning says so)"),
         [](R& r, const KeyValue& v) { r.pcie = to_str(v); }, [](const R& r) -> KeyValue { return r.pcie; }},
        {Decl("cluster.ssd", KeyType::Text, "local SSD catalog id (no workload uses it yet: a warning says so)"),
         [](R& r, const KeyValue& v) { r.ssd = to_str(v); }, [](const R& r) -> KeyValue { return r.ssd; }},
        {Decl("cluster.scale_out.nic", KeyType::Text, "NIC catalog id"),
         [](R& r, const KeyValue& v) { r.nic = to_str(v); }, [](const R& r) -> KeyValue { return r.nic; }},
        {Decl("cluster.scale_out.nics_per_node", KeyType::Integer, "NICs per node").range(1),
         [](R& r, const KeyValue& v) { r.nics_per_node = to_int32(v); },
         [](const R& r) -> KeyValue { return int64_t{r.nics_per_node}; }},
        {Decl("cluster.scale_out.topology", KeyType::Choice,
              "scale-out network (rail-optimized and fat-tree-2 give the same results in the analytical network)")
             .choices({"rail-optimized", "fat-tree-2", "fat-tree-3", "dragonfly"}),
         [](R& r, const KeyValue& v) {
             const std::string& t = to_str(v);
             r.topology = t == "fat-tree-2"   ? hardware::ScaleOutTopology::FatTree2
                          : t == "fat-tree-3" ? hardware::ScaleOutTopology::FatTree3
                          : t == "dragonfly"  ? hardware::ScaleOutTopology::Dragonfly
                                              : hardware::ScaleOutTopology::RailOptimized;
         },
         [](const R& r) -> KeyValue { return std::string(hardware::topology_name(r.topology)); }},
        {Decl("cluster.scale_out.oversubscription", KeyType::Number, "leaf uplink oversubscription").range(1),
         [](R& r, const KeyValue& v) { r.oversubscription = to_double(v); },
         [](const R& r) -> KeyValue { return r.oversubscription; }},
        {Decl("cluster.scale_out.nodes_per_leaf", KeyType::Integer, "nodes (or rail groups) under one leaf switch").range(1),
         [](R& r, const KeyValue& v) { r.nodes_per_leaf = to_int32(v); },
         [](const R& r) -> KeyValue { return int64_t{r.nodes_per_leaf}; }},
        {Decl("cluster.scale_out.routing", KeyType::Choice,
              "how the switches spread flows over equal-cost paths (simgrid network only)")
             .choices({"ecmp", "spray", "dmodk", "shortest-path"}),
         [](R& r, const KeyValue& v) { r.routing = to_str(v); }, [](const R& r) -> KeyValue { return r.routing; }},
        {Decl("cluster.network", KeyType::Choice,
              "how collectives are costed: closed forms, or every group's flows on the topology graph sharing links in SimGrid")
             .choices({"analytical", "simgrid"}),
         [](R& r, const KeyValue& v) {
             r.network = to_str(v) == "simgrid" ? hardware::NetworkBackend::Simgrid : hardware::NetworkBackend::Analytical;
         },
         [](const R& r) -> KeyValue { return std::string(hardware::network_name(r.network)); }},
    });
    return keys;
}

const std::vector<Key<TrainingPlan>>& training_plan_keys() {
    using P = TrainingPlan;
    static const std::vector<Key<P>> keys = finish<P>([] {
      std::vector<Key<P>> k = {
        {Decl("parallel.dp", KeyType::Integer, "data-parallel degree").range(1).by_default("GPUs / (tp x pp x cp)"),
         [](P& p, const KeyValue& v) { p.layout.dp = to_int32(v); }, [](const P& p) -> KeyValue { return int64_t{p.layout.dp}; }},
        {Decl("parallel.tp", KeyType::Integer, "tensor-parallel degree").range(1),
         [](P& p, const KeyValue& v) { p.layout.tp = to_int32(v); }, [](const P& p) -> KeyValue { return int64_t{p.layout.tp}; }},
        {Decl("parallel.pp", KeyType::Integer, "pipeline-parallel stages").range(1),
         [](P& p, const KeyValue& v) { p.layout.pp = to_int32(v); }, [](const P& p) -> KeyValue { return int64_t{p.layout.pp}; }},
        {Decl("parallel.vp", KeyType::Integer, "model chunks (virtual stages) per pipeline rank").range(1),
         [](P& p, const KeyValue& v) { p.layout.vp = to_int32(v); }, [](const P& p) -> KeyValue { return int64_t{p.layout.vp}; }},
        {Decl("parallel.cp", KeyType::Integer, "context-parallel degree (each sequence split over cp ranks)").range(1),
         [](P& p, const KeyValue& v) { p.layout.cp = to_int32(v); }, [](const P& p) -> KeyValue { return int64_t{p.layout.cp}; }},
        {Decl("parallel.ep", KeyType::Integer,
              "expert-parallel degree: the experts of each MoE layer spread over ep ranks of the tp x cp x dp ranks of a stage")
             .range(1),
         [](P& p, const KeyValue& v) { p.layout.ep = to_int32(v); }, [](const P& p) -> KeyValue { return int64_t{p.layout.ep}; }},
        {Decl("parallel.etp", KeyType::Integer, "expert tensor parallelism: 1, or tp (each expert split over the TP group)").range(1),
         [](P& p, const KeyValue& v) { p.layout.etp = to_int32(v); }, [](const P& p) -> KeyValue { return int64_t{p.layout.etp}; }},
        {Decl("parallel.sequence_parallel", KeyType::Boolean,
              "Megatron sequence parallelism with tp > 1 (norms, dropouts and residuals sharded over tp)"),
         [](P& p, const KeyValue& v) { p.layout.sequence_parallel = to_bool(v); },
         [](const P& p) -> KeyValue { return p.layout.sequence_parallel; }},
        {Decl("training.seq_len", KeyType::Integer, "tokens per sequence").range(1).required(),
         [](P& p, const KeyValue& v) { p.training.seq_len = to_int(v); },
         [](const P& p) -> KeyValue { return p.training.seq_len; }},
        {Decl("training.global_batch_size", KeyType::Integer, "sequences per optimizer step").range(1).required(),
         [](P& p, const KeyValue& v) { p.training.global_batch = to_int32(v); },
         [](const P& p) -> KeyValue { return int64_t{p.training.global_batch}; }},
        {Decl("training.micro_batch_size", KeyType::Integer, "sequences per micro-batch per data-parallel rank").range(1).required(),
         [](P& p, const KeyValue& v) { p.training.micro_batch = to_int32(v); },
         [](const P& p) -> KeyValue { return int64_t{p.training.micro_batch}; }},
        {Decl("training.zero_stage", KeyType::Integer,
              "ZeRO stage: 1 shards optimizer states, 2 also gradients, 3 also parameters (FSDP)")
             .range(0, 3),
         [](P& p, const KeyValue& v) { p.training.zero_stage = to_int32(v); },
         [](const P& p) -> KeyValue { return int64_t{p.training.zero_stage}; }},
        {Decl("training.recompute", KeyType::Choice,
              "activation recomputation: selective (norms, activation function), full (whole layers)")
             .choices({"none", "selective", "full"}),
         [](P& p, const KeyValue& v) {
             const std::string& r = to_str(v);
             p.training.recompute = r == "full"        ? workloads::Recompute::Full
                                    : r == "selective" ? workloads::Recompute::Selective
                                                       : workloads::Recompute::None;
         },
         [](const P& p) -> KeyValue { return std::string(workloads::recompute_name(p.training.recompute)); }},
        {Decl("training.schedule", KeyType::Choice, "pipeline schedule (`fathom list schedules`)")
             .choices(schedule_names())
             .by_default("interleaved-1f1b when vp > 1, else 1f1b"),
         [](P& p, const KeyValue& v) { p.training.schedule = to_str(v); },
         [](const P& p) -> KeyValue { return p.training.schedule; }},
        {Decl("training.layers_per_stage", KeyType::IntegerList,
              "layers of each piece of the model, in model order, for uneven splits: pp x vp entries (dualpipe, with a model "
              "copy per direction: pp)")
             .range(1)
             .by_default("layers / (pp x vp) each"),
         [](P& p, const KeyValue& v) {
             p.training.layers_per_virtual_stage.clear();
             for (int64_t x : std::get<std::vector<int64_t>>(v)) p.training.layers_per_virtual_stage.push_back(static_cast<int>(x));
         },
         [](const P& p) -> KeyValue {
             return std::vector<int64_t>(p.training.layers_per_virtual_stage.begin(), p.training.layers_per_virtual_stage.end());
         }},
        {Decl("training.moe_zipf", KeyType::Number,
              "routing skew: expert popularity ~ 1 / rank^s over randomly placed experts; the busiest expert-parallel "
              "rank sets the pace (0: balanced, what a balancing loss aims for)")
             .range(0, 10),
         [](P& p, const KeyValue& v) { p.training.moe_routing.zipf = to_double(v); },
         [](const P& p) -> KeyValue { return p.training.moe_routing.zipf; }},
        {Decl("training.moe_expert_loads", KeyType::IntegerList,
              "measured tokens per expert (num_experts entries), experts placed contiguously over the EP ranks; "
              "replaces moe_zipf")
             .range(0)
             .by_default("none"),
         [](P& p, const KeyValue& v) { p.training.moe_routing.expert_loads = std::get<std::vector<int64_t>>(v); },
         [](const P& p) -> KeyValue { return p.training.moe_routing.expert_loads; }},
        {Decl("training.moe_capacity_factor", KeyType::Number,
              "tokens an expert takes at most, x the mean per expert; the rest are dropped (0: dropless)")
             .range(0, 1e6),
         [](P& p, const KeyValue& v) { p.training.moe_routing.capacity_factor = to_double(v); },
         [](const P& p) -> KeyValue { return p.training.moe_routing.capacity_factor; }},
        {Decl("training.lora_rank", KeyType::Integer,
              "LoRA fine-tuning: adapters of this rank on every linear projection of the layers, base weights, "
              "embedding and output layer frozen (models/llm/lora.h); 0: full training").range(0, 65536),
         [](P& p, const KeyValue& v) { p.training.lora_rank = to_int32(v); },
         [](const P& p) -> KeyValue { return static_cast<int64_t>(p.training.lora_rank); }},
        {Decl("training.recompute_mla_up_proj", KeyType::Boolean,
              "latent attention's up-projections (Q, K, V from the latents) are recomputed in the backward pass instead "
              "of kept (Megatron-Core --recompute-modules mla_up_proj; DeepSeek-V3)"),
         [](P& p, const KeyValue& v) { p.training.recompute_mla_up_proj = to_bool(v); },
         [](const P& p) -> KeyValue { return p.training.recompute_mla_up_proj; }},
        {Decl("training.recompute_moe", KeyType::Boolean,
              "recompute each MoE block (router, all-to-alls, experts) from its input in the backward pass instead of "
              "keeping its activations (Megatron-Core --recompute-modules moe)"),
         [](P& p, const KeyValue& v) { p.training.recompute_moe = to_bool(v); },
         [](const P& p) -> KeyValue { return p.training.recompute_moe; }},
        {Decl("stack.dtype", KeyType::Choice, "GEMM dtype (fp8: Transformer Engine recipes, bf16 around the GEMMs)")
             .choices({"bf16", "fp16", "fp8"}),
         [](P& p, const KeyValue& v) { p.stack.kernels.gemm_dtype = *hardware::parse_dtype(to_str(v)); },
         [](const P& p) -> KeyValue { return std::string(hardware::dtype_name(p.stack.kernels.gemm_dtype)); }},
        {Decl("stack.grad_dtype", KeyType::Choice, "main-gradient dtype (accumulation and data-parallel reduction)")
             .choices({"fp32", "bf16"}),
         [](P& p, const KeyValue& v) { p.stack.grad_bytes = to_str(v) == "bf16" ? 2 : 4; },
         [](const P& p) -> KeyValue { return std::string(p.stack.grad_bytes == 2 ? "bf16" : "fp32"); }},
        {Decl("stack.flash_attention", KeyType::Boolean, "fused flash attention; false: unfused with materialized scores"),
         [](P& p, const KeyValue& v) { p.stack.kernels.flash_attention = to_bool(v); },
         [](const P& p) -> KeyValue { return p.stack.kernels.flash_attention; }},
        {Decl("stack.cp_comm", KeyType::Choice,
              "context-parallel K/V exchange: p2p (ring, beside the attention steps), all_gather (beside the first "
              "step), a2a (Ulysses all-to-all over heads)")
             .choices({"p2p", "all_gather", "a2a"}),
         [](P& p, const KeyValue& v) {
             for (models::CpComm c : {models::CpComm::P2p, models::CpComm::AllGather, models::CpComm::A2a})
                 if (to_str(v) == models::cp_comm_name(c)) p.stack.cp_comm = c;
         },
         [](const P& p) -> KeyValue { return std::string(models::cp_comm_name(p.stack.cp_comm)); }},
        {Decl("stack.attention_kernel", KeyType::Choice,
              "flash-attention kernel class: fa3 (FlashAttention-3, cuDNN fused attention) or fa2 (flash-attn 2, "
              "PyTorch SDPA's flash backend, Triton), slower on Hopper")
             .choices({"fa3", "fa2"}),
         [](P& p, const KeyValue& v) {
             p.stack.kernels.attention_kernel = to_str(v) == "fa2" ? models::AttentionKernel::Fa2 : models::AttentionKernel::Fa3;
         },
         [](const P& p) -> KeyValue {
             return std::string(p.stack.kernels.attention_kernel == models::AttentionKernel::Fa2 ? "fa2" : "fa3");
         }},
        {Decl("stack.fused_elementwise", KeyType::Boolean,
              "fused norms, activation and rotary kernels; false: eager PyTorch (no torch.compile), several kernels each"),
         [](P& p, const KeyValue& v) { p.stack.kernels.fused_elementwise = to_bool(v); },
         [](const P& p) -> KeyValue { return p.stack.kernels.fused_elementwise; }},
        {Decl("stack.tp_comm_overlap", KeyType::Boolean, "TP collectives overlapped with GEMMs (userbuffers, async TP)"),
         [](P& p, const KeyValue& v) { p.stack.tp_comm_overlap = to_bool(v); },
         [](const P& p) -> KeyValue { return p.stack.tp_comm_overlap; }},
        {Decl("stack.selective_recompute", KeyType::Choice,
              "what training.recompute: selective recomputes: norms_activations (Megatron-Core: norms and activation "
              "functions) or every_second_matmul (torchtitan's op-level policy: matmul and attention outputs kept except "
              "every second matmul of the layer, all other ops recomputed)")
             .choices({"norms_activations", "every_second_matmul"}),
         [](P& p, const KeyValue& v) {
             p.stack.selective_policy = to_str(v) == "every_second_matmul" ? workloads::SelectivePolicy::EverySecondMatmul
                                                                           : workloads::SelectivePolicy::NormsActivations;
         },
         [](const P& p) -> KeyValue {
             return std::string(p.stack.selective_policy == workloads::SelectivePolicy::EverySecondMatmul ? "every_second_matmul"
                                                                                                          : "norms_activations");
         }},
        {Decl("stack.tp_overlap_contention", KeyType::Number,
              "under TP overlap, the fraction of each hidden TP transfer's time its fused GEMM still loses (SMs and "
              "bandwidth taken by the transfer, decomposed GEMM chunks); 0: hiding is free")
             .range(0, 1),
         [](P& p, const KeyValue& v) { p.stack.tp_overlap_contention = to_double(v); },
         [](const P& p) -> KeyValue { return p.stack.tp_overlap_contention; }},
        {Decl("stack.dp_comm_overlap", KeyType::Boolean, "gradient reduction (ZeRO 0-2 buckets) overlapped with the backward pass; ZeRO-3 reduce-scatters each layer as its backward ends either way"),
         [](P& p, const KeyValue& v) { p.stack.dp_comm_overlap = to_bool(v); },
         [](const P& p) -> KeyValue { return p.stack.dp_comm_overlap; }},
        {Decl("stack.pp_comm_overlap", KeyType::Boolean,
              "pipeline sends run beside the stage's next compute; false: blocking sends (the stage waits)"),
         [](P& p, const KeyValue& v) { p.stack.pp_comm_overlap = to_bool(v); },
         [](const P& p) -> KeyValue { return p.stack.pp_comm_overlap; }},
        {Decl("stack.moe_dispatcher", KeyType::Choice,
              "MoE token dispatcher: alltoall (every token-expert pair travels), deepep (a token once per destination "
              "rank in a node, once per destination node across nodes)")
             .choices({"alltoall", "deepep"}),
         [](P& p, const KeyValue& v) {
             p.stack.moe_dispatcher = to_str(v) == "deepep" ? models::MoeDispatcher::DeepEp : models::MoeDispatcher::AllToAll;
         },
         [](const P& p) -> KeyValue { return std::string(models::moe_dispatcher_name(p.stack.moe_dispatcher)); }},
        {Decl("stack.ep_comm_overlap", KeyType::Boolean,
              "MoE all-to-alls run beside another micro-batch's compute (Megatron-Core --overlap-moe-expert-parallel-comm)"),
         [](P& p, const KeyValue& v) { p.stack.ep_comm_overlap = to_bool(v); },
         [](const P& p) -> KeyValue { return p.stack.ep_comm_overlap; }},
        {Decl("stack.cross_entropy_fusion", KeyType::Boolean,
              "fused vocab-parallel cross-entropy (Megatron-LM --cross-entropy-loss-fusion): loss and gradient from the "
              "bf16 logits in place, no fp32 softmax copy"),
         [](P& p, const KeyValue& v) { p.stack.kernels.fused_cross_entropy = to_bool(v); },
         [](const P& p) -> KeyValue { return p.stack.kernels.fused_cross_entropy; }},
        {Decl("stack.fp8_tp_all_gather", KeyType::Boolean,
              "under an fp8 recipe, sequence-parallel all-gathers carry fp8 (activations forward, output gradients "
              "backward), reduce-scatters bf16 (torchao Float8 tensor parallelism)"),
         [](P& p, const KeyValue& v) { p.stack.kernels.fp8_tp_all_gather = to_bool(v); },
         [](const P& p) -> KeyValue { return p.stack.kernels.fp8_tp_all_gather; }},
        {Decl("stack.param_gather_overlap", KeyType::Boolean, "ZeRO-1/2 parameter all-gather overlapped with the next forward"),
         [](P& p, const KeyValue& v) { p.stack.param_gather_overlap = to_bool(v); },
         [](const P& p) -> KeyValue { return p.stack.param_gather_overlap; }},
        {Decl("stack.bucket_size", KeyType::Number, "gradient bucket, in parameters").range(1),
         [](P& p, const KeyValue& v) { p.stack.bucket_params = to_double(v); },
         [](const P& p) -> KeyValue { return p.stack.bucket_params; }},
        {Decl("stack.runtime_reserved", KeyType::Quantity,
              "device memory outside the model's tensors (CUDA context, NCCL buffers, allocator slack), with a unit")
             .unit(sim::Dimension::Bytes)
             .range(0),
         [](P& p, const KeyValue& v) { p.stack.runtime_reserved = to_double(v); },
         [](const P& p) -> KeyValue { return p.stack.runtime_reserved; }},
      };
      // Packed documents: their lengths as a distribution (the traffic.prompt keys) and a seed.
      FATHOM_LENGTH_KEYS(k, P, "training.documents", p.training.documents)
      k.push_back({Decl("training.documents.seed", KeyType::Integer, "seed of the document-length draws").range(0, 9.2e18),
                   [](P& p, const KeyValue& v) { p.training.documents_seed = static_cast<uint64_t>(to_int(v)); },
                   [](const P& p) -> KeyValue { return static_cast<int64_t>(p.training.documents_seed); }});
      return k;
    }());
    return keys;
}

std::vector<const KeyInfo*> all_keys() {
    std::vector<const KeyInfo*> every;
    for (const auto& k : scenario_keys()) every.push_back(&k);
    for (const auto& k : model_keys()) every.push_back(&k.info);
    for (const auto& k : cluster_keys()) every.push_back(&k.info);
    for (const auto& k : training_plan_keys()) every.push_back(&k.info);
    for (const auto& k : serving_plan_keys()) every.push_back(&k.info);
    std::vector<const KeyInfo*> out;
    // Section by section, in the order a scenario file reads; a sub-mapping after its section's values.
    auto sub_mapping = [](const KeyInfo* k) { return !k->section().empty() && k->shown_type == "mapping"; };
    for (const std::string section :
         {"", "model", "model.moe", "model.mla", "cluster", "cluster.scale_out", "parallel", "training", "training.documents", "stack", "serving", "serving.disaggregation",
          "serving.disaggregation.prefill", "serving.disaggregation.decode", "traffic", "traffic.prompt", "traffic.output",
          "traffic.shared_prefix", "traffic.sessions", "slo", "capacity"})
        for (bool mappings : {false, true})
            for (const KeyInfo* k : every)
                if (k->section() == section && sub_mapping(k) == mappings) out.push_back(k);
    return out;
}

const KeyInfo* find_key(const std::string& path) {
    for (const KeyInfo* k : all_keys())
        if (k->path == path) return k;
    return nullptr;
}

std::string key_reference_markdown() {
    std::string out = "| key | type | default | meaning |\n|---|---|---|---|\n";
    for (const KeyInfo* k : all_keys()) {
        std::string type = key_type_name(k->type);
        if (k->type == KeyType::Choice) {
            type.clear();
            for (const auto& c : k->choices) type += (type.empty() ? "" : " \\| ") + ("`" + c + "`");
        }
        if (k->type == KeyType::Quantity) type += std::string(" (") + sim::dimension_name(k->unit) + ", e.g. `" +
                                                  sim::dimension_example(k->unit) + "`)";
        if (!k->shown_type.empty()) type = k->shown_type;
        else if (k->type == KeyType::Integer || k->type == KeyType::Number || k->type == KeyType::IntegerList) {
            char buf[64];
            if (k->min > -1e300 && k->max < 1e300 && k->max < 2e9) std::snprintf(buf, sizeof buf, " %g..%g", k->min, k->max);
            else if (k->min > -1e300) std::snprintf(buf, sizeof buf, " >= %g", k->min);
            else buf[0] = 0;
            type += buf;
        }
        out += "| `" + k->path + "` | " + type + " | " + k->default_text + " | " + k->doc + " |\n";
    }
    return out;
}

void set_training_key(TrainingPlan& plan, const std::string& path, const KeyValue& value) {
    for (const auto& k : training_plan_keys()) {
        if (k.info.path != path) continue;
        const std::string why = check_value(k.info, value);
        if (!why.empty()) throw sim::InputError(why, "", 0, path);
        k.set(plan, value);
        return;
    }
    throw sim::InputError("unknown training-plan key", "", 0, path);
}

KeyValue get_training_key(const TrainingPlan& plan, const std::string& path) {
    for (const auto& k : training_plan_keys())
        if (k.info.path == path) return k.get(plan);
    throw sim::InputError("unknown training-plan key", "", 0, path);
}

}  // namespace fathom::plans
