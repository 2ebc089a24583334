// fathom: command-line front end. Parsing arguments and printing only; the work is done by
// scenarios/ (YAML -> specs) and plans/ (evaluate). Exit codes: 0 success, 2 bad input (file,
// line and key in the message), 1 internal error.
#include "hardware/collectives/collective.h"
#include "models/cost/calibration_table.h"
#include "plans/capacity.h"
#include "plans/evaluate.h"
#include "plans/keys.h"
#include "plans/report.h"
#include "scenarios/calibration_io.h"
#include "scenarios/catalog.h"
#include "scenarios/measured.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "sim/units.h"
#include "tools/cli/cli.h"
#include "tools/cli/commands.h"
#include "tools/cli/html.h"
#include "tools/cli/mpi.h"
#include "workloads/run/run_timeline.h"
#include "workloads/serving/batching/policy.h"
#include "workloads/serving/router.h"
#include "workloads/training/schedules/pipeline_schedule.h"

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace po = boost::program_options;
using namespace fathom;
using namespace fathom::cli;

namespace {

// A whole number for --NAME, or an input error naming the option.
int64_t whole_number(const std::string& name, const std::string& text) {
    size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size())
        throw sim::InputError("command line: --" + name + ": '" + text + "' is not a whole number");
    return v;
}

// The options a command takes come from its row of the command table (tools/cli/commands.cpp); any
// other option is an error naming the command's own.
void check_options(const po::variables_map& vm, const CommandSpec& c) {
    for (const auto& [name, value] : vm) {
        if (name == "args" || name == "help" || name == "version") continue;
        if (std::find(c.options.begin(), c.options.end(), name) != c.options.end()) continue;
        std::string own;
        for (const char* o : c.options) own += (own.empty() ? "" : ", ") + std::string("--") + o;
        throw sim::InputError("command line: --" + name + " is not an option of `fathom " + c.name + "`" +
                              (own.empty() ? std::string(" (it takes none)") : "; its options: " + own) + " (fathom " +
                              c.name + " --help)");
    }
}

po::options_description option_descriptions() {
    po::options_description opts("options");
    for (const OptionSpec& o : option_table()) {
        const std::string name = o.short_name ? std::string(o.name) + "," + o.short_name : std::string(o.name);
        if (!o.value) opts.add_options()(name.c_str(), o.help);
        else if (std::string(o.name) == "set")
            opts.add_options()(name.c_str(), po::value<std::vector<std::string>>()->composing(), o.help);
        else opts.add_options()(name.c_str(), po::value<std::string>(), o.help);
    }
    opts.add_options()("version", "version, commit, catalog and calibration sets")(
        "args", po::value<std::vector<std::string>>(), "positional");
    return opts;
}

// The options with numbers (0 in Args: not given, the default).
template <typename Text>
void read_numbers(const po::variables_map& vm, Text text, Args& a) {
    if (vm.count("threads")) {
        const int64_t n = whole_number("threads", text("threads"));
        if (n < 1 || n > 1024) throw sim::InputError("command line: --threads must be between 1 and 1024");
        a.threads = static_cast<int>(n);
    }
    // Counts: positive when given (0 in Args: not given, the default).
    for (auto [name, into] : {std::pair{"max-candidates", &a.max_candidates}, std::pair{"max-tasks", &a.max_tasks},
                              std::pair{"max-requests", &a.max_requests}}) {
        if (!vm.count(name)) continue;
        *into = whole_number(name, text(name));
        if (*into < 1) throw sim::InputError(std::string("command line: --") + name + " must be >= 1");
    }
    if (vm.count("time-limit")) {
        const std::string t = text("time-limit");
        char* end = nullptr;
        a.time_limit = std::strtod(t.c_str(), &end);
        if (t.empty() || *end != '\0' || !(a.time_limit > 0) || a.time_limit > 1e7)
            throw sim::InputError("command line: --time-limit must be a positive number of seconds, not '" + t + "'");
    }
}

Args parse_args(int argc, char** argv) {
    const po::options_description opts = option_descriptions();
    po::positional_options_description pos;
    pos.add("args", -1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        throw sim::InputError(std::string("command line: ") + e.what());
    }
    Args a;
    if (vm.count("args")) {
        auto v = vm["args"].as<std::vector<std::string>>();
        a.command = v.front();
        a.positional.assign(v.begin() + 1, v.end());
    }
    // `fathom help [COMMAND]` is `fathom [COMMAND] --help`.
    a.help = vm.count("help") > 0 || a.command == "help";
    if (a.command == "help") {
        a.command = a.positional.empty() ? "" : a.positional.front();
        a.positional.clear();
    }
    if (vm.count("version")) {
        if (!a.command.empty() || vm.size() > 1) throw sim::InputError("command line: --version takes nothing else");
        a.command = "version";
        return a;
    }
    if (a.command.empty()) {
        if (!a.help && vm.size() > 0) throw sim::InputError("command line: options without a command (fathom --help)");
        return a;
    }
    const CommandSpec* c = find_command(a.command);
    if (!c) throw sim::InputError("unknown command '" + a.command + "' (fathom --help lists them)");
    check_options(vm, *c);
    if (a.help) return a;
    auto text = [&](const char* name) { return vm.count(name) ? vm[name].as<std::string>() : std::string(); };
    a.json = text("json");
    a.html = text("html");
    a.trace = text("trace");
    a.run_trace = text("run-trace");
    a.requests = text("requests");
    if (vm.count("set")) a.sets = vm["set"].as<std::vector<std::string>>();
    if (vm.count("network")) {
        a.network = text("network");
        if (a.command != "compare") a.sets.push_back("cluster.network=" + a.network);
    }
    a.algorithm = text("collective-algorithm");
    a.other_metrics = vm.count("other-metrics") > 0;
    a.rank_plans = vm.count("rank-plans") > 0;
    a.ops = vm.count("ops") > 0;
    a.only_case = text("case");
    a.intervals = text("intervals");
    a.device = text("device");
    a.placement = text("placement");
    a.out = text("out");
    a.framework = text("for");
    a.from = text("from");
    a.scenario = text("scenario");
    a.case_id = text("id");
    if (vm.count("rank")) {
        a.rank = whole_number("rank", text("rank"));
        if (a.rank < 1) throw sim::InputError("command line: --rank must be >= 1");
    }
    read_numbers(vm, text, a);
    return a;
}

std::string ms(double seconds) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", seconds * 1e3);
    return buf;
}

void print_serving_plan(const plans::Scenario& s) {
    const auto& p = *s.serving();
    auto pool = [](const workloads::serving::PoolLayout& l) {
        return std::to_string(l.replicas) + " x (tp " + std::to_string(l.tp) + " pp " + std::to_string(l.pp) + ") " +
               l.accelerator.id;
    };
    std::printf("scenario        %s\n", s.name.c_str());
    if (s.model.moe.enabled())
        std::printf("model           %s (%.1fB parameters, %.1fB active)\n", s.model.name.c_str(),
                    s.model.total_params(0) / 1e9, s.model.active_params(0) / 1e9);
    else std::printf("model           %s (%.1fB parameters)\n", s.model.name.c_str(), s.model.total_params(0) / 1e9);
    std::string layout;  // "prefill 1 x (tp 2 pp 1) h100, decode 3 x (tp 2 pp 1) h100"
    for (const workloads::serving::Pool& l : p.pools()) {
        if (!layout.empty()) layout += ", ";
        if (l.role != workloads::serving::PoolRole::Aggregated) layout += std::string(sim::name(l.role)) + " ";
        layout += pool(*l.layout);
    }
    std::printf("layout          %s\n", layout.c_str());
    std::printf(
        "engine          %s, policy %s, router %s, max_num_seqs %lld, max_num_batched_tokens %lld, %s weights, %s "
        "KV%s\n",
        p.engine.preset.empty() ? "fathom defaults" : p.engine.preset.c_str(), p.batching.policy.c_str(),
        p.router.c_str(), static_cast<long long>(p.batching.max_num_seqs),
        static_cast<long long>(p.batching.max_num_batched_tokens), sim::name(p.kernels.gemm_dtype),
        sim::name(p.kv.dtype), p.kv.prefix_caching ? ", prefix caching" : "");
}

int cmd_run_serving(const Args& a, const plans::Scenario& s, bool validate_only, const plans::EvaluationContext& ctx) {
    const auto& p = *s.serving();
    if (validate_only) {
        const auto too_big = plans::check_serving_size(p, ctx.max_requests);
        if (!too_big.empty()) throw plans::plan_error(too_big, s.file);
        std::cout << s.file << ": OK (" << s.model.name << ", serving on " << p.gpus() << " of " << s.cluster.gpus()
                  << " x " << s.cluster.accelerator.id << ", policy " << p.batching.policy << ")\n";
        return 0;
    }
    std::ostringstream trace;
    plans::EvaluateOptions opt;
    if (!a.trace.empty()) opt.trace = &trace;
    opt.keep_records = !a.requests.empty() || !a.html.empty();
    workloads::ServingSeries series;
    if (!a.html.empty()) opt.series = &series;
    Progress bar("serving");
    opt.progress = [&bar](int64_t done, int64_t total) { bar(done, total); };
    const plans::Outcome o = naming_file(s.file, [&] { return plans::evaluate(s, ctx, opt); });
    if (!o.ok()) throw plans::plan_error(o.violations, s.file);
    const auto& r = *o.serving();
    print_serving_plan(s);
    std::printf("\nrequests        %lld measured (%lld warm-up) over %.2f s\n", static_cast<long long>(r.requests),
                static_cast<long long>(r.warmup_requests), r.duration_s);
    std::printf("throughput      %.2f requests/s, %.0f input + %.0f output tokens/s (%.0f output tokens/s per GPU)\n",
                r.requests_per_s, r.input_tokens_per_s, r.output_tokens_per_s, r.output_tokens_per_s / r.gpus);
    std::printf("\n%-26s %10s %10s %10s %10s %10s %10s\n", "latency (ms)", "mean", "p50", "p90", "p95", "p99", "max");
    auto row = [](const char* name, const workloads::serving::Percentiles& x, double scale) {
        std::printf("%-26s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f\n", name, x.mean * scale, x.p50 * scale,
                    x.p90 * scale, x.p95 * scale, x.p99 * scale, x.max * scale);
    };
    row("ttft (queueing included)", r.ttft_s, 1e3);
    row("queueing", r.queue_s, 1e3);
    row("tpot (first token out)", r.tpot_s, 1e3);
    row("itl (every gap)", r.itl_s, 1e3);
    row("e2e", r.e2e_s, 1e3);
    if (r.kv_transfer_s.max > 0) row("kv transfer", r.kv_transfer_s, 1e3);
    if (r.slo_ttft_s > 0 || r.slo_tpot_s > 0)
        std::printf("\nSLO             ttft <= %s ms, tpot <= %s ms: %.1f %% attained, goodput %.2f requests/s\n",
                    r.slo_ttft_s > 0 ? ms(r.slo_ttft_s).c_str() : "-",
                    r.slo_tpot_s > 0 ? ms(r.slo_tpot_s).c_str() : "-", 100 * r.slo_attainment,
                    r.goodput_requests_per_s);
    if (!r.slo_classes.empty()) {
        std::printf("\n%-16s %9s %10s %10s %10s %10s %12s %12s\n", "SLO class", "requests", "ttft SLO", "tpot SLO",
                    "attained", "goodput", "ttft p99 ms", "tpot p99 ms");
        for (const auto& k : r.slo_classes)
            std::printf("%-16s %9lld %10s %10s %9.1f%% %10.2f %12.1f %12.1f\n", k.name.c_str(),
                        static_cast<long long>(k.requests), k.slo_ttft_s > 0 ? (ms(k.slo_ttft_s) + " ms").c_str() : "-",
                        k.slo_tpot_s > 0 ? (ms(k.slo_tpot_s) + " ms").c_str() : "-", 100 * k.slo_attainment,
                        k.goodput_requests_per_s, 1e3 * k.ttft_s.p99, 1e3 * k.tpot_s.p99);
    }
    std::printf("\nKV cache        %lld blocks (%.0f tokens) per replica, %.1f %% used on average, %.1f %% at most\n",
                static_cast<long long>(r.kv_blocks_per_replica), r.kv_tokens_per_replica, 100 * r.kv_utilization_mean,
                100 * r.kv_utilization_max);
    std::printf(
        "batches         %.1f sequences, %.0f tokens (%.1f decodes) per iteration on average, %.3f ms each; "
        "%lld preemptions\n",
        r.batch_size_mean, r.batch_tokens_mean, r.batch_decodes_mean, 1e3 * r.iteration_s_mean,
        static_cast<long long>(r.preemptions));
    print_serving_mechanisms(p, r);
    std::printf("simulated       %lld iterations, %llu events, %lld cached iteration shapes\n",
                static_cast<long long>(r.iterations), static_cast<unsigned long long>(r.events),
                static_cast<long long>(r.cost_cache_entries));
    print_op_costs(s.cluster.accelerator, o.cost_model, r.op_sources);
    print_device_model(s.cluster.accelerator);
    print_intervals(s, o, ctx.catalog->intervals());
    if (!a.trace.empty()) write_file(a.trace, trace.str());
    if (!a.requests.empty()) {
        std::string csv = workloads::serving::request_csv_header();
        for (const auto& rec : r.records) csv += workloads::serving::request_csv_row(rec, r.slo_class_names);
        write_file(a.requests, csv);
    }
    if (!a.json.empty() || !a.html.empty()) {
        const nlohmann::json j = report_json(plans::make_report(s, o, &ctx.catalog->intervals()));
        if (!a.json.empty()) write_json(a.json, j);
        write_html(a, s.name, &s, [&](report::Page& page) { report::add_serving(page, j, r.records, series); });
    }
    return 0;
}

// `fathom validate` of a training scenario: the replay's size is known before anything is allocated.
int validate_training(const Args& a, const plans::Scenario& s) {
    const workloads::TrainingPlan& p = *s.training();
    const auto too_big =
        plans::check_replay_size(s.model, p, a.max_tasks > 0 ? a.max_tasks : plans::EvaluationContext{}.max_tasks);
    if (!too_big.empty()) throw plans::plan_error(too_big, s.file);
    std::cout << s.file << ": OK (" << s.model.name << ", " << s.cluster.gpus() << " x " << s.cluster.accelerator.id
              << ", dp" << p.layout.dp << " tp" << p.layout.tp << " pp" << p.layout.pp << " vp" << p.layout.vp << " cp"
              << p.layout.cp << ", " << p.microbatches() << " micro-batches)\n";
    return 0;
}

}  // namespace

namespace {

// The files of a training run: --trace, --run-trace, --json and --html, after the work.
void write_training_outputs(const Args& a, const plans::Scenario& s, const plans::Outcome& o,
                            const plans::EvaluationContext& ctx, const std::string& trace) {
    if (!a.trace.empty()) write_file(a.trace, trace);
    if (!a.run_trace.empty()) {
        if (!o.run) throw sim::InputError("--run-trace: no whole run (a `run` section, a plan that fits)", s.file);
        std::ostringstream timeline;
        workloads::run::write_run_trace(o.run->plan.spec, o.run->plan.seed, timeline);
        write_file(a.run_trace, timeline.str());
    }
    if (!a.json.empty() || !a.html.empty()) {
        const nlohmann::json j = report_json(plans::make_report(s, o, &ctx.catalog->intervals()));
        if (!a.json.empty()) write_json(a.json, j);
        write_html(a, s.name, &s, [&](report::Page& page) { report::add_training(page, j, trace); });
    }
}

int cmd_run(const Args& a, bool validate_only) {
    const auto catalog = scenarios::load_catalog();
    const plans::Scenario s = scenarios::load_scenario(one_file(a), *catalog, a.sets);
    for (const auto& w : s.warnings) std::cerr << "fathom: warning: " << printable(w.text()) << "\n";
    if (s.serving()) return cmd_run_serving(a, s, validate_only, cli_context(catalog, s.seed, a));
    if (s.rl()) return cmd_run_rl(a, s, validate_only, cli_context(catalog, s.seed, a));
    if (!a.requests.empty()) throw sim::InputError("--requests is for serving scenarios");
    const workloads::TrainingPlan& p = *s.training();
    if (validate_only) return validate_training(a, s);
    const plans::EvaluationContext ctx = cli_context(catalog, s.seed, a);
    std::ostringstream trace;
    plans::EvaluateOptions opt;
    Progress bar("network: collectives simulated");
    if (s.cluster.network == hardware::NetworkBackend::Simgrid)
        opt.progress = [&bar](int64_t done, int64_t total) { bar(done, total); };
    if (!a.trace.empty() || !a.html.empty()) opt.trace = &trace;
    const plans::Outcome o = naming_file(s.file, [&] { return plans::evaluate(s, ctx, opt); });
    if (!o.ok()) throw plans::plan_error(o.violations, s.file);
    const workloads::StepReport& r = *o.training();
    std::printf("scenario        %s\n", s.name.c_str());
    if (s.model.moe.enabled())
        std::printf("model           %s (%.1fB parameters, %.1fB active)\n", s.model.name.c_str(),
                    s.model.total_params(p.training.seq_len) / 1e9, s.model.active_params(p.training.seq_len) / 1e9);
    else
        std::printf("model           %s (%.1fB parameters)\n", s.model.name.c_str(),
                    s.model.total_params(p.training.seq_len) / 1e9);
    std::printf("cluster         %d x %s (%d nodes x %d, %s, %d x %s, %s)\n", s.cluster.gpus(),
                s.cluster.accelerator.id.c_str(), s.cluster.nodes, s.cluster.gpus_per_node,
                s.cluster.scale_up.id.c_str(), s.cluster.nics_per_node, s.cluster.nic.id.c_str(),
                sim::name(s.cluster.topology));
    if (s.cluster.network == hardware::NetworkBackend::Simgrid)
        std::printf("network         simgrid flows, %s routing\n", s.cluster.routing.c_str());
    std::printf("plan            %s\n", p.describe().c_str());
    std::printf("stack           %s\n", p.stack_preset.empty() ? "fathom defaults" : p.stack_preset.c_str());
    std::printf("\nstep time       %.4f s\n", r.step_time_s);
    std::printf("tokens/s/GPU    %.0f\n", r.tokens_per_s_per_gpu);
    std::printf("model TFLOP/s   %.1f per GPU\n", r.model_tflops_per_gpu);
    std::printf("MFU             %.1f %% (of the %s dense peak)\n", 100 * r.mfu, sim::name(p.stack.kernels.gemm_dtype));
    std::printf("bubble          %.1f %% of the step (mean over stages)\n", 100 * r.bubble_fraction);
    if (p.training.packed())
        std::printf(
            "packed docs     attention %.3f x unpacked on the busiest data-parallel rank, %.3f x the mean rank's\n",
            r.packed_attention_scale, r.packing_imbalance);
    std::printf("exposed comm    %.4f s (mean over stages)\n", r.exposed_comm_s);
    std::printf("\n");
    print_stage_table(r.stages, r.comm_kinds, "");
    std::printf("\nmemory          peak %s of %s per GPU: %s\n", gib(r.peak_memory_bytes).c_str(),
                gib(r.memory_capacity_bytes).c_str(), r.out_of_memory ? "OUT OF MEMORY" : "fits");
    if (p.stack.activation_offload == workloads::ActivationOffload::Ssd) {
        double least = 1;
        for (const auto& st : r.stages) least = std::min(least, st.activations_offloaded);
        std::printf(
            "offload         activations to the SSDs: at least %.0f %% of the offloadable ones (all but two "
            "layers of a chunk), as much as the drives move within each stage's compute\n",
            100 * least);
    }
    std::printf("simulated       %zu tasks, %llu events\n", r.tasks, static_cast<unsigned long long>(r.events));
    if (r.flow_transfers > 0)
        std::printf("flows           %llu transfers as %llu flows sharing the fabric\n",
                    static_cast<unsigned long long>(r.flow_transfers), static_cast<unsigned long long>(r.flows));
    if (o.run) print_run(*o.run);
    else if (s.run) std::printf("\nwhole run       not simulated: the plan does not fit in memory\n");
    print_op_costs(s.cluster.accelerator, o.cost_model, r.op_sources);
    if (const auto outside = r.op_sources.outside_all(); !outside.empty()) {
        std::string ops;
        for (const auto& x : outside) ops += (ops.empty() ? "" : ", ") + x;
        std::fprintf(stderr, "fathom: warning: outside the calibrated range (roofline used): %s\n", ops.c_str());
    }
    print_device_model(s.cluster.accelerator);
    print_intervals(s, o, ctx.catalog->intervals());
    write_training_outputs(a, s, o, ctx, trace.str());
    return 0;
}

int cmd_capacity(const Args& a) {
    const auto catalog = scenarios::load_catalog();
    const plans::Scenario s = scenarios::load_scenario(one_file(a), *catalog, a.sets);
    for (const auto& w : s.warnings) std::cerr << "fathom: warning: " << printable(w.text()) << "\n";
    if (!s.serving()) throw sim::InputError("capacity is for serving scenarios (kind: serving)", s.file);
    const auto& p = *s.serving();
    const plans::EvaluationContext ctx = cli_context(catalog, s.seed, a);
    plans::CapacityResult c;
    {
        Progress bar("capacity");
        c = naming_file(s.file, [&] {
            return plans::find_capacity(s.model, s.cluster, p, ctx, s.seed,
                                        [&bar](int64_t d, int64_t t) { bar(d, t); });
        });
    }
    print_serving_plan(s);
    std::printf("\nSLO             ttft <= %s ms, tpot <= %s ms, for %.0f %% of requests\n",
                p.slo.ttft_s > 0 ? ms(p.slo.ttft_s).c_str() : "-", p.slo.tpot_s > 0 ? ms(p.slo.tpot_s).c_str() : "-",
                100 * p.slo.target_attainment);
    std::printf("offline         %.2f requests/s (all requests at time 0)\n", c.offline_requests_per_s);
    std::printf("capacity        %s%.3f requests/s (median of %zu seeds; spread %.3f .. %.3f)%s\n",
                c.above_max ? ">= " : "", c.rate, c.per_seed.size(), c.rate_min, c.rate_max,
                c.below_min ? "  -- even capacity.min_rate misses the SLOs" : "");
    std::printf("per GPU         %.4f requests/s\n", c.rate / p.gpus());
    // A capacity is a rate: the serving-throughput band. How far the TTFT and TPOT errors near the
    // SLO thresholds move the rate is not propagated (said).
    const auto band = plans::interval_of(catalog->intervals(), plans::serving_regime("requests_per_s"), c.rate,
                                         s.cluster.accelerator);
    nlohmann::json interval = nullptr;
    if (band) {
        const std::string note = band->note + "; the latency bands near the SLOs are not propagated";
        std::printf("90%% interval    %.3f .. %.3f requests/s (%s)\n", band->low, band->high, note.c_str());
        interval = {{"low", band->low}, {"high", band->high}, {"note", note}};
    }
    std::printf("simulations     %zu\n", c.probes.size() + 1);
    if (!a.json.empty() || !a.html.empty()) {
        nlohmann::json probes = nlohmann::json::array();
        for (const auto& x : c.probes)
            probes.push_back(
                {{"seed", x.seed}, {"rate", x.rate}, {"slo_attainment", x.attainment}, {"goodput", x.goodput}});
        const nlohmann::json j = {{"scenario", s.name},
                                  {"capacity_requests_per_s", c.rate},
                                  {"capacity_min", c.rate_min},
                                  {"capacity_max", c.rate_max},
                                  {"per_seed", c.per_seed},
                                  {"below_min_rate", c.below_min},
                                  {"above_max_rate", c.above_max},
                                  {"offline_requests_per_s", c.offline_requests_per_s},
                                  {"interval_90", interval},
                                  {"slo_target", p.slo.target_attainment},
                                  {"probes", probes}};
        if (!a.json.empty()) write_json(a.json, j);
        write_html(a, s.name, &s, [&](report::Page& page) { report::add_capacity(page, j); });
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    bool search = false;  // under mpirun, an error must end every rank
    try {
        const Args a = parse_args(argc, argv);
        search = a.command == "search";
        if (a.command == "version") return print_version();
        if (a.command.empty()) {
            // `fathom` alone is a usage error (stderr, 2); `fathom --help` is an answer.
            (a.help ? std::cout : std::cerr) << general_usage();
            return a.help ? 0 : 2;
        }
        if (a.help) {
            std::cout << command_usage(*find_command(a.command));
            return 0;
        }
        if (a.command == "run") return cmd_run(a, false);
        if (a.command == "validate") return cmd_run(a, true);
        if (a.command == "list") return cmd_list(a);
        if (a.command == "compare") return cmd_compare(a);
        if (a.command == "capacity") return cmd_capacity(a);
        if (a.command == "calibrate") return cmd_calibrate(a);
        if (a.command == "topology") return cmd_topology(a);
        if (a.command == "share") return cmd_share(a);
        if (a.command == "search") return cmd_search(a);
        if (a.command == "completion") return cmd_completion(a);
        if (a.command == "export") return cmd_export(a);
        if (a.command == "import") return cmd_import(a);
        throw std::logic_error("command '" + a.command + "' is in the table but not dispatched");
    } catch (const sim::InputError& e) {
        std::cerr << "fathom: error: " << printable(e.what()) << "\n";
        // Under mpirun the other ranks may be waiting for this one's share: end them all.
        if (search && mpi_world().size > 1) mpi_abort(2);
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "fathom: internal error: " << printable(e.what()) << "\n";
        if (search && mpi_world().size > 1) mpi_abort(1);
        return 1;
    }
}
