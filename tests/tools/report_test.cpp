// The HTML report (tools/report/): its pieces against closed forms (CDF points, bins, number
// formatting), each page's figures against the results they draw (a bar per merged task run, a
// marker per case or probe), the page's escaping, and the serving time series against the run it
// sampled (every token and every batch counted once).
#include "tools/report/report.h"

#include "plans/evaluate.h"
#include "scenarios/scenario.h"
#include "tests/support/fixtures.h"
#include "tools/report/charts.h"
#include "workloads/metrics/serving_series.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <numeric>
#include <string>
#include <vector>

using namespace fathom;
using nlohmann::json;

namespace {

// The figures a page holds: the JSON array after "const fathomFigures = ".
json figures(const report::Page& page) {
    const std::string h = page.html();
    const std::string key = "const fathomFigures = ";
    const size_t a = h.find(key) + key.size();
    return json::parse(h.substr(a, h.find(";\n", a) - a));
}

const json& figure(const json& figs, const std::string& id) {
    for (const auto& f : figs)
        if (f["id"] == "chart-" + id) return f;
    FAIL("no chart " << id);
    throw;
}

}  // namespace

TEST_CASE("report: a CDF keeps every point of a small sample and thins a large one to its order statistics",
          "[report]") {
    // 4 values: the points (x_(i), (i+1)/4) of the sorted sample, scaled by 1000.
    const json t = report::cdf_trace("ttft", {0.004, 0.001, 0.003, 0.002}, 1e3);
    CHECK(t["x"] == json({1.0, 2.0, 3.0, 4.0}));
    CHECK(t["y"] == json({0.25, 0.5, 0.75, 1.0}));
    // 10,000 values 1..10000 thinned to 800 points: the first is the minimum at 1/10000, the last
    // the maximum at 1, the k-th the order statistic k*9999/799 (integer division).
    std::vector<double> v(10000);
    std::iota(v.begin(), v.end(), 1.0);
    const json big = report::cdf_trace("e2e", v, 1.0, 800);
    REQUIRE(big["x"].size() == 800);
    CHECK(big["x"][0] == 1.0);
    CHECK(big["y"][0] == Approx(1e-4));
    CHECK(big["x"][799] == 10000.0);
    CHECK(big["y"][799] == 1.0);
    CHECK(big["x"][400] == 1.0 + 400 * 9999 / 799);
}

TEST_CASE("report: bins sum their weights and keep the run's last instant", "[report]") {
    report::Bins b = report::make_bins(0, 10, 5);  // [0,2) [2,4) ... [8,10]
    CHECK(b.centres == std::vector<double>{1, 3, 5, 7, 9});
    report::add_to_bin(b, 0.0, 1);
    report::add_to_bin(b, 1.99, 2);
    report::add_to_bin(b, 2.0, 4);
    report::add_to_bin(b, 10.0, 8);   // the end belongs to the last bin
    report::add_to_bin(b, 10.5, 16);  // past it: left out
    report::add_to_bin(b, -1, 32);
    CHECK(b.sums == std::vector<double>{3, 4, 0, 0, 8});
    CHECK(b.counts == std::vector<double>{2, 1, 0, 0, 1});
    CHECK(report::num(101270.78) == "101271");  // no exponent for a large count
    CHECK(report::num(0.035136) == "0.03514");
    CHECK(report::num(std::nan("")) == "-");
    // A headline row: value and 90% interval scaled alike; a band without both ends is none.
    const json r = {{"mfu", 0.4}, {"interval_90", {{"mfu", {{"low", 0.35}, {"high", 0.45}}}, {"x", {{"low", 1.0}}}}}};
    CHECK(report::headline_row(r, "mfu", "MFU", "%", 100) == std::vector<std::string>{"MFU", "40", "%", "35 .. 45"});
    CHECK(report::headline_row(r, "x", "x", "")[3] == "-");
}

TEST_CASE("report: the training timeline draws a bar per run of tasks less than a pixel apart", "[report]") {
    // A 15 ms step: a pixel of 1,500 is 10 us. Stage 0's compute: F at 0-1 ms and 1.005-2 ms (5 us
    // apart: one bar of 2 tasks), B at 5-6 ms and 6.02-7 ms (20 us apart: two bars); its tp stream
    // one task. Three rows' worth of bars: forward 1, backward 2, tp 1.
    const std::string trace = R"({"traceEvents":[
      {"ph":"M","name":"process_name","pid":1,"args":{"name":"stage 0"}},
      {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"compute"}},
      {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"tp-comm"}},
      {"ph":"X","pid":1,"tid":1,"name":"F mb0","ts":0,"dur":1000},
      {"ph":"X","pid":1,"tid":1,"name":"F mb1","ts":1005,"dur":995},
      {"ph":"X","pid":1,"tid":1,"name":"B mb0","ts":5000,"dur":1000},
      {"ph":"X","pid":1,"tid":1,"name":"B mb1","ts":6020,"dur":980},
      {"ph":"X","pid":1,"tid":2,"name":"tp mb0","ts":1000,"dur":100}]})";
    const json result = {
        {"step_time_s", 0.015},
        {"memory_capacity_bytes", 80.0 * (1 << 30)},
        {"stages",
         {{{"stage", 0},
           {"compute_s", 0.004},
           {"exposed_comm_s", 0.001},
           {"idle_s", 0.01},
           {"tp_comm_s", 0.0001},
           {"memory_bytes",
            {{"weights", 1.0 * (1 << 30)}, {"activations", 2.0 * (1 << 30)}, {"total", 3.0 * (1 << 30)}}}}}}};
    report::Page page("t");
    report::add_training(page, result, trace);
    const json figs = figures(page);
    const json& timeline = figure(figs, "timeline");
    REQUIRE(timeline["data"].size() == 3);
    CHECK(timeline["data"][0]["name"] == "forward");
    CHECK(timeline["data"][0]["x"] == json({2.0}));  // 0 .. 2 ms, one bar
    CHECK(timeline["data"][0]["hovertext"] == json({"2 tasks"}));
    CHECK(timeline["data"][1]["name"] == "backward");
    CHECK(timeline["data"][1]["base"] == json({5.0, 6.02}));
    CHECK(timeline["data"][2]["y"] == json({"stage 0 · tp-comm"}));
    // The breakdown: compute, exposed communication, idle; memory: one bar per part, in GiB, the
    // capacity as the dashed line at 80.
    CHECK(figure(figs, "breakdown")["data"].size() == 3);
    const json& memory = figure(figs, "memory");
    CHECK(memory["data"].size() == 2);
    CHECK(memory["data"][0]["y"] == json({2.0}));  // activations (keys in JSON order)
    CHECK(memory["layout"]["shapes"][0]["y0"] == 80.0);
    CHECK(page.charts() == 4);  // timeline, breakdown, communication (tp only), memory
}

TEST_CASE("report: capacity, compare and search pages draw a mark per probe, case and plan", "[report]") {
    const json capacity = {{"capacity_requests_per_s", 2.5},
                           {"slo_target", 0.9},
                           {"probes",
                            {{{"seed", 1}, {"rate", 2.0}, {"slo_attainment", 1.0}},
                             {{"seed", 1}, {"rate", 3.0}, {"slo_attainment", 0.5}},
                             {{"seed", 2}, {"rate", 2.5}, {"slo_attainment", 0.95}}}}};
    report::Page cap("c");
    report::add_capacity(cap, capacity);
    const json cap_figs = figures(cap);
    const json& att = figure(cap_figs, "attainment");
    REQUIRE(att["data"].size() == 4);                   // seeds 1 and 2, the target, the capacity
    CHECK(att["data"][0]["y"] == json({100.0, 50.0}));  // percent, by rate
    CHECK(att["data"][2]["y"] == json({90.0, 90.0}));

    const json cases = {
        {{"id", "a"}, {"kind", "training"}, {"status", "ok"}, {"measured", 10.0}, {"predicted", 11.0}, {"error", 0.1}},
        {{"id", "b"}, {"kind", "serving"}, {"status", "ok"}, {"measured", 100.0}, {"predicted", 90.0}, {"error", -0.1}},
        {{"id", "c"}, {"kind", "serving"}, {"status", "unsupported"}, {"measured", 5.0}}};
    report::Page cmp("p");
    report::add_compare(cmp, cases);
    const json cmp_figs = figures(cmp);
    const json& parity = figure(cmp_figs, "parity");
    // Equal, +-10% twice, +-25% twice, then a trace per kind: training (1 case), serving (1: c did not run).
    REQUIRE(parity["data"].size() == 7);
    CHECK(parity["data"][5]["x"] == json({10.0}));
    CHECK(parity["data"][6]["y"] == json({90.0}));

    const json search = {{"candidates",
                          {{{"status", "evaluated"},
                            {"plan", "p0"},
                            {"tokens_per_s", 10.0},
                            {"peak_memory_gib", 50.0},
                            {"pareto_throughput_memory", true}},
                           {{"status", "evaluated"},
                            {"plan", "p1"},
                            {"tokens_per_s", 8.0},
                            {"peak_memory_gib", 60.0},
                            {"pareto_throughput_memory", false}},
                           {{"status", "out_of_memory"}, {"plan", "p2"}, {"peak_memory_gib", 90.0}}}},
                         {"ranking", {0, 1}}};
    report::Page se("s");
    report::add_search(se, search);
    const json se_figs = figures(se);
    const json& front = figure(se_figs, "pareto-0");
    CHECK(front["data"][0]["x"] == json({50.0, 60.0}));  // the evaluated plans
    CHECK(front["data"][1]["y"] == json({10.0}));        // the front
    CHECK(se.charts() == 1);                             // no cost axis without a price
}

TEST_CASE("report: an RL iteration's page draws each phase on its pool's row and the seconds per phase", "[report]") {
    // Two pools, two iterations' phases: rollout 0-100 s and 100-200 s on the rollout pool (100 s
    // apart is far more than a pixel of the 300 s span: two bars), the update 100-300 s on the
    // trainer. The axis is in seconds.
    const std::string trace = R"({"traceEvents":[
      {"ph":"M","name":"process_name","pid":0,"args":{"name":"rollout GPUs"}},
      {"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"phases"}},
      {"ph":"M","name":"process_name","pid":1,"args":{"name":"trainer GPUs"}},
      {"ph":"M","name":"thread_name","pid":1,"tid":0,"args":{"name":"phases"}},
      {"ph":"X","pid":0,"tid":0,"name":"rollout","ts":0,"dur":50e6},
      {"ph":"X","pid":0,"tid":0,"name":"rollout","ts":150e6,"dur":50e6},
      {"ph":"X","pid":1,"tid":0,"name":"update","ts":100e6,"dur":200e6}]})";
    const json result = {{"iteration_time_s", 150.0},
                         {"breakdown", {{"rollout_s", 50.0}, {"update_s", 100.0}, {"long_tail_s", 5.0}}},
                         {"rollout", {{"output_tokens_per_s", 1000.0}}},
                         {"update", {{"mfu", 0.4}}}};
    report::Page page("rl");
    report::add_rl(page, result, trace);
    const json figs = figures(page);
    const json& timeline = figure(figs, "timeline");
    REQUIRE(timeline["data"].size() == 2);
    CHECK(timeline["data"][0]["base"] == json({0.0, 150.0}));  // seconds
    CHECK(timeline["data"][1]["y"] == json({"trainer GPUs · phases"}));
    const json& phases = figure(figs, "phases");
    CHECK(phases["data"][0]["x"] == json({"rollout", "update"}));  // the long tail is the rollout's
    CHECK(phases["data"][0]["y"] == json({50.0, 100.0}));
}

TEST_CASE("report: a page escapes names and keeps its script data from closing the element", "[report]") {
    report::Page page("a <b> & \"c\"");
    page.chart("x", json::array({{{"type", "scatter"}, {"name", "</script><b>"}}}), {{"title", {{"text", "t"}}}});
    const std::string h = page.html();
    CHECK(h.find("<title>a &lt;b&gt; &amp; &quot;c&quot;</title>") != std::string::npos);
    CHECK(h.find("<\\/script><b>") != std::string::npos);
    CHECK(h.find("plotly.js v2") != std::string::npos);  // the embedded library's header
    // The page's scripts: plotly.js and the figures; no third "</script".
    size_t closes = 0;
    for (size_t p = h.find("</script"); p != std::string::npos; p = h.find("</script", p + 1)) ++closes;
    CHECK(closes == 2);
}

TEST_CASE("report: the serving series counts every token and batch of the run once", "[report]") {
    const auto& ctx = testing::source_context();
    const plans::Scenario s = scenarios::load_scenario(testing::example("serving-llama70b-8xh100.yaml"), *ctx.catalog,
                                                       {"traffic.num_requests=200"});
    workloads::ServingSeries series;
    plans::EvaluateOptions opt;
    opt.keep_records = true;
    opt.series = &series;
    const plans::Outcome o = plans::evaluate(s, ctx, opt);
    const auto& r = *o.serving();
    REQUIRE(r.warmup_requests == 0);
    // Every request's output tokens were sampled once: its first token (at finish) and the rest
    // (per batch).
    int64_t tokens = 0, expected = 0, prompt = 0, prefilled = 0;
    for (const auto& t : series.tokens()) tokens += t.tokens;
    for (const auto& q : r.records) {
        expected += q.output_tokens;
        prompt += q.prompt_tokens;
    }
    CHECK(tokens == expected);
    // One sample per batch; with no preemption every prompt token is prefilled once.
    CHECK(static_cast<int64_t>(series.iterations().size()) == r.iterations);
    REQUIRE(r.preemptions == 0);
    for (const auto& it : series.iterations()) prefilled += it.prefill_tokens;
    CHECK(prefilled == prompt);
    CHECK(series.kv_capacity().size() == 2);
    CHECK(series.kv_capacity()[0] == r.kv_blocks_per_replica);
    // The page: three CDFs, throughput, KV (a line per replica), batch composition.
    report::Page page("s");
    report::add_serving(page, json{{"slo", {{"ttft_ms", 1000.0}}}}, r.records, series);
    const json figs = figures(page);
    CHECK(page.charts() == 6);
    CHECK(figure(figs, "kv")["data"].size() == 2);
    CHECK(figure(figs, "ttft")["data"].size() == 2);  // the CDF and the SLO line
    CHECK(figure(figs, "tpot")["data"].size() == 1);  // no TPOT SLO given
}
