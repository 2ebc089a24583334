#pragma once
// How far to trust a prediction: 90% prediction bands from fathom's own residuals on the published
// measurements (shared/reference/measured.yaml), per regime (training step by model family; serving
// throughput, TTFT, TPOT, end-to-end latency; microbenchmarks by metric).
//
// Method: split-conformal on the absolute log ratio |log(predicted / measured)| of the regime's
// cases. With n cases and level 0.9, the band's half-width w is the ceil((n + 1) 0.9)-th smallest
// absolute log ratio, and a new prediction v gets [v e^-w, v e^w]. If the cases and a new one are
// exchangeable, the band covers the new measurement with probability >= 0.9 whatever the error
// distribution; it needs no model of the errors, only enough cases (n >= 9 for a finite band at
// 0.9), which is why the regimes are few and broad. The residuals are in-sample for the constants
// fitted on the same file (one sustained clock per device, one serving clock), so the bands lean
// narrow; a prediction on an accelerator none of the regime's cases ran on, or whose device model
// is an estimate (AcceleratorSpec::device_model), or whose plan uses a feature none of them used,
// gets the band widened (kUnvalidatedWidening, an estimate) and says so.
#include "hardware/spec.h"
#include "models/llm/model_spec.h"
#include "workloads/serving/serving_plan.h"
#include "workloads/training/training_plan.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fathom::plans {

// The regime of a training step prediction: "training/dense" or "training/moe".
std::string training_regime(const models::ModelSpec& model);
// The regime of a serving metric (a measured-format metric or a `run --json` key, its percentile
// suffix ignored): "serving/throughput" (tokens or requests per second), "serving/ttft",
// "serving/tpot" (per-request TPOT and inter-token latency), "serving/e2e"; empty for others.
std::string serving_regime(const std::string& metric);

// The features of a training plan that the validation cases may or may not have used: its
// pipeline schedule, recomputation, ZeRO stage and GEMM dtype, and each parallelism it uses
// ("cp", "ep", "pp", "tp"), LoRA and packed documents.
std::vector<std::string> training_features(const workloads::TrainingPlan& plan);
// The same for a serving plan: its batching policy, weight and KV dtypes, disaggregation, prefix
// caching and each parallelism its pools use ("tp", "pp", "ep").
std::vector<std::string> serving_features(const workloads::serving::ServingPlan& plan);

// One regime's band: its cases, the half-width in log space, the accelerators its cases ran on and
// the plan features they used (empty: not recorded).
struct ErrorBand {
    int cases = 0;
    double half_width = 0;  // w: the band is [v e^-w, v e^w]; infinite with too few cases
    std::set<std::string> accelerators;
    std::set<std::string> features;
};

// A sample of the fit: the regime, the accelerator, the plan's features, and the absolute log ratio
// of one prediction.
struct Residual {
    std::string regime;
    std::string accelerator;
    double abs_log_ratio = 0;
    std::vector<std::string> features;
};

inline constexpr double kIntervalLevel = 0.9;
// The band's log half-width is multiplied by this for a prediction outside what the regime's cases
// validated (accelerator, estimated device model, plan features): an estimate (no residuals say how
// far such predictions stray).
inline constexpr double kUnvalidatedWidening = 1.5;

struct IntervalTable {
    double level = kIntervalLevel;
    std::string source;  // what the residuals came from (file, command)
    std::map<std::string, ErrorBand> bands;
    bool empty() const { return bands.empty(); }
    const ErrorBand* band(const std::string& regime) const;
};

// The split-conformal half-width of residuals (their absolute log ratios) at `level`: the
// ceil((n + 1) level)-th smallest; infinity when that exceeds n.
double conformal_half_width(std::vector<double> abs_log_ratios, double level = kIntervalLevel);
// The table of the residuals, one band per regime.
IntervalTable fit_intervals(const std::vector<Residual>& residuals, const std::string& source,
                            double level = kIntervalLevel);

// A value's band: low and high, the regime and its cases, and whether it was widened (and why).
struct Interval {
    double low = 0, high = 0;
    std::string regime;
    int cases = 0;
    bool widened = false;
    std::string note;  // "from 24 training/dense cases", with the widening said
    bool finite() const;
};
// The interval of `value` in `regime` on `accelerator` (whose device model is an estimate or not)
// for a plan with `features` (a feature none of the regime's cases used widens it, once, as an
// unvalidated accelerator does); none when the table has no such regime.
std::optional<Interval> interval_of(const IntervalTable& table, const std::string& regime, double value,
                                    const std::string& accelerator, bool estimated_device = false,
                                    const std::vector<std::string>& features = {});
// The same on a catalog accelerator (its id, and whether its device_model is "estimated").
std::optional<Interval> interval_of(const IntervalTable& table, const std::string& regime, double value,
                                    const hardware::AcceleratorSpec& accelerator,
                                    const std::vector<std::string>& features = {});

// Whether the first two plans of a ranking are told apart: their values' relative difference
// against the band's relative half-width (e^w - 1, widened as interval_of widens it). Both plans'
// errors share most of their causes (one model on one cluster), so a difference inside the band may
// still be real; one outside it is one fathom's validated accuracy resolves.
struct RankGap {
    double difference = 0;  // |first / second - 1|
    double band = 0;        // e^w - 1
    bool inside = false;
    std::string text;  // "rank 1 and 2 differ by 1.2%, inside the 90% interval (+-8.3%, from 25 ... cases)"
};
std::optional<RankGap> rank_gap(const IntervalTable& table, const std::string& regime, double first, double second,
                                const hardware::AcceleratorSpec& accelerator);

}  // namespace fathom::plans
