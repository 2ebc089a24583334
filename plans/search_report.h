#pragma once
// Search candidates as flat records (plans/report.h): one row per candidate, the columns of
// `fathom search -o` (CSV) and --json, and of the Python package's DataFrames. A field a candidate
// does not have (the metrics of a pruned one) is left out of its record.
#include "plans/report.h"
#include "plans/search.h"
#include "plans/serving_search.h"

#include <vector>

namespace fathom::plans {

Record training_candidate_record(const Candidate& c);
Record serving_candidate_record(const ServingCandidate& c, bool capacity);

// The CSV columns, in order (every field a record may have).
const std::vector<std::string>& training_candidate_columns();
const std::vector<std::string>& serving_candidate_columns();

}  // namespace fathom::plans
