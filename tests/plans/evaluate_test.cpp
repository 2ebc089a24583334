// evaluate(): an impossible plan is an outcome (its violations, each naming a key path), not an
// exception; reports are flat records with the scenario's identity first.
#include "plans/report.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

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

TEST_CASE("every group kind a step moves data over has its report column and CLI column", "[plans][evaluate]") {
    // Three layouts that between them use every stream kind: tp x cp (with dp traffic over the
    // dp x cp group), tp x pp x dp, and ep x dp. A stage's "<kind>_comm_s" must exist for each kind
    // the step reports traffic of (StepReport::comm_kinds, or any busy time at all), with that
    // stream's busy time; the columns fathom has always written stay, 0 where there is no traffic.
    const auto& ctx = testing::source_context();
    struct Case {
        const char* example;
        std::vector<std::string> sets;
        std::vector<models::GroupKind> expect;
    };
    using G = models::GroupKind;
    const std::vector<Case> cases = {
        {"quickstart.yaml", {"parallel.tp=4", "parallel.cp=2"}, {G::tp, G::cp, G::dp}},
        {"gpt3-175b-128xh100.yaml", {}, {G::tp, G::dp, G::pp}},
        {"moe-qwen3-30b-16xh100.yaml", {}, {G::ep, G::dp}},
    };
    for (const Case& c : cases) {
        INFO(c.example);
        const auto s = scenarios::load_scenario(testing::example(c.example), *ctx.catalog, c.sets);
        const plans::Outcome o = plans::evaluate(s, ctx);
        REQUIRE(o.ok());
        const workloads::StepReport& step = *o.training();
        CHECK(step.comm_kinds == c.expect);
        const plans::Report r = plans::make_report(s, o);
        REQUIRE(r.tables.size() == 1);
        const auto& rows = r.tables[0].second;
        REQUIRE(rows.size() == step.stages.size());
        for (size_t i = 0; i < rows.size(); ++i)
            for (int g = 0; g < models::kGroupKinds; ++g) {
                const auto kind = static_cast<models::GroupKind>(g);
                const std::string column = plans::comm_column(kind);
                INFO("stage " << i << " " << column);
                const bool traffic =
                    std::find(step.comm_kinds.begin(), step.comm_kinds.end(), kind) != step.comm_kinds.end() ||
                    step.stages[i].comm(kind) > 0;
                const bool always = kind != G::edp;  // tp, cp, pp, dp, ep: written since the first report
                const auto* v = rows[i].find(column);
                if (traffic || always) {
                    REQUIRE(v != nullptr);
                    CHECK(std::get<double>(*v) == step.stages[i].comm(kind));
                }
                if (traffic) CHECK(step.stages[i].comm(kind) > 0);
            }
    }
}
