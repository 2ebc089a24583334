#pragma once
// The search.* keys, each declared once (search_keys.cpp): an axis that plan searches cross, or a
// setting of the search. An axis states, for each kind of scenario it searches, the plan key it
// sets and the rule that gives its values when the section does not (AxisRule); which kinds it
// serves follows from the rules it has. A setting (the objective, prices, the noise scale) states
// the kinds it serves and its member of SearchSpace. The scenario parser, `fathom list keys`,
// set_search_key and the searches' one product (plans/search_product.h) read this table, so an
// axis is added by one row of it.
#include "plans/catalog.h"
#include "plans/keys.h"
#include "plans/scenario.h"
#include "plans/search_space.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fathom::plans {

// What an axis's default rule and its hooks see: the search's model, cluster and space, the
// scenario's plan of the kind searched, and the catalog (serving searches: other device types).
struct SearchBase {
    const models::ModelSpec& model;
    const hardware::ClusterSpec& cluster;
    const SearchSpace& space;
    const workloads::TrainingPlan* training = nullptr;
    const workloads::serving::ServingPlan* serving = nullptr;
    const Catalog* catalog = nullptr;
    const workloads::rl::RlPlan* rl = nullptr;
};

// An axis of the searches of plans of type Plan.
template <typename Plan>
struct AxisRule {
    std::string sets;          // the plan key each value sets ("parallel.tp")
    std::string default_text;  // the default rule in words (the key reference)
    std::function<std::vector<KeyValue>(const SearchBase&, const Plan& scenario)> defaults;
    // Where setting `sets` to the value is not all there is to it (a schedule named "auto", a
    // device type's catalog entry, a split into prefill and decode pools): how a value lands on a
    // candidate, and how many candidates it stands for (`variant` counts them from 0).
    void (*apply)(Plan& candidate, const Key<Plan>& sets, const KeyValue& value, int variant,
                  const SearchBase& base) = nullptr;
    int (*variants)(const Plan& candidate, const KeyValue& value) = nullptr;  // null: one
};

struct SearchKey {
    KeyInfo info;
    std::optional<AxisRule<workloads::TrainingPlan>> training;         // an axis of training searches
    std::optional<AxisRule<workloads::serving::ServingPlan>> serving;  // an axis of serving searches
    std::optional<AxisRule<workloads::rl::RlPlan>> rl;                 // an axis of RL searches
    // A setting: the kinds it serves, and its accessors.
    bool setting_for_training = false, setting_for_serving = false, setting_for_rl = false;
    Key<SearchSpace>::Setter set = nullptr;
    Key<SearchSpace>::Getter get = nullptr;

    bool is_axis() const { return training || serving || rl; }
    bool serves(WorkloadKind kind) const {
        switch (kind) {
            case WorkloadKind::Training: return training || setting_for_training;
            case WorkloadKind::Serving: return serving || setting_for_serving;
            case WorkloadKind::Rl: return rl || setting_for_rl;
        }
        return false;
    }
    // The kinds it serves, in words ("training and serving").
    std::string kinds() const;
    // The axis rule for plans of the pointer's type (the pointer only picks the kind); null when the
    // key is not an axis of those searches.
    const AxisRule<workloads::TrainingPlan>* rule(const workloads::TrainingPlan*) const {
        return training ? &*training : nullptr;
    }
    const AxisRule<workloads::serving::ServingPlan>* rule(const workloads::serving::ServingPlan*) const {
        return serving ? &*serving : nullptr;
    }
    const AxisRule<workloads::rl::RlPlan>* rule(const workloads::rl::RlPlan*) const { return rl ? &*rl : nullptr; }
};

// The RL search's axes (plans/rl_search_keys.cpp), appended to the table after the others.
void add_rl_axes(std::vector<SearchKey>& keys);

// Every search.* key, axes in the order the searches cross them (the first varies slowest).
const std::vector<SearchKey>& search_keys();
const SearchKey* find_search_key(const std::string& path, const std::vector<SearchKey>& keys = search_keys());

// Sets or reads one search key of `space` after checking the value against its declaration (an
// axis takes its list value: an integer list, or a choice list as comma-separated text); an
// unknown path or an unsuitable value throws sim::InputError naming the key.
void set_search_key(SearchSpace& space, const std::string& path, const KeyValue& value,
                    const std::vector<SearchKey>& keys = search_keys());
KeyValue get_search_key(const SearchSpace& space, const std::string& path,
                        const std::vector<SearchKey>& keys = search_keys());

}  // namespace fathom::plans
