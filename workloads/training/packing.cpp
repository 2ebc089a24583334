#include "workloads/training/packing.h"

#include "models/llm/layer_blocks.h"
#include "sim/random.h"
#include "workloads/training/step_costs.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace fathom::workloads {

std::vector<std::vector<int64_t>> pack_sequences(const LengthDistribution& documents, uint64_t seed, int64_t seq_len,
                                                 int64_t sequences) {
    sim::RandomStreams streams(seed);
    sim::RandomStream& draws = streams.stream("training.documents");
    std::vector<std::vector<int64_t>> out(static_cast<size_t>(sequences));
    int64_t left = 0;  // tokens of the current document not yet placed
    for (auto& seq : out) {
        int64_t fill = 0;
        while (fill < seq_len) {
            if (left == 0) left = std::max<int64_t>(1, documents.sample(draws));
            const int64_t take = std::min(left, seq_len - fill);
            seq.push_back(take);
            fill += take;
            left -= take;
        }
    }
    return out;
}

namespace {

// Attention seconds of one layer's forward over a batch of segments (equal lengths grouped into
// one slice each), as the layer program builds and `cost` prices its attention ops.
double attention_seconds(const models::ModelSpec& m, models::LayerInputs in, const std::map<int64_t, int64_t>& segments,
                         const models::CostModel& cost) {
    in.batch = models::TokenBatch{};
    for (const auto& [len, count] : segments) in.batch.slices.push_back({count, len, len});
    models::LayerProgram p;
    models::blocks::attention_block(p, m, in);
    double t = 0;
    for (const auto& op : p.ops())
        if (op.kind == models::OpKind::AttentionFwd) t += cost.seconds(op);
    return t;
}

}  // namespace

Packing pack_documents(const models::ModelSpec& model, const TrainingPlan& plan, const models::CostModel& cost) {
    Packing out;
    if (!plan.training.packed()) return out;
    const int ranks = plan.layout.dp;
    const int64_t sequences = plan.training.global_batch, b = plan.training.micro_batch, s = plan.training.seq_len;
    const int M = plan.microbatches();
    const auto packed = pack_sequences(plan.training.documents, plan.training.documents_seed, s, sequences);
    const models::LayerInputs in = microbatch_inputs(model, plan);
    // Each rank's micro-batches: sequence k to rank k mod dp, the rank's j-th b sequences its
    // micro-batch j.
    out.rank_attention_s.assign(static_cast<size_t>(ranks), 0.0);
    for (int r = 0; r < ranks; ++r)
        for (int j = 0; j < M; ++j) {
            std::map<int64_t, int64_t> segments;
            for (int64_t i = 0; i < b; ++i)
                for (int64_t len : packed[static_cast<size_t>((j * b + i) * ranks + r)]) ++segments[len];
            out.rank_attention_s[static_cast<size_t>(r)] += attention_seconds(model, in, segments, cost);
        }
    const double unpacked = M * attention_seconds(model, in, {{s, b}}, cost);
    const double busiest = *std::max_element(out.rank_attention_s.begin(), out.rank_attention_s.end());
    const double mean = std::accumulate(out.rank_attention_s.begin(), out.rank_attention_s.end(), 0.0) / ranks;
    out.attention_scale = unpacked > 0 ? busiest / unpacked : 1.0;
    out.imbalance = mean > 0 ? busiest / mean : 1.0;
    return out;
}

}  // namespace fathom::workloads
