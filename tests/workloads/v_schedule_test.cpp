// The V-shaped schedules (ZB-V, V-Half, V-Min): split-backward orders, bubbles and activation memory
// against the papers' closed forms, and the replayed step against them.
#include "hardware/spec.h"
#include "models/cost/cost_model.h"
#include "models/llm/dense_layer.h"
#include "models/llm/model_spec.h"
#include "tests/support/fixtures.h"
#include "tests/support/pipeline_fixture.h"
#include "tests/support/schedule_fixture.h"
#include "workloads/parallelism.h"
#include "workloads/training/schedules/pipeline_schedule.h"
#include "workloads/training/step_costs.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

using namespace fathom;
using testing::order_of;
using testing::two_layer_pass_times;
using workloads::PipelineSlot;

namespace {

// The split-backward orders of the V schedules (zb-v, v-half, v-min): every (micro-batch, chunk)
// has one forward, then one input-gradient pass, then one weight pass.
void check_split_complete(const std::vector<PipelineSlot>& order, int v, int m) {
    std::map<std::pair<int, int>, int> seen;  // 1 after F, 2 after Bi, 3 after W
    for (const auto& x : order) {
        REQUIRE(x.chunk >= 0);
        REQUIRE(x.chunk < v);
        REQUIRE(x.microbatch >= 0);
        REQUIRE(x.microbatch < m);
        int& st = seen[{x.microbatch, x.chunk}];
        const int step = x.pass == workloads::PassKind::Forward         ? 1
                         : x.pass == workloads::PassKind::BackwardInput ? 2
                                                                        : 3;
        REQUIRE(x.pass != workloads::PassKind::Backward);
        CHECK(st == step - 1);
        st = step;
    }
    REQUIRE(order.size() == static_cast<size_t>(3 * m * v));
    REQUIRE(seen.size() == static_cast<size_t>(m * v));
    for (const auto& [k, st] : seen) CHECK(st == 3);
}

// Makespan, in slots, of a V schedule's orders when every chunk pass takes one slot (the papers'
// T_F = T_B = T_W) and nothing else costs: each stage runs its order, a pass starting once the
// pass it waits for ended (forward: the previous virtual stage's; input gradients: the next one's
// or, at the last virtual stage 2p - 1 on stage 0, its own forward; weights: its own input
// gradients). Fails on a deadlock.
int unit_makespan(const std::string& schedule, int p, int m) {
    std::vector<std::vector<PipelineSlot>> orders;
    for (int s = 0; s < p; ++s) orders.push_back(order_of(schedule, s, p, 2, m));
    const int V = 2 * p;
    auto vs = [&](int s, int c) { return c == 0 ? s : V - 1 - s; };
    std::map<std::tuple<int, int, int>, int> end;  // (pass 0 F / 1 Bi / 2 W, micro-batch, virtual stage)
    std::vector<size_t> next(static_cast<size_t>(p), 0);
    std::vector<int> clock(static_cast<size_t>(p), 0);
    for (bool progress = true; progress;) {
        progress = false;
        for (int s = 0; s < p; ++s) {
            for (auto& i = next[static_cast<size_t>(s)]; i < orders[static_cast<size_t>(s)].size(); ++i) {
                const auto& x = orders[static_cast<size_t>(s)][i];
                const int v = vs(s, x.chunk);
                const int kind = x.pass == workloads::PassKind::Forward         ? 0
                                 : x.pass == workloads::PassKind::BackwardInput ? 1
                                                                                : 2;
                const auto dep = kind == 0    ? std::make_tuple(0, x.microbatch, v - 1)
                                 : kind == 2  ? std::make_tuple(1, x.microbatch, v)
                                 : v == V - 1 ? std::make_tuple(0, x.microbatch, v)
                                              : std::make_tuple(1, x.microbatch, v + 1);
                const bool free = kind == 0 && v == 0;
                if (!free && !end.count(dep)) break;
                const int start = std::max(clock[static_cast<size_t>(s)], free ? 0 : end[dep]);
                clock[static_cast<size_t>(s)] = end[{kind, x.microbatch, v}] = start + 1;
                progress = true;
            }
        }
    }
    for (int s = 0; s < p; ++s) REQUIRE(next[static_cast<size_t>(s)] == orders[static_cast<size_t>(s)].size());
    return *std::max_element(clock.begin(), clock.end());
}

// Peak activations with the papers' accounting: a forward's activations are freed by its weight
// pass (peak_in_flight frees them at the input-gradient pass).
int peak_until_weight(const std::vector<PipelineSlot>& order) {
    int live = 0, peak = 0;
    for (const auto& x : order) {
        live += x.pass == workloads::PassKind::Forward ? 1 : x.pass == workloads::PassKind::BackwardWeight ? -1 : 0;
        peak = std::max(peak, live);
    }
    return peak;
}

const char* const kVSchedules[] = {"zb-v", "v-half", "v-min"};

}  // namespace

TEST_CASE("V schedules: two chunks in a V, split backwards, each pass once", "[workloads][schedule]") {
    const auto& reg = workloads::schedule_registry();
    for (const char* name : kVSchedules) {
        INFO(name);
        const auto s = reg.get(name).factory();
        // Chunk 1 of stage s holds virtual stage 2p - 1 - s: stage 0 runs the first and last layers.
        CHECK(s->virtual_stage(0, 0, 4, 2) == 0);
        CHECK(s->virtual_stage(0, 1, 4, 2) == 7);
        CHECK(s->virtual_stage(3, 1, 4, 2) == 4);
        CHECK(s->routes() == 1);
        CHECK_THAT(s->check(4, 1, 8), Catch::Contains("vp = 2"));
        CHECK(s->check_key(4, 1, 8) == "parallel.vp");
        CHECK_FALSE(s->check(4, 3, 8).empty());
        CHECK_THAT(s->check(1, 2, 8), Catch::Contains("pp >= 2"));
        CHECK(s->check_key(1, 2, 8) == "parallel.pp");
        // Any number of micro-batches: every pass once, and no deadlock across the stages.
        for (const auto& [p, m] :
             {std::pair<int, int>{2, 1}, {2, 4}, {3, 2}, {3, 7}, {4, 3}, {4, 8}, {5, 11}, {6, 12}, {8, 16}}) {
            INFO("p " << p << " m " << m);
            for (int st = 0; st < p; ++st) check_split_complete(order_of(name, st, p, 2, m), 2, m);
            CHECK(unit_makespan(name, p, m) >= 6 * m);
        }
    }
}

TEST_CASE("V schedules with T_F = T_B = T_W: the papers' bubbles and activation memory", "[workloads][schedule]") {
    // Slots of one chunk pass; a stage's work is 6 m slots (F, B, W of two chunks per micro-batch),
    // and 1F1B's bubble, (p - 1)(T_F + T_B + T_W) of a whole stage, is 6 (p - 1) slots.
    for (int p = 2; p <= 8; ++p) {
        for (int m : {2 * p, 3 * p + 1}) {
            INFO("p " << p << " m " << m);
            const int one_f_one_b = 6 * (p - 1);
            // ZB-V: zero bubble; the step only carries the first forward's fill, p - 1 slots.
            CHECK(unit_makespan("zb-v", p, m) == 6 * m + p - 1);
            // V-Half: the paper's bubble is half of 1F1B's; the squeezed order does better.
            const int half = unit_makespan("v-half", p, m) - 6 * m;
            CHECK(half == (p == 2 ? 1 : p % 2 == 0 ? 3 * p - 7 : 3 * p - 4));
            CHECK(half <= one_f_one_b / 2);
            // V-Min: about 2/3 of 1F1B's bubble, 4 (p - 1) slots.
            const int min = unit_makespan("v-min", p, m) - 6 * m;
            CHECK(min == (p % 3 == 0 ? 4 * p - 7 : 4 * p - 5));
            CHECK(min <= 2 * one_f_one_b / 3);

            // Peak activations in chunks (two per micro-batch of a whole stage; 1F1B: 2p), the
            // largest over the stages. ZB-V: 1F1B's, on every stage.
            int zb = 0, vh = 0, vm = 0, vh_w = 0, vm_w = 0;
            for (int s = 0; s < p; ++s) {
                CHECK(workloads::peak_in_flight(order_of("zb-v", s, p, 2, m)) == 2 * p);
                zb = std::max(zb, peak_until_weight(order_of("zb-v", s, p, 2, m)));
                vh = std::max(vh, workloads::peak_in_flight(order_of("v-half", s, p, 2, m)));
                vm = std::max(vm, workloads::peak_in_flight(order_of("v-min", s, p, 2, m)));
                vh_w = std::max(vh_w, peak_until_weight(order_of("v-half", s, p, 2, m)));
                vm_w = std::max(vm_w, peak_until_weight(order_of("v-min", s, p, 2, m)));
            }
            CHECK(zb == 2 * p);
            // The paper's table, in micro-batches: V-Half (p + 2) / 2, V-Min (p + 4) / 3 (floored),
            // counted as the paper does (freed by the weight pass); freed by the input-gradient
            // pass, V-Min's two-stage pipeline peaks one chunk lower.
            CHECK(vh_w == 2 * ((p + 2) / 2));
            CHECK(vm_w == 2 * ((p + 4) / 3));
            CHECK(vh == vh_w);
            CHECK(vm == (p == 2 ? vm_w - 1 : vm_w));
        }
    }
}

TEST_CASE("V schedules replayed: step against the closed forms, activations against 1F1B's",
          "[workloads][schedule][replay]") {
    // The test bed with vp = 2: 8 layers in 8 chunks of 1 layer, so a chunk's F, B (input) and W
    // are half of two_layer_pass_times(), which has T_W < T_F < T_B (W / F 0.82, B / F 1.32), near
    // enough to balance for the closed forms below (derived from each order's critical path; each
    // reduces to the unit-slot forms of the test above when F = B = W). Communication ~0; the
    // embedding, head and optimizer step add < 1%.
    const int p = 4, m = 8;
    const auto model = testing::pipeline_model();
    const auto cluster = testing::pipeline_cluster();
    const auto t = two_layer_pass_times();
    const double f = t.f / 2, b = t.bi / 2, w = t.w / 2, work = 2 * m * (f + b + w);
    REQUIRE(w < f);
    REQUIRE(f < b);
    const auto one = testing::predict(model, cluster, testing::pipeline_plan(1, "1f1b"));
    const auto zb = testing::predict(model, cluster, testing::pipeline_plan(2, "zb-v"));
    const auto vh = testing::predict(model, cluster, testing::pipeline_plan(2, "v-half"));
    const auto vm = testing::predict(model, cluster, testing::pipeline_plan(2, "v-min"));
    // ZB-V: the fill is paced by the input-gradient passes, (p - 1) T_B.
    const double zb_step = work + (p - 1) * b;
    // V-Half at p = 4: T_F + 9 T_B - 5 T_W (5 slots when balanced; 1F1B's half would be 9).
    const double vh_step = work + f + 9 * b - 5 * w;
    // V-Min: the interlocked 6-slot steady state runs at the slowest pass, 6 T_B per micro-batch
    // (the paper: only V-Min slows down when F, B and W differ); at p = 4 the warm-up and cool-down
    // add 8 T_F + 2 T_B + T_W (11 slots when balanced).
    const double vm_step = 6 * m * b + 8 * f + 2 * b + w;
    INFO("zb-v " << zb.step_time_s << " s (closed form " << zb_step << "), v-half " << vh.step_time_s << " s ("
                 << vh_step << "), v-min " << vm.step_time_s << " s (" << vm_step << "), 1f1b " << one.step_time_s
                 << " s");
    CHECK(zb.step_time_s == Approx(zb_step).epsilon(0.01));
    CHECK(vh.step_time_s == Approx(vh_step).epsilon(0.01));
    CHECK(vm.step_time_s == Approx(vm_step).epsilon(0.01));
    CHECK(zb.step_time_s < vh.step_time_s);
    CHECK(vh.step_time_s < one.step_time_s);
    // Activations: 1F1B's first stage holds p micro-batches of 2 layers; ZB-V 2p chunks of 1 layer
    // on every stage (the same), V-Half 2 (p + 2) / 2 = 6 of them (3/4 at p = 4, 1/2 for large
    // p), V-Min 2 (p + 4) / 3 = 4 (1/2 at p = 4, 1/3 for large p).
    const double base = one.stages[0].memory.activations;
    for (int s = 0; s < p; ++s) {
        INFO("stage " << s);
        CHECK(zb.stages[static_cast<size_t>(s)].peak_in_flight == 2 * p);
        CHECK(zb.stages[static_cast<size_t>(s)].memory.activations == Approx(base).epsilon(1e-9));
        CHECK(vh.stages[static_cast<size_t>(s)].memory.activations == Approx(base * 6 / 8).epsilon(1e-9));
        CHECK(vm.stages[static_cast<size_t>(s)].memory.activations == Approx(base * 4 / 8).epsilon(1e-9));
    }
    // Stage 0 holds both ends of the model: the embedding and the output layer.
    CHECK(zb.stages[0].memory.weights > zb.stages[1].memory.weights);
}
