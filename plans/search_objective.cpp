#include "plans/search_objective.h"

#include "sim/error.h"

#include <limits>

namespace fathom::plans {

// Declarative table: every objective, in the order of its name table.
const std::vector<ObjectiveRule>& objective_rules() {
    static const std::vector<ObjectiveRule> rules = [] {
        ObjectiveRule goodput{Objective::Goodput};
        goodput.training_doc = "goodput (throughput x statistical efficiency)";
        goodput.serving_doc = "goodput (requests meeting the SLOs per second per GPU at the scenario's traffic)";
        goodput.needs_slo = goodput.slo_first = true;
        goodput.training_score = [](const Candidate& c) { return c.goodput_tokens_per_s; };
        goodput.serving_score = [](const ServingCandidate& c) { return c.goodput_requests_per_s / c.gpus; };
        goodput.rl_doc = "goodput (samples trained per second per GPU)";
        goodput.rl_score = [](const RlCandidate& c) { return c.samples_per_s_per_gpu; };

        ObjectiveRule throughput{Objective::Throughput};
        throughput.training_doc = "throughput";
        throughput.serving_doc = "throughput (output tokens/s per GPU)";
        throughput.training_score = [](const Candidate& c) { return c.tokens_per_s; };
        throughput.serving_score = [](const ServingCandidate& c) { return c.output_tokens_per_s / c.gpus; };
        throughput.rl_doc = "throughput (samples trained per second per GPU)";
        throughput.rl_score = [](const RlCandidate& c) { return c.samples_per_s_per_gpu; };

        ObjectiveRule cost{Objective::Cost};
        cost.training_doc = "cost per token";
        cost.serving_doc = "cost (USD per 1,000 requests meeting the SLOs)";
        cost.needs_price = cost.needs_slo = cost.slo_first = true;
        cost.rl_doc = "cost (USD per 1,000 samples)";
        cost.rl_score = [](const RlCandidate& c) {
            return c.usd_per_1k_samples > 0 ? -c.usd_per_1k_samples : -std::numeric_limits<double>::infinity();
        };
        cost.training_score = [](const Candidate& c) { return -c.usd_per_million_tokens; };
        cost.serving_score = [](const ServingCandidate& c) {
            return c.usd_per_1k_good_requests > 0 ? -c.usd_per_1k_good_requests
                                                  : -std::numeric_limits<double>::infinity();
        };

        ObjectiveRule capacity{Objective::Capacity};
        capacity.serving_doc =
            "capacity (the highest rate meeting slo.target, `fathom capacity`, per GPU or, with prices, per USD-hour)";
        capacity.needs_slo = capacity.measures_capacity = true;
        capacity.serving_score = [](const ServingCandidate& c) {
            return c.usd_per_hour > 0 ? c.capacity_requests_per_s / c.usd_per_hour
                                      : c.capacity_requests_per_s / static_cast<double>(c.gpus);
        };
        return std::vector<ObjectiveRule>{goodput, throughput, cost, capacity};
    }();
    return rules;
}

const ObjectiveRule& objective_rule(Objective objective) {
    for (const ObjectiveRule& r : objective_rules())
        if (r.objective == objective) return r;
    throw sim::InternalError(std::string("objective ") + sim::name(objective) + " has no entry in objective_rules()");
}

namespace {

bool ranks(const ObjectiveRule& r, WorkloadKind kind) {
    switch (kind) {
        case WorkloadKind::Training: return r.training_score != nullptr;
        case WorkloadKind::Serving: return r.serving_score != nullptr;
        case WorkloadKind::Rl: return r.rl_score != nullptr;
    }
    return false;
}

const char* doc_of(const ObjectiveRule& r, WorkloadKind kind) {
    switch (kind) {
        case WorkloadKind::Training: return r.training_doc;
        case WorkloadKind::Serving: return r.serving_doc;
        case WorkloadKind::Rl: return r.rl_doc;
    }
    return "";
}

// "a, b or c"
std::string names_ranking(WorkloadKind kind) {
    std::vector<std::string> names;
    for (const ObjectiveRule& r : objective_rules())
        if (ranks(r, kind)) names.push_back(sim::name(r.objective));
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return out;
}

// "a, b, or c", each objective's doc for `kind`
std::string docs_for(WorkloadKind kind) {
    std::vector<std::string> docs;
    for (const ObjectiveRule& r : objective_rules())
        if (ranks(r, kind)) docs.push_back(doc_of(r, kind));
    std::string out;
    for (size_t i = 0; i < docs.size(); ++i) out += (i == 0 ? "" : i + 1 == docs.size() ? ", or " : ", ") + docs[i];
    return out;
}

}  // namespace

std::string objective_refusal(Objective objective, WorkloadKind kind) {
    if (ranks(objective_rule(objective), kind)) return "";
    std::string others;
    for (WorkloadKind k : {WorkloadKind::Training, WorkloadKind::Serving, WorkloadKind::Rl})
        if (k != kind && ranks(objective_rule(objective), k))
            others += std::string(others.empty() ? "" : " and ") + sim::name(k);
    return std::string(sim::name(objective)) + " ranks " + others + " plans; " + sim::name(kind) + " plans rank by " +
           names_ranking(kind);
}

void check_objective(Objective objective, WorkloadKind kind, bool priced, bool has_slo) {
    const ObjectiveRule& r = objective_rule(objective);
    const std::string refusal = objective_refusal(objective, kind);
    if (!refusal.empty()) throw sim::InputError(refusal, "", 0, "search.objective");
    const bool serving = kind == WorkloadKind::Serving;
    if (r.needs_price && !priced)
        throw sim::InputError(
            std::string("ranking by ") + sim::name(objective) + " needs " +
                (serving ? "a price for every device type (search.price_per_gpu_hour or search.prices)"
                         : "search.price_per_gpu_hour"),
            "", 0, "search.objective");
    if (serving && r.needs_slo && !has_slo)
        throw sim::InputError(std::string("ranking serving plans by ") + sim::name(objective) +
                                  " needs an SLO: set slo.ttft and/or slo.tpot",
                              "", 0, "slo");
}

std::string objective_doc() {
    return "what ranks the plans. training: " + docs_for(WorkloadKind::Training) +
           "; serving: " + docs_for(WorkloadKind::Serving) + "; rl: " + docs_for(WorkloadKind::Rl);
}

}  // namespace fathom::plans
