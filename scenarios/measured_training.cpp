// Training cases of a measured-format file: the case's model, cluster, parallel layout and
// framework become a training plan; the framework's stack preset (workloads/stacks/) supplies what
// the source leaves out, and each remaining gap is filled by a rule stated as an assumption
// (vocabulary by family, NIC generation, dispatcher and overlap from the software description,
// uneven pipeline splits, the plausible vp range of an interleaved schedule without one, and the
// memory savings a run that fitted must have had before any out-of-memory verdict).
#include "plans/catalog.h"
#include "plans/constraints.h"
#include "plans/evaluate.h"
#include "scenarios/measured_case.h"
#include "sim/error.h"
#include "workloads/training/schedules/pipeline_schedule.h"
#include "workloads/training/step_costs.h"
#include "workloads/training/training_memory.h"

#include <algorithm>
#include <cmath>

namespace fathom::scenarios::detail {
namespace {

// Predicts the value of `metric` from a step report; throws Unsupported for metrics a training
// step does not give.
double predict_metric(const YAML::Node& c, const std::string& metric, const workloads::StepReport& r,
                      const models::ModelSpec& m, const workloads::TrainingPlan& p, const hardware::ClusterSpec& cl) {
    const double tokens = static_cast<double>(p.training.global_batch) * static_cast<double>(p.training.seq_len);
    const double gpus = cl.gpus();
    const std::string scope = opt_str(c, "scope", "system");
    auto flops_per_step = [&]() {
        const std::string conv = choice(c, "", "flops_convention", {"model", "hardware", "megatron_eq3"}, "model");
        if (conv == "megatron_eq3") {
            // Narayanan et al. SC21 Eq. 3 (full recomputation included).
            const double B = p.training.global_batch, s = static_cast<double>(p.training.seq_len),
                         l = static_cast<double>(m.layers), h = static_cast<double>(m.hidden),
                         V = static_cast<double>(m.vocab);
            return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
        }
        // The source's attention count (measured-format.md `attention_flops`); fathom's own is causal.
        const bool causal = choice(c, "", "attention_flops", {"full", "causal"}, "causal") != "full";
        const double model = workloads::training_model_flops_per_token(m, p, causal) * tokens;
        if (conv == "hardware" && p.training.recompute == workloads::Recompute::Full) return model * 4.0 / 3.0;
        return model;
    };
    if (metric == "step_time_s") return r.step_time_s;
    if (metric == "tokens_per_s_per_gpu") return tokens / (r.step_time_s * gpus);
    if (metric == "tokens_per_s") return scope == "per_gpu" ? tokens / (r.step_time_s * gpus) : tokens / r.step_time_s;
    if (metric == "samples_per_s") return p.training.global_batch / r.step_time_s / (scope == "per_gpu" ? gpus : 1.0);
    if (metric == "model_tflops_per_gpu") return flops_per_step() / (r.step_time_s * gpus) / 1e12;
    if (metric == "mfu_percent") {
        const double peak = has(c, "peak_tflops") ? c["peak_tflops"].as<double>() * 1e12
                                                  : cl.accelerator.peak(p.stack.kernels.gemm_dtype);
        return 100.0 * flops_per_step() / (r.step_time_s * gpus) / peak;
    }
    if (metric == "peak_memory_gib") return r.peak_memory_bytes / 1073741824.0;
    throw Unsupported{"metric '" + metric + "' is not predicted for training"};
}

// The software-stack preset of a case's framework (workloads/stacks/). A megatron-lm case that names
// neither sequence parallelism nor a framework version is taken as the 2021 paper's stack (no
// sequence parallelism yet, unfused attention: both reached Megatron-LM together in 2022); a
// stated version (Primus's Megatron backend, the MoE Model Zoo's branches) is a current Megatron-Core.
const plans::StackPreset* case_preset(const YAML::Node& t, const std::string& fw, const plans::Catalog& cat) {
    if (fw == "megatron-lm" && !has(t, "sequence_parallel") && !has(t, "framework_version"))
        return &cat.stack("megatron-lm-2021");
    return cat.stack_for_framework(fw);
}

}  // namespace

CompareResult predict_training_case(const YAML::Node& c, const plans::EvaluationContext& ctx, CompareResult out) {
    const plans::Catalog& cat = *ctx.catalog;
    const YAML::Node hw = c["hardware"], cl = c["cluster"], t = c["training"], prec = c["precision"];
    const std::string accel = case_accelerator(hw, cat, out);
    if (has(t, "cpu_offload") && t["cpu_offload"].as<bool>()) throw Unsupported{"CPU offload is not modelled yet"};
    const models::ModelSpec model = case_model(c["model"], out.assumptions);

    plans::ClusterRequest req;
    req.accelerator = accel;
    req.nodes = positive_int(cl, "cluster", "nodes");
    req.gpus_per_node = positive_int(cl, "cluster", "gpus_per_node");
    const int gpus = positive_int(cl, "cluster", "gpus");
    if (gpus != req.nodes * req.gpus_per_node) {
        if (req.nodes != 1) throw Unsupported{"gpus != nodes x gpus_per_node"};
        req.gpus_per_node = gpus;  // a single node using fewer GPUs than it has
    }
    const std::string intra = opt_str(cl["intra_node"], "fabric");
    // A fabric family id names the accelerator's own generation of it where the catalog has
    // one (infinity-fabric-mesh on an MI355X is infinity-fabric-mesh-mi355x).
    const std::string own = cat.accelerators().at(accel).scale_up;
    if (accel.rfind("h800", 0) == 0) req.scale_up = "nvlink4-h800";
    else if (!intra.empty() && own.rfind(intra + "-", 0) == 0) req.scale_up = own;
    else if (!intra.empty() && cat.fabrics().count(intra)) req.scale_up = intra;
    const YAML::Node so = cl["scale_out"];
    const double per_gpu = has(so, "gb_per_s_per_gpu") ? so["gb_per_s_per_gpu"].as<double>() : 0.0;
    req.nic = choose_nic(so, accel, per_gpu);
    if (!has(so, "fabric") || !has(so, "gb_per_s_per_gpu")) out.assumptions.push_back("scale-out NIC: " + req.nic);
    req.nics_per_node = has(so, "nics_per_node") ? so["nics_per_node"].as<int>() : req.gpus_per_node;
    const hardware::ClusterSpec cluster = plans::build_cluster(req, cat);

    // The framework's stack first; what the case states overrides it.
    workloads::TrainingPlan p;
    const std::string fw = opt_str(t, "framework", "other");
    const plans::StackPreset* preset = case_preset(t, fw, cat);
    if (preset) preset->apply(p);
    else out.assumptions.push_back("no stack preset for framework '" + fw + "': fathom's defaults");
    out.stack = preset ? preset->id : "defaults";
    auto& l = p.layout;
    auto& tr = p.training;
    l.tp = positive_int(t, "training", "tp");
    l.pp = positive_int(t, "training", "pp");
    l.cp = has(t, "cp") ? positive_int(t, "training", "cp") : 1;
    l.dp = positive_int(t, "training", "dp");
    l.vp = has(t, "vp") ? positive_int(t, "training", "vp") : 1;
    tr.seq_len = c["model"]["seq_len"].as<int64_t>();
    tr.global_batch = positive_int(t, "training", "global_batch_size");
    if (has(t, "micro_batch_size")) {
        tr.micro_batch = positive_int(t, "training", "micro_batch_size");
    } else if (has(t, "batch_per_dp_rank") && fw == "torchtitan") {
        // torchtitan: no gradient accumulation; with pipeline parallelism the local batch is
        // split into pp micro-batches (its default microbatch count is the pipeline degree).
        const int local = positive_int(t, "training", "batch_per_dp_rank");
        tr.micro_batch = l.pp > 1 && local % l.pp == 0 ? local / l.pp : local;
        out.assumptions.push_back("micro_batch_size = " + std::to_string(tr.micro_batch) + " from batch_per_dp_rank" +
                                  (l.pp > 1 ? " / pp (torchtitan)" : " (torchtitan: no accumulation)"));
    } else {
        tr.micro_batch = 1;
        out.assumptions.push_back("micro_batch_size = 1 (not stated)");
    }
    std::string sched = opt_str(t, "pp_schedule", workloads::default_schedule(l));
    // An interleaved schedule whose source omits the virtual-stage count never runs as 1F1B:
    // torchtitan's rule gives it; otherwise every vp that splits the stage's layers evenly
    // into chunks is simulated and the range reported (headline: the median prediction).
    std::vector<int> vp_range;
    if (sched == "interleaved-1f1b" && !has(t, "vp") && l.pp > 1) {
        if (fw == "torchtitan") {
            l.vp = 2;  // torchtitan builds two stages per rank for multi-stage schedules
            out.assumptions.push_back("vp = 2 (torchtitan default for interleaved schedules)");
        } else {
            const int64_t per_stage = model.layers % l.pp == 0 ? model.layers / l.pp : 0;
            for (int64_t v = 2; v <= per_stage; ++v)
                if (per_stage % v == 0) vp_range.push_back(static_cast<int>(v));
            if (vp_range.empty())
                throw Unsupported{"interleaved schedule without vp, and " + std::to_string(model.layers) +
                                  " layers over pp " + std::to_string(l.pp) + " leave no even split into chunks"};
            l.vp = vp_range.front();
        }
    }
    if (l.pp == 1) sched = "1f1b";
    if (!workloads::schedule_registry().find(sched))
        throw Unsupported{"pipeline schedule '" + sched + "' is not implemented yet"};
    tr.schedule = sched;
    if (sched == "dualpipe") {
        // DualPipe holds two chunks per rank (its stage of each direction), and overlaps the
        // expert all-to-alls of each forward-backward pair with the other's compute (the
        // DeepSeek-V3 report, section 3.2.1 and Figure 4).
        if (!has(t, "vp")) {
            l.vp = 2;
            out.assumptions.push_back("vp = 2 (dualpipe: each rank's stage of both directions)");
        }
        if (model.moe.enabled()) {
            p.stack.ep_comm_overlap = true;
            out.assumptions.push_back("EP all-to-alls overlapped by dualpipe's forward-backward pairs");
        }
    }
    if (has(t, "zero_stage")) {
        tr.zero_stage = t["zero_stage"].as<int>();
    } else {
        const bool fsdp = has(t, "fsdp") && t["fsdp"].as<bool>();
        if (fsdp) tr.zero_stage = 3;
        out.assumptions.push_back("zero_stage = " + std::to_string(tr.zero_stage) + " (" +
                                  (fsdp ? "fsdp" : fw + " default") + ")");
    }
    if (has(t, "sequence_parallel")) l.sequence_parallel = t["sequence_parallel"].as<bool>();
    if (has(t, "lora")) {
        // LoRA fine-tuning (measured-format `lora: {rank, alpha}`): adapters on every linear
        // projection (models/llm/lora.h); alpha only scales the update.
        tr.lora_rank = positive_int(t["lora"], "training.lora", "rank");
        out.assumptions.push_back("LoRA adapters on every linear projection of the layers (PEFT all-linear)");
    }
    if (model.moe.enabled()) {
        l.ep = has(t, "ep") ? positive_int(t, "training", "ep") : 1;
        if (has(t, "etp")) {
            l.etp = positive_int(t, "training", "etp");
        } else if (l.tp > 1) {
            l.etp = l.tp;  // Megatron-Core: --expert-tensor-parallel-size defaults to the TP size
            out.assumptions.push_back("etp = tp = " + std::to_string(l.tp) + " (Megatron-Core default)");
        }
        if (l.tp > 1 && !l.sequence_parallel) {
            l.sequence_parallel = true;
            out.assumptions.push_back("sequence parallelism (Megatron-Core requires it for MoE with tp > 1)");
        }
        out.assumptions.push_back("balanced expert routing (moe_zipf 0, dropless)");
        // The token dispatcher and EP overlap have no field in the format; the software
        // description names them (Megatron-Core's flex dispatcher with a DeepEP or HybridEP
        // backend; "EP all-to-all overlap").
        std::string sw = opt_str(t, "software");
        std::transform(sw.begin(), sw.end(), sw.begin(),
                       [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        if (sw.find("deepep") != std::string::npos || sw.find("hybridep") != std::string::npos) {
            p.stack.moe_dispatcher = models::MoeDispatcher::DeepEp;
            out.assumptions.push_back("token dispatcher deepep (from the software description)");
        } else if (sw.find("custom cross-node all-to-all") != std::string::npos) {
            // The DeepSeek-V3 report (section 3.2.2): a token crosses IB once per target node
            // (to the GPU of the same in-node index) and is forwarded over NVLink, the dispatch
            // DeepEP implements.
            p.stack.moe_dispatcher = models::MoeDispatcher::DeepEp;
            out.assumptions.push_back(
                "token dispatcher deepep (the software's custom cross-node all-to-all: once per "
                "node over IB, then NVLink, as DeepEP)");
        }
        if (sw.find("ep all-to-all overlap") != std::string::npos &&
            sw.find("no ep all-to-all overlap") == std::string::npos) {
            p.stack.ep_comm_overlap = true;
            out.assumptions.push_back("EP all-to-all overlap (from the software description)");
        }
    } else if (has(t, "ep") && t["ep"].as<int>() != 1) {
        throw Unsupported{"ep > 1 on a dense model"};
    }
    {
        // Cross-entropy loss fusion has no field in the format either; the software description
        // names it (Primus: "TE cross-entropy loss fusion").
        std::string sw = opt_str(t, "software");
        std::transform(sw.begin(), sw.end(), sw.begin(),
                       [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        if (sw.find("cross-entropy loss fusion") != std::string::npos ||
            sw.find("cross entropy loss fusion") != std::string::npos) {
            p.stack.kernels.fused_cross_entropy = true;
            out.assumptions.push_back("fused cross-entropy loss (from the software description)");
        }
    }
    const std::string rc = choice(t, "training", "recompute", {"none", "selective", "full"}, "none");
    tr.recompute = rc == "full"        ? workloads::Recompute::Full
                   : rc == "selective" ? workloads::Recompute::Selective
                                       : workloads::Recompute::None;
    const std::string dt =
        choice(prec, "precision", "dtype", {"fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4", "int4"}, "bf16");
    if (dt != "bf16" && dt != "fp16" && dt != "fp8")
        throw Unsupported{"training GEMMs in " + dt + " are not simulated"};
    p.stack.kernels.gemm_dtype = dt == "fp8"    ? hardware::Dtype::fp8
                                 : dt == "fp16" ? hardware::Dtype::fp16
                                                : hardware::Dtype::bf16;
    if (has(t, "tp_comm_overlap")) p.stack.tp_comm_overlap = t["tp_comm_overlap"].as<bool>();
    if (has(t, "flash_attention")) p.stack.kernels.flash_attention = t["flash_attention"].as<bool>();
    else if (!p.stack.kernels.flash_attention) out.assumptions.push_back("unfused attention (Megatron-LM 2021 stack)");
    // PyTorch-native stacks without torch.compile run norms and activations unfused.
    if (has(t, "torch_compile") && !t["torch_compile"].as<bool>() && (fw == "torchtitan" || fw == "other"))
        p.stack.kernels.fused_elementwise = false;
    if (has(t, "dp_comm_overlap")) p.stack.dp_comm_overlap = t["dp_comm_overlap"].as<bool>();
    // One simulation of the plan as completed so far (uneven split, least recompute that fits).
    std::vector<std::string> plans_ran;
    std::vector<workloads::TrainingPlan> plans_ran_full;  // in step with plans_ran
    auto simulate = [&](workloads::TrainingPlan q, std::vector<std::string>& notes) {
        // Pieces of the model: a bidirectional schedule keeps a copy per route.
        const long stages = static_cast<long>(q.layout.pp) * q.layout.vp /
                            workloads::schedule_registry().get(q.training.schedule).factory()->routes();
        if (model.layers % stages != 0) {
            // Uneven split: the first (layers mod stages) virtual stages take one more layer.
            const int base = static_cast<int>(model.layers / stages), rem = static_cast<int>(model.layers % stages);
            for (long v = 0; v < stages; ++v) q.training.layers_per_virtual_stage.push_back(base + (v < rem ? 1 : 0));
            notes.push_back("uneven pipeline split of " + std::to_string(model.layers) + " layers");
        }
        const auto violations = plans::check_training_plan(model, cluster, q);
        if (!violations.empty()) throw Unsupported{"plan not expressible: " + violations.front().message};
        auto oom = [&] { return workloads::estimate_training_memory(model, cluster, q).out_of_memory; };
        // The source ran, so a plan that does not fit had some memory saving in effect. First
        // the framework's optimizer sharding where the source does not state it: ZeRO-1 (the
        // Megatron family's distributed optimizer keeps a full gradient buffer, so it stops
        // there), ZeRO-2 elsewhere (DeepSpeed); then bf16 main gradients where the source does
        // not state the gradient dtype (fp32 is Megatron's choice, not everyone's); then
        // recomputation (below).
        const bool megatron_family =
            fw == "nemo" || fw == "megatron-lm" || fw == "megatron-bridge" || fw == "megascale";
        if (!has(t, "zero_stage") && !(has(t, "fsdp") && t["fsdp"].as<bool>()) && q.layout.dp * q.layout.cp > 1 &&
            oom()) {
            const int stated = q.training.zero_stage;
            for (int z = std::max(1, stated + 1); z <= (megatron_family ? 1 : 2) && oom(); ++z)
                q.training.zero_stage = z;
            if (q.training.zero_stage != stated)
                notes.push_back("zero_stage " + std::to_string(q.training.zero_stage) +
                                ": the least optimizer sharding that fits (the framework default does not)");
        }
        if (!has(prec, "grad_dtype") && q.stack.main_grad_bytes() > 2 && oom()) {
            const workloads::GradDtype stated = q.stack.grad_dtype;
            q.stack.grad_dtype = workloads::GradDtype::Bf16;
            if (!oom()) notes.push_back("bf16 main gradients: fp32 ones do not fit");
            else q.stack.grad_dtype = stated;
        }
        if (!has(t, "recompute") && oom()) {
            // The source ran, so some memory saving was in effect: take the least recomputation
            // that fits (selective, with a MoE model selective plus the MoE blocks, then full)
            // and say so. The memory estimate needs no simulation.
            for (auto r :
                 {workloads::Recompute::Selective, workloads::Recompute::Selective, workloads::Recompute::Full}) {
                if (q.training.recompute == workloads::Recompute::Selective && r == workloads::Recompute::Selective) {
                    if (model.moe_layers() == 0) continue;
                    q.training.recompute_moe = true;
                }
                q.training.recompute = r;
                if (!oom()) break;
            }
            q.training.recompute_moe =
                q.training.recompute_moe && q.training.recompute == workloads::Recompute::Selective;
            notes.push_back(std::string("recompute not stated; ") + sim::name(q.training.recompute) +
                            (q.training.recompute_moe ? " with the MoE blocks" : "") + " is the least that fits");
        } else if (q.training.recompute == workloads::Recompute::Selective && oom()) {
            // Megatron-Core's selective recomputation names its modules (--recompute-modules); a
            // stated selective plan that only fits with more of them ran that way: latent
            // attention's up-projections first (cheap GEMMs from the kept latents; DeepSeek-V3
            // recomputes them), then the MoE blocks.
            if (model.mla.enabled()) {
                q.training.recompute_mla_up_proj = true;
                notes.push_back(
                    "selective recompute extended to the MLA up-projections (Megatron-Core "
                    "--recompute-modules mla_up_proj): the stated plan does not fit otherwise");
            }
            if (model.moe_layers() > 0 && oom()) {
                q.training.recompute_moe = true;
                notes.push_back(
                    "selective recompute extended to the MoE blocks (Megatron-Core --recompute-modules moe): "
                    "the stated plan does not fit otherwise");
            }
        }
        const plans::Outcome o = plans::evaluate_training(model, cluster, q, ctx);
        workloads::StepReport rep = *o.training();
        const double predicted = predict_metric(c, out.metric, rep, model, q, cluster);
        plans_ran.push_back(q.describe());  // in step with the successful runs
        plans_ran_full.push_back(q);
        return std::make_pair(predicted, std::move(rep));
    };
    std::pair<double, workloads::StepReport> run;
    if (vp_range.empty()) {
        run = simulate(p, out.assumptions);
        out.plan = plans_ran.back();
        out.training_plan = std::make_shared<const workloads::TrainingPlan>(plans_ran_full.back());
    } else {
        std::vector<std::pair<double, workloads::StepReport>> runs;
        std::vector<std::vector<std::string>> notes;
        std::vector<int> ran;
        std::string why;
        for (int v : vp_range) {
            workloads::TrainingPlan q = p;
            q.layout.vp = v;
            std::vector<std::string> n;
            try {
                runs.push_back(simulate(q, n));
                notes.push_back(std::move(n));
                ran.push_back(v);
            } catch (const Unsupported& u) {
                why = u.reason;
            }
        }
        if (runs.empty())
            throw Unsupported{"interleaved schedule without vp; no vp in the plausible range fits: " + why};
        std::vector<size_t> order(runs.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&runs](size_t a, size_t b) { return runs[a].first < runs[b].first; });
        const size_t mid = order[(order.size() - 1) / 2];
        run = runs[mid];
        out.plan = plans_ran[mid];
        out.training_plan = std::make_shared<const workloads::TrainingPlan>(plans_ran_full[mid]);
        out.range_key = "vp";
        out.range_values = ran;
        out.range_low = runs[order.front()].first;
        out.range_high = runs[order.back()].first;
        std::string vs;
        for (int v : ran) vs += (vs.empty() ? "" : ", ") + std::to_string(v);
        out.assumptions.push_back("interleaved schedule without vp: simulated vp in {" + vs +
                                  "}; headline vp = " + std::to_string(ran[mid]) + " (the median prediction)");
        out.assumptions.insert(out.assumptions.end(), notes[mid].begin(), notes[mid].end());
    }
    const workloads::StepReport& rep = run.second;
    out.predicted = run.first;
    if ((out.metric == "model_tflops_per_gpu" || out.metric == "mfu_percent") && !has(c, "attention_flops") &&
        opt_str(c, "flops_convention", "model") != "megatron_eq3")
        out.assumptions.push_back("attention FLOPs counted causal (the source's attention_flops is not stated)");
    out.error = (out.predicted - out.measured) / out.measured;
    out.step_time_s = rep.step_time_s;
    out.stages = rep.stages;
    out.peak_memory_bytes = rep.peak_memory_bytes;
    out.memory_capacity_bytes = rep.memory_capacity_bytes;
    out.out_of_memory = rep.out_of_memory;
    out.model = std::make_shared<const models::ModelSpec>(model);
    out.cluster = std::make_shared<const hardware::ClusterSpec>(cluster);
    return out;
}

}  // namespace fathom::scenarios::detail
