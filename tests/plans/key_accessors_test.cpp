// Key accessors composed from member pointers (plans/key_decl.h): each member type converts to its
// key value and back, through paths of sub-objects and optionals; and every declared choice key
// takes its choices from its enum's name table (or a stated subset, or a registry), each choice
// setting and reading back as itself.
#include "hardware/routing/routing.h"
#include "plans/key_decl.h"
#include "plans/keys.h"
#include "plans/scenario.h"
#include "plans/search_keys.h"
#include "workloads/serving/autoscale.h"
#include "workloads/serving/batching/policy.h"
#include "workloads/serving/formats.h"
#include "workloads/serving/kv_tier.h"
#include "workloads/serving/router.h"
#include "workloads/training/schedules/pipeline_schedule.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fathom::accessor_test {

enum class Shade { Light, Dark };
constexpr auto enum_names(Shade) { return sim::name_table<Shade>({{Shade::Light, "light"}, {Shade::Dark, "dark"}}); }

struct Inner {
    int count = 3;
    Shade shade = Shade::Light;
};

struct Target {
    int i = 1;
    int64_t l = 2;
    uint64_t u = 3;
    double d = 0.5;
    bool b = false;
    std::string s = "x";
    Shade e = Shade::Light;
    std::vector<int64_t> li = {1};
    std::vector<int> vi = {2};
    std::vector<double> vd = {3};
    std::vector<std::string> vs = {"a"};
    Inner inner;
    std::optional<Inner> maybe;
};

}  // namespace fathom::accessor_test

using namespace fathom;
using namespace fathom::plans;
using namespace fathom::plans::key_decl;
using accessor_test::Inner;
using accessor_test::Shade;
using accessor_test::Target;

namespace {

// Sets `v` through the accessor, then reads it back.
template <typename A>
KeyValue round_trip(const A& access, Target& t, const KeyValue& v) {
    access.set(t, v);
    return access.get(t);
}

}  // namespace

TEST_CASE("member accessors convert by the member's type, both ways", "[plans][keys]") {
    Target t;
    CHECK(std::get<int64_t>(round_trip(member<&Target::i>(), t, int64_t{7})) == 7);
    CHECK(t.i == 7);
    CHECK(std::get<int64_t>(round_trip(member<&Target::l>(), t, int64_t{1} << 40)) == int64_t{1} << 40);
    CHECK(std::get<int64_t>(round_trip(member<&Target::u>(), t, int64_t{9})) == 9);
    CHECK(t.u == 9u);
    // A number key takes an integer (a Python keyword argument) and reads back as a double.
    CHECK(std::get<double>(round_trip(member<&Target::d>(), t, int64_t{4})) == 4.0);
    CHECK(std::get<double>(round_trip(member<&Target::d>(), t, 0.25)) == 0.25);
    CHECK(std::get<bool>(round_trip(member<&Target::b>(), t, true)));
    CHECK(std::get<std::string>(round_trip(member<&Target::s>(), t, std::string("yz"))) == "yz");
    CHECK(std::get<std::string>(round_trip(member<&Target::e>(), t, std::string("dark"))) == "dark");
    CHECK(t.e == Shade::Dark);
    const std::vector<int64_t> list = {5, 7};
    CHECK(std::get<std::vector<int64_t>>(round_trip(member<&Target::li>(), t, list)) == list);
    CHECK(std::get<std::vector<int64_t>>(round_trip(member<&Target::vi>(), t, list)) == list);
    CHECK(t.vi == std::vector<int>{5, 7});
    CHECK(std::get<std::vector<int64_t>>(round_trip(member<&Target::vd>(), t, list)) == list);
    CHECK(t.vd == std::vector<double>{5.0, 7.0});
    // A choice list is one comma-separated string.
    CHECK(std::get<std::string>(round_trip(member<&Target::vs>(), t, std::string("p,q"))) == "p,q");
    CHECK(t.vs == std::vector<std::string>{"p", "q"});
    // An enum member given a name outside its table: the error names the choices.
    CHECK_THROWS_WITH(member<&Target::e>().set(t, std::string("grey")), "expected light or dark, got 'grey'");
}

TEST_CASE("member paths reach sub-objects, and optionals are created when written", "[plans][keys]") {
    Target t;
    CHECK(std::get<int64_t>(round_trip(member<&Target::inner, &Inner::count>(), t, int64_t{11})) == 11);
    CHECK(t.inner.count == 11);
    // Reading an absent optional gives the default member, and leaves it absent.
    const auto count = member<&Target::maybe, &Inner::count>();
    CHECK(std::get<int64_t>(count.get(t)) == 3);
    CHECK_FALSE(t.maybe.has_value());
    count.set(t, int64_t{4});
    REQUIRE(t.maybe.has_value());
    CHECK(t.maybe->count == 4);
    CHECK(t.maybe->shade == Shade::Light);  // the rest of the new object is default
    CHECK(std::get<std::string>(round_trip(member<&Target::maybe, &Inner::shade>(), t, std::string("dark"))) == "dark");
    CHECK(t.maybe->count == 4);
}

namespace {

template <typename K>
void add_choice_keys(const std::vector<K>& keys, std::vector<const KeyInfo*>& out) {
    for (const auto& k : keys)
        if (k.info.type == KeyType::Choice || k.info.type == KeyType::ChoiceList) out.push_back(&k.info);
}

template <typename T>
void check_each_choice_round_trips(const std::vector<Key<T>>& keys, const std::vector<std::string>& computed) {
    for (const auto& k : keys) {
        if (k.info.type != KeyType::Choice) continue;
        if (std::find(computed.begin(), computed.end(), k.info.path) != computed.end()) continue;
        for (const auto& c : k.info.choices) {
            INFO(k.info.path << " = " << c);
            T target{};
            k.set(target, c);
            CHECK(std::get<std::string>(k.get(target)) == c);
        }
    }
}

// The search keys set and read through set_search_key, each choice of a choice list alone too.
void check_each_search_choice_round_trips() {
    for (const SearchKey& k : search_keys()) {
        if (k.info.type != KeyType::Choice && k.info.type != KeyType::ChoiceList) continue;
        for (const auto& c : k.info.choices) {
            INFO(k.info.path << " = " << c);
            SearchSpace space;
            set_search_key(space, k.info.path, c);
            CHECK(std::get<std::string>(get_search_key(space, k.info.path)) == c);
        }
    }
}

}  // namespace

TEST_CASE("every choice key's choices come from its enum's table, a stated subset or a registry", "[plans][keys]") {
    using hardware::Dtype;
    const auto dtypes = sim::choices<Dtype>({Dtype::bf16, Dtype::fp16, Dtype::fp8});
    // Serving adds fp4 (NVFP4 / MXFP4 weights, GEMMs and KV cache; plans/key_decl.h).
    const auto serving_dtypes = sim::choices<Dtype>({Dtype::bf16, Dtype::fp16, Dtype::fp8, Dtype::fp4});
    const auto dispatchers = sim::choices<models::MoeDispatcher>();
    std::vector<std::string> schedules = {"auto"};
    for (const auto& e : workloads::schedule_registry().entries()) schedules.push_back(e.name);
    std::vector<std::string> arrivals = sim::choices<workloads::serving::ArrivalKind>();
    arrivals.insert(arrivals.end(), {"concurrency", "trace"});
    const std::map<std::string, std::vector<std::string>> expected = {
        {"kind", sim::choices<WorkloadKind>()},
        {"model.architecture", {"dense", "moe"}},  // computed from model.moe
        {"model.activation", sim::choices<models::Activation>()},
        {"model.norm", sim::choices<models::Norm>()},
        {"model.position_embedding", sim::choices<models::PositionEmbedding>()},
        {"cluster.scale_out.topology", sim::choices<hardware::ScaleOutTopology>()},
        {"cluster.scale_out.routing", registry_names(hardware::routing_registry())},
        {"cluster.network", sim::choices<hardware::NetworkBackend>()},
        {"training.recompute", sim::choices<workloads::Recompute>()},
        {"training.schedule", registry_names(workloads::schedule_registry())},
        {"training.documents.distribution", sim::choices<workloads::LengthKind>()},
        {"stack.dtype", dtypes},
        {"stack.grad_dtype", sim::choices<workloads::GradDtype>()},
        {"stack.cp_comm", sim::choices<models::CpComm>()},
        {"stack.attention_kernel",
         sim::choices<models::AttentionKernel>({models::AttentionKernel::Fa3, models::AttentionKernel::Fa2})},
        {"stack.selective_recompute", sim::choices<workloads::SelectivePolicy>()},
        {"stack.activation_offload", sim::choices<workloads::ActivationOffload>()},
        // Training has no DeepEP low-latency kernels (decode only).
        {"stack.moe_dispatcher",
         sim::choices<models::MoeDispatcher>({models::MoeDispatcher::AllToAll, models::MoeDispatcher::DeepEp})},
        {"serving.dispatcher", dispatchers},
        {"serving.disaggregation.prefill.dispatcher", dispatchers},
        {"serving.disaggregation.decode.dispatcher", dispatchers},
        {"serving.disaggregation.isolate", sim::choices<workloads::serving::PoolIsolation>()},
        {"serving.dtype", workloads::serving::format_names()},
        {"serving.kv_dtype", serving_dtypes},
        {"serving.policy", registry_names(workloads::serving::policy_registry())},
        {"serving.memory_fraction_of", {"device", "free"}},  // a flag, named
        {"serving.preemption", sim::choices<workloads::serving::Preemption>()},
        {"serving.router", registry_names(workloads::serving::router_registry())},
        {"serving.speculative.method", sim::choices<workloads::serving::SpecMethod>()},
        {"serving.lora.admission", sim::choices<workloads::serving::LoraAdmission>()},
        {"serving.lora.modules", sim::choices<workloads::serving::LoraModules>()},
        {"serving.autoscale.policy", workloads::serving::autoscale_policy_choices()},  // "none" and the registry
        {"serving.autoscale.weights_from", workloads::serving::weight_sources()},
        {"serving.kv_offload_copy", workloads::serving::kv_copy_methods()},
        {"serving.kv_offload_load", workloads::serving::kv_load_modes()},
        {"serving.kv_offload_store", workloads::serving::kv_store_modes()},
        {"traffic.arrival", arrivals},
        {"traffic.prompt.distribution", sim::choices<workloads::LengthKind>()},
        {"traffic.sessions.first_prompt.distribution", sim::choices<workloads::LengthKind>()},
        {"traffic.output.distribution", sim::choices<workloads::LengthKind>()},
        {"search.recompute", sim::choices<workloads::Recompute>()},
        {"search.schedule", schedules},
        {"search.dtype", workloads::serving::format_names()},
        {"search.objective", sim::choices<Objective>()},  // the search's own (plans/search_space.h)
        {"search.accelerator", {}},                       // free lists: catalog ids
        {"search.disaggregation", {"off", "on"}},
        {"search.policy", registry_names(workloads::serving::policy_registry())},
        {"search.autoscale", {}},  // a free list: policies, each optionally :target
        {"search.prices", {}},
        {"search.checkpoint_interval", {}},  // a free list: times with units
        {"search.checkpoint_method", sim::choices<CheckpointMethod>()},
        {"search.recovery", sim::choices<Recovery>()},
        {"search.rl_layout", sim::choices<workloads::rl::Layout>()},
        {"rl.layout", sim::choices<workloads::rl::Layout>()},
        {"rl.sync", sim::choices<workloads::rl::SyncPath>()},
        {"rl.prompt.distribution", sim::choices<workloads::LengthKind>()},
        {"rl.response.distribution", sim::choices<workloads::LengthKind>()},
    };
    std::vector<const KeyInfo*> declared;
    for (const auto& k : scenario_keys())
        if (k.type == KeyType::Choice) declared.push_back(&k);
    add_choice_keys(model_keys(), declared);
    add_choice_keys(cluster_keys(), declared);
    add_choice_keys(training_plan_keys(), declared);
    add_choice_keys(serving_plan_keys(), declared);
    add_choice_keys(search_keys(), declared);
    add_choice_keys(rl_keys(), declared);
    CHECK(declared.size() == expected.size());
    for (const KeyInfo* k : declared) {
        INFO("key " << k->path << ": say here where its choices come from");
        const auto it = expected.find(k->path);
        REQUIRE(it != expected.end());
        CHECK(k->choices == it->second);
    }
}

TEST_CASE("every choice of every choice key sets and reads back as itself", "[plans][keys]") {
    check_each_choice_round_trips(model_keys(), {"model.architecture"});  // read from model.moe
    check_each_choice_round_trips(cluster_keys(), {});
    check_each_choice_round_trips(training_plan_keys(), {});
    check_each_choice_round_trips(serving_plan_keys(), {});
    check_each_search_choice_round_trips();
}

TEST_CASE("a subset key refuses the enum's other names by the key's own choices", "[plans][keys]") {
    workloads::TrainingPlan p;
    CHECK_THROWS_WITH(set_training_key(p, "stack.moe_dispatcher", std::string("deepep_ll")),
                      Catch::Contains("stack.moe_dispatcher") && Catch::Contains("expected alltoall or deepep"));
    workloads::serving::ServingPlan s;
    set_serving_key(s, "serving.dispatcher", std::string("deepep_ll"));
    CHECK(s.replica.dispatcher == models::MoeDispatcher::DeepEpLowLatency);
}
