// Multi-turn benchmarks (issue 39): conversations held by closed-loop clients, a drawn number of
// turns, a first turn of its own, a fixed number of conversations, vLLM's device-dependent
// defaults, and GPUStack's published vLLM + LMCache multi-turn runs on an RTX 4090.
#include "scenarios/measured.h"
#include "tests/support/fixtures.h"
#include "tests/support/serving_fixture.h"
#include "workloads/serving/traffic/traffic.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>

using namespace fathom;
using namespace fathom::workloads::serving;

namespace {

SyntheticTraffic conversations(int64_t turns, int64_t turns_max, int64_t count) {
    SyntheticTraffic t;
    t.arrival.kind = ArrivalKind::Offline;
    t.prompt.value = 100;
    t.output.value = 10;
    t.num_requests = 1000000;
    t.sessions.turns = turns;
    t.sessions.turns_max = turns_max;
    t.sessions.conversations = count;
    return t;
}

}  // namespace

TEST_CASE("a closed-loop client keeps its own conversation", "[serving]") {
    // Clients 0 and 1 ask in the order 0, 0, 1, 0, 1, 1: each gets the next turn of its own
    // conversation (keys 1 and 2), whatever the other did. Turn t's history is the previous
    // turn's prompt + output: 0, 110, 220 tokens.
    auto src = make_synthetic_source(conversations(3, 0, 0), 1);
    std::map<int64_t, std::vector<Request>> by_client;
    for (int64_t client : {0, 0, 1, 0, 1, 1}) by_client[client].push_back(*src->next_for(client));
    for (const auto& [client, reqs] : by_client) {
        REQUIRE(reqs.size() == 3);
        for (size_t i = 0; i < 3; ++i) {
            CHECK(reqs[i].session == static_cast<uint64_t>(client + 1));
            CHECK(reqs[i].session_tokens == static_cast<int64_t>(110 * i));
            CHECK(reqs[i].prompt_tokens == static_cast<int64_t>(110 * i + 100));
        }
    }
    // Client 0's next request opens conversation 3.
    CHECK(src->next_for(0)->session == 3);
}

TEST_CASE("turns drawn uniformly per conversation, the traffic ending at the last conversation", "[serving]") {
    // turns 2..5: each count a quarter of 40,000 conversations (standard error 0.2 points).
    auto src = make_synthetic_source(conversations(2, 5, 40000), 7);
    std::map<uint64_t, int64_t> turns;
    while (auto r = src->next_for(0)) ++turns[r->session];
    CHECK(turns.size() == 40000);
    std::map<int64_t, int64_t> counts;
    for (const auto& kv : turns) ++counts[kv.second];
    REQUIRE(counts.size() == 4);
    for (const auto& [n, k] : counts) {
        INFO(n << " turns: " << k);
        CHECK(std::fabs(k / 40000.0 - 0.25) < 0.01);
    }
}

TEST_CASE("first turns of their own, scaled to their mean as vLLM's generator does", "[serving]") {
    // 24 conversations whose first turns are lognormal of mean 4,000 (sd 2,479, vLLM's median ratio
    // 0.85): scaled, the 24 draws average 4,000 within rounding (0.5 a draw); later turns draw
    // `prompt` (100) on the history.
    SyntheticTraffic t = conversations(2, 0, 24);
    t.sessions.first_prompt.kind = workloads::LengthKind::Lognormal;
    t.sessions.first_prompt.mean = 4000;
    t.sessions.first_prompt.stddev = 2479;
    t.sessions.first_prompt.max = 20000;
    t.sessions.first_prompt_scaled = true;
    REQUIRE(t.check().empty());
    auto src = make_synthetic_source(t, 3);
    double sum = 0;
    int64_t n = 0;
    while (auto r = src->next_for(0)) {
        if (r->session_tokens == 0) {
            sum += static_cast<double>(r->prompt_tokens);
            ++n;
        } else {
            CHECK(r->prompt_tokens == r->session_tokens + 100);
        }
    }
    CHECK(n == 24);
    CHECK(std::fabs(sum / 24 - 4000) <= 0.5);
    t.sessions.conversations = 0;
    CHECK(t.check() == "sessions.first_prompt_scaled needs sessions.conversations");
}

TEST_CASE("vLLM's defaults follow the GPU: a smaller budget under 70 GiB or on an A100", "[serving]") {
    // vllm/engine/arg_utils.py: >= 70 GiB and not an A100: 8192 tokens, 1024 sequences (vllm serve);
    // else 2048 and 256. A scenario's own value stays.
    auto plan = [](const std::string& acc, const std::string& extra) {
        const auto s =
            testing::serving_scenario("kind: serving\nseed: 1\nmodel: qwen3-8b\ncluster: {accelerator: " + acc +
                                      ", nodes: 1, gpus_per_node: 1}\nserving: {engine: vllm, tp: 1" + extra +
                                      "}\ntraffic: {arrival: offline, num_requests: 4, prompt: 100, output: 10}\n");
        return std::get<ServingPlan>(s.plan).batching;
    };
    CHECK(plan("h100-sxm-80gb", "").max_num_batched_tokens == 8192);
    CHECK(plan("h100-sxm-80gb", "").max_num_seqs == 1024);
    CHECK(plan("rtx-4090", "").max_num_batched_tokens == 2048);
    CHECK(plan("rtx-4090", "").max_num_seqs == 256);
    CHECK(plan("a100-sxm-80gb", "").max_num_batched_tokens == 2048);
    CHECK(plan("rtx-4090", ", max_num_batched_tokens: 4096").max_num_batched_tokens == 4096);
    CHECK(plan("rtx-4090", ", max_num_batched_tokens: 4096").max_num_seqs == 256);
}

TEST_CASE("published vLLM + LMCache runs on an RTX 4090 (GPUStack)", "[serving][compare]") {
    // scenarios/measured-kv-offload.yaml. The three random-dataset rows without LMCache (100 prompts
    // of 1K, 8K, 20K tokens at once) fitted the RTX 4090's sustained_clock (0.93): their
    // throughputs within 7% (-0.2%, -6.1%, +6.8%). Held out, pinned as they stand so that a change
    // that moves them is seen:
    //  - multi-turn, vLLM alone: prompt tokens a second +1.6% (5,941 against 5,849), but mean TTFT
    //    38% low (2,693 ms against 4,350) and TPOT 30% high (63.0 against 48.5): fathom runs about
    //    7 requests at once where the published TTFT and TPOT (Little's law over 10 clients) say 5.
    //  - multi-turn with LMCache (50 GB of host memory; whole 256-token chunks, loaded before the
    //    iteration; answers not stored; each iteration's new KV copied to host memory before the
    //    next): prompt tokens a second 17% high (11,040 against 9,426), TTFT 49% low, TPOT 13%
    //    high. LMCache's gain is thus too large: +86% against +61%.
    //  - random prompts with LMCache: 0-10% high (+0.2%, +6.8%, +10.2%): fathom charges the copies
    //    of LMCache's stores (2-3% of the run), not its own gather and bookkeeping.
    //  - TPOT is 23-67% high in every row: fathom's decodes share more iterations with prefill
    //    chunks than vLLM's did.
    const auto results = scenarios::compare_measured(
        std::string(FATHOM_SOURCE_DIR) + "/scenarios/measured-kv-offload.yaml", testing::source_context(), true);
    REQUIRE(results.size() == 24);
    std::map<std::string, double> error;
    for (const auto& r : results) {
        INFO(r.id << " " << r.reason);
        REQUIRE(r.ok());
        const std::string id = r.id.substr(0, r.id.find('#'));
        error[id.substr(std::string("srv-vllm01011-").size()) + " " + r.metric] = r.error;
    }
    auto within = [&](const std::string& key, double lo, double hi) {
        INFO(key << ": " << error.at(key));
        CHECK((error.at(key) > lo && error.at(key) < hi));
    };
    for (const char* size : {"1k", "8k", "20k"}) {
        const std::string random = std::string("qwen3-8b-rtx4090-random-") + size;
        within(random + " total_tokens_per_s", -0.07, 0.07);
        within("lmcache-" + random + " total_tokens_per_s", -0.03, 0.13);
        within(random + " tpot_ms", 0.15, 0.75);
    }
    within("qwen3-8b-rtx4090-multiturn-5k-ttft ttft_ms", -0.48, -0.28);
    within("qwen3-8b-rtx4090-multiturn-5k-ttft tpot_ms", 0.20, 0.40);
    within("qwen3-8b-rtx4090-multiturn-5k-ttft input_tokens_per_s", -0.05, 0.08);
    within("lmcache-qwen3-8b-rtx4090-multiturn-5k-ttft ttft_ms", -0.60, -0.40);
    within("lmcache-qwen3-8b-rtx4090-multiturn-5k-ttft tpot_ms", 0.05, 0.20);
    within("lmcache-qwen3-8b-rtx4090-multiturn-5k-ttft input_tokens_per_s", 0.10, 0.28);
}
