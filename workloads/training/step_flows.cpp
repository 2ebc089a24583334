#include "workloads/training/step_flows.h"

#include <map>
#include <utility>

namespace fathom::workloads {

using hardware::Collective;
using hardware::CollectiveCall;
using hardware::CommGroup;
using models::GroupKind;

namespace {

// Large enough that every pattern is priced in its bandwidth regime (its fixed part small).
constexpr double kReferenceBytes = 256.0 * 1024 * 1024;

Collective collective_of(GroupKind g, const TrainingPlan& p) {
    switch (g) {
        case GroupKind::tp: return p.layout.sequence_parallel ? Collective::AllGather : Collective::AllReduce;
        case GroupKind::cp:
            return p.stack.cp_comm == models::CpComm::A2a ? Collective::AllToAll : Collective::AllGather;
        case GroupKind::ep: return Collective::AllToAll;
        case GroupKind::pp: return Collective::SendRecv;
        default: return Collective::ReduceScatter;
    }
}

}  // namespace

void route_step_flows(FlowReplay& replay, hardware::FlowSession& session, const hardware::NetworkModel& network,
                      sim::TaskGraph& graph, const PipelineReplay& pipeline, const TrainingPlan& plan,
                      const std::vector<int>& rank_of, StepPatterns* known) {
    StepPatterns local;
    StepPatterns& patterns = known ? *known : local;
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
            const auto& stream = st.comm[static_cast<size_t>(kind)];
            const CommGroup g = l.group(kind);
            if (!stream || g.size <= 1) continue;
            auto [it, fresh] =
                patterns.streams.emplace(std::make_pair(s, static_cast<int>(kind)), std::make_pair(-1, 0.0));
            if (fresh) {
                const Collective op = collective_of(kind, plan);
                // Every group of this kind among the stage's ranks (they tile the stage).
                std::vector<CollectiveCall> calls;
                const int span = g.size * g.stride;
                for (int k = 0; k < block / span; ++k)
                    for (int r = 0; r < g.stride; ++r)
                        calls.push_back(
                            {op, kReferenceBytes, members(s * block + k * span + r, g.size, g.stride), 0.0});
                it->second = {session.add_pattern(calls), network.collective(op, kReferenceBytes, g).seconds};
            }
            replay.route(graph, *stream, it->second.first, it->second.second);
        }
    }

    // Pipeline sends, one pattern per direction used.
    if (l.pp > 1) {
        const double reference =
            network.collective(Collective::SendRecv, kReferenceBytes, l.group(GroupKind::pp)).seconds;
        for (const PipelineReplay::Send& send : pipeline.sends()) {
            auto [it, fresh] =
                patterns.sends.emplace(std::make_pair(send.from, send.to), std::make_pair(-1, reference));
            if (fresh) {
                std::vector<CollectiveCall> calls;
                for (int r = 0; r < block; ++r)
                    calls.push_back({Collective::SendRecv, kReferenceBytes,
                                     CommGroup::of({gpu(send.from * block + r), gpu(send.to * block + r)}), 0.0});
                it->second.first = session.add_pattern(calls);
            }
            replay.route_task(graph, send.task, it->second.first, it->second.second);
        }
    }
}

}  // namespace fathom::workloads
