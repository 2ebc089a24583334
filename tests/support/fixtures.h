#pragma once
// Shared test fixtures: the catalogs of the source tree in an evaluation context (loaded once per
// test binary), and a shorthand that predicts one training step and requires the plan to be valid.
#include <catch2/catch.hpp>

#include "plans/cluster_request.h"
#include "plans/evaluate.h"
#include "scenarios/catalog.h"
#include "scenarios/scenario.h"

namespace fathom::testing {

inline const std::string kSource = FATHOM_SOURCE_DIR;

// The source tree's catalogs and calibration tables.
inline const plans::EvaluationContext& source_context() {
    static const plans::EvaluationContext c = scenarios::make_context(scenarios::load_catalog(kSource));
    return c;
}
inline const plans::Catalog& source_catalog() { return *source_context().catalog; }

// `nodes` nodes of `gpus_per_node` H100 SXM 80GB from the source catalog (its default fabrics).
inline hardware::ClusterSpec h100_cluster(int gpus_per_node, int nodes = 1) {
    plans::ClusterRequest r;
    r.accelerator = "h100-sxm-80gb";
    r.gpus_per_node = gpus_per_node;
    r.nodes = nodes;
    return plans::build_cluster(r, source_catalog());
}

inline std::string example(const std::string& name) { return kSource + "/scenarios/examples/" + name; }

// One training step of a valid plan; a context without tables prices every op with the roofline.
inline workloads::StepReport predict(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                     const workloads::TrainingPlan& plan,
                                     const plans::EvaluationContext& context = plans::EvaluationContext{}) {
    const plans::Outcome o = plans::evaluate_training(model, cluster, plan, context);
    INFO(plans::describe(o.violations));
    REQUIRE(o.ok());
    return *o.training();
}

}  // namespace fathom::testing
