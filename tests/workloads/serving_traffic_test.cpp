// Serving traffic generators: arrival processes and length distributions against their closed-form
// moments, seeded determinism, shared prefixes and sessions built exactly as defined. The trace
// readers are tested in serving_trace_test.cpp.
#include "tests/support/traffic_fixture.h"
#include "workloads/serving/traffic/traffic.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

using namespace fathom::workloads::serving;
using fathom::sim::RandomStream;
using fathom::testing::all;
using fathom::workloads::LengthDistribution;
using fathom::workloads::LengthKind;

namespace {

// Traffic of n requests with fixed lengths (prompt 100, output 10) and the given arrivals.
SyntheticTraffic traffic(ArrivalKind kind, double rate, int64_t n) {
    SyntheticTraffic t;
    t.arrival.kind = kind;
    t.arrival.rate = rate;
    t.prompt.value = 100;
    t.output.value = 10;
    t.num_requests = n;
    return t;
}

// Mean and coefficient of variation of the gaps between consecutive arrivals (the first gap from 0).
std::pair<double, double> gap_moments(RequestSource& s) {
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

// P(Z > z) for a standard normal Z.
double upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

}  // namespace

// ---- arrival processes ---------------------------------------------------------------------------

TEST_CASE("Poisson arrivals have exponential gaps of mean 1/rate", "[traffic]") {
    // Exponential gaps: mean 1/rate = 0.25 s and CV exactly 1. Over 200k gaps the sample mean's
    // relative standard error is 1/sqrt(200000) = 0.22% and the CV's about 0.3%, well inside 2%.
    auto p = make_synthetic_source(traffic(ArrivalKind::Poisson, 4, 200000), 1);
    const auto [mean, cv] = gap_moments(*p);
    CHECK(mean == Approx(0.25).epsilon(0.02));
    CHECK(cv == Approx(1.0).epsilon(0.02));
}

TEST_CASE("Gamma arrivals have the requested coefficient of variation", "[traffic]") {
    // Gaps Gamma(k = 1/cv^2, scale 1/(rate k)): mean k / (rate k) = 1/rate, standard deviation
    // sqrt(k) / (rate k) = cv / rate, so CV = cv. cv 0.5 uses Marsaglia-Tsang directly (k = 4),
    // cv 2 its k < 1 boost (k = 1/4), cv 1 is the exponential (k = 1). 200k gaps: noise < 1%.
    for (double cv : {0.5, 1.0, 2.0}) {
        SyntheticTraffic t = traffic(ArrivalKind::Gamma, 4, 200000);
        t.arrival.cv = cv;
        REQUIRE(t.check().empty());
        auto g = make_synthetic_source(t, 3);
        const auto [mean, sample_cv] = gap_moments(*g);
        INFO("cv " << cv);
        CHECK(mean == Approx(0.25).epsilon(0.02));
        CHECK(sample_cv == Approx(cv).epsilon(0.03));
    }
}

TEST_CASE("constant arrivals are exactly 1/rate apart, offline ones all at 0", "[traffic]") {
    // Request i arrives at i / rate. With rate 8 every i / 8 is exact in binary floating point, so
    // each gap is exactly 0.125 s; with rate 3 the times are exactly the doubles i / 3.0.
    auto c = make_synthetic_source(traffic(ArrivalKind::Constant, 8, 1000), 1);
    const auto rs = all(*c);
    REQUIRE(rs.size() == 1000);
    CHECK(rs[0].arrival_s == 0);
    for (size_t i = 1; i < rs.size(); ++i) REQUIRE(rs[i].arrival_s - rs[i - 1].arrival_s == 0.125);
    auto c3 = make_synthetic_source(traffic(ArrivalKind::Constant, 3, 100), 1);
    int64_t i = 0;
    while (auto r = c3->next()) REQUIRE(r->arrival_s == static_cast<double>(i++) / 3.0);
    // Offline: every request is there at time 0.
    auto o = make_synthetic_source(traffic(ArrivalKind::Offline, 0, 100), 1);
    int64_t n = 0;
    while (auto r = o->next()) {
        REQUIRE(r->arrival_s == 0);
        ++n;
    }
    CHECK(n == 100);
}

TEST_CASE("bursty arrivals average rate x on / (on + off)", "[traffic]") {
    // Poisson at 10/s during on periods (mean 2 s), nothing during off periods (mean 6 s): by the
    // renewal-reward theorem the long-run rate is 10 x 2 / (2 + 6) = 2.5/s. 200k arrivals span
    // about 10k on/off cycles; the cycle lengths' CV is about 0.8, so the rate's relative noise is
    // about 0.8 / sqrt(10000) = 0.8%, inside 3%.
    SyntheticTraffic t = traffic(ArrivalKind::Bursty, 10, 200000);
    t.arrival.on_s = 2;
    t.arrival.off_s = 6;
    REQUIRE(t.check().empty());
    auto s = make_synthetic_source(t, 5);
    double last = 0;
    int64_t n = 0;
    bool ordered = true;
    while (auto r = s->next()) {
        ordered = ordered && r->arrival_s >= last;
        last = r->arrival_s;
        ++n;
    }
    CHECK(ordered);
    CHECK(static_cast<double>(n) / last == Approx(2.5).epsilon(0.03));
}

TEST_CASE("diurnal arrivals follow the day's rate: the mean, the peak and the trough", "[traffic]") {
    // Rate 20/s on average over a 1,000 s "day", peak 4x the trough: a = (4 - 1) / (4 + 1) = 0.6,
    // rate(t) = 20 (1 + 0.6 cos(2 pi (t - 500) / 1000)). Over 20 days: 400,000 arrivals expected.
    // In the 100 s around each peak: 20 x 100 x (1 + 0.6 sinc(pi/10)) = 3,180.4 a day, with
    // sinc(x) = sin(x)/x = 0.98363 (the cosine averaged over the window); around each trough
    // 20 x 100 x (1 - 0.6 x 0.98363) = 819.6. Poisson noise over 20 days: 0.4% and 0.8%, inside 3%.
    SyntheticTraffic t = traffic(ArrivalKind::Diurnal, 20, 10000000);
    t.arrival.peak_to_trough = 4;
    t.arrival.period_s = 1000;
    REQUIRE(t.check().empty());
    CHECK(t.arrival.peak_time() == 500);
    auto s = make_synthetic_source(t, 9);
    int64_t n = 0, peak = 0, trough = 0;
    double last = 0;
    bool ordered = true;
    while (auto r = s->next()) {
        if (r->arrival_s >= 20000) break;
        ordered = ordered && r->arrival_s >= last;
        last = r->arrival_s;
        ++n;
        const double in_day = std::fmod(r->arrival_s, 1000.0);
        if (std::abs(in_day - 500) < 50) ++peak;
        if (in_day < 50 || in_day >= 950) ++trough;
    }
    CHECK(ordered);
    CHECK(static_cast<double>(n) == Approx(400000).epsilon(0.03));
    CHECK(static_cast<double>(peak) == Approx(20 * 3180.4).epsilon(0.03));
    CHECK(static_cast<double>(trough) == Approx(20 * 819.6).epsilon(0.03));
    // A ratio below 1, or no period, is refused by name.
    t.arrival.peak_to_trough = 0.5;
    CHECK(t.check().find("peak_to_trough") != std::string::npos);
}

// ---- length distributions ------------------------------------------------------------------------

TEST_CASE("length distributions draw their expected values within their bounds", "[traffic]") {
    auto make = [](LengthKind kind) {
        LengthDistribution d;
        d.kind = kind;
        return d;
    };
    std::vector<std::pair<LengthDistribution, double>> cases;  // distribution, its mean by derivation
    {
        auto d = make(LengthKind::Fixed);
        d.value = 700;
        d.max = 512;  // clamped: always 512
        cases.push_back({d, 512});
    }
    {
        auto d = make(LengthKind::Uniform);
        d.min = 10;
        d.max = 90;  // (10 + 90) / 2
        cases.push_back({d, 50});
    }
    {
        // Mean 500, sd 100: the clamp at 1 cuts P(X < 1) = Q(4.99) ~ 3e-7 of the mass, moving the
        // mean by less than 1e-4; rounding to the nearest integer is symmetric about 500.
        auto d = make(LengthKind::Normal);
        d.mean = 500;
        d.stddev = 100;
        cases.push_back({d, 500});
    }
    {
        // Clamped to [2, 8] around mean 5: the clamp range and the rounding are symmetric about 5.
        auto d = make(LengthKind::Normal);
        d.mean = 5;
        d.stddev = 3;
        d.min = 2;
        d.max = 8;
        cases.push_back({d, 5});
    }
    {
        // sd 0.2 around 10.3: Y = 10 unless X >= 10.5 (Y = 11, probability Q(1)) or X < 9.5 (Y = 9,
        // probability Q(4)); X outside [8.5, 11.5) has probability < 1e-9. E[Y] = 10 + Q(1) - Q(4).
        auto d = make(LengthKind::Normal);
        d.mean = 10.3;
        d.stddev = 0.2;
        cases.push_back({d, 10 + upper_tail(1) - upper_tail(4)});
    }
    {
        // sigma^2 = ln(1 + (200/300)^2) and mu = ln 300 - sigma^2/2 give E[X] = e^(mu + sigma^2/2)
        // = 300; the clamp at 1 (P(X < 1) ~ 1e-13) and the rounding change it by < 1e-6.
        auto d = make(LengthKind::Lognormal);
        d.mean = 300;
        d.stddev = 200;
        cases.push_back({d, 300});
    }
    {
        // Zipf s = 1 on [1, 3]: p(k) proportional to 1, 1/2, 1/3 (sum 11/6), so
        // E = (1 + 2/2 + 3/3) / (11/6) = 18/11.
        auto d = make(LengthKind::Zipf);
        d.min = 1;
        d.max = 3;
        d.zipf_s = 1;
        cases.push_back({d, 18.0 / 11.0});
    }
    {
        // Zipf s = 1.2 on [5, 1000]: E = sum k^(1-s) / sum k^-s, summed here from the pmf.
        auto d = make(LengthKind::Zipf);
        d.min = 5;
        d.max = 1000;
        d.zipf_s = 1.2;
        double num = 0, den = 0;
        for (int k = 5; k <= 1000; ++k) {
            num += std::pow(k, 1 - 1.2);
            den += std::pow(k, -1.2);
        }
        cases.push_back({d, num / den});
    }
    {
        // Weights 1:2:1 (one zero-weight bin never drawn): (10 + 2 x 100 + 1000) / 4 = 302.5.
        auto d = make(LengthKind::Histogram);
        d.bins = {10, 100, 5000, 1000};
        d.weights = {1, 2, 0, 1};
        cases.push_back({d, 302.5});
    }
    for (const auto& [d, mean] : cases) {
        INFO(fathom::sim::name(d.kind) << " mean " << d.mean << " sd " << d.stddev << " [" << d.min << ", " << d.max
                                       << "]");
        REQUIRE(d.check().empty());
        const double expected = d.expected();
        CHECK(expected == Approx(mean).epsilon(1e-6).margin(1e-4));
        // 100k draws: the sample mean's noise is at most sd / sqrt(1e5) = 0.3% of sd, inside 2%.
        RandomStream r(11);
        const int n = 100000;
        double sum = 0;
        for (int i = 0; i < n; ++i) {
            const int64_t x = d.sample(r);
            REQUIRE(x >= std::max<int64_t>(1, d.min));
            if (d.max > 0) REQUIRE(x <= d.max);
            if (d.kind == LengthKind::Histogram) REQUIRE(x != 5000);
            sum += static_cast<double>(x);
        }
        CHECK(sum / n == Approx(expected).epsilon(0.02));
    }
}

TEST_CASE("the expected value of a clamped, rounded lognormal is the exact pmf sum", "[traffic]") {
    // E[Y] for Y = clamp(round(X), 1, 1024), ln X ~ N(mu, sigma): sum over n of n P(Y = n), with
    // P(Y = n) = F(n + 1/2) - F(n - 1/2) inside and the tails lumped onto 1 and 1024.
    LengthDistribution d;
    d.kind = LengthKind::Lognormal;
    d.mean = 256;
    d.stddev = 128;
    d.max = 1024;
    const double s2 = std::log1p(0.25), mu = std::log(256.0) - s2 / 2, sigma = std::sqrt(s2);
    auto cdf = [&](double x) { return 1 - upper_tail((std::log(x) - mu) / sigma); };
    double e = 0;
    for (int n = 1; n <= 1024; ++n) {
        const double below = n == 1 ? 0 : cdf(n - 0.5), upto = n == 1024 ? 1 : cdf(n + 0.5);
        e += n * (upto - below);
    }
    CHECK(d.expected() == Approx(e).epsilon(1e-9));
    CHECK(d.expected() < 256);  // the clamp at 1024 removes part of the right tail
}

TEST_CASE("a Zipf table follows its parameters and is not shared by copies", "[traffic]") {
    LengthDistribution d;
    d.kind = LengthKind::Zipf;
    d.min = 1;
    d.max = 10;
    RandomStream r0(5), r1(3), r2(3);
    d.sample(r0);  // builds the table
    const LengthDistribution copy = d;
    // The same draws from the copy (which builds its own table) and from the original.
    for (int i = 0; i < 100; ++i) REQUIRE(copy.sample(r1) == d.sample(r2));
    d.max = 4;  // a new range rebuilds the table: nothing above 4
    for (int i = 0; i < 1000; ++i) REQUIRE(d.sample(r1) <= 4);
}

TEST_CASE("parameter checks name the field", "[traffic]") {
    LengthDistribution d;
    d.kind = LengthKind::Normal;
    d.mean = 100;
    d.stddev = -1;
    CHECK_THAT(d.check(), Catch::Contains("stddev must be >= 0"));
    d.stddev = 1;
    d.min = 0;
    CHECK_THAT(d.check(), Catch::Contains("min must be >= 1"));
    d.min = 10;
    d.max = 5;
    CHECK_THAT(d.check(), Catch::Contains("max must be >= min"));
    d.max = 0;
    CHECK(d.check().empty());
    d.kind = LengthKind::Uniform;
    CHECK_THAT(d.check(), Catch::Contains("max must be set"));
    d.kind = LengthKind::Zipf;
    d.max = 100;
    d.zipf_s = 0;
    CHECK_THAT(d.check(), Catch::Contains("zipf_s must be > 0"));
    d.kind = LengthKind::Histogram;
    d.bins = {1, 2};
    d.weights = {1};
    CHECK_THAT(d.check(), Catch::Contains("histogram needs bins and weights of equal length"));
    d.weights = {0, 0};
    CHECK_THAT(d.check(), Catch::Contains("weights must be >= 0 with a positive sum"));
    d.weights = {1, -1};
    CHECK_THAT(d.check(), Catch::Contains("weights must be >= 0"));
    d.kind = LengthKind::Fixed;
    CHECK_THAT(d.check(), Catch::Contains("value must be >= 1"));

    ArrivalProcess a;
    CHECK_THAT(a.check(), Catch::Contains("rate must be > 0"));
    a.kind = ArrivalKind::Offline;
    CHECK(a.check().empty());
    a.kind = ArrivalKind::Gamma;
    a.rate = 1;
    a.cv = 0;
    CHECK_THAT(a.check(), Catch::Contains("cv must be > 0"));
    a.kind = ArrivalKind::Bursty;
    a.off_s = 1;
    CHECK_THAT(a.check(), Catch::Contains("on_s must be > 0"));
    a.on_s = 1;
    a.off_s = 0;
    CHECK_THAT(a.check(), Catch::Contains("off_s must be > 0"));

    SyntheticTraffic t = traffic(ArrivalKind::Poisson, 1, 0);
    CHECK_THAT(t.check(), Catch::Contains("num_requests must be >= 1"));
    t.num_requests = 10;
    CHECK(t.check().empty());
    t.prompt.min = 0;
    CHECK_THAT(t.check(), Catch::Contains("prompt: min must be >= 1"));
    t.prompt.min = 1;
    t.shared_prefix.groups = 2;
    CHECK_THAT(t.check(), Catch::Contains("shared_prefix.prefix_tokens"));
    t.shared_prefix.prefix_tokens = 10;
    t.sessions.turns = 2;
    t.sessions.concurrent = 0;
    CHECK_THAT(t.check(), Catch::Contains("sessions.concurrent must be >= 1"));
}

// ---- generated traffic ---------------------------------------------------------------------------

TEST_CASE("generated traffic is a function of the seed", "[traffic]") {
    SyntheticTraffic t = traffic(ArrivalKind::Gamma, 3, 2000);
    t.arrival.cv = 1.5;
    t.prompt.kind = LengthKind::Lognormal;
    t.prompt.mean = 400;
    t.prompt.stddev = 300;
    t.output.kind = LengthKind::Zipf;
    t.output.min = 1;
    t.output.max = 500;
    t.shared_prefix = {4, 32};
    t.sessions.turns = 3;
    t.sessions.concurrent = 5;
    REQUIRE(t.check().empty());
    auto a = make_synthetic_source(t, 9), b = make_synthetic_source(t, 9), c = make_synthetic_source(t, 10);
    CHECK(a->slo_classes() == std::vector<std::string>{"default"});
    bool differs = false;
    int64_t n = 0;
    while (auto x = a->next()) {
        auto y = b->next();
        auto z = c->next();
        REQUIRE(y);
        REQUIRE(z);
        REQUIRE(x->id == n++);
        REQUIRE(x->arrival_s == y->arrival_s);  // bit-identical
        REQUIRE(x->prompt_tokens == y->prompt_tokens);
        REQUIRE(x->output_tokens == y->output_tokens);
        REQUIRE(x->prefix_group == y->prefix_group);
        REQUIRE(x->session == y->session);
        REQUIRE(x->session_tokens == y->session_tokens);
        differs = differs || x->arrival_s != z->arrival_s || x->prompt_tokens != z->prompt_tokens ||
                  x->output_tokens != z->output_tokens || x->prefix_group != z->prefix_group;
    }
    CHECK(n == 2000);
    CHECK(!b->next());
    CHECK(differs);
}

TEST_CASE("shared prefixes: a uniform group per request, the prefix ahead of the drawn prompt", "[traffic]") {
    // Groups uniform on 1..4: each holds 1/4 of 40k requests, standard error
    // sqrt(0.25 x 0.75 / 40000) = 0.2% absolute, so within 0.25 +- 0.01.
    SyntheticTraffic t = traffic(ArrivalKind::Poisson, 1, 40000);
    t.prompt.kind = LengthKind::Uniform;
    t.prompt.min = 20;
    t.prompt.max = 80;
    t.shared_prefix = {4, 64};
    REQUIRE(t.check().empty());
    auto s = make_synthetic_source(t, 4);
    std::map<uint64_t, int64_t> per_group;
    while (auto r = s->next()) {
        REQUIRE(r->prefix_group >= 1);
        REQUIRE(r->prefix_group <= 4);
        REQUIRE(r->prefix_tokens == 64);
        REQUIRE(r->session == 0);
        REQUIRE(r->session_tokens == 0);
        // prompt = prefix + the drawn (unique) part, which lies in [20, 80].
        REQUIRE(r->prompt_tokens - 64 >= 20);
        REQUIRE(r->prompt_tokens - 64 <= 80);
        ++per_group[r->prefix_group];
    }
    REQUIRE(per_group.size() == 4);
    for (const auto& [g, n] : per_group) CHECK(static_cast<double>(n) / 40000 == Approx(0.25).margin(0.01));
}

TEST_CASE("sessions rotate over open conversations and carry their whole history", "[traffic]") {
    // 3 turns, 2 open conversations: request i goes to slot i % 2. Slot 0 opens session 1 at
    // request 0 (turns at 0, 2, 4), slot 1 session 2 at request 1 (1, 3, 5); after three turns
    // each closes: session 3 takes slot 0 (6, 8, 10), session 4 slot 1 (7, 9, 11).
    SyntheticTraffic t = traffic(ArrivalKind::Poisson, 1, 12);
    t.prompt.kind = LengthKind::Uniform;
    t.prompt.min = 10;
    t.prompt.max = 500;
    t.output.kind = LengthKind::Uniform;
    t.output.min = 1;
    t.output.max = 300;
    t.shared_prefix = {3, 64};
    t.sessions.turns = 3;
    t.sessions.concurrent = 2;
    REQUIRE(t.check().empty());
    const auto rs = all(*make_synthetic_source(t, 2));
    REQUIRE(rs.size() == 12);
    const std::vector<uint64_t> sessions = {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4};
    std::map<uint64_t, Request> previous;  // the session's last turn
    for (const auto& r : rs) {
        INFO("request " << r.id);
        CHECK(r.session == sessions[static_cast<size_t>(r.id)]);
        CHECK(r.prefix_group >= 1);
        CHECK(r.prefix_group <= 3);
        CHECK(r.prefix_tokens == 64);
        const auto it = previous.find(r.session);
        if (it == previous.end()) {
            CHECK(r.session_tokens == 0);  // a first turn has no history
        } else {
            // Turn t > 1: the previous prompt after the prefix plus the previous output, and the
            // prefix group of the conversation's first turn.
            CHECK(r.session_tokens == it->second.prompt_tokens - it->second.prefix_tokens + it->second.output_tokens);
            CHECK(r.prefix_group == it->second.prefix_group);
        }
        // prompt = prefix + history + a new user message drawn from [10, 500].
        const int64_t fresh = r.prompt_tokens - r.prefix_tokens - r.session_tokens;
        CHECK(fresh >= 10);
        CHECK(fresh <= 500);
        previous[r.session] = r;
    }
    // The third turn's history holds both earlier turns: more than 2 x (10 + 1) tokens.
    CHECK(rs[4].session_tokens >= 22);

    // Sessions without shared prefixes: no group, the history starts right at the prompt's start.
    t.shared_prefix = {};
    for (const auto& r : all(*make_synthetic_source(t, 2))) {
        CHECK(r.prefix_group == 0);
        CHECK(r.prefix_tokens == 0);
        CHECK(r.session != 0);
    }
}
