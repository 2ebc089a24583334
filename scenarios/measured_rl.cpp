// RL post-training cases (fathom's extension of measured-format v1: kind rl, the `rl` block,
// scenarios/measured-format-fathom.md) as RL scenarios: the case's model, devices and cluster by
// the shared block readers; the loop (batch, lengths, layout, staleness, forward passes) as rl.*
// keys; the rollout engine as a serving section (the engine's newest preset); the trainer as a
// training plan (the backend's stack preset). The metrics are the iteration's time and its phases
// as the frameworks time them (verl's timing_s/gen, old_log_prob, update_actor; NeMo-RL's step
// time, which includes training, generation, log-probabilities and refit).
#include "plans/rl_evaluate.h"
#include "scenarios/measured_blocks.h"
#include "scenarios/measured_kinds.h"

#include <cstdio>

namespace fathom::scenarios::measured {
namespace {

// A length block (rl.prompt_len, rl.response_len) as the scenario's distribution keys. The
// format's mean is the lengths' as measured, the cap included (what frameworks log): a normal or
// lognormal with a max is scaled, its coefficient of variation kept, until its capped mean is that
// (a scenario's mean is the distribution's own, before the cap).
void take_length(const Case& c, ScenarioDoc& doc, const std::string& from, const std::string& to,
                 std::vector<std::string>& assumptions) {
    if (!c.has(from)) c.fail(from, "required for kind rl (the tokens of each prompt or answer)");
    for (const char* f : {"distribution", "value", "min", "max", "mean", "stddev"}) {
        const std::string path = from + "." + f;
        if (!c.has(path)) continue;
        const std::string key = to + "." + f;
        doc.take(c, path, key);
    }
    const std::string kind = c.text(from + ".distribution", "fixed");
    if ((kind != "lognormal" && kind != "normal") || !c.has(from + ".max") || !c.has(from + ".mean")) return;
    workloads::LengthDistribution d;
    d.kind = kind == "lognormal" ? workloads::LengthKind::Lognormal : workloads::LengthKind::Normal;
    const double mean = c.number(from + ".mean"), sd = c.has(from + ".stddev") ? c.number(from + ".stddev") : 0;
    d.max = c.integer(from + ".max", to + ".max");
    if (mean >= static_cast<double>(d.max)) c.fail(from + ".mean", "a capped mean must be below max");
    auto capped = [&](double f) {
        d.mean = mean * f;
        d.stddev = sd * f;
        return d.expected();
    };
    double lo = 1, hi = 1;
    while (capped(hi) < mean && hi < 1e6) hi *= 2;
    for (int i = 0; i < 100 && hi - lo > 1e-9 * hi; ++i) (capped((lo + hi) / 2) < mean ? lo : hi) = (lo + hi) / 2;
    const double f = (lo + hi) / 2;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: mean %.0f and stddev %.0f before the cap at %lld (capped mean %.0f)",
                  from.c_str(), mean * f, sd * f, static_cast<long long>(d.max), mean);
    assumptions.push_back(buf);
    doc.set(to + ".mean", std::to_string(mean * f), from + ".mean");
    if (sd > 0) doc.set(to + ".stddev", std::to_string(sd * f), from + ".stddev");
}

void translate_loop(const Case& c, ScenarioDoc& doc, std::vector<std::string>& assumptions) {
    doc.section_origin("rl", "rl");
    doc.take(c, "rl.prompts", "rl.prompts");
    doc.take(c, "rl.samples", "rl.samples");
    take_length(c, doc, "rl.prompt_len", "rl.prompt", assumptions);
    take_length(c, doc, "rl.response_len", "rl.response", assumptions);
    const std::string layout = c.choice("rl.layout", {"colocated", "disaggregated"}, "colocated");
    doc.set("rl.layout", layout, "rl.layout");
    if (layout == "disaggregated") doc.take(c, "rl.rollout.gpus", "rl.rollout_gpus");
    for (const char* f : {"staleness", "minibatches", "epochs", "reference", "sync", "offload_trainer"})
        if (c.has(std::string("rl.") + f)) doc.take(c, std::string("rl.") + f, std::string("rl.") + f);
    if (c.has("rl.critic") && c.flag("rl.critic"))
        throw Unsupported{"a PPO critic of the case's own shape (rl.critic names a catalog model in a scenario)"};
    const std::string algorithm = c.choice("rl.algorithm", {"grpo", "dapo", "ppo", "other"}, "grpo");
    if (algorithm == "ppo") throw Unsupported{"PPO's critic is not described by the case"};
    if (!c.has("rl.reference")) assumptions.push_back("no reference-policy pass (rl.reference not stated)");
}

void translate_rollout(const Case& c, ScenarioDoc& doc, std::vector<std::string>& assumptions) {
    doc.section_origin("serving", "rl.rollout");
    const std::string engine = c.choice("rl.rollout.engine", {"vllm", "sglang"}, "vllm");
    doc.set("serving.engine", engine, "rl.rollout.engine");
    assumptions.push_back("rollout engine: fathom's " + engine + " preset (its newest)");
    doc.take(c, "rl.rollout.tp", "serving.tp");
    if (c.has("rl.rollout.pp")) doc.take(c, "rl.rollout.pp", "serving.pp");
    if (c.has("rl.rollout.gpu_memory_fraction"))
        doc.take(c, "rl.rollout.gpu_memory_fraction", "serving.gpu_memory_utilization");
    if (c.has("rl.rollout.max_model_len")) doc.take(c, "rl.rollout.max_model_len", "serving.max_model_len");
    // Every answer of a prompt shares it: vLLM V1 and SGLang cache prefixes by default.
    doc.set("serving.prefix_caching", true, "rl.rollout");
    assumptions.push_back("prefix caching on (vLLM V1's and SGLang's default): a prompt prefilled once per replica");
}

void translate_trainer(const Case& c, ScenarioDoc& doc, Translation& t) {
    doc.section_origin("parallel", "rl.trainer");
    doc.section_origin("training", "rl.trainer");
    doc.section_origin("stack", "rl.trainer");
    const std::string backend = c.choice("rl.trainer.backend", {"megatron", "fsdp"}, "megatron");
    // Megatron-Core (NeMo-RL's, verl's megatron backend); FSDP2 (verl's fsdp2, torchtitan's).
    t.stack = backend == "megatron" ? "megatron-lm" : "torchtitan";
    doc.set("stack.preset", t.stack, "rl.trainer.backend");
    t.assumptions.push_back("trainer stack: fathom's " + t.stack + " preset for the " + backend + " backend");
    for (const char* f : {"tp", "pp", "cp", "ep"})
        if (c.has(std::string("rl.trainer.") + f))
            doc.take(c, std::string("rl.trainer.") + f, std::string("parallel.") + f);
    if (c.has("rl.trainer.dp")) doc.take(c, "rl.trainer.dp", "parallel.dp");
    if (c.has("rl.trainer.sequence_parallel"))
        doc.take(c, "rl.trainer.sequence_parallel", "parallel.sequence_parallel");
    doc.take(c, "rl.trainer.seq_len", "training.seq_len");
    if (c.has("rl.trainer.micro_batch_size")) doc.take(c, "rl.trainer.micro_batch_size", "training.micro_batch_size");
    else {
        doc.set("training.micro_batch_size", int64_t{1}, "rl.trainer");
        t.assumptions.push_back("micro_batch_size = 1 (not stated)");
    }
    if (c.has("rl.trainer.zero_stage")) doc.take(c, "rl.trainer.zero_stage", "training.zero_stage");
    else if (backend == "fsdp") doc.set("training.zero_stage", int64_t{3}, "rl.trainer.backend");
    else {
        doc.set("training.zero_stage", int64_t{1}, "rl.trainer.backend");
        t.assumptions.push_back("zero_stage = 1 (Megatron's distributed optimizer)");
    }
    if (c.has("rl.trainer.recompute")) doc.take(c, "rl.trainer.recompute", "training.recompute");
    const std::string dt = c.choice("precision.dtype", {"bf16", "fp16", "fp8"}, "bf16");
    doc.set("stack.dtype", dt, "precision.dtype");
}

Translation translate_rl(const Case& c, const plans::EvaluationContext& ctx) {
    Translation t;
    ScenarioDoc doc;
    doc.set("kind", std::string("rl"));
    translate_model(c, doc, t.assumptions, t.fill_ins);
    const std::string accelerator = translate_accelerator(c, *ctx.catalog, doc, t.assumptions);
    std::vector<std::string> nic;
    if (translate_cluster(c, *ctx.catalog, accelerator, doc, nic, t.fill_ins) > 1)
        t.fill_ins.insert(t.fill_ins.end(), nic.begin(), nic.end());
    translate_loop(c, doc, t.assumptions);
    translate_rollout(c, doc, t.assumptions);
    translate_trainer(c, doc, t);
    t.cannot_run = [](const std::vector<plans::Violation>& v) { return "the plan cannot run: " + plans::describe(v); };
    t.scenarios.push_back(CaseScenario{doc, {}, 0});
    return t;
}

double rl_metric(const Case& c, const Evaluated& e, CompareResult& out) {
    const workloads::rl::RlReport& r = *e.outcome->rl();
    char line[3][256];
    std::snprintf(line[0], sizeof line[0],
                  "iteration %.1f s: rollout %.1f (tail %.1f), forward %.1f, update %.1f, sync %.2f, offload %.2f",
                  r.iteration_s, r.mean.rollout_s, r.mean.tail_s, r.mean.forward_s, r.mean.update_s, r.mean.sync_s,
                  r.mean.offload_s);
    std::snprintf(line[1], sizeof line[1],
                  "rollout %.0f output tokens/s, %.1f sequences an iteration, %lld preemptions; update MFU %.1f%%%s",
                  r.rollout.output_tokens_per_s, r.rollout.batch_size_mean,
                  static_cast<long long>(r.rollout.preemptions), 100 * r.update.mfu,
                  r.out_of_memory ? ", OUT OF MEMORY" : "");
    std::snprintf(line[2], sizeof line[2], "answers %.1f tokens on average over %zu iterations", r.mean_response_tokens,
                  r.phases.size());
    out.run_summary = {line[0], line[1], line[2]};
    c.accept_deterministic_statistic();
    const std::string metric = c.text("metric");
    if (metric == "rl_step_time_s") return r.iteration_s;
    if (metric == "rl_generation_s") return r.mean.rollout_s;
    if (metric == "rl_update_s") return r.mean.update_s;
    if (metric == "rl_logprob_s") return r.mean.forward_s;
    if (metric == "rl_sync_s") return r.mean.sync_s;
    throw Unsupported{"metric '" + metric + "' is not predicted for rl"};
}

}  // namespace

const CaseKind& rl_kind() {
    static const CaseKind kind{"rl", translate_rl, rl_metric};
    return kind;
}

}  // namespace fathom::scenarios::measured
