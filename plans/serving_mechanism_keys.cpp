// The keys of serving mechanisms with a block of their own (serving.lora, serving.autoscale), part of
// the serving key table (plans/serving_keys.cpp).
#include "plans/key_decl.h"
#include "plans/keys.h"
#include "workloads/serving/serving_plan.h"

namespace fathom::plans {

using workloads::serving::ServingPlan;
using SK = Key<ServingPlan>;
using namespace key_decl;

// Multi-LoRA serving (workloads/serving/lora.h).
void add_lora_keys(std::vector<SK>& k) {
    using workloads::serving::LoraAdmission;
    using workloads::serving::LoraModules;
    using workloads::serving::LoraSettings;
    k.push_back({Decl("serving.lora.adapters", KeyType::Integer,
                      "distinct LoRA adapters over the base model the requests run with (a trace's adapter column "
                      "names each request's, 0 the base model; otherwise drawn by popularity); 0: no LoRA")
                     .range(0, 1000000),
                 member<&ServingPlan::lora, &LoraSettings::adapters>()});
    k.push_back({Decl("serving.lora.rank", KeyType::Integer, "r of every adapter")
                     .range(1, 65536)
                     .by_default("required with adapters"),
                 member<&ServingPlan::lora, &LoraSettings::rank>()});
    k.push_back({Decl("serving.lora.max_rank", KeyType::Integer,
                      "the rank a GPU slot holds (vLLM --max-lora-rank, SGLang --max-lora-rank); an adapter's rank "
                      "must not exceed it; 0: rank")
                     .range(0, 65536),
                 member<&ServingPlan::lora, &LoraSettings::max_rank>()});
    k.push_back({Decl("serving.lora.max_loras", KeyType::Integer,
                      "GPU adapter slots, so distinct adapters the running sequences use at most (vLLM --max-loras, "
                      "SGLang --max-loras-per-batch); allocated at start-up beside the weights")
                     .range(1, 1000000),
                 member<&ServingPlan::lora, &LoraSettings::max_loras>()});
    k.push_back({Decl("serving.lora.popularity", KeyType::Number,
                      "Zipf exponent of the adapters' popularity for requests that name none: adapter i drawn with "
                      "probability proportional to i^-popularity (S-LoRA's power law); 0: uniform")
                     .range(0, 10),
                 member<&ServingPlan::lora, &LoraSettings::popularity>()});
    k.push_back({Decl("serving.lora.admission", KeyType::Choice,
                      "a waiting request whose adapter finds no GPU slot: skip (later requests are admitted past "
                      "it, vLLM V1) or fifo (admission stops at it, SGLang)")
                     .choices_of<LoraAdmission>(),
                 member<&ServingPlan::lora, &LoraSettings::admission>()});
    k.push_back({Decl("serving.lora.modules", KeyType::Choice,
                      "adapted projections: all (q, k, v, o, gate, up, down) or attention (q, k, v, o)")
                     .choices_of<LoraModules>(),
                 member<&ServingPlan::lora, &LoraSettings::modules>()});
}

// Autoscaling (workloads/serving/autoscale.h).
void add_autoscale_keys(std::vector<SK>& k) {
    using workloads::serving::AutoscaleSettings;
    k.push_back({Decl("serving.autoscale.policy", KeyType::Choice,
                      "what the replica count follows (`fathom list autoscalers`): queue (requests a replica), kv "
                      "(KV-cache use), slo (latency over the SLO); none: serving.replicas serve throughout")
                     .choices(workloads::serving::autoscale_policy_choices()),
                 member<&ServingPlan::autoscale, &AutoscaleSettings::policy>()});
    k.push_back({Decl("serving.autoscale.min_replicas", KeyType::Integer,
                      "replicas kept at least (0: scale to zero; serving.replicas is the most)")
                     .range(0, 1000000),
                 member<&ServingPlan::autoscale, &AutoscaleSettings::min_replicas>()});
    k.push_back({Decl("serving.autoscale.initial_replicas", KeyType::Integer, "replicas serving at time 0, warm")
                     .range(0, 1000000)
                     .by_default("min_replicas"),
                 member<&ServingPlan::autoscale, &AutoscaleSettings::initial_replicas>()});
    k.push_back({Decl("serving.autoscale.target", KeyType::Number,
                      "the policy's target a replica: queue, requests queued or running; kv, the share of the KV "
                      "cache used; slo, the share of the SLO the latency runs at")
                     .range(1e-9, 1e9)
                     .by_default("required with a policy"),
                 member<&ServingPlan::autoscale, &AutoscaleSettings::target>()});
    k.push_back({Decl("serving.autoscale.interval", KeyType::Quantity,
                      "time between evaluations (Kubernetes HPA's sync period, 15 s by default)")
                     .unit(sim::Dimension::Time)
                     .range(1e-3, 1e6),
                 member<&ServingPlan::autoscale, &AutoscaleSettings::interval_s>()});
    k.push_back({Decl("serving.autoscale.scale_down_delay", KeyType::Quantity,
                      "scale-down follows the highest proposal of this window (HPA's stabilization window, 300 s)")
                     .unit(sim::Dimension::Time)
                     .range(0, 1e7),
                 member<&ServingPlan::autoscale, &AutoscaleSettings::scale_down_delay_s>()});
    k.push_back({Decl("serving.autoscale.tolerance", KeyType::Number,
                      "a proposal within this share of the serving count changes nothing (HPA: 0.1)")
                     .range(0, 1),
                 member<&ServingPlan::autoscale, &AutoscaleSettings::tolerance>()});
    k.push_back({Decl("serving.autoscale.weights_from", KeyType::Choice,
                      "where a starting replica loads its weights from: ssd (cluster.ssd), storage (cluster.storage), "
                      "host (host memory over PCIe), peer (a serving replica's GPUs over the scale-out network)")
                     .choices(workloads::serving::weight_sources())
                     .by_default("required with a policy, unless load_bandwidth"),
                 member<&ServingPlan::autoscale, &AutoscaleSettings::weights_from>()});
    k.push_back({Decl("serving.autoscale.load_bandwidth", KeyType::Quantity,
                      "a GPU's weight-loading bandwidth, measured for a loader (replaces the path of weights_from)")
                     .unit(sim::Dimension::Bandwidth)
                     .range(1)
                     .by_default("the path's"),
                 member<&ServingPlan::autoscale, &AutoscaleSettings::load_bandwidth>()});
    k.push_back({Decl("serving.autoscale.loader_bandwidth", KeyType::Quantity,
                      "the engine's weight loader: bytes/s a rank parses and copies at most, whatever the path")
                     .unit(sim::Dimension::Bandwidth)
                     .range(0)
                     .by_default("the engine preset's; none without"),
                 member<&ServingPlan::autoscale, &AutoscaleSettings::loader_bandwidth>()});
    k.push_back({Decl("serving.autoscale.loader_reads_all", KeyType::Boolean,
                      "every rank's loader reads the whole checkpoint, not its shard (vLLM's default loader)")
                     .by_default("the engine preset's; false without"),
                 member<&ServingPlan::autoscale, &AutoscaleSettings::loader_reads_all>()});
    k.push_back({Decl("serving.autoscale.engine_start", KeyType::Quantity,
                      "a cold start's engine initialization beside the weights and graphs (profiling run, KV "
                      "allocation, warm-up)")
                     .unit(sim::Dimension::Time)
                     .range(0, 1e5)
                     .by_default("the engine preset's; required without"),
                 member<&ServingPlan::autoscale, &AutoscaleSettings::engine_start_s>()});
    k.push_back({Decl("serving.autoscale.graph_capture", KeyType::Quantity,
                      "a cold start's compilation and CUDA-graph capture (torch.compile, the captured batch sizes)")
                     .unit(sim::Dimension::Time)
                     .range(0, 1e5)
                     .by_default("the engine preset's; required without"),
                 member<&ServingPlan::autoscale, &AutoscaleSettings::graph_capture_s>()});
}

}  // namespace fathom::plans
