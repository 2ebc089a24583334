#pragma once
// Whole runs in a plan search (a training scenario with `run` and `search` sections): every plan the
// search evaluated that fits, crossed with the run settings the search section lists
// (search.checkpoint_interval, search.checkpoint_method, search.spare_nodes, search.recovery; a list
// not given takes the run section's value), each pair simulated to its target over the run's seeds
// (plans/run.h) and ranked by median time to target. The step of each plan comes from the search
// (priced once per plan); a pair that cannot run (an interval shorter than a write, a spare pool
// without a repair time, a run that would never finish) is kept with its reason, unranked.
// Results are stored at each pair's index (plans in the search's order, then the settings in the
// order above, each in its list's order): the same at any thread count.
#include "plans/report.h"
#include "plans/run.h"
#include "plans/scenario.h"
#include "plans/search.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fathom::plans {

struct RunCandidate {
    int64_t index = 0;
    int64_t plan = -1;  // the plan candidate's index in the search's result
    RunRequest request;
    bool ok = false;
    std::string reason;  // why it cannot run ("key: message"), when not ok
    double step_time_s = 0;
    double interval_s = 0;  // the interval simulated (given, or the Young/Daly default in whole steps)
    RunSummary summary;
};

struct RunSearchResult {
    std::vector<RunCandidate> candidates;
    std::vector<int64_t> ranking;  // indices of the runs simulated, fastest to target first
    int64_t plans = 0, settings = 0, simulated = 0, refused = 0;
};

// The most plan-and-settings pairs a run search simulates (each is seeds x a run).
constexpr int64_t kMaxRunCandidates = 100'000;

// The runs of `s` (with a `run` section) for the evaluated candidates of `plans`. InputError (key
// search.checkpoint_interval) past kMaxRunCandidates pairs, or for a setting no run can take
// (elastic recovery without run.reconfigure, spares without run.repair).
RunSearchResult search_runs(const Scenario& s, const SearchSpace& space, const SearchResult& plans,
                            const EvaluationContext& context, const SearchOptions& options = {});

// One record a run (the CLI's table and --json's "runs"): index, plan (the plan candidate's index)
// and its degrees and batch, the settings (checkpoint_interval_s as simulated, checkpoint_method,
// spare_nodes with -1 for unlimited, recovery), step_time_s, time_to_target_s.{p10,p50,p90,mean},
// ettr, interruptions, and ok with the reason when it cannot run.
std::vector<Record> run_search_records(const RunSearchResult& runs, const SearchResult& plans);

}  // namespace fathom::plans
