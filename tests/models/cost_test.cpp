// Roofline op costs on a hand-built accelerator, op FLOP counts, and parameter counts of a model
// spec, each against its closed form.
#include "hardware/spec.h"
#include "models/cost/cost_model.h"
#include "models/llm/model_spec.h"
#include "models/ops/op.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace fathom::models;
using fathom::hardware::AcceleratorSpec;

namespace {

// peak P = 1000 TFLOP/s bf16, GEMM efficiency e = 0.8, 100 compute units, tile 128 x 256,
// k_half = 64, HBM 3 TB/s at 90% efficiency, launch overhead 4 us.
constexpr double kPeak = 1000e12;
constexpr double kEff = 0.8;
constexpr double kUnits = 100;
constexpr double kKHalf = 64;
constexpr double kBw = 3e12 * 0.9;
constexpr double kLaunch = 4e-6;

AcceleratorSpec test_accelerator() {
    AcceleratorSpec a;
    a.id = "test-gpu";
    a.peak_flops[Dtype::bf16] = kPeak;
    a.memory_capacity = 80e9;
    a.memory_bandwidth = 3e12;
    a.compute_units = static_cast<int>(kUnits);
    a.launch_overhead = kLaunch;
    a.calibration.gemm_efficiency[Dtype::bf16] = kEff;
    a.calibration.gemm_tile_m = 128;
    a.calibration.gemm_tile_n = 256;
    a.calibration.gemm_k_half = kKHalf;
    a.calibration.memory_efficiency = 0.9;
    a.calibration.attention_fwd_efficiency = 0.5;
    a.calibration.attention_bwd_efficiency = 0.4;
    a.calibration.attention_seq_half = 512;
    return a;
}

}  // namespace

TEST_CASE("a large square GEMM runs at peak x efficiency x K-fill", "[models][cost]") {
    // M = N = K = 8192: 8192/128 x 8192/256 = 64 x 32 = 2048 tiles >= 100 units, so no
    // quantization loss. K-fill = K / (K + k_half) = 8192 / 8256.
    //   time = 2 M N K / (P e K/(K+k_half)) + launch
    // (The half-width tile, 0.9 e, is slower; memory time 6 x 8192^2 B / 2.7 TB/s = 0.15 ms is far
    // below the 1.4 ms compute time.)
    const auto cost = make_roofline_cost(test_accelerator());
    const double M = 8192, N = 8192, K = 8192;
    const OpDesc op = gemm_op("square", 8192, 8192, 8192, Dtype::bf16);
    CHECK(op.flops == 2 * M * N * K);
    const double fill = K / (K + kKHalf);
    const double expected = 2 * M * N * K / (kPeak * kEff * fill) + kLaunch;
    CHECK(cost->seconds(op) == Approx(expected).epsilon(1e-12));
}

TEST_CASE("an fp8 GEMM takes its own K-fill when the device gives one", "[models][cost]") {
    // fp8 peak 2 P at efficiency 0.7; gemm_k_half_fp8 = 192 (an fp8 WGMMA consumes twice the K
    // per instruction, the per-tile prologue/epilogue is the same). M = N = 8192 (no quantization
    // loss, as above), K = 1024:
    //   time = 2 M N K / (2 P 0.7 K/(K+192)) + launch;  K-fill 1024/1216 = 0.842 vs 1024/1088 = 0.941.
    // A bf16 GEMM of the same shape keeps K/(K+64); without gemm_k_half_fp8 fp8 uses it too.
    AcceleratorSpec a = test_accelerator();
    a.peak_flops[Dtype::fp8] = 2 * kPeak;
    a.calibration.gemm_efficiency[Dtype::fp8] = 0.7;
    a.calibration.gemm_k_half_fp8 = 192;
    const double M = 8192, N = 8192, K = 1024;
    const auto cost = make_roofline_cost(a);
    const OpDesc f8 = gemm_op("fp8", 8192, 8192, 1024, Dtype::fp8);
    CHECK(cost->seconds(f8) == Approx(2 * M * N * K / (2 * kPeak * 0.7 * K / (K + 192)) + kLaunch).epsilon(1e-12));
    const OpDesc b16 = gemm_op("bf16", 8192, 8192, 1024, Dtype::bf16);
    CHECK(cost->seconds(b16) == Approx(2 * M * N * K / (kPeak * kEff * K / (K + kKHalf)) + kLaunch).epsilon(1e-12));
    a.calibration.gemm_k_half_fp8 = 0;
    CHECK(make_roofline_cost(a)->seconds(f8) ==
          Approx(2 * M * N * K / (2 * kPeak * 0.7 * K / (K + kKHalf)) + kLaunch).epsilon(1e-12));
}

TEST_CASE("a GEMM with fewer tiles than compute units is slower per FLOP by tiles / units", "[models][cost]") {
    // M = 1024, N = 128, K = 8192: 1024/128 x ceil(128/256) = 8 x 1 = 8 tiles (the half-width
    // tile gives 8 x 1 tiles too, at 0.9 e, so the full tile wins). Quantization = 8 / 100:
    //   time = 2 M N K / (P e (8/100) K/(K+k_half)) + launch
    // Same K as the square GEMM above, so per FLOP (launch excluded) it is 100 / 8 = 12.5 x slower.
    // Memory time (2 (M K + K N) + 2 M N) B / 2.7 TB/s = 7 us < 34 us compute.
    const auto cost = make_roofline_cost(test_accelerator());
    const double M = 1024, N = 128, K = 8192, tiles = 8;
    const OpDesc small = gemm_op("narrow", 1024, 128, 8192, Dtype::bf16);
    const double fill = K / (K + kKHalf);
    const double expected = 2 * M * N * K / (kPeak * kEff * (tiles / kUnits) * fill) + kLaunch;
    CHECK(cost->seconds(small) == Approx(expected).epsilon(1e-12));

    const OpDesc big = gemm_op("square", 8192, 8192, 8192, Dtype::bf16);
    const double per_flop_small = (cost->seconds(small) - kLaunch) / small.flops;
    const double per_flop_big = (cost->seconds(big) - kLaunch) / big.flops;
    CHECK(per_flop_small / per_flop_big == Approx(kUnits / tiles).epsilon(1e-9));
}

TEST_CASE("a memory-bound op costs bytes / (bandwidth x efficiency) + launch", "[models][cost]") {
    const auto cost = make_roofline_cost(test_accelerator());
    const OpDesc op = memory_op("copy", 1e9);
    // 1e9 B / (3e12 B/s x 0.9) + 4 us
    CHECK(cost->seconds(op) == Approx(1e9 / kBw + kLaunch).epsilon(1e-12));
}

TEST_CASE("a skinny GEMM is memory bound", "[models][cost]") {
    // M = 16 (a decode batch), N = K = 8192.
    //   bytes = 2 (M K + K N) + 2 M N = 134,742,016 B -> 49.9 us at 2.7 TB/s.
    //   compute: the faster tiling is the half-width one, 1 x 64 = 64 tiles (quantization 0.64) at
    //   0.9 e: 2 M N K / (P 0.72 x 0.64 x K/(K+k_half)) = 4.7 us.
    // So time = bytes / bw + launch.
    const auto cost = make_roofline_cost(test_accelerator());
    const OpDesc op = gemm_op("decode", 16, 8192, 8192, Dtype::bf16);
    const double bytes = 2.0 * (16.0 * 8192 + 8192.0 * 8192) + 2.0 * 16 * 8192;
    CHECK(op.bytes == bytes);
    CHECK(cost->seconds(op) == Approx(bytes / kBw + kLaunch).epsilon(1e-12));
}

TEST_CASE("causal attention does half the FLOPs of non-causal", "[models][ops]") {
    // Forward: 4 b h q kv d (QK^T and PV); causal with q = kv sees half of the square.
    AttentionShape s;
    s.heads = 32;
    s.kv_heads = 8;
    s.slices = {SequenceSlice{2, 4096, 4096}};
    s.head_dim = 128;
    s.causal = false;
    const OpDesc full = attention_op(false, s, Dtype::bf16);
    CHECK(full.flops == 4.0 * 2 * 32 * 4096 * 4096 * 128);
    s.causal = true;
    const OpDesc causal = attention_op(false, s, Dtype::bf16);
    CHECK(causal.flops == 0.5 * full.flops);
    // Backward = 2.5 x forward (FlashAttention-2 convention).
    CHECK(attention_op(true, s, Dtype::bf16).flops == 2.5 * causal.flops);
}

TEST_CASE("Llama 3 8B parameter count from its dimensions", "[models][spec]") {
    ModelSpec m;
    m.id = "llama3-8b-test";
    m.layers = 32;
    m.hidden = 4096;
    m.heads = 32;
    m.kv_heads = 8;  // head_dim 128 -> K and V are 8 x 128 = 1024 wide
    m.ffn = 14336;
    m.vocab = 128256;
    m.activation = Activation::Swiglu;
    m.norm = Norm::RmsNorm;
    m.position = PositionEmbedding::Rope;
    m.tied_embeddings = false;
    m.bias = false;

    const double h = 4096, kv = 1024, ffn = 14336, vocab = 128256;
    // attention: QKV h (h + 2 kv) + output projection h h; MLP (SwiGLU) 3 h ffn; 2 RMSNorm weights.
    const double attention = h * (h + 2 * kv) + h * h;
    const double mlp = 3 * h * ffn;
    const double norms = 2 * h;
    CHECK(m.layer_params() == attention + mlp + norms);  // 218,112,000
    CHECK(m.layer_params() == 218112000.0);
    // 32 layers + input embedding + untied output projection + final RMSNorm.
    const double total = 32 * (attention + mlp + norms) + vocab * h + vocab * h + h;
    CHECK(m.total_params(8192) == total);  // 8,030,261,248
    CHECK(m.total_params(8192) == Approx(8.03e9).epsilon(0.005));
    CHECK(m.embedding_params(8192) == vocab * h);
    CHECK(m.output_params() == vocab * h);

    m.tied_embeddings = true;
    CHECK(m.output_params() == 0.0);
}

TEST_CASE("a FlashAttention-2-class kernel runs at the device's fraction of the FA3-class one", "[models][cost]") {
    // Non-causal forward, 16 heads x 16384 x 16384, d 128: FLOPs 4 x 16 x 16384^2 x 128 = 2.2e12;
    // fill = 16384 / (16384 + 512). FA3 class: FLOPs / (P x 0.5 x fill) + launch; FA2 class with
    // attention_fa2_relative r = 0.62: FLOPs / (P x 0.5 x r x fill) + launch (memory time, 0.1 ms,
    // is far below either).
    AcceleratorSpec acc = test_accelerator();
    acc.calibration.attention_fa2_relative = 0.62;
    const auto cost = make_roofline_cost(acc);
    AttentionShape s;
    s.heads = s.kv_heads = 16;
    s.head_dim = 128;
    s.causal = false;
    s.slices = {{1, 16384, 16384}};
    const OpDesc fa3 = attention_op(false, s, Dtype::bf16);
    s.kernel = AttentionKernel::Fa2;
    const OpDesc fa2 = attention_op(false, s, Dtype::bf16);
    const double fill = 16384.0 / (16384.0 + 512.0);
    CHECK(cost->seconds(fa3) == Approx(fa3.flops / (kPeak * 0.5 * fill) + kLaunch).epsilon(1e-12));
    CHECK(cost->seconds(fa2) == Approx(fa2.flops / (kPeak * 0.5 * 0.62 * fill) + kLaunch).epsilon(1e-12));
}

TEST_CASE("a GEMM's bytes are counted in double, whatever its shape", "[models][cost][robustness]") {
    // m k of a 4.1e15 x 4096 x 4096 GEMM overflows int64 (UBSan, found by tools/fuzz on a
    // calibration CSV). bf16: batch x (2 (m k + k n) + 2 m n) bytes, computed in double.
    const double m = 4096333333333333.0, n = 4096, k = 4096;
    const OpDesc op = gemm_op("huge", static_cast<int64_t>(m), 4096, 4096, Dtype::bf16, 1);
    CHECK(op.bytes == Approx(2 * (m * k + k * n) + 2 * m * n));
    CHECK(op.flops == Approx(2 * m * n * k));
}

TEST_CASE("a decode kernel without GQA sharing reads each key/value head once per query head", "[models][cost]") {
    // One sequence decoding (q_len 1) over 1000 keys, 8 query heads sharing 2 KV heads of 128,
    // fp8 KV: the keys and values are 2 x 2 x 1000 x 128 x 1 B = 512,000 B, the query and output
    // 2 x 8 x 128 = 2,048 B. TensorRT-LLM's MMHA before 0.7.1 streams each KV head once per query
    // head of its group (4 of them): 4 x 512,000 + 2,048 B.
    AttentionShape s;
    s.heads = 8;
    s.kv_heads = 2;
    s.head_dim = 128;
    s.slices = {SequenceSlice{1, 1, 1000}};
    CHECK(attention_op(false, s, fathom::hardware::Dtype::fp8).bytes == 512000.0 + 2048.0);
    s.kv_read_per_query_head = true;
    CHECK(attention_op(false, s, fathom::hardware::Dtype::fp8).bytes == 4 * 512000.0 + 2048.0);
    // Prefill slices (q_len > 1) run the context kernel, which shares them: unchanged.
    s.slices = {SequenceSlice{1, 1000, 1000}};
    const double prefill = attention_op(false, s, fathom::hardware::Dtype::fp8).bytes;
    s.kv_read_per_query_head = false;
    CHECK(attention_op(false, s, fathom::hardware::Dtype::fp8).bytes == prefill);
}
