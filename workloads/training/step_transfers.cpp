#include "workloads/training/step_transfers.h"

#include <optional>
#include <utility>

namespace fathom::workloads {

using hardware::CommGroup;
using models::GroupKind;

namespace {

// Declares a job's communicators as its tasks need them.
class Communicators {
public:
    Communicators(hardware::TransferTimer& timer, const TrainingPlan& plan, const std::vector<int>& rank_of,
                  StepCommunicators& known)
        : timer_(timer), layout_(plan.layout), rank_of_(rank_of), known_(known) {}

    // The stage's communicator of `kind` (every group of that kind among the stage's ranks, which
    // they tile); null for a group of one (nothing crosses the network).
    const StepCommunicators::Entry* of(int stage, GroupKind kind) {
        const CommGroup g = layout_.group(kind);
        if (g.size <= 1) return nullptr;
        auto [it, fresh] = known_.groups.try_emplace({stage, static_cast<int>(kind)});
        if (!fresh) return &it->second;
        const int base = stage * block(), span = g.size * g.stride;
        auto groups = [&] {
            std::vector<CommGroup> all;
            for (int k = 0; k < block() / span; ++k)
                for (int r = 0; r < g.stride; ++r)
                    all.push_back(on_cluster(CommGroup(g.size, g.stride, base + k * span + r)));
            return all;
        };
        it->second = {timer_.add_communicator({groups, std::nullopt}), on_cluster(CommGroup(g.size, g.stride, base))};
        return &it->second;
    }
    // The pipeline sends from stage `from` to stage `to`: every rank of `from` to its peer in `to`.
    const StepCommunicators::Entry* send(int from, int to) {
        auto [it, fresh] = known_.sends.try_emplace({from, to});
        if (!fresh) return &it->second;
        auto pairs = [&] {
            std::vector<CommGroup> all;
            for (int r = 0; r < block(); ++r)
                all.push_back(CommGroup::of({gpu(from * block() + r), gpu(to * block() + r)}));
            return all;
        };
        it->second = {timer_.add_communicator({pairs, std::nullopt}),
                      CommGroup::of({gpu(from * block()), gpu(to * block())})};
        return &it->second;
    }

private:
    int block() const { return layout_.tp * layout_.cp * layout_.dp; }  // ranks per pipeline stage
    int gpu(int r) const { return rank_of_.empty() ? r : rank_of_.at(static_cast<size_t>(r)); }
    // A group of the job's ranks on the cluster: as it is when the job has the first GPUs.
    CommGroup on_cluster(const CommGroup& g) const {
        if (rank_of_.empty()) return g;
        std::vector<int> m;
        for (int i = 0; i < g.count(); ++i) m.push_back(gpu(g.rank(i)));
        return CommGroup::of(std::move(m));
    }

    hardware::TransferTimer& timer_;
    const ParallelLayout& layout_;
    const std::vector<int>& rank_of_;
    StepCommunicators& known_;
};

}  // namespace

void carry_step_transfers(hardware::TransferTimer& timer, sim::TaskGraph& graph, const PipelineReplay& pipeline,
                          const TrainingPlan& plan, const std::vector<int>& rank_of, StepCommunicators* known) {
    StepCommunicators local;
    Communicators comms(timer, plan, rank_of, known ? *known : local);
    std::vector<hardware::TransferPart> parts;
    for (int s = 0; s < static_cast<int>(pipeline.streams().size()); ++s)
        for (const CommTask& t : pipeline.carried(s)) {
            parts.clear();
            for (const CommMove& m : *t.moves) {
                if (!(bit(m.part) & t.parts)) continue;
                const StepCommunicators::Entry* e =
                    m.group == GroupKind::pp ? comms.send(s, t.peer) : comms.of(s, m.group);
                if (!e) continue;
                parts.push_back({hardware::Transfer{m.collective, m.bytes, e->group}, e->id, m.share, m.count});
            }
            if (!parts.empty()) timer.carry(graph, t.task, parts);
        }
}

}  // namespace fathom::workloads
