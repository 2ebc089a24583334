// The pybind11 extension fathom._fathom: a thin facade over scenarios/ and plans/ (no simulation
// logic here). Scenarios are loaded from a file or a YAML string with `key=value` overrides (the
// CLI's --set); results come back as flat records (plans/report.h), dicts with dotted names, ready
// for DataFrames. Input errors raise fathom.InputError (a ValueError) with the CLI's file, line and
// key message. The GIL is released while loading and simulating, so Python threads run
// simulations in parallel.
#include "plans/adaptive.h"
#include "plans/capacity.h"
#include "plans/evaluate.h"
#include "plans/report.h"
#include "plans/rl_search.h"
#include "plans/run_search.h"
#include "plans/search.h"
#include "plans/search_report.h"
#include "plans/serving_search.h"
#include "scenarios/catalog.h"
#include "scenarios/data_version.h"
#include "scenarios/launch/launch.h"
#include "scenarios/measured.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "workloads/run/run_timeline.h"
#include "workloads/serving/serving_metrics.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <sstream>

namespace py = pybind11;
using namespace fathom;

namespace {

std::shared_ptr<const plans::Catalog> catalog() {
    static const std::shared_ptr<const plans::Catalog> c = scenarios::load_catalog();
    return c;
}

// A loaded scenario and the evaluation context its seed and catalog give.
struct Loaded {
    plans::Scenario scenario;
    plans::EvaluationContext context;
};

Loaded load(const std::string& path, const std::string& yaml, const std::string& name,
            const std::vector<std::string>& overrides) {
    py::gil_scoped_release release;
    Loaded l;
    if (!path.empty()) {
        l.scenario = scenarios::load_scenario(path, *catalog(), overrides);
    } else {
        l.scenario = scenarios::load_scenario_text(yaml, name, *catalog(), overrides);
    }
    l.context = scenarios::make_context(catalog(), l.scenario.seed);
    return l;
}

py::object field(const plans::FieldValue& v) {
    return std::visit([](const auto& x) -> py::object { return py::cast(x); }, v);
}

py::dict record(const plans::Record& r) {
    py::dict d;
    for (const auto& [name, value] : r.fields) d[py::str(name)] = field(value);
    return d;
}

py::list records(const std::vector<plans::Record>& rows) {
    py::list l;
    for (const auto& r : rows) l.append(record(r));
    return l;
}

py::dict report_dict(const plans::Report& rep) {
    py::dict d = record(rep.summary);
    for (const auto& [name, rows] : rep.tables) d[py::str(name)] = records(rows);
    return d;
}

// One request of a serving run: the columns of `fathom run --requests`, at full precision (the
// CSV prints 9 digits).
py::dict request_dict(const workloads::serving::RequestRecord& r, const std::vector<std::string>& classes) {
    py::dict d;
    d["id"] = r.id;
    d["replica"] = r.replica;
    d["decode_replica"] = r.decode_replica;
    if (r.slo_class >= 0 && static_cast<size_t>(r.slo_class) < classes.size())
        d["slo_class"] = classes[static_cast<size_t>(r.slo_class)];
    else d["slo_class"] = r.slo_class;
    d["arrival_s"] = r.arrival_s;
    d["queue_s"] = r.queue_s;
    d["ttft_s"] = r.ttft_s;
    d["ttft_service_s"] = r.ttft_service_s;
    d["tpot_s"] = r.tpot_s;
    d["e2e_s"] = r.e2e_s;
    d["max_itl_s"] = r.max_itl_s;
    d["kv_transfer_s"] = r.kv_transfer_s;
    d["prompt_tokens"] = r.prompt_tokens;
    d["output_tokens"] = r.output_tokens;
    d["generated_tokens"] = r.generated_tokens;
    d["prefix_hit_tokens"] = r.prefix_hit_tokens;
    d["preemptions"] = r.preemptions;
    d["slo_met"] = r.slo_met;
    return d;
}

py::dict run(const Loaded& l, bool requests, bool trace) {
    plans::Report rep;
    plans::Outcome outcome;
    std::ostringstream events;
    {
        py::gil_scoped_release release;
        plans::EvaluateOptions opt;
        opt.keep_records = requests;
        if (trace) opt.trace = &events;
        outcome = plans::evaluate(l.scenario, l.context, opt);
        rep = plans::make_report(l.scenario, outcome, &l.context.catalog->intervals());
    }
    py::dict d = report_dict(rep);
    if (trace) d["trace_json"] = py::str(events.str());
    if (trace && outcome.run) {  // the whole run's first seed at day scale (`fathom run --run-trace`)
        std::ostringstream timeline;
        {
            py::gil_scoped_release release;
            workloads::run::write_run_trace(outcome.run->plan.spec, outcome.run->plan.seed, timeline);
        }
        d["run_trace_json"] = py::str(timeline.str());
    }
    if (requests)
        if (const auto* s = outcome.serving()) {
            py::list rows;
            for (const auto& r : s->records) rows.append(request_dict(r, s->slo_class_names));
            d["requests"] = rows;
        }
    return d;
}

py::dict capacity(const Loaded& l) {
    const auto* plan = l.scenario.serving();
    if (!plan) throw sim::InputError("capacity needs a serving scenario (kind: serving)", l.scenario.file);
    plans::CapacityResult c;
    {
        py::gil_scoped_release release;
        try {
            c = plans::find_capacity(l.scenario.model, l.scenario.cluster, *plan, l.context, l.scenario.seed);
        } catch (const sim::InputError& e) {
            throw sim::InputError(e.bare_message(), l.scenario.file, 0, e.key());
        }
    }
    // The keys of `fathom capacity --json`.
    py::list probes;
    for (const auto& p : c.probes)
        probes.append(py::dict(py::arg("seed") = p.seed, py::arg("rate") = p.rate,
                               py::arg("slo_attainment") = p.attainment, py::arg("goodput") = p.goodput));
    return py::dict(py::arg("scenario") = l.scenario.name, py::arg("capacity_requests_per_s") = c.rate,
                    py::arg("capacity_min") = c.rate_min, py::arg("capacity_max") = c.rate_max,
                    py::arg("per_seed") = c.per_seed, py::arg("below_min_rate") = c.below_min,
                    py::arg("above_max_rate") = c.above_max,
                    py::arg("offline_requests_per_s") = c.offline_requests_per_s,
                    py::arg("slo_target") = plan->slo.target_attainment, py::arg("probes") = probes);
}

// What a search gives the Python package: the candidates as records (plans/search_report.h), the
// ranking, the counts and this process's share.
struct SearchOut {
    std::vector<plans::Record> rows;
    std::vector<int64_t> ranking;
    std::string share;
    int64_t counts[4] = {0, 0, 0, 0};
    bool truncated = false;
    std::string truncation;           // why the enumeration stopped short ("" when it did not)
    std::vector<plans::Record> runs;  // whole runs (a `run` section), ranked by time to target
    std::vector<int64_t> run_ranking;
};

// `r` (a search's result, or this process's share of it) with the shares of the other ranks
// merged in, finalized when there were any.
template <typename R, typename C, typename Encode, typename Merge, typename Finalize>
SearchOut collect(R r, const plans::Partition& partition, const std::vector<std::string>& shares, Encode encode,
                  Merge merge, Finalize finalize, const std::vector<plans::CandidateField<C>>& fields,
                  plans::Objective objective, R* merged = nullptr) {
    SearchOut out;
    out.share = encode(r, partition);
    for (const auto& s : shares) merge(r, s);
    if (!shares.empty()) finalize(r);
    if (merged) *merged = r;
    for (const auto& c : r.candidates) out.rows.push_back(plans::candidate_record(c, fields, objective));
    out.ranking = r.ranking;
    out.counts[0] = r.evaluated, out.counts[1] = r.pruned, out.counts[2] = r.out_of_memory, out.counts[3] = r.skipped;
    out.truncated = r.truncated;
    out.truncation = r.truncation;
    return out;
}

// A search, or one share of a partitioned one (rank of size; rank -1: evaluate nothing, the
// skeleton a merge fills). Returns the candidates as records, the ranking, and the share's text.
py::dict search(const Loaded& l, int threads, int64_t max_candidates, int rank, int size,
                const std::vector<std::string>& shares) {
    const plans::SearchSpace space = l.scenario.search.value_or(plans::SearchSpace{});
    plans::SearchOptions opt;
    opt.threads = std::max(1, threads);
    opt.max_candidates = max_candidates;
    opt.partition = {rank, size};
    SearchOut out;
    {
        py::gil_scoped_release release;
        try {
            const auto& sc = l.scenario;
            if (const auto* base = sc.training()) {
                plans::SearchResult merged;
                out = collect(
                    plans::search_training(sc.model, sc.cluster, *base, space, l.context, opt), opt.partition, shares,
                    plans::encode_search_share, plans::merge_search_share,
                    [&](plans::SearchResult& r) { plans::finalize_training_search(r, space); },
                    plans::training_candidate_fields(), space.objective, &merged);
                // Whole runs once the plans are all there (one process, or the merge of the shares).
                if (sc.run && (size <= 1 || !shares.empty())) {
                    plans::SearchOptions whole = opt;
                    whole.partition = {};
                    const plans::RunSearchResult runs = plans::search_runs(sc, space, merged, l.context, whole);
                    out.runs = plans::run_search_records(runs, merged);
                    out.run_ranking = runs.ranking;
                }
            } else if (const auto* rl = sc.rl()) {
                // One process: an RL search does not split into shares yet.
                if (size > 1 || !shares.empty())
                    throw sim::InputError("an RL search runs in one process (shares: not yet)", sc.file);
                const plans::RlSearchResult r =
                    plans::search_rl(sc.model, sc.cluster, *rl, space, l.context, sc.seed, opt);
                std::vector<int64_t> place(r.candidates.size(), 0);
                for (size_t k = 0; k < r.ranking.size(); ++k)
                    place[static_cast<size_t>(r.ranking[k])] = static_cast<int64_t>(k) + 1;
                for (const auto& c : r.candidates)
                    out.rows.push_back(plans::rl_candidate_record(c, place[static_cast<size_t>(c.index)]));
                out.ranking = r.ranking;
                out.counts[0] = r.evaluated, out.counts[1] = r.pruned, out.counts[2] = r.out_of_memory,
                out.counts[3] = r.skipped;
                out.truncated = r.truncated;
                out.truncation = r.truncation;
            } else
                out = collect(
                    plans::search_serving(sc.model, sc.cluster, *sc.serving(), space, l.context, sc.seed, opt),
                    opt.partition, shares, plans::encode_serving_search_share, plans::merge_serving_search_share,
                    [&](plans::ServingSearchResult& r) { plans::finalize_serving_search(r, space); },
                    plans::serving_candidate_fields(), space.objective);
        } catch (const sim::InputError& e) {
            throw sim::InputError(e.bare_message(), l.scenario.file, 0, e.key());
        }
    }
    const auto& sc = l.scenario;
    if (sc.training())
        plans::add_interval_fields(out.rows, "tokens_per_s", l.context.catalog->intervals(),
                                   plans::training_regime(sc.model), sc.cluster.accelerator);
    else if (sc.serving())
        plans::add_interval_fields(out.rows, "output_tokens_per_s", l.context.catalog->intervals(),
                                   plans::serving_regime("output_tokens_per_s"), sc.cluster.accelerator);
    return py::dict(py::arg("kind") = std::string(sim::name(l.scenario.kind())),
                    py::arg("objective") = sim::name(space.objective), py::arg("candidates") = records(out.rows),
                    py::arg("ranking") = out.ranking, py::arg("evaluated") = out.counts[0],
                    py::arg("pruned") = out.counts[1], py::arg("out_of_memory") = out.counts[2],
                    py::arg("skipped") = out.counts[3], py::arg("truncated") = out.truncated,
                    py::arg("truncation") = out.truncation, py::arg("share") = py::bytes(out.share),
                    py::arg("runs") = records(out.runs), py::arg("run_ranking") = out.run_ranking);
}

py::list compare(const std::string& path, bool other_metrics, const std::string& only_case) {
    std::vector<scenarios::CompareResult> results;
    {
        py::gil_scoped_release release;
        // As the CLI: one case comes with its other_metrics entries.
        results = scenarios::compare_measured(path, scenarios::make_context(catalog(), 1),
                                              other_metrics || !only_case.empty(), only_case);
    }
    py::list out;
    for (const auto& r : results) out.append(record(scenarios::compare_record(r)));
    return out;
}

}  // namespace

PYBIND11_MODULE(_fathom, m) {
    m.doc() = "fathom's C++ core (use the `fathom` package)";
#ifdef FATHOM_VERSION
    m.attr("__version__") = FATHOM_VERSION;
#endif
    // What `fathom --version` prints below its first line: the catalog's and calibration tables'
    // fingerprints (scenarios/data_version.h).
    m.def("data_version", [] {
        const std::string root = scenarios::data_dir();
        const scenarios::DataVersion v = scenarios::data_version(*scenarios::load_catalog(root), root);
        py::list cal;
        for (const auto& c : v.calibration)
            cal.append(py::dict(py::arg("device") = c.device, py::arg("table") = c.table,
                                py::arg("fingerprint") = c.fingerprint, py::arg("date") = c.date));
        return py::dict(py::arg("root") = v.root, py::arg("catalog") = v.catalog,
                        py::arg("catalog_files") = v.catalog_files, py::arg("calibration") = cal);
    });
    py::register_exception<sim::InputError>(m, "InputError", PyExc_ValueError);
    py::class_<Loaded>(m, "Scenario")
        .def_property_readonly("name", [](const Loaded& l) { return l.scenario.name; })
        .def_property_readonly("file", [](const Loaded& l) { return l.scenario.file; })
        .def_property_readonly("kind", [](const Loaded& l) { return std::string(sim::name(l.scenario.kind())); })
        .def_property_readonly("model", [](const Loaded& l) { return l.scenario.model.id; })
        .def_property_readonly("gpus", [](const Loaded& l) { return l.scenario.cluster.gpus(); })
        .def_property_readonly("has_search", [](const Loaded& l) { return l.scenario.search.has_value(); })
        .def_property_readonly("warnings", [](const Loaded& l) {
            std::vector<std::string> w;
            for (const auto& x : l.scenario.warnings) w.push_back(x.text());
            return w;
        });
    m.def("load", &load, py::arg("path"), py::arg("yaml"), py::arg("name"), py::arg("overrides"),
          "Load a scenario from a file (path) or a YAML string (yaml, reported as `name`), with key=value overrides.");
    m.def("run", &run, py::arg("scenario"), py::arg("requests") = false, py::arg("trace") = false,
          "Predict a loaded scenario: the `fathom run --json` report as flat records; with requests, the per-request "
          "rows "
          "of a serving run; with trace, the Chrome trace JSON text.");
    m.def(
        "export_launch",
        [](const Loaded& l, const std::string& framework) {
            const plans::Scenario& s = l.scenario;
            if (s.rl()) throw sim::InputError("RL scenarios are not exported yet", s.file);
            const scenarios::launch::Job job{s.name, s.file, &s.model, &s.cluster, s.training(), s.serving()};
            py::dict files;
            for (const auto& f : scenarios::launch::export_launch(job, framework)) files[py::str(f.name)] = f.text;
            return files;
        },
        py::arg("scenario"), py::arg("framework"),
        "The launch files of a loaded scenario's plan for a framework (`fathom export --for`): name -> text.");
    m.def("capacity", &capacity, py::arg("scenario"), "The highest request rate meeting the SLOs (`fathom capacity`).");
    m.def(
        "search", &search, py::arg("scenario"), py::arg("threads") = 1, py::arg("max_candidates") = 0,
        py::arg("rank") = 0, py::arg("size") = 1, py::arg("shares") = std::vector<std::string>{},
        "A plan search (`fathom search`), or the share rank of size of one; shares of the other ranks merge into it.");
    m.def("compare", &compare, py::arg("path"), py::arg("other_metrics") = false, py::arg("case") = std::string(),
          "Every case of a measured-format file against its prediction (`fathom compare`).");
}
