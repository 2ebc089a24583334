#include "workloads/training/step_transfers.h"

#include <map>
#include <utility>

namespace fathom::workloads {

using hardware::Collective;
using hardware::CommGroup;
using models::GroupKind;

namespace {

// How the groups of a kind are connected: by the collective the kind mostly runs.
Collective shape_of(GroupKind g, const TrainingPlan& p) {
    switch (g) {
        case GroupKind::tp: return p.layout.sequence_parallel ? Collective::AllGather : Collective::AllReduce;
        case GroupKind::cp:
            return p.stack.cp_comm == models::CpComm::A2a ? Collective::AllToAll : Collective::AllGather;
        case GroupKind::ep: return Collective::AllToAll;
        case GroupKind::pp: return Collective::SendRecv;
        default: return Collective::ReduceScatter;
    }
}

// Declares the communicators, in the order a flow network routes them (stages, then kinds tp, cp,
// dp, ep; then pipeline directions in the order of the sends): a connection keeps its route.
void declare(hardware::TransferTimer& timer, const hardware::NetworkModel& network, const PipelineReplay& pipeline,
             const TrainingPlan& plan, const std::vector<int>& rank_of, StepCommunicators& known) {
    const ParallelLayout& l = plan.layout;
    const int block = l.tp * l.cp * l.dp;  // ranks per pipeline stage
    auto gpu = [&rank_of](int r) { return rank_of.empty() ? r : rank_of.at(static_cast<size_t>(r)); };
    auto members = [&](int first, int size, int stride) {
        std::vector<int> m;
        for (int i = 0; i < size; ++i) m.push_back(gpu(first + i * stride));
        return CommGroup::of(std::move(m));
    };
    for (int s = 0; s < static_cast<int>(pipeline.streams().size()); ++s) {
        const StageStreams& st = pipeline.streams()[static_cast<size_t>(s)];
        for (GroupKind kind : {GroupKind::tp, GroupKind::cp, GroupKind::dp, GroupKind::ep}) {
            const CommGroup g = l.group(kind);
            if (!st.comm[static_cast<size_t>(kind)] || g.size <= 1) continue;
            if (known.streams.count({s, static_cast<int>(kind)})) continue;
            // Every group of this kind among the stage's ranks (they tile the stage).
            hardware::Communicator c;
            c.shape = shape_of(kind, plan);
            const int span = g.size * g.stride;
            for (int k = 0; k < block / span; ++k)
                for (int r = 0; r < g.stride; ++r)
                    c.groups.push_back(members(s * block + k * span + r, g.size, g.stride));
            c.reference_s = network.collective(c.shape, hardware::kReferenceBytes, g).seconds;
            known.streams[{s, static_cast<int>(kind)}] = {timer.add_communicator(c), c.groups.front()};
        }
    }
    if (l.pp <= 1) return;
    const double reference =
        network.collective(Collective::SendRecv, hardware::kReferenceBytes, l.group(GroupKind::pp)).seconds;
    for (const PipelineReplay::Send& send : pipeline.sends()) {
        if (known.sends.count({send.from, send.to})) continue;
        hardware::Communicator c{{}, Collective::SendRecv, reference};
        for (int r = 0; r < block; ++r)
            c.groups.push_back(CommGroup::of({gpu(send.from * block + r), gpu(send.to * block + r)}));
        known.sends[{send.from, send.to}] = {timer.add_communicator(c), c.groups.front()};
    }
}

}  // namespace

void carry_step_transfers(hardware::TransferTimer& timer, const hardware::NetworkModel& network, sim::TaskGraph& graph,
                          const PipelineReplay& pipeline, const TrainingPlan& plan, const std::vector<int>& rank_of,
                          StepCommunicators* known) {
    StepCommunicators local;
    StepCommunicators& comms = known ? *known : local;
    declare(timer, network, pipeline, plan, rank_of, comms);
    for (int s = 0; s < static_cast<int>(pipeline.streams().size()); ++s)
        for (const CommTask& t : pipeline.carried(s)) {
            const auto& table = t.kind == GroupKind::pp ? comms.sends : comms.streams;
            const auto it = table.find(t.kind == GroupKind::pp ? std::make_pair(s, t.peer)
                                                               : std::make_pair(s, static_cast<int>(t.kind)));
            if (it == table.end()) continue;  // a group of one: nothing crosses the network
            const auto& [id, group] = it->second;
            timer.carry(graph, t.task, hardware::Transfer{t.move.collective, t.move.bytes, group}, id);
        }
}

}  // namespace fathom::workloads
