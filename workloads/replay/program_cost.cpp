#include "workloads/replay/program_cost.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/error.h"

namespace fathom::workloads {

PassCost& PassCost::operator+=(const PassCost& o) {
    compute += o.compute;
    for (size_t g = 0; g < lead.size(); ++g) {
        lead[g] += o.lead[g];
        trail[g] += o.trail[g];
        hidden[g] += o.hidden[g];
    }
    return *this;
}

double ProgramCoster::seconds(const models::OpDesc& op) {
    if (!cost_.calibrated(op)) uncalibrated_.insert(op.name);
    double t = cost_.seconds(op);
    if (op.kind == models::OpKind::AttentionFwd || op.kind == models::OpKind::AttentionBwd) t *= attention_scale_;
    FATHOM_CHECK(std::isfinite(t) && t >= 0, "op '" + op.name + "' priced at " + std::to_string(t) + " s");
    return t;
}

double ProgramCoster::collective(hardware::Collective op, double bytes, models::GroupKind kind) const {
    return network_.collective(op, bytes, layout_.group(kind)).seconds;
}

namespace {

bool attention_role(models::OpRole r) {
    using models::OpRole;
    return r == OpRole::Attention || r == OpRole::AttentionScores || r == OpRole::AttentionSoftmax ||
           r == OpRole::AttentionDropout || r == OpRole::AttentionValues;
}

}  // namespace

PassCost ProgramCoster::cost(const models::LayerProgram& program) {
    PassCost c;
    bool computed = false, overlaps = false;
    double attention = 0;  // the program's attention time, which overlapped collectives run beside
    for (const auto& s : program.steps) {
        if (s.kind == models::ProgramStep::Kind::Compute) {
            const double t = seconds(s.op);
            c.compute += t;
            if (attention_role(s.op.role)) attention += t;
            computed = true;
        } else if (s.comm.collective && s.comm.attention_steps > 0) {
            overlaps = true;
        } else if (s.comm.collective) {
            auto& lumps = computed ? c.trail : c.lead;
            lumps[static_cast<size_t>(s.comm.group)] += collective(*s.comm.collective, s.comm.bytes, s.comm.group);
        }
    }
    if (!overlaps) return c;
    computed = false;
    for (const auto& s : program.steps) {
        if (s.kind == models::ProgramStep::Kind::Compute) computed = true;
        if (s.kind != models::ProgramStep::Kind::Comm || !s.comm.collective || s.comm.attention_steps <= 0) continue;
        const double t = collective(*s.comm.collective, s.comm.bytes, s.comm.group);
        const double step = attention / s.comm.attention_steps;
        const double k = s.comm.overlapped;
        const size_t g = static_cast<size_t>(s.comm.group);
        (computed ? c.trail : c.lead)[g] += k * std::max(0.0, t - step);
        c.hidden[g] += k * std::min(t, step);
    }
    return c;
}

}  // namespace fathom::workloads
