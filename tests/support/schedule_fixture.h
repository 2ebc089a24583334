#pragma once
// Helpers of the pipeline-schedule tests (tests/workloads/schedule_test.cpp, v_schedule_test.cpp):
// the test bed's pass times and a registered schedule's order of work on one stage.
#include "models/cost/cost_model.h"
#include "models/llm/dense_layer.h"
#include "tests/support/pipeline_fixture.h"
#include "workloads/training/schedules/pipeline_schedule.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace fathom::testing {

// Forward, input-gradient and weight-gradient time of two test-bed layers (micro-batch 4 x 2048),
// priced by the roofline the replay uses.
struct PassTimes {
    double f, bi, w;
};
inline PassTimes two_layer_pass_times() {
    const auto model = pipeline_model();
    const auto cluster = pipeline_cluster();
    models::LayerInputs in;
    in.batch = models::TokenBatch::uniform(4, 2048, 2048);
    const auto cost = models::make_roofline_cost(cluster.accelerator);
    const auto bwd = models::dense_layer_backward(model, in);
    PassTimes t{0, 0, 0};
    for (const auto& op : models::dense_layer_forward(model, in).ops()) t.f += 2 * cost->seconds(op);
    for (const auto& op : bwd.only({models::GradKind::Input}).ops()) t.bi += 2 * cost->seconds(op);
    for (const auto& op : bwd.only({models::GradKind::Weight}).ops()) t.w += 2 * cost->seconds(op);
    return t;
}

inline std::vector<workloads::PipelineSlot> order_of(const std::string& schedule, int stage, int p, int v, int m) {
    const auto s = workloads::schedule_registry().get(schedule).factory();
    REQUIRE(s->check(p, v, m).empty());
    return s->order(stage, p, v, m);
}

}  // namespace fathom::testing
