#include "plans/search_report.h"

#include "plans/keys.h"
#include "plans/search_objective.h"
#include "workloads/serving/formats.h"

namespace fathom::plans {
namespace {

using C = Candidate;
using SC = ServingCandidate;

// When a record has a field.
template <typename X>
bool always(const X&, Objective) {
    return true;
}
template <typename X>
bool evaluated(const X& c, Objective) {
    return c.status == CandidateStatus::Evaluated;
}
template <typename X>
bool has_reason(const X& c, Objective) {
    return !c.reason.empty();
}
template <auto M, typename X>
bool positive(const X& c, Objective) {
    return c.*M > 0;
}
template <auto M, typename X>
bool evaluated_positive(const X& c, Objective o) {
    return evaluated(c, o) && c.*M > 0;
}
bool capacity_measured(const SC& c, Objective o) { return evaluated(c, o) && objective_rule(o).measures_capacity; }
bool autoscaled(const SC& c, Objective) { return c.plan.autoscale.enabled(); }

// A member's value as a field (integers as int64_t).
template <auto M, typename X>
FieldValue member(const X& c) {
    using V = std::remove_cv_t<std::remove_reference_t<decltype(c.*M)>>;
    if constexpr (std::is_integral_v<V> && !std::is_same_v<V, bool>) return static_cast<int64_t>(c.*M);
    else return c.*M;
}

// A value an evaluation stores, reported as it is.
template <auto M, typename X>
CandidateField<X> stored(const char* name, bool (*shown)(const X&, Objective)) {
    return {name, &member<M, X>, shown, M};
}

template <typename X>
FieldValue status_name(const X& c) {
    return std::string(sim::name(c.status));
}

}  // namespace

// Declarative table: the training candidate's fields.
const std::vector<CandidateField<C>>& training_candidate_fields() {
    using F = CandidateField<C>;
    static const std::vector<F> fields = {
        {"index", &member<&C::index, C>, always<C>},
        {"status", &status_name<C>, always<C>},
        {"dp", [](const C& c) -> FieldValue { return int64_t{c.plan.layout.dp}; }, always<C>},
        {"tp", [](const C& c) -> FieldValue { return int64_t{c.plan.layout.tp}; }, always<C>},
        {"pp", [](const C& c) -> FieldValue { return int64_t{c.plan.layout.pp}; }, always<C>},
        {"vp", [](const C& c) -> FieldValue { return int64_t{c.plan.layout.vp}; }, always<C>},
        {"cp", [](const C& c) -> FieldValue { return int64_t{c.plan.layout.cp}; }, always<C>},
        {"ep", [](const C& c) -> FieldValue { return int64_t{c.plan.layout.ep}; }, always<C>},
        {"micro_batch_size", [](const C& c) -> FieldValue { return int64_t{c.plan.training.micro_batch}; }, always<C>},
        {"global_batch_size", [](const C& c) -> FieldValue { return int64_t{c.plan.training.global_batch}; },
         always<C>},
        {"zero_stage", [](const C& c) -> FieldValue { return int64_t{c.plan.training.zero_stage}; }, always<C>},
        {"recompute", [](const C& c) -> FieldValue { return std::string(sim::name(c.plan.training.recompute)); },
         always<C>},
        {"schedule", [](const C& c) -> FieldValue { return c.plan.training.schedule; }, always<C>},
        {"dtype",
         [](const C& c) -> FieldValue { return std::get<std::string>(get_training_key(c.plan, "stack.dtype")); },
         always<C>},
        {"plan", [](const C& c) -> FieldValue { return c.plan.describe(); }, always<C>, nullptr, false},
        stored<&C::step_time_s>("step_time_s", evaluated<C>),
        stored<&C::tokens_per_s>("tokens_per_s", evaluated<C>),
        stored<&C::mfu>("mfu", evaluated<C>),
        {"peak_memory_gib", [](const C& c) -> FieldValue { return c.peak_memory_bytes / (1024.0 * 1024.0 * 1024.0); },
         positive<&C::peak_memory_bytes, C>, &C::peak_memory_bytes},
        stored<&C::statistical_efficiency>("statistical_efficiency", evaluated<C>),
        stored<&C::goodput_tokens_per_s>("goodput_tokens_per_s", evaluated<C>),
        stored<&C::usd_per_million_tokens>("usd_per_million_tokens", evaluated_positive<&C::usd_per_million_tokens, C>),
        {"pareto_throughput_memory", &member<&C::pareto_memory, C>, evaluated<C>},
        {"pareto_goodput_cost", &member<&C::pareto_cost, C>, evaluated<C>},
        {"reason", [](const C& c) -> FieldValue { return c.reason; }, has_reason<C>},
        // The estimate's memory capacity per GPU: kept beside the peak, not reported.
        stored<&C::capacity_bytes, C>("memory_capacity_bytes", nullptr),
    };
    return fields;
}

// Declarative table: the serving candidate's fields.
const std::vector<CandidateField<SC>>& serving_candidate_fields() {
    using F = CandidateField<SC>;
    // The first pool's shape (the search gives both pools the same).
    static const auto pool = [](const SC& c) -> const workloads::serving::PoolLayout& {
        return c.plan.disaggregated() ? *c.plan.prefill : c.plan.replica;
    };
    static const std::vector<F> fields = {
        {"index", &member<&SC::index, SC>, always<SC>},
        {"status", &status_name<SC>, always<SC>},
        {"layout", &member<&SC::layout, SC>, always<SC>},
        {"accelerator", [](const SC& c) -> FieldValue { return pool(c).accelerator.id; }, always<SC>},
        {"gpus", [](const SC& c) -> FieldValue { return int64_t{c.plan.gpus()}; }, always<SC>},
        {"tp", [](const SC& c) -> FieldValue { return int64_t{pool(c).tp}; }, always<SC>},
        {"pp", [](const SC& c) -> FieldValue { return int64_t{pool(c).pp}; }, always<SC>},
        {"replicas",
         [](const SC& c) -> FieldValue {
             const auto& p = c.plan;
             return int64_t{p.disaggregated() ? p.prefill->replicas + p.decode->replicas : p.replica.replicas};
         },
         always<SC>},
        {"prefill_replicas",
         [](const SC& c) -> FieldValue { return int64_t{c.plan.disaggregated() ? c.plan.prefill->replicas : 0}; },
         always<SC>},
        {"decode_replicas",
         [](const SC& c) -> FieldValue { return int64_t{c.plan.disaggregated() ? c.plan.decode->replicas : 0}; },
         always<SC>},
        {"policy", [](const SC& c) -> FieldValue { return c.plan.batching.policy; }, always<SC>},
        {"format", [](const SC& c) -> FieldValue { return workloads::serving::format_name(c.plan.kernels); },
         always<SC>},
        {"autoscale",
         [](const SC& c) -> FieldValue {
             return c.plan.autoscale.policy + ":" + sim::short_number(c.plan.autoscale.target);
         },
         autoscaled},
        {"max_num_seqs", [](const SC& c) -> FieldValue { return c.plan.batching.max_num_seqs; }, always<SC>},
        {"max_num_batched_tokens", [](const SC& c) -> FieldValue { return c.plan.batching.max_num_batched_tokens; },
         always<SC>},
        stored<&SC::slo_attainment>("slo_attainment", evaluated<SC>),
        {"meets_slo", [](const SC& c) -> FieldValue { return c.meets_slo(); }, evaluated<SC>},
        stored<&SC::goodput_requests_per_s>("goodput_requests_per_s", evaluated<SC>),
        {"goodput_requests_per_s_per_gpu", [](const SC& c) -> FieldValue { return c.goodput_requests_per_s / c.gpus; },
         evaluated<SC>},
        stored<&SC::requests_per_s>("requests_per_s", evaluated<SC>),
        stored<&SC::output_tokens_per_s>("output_tokens_per_s", evaluated<SC>),
        {"output_tokens_per_s_per_gpu", [](const SC& c) -> FieldValue { return c.output_tokens_per_s / c.gpus; },
         evaluated<SC>},
        stored<&SC::ttft_p50_s>("ttft_p50_s", evaluated<SC>),
        stored<&SC::ttft_p90_s>("ttft_p90_s", evaluated<SC>),
        stored<&SC::tpot_p50_s>("tpot_p50_s", evaluated<SC>),
        stored<&SC::tpot_p90_s>("tpot_p90_s", evaluated<SC>),
        stored<&SC::capacity_requests_per_s>("capacity_requests_per_s", capacity_measured),
        // Stored: an autoscaled candidate's is set by its evaluation (the GPUs it held on average).
        stored<&SC::usd_per_hour>("usd_per_hour", positive<&SC::usd_per_hour, SC>),
        stored<&SC::usd_per_1k_good_requests>("usd_per_1k_good_requests",
                                              evaluated_positive<&SC::usd_per_1k_good_requests, SC>),
        stored<&SC::joules_per_output_token>("joules_per_output_token_at_tdp",
                                             evaluated_positive<&SC::joules_per_output_token, SC>),
        stored<&SC::kv_tokens_per_replica>("kv_tokens_per_replica", positive<&SC::kv_tokens_per_replica, SC>),
        stored<&SC::gpu_hours>("gpu_hours", evaluated_positive<&SC::gpu_hours, SC>),
        stored<&SC::replicas_mean>("replicas_mean", evaluated_positive<&SC::replicas_mean, SC>),
        stored<&SC::score>("score", evaluated<SC>),
        {"pareto_goodput_cost", &member<&SC::pareto_cost, SC>, evaluated<SC>},
        {"pareto_throughput_ttft", &member<&SC::pareto_latency, SC>, evaluated<SC>},
        {"reason", [](const SC& c) -> FieldValue { return c.reason; }, has_reason<SC>},
    };
    return fields;
}

std::vector<std::string> add_interval_fields(std::vector<Record>& records, const std::string& field,
                                             const IntervalTable& bands, const std::string& regime,
                                             const hardware::AcceleratorSpec& acc) {
    if (!bands.band(regime)) return {};
    for (Record& r : records) {
        const FieldValue* v = r.find(field);
        if (!v || !std::holds_alternative<double>(*v)) continue;
        const auto i = interval_of(bands, regime, std::get<double>(*v), acc);
        r.add(field + "_low", i->low);
        r.add(field + "_high", i->high);
    }
    return {field + "_low", field + "_high"};
}

}  // namespace fathom::plans
