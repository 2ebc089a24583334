// torchtitan's op-level selective activation checkpointing (every second matmul recomputed),
// against closed forms: for a Llama layer (matmuls wq wk wv wo w1 w3 w2) the recomputed matmuls
// are wk, wo and w3, 2 T h (kv + h + ffn) FLOPs per rank; for a non-gated MLP (wq wk wv wo w1 w2)
// wk, wo and w2. The memory it drops beyond Megatron's selective recomputation is K, the w3
// output and the mid-layer residual.
#include "models/llm/dense_layer.h"
#include "models/memory/activation_memory.h"
#include "tests/support/model_fixture.h"

#include <catch2/catch.hpp>

using namespace fathom;
using models::OpKind;

namespace {

double gemm_flops(const models::LayerProgram& p) {
    double f = 0;
    for (const auto& op : p.ops())
        if (op.kind == OpKind::Gemm) f += op.flops;
    return f;
}

models::LayerInputs inputs(int tp, int64_t tokens) {
    models::LayerInputs in;
    in.shard.tp = tp;
    in.batch = models::TokenBatch::uniform(1, tokens, tokens);
    return in;
}

}  // namespace

TEST_CASE("op-level SAC recomputes every second matmul of the layer as eager PyTorch issues them",
          "[models][recompute]") {
    // Llama-3-8B-like: h 4096, 32 heads, 8 KV heads of 128 (kv width 1024), ffn 14336, gated.
    const int64_t T = 2048, h = 4096, kv = 1024, ffn = 14336;
    for (const int tp : {1, 2}) {
        INFO("tp " << tp);
        const models::ModelSpec m = testing::dense_model(2, h, 32, 8, ffn, 1000);
        const models::LayerProgram fwd = models::dense_layer_forward(m, inputs(tp, T));
        const models::LayerProgram r = models::every_second_matmul_recompute(fwd, m);
        // wk [T, kv/tp] x h, wo [T, h] x h/tp, w3 [T, ffn/tp] x h: 2 T h (kv + h + ffn) / tp.
        CHECK(gemm_flops(r) == Approx(2.0 * T * h * (kv + h + ffn) / tp).epsilon(1e-12));
        // Every memory-bound op of the layer comes back (norms, rotary, activation, residuals).
        int fwd_memory = 0, r_memory = 0;
        for (const auto& op : fwd.ops()) fwd_memory += op.kind == OpKind::MemoryBound;
        for (const auto& op : r.ops()) r_memory += op.kind == OpKind::MemoryBound;
        CHECK(r_memory == fwd_memory);
        // No attention: SDPA outputs are saved.
        for (const auto& op : r.ops()) CHECK(op.kind != OpKind::AttentionFwd);
    }
    SECTION("non-gated MLP: wk, wo and w2") {
        const models::ModelSpec m = testing::dense_model(2, h, 32, 8, ffn, 1000, models::Activation::Gelu);
        const models::LayerProgram r =
            models::every_second_matmul_recompute(models::dense_layer_forward(m, inputs(1, T)), m);
        CHECK(gemm_flops(r) == Approx(2.0 * T * h * (kv + h + ffn)).epsilon(1e-12));
    }
}

TEST_CASE("op-level SAC drops K, the w3 output and the mid-layer residual beyond selective", "[models][recompute]") {
    // bf16, tp 1, T tokens: T kv 2 + T ffn 2 + T h 2 bytes.
    const int64_t T = 2048, h = 4096, kv = 1024, ffn = 14336;
    const models::ModelSpec m = testing::dense_model(2, h, 32, 8, ffn, 1000);
    CHECK(models::every_second_matmul_dropped_bytes(m, inputs(1, T)) == Approx(2.0 * T * (kv + ffn + h)));
    // Non-gated: no w3.
    const models::ModelSpec g = testing::dense_model(2, h, 32, 8, ffn, 1000, models::Activation::Gelu);
    CHECK(models::every_second_matmul_dropped_bytes(g, inputs(1, T)) == Approx(2.0 * T * (kv + h)));
}
