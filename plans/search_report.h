#pragma once
// A search candidate's fields, each declared once (search_report.cpp): its name (the column of
// `fathom search -o` and the key of --json, the Python package's DataFrame column, what the CLI
// tables name), how the report reads it, when a candidate's record has it, and, for a value an
// evaluation sets, the member that the wire between the processes of a partitioned search carries
// (plans/search_wire.h). The records, the CSV columns, the wire and the CLI tables iterate these
// lists, so a field cannot be reported and yet be missing from the wire: every other field is
// read from the candidate's plan (which every process enumerates) or its ranking (which the
// merging process computes), or from stored ones.
#include "plans/report.h"
#include "plans/search.h"
#include "plans/serving_search.h"

#include <string>
#include <vector>

namespace fathom::plans {

template <typename C>
struct CandidateField {
    const char* name;
    FieldValue (*read)(const C&);
    bool (*shown)(const C&, Objective);  // null: never (a stored value no report shows)
    double C::*stored = nullptr;         // set by the evaluation: the wire carries it
    bool csv = true;                     // a CSV column (else JSON and Python only)
};

// Declarative tables, in the CSV's column order.
const std::vector<CandidateField<Candidate>>& training_candidate_fields();
const std::vector<CandidateField<ServingCandidate>>& serving_candidate_fields();

// A candidate as a flat record (plans/report.h): the fields it has, in the list's order.
template <typename C>
Record candidate_record(const C& c, const std::vector<CandidateField<C>>& fields, Objective objective) {
    Record r;
    for (const auto& f : fields)
        if (f.shown && f.shown(c, objective)) r.add(f.name, f.read(c));
    return r;
}
inline Record training_candidate_record(const Candidate& c, Objective objective) {
    return candidate_record(c, training_candidate_fields(), objective);
}
inline Record serving_candidate_record(const ServingCandidate& c, Objective objective) {
    return candidate_record(c, serving_candidate_fields(), objective);
}

// The CSV columns, in order.
template <typename C>
std::vector<std::string> candidate_columns(const std::vector<CandidateField<C>>& fields) {
    std::vector<std::string> out;
    for (const auto& f : fields)
        if (f.shown && f.csv) out.push_back(f.name);
    return out;
}

// Adds "<field>_low" and "<field>_high", the 90% interval of the record's `field` in `regime`
// (plans/intervals.h), to every record holding it; returns those two column names (none without
// a band). The CLI's -o/--json and the Python package's search tables carry them.
std::vector<std::string> add_interval_fields(std::vector<Record>& records, const std::string& field,
                                             const IntervalTable& bands, const std::string& regime,
                                             const hardware::AcceleratorSpec& acc);

}  // namespace fathom::plans
