// The key machinery (value checks, formatting, the reference table) and the scenario-level, model
// and cluster keys; the training-plan keys are in training_keys.cpp, the serving ones in
// serving_keys.cpp.
#include "plans/keys.h"

#include "hardware/routing/routing.h"
#include "plans/key_decl.h"
#include "plans/scenario.h"
#include "plans/search_keys.h"
#include "sim/error.h"
#include "sim/text.h"

#include <cmath>
#include <cstdio>
#include <unordered_map>

namespace fathom::plans {

using namespace key_decl;

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
        case KeyType::Text:
            if (!std::holds_alternative<std::string>(v)) return "expected a string";
            return sim::text_problem(to_str(v));
        case KeyType::Choice: {
            if (!std::holds_alternative<std::string>(v)) return "expected a string";
            for (const auto& c : k.choices)
                if (c == to_str(v)) return "";
            return sim::expected_one_of(k.choices, to_str(v));
        }
        case KeyType::ChoiceList: {
            if (!std::holds_alternative<std::string>(v)) return "expected a list";
            if (to_str(v).empty()) return "expected at least one entry";
            for (const auto& item : split_choices(to_str(v))) {
                if (k.choices.empty()) {  // a free list (search.accelerator): entries checked where they are used
                    if (item.empty()) return "each entry: expected a non-empty string";
                    continue;
                }
                KeyInfo one = k;
                one.type = KeyType::Choice;
                if (auto e = check_value(one, item); !e.empty()) return "each entry: " + e;
            }
            return "";
        }
        case KeyType::IntegerList:
            if (!std::holds_alternative<std::vector<int64_t>>(v)) return "expected a list of integers";
            for (int64_t x : std::get<std::vector<int64_t>>(v))
                if (auto e = in_range(static_cast<double>(x)); !e.empty()) return "each entry " + e;
            return "";
    }
    return "";
}

// Declarative table: the top-level keys and the sub-mappings (structure only).
const std::vector<KeyInfo>& scenario_keys() {
    static const std::vector<KeyInfo> keys = {
        Decl("name", KeyType::Text, "label in reports").by_default("the file name"),
        Decl("kind", KeyType::Choice, "what the scenario simulates").choices_of<WorkloadKind>().by_default("training"),
        Decl("seed", KeyType::Integer,
             "seed of the named random streams; a training step is deterministic and ignores it")
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
        Decl("slo", KeyType::Text, "the `slo.*` keys (serving: latency targets)")
            .shown_as("mapping")
            .by_default("none"),
        Decl("capacity", KeyType::Text, "the `capacity.*` keys (`fathom capacity`: the request-rate search)")
            .shown_as("mapping")
            .by_default("the defaults below"),
        Decl("search", KeyType::Text,
             "the `search.*` keys (`fathom search`: the training or serving plans searched and how they rank)")
            .shown_as("mapping")
            .by_default("the defaults below"),
        Decl("run", KeyType::Text,
             "the `run.*` keys (training: a whole run to its target tokens, with failures, checkpoints and "
             "restarts, simulated over seeds)")
            .shown_as("mapping")
            .by_default("none (one step)"),
        Decl("rl", KeyType::Text,
             "the `rl.*` keys (kind rl: the post-training loop's batch, layout, staleness, forward passes and "
             "weight sync; the rollout engine is the `serving` section, the trainer the `parallel`, `training` and "
             "`stack` sections)")
            .shown_as("mapping")
            .by_default("required for rl"),
        Decl("rl.prompt", KeyType::Text,
             "prompt tokens: an integer, or a mapping of the `rl.prompt.*` keys (the `traffic.prompt.*` "
             "distributions)")
            .shown_as("integer or mapping")
            .required(),
        Decl("rl.response", KeyType::Text,
             "answer tokens: an integer, or a mapping of the `rl.response.*` keys (its max: the max response length)")
            .shown_as("integer or mapping")
            .required(),
        Decl("serving.disaggregation", KeyType::Text,
             "prefill/decode disaggregation: `prefill` and `decode` pools, each with the "
             "`serving.disaggregation.prefill.*` "
             "keys; the aggregated `tp`, `pp` and `replicas` are then unused")
            .shown_as("mapping")
            .by_default("aggregated"),
        Decl("serving.speculative", KeyType::Text,
             "speculative decoding: the `serving.speculative.*` keys (a drafter, the drafts a decode verifies, "
             "their acceptance)")
            .shown_as("mapping")
            .by_default("off"),
        Decl("serving.lora", KeyType::Text,
             "multi-LoRA serving: the `serving.lora.*` keys (adapters over the base model, their rank, the GPU "
             "slots, the popularity requests draw them from)")
            .shown_as("mapping")
            .by_default("off"),
        Decl("serving.autoscale", KeyType::Text,
             "autoscaling: the `serving.autoscale.*` keys (a policy the replica count follows, its bounds and "
             "reaction, where a cold start loads the weights from)")
            .shown_as("mapping")
            .by_default("off"),
        Decl("serving.disaggregation.prefill", KeyType::Text, "the prefill pool")
            .shown_as("mapping")
            .by_default("required"),
        Decl("serving.disaggregation.decode", KeyType::Text, "the decode pool (same keys as prefill)")
            .shown_as("mapping")
            .by_default("required"),
        Decl("traffic.prompt", KeyType::Text,
             "prompt tokens: an integer, or a mapping of the `traffic.prompt.*` keys (the unique part when shared "
             "prefixes are set)")
            .shown_as("integer or mapping")
            .required(),
        Decl("traffic.output", KeyType::Text,
             "output tokens: an integer, or a mapping with the `traffic.prompt.*` keys")
            .shown_as("integer or mapping")
            .required(),
        Decl("traffic.shared_prefix", KeyType::Text, "synthetic shared prefixes (system prompts)")
            .shown_as("mapping")
            .by_default("none"),
        Decl("traffic.sessions", KeyType::Text, "multi-turn conversations").shown_as("mapping").by_default("none"),
        Decl("traffic.sessions.first_prompt", KeyType::Text,
             "a conversation's first-turn tokens of its own: an integer, or a mapping with the `traffic.prompt.*` keys")
            .shown_as("integer or mapping")
            .by_default("a traffic.prompt draw"),
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
             "preset applied first (workloads/stacks/): its stack values, and its defaults for `training.zero_stage` "
             "and "
             "`parallel.sequence_parallel` where the scenario does not set them")
            .by_default("none"),
    };
    return keys;
}

// Declarative table: the model.*, model.moe.* and model.mla.* keys.
const std::vector<Key<models::ModelSpec>>& model_keys() {
    using models::ModelSpec;
    static const std::vector<Key<ModelSpec>> keys = finish<ModelSpec>({
        {Decl("model.name", KeyType::Text, "display name").by_default("the id"), member<&ModelSpec::name>()},
        {Decl("model.huggingface", KeyType::Text,
              "the Hugging Face repository of the checkpoint (org/name), as the model's source names it: the "
              "model `fathom export` puts in a serving engine's command line")
             .by_default("none (the export asks for it)"),
         member<&ModelSpec::huggingface>()},
        {Decl("model.architecture", KeyType::Choice,
              "model family: dense, or mixture of experts (moe, with `model.moe`)")
             .choices({"dense", "moe"})
             .by_default("dense"),
         [](ModelSpec&, const KeyValue&) {},
         [](const ModelSpec& m) -> KeyValue { return std::string(m.moe.enabled() ? "moe" : "dense"); }},
        {Decl("model.layers", KeyType::Integer, "transformer layers").range(1).required(),
         member<&ModelSpec::layers>()},
        {Decl("model.hidden", KeyType::Integer, "hidden size").range(1).required(), member<&ModelSpec::hidden>()},
        {Decl("model.heads", KeyType::Integer, "attention (query) heads").range(1).required(),
         member<&ModelSpec::heads>()},
        {Decl("model.kv_heads", KeyType::Integer, "key/value heads (grouped-query attention)")
             .range(1)
             .by_default("heads"),
         member<&ModelSpec::kv_heads>()},
        {Decl("model.head_dim", KeyType::Integer, "dimension of one head").range(1).by_default("hidden / heads"),
         member<&ModelSpec::head_dim>()},
        {Decl("model.ffn", KeyType::Integer, "MLP width of the dense layers")
             .range(1)
             .by_default("required with dense layers"),
         member<&ModelSpec::ffn>()},
        {Decl("model.vocab", KeyType::Integer, "vocabulary size (as padded by the framework)").range(1).required(),
         member<&ModelSpec::vocab>()},
        {Decl("model.activation", KeyType::Choice, "MLP activation (swiglu and geglu are gated: two up projections)")
             .choices_of<models::Activation>()
             .required(),
         member<&ModelSpec::activation>()},
        {Decl("model.norm", KeyType::Choice, "normalization").choices_of<models::Norm>(), member<&ModelSpec::norm>()},
        {Decl("model.position_embedding", KeyType::Choice, "position embedding")
             .choices_of<models::PositionEmbedding>(),
         member<&ModelSpec::position>()},
        {Decl("model.tied_embeddings", KeyType::Boolean, "output layer shares the input embedding"),
         member<&ModelSpec::tied_embeddings>()},
        {Decl("model.max_seq_len", KeyType::Integer, "context length the model was trained for (0: not stated)")
             .range(0),
         member<&ModelSpec::max_seq_len>()},
        {Decl("model.qkv_bias", KeyType::Boolean, "linear layers carry biases"), member<&ModelSpec::bias>()},
        {Decl("model.moe.num_experts", KeyType::Integer, "routed experts per MoE layer").range(2).required(),
         member<&ModelSpec::moe, &models::MoeSpec::num_experts>()},
        {Decl("model.moe.top_k", KeyType::Integer, "experts each token is routed to").range(1).required(),
         member<&ModelSpec::moe, &models::MoeSpec::top_k>()},
        {Decl("model.moe.expert_ffn", KeyType::Integer, "MLP width of one expert (gated like the dense MLP)")
             .range(1)
             .required(),
         member<&ModelSpec::moe, &models::MoeSpec::expert_ffn>()},
        {Decl("model.moe.shared_experts", KeyType::Integer, "always-active experts of width expert_ffn").range(0),
         member<&ModelSpec::moe, &models::MoeSpec::shared_experts>()},
        {Decl("model.moe.dense_layers", KeyType::Integer,
              "leading dense layers (MLP width ffn) before the first MoE layer")
             .range(0),
         member<&ModelSpec::moe, &models::MoeSpec::dense_layers>()},
        {Decl("model.moe.layer_frequency", KeyType::Integer,
              "every n-th layer after the dense ones is MoE, the others dense (2: Llama 4 Maverick's interleave)")
             .range(1),
         member<&ModelSpec::moe, &models::MoeSpec::layer_frequency>()},
        {Decl("model.mla.q_lora_rank", KeyType::Integer, "query bottleneck rank (0: one query projection)").range(0),
         member<&ModelSpec::mla, &models::MlaSpec::q_lora_rank>()},
        {Decl("model.mla.kv_lora_rank", KeyType::Integer, "key/value latent rank").range(1).required(),
         member<&ModelSpec::mla, &models::MlaSpec::kv_lora_rank>()},
        {Decl("model.mla.qk_nope_head_dim", KeyType::Integer, "per-head query/key dimensions without rotary")
             .range(1)
             .required(),
         member<&ModelSpec::mla, &models::MlaSpec::qk_nope_head_dim>()},
        {Decl("model.mla.qk_rope_head_dim", KeyType::Integer,
              "per-head rotary query/key dimensions (one shared rotary key)")
             .range(1)
             .required(),
         member<&ModelSpec::mla, &models::MlaSpec::qk_rope_head_dim>()},
        {Decl("model.mla.v_head_dim", KeyType::Integer, "per-head value dimensions").range(1).required(),
         member<&ModelSpec::mla, &models::MlaSpec::v_head_dim>()},
    });
    return keys;
}

// Declarative table: the cluster.* and cluster.scale_out.* keys.
const std::vector<Key<ClusterRequest>>& cluster_keys() {
    using R = ClusterRequest;
    static const std::vector<Key<R>> keys = finish<R>({
        {Decl("cluster.accelerator", KeyType::Text, "accelerator catalog id (`fathom list hardware`)").required(),
         member<&R::accelerator>()},
        {Decl("cluster.nodes", KeyType::Integer, "nodes").range(1).required(), member<&R::nodes>()},
        {Decl("cluster.gpus_per_node", KeyType::Integer, "accelerators per node (one scale-up domain)")
             .range(1)
             .required(),
         member<&R::gpus_per_node>()},
        {Decl("cluster.scale_up", KeyType::Text, "scale-up fabric catalog id").by_default("the accelerator's fabric"),
         member<&R::scale_up>()},
        {Decl("cluster.pcie", KeyType::Text,
              "host link catalog id (whole runs' checkpoint snapshots and activation offload use it; otherwise a "
              "warning says it cannot change a step)")
             .by_default("the accelerator's host link, else pcie-gen5-x16"),
         member<&R::pcie>()},
        {Decl("cluster.ssd", KeyType::Text,
              "local SSD catalog id (whole runs checkpoint to it, activation offload writes to it, adaptive "
              "searches reshard through it; otherwise a warning says it cannot change a step)"),
         member<&R::ssd>()},
        {Decl("cluster.ssds_per_node", KeyType::Integer, "local SSDs per node, striped (checkpoints write to all)")
             .range(1, 64),
         member<&R::ssds_per_node>()},
        {Decl("cluster.host_memory", KeyType::Quantity,
              "a node's host DRAM (whole runs checkpointing to peers' memory; a DGX H100 has 2 TB)")
             .unit(sim::Dimension::Bytes)
             .range(1e6, 1e15)
             .by_default("not stated"),
         member<&R::host_memory>()},
        {Decl("cluster.storage", KeyType::Text,
              "shared file system catalog id (`fathom list hardware`; whole runs checkpoint to it)")
             .by_default("none"),
         member<&R::storage>()},
        {Decl("cluster.scale_out.nic", KeyType::Text, "NIC catalog id"), member<&R::nic>()},
        {Decl("cluster.scale_out.nics_per_node", KeyType::Integer, "NICs per node").range(1),
         member<&R::nics_per_node>()},
        {Decl("cluster.scale_out.topology", KeyType::Choice,
              "scale-out network (rail-optimized and fat-tree-2 give the same results in the analytical network)")
             .choices_of<hardware::ScaleOutTopology>(),
         member<&R::topology>()},
        {Decl("cluster.scale_out.oversubscription", KeyType::Number, "leaf uplink oversubscription").range(1),
         member<&R::oversubscription>()},
        {Decl("cluster.scale_out.nodes_per_leaf", KeyType::Integer, "nodes (or rail groups) under one leaf switch")
             .range(1),
         member<&R::nodes_per_leaf>()},
        {Decl("cluster.scale_out.routing", KeyType::Choice,
              "how the switches spread flows over equal-cost paths (simgrid network only)")
             .choices(registry_names(hardware::routing_registry())),
         member<&R::routing>()},
        {Decl("cluster.network", KeyType::Choice,
              "how collectives are costed: closed forms, or every group's flows on the topology graph sharing links in "
              "SimGrid")
             .choices_of<hardware::NetworkBackend>(),
         member<&R::network>()},
    });
    return keys;
}

namespace {

std::vector<const KeyInfo*> collect_keys() {
    std::vector<const KeyInfo*> every;
    for (const auto& k : scenario_keys()) every.push_back(&k);
    for (const auto& k : model_keys()) every.push_back(&k.info);
    for (const auto& k : cluster_keys()) every.push_back(&k.info);
    for (const auto& k : training_plan_keys()) every.push_back(&k.info);
    for (const auto& k : serving_plan_keys()) every.push_back(&k.info);
    for (const auto& k : search_keys()) every.push_back(&k.info);
    for (const auto& k : run_keys()) every.push_back(&k.info);
    for (const auto& k : rl_keys()) every.push_back(&k.info);
    std::vector<const KeyInfo*> out;
    // Section by section, in the order a scenario file reads; a sub-mapping after its section's values.
    auto sub_mapping = [](const KeyInfo* k) { return !k->section().empty() && k->shown_type == "mapping"; };
    for (const std::string section : {"",
                                      "model",
                                      "model.moe",
                                      "model.mla",
                                      "cluster",
                                      "cluster.scale_out",
                                      "parallel",
                                      "training",
                                      "training.documents",
                                      "stack",
                                      "serving",
                                      "serving.speculative",
                                      "serving.lora",
                                      "serving.autoscale",
                                      "serving.disaggregation",
                                      "serving.disaggregation.prefill",
                                      "serving.disaggregation.decode",
                                      "traffic",
                                      "traffic.prompt",
                                      "traffic.output",
                                      "traffic.shared_prefix",
                                      "traffic.sessions",
                                      "traffic.sessions.first_prompt",
                                      "slo",
                                      "capacity",
                                      "search",
                                      "run",
                                      "rl",
                                      "rl.prompt",
                                      "rl.response"})
        for (bool mappings : {false, true})
            for (const KeyInfo* k : every)
                if (k->section() == section && sub_mapping(k) == mappings) out.push_back(k);
    return out;
}

}  // namespace

// The declarations are static tables: the list and its index are built once (the scenario parser
// and compare's translator look keys up by path for every value they read).
const std::vector<const KeyInfo*>& all_keys() {
    static const std::vector<const KeyInfo*> keys = collect_keys();
    return keys;
}

std::vector<std::string> split_choices(const std::string& value) {
    // Every entry, empty ones too: check_value rejects them instead of dropping them.
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t comma; (comma = value.find(',', start)) != std::string::npos; start = comma + 1)
        out.push_back(value.substr(start, comma - start));
    out.push_back(value.substr(start));
    return out;
}

const KeyInfo* find_key(const std::string& path) {
    static const std::unordered_map<std::string, const KeyInfo*> by_path = [] {
        std::unordered_map<std::string, const KeyInfo*> m;
        for (const KeyInfo* k : all_keys()) m.emplace(k->path, k);
        return m;
    }();
    const auto it = by_path.find(path);
    return it == by_path.end() ? nullptr : it->second;
}

std::string key_reference_markdown() {
    std::string out = "| key | type | default | meaning |\n|---|---|---|---|\n";
    for (const KeyInfo* k : all_keys()) {
        std::string type = sim::name(k->type);
        if (k->type == KeyType::Choice || k->type == KeyType::ChoiceList) {
            type.clear();
            for (const auto& c : k->choices) type += (type.empty() ? "" : " \\| ") + ("`" + c + "`");
            if (k->type == KeyType::ChoiceList) type = "list of " + type;
        }
        if (k->type == KeyType::Quantity)
            type += std::string(" (") + sim::name(k->unit) + ", e.g. `" + sim::dimension_example(k->unit) + "`)";
        if (!k->shown_type.empty()) type = k->shown_type;
        else if (k->type == KeyType::Integer || k->type == KeyType::Number || k->type == KeyType::IntegerList) {
            char buf[64];
            if (k->min > -1e300 && k->max < 1e300 && k->max < 2e9)
                std::snprintf(buf, sizeof buf, " %g..%g", k->min, k->max);
            else if (k->min > -1e300) std::snprintf(buf, sizeof buf, " >= %g", k->min);
            else buf[0] = 0;
            type += buf;
        }
        out += "| `" + k->path + "` | " + type + " | " + k->default_text + " | " + k->doc + " |\n";
    }
    return out;
}

}  // namespace fathom::plans
