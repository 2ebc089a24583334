// plans/memory_fit.h: the least memory saving that fits, on Llama 3 8B over one node of 8 H100.
// Unsharded, every GPU holds 8.03e9 x (2 bf16 weights + 4 fp32 main gradients + 12 Adam state and
// master bytes) = 144.5 GB, beyond 80 GB whatever the activations: the plan must change.
#include "plans/memory_fit.h"

#include "tests/support/fixtures.h"
#include "workloads/training/training_memory.h"

#include <catch2/catch.hpp>

using namespace fathom;

namespace {

workloads::TrainingPlan unsharded() {
    workloads::TrainingPlan p;
    p.layout.dp = 8;
    p.training.seq_len = 8192;
    p.training.global_batch = 128;
    p.training.micro_batch = 1;
    p.training.zero_stage = 0;
    p.stack.grad_dtype = workloads::GradDtype::Fp32;
    return p;
}

bool oom(const models::ModelSpec& m, const hardware::ClusterSpec& c, const workloads::TrainingPlan& p) {
    return workloads::estimate_training_memory(m, c, p).out_of_memory;
}

}  // namespace

TEST_CASE("memory fit: the least saving that fits, only among the settings left open", "[plans][memory]") {
    const models::ModelSpec& m = testing::source_catalog().model("llama3-8b");
    const hardware::ClusterSpec c = testing::h100_cluster(8);
    REQUIRE(oom(m, c, unsharded()));

    // Nothing open: nothing changes (a stated plan stays as stated, out of memory or not).
    workloads::TrainingPlan stated = unsharded();
    CHECK(plans::fit_memory(m, c, stated, {}).empty());
    CHECK(stated.training.zero_stage == 0);

    // Optimizer sharding open up to the Megatron family's ZeRO-1: the first step taken and said.
    workloads::TrainingPlan zero1 = unsharded();
    plans::MemoryFitOpen open;
    open.zero_stage = true;
    open.max_zero_stage = 1;
    const auto notes = plans::fit_memory(m, c, zero1, open);
    CHECK(zero1.training.zero_stage == 1);
    REQUIRE_FALSE(notes.empty());
    CHECK(notes.front() == "zero_stage 1: the least optimizer sharding that fits (the framework default does not)");

    // Everything open: the result fits, and each setting it changed has its note.
    workloads::TrainingPlan all = unsharded();
    open = {true, 2, true, true};
    const auto all_notes = plans::fit_memory(m, c, all, open);
    CHECK_FALSE(oom(m, c, all));
    const size_t changes = (all.training.zero_stage != 0 ? 1 : 0) +
                           (all.stack.grad_dtype != workloads::GradDtype::Fp32 ? 1 : 0) +
                           (all.training.recompute != workloads::Recompute::None ? 1 : 0);
    CHECK(all_notes.size() == changes);
    // ... and it is the least: one ZeRO stage fewer does not fit with the other settings as taken.
    if (all.training.zero_stage > 1 && all.training.recompute == workloads::Recompute::None) {
        workloads::TrainingPlan less = all;
        --less.training.zero_stage;
        CHECK(oom(m, c, less));
    }

    // A plan that fits is left alone, whatever is open.
    workloads::TrainingPlan fits = all;
    CHECK(plans::fit_memory(m, c, fits, open).empty());
    CHECK(fits.describe() == all.describe());
}
