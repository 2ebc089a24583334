// The search as data (plans/search_keys.h, search_product.h, search_objective.h, search_report.h):
// an axis added by one row of the key table is crossed; each pruning rule drops what its reason
// says; each key's kinds come from its declaration alone; every objective has its entry and its
// needs are checked in one place; every reported candidate field survives the wire of a
// partitioned search, and a field left off the wire would not.
#include "plans/search.h"
#include "plans/search_keys.h"
#include "plans/search_objective.h"
#include "plans/search_report.h"
#include "plans/search_wire.h"
#include "plans/serving_search.h"
#include "scenarios/scenario.h"
#include "scenarios/yaml_node.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"
#include "tests/support/search_fixture.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

using namespace fathom;
using plans::KeyValue;
using testing::quickstart;
using testing::small_space;

namespace {

const std::string kServing =
    "kind: serving\nseed: 3\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 8}\n"
    "serving: {engine: vllm, tp: 1, replicas: 2}\ntraffic: {arrival: poisson, rate: 8, num_requests: 100, prompt: "
    "1000, "
    "output: 100}\nslo: {ttft: 300 ms, tpot: 15 ms, target: 0.9}\ncapacity: {seeds: 1, min_rate: 0.5}\n";

int64_t dropped_by(const std::vector<plans::PruneRule<workloads::TrainingPlan>>& rules,
                   const std::vector<int64_t>& dropped, const std::string& name) {
    for (size_t r = 0; r < rules.size(); ++r)
        if (rules[r].name == name) return dropped[r];
    FAIL("no pruning rule " << name);
    return -1;
}

// Every field of every candidate's record, as text, in order.
template <typename C>
std::vector<std::string> record_texts(const std::vector<C>& cs, const std::vector<plans::CandidateField<C>>& fields,
                                      plans::Objective objective) {
    std::vector<std::string> out;
    for (const C& c : cs)
        for (const auto& [name, value] : plans::candidate_record(c, fields, objective).fields) {
            std::string v;
            if (const auto* d = std::get_if<double>(&value)) {
                char buf[64];
                std::snprintf(buf, sizeof buf, "%a", *d);  // exact
                v = buf;
            } else if (const auto* i = std::get_if<int64_t>(&value)) {
                v = std::to_string(*i);
            } else if (const auto* b = std::get_if<bool>(&value)) {
                v = *b ? "true" : "false";
            } else if (const auto* s = std::get_if<std::string>(&value)) {
                v = *s;
            }
            out.push_back(std::to_string(c.index) + " " + name + " " + v);
        }
    return out;
}

}  // namespace

TEST_CASE("an axis added by one row of the search key table is crossed", "[plans][search]") {
    const plans::Scenario s = quickstart();
    // A throwaway axis: sequence lengths, setting training.seq_len, by default the scenario's.
    std::vector<plans::SearchKey> keys = plans::search_keys();
    plans::SearchKey seq;
    seq.info.path = "search.seq_len";
    seq.info.type = plans::KeyType::IntegerList;
    seq.info.min = 1;
    seq.training = plans::AxisRule<workloads::TrainingPlan>{
        "training.seq_len", "the scenario's training.seq_len",
        [](const plans::SearchBase&, const workloads::TrainingPlan& p) {
            return std::vector<KeyValue>{plans::get_training_key(p, "training.seq_len")};
        }};
    keys.push_back(seq);

    plans::SearchSpace space = small_space();
    const auto without = plans::cross_training_plans(s.model, s.cluster, *s.training(), space, keys).plans;
    for (const auto& p : without) CHECK(p.training.seq_len == s.training()->training.seq_len);  // its default
    plans::set_search_key(space, "search.seq_len", std::vector<int64_t>{2048, 4096}, keys);
    const auto with = plans::cross_training_plans(s.model, s.cluster, *s.training(), space, keys).plans;
    // The last row of the table varies fastest: each plan of the space twice, at 2048 then 4096.
    REQUIRE(with.size() == 2 * without.size());
    for (size_t i = 0; i < without.size(); ++i) {
        workloads::TrainingPlan a = with[2 * i], b = with[2 * i + 1];
        CHECK(a.training.seq_len == 2048);
        CHECK(b.training.seq_len == 4096);
        a.training.seq_len = b.training.seq_len = without[i].training.seq_len;
        CHECK(a == without[i]);
        CHECK(b == without[i]);
    }
    // The table's own searches do not know it, and a serving search refuses it.
    CHECK_THROWS_WITH(plans::enumerate_training_plans(s.model, s.cluster, *s.training(), space),
                      Catch::Contains("not an axis of this search"));
}

TEST_CASE("each pruning rule drops the combinations its reason names", "[plans][search]") {
    const plans::Scenario s = quickstart();
    const auto crossed = plans::cross_training_plans(s.model, s.cluster, *s.training(), small_space());
    const auto& rules = plans::training_prune_rules();
    // 4 x 2 x 2 x 2 x 2 = 64 combinations. tp 8 pp 2 needs 16 GPUs: its 8 go. Without data
    // parallelism (tp 8 pp 1, tp 4 pp 2: dp 1) the first ZeRO stage stands for both: 2 x 4 go.
    CHECK(dropped_by(rules, crossed.dropped, "layout-fills-gpus") == 8);
    CHECK(dropped_by(rules, crossed.dropped, "zero-needs-sharding") == 8);
    CHECK(dropped_by(rules, crossed.dropped, "vp-needs-pp") == 0);
    CHECK(crossed.plans.size() == 48);
    for (const auto& rule : rules) {
        CHECK(std::string(rule.name).find(' ') == std::string::npos);
        CHECK_FALSE(std::string(rule.reason).empty());
    }
    // vp {1, 2}: vp 2 needs pp 2; schedules {auto, gpipe}: only with a pipeline.
    plans::SearchSpace space = small_space();
    plans::set_search_key(space, "search.vp", std::vector<int64_t>{1, 2});
    plans::set_search_key(space, "search.schedule", std::string("auto,gpipe"));
    const auto more = plans::cross_training_plans(s.model, s.cluster, *s.training(), space);
    // 256 combinations, each rule taking from what the ones before it left: tp 8 pp 2 (2 x 16 of
    // vp, micro-batch, ZeRO, recompute and schedule); vp 2 with pp 1 (4 tp x 16); ZeRO 3 where dp
    // is 1 (tp 8 pp 1 at vp 1: 8; tp 4 pp 2 at vp 1 and 2: 16); gpipe with pp 1 (tp 1, 2, 4: 3 x 8;
    // tp 8, its ZeRO 3 gone: 4). 256 - 32 - 64 - 24 - 28 = 108 plans.
    CHECK(dropped_by(rules, more.dropped, "layout-fills-gpus") == 32);
    CHECK(dropped_by(rules, more.dropped, "vp-needs-pp") == 64);
    CHECK(dropped_by(rules, more.dropped, "zero-needs-sharding") == 24);
    CHECK(dropped_by(rules, more.dropped, "schedule-needs-pp") == 28);
    CHECK(more.plans.size() == 108);
    for (const auto& p : more.plans) {
        const std::string by_default = p.layout.vp > 1 ? "interleaved-1f1b" : "1f1b";  // auto
        if (p.layout.pp == 1) CHECK(p.training.schedule == "1f1b");
        else CHECK((p.training.schedule == by_default || p.training.schedule == "gpipe"));
    }
}

TEST_CASE("the serving search's default replica counts stop at the cluster's GPUs, given ones do not",
          "[plans][search][serving]") {
    const plans::Scenario s =
        scenarios::parse_scenario(scenarios::load_yaml_string(kServing, "s.yaml"), testing::source_catalog());
    const auto& cat = *testing::source_context().catalog;
    // Llama 3 8B (32 heads) on 8 GPUs: tp {1, 2, 4, 8} x replicas {1, 2, 4, 8} = 16; tp x replicas
    // > 8 for tp 2 (8), tp 4 (4, 8), tp 8 (2, 4, 8): 6 dropped.
    const auto by_default = plans::cross_serving_plans(s.model, s.cluster, *s.serving(), plans::SearchSpace{}, cat);
    CHECK(by_default.plans.size() == 10);
    CHECK(by_default.dropped == std::vector<int64_t>{6});
    plans::SearchSpace given;
    plans::set_search_key(given, "search.replicas", std::vector<int64_t>{1, 2, 4, 8});
    const auto kept = plans::cross_serving_plans(s.model, s.cluster, *s.serving(), given, cat);
    CHECK(kept.plans.size() == 16);  // the plan checks prune the six, with their reason
    CHECK(kept.dropped == std::vector<int64_t>{0});
}

TEST_CASE("a search key serves the kinds its declaration gives, and the parser follows it", "[plans][search]") {
    using plans::WorkloadKind;
    std::set<std::string> training, serving;
    for (const plans::SearchKey& k : plans::search_keys()) {
        if (k.serves(WorkloadKind::Training)) training.insert(k.info.name());
        if (k.serves(WorkloadKind::Serving)) serving.insert(k.info.name());
        // The doc names the kind when the key serves one only.
        const bool t = k.serves(WorkloadKind::Training), sv = k.serves(WorkloadKind::Serving),
                   rl = k.serves(WorkloadKind::Rl);
        CHECK((t || sv || rl));
        if (t && !sv && !rl) CHECK(k.info.doc.rfind("training: ", 0) == 0);
        if (sv && !t && !rl) CHECK(k.info.doc.rfind("serving: ", 0) == 0);
        if (rl && !t && !sv) CHECK(k.info.doc.rfind("rl: ", 0) == 0);
    }
    CHECK(training.count("tp"));
    CHECK(serving.count("tp"));
    CHECK(training.count("recompute"));
    CHECK_FALSE(serving.count("recompute"));
    CHECK(serving.count("replicas"));
    CHECK_FALSE(training.count("replicas"));
    CHECK_FALSE(serving.count("b_noise"));
    // Each serving-only key is refused by a training scenario, naming it.
    const auto& cat = *testing::source_context().catalog;
    for (const std::string& name : serving) {
        if (training.count(name)) continue;
        const plans::SearchKey* k = plans::find_search_key("search." + name);
        const std::string value = k->info.type == plans::KeyType::IntegerList ? "[1]"
                                  : name == "prices"                          ? "[h100-sxm-80gb=1]"
                                  : k->info.choices.empty()                   ? "[h100-sxm-80gb]"
                                                                              : "[" + k->info.choices.front() + "]";
        INFO(name);
        CHECK_THROWS_WITH(
            scenarios::load_scenario(testing::example("quickstart.yaml"), cat, {"search." + name + "=" + value}),
            Catch::Contains("search." + name) && Catch::Contains("serving plans"));
    }
}

TEST_CASE("every objective has its entry, what it needs is checked in one place", "[plans][search]") {
    using plans::Objective;
    using plans::WorkloadKind;
    for (const std::string& name : sim::choices<Objective>()) {
        const plans::ObjectiveRule& r = plans::objective_rule(sim::parse<Objective>(name));
        CHECK(sim::name(r.objective) == name);
        CHECK((r.training_score || r.serving_score));
        CHECK((r.training_score == nullptr) == (r.training_doc == nullptr));
        CHECK((r.serving_score == nullptr) == (r.serving_doc == nullptr));
    }
    CHECK(plans::objective_refusal(Objective::Capacity, WorkloadKind::Training) ==
          "capacity ranks serving plans; training plans rank by goodput, throughput or cost");
    CHECK(plans::objective_refusal(Objective::Capacity, WorkloadKind::Serving).empty());
    CHECK_NOTHROW(plans::check_objective(Objective::Throughput, WorkloadKind::Serving, false, false));
    CHECK_NOTHROW(plans::check_objective(Objective::Cost, WorkloadKind::Training, true, false));
    auto key_of = [](Objective o, WorkloadKind k, bool priced, bool slo) {
        try {
            plans::check_objective(o, k, priced, slo);
        } catch (const sim::InputError& e) {
            return e.key() + ": " + e.bare_message();
        }
        return std::string();
    };
    CHECK_THAT(key_of(Objective::Cost, WorkloadKind::Training, false, true),
               Catch::StartsWith("search.objective: ") && Catch::Contains("search.price_per_gpu_hour"));
    CHECK_THAT(key_of(Objective::Cost, WorkloadKind::Serving, false, true),
               Catch::Contains("a price for every device type"));
    CHECK_THAT(key_of(Objective::Capacity, WorkloadKind::Serving, true, false), Catch::StartsWith("slo: "));
    CHECK_THAT(key_of(Objective::Capacity, WorkloadKind::Training, true, true), Catch::Contains("ranks serving plans"));
}

TEST_CASE("every reported training candidate field survives the wire of a partitioned search", "[plans][search]") {
    const auto& ctx = testing::source_context();
    const plans::Scenario s = quickstart();
    plans::SearchSpace space = small_space();
    space.price_per_gpu_hour = 2;  // the cost column too
    space.b_noise = 64;
    const auto whole = plans::search_training(s.model, s.cluster, *s.training(), space, ctx);
    plans::SearchOptions r0, r1;
    r0.partition = {0, 2};
    r1.partition = {1, 2};
    auto merged = plans::search_training(s.model, s.cluster, *s.training(), space, ctx, r0);
    const auto other = plans::search_training(s.model, s.cluster, *s.training(), space, ctx, r1);
    const std::string share = plans::encode_search_share(other, r1.partition);
    const auto fields = plans::training_candidate_fields();
    const auto expected = record_texts(whole.candidates, fields, space.objective);
    auto copy = merged;
    plans::merge_search_share(merged, share);
    plans::finalize_training_search(merged, space);
    CHECK(record_texts(merged.candidates, fields, space.objective) == expected);
    for (size_t i = 0; i < whole.candidates.size(); ++i)  // a stored value no report shows
        CHECK(merged.candidates[i].capacity_bytes == whole.candidates[i].capacity_bytes);
    // A field whose stored value is left off the wire (here: mfu) no longer survives.
    auto without_mfu = fields;
    for (auto& f : without_mfu)
        if (std::string(f.name) == "mfu") f.stored = nullptr;
    plans::merge_share(copy.candidates, plans::encode_share(other.candidates, r1.partition, without_mfu), without_mfu);
    plans::finalize_training_search(copy, space);
    CHECK(record_texts(copy.candidates, fields, space.objective) != expected);
}

TEST_CASE("every reported serving candidate field survives the wire of a partitioned search",
          "[plans][search][serving]") {
    const auto& ctx = testing::source_context();
    const plans::Scenario s =
        scenarios::parse_scenario(scenarios::load_yaml_string(kServing, "s.yaml"), testing::source_catalog());
    for (const plans::Objective objective : {plans::Objective::Cost, plans::Objective::Capacity}) {
        plans::SearchSpace space;
        plans::set_search_key(space, "search.tp", std::vector<int64_t>{1, 2});
        plans::set_search_key(space, "search.replicas", std::vector<int64_t>{1, 2, 3});
        plans::set_search_key(space, "search.disaggregation", std::string("off,on"));
        space.price_per_gpu_hour = 3;
        space.objective = objective;
        const auto whole = plans::search_serving(s.model, s.cluster, *s.serving(), space, ctx, s.seed);
        plans::SearchOptions r0, r1;
        r0.partition = {0, 2};
        r1.partition = {1, 2};
        auto merged = plans::search_serving(s.model, s.cluster, *s.serving(), space, ctx, s.seed, r0);
        const auto other = plans::search_serving(s.model, s.cluster, *s.serving(), space, ctx, s.seed, r1);
        plans::merge_serving_search_share(merged, plans::encode_serving_search_share(other, r1.partition));
        plans::finalize_serving_search(merged, space);
        INFO(sim::name(objective));
        CHECK(record_texts(merged.candidates, plans::serving_candidate_fields(), objective) ==
              record_texts(whole.candidates, plans::serving_candidate_fields(), objective));
    }
}
