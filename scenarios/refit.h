#pragma once
// `fathom calibrate refit MEASURED.yaml --device ID`: a device's constants refitted to measurements
// (a measured-format file: the cases `fathom import` writes from a user's own benchmarks and logs,
// or any other), so that users need not re-profile by hand. One constant per kind of measurement,
// each a property of the device under a load, never of a case:
//   training cases      the accelerator's sustained clock (table_sustained_clock where a measured
//                       op table prices it, else sustained_clock)
//   serving cases       its serving clock (table_serving_clock, else serving_clock)
//   collective cases    one node: the scale-up fabric's busbw_efficiency or nvls_busbw_efficiency
//   (nccl-tests)        (whichever the cases' algorithm uses); several: the NIC's efficiency
// Each constant is searched as a factor of its catalog value (0.5 to 1.5, a 0.02 grid refined to
// 0.004) minimizing the median |log(predicted / measured)| of its cases' metrics (headline and
// other_metrics entries), the factor nearest 1 on a plateau (within 0.05%), with leave-one-out
// errors (each case left out with its entries). A constant none of its cases' predictions move is reported
// insensitive and left alone.
#include "plans/context.h"

#include <functional>
#include <string>
#include <vector>

namespace fathom::scenarios {

struct RefitConstant {
    std::string name;                // "sustained_clock", "busbw_efficiency", ...
    std::string load;                // "training", "serving", "collectives (one node)", "collectives (several nodes)"
    std::string file;                // its catalog file, relative to the data directory
    std::vector<std::string> cases;  // the entries it was fitted on ("id", "id#n": other_metrics)
    double before = 0, after = 0;
    double error_before = 0, error_after = 0;  // median |predicted / measured - 1| over the cases
    double leave_one_out = -1;                 // median of each case's error refitted without it; -1: one case
    bool sensitive = true;                     // some prediction moved with it
    bool at_bound = false;                     // the best factor is the search's 0.5 or 1.5
};

struct RefitResult {
    std::string device;
    std::string measured;                  // the file
    std::vector<RefitConstant> constants;  // those with cases, in the order above
    std::vector<std::string> not_used;     // cases on the device no constant covers, or that did not run ("id: why")
};

// Throws sim::InputError when no case of the file ran on `device`.
RefitResult refit_device(const std::string& measured_path, const std::string& device,
                         const plans::EvaluationContext& context,
                         const std::function<void(int64_t, int64_t)>& progress = {});

// Writes, under `out_dir`, a copy of each refitted constant's catalog file (the same relative path)
// with its value and a source naming the measurements; copied over a data directory (or the
// source tree), fathom then uses them. Returns the files written. Insensitive constants and those
// whose fit did not lower the error are not written.
std::vector<std::string> write_refit(const RefitResult& r, const std::string& out_dir);

}  // namespace fathom::scenarios
