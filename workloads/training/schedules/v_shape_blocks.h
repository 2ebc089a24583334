#pragma once
// V-shape building blocks (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS
// 2024, sections 3-4): a schedule built by repeating one micro-batch's block every 6 time slots
// (one slot per chunk pass, T_F = T_B = T_W), then squeezed. Shared by v-half and v-min, which
// differ only in the block's offsets. See v_shape_blocks.cpp for the construction.
#include "workloads/training/schedules/pipeline_schedule.h"

#include <array>
#include <memory>
#include <vector>

namespace fathom::workloads {

// Slot of micro-batch 0's passes on one stage, in the order: chunk-0 forward, chunk-1 forward,
// chunk-1 backward (input gradients), chunk-0 backward; micro-batch i runs them 6 i slots later.
using VShapeBlock = std::array<int, 4>;

// Every stage's order for `microbatches`, from the block offsets of each stage.
std::vector<std::vector<PipelineSlot>> v_shape_orders(const std::vector<VShapeBlock>& block, int microbatches);

// Two chunks per stage in a V (zb-v, v-half, v-min): the mapping and the shape check (vp = 2,
// pp >= 2; any number of micro-batches).
class VPlacement : public PipelineSchedule {
public:
    std::string check(int stages, int chunks, int microbatches) const override;
    std::string check_key(int stages, int chunks, int microbatches) const override;
    int virtual_stage(int stage, int chunk, int stages, int) const override {
        return v_shape_stage(stage, chunk, stages);
    }

protected:
    virtual const char* name() const = 0;
};

// A V-shape schedule from its building block: `block(p)` gives every stage's offsets.
using VShapeBlocks = std::vector<VShapeBlock> (*)(int stages);
std::unique_ptr<PipelineSchedule> make_v_shape(const char* name, VShapeBlocks block);

}  // namespace fathom::workloads
