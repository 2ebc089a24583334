// KV offloading to host memory (workloads/serving/kv_tier.h): the tier's LRU, a hit's load time in
// closed form, a host tier acting as a larger cache, and the key's refusals.
#include "sim/error.h"
#include "tests/support/fixtures.h"
#include "tests/support/serving_fixture.h"
#include "tests/support/traffic_fixture.h"
#include "workloads/serving/kv_tier.h"

#include <catch2/catch.hpp>

#include <string>

using namespace fathom;
using namespace fathom::workloads::serving;

using testing::serve;

TEST_CASE("the offload tier keeps the most recently used blocks", "[serving]") {
    KvTier t(2);
    t.store(1);
    t.store(2);
    CHECK(t.touch(1));  // 1 most recent: 2 goes first
    t.store(3);
    CHECK(t.contains(1));
    CHECK_FALSE(t.contains(2));
    CHECK(t.contains(3));
    CHECK(t.dropped() == 1);
    CHECK_FALSE(t.touch(2));
    KvTier none(0);
    none.store(1);
    CHECK_FALSE(none.contains(1));
}

namespace {

// Llama 3 8B on one H100 under vLLM's preset with prefix caching, KV cache at `utilization` of the
// device, `offload` of host memory per GPU, serving `trace`.
plans::Scenario scenario(const std::string& trace, double utilization, const std::string& offload) {
    return testing::serving_scenario(
        "kind: serving\nseed: 1\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: "
        "1}\nserving: {engine: vllm, tp: 1, prefix_caching: true, gpu_memory_utilization: " +
        std::to_string(utilization) + ", kv_offload: " + offload + "}\ntraffic: {arrival: trace, trace: " + trace +
        "}\n");
}

}  // namespace

TEST_CASE("a prompt found in host memory loads its blocks over the host link", "[serving]") {
    // Request 0 computes a 3,200-token prefix (200 blocks of 16). Six requests with prefixes of their
    // own (200 blocks each) then evict it from a small GPU cache (gpu_memory_utilization 0.24: 1,058
    // blocks once the weights are in), and a host tier of 4 GB keeps it. The last request shares
    // request 0's prefix: it finds
    // the 200 blocks in host memory and loads them (200 x 2,097,152 bytes: 16 tokens x 32 layers x K
    // and V x 8 heads x 128 x 2 bytes) before its prefill of the other 100 tokens. Against the same
    // request finding the prefix on a large GPU cache, its TTFT is longer by the load alone:
    // 419,430,400 bytes over the H100's achievable host-link bandwidth when one kernel copies them
    // (kv_offload_copy kernel: LMCache, SGLang); vLLM's preset copies each block per layer and per
    // K and V with its own cudaMemcpyAsync (memcpy): 200 x 32 x 2 = 12,800 copies of 3.0 us more
    // (the PCIe Gen5 link's measured copy_latency), 38.4 ms.
    const std::string trace = testing::write_file(
        "offload.csv",
        "arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens\n0,3300,2,1,3200\n5,3300,2,2,3200\n"
        "10,3300,2,3,3200\n15,3300,2,4,3200\n20,3300,2,5,3200\n25,3300,2,6,3200\n30,3300,2,7,3200\n"
        "60,3300,2,1,3200\n");
    auto record = [&](double util, const std::string& offload) {
        const auto s = scenario(trace, util, offload);
        return std::make_pair(testing::serve(s, true), s.cluster.pcie.achievable_bandwidth());
    };
    const auto [small, pcie] = record(0.24, "4 GB, kv_offload_copy: kernel");
    const auto memcpy = record(0.24, "4 GB").first;  // vLLM's preset: memcpy
    const auto big = record(0.9, "0 GB").first;
    REQUIRE(small.records.size() == 8);
    CHECK(small.offload_hit_tokens == 3200);
    CHECK(small.prefix_hit_tokens == 0);
    CHECK(big.prefix_hit_tokens == 3200);
    const double load = 200.0 * 2097152 / pcie;
    CHECK(small.records[7].ttft_s - big.records[7].ttft_s == Approx(load).epsilon(0.02));
    CHECK(memcpy.records[7].ttft_s - big.records[7].ttft_s == Approx(load + 200 * 32 * 2 * 3e-6).epsilon(0.02));
}

TEST_CASE("the copy method of KV offloading is the engine's, required where no preset states it",
          "[serving][bad-input]") {
    const hardware::PcieSpec gen5{"gen5", "", 63e9, 1e-6, 0.905, 3e-6};
    const models::ModelSpec& llama = testing::source_catalog().model("llama3-8b");
    CHECK(kv_block_copy_seconds("memcpy", gen5, llama, 32) == Approx(32 * 2 * 3e-6));
    CHECK(kv_block_copy_seconds("memcpy", gen5, llama, 16) == Approx(16 * 2 * 3e-6));  // a PP stage's layers
    CHECK(kv_block_copy_seconds("kernel", gen5, llama, 32) == 0.0);
    // TensorRT-LLM's preset does not say how its host tier copies: the key is required.
    const std::string base =
        "kind: serving\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, "
        "gpus_per_node: 1}\nserving: {engine: tensorrt-llm, tp: 1, prefix_caching: true, "
        "kv_offload: 1 GB";
    const std::string traffic =
        "}\ntraffic: {arrival: concurrency, concurrency: 1, num_requests: 2, prompt: 64, output: 8}\n";
    CHECK_THROWS_WITH(testing::serving_scenario(base + traffic),
                      Catch::Contains("serving.kv_offload_copy") && Catch::Contains("missing"));
    CHECK_THROWS_WITH(testing::serving_scenario(base + ", kv_offload_copy: kernel" + traffic),
                      Catch::Contains("serving.kv_offload_load") && Catch::Contains("missing"));
    CHECK_NOTHROW(testing::serving_scenario(base + ", kv_offload_copy: kernel, kv_offload_load: blocking" + traffic));
    // Stated without a tier (kv_offload 0, no kv_store): a warning each, not an error.
    const plans::Scenario idle = testing::serving_scenario(
        "kind: serving\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 1}\n"
        "serving: {engine: vllm, tp: 1, kv_offload_copy: kernel, kv_offload_load: blocking" +
        traffic);
    REQUIRE(idle.warnings.size() == 2);
    CHECK(idle.warnings[0].key == "serving.kv_offload_copy");
    CHECK_THAT(idle.warnings[1].message, Catch::Contains("no KV tier"));
}

TEST_CASE("an offload load blocks the batch, runs beside it layer by layer, or waits apart", "[serving]") {
    // The trace of the test above, with request A (64 tokens in, 1,000 out, from t = 55 s) decoding
    // when request B (t = 60 s) finds its 3,200-token prefix in host memory: 200 blocks, 419,430,400
    // bytes over the host link plus vLLM's 12,800 copies of 3.0 us: L = 45.76 ms.
    //  - blocking: the iteration that admits B (A's decode and B's 100-token prefill, c) starts
    //    after the load: A's longest gap between tokens is L + c, which gives c.
    //  - layerwise: that iteration runs beside the load, each of the 32 layers after its blocks:
    //    it ends at max(c, L + c / 32) = L + c / 32, so A's gap is L + c / 32 and B's first token
    //    comes c x 31/32 sooner than under blocking.
    //  - async: A's iterations go on while B's blocks copy, B joining once they are in: A's longest
    //    gap is that of a decode beside a 100-token prefill, as without any load (B on a large
    //    cache), and B's TTFT is L plus at most one of A's decodes plus c, blocking's within 5%.
    const std::string trace = testing::write_file(
        "offload_modes.csv",
        "arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens\n0,3300,2,1,3200\n5,3300,2,2,3200\n"
        "10,3300,2,3,3200\n15,3300,2,4,3200\n20,3300,2,5,3200\n25,3300,2,6,3200\n30,3300,2,7,3200\n"
        "55,64,1000,8,0\n60,3300,2,1,3200\n");
    auto run = [&](const std::string& load) {
        return serve(scenario(trace, 0.24, "4 GB, kv_offload_load: " + load), true);
    };
    const ServingReport blocking = run("blocking"), layerwise = run("layerwise"), async = run("async");
    const ServingReport alone = serve(scenario(trace, 0.9, "0 GB"), true);
    REQUIRE(async.records.size() == 9);
    const double load = 200.0 * 2097152 / 57.015e9 + 200 * 32 * 2 * 3e-6;
    auto a_gap = [](const ServingReport& r) { return r.records[7].max_itl_s; };
    auto b_ttft = [](const ServingReport& r) { return r.records[8].ttft_s; };
    const double c = a_gap(blocking) - load;
    CHECK(c > 0.001);
    CHECK(a_gap(layerwise) == Approx(load + c / 32).epsilon(1e-3));
    CHECK(b_ttft(blocking) - b_ttft(layerwise) == Approx(c * 31 / 32).epsilon(1e-3));
    CHECK(a_gap(async) < load / 2);
    CHECK(a_gap(async) == Approx(a_gap(alone)).epsilon(0.01));
    CHECK(b_ttft(async) == Approx(b_ttft(blocking)).epsilon(0.05));
}

TEST_CASE("a host tier as large as a big GPU cache hits as often as that cache", "[serving]") {
    // 1,200 turns of 120 six-turn conversations (a turn's prompt is the conversation so far plus
    // about 600 new tokens). On a GPU cache of 27,814 blocks (gpu_memory_utilization 0.9) 59.9% of
    // the prompt tokens hit. On a GPU cache of 3,490 blocks (0.3), none does: a conversation's next
    // turn comes after its blocks are evicted. A host tier of 27,814 blocks (58.33 GB at 2,097,152
    // bytes a block) that keeps every block as it is computed holds what the big cache holds: the
    // same hits within a point, loaded over the host link instead of found on the GPU.
    auto run = [](double utilization, const std::string& offload) {
        return serve(testing::serving_scenario(
            "kind: serving\nseed: 1\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, "
            "gpus_per_node: 1}\nserving: {engine: vllm, tp: 1, prefix_caching: true, gpu_memory_utilization: " +
            std::to_string(utilization) + ", kv_offload: " + offload +
            "}\ntraffic: {arrival: poisson, rate: 4, num_requests: 1200, prompt: {distribution: lognormal, mean: "
            "600, stddev: 150, max: 1000}, output: 100, sessions: {turns: 6, concurrent: 120}}\n"));
    };
    const ServingReport big = run(0.9, "0 GB"), small = run(0.3, "0 GB"), tier = run(0.3, "58330185728 B");
    CHECK(big.prefix_hit_rate == Approx(0.599).margin(0.005));
    CHECK(small.prefix_hit_rate < 0.01);
    CHECK(tier.prefix_hit_rate + tier.offload_hit_rate == Approx(big.prefix_hit_rate).margin(0.01));
    CHECK(small.offload_hit_rate == -1);  // no tier: not reported
}

TEST_CASE("KV offloading without prefix caching is refused by key", "[serving][bad-input]") {
    CHECK_THROWS_WITH(
        testing::serving_scenario("kind: serving\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, "
                                  "nodes: 1, gpus_per_node: 1}\nserving: {tp: 1, kv_offload: 10 GB}\n"
                                  "traffic: {arrival: concurrency, concurrency: 1, num_requests: 2, "
                                  "prompt: 64, output: 8}\n"),
        Catch::Contains("serving.kv_offload") && Catch::Contains("prefix_caching"));
    CHECK_THROWS_WITH(
        testing::serving_scenario("kind: serving\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, "
                                  "nodes: 1, gpus_per_node: 1}\nserving: {tp: 1, prefix_caching: true, "
                                  "kv_offload: 10}\ntraffic: {arrival: concurrency, concurrency: 1, "
                                  "num_requests: 2, prompt: 64, output: 8}\n"),
        Catch::Contains("serving.kv_offload"));
    // A tier smaller than one block (Llama 3 8B at TP 1: 16 tokens x 32 layers x K and V x 8 heads x
    // 128 x 2 bytes = 2,097,152 bytes) holds nothing.
    CHECK_THROWS_WITH(
        testing::serving_scenario("kind: serving\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, "
                                  "nodes: 1, gpus_per_node: 1}\nserving: {engine: vllm, tp: 1, prefix_caching: "
                                  "true, kv_offload: 2097151 B}\ntraffic: {arrival: concurrency, concurrency: 1, "
                                  "num_requests: 2, prompt: 64, output: 8}\n"),
        Catch::Contains("serving.kv_offload") && Catch::Contains("less than one KV block (2097152 bytes"));
    CHECK_NOTHROW(
        testing::serving_scenario("kind: serving\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, "
                                  "nodes: 1, gpus_per_node: 1}\nserving: {engine: vllm, tp: 1, "
                                  "prefix_caching: true, kv_offload: 2097152 B}\ntraffic: {arrival: "
                                  "concurrency, concurrency: 1, num_requests: 2, prompt: 64, output: 8}\n"));
}

TEST_CASE("a prompt found on the NVMe tier loads at the drives' read bandwidth", "[serving]") {
    // The trace of the host-memory case, with host memory of 50 blocks (104,857,600 bytes) and an
    // NVMe tier of 4 GB on one KIOXIA CM7-R per GPU (14 GB/s read): host memory drops request 0's
    // blocks as later ones arrive, the NVMe tier keeps them, and the last request loads its 200
    // blocks from there: 419,430,400 bytes at 14 GB/s (slower than the host link), 30.0 ms more
    // than finding them on a large GPU cache.
    const std::string trace = testing::write_file(
        "offload_ssd.csv",
        "arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens\n0,3300,2,1,3200\n5,3300,2,2,3200\n"
        "10,3300,2,3,3200\n15,3300,2,4,3200\n20,3300,2,5,3200\n25,3300,2,6,3200\n30,3300,2,7,3200\n"
        "60,3300,2,1,3200\n");
    auto run = [&](double utilization, const std::string& offload) {
        return serve(
            testing::serving_scenario(
                "kind: serving\nseed: 1\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, "
                "gpus_per_node: 1, ssd: nvme-gen5-14gbs}\nserving: {engine: vllm, tp: 1, prefix_caching: "
                "true, gpu_memory_utilization: " +
                std::to_string(utilization) + offload + "}\ntraffic: {arrival: trace, trace: " + trace + "}\n"),
            true);
    };
    const ServingReport ssd = run(0.24, ", kv_offload: 104857600 B, kv_offload_ssd: 4 GB"), big = run(0.9, "");
    CHECK(ssd.offload_hit_tokens == 3200);
    CHECK(ssd.offload_ssd_hit_rate == Approx(3200.0 / (8 * 3300)));
    CHECK(ssd.records[7].ttft_s - big.records[7].ttft_s == Approx(200.0 * 2097152 / 14e9).epsilon(0.02));
    // Without drives, or without the host tier above it, the NVMe tier is refused by key.
    CHECK_THROWS_WITH(
        testing::serving_scenario("kind: serving\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, "
                                  "nodes: 1, gpus_per_node: 1}\nserving: {tp: 1, prefix_caching: true, "
                                  "kv_offload: 1 GB, kv_offload_ssd: 1 TB}\ntraffic: {arrival: "
                                  "concurrency, concurrency: 1, num_requests: 2, prompt: 64, output: 8}\n"),
        Catch::Contains("serving.kv_offload_ssd") && Catch::Contains("cluster.ssd"));
}

TEST_CASE("a tier that loads whole chunks and keeps no answers (LMCache's defaults)", "[serving]") {
    // As above: a 3,200-token prefix (200 blocks of 16) evicted from the small GPU cache and kept
    // in host memory. In chunks of 256 tokens (LMCache's chunk_size) 12 whole chunks load (3,072
    // tokens, 192 blocks) and the other 128 prefix tokens are computed.
    const std::string trace = testing::write_file(
        "offload_chunks.csv",
        "arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens\n0,3300,2,1,3200\n5,3300,2,2,3200\n"
        "10,3300,2,3,3200\n15,3300,2,4,3200\n20,3300,2,5,3200\n25,3300,2,6,3200\n30,3300,2,7,3200\n"
        "60,3300,2,1,3200\n");
    const auto chunked = testing::serve(scenario(trace, 0.24, "4 GB, kv_offload_chunk: 256"), true);
    CHECK(chunked.offload_hit_tokens == 3072);
    // A conversation's second turn carries the first turn's prompt (3,300 tokens) and answer (100)
    // as history. A tier that keeps answers loads the 212 full blocks of that history (3,392
    // tokens); without answers (save_decode_cache false) only the prompt's 206 full blocks (3,296).
    const std::string turns = testing::write_file(
        "offload_turns.csv",
        "arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens,session,session_tokens\n"
        "0,3300,100,,,1,\n5,3300,2,2,3200,,\n10,3300,2,3,3200,,\n15,3300,2,4,3200,,\n20,3300,2,5,3200,,\n"
        "25,3300,2,6,3200,,\n30,3300,2,7,3200,,\n60,3500,2,,,1,3400\n");
    CHECK(testing::serve(scenario(turns, 0.24, "4 GB"), true).offload_hit_tokens == 3392);
    CHECK(testing::serve(scenario(turns, 0.24, "4 GB, kv_offload_store_decode: false"), true).offload_hit_tokens ==
          3296);
    // A chunk that is not a whole number of blocks is refused by key.
    CHECK_THROWS_WITH(scenario(trace, 0.24, "4 GB, kv_offload_chunk: 100"),
                      Catch::Contains("serving.kv_offload_chunk") && Catch::Contains("multiple of block_size"));
}

TEST_CASE("blocking stores copy each iteration's new blocks to host memory before the next", "[serving]") {
    // One 3,300-token prompt prefilled in one iteration (vLLM's budget, 8,192 tokens). With
    // LMCache's stores (kv_offload_store: blocking) its KV is copied to host memory, 3,300 tokens x
    // 131,072 bytes (2,097,152 a block of 16) over the H100's achievable host-link bandwidth, before
    // the decode that follows: the time between the first and the second token grows by that copy.
    const std::string trace =
        testing::write_file("offload_store.csv", "arrival_s,prompt_tokens,output_tokens\n0,3300,2\n");
    auto run = [&](const std::string& store) {
        const auto s = scenario(trace, 0.9, "4 GB, kv_offload_copy: kernel, kv_offload_store: " + store);
        return std::make_pair(testing::serve(s, true), s.cluster.pcie.achievable_bandwidth());
    };
    const auto [async, pcie] = run("async");
    const auto blocking = run("blocking").first;
    REQUIRE(blocking.records.size() == 1);
    CHECK(blocking.records[0].ttft_s == Approx(async.records[0].ttft_s));
    CHECK(blocking.records[0].e2e_s - async.records[0].e2e_s == Approx(3300.0 * 131072 / pcie).epsilon(0.02));
}
