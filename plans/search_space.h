#pragma once
// The `search` section of a scenario: the axes a plan search crosses and what it ranks by. Which
// keys are axes, which plan key each sets, its default rule and which kinds of scenario it serves
// are declared once, in the search key table (plans/search_keys.h); this holds only what a section
// gave: the values of the axes it names (an axis it does not name takes its default rule when the
// search starts) and the settings of the search.
#include "plans/keys.h"
#include "sim/enum_names.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fathom::plans {

// What ranks the candidates (search.objective); each objective's score, what it needs and which
// searches it ranks are its entry in the objective registry (plans/search_objective.h).
enum class Objective { Goodput, Throughput, Cost, Capacity };
constexpr auto enum_names(Objective) {
    return sim::name_table<Objective>({{Objective::Goodput, "goodput"},
                                       {Objective::Throughput, "throughput"},
                                       {Objective::Cost, "cost"},
                                       {Objective::Capacity, "capacity"}});
}

struct SearchSpace {
    // The axes the section gives, by key path ("search.tp"): each value as the plan key the axis
    // sets takes it (an integer, or a choice's text), in the section's order. Set them with
    // set_search_key or set_axis; an axis absent (or empty) takes its default rule.
    std::map<std::string, std::vector<KeyValue>> axes;

    Objective objective = Objective::Goodput;
    double price_per_gpu_hour = 0;                       // USD; 0: no cost column
    std::vector<std::pair<std::string, double>> prices;  // per accelerator id, USD per GPU-hour (search.prices)
    int top = 10;                                        // rows of the printed table
    // Gradient noise scale in sequences (McCandlish et al. 2018): a step of global batch B is worth
    // (b_noise + B0) / (b_noise + B) of one at the scenario's batch B0, per sequence. 0: not given
    // (statistical efficiency 1, goodput = throughput).
    double b_noise = 0;
    // Adaptive runs (plans/adaptive.h): the noise scale at the end of the run (0: b_noise
    // throughout), the run's length in tokens at the scenario's global batch, the phases it is
    // split into (1: no adaptation), and the fixed cost of a restart on a new layout.
    double b_noise_final = 0;
    double target_tokens = 0;
    int phases = 1;
    double restart_s = 0;

    // A scenario with a `run` section: the whole-run settings tried for every plan that fits, the
    // runs ranked by time to target (plans/run_search.h). An empty list takes the run section's.
    std::vector<double> checkpoint_intervals_s;
    std::vector<std::string> checkpoint_methods;  // run.checkpoint_method's choices
    std::vector<int64_t> spare_nodes;
    std::vector<std::string> recoveries;  // run.recovery's choices

    bool has_run_axes() const {
        return !checkpoint_intervals_s.empty() || !checkpoint_methods.empty() || !spare_nodes.empty() ||
               !recoveries.empty();
    }

    // The values given for the axis at `path`; null when it takes its default rule.
    const std::vector<KeyValue>* given(const std::string& path) const {
        const auto it = axes.find(path);
        return it == axes.end() || it->second.empty() ? nullptr : &it->second;
    }
    // Sets the axis at `path` without checking it against its declaration (set_search_key does).
    void set_axis(const std::string& path, std::vector<KeyValue> values) { axes[path] = std::move(values); }
};

}  // namespace fathom::plans
