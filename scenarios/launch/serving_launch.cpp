#include "scenarios/launch/serving_launch.h"

#include "plans/keys.h"

#include <algorithm>

namespace fathom::scenarios::launch {

std::vector<PoolLaunch> pool_launches(const Job& job, bool one_engine_per_pool) {
    const auto& p = *job.serving;
    const int per_node = std::max(1, job.cluster->gpus_per_node);
    std::vector<PoolLaunch> out;
    int64_t next = 0;  // the next free GPU, counted over the nodes
    for (const auto& pool : p.pools()) {
        PoolLaunch pl;
        pl.role = sim::name(pool.role);
        pl.layout = pool.layout;
        const int64_t size = one_engine_per_pool ? pool.layout->gpus() : int64_t{pool.layout->tp} * pool.layout->pp;
        const int64_t count = one_engine_per_pool ? 1 : pool.layout->replicas;
        for (int64_t r = 0; r < count; ++r) {
            Instance in;
            in.index = static_cast<int>(r);
            in.node = static_cast<int>(next / per_node);
            in.nodes = static_cast<int>((next % per_node + size + per_node - 1) / per_node);
            const int64_t first = next % per_node, last = std::min<int64_t>(per_node, first + size);
            for (int64_t g = first; g < last; ++g) in.gpus += (in.gpus.empty() ? "" : ",") + std::to_string(g);
            pl.instances.push_back(in);
            next += size;
        }
        out.push_back(pl);
    }
    return out;
}

bool any_expert_parallel(const workloads::serving::ServingPlan& plan) {
    const auto pools = plan.pools();
    return std::any_of(pools.begin(), pools.end(), [](const auto& x) { return x.layout->ep > 1; });
}

std::string model_argument(const Job& job) {
    if (!job.model->huggingface.empty()) return job.model->huggingface;
    return "\"${MODEL:?the checkpoint of " + job.model->name + " (model.huggingface is not in fathom's catalog)}\"";
}

std::string serving_value(const Job& job, const std::string& key) {
    return plans::format_value(plans::get_serving_key(*job.serving, key));
}

std::string serving_header(const Job& job, const std::string& engine, const std::string& sources) {
    const auto& p = *job.serving;
    std::string s = "#!/usr/bin/env bash\n# " + job.name + " (" + job.model->name + "): " + engine +
                    ", written by fathom export. Flags: " + sources + ".\n";
    s += "# One command per engine instance, each on the GPUs CUDA_VISIBLE_DEVICES names, on the node its\n"
         "# comment names (node 0 first). In front of the instances, a router: fathom simulated '" +
         p.router + "'.\n";
    if (p.batching.policy == "static")
        s += "# Static batches (fathom's policy static) are the benchmark client's: it sends each batch at once,\n"
             "# and the engine runs as launched here.\n";
    if (p.autoscale.policy != "none" && !p.autoscale.policy.empty())
        s += "# The replicas here are the autoscaler's start; scaling (" + p.autoscale.policy +
             ") is the orchestrator's, not the engine's.\n";
    return s;
}

std::string instance_text(const PoolLaunch& pool, size_t i, const CommandLine& c, const std::string& sources,
                          const std::string& spanning, bool on_each) {
    const Instance& in = pool.instances[i];
    const bool guard = pool.instances.back().node > 0 && !(on_each && in.nodes > 1);
    std::string text = "\n# node " + std::to_string(in.node) + (in.nodes > 1 ? spanning : "") + ", instance " +
                       std::to_string(in.index) + "\n";
    if (guard) text += "if [ \"${NODE_RANK:-0}\" = " + std::to_string(in.node) + " ]; then\n";
    text += i == 0 ? c.text(sources) : c.text();
    text.insert(text.size() - 1, " &");
    if (guard) text += "fi\n";
    return text;
}

Commands commands_of(const std::vector<std::string>& words, const std::vector<std::string>& start) {
    auto starts_at = [&](size_t i) {
        if (i + start.size() > words.size()) return false;
        return std::equal(start.begin(), start.end(), words.begin() + static_cast<long>(i));
    };
    Commands out;
    for (size_t i = 0; i < words.size(); ++i) {
        if (!starts_at(i)) continue;
        ++out.count;
        size_t end = i + start.size();
        while (end < words.size() && !starts_at(end)) ++end;
        out.flags = flag_values(std::vector<std::string>(words.begin() + static_cast<long>(i + start.size()),
                                                         words.begin() + static_cast<long>(end)));
        i = end - 1;
    }
    return out;
}

void check_common(const Job& job, const std::string& framework) {
    const auto& p = *job.serving;
    if (p.kv.any_tier())
        cannot(job, framework, "serving.kv_offload",
               "KV-cache offloading is not exported yet (its connectors' settings)");
    if (p.engine.two_batch_overlap && framework != "sglang")
        cannot(job, framework, "serving.two_batch_overlap",
               "two-batch overlap is SGLang's (--enable-two-batch-overlap)");
    if (p.engine.scheduler_steps > 1)
        cannot(job, framework, "serving.num_scheduler_steps", "multi-step scheduling was vLLM V0's, gone from V1");
    if (p.kv.preemption == workloads::serving::Preemption::Swap)
        cannot(job, framework, "serving.preemption", "the engines written here recompute preempted sequences");
}

}  // namespace fathom::scenarios::launch
