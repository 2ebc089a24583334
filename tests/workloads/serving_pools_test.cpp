// ServingPlan::pools(): the one place that tells aggregated, disaggregated and isolated plans apart.
#include "plans/constraints.h"
#include "tests/support/fixtures.h"
#include "workloads/serving/serving_plan.h"

#include <catch2/catch.hpp>

#include <string>

using namespace fathom;
using namespace fathom::workloads::serving;

namespace {

PoolLayout layout(int tp, int replicas) {
    PoolLayout l;
    l.tp = tp;
    l.replicas = replicas;
    return l;
}

// A plan with a prefill pool of 2 x tp1 and a decode pool of 3 x tp2, isolated as given.
ServingPlan disaggregated(PoolIsolation isolate) {
    ServingPlan p;
    p.prefill = layout(1, 2);
    p.decode = layout(2, 3);
    p.isolate = isolate;
    return p;
}

}  // namespace

TEST_CASE("pools: an aggregated plan has one pool", "[serving][pools]") {
    ServingPlan p;
    p.replica = layout(2, 4);
    const auto pools = p.pools();
    REQUIRE(pools.size() == 1);
    CHECK(pools[0].role == PoolRole::Aggregated);
    CHECK(pools[0].layout == &p.replica);
    CHECK(pools[0].simulated);
    CHECK(pools[0].gpus == 8);
    CHECK(std::string(pools[0].key) == "serving");
    CHECK(p.gpus() == 8);
    CHECK(std::string(sim::name(pools[0].role)) == "aggregated");
}

TEST_CASE("pools: a disaggregated plan has a prefill then a decode pool", "[serving][pools]") {
    const ServingPlan p = disaggregated(PoolIsolation::None);
    const auto pools = p.pools();
    REQUIRE(pools.size() == 2);
    CHECK(pools[0].role == PoolRole::Prefill);
    CHECK(pools[0].layout == &*p.prefill);
    CHECK(pools[0].simulated);
    CHECK(pools[0].gpus == 2);
    CHECK(std::string(pools[0].key) == "serving.disaggregation.prefill");
    CHECK(pools[1].role == PoolRole::Decode);
    CHECK(pools[1].layout == &*p.decode);
    CHECK(pools[1].simulated);
    CHECK(pools[1].gpus == 6);
    CHECK(std::string(pools[1].key) == "serving.disaggregation.decode");
    CHECK(p.gpus() == 8);
}

TEST_CASE("pools: isolating one pool leaves the other unlimited and off the cluster", "[serving][pools]") {
    // The prefill pool alone: its 2 GPUs are the plan's; the decode pool is listed, not simulated.
    const ServingPlan prefill = disaggregated(PoolIsolation::Prefill);
    const auto a = prefill.pools();
    REQUIRE(a.size() == 2);
    CHECK(a[0].role == PoolRole::Prefill);
    CHECK(a[0].simulated);
    CHECK(a[0].gpus == 2);
    CHECK(a[1].role == PoolRole::Decode);
    CHECK_FALSE(a[1].simulated);
    CHECK(a[1].gpus == 0);
    CHECK(a[1].layout == &*prefill.decode);  // still there: the plan checks look at it
    CHECK(prefill.gpus() == 2);
    // The decode pool alone: its 6 GPUs.
    const ServingPlan decode = disaggregated(PoolIsolation::Decode);
    const auto b = decode.pools();
    REQUIRE(b.size() == 2);
    CHECK_FALSE(b[0].simulated);
    CHECK(b[0].gpus == 0);
    CHECK(b[1].simulated);
    CHECK(b[1].gpus == 6);
    CHECK(decode.gpus() == 6);
}

TEST_CASE("pools: isolate without disaggregation lists the aggregated pool and is reported", "[serving][pools]") {
    ServingPlan p;
    p.replica = layout(1, 8);
    p.isolate = PoolIsolation::Decode;
    const auto pools = p.pools();
    REQUIRE(pools.size() == 1);
    CHECK(pools[0].role == PoolRole::Aggregated);
    CHECK(p.gpus() == 8);
    p.traffic.synthetic.num_requests = 1;
    const auto v = plans::check_serving_plan(testing::source_catalog().model("llama3-8b"), testing::h100_cluster(8), p);
    REQUIRE_FALSE(v.empty());
    CHECK(v.front().key == "serving.disaggregation.isolate");
}
