#pragma once
// Internal to the measured-format front end: the kinds of case `fathom compare` predicts, as a table
// {kind, translate, metric} (scenarios/measured.cpp dispatches on it). `translate` turns a case into
// scenario documents (scenarios/measured_case.h); the ordinary scenario parser and plans::evaluate
// run them; `metric` computes what the case measured, in its source's units and conventions, from
// one evaluated scenario. Adding a kind: a translator file with its two functions and a line in the
// table.
#include "plans/context.h"
#include "plans/evaluate.h"
#include "plans/scenario.h"
#include "scenarios/measured.h"
#include "scenarios/measured_case.h"

#include <vector>

namespace fathom::scenarios::measured {

// One evaluated scenario of a case.
struct Evaluated {
    const plans::Scenario& scenario;
    const plans::Outcome* outcome;  // null where nothing runs (a microbenchmark prices its op in `metric`)
    const plans::EvaluationContext& context;
};

struct CaseKind {
    const char* name;
    Translation (*translate)(const Case& c, const plans::EvaluationContext& context);
    // The measured quantity predicted; `details` takes what the report shows beside it (step time,
    // memory, the plan that ran) and the notes of the measurement's conventions (its assumptions).
    double (*metric)(const Case& c, const Evaluated& run, CompareResult& details);
};

const CaseKind& training_kind();    // scenarios/measured_training.cpp
const CaseKind& serving_kind();     // scenarios/measured_serving.cpp
const CaseKind& microbench_kind();  // scenarios/measured_microbench.cpp
const CaseKind& rl_kind();          // scenarios/measured_rl.cpp (fathom's extension: kind rl)

// Declarative table: every kind, in the order of measured-format.md.
inline std::vector<const CaseKind*> case_kinds() {
    return {&training_kind(), &serving_kind(), &microbench_kind(), &rl_kind()};
}

}  // namespace fathom::scenarios::measured
