// The KV store the replicas share (serving.kv_store; LMCache's server, Mooncake's store): a block
// computed on one replica loads on another over the GPUs' scale-out NICs, in closed form; the
// store's LRU over whole blocks; the keys refused.
#include "sim/error.h"
#include "tests/support/fixtures.h"
#include "tests/support/serving_fixture.h"
#include "tests/support/traffic_fixture.h"
#include "workloads/serving/serving_memory.h"

#include <catch2/catch.hpp>

#include <string>

using namespace fathom;
using namespace fathom::workloads::serving;

using testing::serve;

namespace {

// Llama 3 8B on `replicas` H100s (one node) under vLLM's preset with prefix caching, round-robin
// routing, the loads blocking and copied by a kernel, `extra` serving keys, serving `trace`.
plans::Scenario scenario(const std::string& trace, int replicas, const std::string& extra) {
    const std::string n = std::to_string(replicas);
    return testing::serving_scenario(
        "kind: serving\nseed: 1\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: " +
        n + "}\nserving: {engine: vllm, tp: 1, replicas: " + n +
        ", router: round-robin, prefix_caching: true, kv_offload_load: blocking, kv_offload_copy: kernel" + extra +
        "}\ntraffic: {arrival: trace, trace: " + trace + "}\n");
}

}  // namespace

TEST_CASE("a prefix computed on one replica loads on another from the shared store", "[serving]") {
    // Request 0 computes a 3,200-token prefix (200 blocks of 16) on replica 0; round-robin sends
    // request 1, with the same prefix, to replica 1. Without a store replica 1 prefills all of it;
    // with one it loads the 200 blocks (2,097,152 bytes each on a GPU at TP 1: 16 tokens x 32 layers
    // x K and V x 8 heads x 128 x 2 bytes) over its NIC share after one NIC latency, so its TTFT
    // exceeds that of a GPU hit (one replica, both requests on it) by the load alone:
    // latency + 419,430,400 bytes / (NIC bandwidth per GPU x efficiency).
    const std::string trace =
        testing::write_file("store.csv",
                            "arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens\n0,3300,2,1,3200\n"
                            "10,3300,2,1,3200\n");
    const auto stored = scenario(trace, 2, ", kv_store: 1 TB");
    const ServingReport with = serve(stored, true), without = serve(scenario(trace, 2, ""), true),
                        gpu_hit = serve(scenario(trace, 1, ""), true);
    REQUIRE(with.records.size() == 2);
    CHECK(with.records[1].replica == 1);
    CHECK(without.records[1].prefix_hit_tokens == 0);
    CHECK(gpu_hit.records[1].prefix_hit_tokens == 3200);
    CHECK(with.store_hit_rate == Approx(3200.0 / 6600));
    CHECK(with.offload_hit_rate == Approx(3200.0 / 6600));  // the store is one of the tiers loaded from
    const hardware::ClusterSpec& c = stored.cluster;
    const double load = c.nic.latency + 200.0 * 2097152 / (c.nic_bandwidth_per_gpu() * c.nic.efficiency);
    CHECK(with.records[1].ttft_s - gpu_hit.records[1].ttft_s == Approx(load).epsilon(0.02));
    CHECK(without.records[1].ttft_s > with.records[1].ttft_s);
    // TTFT by where the prefix came from: request 0 from nowhere, request 1 from the store.
    REQUIRE(with.ttft_by_tier.size() == 2);
    CHECK(with.ttft_by_tier[0].source == "none");
    CHECK(with.ttft_by_tier[0].ttft_s.p50 == Approx(with.records[0].ttft_s));
    CHECK(with.ttft_by_tier[1].source == "store");
    CHECK(with.ttft_by_tier[1].ttft_s.p50 == Approx(with.records[1].ttft_s));
    CHECK(without.ttft_by_tier.empty());  // no tier: not reported
}

TEST_CASE("the shared store keeps whole blocks, the least recently used dropped", "[serving]") {
    // A store of 300 whole blocks (629,145,600 bytes; a whole Llama 3 8B block is 2,097,152 bytes).
    // Request 0 (replica 0) stores its 206 full blocks, request 1 (another prefix, replica 1) 206
    // more: the store drops the 112 least recently used, request 0's first ones. Request 2 (request
    // 0's prefix, replica 2) finds its first block gone, so nothing (a prefix hit starts at the
    // first block); a store of 1 TB keeps all 200 prefix blocks for it: 3,200 of 9,900 prompt tokens.
    const models::ModelSpec& llama = testing::source_catalog().model("llama3-8b");
    KvSettings kv;
    kv.block_size = 16;
    CHECK(store_block_bytes(llama, kv) == 2097152.0);
    const std::string trace =
        testing::write_file("store_lru.csv",
                            "arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens\n0,3300,2,1,3200\n"
                            "10,3300,2,2,3200\n20,3300,2,1,3200\n");
    const ServingReport r = serve(scenario(trace, 3, ", kv_store: 629145600 B"), true);
    REQUIRE(r.records.size() == 3);
    CHECK(r.records[2].replica == 2);
    CHECK(r.records[2].prefix_hit_tokens == 0);
    CHECK(r.store_hit_rate == 0);
    const ServingReport big = serve(scenario(trace, 3, ", kv_store: 1 TB"), true);
    CHECK(big.store_hit_rate == Approx(3200.0 / 9900));
}

TEST_CASE("a shared store without prefix caching, or smaller than a whole block, is refused by key",
          "[serving][bad-input]") {
    const std::string head =
        "kind: serving\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, "
        "gpus_per_node: 2}\nserving: {engine: vllm, tp: 2, ";
    const std::string traffic =
        "}\ntraffic: {arrival: concurrency, concurrency: 1, num_requests: 2, prompt: 64, output: 8}\n";
    CHECK_THROWS_WITH(testing::serving_scenario(head + "prefix_caching: false, kv_store: 1 TB" + traffic),
                      Catch::Contains("serving.kv_store") && Catch::Contains("prefix_caching"));
    // At TP 2 a GPU holds half a block (1,048,576 bytes); the store keeps whole ones (2,097,152).
    CHECK_THROWS_WITH(testing::serving_scenario(head + "prefix_caching: true, kv_store: 2000000 B" + traffic),
                      Catch::Contains("serving.kv_store") && Catch::Contains("whole KV block (2097152 bytes"));
    CHECK_NOTHROW(testing::serving_scenario(head + "prefix_caching: true, kv_store: 2097152 B" + traffic));
}
