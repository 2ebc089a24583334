#include "scenarios/measured_rules.h"

#include "scenarios/measured_schema.h"

#include <algorithm>
#include <cctype>

namespace fathom::scenarios::measured {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    return s;
}

bool mentions(const std::string& text, const char* words) { return text.find(words) != std::string::npos; }

using TD = TrainingDraft;
using TS = TrainingStep;

bool moe(const TD& d) { return d.model.moe.enabled(); }
bool deepep_named(const TD& d) { return mentions(d.software(), "deepep") || mentions(d.software(), "hybridep"); }

// Declarative table: the training rules, in the order their assumptions are reported.
const std::vector<TrainingRule>& training_rule_table() {
    static const std::vector<TrainingRule> rules = {
        // Megatron-LM without sequence parallelism and without a version is the 2021 paper's stack
        // (no sequence parallelism, unfused attention: both reached Megatron-LM together in 2022);
        // a stated version (Primus's Megatron backend, the MoE Model Zoo's branches) is current.
        {"megatron-lm-2021-stack", TS::Stack,
         [](const TD& d) {
             return d.framework == "megatron-lm" && !d.c.has("training.sequence_parallel") &&
                    !d.c.has("training.framework_version");
         },
         [](TD& d) { d.preset = &d.catalog.stack("megatron-lm-2021"); }},
        // torchtitan has no gradient accumulation; with pipeline parallelism its local batch is split
        // into pp micro-batches (its default microbatch count is the pipeline degree).
        {"torchtitan-local-batch", TS::Batch,
         [](const TD& d) {
             return d.framework == "torchtitan" && !d.c.has("training.micro_batch_size") &&
                    d.c.has("training.batch_per_dp_rank");
         },
         [](TD& d) {
             const int64_t local = d.c.count("training.batch_per_dp_rank"), pp = d.planned_int("parallel.pp");
             const int64_t mb = pp > 1 && local % pp == 0 ? local / pp : local;
             d.doc.set("training.micro_batch_size", mb, "training.batch_per_dp_rank");
             d.assumptions.push_back("micro_batch_size = " + std::to_string(mb) + " from batch_per_dp_rank" +
                                     (pp > 1 ? " / pp (torchtitan)" : " (torchtitan: no accumulation)"));
         }},
        // torchtitan builds two stages per rank for multi-stage (interleaved) schedules.
        {"torchtitan-interleaved-chunks", TS::Interleave,
         [](const TD& d) {
             return d.framework == "torchtitan" && d.schedule == "interleaved-1f1b" && !d.doc.has("parallel.vp") &&
                    d.planned_int("parallel.pp") > 1;
         },
         [](TD& d) {
             d.doc.set("parallel.vp", int64_t{2}, "training.pp_schedule");
             d.assumptions.push_back("vp = 2 (torchtitan default for interleaved schedules)");
         }},
        // DualPipe holds two chunks per rank (its stage of each direction) and overlaps the expert
        // all-to-alls of each forward-backward pair with the other's compute (DeepSeek-V3 report,
        // section 3.2.1 and Figure 4).
        {"dualpipe-chunks", TS::Schedule, [](const TD& d) { return d.schedule == "dualpipe"; },
         [](TD& d) {
             if (!d.c.has("training.vp")) {
                 d.doc.set("parallel.vp", int64_t{2}, "training.pp_schedule");
                 d.assumptions.push_back("vp = 2 (dualpipe: each rank's stage of both directions)");
             }
             if (moe(d)) {
                 d.doc.set("stack.ep_comm_overlap", true, "training.pp_schedule");
                 d.assumptions.push_back("EP all-to-alls overlapped by dualpipe's forward-backward pairs");
             }
         }},
        // Megatron-Core: --expert-tensor-parallel-size defaults to the TP size.
        {"megatron-core-expert-tp", TS::Experts,
         [](const TD& d) { return moe(d) && !d.c.has("training.etp") && d.planned_int("parallel.tp") > 1; },
         [](TD& d) {
             const int64_t tp = d.planned_int("parallel.tp");
             d.doc.set("parallel.etp", tp, "training.tp");
             d.assumptions.push_back("etp = tp = " + std::to_string(tp) + " (Megatron-Core default)");
         }},
        // A framework without a preset: sequence parallelism with tensor parallelism, as current
        // Megatron-Core recipes (NeMo, Megatron-Bridge, the MoE Model Zoo) and torchtitan run it;
        // without it the activations are several times larger, which makes false OOM verdicts
        // and recomputation fill-ins (issue 35).
        {"default-sequence-parallel", TS::Experts,
         [](const TD& d) {
             return !d.preset && d.planned_int("parallel.tp") > 1 && !d.c.has("training.sequence_parallel");
         },
         [](TD& d) {
             d.doc.set("parallel.sequence_parallel", true, "training.tp");
             d.assumptions.push_back(
                 "sequence parallelism with tensor parallelism (not stated; no stack preset for "
                 "framework '" +
                 d.framework + "')");
         }},
        // Megatron-Core requires sequence parallelism for MoE with tp > 1.
        {"moe-sequence-parallel", TS::Experts,
         [](const TD& d) {
             return moe(d) && d.planned_int("parallel.tp") > 1 && !d.planned_bool("parallel.sequence_parallel");
         },
         [](TD& d) {
             d.doc.set("parallel.sequence_parallel", true, "training.tp");
             d.assumptions.push_back("sequence parallelism (Megatron-Core requires it for MoE with tp > 1)");
         }},
        // Routing as a balancing loss aims for: every expert equally loaded, none dropped.
        {"moe-balanced-routing", TS::Experts, [](const TD& d) { return moe(d); },
         [](TD& d) {
             d.doc.set("training.moe_zipf", std::string("0"), "model.moe");
             d.assumptions.push_back("balanced expert routing (moe_zipf 0, dropless)");
         }},
        // Megatron-Core's flex dispatcher with a DeepEP or HybridEP backend ("deepep", "hybridep").
        {"software-deepep", TS::Experts, [](const TD& d) { return moe(d) && deepep_named(d); },
         [](TD& d) {
             d.doc.set("stack.moe_dispatcher", std::string("deepep"), "training.software");
             d.assumptions.push_back("token dispatcher deepep (from the software description)");
         }},
        // DeepSeek-V3 report section 3.2.2 ("custom cross-node all-to-all"): a token crosses IB once
        // per target node (to the GPU of the same in-node index) and is forwarded over NVLink, the
        // dispatch DeepEP implements.
        {"software-cross-node-all-to-all", TS::Experts,
         [](const TD& d) {
             return moe(d) && !deepep_named(d) && mentions(d.software(), "custom cross-node all-to-all");
         },
         [](TD& d) {
             d.doc.set("stack.moe_dispatcher", std::string("deepep"), "training.software");
             d.assumptions.push_back(
                 "token dispatcher deepep (the software's custom cross-node all-to-all: once per "
                 "node over IB, then NVLink, as DeepEP)");
         }},
        // "EP all-to-all overlap" (and not "no EP all-to-all overlap"), unless the case states it typed
        // (fathom's extension training.ep_comm_overlap).
        {"software-ep-overlap", TS::Experts,
         [](const TD& d) {
             return moe(d) && !d.c.has("training.ep_comm_overlap") && mentions(d.software(), "ep all-to-all overlap") &&
                    !mentions(d.software(), "no ep all-to-all overlap");
         },
         [](TD& d) {
             d.doc.set("stack.ep_comm_overlap", true, "training.software");
             d.assumptions.push_back("EP all-to-all overlap (from the software description)");
         }},
        // Primus: "TE cross-entropy loss fusion" ("cross-entropy loss fusion", "cross entropy loss fusion").
        {"software-cross-entropy-fusion", TS::Software,
         [](const TD& d) {
             return mentions(d.software(), "cross-entropy loss fusion") ||
                    mentions(d.software(), "cross entropy loss fusion");
         },
         [](TD& d) {
             d.doc.set("stack.cross_entropy_fusion", true, "training.software");
             d.assumptions.push_back("fused cross-entropy loss (from the software description)");
         }},
        // PyTorch-native stacks without torch.compile run norms and activations unfused.
        {"eager-pytorch-elementwise", TS::Kernels,
         [](const TD& d) {
             return (d.framework == "torchtitan" || d.framework == "other") && d.c.has("training.torch_compile") &&
                    !d.c.flag("training.torch_compile");
         },
         [](TD& d) { d.doc.set("stack.fused_elementwise", false, "training.torch_compile"); }},
        // The Megatron family's distributed optimizer keeps a full gradient buffer: its optimizer
        // sharding stops at ZeRO-1 (elsewhere, DeepSpeed's, ZeRO-2).
        {"megatron-distributed-optimizer", TS::Fit,
         [](const TD& d) {
             return d.framework == "nemo" || d.framework == "megatron-lm" || d.framework == "megatron-bridge" ||
                    d.framework == "megascale";
         },
         [](TD& d) { d.fit.max_zero_stage = 1; }},
    };
    return rules;
}

}  // namespace

const std::vector<TrainingRule>& training_rules() { return training_rule_table(); }

void run_rules(TrainingDraft& d, TrainingStep step) {
    for (const auto& r : training_rules())
        if (r.step == step && r.applies(d)) r.apply(d);
}

plans::KeyValue TrainingDraft::planned(const std::string& key) const {
    if (doc.has(key)) return doc.value(key);
    workloads::TrainingPlan p;
    if (preset) preset->apply(p);
    return plans::get_training_key(p, key);
}

std::string TrainingDraft::software() const { return lower(c.text("training.software")); }

namespace {

using SD = ServingDraft;
using SS = ServingStep;

bool expert_parallel(const SD& d) { return d.ep > 1; }
// The MoE token dispatcher the case states (fathom's extension field serving.moe_dispatcher, from
// the case or its source's supplement, scenarios/sources/); "" when it states none.
std::string dispatcher(const SD& d) {
    return d.c.has("serving.moe_dispatcher")
               ? d.c.choice("serving.moe_dispatcher", serving_extension_choices("moe_dispatcher"))
               : std::string();
}
bool deepep(const SD& d) { return dispatcher(d).rfind("deepep", 0) == 0; }

// Declarative table: the serving rules, in the order their assumptions are reported.
const std::vector<ServingRule>& serving_rule_table() {
    static const std::vector<ServingRule> rules = {
        // NVIDIA NIM's optimized LLM profiles ("fp8 TP2") run TensorRT-LLM engines (a case whose
        // engine is `other` packaged as a NIM: serving.packaging nim).
        {"nim-profile", SS::Engine,
         [](const SD& d) {
             return !d.preset && d.engine == "other" && d.c.has("serving.packaging") &&
                    d.c.choice("serving.packaging", serving_extension_choices("packaging")) == "nim";
         },
         [](SD& d) {
             d.nim = true;
             d.preset = d.catalog.engine_for("tensorrt-llm");
             d.assumptions.push_back("NIM profile served by TensorRT-LLM");
         }},
        // DeepEP: normal kernels (deepep), low-latency ones (deepep_low_latency), or SGLang's
        // deepep_mode auto (server_args.py), which runs the normal kernels for prefill batches and
        // the low-latency ones for decode batches (deepep_auto).
        {"deepep-dispatch", SS::Experts, [](const SD& d) { return expert_parallel(d) && deepep(d); },
         [](SD& d) {
             // deepep_auto: each pool's batches choose; a pool measured alone makes both pools its
             // kind (the other one only feeds it), a whole system runs each pool its own.
             const std::string mode = dispatcher(d);
             const std::string suffix = mode == "deepep_auto" ? " (SGLang deepep_mode auto)" : "";
             std::string said;
             for (const std::string& pool : d.pools()) {
                 const bool decode_pool =
                     d.measured_pool == "both" ? pool == "serving.disaggregation.decode" : d.measured_pool == "decode";
                 const bool low_latency = mode == "deepep_low_latency" || (mode == "deepep_auto" && decode_pool);
                 const std::string kind = low_latency ? "low-latency" : "normal";
                 d.doc.set(pool + ".dispatcher", std::string(low_latency ? "deepep_ll" : "deepep"),
                           "serving.moe_dispatcher");
                 if (d.measured_pool == "both")
                     said +=
                         (said.empty() ? "" : ", ") + kind + " in the " + pool.substr(pool.rfind('.') + 1) + " pool";
                 else said = kind;
             }
             d.assumptions.push_back("DeepEP " + said + " dispatch" + suffix);
         }},
        {"alltoall-dispatch", SS::Experts, [](const SD& d) { return expert_parallel(d) && dispatcher(d).empty(); },
         [](SD& d) { d.assumptions.push_back("token dispatcher alltoall (the case states none)"); }},
        // Speculative decoding as the case states it (fathom's extension block serving.speculative):
        // the drafter, its tokens and the published acceptance.
        {"speculative", SS::Engine, [](const SD& d) { return d.c.has("serving.speculative"); },
         [](SD& d) {
             const std::string method =
                 d.c.choice("serving.speculative.method", serving_extension_choices("speculative.method"));
             d.doc.set("serving.speculative.method", method, "serving.speculative.method");
             d.doc.take(d.c, "serving.speculative.tokens", "serving.speculative.tokens");
             for (const char* k : {"acceptance", "acceptance_length", "draft_model"}) {
                 const std::string key = std::string("serving.speculative.") + k;
                 if (d.c.has(key)) d.doc.take(d.c, key, key);
             }
             d.assumptions.push_back("speculative decoding: " + method + " (the i.i.d. acceptance model)");
         }},
        // SGLang --enable-two-batch-overlap (serving.two_batch_overlap).
        {"two-batch-overlap", SS::Experts,
         [](const SD& d) {
             return expert_parallel(d) && d.c.has("serving.two_batch_overlap") && d.c.flag("serving.two_batch_overlap");
         },
         [](SD& d) {
             d.doc.set("serving.two_batch_overlap", true, "serving.two_batch_overlap");
             d.assumptions.push_back("two-batch overlap");
         }},
        // EPLB: the fewest redundant experts that spread the experts evenly over the EP group.
        {"eplb-redundant-experts", SS::Experts,
         [](const SD& d) { return expert_parallel(d) && d.model.moe.num_experts % d.ep != 0; },
         [](SD& d) {
             const int64_t experts = d.model.moe.num_experts, extra = (d.ep - experts % d.ep) % d.ep;
             for (const std::string& pool : d.pools()) d.doc.set(pool + ".redundant_experts", extra, "serving.ep");
             d.assumptions.push_back("EPLB: " + std::to_string(extra) +
                                     " redundant experts, the fewest that spread the " + std::to_string(experts) +
                                     " experts evenly over ep " + std::to_string(d.ep));
         }},
        {"eplb-balanced-load", SS::Experts, expert_parallel,
         [](SD& d) {
             d.doc.set("serving.expert_load", std::string("1"), "serving.ep");
             d.assumptions.push_back("balanced expert load (EPLB's placement; serving.expert_load 1)");
         }},
        // NIM's fp8 profiles are TensorRT-LLM engines built from TensorRT Model Optimizer fp8
        // checkpoints, whose post-training quantization quantizes the KV cache to fp8 unless told
        // otherwise (NVIDIA/TensorRT-Model-Optimizer examples/llm_ptq/hf_ptq.py and multinode_ptq.py:
        // --kv_cache_qformat default "fp8"). The NIM 1.8 Llama 3.3 70B fp8 TP2 sweep agrees: from
        // concurrency 100 on it decodes ~85 sequences at once (920 tokens/s x 93 ms ITL), each holding
        // over 5000 tokens, which needs ~70 GB of fp8 KV cache but ~139 GB in bf16, more than the
        // ~89 GB that 2 x 80 GB leave beside 70 GB of fp8 weights.
        // TensorRT-LLM fp8 (and fp4) engines as NVIDIA builds them for its published benchmarks
        // quantize the KV cache to fp8 too: docs/source/performance.md (0.6.1) builds every H100 FP8 engine with
        // `--enable_fp8 --fp8_kv_cache` ("To run the benchmarks below on A100, you will need to
        // remove the --enable_fp8 --fp8_kv_cache options"); later checkpoints come from Model
        // Optimizer, whose --kv_cache_qformat defaults to fp8 for fp8 and nvfp4 checkpoints alike
        // (the NIM rule below).
        {"trt-fp8-kv-cache", SS::Precision,
         [](const SD& d) {
             const std::string dtype = d.c.peek("precision.dtype");
             return d.engine == "tensorrt-llm" && !d.c.has("precision.kv_cache") && (dtype == "fp8" || dtype == "fp4");
         },
         [](SD& d) {
             d.doc.set("serving.kv_dtype", std::string("fp8"), "precision.dtype");
             d.assumptions.push_back(
                 "fp8 KV cache (TensorRT-LLM fp8 engines: --fp8_kv_cache in NVIDIA's benchmark "
                 "builds, Model Optimizer's fp8 kv_cache_qformat default)");
         }},
        {"nim-fp8-kv-cache", SS::Precision,
         [](const SD& d) {
             const std::string dtype = d.c.peek("precision.dtype");
             return d.nim && !d.c.has("precision.kv_cache") && (dtype == "fp8" || dtype == "fp4");
         },
         [](SD& d) {
             d.doc.set("serving.kv_dtype", std::string("fp8"), "precision.dtype");
             d.assumptions.push_back(
                 "fp8 KV cache (NIM fp8 profiles: Model Optimizer's fp8 checkpoints quantize it by default)");
         }},
        // A static batch on TensorRT-LLM's GptSession (gptSessionBenchmark, the 0.5-0.9 batch
        // benchmark): the session allocates its KV cache for the whole batch at its longest
        // sequence in setup (docs/source/gpt_runtime.md, "GptSession": buffers for maxBatchSize x
        // maxBeamWidth x maxSequenceLength), not a share of free memory as the paged pool of the
        // batch manager does; a batch that does not fit fails to run, so the published ones fit.
        {"trt-static-session-kv", SS::Batching,
         [](const SD& d) {
             return d.engine == "tensorrt-llm" && d.c.peek("serving.batching") == "static" &&
                    !d.c.has("serving.kv_cache_free_memory_fraction") && !d.c.has("serving.gpu_memory_fraction");
         },
         [](SD& d) {
             d.c.at("serving.batching");
             d.doc.set("serving.gpu_memory_utilization", std::string("1.0"), "serving.batching");
             d.doc.set("serving.memory_fraction_of", std::string("free"), "serving.batching");
             d.assumptions.push_back("static batch on GptSession: KV cache sized for the batch, up to all free memory");
         }},
        // TensorRT-LLM before 0.7.1 decodes GQA models with MMHA (each key/value head read once per
        // query head) unless its XQA kernel can run: XQA is opt-in from 0.6 (NVIDIA's published runs
        // enabled it, docs/source/performance.md of 0.6.1) and takes an fp8 KV cache only from 0.7.1
        // (release notes 0.7.1); workloads/engines/tensorrt-llm-0.7.yaml has the sources.
        {"trt-mmha-gqa", SS::Precision,
         [](const SD& d) {
             if (d.engine != "tensorrt-llm" || !d.c.has("serving.engine_version")) return false;
             const std::string v = d.c.peek("serving.engine_version");
             const auto vs_071 = plans::compare_engine_versions(v, "0.7.1");
             const auto vs_06 = plans::compare_engine_versions(v, "0.6");
             const std::string kv_heads = d.c.peek("model.kv_heads");  // GQA: fewer KV heads than heads
             if (!vs_071 || *vs_071 >= 0 || kv_heads.empty() || kv_heads == d.c.peek("model.heads")) return false;
             return *vs_06 < 0 || std::get<std::string>(d.planned("serving.kv_dtype")) == "fp8";
         },
         [](SD& d) {
             d.c.at("serving.engine_version");
             d.doc.set("serving.gqa_kv_sharing", false, "serving.engine_version");
             d.assumptions.push_back("decode attention without GQA sharing (TensorRT-LLM " +
                                     d.c.text("serving.engine_version") + " MMHA: no XQA for this KV cache)");
         }},
        // vLLM V0 without chunked prefill: max_num_batched_tokens = max(max_model_len, 2048)
        // (vllm-0.6.3 vllm/config.py SchedulerConfig), so that a whole prompt fits one step.
        {"vllm-v0-token-budget", SS::Batching,
         [](const SD& d) {
             return d.preset && d.preset->id == "vllm-v0" && !d.c.has("serving.max_num_batched_tokens");
         },
         [](SD& d) {
             const int64_t budget = std::max<int64_t>(std::get<int64_t>(d.planned("serving.max_model_len")), 2048);
             d.doc.set("serving.max_num_batched_tokens", budget, "serving.engine_version");
             d.assumptions.push_back("vLLM V0 token budget max(max_model_len, 2048) = " + std::to_string(budget));
         }},
        // vLLM with chunked prefill off schedules prefill-first iterations (its V0 default).
        {"vllm-no-chunked-prefill", SS::Batching,
         [](const SD& d) {
             return d.engine == "vllm" && d.c.has("serving.chunked_prefill") && !d.c.flag("serving.chunked_prefill");
         },
         [](SD& d) { d.doc.set("serving.policy", std::string("vllm"), "serving.chunked_prefill"); }},
    };
    return rules;
}

}  // namespace

const std::vector<ServingRule>& serving_rules() { return serving_rule_table(); }

void run_rules(ServingDraft& d, ServingStep step) {
    for (const auto& r : serving_rules())
        if (r.step == step && r.applies(d)) r.apply(d);
}

plans::KeyValue ServingDraft::planned(const std::string& key) const {
    if (doc.has(key)) return doc.value(key);
    workloads::serving::ServingPlan p;
    if (preset) preset->apply(p);
    return plans::get_serving_key(p, key);
}

std::vector<std::string> ServingDraft::pools() const {
    if (measured_pool.empty()) return {"serving"};
    return {"serving.disaggregation.prefill", "serving.disaggregation.decode"};
}

std::string ServingDraft::software() const { return lower(c.text("serving.software")); }

}  // namespace fathom::scenarios::measured
