#include "workloads/replay/pass_chain.h"

#include "sim/error.h"

namespace fathom::workloads {

using models::GroupKind;

sim::StreamId StageStreams::of(GroupKind g) const {
    const auto& s = comm[static_cast<size_t>(g)];
    FATHOM_CHECK(s.has_value(), std::string("no ") + sim::name(g) + "-comm stream on this device");
    return *s;
}

StageStreams add_stage_streams(sim::TaskGraph& graph, const std::string& group, const std::vector<GroupKind>& kinds) {
    StageStreams s;
    s.compute = graph.add_stream("compute", group);
    for (GroupKind g : kinds)
        s.comm[static_cast<size_t>(g)] = graph.add_stream(std::string(sim::name(g)) + "-comm", group);
    return s;
}

sim::TaskId PassChain::add(sim::StreamId stream, double seconds, uint16_t tag, int label_a, int label_b) {
    return graph_.add_task(stream, sim::Time::from_seconds(seconds), (*style_.names)[tag], tag, label_a, label_b);
}

sim::TaskId PassChain::add_compute(double seconds, int label_a, int label_b, double beside_comm_stretch) {
    const sim::TaskId t = add(streams_.compute, seconds, style_.compute_tag, label_a, label_b);
    if (beside_comm_) beside_comm_->set_stretch(t, beside_comm_stretch);
    return t;
}

sim::TaskId PassChain::add_comm(GroupKind g, double seconds, const CommMoves& moves, uint8_t parts, int label_a,
                                int label_b, int peer) {
    const sim::TaskId t = add(streams_.of(g), seconds, style_.comm_tag[static_cast<size_t>(g)], label_a, label_b);
    if (carried_) carried_->push_back(CommTask{t, g, parts, peer, &moves});
    return t;
}

void PassChain::chain(sim::TaskId t) {
    if (last_) graph_.add_dependency(*last_, t);
    else if (input_) graph_.add_dependency(*input_, t);
    last_ = t;
}

void PassChain::follow(sim::TaskId compute, sim::TaskId t) {
    graph_.add_dependency(compute, t);
    if (last_ && *last_ != compute) graph_.add_dependency(*last_, t);
    last_ = t;
}

void PassChain::segment(const PassCost& c, int label_a, int label_b) {
    auto comms = [&](const std::array<double, models::kGroupKinds>& lumps, CommPart part) {
        for (size_t g = 0; g < lumps.size(); ++g)
            if (lumps[g] > 0)
                chain(add_comm(static_cast<GroupKind>(g), lumps[g], c.moves[g], bit(part), label_a, label_b));
    };
    comms(c.lead, CommPart::Lead);
    chain(add_compute(c.compute, label_a, label_b, c.beside_comm_stretch()));
    comms(c.trail, CommPart::Trail);
}

sim::TaskId PassChain::finish(int label_a) {
    FATHOM_CHECK(last_.has_value(), "a pass ended without tasks");
    sim::TaskId end = *last_;
    // A pass ending in a blocking collective: the framework's compute stream waits for it (a
    // synchronous collective makes the issuing stream wait for its end, torch.distributed's
    // work.wait()), so the compute of the pass issued next cannot run beside it; a zero-length task
    // on the in-order compute stream.
    if (graph_.record(end).stream != streams_.compute) {
        const sim::TaskId wait = add_compute(0.0, label_a, -1);
        graph_.add_dependency(end, wait);
        end = wait;
    }
    for (size_t g = 0; g < overlapped_.size(); ++g) {
        if (!overlapped_[g]) continue;
        // A zero-length join: it moves nothing, so the timer never sees it.
        const sim::TaskId join = add(streams_.of(static_cast<GroupKind>(g)), 0.0, style_.comm_tag[g], label_a, -1);
        graph_.add_dependency(end, join);
        end = join;
    }
    return end;
}

}  // namespace fathom::workloads
