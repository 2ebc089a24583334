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

std::vector<int64_t> ints(const KeyValue& v) { return std::get<std::vector<int64_t>>(v); }

KeyValue joined(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ",") + x;
    return out;
}

const char* const kServingOnly[] = {"search.accelerator", "search.replicas",     "search.disaggregation",
                                    "search.policy",      "search.max_num_seqs", "search.max_num_batched_tokens",
                                    "search.prices"};
const char* const kBoth[] = {"search.tp", "search.pp", "search.price_per_gpu_hour", "search.objective", "search.top"};

bool listed(const std::string& path, const char* const* begin, const char* const* end) {
    for (auto p = begin; p != end; ++p)
        if (path == *p) return true;
    return false;
}

}  // namespace

bool is_serving_search_key(const std::string& path) {
    return listed(path, std::begin(kServingOnly), std::end(kServingOnly));
}

bool is_training_search_key(const std::string& path) {
    return path.rfind("search.", 0) == 0 && !is_serving_search_key(path) &&
           !listed(path, std::begin(kBoth), std::end(kBoth));
}

const std::vector<Key<SearchSpace>>& search_keys() {
    static const std::vector<Key<S>> keys = [] {
        std::vector<std::string> schedules = {"auto"};
        for (const auto& e : workloads::schedule_registry().entries()) schedules.push_back(e.name);
        std::vector<Key<S>> k;
        auto axis = [&k](const char* path, const char* doc, const char* by_default, double lo, double hi,
                         void (*set)(S&, const KeyValue&), KeyValue (*get)(const S&)) {
            k.push_back({Decl(path, KeyType::IntegerList, doc).range(lo, hi).by_default(by_default), set, get});
        };
        axis(
            "search.tp", "tensor-parallel degrees tried (training; serving: of one replica)",
            "divisors of cluster.gpus_per_node that divide the query heads", 1, kMaxInt,
            [](S& s, const KeyValue& v) { s.tp = ints(v); }, [](const S& s) -> KeyValue { return s.tp; });
        axis(
            "search.pp", "pipeline-parallel degrees tried (training; serving: of one replica)",
            "training: divisors of gcd(layers, GPUs) up to 64 (even splits); serving: [1]", 1, kMaxInt,
            [](S& s, const KeyValue& v) { s.pp = ints(v); }, [](const S& s) -> KeyValue { return s.pp; });
        axis(
            "search.vp", "virtual stages per pipeline rank tried (with pp > 1) (training)", "[1, 2, 4]", 1, kMaxInt,
            [](S& s, const KeyValue& v) { s.vp = ints(v); }, [](const S& s) -> KeyValue { return s.vp; });
        axis(
            "search.cp", "context-parallel degrees tried (training)", "the scenario's parallel.cp", 1, kMaxInt,
            [](S& s, const KeyValue& v) { s.cp = ints(v); }, [](const S& s) -> KeyValue { return s.cp; });
        axis(
            "search.ep", "expert-parallel degrees tried (mixture-of-experts models) (training)",
            "the scenario's parallel.ep", 1, kMaxInt, [](S& s, const KeyValue& v) { s.ep = ints(v); },
            [](const S& s) -> KeyValue { return s.ep; });
        axis(
            "search.micro_batch_size", "micro-batch sizes tried (training)", "[1, 2, 4]", 1, kMaxInt,
            [](S& s, const KeyValue& v) { s.micro_batch = ints(v); },
            [](const S& s) -> KeyValue { return s.micro_batch; });
        axis(
            "search.global_batch_size", "global batch sizes tried, sequences (training)",
            "the scenario's training.global_batch_size", 1, kMaxInt,
            [](S& s, const KeyValue& v) { s.global_batch = ints(v); },
            [](const S& s) -> KeyValue { return s.global_batch; });
        axis(
            "search.zero_stage", "ZeRO stages tried (training)", "[0, 1, 2, 3]", 0, 3,
            [](S& s, const KeyValue& v) { s.zero_stage = ints(v); },
            [](const S& s) -> KeyValue { return s.zero_stage; });
        k.push_back({Decl("search.recompute", KeyType::ChoiceList, "recomputation modes tried (training)")
                         .choices({"none", "selective", "full"})
                         .by_default("all three"),
                     [](S& s, const KeyValue& v) { s.recompute = split_choices(to_str(v)); },
                     [](const S& s) -> KeyValue { return joined(s.recompute); }});
        k.push_back({Decl("search.schedule", KeyType::ChoiceList,
                          "pipeline schedules tried (training); auto: 1f1b, or interleaved-1f1b when vp > 1")
                         .choices(schedules)
                         .by_default("auto"),
                     [](S& s, const KeyValue& v) { s.schedule = split_choices(to_str(v)); },
                     [](const S& s) -> KeyValue { return joined(s.schedule); }});
        k.push_back({Decl("search.dtype", KeyType::ChoiceList, "GEMM dtypes tried (training: stack.dtype)")
                         .choices({"bf16", "fp16", "fp8"})
                         .by_default("the scenario's stack.dtype"),
                     [](S& s, const KeyValue& v) { s.dtype = split_choices(to_str(v)); },
                     [](const S& s) -> KeyValue { return joined(s.dtype); }});
        k.push_back(
            {Decl("search.b_noise", KeyType::Number,
                  "training: gradient noise scale in sequences (McCandlish et al. 2018): a sequence in a batch of B is "
                  "worth "
                  "(b_noise + B0) / (b_noise + B) of one at the scenario's batch B0; goodput = throughput x that")
                 .range(0)
                 .by_default("none (statistical efficiency 1)"),
             [](S& s, const KeyValue& v) { s.b_noise = to_double(v); },
             [](const S& s) -> KeyValue { return s.b_noise; }});
        k.push_back(
            {Decl("search.b_noise_final", KeyType::Number,
                  "training: the gradient noise scale at the end of the run, sequences; it grows from search.b_noise "
                  "geometrically in the progress (adaptive runs)")
                 .range(0)
                 .by_default("search.b_noise throughout"),
             [](S& s, const KeyValue& v) { s.b_noise_final = to_double(v); },
             [](const S& s) -> KeyValue { return s.b_noise_final; }});
        k.push_back(
            {Decl("search.target_tokens", KeyType::Number,
                  "training: the run's length, tokens trained at the scenario's global batch; with phases > 1, the "
                  "adaptive run (COPUS) and the best fixed plan to the same target are reported")
                 .range(1)
                 .by_default("none (no time to target)"),
             [](S& s, const KeyValue& v) { s.target_tokens = to_double(v); },
             [](const S& s) -> KeyValue { return s.target_tokens; }});
        k.push_back(
            {Decl("search.phases", KeyType::Integer,
                  "training: phases of the adaptive run, each on the plan and global batch that finish it soonest")
                 .range(1, 1000)
                 .by_default("1 (one plan for the whole run)"),
             [](S& s, const KeyValue& v) { s.phases = to_int32(v); },
             [](const S& s) -> KeyValue { return int64_t{s.phases}; }});
        k.push_back(
            {Decl("search.restart_s", KeyType::Number,
                  "training: seconds to restart the job on a new layout, besides saving and loading the checkpoint "
                  "(process launch, communicator set-up, data loader)")
                 .range(0)
                 .by_default("0"),
             [](S& s, const KeyValue& v) { s.restart_s = to_double(v); },
             [](const S& s) -> KeyValue { return s.restart_s; }});
        k.push_back(
            {Decl("search.price_per_gpu_hour", KeyType::Number,
                  "USD per GPU-hour, for the cost columns (serving: of every device type search.prices does not name)")
                 .range(0)
                 .by_default("none (no cost column)"),
             [](S& s, const KeyValue& v) { s.price_per_gpu_hour = to_double(v); },
             [](const S& s) -> KeyValue { return s.price_per_gpu_hour; }});
        k.push_back(
            {Decl("search.objective", KeyType::Choice,
                  "what ranks the plans. training: goodput (throughput x statistical efficiency), throughput, or "
                  "cost per token; serving: goodput (requests meeting the SLOs per second per GPU at the "
                  "scenario's traffic), throughput (output tokens/s per GPU), cost (USD per 1,000 requests "
                  "meeting the SLOs), or capacity (the highest rate meeting slo.target, `fathom capacity`, per GPU "
                  "or, with prices, per USD-hour)")
                 .choices({"goodput", "throughput", "cost", "capacity"})
                 .by_default("goodput"),
             [](S& s, const KeyValue& v) { s.objective = to_str(v); },
             [](const S& s) -> KeyValue { return s.objective; }});
        // Serving axes.
        k.push_back(
            {Decl("search.accelerator", KeyType::ChoiceList,
                  "serving: device types tried (accelerator catalog ids, `fathom list accelerators`); each candidate's "
                  "replicas run on that device in nodes shaped as the cluster's")
                 .shown_as("list of text")
                 .by_default("the cluster's accelerator"),
             [](S& s, const KeyValue& v) { s.accelerator = split_choices(to_str(v)); },
             [](const S& s) -> KeyValue { return joined(s.accelerator); }});
        axis(
            "search.replicas", "serving: replica counts tried (both pools together when disaggregated)",
            "1, 2, 4, ... and the most that fit the cluster's GPUs", 1, kMaxInt,
            [](S& s, const KeyValue& v) { s.replicas = ints(v); }, [](const S& s) -> KeyValue { return s.replicas; });
        k.push_back(
            {Decl("search.disaggregation", KeyType::ChoiceList,
                  "serving: off (aggregated replicas) and/or on (every split of the replicas into x prefill and y "
                  "decode replicas, xPyD, each of tp x pp, the KV cache moving between them)")
                 .choices({"off", "on"})
                 .by_default("off"),
             [](S& s, const KeyValue& v) { s.disaggregation = split_choices(to_str(v)); },
             [](const S& s) -> KeyValue { return joined(s.disaggregation); }});
        k.push_back(
            {Decl("search.policy", KeyType::ChoiceList, "serving: batching policies tried (`fathom list policies`)")
                 .choices(registry_names(workloads::serving::policy_registry()))
                 .by_default("the scenario's serving.policy"),
             [](S& s, const KeyValue& v) { s.policy = split_choices(to_str(v)); },
             [](const S& s) -> KeyValue { return joined(s.policy); }});
        axis(
            "search.max_num_seqs", "serving: running sequences per replica at most, values tried", "the scenario's", 1,
            kMaxInt, [](S& s, const KeyValue& v) { s.max_num_seqs = ints(v); },
            [](const S& s) -> KeyValue { return s.max_num_seqs; });
        axis(
            "search.max_num_batched_tokens", "serving: token budgets per iteration (chunked-prefill budget) tried",
            "the scenario's", 1, kMaxInt, [](S& s, const KeyValue& v) { s.max_num_batched_tokens = ints(v); },
            [](const S& s) -> KeyValue { return s.max_num_batched_tokens; });
        k.push_back({Decl("search.prices", KeyType::ChoiceList,
                          "serving: USD per GPU-hour of each device type, as ID=USD entries (h200-sxm-141gb=3.5)")
                         .shown_as("list of text")
                         .by_default("search.price_per_gpu_hour for every type"),
                     [](S& s, const KeyValue& v) {
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
                                 throw sim::InputError("expected ID=USD (h100-sxm-80gb=2.5), got '" + e + "'", "", 0,
                                                       "search.prices");
                             s.prices.emplace_back(e.substr(0, eq), usd);
                         }
                     },
                     [](const S& s) -> KeyValue {
                         std::vector<std::string> v;
                         for (const auto& [id, usd] : s.prices) v.push_back(id + "=" + format_value(usd));
                         return joined(v);
                     }});
        k.push_back(
            {Decl("search.top", KeyType::Integer, "rows of the printed ranking").range(1, 100000).by_default("10"),
             [](S& s, const KeyValue& v) { s.top = to_int32(v); },
             [](const S& s) -> KeyValue { return int64_t{s.top}; }});
        return k;
    }();
    return keys;
}

}  // namespace fathom::plans
