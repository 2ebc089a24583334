#include "workloads/replay/program_cost.h"

namespace fathom::workloads {

PassCost& PassCost::operator+=(const PassCost& o) {
    compute += o.compute;
    for (size_t g = 0; g < lead.size(); ++g) {
        lead[g] += o.lead[g];
        trail[g] += o.trail[g];
    }
    return *this;
}

double ProgramCoster::seconds(const models::OpDesc& op) {
    if (!cost_.calibrated(op)) uncalibrated_.insert(op.name);
    return cost_.seconds(op);
}

double ProgramCoster::collective(hardware::Collective op, double bytes, models::GroupKind kind) const {
    return network_.collective(op, bytes, layout_.group(kind)).seconds;
}

PassCost ProgramCoster::cost(const models::LayerProgram& program) {
    PassCost c;
    bool computed = false;
    for (const auto& s : program.steps) {
        if (s.kind == models::ProgramStep::Kind::Compute) {
            c.compute += seconds(s.op);
            computed = true;
        } else if (s.comm.collective) {
            auto& lumps = computed ? c.trail : c.lead;
            lumps[static_cast<size_t>(s.comm.group)] += collective(*s.comm.collective, s.comm.bytes, s.comm.group);
        }
    }
    return c;
}

}  // namespace fathom::workloads
