// V-shape schedules from a building block (Qi et al., "Pipeline Parallelism with Controllable
// Memory", NeurIPS 2024, section 4, and the reference implementation sail-sg/zero-bubble-
// pipeline-parallelism, megatron/core/pipeline_parallel/zerobubble/scheduler/zbv_greedy.py).
// Time is counted in slots of one chunk pass (T_F = T_B = T_W). Each stage has six pass kinds:
// F0, F1 (forwards of chunks 0 and 1), B1, B0 (input gradients, chunk 1 first: it holds the later
// layers) and the weight passes W1, W0. The construction, as the reference runs it:
//  1. repeat the block: micro-batch i's F0, F1, B1, B0 at the block's offsets + 6 i;
//  2. put the weight passes in the free slots, first come first served, and squeeze: visiting all
//     passes in slot order, move each to the earliest free slot its dependencies allow as long as
//     the stage's peak memory (+1 per forward, -1 per weight pass) does not grow; the steady
//     state (from stage 0's first B0 to the last micro-batch's first F0) keeps its slots; then
//     compact every stage to its earliest start (unit costs);
//  3. drop the weight passes and squeeze the cool-down once more, the weight passes simulated in
//     the free slots; compact again;
//  4. drop the weight passes and put them back in the free slots, chunk 1's before chunk 0's.
// The stage's order is its passes sorted by slot. The block's lifespan sets the peak memory (the
// paper's section 3): about 1/2 (v-half) or 1/3 (v-min) of 1F1B's.
#include "workloads/training/schedules/v_shape_blocks.h"

#include "sim/error.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

namespace fathom::workloads {
namespace {

// Slots of each pass: [stage][kind][micro-batch]; kinds F0 F1 B1 B0, then one weight list (W of
// the k-th B on the stage) or two (W1, W0).
using Slots = std::vector<std::vector<std::vector<int>>>;
enum Kind { kF0, kF1, kB1, kB0, kW };
constexpr int kPeriod = 6;  // slots per micro-batch: two chunks x (F, B, W)

bool is_backward(int k) { return k == kB1 || k == kB0; }

// Visits every pass in slot order (ties: lower stage, then kind), as fn(stage, kind, micro-batch);
// fn may move the pass it visits, only earlier than any pass not yet visited.
template <class Fn>
void in_slot_order(Slots& t, Fn&& fn) {
    std::vector<std::vector<size_t>> next(t.size(), std::vector<size_t>(t[0].size(), 0));
    for (;;) {
        int bs = -1, bk = -1;
        for (size_t s = 0; s < t.size(); ++s)
            for (size_t k = 0; k < t[s].size(); ++k)
                if (next[s][k] < t[s][k].size() &&
                    (bs < 0 || t[s][k][next[s][k]] < t[static_cast<size_t>(bs)][static_cast<size_t>(bk)]
                                                      [next[static_cast<size_t>(bs)][static_cast<size_t>(bk)]]))
                    bs = static_cast<int>(s), bk = static_cast<int>(k);
        if (bs < 0) return;
        fn(bs, bk, static_cast<int>(next[static_cast<size_t>(bs)][static_cast<size_t>(bk)]++));
    }
}

int last_slot(const std::vector<std::vector<int>>& stage, size_t kinds) {
    int last = 0;
    for (size_t k = 0; k < kinds && k < stage.size(); ++k)
        if (!stage[k].empty()) last = std::max(last, stage[k].back());
    return last;
}

// Walks one stage slot by slot; at(slot, kind) for a pass, idle(slot) for a free slot.
template <class At, class Idle>
void walk(const std::vector<std::vector<int>>& stage, size_t kinds, At&& at, Idle&& idle) {
    std::vector<size_t> next(kinds, 0);
    const int bound = last_slot(stage, kinds);
    for (int i = 0; i <= bound; ++i) {
        int kind = -1;
        for (size_t k = 0; k < kinds; ++k)
            if (next[k] < stage[k].size() &&
                (kind < 0 || stage[k][next[k]] < stage[static_cast<size_t>(kind)][next[static_cast<size_t>(kind)]]))
                kind = static_cast<int>(k);
        if (kind >= 0 && stage[static_cast<size_t>(kind)][next[static_cast<size_t>(kind)]] == i) {
            ++next[static_cast<size_t>(kind)];
            at(i, kind);
        } else {
            idle(i);
        }
    }
}

// Peak activations of a stage: +1 per forward, -1 per weight pass; without weight lists, each
// backward's weight pass runs in the next free slot.
int stage_memory(const std::vector<std::vector<int>>& stage) {
    const bool has_w = stage.size() > 4;
    int cur = 0, peak = 0, pending = 0;
    walk(
        stage, stage.size(),
        [&](int, int k) {
            cur += k <= kF1 ? 1 : k >= kW ? -1 : 0;
            if (is_backward(k)) ++pending;
            peak = std::max(peak, cur);
        },
        [&](int) {
            if (!has_w && pending > 0) --cur, --pending;
            peak = std::max(peak, cur);
        });
    return peak;
}

// Appends the weight passes, each in the first free slot after its backward (then after the
// last pass): one list, or one per chunk (chunk 1's taken first when both wait).
void put_weights(std::vector<std::vector<int>>& stage, bool per_chunk) {
    stage.resize(per_chunk ? 6 : 5);
    int pending[2] = {0, 0};
    walk(
        stage, 4,
        [&](int, int k) {
            if (is_backward(k)) ++pending[per_chunk ? k - kB1 : 0];
        },
        [&](int i) {
            for (int w = 0; w < 2; ++w)
                if (pending[w] > 0) {
                    stage[static_cast<size_t>(kW + w)].push_back(i);
                    --pending[w];
                    break;
                }
        });
    int i = last_slot(stage, 4);
    for (int w = 0; w < 2; ++w)
        for (; pending[w] > 0; --pending[w]) stage[static_cast<size_t>(kW + w)].push_back(++i);
}

// The latest of the passes a pass waits for, from their slots (or ends) in `x`: the previous
// stage's (F0, B1) or the next one's (F1, B0), its own earlier pass of the micro-batch, and the
// kind's previous micro-batch; -1 if none.
int dependency(const Slots& x, int s, int k, int mb) {
    const auto P = static_cast<int>(x.size());
    auto at = [&](int st, int kind, int m) {
        return x[static_cast<size_t>(st)][static_cast<size_t>(kind)][static_cast<size_t>(m)];
    };
    int dep = -1;
    if ((k == kF0 || k == kB1) && s > 0) dep = std::max(dep, at(s - 1, k, mb));
    if ((k == kF1 || k == kB0) && s + 1 < P) dep = std::max(dep, at(s + 1, k, mb));
    if (k > kF0 && k < kW) dep = std::max(dep, at(s, k - 1, mb));
    if (mb > 0) dep = std::max(dep, at(s, k, mb - 1));
    return dep;
}

// Earliest start of every pass with unit costs, keeping each stage's order (the compaction).
Slots compact(Slots& t) {
    Slots end = t;
    std::vector<int> stage_end(t.size(), 0);
    in_slot_order(t, [&](int s, int k, int mb) {
        const int e = std::max(stage_end[static_cast<size_t>(s)], dependency(end, s, k, mb)) + 1;
        end[static_cast<size_t>(s)][static_cast<size_t>(k)][static_cast<size_t>(mb)] = e;
        stage_end[static_cast<size_t>(s)] = e;
    });
    for (auto& st : end)
        for (auto& kind : st)
            for (int& e : kind) --e;
    return end;
}

// One squeeze (step 2 with the weight passes placed, step 3 without), then the compaction.
Slots squeeze(Slots t, bool with_weights, int microbatches) {
    if (with_weights)
        for (auto& st : t) put_weights(st, false);
    int budget = 0;
    for (const auto& st : t) budget = std::max(budget, stage_memory(st));
    std::vector<std::vector<bool>> taken;
    for (const auto& st : t) taken.emplace_back(static_cast<size_t>(last_slot(st, st.size()) + 1), false);
    int phase = 0;  // 0: warm-up, 1: steady state (kept), 2: cool-down
    in_slot_order(t, [&](int s, int k, int mb) {
        int& slot = t[static_cast<size_t>(s)][static_cast<size_t>(k)][static_cast<size_t>(mb)];
        auto& busy = taken[static_cast<size_t>(s)];
        if (phase == 0 && k == kB0 && s == 0) phase = 1;
        if (phase == 1 || (phase == 0 && !with_weights)) {  // kept where it is
            if (phase == 1 && k == kF0 && mb == microbatches - 1) phase = 2;
            busy[static_cast<size_t>(slot)] = true;
            return;
        }
        int dep = dependency(t, s, k, mb);
        if (k == kW) {  // the k-th weight pass follows the k-th backward of the stage
            std::vector<int> b = t[static_cast<size_t>(s)][kB1];
            b.insert(b.end(), t[static_cast<size_t>(s)][kB0].begin(), t[static_cast<size_t>(s)][kB0].end());
            std::sort(b.begin(), b.end());
            dep = std::max(dep, b[static_cast<size_t>(mb)]);
        }
        const int from = dep + 1, was = slot;
        bool moved = false;
        for (int cand = from; cand < was && !moved; ++cand) {
            if (busy[static_cast<size_t>(cand)]) continue;
            slot = cand;
            moved = stage_memory(t[static_cast<size_t>(s)]) <= budget;
        }
        if (!moved) slot = was;
        busy[static_cast<size_t>(slot)] = true;
    });
    if (!with_weights)
        for (auto& st : t) put_weights(st, false);
    return compact(t);
}

}  // namespace

std::vector<std::vector<PipelineSlot>> v_shape_orders(const std::vector<VShapeBlock>& block, int microbatches) {
    Slots t;
    for (const auto& offsets : block) {
        t.emplace_back();
        for (int k = 0; k < 4; ++k) {
            t.back().emplace_back();
            for (int i = 0; i < microbatches; ++i)
                t.back().back().push_back(offsets[static_cast<size_t>(k)] + kPeriod * i);
        }
    }
    auto passes_only = [](Slots s) {
        for (auto& st : s) st.resize(4);
        return s;
    };
    t = passes_only(squeeze(t, true, microbatches));
    t = passes_only(squeeze(t, false, microbatches));
    std::vector<std::vector<PipelineSlot>> out;
    for (auto& st : t) {
        put_weights(st, true);
        std::vector<std::tuple<int, int, int>> slots;  // (slot, kind, micro-batch)
        for (size_t k = 0; k < st.size(); ++k)
            for (size_t i = 0; i < st[k].size(); ++i)
                slots.emplace_back(st[k][i], static_cast<int>(k), static_cast<int>(i));
        std::sort(slots.begin(), slots.end());
        static constexpr int chunk[6] = {0, 1, 1, 0, 1, 0};
        static constexpr PassKind pass[6] = {PassKind::Forward,        PassKind::Forward,
                                             PassKind::BackwardInput,  PassKind::BackwardInput,
                                             PassKind::BackwardWeight, PassKind::BackwardWeight};
        out.emplace_back();
        for (const auto& [slot, k, mb] : slots) out.back().push_back({mb, chunk[k], pass[k]});
    }
    return out;
}

namespace {

class VShapeSchedule final : public VPlacement {
public:
    VShapeSchedule(const char* name, VShapeBlocks block) : name_(name), block_(block) {}
    std::vector<PipelineSlot> order(int stage, int stages, int, int microbatches) const override {
        // The construction places every stage at once; the replay asks stage by stage.
        static std::mutex mu;
        static std::map<std::tuple<std::string, int, int>, std::vector<std::vector<PipelineSlot>>> cache;
        const std::lock_guard<std::mutex> lock(mu);
        auto& all = cache[{name_, stages, microbatches}];
        if (all.empty()) all = v_shape_orders(block_(stages), microbatches);
        return all[static_cast<size_t>(stage)];
    }

private:
    const char* name() const override { return name_; }
    const char* name_;
    VShapeBlocks block_;
};

}  // namespace

std::unique_ptr<PipelineSchedule> make_v_shape(const char* name, VShapeBlocks block) {
    return std::make_unique<VShapeSchedule>(name, block);
}

std::string VPlacement::check(int stages, int chunks, int) const {
    const std::string n = name();
    if (chunks != 2) return n + " holds two chunks per stage in a V (vp = 2)";
    if (stages < 2) return n + " needs pp >= 2";
    return "";
}

std::string VPlacement::check_key(int, int chunks, int) const { return chunks != 2 ? "parallel.vp" : "parallel.pp"; }

}  // namespace fathom::workloads
