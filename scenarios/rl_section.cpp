#include "scenarios/rl_section.h"

#include "plans/constraints.h"
#include "plans/keys.h"
#include "plans/rl_evaluate.h"
#include "scenarios/scenario_sections.h"
#include "scenarios/schema.h"
#include "sim/error.h"

#include <set>
#include <string>

namespace fathom::scenarios {
namespace {

using workloads::rl::Layout;
using workloads::rl::RlPlan;

// rl.prompt or rl.response: an integer, or a mapping of the length-distribution keys.
void read_length(const Node& rl, const char* which, workloads::LengthDistribution& dist, RlPlan& p,
                 std::set<std::string>& given) {
    if (!rl.has(which)) rl.fail("", std::string("missing required key '") + which + "'");
    const Node n = rl.child(which);
    if (n.is_scalar()) {
        dist.kind = workloads::LengthKind::Fixed;
        dist.value = rl.integer(which);
        if (dist.value < 1) rl.fail(which, "must be >= 1 token");
        return;
    }
    const std::string prefix = std::string("rl.") + which;
    check_section_keys(n, prefix);
    read_section(n, prefix, plans::rl_keys(), p, &given);
    if (auto why = dist.check(); !why.empty()) n.fail("", why);
}

}  // namespace

RlPlan parse_rl(const Node& root, const plans::Catalog& catalog, const hardware::ClusterSpec& cluster) {
    RlPlan p;
    std::set<std::string> given;
    const Node rl = root.child("rl");
    check_section_keys(rl, "rl", {"prompt", "response"});
    read_section(rl, "rl", plans::rl_keys(), p, &given);
    read_length(rl, "prompt", p.rl.prompt_len, p, given);
    read_length(rl, "response", p.rl.response_len, p, given);
    auto& s = p.rl;
    if (!given.count("rl.sync"))
        s.sync = s.layout == Layout::Colocated ? workloads::rl::SyncPath::Ipc : workloads::rl::SyncPath::Nccl;
    for (const char* key : {"reward_model", "critic"}) {
        const std::string& id = key[0] == 'r' ? s.reward_model : s.critic;
        if (id.empty()) continue;
        try {
            (void)catalog.model(id);
        } catch (const sim::InputError& e) {
            rl.fail(key, e.bare_message());
        }
    }
    // The pools.
    const int64_t gpus = cluster.gpus();
    if (s.layout == Layout::Disaggregated) {
        if (!given.count("rl.rollout_gpus"))
            rl.fail("", "missing required key 'rollout_gpus' (a disaggregated layout's rollout pool)");
        if (s.rollout_gpus >= gpus)
            rl.fail("rollout_gpus", "the rollout pool's " + std::to_string(s.rollout_gpus) +
                                        " GPUs leave none of the cluster's " + std::to_string(gpus) +
                                        " to the trainer");
    } else if (given.count("rl.rollout_gpus") && s.rollout_gpus != gpus) {
        rl.fail("rollout_gpus", "colocated: rollout and training share all " + std::to_string(gpus) +
                                    " GPUs (a pool of its own needs rl.layout: disaggregated)");
    }
    const int64_t rollout = s.rollout_pool(gpus), trainer = s.trainer_pool(gpus);
    // The trainer: its global batch is the rollout batch's, packed.
    if (auto t = root.find("training")) {
        if (t->has("global_batch_size"))
            t->fail("global_batch_size",
                    "an RL scenario derives it: rl.prompts x rl.samples answers packed into training.seq_len "
                    "sequences, over rl.minibatches optimizer steps");
        if (t->has("documents"))
            t->fail("documents", "an RL scenario packs its answers: their lengths are rl.prompt's and rl.response's");
    }
    if (auto sv = root.find("serving"); sv && sv->has("autoscale"))
        sv->fail("autoscale", "rollout engines serve one batch at a time: they do not autoscale");
    p.trainer = parse_training(root, catalog, trainer, {"training.global_batch_size"});
    // The rollout engines: each prompt's answers to one replica unless the scenario routes otherwise.
    std::set<std::string> served;
    read_serving_section(root, catalog, p.rollout, served);
    if (!served.count("serving.router")) p.rollout.router = "prefix-affinity";
    finish_serving(root, catalog, plans::rl_pool_cluster(cluster, rollout), p.rollout, served);
    return p;
}

}  // namespace fathom::scenarios
