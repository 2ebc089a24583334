// The `search` keys of a scenario (SearchSpace, plans/search_space.h), declared once: the parser,
// `fathom list keys` and the key reference read this table. Each key's doc says which kind of
// scenario it serves when not both.
#include "plans/key_decl.h"
#include "plans/keys.h"
#include "sim/error.h"
#include "workloads/serving/batching/policy.h"
#include "workloads/training/schedules/pipeline_schedule.h"

#include <cmath>

namespace fathom::plans {
namespace {

using namespace key_decl;
using S = SearchSpace;

const char* const kServingOnly[] = {"search.accelerator", "search.replicas",     "search.disaggregation",
                                    "search.policy",      "search.max_num_seqs", "search.max_num_batched_tokens",
                                    "search.prices"};
const char* const kBoth[] = {"search.tp", "search.pp", "search.price_per_gpu_hour", "search.objective", "search.top"};

bool listed(const std::string& path, const char* const* begin, const char* const* end) {
    for (auto p = begin; p != end; ++p)
        if (path == *p) return true;
    return false;
}

// search.prices: ID=USD entries.
void set_prices(S& s, const KeyValue& v) {
    s.prices.clear();
    for (const auto& e : split_choices(to_str(v))) {
        const auto eq = e.find('=');
        double usd = -1;
        if (eq != std::string::npos && eq > 0) {
            try {
                size_t pos = 0;
                usd = std::stod(e.substr(eq + 1), &pos);
                if (pos != e.size() - eq - 1) usd = -1;
            } catch (const std::exception&) {}
        }
        if (!(usd >= 0) || !std::isfinite(usd))
            throw sim::InputError("expected ID=USD (h100-sxm-80gb=2.5), got '" + e + "'", "", 0, "search.prices");
        s.prices.emplace_back(e.substr(0, eq), usd);
    }
}

KeyValue get_prices(const S& s) {
    std::vector<std::string> v;
    for (const auto& [id, usd] : s.prices) v.push_back(id + "=" + format_value(usd));
    return joined(v);
}

}  // namespace

bool is_serving_search_key(const std::string& path) {
    return listed(path, std::begin(kServingOnly), std::end(kServingOnly));
}

bool is_training_search_key(const std::string& path) {
    return path.rfind("search.", 0) == 0 && !is_serving_search_key(path) &&
           !listed(path, std::begin(kBoth), std::end(kBoth));
}

// Declarative table: the search.* keys (training axes, serving axes, ranking).
const std::vector<Key<SearchSpace>>& search_keys() {
    static const std::vector<Key<S>> keys = [] {
        std::vector<std::string> schedules = {"auto"};
        for (const auto& name : registry_names(workloads::schedule_registry())) schedules.push_back(name);
        std::vector<Key<S>> k;
        auto axis = [&k](const char* path, const char* doc, const char* by_default, double lo, double hi,
                         Key<S>::Access access) {
            k.push_back({Decl(path, KeyType::IntegerList, doc).range(lo, hi).by_default(by_default), access});
        };
        axis("search.tp", "tensor-parallel degrees tried (training; serving: of one replica)",
             "divisors of cluster.gpus_per_node that divide the query heads", 1, kMaxInt, member<&S::tp>());
        axis("search.pp", "pipeline-parallel degrees tried (training; serving: of one replica)",
             "training: divisors of gcd(layers, GPUs) up to 64 (even splits); serving: [1]", 1, kMaxInt,
             member<&S::pp>());
        axis("search.vp", "virtual stages per pipeline rank tried (with pp > 1) (training)", "[1, 2, 4]", 1, kMaxInt,
             member<&S::vp>());
        axis("search.cp", "context-parallel degrees tried (training)", "the scenario's parallel.cp", 1, kMaxInt,
             member<&S::cp>());
        axis("search.ep", "expert-parallel degrees tried (mixture-of-experts models) (training)",
             "the scenario's parallel.ep", 1, kMaxInt, member<&S::ep>());
        axis("search.micro_batch_size", "micro-batch sizes tried (training)", "[1, 2, 4]", 1, kMaxInt,
             member<&S::micro_batch>());
        axis("search.global_batch_size", "global batch sizes tried, sequences (training)",
             "the scenario's training.global_batch_size", 1, kMaxInt, member<&S::global_batch>());
        axis("search.zero_stage", "ZeRO stages tried (training)", "[0, 1, 2, 3]", 0, 3, member<&S::zero_stage>());
        k.push_back({Decl("search.recompute", KeyType::ChoiceList, "recomputation modes tried (training)")
                         .choices_of<workloads::Recompute>()
                         .by_default("all three"),
                     member<&S::recompute>()});
        k.push_back({Decl("search.schedule", KeyType::ChoiceList,
                          std::string("pipeline schedules tried (training); auto: ") + workloads::kDefaultScheduleRule)
                         .choices(schedules)
                         .by_default("auto"),
                     member<&S::schedule>()});
        k.push_back({Decl("search.dtype", KeyType::ChoiceList, "GEMM dtypes tried (training: stack.dtype)")
                         .choices(plan_dtype_choices())
                         .by_default("the scenario's stack.dtype"),
                     member<&S::dtype>()});
        k.push_back(
            {Decl("search.b_noise", KeyType::Number,
                  "training: gradient noise scale in sequences (McCandlish et al. 2018): a sequence in a batch of B is "
                  "worth "
                  "(b_noise + B0) / (b_noise + B) of one at the scenario's batch B0; goodput = throughput x that")
                 .range(0)
                 .by_default("none (statistical efficiency 1)"),
             member<&S::b_noise>()});
        k.push_back(
            {Decl("search.b_noise_final", KeyType::Number,
                  "training: the gradient noise scale at the end of the run, sequences; it grows from search.b_noise "
                  "geometrically in the progress (adaptive runs)")
                 .range(0)
                 .by_default("search.b_noise throughout"),
             member<&S::b_noise_final>()});
        k.push_back(
            {Decl("search.target_tokens", KeyType::Number,
                  "training: the run's length, tokens trained at the scenario's global batch; with phases > 1, the "
                  "adaptive run (COPUS) and the best fixed plan to the same target are reported")
                 .range(1)
                 .by_default("none (no time to target)"),
             member<&S::target_tokens>()});
        k.push_back(
            {Decl("search.phases", KeyType::Integer,
                  "training: phases of the adaptive run, each on the plan and global batch that finish it soonest")
                 .range(1, 1000)
                 .by_default("1 (one plan for the whole run)"),
             member<&S::phases>()});
        k.push_back(
            {Decl("search.restart_s", KeyType::Number,
                  "training: seconds to restart the job on a new layout, besides saving and loading the checkpoint "
                  "(process launch, communicator set-up, data loader)")
                 .range(0)
                 .by_default("0"),
             member<&S::restart_s>()});
        k.push_back(
            {Decl("search.price_per_gpu_hour", KeyType::Number,
                  "USD per GPU-hour, for the cost columns (serving: of every device type search.prices does not name)")
                 .range(0)
                 .by_default("none (no cost column)"),
             member<&S::price_per_gpu_hour>()});
        k.push_back(
            {Decl("search.objective", KeyType::Choice,
                  "what ranks the plans. training: goodput (throughput x statistical efficiency), throughput, or "
                  "cost per token; serving: goodput (requests meeting the SLOs per second per GPU at the "
                  "scenario's traffic), throughput (output tokens/s per GPU), cost (USD per 1,000 requests "
                  "meeting the SLOs), or capacity (the highest rate meeting slo.target, `fathom capacity`, per GPU "
                  "or, with prices, per USD-hour)")
                 .choices({"goodput", "throughput", "cost", "capacity"})
                 .by_default("goodput"),
             member<&S::objective>()});
        // Serving axes.
        k.push_back(
            {Decl("search.accelerator", KeyType::ChoiceList,
                  "serving: device types tried (accelerator catalog ids, `fathom list accelerators`); each candidate's "
                  "replicas run on that device in nodes shaped as the cluster's")
                 .shown_as("list of text")
                 .by_default("the cluster's accelerator"),
             member<&S::accelerator>()});
        axis("search.replicas", "serving: replica counts tried (both pools together when disaggregated)",
             "1, 2, 4, ... and the most that fit the cluster's GPUs", 1, kMaxInt, member<&S::replicas>());
        k.push_back(
            {Decl("search.disaggregation", KeyType::ChoiceList,
                  "serving: off (aggregated replicas) and/or on (every split of the replicas into x prefill and y "
                  "decode replicas, xPyD, each of tp x pp, the KV cache moving between them)")
                 .choices({"off", "on"})
                 .by_default("off"),
             member<&S::disaggregation>()});
        k.push_back(
            {Decl("search.policy", KeyType::ChoiceList, "serving: batching policies tried (`fathom list policies`)")
                 .choices(registry_names(workloads::serving::policy_registry()))
                 .by_default("the scenario's serving.policy"),
             member<&S::policy>()});
        axis("search.max_num_seqs", "serving: running sequences per replica at most, values tried", "the scenario's", 1,
             kMaxInt, member<&S::max_num_seqs>());
        axis("search.max_num_batched_tokens", "serving: token budgets per iteration (chunked-prefill budget) tried",
             "the scenario's", 1, kMaxInt, member<&S::max_num_batched_tokens>());
        k.push_back({Decl("search.prices", KeyType::ChoiceList,
                          "serving: USD per GPU-hour of each device type, as ID=USD entries (h200-sxm-141gb=3.5)")
                         .shown_as("list of text")
                         .by_default("search.price_per_gpu_hour for every type"),
                     &set_prices, &get_prices});
        k.push_back(
            {Decl("search.top", KeyType::Integer, "rows of the printed ranking").range(1, 100000).by_default("10"),
             member<&S::top>()});
        return k;
    }();
    return keys;
}

}  // namespace fathom::plans
