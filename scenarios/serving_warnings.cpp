#include "scenarios/serving_warnings.h"

namespace fathom::scenarios {
namespace {

// The keys of `block` under `serving` that `off` makes idle, each warned with `why`.
void idle_keys(const Node& serving, const char* block, bool off, std::initializer_list<const char*> keys,
               const std::string& why, const WarnAt& warn) {
    if (!off) return;
    if (auto n = serving.find(block))
        for (const char* key : keys)
            if (n->has(key)) warn(*n, key, why);
}

}  // namespace

void serving_warnings(const Node& serving, const workloads::serving::ServingPlan& p, const WarnAt& warn) {
    idle_keys(serving, "speculative", p.speculative.method == workloads::serving::SpecMethod::None,
              {"tokens", "acceptance", "acceptance_length", "acceptance_profile", "draft_model"},
              "speculative decoding is off (serving.speculative.method none): this key cannot change the result", warn);
    idle_keys(serving, "lora", !p.lora.enabled(),
              {"rank", "max_rank", "max_loras", "popularity", "admission", "modules"},
              "multi-LoRA serving is off (serving.lora.adapters 0): it changes nothing", warn);
    idle_keys(
        serving, "autoscale", !p.autoscale.enabled(),
        {"min_replicas", "initial_replicas", "target", "interval", "scale_down_delay", "tolerance", "weights_from",
         "load_bandwidth", "loader_bandwidth", "loader_reads_all", "engine_start", "graph_capture"},
        "autoscaling is off (serving.autoscale.policy none): serving.replicas serve throughout; this key "
        "changes nothing",
        warn);
    if (!p.kv.any_tier())
        for (const char* key :
             {"kv_offload_copy", "kv_offload_load", "kv_offload_store", "kv_offload_chunk", "kv_offload_store_decode"})
            if (serving.has(key))
                warn(serving, key,
                     "no KV tier to load from (serving.kv_offload, serving.kv_store): it changes nothing");
}

}  // namespace fathom::scenarios
