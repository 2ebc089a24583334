#pragma once
// What ranks a plan search's candidates (search.objective): one entry per objective in a registry,
// giving the searches it ranks (training, serving or both), what it needs (a price, an SLO: checked
// by check_objective, the one place), its score (higher is better) and how the serving ranking
// treats it. The searches, the key reference, the CLI and the Python package read the entry; no
// other code asks which objective it is.
#include "plans/rl_search.h"
#include "plans/scenario.h"
#include "plans/search.h"
#include "plans/search_space.h"
#include "plans/serving_search.h"

#include <string>
#include <vector>

namespace fathom::plans {

struct ObjectiveRule {
    Objective objective;
    // What it ranks each kind's plans by, in words; null where it does not rank that kind.
    const char* training_doc = nullptr;
    const char* serving_doc = nullptr;
    const char* rl_doc = nullptr;
    bool needs_price = false;  // training: search.price_per_gpu_hour; serving: a price for every device type
    bool needs_slo = false;    // serving: slo.ttft and/or slo.tpot
    // Serving: plans meeting slo.target rank first, the others after them by attainment.
    bool slo_first = false;
    // Serving: each evaluated candidate's capacity is bisected (plans/capacity.h), reported and
    // ranked, and the goodput-cost Pareto front takes it for goodput.
    bool measures_capacity = false;
    double (*training_score)(const Candidate&) = nullptr;
    double (*serving_score)(const ServingCandidate&) = nullptr;
    double (*rl_score)(const RlCandidate&) = nullptr;
};

// Declarative table: every objective, in the order of its name table.
const std::vector<ObjectiveRule>& objective_rules();
const ObjectiveRule& objective_rule(Objective objective);

// Why `objective` does not rank plans of `kind` ("capacity ranks serving plans; ..."); empty
// when it does.
std::string objective_refusal(Objective objective, WorkloadKind kind);

// Throws sim::InputError naming the key (search.objective, or slo) when `objective` does not rank
// plans of `kind`, or needs a price (`priced`: every device type searched has one) or an SLO
// (`has_slo`) that the scenario does not give.
void check_objective(Objective objective, WorkloadKind kind, bool priced, bool has_slo);

// The doc of search.objective: what each objective ranks each kind's plans by.
std::string objective_doc();

}  // namespace fathom::plans
