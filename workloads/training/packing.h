#pragma once
// Packed variable-length documents (the data-loading practice of Llama 3, Megatron's packed
// sequences with document masks, TE's THD format): documents drawn from a length distribution are
// concatenated and cut into sequences of seq_len tokens (a document that crosses a cut continues as
// a new segment of the next sequence), and attention runs within each segment only (a varlen /
// document-masked kernel). Every sequence has the same tokens, so GEMMs, communication and memory
// do not change; attention does, twice over:
//  - a sequence of segments l_1..l_n does sum causal(l_i) of attention work instead of causal(s);
//  - the work differs between sequences, so data-parallel ranks finish their micro-batches at
//    different times and the slowest one sets the step (Zeppelin, "Balancing Variable-length
//    Workloads in Data Parallel Large Model Training", and WLB-LLM describe the imbalance).
// Sequences go to ranks as PyTorch's DistributedSampler deals them (sequence k of the global batch
// to rank k mod dp, in order), each rank's in micro-batches of micro_batch sequences.
#include "models/cost/cost_model.h"
#include "models/llm/model_spec.h"
#include "workloads/training/training_plan.h"

#include <vector>

namespace fathom::workloads {

struct Packing {
    // Attention time of the busiest data-parallel rank over a micro-batch, relative to unpacked
    // sequences (one document of seq_len each): what the replay multiplies attention ops by.
    double attention_scale = 1;
    // The busiest rank's attention time over the mean rank's (1: balanced).
    double imbalance = 1;
    // Per data-parallel rank: attention seconds of one layer's forward, summed over its micro-batches.
    std::vector<double> rank_attention_s;
};

// The plan's documents (training.packed()) packed into one step's global batch, each rank's
// attention priced per layer forward by `cost` (the attention ops of one layer, as the layer
// programs build them). Deterministic in training.documents_seed.
Packing pack_documents(const models::ModelSpec& model, const TrainingPlan& plan, const models::CostModel& cost);

// The segments (document pieces) of each sequence of a global batch of `sequences` sequences.
std::vector<std::vector<int64_t>> pack_sequences(const LengthDistribution& documents, uint64_t seed, int64_t seq_len,
                                                 int64_t sequences);

}  // namespace fathom::workloads
