// `fathom run` and `fathom validate` of an RL scenario (kind: rl): the loop's iteration time, its
// breakdown, throughput, each pool's use and the batches' staleness; --trace writes the
// iterations' timeline (a track per pool), --json the report.
#include "plans/evaluate.h"
#include "plans/report.h"
#include "plans/rl_evaluate.h"
#include "sim/error.h"
#include "tools/cli/cli.h"
#include "tools/cli/html.h"

#include <cstdio>
#include <iostream>
#include <sstream>

namespace fathom::cli {

int cmd_run_rl(const Args& a, const plans::Scenario& s, bool validate_only, const plans::EvaluationContext& ctx) {
    const auto& p = *s.rl();
    const auto& rl = p.rl;
    if (!a.requests.empty()) throw sim::InputError("--requests is for serving scenarios");
    const bool colocated = rl.layout == workloads::rl::Layout::Colocated;
    const int64_t rollout_gpus = rl.rollout_pool(s.cluster.gpus());
    if (validate_only) {
        std::cout << s.file << ": OK (" << s.model.name << ", RL on " << s.cluster.gpus() << " x "
                  << s.cluster.accelerator.id << ", " << sim::name(rl.layout) << ", " << rl.prompts << " prompts x "
                  << rl.samples << " samples)\n";
        return 0;
    }
    std::ostringstream trace;
    plans::EvaluateOptions opt;
    if (!a.trace.empty() || !a.html.empty()) opt.trace = &trace;
    Progress bar("rl: iterations");
    opt.progress = [&bar](int64_t done, int64_t total) { bar(done, total); };
    const plans::Outcome o = naming_file(s.file, [&] { return plans::evaluate(s, ctx, opt); });
    if (!o.ok()) throw plans::plan_error(o.violations, s.file);
    const auto& r = *o.rl();
    const auto& m = r.mean;
    std::printf("scenario        %s\n", s.name.c_str());
    std::printf("model           %s (%.1fB parameters)\n", s.model.name.c_str(), s.model.total_params(0) / 1e9);
    std::printf("layout          %s: rollout %lld x (tp %d pp %d) on %lld GPUs (%s), trainer %s on %lld GPUs\n",
                sim::name(rl.layout), static_cast<long long>(p.rollout.replica.replicas), p.rollout.replica.tp,
                p.rollout.replica.pp, static_cast<long long>(rollout_gpus),
                p.rollout.engine.preset.empty() ? "fathom defaults" : p.rollout.engine.preset.c_str(),
                r.trainer_layout.c_str(), static_cast<long long>(r.trainer_gpus));
    std::printf("batch           %lld prompts x %lld samples, %.0f response tokens on average; %s, staleness <= %d\n",
                static_cast<long long>(rl.prompts), static_cast<long long>(rl.samples), r.mean_response_tokens,
                rl.staleness > 0 ? "asynchronous" : "synchronous", rl.staleness);
    std::printf("\niteration       %.2f s (steady state over %zu simulated)\n", r.iteration_s, r.phases.size());
    std::printf("throughput      %.1f samples/s (%.3f per GPU), %.0f response tokens/s\n", r.samples_per_s,
                r.samples_per_s_per_gpu, r.response_tokens_per_s);
    std::printf("\n%-16s %10s\n", "phase (mean)", "seconds");
    std::printf("%-16s %10.2f  (%.2f s of it after 90%% of the answers: the long tail)\n", "rollout", m.rollout_s,
                m.tail_s);
    std::printf("%-16s %10.2f  (log-prob passes: %.2f of an update step each)\n", "forward", m.forward_s,
                r.forward_share);
    std::printf("%-16s %10.2f  (%lld optimizer steps of %lld packed sequences)\n", "update", m.update_s,
                static_cast<long long>(r.optimizer_steps), static_cast<long long>(r.update_sequences));
    std::printf("%-16s %10.2f  (%s, %s)\n", "weight sync", m.sync_s, sim::name(rl.sync), gib(r.sync_bytes).c_str());
    if (colocated) std::printf("%-16s %10.2f\n", "offload/reload", m.offload_s);
    std::printf("\nuse             rollout %.1f %%, trainer %.1f %% of the time\n", 100 * r.pipeline.rollout_busy,
                100 * r.pipeline.trainer_busy);
    std::printf("staleness       mean %.2f versions, max %zu\n", r.pipeline.mean_staleness,
                r.pipeline.staleness_counts.size() - 1);
    if (rl.shared_prompt)
        std::printf("shared prompt   update tokens / %.2f (DualKV's rho)\n", r.shared_prompt_reduction);
    std::printf(
        "rollout         %.0f output tokens/s, prefix hits %.1f %%, %.1f sequences per iteration, %lld "
        "preemptions\n",
        r.rollout.output_tokens_per_s, 100 * r.rollout.prefix_hit_rate, r.rollout.batch_size_mean,
        static_cast<long long>(r.rollout.preemptions));
    std::printf("update step     %.3f s, MFU %.1f %%, peak memory %s of %s%s\n", r.update.step_time_s,
                100 * r.update.mfu, gib(r.update.peak_memory_bytes).c_str(),
                gib(r.update.memory_capacity_bytes).c_str(), r.out_of_memory ? " (OUT OF MEMORY)" : "");
    print_device_model(s.cluster.accelerator);
    if (!a.trace.empty()) write_file(a.trace, trace.str());
    if (!a.json.empty() || !a.html.empty()) {
        const nlohmann::json j = report_json(plans::make_report(s, o, &ctx.catalog->intervals()));
        if (!a.json.empty()) write_json(a.json, j);
        write_html(a, s.name, &s, [&](report::Page& page) { report::add_rl(page, j, trace.str()); });
    }
    return 0;
}

}  // namespace fathom::cli
