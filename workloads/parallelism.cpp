#include "workloads/parallelism.h"

namespace fathom::workloads {

const char* recompute_name(Recompute r) {
    switch (r) {
        case Recompute::None: return "none";
        case Recompute::Selective: return "selective";
        case Recompute::Full: return "full";
    }
    return "?";
}

}  // namespace fathom::workloads
