#include "workloads/replay/program_cost.h"

#include "sim/error.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace fathom::workloads {

PlacedComms PassCost::placed() const {
    PlacedComms p;
    for (int at = 0; at <= static_cast<int>(Placement::Overlapped); ++at)
        for (size_t g = 0; g < lead.size(); ++g) {
            const auto kind = static_cast<models::GroupKind>(g);
            const double exposed = lead[g] + trail[g];
            if (exposed > 0 && static_cast<int>(exposed_at[g]) == at)
                p.items[p.size++] = {kind, exposed_at[g], exposed, kExposedParts};
            if (hidden[g] > 0 && static_cast<int>(hidden_at[g]) == at)
                p.items[p.size++] = {kind, hidden_at[g], hidden[g], bit(CommPart::Hidden)};
        }
    return p;
}

PassCost& PassCost::operator+=(const PassCost& o) {
    compute += o.compute;
    compute_beside_comm += o.compute_beside_comm;
    for (size_t g = 0; g < lead.size(); ++g) {
        if (lead[g] + trail[g] + hidden[g] <= 0) {  // a kind only `o` has: its placements
            exposed_at[g] = o.exposed_at[g];
            hidden_at[g] = o.hidden_at[g];
        }
        lead[g] += o.lead[g];
        trail[g] += o.trail[g];
        hidden[g] += o.hidden[g];
        moves[g].insert(moves[g].end(), o.moves[g].begin(), o.moves[g].end());
    }
    return *this;
}

double ProgramCoster::seconds(const models::OpDesc& op) {
    const int c = OpSources::class_of(op.kind);
    sources_.seen[static_cast<size_t>(c)] = true;
    bool in_range = false;
    double t = cost_.priced(op, in_range);
    if (in_range) sources_.inside[static_cast<size_t>(c)] = true;
    else sources_.outside[static_cast<size_t>(c)].insert(op.name);
    if (op.kind == models::OpKind::AttentionFwd || op.kind == models::OpKind::AttentionBwd) t *= attention_scale_;
    FATHOM_CHECK(std::isfinite(t) && t >= 0, "op '" + op.name + "' priced at " + std::to_string(t) + " s");
    return t;
}

double ProgramCoster::collective(hardware::Collective op, double bytes, models::GroupKind kind) const {
    return network_.collective(op, bytes, layout_.group(kind)).seconds;
}

namespace {

// An op's slowdown beside a collective, by its class.
double beside_comm_slowdown(const hardware::AcceleratorCalibration::BesideComm& b, const models::OpDesc& op) {
    switch (op.kind) {
        case models::OpKind::Gemm: return op.dtype == hardware::Dtype::fp8 ? b.gemm_fp8 : b.gemm;
        case models::OpKind::AttentionFwd:
        case models::OpKind::AttentionBwd: return b.attention;
        case models::OpKind::MemoryBound:
        case models::OpKind::Optimizer: return b.memory_bound;
    }
    return 1.0;
}

// Adds `m`, its part `part` of the `whole` seconds it is priced at, where there is such a part.
void add_move(CommMoves* to, CommMove m, CommPart part, double seconds, double whole) {
    if (!to || !(seconds > 0) || !(whole > 0)) return;
    m.part = part;
    m.share = seconds / whole;
    to->push_back(m);
}

// The time of the GEMM the tensor-parallel collective at step i is fused with under TP overlap: the
// next GEMM for an all-gather (its consumer), the previous one otherwise (its producer); 0 when
// there is none.
double fused_gemm(const std::vector<models::ProgramStep>& steps, const std::vector<double>& op_time, size_t i) {
    auto gemm = [&](size_t j) {
        return steps[j].kind == models::ProgramStep::Kind::Compute && steps[j].op.kind == models::OpKind::Gemm;
    };
    if (*steps[i].comm.collective == hardware::Collective::AllGather) {
        for (size_t j = i + 1; j < steps.size(); ++j)
            if (gemm(j)) return op_time[j];
    } else {
        for (size_t j = i; j-- > 0;)
            if (gemm(j)) return op_time[j];
    }
    return 0.0;
}

bool attention_role(models::OpRole r) {
    using models::OpRole;
    return r == OpRole::Attention || r == OpRole::AttentionScores || r == OpRole::AttentionSoftmax ||
           r == OpRole::AttentionDropout || r == OpRole::AttentionValues;
}

}  // namespace

double ProgramCoster::transfer(const models::CommStep& step) const {
    return step.collective ? collective(*step.collective, step.bytes, step.group) / step.efficiency : 0.0;
}

PassCost ProgramCoster::cost(const models::LayerProgram& program) {
    PassCost c;
    bool computed = false;
    double attention = 0;  // the program's attention time, which overlapped collectives run beside
    const auto& steps = program.steps;
    std::vector<double> op_time(steps.size(), 0.0);
    for (size_t i = 0; i < steps.size(); ++i) {
        const auto& s = steps[i];
        if (s.kind != models::ProgramStep::Kind::Compute) continue;
        op_time[i] = seconds(s.op);
        c.compute += op_time[i];
        c.compute_beside_comm += op_time[i] * beside_comm_slowdown(beside_comm_, s.op);
        if (attention_role(s.op.role)) attention += op_time[i];
    }
    for (size_t i = 0; i < steps.size(); ++i) {
        const auto& s = steps[i];
        if (s.kind == models::ProgramStep::Kind::Compute) {
            computed = true;
            continue;
        }
        if (!s.comm.collective) continue;
        const size_t g = static_cast<size_t>(s.comm.group);
        CommMoves* moves = moves_ ? &c.moves[g] : nullptr;
        if (s.comm.awaited) c.exposed_at[g] = Placement::Awaited;
        if (s.comm.microbatch_overlap && ep_overlap_) c.exposed_at[g] = Placement::Overlapped;
        const double t = transfer(s.comm);
        const CommPart part = computed ? CommPart::Trail : CommPart::Lead;
        auto& lumps = computed ? c.trail : c.lead;
        if (s.comm.attention_steps > 0) {
            // Each of its `overlapped` transfers: the stall it causes exposed, the rest hidden beside
            // its attention step.
            c.exposed_at[g] = Placement::Awaited;
            c.hidden_at[g] = Placement::Beside;
            const double step = attention / s.comm.attention_steps, k = s.comm.overlapped;
            lumps[g] += k * std::max(0.0, t - step);
            c.hidden[g] += k * std::min(t, step);
            const CommMove move{*s.comm.collective, s.comm.bytes, s.comm.group, part, 1, s.comm.overlapped};
            add_move(moves, move, part, std::max(0.0, t - step), t);
            add_move(moves, move, CommPart::Hidden, std::min(t, step), t);
            continue;
        }
        const CommMove move{*s.comm.collective, s.comm.bytes, s.comm.group};
        if (tp_overlap_ && s.comm.gemm_fused) {
            c.hidden_at[g] = Placement::Fused;
            const double hidden = std::min(t, fused_gemm(steps, op_time, i));
            lumps[g] += t - hidden;
            c.hidden[g] += hidden;
            c.compute += *tp_overlap_ * hidden;
            c.compute_beside_comm += *tp_overlap_ * hidden;
            add_move(moves, move, part, t - hidden, t);
            add_move(moves, move, CommPart::Hidden, hidden, t);
        } else {
            lumps[g] += t;
            add_move(moves, move, part, t, t);
        }
    }
    return c;
}

}  // namespace fathom::workloads
