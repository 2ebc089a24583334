// The measured-format's rl kind (scenarios/measured_rl.cpp, scenarios/measured-format-fathom.md):
// NeMo-RL's published GRPO step times compared and pinned, the capped-mean convention of its
// length blocks, and a bad value named by the case's file, line and field.
#include "scenarios/measured.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"
#include "tests/support/traffic_fixture.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

using namespace fathom;

namespace {

std::string measured_rl() {
    std::ifstream in(std::string(FATHOM_SOURCE_DIR) + "/scenarios/measured-rl.yaml");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

TEST_CASE("published NeMo-RL GRPO step times (measured-rl.yaml)", "[rl][compare]") {
    // Held out (nothing fitted on them), pinned as they stand so that a change that moves them is
    // seen. fathom is low on every row: the dense models by 23-36% (Llama 3.1 8B 62.1 s against
    // 97.7 on-policy, 54.5 against 74.6 one step off; Qwen3-32B 268 against 393 and 165 against
    // 215), the MoE Qwen3-30B-A3B by 62-65% (86 against 225 and 244). The source gives no phase
    // times, so where the rest goes is open: what fathom leaves out of an RL step (the frameworks'
    // own data movement between workers, refit beyond the bytes, vLLM's wake-up and its returned
    // log-probabilities) is charged nowhere, and NeMo-RL v0.4's MoE training ran well below the
    // dense models' throughput (925 tokens/s/GPU against 1,562 for the 8B).
    const auto results = scenarios::compare_measured(std::string(FATHOM_SOURCE_DIR) + "/scenarios/measured-rl.yaml",
                                                     testing::source_context());
    REQUIRE(results.size() == 6);
    std::map<std::string, double> error;
    for (const auto& r : results) {
        INFO(r.id << " " << r.reason);
        REQUIRE(r.ok());
        error[r.id.substr(std::string("rl-nemorl04-").size())] = r.error;
    }
    auto within = [&](const std::string& key, double lo, double hi) {
        INFO(key << ": " << error.at(key));
        CHECK((error.at(key) > lo && error.at(key) < hi));
    };
    within("llama31-8b-16xh100-onpolicy", -0.45, -0.25);
    within("llama31-8b-16xh100-1off", -0.35, -0.15);
    within("qwen3-32b-32xh100-onpolicy", -0.40, -0.20);
    within("qwen3-32b-64xh100-1off", -0.32, -0.12);
    within("qwen3-30b-a3b-32xh100-onpolicy", -0.72, -0.50);
    within("qwen3-30b-a3b-32xh100-1off", -0.75, -0.55);
}

TEST_CASE("an rl case's capped mean is the answers' mean as measured", "[rl][compare]") {
    // The Llama 3.1 8B row: answers of 910 tokens on average under the 3,946-token cap, lognormal
    // with a coefficient of variation of 1. Read as the distribution's own mean, the cap would cut
    // the drawn mean to about 860; scaled until the capped mean is 910, the 2,048 answers of an
    // iteration average 910 within their sampling error (a lognormal's standard deviation of 910
    // over sqrt(2048): 20 tokens; 3 of them: 60).
    const auto results =
        scenarios::compare_measured(std::string(FATHOM_SOURCE_DIR) + "/scenarios/measured-rl.yaml",
                                    testing::source_context(), false, "rl-nemorl04-llama31-8b-16xh100-onpolicy");
    REQUIRE(results.size() == 1);
    REQUIRE(results[0].ok());
    bool said = false;
    for (const auto& a : results[0].assumptions) said = said || a.find("capped mean 910") != std::string::npos;
    CHECK(said);
    REQUIRE(results[0].run_summary.size() == 3);
    double mean = 0;
    REQUIRE(std::sscanf(results[0].run_summary[2].c_str(), "answers %lf", &mean) == 1);
    CHECK(mean == Approx(910).margin(60));
}

TEST_CASE("a bad rl field is named by its file, line and path", "[rl][compare]") {
    std::string text = measured_rl();
    const auto at = text.find("    samples: 32\n");
    REQUIRE(at != std::string::npos);
    text.replace(at, 16, "    samples: 0\n");
    const std::string path = testing::write_file("bad-rl.yaml", text);
    try {
        scenarios::compare_measured(path, testing::source_context());
        FAIL("accepted rl.samples: 0");
    } catch (const sim::InputError& e) {
        const std::string msg = e.what();
        INFO(msg);
        CHECK(msg.find("bad-rl.yaml") != std::string::npos);
        CHECK(msg.find("rl.samples") != std::string::npos);
        CHECK(e.line() > 0);
    }
}
