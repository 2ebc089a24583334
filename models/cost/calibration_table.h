#pragma once
// Calibrated per-op cost tables: measurements of real kernels (from tools/calibrate), fitted per
// (op kind, op name, dtype) group into a parametric curve plus measured corrections.
//
// Parametric part, least squares (Eigen) over the group's measurements:
//   GEMM:          t = a x1 + b x2 + d x3 + c,  x1 = FLOPs / (peak q), x2 = x1 / K, x3 = bytes / HBM bw
//                  (q: tile quantization as in the roofline; a = 1/efficiency, b = k_half/efficiency,
//                  d: memory-bound share for skinny shapes, c: launch overhead)
//   attention:     t = a x1 + b x2 + c,  x1 = FLOPs / bf16 peak, x2 = x1 / kv_len
//   memory-bound:  t = a x1 + c,         x1 = bytes / HBM bw
// Correction: each measured point keeps ratio r = measured / parametric; a query inside the
// group's measured range (per coordinate: log m, log n, log k / log(batch heads), log q, log kv /
// log bytes) takes the inverse-distance-weighted mean of log r of its nearest points in log space,
// so the table reproduces its measurements and interpolates geometrically between them. Outside
// the range the caller falls back to the roofline and flags the prediction.
#include "models/cost/cost_model.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace fathom::models {

struct Measurement {
    OpDesc op;           // kind, name, dtype, shape, flops, bytes
    double seconds = 0;  // median kernel time
};

struct CalibrationPoint {
    std::vector<double> coords;  // log-space shape coordinates
    double log_ratio = 0;        // log(measured / parametric)
};

struct CalibrationGroup {
    OpKind kind = OpKind::Gemm;
    std::string op;  // measured kernel for memory-bound groups ("rmsnorm", "memcpy_h2d"); kind name otherwise
    Dtype dtype = Dtype::bf16;
    std::vector<double> coef;  // parametric coefficients, order as in the file comment (c last);
                               // empty: the roofline is the parametric part
    std::vector<CalibrationPoint> points;
    std::vector<double> lo, hi;  // measured range per coordinate
};

struct CalibrationTable {
    std::string device;
    std::string source;  // provenance (measurement file, metadata)
    std::vector<CalibrationGroup> groups;
};

// Groups: GEMMs by dtype, attention by direction and dtype, memory-bound ops (and the optimizer) by
// the measured kernel they run as (OpDesc::kernel). A ragged attention op is priced slice by slice.
//
// Fits a table. A group with fewer measurements than coefficients + 1 (or a degenerate fit) keeps
// the roofline as its parametric part and only the measured corrections.
CalibrationTable fit_calibration(const std::vector<Measurement>& data, const hardware::AcceleratorSpec& acc);

// The op classes a table has no group of, among GEMM, attention forward, attention backward and
// memory-bound ("attention backward, memory-bound"; empty when it has all four).
std::string missing_op_classes(const CalibrationTable& t);

// The group an op belongs to, and its coordinates; null if no group.
const CalibrationGroup* find_group(const CalibrationTable& t, const OpDesc& op);
std::vector<double> calibration_coords(const OpDesc& op);

// Cost model that uses the table inside each group's measured range and the roofline outside it.
// Under load, table-priced ops slow by the device's table load factors (table_sustained_clock,
// table_serving_clock), the roofline's by its own (sustained_clock, serving_clock).
class TableCost final : public CostModel {
public:
    // Shares `table` (an evaluation context's tables are never copied per call).
    TableCost(std::shared_ptr<const CalibrationTable> table, const hardware::AcceleratorSpec& acc, Load load);
    TableCost(CalibrationTable table, const hardware::AcceleratorSpec& acc, Load load)
        : TableCost(std::make_shared<const CalibrationTable>(std::move(table)), acc, load) {}
    double seconds(const OpDesc& op) const override;
    bool calibrated(const OpDesc& op) const override;
    double priced(const OpDesc& op, bool& in_range) const override;
    // The table's prediction for an op whose group exists, ignoring the range. `skip` >= 0 leaves
    // that measured point out of the interpolation (leave-one-out validation).
    double table_seconds(const CalibrationGroup& g, const OpDesc& op, int skip = -1) const;

private:
    // An op the table prices as one kernel of its own group (not a ragged attention batch, a
    // DeepGEMM or a grouped GEMM): the table inside the range, the roofline outside it.
    double plain_seconds(const OpDesc& op, bool& in_range) const;
    static bool plain(const OpDesc& op);
    // The op's group if the op lies inside its measured range, else null (`coords`: the op's).
    const CalibrationGroup* group_in_range(const OpDesc& op) const;
    const CalibrationGroup* group_in_range(const OpDesc& op, const std::vector<double>& coords) const;
    double table_seconds(const CalibrationGroup& g, const OpDesc& op, const std::vector<double>& coords,
                         int skip = -1) const;

    // The measured correction (log ratio) at `coords` in `g`: inverse-distance weighting of its
    // nearest points, leaving point `skip` out (>= 0).
    double correction(const CalibrationGroup& g, const std::vector<double>& coords, int skip) const;

    struct CorrectionKey {
        const CalibrationGroup* group;
        std::vector<double> coords;
        bool operator==(const CorrectionKey& o) const { return group == o.group && coords == o.coords; }
    };
    struct CorrectionHash {
        size_t operator()(const CorrectionKey& k) const;
    };
    std::shared_ptr<const CalibrationTable> table_;
    // Corrections already interpolated (a TableCost serves one evaluation, on one thread).
    mutable std::unordered_map<CorrectionKey, double, CorrectionHash> corrections_;

    hardware::AcceleratorSpec acc_;
    std::unique_ptr<CostModel> roofline_;         // outside the range, at the requested load
    std::unique_ptr<CostModel> kernel_roofline_;  // parametric part of groups too small to fit
    std::unique_ptr<CostModel> table_roofline_;   // the roofline at the table's load factor
    double clock_;
};

}  // namespace fathom::models
