// Multi-step scheduling (serving.num_scheduler_steps, workloads/serving/batching/multi_step.cpp):
// the engine's CPU time per iteration is paid once per round of decode steps, and a decode round
// runs to its end before the policy is asked again.
#include "tests/support/fixtures.h"
#include "tests/support/serving_fixture.h"
#include "workloads/serving/iteration_cost.h"

#include <catch2/catch.hpp>

using namespace fathom;
using namespace fathom::workloads::serving;

using testing::serve;

namespace {}  // namespace

TEST_CASE("multi-step scheduling pays the engine's CPU time once per round of decode steps", "[serving]") {
    // 20 us per running sequence (vLLM V0's synchronous CPU work): a decode step of 256 sequences
    // costs 5.12 ms of it; with 8 steps a round each step carries an eighth, 4.48 ms less. A
    // prefill iteration is its own round and pays it whole.
    const auto& cat = testing::source_catalog();
    const auto& model = cat.model("llama3-8b");
    const hardware::ClusterSpec cluster = testing::h100_cluster(1);
    PoolLayout pool;
    pool.accelerator = cluster.accelerator;
    const auto cost = models::make_roofline_cost(cluster.accelerator, models::Load::Sustained);
    const auto net = hardware::make_analytical_network(cluster);
    EngineSettings one, eight;
    one.per_sequence_overhead_s = eight.per_sequence_overhead_s = 20e-6;
    eight.scheduler_steps = 8;
    IterationCoster a(model, pool, models::KernelStack{}, one, *cost, *net);
    IterationCoster b(model, pool, models::KernelStack{}, eight, *cost, *net);
    IterationShape decode;
    decode.decodes = decode.samples = decode.sequences = 256;
    decode.decode_kv = 256 * 1000;
    CHECK(a.exact(decode).stage_s[0] - b.exact(decode).stage_s[0] == Approx(0.875 * 20e-6 * 256).epsilon(1e-9));
    IterationShape prefill;
    prefill.prefills.push_back({512, 0});
    prefill.samples = prefill.sequences = 1;
    CHECK(a.exact(prefill).stage_s[0] == Approx(b.exact(prefill).stage_s[0]).epsilon(1e-12));
}

TEST_CASE("multi-step scheduling: a decode batch's time per token falls by the CPU time it no longer pays",
          "[serving]") {
    // 64 requests of 512 + 256 tokens at once under vLLM V0's prefill-first policy: 4 prefill
    // iterations, then 255 decode steps of all 64. At 20 us a sequence the CPU time is 1.28 ms a
    // step; 8 steps a round save 7/8 of it: the mean TPOT falls by ~1.12 ms (within 15%: the last
    // round of a request may be cut short).
    const std::string base =
        "kind: serving\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 1}\n"
        "serving:\n  tp: 1\n  policy: vllm\n  per_sequence_overhead: 20 us\n  iteration_overhead: 0 s\n";
    const std::string traffic = "traffic: {arrival: offline, num_requests: 64, prompt: 512, output: 256}\n";
    const ServingReport one = serve(testing::serving_scenario(base + traffic));
    const ServingReport eight = serve(testing::serving_scenario(base + "  num_scheduler_steps: 8\n" + traffic));
    REQUIRE(one.requests == 64);
    REQUIRE(eight.requests == 64);
    CHECK(one.tpot_s.mean - eight.tpot_s.mean == Approx(0.875 * 20e-6 * 64).epsilon(0.15));
    CHECK(eight.output_tokens_per_s > one.output_tokens_per_s);
}
