#include "workloads/training/pipeline_replay.h"

#include "sim/error.h"
#include "workloads/training/training_tags.h"

#include <optional>

namespace fathom::workloads {

using models::GroupKind;

namespace {

uint16_t compute_tag(PassKind k) {
    switch (k) {
        case PassKind::Forward: return kForward;
        case PassKind::Backward: return kBackward;
        case PassKind::BackwardInput: return kBackwardInput;
        case PassKind::BackwardWeight: return kBackwardWeight;
    }
    return kForward;
}

bool produces_gradients(PassKind k) { return k == PassKind::Backward || k == PassKind::BackwardWeight; }

// The group kinds a stage moves data over, in GroupKind order: those of the priced passes'
// collectives, pipeline sends and data-parallel traffic. The expert data-parallel group's traffic
// (expert gradients and ZeRO-3 gathers) rides the data-parallel stream.
std::vector<GroupKind> step_comm_kinds(const TrainingPlan& plan, const StepCosts& costs) {
    std::array<bool, models::kGroupKinds> used{};
    auto scan = [&used](const PassCost& c) {
        for (size_t g = 0; g < used.size(); ++g)
            used[g] = used[g] || c.lead[g] > 0 || c.trail[g] > 0 || c.hidden[g] > 0;
    };
    for (const LayerCost* layer : {&costs.dense, &costs.moe})
        for (const PassCost& c : layer->pass) scan(c);
    for (const auto* segments : {&costs.embedding, &costs.head})
        for (const auto& c : *segments)
            if (c) scan(*c);
    used[static_cast<size_t>(GroupKind::pp)] = plan.layout.pp > 1 && costs.p2p > 0;
    used[static_cast<size_t>(GroupKind::dp)] = GradientSync::has_traffic(plan, costs) ||
                                               used[static_cast<size_t>(GroupKind::dp)] ||
                                               used[static_cast<size_t>(GroupKind::edp)];
    used[static_cast<size_t>(GroupKind::edp)] = false;
    std::vector<GroupKind> kinds;
    for (size_t g = 0; g < used.size(); ++g)
        if (used[g]) kinds.push_back(static_cast<GroupKind>(g));
    return kinds;
}

}  // namespace

PipelineReplay::PipelineReplay(sim::TaskGraph& graph, const TrainingPlan& plan, const PipelineSchedule& schedule,
                               const StageMap& map, const StepCosts& costs, ProgramCoster& coster, bool list_transfers)
    : graph_(graph),
      plan_(plan),
      schedule_(schedule),
      map_(map),
      costs_(costs),
      names_([&graph] {
          std::vector<uint32_t> n;
          for (uint16_t t = 0; t < kTrainingTags; ++t) n.push_back(graph.intern(training_tag_name(t)));
          return n;
      }()),
      styles_([this] {
          std::vector<TaskStyle> s(kPassKinds);
          for (int k = 0; k < kPassKinds; ++k) {
              TaskStyle& style = s[static_cast<size_t>(k)];
              style.compute_tag = compute_tag(static_cast<PassKind>(k));
              for (int g = 0; g < models::kGroupKinds; ++g)
                  style.comm_tag[static_cast<size_t>(g)] = comm_tag(static_cast<GroupKind>(g));
              // Data-parallel traffic in a pass is gradients being reduced (ZeRO-3's per-layer ones).
              style.comm_tag[static_cast<size_t>(GroupKind::dp)] = kDpGradSync;
              style.comm_tag[static_cast<size_t>(GroupKind::edp)] = kDpGradSync;
              style.names = &names_;
          }
          return s;
      }()),
      comm_kinds_(step_comm_kinds(plan, costs)),
      streams_([this, &graph, &map] {
          std::vector<StageStreams> s;
          for (int st = 0; st < map.stages(); ++st)
              s.push_back(add_stage_streams(graph, "stage " + std::to_string(st), comm_kinds_));
          return s;
      }()),
      carried_(list_transfers ? static_cast<size_t>(map.stages()) : 0),
      sync_(graph, plan, map, costs, coster, streams_, styles_[0], carried_) {}

const std::vector<CommTask>& PipelineReplay::carried(int stage) const {
    static const std::vector<CommTask> none;
    return carried_.empty() ? none : carried_[static_cast<size_t>(stage)];
}

void PipelineReplay::build() {
    const int P = map_.stages(), V = map_.virtual_stages(), M = plan_.microbatches();
    for (int s = 0; s < P; ++s) orders_.push_back(schedule_.order(s, P, map_.chunks(), M));
    forward_done_.assign(static_cast<size_t>(M * V), 0);
    backward_done_.assign(static_cast<size_t>(M * V), 0);
    forward_last_.assign(static_cast<size_t>(M * V), 0);
    last_gradient_pass_.assign(static_cast<size_t>(P), 0);
    sync_.issue_parameter_gathers();
    // Every collective but tensor parallelism's slows the compute beside it: TP's blocking ones run
    // alone, and its overlapped ones are charged where priced (ProgramCoster::set_tp_overlap).
    if (beside_comm_) {
        for (const StageStreams& ss : streams_) {
            std::vector<sim::StreamId> contending;
            for (GroupKind g : comm_kinds_)
                if (g != GroupKind::tp) contending.push_back(ss.of(g));
            beside_comm_->add_device(ss.compute, contending);
        }
    }

    // The last gradient-producing pass of each chunk on each stage (its gradients are complete).
    std::vector<std::vector<bool>> last_of_chunk(static_cast<size_t>(P));
    for (int s = 0; s < P; ++s) {
        const auto& ord = orders_[static_cast<size_t>(s)];
        last_of_chunk[static_cast<size_t>(s)].assign(ord.size(), false);
        std::vector<bool> seen(static_cast<size_t>(map_.chunks()), false);
        for (size_t i = ord.size(); i-- > 0;) {
            if (produces_gradients(ord[i].pass) && !seen[static_cast<size_t>(ord[i].chunk)]) {
                seen[static_cast<size_t>(ord[i].chunk)] = true;
                last_of_chunk[static_cast<size_t>(s)][i] = true;
            }
        }
    }

    // Emit in a global order that respects every stage's schedule: round-robin over stages,
    // advancing a stage only when the inputs of its next pass from other stages exist.
    std::vector<size_t> next(static_cast<size_t>(P), 0);
    std::vector<bool> fwd_emitted(static_cast<size_t>(M * V), false), bwd_emitted(static_cast<size_t>(M * V), false);
    size_t remaining = 0;
    for (const auto& o : orders_) remaining += o.size();
    while (remaining > 0) {
        bool progress = false;
        for (int s = 0; s < P; ++s) {
            auto& i = next[static_cast<size_t>(s)];
            const auto& ord = orders_[static_cast<size_t>(s)];
            while (i < ord.size()) {
                const PipelineSlot& slot = ord[i];
                const int v = map_.virtual_stage(s, slot.chunk);
                FATHOM_CHECK(map_.route_of(slot.microbatch, M) == v / map_.pieces(),
                             "pipeline schedule runs a micro-batch on a chunk outside its route");
                auto ready_at = [&](const PipelineSlot& x) {
                    const int xv = map_.virtual_stage(s, x.chunk);
                    const size_t xk = key(x.microbatch, xv);
                    switch (x.pass) {
                        case PassKind::Forward: return map_.route_start(xv) || fwd_emitted[xk - 1];
                        case PassKind::BackwardWeight: return static_cast<bool>(bwd_emitted[xk]);
                        default:
                            return map_.route_end(xv) ? static_cast<bool>(fwd_emitted[xk])
                                                      : static_cast<bool>(bwd_emitted[xk + 1]);
                    }
                };
                const size_t k = key(slot.microbatch, v);
                FATHOM_CHECK(!slot.paired || (i + 1 < ord.size() && (ord[i + 1].pass == PassKind::Backward ||
                                                                     ord[i + 1].pass == PassKind::BackwardInput)),
                             "a paired forward must be followed by its backward");
                if (!ready_at(slot) || (slot.paired && !ready_at(ord[i + 1]))) break;
                emit(s, slot, last_of_chunk[static_cast<size_t>(s)][i],
                     slot.paired ? backward_input(s, ord[i + 1]) : std::nullopt);
                if (slot.pass == PassKind::Forward) fwd_emitted[k] = true;
                else if (slot.pass != PassKind::BackwardWeight) bwd_emitted[k] = true;
                ++i;
                --remaining;
                progress = true;
            }
        }
        FATHOM_CHECK(progress, "pipeline schedule deadlocks (cyclic cross-stage dependencies)");
    }
    for (int s = 0; s < P; ++s) sync_.finish(s, last_gradient_pass_[static_cast<size_t>(s)]);
}

std::optional<sim::TaskId> PipelineReplay::backward_input(int s, const PipelineSlot& slot) const {
    const int v = map_.virtual_stage(s, slot.chunk);
    const size_t k = key(slot.microbatch, v);
    return map_.route_end(v) ? forward_last_[k] : backward_done_[k + 1];
}

void PipelineReplay::emit(int s, const PipelineSlot& slot, bool last_of_chunk,
                          std::optional<sim::TaskId> paired_input) {
    const int v = map_.virtual_stage(s, slot.chunk);
    const bool first = map_.route_start(v), last = map_.route_end(v);  // of the micro-batch's route
    const int mb = slot.microbatch;
    const size_t k = key(mb, v);
    const bool forward = slot.pass == PassKind::Forward;
    const size_t pass = pass_index(slot.pass);

    // Input from another pass: the previous virtual stage's send (forward), the next one's
    // (backward), this pass's own backward-input pass (weight gradients).
    std::optional<sim::TaskId> input;
    if (forward && !first) input = forward_done_[k - 1];
    else if (slot.pass == PassKind::BackwardWeight) input = backward_done_[k];
    else if (!forward) input = last ? forward_last_[k] : backward_done_[k + 1];
    // The forward of a forward-backward pair also waits for its backward's input: a zero-length
    // join on the compute stream holds the pair until both have arrived.
    if (paired_input) {
        const sim::TaskId join =
            graph_.add_task(streams_[static_cast<size_t>(s)].compute, sim::Time{}, names_[kForward], kForward, mb, -1);
        if (input) graph_.add_dependency(*input, join);
        graph_.add_dependency(*paired_input, join);
        input = join;
    }
    PassChain chain(graph_, streams_[static_cast<size_t>(s)], styles_[pass], input,
                    carried_.empty() ? nullptr : &carried_[static_cast<size_t>(s)]);
    chain.set_beside_comm(beside_comm_);

    // The embedding (first virtual stage) comes before a forward's layers and after a backward's;
    // the head (last virtual stage) after a forward's layers and before a backward's.
    auto segment = [](const std::optional<PassCost>& c) { return c ? &*c : nullptr; };
    const PassCost* before =
        forward ? (first ? segment(costs_.embedding[pass]) : nullptr) : (last ? segment(costs_.head[pass]) : nullptr);
    const PassCost* after =
        forward ? (last ? segment(costs_.head[pass]) : nullptr) : (first ? segment(costs_.embedding[pass]) : nullptr);
    if (before) chain.segment(*before, mb, -1);
    if (produces_gradients(slot.pass)) sync_.begin_gradient_pass(last_of_chunk);
    emit_layers(s, v, slot, chain);
    if (after) chain.segment(*after, mb, -1);

    sim::TaskId end = chain.finish(mb);
    if (produces_gradients(slot.pass)) last_gradient_pass_[static_cast<size_t>(s)] = end;
    if (forward) forward_last_[k] = end;
    // Send to the neighbouring virtual stage when it sits on another stage.
    if (slot.pass != PassKind::BackwardWeight) {
        const int to = forward ? v + 1 : v - 1;
        if (!(forward ? last : first) && map_.owner(to) != s && costs_.p2p > 0) {
            const sim::TaskId send =
                chain.add_comm(GroupKind::pp, costs_.p2p, costs_.p2p_moves, kAllParts, mb, -1, map_.owner(to));
            graph_.add_dependency(end, send);
            sends_.push_back(Send{send, s, map_.owner(to)});
            if (!plan_.stack.pp_comm_overlap) {
                // Blocking send (Megatron-LM's p2p_communication waits for its batched isend/irecv
                // and synchronizes the device): the stage computes nothing until the send is done,
                // a zero-length task on its in-order compute stream.
                const sim::TaskId wait = chain.add_compute(0, mb, -1);
                graph_.add_dependency(send, wait);
            }
            end = send;
        }
        (forward ? forward_done_ : backward_done_)[k] = end;
    }
}

void PipelineReplay::emit_layers(int s, int v, const PipelineSlot& slot, PassChain& chain) {
    const bool forward = slot.pass == PassKind::Forward;
    const bool weights_only = slot.pass == PassKind::BackwardWeight;
    const int mb = slot.microbatch;
    const int n = map_.layers(v);
    const bool gather = sync_.zero3() && !weights_only;  // weight gradients do not read the weights
    std::vector<sim::TaskId> gathers(static_cast<size_t>(n), 0), computes(static_cast<size_t>(n), 0);
    for (int i = 0; i < n; ++i) {
        const int layer = forward ? i : n - 1 - i;
        const LayerCost& lc = costs_.layer(map_.is_moe(v, layer), plan_.training.layer_recomputed(layer));
        const PassCost& c = lc.pass[pass_index(slot.pass)];
        // ZeRO-3: gather this layer's parameters, prefetched one layer ahead: it may start once the
        // layer two back has finished computing, and it is issued before the previous layer's
        // gradient reduce-scatter (below), as FSDP's backward prefetch does, so a reduction waiting
        // for its layer's compute never holds back the next layer's gather on the in-order stream.
        if (gather && i == 0) gathers[0] = sync_.layer_gather(s, mb, layer, lc);
        const sim::TaskId comp = chain.add_compute(c.compute, mb, layer, c.beside_comm_stretch());
        computes[static_cast<size_t>(i)] = comp;
        chain.chain(comp);
        if (gather) graph_.add_dependency(gathers[static_cast<size_t>(i)], comp);
        // ZeRO-1/2 parameters gathered after the last step: the first forward of the route waits.
        if (forward && mb == (v / map_.pieces()) * (plan_.microbatches() / map_.routes()))
            if (const auto g = sync_.parameter_gather(v, layer)) graph_.add_dependency(*g, comp);
        // The layer's collectives where the priced program places them (program_cost.h). Those
        // issued at the layer's start may start when the previous layer's compute ends (the pass's
        // input for the first layer).
        const std::optional<sim::TaskId> prev =
            i > 0 ? std::optional(computes[static_cast<size_t>(i - 1)]) : chain.input();
        for (const PlacedComm& p : lc.placed[pass_index(slot.pass)]) {
            const sim::TaskId t = chain.add_comm(p.kind, p.seconds, c.moves_of(p.kind), p.parts, mb, layer);
            switch (p.at) {
                case Placement::Awaited:
                case Placement::Beside:
                case Placement::Fused:
                    if (prev) graph_.add_dependency(*prev, t);
                    if (p.at == Placement::Awaited) graph_.add_dependency(t, comp);
                    if (p.at == Placement::Fused) chain.overlap(p.kind);
                    break;
                case Placement::After: chain.follow(comp, t); break;
                case Placement::Overlapped:
                    graph_.add_dependency(comp, t);
                    chain.overlap(p.kind);
                    break;
            }
        }
        if (gather && i + 1 < n) {
            const int next = forward ? i + 1 : n - 2 - i;
            gathers[static_cast<size_t>(i + 1)] = sync_.layer_gather(s, mb, next, costs_.layer(map_.is_moe(v, next)));
            if (i >= 1)
                graph_.add_dependency(computes[static_cast<size_t>(i - 1)], gathers[static_cast<size_t>(i + 1)]);
        }
        if (produces_gradients(slot.pass)) sync_.layer_gradients(s, comp, mb, layer, i, n, lc);
    }
}

}  // namespace fathom::workloads
