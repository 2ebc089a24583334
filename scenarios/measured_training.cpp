// Training cases of a measured-format file as training scenarios: the case's model, cluster and
// parallel layout in scenario keys; the framework's stack preset (workloads/stacks/) for what the
// source leaves out; the framework's and schedule's behaviour by the named rules of
// measured_rules.h; each remaining gap filled by a rule stated as an assumption (micro-batch,
// uneven pipeline splits, the plausible vp range of an interleaved schedule without one). The
// memory savings a run that fitted must have had are left to plans::fit_memory (the settings the
// source leaves open go with the translation).
#include "plans/evaluate.h"
#include "scenarios/measured_blocks.h"
#include "scenarios/measured_kinds.h"
#include "scenarios/measured_rules.h"
#include "scenarios/measured_run.h"
#include "workloads/training/schedules/pipeline_schedule.h"
#include "workloads/training/step_costs.h"

namespace fathom::scenarios::measured {
namespace {

// The framework's stack preset first; what the case states overrides it.
void translate_stack(TrainingDraft& d, Translation& t) {
    d.framework = d.c.text("training.framework", "other");
    d.preset = d.catalog.stack_for_framework(d.framework);
    run_rules(d, TrainingStep::Stack);
    if (d.preset) d.doc.set("stack.preset", d.preset->id, "training.framework");
    else d.assumptions.push_back("no stack preset for framework '" + d.framework + "': fathom's defaults");
    t.stack = d.preset ? d.preset->id : "defaults";
}

void translate_layout(TrainingDraft& d) {
    const Case& c = d.c;
    d.doc.section_origin("parallel", "training");
    d.doc.section_origin("training", "training");
    d.doc.section_origin("stack", "training");
    d.doc.take(c, "training.tp", "parallel.tp");
    d.doc.take(c, "training.pp", "parallel.pp");
    if (c.has("training.cp")) d.doc.take(c, "training.cp", "parallel.cp");
    d.doc.take(c, "training.dp", "parallel.dp");
    if (c.has("training.vp")) d.doc.take(c, "training.vp", "parallel.vp");
    d.doc.take(c, "model.seq_len", "training.seq_len");
    d.doc.take(c, "training.global_batch_size", "training.global_batch_size");
    if (c.has("training.micro_batch_size")) d.doc.take(c, "training.micro_batch_size", "training.micro_batch_size");
    run_rules(d, TrainingStep::Batch);
    if (!d.doc.has("training.micro_batch_size")) {
        d.doc.set("training.micro_batch_size", int64_t{1}, "training");
        d.assumptions.push_back("micro_batch_size = 1 (not stated)");
    }
}

// grad_accum and batch_per_dp_rank restate the batch (global = dp x micro-batch x accumulation
// steps = dp x batch per rank): read as checks; a source that disagrees with itself is said, and
// its global batch simulated.
void check_batch(TrainingDraft& d, Translation& t) {
    const Case& c = d.c;
    const double global = static_cast<double>(d.planned_int("training.global_batch_size")),
                 dp = static_cast<double>(d.planned_int("parallel.dp")),
                 micro = static_cast<double>(d.planned_int("training.micro_batch_size"));
    if (c.has("training.grad_accum") && static_cast<double>(c.count("training.grad_accum")) * dp * micro != global)
        t.fill_ins.push_back("grad_accum " + c.text("training.grad_accum") +
                             " disagrees with global_batch_size / (dp x " +
                             "micro_batch_size): the global batch is simulated");
    if (c.has("training.batch_per_dp_rank") &&
        static_cast<double>(c.count("training.batch_per_dp_rank")) * dp != global)
        t.fill_ins.push_back("batch_per_dp_rank " + c.text("training.batch_per_dp_rank") +
                             " disagrees with global_batch_size / dp: the global batch is simulated");
}

// The pipeline schedule. An interleaved schedule whose source omits the virtual-stage count never
// runs as 1F1B: a framework rule gives it, or every vp that splits the stage's layers evenly into
// chunks is simulated (the range returned; the headline is the median prediction).
std::vector<int> translate_schedule(TrainingDraft& d) {
    const int64_t pp = d.planned_int("parallel.pp"), vp = d.planned_int("parallel.vp");
    std::string& sched = d.schedule;
    workloads::ParallelLayout layout;
    layout.vp = static_cast<int>(vp);
    sched = d.c.text("training.pp_schedule", workloads::default_schedule(layout));
    run_rules(d, TrainingStep::Interleave);
    std::vector<int> range;
    if (sched == "interleaved-1f1b" && !d.doc.has("parallel.vp") && pp > 1) {
        const int64_t layers = d.model.layers, per_stage = layers % pp == 0 ? layers / pp : 0;
        for (int64_t v = 2; v <= per_stage; ++v)
            if (per_stage % v == 0) range.push_back(static_cast<int>(v));
        if (range.empty())
            throw Unsupported{"interleaved schedule without vp, and " + std::to_string(layers) + " layers over pp " +
                              std::to_string(pp) + " leave no even split into chunks"};
        d.doc.set("parallel.vp", int64_t{range.front()}, "training.pp_schedule");
    }
    if (pp == 1) sched = "1f1b";
    if (!workloads::schedule_registry().find(sched))
        throw Unsupported{"pipeline schedule '" + sched + "' is not implemented yet"};
    d.doc.set("training.schedule", sched, "training.pp_schedule");
    run_rules(d, TrainingStep::Schedule);
    return range;
}

// Optimizer sharding, sequence parallelism and LoRA fine-tuning.
void translate_sharding(TrainingDraft& d) {
    const Case& c = d.c;
    if (c.has("training.zero_stage")) {
        d.doc.take(c, "training.zero_stage", "training.zero_stage");
    } else {
        const bool fsdp = c.has("training.fsdp") && c.flag("training.fsdp");
        d.fit.zero_stage = !fsdp;
        if (fsdp) d.doc.set("training.zero_stage", int64_t{3}, "training.fsdp");
        d.assumptions.push_back("zero_stage = " + std::to_string(d.planned_int("training.zero_stage")) + " (" +
                                (fsdp ? "fsdp" : d.framework + " default") + ")");
    }
    if (c.has("training.sequence_parallel")) d.doc.take(c, "training.sequence_parallel", "parallel.sequence_parallel");
    if (c.has("training.lora")) {
        // LoRA fine-tuning (measured-format `lora: {rank, alpha}`): adapters on every linear
        // projection (models/llm/lora.h); alpha only scales the update.
        c.count("training.lora.rank");
        d.doc.take(c, "training.lora.rank", "training.lora_rank");
        d.assumptions.push_back("LoRA adapters on every linear projection of the layers (PEFT all-linear)");
    }
}

void translate_experts(TrainingDraft& d) {
    const Case& c = d.c;
    if (d.model.moe.enabled()) {
        if (c.has("training.ep")) d.doc.take(c, "training.ep", "parallel.ep");
        if (c.has("training.etp")) d.doc.take(c, "training.etp", "parallel.etp");
        run_rules(d, TrainingStep::Experts);
    } else if (c.has("training.ep") && c.integer("training.ep", "parallel.ep") != 1) {
        throw Unsupported{"ep > 1 on a dense model"};
    }
}

// Recomputation, dtype and the kernels and overlaps the case states.
void translate_kernels(TrainingDraft& d) {
    const Case& c = d.c;
    if (c.has("training.recompute")) d.doc.take(c, "training.recompute", "training.recompute");
    if (c.has("training.recompute_num_layers"))
        d.doc.take(c, "training.recompute_num_layers", "training.recompute_num_layers");
    d.fit.recompute = !c.has("training.recompute");
    d.fit.grad_dtype = true;  // the format has no field for the main-gradient dtype
    const std::string dt =
        c.choice("precision.dtype", {"fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4", "int4"}, "bf16");
    if (dt != "bf16" && dt != "fp16" && dt != "fp8")
        throw Unsupported{"training GEMMs in " + dt + " are not simulated"};
    d.doc.set("stack.dtype", dt, "precision.dtype");
    // ep_comm_overlap: fathom's extension (scenarios/measured-format-fathom.md); a stated value replaces
    // what the rules read from the software description.
    for (const char* f : {"tp_comm_overlap", "dp_comm_overlap", "pp_comm_overlap", "ep_comm_overlap"})
        if (c.has(std::string("training.") + f)) d.doc.take(c, std::string("training.") + f, std::string("stack.") + f);
    if (c.has("training.flash_attention")) d.doc.take(c, "training.flash_attention", "stack.flash_attention");
    else if (!d.planned_bool("stack.flash_attention"))
        d.assumptions.push_back("unfused attention (Megatron-LM 2021 stack)");
    run_rules(d, TrainingStep::Kernels);
}

// Megatron-Core's pipeline split with the embedding and the loss each counted as a layer
// (--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split): when the
// layers fall 2 short of an even split, the first and the last piece hold one layer fewer. Megatron
// stacks of 2025 on (the MoE Model Zoo's Qwen3-235B config sets both for its 94 layers).
std::vector<int64_t> embedding_loss_split(const TrainingDraft& d, int64_t layers, int64_t pieces, int routes) {
    const bool megatron = d.preset && (d.preset->id == "megatron-lm" || d.preset->id == "megatron-bridge");
    if (!megatron || routes != 1 || pieces < 2 || (layers + 2) % pieces != 0 || (layers + 2) / pieces < 2) return {};
    std::vector<int64_t> split(static_cast<size_t>(pieces), (layers + 2) / pieces);
    --split.front();
    --split.back();
    return split;
}

// One scenario at `vp`: uneven pipeline splits count the embedding and the loss as layers where
// that evens them (embedding_loss_split), else give the first (layers mod stages) pieces one more
// layer (a bidirectional schedule keeps a copy of the model per route).
CaseScenario at_vp(const TrainingDraft& d, int vp) {
    CaseScenario s{d.doc.copy(), {}, vp};
    if (vp > 0) s.doc.set("parallel.vp", int64_t{vp}, "training.pp_schedule");
    const std::string sched = std::get<std::string>(s.doc.value("training.schedule"));
    const int64_t pp = d.planned_int("parallel.pp"),
                  v = s.doc.has("parallel.vp") ? std::get<int64_t>(s.doc.value("parallel.vp")) : 1;
    const int routes = workloads::schedule_registry().get(sched).factory()->routes();
    const int64_t stages = pp * v / routes;
    const int64_t layers = d.model.layers;
    if (stages > 0 && layers % stages != 0) {
        std::vector<int64_t> split = embedding_loss_split(d, layers, stages, routes);
        if (!split.empty()) {
            s.notes.push_back("uneven pipeline split of " + std::to_string(layers) +
                              " layers with the embedding and the loss each counted as a layer (Megatron-Core "
                              "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split): " +
                              std::to_string(split.front()) + ", " + std::to_string(split[1]) + " x " +
                              std::to_string(stages - 2) + ", " + std::to_string(split.back()));
        } else {
            for (int64_t i = 0; i < stages; ++i) split.push_back(layers / stages + (i < layers % stages ? 1 : 0));
            s.notes.push_back("uneven pipeline split of " + std::to_string(layers) + " layers");
        }
        s.doc.set_list("training.layers_per_stage", split, "training.pp");
    }
    return s;
}

Translation translate_training(const Case& c, const plans::EvaluationContext& ctx) {
    Translation t;
    TrainingDraft d(c, *ctx.catalog, t.assumptions);
    const std::string accelerator = translate_accelerator(c, d.catalog, d.doc, t.assumptions);
    if (c.has("training.cpu_offload") && c.flag("training.cpu_offload"))
        throw Unsupported{"CPU offload is not modelled yet"};
    d.doc.set("kind", std::string("training"));
    d.model = translate_model(c, d.doc, t.assumptions, t.fill_ins);
    translate_cluster(c, d.catalog, accelerator, d.doc, t.assumptions, t.fill_ins);
    translate_stack(d, t);
    translate_layout(d);
    check_batch(d, t);
    const std::vector<int> range = translate_schedule(d);
    translate_sharding(d);
    translate_experts(d);
    run_rules(d, TrainingStep::Software);
    translate_kernels(d);
    run_rules(d, TrainingStep::Fit);
    translate_run(c, d.catalog, accelerator, d.doc, t.assumptions);
    t.memory_fit = d.fit;
    t.cannot_run = [](const std::vector<plans::Violation>& v) { return "plan not expressible: " + v.front().message; };
    if (range.empty()) {
        t.scenarios.push_back(at_vp(d, 0));
    } else {
        t.range_key = "vp";
        t.range_what = "interleaved schedule without vp";
        for (int v : range) t.scenarios.push_back(at_vp(d, v));
    }
    return t;
}

// Model FLOPs of a step as the source counts them (measured-format.md `flops_convention`,
// `attention_flops`).
double flops_per_step(const Case& c, const models::ModelSpec& m, const workloads::TrainingPlan& p) {
    const std::string conv = c.choice("flops_convention", {"model", "hardware", "megatron_eq3"}, "model");
    if (conv == "megatron_eq3") {
        // Narayanan et al. SC21 Eq. 3 (full recomputation included).
        const double B = p.training.global_batch, s = static_cast<double>(p.training.seq_len),
                     l = static_cast<double>(m.layers), h = static_cast<double>(m.hidden),
                     V = static_cast<double>(m.vocab);
        return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
    }
    // The source's attention count; fathom's own is causal.
    const bool causal = c.choice("attention_flops", {"full", "causal"}, "causal") != "full";
    const double tokens = static_cast<double>(p.training.global_batch) * static_cast<double>(p.training.seq_len);
    const double model = workloads::training_model_flops_per_token(m, p, causal) * tokens;
    if (conv == "hardware" && p.training.recompute == workloads::Recompute::Full) return model * 4.0 / 3.0;
    return model;
}

// The value of the case's metric from a step report; Unsupported for metrics a step does not give.
double training_metric(const Case& c, const Evaluated& e, CompareResult& out) {
    const workloads::StepReport& r = *e.outcome->training();
    const auto& p = std::get<workloads::TrainingPlan>(e.scenario.plan);
    const models::ModelSpec& m = e.scenario.model;
    const hardware::ClusterSpec& cl = e.scenario.cluster;
    const std::string metric = c.text("metric");
    c.accept_deterministic_statistic();
    out.step_time_s = r.step_time_s;
    out.stages = r.stages;
    out.peak_memory_bytes = r.peak_memory_bytes;
    out.memory_capacity_bytes = r.memory_capacity_bytes;
    out.out_of_memory = r.out_of_memory;
    out.plan = p.describe();
    out.model = std::make_shared<const models::ModelSpec>(m);
    out.cluster = std::make_shared<const hardware::ClusterSpec>(cl);
    out.training_plan = std::make_shared<const workloads::TrainingPlan>(p);
    const double tokens = static_cast<double>(p.training.global_batch) * static_cast<double>(p.training.seq_len);
    const double gpus = cl.gpus();
    if ((metric == "model_tflops_per_gpu" || metric == "mfu_percent") && !c.has("attention_flops") &&
        c.text("flops_convention", "model") != "megatron_eq3")
        out.assumptions.push_back("attention FLOPs counted causal (the source's attention_flops is not stated)");
    const bool per_gpu = c.text("scope", "system") == "per_gpu";
    if (metric == "step_time_s") return r.step_time_s;
    if (metric == "tokens_per_s_per_gpu") return tokens / (r.step_time_s * gpus);
    if (metric == "tokens_per_s") return per_gpu ? tokens / (r.step_time_s * gpus) : tokens / r.step_time_s;
    if (metric == "samples_per_s") return p.training.global_batch / r.step_time_s / (per_gpu ? gpus : 1.0);
    if (metric == "model_tflops_per_gpu") return flops_per_step(c, m, p) / (r.step_time_s * gpus) / 1e12;
    if (metric == "mfu_percent") {
        const double peak =
            c.has("peak_tflops") ? c.number("peak_tflops") * 1e12 : cl.accelerator.peak(p.stack.kernels.gemm_dtype);
        return 100.0 * flops_per_step(c, m, p) / (r.step_time_s * gpus) / peak;
    }
    if (metric == "peak_memory_gib") return r.peak_memory_bytes / 1073741824.0;
    if (is_run_metric(metric)) return run_metric(c, e, out);
    throw Unsupported{"metric '" + metric + "' is not predicted for training"};
}

}  // namespace

const CaseKind& training_kind() {
    static const CaseKind kind{"training", translate_training, training_metric};
    return kind;
}

}  // namespace fathom::scenarios::measured
