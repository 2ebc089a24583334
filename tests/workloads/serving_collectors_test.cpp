// Serving statistics as collectors of the engine's signals (workloads/metrics/serving_*.h): each
// figure against its closed form, from hand-emitted events and from a run whose iterations are
// priced by the same IterationCoster.
#include "sim/random.h"
#include "tests/support/fixtures.h"
#include "tests/support/serving_fixture.h"
#include "workloads/metrics/serving_load.h"
#include "workloads/metrics/serving_requests.h"
#include "workloads/serving/iteration_cost.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace fathom;
using namespace fathom::workloads::serving;
using fathom::workloads::ReplicaUsageCollector;
using fathom::workloads::RequestsInSystemCollector;
using fathom::workloads::ServingRequestCollector;

namespace {

sim::Time ms(int64_t n) { return sim::Time::from_us(1000 * n); }

Sequence request(int64_t id, int64_t prompt, int64_t output) {
    Sequence s;
    s.req.id = id;
    s.req.prompt_tokens = prompt;
    s.req.output_tokens = output;
    s.prefill_target = prompt;
    return s;
}

// The two requests of the collector tests, as the engine would emit them:
//   A (id 0): arrives at 0, scheduled at 0, tokens at 10, 15 and 20 ms (3 output tokens);
//   B (id 1): arrives at 2 ms, scheduled at 10 ms, tokens at 30 and 40 ms (2 output tokens).
void emit_two_requests(ServingSignals& sig) {
    Sequence a = request(0, 100, 3), b = request(1, 50, 2);
    a.arrival = ms(0);
    sig.arrived.emit(a);
    b.arrival = ms(2);
    sig.arrived.emit(b);
    a.scheduled = ms(0);
    b.scheduled = ms(10);
    auto token = [&](Sequence& s, sim::Time t) {
        ++s.generated;
        if (s.first_token == kNever) {
            s.first_token = t;
        } else {
            const std::vector<NextToken> tokens{{&s, s.last_token}};
            sig.next_tokens.emit({t, tokens});
        }
        s.last_token = t;
    };
    token(a, ms(10));
    token(a, ms(15));
    token(a, ms(20));
    sig.finished.emit(a, ms(20));
    token(b, ms(30));
    token(b, ms(40));
    sig.finished.emit(b, ms(40));
}

}  // namespace

TEST_CASE("request collector: latencies of two requests in closed form", "[serving][metrics]") {
    // TTFT = first token - arrival: A 10 ms, B 28 ms. TPOT = (last - first token) / (outputs - 1):
    // A (20 - 10) / 2 = 5 ms, B (40 - 30) / 1 = 10 ms. ITL: every gap, 5, 5 and 10 ms. Queue =
    // scheduled - arrival: 0 and 8 ms. E2E: 20 and 38 ms. The window runs from the first arrival (0)
    // to the last finish (40 ms): 2 requests, 150 prompt and 5 output tokens over 40 ms. SLOs of
    // TTFT 20 ms and TPOT 6 ms: A meets both, B misses the TTFT.
    ServingSignals sig;
    SloSettings slo;
    slo.ttft_s = 0.020;
    slo.tpot_s = 0.006;
    const std::vector<std::string> classes{"default"};
    ServingRequestCollector c(sig, slo, classes, true, 0);
    emit_two_requests(sig);
    ServingReport r;
    c.report(r);
    CHECK(r.requests == 2);
    CHECK(r.ttft_s.mean == Approx(0.019));
    CHECK(r.ttft_s.p50 == Approx(0.019));  // linear interpolation between 10 and 28 ms
    CHECK(r.ttft_s.max == Approx(0.028));
    CHECK(r.tpot_s.mean == Approx(0.0075));
    CHECK(r.itl_s.mean == Approx(0.020 / 3));
    CHECK(r.queue_s.mean == Approx(0.004));
    CHECK(r.ttft_service_s.mean == Approx((0.010 + 0.020) / 2));
    CHECK(r.e2e_s.mean == Approx(0.029));
    CHECK(r.duration_s == Approx(0.040));
    CHECK(r.requests_per_s == Approx(50));
    CHECK(r.input_tokens_per_s == Approx(150 / 0.040));
    CHECK(r.output_tokens_per_s == Approx(5 / 0.040));
    CHECK(r.slo_attainment == Approx(0.5));
    CHECK(r.goodput_requests_per_s == Approx(25));
    REQUIRE(r.records.size() == 2);
    CHECK(r.records[0].max_itl_s == Approx(0.005));
    CHECK(r.records[1].max_itl_s == Approx(0.010));
    CHECK(r.records[1].queue_s == Approx(0.008));
    CHECK(r.records[0].kv_transfer_s == 0);  // aggregated: no transfer
    CHECK(r.records[0].slo_met);
    CHECK_FALSE(r.records[1].slo_met);
}

TEST_CASE("request collector: warm-up requests are not measured", "[serving][metrics]") {
    // With one warm-up request only B's latencies count: its window runs from its own arrival
    // (2 ms) to 40 ms. The rates count what the engine delivered in that window, A's part
    // included: A was prefilled in it (first token at 10 ms: its 100 prompt tokens and that token),
    // sampled 2 more tokens there and finished there. Requests 2 / 38 ms, prompt tokens
    // (50 + 100) / 38 ms, output tokens (2 + 3) / 38 ms.
    ServingSignals sig;
    const SloSettings slo;
    const std::vector<std::string> classes{"default"};
    ServingRequestCollector c(sig, slo, classes, false, 1);
    emit_two_requests(sig);
    ServingReport r;
    c.report(r);
    CHECK(r.requests == 1);
    CHECK(r.ttft_s.mean == Approx(0.028));
    CHECK(r.itl_s.mean == Approx(0.010));  // A's gaps are warm-up
    CHECK(r.duration_s == Approx(0.038));
    CHECK(r.requests_per_s == Approx(2 / 0.038));
    CHECK(r.input_tokens_per_s == Approx(150 / 0.038));
    CHECK(r.output_tokens_per_s == Approx(5 / 0.038));
    CHECK(r.records.empty());  // not asked for
}

TEST_CASE("a closed loop's measured rate is concurrency x output / latency (Little's law)", "[serving][metrics]") {
    // 32 clients on one H100 (Llama 3 8B) served 8 at a time, each client sending its next request
    // when the last completes: 6 rounds, the first a warm-up. In a closed loop at steady state
    // requests complete at concurrency / mean end-to-end latency (Little's law), so output tokens
    // per second are 32 x 128 / e2e. The measurement window opens at the first measured arrival,
    // when 24 warm-up requests still wait for a slot: counting only the measured requests' tokens
    // over it read the rate 24 / (160 + 24) = 13% low. The window's edges (the loop filling and
    // the last round draining) keep it within a few percent, not exact.
    const ServingReport r = testing::serve(testing::serving_scenario(
        "kind: serving\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 1}\n"
        "serving:\n  tp: 1\n  max_num_seqs: 8\ntraffic:\n  arrival: concurrency\n  concurrency: 32\n  num_requests: "
        "192\n"
        "  warmup_requests: 32\n  prompt: 512\n  output: 128\n"));
    REQUIRE(r.requests == 160);
    const double little = 32.0 * 128.0 / r.e2e_s.mean;
    INFO("output tokens/s " << r.output_tokens_per_s << ", 32 x 128 / e2e " << little);
    CHECK(r.output_tokens_per_s == Approx(little).epsilon(0.04));
}

TEST_CASE("load collectors: KV use over time, batch sizes, requests in the system", "[serving][metrics]") {
    // Replica 0 (100 blocks) references 50 blocks from 0 to 1 s and 100 from 1 s to the end at 2 s:
    // a mean of (50 + 100) / 2 / 100 = 0.75, a peak of 1. Replica 1 (200 blocks) stays idle: the
    // mean over replicas is (0.75 + 0) / 2. Two batches of 3 and 5 decodes: 4 sequences, tokens and
    // decodes each on average; they run over [0, 10 ms] and [10, 40 ms]: 20 ms each on average. Requests in the system:
    // 1 over [0, 2 ms], 2 over [2, 20], 1 over [20, 40]: (2 + 36 + 20) / 40 = 1.45.
    ServingSignals sig;
    ReplicaUsageCollector usage(sig, {100, 200});
    RequestsInSystemCollector load(sig);
    sig.kv_use.emit({0, 0, sim::Time::zero(), 50});
    sig.kv_use.emit({0, 0, sim::Time::from_us(1000000), 100});
    const Batch batch;
    for (int64_t n : {3, 5}) {
        IterationShape shape;
        shape.decodes = shape.samples = shape.sequences = n;
        const sim::Time start = sim::Time::from_us(n == 3 ? 0 : 10000),
                        end = sim::Time::from_us(n == 3 ? 10000 : 40000);
        sig.iteration.emit({0, 0, start, end, batch, shape});
    }
    emit_two_requests(sig);
    ServingReport r;
    usage.report(r, sim::Time::from_us(2000000));
    load.report(r, 5);
    CHECK(r.kv_utilization_mean == Approx(0.375));
    CHECK(r.kv_utilization_max == Approx(1.0));
    CHECK(r.iterations == 2);
    CHECK(r.batch_size_mean == Approx(4));
    CHECK(r.batch_tokens_mean == Approx(4));
    CHECK(r.batch_decodes_mean == Approx(4));
    CHECK(r.iteration_s_mean == Approx(0.020));
    CHECK(r.mean_in_system == Approx(1.45));
    CHECK(r.all_requests == 2);
    CHECK(r.all_duration_s == Approx(0.040));
    CHECK(r.warmup_requests == 2);  // 5 asked for, 2 arrived
}

TEST_CASE("two requests on one replica: TTFT is the prefill iteration, TPOT the decode ones", "[serving][metrics]") {
    // Both prompts (512 tokens) arrive at 0 and fit one iteration's token budget: one iteration
    // prefills both (2 slices of 512, 2 samples), then two decode both (each decode attends to its
    // computed tokens + 1: 513, then 514). Each request's tokens come at c_p, c_p + c_1 and
    // c_p + c_1 + c_2, the costs of those three shapes; so TTFT = c_p, TPOT = (c_1 + c_2) / 2, the
    // gaps are c_1 and c_2, E2E = c_p + c_1 + c_2 (up to the picosecond of the event times).
    const plans::Scenario s = testing::serving_scenario(
        "kind: serving\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 1}\n"
        "serving: {tp: 1}\ntraffic: {arrival: offline, num_requests: 2, prompt: 512, output: 3}\n");
    const ServingPlan& plan = *s.serving();
    const plans::Outcome out = plans::evaluate(s, testing::source_context());
    REQUIRE(out.ok());
    const ServingReport& r = *out.serving();

    plans::CostModelKind kind{};
    const auto cost =
        plans::cost_model_for(plan.replica.accelerator, testing::source_context(), kind, models::Load::Serving);
    const auto net = hardware::make_network(testing::source_context().with_network(s.cluster));
    IterationCoster coster(s.model, plan.replica, plan.kernels, plan.engine, *cost, *net, plan.expert_load);
    IterationShape prefill, decode1, decode2;
    prefill.prefills = {{512, 0}, {512, 0}};
    prefill.samples = prefill.sequences = 2;
    decode1.decodes = decode1.samples = decode1.sequences = 2;
    decode1.decode_kv = 2 * 513;
    decode2 = decode1;
    decode2.decode_kv = 2 * 514;
    const double cp = coster.seconds(prefill).total(), c1 = coster.seconds(decode1).total(),
                 c2 = coster.seconds(decode2).total();
    REQUIRE(r.requests == 2);
    CHECK(r.iterations == 3);
    CHECK(r.batch_size_mean == Approx(2));
    CHECK(r.batch_decodes_mean == Approx(4.0 / 3.0));                       // 0, 2, 2 decodes
    CHECK(r.iteration_s_mean == Approx((cp + c1 + c2) / 3).epsilon(1e-9));  // back to back
    CHECK(r.ttft_s.mean == Approx(cp).epsilon(1e-9));
    CHECK(r.ttft_s.max == Approx(cp).epsilon(1e-9));
    CHECK(r.tpot_s.mean == Approx((c1 + c2) / 2).epsilon(1e-9));
    CHECK(r.itl_s.mean == Approx((c1 + c2) / 2).epsilon(1e-9));
    CHECK(r.itl_s.max == Approx(std::max(c1, c2)).epsilon(1e-9));
    CHECK(r.e2e_s.max == Approx(cp + c1 + c2).epsilon(1e-9));
    CHECK(r.queue_s.max == 0);
}

TEST_CASE("serving timeline: an iteration span per batch, a KV counter at each batch's end", "[serving][trace]") {
    // 20 requests of 100 prompt and 8 output tokens on two replicas, no preemption: the spans'
    // prefill tokens add up to 20 x 100, their decodes to 20 x 7 (the first token comes with the
    // prefill); each replica's counters sit at its spans' ends, the last one at 0 blocks (all
    // released).
    const plans::Scenario s = testing::serving_scenario(
        "kind: serving\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 2}\n"
        "serving: {tp: 1}\ntraffic: {arrival: offline, num_requests: 20, prompt: 100, output: 8}\n");
    std::ostringstream trace;
    plans::EvaluateOptions o;
    o.trace = &trace;
    const plans::Outcome out = plans::evaluate(s, testing::source_context(), o);
    REQUIRE(out.ok());
    const ServingReport& r = *out.serving();
    REQUIRE(r.preemptions == 0);
    const auto doc = nlohmann::json::parse(trace.str());
    const auto& ev = doc["traceEvents"];
    CHECK(ev[0]["ph"] == "M");
    CHECK(ev[0]["pid"] == 0);
    CHECK(ev[0]["args"]["name"] == "serving");
    int64_t spans = 0, counters = 0, prefill_tokens = 0, decodes = 0;
    std::map<int, std::vector<double>> ends, counter_ts;
    std::map<int, std::pair<double, int64_t>> last;  // per replica: the latest counter (time, used)
    for (const auto& e : ev) {
        const int pid = e["pid"];
        if (e["ph"] == "X") {
            ++spans;
            CHECK(e["name"] == "iteration");
            CHECK(e["tid"] == 0);
            CHECK(e["dur"].get<double>() > 0);
            prefill_tokens += e["args"]["prefill_tokens"].get<int64_t>();
            decodes += e["args"]["decodes"].get<int64_t>();
            ends[pid].push_back(e["ts"].get<double>() + e["dur"].get<double>());
        } else if (e["ph"] == "C") {
            ++counters;
            CHECK(e["name"] == "kv_blocks");
            const double t = e["ts"];
            counter_ts[pid].push_back(t);
            if (!last.count(pid) || t >= last[pid].first) last[pid] = {t, e["args"]["used"].get<int64_t>()};
        }
    }
    CHECK(spans == r.iterations);
    CHECK(counters == r.iterations);
    CHECK(prefill_tokens == 20 * 100);
    CHECK(decodes == 20 * 7);
    CHECK(ends.size() == 2);  // both replicas (pids 0 and 1: their first ranks)
    for (auto& [pid, t] : ends) {
        std::vector<double>& c = counter_ts[pid];
        std::sort(t.begin(), t.end());
        std::sort(c.begin(), c.end());
        REQUIRE(c.size() == t.size());
        for (size_t i = 0; i < t.size(); ++i) CHECK(c[i] == Approx(t[i]).margin(2e-6));  // us
        CHECK(last[pid].second == 0);
    }
}

TEST_CASE("latency percentiles sort as std::sort does: bit for bit at every list size", "[serving][metrics]") {
    // percentiles() sorts its list in place (a radix sort from 4,096 values up): the sorted list,
    // mean, quantiles and max must equal those of std::sort's order with the same interpolation
    // (numpy's linear). Values: positives over nine decades, duplicates, zeros and a few negatives.
    for (const size_t n : {size_t{1}, size_t{100}, size_t{4095}, size_t{4096}, size_t{50000}}) {
        fathom::sim::RandomStream rng(n);
        std::vector<double> v(n);
        for (double& x : v) {
            const double u = rng.uniform();
            x = u < 0.05 ? 0.0 : u < 0.08 ? -u : u < 0.2 ? 0.125 : std::exp(20 * rng.uniform() - 15);
        }
        std::vector<double> ref = v;
        std::sort(ref.begin(), ref.end());
        double sum = 0;
        for (double x : ref) sum += x;
        auto at = [&](double q) {
            const double pos = q * static_cast<double>(ref.size() - 1);
            const auto i = static_cast<size_t>(std::floor(pos));
            return i + 1 < ref.size() ? ref[i] + (pos - static_cast<double>(i)) * (ref[i + 1] - ref[i]) : ref[i];
        };
        const Percentiles p = fathom::workloads::serving::percentiles(v);
        REQUIRE(v == ref);
        CHECK(p.mean == sum / static_cast<double>(n));
        CHECK(p.p50 == at(0.5));
        CHECK(p.p90 == at(0.9));
        CHECK(p.p99 == at(0.99));
        CHECK(p.max == ref.back());
    }
}
