// The RL search's axes (plans/search_keys.h: add_rl_axes), in the order the search crosses them:
// the layout, the rollout pool, the rollout engines' and the trainer's shapes, the batch, the
// staleness bound. Each defaults to the scenario's own value.
#include "plans/key_decl.h"
#include "plans/search_keys.h"

namespace fathom::plans {
namespace {

using namespace key_decl;
using workloads::rl::RlPlan;

KeyValue rl_value(const RlPlan& p, const std::string& path) {
    for (const auto& k : rl_search_plan_keys())
        if (k.info.path == path) return k.get(p);
    throw sim::InternalError("no RL plan key " + path);
}

SearchKey axis(const char* path, KeyType type, const std::string& doc, const std::string& sets) {
    SearchKey key;
    Decl decl(path, type, "rl: " + doc);
    if (type == KeyType::IntegerList) decl.range(sets == "rl.staleness" ? 0 : 1, kMaxInt);
    if (type == KeyType::ChoiceList) decl.choices_of<workloads::rl::Layout>();
    decl.by_default("the scenario's " + sets);
    key.info = decl;
    key.rl = AxisRule<RlPlan>{sets, "the scenario's " + sets, [sets](const SearchBase&, const RlPlan& p) {
                                  return std::vector<KeyValue>{rl_value(p, sets)};
                              }};
    return key;
}

}  // namespace

// Declarative table: the RL axes, in crossing order.
void add_rl_axes(std::vector<SearchKey>& k) {
    constexpr KeyType ints = KeyType::IntegerList;
    k.push_back(axis("search.rl_layout", KeyType::ChoiceList, "layouts tried (colocated, disaggregated)", "rl.layout"));
    k.push_back(axis("search.rl_rollout_gpus", ints, "rollout pool sizes tried (disaggregated)", "rl.rollout_gpus"));
    k.push_back(axis("search.rl_rollout_tp", ints, "rollout engines' tensor-parallel degrees tried", "serving.tp"));
    k.push_back(axis("search.rl_trainer_tp", ints, "trainer tensor-parallel degrees tried", "parallel.tp"));
    k.push_back(axis("search.rl_trainer_pp", ints, "trainer pipeline-parallel degrees tried", "parallel.pp"));
    k.push_back(axis("search.rl_samples", ints, "answers per prompt tried (N)", "rl.samples"));
    k.push_back(axis("search.rl_prompts", ints, "prompts per iteration tried", "rl.prompts"));
    k.push_back(axis("search.rl_staleness", ints, "staleness bounds tried (0: synchronous)", "rl.staleness"));
    // The settings an RL search reads.
    for (SearchKey& key : k)
        if (key.info.path == "search.objective" || key.info.path == "search.price_per_gpu_hour" ||
            key.info.path == "search.top")
            key.setting_for_rl = true;
}

}  // namespace fathom::plans
