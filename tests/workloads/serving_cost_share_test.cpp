// Iteration costs shared between simulations (workloads/serving/iteration_cost.h,
// IterationCostShare; plans::pool_cost_signature): a coster reading the share prices every shape
// as one that prices it itself, bit for bit, with the same op sources; a second coster of the same
// signature prices nothing new; and the signature separates what changes an iteration's price from
// what does not. The per-pool cache (ShapeCache) against a plain reference.
#include "plans/evaluate.h"
#include "tests/support/serving_fixture.h"
#include "workloads/serving/iteration_cost.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace fathom;
using namespace fathom::workloads::serving;

namespace {

// A scenario whose serving section adds `serving` to engine vllm, tp 2, and `extra` sections.
plans::Scenario scenario(const std::string& serving = "replicas: 2", const std::string& extra = "") {
    return testing::serving_scenario(
        "kind: serving\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 8}\n"
        "serving: {engine: vllm, tp: 2, " +
        serving + "}\ntraffic: {arrival: poisson, rate: 4, num_requests: 20, prompt: 512, output: 16}\n" + extra);
}

// Prefill chunks, decodes and mixed batches, some in the same token bucket.
std::vector<IterationShape> shapes() {
    std::vector<IterationShape> out;
    for (int64_t chunk : {1, 7, 256, 300, 512, 4096}) {
        IterationShape s;
        s.prefills = {{chunk, 100}};
        s.samples = s.sequences = 1;
        out.push_back(s);
    }
    for (int64_t decodes : {1, 2, 33, 256}) {
        IterationShape s;
        s.decodes = s.samples = s.sequences = decodes;
        s.decode_kv = decodes * 700;
        out.push_back(s);
        s.prefills = {{128, 0}};
        ++s.sequences;
        out.push_back(s);
    }
    return out;
}

}  // namespace

TEST_CASE("a coster reading an iteration-cost share prices every shape as it would alone", "[serving][search]") {
    const plans::Scenario s = scenario();
    const ServingPlan& plan = *s.serving();
    plans::CostModelKind kind{};
    const auto cost =
        plans::cost_model_for(plan.replica.accelerator, testing::source_context(), kind, models::Load::Serving);
    const auto net = hardware::make_network(testing::source_context().with_network(s.cluster));
    auto coster = [&] {
        return std::make_unique<IterationCoster>(s.model, plan.replica, plan.kernels, plan.engine, *cost, *net,
                                                 plan.expert_load);
    };
    IterationCostShare share;
    const uint64_t sig = plans::pool_cost_signature(plan, plan.replica);
    auto alone = coster(), first = coster(), second = coster();
    first->set_share(&share, sig);
    second->set_share(&share, sig);
    for (const IterationShape& shape : shapes()) {
        const IterationCost a = alone->seconds(shape);
        const IterationCost b = first->seconds(shape);
        REQUIRE(a.stage_s == b.stage_s);  // bit-identical
        CHECK(a.p2p_s == b.p2p_s);
    }
    const size_t priced = share.size();
    CHECK(priced == alone->cache_size());
    for (const IterationShape& shape : shapes())
        REQUIRE(second->seconds(shape).stage_s == alone->seconds(shape).stage_s);
    CHECK(share.size() == priced);  // the second coster priced nothing new
    // Every coster reports the ops the shapes it used were priced with.
    CHECK(first->op_sources() == alone->op_sources());
    CHECK(second->op_sources() == alone->op_sources());
    CHECK(alone->op_sources().seen[0]);  // GEMMs were priced
}

TEST_CASE("a pool's cost signature follows what prices an iteration, not the traffic or the batching",
          "[serving][search]") {
    const plans::Scenario s = scenario();
    const ServingPlan& base = *s.serving();
    const uint64_t sig = plans::pool_cost_signature(base, base.replica);
    auto with = [&](const std::string& serving, const std::string& extra = "") {
        const plans::Scenario t = scenario(serving, extra);
        return plans::pool_cost_signature(*t.serving(), t.serving()->replica);
    };
    // Same price: more replicas, another rate, other batching limits, another router, an SLO.
    CHECK(with("replicas: 4, max_num_batched_tokens: 2048, max_num_seqs: 64, router: round-robin",
               "slo: {ttft: 1 s}\n") == sig);
    ServingPlan faster = base;
    faster.traffic.synthetic.arrival.rate = 9;
    CHECK(plans::pool_cost_signature(faster, faster.replica) == sig);
    // Another price: the shape, the dtype, the engine's overheads, the accelerator.
    ServingPlan p = base;
    p.replica.tp = 4;
    CHECK(plans::pool_cost_signature(p, p.replica) != sig);
    CHECK(with("replicas: 2, dtype: fp8") != sig);
    CHECK(with("replicas: 2, iteration_overhead: 1 ms") != sig);
    CHECK(with("replicas: 2, accelerator: h200-sxm-141gb") != sig);
}

TEST_CASE("the shape cache finds every key it was given and no other, its values staying in place", "[serving]") {
    // 20,000 keys of 1 to 9 elements (growing the table nine times), some differing only in length.
    ShapeCache<int64_t> cache;
    auto key = [](int64_t i) { return std::vector<int64_t>(static_cast<size_t>(1 + i % 9), i / 9); };
    std::vector<const int64_t*> where;
    for (int64_t i = 0; i < 20000; ++i) {
        const auto k = key(i);
        REQUIRE(cache.find(k, ShapeCache<int64_t>::hash(k)) == nullptr);
        where.push_back(&cache.insert(k, ShapeCache<int64_t>::hash(k), i));
    }
    CHECK(cache.size() == 20000);
    for (int64_t i = 0; i < 20000; ++i) {
        const auto k = key(i);
        const int64_t* v = cache.find(k, ShapeCache<int64_t>::hash(k));
        REQUIRE(v == where[static_cast<size_t>(i)]);  // the same address as when inserted
        REQUIRE(*v == i);
    }
    const std::vector<int64_t> absent(10, 3);  // ten elements: no key has more than nine
    CHECK(cache.find(absent, ShapeCache<int64_t>::hash(absent)) == nullptr);
}
