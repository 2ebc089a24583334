// evaluate(): an impossible plan is an outcome (its violations, each naming a key path), not an
// exception; reports are flat records with the scenario's identity first.
#include "plans/report.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>

#include <string>

using namespace fathom;

TEST_CASE("an impossible plan comes back as its violations", "[plans][evaluate]") {
    const auto& ctx = testing::source_context();
    plans::Scenario s = scenarios::load_scenario(testing::example("quickstart.yaml"), *ctx.catalog);
    auto& plan = std::get<workloads::TrainingPlan>(s.plan);
    plan.layout.tp = 3;  // does not divide 32 heads; 3 x 1 x 2 x 4 = 24 GPUs, not 8
    plans::Outcome o;
    REQUIRE_NOTHROW(o = plans::evaluate(s, ctx));
    CHECK_FALSE(o.ok());
    CHECK_FALSE(o.report.has_value());
    REQUIRE(o.violations.size() >= 2);
    CHECK(o.violations[0].key == "parallel.dp");
    CHECK_THAT(o.violations[0].message, Catch::Contains("24 GPUs but the cluster has 8"));
    CHECK(o.violations[1].key == "parallel.tp");
    const plans::Report r = plans::make_report(s, o);
    const auto* v = r.summary.find("violations");
    REQUIRE(v != nullptr);
    CHECK_THAT(std::get<std::vector<std::string>>(*v).front(), Catch::StartsWith("parallel.dp: "));
    CHECK(r.tables.empty());
}

TEST_CASE("a report is flat records: identity, metrics, and a row per stage", "[plans][evaluate]") {
    const auto& ctx = testing::source_context();
    const auto s = scenarios::load_scenario(testing::example("gpt3-175b-128xh100.yaml"), *ctx.catalog);
    const plans::Outcome o = plans::evaluate(s, ctx);
    REQUIRE(o.ok());
    const plans::Report r = plans::make_report(s, o);
    REQUIRE(r.summary.fields.size() > 7);
    const char* identity[] = {"scenario", "kind", "model", "accelerator", "gpus", "stack", "plan_hash"};
    for (size_t i = 0; i < 7; ++i) CHECK(r.summary.fields[i].first == identity[i]);
    CHECK(std::get<double>(*r.summary.find("step_time_s")) == o.training()->step_time_s);
    REQUIRE(r.tables.size() == 1);
    CHECK(r.tables[0].first == "stages");
    CHECK(r.tables[0].second.size() == 8);  // pp 8
    // Every stage row has the same columns, every value a scalar: a DataFrame without reshaping.
    for (const auto& row : r.tables[0].second) {
        CHECK(row.fields.size() == r.tables[0].second.front().fields.size());
        for (const auto& [name, value] : row.fields)
            CHECK_FALSE(std::holds_alternative<std::vector<std::string>>(value));
    }
}
