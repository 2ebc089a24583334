#pragma once
// What the serving dialects (vllm.cpp, sglang.cpp, trtllm.cpp) share: the pools of a plan with
// their GPUs laid out on the nodes, the model argument, and the plan's formats by key.
#include "scenarios/launch/launch.h"

#include <map>
#include <string>
#include <vector>

namespace fathom::scenarios::launch {

// One engine instance of a pool: a replica's GPUs (consecutive, node by node).
struct Instance {
    int index = 0;     // within its pool
    int node = 0;      // the node its first GPU is on
    int nodes = 1;     // nodes it spans (> 1: a multi-node engine)
    std::string gpus;  // CUDA_VISIBLE_DEVICES on its first node ("0,1,2,3")
};

struct PoolLaunch {
    std::string role;  // "aggregated", "prefill", "decode"
    const workloads::serving::PoolLayout* layout = nullptr;
    std::vector<Instance> instances;  // one per replica
};

// The plan's pools (aggregated, or prefill then decode), each pool's replicas placed from GPU 0 of
// node 0 on (the prefill pool's nodes first); `engine_gpus` > tp x pp for an engine that holds
// several replicas as data-parallel ranks (one instance of `engine_gpus` GPUs then).
std::vector<PoolLaunch> pool_launches(const Job& job, bool one_engine_per_pool);
// Whether a pool of the plan is expert-parallel (its engine then holds the pool's replicas as
// data-parallel ranks: one instance a pool).
bool any_expert_parallel(const workloads::serving::ServingPlan& plan);
// The model: its Hugging Face repository, or ${MODEL:?...} naming the model when unknown.
std::string model_argument(const Job& job);
// A serving key's value as text ("fp8", "w4a16", "true").
std::string serving_value(const Job& job, const std::string& key);
// The header every serving script starts with: what it serves, on what, and what the files do not
// carry (the router the simulation put in front, an autoscaler, the traffic).
std::string serving_header(const Job& job, const std::string& engine, const std::string& sources);
// Instance `i` of `pool` in its pool's script: a comment naming its node (and, for an engine over
// several nodes, `spanning`: how it runs there), a NODE_RANK guard when the pool spans nodes (none
// for a multi-node engine started on each of its nodes, `on_each`), the command in the background;
// the first instance's with the flags' sources.
std::string instance_text(const PoolLaunch& pool, size_t i, const CommandLine& c, const std::string& sources,
                          const std::string& spanning, bool on_each);
// The commands of a script that start with the words `start`: how many, and the last one's flags
// (a pool's instances share them).
struct Commands {
    int64_t count = 0;
    std::map<std::string, std::string> flags;
};
Commands commands_of(const std::vector<std::string>& words, const std::vector<std::string>& start);

// Refuses the plan settings none of the engines' flags carry yet (KV offloading, two-batch overlap,
// multi-step scheduling), naming the key.
void check_common(const Job& job, const std::string& framework);

}  // namespace fathom::scenarios::launch
