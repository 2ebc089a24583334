#pragma once
// Pieces of scenarios/measured.cpp shared by the training, serving and microbenchmark comparisons
// (internal).
#include "models/llm/model_spec.h"
#include "plans/catalog.h"
#include "plans/context.h"
#include "scenarios/measured.h"

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace fathom::scenarios::detail {

// A case fathom cannot express yet, and why.
struct Unsupported {
    std::string reason;
};

// A case whose input is wrong (not merely unsupported): compare stops with an error naming the
// file, this line and key (exit 2).
struct BadCase {
    std::string key;
    std::string message;
    int line = 0;
};
// `section[key]` as an integer >= 1 (BadCase otherwise; `where` names the section, e.g. "training").
int positive_int(const YAML::Node& section, const std::string& where, const char* key);
// `section[key]` when it is one of `allowed`, `fallback` when absent; BadCase naming the choices
// otherwise (an unknown value never falls back silently).
std::string choice(const YAML::Node& section, const std::string& where, const char* key,
                   std::initializer_list<const char*> allowed, const std::string& fallback);
// The same, >= 0.
int nonnegative_int(const YAML::Node& section, const std::string& where, const char* key);

std::string opt_str(const YAML::Node& n, const char* key, const std::string& fallback = "");
bool has(const YAML::Node& n, const char* key);
// The case's `model` block as a ModelSpec (dense or mixture-of-experts, MLA).
// A case without a vocabulary gets its family's standard one (by the model's name), stated in
// `assumptions`; Unsupported when the family is not known.
models::ModelSpec case_model(const YAML::Node& m, std::vector<std::string>& assumptions);

// The case's accelerator id as the catalog knows it ("h100-unspecified" is taken as the SXM 80GB
// part, stated in `out`); Unsupported when the catalog has no such accelerator.
std::string case_accelerator(const YAML::Node& hardware, const plans::Catalog& catalog, CompareResult& out);

// The NIC of a case's scale_out block (scenarios/measured.cpp documents the rule).
std::string choose_nic(const YAML::Node& scale_out, const std::string& accelerator, double gb_per_s_per_gpu);

// A microbenchmark case (scenarios/measured_microbench.cpp): fills `out` with the prediction in
// the source's units, or throws Unsupported.
CompareResult predict_microbench_case(const YAML::Node& c, const plans::EvaluationContext& ctx, CompareResult out);

// A training case (scenarios/measured_training.cpp): fills `out` with the prediction, the plan that
// ran, its assumptions and stage breakdown, or throws Unsupported.
CompareResult predict_training_case(const YAML::Node& c, const plans::EvaluationContext& ctx, CompareResult out);

// A serving case (scenarios/measured_serving.cpp): fills `out` with the prediction, or throws
// Unsupported.
CompareResult predict_serving_case(const YAML::Node& c, const plans::EvaluationContext& ctx, CompareResult out);

}  // namespace fathom::scenarios::detail
