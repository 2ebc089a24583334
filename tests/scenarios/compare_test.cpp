// Accuracy against published measurements: predicts every training case of the frozen copy of the
// shared reference file (tests/data/measured_frozen.yaml, measured-format v1; every training case of
// shared/reference/measured.yaml) and checks that all 25 dense cases are simulated, that the median
// absolute error stays within issue 7's bound of 5.2% (5.2% when the file was frozen; 4.5% since
// ZeRO-3's backward prefetch stopped serializing FSDP steps and the sustained clock was refitted;
// 3.6% with the FlashAttention-3 backward chart's attention efficiency and its refit),
// and that no simulated case runs out of memory (the published runs did fit). tests/golden pins
// each number.
#include "models/llm/model_spec.h"
#include "scenarios/measured.h"
#include "tests/support/fixtures.h"
#include "tests/support/measured_fixture.h"
#include "tests/support/model_fixture.h"

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace fathom;

using testing::compare_one;
using testing::frozen_case;
using testing::stated;

TEST_CASE("training predictions match the published measurements", "[scenarios][compare][slow]") {
    const std::string source = FATHOM_SOURCE_DIR;
    const std::string path = source + "/tests/data/measured_frozen.yaml";
    REQUIRE(std::filesystem::exists(path));
    const auto results = scenarios::compare_measured(path, testing::source_context());

    std::vector<double> abs_errors;
    std::string table;  // one line per simulated case, shown if a check below fails
    int unsupported = 0;
    for (const auto& r : results) {
        if (r.kind != "training") continue;
        if (!r.ok()) {
            ++unsupported;
            continue;
        }
        char line[256];
        std::snprintf(
            line, sizeof line, "%-44s %-22s measured %10.4g predicted %10.4g error %+6.1f%%  peak %6.1f / %5.1f GiB%s",
            r.id.c_str(), r.metric.c_str(), r.measured, r.predicted, 100 * r.error, r.peak_memory_bytes / 1073741824.0,
            r.memory_capacity_bytes / 1073741824.0, r.out_of_memory ? "  OUT OF MEMORY" : "");
        table += std::string(line) + "\n";
        INFO(line);
        // A published run fitted on its hardware: predicting otherwise is a memory-model error.
        CHECK_FALSE(r.out_of_memory);
        CHECK(std::isfinite(r.error));
        abs_errors.push_back(std::fabs(r.error));
    }
    INFO("simulated training cases:\n" << table);
    REQUIRE(!abs_errors.empty());
    std::vector<double> sorted = abs_errors;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    const double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    const double max_err = sorted.back();
    const double p90 = sorted[static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n))) - 1];
    WARN("training cases: " << n << " simulated, " << unsupported << " unsupported; median |error| " << 100 * median
                            << "%, p90 " << 100 * p90 << "%, max |error| " << 100 * max_err << "%");
    CHECK(n >= 25);
    CHECK(median <= 0.052);
    // Issue 7 asks for p90 < 10%; not reached yet (closing notes). This pins where it stands, the
    // fourth-largest error (Qwen3-235B 128k CP8, -19.5%: -18.9% until the measured grouped-GEMM
    // curve slowed its experts, which moved seven other MoE cases closer; the Megatron 2021 18.4B
    // row's -12.5% left the top five with the SC21 artifact's micro-batch), so that a regression shows.
    CHECK(p90 <= 0.196);
}

TEST_CASE("serving predictions match the published measurements", "[scenarios][compare][serving]") {
    // Every serving case of the frozen copy: the 26 dense and 2 MoE (Llama 4 Scout, TP-split
    // experts) cases with request lengths in the file are simulated (per-pool disaggregated,
    // expert-parallel and dataset-length cases are unsupported), and the median absolute error
    // stays within the bound of 15%. tests/golden pins
    // each number. History: 12.2% when serving landed; 13.7% once the TensorRT-LLM preset took its
    // documented KV defaults (free_gpu_memory_fraction of the free memory, GUARANTEED_NO_EVICT
    // reservation), which lowered the mean |error| from 14.2% to 12.5% while moving the median;
    // 14.4% when the sustained-clock factors were refitted on the training cases after the
    // context-parallel, attention-kernel and pipeline fill-in fixes (A100 0.83 -> 0.78, H100
    // 0.77 -> 0.76): the three A100 serving cases moved 3-5 points the wrong way, a sign that one
    // clock per device does not yet fit training and serving alike (noted in issue 7).
    const auto results = scenarios::compare_measured(
        std::string(FATHOM_SOURCE_DIR) + "/tests/data/measured_frozen.yaml", testing::source_context());
    std::vector<double> errs;
    for (const auto& r : results) {
        if (r.kind != "serving" || !r.ok()) continue;
        INFO(r.id << " measured " << r.measured << " predicted " << r.predicted);
        CHECK(std::isfinite(r.error));
        errs.push_back(std::fabs(r.error));
    }
    std::sort(errs.begin(), errs.end());
    REQUIRE(errs.size() >= 28);
    const size_t n = errs.size();
    const double median = n % 2 ? errs[n / 2] : 0.5 * (errs[n / 2 - 1] + errs[n / 2]);
    const double p90 = errs[static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n))) - 1];
    WARN("serving cases: " << n << " simulated; median |error| " << 100 * median << "%, p90 " << 100 * p90 << "%");
    // 14.8% since the two Llama 4 Scout MoE cases joined (e2e latency +36% and +17%; the 26 dense
    // cases alone stay at 14.4%); 12.6% since serving runs at its own fitted serving_clock (0.80 on
    // GH100, where training's sustained_clock went 0.76 -> 0.72); 11.4% with the GH100 attention
    // constants from the project's own campaign; 10.1% since NIM fp8 profiles serve an fp8 KV
    // cache (the NIM 1.8 concurrency sweep: -37% -> -16% at saturation); 9.4% with engine presets
    // by version and TensorRT-LLM 0.5-0.7's fp8 KV cache, GptSession KV sizing and MMHA decode
    // attention (the H200 launch blog's cases: -42..+67% -> -6..+19%); 9.1% with the device's memory in
    // GiB; 8.3% with the engines' custom all-reduce; 8.2% since a closed loop's rate counts the
    // warm-up round's work inside the measurement window (the NIM sweep at 100-250 clients:
    // -10.7..-14.7% -> -9.1..-9.5%, flat as measured). Issue 34 asks for a median of 8% and a p90
    // of 20% (45% before those; 19.2% now): pinned where they stand.
    CHECK(median <= 0.10);
    CHECK(p90 <= 0.20);
}

TEST_CASE(
    "fathom's own measured file: the custom all-reduce times the peer kernel was fitted to, held-out "
    "TensorRT-LLM 0.6.1 rows, DeepGEMM's kernel tables and Megatron-Bridge's dense rows",
    "[scenarios][compare]") {
    // scenarios/measured-fathom.yaml: SGLang's 18 H100 custom all-reduce times (PR #2904, tp 2/4/8,
    // 2 KiB-4 MiB). The nvlink4-nvswitch peer_allreduce_* constants are one relative least-squares
    // fit to them (median |error| 7.9%, max 20.9%, in-sample): every case is simulated as the peer
    // kernel and the fit's errors hold. And the ten rows of TensorRT-LLM's 0.6.1 performance table
    // that the shared file does not hold (LLaMA 7B/70B, H100 fp8 and A100 fp16), fitted on by
    // nothing: all simulated, median |error| 8.6% when added (8.9% on the roofline; pinned at 10%); the worst, A100 70B
    // TP4 at 240 x 128/2048, +61.5%. And the 24 rows of DeepGEMM's README (a6d97a1, H800) that
    // the shared file does not hold: 14 dense fp8 GEMMs and 10 grouped ones (benchmark.groups,
    // priced as the MoE layer prices its expert GEMMs: one batched GEMM). Fitted on by nothing;
    // They and the shared file's four rows are what the GH100 DeepGEMM class was fitted to
    // (deepgemm_efficiency 0.745, deepgemm_k_half 700, tools/fit_deepgemm.py; in-sample): priced
    // with its launcher's tile choice, median |error| 2.4% over the 28 rows, worst 64 x 7168 x 2048
    // -31%, leave-one-out median 3.1%. Before the class (the vendor library's pricing) they were at
    // 18.7%: small-M too slow (128 x 2112 x 7168 -61%), small-K too fast (4096 x 32768 x 512 +69%).
    const auto results = scenarios::compare_measured(std::string(FATHOM_SOURCE_DIR) + "/scenarios/measured-fathom.yaml",
                                                     testing::source_context());
    std::vector<double> fitted, held_out, deepgemm, deepep, training;
    for (const auto& r : results) {
        INFO(r.id << " measured " << r.measured << " predicted " << r.predicted);
        REQUIRE(r.ok());
        if (r.id.rfind("mb-deepep-", 0) == 0) {
            // DeepEP's low-latency table at EP 16, 32 and 128 (the shared file holds 8, 64 and 256):
            // within 14% with the kernels' 0.90 efficiency fitted on all ten inter-node rows.
            deepep.push_back(std::fabs(r.error));
            CHECK(std::fabs(r.error) < 0.14);
        } else if (r.id.rfind("mb-deepgemm-", 0) == 0) {
            deepgemm.push_back(std::fabs(r.error));
            CHECK(std::fabs(r.error) < 0.32);
        } else if (r.kind == "training") {
            training.push_back(std::fabs(r.error));
        } else if (r.kind == "microbench") {
            CHECK(std::fabs(r.error) < 0.22);
            fitted.push_back(std::fabs(r.error));
        } else {
            held_out.push_back(std::fabs(r.error));
        }
    }
    REQUIRE(fitted.size() == 18);
    // And SGLang's DeepSeek-V3 decode without two-batch overlap (the LMSYS blog's TBO ablation:
    // 22,310 tokens/s per node with it, a 25.5% speedup, so 17,777 without, derived): +0.9% when
    // added, where the shared case with overlap is +16.8% (fathom's overlap gains 44%, the run 25.5%).
    REQUIRE(held_out.size() == 11);
    // And Megatron-Bridge 25.11's five dense Llama FP8-CS pre-training rows: on DGX-B200 Llama 3 8B
    // (-8.1%) and 3.1 405B (+8.5%), the two dense B200 cases the B200 sustained clock is fitted on
    // (0.72: their median signed error at 0; in-sample); on DGX-H100 Llama 3 8B with Megatron FSDP
    // and block recomputation of 5 of 32 layers (-14.7%; -31.3% while every layer was recomputed),
    // 70B (-8.9%) and 3.1 405B on 1024 GPUs (+4.3%), held out of the H100 fit.
    // And the Model Zoo's Qwen3-235B row with Megatron-Core's batch-level EP all-to-all overlap
    // (17.6 s; 19.7 s without, the shared case at -2.4%): -14.8% when added, the overlap priced as
    // hiding every all-to-all (22% faster where the run gained 10.7%), the gap issue 35 names
    // (-12.3% since training's experts run grouped GEMMs and compute slows beside collectives). And
    // Megatron-Bridge 26.04.01's DGX-B200 Qwen3-30B-A3B row (MBS 4, EP 8 in a node, CUDA graphs,
    // MXFP8; the shared H100 row's recipe otherwise): +18.4% when added, held out; the B200 MoE
    // cases are all fast (+1% to +18%).
    REQUIRE(training.size() == 7);
    std::sort(training.begin(), training.end());
    CHECK(training[3] < 0.10);      // 8.9% (10.9% on the roofline before compute slowed beside collectives)
    CHECK(training.back() < 0.19);  // 18.4%
    REQUIRE(deepgemm.size() == 24);
    REQUIRE(deepep.size() == 6);
    std::sort(deepgemm.begin(), deepgemm.end());
    CHECK(0.5 * (deepgemm[11] + deepgemm[12]) < 0.06);  // 4.8% over these 24
    std::sort(fitted.begin(), fitted.end());
    std::sort(held_out.begin(), held_out.end());
    CHECK(0.5 * (fitted[8] + fitted[9]) < 0.09);
    CHECK(held_out[5] < 0.10);  // the median of 11: 8.2% (8.9% on the roofline)
}

TEST_CASE("microbenchmarks: GEMMs, collectives, attention and MoE all-to-alls in the sources' units",
          "[scenarios][compare]") {
    // Each op priced by the cost and network models a training step uses, at kernel clocks. Where
    // the models are on firm ground the bounds are tight; the known gaps are pinned as they are so
    // a change that moves them is seen (numbers from `fathom compare
    // tests/data/measured_microbench_frozen.yaml`):
    //   - large GEMMs (all dims >= 2048, square or mamf's best shape) within 6% on the roofline
    //     (mamf's rows are the efficiency sources of MI300X and MI325X: same dies, 0.51 at 750 W,
    //     0.60 at 1000 W); on H100 and H200, priced by this project's measured tables, 7-20% slow:
    //     the published sources' GPUs run large GEMMs 9-18% faster than the campaign's GPU (665-737
    //     TFLOP/s bf16 at its 700 W cap), a device-to-device spread one GPU's table cannot resolve
    //     (hardware/calibration/README.md, "The tables on by default");
    //   - nccl-tests / torch.distributed bus bandwidth within 3% (ring, NVLS, A100, MI300X; 1 MiB
    //     to 16 GiB on 8 H100, the sizes the NVLS start-up and pipeline fill were fitted to, within
    //     0.2%); 248 nodes of H200 at 512 MiB within 7% (-5.9%: the source's "approximate,
    //     occasionally below 300" user report, with the pipeline fill an estimate across nodes);
    //   - DeepSeek's fp8 GEMMs (DeepGEMM) in their own kernel class, fitted on its README table
    //     (these four rows among 28): within 2% (they were -42%, -23%, +2% and +25% as the vendor
    //     library's);
    //   - FA3 forward is predicted 12-28% slow (one efficiency for every head dim);
    //   - DeepEP normal dispatch: intra-node +21%, inter-node within 1% under the stated accounting;
    //   - a host-to-device copy-engine copy over PCIe Gen5: the link entry's efficiency source
    //     (SM-driven copies stay unsupported);
    //   - a copy between two H100s over NVLink (p2pBandwidthLatencyTest, 40 MB, bidirectional
    //     749 GB/s): -6.4%, the pipeline's send-recv at NCCL's ring efficiency (0.816 of 450 GB/s a
    //     direction, plus a launch) where the copy engine reaches 0.83-0.84;
    //   - DeepEP low-latency dispatch (every token-expert pair, the serving replay's deepep_ll, at
    //     the kernels' 0.90 of the priced all-to-all fitted on DeepEP's table): inter-node ep 64
    //     +1%, intra-node ep 8 -34% (DeepEP's V1 low-latency kernels do not reach NVLink rates on
    //     one node).
    const auto results = scenarios::compare_measured(
        std::string(FATHOM_SOURCE_DIR) + "/tests/data/measured_microbench_frozen.yaml", testing::source_context());
    int simulated = 0;
    for (const auto& r : results) {
        if (!r.ok()) continue;
        ++simulated;
        INFO(r.id << " measured " << r.measured << " predicted " << r.predicted);
        const double e = std::fabs(r.error);
        const bool gh100_gemm = r.id.rfind("mb-mamf-h100", 0) == 0 || r.id.rfind("mb-mamf-h200", 0) == 0 ||
                                r.id.rfind("mb-gemm-h100-bf16-square-", 0) == 0;
        if (gh100_gemm && r.id != "mb-gemm-h100-bf16-square-10240" && r.id != "mb-gemm-h100-bf16-square-1024")
            CHECK((r.error > -0.20 && r.error < -0.07));
        else if (r.id.rfind("mb-mamf-", 0) == 0) CHECK(e < 0.06);
        if (r.metric == "busbw_gb_per_s") CHECK(e < (r.id == "mb-allreduce-248x8xh200-512m" ? 0.07 : 0.03));
        if (r.id.rfind("mb-nccl-allreduce-8xh100-", 0) == 0) CHECK(e < 0.002);
        if (r.id == "mb-deepep-h800-internode-ep32-dispatch") CHECK(e < 0.02);
        if (r.id.rfind("mb-deepgemm-", 0) == 0) CHECK(e < 0.02);
        if (r.id == "mb-deepep-h800-intranode-ep8-dispatch") CHECK(r.error == Approx(0.212).margin(0.02));
        // Attention at the cuDNN rates of the project's own H100 campaign (hardware/calibration):
        // FlashAttention-3's head-dim-128 forward within 11%; at head dim 256 FA3 (756 TFLOP/s) is
        // still 10-25% above them, fathom having no head-dim term.
        // The causal 16k row: the table's cuDNN causal kernel at 16k, 10% below FA3's 616 TFLOP/s.
        if (r.id.rfind("mb-fa3-h100-fwd-hd128", 0) == 0) CHECK(e < 0.11);
        if (r.id.rfind("mb-fa3-h100-fwd-hd256", 0) == 0) CHECK((r.error > -0.25 && r.error < -0.10));
        if (r.id == "mb-deepep-h800-lowlat-ep64-dispatch") CHECK(e < 0.11);
        if (r.id == "mb-deepep-h800-lowlat-ep8-dispatch") CHECK(r.error == Approx(-0.339).margin(0.02));
        if (r.id == "mb-p2p-h100-nvlink") CHECK(r.error == Approx(-0.064).margin(0.01));
        // The copy engine's host-to-device rate is the PCIe Gen5 entry's efficiency source.
        if (r.id == "mb-pcie-h2d-h100-ce") CHECK(e < 0.01);
        if (r.id == "mb-pcie-h2d-d2h-h100-sm")
            FAIL("SM-driven copies are not modelled: " << r.id << " must stay unsupported");
    }
    CHECK(simulated == 37);
}

TEST_CASE("model TFLOP/s are counted the way each source counts attention", "[scenarios][compare]") {
    // measured-format.md `attention_flops`: NeMo 24.07 counts the score and value matmuls over the
    // full s x s square (12 l h s per token for training, on top of 6 x the weight FLOPs). Its
    // tokens/s and TFLOP/s are the same measurement divided by one FLOP count, so counted the
    // source's way the two errors of a case are equal up to the rounding of the published figures
    // (3 significant digits: 0.07%). Counted causal instead, Llama 3 8B at s = 8192 would differ by
    // about 12% (the file's notes: 4.608e10 full vs 4.286e10 causal FLOPs per token for Llama 2 7B).
    const auto results = scenarios::compare_measured(
        std::string(FATHOM_SOURCE_DIR) + "/tests/data/measured_frozen.yaml", testing::source_context(), true);
    int checked = 0;
    for (const auto& r : results) {
        if (r.id.rfind("trn-nemo2407-", 0) != 0 || r.id.find('#') != std::string::npos || !r.ok()) continue;
        for (const auto& o : results) {
            if (o.id != r.id + "#1" || o.metric != "model_tflops_per_gpu" || !o.ok()) continue;
            INFO(r.id << ": tokens/s error " << r.error << ", TFLOP/s error " << o.error);
            CHECK(std::fabs(o.error - r.error) < 0.0015);
            ++checked;
        }
    }
    CHECK(checked == 6);
}

TEST_CASE("forward FLOPs per token: full and causal attention counts", "[models][flops]") {
    // Llama 2 7B (32 layers, h 4096, 32 heads of 128, ffn 11008 SwiGLU, vocab 32000) at s = 4096:
    // weights 2 (4096 x 12288 + 4096^2 + 3 x 4096 x 11008) = 404.75e6 per layer; attention
    // 4 s h = 67.11e6 per layer (full) or half (causal); logits 2 x 4096 x 32000 = 262.1e6.
    // Full: 32 x 471.86e6 + 262.1e6 = 15.362e9 (x3 = 4.608e10, the figure NeMo's formula gives).
    const models::ModelSpec m = testing::dense_model(32, 4096, 32, 32, 11008, 32000);
    const double full = m.forward_flops_per_token(4096, false), causal = m.forward_flops_per_token(4096, true);
    CHECK(3 * full == Approx(4.608e10).epsilon(0.001));
    CHECK(full - causal == Approx(32 * 2.0 * 4096 * 4096).epsilon(1e-12));
}

TEST_CASE("a variant that changes the GPU count or cp rescales the global batch as the source did",
          "[scenarios][compare]") {
    // torchtitan's long-context table fixes one sequence per data-parallel rank (batch_per_dp_rank
    // 1): its cp = 1 row on the same 8 GPUs runs dp = 8, so a global batch of 8 (the case's 2 is
    // the cp = 4 row's dp 2 x 1), and its cp = 8 row dp = 1, a global batch of 1.
    const auto results = scenarios::compare_measured(
        std::string(FATHOM_SOURCE_DIR) + "/tests/data/measured_frozen.yaml", testing::source_context(), true);
    int seen = 0;
    for (const auto& r : results) {
        const bool cp1 = r.id == "trn-torchtitan-llama31-8b-cp4-128k#2",
                   cp8 = r.id == "trn-torchtitan-llama31-8b-cp4-128k#3";
        if (!cp1 && !cp8) continue;
        ++seen;
        INFO(r.id << ": " << r.reason);
        REQUIRE(r.ok());
        const std::string expected = cp1 ? "variant: global batch 8 = dp 8 x batch_per_dp_rank 1"
                                         : "variant: global batch 1 = dp 1 x batch_per_dp_rank 1";
        CHECK(std::find(r.assumptions.begin(), r.assumptions.end(), expected) != r.assumptions.end());
    }
    CHECK(seen == 2);
}

TEST_CASE("an interleaved schedule without a virtual-stage count runs its plausible range, never 1F1B",
          "[scenarios][compare]") {
    // MegaScale's Megatron-LM rows say "interleaved" without vp: 96 layers over pp 8 leave 12 per
    // stage, split evenly into vp in {2, 3, 4, 6, 12} chunks; each is simulated and the median
    // prediction is the headline. The 1T Megatron-LM 2021 row (128 layers, pp 64), cited from
    // another source (its paper's artifact would say plain 1F1B, scenarios/sources/), admits only vp 2.
    const auto results = scenarios::compare_measured(
        std::string(FATHOM_SOURCE_DIR) + "/tests/data/measured_frozen.yaml", testing::source_context());
    int seen = 0;
    for (const auto& r : results) {
        for (const auto& a : r.assumptions) CHECK(a.find("simulated as 1f1b") == std::string::npos);
        if (r.id == "trn-megascale-megatron-lm-256") {
            ++seen;
            REQUIRE(r.ok());
            CHECK(r.range_key == "vp");
            CHECK(r.range_values == std::vector<int>{2, 3, 4, 6, 12});
            CHECK(r.range_low <= r.predicted);
            CHECK(r.predicted <= r.range_high);
        }
    }
    CHECK(seen == 1);
    YAML::Node t = frozen_case("trn-megatron2021-1008b-3072");
    t["source"]["title"] = "a table without an artifact";
    const auto one = compare_one(t, "interleaved_1t.yaml");
    REQUIRE(one.size() == 1);
    REQUIRE(one[0].ok());
    CHECK(one[0].range_key == "vp");
    CHECK(one[0].range_values == std::vector<int>{2});
}

TEST_CASE("a NIM fp8 profile serves an fp8 KV cache unless the case says otherwise", "[scenarios][compare][serving]") {
    // NIM 1.8 Llama 3.3 70B fp8 TP2, 5000-token prompts, 500 outputs, 100 closed-loop clients. NIM's
    // fp8 profiles come from Model Optimizer fp8 checkpoints, whose KV cache is fp8 by default. The
    // measurement says so too: 917 tokens/s at a 93 ms ITL is ~85 sequences decoding at once, each
    // holding 5000+ tokens: 85 x 5000 x 80 layers x 8 KV heads x 128 x 2 x 1 byte = 70 GB of fp8
    // cache, but 139 GB in bf16, above the ~99 GB that two H100s (79.18 GiB each, as the driver
    // reports) leave beside 70.6 GB of fp8 weights. With the fill-in the predicted ITL is the
    // measured one within 12% (104 ms: 5% before the device's memory was counted in GiB, which
    // fits more sequences; what TensorRT-LLM keeps for its own buffers is not modelled yet, and
    // decimal GB hid it); with a bf16 cache
    // stated, half the sequences fit and the output rate drops by more than a fifth; a plain
    // TensorRT-LLM case (not NIM) gets no fill-in.
    const YAML::Node base = frozen_case("srv-nim180-llama33-70b-fp8-tp2-5000-500-c100");
    REQUIRE(base);
    auto run = [](const YAML::Node& c, bool other_metrics) {
        return compare_one(c, "nim_kv_case.yaml", other_metrics);
    };
    const std::string fill_in = "fp8 KV cache (NIM";
    const auto filled = run(base, true);
    REQUIRE(filled.size() == 3);  // output rate, TTFT, ITL
    REQUIRE(filled[0].ok());
    CHECK(stated(filled[0], fill_in));
    for (const auto& r : filled)
        if (r.metric == "itl_ms") CHECK(r.predicted == Approx(92.91).epsilon(0.12));
    YAML::Node bf16 = YAML::Clone(base);
    bf16["precision"]["kv_cache"] = "bf16";
    const auto half = run(bf16, false);
    REQUIRE(half.size() == 1);
    CHECK_FALSE(stated(half[0], fill_in));
    CHECK(half[0].predicted < 0.8 * filled[0].predicted);
    YAML::Node trt = YAML::Clone(base);
    trt["serving"]["engine"] = "tensorrt-llm";
    const auto plain = run(trt, false);
    REQUIRE(plain.size() == 1);
    CHECK_FALSE(stated(plain[0], fill_in));
}

TEST_CASE("fill-ins for what a source leaves out: vocabulary by family, memory savings before an OOM verdict",
          "[scenarios][compare]") {
    // The NeMo 24.07 Llama 3 8B case (8 H100, cp 2, dp 4), rewritten: (a) without its vocabulary,
    // the Llama 3 family's 128256 is used and stated, and the prediction is the same; (b) run as
    // plain Megatron-LM (no optimizer sharding, fp32 main gradients) and without its recompute
    // setting, it would not fit (8.03B x 18 bytes of states); the least optimizer sharding that
    // fits is taken and stated, never an OOM verdict.
    const YAML::Node base = frozen_case("trn-nemo2407-llama3-8b-8");
    REQUIRE(base);
    auto run = [](const YAML::Node& c) {
        const auto r = compare_one(c, "fill_in_case.yaml");
        REQUIRE(r.size() == 1);
        INFO(r[0].reason);
        REQUIRE(r[0].ok());
        return r[0];
    };
    const auto original = run(base);
    YAML::Node no_vocab = YAML::Clone(base);
    no_vocab["model"].remove("vocab");
    const auto filled = run(no_vocab);
    CHECK(stated(filled, "vocab = 128256 (the family's standard"));
    CHECK(filled.predicted == original.predicted);
    YAML::Node plain = YAML::Clone(base);
    plain["training"]["framework"] = "megatron-lm";
    plain["training"]["sequence_parallel"] = false;
    plain["training"].remove("zero_stage");
    plain["training"].remove("recompute");
    const auto sharded = run(plain);
    CHECK_FALSE(sharded.out_of_memory);
    CHECK(stated(sharded, "zero_stage "));
    // (c) the same run as LoRA fine-tuning (the format's `lora: {rank, alpha}`): adapters of rank
    // 16, stated, and faster than full training (no weight gradients for the base).
    YAML::Node lora = YAML::Clone(base);
    lora["training"]["lora"]["rank"] = 16;
    lora["training"]["lora"]["alpha"] = 32;
    const auto tuned = run(lora);
    CHECK(tuned.plan.find("lora 16") != std::string::npos);
    CHECK(stated(tuned, "LoRA adapters"));
    CHECK(tuned.step_time_s < original.step_time_s);
}
