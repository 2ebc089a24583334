#include "plans/scenario.h"

namespace fathom::plans {

std::string Warning::text() const {
    std::string out = file;
    if (line > 0) out += ":" + std::to_string(line);
    if (!key.empty()) out += (out.empty() ? "" : ": ") + std::string("key '") + key + "'";
    return (out.empty() ? "" : out + ": ") + message;
}

const char* workload_kind_name(WorkloadKind k) {
    switch (k) {
        case WorkloadKind::Training: return "training";
        case WorkloadKind::Serving: return "serving";
    }
    return "?";
}

}  // namespace fathom::plans
