#pragma once
// The `fathom` CLI's shared pieces: parsed arguments, file output (whole files, after the work
// succeeded) and number formatting, and the commands that live in their own files.
#include "plans/context.h"
#include "plans/report.h"
#include "plans/search.h"
#include "sim/error.h"
#include "tools/cli/mpi.h"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace fathom::plans {
class Catalog;
struct Scenario;
struct EvaluationContext;
}  // namespace fathom::plans
namespace fathom::scenarios {
struct CompareResult;
}  // namespace fathom::scenarios

namespace fathom::cli {

struct Args {
    std::string command;
    bool help = false;  // --help, -h, or `fathom help COMMAND`
    std::vector<std::string> positional;
    std::string json, html, trace, algorithm, device, out, requests, only_case, network, placement;
    std::string run_trace;                // run: the whole run's timeline (a training scenario with a `run` section)
    std::string intervals;                // compare: write the validation bands of its residuals to this file
    std::string framework;                // export: --for
    int64_t rank = 0;                     // export: the search result's candidate of this rank (0: not given)
    std::string from, scenario, case_id;  // import: --from TOOL, --scenario FILE, --id ID
    bool other_metrics = false;
    bool rank_plans = false;  // compare: rank each training case's published plan
    bool ops = false;         // calibrate layers: print each row's ops and their predicted times
    std::vector<std::string> sets;
    int threads = 0;             // search: 0 = the machine's hardware threads
    int64_t max_candidates = 0;  // search: 0 = all
    double time_limit = 0;       // search: seconds, 0 = none
    int64_t max_tasks = 0;       // run, validate, search, compare: the replay's task limit (0: the default)
    int64_t max_requests = 0;    // run, validate, capacity, search, compare: a serving run's (0: the default)
};

// The one file argument of a command (InputError otherwise).
std::string one_file(const Args& a);
// Writes a whole output file at once (never a partial file); InputError when it cannot.
void write_file(const std::string& path, const std::string& text);
void write_json(const std::string& path, const nlohmann::json& j);
std::string gib(double bytes);  // "12.3 GiB"
// The per-stage table of a training step: compute, a busy-time column per group kind in `kinds`
// ("<kind>_s"), exposed communication, idle time and peak memory; each line starts with `indent`.
void print_stage_table(const std::vector<workloads::StageReport>& stages, const std::vector<models::GroupKind>& kinds,
                       const char* indent);
// A flat record (plans/report.h) as a JSON object, dotted names nested; a report as one object
// with its tables as arrays; records as CSV with the given columns (strings quoted, a field a
// record lacks left empty).
nlohmann::json record_json(const plans::Record& r);
nlohmann::json report_json(const plans::Report& rep);
std::string records_csv(const std::vector<plans::Record>& rows, const std::vector<std::string>& columns);
double median_of(std::vector<double> v);
// "device model    estimated: <source>" where the accelerator's constants are not all measured.
void print_device_model(const hardware::AcceleratorSpec& a);
// "op costs": the measured table (or the roofline) and, per op class, how its ops were priced,
// naming those a table left to the roofline.
void print_op_costs(const hardware::AcceleratorSpec& a, plans::CostModelKind kind, const workloads::OpSources& src);
// The headline metrics' 90% intervals from the catalog's validation bands (plans/intervals.h), one
// line each and the regimes they came from; nothing without bands.
void print_intervals(const plans::Scenario& s, const plans::Outcome& o, const plans::IntervalTable& bands);
// Whether a ranking's first two plans (their values `first`, `second` in `regime`) are told apart
// by the validation bands: printed, and as JSON (null without bands or a second plan).
nlohmann::json print_rank_gap(const plans::IntervalTable& bands, const std::string& regime, double first, double second,
                              const hardware::AcceleratorSpec& accelerator);
// The q-quantile (0..1) of `v` by linear interpolation between order statistics (numpy's default).
double percentile_of(std::vector<double> v, double q);
// A training scenario's whole run (its `run` section): the plan of it and the seeds' summary.
void print_run(const plans::Outcome::Run& run);
// The serving summary's lines of the mechanisms the plan turns on (tools/cli/serving_output.cpp).
void print_serving_mechanisms(const workloads::serving::ServingPlan& p, const workloads::serving::ServingReport& r);
// The evaluation context of a command: the catalog's tables, the seed, --collective-algorithm and
// --max-tasks.
plans::EvaluationContext cli_context(std::shared_ptr<const plans::Catalog> catalog, uint64_t seed, const Args& a);
// A message safe for a terminal: control characters from the input (escape sequences, carriage
// returns) shown as \xNN; newlines and tabs kept.
std::string printable(const std::string& s);

// A progress bar with ETA on stderr when it is a terminal; silent otherwise.
class Progress {
public:
    explicit Progress(std::string what)
        : what_(std::move(what)), tty_(isatty(STDERR_FILENO) == 1), start_(clock::now()) {}
    ~Progress() {
        if (shown_) std::fprintf(stderr, "\r\033[K");
    }
    void operator()(int64_t done, int64_t total) {
        if (!tty_) return;
        const double elapsed = std::chrono::duration<double>(clock::now() - start_).count();
        if (elapsed < 0.5 || elapsed - last_ < 0.1) return;
        last_ = elapsed;
        shown_ = true;
        if (total <= 0) {
            std::fprintf(stderr, "\r\033[K%s: %lld done, %.0f s", what_.c_str(), static_cast<long long>(done), elapsed);
            return;
        }
        const double f = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
        const int width = 30, fill = static_cast<int>(f * width);
        const double eta = f > 0 ? elapsed * (1 - f) / f : 0;
        std::fprintf(stderr, "\r\033[K%s [%s%s] %3.0f%% %lld/%lld, ETA %.0f s", what_.c_str(),
                     std::string(fill, '#').c_str(), std::string(width - fill, '.').c_str(), 100 * f,
                     static_cast<long long>(done), static_cast<long long>(total), eta);
    }

private:
    using clock = std::chrono::steady_clock;
    std::string what_;
    bool tty_;
    clock::time_point start_;
    double last_ = 0;
    bool shown_ = false;
};

int cmd_list(const Args& a);       // tools/cli/list.cpp
int cmd_compare(const Args& a);    // tools/cli/compare.cpp
int cmd_calibrate(const Args& a);  // tools/cli/calibrate.cpp
int cmd_topology(const Args& a);   // tools/cli/topology.cpp
int cmd_share(const Args& a);      // tools/cli/share.cpp
int cmd_search(const Args& a);     // tools/cli/search.cpp
int cmd_export(const Args& a);     // tools/cli/export.cpp
int cmd_import(const Args& a);     // tools/cli/import.cpp
// `fathom run` / `validate` of an RL scenario (tools/cli/run_rl.cpp).
int cmd_run_rl(const Args& a, const plans::Scenario& s, bool validate_only, const plans::EvaluationContext& ctx);
// compare --rank-plans (tools/cli/rank_plans.cpp): a search around each training case's plan,
// printed as a table; one JSON record per case.
nlohmann::json rank_published_plans(const std::vector<scenarios::CompareResult>& results,
                                    const plans::EvaluationContext& ctx, const Args& a);
// The options of `fathom search`: --threads, --max-candidates, --time-limit, and this MPI rank's
// share (tools/cli/search.cpp).
plans::SearchOptions search_options(const Args& a, const MpiWorld& mpi);
// Runs f(); an input error it raises without naming a file is raised again naming `file` (the
// scenario whose evaluation found it).
template <typename F>
auto naming_file(const std::string& file, F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const sim::InputError& e) {
        if (!e.file().empty()) throw;
        throw sim::InputError(e.bare_message(), file, 0, e.key());
    }
}

// Runs `search(opt)` under a progress bar (on rank 0), with the scenario's file named in its input
// errors; under mpirun rank 0 gathers the other ranks' shares (`encode`), merges them (`merge`)
// and finalizes the result. Returns false on the other ranks, which have nothing to report.
template <typename Result, typename Search, typename Encode, typename Merge, typename Finalize>
bool run_search(const std::string& file, const char* what, const MpiWorld& mpi, plans::SearchOptions& opt, Result& r,
                Search search, Encode encode, Merge merge, Finalize finalize) {
    {
        Progress bar(what);
        if (mpi.rank == 0) opt.progress = [&bar](int64_t d, int64_t t) { bar(d, t); };
        r = naming_file(file, [&] { return search(opt); });
    }
    if (mpi.size > 1) {
        const auto shares = mpi_gather(encode(r, opt.partition));
        if (mpi.rank != 0) return false;
        for (size_t k = 1; k < shares.size(); ++k) merge(r, shares[k]);
        finalize(r);
    }
    return true;
}
// `fathom search` with a `run` section (tools/cli/run_search_output.cpp): the whole runs of the
// plans that fit crossed with the search's run settings, printed ranked by time to target; returned
// as JSON ({"runs": records, "ranking": indices}).
nlohmann::json print_run_search(const plans::Scenario& s, const plans::SearchSpace& space,
                                const plans::SearchResult& plans, const plans::EvaluationContext& ctx,
                                const plans::SearchOptions& options);
// The serving half of `fathom search` (tools/cli/search_serving.cpp), for a loaded serving scenario.
int cmd_search_serving(const Args& a, const plans::Scenario& s, std::shared_ptr<const plans::Catalog> catalog);
// `fathom search` of an RL scenario (tools/cli/search_rl.cpp).
int cmd_search_rl(const Args& a, const plans::Scenario& s, std::shared_ptr<const plans::Catalog> catalog);

}  // namespace fathom::cli
