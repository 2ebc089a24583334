// `fathom run` of a serving scenario: the summary's lines of the mechanisms a plan turns on (the
// prefix cache and its offload tiers, multi-LoRA, speculative decoding).
#include "tools/cli/cli.h"
#include "workloads/serving/serving_plan.h"

#include <cstdio>
#include <string>

namespace fathom::cli {
namespace {

// Speculative decoding's line of the serving summary.
void print_speculative(const workloads::serving::ServingPlan& p) {
    if (p.speculative.enabled() && p.speculative.positions.empty())
        std::printf("speculative     %s, %d drafts a decode accepted at %.3f each: %.2f tokens a verification\n",
                    std::string(sim::name(p.speculative.method)).c_str(), p.speculative.tokens, p.speculative.rate(),
                    p.speculative.mean_tokens());
    if (p.speculative.enabled() && !p.speculative.positions.empty())
        std::printf("speculative     %s, %d drafts a decode accepted as profile %s: %.2f tokens a verification\n",
                    std::string(sim::name(p.speculative.method)).c_str(), p.speculative.tokens,
                    p.speculative.acceptance_profile.c_str(), p.speculative.mean_tokens());
}

// Multi-LoRA serving's line of the serving summary.
void print_lora(const workloads::serving::ServingPlan& p, const workloads::serving::ServingReport& r) {
    if (!p.lora.enabled()) return;
    std::printf(
        "lora            %lld adapters of rank %lld (Zipf %.2f), %lld GPU slots of rank %lld, %s "
        "admission; %lld loads into slots\n",
        static_cast<long long>(p.lora.adapters), static_cast<long long>(p.lora.rank), p.lora.popularity,
        static_cast<long long>(p.lora.max_loras), static_cast<long long>(p.lora.slot_rank()),
        std::string(sim::name(p.lora.admission)).c_str(), static_cast<long long>(r.lora_loads));
}

// Autoscaling's lines: the replicas held over the run, its GPU-hours and a cold start's parts.
void print_autoscale(const workloads::serving::ServingPlan& p, const workloads::serving::ServingReport& r) {
    if (!r.autoscale) return;
    const auto& a = *r.autoscale;
    std::printf(
        "autoscale       %s (target %s), %lld..%lld replicas: %.2f held on average, %lld at most; %lld started, "
        "%lld drained\n",
        p.autoscale.policy.c_str(), sim::short_number(p.autoscale.target).c_str(),
        static_cast<long long>(p.autoscale.min_replicas), static_cast<long long>(p.replica.replicas), a.replicas_mean,
        static_cast<long long>(a.replicas_peak), static_cast<long long>(a.scale_ups),
        static_cast<long long>(a.scale_downs));
    std::printf("GPU-hours       %.2f (%lld GPUs a replica); a cold start %.1f s\n", a.gpu_hours,
                static_cast<long long>(int64_t{p.replica.tp} * p.replica.pp), a.cold_start_s);
}

}  // namespace

void print_serving_mechanisms(const workloads::serving::ServingPlan& p, const workloads::serving::ServingReport& r) {
    if (p.kv.prefix_caching && r.offload_hit_rate < 0)
        std::printf("prefix cache    %.1f %% of prompt tokens hit\n", 100 * r.prefix_hit_rate);
    if (p.kv.prefix_caching && r.offload_hit_rate >= 0) {
        std::string from;
        if (r.offload_ssd_hit_rate >= 0) from += sim::short_number(100 * r.offload_ssd_hit_rate) + " % from NVMe";
        if (r.store_hit_rate >= 0 && p.kv.offload_bytes > 0)
            from += (from.empty() ? "" : ", ") + sim::short_number(100 * r.store_hit_rate) + " % from the shared store";
        std::printf("prefix cache    %.1f %% of prompt tokens hit on the GPU, %.1f %% loaded from %s%s\n",
                    100 * r.prefix_hit_rate, 100 * r.offload_hit_rate,
                    p.kv.offload_bytes > 0 ? "host memory" : "the shared store",
                    from.empty() ? "" : (" (" + from + ")").c_str());
    }
    if (!r.ttft_by_tier.empty()) {
        std::printf("ttft by source ");
        const char* sep = " ";
        for (const auto& t : r.ttft_by_tier) {
            std::printf("%s%s (%lld requests) p50 %.1f p90 %.1f ms", sep, t.source.c_str(),
                        static_cast<long long>(t.requests), 1e3 * t.ttft_s.p50, 1e3 * t.ttft_s.p90);
            sep = "; ";
        }
        std::printf("\n");
    }
    print_lora(p, r);
    print_speculative(p);
    print_autoscale(p, r);
}

}  // namespace fathom::cli
