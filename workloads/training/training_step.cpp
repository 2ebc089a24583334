#include "workloads/training/training_step.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <ostream>
#include <set>

#include "models/llm/transformer_ops.h"
#include "sim/error.h"
#include "sim/simulator.h"
#include "sim/task_graph.h"
#include "sim/trace_writer.h"
#include "workloads/training/schedules/pipeline_schedule.h"

namespace fathom::workloads {
namespace {

using hardware::Collective;
using hardware::CommGroup;
using sim::StreamId;
using sim::TaskId;
using sim::Time;

// Task tags (sim::TaskRecord::tag): what a task is, for the trace and the metrics.
enum Tag : uint16_t { kForward, kBackward, kOptimizer, kTpComm, kCpComm, kPpComm, kDpGradSync, kDpParamGather };
const char* tag_name(uint16_t t) {
    static const char* names[] = {"F", "B", "optimizer", "tp", "cp", "pp", "dp-grad", "dp-param"};
    return t < 8 ? names[t] : "?";
}

double sum_cost(const models::CostModel& cost, const std::vector<models::OpDesc>& ops) {
    double s = 0;
    for (const auto& op : ops) s += cost.seconds(op);
    return s;
}

// Costs of one layer (or the embedding / head) for one micro-batch on one rank.
struct PassCost {
    double compute = 0;  // seconds on the compute stream
    double tp = 0;       // seconds of TP collectives on the critical path
    double cp = 0;       // seconds of CP exchanges
};

struct StageStreams {
    StreamId compute, tp, cp, pp, dp;
};

// Measure of the union of sorted, per-stream non-overlapping interval lists.
double union_measure(std::vector<std::pair<double, double>> iv) {
    std::sort(iv.begin(), iv.end());
    double total = 0, cur_s = -1, cur_e = -1;
    for (const auto& [s, e] : iv) {
        if (s > cur_e) {
            if (cur_e > cur_s) total += cur_e - cur_s;
            cur_s = s;
            cur_e = e;
        } else {
            cur_e = std::max(cur_e, e);
        }
    }
    if (cur_e > cur_s) total += cur_e - cur_s;
    return total;
}

class StepBuilder {
public:
    explicit StepBuilder(const StepInputs& in) : in_(in), p_(in.plan), graph_(sim_) {}

    StepReport run(std::ostream* trace);

private:
    void compute_costs();
    void build();
    void emit_slot(int stage, const PipelineSlot& slot, bool last_backward_of_chunk);
    TaskId add(int /*stage*/, StreamId s, double seconds, uint16_t tag, int mb, int layer) {
        return graph_.add_task(s, Time::from_seconds(seconds), names_[tag], tag, mb, layer);
    }
    double collective(Collective op, double bytes, CommGroup g) const {
        return in_.network.collective(op, bytes, g).seconds;
    }
    int virtual_stage(int stage, int chunk) const { return chunk * p_.pp + stage; }
    // How one rank sees a layer under this plan.
    models::ShardSpec shard_spec() const {
        models::ShardSpec s;
        s.tp = p_.tp;
        s.sequence_parallel = p_.sequence_parallel && p_.tp > 1;
        s.cp = p_.cp;
        s.micro_batch = p_.micro_batch;
        s.seq_len = p_.seq_len;
        s.gemm_dtype = p_.dtype;
        s.flash_attention = p_.flash_attention;
        s.fused_elementwise = p_.fused_elementwise;
        return s;
    }
    // Parameters one rank of `stage` holds: its layers, the embedding on the first stage, the
    // output layer on the last (a copy of the tied embedding when pp > 1), all divided by tp.
    double stage_param_count(int stage) const {
        double n = 0;
        for (int v = stage; v < p_.pp * p_.vp; v += p_.pp) n += layers_[static_cast<size_t>(v)] * layer_params_;
        if (stage == 0) n += in_.model.embedding_params(p_.seq_len) / p_.tp;
        if (stage == p_.pp - 1) {
            n += in_.model.output_params() / p_.tp;
            if (in_.model.tied_embeddings && p_.pp > 1)
                n += static_cast<double>(in_.model.vocab) * static_cast<double>(in_.model.hidden) / p_.tp;
        }
        return n;
    }

    const StepInputs& in_;
    const TrainingPlan& p_;
    sim::Simulator sim_;
    sim::TaskGraph graph_;
    std::vector<uint32_t> names_;
    std::vector<StageStreams> streams_;
    std::vector<int> layers_;  // per virtual stage
    std::vector<std::vector<PipelineSlot>> orders_;

    // Per-layer costs (all layers are identical).
    PassCost fwd_, bwd_;
    PassCost emb_fwd_, emb_bwd_, head_fwd_, head_bwd_;
    double p2p_s_ = 0;
    double layer_params_ = 0;        // per rank (divided by tp)
    double zero3_gather_s_ = 0;      // all-gather of one layer's parameters
    double zero3_reduce_s_ = 0;      // reduce-scatter of one layer's gradients
    CommGroup dp_group_, cp_group_, tp_group_, pp_pair_;

    // Cross-stage bookkeeping: last task of (micro-batch, virtual stage) pass, fwd and bwd.
    std::vector<TaskId> fwd_done_, bwd_done_;      // index mb * V + v; the p2p send task (or compute)
    std::vector<TaskId> fwd_last_compute_;         // last forward task of (mb, v)
    std::vector<std::vector<TaskId>> param_gather_;  // per virtual stage, per layer (ZeRO-1/2 overlap)
    std::vector<std::vector<TaskId>> grad_tasks_;    // per stage: DP gradient tasks
    std::vector<TaskId> stage_last_backward_;
    std::set<std::string> uncalibrated_;
};

void StepBuilder::compute_costs() {
    const auto& m = in_.model;
    const models::ShardSpec s = shard_spec();

    tp_group_ = {p_.tp, 1};
    cp_group_ = {p_.cp, p_.tp};
    dp_group_ = {p_.dp * p_.cp, p_.tp};  // gradients are reduced over dp x cp
    pp_pair_ = {2, p_.tp * p_.cp * p_.dp};

    const auto layer = models::transformer_layer_ops(m, s);
    const auto& cost = in_.cost;
    auto note_range = [this, &cost](const std::vector<models::OpDesc>& ops) {
        for (const auto& op : ops)
            if (!cost.calibrated(op)) uncalibrated_.insert(op.name);
    };
    note_range(layer.forward);
    note_range(layer.backward);
    fwd_.compute = sum_cost(cost, layer.forward);
    bwd_.compute = sum_cost(cost, layer.backward);

    const double tokens = static_cast<double>(p_.micro_batch) * static_cast<double>(p_.seq_len) / p_.cp;
    const double act_bytes = tokens * static_cast<double>(m.hidden) * 2.0;  // one [T, h] bf16 tensor
    if (p_.tp > 1) {
        // Per layer and direction: with sequence parallelism two all-gathers and two
        // reduce-scatters of the [T, h] activation (nccl-tests size = the gathered tensor);
        // without it two all-reduces of the same tensor.
        if (s.sequence_parallel) {
            fwd_.tp = 2 * collective(Collective::AllGather, act_bytes, tp_group_) +
                      2 * collective(Collective::ReduceScatter, act_bytes, tp_group_);
        } else {
            fwd_.tp = 2 * collective(Collective::AllReduce, act_bytes, tp_group_);
        }
        bwd_.tp = fwd_.tp;
    }
    if (p_.cp > 1) {
        // Ring attention exchanges the K and V of every shard: an all-gather of [b, s, kv, d]
        // twice (K and V) forward; backward re-gathers K, V and reduce-scatters dK, dV.
        const double kv = static_cast<double>(p_.micro_batch) * static_cast<double>(p_.seq_len) *
                          static_cast<double>(std::max<int64_t>(1, m.kv_heads / p_.tp) * m.dim_head()) * 2.0;
        fwd_.cp = collective(Collective::AllGather, 2 * kv, cp_group_);
        bwd_.cp = fwd_.cp + collective(Collective::ReduceScatter, 2 * kv, cp_group_);
    }
    if (p_.recompute == Recompute::Selective) bwd_.compute += sum_cost(cost, models::selective_recompute_ops(layer));
    if (p_.recompute == Recompute::Full) {
        bwd_.compute += fwd_.compute;
        bwd_.tp += fwd_.tp;
        bwd_.cp += fwd_.cp;
    }

    const auto emb = models::embedding_ops(m, s);
    emb_fwd_.compute = sum_cost(cost, emb.forward);
    emb_bwd_.compute = sum_cost(cost, emb.backward);
    const auto head = models::head_ops(m, s);
    note_range(emb.forward);
    note_range(emb.backward);
    note_range(head.forward);
    note_range(head.backward);
    head_fwd_.compute = sum_cost(cost, head.forward);
    head_bwd_.compute = sum_cost(cost, head.backward);
    if (p_.tp > 1) {
        // Vocab-parallel embedding: reduce (-scatter with SP) of the looked-up rows; the head
        // gathers its input (SP) and its backward reduces the input gradient.
        const Collective red = s.sequence_parallel ? Collective::ReduceScatter : Collective::AllReduce;
        emb_fwd_.tp = collective(red, act_bytes, tp_group_);
        head_fwd_.tp = s.sequence_parallel ? collective(Collective::AllGather, act_bytes, tp_group_) : 0.0;
        head_bwd_.tp = collective(red, act_bytes, tp_group_);
    }
    // Activations (forward) and their gradients (backward) between stages: [T, h] per TP rank,
    // scattered over the TP group (Megatron sends 1/tp of it per rank).
    if (p_.pp > 1) p2p_s_ = collective(Collective::SendRecv, act_bytes / p_.tp, pp_pair_);

    layer_params_ = m.layer_params() / p_.tp;
    if (p_.zero_stage >= 3) {
        zero3_gather_s_ = collective(Collective::AllGather, layer_params_ * 2.0, dp_group_);
        zero3_reduce_s_ = collective(Collective::ReduceScatter, layer_params_ * p_.grad_bytes, dp_group_);
    }
}

void StepBuilder::build() {
    const int P = p_.pp, V = p_.pp * p_.vp, M = p_.microbatches();
    for (uint16_t t = 0; t < 8; ++t) names_.push_back(graph_.intern(tag_name(t)));
    for (int s = 0; s < P; ++s) {
        const std::string g = "stage " + std::to_string(s);
        streams_.push_back({graph_.add_stream("compute", g), graph_.add_stream("tp-comm", g),
                            graph_.add_stream("cp-comm", g), graph_.add_stream("pp-comm", g),
                            graph_.add_stream("dp-comm", g)});
    }
    layers_ = p_.layers_per_virtual_stage;
    if (layers_.empty()) layers_.assign(static_cast<size_t>(V), static_cast<int>(in_.model.layers / V));

    const auto sched_ptr = schedule_registry().get(p_.schedule).factory();
    const PipelineSchedule& sched = *sched_ptr;
    for (int s = 0; s < P; ++s) orders_.push_back(sched.order(s, P, p_.vp, M));

    fwd_done_.assign(static_cast<size_t>(M * V), 0);
    bwd_done_.assign(static_cast<size_t>(M * V), 0);
    fwd_last_compute_.assign(static_cast<size_t>(M * V), 0);
    grad_tasks_.assign(static_cast<size_t>(P), {});
    stage_last_backward_.assign(static_cast<size_t>(P), 0);

    // ZeRO-1/2 parameter all-gather of the previous optimizer step, overlapped with this step's
    // forward: one all-gather per bucket, issued at the start of the step; the first forward of
    // each layer waits for its bucket.
    param_gather_.assign(static_cast<size_t>(V), {});
    if (p_.zero_stage >= 1 && p_.zero_stage <= 2 && p_.param_gather_overlap && p_.dp * p_.cp > 1) {
        for (int v = 0; v < V; ++v) {
            const int stage = v % P;
            auto& gathers = param_gather_[static_cast<size_t>(v)];
            double bucket = 0;
            TaskId current = 0;
            for (int l = 0; l < layers_[static_cast<size_t>(v)]; ++l) {
                if (l == 0 || bucket >= p_.bucket_params) {
                    const int n = static_cast<int>(std::min<double>(std::ceil(p_.bucket_params / layer_params_),
                                                                    layers_[static_cast<size_t>(v)] - l));
                    const double t = collective(Collective::AllGather, n * layer_params_ * 2.0, dp_group_);
                    current = add(stage, streams_[static_cast<size_t>(stage)].dp, t, kDpParamGather, -1, l);
                    bucket = 0;
                }
                bucket += layer_params_;
                gathers.push_back(current);
            }
        }
    }

    // Emit work in a global order that respects every stage's schedule: round-robin over stages,
    // advancing a stage only when the cross-stage inputs of its next slot exist.
    std::vector<size_t> next(static_cast<size_t>(P), 0);
    std::vector<std::vector<bool>> is_last_bwd(static_cast<size_t>(P));
    for (int s = 0; s < P; ++s) {
        const auto& ord = orders_[static_cast<size_t>(s)];
        is_last_bwd[static_cast<size_t>(s)].assign(ord.size(), false);
        std::vector<bool> seen(static_cast<size_t>(p_.vp), false);
        for (size_t i = ord.size(); i-- > 0;) {
            if (!ord[i].forward && !seen[static_cast<size_t>(ord[i].chunk)]) {
                seen[static_cast<size_t>(ord[i].chunk)] = true;
                is_last_bwd[static_cast<size_t>(s)][i] = true;
            }
        }
    }
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
                const int v = virtual_stage(s, slot.chunk);
                const size_t key = static_cast<size_t>(slot.microbatch * V + v);
                bool ready;
                if (slot.forward) ready = v == 0 || fwd_emitted[key - 1];
                else ready = (v == V - 1 ? fwd_emitted[key] : bwd_emitted[key + 1]);
                if (!ready) break;
                emit_slot(s, slot, is_last_bwd[static_cast<size_t>(s)][i]);
                (slot.forward ? fwd_emitted : bwd_emitted)[key] = true;
                ++i;
                --remaining;
                progress = true;
            }
        }
        FATHOM_CHECK(progress, "pipeline schedule deadlocks (cyclic cross-stage dependencies)");
    }

    for (int s = 0; s < P; ++s) {
        const auto& st = streams_[static_cast<size_t>(s)];
        // Without overlap, gradient reduction starts only after the stage's whole backward.
        if (!p_.dp_comm_overlap)
            for (TaskId g : grad_tasks_[static_cast<size_t>(s)])
                graph_.add_dependency(stage_last_backward_[static_cast<size_t>(s)], g);
        // Optimizer step once the stage's gradients are reduced.
        const double stage_params = stage_param_count(s);
        const double shard = p_.zero_stage >= 1 ? stage_params / (p_.dp * p_.cp) : stage_params;
        // Fused Adam: read fp32 master, m, v and the gradient; write master, m, v and the bf16 weight.
        const double opt_bytes = shard * (4 * 3 + p_.grad_bytes + 4 * 3 + 2);
        models::OpDesc opt = models::memory_op("adam", opt_bytes);
        opt.kind = models::OpKind::Optimizer;
        const TaskId o = add(s, st.compute, in_.cost.seconds(opt), kOptimizer, -1, -1);
        for (TaskId g : grad_tasks_[static_cast<size_t>(s)]) graph_.add_dependency(g, o);
        graph_.add_dependency(stage_last_backward_[static_cast<size_t>(s)], o);
        if (p_.zero_stage >= 1 && p_.zero_stage <= 2 && !p_.param_gather_overlap && p_.dp * p_.cp > 1) {
            const double t = collective(Collective::AllGather, stage_params * 2.0, dp_group_);
            const TaskId ag = add(s, st.dp, t, kDpParamGather, -1, -1);
            graph_.add_dependency(o, ag);
        }
    }
}

void StepBuilder::emit_slot(int s, const PipelineSlot& slot, bool last_bwd) {
    const auto& st = streams_[static_cast<size_t>(s)];
    const int P = p_.pp, V = P * p_.vp;
    const int v = virtual_stage(s, slot.chunk);
    const int mb = slot.microbatch;
    const size_t key = static_cast<size_t>(mb * V + v);
    const int n_layers = layers_[static_cast<size_t>(v)];
    const bool zero3 = p_.zero_stage >= 3 && p_.dp * p_.cp > 1;
    const bool dp_sync = p_.dp * p_.cp > 1 && !zero3;

    // Cross-stage input: the previous virtual stage's send (forward) or the next one's (backward).
    TaskId input = 0;
    bool has_input = false;
    if (slot.forward && v > 0) {
        input = fwd_done_[key - 1];
        has_input = true;
    } else if (!slot.forward) {
        input = v == V - 1 ? fwd_last_compute_[key] : bwd_done_[key + 1];
        has_input = true;
    }

    TaskId prev = 0;
    bool has_prev = false;
    auto chain = [&](TaskId t) {
        if (has_prev) graph_.add_dependency(prev, t);
        else if (has_input) graph_.add_dependency(input, t);
        prev = t;
        has_prev = true;
    };
    const uint16_t tag = slot.forward ? kForward : kBackward;

    // Embedding (first virtual stage, forward) / head backward (last virtual stage) come first.
    if (slot.forward && v == 0) {
        chain(add(s, st.compute, emb_fwd_.compute, tag, mb, -1));
        if (emb_fwd_.tp > 0) chain(add(s, st.tp, emb_fwd_.tp, kTpComm, mb, -1));
    }
    if (!slot.forward && v == V - 1) {
        chain(add(s, st.compute, head_bwd_.compute, tag, mb, -1));
        if (head_bwd_.tp > 0) chain(add(s, st.tp, head_bwd_.tp, kTpComm, mb, -1));
    }

    const PassCost& c = slot.forward ? fwd_ : bwd_;
    double bucket = 0;
    std::vector<TaskId> tp_tail;  // overlapped TP comms the pass must still wait for
    std::vector<TaskId> gathers(static_cast<size_t>(n_layers), 0);
    std::vector<TaskId> computes(static_cast<size_t>(n_layers), 0);
    for (int i = 0; i < n_layers; ++i) {
        const int layer = slot.forward ? i : n_layers - 1 - i;
        // ZeRO-3: gather this layer's parameters, prefetched one layer ahead (it may start once
        // the layer two back has finished computing).
        if (zero3) {
            gathers[static_cast<size_t>(i)] = add(s, st.dp, zero3_gather_s_, kDpParamGather, mb, layer);
            if (i >= 2) graph_.add_dependency(computes[static_cast<size_t>(i - 2)], gathers[static_cast<size_t>(i)]);
        }
        const TaskId comp = add(s, st.compute, c.compute, tag, mb, layer);
        computes[static_cast<size_t>(i)] = comp;
        chain(comp);
        if (zero3) graph_.add_dependency(gathers[static_cast<size_t>(i)], comp);
        if (slot.forward && !param_gather_[static_cast<size_t>(v)].empty() && mb == 0)
            graph_.add_dependency(param_gather_[static_cast<size_t>(v)][static_cast<size_t>(layer)], comp);
        if (c.cp > 0) {
            // KV exchange runs beside the layer's compute; the next layer waits for both.
            const TaskId cpt = add(s, st.cp, c.cp, kCpComm, mb, layer);
            if (has_input && i == 0) graph_.add_dependency(input, cpt);
            else if (i > 0) graph_.add_dependency(computes[static_cast<size_t>(i - 1)], cpt);
            graph_.add_dependency(cpt, comp);
        }
        if (c.tp > 0) {
            const TaskId tpt = add(s, st.tp, c.tp, kTpComm, mb, layer);
            graph_.add_dependency(comp, tpt);
            if (p_.tp_comm_overlap) tp_tail.push_back(tpt);
            else prev = tpt;
        }
        if (!slot.forward) {
            if (zero3) {
                const TaskId rs = add(s, st.dp, zero3_reduce_s_, kDpGradSync, mb, layer);
                graph_.add_dependency(comp, rs);
                grad_tasks_[static_cast<size_t>(s)].push_back(rs);
            } else if (dp_sync && last_bwd) {
                bucket += layer_params_;
                if (bucket >= p_.bucket_params || i == n_layers - 1) {
                    const double t = collective(p_.zero_stage >= 1 ? Collective::ReduceScatter : Collective::AllReduce,
                                                bucket * p_.grad_bytes, dp_group_);
                    const TaskId g = add(s, st.dp, t, kDpGradSync, mb, layer);
                    graph_.add_dependency(comp, g);
                    grad_tasks_[static_cast<size_t>(s)].push_back(g);
                    bucket = 0;
                }
            }
        }
    }

    if (slot.forward && v == V - 1) {
        if (head_fwd_.tp > 0) chain(add(s, st.tp, head_fwd_.tp, kTpComm, mb, -1));
        chain(add(s, st.compute, head_fwd_.compute, tag, mb, -1));
    }
    if (!slot.forward && v == 0) {
        chain(add(s, st.compute, emb_bwd_.compute, tag, mb, -1));
    }
    // With overlapped TP communication the pass ends when its last collective has finished: a
    // zero-length task on the (in-order) TP stream after the last one, joined with the compute.
    TaskId end = prev;
    if (!tp_tail.empty()) {
        const TaskId join = add(s, st.tp, 0.0, kTpComm, mb, -1);
        graph_.add_dependency(prev, join);
        end = join;
    }
    if (!slot.forward) stage_last_backward_[static_cast<size_t>(s)] = end;
    if (slot.forward) fwd_last_compute_[key] = end;

    // Send to the neighbouring virtual stage.
    const bool send = slot.forward ? v < V - 1 : v > 0;
    if (send && p2p_s_ > 0) {
        const TaskId pt = add(s, st.pp, p2p_s_, kPpComm, mb, -1);
        graph_.add_dependency(end, pt);
        end = pt;
    }
    (slot.forward ? fwd_done_ : bwd_done_)[key] = end;
}

StepReport StepBuilder::run(std::ostream* trace) {
    compute_costs();
    build();

    // Observers: per-stage busy intervals of each stream, collected outside the model.
    const size_t n_streams = graph_.stream_count();
    std::vector<std::vector<std::pair<double, double>>> busy(n_streams);
    graph_.on_finish.connect([&busy](const sim::TaskRecord& r) {
        if (r.end > r.start) busy[r.stream].emplace_back(r.start.seconds(), r.end.seconds());
    });
    graph_.start();
    sim_.run();
    FATHOM_CHECK(graph_.unfinished() == 0, "training replay ended with unfinished tasks (dependency cycle)");

    StepReport rep;
    double end = 0;
    for (sim::TaskId t = 0; t < graph_.task_count(); ++t) end = std::max(end, graph_.end_time(t).seconds());
    rep.step_time_s = end;
    rep.events = sim_.events_processed();
    rep.tasks = graph_.task_count();
    const double gpus = p_.gpus();
    const double tokens = static_cast<double>(p_.global_batch) * static_cast<double>(p_.seq_len);
    rep.tokens_per_s_per_gpu = tokens / (end * gpus);
    rep.model_flops_per_step = 3.0 * in_.model.forward_flops_per_token(p_.seq_len) * tokens;
    rep.model_tflops_per_gpu = rep.model_flops_per_step / (end * gpus) / 1e12;
    rep.mfu = rep.model_flops_per_step / (end * gpus * in_.cluster.accelerator.peak(p_.dtype));
    rep.memory_capacity_bytes = in_.cluster.accelerator.memory_capacity;

    const models::ShardSpec s = shard_spec();
    const double full_layer = models::layer_activation_bytes(in_.model, s);
    const double per_layer = p_.recompute == Recompute::Full        ? models::layer_input_bytes(in_.model, s)
                             : p_.recompute == Recompute::Selective ? models::layer_selective_activation_bytes(in_.model, s)
                                                                    : full_layer;
    const int P = p_.pp, V = P * p_.vp;
    for (int st = 0; st < P; ++st) {
        StageReport sr;
        const auto& ss = streams_[static_cast<size_t>(st)];
        auto busy_of = [&](StreamId id) {
            double t = 0;
            for (const auto& [a, b] : busy[id]) t += b - a;
            return t;
        };
        sr.compute_s = busy_of(ss.compute);
        sr.tp_comm_s = busy_of(ss.tp);
        sr.cp_comm_s = busy_of(ss.cp);
        sr.pp_comm_s = busy_of(ss.pp);
        sr.dp_comm_s = busy_of(ss.dp);
        std::vector<std::pair<double, double>> all = busy[ss.compute];
        std::vector<std::pair<double, double>> comm;
        for (StreamId id : {ss.tp, ss.cp, ss.pp, ss.dp}) {
            all.insert(all.end(), busy[id].begin(), busy[id].end());
            comm.insert(comm.end(), busy[id].begin(), busy[id].end());
        }
        const double any = union_measure(all);
        sr.idle_s = end - any;
        sr.exposed_comm_s = any - union_measure(busy[ss.compute]);
        sr.peak_in_flight = peak_in_flight(orders_[static_cast<size_t>(st)]);

        double layers = 0;
        for (int v = st; v < V; v += P) layers += layers_[static_cast<size_t>(v)];
        sr.layers = static_cast<int>(layers);
        models::MemoryInputs mi;
        mi.params = stage_param_count(st);
        mi.dp = p_.dp * p_.cp;
        mi.zero_stage = p_.zero_stage;
        // bf16 weights; under fp8 the fp8 copy of a layer's weights is cast per use (transient).
        mi.weight_bytes = 2;
        mi.grad_bytes = p_.grad_bytes;
        mi.gathered_params = 2 * layer_params_;
        // Activations per micro-batch-chunk: the chunk's layers (in_flight counts chunks).
        mi.activation_per_microbatch = per_layer * layers / p_.vp;
        mi.in_flight = sr.peak_in_flight;
        const double tok = static_cast<double>(p_.micro_batch) * static_cast<double>(p_.seq_len) / p_.cp;
        double transient = p_.recompute == Recompute::Full ? full_layer : 0.0;
        if (st == P - 1) {
            // Logits in bf16 plus the fp32 softmax of the loss, one micro-batch.
            transient = std::max(transient, tok * static_cast<double>(in_.model.vocab / p_.tp) * (2.0 + 4.0));
        }
        mi.transient = transient;
        mi.runtime_reserved = p_.runtime_reserved;
        sr.memory = models::estimate_memory(mi);
        rep.peak_memory_bytes = std::max(rep.peak_memory_bytes, sr.memory.total());
        rep.bubble_fraction += sr.idle_s / end / P;
        rep.exposed_comm_s += sr.exposed_comm_s / P;
        rep.stages.push_back(sr);
    }
    rep.out_of_memory = rep.peak_memory_bytes > rep.memory_capacity_bytes;
    rep.uncalibrated_ops.assign(uncalibrated_.begin(), uncalibrated_.end());

    if (trace) {
        sim::write_chrome_trace(graph_, *trace, [this](const sim::TaskRecord& r) {
            std::string n = tag_name(r.tag);
            if (r.label_a >= 0) n += " mb" + std::to_string(r.label_a);
            if (r.label_b >= 0) n += " L" + std::to_string(r.label_b);
            return n;
        });
    }
    return rep;
}

}  // namespace

StepReport simulate_training_step(const StepInputs& in, std::ostream* trace) {
    StepBuilder b(in);
    return b.run(trace);
}

}  // namespace fathom::workloads
