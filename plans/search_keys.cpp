// The `search` keys of a training scenario (TrainingSearchSpace, plans/search_space.h), declared
// once: the parser, `fathom list keys` and the key reference read this table.
#include "plans/key_decl.h"
#include "plans/keys.h"
#include "workloads/training/schedules/pipeline_schedule.h"

namespace fathom::plans {
namespace {

using namespace key_decl;
using S = TrainingSearchSpace;

std::vector<int64_t> ints(const KeyValue& v) { return std::get<std::vector<int64_t>>(v); }

KeyValue joined(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ",") + x;
    return out;
}

}  // namespace

const std::vector<Key<TrainingSearchSpace>>& search_keys() {
    static const std::vector<Key<S>> keys = [] {
        std::vector<std::string> schedules = {"auto"};
        for (const auto& e : workloads::schedule_registry().entries()) schedules.push_back(e.name);
        std::vector<Key<S>> k;
        auto axis = [&k](const char* path, const char* doc, const char* by_default, double lo, double hi, void (*set)(S&, const KeyValue&),
                         KeyValue (*get)(const S&)) {
            k.push_back({Decl(path, KeyType::IntegerList, doc).range(lo, hi).by_default(by_default), set, get});
        };
        axis("search.tp", "tensor-parallel degrees tried", "divisors of cluster.gpus_per_node that divide the query heads", 1, kMaxInt,
             [](S& s, const KeyValue& v) { s.tp = ints(v); }, [](const S& s) -> KeyValue { return s.tp; });
        axis("search.pp", "pipeline-parallel degrees tried", "divisors of gcd(layers, GPUs) up to 64 (even splits)", 1, kMaxInt,
             [](S& s, const KeyValue& v) { s.pp = ints(v); }, [](const S& s) -> KeyValue { return s.pp; });
        axis("search.vp", "virtual stages per pipeline rank tried (with pp > 1)", "[1, 2, 4]", 1, kMaxInt,
             [](S& s, const KeyValue& v) { s.vp = ints(v); }, [](const S& s) -> KeyValue { return s.vp; });
        axis("search.cp", "context-parallel degrees tried", "the scenario's parallel.cp", 1, kMaxInt,
             [](S& s, const KeyValue& v) { s.cp = ints(v); }, [](const S& s) -> KeyValue { return s.cp; });
        axis("search.ep", "expert-parallel degrees tried (mixture-of-experts models)", "the scenario's parallel.ep", 1, kMaxInt,
             [](S& s, const KeyValue& v) { s.ep = ints(v); }, [](const S& s) -> KeyValue { return s.ep; });
        axis("search.micro_batch_size", "micro-batch sizes tried", "[1, 2, 4]", 1, kMaxInt,
             [](S& s, const KeyValue& v) { s.micro_batch = ints(v); }, [](const S& s) -> KeyValue { return s.micro_batch; });
        axis("search.global_batch_size", "global batch sizes tried, sequences", "the scenario's training.global_batch_size", 1, kMaxInt,
             [](S& s, const KeyValue& v) { s.global_batch = ints(v); }, [](const S& s) -> KeyValue { return s.global_batch; });
        axis("search.zero_stage", "ZeRO stages tried", "[0, 1, 2, 3]", 0, 3,
             [](S& s, const KeyValue& v) { s.zero_stage = ints(v); }, [](const S& s) -> KeyValue { return s.zero_stage; });
        k.push_back({Decl("search.recompute", KeyType::ChoiceList, "recomputation modes tried")
                         .choices({"none", "selective", "full"})
                         .by_default("all three"),
                     [](S& s, const KeyValue& v) { s.recompute = split_choices(to_str(v)); },
                     [](const S& s) -> KeyValue { return joined(s.recompute); }});
        k.push_back({Decl("search.schedule", KeyType::ChoiceList,
                          "pipeline schedules tried; auto: 1f1b, or interleaved-1f1b when vp > 1")
                         .choices(schedules)
                         .by_default("auto"),
                     [](S& s, const KeyValue& v) { s.schedule = split_choices(to_str(v)); },
                     [](const S& s) -> KeyValue { return joined(s.schedule); }});
        k.push_back({Decl("search.dtype", KeyType::ChoiceList, "GEMM dtypes tried (stack.dtype)")
                         .choices({"bf16", "fp16", "fp8"})
                         .by_default("the scenario's stack.dtype"),
                     [](S& s, const KeyValue& v) { s.dtype = split_choices(to_str(v)); },
                     [](const S& s) -> KeyValue { return joined(s.dtype); }});
        k.push_back({Decl("search.b_noise", KeyType::Number,
                          "gradient noise scale in sequences (McCandlish et al. 2018): a sequence in a batch of B is worth "
                          "(b_noise + B0) / (b_noise + B) of one at the scenario's batch B0; goodput = throughput x that")
                         .range(0)
                         .by_default("none (statistical efficiency 1)"),
                     [](S& s, const KeyValue& v) { s.b_noise = to_double(v); },
                     [](const S& s) -> KeyValue { return s.b_noise; }});
        k.push_back({Decl("search.price_per_gpu_hour", KeyType::Number, "USD per GPU-hour, for the cost per million tokens")
                         .range(0)
                         .by_default("none (no cost column)"),
                     [](S& s, const KeyValue& v) { s.price_per_gpu_hour = to_double(v); },
                     [](const S& s) -> KeyValue { return s.price_per_gpu_hour; }});
        k.push_back({Decl("search.objective", KeyType::Choice, "what ranks the plans: goodput, throughput, or cost per token")
                         .choices({"goodput", "throughput", "cost"})
                         .by_default("goodput"),
                     [](S& s, const KeyValue& v) { s.objective = to_str(v); },
                     [](const S& s) -> KeyValue { return s.objective; }});
        k.push_back({Decl("search.top", KeyType::Integer, "rows of the printed ranking").range(1, 100000).by_default("10"),
                     [](S& s, const KeyValue& v) { s.top = to_int32(v); },
                     [](const S& s) -> KeyValue { return int64_t{s.top}; }});
        return k;
    }();
    return keys;
}

}  // namespace fathom::plans
