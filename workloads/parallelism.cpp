#include "workloads/parallelism.h"

namespace fathom::workloads {

hardware::CommGroup ParallelLayout::group(models::GroupKind kind) const {
    using models::GroupKind;
    switch (kind) {
        case GroupKind::tp: return {tp, 1};
        case GroupKind::cp: return {cp, tp};
        case GroupKind::dp: return {dp * cp, tp};
        case GroupKind::ep: return {ep, etp};
        case GroupKind::pp: return {2, tp * cp * dp};
        case GroupKind::edp: return {tp * cp * dp / (ep * etp), ep * etp};
    }
    return {};
}

models::Sharding ParallelLayout::sharding() const {
    models::Sharding s;
    s.tp = tp;
    s.sequence_parallel = sequence_parallel && tp > 1;
    s.cp = cp;
    s.ep = ep;
    s.etp = etp;
    return s;
}

}  // namespace fathom::workloads
