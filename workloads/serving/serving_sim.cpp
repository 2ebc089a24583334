#include "workloads/serving/serving_sim.h"

#include "sim/error.h"
#include "workloads/metrics/serving_load.h"
#include "workloads/metrics/serving_requests.h"
#include "workloads/metrics/serving_series.h"
#include "workloads/metrics/serving_timeline.h"
#include "workloads/serving/arrivals.h"
#include "workloads/serving/serving_system.h"

#include <optional>

namespace fathom::workloads::serving {

ServingReport simulate_serving(const ServingInputs& in, RequestSource& source, const ServingOptions& options) {
    const ServingPlan& plan = in.plan;
    ServingSystem system(in);
    ServingSignals& signals = system.signals();
    // Observers first: the arrival driver's closed loop sends its next request after they saw the
    // last one finish.
    std::optional<ServingTimeline> timeline;
    if (options.trace) timeline.emplace(signals, *options.trace);
    if (options.series) options.series->attach(signals, system.kv_capacities());
    ServingRequestCollector requests(signals, plan.slo, source.slo_classes(), options.keep_records,
                                     plan.traffic.warmup_requests);
    ReplicaUsageCollector usage(signals, system.kv_capacities());
    RequestsInSystemCollector load(signals);
    const int64_t expected = plan.traffic.trace.empty() ? plan.traffic.synthetic.num_requests : 0;
    if (options.progress)
        signals.finished.connect([&](const Sequence&, sim::Time) {
            if ((load.finished() & 1023) == 0) options.progress(load.finished(), expected);
        });
    const auto arrivals = make_arrivals(plan.traffic, system.simulator(), source, signals,
                                        [&system](const Request& r) { system.admit(r); });
    arrivals->start();
    system.run();
    if (timeline) timeline->close();

    ServingReport rep;
    rep.gpus = plan.gpus();
    requests.report(rep);
    // A trace's length is known only once read: warm-up requests that leave nothing to measure.
    if (plan.traffic.warmup_requests > 0 && rep.requests == 0)
        throw sim::InputError(std::to_string(plan.traffic.warmup_requests) + " warm-up requests leave none of the " +
                                  std::to_string(load.arrived()) + " requests to measure",
                              "", 0, "traffic.warmup_requests");
    usage.report(rep, system.end_time());
    load.report(rep, plan.traffic.warmup_requests);
    rep.events = system.simulator().events_processed();
    rep.cost_cache_entries = system.cost_cache_entries();
    if (plan.lora.enabled()) rep.lora_loads = system.lora_loads();
    rep.autoscale = system.autoscale_report();
    if (!plan.kv.any_tier()) rep.offload_hit_rate = -1;  // no tier: not reported
    if (!(plan.kv.store_bytes > 0)) rep.store_hit_rate = -1;
    if (!plan.kv.any_tier()) rep.ttft_by_tier.clear();  // reported with a tier only
    if (!(plan.kv.offload_bytes > 0 && plan.kv.offload_ssd_bytes > 0)) rep.offload_ssd_hit_rate = -1;
    rep.op_sources = system.op_sources();
    const ReplicaMemory& m = system.decoding_memory();
    rep.kv_blocks_per_replica = m.kv_blocks;
    rep.kv_tokens_per_replica = static_cast<double>(m.kv_blocks * plan.kv.block_size);
    rep.weight_bytes_per_gpu = m.weight_bytes;
    if (options.progress) options.progress(load.finished(), expected);
    return rep;
}

}  // namespace fathom::workloads::serving
