#include "workloads/training/step_transfers.h"

#include <array>
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
    // A group of the job's ranks on the cluster: as it is when the job has the first GPUs.
    auto on_cluster = [&](const CommGroup& g) {
        if (rank_of.empty()) return g;
        std::vector<int> m;
        for (int i = 0; i < g.count(); ++i) m.push_back(gpu(g.rank(i)));
        return CommGroup::of(std::move(m));
    };
    for (int s = 0; s < static_cast<int>(pipeline.streams().size()); ++s) {
        const StageStreams& st = pipeline.streams()[static_cast<size_t>(s)];
        for (GroupKind kind : {GroupKind::tp, GroupKind::cp, GroupKind::dp, GroupKind::ep}) {
            const CommGroup g = l.group(kind);
            if (!st.comm[static_cast<size_t>(kind)] || g.size <= 1) continue;
            if (known.streams.count({s, static_cast<int>(kind)})) continue;
            const Collective shape = shape_of(kind, plan);
            // Every group of this kind among the stage's ranks (they tile the stage).
            auto groups = [&] {
                std::vector<CommGroup> all;
                const int span = g.size * g.stride;
                for (int k = 0; k < block / span; ++k)
                    for (int r = 0; r < g.stride; ++r)
                        all.push_back(on_cluster(CommGroup(g.size, g.stride, s * block + k * span + r)));
                return all;
            };
            auto reference = [&] { return network.collective(shape, hardware::kReferenceBytes, g).seconds; };
            const int id = timer.add_communicator({shape, groups, reference});
            known.streams[{s, static_cast<int>(kind)}] = {
                id, hardware::Transfer{shape, 0.0, on_cluster(CommGroup(g.size, g.stride, s * block))}};
        }
    }
    if (l.pp <= 1) return;
    auto reference = [&] {
        return network.collective(Collective::SendRecv, hardware::kReferenceBytes, l.group(GroupKind::pp)).seconds;
    };
    for (const PipelineReplay::Send& send : pipeline.sends()) {
        if (known.sends.count({send.from, send.to})) continue;
        // Every rank of the sending stage to its peer in the receiving one.
        auto pairs = [&] {
            std::vector<CommGroup> all;
            for (int r = 0; r < block; ++r)
                all.push_back(CommGroup::of({gpu(send.from * block + r), gpu(send.to * block + r)}));
            return all;
        };
        const int id = timer.add_communicator({Collective::SendRecv, pairs, reference});
        known.sends[{send.from, send.to}] = {
            id, hardware::Transfer{Collective::SendRecv, 0.0,
                                   CommGroup::of({gpu(send.from * block), gpu(send.to * block)})}};
    }
}

}  // namespace

void carry_step_transfers(hardware::TransferTimer& timer, const hardware::NetworkModel& network, sim::TaskGraph& graph,
                          const PipelineReplay& pipeline, const TrainingPlan& plan, const std::vector<int>& rank_of,
                          StepCommunicators* known) {
    StepCommunicators local;
    StepCommunicators& comms = known ? *known : local;
    declare(timer, network, pipeline, plan, rank_of, comms);
    for (int s = 0; s < static_cast<int>(pipeline.streams().size()); ++s) {
        // The stage's communicators by kind, looked up once.
        std::array<StepCommunicators::Entry*, models::kGroupKinds> by_kind{};
        for (int g = 0; g < models::kGroupKinds; ++g)
            if (auto it = comms.streams.find({s, g}); it != comms.streams.end())
                by_kind[static_cast<size_t>(g)] = &it->second;
        for (const CommTask& t : pipeline.carried(s)) {
            StepCommunicators::Entry* e = nullptr;
            if (t.kind != GroupKind::pp) e = by_kind[static_cast<size_t>(t.kind)];
            else if (auto it = comms.sends.find({s, t.peer}); it != comms.sends.end()) e = &it->second;
            if (!e) continue;  // a group of one: nothing crosses the network
            e->transfer.collective = t.move.collective;
            e->transfer.bytes = t.move.bytes;
            timer.carry(graph, t.task, e->transfer, e->id);
        }
    }
}

}  // namespace fathom::workloads
