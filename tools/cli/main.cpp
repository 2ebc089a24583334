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
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace po = boost::program_options;
using namespace fathom;
using namespace fathom::cli;

namespace {

constexpr const char* kUsage = R"(usage: fathom <command> [options]

commands:
  run SCENARIO.yaml [--json FILE] [--trace FILE] [--requests FILE] [--run-trace FILE] [--network simgrid]
      [--set key=value ...]
      predict one training step (and, with a `run` section, the whole run to its target over
      seeds), or serve a scenario's traffic (kind: serving); --json writes the metrics, --trace a
      Perfetto timeline of the step or the serving run, --run-trace one of the whole run (its first
      seed, at day scale), --requests (serving) the per-request CSV; --network simgrid costs
      collectives as flows sharing the topology graph's links (cluster.network)
  topology SCENARIO.yaml [-o FILE.dot]
      the cluster as a graph: a summary, and GraphViz DOT (default SCENARIO-name.dot)
  share TRAINING.yaml TRAINING.yaml ... [--placement packed|interleaved] [--json FILE]
      training jobs on one fabric (the first scenario's cluster, simulated as flows): each job's
      step alone on its nodes and with the others running, and its slowdown
  capacity SERVING.yaml [--json FILE] [--set key=value ...]
      the highest request rate whose SLO attainment meets slo.target (bisection, several seeds)
  search SCENARIO.yaml [--threads N] [--max-candidates N] [--time-limit S] [--json FILE] [-o FILE.csv]
      every plan of the scenario's `search` section, pruned by plan checks and memory, the rest
      simulated in parallel and ranked; training (parallel degrees, micro and global batch,
      ZeRO, recompute, schedule, dtype) by goodput, throughput or cost; serving (device type,
      tp, pp, replicas, xPyD disaggregation, policy, batch limits) by SLO-meeting goodput per
      GPU, throughput, cost or capacity; -o writes every candidate as CSV, --json as JSON;
      identical results at any thread count
  validate SCENARIO.yaml [--set key=value ...]
      check a scenario without running it
  list [hardware|models|stacks|engines|datasets|sources|schedules|collectives|policies|routers|autoscalers|
        topologies|routing|keys]
      list catalog entries, registered algorithms, or every scenario key (a markdown table)
  compare MEASURED.yaml [--json FILE] [--other-metrics] [--case ID] [--network simgrid] [--rank-plans]
          [--intervals FILE]
      predict every case of a measurement file (measured-format v1) and report the errors and
      the 90% bands they give per regime (--intervals writes them: scenarios/intervals.yaml);
      --other-metrics adds each case's further measurements (with their variants), reported apart;
      --case ID runs one case and shows the plan it ran, its assumptions and per-stage breakdown;
      --rank-plans searches the plans around each training case's published one and reports
      where it ranks and how much faster fathom's best is predicted to be
  calibrate fit MEASUREMENTS.csv --device ID [--out TABLE.yaml]
      fit a per-op cost table from kernel measurements (tools/calibrate) and report the
      roofline's and the table's per-op errors against them
  calibrate layers LAYERS.csv --device ID [--ops]
      measured whole layers (tools/calibrate/layers.py) against fathom's per-op sums, roofline
      and (when table.yaml lies beside the CSV) the calibrated table; --ops lists each row's ops
)";

Args parse_args(int argc, char** argv) {
    po::options_description opts("options");
    opts.add_options()("json", po::value<std::string>(), "write metrics as JSON")("trace", po::value<std::string>(),
                                                                                  "write a Chrome/Perfetto trace")(
        "run-trace", po::value<std::string>(), "write the whole run's Chrome/Perfetto timeline")(
        "requests", po::value<std::string>(), "serving: write the per-request CSV")(
        "set", po::value<std::vector<std::string>>()->composing(), "override a scenario field: key=value")(
        "collective-algorithm", po::value<std::string>(), "force one collective algorithm")(
        "network", po::value<std::string>(), "network backend: analytical or simgrid (sets cluster.network)")(
        "device", po::value<std::string>(), "accelerator id (calibrate)")("placement", po::value<std::string>(),
                                                                          "share: packed or interleaved nodes")(
        "threads", po::value<int>(), "search: worker threads (default: the machine's)")(
        "max-candidates", po::value<long long>(), "search: only the first N candidates")(
        "time-limit", po::value<double>(),
        "search: stop enumerating and starting candidates S seconds after the start")(
        "max-tasks", po::value<long long>(), "the most tasks a training step's replay may hold (default 1e8, ~17 GB)")(
        "max-requests", po::value<long long>(), "the most requests a serving simulation may hold (default 1e7, ~4 GB)")(
        "other-metrics", "compare: also predict each case's other_metrics entries (variants)")(
        "rank-plans", "compare: rank each training case's published plan in a search around it")(
        "ops", "calibrate layers: also print each row's ops with their predicted times")(
        "case", po::value<std::string>(), "compare: only this case, with its plan and per-stage breakdown")(
        "intervals", po::value<std::string>(), "compare: write the 90% validation bands of the residuals")(
        "out,o", po::value<std::string>(), "output file")("args", po::value<std::vector<std::string>>(), "positional")(
        "help,h", "help");
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
    if (vm.count("help")) {
        a.command = "help";
        return a;
    }
    if (vm.count("args")) {
        auto v = vm["args"].as<std::vector<std::string>>();
        a.command = v.front();
        a.positional.assign(v.begin() + 1, v.end());
    }
    if (vm.count("json")) a.json = vm["json"].as<std::string>();
    if (vm.count("trace")) a.trace = vm["trace"].as<std::string>();
    if (vm.count("run-trace")) a.run_trace = vm["run-trace"].as<std::string>();
    if (vm.count("requests")) a.requests = vm["requests"].as<std::string>();
    if (vm.count("set")) a.sets = vm["set"].as<std::vector<std::string>>();
    if (vm.count("network")) {
        a.network = vm["network"].as<std::string>();
        if (a.command != "compare") a.sets.push_back("cluster.network=" + a.network);
    }
    if (vm.count("collective-algorithm")) a.algorithm = vm["collective-algorithm"].as<std::string>();
    a.other_metrics = vm.count("other-metrics") > 0;
    a.rank_plans = vm.count("rank-plans") > 0;
    a.ops = vm.count("ops") > 0;
    if (vm.count("case")) a.only_case = vm["case"].as<std::string>();
    if (vm.count("intervals")) a.intervals = vm["intervals"].as<std::string>();
    if (vm.count("device")) a.device = vm["device"].as<std::string>();
    if (vm.count("placement")) a.placement = vm["placement"].as<std::string>();
    if (vm.count("out")) a.out = vm["out"].as<std::string>();
    if (vm.count("threads")) {
        a.threads = vm["threads"].as<int>();
        if (a.threads < 1 || a.threads > 1024)
            throw sim::InputError("command line: --threads must be between 1 and 1024");
    }
    // Counts: positive when given (0 in Args: not given, the default).
    for (auto [name, into] : {std::pair{"max-candidates", &a.max_candidates}, std::pair{"max-tasks", &a.max_tasks},
                              std::pair{"max-requests", &a.max_requests}}) {
        if (!vm.count(name)) continue;
        *into = vm[name].as<long long>();
        if (*into < 1) throw sim::InputError(std::string("command line: --") + name + " must be >= 1");
    }
    if (vm.count("time-limit")) {
        a.time_limit = vm["time-limit"].as<double>();
        if (!(a.time_limit > 0) || a.time_limit > 1e7)
            throw sim::InputError("command line: --time-limit must be a positive number of seconds");
    }
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
    opt.keep_records = !a.requests.empty();
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
    if (!a.json.empty()) write_json(a.json, report_json(plans::make_report(s, o, &ctx.catalog->intervals())));
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

void fathom::cli::print_stage_table(const std::vector<workloads::StageReport>& stages,
                                    const std::vector<models::GroupKind>& kinds, const char* indent) {
    // A column per group kind the step moved data over: that stream's busy time.
    std::printf("%s%-6s %6s %10s", indent, "stage", "layers", "compute_s");
    for (models::GroupKind g : kinds) std::printf(" %10s", (std::string(sim::name(g)) + "_s").c_str());
    std::printf(" %10s %10s %12s\n", "exposed_s", "idle_s", "peak_mem");
    for (size_t i = 0; i < stages.size(); ++i) {
        const auto& st = stages[i];
        std::printf("%s%-6zu %6d %10.4f", indent, i, st.layers, st.compute_s);
        for (models::GroupKind g : kinds) std::printf(" %10.4f", st.comm(g));
        std::printf(" %10.4f %10.4f %12s\n", st.exposed_comm_s, st.idle_s, gib(st.memory.total()).c_str());
    }
}

namespace {

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
    if (!a.trace.empty()) opt.trace = &trace;
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
    if (!a.trace.empty()) write_file(a.trace, trace.str());
    if (!a.run_trace.empty()) {
        if (!o.run) throw sim::InputError("--run-trace: no whole run (a `run` section, a plan that fits)", s.file);
        std::ostringstream timeline;
        workloads::run::write_run_trace(o.run->plan.spec, o.run->plan.seed, timeline);
        write_file(a.run_trace, timeline.str());
    }
    if (!a.json.empty()) write_json(a.json, report_json(plans::make_report(s, o, &ctx.catalog->intervals())));
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
    if (!a.json.empty()) {
        nlohmann::json probes = nlohmann::json::array();
        for (const auto& x : c.probes)
            probes.push_back(
                {{"seed", x.seed}, {"rate", x.rate}, {"slo_attainment", x.attainment}, {"goodput", x.goodput}});
        write_json(a.json, {{"scenario", s.name},
                            {"capacity_requests_per_s", c.rate},
                            {"capacity_min", c.rate_min},
                            {"capacity_max", c.rate_max},
                            {"per_seed", c.per_seed},
                            {"below_min_rate", c.below_min},
                            {"above_max_rate", c.above_max},
                            {"offline_requests_per_s", c.offline_requests_per_s},
                            {"interval_90", interval},
                            {"slo_target", p.slo.target_attainment},
                            {"probes", probes}});
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    bool search = false;  // under mpirun, an error must end every rank
    try {
        const Args a = parse_args(argc, argv);
        search = a.command == "search";
        if (a.command.empty() || a.command == "help") {
            std::cout << kUsage;
            return a.command.empty() ? 2 : 0;
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
        throw sim::InputError("unknown command '" + a.command + "'\n" + kUsage);
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
