// Calibration tables on synthetic measurements with a known ground truth: the fit recovers the
// truth's parameters, interpolates between measured points, flags shapes outside the measured
// range, and survives a write/read round trip.
#include "models/cost/calibration_table.h"
#include "scenarios/calibration_io.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>

using namespace fathom;
using namespace fathom::models;

namespace {

// Test device: bf16 peak P = 1000 TFLOP/s, 100 units, tile 128 x 128, HBM 2 TB/s.
hardware::AcceleratorSpec device() {
    hardware::AcceleratorSpec a;
    a.id = "synthetic-gpu";
    a.peak_flops[Dtype::bf16] = 1000e12;
    a.memory_bandwidth = 2e12;
    a.compute_units = 100;
    a.launch_overhead = 4e-6;
    a.calibration.gemm_efficiency[Dtype::bf16] = 0.8;
    a.calibration.gemm_tile_m = 128;
    a.calibration.gemm_tile_n = 128;
    a.calibration.gemm_k_half = 64;
    a.calibration.memory_efficiency = 0.9;
    a.calibration.attention_fwd_efficiency = 0.5;
    a.calibration.attention_bwd_efficiency = 0.4;
    a.calibration.attention_seq_half = 512;
    return a;
}

// Ground truth, deliberately different from the catalog roofline: GEMM efficiency 0.70 with a
// K half-point of 200 and a 6 us fixed cost; memory kernels at 80% of HBM plus 3 us.
//   t_gemm = F / (P q 0.70) x (1 + 200 / K) + 6 us  ==  a x1 + b x2 + c with a = 1/0.7,
//   b = 200/0.7, c = 6e-6 (x1 = F/(P q), x2 = x1/K): exactly the fitted form, so the fit must
//   recover a, b and c.
double truth_gemm(const OpDesc& op, const hardware::AcceleratorSpec& a) {
    const double x1 = op.flops / (a.peak(op.dtype) * gemm_quantization(op, a));
    return x1 / 0.7 * (1.0 + 200.0 / static_cast<double>(op.k)) + 6e-6;
}
double truth_memory(const OpDesc& op) { return op.bytes / (2e12 * 0.8) + 3e-6; }

std::vector<Measurement> synthetic() {
    const auto a = device();
    std::vector<Measurement> out;
    for (int64_t m : {128, 512, 2048, 8192})
        for (int64_t n : {1024, 4096, 16384})
            for (int64_t k : {1024, 4096, 16384}) {
                Measurement x;
                x.op = gemm_op("gemm", m, n, k, Dtype::bf16);
                x.seconds = truth_gemm(x.op, a);
                out.push_back(x);
            }
    for (double mb : {1.0, 4.0, 16.0, 64.0, 256.0, 1024.0}) {
        Measurement x;
        x.op = memory_op("rmsnorm", mb * 1e6);
        x.seconds = truth_memory(x.op);
        out.push_back(x);
    }
    return out;
}

}  // namespace

TEST_CASE("fitting synthetic GEMM and memory measurements recovers the ground truth", "[calibration]") {
    const auto a = device();
    const auto table = fit_calibration(synthetic(), a);
    REQUIRE(table.groups.size() == 2);
    const CalibrationGroup* g = find_group(table, gemm_op("gemm", 1024, 1024, 1024, Dtype::bf16));
    REQUIRE(g != nullptr);
    REQUIRE(g->coef.size() == 4);
    // a = 1/0.7, b = 200/0.7, d = 0 (no memory term in the truth), c = 6 us.
    CHECK(g->coef[0] == Approx(1.0 / 0.7).epsilon(1e-6));
    CHECK(g->coef[1] == Approx(200.0 / 0.7).epsilon(1e-6));
    CHECK(g->coef[2] == Approx(0.0).margin(1e-6));
    CHECK(g->coef[3] == Approx(6e-6).epsilon(1e-6));
    const CalibrationGroup* mg = find_group(table, memory_op("rmsnorm", 1e6));
    REQUIRE(mg != nullptr);
    CHECK(mg->coef[0] == Approx(1.0 / 0.8).epsilon(1e-6));  // t = bytes/bw / 0.8 + 3 us
    CHECK(mg->coef[1] == Approx(3e-6).epsilon(1e-6));
}

TEST_CASE("a table reproduces its measurements and interpolates between them", "[calibration]") {
    const auto a = device();
    const TableCost cost(fit_calibration(synthetic(), a), a, Load::Kernel);
    for (const auto& m : synthetic()) CHECK(cost.seconds(m.op) == Approx(m.seconds).epsilon(1e-9));
    // A shape between measured points (the truth is the fitted form, so exact up to rounding).
    const OpDesc mid = gemm_op("gemm", 1000, 3000, 6000, Dtype::bf16);
    CHECK(cost.calibrated(mid));
    CHECK(cost.seconds(mid) == Approx(truth_gemm(mid, a)).epsilon(1e-6));
}

TEST_CASE("measured corrections carry what the parametric form cannot", "[calibration]") {
    // Truth with a bump the linear form cannot express: 20% slower at N = 4096 only. The
    // corrections of the N = 4096 points must carry it, and leave-one-out interpolation of an
    // N = 4096 point from its neighbours (which include other N = 4096 points) stays within 10%.
    const auto a = device();
    auto data = synthetic();
    for (auto& m : data)
        if (m.op.kind == OpKind::Gemm && m.op.n == 4096) m.seconds *= 1.2;
    const auto table = fit_calibration(data, a);
    const TableCost cost(table, a, Load::Kernel);
    for (const auto& m : data) CHECK(cost.seconds(m.op) == Approx(m.seconds).epsilon(1e-9));
    const CalibrationGroup* g = find_group(table, data.front().op);
    REQUIRE(g != nullptr);
    int idx = 0;
    for (const auto& m : data) {
        if (m.op.kind != OpKind::Gemm) continue;
        if (m.op.n == 4096 && m.op.m == 2048 && m.op.k == 4096) {
            const double loo = cost.table_seconds(*g, m.op, idx);
            CHECK(std::fabs(loo / m.seconds - 1) < 0.10);
            // Without corrections (parametric part only) the bump would be missed by more.
            CHECK(std::fabs(loo / m.seconds - 1) < std::fabs(truth_gemm(m.op, a) / m.seconds - 1));
        }
        ++idx;
    }
}

TEST_CASE("shapes outside the measured range fall back to the roofline and are flagged", "[calibration]") {
    const auto a = device();
    const TableCost cost(fit_calibration(synthetic(), a), a, Load::Kernel);
    const auto roof = make_roofline_cost(a, Load::Kernel);
    const OpDesc big = gemm_op("gemm", 65536, 4096, 4096, Dtype::bf16);  // M beyond the measured 8192
    CHECK_FALSE(cost.calibrated(big));
    CHECK(cost.seconds(big) == Approx(roof->seconds(big)));
    const OpDesc other = memory_op("layernorm", 1e6);  // no layernorm group measured
    CHECK_FALSE(cost.calibrated(other));
    CHECK(cost.seconds(other) == Approx(roof->seconds(other)));
}

TEST_CASE("a group too small to fit keeps the roofline as its parametric part", "[calibration]") {
    const auto a = device();
    Measurement one;
    one.op = gemm_op("gemm", 4096, 4096, 4096, Dtype::bf16);
    const auto roof = make_roofline_cost(a, Load::Kernel);
    one.seconds = 1.1 * roof->seconds(one.op);  // 10% slower than the roofline
    const auto table = fit_calibration({one}, a);
    REQUIRE(table.groups.size() == 1);
    CHECK(table.groups[0].coef.empty());
    const TableCost cost(table, a, Load::Kernel);
    CHECK(cost.seconds(one.op) == Approx(one.seconds).epsilon(1e-9));
}

TEST_CASE("calibration tables survive a write and read round trip", "[calibration]") {
    const auto a = device();
    auto table = fit_calibration(synthetic(), a);
    table.source = "synthetic";
    const auto path = (std::filesystem::temp_directory_path() / "fathom_calibration_roundtrip.yaml").string();
    scenarios::write_calibration_table(table, path);
    const auto back = scenarios::read_calibration_table(path);
    std::remove(path.c_str());
    REQUIRE(back.groups.size() == table.groups.size());
    const TableCost c1(table, a, Load::Kernel), c2(back, a, Load::Kernel);
    for (const auto& m : synthetic()) CHECK(c2.seconds(m.op) == Approx(c1.seconds(m.op)).epsilon(1e-12));
    const OpDesc mid = gemm_op("gemm", 1000, 3000, 6000, Dtype::bf16);
    CHECK(c2.seconds(mid) == Approx(c1.seconds(mid)).epsilon(1e-12));
}

TEST_CASE("sustained load slows only the tensor-bound groups of a table", "[calibration]") {
    // A table time scales by the roofline's loaded-to-kernel ratio (launch excluded): a 2048 x 4096
    // x 4096 GEMM (86 us of tensor work at 800 TFLOP/s) takes kernel time / clock; a 1-token decode
    // GEMM of a 4096 x 4096 weight reads 32 MiB (18 us at 2 TB/s x 0.9, against 0.04 us of tensor
    // work), so it is memory-bound and keeps its kernel time, as memory-bound groups do.
    auto a = device();
    a.calibration.sustained_clock = 0.8;
    const auto table = fit_calibration(synthetic(), a);
    const TableCost kernel(table, a, Load::Kernel), sustained(table, a, Load::Sustained);
    const OpDesc g = gemm_op("gemm", 2048, 4096, 4096, Dtype::bf16);
    const OpDesc decode = gemm_op("gemm", 1, 4096, 4096, Dtype::bf16);
    const OpDesc m = memory_op("rmsnorm", 16e6);
    CHECK(sustained.seconds(g) == Approx(kernel.seconds(g) / 0.8).epsilon(1e-12));
    CHECK(sustained.seconds(decode) == Approx(kernel.seconds(decode)).epsilon(1e-12));
    CHECK(sustained.seconds(m) == Approx(kernel.seconds(m)));
}

TEST_CASE("serving load runs the tensor cores at the serving clock, or the sustained one", "[calibration]") {
    // A table and the roofline alike: a GEMM under Load::Serving takes kernel time / serving_clock;
    // a device without serving_clock uses its sustained_clock; memory-bound ops keep their time.
    auto a = device();
    a.calibration.sustained_clock = 0.7;
    const OpDesc g = gemm_op("gemm", 2048, 4096, 4096, Dtype::bf16);
    const OpDesc m = memory_op("rmsnorm", 16e6);
    const auto table = fit_calibration(synthetic(), a);
    {
        const TableCost kernel(table, a, Load::Kernel), serving(table, a, Load::Serving);
        CHECK(serving.seconds(g) == Approx(kernel.seconds(g) / 0.7));
    }
    a.calibration.serving_clock = 0.8;
    const TableCost kernel(table, a, Load::Kernel), serving(table, a, Load::Serving),
        sustained(table, a, Load::Sustained);
    CHECK(serving.seconds(g) == Approx(kernel.seconds(g) / 0.8));
    CHECK(sustained.seconds(g) == Approx(kernel.seconds(g) / 0.7));
    CHECK(serving.seconds(m) == Approx(kernel.seconds(m)));
    const auto rk = make_roofline_cost(a, Load::Kernel), rs = make_roofline_cost(a, Load::Serving);
    CHECK(rs->seconds(g) - a.launch_overhead == Approx((rk->seconds(g) - a.launch_overhead) / 0.8));
    CHECK(rs->seconds(m) == Approx(rk->seconds(m)));
}

TEST_CASE("priced() is seconds() and calibrated() at once, a DeepGEMM op is never table-priced", "[calibration]") {
    // A GEMM inside the synthetic table's range, one beyond it, a grouped GEMM of table shape, a
    // DeepGEMM one of the same shape (priced by the roofline's DeepGEMM class, so outside the table),
    // and a memory-bound op: the one-lookup path answers as the two calls do.
    auto a = device();
    a.calibration.deepgemm_efficiency = 0.7;
    a.calibration.deepgemm_k_half = 500;
    a.peak_flops[Dtype::fp8] = 2000e12;
    const auto table = fit_calibration(synthetic(), a);
    const TableCost cost(table, a, Load::Sustained);
    OpDesc grouped = gemm_op("gemm", 2048, 4096, 4096, Dtype::bf16), deep = grouped;
    grouped.gemm_kernel = GemmKernel::Grouped;
    deep.gemm_kernel = GemmKernel::DeepGemm;
    for (const OpDesc& op :
         {gemm_op("gemm", 2048, 4096, 4096, Dtype::bf16), gemm_op("gemm", 65536, 4096, 4096, Dtype::bf16), grouped,
          deep, memory_op("rmsnorm", 16e6)}) {
        bool in_range = true;
        const double t = cost.priced(op, in_range);
        CHECK(t == cost.seconds(op));
        CHECK(in_range == cost.calibrated(op));
    }
    CHECK(cost.calibrated(gemm_op("gemm", 2048, 4096, 4096, Dtype::bf16)));
    CHECK_FALSE(cost.calibrated(deep));
}

TEST_CASE("table-priced ops take the table's load factors, ops outside the table the roofline's", "[calibration]") {
    // table_sustained_clock 0.9 and table_serving_clock 1.0 for what the table covers: a GEMM in the
    // measured range takes kernel time / 0.9 in training and its kernel time in serving; a GEMM
    // beyond the range (M = 65536 > the measured 8192) falls back to the roofline at the roofline's
    // own factors, sustained_clock 0.7 and serving_clock 0.8.
    auto a = device();
    a.calibration.sustained_clock = 0.7;
    a.calibration.serving_clock = 0.8;
    a.calibration.table_sustained_clock = 0.9;
    a.calibration.table_serving_clock = 1.0;
    const auto table = fit_calibration(synthetic(), a);
    const TableCost kernel(table, a, Load::Kernel), sustained(table, a, Load::Sustained),
        serving(table, a, Load::Serving);
    const OpDesc in = gemm_op("gemm", 2048, 4096, 4096, Dtype::bf16);
    const OpDesc out = gemm_op("gemm", 65536, 4096, 4096, Dtype::bf16);
    REQUIRE(kernel.calibrated(in));
    REQUIRE_FALSE(kernel.calibrated(out));
    CHECK(sustained.seconds(in) == Approx(kernel.seconds(in) / 0.9).epsilon(1e-12));
    CHECK(serving.seconds(in) == Approx(kernel.seconds(in)).epsilon(1e-12));
    const auto rs = make_roofline_cost(a, Load::Sustained), rv = make_roofline_cost(a, Load::Serving);
    CHECK(sustained.seconds(out) == rs->seconds(out));
    CHECK(serving.seconds(out) == rv->seconds(out));
    CHECK(rs->seconds(out) > rv->seconds(out));  // 0.7 below 0.8: the factors differ
}

namespace {
AttentionShape gqa(bool causal, int64_t batch, int64_t q_len, int64_t kv_len) {
    AttentionShape s;
    s.heads = 32;
    s.kv_heads = 8;
    s.head_dim = 128;
    s.causal = causal;
    s.slices = {SequenceSlice{batch, q_len, kv_len}};
    return s;
}
}  // namespace

TEST_CASE("decode attention is its own table group, priced by the bytes of the KV cache it reads", "[calibration]") {
    // Truth: t = 1.1 x bytes / 2 TB/s + 18 us, bytes = the KV read 2 x batch x kv_heads x kv x 128 x 2
    // (plus the queries and outputs). The decode group's form is a x bytes/bw + c, so the fit
    // recovers a = 1.1, c = 18 us, and an unmeasured decode is predicted exactly; a prefill
    // attention of the same table is not in that group.
    const auto a = device();
    std::vector<Measurement> data;
    auto truth = [&](const OpDesc& op) { return 1.1 * op.bytes / 2e12 + 18e-6; };
    for (int64_t b : {1, 8, 64, 256})
        for (int64_t kv : {128, 1024, 8192}) {
            Measurement m;
            m.op = attention_op(false, gqa(false, b, 1, kv), Dtype::bf16);
            m.seconds = truth(m.op);
            data.push_back(m);
        }
    const auto table = fit_calibration(data, a);
    REQUIRE(table.groups.size() == 1);
    CHECK(table.groups[0].op == "attention_decode");
    REQUIRE(table.groups[0].coef.size() == 2);
    CHECK(table.groups[0].coef[0] == Approx(1.1).epsilon(1e-9));
    CHECK(table.groups[0].coef[1] == Approx(18e-6).epsilon(1e-9));
    const TableCost cost(table, a, Load::Kernel);
    const OpDesc unseen = attention_op(false, gqa(false, 32, 1, 2048), Dtype::bf16);
    CHECK(cost.calibrated(unseen));
    CHECK(cost.seconds(unseen) == Approx(truth(unseen)).epsilon(1e-9));
    CHECK(!cost.calibrated(attention_op(false, gqa(true, 1, 4096, 4096), Dtype::bf16)));

    // A ragged decode batch (4 sequences at 1,000 keys, 4 at 3,000) is one varlen kernel: priced as
    // the uniform decode of 8 sequences over their mean 2,000 keys (the same KV bytes), so the 18 us
    // fixed cost is paid once, not once per distinct length.
    AttentionShape ragged = gqa(false, 4, 1, 1000);
    ragged.slices.push_back(SequenceSlice{4, 1, 3000});
    const OpDesc r = attention_op(false, ragged, Dtype::bf16);
    const OpDesc uniform = attention_op(false, gqa(false, 8, 1, 2000), Dtype::bf16);
    CHECK(r.bytes == Approx(uniform.bytes));
    CHECK(cost.seconds(r) == Approx(cost.seconds(uniform)).epsilon(1e-12));
}

TEST_CASE("a table keeps causal and non-causal attention of one shape apart", "[calibration]") {
    // Both masks measured at the same shapes, the non-causal one 1.5x slower than its FLOPs say
    // relative to the causal one: each in-sample point is reproduced exactly (before the mask was a
    // table coordinate, the two shared coordinates and one took the other's correction).
    const auto a = device();
    std::vector<Measurement> data;
    for (int64_t s : {1024, 4096, 16384})
        for (bool causal : {true, false}) {
            Measurement m;
            m.op = attention_op(false, gqa(causal, 1, s, s), Dtype::bf16);
            m.seconds = m.op.flops / 500e12 * (causal ? 1.0 : 1.5) + 10e-6;
            data.push_back(m);
        }
    const TableCost cost(fit_calibration(data, a), a, Load::Kernel);
    for (const auto& m : data) CHECK(cost.seconds(m.op) == Approx(m.seconds).epsilon(1e-9));
}

TEST_CASE("a table keeps row kernels of equal bytes and different row widths apart", "[calibration]") {
    // RMSNorm over 4,096 rows of 2,048 and over 1,024 rows of 8,192 moves the same bytes; the
    // narrow rows run at 1.5 TB/s, the wide ones at 2.5 TB/s. The row width is a table coordinate,
    // so each is reproduced, and a width between them interpolates between the two.
    const auto a = device();
    std::vector<Measurement> data;
    for (int64_t width : {2048, 8192})
        for (double rows : {1024.0, 4096.0, 16384.0, 65536.0}) {
            Measurement m;
            const double bytes = rows * static_cast<double>(width) * 2 * 2;
            m.op = memory_op("rmsnorm", bytes, OpRole::Norm, "rmsnorm", width);
            m.seconds = bytes / (width == 2048 ? 1.5e12 : 2.5e12) + 3e-6;
            data.push_back(m);
        }
    const TableCost cost(fit_calibration(data, a), a, Load::Kernel);
    for (const auto& m : data) CHECK(cost.seconds(m.op) == Approx(m.seconds).epsilon(1e-9));
    const double bytes = 4096.0 * 4096 * 2 * 2;
    const double mid = cost.seconds(memory_op("rmsnorm", bytes, OpRole::Norm, "rmsnorm", 4096));
    CHECK(mid > bytes / 2.5e12 + 3e-6);
    CHECK(mid < bytes / 1.5e12 + 3e-6);
}

TEST_CASE("a table's fit that goes negative inside its box is priced on the roofline, flagged", "[calibration]") {
    // The H100 table's linear GEMM fit reaches below zero for a skinny GEMM far from its rows: Llama
    // 3 8B's attention output projection at TP 4 (K = 1024, N = 4096) over a few tokens, which
    // stopped a TP-4 serving run with an internal error. Every such op is priced on the roofline
    // and flagged outside the measured range; every price is positive.
    const std::string dir = std::string(FATHOM_SOURCE_DIR) + "/hardware/calibration/h100-sxm-80gb/table.yaml";
    const hardware::AcceleratorSpec& a = testing::source_catalog().accelerator("h100-sxm-80gb");
    const TableCost cost(scenarios::read_calibration_table(dir), a, Load::Serving);
    const auto roof = make_roofline_cost(a, Load::Serving);
    int flagged = 0;
    for (int64_t m = 1; m <= 512; ++m) {
        const OpDesc op = gemm_op("attn_proj", m, 4096, 1024, Dtype::bf16);
        bool in_range = false;
        const double t = cost.priced(op, in_range);
        REQUIRE(t > 0);
        if (!in_range) {
            ++flagged;
            CHECK(t == Approx(roof->seconds(op)));
        }
    }
    CHECK(flagged > 0);
}
