#include "workloads/replay/op_sources.h"

namespace fathom::workloads {

int OpSources::class_of(models::OpKind k) {
    switch (k) {
        case models::OpKind::Gemm: return 0;
        case models::OpKind::AttentionFwd:
        case models::OpKind::AttentionBwd: return 1;
        case models::OpKind::MemoryBound: return 2;
        case models::OpKind::Optimizer: return 3;
    }
    return 2;
}

const char* OpSources::class_name(int c) {
    static constexpr const char* kNames[kClasses] = {"gemm", "attention", "memory_bound", "optimizer"};
    return kNames[c];
}

void OpSources::merge(const OpSources& o) {
    for (size_t c = 0; c < seen.size(); ++c) {
        seen[c] = seen[c] || o.seen[c];
        inside[c] = inside[c] || o.inside[c];
        outside[c].insert(o.outside[c].begin(), o.outside[c].end());
    }
}

std::vector<std::string> OpSources::outside_all() const {
    std::set<std::string> all;
    for (const auto& s : outside) all.insert(s.begin(), s.end());
    return {all.begin(), all.end()};
}

}  // namespace fathom::workloads
