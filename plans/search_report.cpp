#include "plans/search_report.h"

#include "plans/keys.h"

namespace fathom::plans {

Record training_candidate_record(const Candidate& c) {
    const auto& l = c.plan.layout;
    const auto& t = c.plan.training;
    Record r;
    r.add("index", c.index);
    r.add("status", std::string(sim::name(c.status)));
    r.add("dp", int64_t{l.dp});
    r.add("tp", int64_t{l.tp});
    r.add("pp", int64_t{l.pp});
    r.add("vp", int64_t{l.vp});
    r.add("cp", int64_t{l.cp});
    r.add("ep", int64_t{l.ep});
    r.add("micro_batch_size", int64_t{t.micro_batch});
    r.add("global_batch_size", int64_t{t.global_batch});
    r.add("zero_stage", int64_t{t.zero_stage});
    r.add("recompute", std::string(sim::name(t.recompute)));
    r.add("schedule", t.schedule);
    r.add("dtype", std::get<std::string>(get_training_key(c.plan, "stack.dtype")));
    r.add("plan", c.plan.describe());
    if (!c.reason.empty()) r.add("reason", c.reason);
    if (c.peak_memory_bytes > 0) r.add("peak_memory_gib", c.peak_memory_bytes / (1024.0 * 1024.0 * 1024.0));
    if (c.status == CandidateStatus::Evaluated) {
        r.add("step_time_s", c.step_time_s);
        r.add("tokens_per_s", c.tokens_per_s);
        r.add("mfu", c.mfu);
        r.add("statistical_efficiency", c.statistical_efficiency);
        r.add("goodput_tokens_per_s", c.goodput_tokens_per_s);
        if (c.usd_per_million_tokens > 0) r.add("usd_per_million_tokens", c.usd_per_million_tokens);
        r.add("pareto_throughput_memory", c.pareto_memory);
        r.add("pareto_goodput_cost", c.pareto_cost);
    }
    return r;
}

Record serving_candidate_record(const ServingCandidate& c, bool capacity) {
    const auto& p = c.plan;
    const auto& l = p.disaggregated() ? *p.prefill : p.replica;
    Record r;
    r.add("index", c.index);
    r.add("status", std::string(sim::name(c.status)));
    r.add("layout", c.layout);
    r.add("accelerator", l.accelerator.id);
    r.add("gpus", int64_t{p.gpus()});
    r.add("tp", int64_t{l.tp});
    r.add("pp", int64_t{l.pp});
    r.add("replicas", int64_t{p.disaggregated() ? p.prefill->replicas + p.decode->replicas : p.replica.replicas});
    r.add("prefill_replicas", int64_t{p.disaggregated() ? p.prefill->replicas : 0});
    r.add("decode_replicas", int64_t{p.disaggregated() ? p.decode->replicas : 0});
    r.add("policy", p.batching.policy);
    r.add("max_num_seqs", p.batching.max_num_seqs);
    r.add("max_num_batched_tokens", p.batching.max_num_batched_tokens);
    if (!c.reason.empty()) r.add("reason", c.reason);
    if (c.usd_per_hour > 0) r.add("usd_per_hour", c.usd_per_hour);
    if (c.kv_tokens_per_replica > 0) r.add("kv_tokens_per_replica", c.kv_tokens_per_replica);
    if (c.status == CandidateStatus::Evaluated) {
        r.add("slo_attainment", c.slo_attainment);
        r.add("meets_slo", c.meets_slo());
        r.add("goodput_requests_per_s", c.goodput_requests_per_s);
        r.add("goodput_requests_per_s_per_gpu", c.goodput_requests_per_s / c.gpus);
        r.add("requests_per_s", c.requests_per_s);
        r.add("output_tokens_per_s", c.output_tokens_per_s);
        r.add("output_tokens_per_s_per_gpu", c.output_tokens_per_s / c.gpus);
        r.add("ttft_p50_s", c.ttft_p50_s);
        r.add("ttft_p90_s", c.ttft_p90_s);
        r.add("tpot_p50_s", c.tpot_p50_s);
        r.add("tpot_p90_s", c.tpot_p90_s);
        if (c.usd_per_1k_good_requests > 0) r.add("usd_per_1k_good_requests", c.usd_per_1k_good_requests);
        if (c.joules_per_output_token > 0) r.add("joules_per_output_token_at_tdp", c.joules_per_output_token);
        if (capacity) r.add("capacity_requests_per_s", c.capacity_requests_per_s);
        r.add("score", c.score);
        r.add("pareto_goodput_cost", c.pareto_cost);
        r.add("pareto_throughput_ttft", c.pareto_latency);
    }
    return r;
}

const std::vector<std::string>& training_candidate_columns() {
    static const std::vector<std::string> c = {"index",
                                               "status",
                                               "dp",
                                               "tp",
                                               "pp",
                                               "vp",
                                               "cp",
                                               "ep",
                                               "micro_batch_size",
                                               "global_batch_size",
                                               "zero_stage",
                                               "recompute",
                                               "schedule",
                                               "dtype",
                                               "step_time_s",
                                               "tokens_per_s",
                                               "mfu",
                                               "peak_memory_gib",
                                               "statistical_efficiency",
                                               "goodput_tokens_per_s",
                                               "usd_per_million_tokens",
                                               "pareto_throughput_memory",
                                               "pareto_goodput_cost",
                                               "reason"};
    return c;
}

const std::vector<std::string>& serving_candidate_columns() {
    static const std::vector<std::string> c = {"index",
                                               "status",
                                               "layout",
                                               "accelerator",
                                               "gpus",
                                               "tp",
                                               "pp",
                                               "replicas",
                                               "prefill_replicas",
                                               "decode_replicas",
                                               "policy",
                                               "max_num_seqs",
                                               "max_num_batched_tokens",
                                               "slo_attainment",
                                               "meets_slo",
                                               "goodput_requests_per_s",
                                               "goodput_requests_per_s_per_gpu",
                                               "requests_per_s",
                                               "output_tokens_per_s",
                                               "output_tokens_per_s_per_gpu",
                                               "ttft_p50_s",
                                               "ttft_p90_s",
                                               "tpot_p50_s",
                                               "tpot_p90_s",
                                               "capacity_requests_per_s",
                                               "usd_per_hour",
                                               "usd_per_1k_good_requests",
                                               "joules_per_output_token_at_tdp",
                                               "kv_tokens_per_replica",
                                               "score",
                                               "pareto_goodput_cost",
                                               "pareto_throughput_ttft",
                                               "reason"};
    return c;
}

}  // namespace fathom::plans
