// Packed variable-length documents (workloads/training/packing.h): the packing itself, the
// attention time of document-masked sequences against a closed form, the busiest data-parallel
// rank, determinism, and the plan checks.
#include "workloads/training/packing.h"

#include "models/cost/cost_model.h"
#include "plans/constraints.h"
#include "tests/support/fixtures.h"
#include "tests/support/pipeline_fixture.h"

#include <catch2/catch.hpp>

using namespace fathom;
using workloads::LengthDistribution;
using workloads::LengthKind;

namespace {

LengthDistribution fixed(int64_t n) {
    LengthDistribution d;
    d.kind = LengthKind::Fixed;
    d.value = n;
    return d;
}

LengthDistribution lognormal(double mean, double stddev) {
    LengthDistribution d;
    d.kind = LengthKind::Lognormal;
    d.mean = mean;
    d.stddev = stddev;
    d.max = 16384;
    return d;
}

// One stage of the test bed's 4 GPUs as dp 4, micro-batch 4 of 2048 tokens, one micro-batch each.
workloads::TrainingPlan packed_plan(const LengthDistribution& docs) {
    workloads::TrainingPlan p = testing::pipeline_plan(1, "1f1b");
    p.layout.pp = 1;
    p.layout.dp = 4;
    p.training.global_batch = 16;
    p.training.documents = docs;
    return p;
}

}  // namespace

TEST_CASE("documents are concatenated and cut into sequences", "[workloads][packing]") {
    // 512-token documents fill a 2048-token sequence four times over.
    for (const auto& seq : workloads::pack_sequences(fixed(512), 1, 2048, 3))
        CHECK(seq == std::vector<int64_t>{512, 512, 512, 512});
    // 3000-token documents cross the cuts: 2048 | 952 + 1096 | 1904 + 144 | 2048 ...
    const auto long_docs = workloads::pack_sequences(fixed(3000), 1, 2048, 3);
    CHECK(long_docs[0] == std::vector<int64_t>{2048});
    CHECK(long_docs[1] == std::vector<int64_t>{952, 1096});
    CHECK(long_docs[2] == std::vector<int64_t>{1904, 144});
    // Drawn lengths: the same seed gives the same batch, another seed another one; every sequence
    // holds exactly seq_len tokens.
    const auto a = workloads::pack_sequences(lognormal(700, 900), 3, 2048, 64);
    CHECK(a == workloads::pack_sequences(lognormal(700, 900), 3, 2048, 64));
    CHECK(a != workloads::pack_sequences(lognormal(700, 900), 4, 2048, 64));
    for (const auto& seq : a) {
        int64_t n = 0;
        for (int64_t x : seq) n += x;
        CHECK(n == 2048);
    }
}

TEST_CASE("packed attention: document-masked work against the closed form, the busiest rank", "[workloads][packing]") {
    // Fixed 512-token documents in 2048-token sequences, on the roofline without the short-sequence
    // fill (seq_half 0) or launch cost: a causal slice of length l costs l^2 / 2 FLOPs at the
    // causal block efficiency nb / (nb + 1), nb = l / 128. Four 512 segments against one 2048
    // sequence: 4 x 512^2 x 5/4 over 2048^2 x 17/16 = 5/17, the same on every rank (imbalance 1).
    const auto model = testing::pipeline_model();
    auto cluster = testing::pipeline_cluster();
    cluster.accelerator.calibration.attention_seq_half = 0;
    const auto cost = models::make_roofline_cost(cluster.accelerator, models::Load::Sustained);
    const auto even = workloads::pack_documents(model, packed_plan(fixed(512)), *cost);
    CHECK(even.attention_scale == Approx(5.0 / 17.0).epsilon(1e-9));
    CHECK(even.imbalance == Approx(1.0));
    // Whole-sequence documents are the unpacked step exactly.
    CHECK(workloads::pack_documents(model, packed_plan(fixed(2048)), *cost).attention_scale ==
          Approx(1.0).epsilon(1e-12));
    // Drawn lengths: the busiest rank sets the scale, the mean rank is below it.
    const auto drawn = workloads::pack_documents(model, packed_plan(lognormal(700, 900)), *cost);
    REQUIRE(drawn.rank_attention_s.size() == 4);
    double busiest = 0, sum = 0;
    for (double t : drawn.rank_attention_s) busiest = std::max(busiest, t), sum += t;
    CHECK(drawn.imbalance == Approx(busiest / (sum / 4)));
    CHECK(drawn.imbalance > 1.0);
    CHECK(drawn.attention_scale < 1.0);
    // The replay prices attention at the scale: the packed step is shorter, and reports it.
    const auto r_packed = testing::predict(model, cluster, packed_plan(fixed(512)));
    const auto r_plain = testing::predict(model, cluster, packed_plan(fixed(2048)));
    CHECK(r_packed.packed_attention_scale == Approx(5.0 / 17.0).epsilon(1e-9));
    CHECK(r_packed.step_time_s < r_plain.step_time_s);
    CHECK(r_plain.packed_attention_scale == Approx(1.0).epsilon(1e-12));
}

TEST_CASE("packed documents: plan checks name training.documents", "[workloads][packing][plans]") {
    const auto model = testing::pipeline_model();
    const auto cluster = testing::pipeline_cluster();
    auto p = packed_plan(fixed(512));
    p.layout.dp = 2;
    p.layout.cp = 2;
    p.training.global_batch = 8;
    auto v = plans::check_training_plan(model, cluster, p);
    REQUIRE_FALSE(v.empty());
    CHECK(v.front().key == "training.documents");
    p = packed_plan(fixed(512));
    p.stack.kernels.flash_attention = false;
    v = plans::check_training_plan(model, cluster, p);
    REQUIRE_FALSE(v.empty());
    CHECK(v.front().key == "training.documents");
    p = packed_plan(lognormal(0, 10));  // no mean
    v = plans::check_training_plan(model, cluster, p);
    REQUIRE_FALSE(v.empty());
    CHECK(v.front().key == "training.documents");
}
