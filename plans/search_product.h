#pragma once
// The one product the plan searches cross (training and serving alike): each axis of the search key
// table (plans/search_keys.h) that searches Plan, with the values the section gives or those of its
// default rule, crossed in the table's order (the first axis varies slowest, each in its values'
// order); each candidate starts as a copy of the search's starting plan and takes each axis's value
// through the plan key the axis sets. Then the search's derived settings (`derive`), then its
// pruning rules: named predicates, listed in a table, that drop a combination before it is a
// candidate (a layout that does not factor the GPU count, a duplicate that another stands for).
#include "plans/keys.h"
#include "plans/search_keys.h"
#include "sim/error.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace fathom::plans {

// One axis of a search, resolved: its declaration, the plan key it sets and its values.
template <typename Plan>
struct SearchAxis {
    const SearchKey* key = nullptr;
    const AxisRule<Plan>* rule = nullptr;
    const Key<Plan>* sets = nullptr;
    std::vector<KeyValue> values;
    bool given = false;  // by the section (else its default rule's)
};

// A combination of axis values as a pruning rule sees it: the candidate plan, and the value each
// axis gave it.
template <typename Plan>
struct SearchPoint {
    const Plan& plan;
    const SearchBase& base;
    const std::vector<SearchAxis<Plan>>& axes;
    const std::vector<size_t>& at;  // the index of each axis's value

    const SearchAxis<Plan>& axis(const std::string& path) const {
        for (const auto& a : axes)
            if (a.key->info.path == path) return a;
        throw sim::InternalError("no search axis " + path);
    }
    const KeyValue& value(const std::string& path) const {
        const auto& a = axis(path);
        return a.values[at[static_cast<size_t>(&a - axes.data())]];
    }
    int64_t integer(const std::string& path) const { return std::get<int64_t>(value(path)); }
    // Whether the axis's value equals its first value (which stands for the others where they
    // cannot differ).
    bool first(const std::string& path) const { return value(path) == axis(path).values.front(); }
};

// A pruning rule: a name, why it drops a combination (in words), and the test.
template <typename Plan>
struct PruneRule {
    const char* name;
    const char* reason;
    bool (*drops)(const SearchPoint<Plan>& point);
};

template <typename Plan>
struct Crossed {
    std::vector<Plan> plans;       // in the product's order
    std::vector<int64_t> dropped;  // by each pruning rule (the first that drops a combination)
    bool full = false;             // stopped at CrossLimits::max_plans with combinations left
    bool timed_out = false;        // stopped at CrossLimits::deadline
};

// The most combinations of axis values a search may cross (before pruning): 10M, enumerated in
// about 1.5 s (measured: 64 tp x 80 pp x 20 vp x 20 micro-batch x 5 global batch values of the
// Llama 3 70B search example, 1.4 s to 42,700 candidates on this project's 2-core machine). A
// space past it is refused before enumeration, naming its axes (786M combinations ran for minutes
// into gigabytes), unless a deadline (a search's time limit) bounds the enumeration.
constexpr int64_t kMaxCombinations = 10'000'000;

// Where the enumeration stops early: after max_plans candidates, or at the deadline (checked every
// 4096 combinations).
struct CrossLimits {
    size_t max_plans = std::numeric_limits<size_t>::max();
    std::optional<std::chrono::steady_clock::time_point> deadline;
};

inline const std::vector<Key<workloads::TrainingPlan>>& plan_keys_of(const workloads::TrainingPlan*) {
    return training_plan_keys();
}
inline const std::vector<Key<workloads::serving::ServingPlan>>& plan_keys_of(const workloads::serving::ServingPlan*) {
    return serving_plan_keys();
}
inline const std::vector<Key<workloads::rl::RlPlan>>& plan_keys_of(const workloads::rl::RlPlan*) {
    return rl_search_plan_keys();
}

// The axes of `keys` that search Plan, with their values: those `base.space` gives, else their
// default rule's around `scenario`. An axis the space gives that does not search Plan is an
// InputError naming it.
template <typename Plan>
std::vector<SearchAxis<Plan>> resolve_axes(const std::vector<SearchKey>& keys, const SearchBase& base,
                                           const Plan& scenario) {
    const Plan* kind = nullptr;
    std::vector<SearchAxis<Plan>> out;
    for (const SearchKey& k : keys) {
        const AxisRule<Plan>* rule = k.rule(kind);
        if (!rule) continue;
        SearchAxis<Plan> a;
        a.key = &k;
        a.rule = rule;
        for (const auto& pk : plan_keys_of(kind))
            if (pk.info.path == rule->sets) a.sets = &pk;
        if (!a.sets) throw sim::InternalError(k.info.path + " sets an unknown plan key " + rule->sets);
        const std::vector<KeyValue>* given = base.space.given(k.info.path);
        a.given = given != nullptr;
        a.values = given ? *given : rule->defaults(base, scenario);
        out.push_back(std::move(a));
    }
    for (const auto& [path, values] : base.space.axes) {
        const SearchKey* k = find_search_key(path, keys);
        if (!values.empty() && (!k || !k->rule(kind))) throw sim::InputError("not an axis of this search", "", 0, path);
    }
    return out;
}

// Sets the plan key an axis sets to `value` on `plan`, checked against the plan key's declaration.
template <typename Plan>
void set_axis_key(Plan& plan, const Key<Plan>& key, const KeyValue& value) {
    const std::string why = check_value(key.info, value);
    if (!why.empty()) throw sim::InputError(why, "", 0, key.info.path);
    key.set(plan, value);
}

namespace detail {

template <typename Plan, typename Derive>
struct Product {
    const std::vector<SearchAxis<Plan>>& axes;
    const SearchBase& base;
    Derive derive;
    const std::vector<PruneRule<Plan>>& rules;
    CrossLimits limits;
    std::vector<Plan> level;  // level[k]: the candidate with the first k axes set
    std::vector<size_t> at;
    Crossed<Plan> out;
    int64_t leaves = 0;

    bool stopped() const { return out.full || out.timed_out; }
    void walk(size_t k) {
        if (stopped()) return;
        if (k == axes.size()) return leaf();
        const SearchAxis<Plan>& a = axes[k];
        for (size_t i = 0; i < a.values.size(); ++i) {
            at[k] = i;
            const KeyValue& v = a.values[i];
            const int n = a.rule->variants ? a.rule->variants(level[k], v) : 1;
            for (int variant = 0; variant < n && !stopped(); ++variant) {
                level[k + 1] = level[k];
                if (a.rule->apply) a.rule->apply(level[k + 1], *a.sets, v, variant, base);
                else set_axis_key(level[k + 1], *a.sets, v);
                walk(k + 1);
            }
        }
    }
    void leaf() {
        if (limits.deadline && ++leaves % 4096 == 0 && std::chrono::steady_clock::now() > *limits.deadline) {
            out.timed_out = true;
            return;
        }
        Plan& p = level.back();
        derive(p, base);
        const SearchPoint<Plan> point{p, base, axes, at};
        for (size_t r = 0; r < rules.size(); ++r)
            if (rules[r].drops(point)) {
                ++out.dropped[r];
                return;
            }
        if (out.plans.size() == limits.max_plans) {
            out.full = true;
            return;
        }
        out.plans.push_back(p);
    }
};

// InputError (key `search`) when the axes cross more than kMaxCombinations combinations.
template <typename Plan>
void check_combinations(const std::vector<SearchAxis<Plan>>& axes) {
    int64_t n = 1;
    std::string sizes;
    for (const auto& a : axes) {
        const auto k = static_cast<int64_t>(a.values.size());
        n = k > 0 && n > kMaxCombinations / k ? kMaxCombinations + 1 : n * k;
        if (k > 1) sizes += (sizes.empty() ? "" : " x ") + std::to_string(k) + " " + a.key->info.path.substr(7);
    }
    if (n > kMaxCombinations)
        throw sim::InputError("the axes cross more than " + std::to_string(kMaxCombinations) + " combinations (" +
                                  sizes +
                                  " values), more than a search enumerates: narrow them, or let --time-limit S "
                                  "bound the search",
                              "", 0, "search");
}

}  // namespace detail

// The product of `axes` from `start`: each combination set on a copy of `start`, then `derive(plan,
// base)`, then kept unless a rule of `rules` drops it; stopped early by `limits`. Without a deadline
// to bound it, InputError when the axes cross more than kMaxCombinations combinations.
template <typename Plan, typename Derive>
Crossed<Plan> cross(const Plan& start, const std::vector<SearchAxis<Plan>>& axes, const SearchBase& base, Derive derive,
                    const std::vector<PruneRule<Plan>>& rules, const CrossLimits& limits = {}) {
    if (!limits.deadline) detail::check_combinations(axes);
    detail::Product<Plan, Derive> p{
        axes, base, derive, rules, limits, std::vector<Plan>(axes.size() + 1), std::vector<size_t>(axes.size()), {}};
    p.level[0] = start;
    p.out.dropped.assign(rules.size(), 0);
    p.walk(0);
    return std::move(p.out);
}

}  // namespace fathom::plans
