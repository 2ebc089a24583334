#include "workloads/training/schedules/pipeline_schedule.h"

#include "workloads/parallelism.h"

#include <algorithm>

namespace fathom::workloads {

const ScheduleRegistry& schedule_registry() {
    static const ScheduleRegistry registry = [] {
        ScheduleRegistry r("pipeline schedule");
        r.add("gpipe", "all forwards, then all backwards (Huang et al. 2019)", &make_gpipe);
        r.add("1f1b", "one-forward-one-backward after a warm-up of stages-stage-1 forwards (PipeDream-Flush)",
              &make_one_f_one_b);
        r.add("interleaved-1f1b", "1F1B over virtual stages, chunks per rank (Megatron-LM 2021)",
              &make_interleaved_1f1b);
        r.add("zb-h1",
              "1F1B with backwards split into input and weight gradients, weight passes held back to fill the drain "
              "(Qi et al. 2024, zero-bubble H1)",
              &make_zb_h1);
        r.add("breadth-first",
              "looping placement run breadth first: all micro-batches through each chunk in turn, then the "
              "backwards chunk by chunk (Lamy-Poirier 2023)",
              &make_breadth_first);
        r.add("dualpipe",
              "bidirectional: each stage holds two model chunks (its stage of each direction, two model copies), "
              "micro-batches fed from both ends, forward-backward pairs in the steady state (DeepSeek-V3, 2024)",
              &make_dualpipe);
        r.add("zb-v",
              "two chunks per stage in a V (the first and last layers on stage 0), backwards split into input and "
              "weight gradients, the handcrafted zero-bubble order (Qi et al. 2024, ZB-V)",
              &make_zb_v);
        r.add("v-half",
              "V-shape building block repeated and squeezed, split backwards: about half of 1F1B's activation "
              "memory (Qi et al. 2024, controllable memory, V-Half)",
              &make_v_half);
        r.add("v-min",
              "V-shape building block of the shortest lifespan, split backwards: about a third of 1F1B's "
              "activation memory, a larger bubble (Qi et al. 2024, controllable memory, V-Min)",
              &make_v_min);
        return r;
    }();
    return registry;
}

const char* default_schedule(const ParallelLayout& layout) { return layout.vp > 1 ? "interleaved-1f1b" : "1f1b"; }

int PipelineSchedule::virtual_stage(int stage, int chunk, int stages, int) const { return chunk * stages + stage; }

int peak_in_flight(const std::vector<PipelineSlot>& order) {
    int live = 0, peak = 0;
    for (const auto& s : order) {
        if (s.pass == PassKind::Forward) ++live;
        else if (s.pass != PassKind::BackwardWeight) --live;
        peak = std::max(peak, live);
    }
    return peak;
}

}  // namespace fathom::workloads
