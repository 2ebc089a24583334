#pragma once
// How a replay's ops were priced, per op class: the report's answer to "did this number come from
// a measured table or from the roofline?" (ProgramCoster collects it; training and serving reports
// carry it).
#include "models/ops/op.h"

#include <array>
#include <set>
#include <string>
#include <vector>

namespace fathom::workloads {

// How a replay's ops were priced, per op class (GEMM, attention, memory-bound, optimizer): whether
// the class occurred, and the ops of it a cost table left to the roofline (outside its measured
// range). Which cost model priced the rest is the caller's (plans::CostModelKind).
struct OpSources {
    static constexpr int kClasses = 4;
    static int class_of(models::OpKind k);
    static const char* class_name(int c);  // "gemm", "attention", "memory_bound", "optimizer"
    std::array<bool, kClasses> seen{};
    std::array<bool, kClasses> inside{};  // some op of the class priced inside a table's range
    std::array<std::set<std::string>, kClasses> outside;
    void merge(const OpSources& o);
    bool operator==(const OpSources& o) const { return seen == o.seen && inside == o.inside && outside == o.outside; }
    // Every op outside the range, sorted.
    std::vector<std::string> outside_all() const;
};

}  // namespace fathom::workloads
