// fathom_bench, part 2: how the cost grows with the work, and the largest workloads.
//   BM_StepScaling/gpus      GPT-3 175B, tp 8 pp 8 vp 6, 96 micro-batches a replica, on 1,024,
//                            4,096 and 16,384 H100 (dp 16, 64, 256)
//   BM_StepScaling/microbatches  the same on 1,024 H100 with 24, 96 and 384 micro-batches
//   BM_ServingScaling        BM_Serving's workload with 10,000, 30,000 and 100,000 requests
//   BM_SearchScaling         the training search of BM_Search (Llama 3.1 70B on 1,024 H100, 2
//                            threads) over the same plans in bf16; bf16 and fp8; bf16, fp8 and
//                            fp16 (1,872, 3,744 and 5,616 candidates: issue 41's 5,000). The
//                            candidates are the work because each costs alike (a space that also
//                            doubled the global batch grew as 1.3: twice the micro-batches a step)
// Each runs its three sizes once per iteration and reports the wall time of each (t1_ms, t2_ms,
// t3_ms), the work of each (w1..w3) and `exponent`, the least-squares slope of log time against
// log work: 1 is linear; above 1 is a cost that grows faster than the work.
//   BM_ServingTrace/N  N requests (Poisson at 58/s, 1024 + 256 tokens) streamed from a CSV trace
//                      written beforehand, on BM_Serving's replicas; peak_rss_mb is the process's
//                      peak resident memory during the run (the peak is reset before it through
//                      /proc/self/clear_refs), rss_growth_mb its growth over the memory before
//                      (alone, --benchmark_filter=ServingTrace/10000000, for a clean figure: after
//                      other benchmarks the heap the process kept hides the growth).
#include "plans/search.h"
#include "sim/random.h"
#include "tools/bench/bench_common.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace fathom;
using fathom::bench::catalog;
using fathom::bench::context;

namespace {

double seconds_of(const std::function<void()>& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs the three sizes (f(i) for i = 0, 1, 2, returning its work), then reports times and exponent.
void scaling(benchmark::State& state, const std::function<double(int)>& f) {
    std::vector<double> work(3), secs(3);
    for (auto _ : state)
        for (int i = 0; i < 3; ++i)
            secs[static_cast<size_t>(i)] = seconds_of([&] { work[static_cast<size_t>(i)] = f(i); });
    for (int i = 0; i < 3; ++i) {
        state.counters["w" + std::to_string(i + 1)] = work[static_cast<size_t>(i)];
        state.counters["t" + std::to_string(i + 1) + "_ms"] = secs[static_cast<size_t>(i)] * 1e3;
    }
    state.counters["exponent"] = bench::growth_exponent(work, secs);
}

double step(int nodes, int dp, int global_batch) {
    plans::ClusterRequest req;
    req.accelerator = "h100-sxm-80gb";
    req.nodes = nodes;
    req.nic = "ib-ndr-400g";
    if (nodes > 512) req.topology = hardware::ScaleOutTopology::FatTree3;
    const auto cluster = plans::build_cluster(req, catalog());
    const auto p = bench::plan(8, 8, dp, 6, global_batch, 2048);
    const plans::Outcome o = plans::evaluate_training(catalog().model("gpt3-175b"), cluster, p, context());
    benchmark::DoNotOptimize(*o.training());
    return static_cast<double>(o.training()->tasks);
}

void BM_StepScaling(benchmark::State& state, bool gpus) {
    scaling(state, [&](int i) {
        const int k = 1 << (2 * i);  // 1, 4, 16
        if (gpus) {
            step(128 * k, 16 * k, 1536 * k);
            return 1024.0 * k;
        }
        return step(128, 16, 384 * k);  // the work: tasks (24, 96, 384 micro-batches)
    });
}
BENCHMARK_CAPTURE(BM_StepScaling, gpus, true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_StepScaling, microbatches, false)->Unit(benchmark::kMillisecond);

void BM_ServingScaling(benchmark::State& state) {
    static const int64_t sizes[] = {10000, 30000, 100000};
    scaling(state, [&](int i) {
        const plans::Scenario s = bench::serving_scenario("", bench::poisson_traffic(58, sizes[i]));
        const plans::Outcome o = plans::evaluate(s, context());
        benchmark::DoNotOptimize(*o.serving());
        return static_cast<double>(o.serving()->all_requests);
    });
}
BENCHMARK(BM_ServingScaling)->Unit(benchmark::kMillisecond)->Iterations(1);

plans::SearchResult training_search(int size, int threads) {
    plans::ClusterRequest req;
    req.accelerator = "h100-sxm-80gb";
    req.nodes = 128;
    req.nic = "ib-ndr-400g";
    const auto cluster = plans::build_cluster(req, catalog());
    plans::SearchSpace space;
    std::vector<plans::KeyValue> dtypes{std::string("bf16"), std::string("fp8"), std::string("fp16")};
    dtypes.resize(static_cast<size_t>(size + 1));  // the same plans in one, two and three precisions
    space.set_axis("search.dtype", dtypes);
    plans::SearchOptions opt;
    opt.threads = threads;
    return plans::search_training(catalog().model("llama3-70b"), cluster, bench::plan(8, 4, 32, 1, 1024, 8192), space,
                                  context(), opt);
}

void BM_SearchScaling(benchmark::State& state) {
    scaling(state, [&](int i) {
        const plans::SearchResult r = training_search(i, 2);
        return static_cast<double>(r.candidates.size());
    });
}
BENCHMARK(BM_SearchScaling)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

// The largest training search alone (issue 41: over 5,000 candidates in under 2 s on two threads).
void BM_SearchLarge(benchmark::State& state) {
    int64_t n = 0, simulated = 0;
    for (auto _ : state) {
        const plans::SearchResult r = training_search(2, static_cast<int>(state.range(0)));
        n = static_cast<int64_t>(r.candidates.size());
        simulated = r.evaluated;
    }
    state.counters["candidates"] = static_cast<double>(n);
    state.counters["simulated"] = static_cast<double>(simulated);
    state.counters["candidates_per_s"] =
        benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_SearchLarge)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

// Resident memory (kB) from /proc/self/status: the current (VmRSS) or peak (VmHWM) one.
double status_kb(const char* field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field, 0) == 0) return std::stod(line.substr(line.find(':') + 1));
    return 0;
}

void BM_ServingTrace(benchmark::State& state) {
    const int64_t n = state.range(0);
    const std::string path = "/tmp/fathom-bench-trace-" + std::to_string(n) + ".csv";
    {
        std::FILE* f = std::fopen(path.c_str(), "w");
        if (!f) {
            state.SkipWithError(("cannot write " + path).c_str());
            return;
        }
        std::fprintf(f, "arrival_s,prompt_tokens,output_tokens\n");
        sim::RandomStream rng(7);
        double t = 0;
        for (int64_t i = 0; i < n; ++i) {
            t += rng.exponential(58.0);
            std::fprintf(f, "%.6f,1024,256\n", t);
        }
        std::fclose(f);
    }
    const plans::Scenario s = bench::serving_scenario("", "{arrival: trace, trace: " + path + "}");
    double peak = 0, growth = 0;
    int64_t served = 0;
    for (auto _ : state) {
        std::ofstream("/proc/self/clear_refs") << "5";  // the peak restarts from the current memory
        const double before = status_kb("VmRSS:");
        const plans::Outcome o = plans::evaluate(s, context());
        served = o.serving()->all_requests;
        peak = status_kb("VmHWM:");
        growth = peak - before;
    }
    std::remove(path.c_str());
    state.counters["requests"] = static_cast<double>(served);
    state.counters["requests_per_s"] = benchmark::Counter(static_cast<double>(served), benchmark::Counter::kIsRate);
    state.counters["peak_rss_mb"] = peak / 1024;
    state.counters["rss_growth_mb"] = growth / 1024;
}
BENCHMARK(BM_ServingTrace)->Arg(1000000)->Arg(10000000)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
