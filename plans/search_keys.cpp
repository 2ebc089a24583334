// The `search` keys of a scenario, declared once (plans/search_keys.h): each axis with the plan key
// it sets and its default rule for each kind of scenario it searches, each setting with its kinds.
// The parser, `fathom list keys`, the key reference and both searches' product read this table.
#include "plans/search_keys.h"

#include "plans/key_decl.h"
#include "plans/run_request.h"
#include "plans/search.h"
#include "plans/search_objective.h"
#include "plans/search_product.h"
#include "sim/error.h"
#include "sim/units.h"
#include "workloads/serving/autoscale.h"
#include "workloads/serving/batching/policy.h"
#include "workloads/serving/formats.h"
#include "workloads/training/schedules/pipeline_schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <stdexcept>

namespace fathom::plans {
namespace {

using namespace key_decl;
using S = SearchSpace;
using workloads::TrainingPlan;
using workloads::serving::PoolLayout;
using workloads::serving::ServingPlan;
using Values = std::vector<KeyValue>;

KeyValue plan_value(const TrainingPlan& p, const std::string& path) { return get_training_key(p, path); }
KeyValue plan_value(const ServingPlan& p, const std::string& path) { return get_serving_key(p, path); }

// Default rules. The scenario's own value of the key the axis sets:
template <typename Plan>
AxisRule<Plan> scenario_value(const std::string& sets) {
    return {sets, "the scenario's " + sets,
            [sets](const SearchBase&, const Plan& p) { return Values{plan_value(p, sets)}; }};
}

// A fixed list ("auto" alone reads as itself, more as [1, 2, 4]).
template <typename Plan>
AxisRule<Plan> listed(const std::string& sets, const Values& values) {
    std::string text;
    for (const KeyValue& v : values) text += (text.empty() ? "" : ", ") + format_value(v);
    if (values.size() > 1) text = "[" + text + "]";
    return {sets, text, [values](const SearchBase&, const Plan&) { return values; }};
}

template <typename Plan>
AxisRule<Plan> ruled(const std::string& sets, const std::string& text, Values (*rule)(const SearchBase&)) {
    return {sets, text, [rule](const SearchBase& b, const Plan&) { return rule(b); }};
}

Values choice_values(const std::vector<std::string>& names) { return Values(names.begin(), names.end()); }

// Within a node (TP traffic stays on the scale-up fabric), dividing the query heads (the plan
// checks ask the same of the KV heads).
Values tp_within_node(const SearchBase& b) {
    Values out;
    for (int64_t d : divisors(b.cluster.gpus_per_node))
        if (b.model.heads % d == 0) out.emplace_back(std::in_place_type<int64_t>, d);
    return out;
}

// Even splits of the layers over the GPUs.
Values even_pipeline_splits(const SearchBase& b) {
    Values out;
    for (int64_t d : divisors(std::gcd<int64_t>(b.model.layers, b.cluster.gpus())))
        if (d <= 64) out.emplace_back(std::in_place_type<int64_t>, d);
    return out;
}

// Powers of two, then the most that fit, for the largest tp x pp tried (smaller replicas fill the
// cluster with more; the rule default-replicas-fit of the serving search drops the counts a
// candidate's GPUs cannot hold).
Values replica_counts(const SearchBase& b) {
    Values out;
    int64_t r = 1;
    for (; r <= b.cluster.gpus(); r *= 2) out.emplace_back(std::in_place_type<int64_t>, r);
    if (r / 2 != b.cluster.gpus()) out.emplace_back(std::in_place_type<int64_t>, int64_t{b.cluster.gpus()});
    return out;
}

// Hooks. "auto" is the schedules' default rule for the candidate's layout.
void apply_schedule(TrainingPlan& p, const Key<TrainingPlan>& k, const KeyValue& v, int, const SearchBase&) {
    set_axis_key(p, k, to_str(v) == "auto" ? KeyValue(std::string(workloads::default_schedule(p.layout))) : v);
}

// A device type: the pool's accelerator id (none for the cluster's own) and its catalog entry.
void apply_accelerator(ServingPlan& p, const Key<ServingPlan>& k, const KeyValue& v, int, const SearchBase& b) {
    const std::string& id = to_str(v);
    const hardware::AcceleratorSpec& spec = b.catalog->accelerator(id);
    set_axis_key(p, k, KeyValue(id == b.cluster.accelerator.id ? std::string() : id));
    p.replica.accelerator = spec;
}

// `text` as a finite number, all of it ("2.5"; not "2.5x", "" or "inf"), or nullopt.
std::optional<double> number_of(const std::string& text) {
    char* end = nullptr;
    const double x = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(x)) return std::nullopt;
    return x;
}

// An entry of search.autoscale: none, a policy (the scenario's target), or policy:target.
void apply_autoscale(ServingPlan& p, const Key<ServingPlan>& k, const KeyValue& v, int, const SearchBase&) {
    const std::string& s = to_str(v);
    const size_t colon = s.find(':');
    const std::string policy = s.substr(0, colon);
    const auto choices = workloads::serving::autoscale_policy_choices();
    if (std::find(choices.begin(), choices.end(), policy) == choices.end())
        throw sim::InputError("'" + s + "': unknown autoscaling policy '" + policy + "' (expected one of " +
                                  joined(choices) + ", each optionally :target)",
                              "", 0, "search.autoscale");
    set_axis_key(p, k, KeyValue(policy));
    if (colon == std::string::npos) return;
    const std::optional<double> target = number_of(s.substr(colon + 1));
    if (!target || !(*target > 0) || policy == "none")
        throw sim::InputError("'" + s + "': the target after ':' must be a number > 0 (and a policy before it)", "", 0,
                              "search.autoscale");
    p.autoscale.target = *target;
}

// off: the aggregated replicas the candidate has; on: each split of them into x prefill and the
// rest decode replicas (x = 1, 2, ...), the scenario's own aggregated settings kept beside them.
int disaggregation_variants(const ServingPlan& p, const KeyValue& v) {
    return to_str(v) == "off" ? 1 : std::max(0, p.replica.replicas - 1);
}

void apply_disaggregation(ServingPlan& p, const Key<ServingPlan>& k, const KeyValue& v, int variant,
                          const SearchBase& b) {
    if (to_str(v) == "off") return;
    const PoolLayout pool = p.replica;
    p.prefill = pool;
    p.decode = pool;
    set_axis_key(p, k, KeyValue(int64_t{variant + 1}));
    p.decode->replicas = pool.replicas - (variant + 1);
    p.replica = b.serving->replica;
    p.isolate = b.serving->isolate;
}

// search.prices: ID=USD entries.
void set_prices(S& s, const KeyValue& v) {
    s.prices.clear();
    for (const auto& e : split_choices(to_str(v))) {
        const auto eq = e.find('=');
        const double usd = eq != std::string::npos && eq > 0 ? number_of(e.substr(eq + 1)).value_or(-1) : -1;
        if (!(usd >= 0))
            throw sim::InputError("expected ID=USD (h100-sxm-80gb=2.5), got '" + e + "'", "", 0, "search.prices");
        s.prices.emplace_back(e.substr(0, eq), usd);
    }
}

KeyValue get_prices(const S& s) {
    std::vector<std::string> v;
    for (const auto& [id, usd] : s.prices) v.push_back(id + "=" + format_value(usd));
    return joined(v);
}

// search.checkpoint_interval: times with their units ("30 min"), held as a comma-joined list.
void set_intervals(S& s, const KeyValue& v) {
    s.checkpoint_intervals_s.clear();
    for (const auto& e : split_choices(to_str(v))) {
        double x = 0;
        try {
            x = sim::parse_quantity(e, sim::Dimension::Time);
        } catch (const std::exception& err) {
            throw sim::InputError(err.what(), "", 0, "search.checkpoint_interval");
        }
        // Each entry within run.checkpoint_interval's declared range.
        static const KeyInfo& one = []() -> const KeyInfo& {
            for (const auto& k : run_keys())
                if (k.info.path == "run.checkpoint_interval") return k.info;
            throw std::logic_error("run.checkpoint_interval is not declared");
        }();
        if (const std::string why = check_value(one, x); !why.empty())
            throw sim::InputError("'" + e + "': " + why, "", 0, "search.checkpoint_interval");
        s.checkpoint_intervals_s.push_back(x);
    }
}

KeyValue get_intervals(const S& s) {
    std::vector<std::string> v;
    for (double x : s.checkpoint_intervals_s) v.push_back(format_value(x) + " s");
    return joined(v);
}

// One row of the table: a search key's declaration, and its axis rules or its setting.
struct Row {
    Decl decl;
    SearchKey key;

    Row(const char* path, KeyType type, std::string doc) : decl(path, type, std::move(doc)) {}
    Row& range(double lo, double hi = std::numeric_limits<double>::infinity()) {
        decl.range(lo, hi);
        return *this;
    }
    Row& choices(std::vector<std::string> c) {
        decl.choices(std::move(c));
        return *this;
    }
    Row& shown_as(std::string type) {
        decl.shown_as(std::move(type));
        return *this;
    }
    Row& training(AxisRule<TrainingPlan> r) {
        key.training = std::move(r);
        return *this;
    }
    Row& serving(AxisRule<ServingPlan> r) {
        key.serving = std::move(r);
        return *this;
    }
    // Both kinds, the same rule.
    template <typename Rule>
    Row& both(const std::string& training_sets, const std::string& serving_sets, const std::string& text, Rule rule) {
        return training(ruled<TrainingPlan>(training_sets, text, rule))
            .serving(ruled<ServingPlan>(serving_sets, text, rule));
    }
    Row& setting(bool for_training, bool for_serving, Key<S>::Access a, std::string default_text) {
        key.setting_for_training = for_training;
        key.setting_for_serving = for_serving;
        key.set = a.set;
        key.get = a.get;
        decl.by_default(std::move(default_text));
        return *this;
    }

    // The doc says which kind the key serves when not both; the default, each kind's rule.
    operator SearchKey() {
        const bool t = key.serves(WorkloadKind::Training), s = key.serves(WorkloadKind::Serving);
        if (t != s) decl.k.doc = std::string(t ? "training: " : "serving: ") + decl.k.doc;
        if (key.training && key.serving && key.training->default_text != key.serving->default_text)
            decl.by_default("training: " + key.training->default_text + "; serving: " + key.serving->default_text);
        else if (key.is_axis()) decl.by_default(key.training ? key.training->default_text : key.serving->default_text);
        key.info = decl;
        return std::move(key);
    }
};

std::vector<std::string> schedule_choices() {
    std::vector<std::string> schedules = {"auto"};
    for (const auto& name : registry_names(workloads::schedule_registry())) schedules.push_back(name);
    return schedules;
}

// Declarative table: the training axes (tp and pp search serving plans too), in the order the
// searches cross them.
void add_training_axes(std::vector<SearchKey>& k) {
    using T = TrainingPlan;
    constexpr KeyType ints = KeyType::IntegerList;
    k.push_back(Row("search.tp", ints, "tensor-parallel degrees tried (training; serving: of one replica)")
                    .range(1, kMaxInt)
                    .both("parallel.tp", "serving.tp", "divisors of cluster.gpus_per_node that divide the query heads",
                          tp_within_node));
    k.push_back(Row("search.pp", ints, "pipeline-parallel degrees tried (training; serving: of one replica)")
                    .range(1, kMaxInt)
                    .training(ruled<T>("parallel.pp", "divisors of gcd(layers, GPUs) up to 64 (even splits)",
                                       even_pipeline_splits))
                    .serving(listed<ServingPlan>("serving.pp", {int64_t{1}})));
    k.push_back(Row("search.vp", ints, "virtual stages per pipeline rank tried (with pp > 1)")
                    .range(1, kMaxInt)
                    .training(listed<T>("parallel.vp", {int64_t{1}, int64_t{2}, int64_t{4}})));
    k.push_back(Row("search.cp", ints, "context-parallel degrees tried")
                    .range(1, kMaxInt)
                    .training(scenario_value<T>("parallel.cp")));
    k.push_back(Row("search.ep", ints, "expert-parallel degrees tried (mixture-of-experts models)")
                    .range(1, kMaxInt)
                    .training(scenario_value<T>("parallel.ep")));
    k.push_back(Row("search.micro_batch_size", ints, "micro-batch sizes tried")
                    .range(1, kMaxInt)
                    .training(listed<T>("training.micro_batch_size", {int64_t{1}, int64_t{2}, int64_t{4}})));
    k.push_back(Row("search.global_batch_size", ints, "global batch sizes tried, sequences")
                    .range(1, kMaxInt)
                    .training(scenario_value<T>("training.global_batch_size")));
    k.push_back(Row("search.zero_stage", ints, "ZeRO stages tried")
                    .range(0, 3)
                    .training(listed<T>("training.zero_stage", {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}})));
    k.push_back(Row("search.recompute", KeyType::ChoiceList, "recomputation modes tried")
                    .choices(sim::choices<workloads::Recompute>())
                    .training(listed<T>("training.recompute", choice_values(sim::choices<workloads::Recompute>()))));
    AxisRule<T> schedule = listed<T>("training.schedule", {std::string("auto")});
    schedule.apply = apply_schedule;
    k.push_back(Row("search.schedule", KeyType::ChoiceList,
                    std::string("pipeline schedules tried; auto: ") + workloads::kDefaultScheduleRule)
                    .choices(schedule_choices())
                    .training(schedule));
    k.push_back(Row("search.dtype", KeyType::ChoiceList,
                    "GEMM dtypes tried (stack.dtype); serving: weight and activation formats tried (serving.dtype: "
                    "bf16, fp16, fp8, int8, fp4, w8a16, w4a16), each candidate's format and its published accuracy "
                    "cost in the report")
                    .choices(workloads::serving::format_names())
                    .training(scenario_value<T>("stack.dtype"))
                    .serving(scenario_value<ServingPlan>("serving.dtype")));
}

// The device type: the serving search crosses it first (the table's first axis).
void add_device_axis(std::vector<SearchKey>& k) {
    AxisRule<ServingPlan> accelerator =
        ruled<ServingPlan>("serving.accelerator", "the cluster's accelerator",
                           [](const SearchBase& b) { return Values{b.cluster.accelerator.id}; });
    accelerator.apply = apply_accelerator;
    k.push_back(Row("search.accelerator", KeyType::ChoiceList,
                    "device types tried (accelerator catalog ids, `fathom list accelerators`); each candidate's "
                    "replicas run on that device in nodes shaped as the cluster's")
                    .shown_as("list of text")
                    .serving(accelerator));
}

// Declarative table: the serving axes after tp and pp (both kinds' axes, in the training table).
void add_serving_axes(std::vector<SearchKey>& k) {
    using P = ServingPlan;
    constexpr KeyType ints = KeyType::IntegerList;
    k.push_back(Row("search.replicas", ints, "replica counts tried (both pools together when disaggregated)")
                    .range(1, kMaxInt)
                    .serving(ruled<P>("serving.replicas", "1, 2, 4, ... and the most that fit the cluster's GPUs",
                                      replica_counts)));
    AxisRule<P> split = listed<P>("serving.disaggregation.prefill.replicas", {std::string("off")});
    split.apply = apply_disaggregation;
    split.variants = disaggregation_variants;
    k.push_back(Row("search.disaggregation", KeyType::ChoiceList,
                    "off (aggregated replicas) and/or on (every split of the replicas into x prefill and y decode "
                    "replicas, xPyD, each of tp x pp, the KV cache moving between them)")
                    .choices({"off", "on"})
                    .serving(split));
    AxisRule<P> autoscale = scenario_value<P>("serving.autoscale.policy");
    autoscale.apply = apply_autoscale;
    k.push_back(Row("search.autoscale", KeyType::ChoiceList,
                    "autoscaling policies tried (`fathom list autoscalers`), each `policy` (the scenario's "
                    "serving.autoscale target) or `policy:target`, and none; serving.replicas is the most each "
                    "holds, and cost counts the GPU-hours held")
                    .shown_as("list of text")
                    .serving(autoscale));
    k.push_back(Row("search.policy", KeyType::ChoiceList, "batching policies tried (`fathom list policies`)")
                    .choices(registry_names(workloads::serving::policy_registry()))
                    .serving(scenario_value<P>("serving.policy")));
    k.push_back(Row("search.max_num_seqs", ints, "running sequences per replica at most, values tried")
                    .range(1, kMaxInt)
                    .serving(scenario_value<P>("serving.max_num_seqs")));
    k.push_back(Row("search.max_num_batched_tokens", ints, "token budgets per iteration (chunked-prefill budget) tried")
                    .range(1, kMaxInt)
                    .serving(scenario_value<P>("serving.max_num_batched_tokens")));
}

// Declarative table: the settings of a search (what ranks the plans, prices, the statistical
// efficiency and the adaptive run).
void add_settings(std::vector<SearchKey>& k) {
    const bool T = true, F = false;
    k.push_back(Row("search.b_noise", KeyType::Number,
                    "gradient noise scale in sequences (McCandlish et al. 2018): a sequence in a batch of B is worth "
                    "(b_noise + B0) / (b_noise + B) of one at the scenario's batch B0; goodput = throughput x that")
                    .range(0)
                    .setting(T, F, member<&S::b_noise>(), "none (statistical efficiency 1)"));
    k.push_back(Row("search.b_noise_final", KeyType::Number,
                    "the gradient noise scale at the end of the run, sequences; it grows from search.b_noise "
                    "geometrically in the progress (adaptive runs)")
                    .range(0)
                    .setting(T, F, member<&S::b_noise_final>(), "search.b_noise throughout"));
    k.push_back(Row("search.target_tokens", KeyType::Number,
                    "the run's length, tokens trained at the scenario's global batch; with phases > 1, the adaptive "
                    "run (COPUS) and the best fixed plan to the same target are reported")
                    .range(1)
                    .setting(T, F, member<&S::target_tokens>(), "none (no time to target)"));
    k.push_back(Row("search.phases", KeyType::Integer,
                    "phases of the adaptive run, each on the plan and global batch that finish it soonest")
                    .range(1, 1000)
                    .setting(T, F, member<&S::phases>(), "1 (one plan for the whole run)"));
    k.push_back(Row("search.restart_s", KeyType::Number,
                    "seconds to restart the job on a new layout, besides saving and loading the checkpoint (process "
                    "launch, communicator set-up, data loader)")
                    .range(0)
                    .setting(T, F, member<&S::restart_s>(), "0"));
    k.push_back(
        Row("search.price_per_gpu_hour", KeyType::Number,
            "USD per GPU-hour, for the cost columns (serving: of every device type search.prices does not name)")
            .range(0)
            .setting(T, T, member<&S::price_per_gpu_hour>(), "none (no cost column)"));
    k.push_back(Row("search.objective", KeyType::Choice, objective_doc())
                    .choices(sim::choices<Objective>())
                    .setting(T, T, member<&S::objective>(), sim::name(S{}.objective)));
    k.push_back(Row("search.prices", KeyType::ChoiceList,
                    "USD per GPU-hour of each device type, as ID=USD entries (h200-sxm-141gb=3.5)")
                    .shown_as("list of text")
                    .setting(F, T, {&set_prices, &get_prices}, "search.price_per_gpu_hour for every type"));
    k.push_back(
        Row("search.checkpoint_interval", KeyType::ChoiceList,
            "whole runs (a `run` section): checkpoint intervals tried for every plan that fits, times with "
            "units ([10 min, 30 min, 1 h]); the runs are ranked by time to target")
            .shown_as("list of times")
            .setting(T, F, {&set_intervals, &get_intervals}, "run.checkpoint_interval (or its Young/Daly default)"));
    k.push_back(Row("search.checkpoint_method", KeyType::ChoiceList,
                    "whole runs: checkpoint methods tried (run.checkpoint_method)")
                    .choices(sim::choices<CheckpointMethod>())
                    .setting(T, F, member<&S::checkpoint_methods>(), "run.checkpoint_method"));
    k.push_back(Row("search.spare_nodes", KeyType::IntegerList,
                    "whole runs: spare-node pools tried (run.spare_nodes; with run.repair)")
                    .range(0, 1e9)
                    .setting(T, F, member<&S::spare_nodes>(), "run.spare_nodes"));
    k.push_back(Row("search.recovery", KeyType::ChoiceList,
                    "whole runs: recoveries tried (run.recovery; elastic with run.reconfigure)")
                    .choices(sim::choices<Recovery>())
                    .setting(T, F, member<&S::recoveries>(), "run.recovery"));
    k.push_back(Row("search.top", KeyType::Integer, "rows of the printed ranking")
                    .range(1, 100000)
                    .setting(T, T, member<&S::top>(), "10"));
}

}  // namespace

const std::vector<SearchKey>& search_keys() {
    static const std::vector<SearchKey> keys = [] {
        std::vector<SearchKey> k;
        add_device_axis(k);
        add_training_axes(k);
        add_serving_axes(k);
        add_settings(k);
        add_rl_axes(k);
        return k;
    }();
    return keys;
}

std::string SearchKey::kinds() const {
    std::string out;
    for (WorkloadKind kind : {WorkloadKind::Training, WorkloadKind::Serving, WorkloadKind::Rl})
        if (serves(kind)) out += std::string(out.empty() ? "" : " and ") + sim::name(kind);
    return out;
}

const SearchKey* find_search_key(const std::string& path, const std::vector<SearchKey>& keys) {
    for (const SearchKey& k : keys)
        if (k.info.path == path) return &k;
    return nullptr;
}

void set_search_key(SearchSpace& space, const std::string& path, const KeyValue& value,
                    const std::vector<SearchKey>& keys) {
    const SearchKey* k = find_search_key(path, keys);
    if (!k) throw sim::InputError("unknown search key", "", 0, path);
    const std::string why = check_value(k->info, value);
    if (!why.empty()) throw sim::InputError(why, "", 0, path);
    if (!k->is_axis()) return k->set(space, value);
    Values values;
    if (const auto* list = std::get_if<std::vector<int64_t>>(&value)) values.assign(list->begin(), list->end());
    else
        for (const std::string& v : split_choices(to_str(value))) values.push_back(v);
    if (values.empty())
        throw sim::InputError(
            "an empty list searches nothing: give the values to try, or leave the axis out for its "
            "default",
            "", 0, path);
    space.set_axis(path, std::move(values));
}

KeyValue get_search_key(const SearchSpace& space, const std::string& path, const std::vector<SearchKey>& keys) {
    const SearchKey* k = find_search_key(path, keys);
    if (!k) throw sim::InputError("unknown search key", "", 0, path);
    if (!k->is_axis()) return k->get(space);
    const Values* values = space.given(path);
    if (k->info.type == KeyType::IntegerList) {
        std::vector<int64_t> out;
        if (values)
            for (const KeyValue& v : *values) out.push_back(std::get<int64_t>(v));
        return out;
    }
    std::vector<std::string> out;
    if (values)
        for (const KeyValue& v : *values) out.push_back(to_str(v));
    return joined(out);
}

}  // namespace fathom::plans
