// The key declarations (plans/keys.h): the README's reference is theirs, every training-plan key
// sets and reads back through its declaration, values are checked against type and range, and
// plans have equality and a stable hash over every declared key.
#include "plans/keys.h"

#include "sim/error.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

using namespace fathom;
using plans::KeyValue;

TEST_CASE("the key reference in scenarios/README.md is generated from the declarations", "[plans][keys]") {
    std::ifstream in(testing::kSource + "/scenarios/README.md");
    REQUIRE(in);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const std::string begin = "<!-- keys:begin -->\n", end = "<!-- keys:end -->";
    const auto b = text.find(begin), e = text.find(end);
    REQUIRE(b != std::string::npos);
    REQUIRE(e != std::string::npos);
    const std::string in_readme = text.substr(b + begin.size(), e - b - begin.size());
    INFO("regenerate with: build/fathom list keys");
    CHECK(in_readme == plans::key_reference_markdown());
}

namespace {

// A valid value for each training-plan key that differs from the default plan's.
KeyValue other_value(const plans::KeyInfo& k, const KeyValue& current) {
    switch (k.type) {
        case plans::KeyType::Integer: return std::get<int64_t>(current) == 2 ? int64_t{3} : int64_t{2};
        case plans::KeyType::Number:
        case plans::KeyType::Quantity: return std::get<double>(current) * 2 + 1;
        case plans::KeyType::Boolean: return !std::get<bool>(current);
        case plans::KeyType::Choice:
            for (const auto& c : k.choices)
                if (c != std::get<std::string>(current)) return c;
            break;
        case plans::KeyType::IntegerList: return std::vector<int64_t>{5, 7};
        case plans::KeyType::ChoiceList: return k.choices.front();
        case plans::KeyType::Text: return std::get<std::string>(current) + "x";
    }
    FAIL("no other value for " << k.path);
    return current;
}

}  // namespace

TEST_CASE("every training-plan key sets, reads back, and moves equality and the hash", "[plans][keys]") {
    const workloads::TrainingPlan base;
    for (const auto& key : plans::training_plan_keys()) {
        INFO("key " << key.info.path);
        const KeyValue v = other_value(key.info, key.get(base));
        REQUIRE(plans::check_value(key.info, v).empty());
        workloads::TrainingPlan p = base;
        plans::set_training_key(p, key.info.path, v);
        CHECK(plans::format_value(plans::get_training_key(p, key.info.path)) == plans::format_value(v));
        CHECK(p != base);                // equality sees every declared key
        CHECK(p.hash() != base.hash());  // and so does the hash
        workloads::TrainingPlan q = base;
        plans::set_training_key(q, key.info.path, v);
        CHECK(q == p);
        CHECK(q.hash() == p.hash());
    }
}

TEST_CASE("plan hashes are stable across runs, builds and platforms", "[plans][keys]") {
    // FNV-1a 64 over the canonical encoding of the default plan (sim/stable_hash.h). The value is
    // pinned: a change means every cached search result keyed by plan hash is invalidated, which a
    // commit must say. The golden JSON outputs pin the example plans' hashes too.
    const workloads::TrainingPlan p;
    workloads::TrainingPlan named = p;
    named.stack_preset = "nemo-24.07";  // provenance only: not part of equality or the hash
    CHECK(named == p);
    CHECK(named.hash() == p.hash());
    CHECK(p.hash() ==
          0x0ae327cf7f83bff8ULL);  // moved when parallel.etp, the MoE routing, recompute, dispatcher and EP-overlap
                                   // keys joined the plan, then stack.cross_entropy_fusion,
                                   // training.recompute_mla_up_proj, training.lora_rank, training.documents,
                                   // stack.fp8_tp_all_gather, stack.tp_overlap_contention, stack.selective_recompute
                                   // and stack.grad_dtype fp32-for-bf16
}

TEST_CASE("values are checked against their declared type, range and choices", "[plans][keys]") {
    workloads::TrainingPlan p;
    CHECK_THROWS_WITH(plans::set_training_key(p, "parallel.tp", int64_t{0}),
                      Catch::Contains("parallel.tp") && Catch::Contains(">= 1"));
    CHECK_THROWS_WITH(plans::set_training_key(p, "training.zero_stage", int64_t{5}),
                      Catch::Contains("between 0 and 3"));
    CHECK_THROWS_WITH(plans::set_training_key(p, "training.recompute", std::string("most")),
                      Catch::Contains("expected none, selective or full"));
    CHECK_THROWS_WITH(plans::set_training_key(p, "stack.bucket_size", std::nan("")), Catch::Contains("finite"));
    CHECK_THROWS_WITH(plans::set_training_key(p, "parallel.tp", std::string("2")),
                      Catch::Contains("expected an integer"));
    CHECK_THROWS_WITH(plans::set_training_key(p, "parallel.tpp", int64_t{2}),
                      Catch::Contains("unknown training-plan key"));
    // Numbers accept integers (keyword arguments from Python), and the plan is unchanged by failures.
    plans::set_training_key(p, "stack.bucket_size", int64_t{1000});
    CHECK(p.stack.bucket_params == 1000.0);
    CHECK(p.layout.tp == 1);
}
