// Multi-LoRA serving (workloads/serving/lora.h): an adapter's size and the batched kernels' FLOPs in
// closed form, one adapter = the base model plus its kernels, the Zipf popularity's draws, the GPU
// slots' LRU loads, the adapter-aware admission (vLLM's skip, SGLang's FIFO), the slots' memory,
// and bad settings refused by key.
#include "workloads/serving/lora.h"

#include "models/llm/dense_layer.h"
#include "models/llm/lora.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"
#include "tests/support/serving_fixture.h"
#include "tests/support/traffic_fixture.h"
#include "workloads/serving/iteration_cost.h"
#include "workloads/serving/replica_state.h"
#include "workloads/serving/serving_memory.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace fathom;
using namespace fathom::workloads::serving;

using testing::serve;

namespace {

// One H100 serving Llama 3 8B (vLLM's preset) with the serving.lora block's lines `lora`, to
// `rate` requests/s of 512-token prompts and 128-token outputs.
plans::Scenario scenario(const std::string& lora, double rate = 8, int requests = 300) {
    std::string yaml =
        "kind: serving\nseed: 3\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 1}\n"
        "serving:\n  engine: vllm\n  tp: 1\n";
    if (!lora.empty()) yaml += "  lora:\n" + lora;
    yaml += "traffic: {arrival: poisson, rate: " + std::to_string(rate) +
            ", num_requests: " + std::to_string(requests) + ", prompt: 512, output: 128}\n";
    return testing::serving_scenario(yaml);
}

LoraSettings all_linear(int64_t rank) {
    LoraSettings l;
    l.adapters = 10;
    l.rank = rank;
    return l;
}

// One replica of `model` on one `accelerator` priced on its roofline, with rank-16 adapters on
// every linear projection: a decode step's seconds.
struct RooflineReplica {
    hardware::ClusterSpec cluster = testing::h100_cluster(1);
    PoolLayout pool;
    std::unique_ptr<models::CostModel> cost;
    std::unique_ptr<hardware::NetworkModel> net;
    std::unique_ptr<IterationCoster> coster;

    RooflineReplica(const models::ModelSpec& model, const std::string& accelerator) {
        cluster.accelerator = testing::source_catalog().accelerator(accelerator);
        pool.accelerator = cluster.accelerator;
        cost = models::make_roofline_cost(cluster.accelerator, models::Load::Sustained);
        net = hardware::make_analytical_network(cluster);
        coster = std::make_unique<IterationCoster>(model, pool, models::KernelStack{}, EngineSettings{}, *cost, *net);
        coster->set_lora(all_linear(16));
    }
    // `decodes` decodes over `kv` keys each, their tokens of `adapters` distinct adapters (0: none).
    IterationShape shape(int64_t decodes, int64_t kv, int64_t adapters) const {
        IterationShape s;
        s.decodes = s.samples = s.sequences = decodes;
        s.decode_kv = decodes * kv;
        s.adapters = adapters;
        return s;
    }
    double step(int64_t decodes, int64_t kv, int64_t adapters) {
        return coster->exact(shape(decodes, kv, adapters)).total();
    }
};

}  // namespace

TEST_CASE("a Llama 3 8B adapter's size and its batched kernels' FLOPs in closed form", "[serving]") {
    // Llama 3 8B (hidden 4096, 8 KV heads of 128: k and v 1024 wide, gated MLP of 14,336), rank 16
    // on q, k, v, o, gate, up and down. Per layer r x (A's inputs + B's outputs):
    //   q, k, v: 3 x 4096 + (4096 + 1024 + 1024)   = 18,432
    //   o:       4096 + 4096                        =  8,192
    //   gate, up: 2 x 4096 + 2 x 14,336             = 36,864
    //   down:    14,336 + 4096                      = 18,432
    // 81,920 x 16 = 1,310,720 parameters a layer; x 32 layers x 2 bytes = 83,886,080 bytes (80 MiB).
    const auto& model = testing::source_catalog().model("llama3-8b");
    CHECK(lora_adapter_bytes(model, 1, 1, all_linear(16), 16) == 83886080.0);
    // TP 2: the column-parallel B (q, k, v, gate, up) and the row-parallel A (o, down) split; each
    // rank holds 16 x (12,288 + 3072 + 2048 + 4096 + 8192 + 14,336 + 7168 + 4096) = 16 x 55,296.
    CHECK(lora_adapter_bytes(model, 2, 1, all_linear(16), 16) == 32.0 * 16 * 55296 * 2);
    // Attention only: 16 x (18,432 + 8192) a layer.
    LoraSettings attention = all_linear(16);
    attention.modules = LoraModules::Attention;
    CHECK(lora_adapter_bytes(model, 1, 1, attention, 16) == 32.0 * 16 * 26624 * 2);
    // The kernels of a 64-token batch over 4 adapters: 2 x 64 x 1,310,720 FLOPs (each token through
    // its adapter's A and B), and each adapter's weights read once: 4 x 1,310,720 x 2 bytes among
    // the bytes moved.
    models::LayerInputs in;
    in.batch = models::TokenBatch::uniform(64, 1, 600);
    const models::LayerProgram ops =
        models::lora_serving_program(models::dense_layer_forward(model, in), 16, 4, false, true);
    double flops = 0, bytes = 0;
    for (const auto& op : ops.ops()) flops += op.flops, bytes += op.bytes;
    CHECK(ops.ops().size() == 8);  // shrink and expand of qkv, o, fc1 (gate and up), fc2
    CHECK(flops == 2.0 * 64 * 1310720);
    CHECK(bytes > 4 * 1310720 * 2.0);
}

TEST_CASE("one adapter costs the base model plus its kernels", "[serving]") {
    // The iteration of a batch with one adapter = the base iteration + 32 layers x the adapter's
    // eight GEMMs (roofline: a 16-sequence decode reads each adapter matrix once, 2.6 MB a layer, so
    // the extra time is at least 32 x 2,621,440 bytes over the H100's achievable bandwidth).
    const auto& model = testing::source_catalog().model("llama3-8b");
    RooflineReplica r(model, "h100-sxm-80gb");
    const double base = r.step(16, 700, 0), one = r.step(16, 700, 1);
    models::LayerInputs in;
    in.batch = models::TokenBatch::uniform(16, 1, 700);
    double kernels = 0;
    for (const auto& op :
         models::lora_serving_program(models::dense_layer_forward(model, in), 16, 1, false, true).ops())
        kernels += r.cost->seconds(op);
    CHECK(one - base == Approx(32 * kernels).epsilon(1e-9));
    CHECK(one - base >= 32 * 2621440.0 / r.cluster.accelerator.memory_bandwidth);
    // More adapters in the batch read more weights: 8 adapters cost more than one.
    const double eight = r.step(16, 700, 8);
    CHECK(eight > one);
    // seconds() prices the kernels apart from the base shape (by tokens and adapters): the same.
    CHECK(r.coster->seconds(r.shape(16, 700, 8)).total() == Approx(eight).epsilon(1e-12));
    CHECK(r.coster->seconds(r.shape(16, 700, 0)).total() == Approx(base).epsilon(1e-12));
}

TEST_CASE("adapters drawn from a Zipf popularity", "[serving]") {
    // 200,000 draws over 50 adapters at exponent 1: adapter i with probability (1 / i) / H_50
    // (H_50 = 4.4992), so adapter 1 takes 22.2%, adapter 2 11.1%, adapter 50 0.44%; within 0.3
    // percentage points each. Exponent 0: uniform, 2% each.
    const AdapterPopularity zipf(50, 1.0);
    double h = 0;
    for (int i = 1; i <= 50; ++i) h += 1.0 / i;
    CHECK(zipf.probability(1) == Approx(1.0 / h));
    std::vector<int> count(51, 0);
    for (int64_t r = 0; r < 200000; ++r) {
        const int32_t a = zipf.draw(7, r);
        REQUIRE(a >= 1);
        REQUIRE(a <= 50);
        ++count[static_cast<size_t>(a)];
    }
    for (int i : {1, 2, 3, 10, 50}) CHECK(std::abs(count[static_cast<size_t>(i)] / 200000.0 - 1.0 / (i * h)) < 0.003);
    const AdapterPopularity uniform(50, 0.0);
    int first = 0;
    for (int64_t r = 0; r < 200000; ++r) first += uniform.draw(7, r) == 1 ? 1 : 0;
    CHECK(std::abs(first / 200000.0 - 0.02) < 0.002);
    // The seed reaches the draws.
    int differ = 0;
    for (int64_t r = 0; r < 100; ++r) differ += zipf.draw(7, r) != zipf.draw(8, r) ? 1 : 0;
    CHECK(differ > 30);
}

TEST_CASE("GPU slots: a miss loads the adapter into the least recently used free slot", "[serving]") {
    LoraPool pool(2, 1e6);
    pool.acquire(1);
    pool.acquire(2);
    CHECK(pool.loads() == 2);
    CHECK(pool.take_load_bytes() == 2e6);
    CHECK(pool.take_load_bytes() == 0);
    CHECK(pool.admissible(1));  // already running
    CHECK(pool.admissible(0));  // the base model needs no slot
    CHECK_FALSE(pool.admissible(3));
    pool.release(1);
    CHECK(pool.admissible(3));
    pool.acquire(3);  // evicts adapter 1, the only slot no sequence uses
    CHECK(pool.loads() == 3);
    pool.acquire(2);  // resident: no load
    CHECK(pool.loads() == 3);
    pool.release(2);
    pool.release(2);  // adapter 2 released before adapter 3
    pool.release(3);
    pool.acquire(1);  // evicts adapter 2, the least recently released
    CHECK(pool.loads() == 4);
    pool.acquire(3);
    CHECK(pool.loads() == 4);
    CHECK(pool.active_adapters() == 2);
}

TEST_CASE("admission keeps the running adapters within the GPU slots: vLLM skips, SGLang waits", "[serving]") {
    // One slot, three waiting requests of adapters 1, 2, 1. vLLM V1 admits the first and the third
    // past the second; SGLang's FIFO admission stops at the second.
    auto admitted = [](LoraAdmission admission) {
        BatchingSettings b;
        ReplicaState r(0, b, KvSettings{}, 1000, 1e6);
        r.set_lora(LoraPool(1, 1e6), admission);
        std::vector<Sequence> seqs(3);
        const int32_t adapters[] = {1, 2, 1};
        for (size_t i = 0; i < seqs.size(); ++i) {
            seqs[i].req.id = static_cast<int64_t>(i);
            seqs[i].req.adapter = adapters[i];
            seqs[i].req.prompt_tokens = 100;
            seqs[i].req.output_tokens = 10;
            seqs[i].prefill_target = 100;
            r.waiting.push_back(&seqs[i]);
        }
        Batch batch;
        make_sarathi_policy(b)->form(r, batch);
        std::vector<int64_t> ids;
        for (const auto& [s, c] : batch.prefill) ids.push_back(s->req.id);
        CHECK(r.lora()->loads() == 1);
        return ids;
    };
    CHECK(admitted(LoraAdmission::Skip) == std::vector<int64_t>{0, 2});
    CHECK(admitted(LoraAdmission::Fifo) == std::vector<int64_t>{0});
}

TEST_CASE("the GPU slots take their memory from the KV cache", "[serving]") {
    // vLLM allocates max_loras slots of max_rank at start-up: 8 slots of rank 64 on Llama 3 8B are
    // 8 x 4 x 83,886,080 bytes = 2.68 GB fewer for the KV cache (the adapters' rank 16 does not
    // matter, the slot's does).
    const auto& cat = testing::source_catalog();
    PoolLayout pool;
    pool.accelerator = cat.accelerator("h100-sxm-80gb");
    const ReplicaMemory plain = replica_memory(cat.model("llama3-8b"), pool, {}, {}, {}, {});
    LoraSettings lora = all_linear(16);
    lora.max_rank = 64;
    lora.max_loras = 8;
    const ReplicaMemory with = replica_memory(cat.model("llama3-8b"), pool, {}, {}, {}, {}, {}, lora);
    CHECK(with.weight_bytes - plain.weight_bytes == Approx(8 * 4 * 83886080.0));
    CHECK(with.kv_blocks < plain.kv_blocks);
}

TEST_CASE("serving many adapters: fewer slots than adapters in use throttle admission", "[serving]") {
    // 100 adapters (Zipf 1) at 8 requests/s. With one slot (vLLM's default max_loras) only one
    // adapter's requests run at a time: requests queue behind the others' and TTFT grows by orders
    // of magnitude; with a slot per adapter the GPU batches them all and the cost is the kernels
    // alone (a few ms more a step than the base model, far from the base model's 1.5x).
    const ServingReport base = serve(scenario(""));
    const ServingReport one = serve(scenario("    adapters: 100\n    rank: 16\n    max_loras: 1\n"));
    const ServingReport all = serve(scenario("    adapters: 100\n    rank: 16\n    max_loras: 100\n"));
    CHECK(one.ttft_s.p50 > 10 * all.ttft_s.p50);
    CHECK(all.tpot_s.mean > base.tpot_s.mean);
    CHECK(all.tpot_s.mean < 1.5 * base.tpot_s.mean);
    // With a slot each, an adapter is loaded once, when its first request arrives: as many loads as
    // distinct adapters among 300 draws, sum over i of 1 - (1 - p_i)^300 = 71.1 in expectation.
    CHECK(all.lora_loads >= 61);
    CHECK(all.lora_loads <= 81);
    CHECK(one.lora_loads > all.lora_loads);  // one slot: reloaded at every switch
    CHECK(base.lora_loads == -1);
}

TEST_CASE("multi-LoRA settings that cannot work are refused by key", "[serving][bad-input]") {
    auto refusal = [](const std::string& lora) {
        try {
            scenario(lora);
        } catch (const sim::InputError& e) {
            return std::string(e.what());
        }
        FAIL("accepted");
        return std::string();
    };
    CHECK_THAT(refusal("    adapters: 10\n"), Catch::Contains("test.yaml:6: key 'serving.lora.rank'"));
    CHECK_THAT(refusal("    adapters: 10\n    rank: 8192\n"),
               Catch::Contains("key 'serving.lora.rank'") && Catch::Contains("hidden size 4096"));
    CHECK_THAT(refusal("    adapters: 10\n    rank: 32\n    max_rank: 16\n"),
               Catch::Contains("key 'serving.lora.rank'") && Catch::Contains("max_rank 16"));
    CHECK_THROWS_WITH(scenario("    adapters: 10\n    rank: 8\n    popularity: -1\n"),
                      Catch::Contains("serving.lora.popularity") && Catch::Contains("test.yaml:"));
    CHECK_THROWS_WITH(scenario("    adapters: 10\n    rank: 8\n    admission: lifo\n"),
                      Catch::Contains("serving.lora.admission"));
    // Keys without adapters: a warning each.
    const plans::Scenario off = scenario("    adapters: 0\n    rank: 8\n");
    REQUIRE(off.warnings.size() == 1);
    CHECK(off.warnings[0].key == "serving.lora.rank");
}

TEST_CASE("S-LoRA's headline: batching across adapters, and throughput flat in the number of adapters", "[serving]") {
    // S-LoRA (Sheng et al., MLSys 2024), Table 3: Llama-7B with rank-8 adapters (setting S1) on one
    // A100 80GB, adapter popularity a power law of exponent 1, Poisson arrivals, prompts and outputs
    // uniform in [8, 512] (benchmarks/exp_suite.py "a100-80-table": R = 10 requests/s, 120 s).
    //   S-LoRA       8.05 / 7.99 / 7.64 / 7.61 requests/s at 5 / 100 / 1000 / 2000 adapters
    //   PEFT         0.88 / 0.25 at 5 / 100 ("batches single adapter requests and switches adapter
    //                weights between batches")
    //   vLLM-packed  2.04 at 5 (5 processes of merged weights under MPS; out of memory beyond): the
    //                "4 times". fathom does not share one GPU between processes, so that column is
    //                not reproduced here.
    // Mechanisms, in fathom's terms (estimates of S-LoRA's engine: vLLM V0's preset, its adapters on
    // q, k, v and o, a slot for each adapter the batch can hold):
    //  - S-LoRA batches every adapter's requests together: with slots enough (128) the throughput
    //    at saturation barely moves from 5 to 2000 adapters, the kernels reading a few more adapters
    //    a step (published: -5.5%; fathom at 40 requests/s: 12.4 to 12.2, -2.0%).
    //  - PEFT's server runs one adapter a batch to its end (static batching, one slot, admission
    //    stopping at the first request of another adapter). With 100 adapters few neighbours in the
    //    queue share one, so a batch holds 1.1 requests and throughput is the inverse of one
    //    request's latency: published 7.99 / 0.25 = 32x, fathom 8.47 / 0.40 = 21x. At 5 adapters
    //    PEFT's published 9x is half fathom's 19x: its server groups waiting requests by adapter
    //    beyond the queue's consecutive ones, which fathom's FIFO admission does not.
    auto yaml = [](const std::string& serving, double rate, int requests) {
        return "kind: serving\nseed: 1\nmodel: llama2-7b\n"
               "cluster: {accelerator: a100-sxm-80gb, nodes: 1, gpus_per_node: 1}\n"
               "serving:\n  engine: vllm-v0\n  tp: 1\n" +
               serving + "traffic: {arrival: poisson, rate: " + std::to_string(rate) +
               ", num_requests: " + std::to_string(requests) +
               ", prompt: {distribution: uniform, min: 8, max: 512}, output: {distribution: uniform, min: 8, "
               "max: 512}}\n";
    };
    auto slora = [&](int adapters, double rate, int requests) {
        return serve(
                   testing::serving_scenario(yaml("  lora: {adapters: " + std::to_string(adapters) +
                                                      ", rank: 8, max_loras: 128, modules: attention, popularity: 1}\n",
                                                  rate, requests)))
            .requests_per_s;
    };
    const double few = slora(5, 40, 1600), many = slora(2000, 40, 1600);
    CHECK(many < few);
    CHECK(many > 0.9 * few);
    const double peft =
        serve(testing::serving_scenario(yaml("  policy: static\n  lora: {adapters: 100, rank: 8, max_loras: 1, "
                                             "admission: fifo, modules: attention, popularity: 1}\n",
                                             10, 400)))
            .requests_per_s;
    const double batched = slora(100, 10, 400);
    CHECK(batched / peft > 15);
    CHECK(batched / peft < 40);
}

TEST_CASE("Punica's statement: batched LoRA kernels add about 2 ms a token", "[serving]") {
    // Punica (Chen et al., MLSys 2024): Llama-2 7B, rank 16 on all dense projections, one A100 80GB,
    // batches up to 32, "only adding 2ms latency per token", whether the batch's requests share one
    // adapter (Identical) or each has its own (Distinct: its SGMV latency grows 37 -> 116 us from
    // batch 1 to 64 against 37 -> 40 us for Identical). fathom's step of 32 decodes over 600 keys
    // each adds 32 layers x 8 kernels: 1.7 ms with one adapter and 2.6 ms with 32 on the A100
    // roofline, so between 1 and 3 ms either way, and more with more adapters.
    RooflineReplica r(testing::source_catalog().model("llama2-7b"), "a100-sxm-80gb");
    const double base = r.step(32, 600, 0);
    const double identical = r.step(32, 600, 1) - base, distinct = r.step(32, 600, 32) - base;
    CHECK(identical > 1e-3);
    CHECK(distinct < 3e-3);
    CHECK(distinct > identical);
}

TEST_CASE("a trace names each request's adapter: skip admission loads each once, FIFO at every switch", "[serving]") {
    // Four requests at t = 0 of adapters 1, 2, 1, 2 and one GPU slot. vLLM's skip admission runs the
    // two of adapter 1 together, then loads adapter 2 for the other two: 2 loads. FIFO admission
    // stops at the second request, so the adapters alternate: 1, 2, 1, 2, a load each, 4 loads.
    const std::string trace =
        testing::write_file("lora_trace.csv",
                            "arrival_s,prompt_tokens,output_tokens,adapter\n0,100,20,1\n0,100,20,2\n0,100,20,1\n"
                            "0,100,20,2\n");
    auto loads = [&](const std::string& admission) {
        return serve(testing::serving_scenario(
                         "kind: serving\nseed: 3\nmodel: llama3-8b\n"
                         "cluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 1}\n"
                         "serving:\n  engine: vllm\n  tp: 1\n  lora: {adapters: 2, rank: 8, max_loras: 1, admission: " +
                         admission + "}\ntraffic: {arrival: trace, trace: " + trace + "}\n"))
            .lora_loads;
    };
    CHECK(loads("skip") == 2);
    CHECK(loads("fifo") == 4);
    // The batch's distinct adapters are counted by stamps up to 65,536 adapters and by sorting
    // beyond: the same trace served with 100,000 adapters declared runs the same iterations.
    auto tpot = [&](int adapters) {
        return serve(testing::serving_scenario("kind: serving\nseed: 3\nmodel: llama3-8b\n"
                                               "cluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 1}\n"
                                               "serving:\n  engine: vllm\n  tp: 1\n  lora: {adapters: " +
                                               std::to_string(adapters) +
                                               ", rank: 8, max_loras: 2}\ntraffic: {arrival: trace, trace: " + trace +
                                               "}\n"))
            .tpot_s.mean;
    };
    CHECK(tpot(100000) == tpot(2));
    // JSONL traces carry it too; a trace without it leaves the draw to the popularity (-1).
    const auto rows = testing::all(*open_trace(
        testing::write_file("lora.jsonl",
                            "{\"arrival_s\": 0, \"prompt_tokens\": 10, \"output_tokens\": 2, \"adapter\": 3}\n"
                            "{\"arrival_s\": 1, \"prompt_tokens\": 10, \"output_tokens\": 2}\n")));
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].adapter == 3);
    CHECK(rows[1].adapter == -1);
}

TEST_CASE("prefix caching shares a prefix's blocks only between requests of one adapter", "[serving]") {
    // Four 100-token prompts, one second apart, starting with the same 64-token system prompt (4
    // blocks of 16), adapters 1, 2, 1, 2. Under an adapter every layer's keys and values differ,
    // so the third and fourth requests hit their adapter's blocks and the second misses: 2 x 64 of
    // 400 prompt tokens hit (0.32). With one adapter for all four the second hits too: 3 x 64 / 400.
    auto hits = [&](const std::string& name, int second, int fourth) {
        const std::string trace = testing::write_file(
            name,
            "arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens,adapter\n0,100,4,7,64,1\n1,100,4,7,64," +
                std::to_string(second) + "\n2,100,4,7,64,1\n3,100,4,7,64," + std::to_string(fourth) + "\n");
        return serve(testing::serving_scenario(
                         "kind: serving\nseed: 3\nmodel: llama3-8b\n"
                         "cluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 1}\n"
                         "serving:\n  engine: vllm\n  tp: 1\n  prefix_caching: true\n  lora: {adapters: 2, rank: 8, "
                         "max_loras: 2}\ntraffic: {arrival: trace, trace: " +
                         trace + "}\n"))
            .prefix_hit_rate;
    };
    CHECK(hits("lora_prefix.csv", 2, 2) == Approx(0.32));
    CHECK(hits("lora_prefix_one.csv", 1, 1) == Approx(0.48));
}
