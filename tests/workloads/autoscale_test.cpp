// Autoscaling (workloads/serving/autoscale.h): a cold start's parts in closed form per weight
// source, an autoscaler that never scales changing no prediction, GPU-hours of a fixed fleet, a
// scale from zero costing the first request one cold start, Little's law setting the queue
// policy's steady replica count, drains losing no request, and bad settings refused by key.
#include "workloads/serving/autoscale.h"

#include "plans/search_keys.h"
#include "plans/serving_search.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"
#include "tests/support/serving_fixture.h"
#include "workloads/serving/serving_plan.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

using namespace fathom;
using namespace fathom::workloads::serving;

using testing::serve;

namespace {

// Llama 3 8B on H100s (vLLM's preset), up to `replicas` replicas of one GPU, with the
// serving.autoscale block's lines `autoscale`, to `traffic` (a flow mapping's contents).
plans::Scenario scenario(const std::string& autoscale, const std::string& traffic, int replicas = 8) {
    std::string yaml =
        "kind: serving\nseed: 5\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 8}\n"
        "serving:\n  engine: vllm\n  tp: 1\n  replicas: " +
        std::to_string(replicas) + "\n";
    if (!autoscale.empty()) yaml += "  autoscale:\n" + autoscale;
    yaml += "traffic: {" + traffic + ", prompt: 512, output: 128}\nslo: {ttft: 2 s, tpot: 50 ms}\n";
    return testing::serving_scenario(yaml);
}

}  // namespace

TEST_CASE("a cold start is the engine's start, the weights over their path's bandwidth, and graph capture",
          "[autoscale]") {
    hardware::ClusterSpec c = testing::h100_cluster(8);
    c.pcie.bandwidth = 64e9;
    c.pcie.efficiency = 0.8;  // 51.2 GB/s host to device
    c.nic.bandwidth = 50e9;
    c.nic.efficiency = 0.9;
    c.nics_per_node = 8;
    hardware::SsdSpec ssd;
    ssd.read_bandwidth = 7e9;
    c.ssd = ssd;
    c.ssds_per_node = 2;
    hardware::FileSystemSpec fs;
    fs.read_bandwidth = 100e9;
    fs.client_bandwidth = 25e9;
    c.storage = fs;
    PoolLayout tp4;
    tp4.tp = 4;
    AutoscaleSettings a;
    a.policy = "queue";
    a.engine_start_s = 5;
    a.graph_capture_s = 30;
    const double w = 4.0e9;  // a GPU's weights
    auto load_s = [&](const std::string& from) {
        a.weights_from = from;
        const ColdStart cs = cold_start(a, c, tp4, w);
        CHECK(cs.total() == Approx(35 + cs.weights_s).epsilon(1e-12));
        return cs.weights_s;
    };
    // host: 4 GB over 51.2 GB/s = 78.1 ms.
    CHECK(load_s("host") == Approx(4.0 / 51.2).epsilon(1e-12));
    // ssd: two 7 GB/s drives shared by the replica's 4 GPUs on the node: 3.5 GB/s each, 1.143 s.
    CHECK(load_s("ssd") == Approx(4.0 / 3.5).epsilon(1e-12));
    // storage: the node's client at 25 GB/s (below the 100 GB/s aggregate) over 4 GPUs: 0.64 s.
    CHECK(load_s("storage") == Approx(4.0 / 6.25).epsilon(1e-12));
    // peer: a GPU's NIC (8 x 50 GB/s over 8 GPUs) at 90%: 45 GB/s, 88.9 ms.
    CHECK(load_s("peer") == Approx(4.0 / 45).epsilon(1e-12));
    // A measured loader's bandwidth replaces the path.
    a.load_bandwidth = 2e9;
    CHECK(load_s("ssd") == Approx(2.0).epsilon(1e-12));
    a.load_bandwidth = 0;
    // No drives: refused by key.
    c.ssd.reset();
    a.weights_from = "ssd";
    CHECK_THROWS_WITH(cold_start(a, c, tp4, w), Catch::Contains("cluster.ssd"));
}

TEST_CASE("an autoscaler that never scales changes no prediction, and holds replicas x GPUs for the run",
          "[autoscale]") {
    // Constant arrivals (the first at t = 0), two replicas held throughout (min = initial = most):
    // GPU-hours = 2 GPUs x (first arrival -> last completion) / 3600.
    const std::string traffic = "arrival: constant, rate: 6, num_requests: 600";
    const ServingReport fixed = serve(scenario("", traffic, 2));
    const ServingReport held =
        serve(scenario("    policy: queue\n    target: 1\n    min_replicas: 2\n    weights_from: host\n", traffic, 2));
    CHECK(held.ttft_s.p90 == fixed.ttft_s.p90);
    CHECK(held.tpot_s.p50 == fixed.tpot_s.p50);
    CHECK(held.output_tokens_per_s == fixed.output_tokens_per_s);
    REQUIRE(held.autoscale);
    CHECK(held.autoscale->gpu_hours == Approx(2 * held.all_duration_s / 3600).epsilon(1e-9));
    CHECK(held.autoscale->replicas_mean == Approx(2).epsilon(1e-12));
    CHECK(held.autoscale->scale_ups == 0);
    CHECK(held.autoscale->scale_downs == 0);
    CHECK(!fixed.autoscale);
}

TEST_CASE("scaled to zero, the first request waits one cold start", "[autoscale]") {
    // One request at t = 0 with no replica: one starts at once (the activator) and serves it after
    // engine_start 5 s + 16.06 GB of weights through vLLM's loader + graph_capture 10 s. Its TTFT
    // is that cold start plus its TTFT on a warm replica.
    const std::string traffic = "arrival: offline, num_requests: 1";
    const ServingReport warm = serve(scenario("", traffic, 1));
    const plans::Scenario s = scenario(
        "    policy: queue\n    target: 4\n    min_replicas: 0\n    weights_from: host\n"
        "    engine_start: 5 s\n    graph_capture: 10 s\n",
        traffic, 1);
    const ServingReport cold = serve(s);
    REQUIRE(cold.autoscale);
    CHECK(cold.weight_bytes_per_gpu > 16e9);
    // vLLM's loader (1.85 GB/s) is slower than the host link: it sets the weights' time.
    CHECK(s.cluster.pcie.achievable_bandwidth() > 10 * 1.85e9);
    CHECK(cold.autoscale->cold_start_s == Approx(15 + cold.weight_bytes_per_gpu / 1.85e9).epsilon(1e-12));
    CHECK(cold.ttft_s.p50 - warm.ttft_s.p50 == Approx(cold.autoscale->cold_start_s).epsilon(1e-9));
    CHECK(cold.autoscale->scale_ups == 1);
}

TEST_CASE("the queue policy settles where Little's law puts it: ceil(rate x latency / target)", "[autoscale]") {
    // 20 requests/s, each in the system W seconds: L = 20 W requests outstanding (Little's law;
    // the time-average a fixed fleet of 5 measures at the same load a replica), so ceil(L / 4)
    // replicas at a target of 4. W is ~0.92 s (128 decodes of ~7 ms), L ~18.4: 5 replicas.
    // Starting from one overloaded replica the fleet grows, then settles after the 60 s
    // stabilization window.
    const std::string traffic = "arrival: constant, rate: 20, num_requests: 16000";
    const ServingReport five = serve(scenario("", traffic, 5));
    CHECK(five.mean_in_system == Approx(20 * five.e2e_s.mean).epsilon(0.02));
    const double expected = std::ceil(five.mean_in_system / 4);
    CHECK(expected == 5);
    const ServingReport r = serve(
        scenario("    policy: queue\n    target: 4\n    weights_from: host\n    scale_down_delay: 60 s\n", traffic, 8));
    REQUIRE(r.autoscale);
    REQUIRE(!r.autoscale->timeline.empty());
    CHECK(static_cast<double>(r.autoscale->timeline.back().second) == expected);
    CHECK(r.autoscale->timeline.back().first < 400);  // settled well before the 800 s run ends
    CHECK(r.requests == 16000);
}

TEST_CASE("a diurnal day scaled by each policy: drains lose no request, and fewer GPU-hours than a fixed fleet",
          "[autoscale]") {
    // Two compressed "days" of 1,800 s, 2 to 32 requests/s (mean 17, peak 16x the trough): the
    // fleet grows for the peak and drains at the trough. Every request is served; the queue and
    // KV policies hold fewer GPU-hours than 8 replicas throughout.
    const std::string traffic = "arrival: diurnal, rate: 17, peak_to_trough: 16, period: 1800 s, num_requests: 61200";
    const ServingReport fixed = serve(scenario("", traffic, 8));
    const double fixed_gpu_hours = 8 * fixed.all_duration_s / 3600;
    for (const std::string policy : {"queue\n    target: 4", "kv\n    target: 0.02"}) {
        INFO(policy);
        const ServingReport r = serve(
            scenario("    policy: " + policy + "\n    weights_from: host\n    scale_down_delay: 120 s\n", traffic, 8));
        REQUIRE(r.autoscale);
        CHECK(r.requests == 61200);
        CHECK(r.autoscale->scale_ups > 0);
        CHECK(r.autoscale->scale_downs > 0);
        CHECK(r.autoscale->replicas_peak > 1);
        CHECK(r.autoscale->gpu_hours < fixed_gpu_hours);
    }
    // Latency hardly moves with load until a replica nears saturation, so the SLO policy grows the
    // fleet when its target share is tight (TPOT 7.5 ms of 50 ms: a decode step at the peak's
    // batch) and rarely finds headroom to shrink it.
    const ServingReport slo = serve(scenario(
        "    policy: slo\n    target: 0.15\n    weights_from: host\n    scale_down_delay: 120 s\n", traffic, 8));
    REQUIRE(slo.autoscale);
    CHECK(slo.requests == 61200);
    CHECK(slo.autoscale->scale_ups > 0);
}

TEST_CASE("autoscaling runs are deterministic", "[autoscale]") {
    const std::string traffic = "arrival: diurnal, rate: 10, peak_to_trough: 8, period: 600 s, num_requests: 6000";
    const plans::Scenario s = scenario("    policy: queue\n    target: 4\n    weights_from: host\n", traffic);
    const ServingReport a = serve(s), b = serve(s);
    REQUIRE(a.autoscale);
    CHECK(a.autoscale->gpu_hours == b.autoscale->gpu_hours);
    CHECK(a.autoscale->timeline == b.autoscale->timeline);
    CHECK(a.ttft_s.p90 == b.ttft_s.p90);
}

TEST_CASE("bad autoscaling settings are refused by key", "[autoscale]") {
    const std::string traffic = "arrival: poisson, rate: 4, num_requests: 10";
    auto refused = [&](const std::string& autoscale, const std::string& key) {
        CHECK_THROWS_WITH(scenario(autoscale, traffic), Catch::Contains("key '" + key + "'"));
    };
    refused("    policy: queue\n    weights_from: host\n", "serving.autoscale.target");
    refused("    policy: queue\n    target: 4\n", "serving.autoscale.weights_from");
    refused("    policy: queue\n    target: 4\n    weights_from: ssd\n", "serving.autoscale.weights_from");  // no SSD
    refused("    policy: queue\n    target: 4\n    weights_from: host\n    min_replicas: 9\n",
            "serving.autoscale.min_replicas");
    refused("    policy: queue\n    target: 4\n    weights_from: peer\n    min_replicas: 0\n",
            "serving.autoscale.weights_from");
    refused("    policy: fastest\n", "serving.autoscale.policy");
    // SGLang's preset states no engine start-up time (its graph capture it does); slo needs an SLO.
    const std::string sg =
        "kind: serving\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 8}\n"
        "serving:\n  engine: sglang\n  replicas: 2\n  autoscale: {policy: slo, target: 0.8, weights_from: host}\n"
        "traffic: {" +
        traffic + ", prompt: 512, output: 128}\n";
    CHECK_THROWS_WITH(testing::serving_scenario(sg), Catch::Contains("serving.autoscale.engine_start") &&
                                                         !Catch::Contains("serving.autoscale.graph_capture") &&
                                                         Catch::Contains("needs slo.ttft or slo.tpot"));
}

TEST_CASE("the serving search ranks autoscaling policies by cost at the SLO", "[autoscale][search]") {
    // One fixed fleet of 8 and three autoscaled ones over two compressed diurnal days, priced at
    // $2.5 a GPU-hour. An autoscaled candidate pays for the GPUs it held on average:
    // usd_per_hour = 2.5 x 8 x replicas_mean / 8. All meet the SLO, so the cost objective ranks
    // them by USD per 1,000 good requests: the fewer GPU-hours, the better; the fixed fleet last.
    const plans::Scenario s = scenario("    policy: queue\n    target: 4\n    weights_from: host\n",
                                       "arrival: diurnal, rate: 17, peak_to_trough: 16, period: 1800 s, "
                                       "num_requests: 30600",
                                       8);
    plans::SearchSpace space;
    plans::set_search_key(space, "search.tp", std::vector<int64_t>{1});
    plans::set_search_key(space, "search.replicas", std::vector<int64_t>{8});
    plans::set_search_key(space, "search.autoscale", std::string("none,queue:2,queue,kv:0.02"));
    space.price_per_gpu_hour = 2.5;
    space.objective = plans::Objective::Cost;
    const auto r = plans::search_serving(s.model, s.cluster, *s.serving(), space, testing::source_context(), s.seed);
    REQUIRE(r.evaluated == 4);
    const auto& fixed = r.candidates[0];
    CHECK(!fixed.plan.autoscale.enabled());
    CHECK(fixed.usd_per_hour == Approx(20));
    CHECK(r.candidates[2].plan.autoscale.policy == "queue");
    CHECK(r.candidates[2].plan.autoscale.target == 4);  // the scenario's target
    CHECK(r.candidates[3].plan.autoscale.target == 0.02);
    double last = 0;
    for (const int64_t i : r.ranking) {
        const auto& c = r.candidates[static_cast<size_t>(i)];
        INFO(c.index);
        CHECK(c.meets_slo());
        if (c.plan.autoscale.enabled()) CHECK(c.usd_per_hour == Approx(2.5 * c.replicas_mean).epsilon(1e-12));
        CHECK(c.usd_per_1k_good_requests >= last);
        last = c.usd_per_1k_good_requests;
    }
    CHECK(r.ranking.back() == 0);  // the fixed fleet costs most
    // Two halves of the search merged (the MPI wire) carry what an autoscaled evaluation set.
    plans::SearchOptions r0, r1;
    r0.partition = {0, 2};
    r1.partition = {1, 2};
    auto merged = plans::search_serving(s.model, s.cluster, *s.serving(), space, testing::source_context(), s.seed, r0);
    const auto other =
        plans::search_serving(s.model, s.cluster, *s.serving(), space, testing::source_context(), s.seed, r1);
    plans::merge_serving_search_share(merged, plans::encode_serving_search_share(other, r1.partition));
    plans::finalize_serving_search(merged, space);
    CHECK(merged.ranking == r.ranking);
    for (size_t i = 0; i < r.candidates.size(); ++i) {
        CHECK(merged.candidates[i].usd_per_hour == r.candidates[i].usd_per_hour);
        CHECK(merged.candidates[i].gpu_hours == r.candidates[i].gpu_hours);
        CHECK(merged.candidates[i].pareto_cost == r.candidates[i].pareto_cost);
    }
    // An unknown policy or a target that is not a number is refused by the axis' key.
    space.axes.clear();
    plans::set_search_key(space, "search.tp", std::vector<int64_t>{1});
    plans::set_search_key(space, "search.autoscale", std::string("queue:fast"));
    CHECK_THROWS_WITH(plans::search_serving(s.model, s.cluster, *s.serving(), space, testing::source_context(), s.seed),
                      Catch::Contains("search.autoscale") && Catch::Contains("must be a number"));
}

TEST_CASE("vLLM's loader reads the whole checkpoint on every rank: PR #10647's held-out loads", "[autoscale]") {
    // vLLM's preset loads 1.85 GB/s a rank, fitted on PR #10647's Llama-2-7b row (13.48 GB at TP 1 in
    // 7.29 s, A100, NVMe). Held out, the same PR's Llama-2-13b: 16.04 s at TP 1 and 14.35 s at TP 2.
    // Every rank reads all 26.03 GB: 26.03 / 1.85 = 14.1 s at both (-12% and -2%); a loader reading
    // its shard alone would take half as long at TP 2 (7.0 s, -51%). Engine start and graph capture
    // set to none; the weights come from host memory, whose path is far faster than the loader.
    auto load_s = [](const std::string& model, int tp) {
        const std::string yaml =
            "kind: serving\nmodel: " + model +
            "\ncluster: {accelerator: a100-sxm-80gb, nodes: 1, gpus_per_node: 8}\n"
            "serving:\n  engine: vllm\n  tp: " +
            std::to_string(tp) +
            "\n  autoscale: {policy: queue, target: 4, min_replicas: 0, weights_from: host, engine_start: 0 s, "
            "graph_capture: 0 s}\ntraffic: {arrival: offline, num_requests: 1, prompt: 128, output: 8}\n";
        const ServingReport r = serve(testing::serving_scenario(yaml));
        REQUIRE(r.autoscale);
        return r.autoscale->cold_start_s;
    };
    CHECK(load_s("llama2-7b", 1) == Approx(7.29).epsilon(0.03));  // the fitted row
    const double tp1 = load_s("llama2-13b", 1), tp2 = load_s("llama2-13b", 2);
    CHECK(tp1 == Approx(16.04).epsilon(0.15));
    CHECK(tp2 == Approx(14.35).epsilon(0.05));
    CHECK(tp2 == Approx(tp1).epsilon(0.01));  // no faster by the shard
}
