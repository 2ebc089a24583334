#include "workloads/training/training_step.h"

#include "sim/error.h"
#include "sim/simulator.h"
#include "sim/task_graph.h"
#include "sim/trace_writer.h"
#include "workloads/metrics/stream_busy.h"
#include "workloads/training/packing.h"
#include "workloads/training/pipeline_replay.h"
#include "workloads/training/step_transfers.h"
#include "workloads/training/training_tags.h"

#include <ostream>

namespace fathom::workloads {

using models::GroupKind;

struct StepReplay::Impl {
    const StepInputs& in;
    std::unique_ptr<PipelineSchedule> owned;
    const PipelineSchedule* schedule;
    StageMap map;
    ProgramCoster coster;
    Packing packing;
    StepCosts costs;
    sim::TaskGraph graph;
    ComputeBesideComm beside_comm;
    PipelineReplay replay;
    StreamBusyCollector busy;
    const hardware::TransferTimer& timer;

    static std::unique_ptr<PipelineSchedule> own(const StepInputs& in) {
        return in.schedule ? nullptr : schedule_registry().get(in.plan.training.schedule).factory();
    }
    Impl(const StepInputs& i, sim::Simulator& sim, const hardware::TransferTimer& t)
        : in(i),
          owned(own(i)),
          schedule(i.schedule ? i.schedule : owned.get()),
          map(i.model, i.plan, *schedule),
          coster(i.cost, i.network, i.plan.layout),
          packing(pack_documents(i.model, i.plan, i.cost)),
          costs([this, &t] {
              coster.set_attention_scale(packing.attention_scale);
              if (in.plan.stack.tp_comm_overlap) coster.set_tp_overlap(in.plan.stack.tp_overlap_contention);
              coster.set_beside_comm(in.cluster.accelerator.calibration.beside_comm);
              coster.set_ep_overlap(in.plan.stack.ep_comm_overlap);
              coster.set_moves(t.times_tasks());
              return cost_training_step(in.model, in.plan, coster);
          }()),
          graph(sim),
          beside_comm(graph),
          replay(graph, i.plan, *schedule, map, costs, coster, t.times_tasks()),
          busy((replay.set_beside_comm(&beside_comm), replay.build(), graph)),  // subscribes after the step is laid
          timer(t) {}
};

StepReplay::StepReplay(const StepInputs& in, sim::Simulator& sim, hardware::TransferTimer& timer,
                       const std::vector<int>& rank_of, StepCommunicators* known)
    : impl_(std::make_unique<Impl>(in, sim, timer)) {
    if (timer.times_tasks()) carry_step_transfers(timer, impl_->graph, impl_->replay, in.plan, rank_of, known);
}
StepReplay::~StepReplay() = default;
sim::TaskGraph& StepReplay::graph() { return impl_->graph; }

StepReport simulate_training_step(const StepInputs& in, std::ostream* trace) {
    sim::Simulator sim;
    // The network times every communication task: the closed form as planned, a flow network as
    // flows on one fabric, so TP, CP, DP, EP and pipeline traffic that overlap in time share links.
    const auto timer = in.network.timer(sim);
    StepReplay step(in, sim, *timer);
    step.graph().start();
    timer->run();
    return step.report(sim, trace);
}

StepReport StepReplay::report(const sim::Simulator& sim, std::ostream* trace) const {
    const StepInputs& in = impl_->in;
    const TrainingPlan& p = in.plan;
    const StageMap& map = impl_->map;
    const Packing& packing = impl_->packing;
    const StreamBusyCollector& busy = impl_->busy;
    const sim::TaskGraph& graph = impl_->graph;
    const PipelineReplay& replay = impl_->replay;
    const ProgramCoster& coster = impl_->coster;
    const PipelineSchedule* schedule = impl_->schedule;
    FATHOM_CHECK(graph.unfinished() == 0, "training replay ended with unfinished tasks (dependency cycle)");
    StepReport rep;
    const double end = busy.makespan_s();
    rep.step_time_s = end;
    rep.packed_attention_scale = packing.attention_scale;
    rep.packing_imbalance = packing.imbalance;
    rep.events = sim.events_processed();
    rep.tasks = graph.task_count();
    rep.graph_bytes = graph.memory_bytes();
    rep.flow_transfers = impl_->timer.flow_transfers(graph);
    rep.flows = impl_->timer.flows(graph);
    const double gpus = p.gpus();
    const double tokens = static_cast<double>(p.training.global_batch) * static_cast<double>(p.training.seq_len);
    rep.tokens_per_s_per_gpu = tokens / (end * gpus);
    rep.model_flops_per_step = training_model_flops_per_token(in.model, p) * tokens;
    rep.model_tflops_per_gpu = rep.model_flops_per_step / (end * gpus) / 1e12;
    rep.mfu = rep.model_flops_per_step / (end * gpus * in.cluster.accelerator.peak(p.stack.kernels.gemm_dtype));

    const int P = map.stages();
    std::vector<DeviceUtilization> use;
    std::vector<double> compute_s;  // each stage's, for what activation offload can move (training_memory.h)
    for (int st = 0; st < P; ++st) {
        const StageStreams& ss = replay.streams()[static_cast<size_t>(st)];
        std::vector<sim::StreamId> comm;
        for (GroupKind g : replay.comm_kinds()) comm.push_back(ss.of(g));
        use.push_back(device_utilization(busy, ss.compute, comm));
        compute_s.push_back(use.back().busy_s[0]);
    }
    const TrainingMemory memory = estimate_training_memory(in.model, in.cluster, p, schedule, &compute_s);
    rep.memory_capacity_bytes = memory.capacity_bytes;
    rep.peak_memory_bytes = memory.peak_bytes;
    rep.out_of_memory = memory.out_of_memory;
    for (int st = 0; st < P; ++st) {
        const DeviceUtilization& u = use[static_cast<size_t>(st)];
        StageReport sr;
        sr.compute_s = u.busy_s[0];
        for (size_t i = 0; i < replay.comm_kinds().size(); ++i)
            sr.comm_s[static_cast<size_t>(replay.comm_kinds()[i])] = u.busy_s[i + 1];
        sr.idle_s = u.idle_s;
        sr.exposed_comm_s = u.exposed_comm_s;
        const StageMemory& sm = memory.stages[static_cast<size_t>(st)];
        sr.layers = sm.layers;
        sr.peak_in_flight = sm.peak_in_flight;
        sr.activations_offloaded = sm.offloaded;
        sr.memory = sm.memory;
        rep.bubble_fraction += sr.idle_s / end / P;
        rep.exposed_comm_s += sr.exposed_comm_s / P;
        rep.stages.push_back(sr);
    }
    rep.comm_kinds = replay.comm_kinds();
    rep.op_sources = coster.sources();

    if (trace) {
        sim::write_chrome_trace(graph, *trace, [](const sim::TaskRecord& r) {
            std::string n = training_tag_name(r.tag);
            if (r.label_a >= 0) n += " mb" + std::to_string(r.label_a);
            if (r.label_b >= 0) n += " L" + std::to_string(r.label_b);
            return n;
        });
    }
    return rep;
}

}  // namespace fathom::workloads
