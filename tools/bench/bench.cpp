// fathom_bench: how fast the simulator runs (not what it predicts).
//   BM_EngineEvents   schedule and run 1M no-op events (items_per_second = events/s)
//   BM_TaskGraph      a task DAG on 8 streams with cross-stream dependencies (tasks/s)
//   BM_Step/...       wall time to predict one training step of a large published-scale plan;
//                     the predicted step time and task/event counts are reported as counters, with
//                     the wall time per task and per event and the task graph's bytes per task.
//   BM_Step/simgrid_  the same with the SimGrid flow-level network (cluster.network: simgrid)
//   BM_FlowScaling/N  the SimGrid network's cost against its number of flows: an all-reduce of every
//                     rank-aligned DP group (one GPU per node, 8 groups) of N H100 nodes on a
//                     fat-tree-2 with ECMP, plus a 16-GPU all-to-all per pair of nodes
//                     (flows_per_s = simulated flows per wall second; groups of flows alone on
//                     their links are shared max-min outside SimGrid, hardware/network/lone_flows.cpp)
//   BM_Search/T       plan search (plans/search.h) over the whole default training space of Llama
//                     3.1 70B on 1,024 H100 (tp, pp, vp, micro-batch, ZeRO, recompute, bf16 and
//                     fp8) on T threads; candidates_per_s = candidates (pruned or simulated) per
//                     wall second, simulated_per_s = full replays per wall second.
//   BM_ServingSearch/ the serving plan search (plans/serving_search.h) of the bundled
//                     scenarios/examples/search-serving-llama3-70b-64xh100.yaml (Llama 3.1 70B on up
//                     to 64 GPUs, H100 and H200, tp 2/4/8, 1-16 replicas, aggregated and every xPyD
//                     split, two token budgets; 1,000 Poisson requests a candidate) on T threads;
//                     capacity_ the same space on H100 alone, aggregated, ranked by capacity (a
//                     bisection of the request rate per candidate, 1 seed).
//   BM_Serving/...    wall time to simulate a serving run: 100,000 Poisson requests of Llama 3.1
//                     70B on 8 TP4 H100 replicas with chunked prefill (Sarathi, 512-token budget)
//                     near saturation; requests_per_s = simulated requests per wall second.
//   BM_ServingSpeculative/...  the same with EAGLE speculative decoding (3 drafts at 0.7 each;
//                     issue 39: at most 2x BM_Serving's wall time)
//   BM_ServingLora/...  the same with 100 LoRA adapters of rank 16 in 16 slots per replica (issue
//                     39: at most 2x BM_Serving's wall time)
//   BM_ServingAutoscale/...  the same with an autoscaler (queue policy, target 16, 1 to 8
//                     replicas, weights from host memory)
//   BM_TrainingRun/N  N seeds of a 54-day run of a 16,384-GPU job (workloads/run/training_run.h):
//                     ~470 failures and ~1,500 checkpoints each; runs_per_s = simulated runs per
//                     wall second (issue 38: one run under 1 s, 1,000 seeds under 30 s)
//   BM_WholeRunScenario/N  the example whole run (run-llama3-405b-16kxh100.yaml) as `fathom run`
//                     evaluates it: its step, then N seeds of its 128-day run
// Scaling exponents, the largest search and a 10M-request trace: bench_scaling.cpp.
// Run: build/fathom_bench [--benchmark_filter=Step|Serving]
#include "hardware/network/simgrid_network.h"
#include "plans/evaluate.h"
#include "plans/rl_search.h"
#include "plans/search.h"
#include "plans/serving_search.h"
#include "scenarios/catalog.h"
#include "scenarios/scenario.h"
#include "sim/random.h"
#include "sim/simulator.h"
#include "sim/task_graph.h"
#include "tools/bench/bench_common.h"
#include "workloads/run/training_run.h"
#include "workloads/training/schedules/pipeline_schedule.h"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace fathom;
using fathom::bench::catalog;
using fathom::bench::context;
using fathom::bench::plan;

namespace {

void BM_EngineEvents(benchmark::State& state) {
    const int64_t n = state.range(0);
    // Event times drawn uniformly over 1 ms so the heap sees a random insertion order.
    std::vector<sim::Time> times;
    times.reserve(static_cast<size_t>(n));
    sim::RandomStream rng(1);
    for (int64_t i = 0; i < n; ++i) times.push_back(sim::Time::from_ps(static_cast<int64_t>(rng.uniform() * 1e9)));
    uint64_t ran = 0;
    for (auto _ : state) {
        sim::Simulator sim;
        for (const sim::Time t : times) sim.schedule_at(t, [] {});
        sim.run();
        ran += sim.events_processed();
    }
    benchmark::DoNotOptimize(ran);
    state.SetItemsProcessed(state.iterations() * n);
    state.counters["events"] = static_cast<double>(n);
}
BENCHMARK(BM_EngineEvents)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

void BM_TaskGraph(benchmark::State& state) {
    constexpr int kStreams = 8;
    const int per_stream = static_cast<int>(state.range(0));
    for (auto _ : state) {
        sim::Simulator sim;
        sim::TaskGraph g(sim);
        std::vector<sim::StreamId> streams;
        for (int s = 0; s < kStreams; ++s) streams.push_back(g.add_stream("s" + std::to_string(s), "dev"));
        const uint32_t name = g.intern("t");
        // Task i of stream s waits for task i-1 of stream (s+1) mod 8 (and, being in order, for
        // task i-1 of its own stream): a wavefront across all streams.
        std::vector<sim::TaskId> prev(kStreams), cur(kStreams);
        for (int i = 0; i < per_stream; ++i) {
            for (int s = 0; s < kStreams; ++s) {
                cur[static_cast<size_t>(s)] =
                    g.add_task(streams[static_cast<size_t>(s)], sim::Time::from_ns(1000 + 37 * s), name);
                if (i > 0) g.add_dependency(prev[static_cast<size_t>((s + 1) % kStreams)], cur[static_cast<size_t>(s)]);
            }
            prev.swap(cur);
        }
        g.start();
        sim.run();
        benchmark::DoNotOptimize(g.end_time(static_cast<sim::TaskId>(g.task_count() - 1)));
    }
    state.SetItemsProcessed(state.iterations() * kStreams * per_stream);
}
BENCHMARK(BM_TaskGraph)->Arg(1 << 15)->Unit(benchmark::kMillisecond);

struct StepCase {
    std::string model;
    plans::ClusterRequest cluster;
    workloads::TrainingPlan plan;
};

void BM_Step(benchmark::State& state, const StepCase& c) {
    const auto& model = catalog().model(c.model);
    const auto cluster = plans::build_cluster(c.cluster, catalog());
    workloads::StepReport r;
    for (auto _ : state) {
        r = *plans::evaluate_training(model, cluster, c.plan, context()).training();
        double sink = r.step_time_s;  // a copy: DoNotOptimize on the member itself left garbage in it
        benchmark::DoNotOptimize(sink);
    }
    state.counters["gpus"] = cluster.gpus();
    state.counters["step_s"] = r.step_time_s;
    state.counters["mfu"] = r.mfu;
    state.counters["tasks"] = static_cast<double>(r.tasks);
    state.counters["events"] = static_cast<double>(r.events);
    state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(r.events));
    // Wall seconds per task and per event (printed with SI prefixes: 80n is 80 ns), and the task
    // graph's bytes per task.
    const auto per =
        benchmark::Counter::Flags(benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
    state.counters["s_per_task"] = benchmark::Counter(static_cast<double>(r.tasks), per);
    state.counters["s_per_event"] = benchmark::Counter(static_cast<double>(r.events), per);
    state.counters["graph_bytes_per_task"] = static_cast<double>(r.graph_bytes) / static_cast<double>(r.tasks);
}

// GPT-3 175B on 1,024 H100 (128 DGX nodes, 8 x 400G IB): tp 8, pp 8 interleaved with vp 6
// (96 layers / 48 virtual stages = 2 each), dp 16; 1536 sequences of 2048 -> 96 micro-batches
// per replica, a multiple of pp as interleaving requires.
StepCase gpt3_1024_h100() {
    StepCase c;
    c.model = "gpt3-175b";
    c.cluster.accelerator = "h100-sxm-80gb";
    c.cluster.nodes = 128;
    c.cluster.nic = "ib-ndr-400g";
    c.plan = plan(8, 8, 16, 6, 1536, 2048);
    return c;
}

// GPT-3 175B on 12,288 A100 (1,536 nodes, RoCE, 3-tier fat tree), MegaScale-like: tp 8, pp 8
// 1F1B, dp 192; 6144 sequences -> 32 micro-batches per replica.
StepCase gpt3_12288_a100() {
    StepCase c;
    c.model = "gpt3-175b";
    c.cluster.accelerator = "a100-sxm-80gb";
    c.cluster.nodes = 1536;
    c.cluster.nic = "roce-200g";
    c.cluster.topology = hardware::ScaleOutTopology::FatTree3;
    c.plan = plan(8, 8, 192, 1, 6144, 2048);
    return c;
}

// Llama 3.1 405B on 16,384 H100 (2,048 nodes): tp 8, pp 16 1F1B, dp 128; 2048 sequences of 8192
// -> 16 micro-batches. 126 layers over 16 stages: 7 on the first and last stage (which also hold
// the embedding and the output layer), 8 on the 14 others (7 + 14 x 8 + 7 = 126).
StepCase llama405_16384_h100() {
    StepCase c;
    c.model = "llama3.1-405b";
    c.cluster.accelerator = "h100-sxm-80gb";
    c.cluster.nodes = 2048;
    c.cluster.nic = "ib-ndr-400g";
    c.cluster.topology = hardware::ScaleOutTopology::FatTree3;
    c.plan = plan(8, 16, 128, 1, 2048, 8192);
    c.plan.training.layers_per_virtual_stage.assign(16, 8);
    c.plan.training.layers_per_virtual_stage.front() = 7;
    c.plan.training.layers_per_virtual_stage.back() = 7;
    return c;
}

// DeepSeek-V3 (MoE + MLA) on 2,048 H800, the layout of its technical report: pp 16, ep 64, dp
// 128, no TP, 1F1B (DualPipe is not implemented), 15,360 sequences of 4096 -> 120 micro-batches;
// 61 layers over 16 stages (4 on the first 13, 3 on the last 3), DeepEP dispatch.
StepCase deepseek_v3_2048_h800() {
    StepCase c;
    c.model = "deepseek-v3";
    c.cluster.accelerator = "h800-sxm-80gb";
    c.cluster.scale_up = "nvlink4-h800";
    c.cluster.nodes = 256;
    c.cluster.nic = "ib-ndr-400g";
    c.plan = plan(1, 16, 128, 1, 15360, 4096);
    c.plan.layout.sequence_parallel = false;
    c.plan.layout.ep = 64;
    c.plan.stack.moe_dispatcher = models::MoeDispatcher::DeepEp;
    c.plan.training.recompute = workloads::Recompute::Selective;
    c.plan.training.layers_per_virtual_stage.assign(16, 4);
    for (int v = 13; v < 16; ++v) c.plan.training.layers_per_virtual_stage[static_cast<size_t>(v)] = 3;
    return c;
}

// The same steps with the SimGrid flow-level network (cluster.network: simgrid, ECMP): every
// distinct collective of the step priced with all its sibling groups, in a child process each, then
// the step's transfers run as flows on one fabric (the network's timer, another child process).
StepCase with_simgrid(StepCase c) {
    c.cluster.network = hardware::NetworkBackend::Simgrid;
    return c;
}

BENCHMARK_CAPTURE(BM_Step, gpt3_175b_1024xH100_tp8_pp8_vp6_dp16, gpt3_1024_h100())->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Step, simgrid_gpt3_175b_1024xH100_tp8_pp8_vp6_dp16, with_simgrid(gpt3_1024_h100()))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Step, deepseek_v3_2048xH800_pp16_ep64_dp128, deepseek_v3_2048_h800())
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Step, gpt3_175b_12288xA100_tp8_pp8_dp192, gpt3_12288_a100())->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Step, llama31_405b_16384xH100_tp8_pp16_dp128, llama405_16384_h100())
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Step, simgrid_llama31_405b_16384xH100_tp8_pp16_dp128, with_simgrid(llama405_16384_h100()))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace

// The serving benchmark: 100k Poisson requests, 1024 prompt / 256 output tokens, Llama 3.1
// 70B on 8 replicas of TP4 H100, Sarathi-Serve with a 512-token budget, at 90% of the rate the
// replicas sustain offline (65 requests/s: `fathom run` with arrival: offline), i.e. 58 requests/s.
void BM_Search(benchmark::State& state) {
    const auto& model = catalog().model("llama3-70b");
    plans::ClusterRequest req;
    req.accelerator = "h100-sxm-80gb";
    req.nodes = 128;
    req.nic = "ib-ndr-400g";
    const auto cluster = plans::build_cluster(req, catalog());
    workloads::TrainingPlan base = plan(8, 4, 32, 1, 1024, 8192);
    plans::SearchSpace space;
    space.set_axis("search.dtype", {std::string("bf16"), std::string("fp8")});
    plans::SearchOptions opt;
    opt.threads = static_cast<int>(state.range(0));
    plans::SearchResult r;
    for (auto _ : state) r = plans::search_training(model, cluster, base, space, context(), opt);
    const double n = static_cast<double>(r.candidates.size());
    state.counters["candidates"] = n;
    state.counters["simulated"] = static_cast<double>(r.evaluated);
    state.counters["candidates_per_s"] = benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["simulated_per_s"] =
        benchmark::Counter(static_cast<double>(r.evaluated), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Search)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

void BM_ServingSearch(benchmark::State& state, bool capacity) {
    plans::Scenario s = scenarios::load_scenario(
        std::string(FATHOM_SOURCE_DIR) + "/scenarios/examples/search-serving-llama3-70b-64xh100.yaml", catalog());
    plans::SearchSpace space = *s.search;
    auto base = *s.serving();
    if (capacity) {
        space.set_axis("search.accelerator", {std::string("h100-sxm-80gb")});
        space.set_axis("search.disaggregation", {std::string("off")});
        space.objective = plans::Objective::Capacity;
        base.capacity.seeds = 1;
    }
    plans::SearchOptions opt;
    opt.threads = static_cast<int>(state.range(0));
    plans::ServingSearchResult r;
    for (auto _ : state) r = plans::search_serving(s.model, s.cluster, base, space, context(), s.seed, opt);
    const double n = static_cast<double>(r.candidates.size());
    state.counters["candidates"] = n;
    state.counters["simulated"] = static_cast<double>(r.evaluated);
    state.counters["candidates_per_s"] = benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(BM_ServingSearch, rate, false)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_ServingSearch, capacity, true)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

// The serving benchmark's run, with `extra` (", key: value" of the serving section) when given.
void serving_run(benchmark::State& state, const std::string& extra) {
    const plans::Scenario s = bench::serving_scenario(extra, bench::poisson_traffic(state.range(0), 100000));
    int64_t requests = 0;
    workloads::serving::ServingReport last;
    for (auto _ : state) {
        const plans::Outcome o = plans::evaluate(s, context());
        last = *o.serving();
        requests += last.all_requests;
    }
    state.counters["requests_per_s"] = benchmark::Counter(static_cast<double>(requests), benchmark::Counter::kIsRate);
    state.counters["iterations"] = static_cast<double>(last.iterations);
    state.counters["sim_output_tok_s"] = last.output_tokens_per_s;
    state.counters["ttft_p99_ms"] = last.ttft_s.p99 * 1e3;
}
void BM_Serving(benchmark::State& state) { serving_run(state, ""); }
BENCHMARK(BM_Serving)->Arg(58)->Unit(benchmark::kMillisecond)->Iterations(1);
// The same with EAGLE speculative decoding (3 drafts at 0.7): issue 39's bound, at most 2x slower.
void BM_ServingSpeculative(benchmark::State& state) {
    serving_run(state, ", speculative: {method: eagle, tokens: 3, acceptance: 0.7}");
}
BENCHMARK(BM_ServingSpeculative)->Arg(58)->Unit(benchmark::kMillisecond)->Iterations(1);
// The same with 100 LoRA adapters of rank 16 (Zipf 1) in 16 slots: issue 39's bound, at most 2x slower.
void BM_ServingLora(benchmark::State& state) { serving_run(state, ", lora: {adapters: 100, rank: 16, max_loras: 16}"); }
BENCHMARK(BM_ServingLora)->Arg(58)->Unit(benchmark::kMillisecond)->Iterations(1);
// The same with an autoscaler (queue policy, 16 requests a replica, 1 to 8 replicas, weights from
// host memory): the evaluations every 15 s and the replicas' starts and drains.
void BM_ServingAutoscale(benchmark::State& state) {
    serving_run(state, ", autoscale: {policy: queue, target: 16, weights_from: host}");
}
BENCHMARK(BM_ServingAutoscale)->Arg(58)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_FlowScaling(benchmark::State& state) {
    plans::ClusterRequest req;
    req.accelerator = "h100-sxm-80gb";
    req.nodes = static_cast<int>(state.range(0));
    req.nic = "ib-ndr-400g";
    req.topology = hardware::ScaleOutTopology::FatTree2;
    const auto cluster = plans::build_cluster(req, catalog());
    const auto net = hardware::make_simgrid_network(cluster, "ecmp");
    std::vector<hardware::CollectiveCall> calls;
    for (const auto& g : hardware::sibling_groups(hardware::CommGroup{req.nodes, 8}, cluster.gpus()))
        calls.push_back({hardware::Collective::AllReduce, 1e9, g, 0.0});
    for (const auto& g : hardware::sibling_groups(hardware::CommGroup{16, 1}, cluster.gpus()))
        calls.push_back({hardware::Collective::AllToAll, 256e6, g, 0.0});
    int64_t flows = 0;
    for (auto _ : state) {
        const auto r = net->run(calls);
        flows = 0;
        for (const auto& c : r) flows += c.flows;
        benchmark::DoNotOptimize(flows);
    }
    state.counters["gpus"] = cluster.gpus();
    state.counters["flows"] = static_cast<double>(flows);
    state.counters["flows_per_s"] =
        benchmark::Counter(static_cast<double>(flows) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FlowScaling)->Arg(16)->Arg(128)->Arg(1024)->Unit(benchmark::kMillisecond)->Iterations(1);

// 54 days of Llama 3 405B's pre-training on 16,384 H100 as the Llama 3 report states it (466
// interruptions in 54 days: 0.36 an hour), hourly synchronous checkpoints: 1,000 seeds (one run
// is ~470 failures and ~1,500 checkpoints, events, not steps).
void BM_TrainingRun(benchmark::State& state) {
    workloads::run::RunSpec s;
    s.step_s = 14.0;  // an estimate of one step at this scale; the run's event count does not depend on it
    s.target_steps = static_cast<int64_t>(54 * 24 * 3600 / 14.0 * 0.9);
    s.failures = {{"hardware", 0.36 * 0.78}, {"other", 0.36 * 0.22}};
    s.checkpoint = {3600, 60, 60, 300};
    s.detect_s = 120;
    s.restart_s = 600;
    const auto seeds = static_cast<uint64_t>(state.range(0));
    double wall = 0, failures = 0;
    for (auto _ : state) {
        wall = failures = 0;
        for (uint64_t seed = 1; seed <= seeds; ++seed) {
            const auto r = workloads::run::simulate_run(s, seed);
            wall += r.wall_s;
            failures += static_cast<double>(r.failures());
        }
        benchmark::DoNotOptimize(wall);
    }
    state.counters["runs_per_s"] =
        benchmark::Counter(static_cast<double>(seeds) * state.iterations(), benchmark::Counter::kIsRate);
    state.counters["mean_days"] = wall / static_cast<double>(seeds) / 86400;
    state.counters["mean_failures"] = failures / static_cast<double>(seeds);
}
BENCHMARK(BM_TrainingRun)->Arg(1)->Arg(1000)->Unit(benchmark::kMillisecond);

// The whole example run of scenarios/examples/run-llama3-405b-16kxh100.yaml end to end as `fathom
// run` does it, the step priced once and N seeds of its 128-day run (Llama 3's failure profile,
// asynchronous checkpoints every two steps: ~920 failures and ~465,000 checkpoints a run).
void BM_WholeRunScenario(benchmark::State& state) {
    const auto& ctx = context();
    const std::string seeds = "run.seeds=" + std::to_string(state.range(0));
    const plans::Scenario s = scenarios::load_scenario(
        std::string(FATHOM_SOURCE_DIR) + "/scenarios/examples/run-llama3-405b-16kxh100.yaml", *ctx.catalog, {seeds});
    double days = 0;
    for (auto _ : state) {
        const plans::Outcome o = plans::evaluate(s, ctx);
        days = o.run->summary.wall_p50_s / 86400;
        benchmark::DoNotOptimize(days);
    }
    state.counters["median_days"] = days;
}
BENCHMARK(BM_WholeRunScenario)->Arg(200)->Arg(1000)->Unit(benchmark::kMillisecond);

// One synchronous GRPO iteration (issue 40's bound: under 1 s on one core): 512 prompts x 16
// answers (lognormal, mean 2,000 tokens, capped at 8,192) on 64 H100, colocated; Qwen3-8B as 32
// vLLM replicas of TP2 (arg 8) or Qwen3-32B as 16 of TP4 (arg 32), the trainer FSDP over all 64.
void BM_RlIteration(benchmark::State& state) {
    const bool large = state.range(0) == 32;
    const std::string model =
        large ? "{name: qwen3-32b, layers: 64, hidden: 5120, heads: 64, kv_heads: 8, head_dim: 128, ffn: 25600, "
                "vocab: 151936, max_seq_len: 40960, activation: swiglu, norm: rmsnorm, position_embedding: rope}"
              : "qwen3-8b";
    const std::string yaml =
        "kind: rl\nmodel: " + model +
        "\ncluster: {accelerator: h100-sxm-80gb, nodes: 8, gpus_per_node: 8}\n"
        "rl: {prompts: 512, samples: 16, prompt: {distribution: lognormal, mean: 600, stddev: 300, max: 2048},\n"
        "     response: {distribution: lognormal, mean: 2000, stddev: 2000, max: 8192}, minibatches: 4, reference: "
        "true}\n"
        "serving: {engine: vllm, tp: " +
        std::string(large ? "4" : "2") +
        ", prefix_caching: true, gpu_memory_utilization: 0.6}\n"
        "parallel: {tp: 1}\ntraining: {seq_len: 16384, micro_batch_size: 1, zero_stage: 3, recompute: full}\n"
        "stack: {preset: torchtitan, dtype: bf16}\n";
    const plans::Scenario s = scenarios::parse_scenario(scenarios::load_yaml_string(yaml, "bench"), catalog());
    double iteration = 0;
    for (auto _ : state) {
        const plans::Outcome o = plans::evaluate(s, context());
        if (!o.ok()) {
            state.SkipWithError(plans::describe(o.violations).c_str());
            break;
        }
        // DoNotOptimize on the const report: GCC 12 miscompiles its read-write form on a double
        // local here (the counter read 0).
        const workloads::rl::RlReport& r = *o.rl();
        benchmark::DoNotOptimize(r);
        iteration = r.iteration_s;
    }
    state.counters["sim_iteration_s"] = iteration;
}
BENCHMARK(BM_RlIteration)->Arg(8)->Arg(32)->Unit(benchmark::kMillisecond);

// An RL search (issue 40's bound: 500 candidates under 60 s on 2 cores): the example
// scenarios/examples/rl-search-qwen3-8b-64xh100.yaml with its axes widened to 468 candidates
// (colocated or 5 rollout pools, rollout TP 1-4, trainer TP 1-4 and PP 1-2, staleness 0-4; N 16;
// 1 iteration synchronous, 8 asynchronous), on 2 threads.
void BM_RlSearch(benchmark::State& state) {
    const auto& ctx = context();
    const plans::Scenario s = scenarios::load_scenario(
        std::string(FATHOM_SOURCE_DIR) + "/scenarios/examples/rl-search-qwen3-8b-64xh100.yaml", *ctx.catalog,
        {"rl.iterations=0", "search.rl_rollout_gpus=[16, 24, 32, 40, 48]", "search.rl_trainer_tp=[1, 2, 4]",
         "search.rl_trainer_pp=[1, 2]", "search.rl_samples=[16]", "search.rl_staleness=[0, 1, 2, 3, 4]"});
    plans::SearchOptions opt;
    opt.threads = static_cast<int>(state.range(0));
    int64_t candidates = 0;
    for (auto _ : state) {
        const plans::RlSearchResult r = plans::search_rl(s.model, s.cluster, *s.rl(), *s.search, ctx, s.seed, opt);
        benchmark::DoNotOptimize(r.evaluated);
        candidates = static_cast<int64_t>(r.candidates.size());
    }
    state.counters["candidates"] = static_cast<double>(candidates);
}
BENCHMARK(BM_RlSearch)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

BENCHMARK_MAIN();
