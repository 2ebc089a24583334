// Interleaved 1F1B (Megatron-LM 2021, Narayanan et al. SC21 section 2.2.2). Each stage holds v
// model chunks; micro-batches go through the chunks in groups of p. The k-th forward of a stage
// is micro-batch (k / (p v)) p + k mod p of chunk (k / p) mod v; backwards mirror it with chunk
// v - 1 - (k / p) mod v. Stage s warms up with (p - s - 1) 2 + (v - 1) p forwards (capped at
// m v), runs 1F1B, and drains. The bubble shrinks by v: (p-1)/(v m) of the ideal time.
// Megatron requires m to be a multiple of p.
#include "workloads/training/schedules/pipeline_schedule.h"

#include <algorithm>

namespace fathom::workloads {
namespace {

class Interleaved final : public PipelineSchedule {
public:
    std::vector<PipelineSlot> order(int stage, int p, int v, int m) const override {
        const int total = m * v;
        auto slot = [&](int k, bool fwd) {
            const int group = k / (p * v);
            const int mb = group * p + k % p;
            int chunk = (k / p) % v;
            if (!fwd) chunk = v - 1 - chunk;
            return PipelineSlot{mb, chunk, fwd ? PassKind::Forward : PassKind::Backward};
        };
        const int warmup = std::min((p - stage - 1) * 2 + (v - 1) * p, total);
        std::vector<PipelineSlot> out;
        int f = 0, b = 0;
        for (; f < warmup; ++f) out.push_back(slot(f, true));
        while (f < total) {
            out.push_back(slot(f++, true));
            out.push_back(slot(b++, false));
        }
        while (b < total) out.push_back(slot(b++, false));
        return out;
    }
    std::string check(int p, int v, int m) const override {
        if (v < 2) return "interleaved-1f1b needs vp >= 2 model chunks per stage";
        if (p < 2) return "interleaved-1f1b needs pp >= 2";
        if (m % p != 0)
            return "interleaved-1f1b needs the number of micro-batches (" + std::to_string(m) +
                   ") to be a multiple of pp (" + std::to_string(p) + ")";
        return "";
    }
};

}  // namespace

std::unique_ptr<PipelineSchedule> make_interleaved_1f1b() { return std::make_unique<Interleaved>(); }

}  // namespace fathom::workloads
