// Serving traffic: arrival processes and length distributions against their closed-form moments,
// seeded determinism, shared prefixes and sessions, and strict streaming trace readers.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "sim/error.h"
#include "workloads/serving/traffic/traffic.h"

using namespace fathom::workloads::serving;

namespace {

const std::string kTraces = std::string(FATHOM_SOURCE_DIR) + "/tests/data/traces/";

SyntheticTraffic traffic(ArrivalKind kind, double rate, int64_t n) {
    SyntheticTraffic t;
    t.arrival.kind = kind;
    t.arrival.rate = rate;
    t.prompt.value = 100;
    t.output.value = 10;
    t.num_requests = n;
    return t;
}

// Mean and coefficient of variation of the gaps between consecutive arrivals.
std::pair<double, double> gaps(RequestSource& s) {
    double prev = 0, n = 0, s1 = 0, s2 = 0;
    while (auto r = s.next()) {
        const double g = r->arrival_s - prev;
        prev = r->arrival_s;
        s1 += g;
        s2 += g * g;
        ++n;
    }
    const double mean = s1 / n;
    return {mean, std::sqrt(s2 / n - mean * mean) / mean};
}

}  // namespace

TEST_CASE("arrival processes have the gap moments they are defined by", "[traffic]") {
    // Poisson: exponential gaps, mean 1/rate and CV 1. Gamma(k = 1/cv^2, scale 1/(rate k)): mean
    // 1/rate, CV cv. Constant: every gap exactly 1/rate. 200k draws give about 0.5% noise.
    auto p = make_synthetic_source(traffic(ArrivalKind::Poisson, 4, 200000), 1);
    auto [pm, pcv] = gaps(*p);
    CHECK(pm == Approx(0.25).epsilon(0.02));
    CHECK(pcv == Approx(1.0).epsilon(0.02));
    for (double cv : {0.5, 2.0}) {
        SyntheticTraffic t = traffic(ArrivalKind::Gamma, 4, 200000);
        t.arrival.cv = cv;
        auto g = make_synthetic_source(t, 3);
        auto [gm, gcv] = gaps(*g);
        CHECK(gm == Approx(0.25).epsilon(0.02));
        CHECK(gcv == Approx(cv).epsilon(0.03));
    }
    auto c = make_synthetic_source(traffic(ArrivalKind::Constant, 8, 1000), 1);
    int64_t i = 0;
    while (auto r = c->next()) CHECK(r->arrival_s == Approx(static_cast<double>(i++) / 8).margin(1e-12));
    auto o = make_synthetic_source(traffic(ArrivalKind::Offline, 0, 100), 1);
    while (auto r = o->next()) CHECK(r->arrival_s == 0);
}

TEST_CASE("bursty arrivals average rate x on / (on + off)", "[traffic]") {
    // Poisson at 10/s during on periods (mean 2 s), nothing during off periods (mean 6 s): the
    // long-run rate is 10 x 2 / 8 = 2.5/s.
    SyntheticTraffic t = traffic(ArrivalKind::Bursty, 10, 200000);
    t.arrival.on_s = 2;
    t.arrival.off_s = 6;
    auto s = make_synthetic_source(t, 5);
    double last = 0;
    int64_t n = 0;
    while (auto r = s->next()) {
        last = r->arrival_s;
        ++n;
    }
    CHECK(static_cast<double>(n) / last == Approx(2.5).epsilon(0.03));
}

TEST_CASE("length distributions match their expected values", "[traffic]") {
    std::vector<LengthDistribution> ds(5);
    ds[0].kind = LengthKind::Uniform;
    ds[0].min = 10;
    ds[0].max = 90;  // mean 50
    ds[1].kind = LengthKind::Normal;
    ds[1].mean = 500;
    ds[1].stddev = 100;
    ds[2].kind = LengthKind::Lognormal;
    ds[2].mean = 300;
    ds[2].stddev = 200;
    ds[3].kind = LengthKind::Zipf;
    ds[3].min = 1;
    ds[3].max = 1000;
    ds[3].zipf_s = 1.2;
    ds[4].kind = LengthKind::Histogram;
    ds[4].bins = {10, 100, 1000};
    ds[4].weights = {1, 2, 1};  // mean (10 + 200 + 1000) / 4 = 302.5
    CHECK(ds[0].expected() == 50);
    CHECK(ds[4].expected() == 302.5);
    CHECK(ds[2].expected() == Approx(300).epsilon(0.02));  // lognormal parameters reproduce the given mean
    for (const auto& d : ds) {
        REQUIRE(d.check().empty());
        fathom::sim::RandomStream r(11);
        double s = 0;
        const int n = 100000;
        for (int i = 0; i < n; ++i) {
            const int64_t x = d.sample(r);
            REQUIRE(x >= std::max<int64_t>(1, d.min));
            if (d.max > 0) REQUIRE(x <= d.max);
            s += static_cast<double>(x);
        }
        CHECK(s / n == Approx(d.expected()).epsilon(0.02));
    }
    LengthDistribution bad;
    bad.kind = LengthKind::Histogram;
    bad.bins = {1, 2};
    bad.weights = {1};
    CHECK_THAT(bad.check(), Catch::Contains("equal length"));
}

TEST_CASE("generated traffic is a function of the seed", "[traffic]") {
    SyntheticTraffic t = traffic(ArrivalKind::Poisson, 3, 50);
    t.prompt.kind = LengthKind::Lognormal;
    t.prompt.mean = 400;
    t.prompt.stddev = 300;
    auto a = make_synthetic_source(t, 9), b = make_synthetic_source(t, 9), c = make_synthetic_source(t, 10);
    bool differs = false;
    while (auto x = a->next()) {
        auto y = b->next();
        auto z = c->next();
        REQUIRE(y);
        CHECK(x->arrival_s == y->arrival_s);
        CHECK(x->prompt_tokens == y->prompt_tokens);
        differs = differs || x->prompt_tokens != z->prompt_tokens;
    }
    CHECK(differs);
}

TEST_CASE("shared prefixes and sessions build prompts from their parts", "[traffic]") {
    // Each conversation's turn t carries the whole history after the prefix: the previous turn's
    // prompt (minus the prefix) and output.
    SyntheticTraffic t = traffic(ArrivalKind::Poisson, 1, 12);
    t.shared_prefix.groups = 3;
    t.shared_prefix.prefix_tokens = 64;
    t.sessions.turns = 3;
    t.sessions.concurrent = 2;
    auto s = make_synthetic_source(t, 2);
    std::map<uint64_t, std::pair<int64_t, int64_t>> last;  // session -> (prompt - prefix, output)
    int64_t n = 0;
    while (auto r = s->next()) {
        ++n;
        CHECK(r->prefix_group >= 1);
        CHECK(r->prefix_group <= 3);
        CHECK(r->prefix_tokens == 64);
        REQUIRE(r->session != 0);
        const auto it = last.find(r->session);
        CHECK(r->session_tokens == (it == last.end() ? 0 : it->second.first + it->second.second));
        CHECK(r->prompt_tokens == 64 + r->session_tokens + 100);
        last[r->session] = {r->prompt_tokens - 64, r->output_tokens};
    }
    CHECK(n == 12);
    CHECK(last.size() == 4);  // 12 requests in conversations of 3 turns
}

TEST_CASE("traces stream from CSV and JSONL", "[traffic]") {
    auto csv = open_trace(kTraces + "good.csv");
    auto r0 = csv->next();
    REQUIRE(r0);
    CHECK(r0->prefix_group == 1);
    CHECK(r0->prefix_tokens == 64);
    auto r1 = csv->next();
    REQUIRE(r1);
    CHECK(r1->arrival_s == 0.5);
    CHECK(r1->prefix_group == 0);
    CHECK(csv->slo_classes()[static_cast<size_t>(r1->slo_class)] == "batch");
    CHECK(csv->next());
    CHECK(!csv->next());
    auto js = open_trace(kTraces + "good.jsonl");
    js->next();
    auto j1 = js->next();
    REQUIRE(j1);
    CHECK(j1->arrival_s == 0.25);
    CHECK(j1->session == 7);
    CHECK(j1->session_tokens == 20);
    CHECK(!js->next());
}

TEST_CASE("bad trace rows name the file, the line and the field", "[traffic]") {
    auto first_error = [](const std::string& file) -> std::string {
        try {
            auto s = open_trace(kTraces + file);
            while (s->next()) {
            }
        } catch (const fathom::sim::InputError& e) {
            return e.what();
        }
        return "no error";
    };
    CHECK_THAT(first_error("bad_number.csv"), Catch::Contains("bad_number.csv:3") && Catch::Contains("prompt_tokens") &&
                                                  Catch::Contains("16abc"));
    CHECK_THAT(first_error("bad_order.csv"), Catch::Contains("bad_order.csv:3") && Catch::Contains("arrival_s") &&
                                                 Catch::Contains("must not decrease"));
    CHECK_THAT(first_error("bad_negative.csv"), Catch::Contains("bad_negative.csv:2") && Catch::Contains(">= 0"));
    CHECK_THAT(first_error("bad_column.csv"), Catch::Contains("unknown column 'colour'"));
    CHECK_THAT(first_error("bad_json.jsonl"), Catch::Contains("bad_json.jsonl:2") && Catch::Contains("malformed JSON"));
    CHECK_THAT(first_error("good.txt"), Catch::Contains(".csv or .jsonl"));
}

TEST_CASE("a long trace streams without holding it", "[traffic]") {
    const auto path = std::filesystem::temp_directory_path() / "fathom_trace_200k.csv";
    {
        std::ofstream f(path);
        f << "arrival_s,prompt_tokens,output_tokens\n";
        for (int i = 0; i < 200000; ++i) f << i * 0.001 << "," << 100 + i % 7 << ",10\n";
    }
    auto s = open_trace(path.string());
    int64_t n = 0;
    Request last;
    while (auto r = s->next()) {
        last = *r;
        ++n;
    }
    CHECK(n == 200000);
    CHECK(last.id == 199999);
    CHECK(last.prompt_tokens == 100 + 199999 % 7);
    std::filesystem::remove(path);
}
