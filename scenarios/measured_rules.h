#pragma once
// Internal to the measured-format front end: what a framework or serving engine does that neither
// its preset (workloads/stacks/, workloads/engines/: values of scenario keys, each with its source)
// nor the case's typed fields say, as a table of small named rules. Each rule is
// {name, step, applies(draft), apply(draft)}: `applies` reads the case (and the draft so far),
// `apply` writes scenario keys and states what it assumed. A translator runs the rules of a step at
// that step, in table order (the order of the assumptions in the report). Each rule is tested alone
// (tests/scenarios/measured_rules_test.cpp).
//
// Some training rules read the free-text `software` field, which the format reserves for people: it
// is the only place the sources name a token dispatcher, an overlap or a fused loss. Each such rule
// says which words it looks for. Serving rules read typed fields only (fathom's extension fields,
// scenarios/measured-format-fathom.md, given by a case or its source's supplement).
#include "models/llm/model_spec.h"
#include "scenarios/measured_case.h"

#include <string>
#include <vector>

namespace fathom::scenarios::measured {

// A training case on its way to a scenario document.
struct TrainingDraft {
    TrainingDraft(const Case& of, const plans::Catalog& cat, std::vector<std::string>& assumed)
        : c(of), catalog(cat), assumptions(assumed) {}
    const Case& c;
    const plans::Catalog& catalog;
    std::vector<std::string>& assumptions;
    ScenarioDoc doc;
    std::string framework;  // training.framework ("other" when absent)
    std::string schedule;   // the pipeline schedule as the case names it
    const plans::StackPreset* preset = nullptr;
    models::ModelSpec model;  // as far as translate_model read it
    plans::MemoryFitOpen fit;

    // The value the scenario will have at a training-plan key: the document's, else the preset's,
    // else the plan's default.
    plans::KeyValue planned(const std::string& key) const;
    int64_t planned_int(const std::string& key) const { return std::get<int64_t>(planned(key)); }
    bool planned_bool(const std::string& key) const { return std::get<bool>(planned(key)); }
    std::string planned_text(const std::string& key) const { return std::get<std::string>(planned(key)); }
    // training.software, lower-cased ("" when absent).
    std::string software() const;
};

// A serving case on its way to a scenario document.
struct ServingDraft {
    ServingDraft(const Case& of, const plans::Catalog& cat, std::vector<std::string>& assumed)
        : c(of), catalog(cat), assumptions(assumed) {}
    const Case& c;
    const plans::Catalog& catalog;
    std::vector<std::string>& assumptions;
    ScenarioDoc doc;
    std::string engine;  // serving.engine ("other" when absent)
    const plans::StackPreset* preset = nullptr;
    bool nim = false;           // an NVIDIA NIM profile (engine other, NIM named)
    models::ModelSpec model;    // as far as translate_model read it
    std::string measured_pool;  // disaggregated: "prefill" or "decode"; empty: aggregated
    int64_t ep = 1, replicas = 1;

    plans::KeyValue planned(const std::string& key) const;
    // The keys of the pools the case's layout is written to ("serving", or both disaggregated pools).
    std::vector<std::string> pools() const;
    std::string software() const;  // serving.software, lower-cased
};

// Where in the translation a rule runs (training: choosing the stack, the micro-batch, an interleaved
// schedule's chunks, the schedule's own needs, the experts, the software description's kernels, the
// kernels the case states, the memory-fit limits).
enum class TrainingStep { Stack, Batch, Interleave, Schedule, Experts, Software, Kernels, Fit };
enum class ServingStep { Engine, Experts, Precision, Batching };

template <typename Draft, typename Step>
struct Rule {
    const char* name;
    Step step;
    bool (*applies)(const Draft&);
    void (*apply)(Draft&);
};

using TrainingRule = Rule<TrainingDraft, TrainingStep>;
using ServingRule = Rule<ServingDraft, ServingStep>;

const std::vector<TrainingRule>& training_rules();
const std::vector<ServingRule>& serving_rules();

void run_rules(TrainingDraft& d, TrainingStep step);
void run_rules(ServingDraft& d, ServingStep step);

// fathom's extension (scenarios/measured-format-fathom.md), measured_sessions.cpp:
// serving.workload.sessions as the traffic's multi-turn conversations.
void translate_sessions(ServingDraft& d);
// serving.kv_offload as the host-memory KV tier and its connector's copy and load modes.
void translate_kv_offload(ServingDraft& d);

}  // namespace fathom::scenarios::measured
