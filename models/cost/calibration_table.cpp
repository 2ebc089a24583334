#include "models/cost/calibration_table.h"

#include "sim/error.h"

#include <Eigen/Dense>

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>

namespace fathom::models {
namespace {

// The library GEMM of a weight-only GEMM's shape, its weights at the activations' width.
OpDesc library_gemm(const OpDesc& op) { return gemm_op(op.name, op.m, op.n, op.k, op.dtype, op.batch, op.role); }

constexpr size_t kNeighbours = 8;
constexpr double kRangeSlack = 1e-9;

bool memory_class(OpKind k) { return k == OpKind::MemoryBound || k == OpKind::Optimizer; }

// A decode attention: one query per sequence over a KV cache (a single-slice op with q_len 1), or a
// few over a longer cache (up to kDecodeQueries: a speculative verification's k + 1, a prompt's
// short last chunk; the decode kernels' multi-query path), memory-bound on the KV read, so it has a
// group of its own priced by bytes. Absorbed MLA
// decode (FlashMLA, compute-bound at 64-128 heads) is a group of its own too.
constexpr int64_t kDecodeQueries = 16;
bool decode_slice(const SequenceSlice& x) { return x.q_len == 1 || (x.q_len <= kDecodeQueries && x.q_len < x.kv_len); }
bool decode_attention(const OpDesc& op) {
    return op.kind == OpKind::AttentionFwd && op.attn.slices.size() == 1 && decode_slice(op.attn.slices.front());
}

// Memory-bound ops group by the measured kernel they run as (their role's kernel, not their name:
// "rmsnorm_attn" and "rmsnorm_mlp_bwd" are both priced by the "rmsnorm" group); GEMMs and attention
// by kind and dtype.
std::string group_op_name(const OpDesc& op) {
    if (decode_attention(op))
        return op.attn.kernel == AttentionKernel::MlaDecode ? "attention_mla_decode" : "attention_decode";
    if (!memory_class(op.kind)) return sim::name(op.kind);
    return op.kernel.empty() ? op.name : op.kernel;
}

// The single-slice attention ops a ragged attention op is priced as: each prefill slice alone, and
// the decode slices (decode_slice) of each query count merged into one uniform decode of their
// total sequences over their mean key length. A decode's time is its KV read plus a fixed cost the
// varlen kernel pays once, so pricing each decode length apart would pay that fixed cost (about
// 18 us on H100, attention.py's smallest decodes) once per distinct length; the merged decode reads
// the same keys (count x mean = the sum of count x kv_len, to rounding).
std::vector<OpDesc> attention_slices(const OpDesc& op) {
    std::vector<OpDesc> out;
    // Decodes by their queries (1, or a speculative verification's k + 1): sequences and keys. A
    // batch has one or two query counts, so a linear search does.
    struct Decodes {
        int64_t q_len, count;
        double keys;
    };
    std::vector<Decodes> decodes;
    for (const SequenceSlice& x : op.attn.slices) {
        if (op.kind == OpKind::AttentionFwd && decode_slice(x)) {
            auto it =
                std::find_if(decodes.begin(), decodes.end(), [&](const Decodes& d) { return d.q_len == x.q_len; });
            if (it == decodes.end()) it = decodes.insert(decodes.end(), {x.q_len, 0, 0.0});
            it->count += x.count;
            it->keys += static_cast<double>(x.count) * static_cast<double>(x.kv_len);
            continue;
        }
        AttentionShape one = op.attn;
        one.slices = {x};
        out.push_back(attention_op(op.kind == OpKind::AttentionBwd, one, op.dtype));
    }
    std::sort(decodes.begin(), decodes.end(), [](const Decodes& a, const Decodes& b) { return a.q_len < b.q_len; });
    for (const Decodes& d : decodes) {
        AttentionShape one = op.attn;
        const auto mean = static_cast<int64_t>(std::llround(d.keys / static_cast<double>(d.count)));
        one.slices = {SequenceSlice{d.count, d.q_len, std::max<int64_t>(d.q_len, mean)}};
        out.push_back(attention_op(false, one, op.dtype));
    }
    return out;
}
bool ragged_attention(const OpDesc& op) {
    return (op.kind == OpKind::AttentionFwd || op.kind == OpKind::AttentionBwd) && op.attn.slices.size() > 1;
}

std::vector<double> features(const OpDesc& op, const hardware::AcceleratorSpec& acc) {
    const double bw = acc.memory_bandwidth;
    switch (op.kind) {
        case OpKind::Gemm: {
            const double x1 = op.flops / (acc.peak(op.dtype) * gemm_quantization(op, acc));
            return {x1, x1 / static_cast<double>(std::max<int64_t>(1, op.k)), op.bytes / bw, 1.0};
        }
        case OpKind::AttentionFwd:
        case OpKind::AttentionBwd: {
            if (decode_attention(op)) return {op.bytes / bw, 1.0};
            const double x1 = op.flops / acc.peak(op.dtype);
            const int64_t kv = op.attn.slices.empty() ? 1 : op.attn.slices.front().kv_len;
            return {x1, x1 / static_cast<double>(std::max<int64_t>(1, kv)), 1.0};
        }
        case OpKind::MemoryBound:
        case OpKind::Optimizer: return {op.bytes / bw, 1.0};
    }
    return {1.0};
}

// Groups with too few measurements to fit keep no coefficients: their parametric part is the
// roofline's kernel-level prediction.
double parametric(const CalibrationGroup& g, const OpDesc& op, const hardware::AcceleratorSpec& acc,
                  const CostModel& kernel_roofline) {
    if (g.coef.empty()) return kernel_roofline.seconds(op);
    const auto x = features(op, acc);
    double t = 0;
    for (size_t i = 0; i < x.size() && i < g.coef.size(); ++i) t += g.coef[i] * x[i];
    return t;
}

}  // namespace

std::vector<double> calibration_coords(const OpDesc& op) {
    auto lg = [](double v) { return std::log(std::max(v, 1.0)); };
    switch (op.kind) {
        case OpKind::Gemm:
            return {lg(static_cast<double>(op.m)), lg(static_cast<double>(op.n)), lg(static_cast<double>(op.k)),
                    lg(static_cast<double>(op.batch))};
        case OpKind::AttentionFwd:
        case OpKind::AttentionBwd: {
            // A single-slice op (ragged ops are priced slice by slice). Causal and non-causal kernels
            // of one shape differ in time by more than their FLOPs say, so the mask is a coordinate
            // too, far apart (log 8) so that neither borrows the other's correction; so are the
            // key/value heads (grouped-query attention reads fewer keys per query head).
            const SequenceSlice x = op.attn.slices.empty() ? SequenceSlice{} : op.attn.slices.front();
            return {
                lg(static_cast<double>(x.count * op.attn.heads)),
                lg(static_cast<double>(x.q_len)),
                lg(static_cast<double>(x.kv_len)),
                lg(static_cast<double>(op.attn.head_dim)),
                op.attn.causal ? std::log(8.0) : 0.0,
                lg(static_cast<double>(op.attn.heads) / static_cast<double>(std::max<int64_t>(1, op.attn.kv_heads)))};
        }
        case OpKind::MemoryBound:
        case OpKind::Optimizer:
            // Row kernels (norms, softmax) carry their row width in `n`: at equal bytes a narrow row
            // runs fewer threads per block than a wide one, so the width is a coordinate of its own.
            if (op.n > 0) return {lg(op.bytes), lg(static_cast<double>(op.n))};
            return {lg(op.bytes)};
    }
    return {};
}

CalibrationTable fit_calibration(const std::vector<Measurement>& data, const hardware::AcceleratorSpec& acc) {
    // Group by (kind, name, dtype), in a deterministic order.
    std::map<std::tuple<int, std::string, int>, std::vector<const Measurement*>> groups;
    for (const auto& m : data) {
        if (!(m.seconds > 0)) throw sim::InputError("measurement of '" + m.op.name + "' has a non-positive time");
        groups[{static_cast<int>(m.op.kind), group_op_name(m.op), static_cast<int>(m.op.dtype)}].push_back(&m);
    }
    CalibrationTable table;
    table.device = acc.id;
    const auto roofline = make_roofline_cost(acc, Load::Kernel);
    for (const auto& [key, rows] : groups) {
        CalibrationGroup g;
        g.kind = static_cast<OpKind>(std::get<0>(key));
        g.op = std::get<1>(key);
        g.dtype = static_cast<Dtype>(std::get<2>(key));
        const size_t p = features(rows.front()->op, acc).size();
        const bool fit = rows.size() >= p + 1;
        // Least squares on relative residuals: row i is divided by the measured time, so every
        // kernel counts equally whatever its size.
        Eigen::MatrixXd A(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(p));
        Eigen::VectorXd b(static_cast<Eigen::Index>(rows.size()));
        for (size_t i = 0; i < rows.size(); ++i) {
            const auto x = features(rows[i]->op, acc);
            for (size_t j = 0; j < p; ++j)
                A(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = x[j] / rows[i]->seconds;
            b(static_cast<Eigen::Index>(i)) = 1.0;
        }
        if (fit) {
            const Eigen::VectorXd coef = A.colPivHouseholderQr().solve(b);
            g.coef.assign(coef.data(), coef.data() + coef.size());
        }
        // A degenerate fit (a non-positive prediction at a measured point) falls back to the
        // roofline as parametric part, like a group too small to fit.
        bool degenerate = false;
        for (const auto* r : rows) degenerate = degenerate || !(parametric(g, r->op, acc, *roofline) > 0);
        if (degenerate) g.coef.clear();
        for (const auto* r : rows) {
            CalibrationPoint pt;
            pt.coords = calibration_coords(r->op);
            pt.log_ratio = std::log(r->seconds / parametric(g, r->op, acc, *roofline));
            if (g.lo.empty()) {
                g.lo = pt.coords;
                g.hi = pt.coords;
            }
            for (size_t j = 0; j < pt.coords.size(); ++j) {
                g.lo[j] = std::min(g.lo[j], pt.coords[j]);
                g.hi[j] = std::max(g.hi[j], pt.coords[j]);
            }
            g.points.push_back(std::move(pt));
        }
        table.groups.push_back(std::move(g));
    }
    return table;
}

std::string missing_op_classes(const CalibrationTable& t) {
    bool gemm = false, fwd = false, bwd = false, memory = false;
    for (const auto& g : t.groups) {
        gemm = gemm || g.kind == OpKind::Gemm;
        fwd = fwd || g.kind == OpKind::AttentionFwd;
        bwd = bwd || g.kind == OpKind::AttentionBwd;
        memory = memory || memory_class(g.kind);
    }
    std::string missing;
    for (const auto& [has, name] : {std::pair{gemm, "GEMM"}, std::pair{fwd, "attention forward"},
                                    std::pair{bwd, "attention backward"}, std::pair{memory, "memory-bound"}})
        if (!has) missing += (missing.empty() ? "" : ", ") + std::string(name);
    return missing;
}

const CalibrationGroup* find_group(const CalibrationTable& t, const OpDesc& op) {
    const std::string name = group_op_name(op);
    for (const auto& g : t.groups)
        if ((g.kind == op.kind || (memory_class(g.kind) && memory_class(op.kind))) && g.op == name &&
            (memory_class(op.kind) || g.dtype == op.dtype))
            return &g;
    return nullptr;
}

namespace {

// `acc` with the table's load factors as its clocks (those of a device without them: its own).
hardware::AcceleratorSpec table_basis(const hardware::AcceleratorSpec& acc) {
    hardware::AcceleratorSpec a = acc;
    if (a.calibration.table_sustained_clock > 0) a.calibration.sustained_clock = a.calibration.table_sustained_clock;
    if (a.calibration.table_serving_clock > 0) a.calibration.serving_clock = a.calibration.table_serving_clock;
    return a;
}

}  // namespace

size_t TableCost::CorrectionHash::operator()(const CorrectionKey& k) const {
    size_t h = std::hash<const void*>()(k.group);
    for (double x : k.coords) h = h * 1000003u ^ std::hash<double>()(x);
    return h;
}

TableCost::TableCost(std::shared_ptr<const CalibrationTable> table, const hardware::AcceleratorSpec& acc, Load load)
    : table_(std::move(table)),
      acc_(acc),
      roofline_(make_roofline_cost(acc, load)),
      kernel_roofline_(make_roofline_cost(acc, Load::Kernel)),
      table_roofline_(make_roofline_cost(table_basis(acc), load)),
      clock_(load_clock(table_basis(acc), load)) {}

double TableCost::table_seconds(const CalibrationGroup& g, const OpDesc& op, int skip) const {
    return table_seconds(g, op, calibration_coords(op), skip);
}

double TableCost::correction(const CalibrationGroup& g, const std::vector<double>& c, int skip) const {
    // A serving run asks for the same shapes over and over (every iteration of one token count):
    // the interpolation is remembered per group and coordinates (not while leaving a point out).
    CorrectionKey key{&g, c};
    if (skip < 0) {
        const auto it = corrections_.find(key);
        if (it != corrections_.end()) return it->second;
    }
    // Inverse-distance weighting (power 2) of log ratios over the nearest measured points: the
    // kNeighbours smallest (squared distance, log ratio) pairs, kept sorted as they are found (the
    // set and order a partial sort of every pair would give, without allocating per op).
    std::array<std::pair<double, double>, kNeighbours> near;
    size_t k = 0;
    for (size_t idx = 0; idx < g.points.size(); ++idx) {
        if (static_cast<int>(idx) == skip) continue;
        const auto& pt = g.points[idx];
        double d = 0;
        for (size_t j = 0; j < c.size() && j < pt.coords.size(); ++j)
            d += (c[j] - pt.coords[j]) * (c[j] - pt.coords[j]);
        const std::pair<double, double> x{d, pt.log_ratio};
        if (k == kNeighbours && !(x < near[k - 1])) continue;
        size_t at = k < kNeighbours ? k++ : k - 1;
        for (; at > 0 && x < near[at - 1]; --at) near[at] = near[at - 1];
        near[at] = x;
    }
    double r = 0;
    if (k > 0 && near.front().first < 1e-18) {
        r = near.front().second;
    } else {
        double wsum = 0;
        for (size_t i = 0; i < k; ++i) {
            const double w = 1.0 / near[i].first;
            r += w * near[i].second;
            wsum += w;
        }
        r = wsum > 0 ? r / wsum : 0.0;
    }
    if (skip < 0) corrections_.emplace(std::move(key), r);
    return r;
}

double TableCost::table_seconds(const CalibrationGroup& g, const OpDesc& op, const std::vector<double>& c,
                                int skip) const {
    double t = parametric(g, op, acc_, *kernel_roofline_) * std::exp(correction(g, c, skip));
    // Sustained or serving load lowers the tensor clock, which slows a kernel only where its tensor
    // work bounds it: the table time scales by the roofline's loaded-to-kernel ratio of the time
    // without the launch (1 / clock for a compute-bound GEMM, 1 for a decode GEMM or a decode
    // attention bound by its memory reads). Memory-bound groups keep their time.
    if (g.kind != OpKind::MemoryBound && g.kind != OpKind::Optimizer && clock_ != 1.0) {
        const double launch = acc_.launch_overhead;  // in both roofline times, not clocked
        const double kernel = kernel_roofline_->seconds(op) - launch;
        if (kernel > 0) t *= (table_roofline_->seconds(op) - launch) / kernel;
    }
    // Attention tables are measured with the device's best kernel (tools/calibrate/attention.py);
    // a FlashAttention-2-class kernel runs at the catalog's fraction of it.
    const bool attention = op.kind == OpKind::AttentionFwd || op.kind == OpKind::AttentionBwd;
    if (attention && op.attn.kernel == AttentionKernel::Fa2) t /= acc_.calibration.attention_fa2_relative;
    return t;
}

const CalibrationGroup* TableCost::group_in_range(const OpDesc& op) const {
    return group_in_range(op, calibration_coords(op));
}

const CalibrationGroup* TableCost::group_in_range(const OpDesc& op, const std::vector<double>& c) const {
    const CalibrationGroup* g = find_group(*table_, op);
    if (!g) return nullptr;
    for (size_t j = 0; j < c.size() && j < g->lo.size(); ++j)
        if (c[j] < g->lo[j] - kRangeSlack || c[j] > g->hi[j] + kRangeSlack) return nullptr;
    return g;
}

bool TableCost::calibrated(const OpDesc& op) const {
    // DeepGEMM's kernels are priced by their own roofline class, not the table's GEMMs.
    if (op.kind == OpKind::Gemm && op.gemm_kernel == GemmKernel::DeepGemm) return false;
    if (op.kind == OpKind::Gemm && op.gemm_kernel == GemmKernel::WeightOnly)
        return group_in_range(library_gemm(op)) != nullptr;
    if (op.kind == OpKind::Gemm && op.dtype == Dtype::int8 && !find_group(*table_, op)) {
        OpDesc fp8 = op;
        fp8.dtype = Dtype::fp8;
        return group_in_range(fp8) != nullptr;
    }
    if (!ragged_attention(op)) return group_in_range(op) != nullptr;
    for (const OpDesc& one : attention_slices(op))
        if (!group_in_range(one)) return false;
    return true;
}

double TableCost::seconds(const OpDesc& op) const {
    if (ragged_attention(op)) {
        // One varlen kernel: the slices priced apart (decodes merged), less the launches the table
        // counted per part (never below its longest part).
        const std::vector<OpDesc> parts = attention_slices(op);
        double t = 0, longest = 0;
        for (const OpDesc& one : parts) {
            const double x = seconds(one);
            t += x;
            longest = std::max(longest, x);
        }
        return std::max(longest, t - static_cast<double>(parts.size() - 1) * acc_.launch_overhead);
    }
    // The tables measure the vendor library's GEMMs; DeepGEMM's are priced by their own class.
    if (op.kind == OpKind::Gemm && op.gemm_kernel == GemmKernel::DeepGemm) return roofline_->seconds(op);
    // A grouped GEMM: the table's dense GEMM of its rows, slowed as the roofline slows it (the
    // grouped-kernel curve divides the compute time only: a decode's expert GEMMs stay bound by
    // their weights' bytes).
    if (op.kind == OpKind::Gemm && op.gemm_kernel == GemmKernel::Grouped) {
        OpDesc dense = op;
        dense.gemm_kernel = GemmKernel::Library;
        return seconds(dense) * roofline_->seconds(op) / roofline_->seconds(dense);
    }
    // A weight-only GEMM (Marlin, Machete): the table's 16-bit GEMM of its shape, scaled as the
    // roofline scales it (its weights' fewer bytes where memory binds, the dequantization where
    // compute does).
    if (op.kind == OpKind::Gemm && op.gemm_kernel == GemmKernel::WeightOnly) {
        const OpDesc dense = library_gemm(op);
        return seconds(dense) * roofline_->seconds(op) / roofline_->seconds(dense);
    }
    // An int8 GEMM (W8A8 INT8) where the table measured fp8 ones and no int8: the fp8 GEMM of its
    // shape (same widths, CUTLASS's scaled GEMMs for both), scaled by the roofline's rates.
    if (op.kind == OpKind::Gemm && op.dtype == Dtype::int8 && !find_group(*table_, op)) {
        OpDesc fp8 = op;
        fp8.dtype = Dtype::fp8;
        if (find_group(*table_, fp8)) return seconds(fp8) * roofline_->seconds(op) / roofline_->seconds(fp8);
    }
    bool in_range = false;
    return plain_seconds(op, in_range);
}

bool TableCost::plain(const OpDesc& op) {
    return !ragged_attention(op) && !(op.kind == OpKind::Gemm && op.gemm_kernel != GemmKernel::Library);
}

double TableCost::plain_seconds(const OpDesc& op, bool& in_range) const {
    const std::vector<double> c = calibration_coords(op);
    const CalibrationGroup* g = group_in_range(op, c);
    in_range = g != nullptr;
    if (!g) return roofline_->seconds(op);
    // A linear fit can go negative inside the box its rows span where the rows are sparse (a small
    // GEMM far from every measured one): such an op is priced on the roofline, as outside the range.
    const double t = table_seconds(*g, op, c);
    if (t > 0) return t;
    in_range = false;
    return roofline_->seconds(op);
}

double TableCost::priced(const OpDesc& op, bool& in_range) const {
    if (plain(op)) return plain_seconds(op, in_range);  // one coordinate and group lookup for both
    in_range = calibrated(op);
    return seconds(op);
}

}  // namespace fathom::models
