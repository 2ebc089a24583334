#pragma once
// Files of calibration mode:
//  - measurements CSV (long format, written by tools/calibrate): one row per measured kernel,
//    columns op, dtype, m, n, k, batch, heads, kv_heads, seq_len, kv_len, head_dim, causal, bytes,
//    time_us, time_p10_us, time_p90_us, achieved (TFLOP/s for GEMM/attention, GB/s otherwise);
//    unused shape fields are empty. `op` is gemm, attention_fwd, attention_bwd, or a memory-bound
//    kernel name (rmsnorm, layernorm, swiglu, gelu, rotary, softmax, residual_add, memcpy_d2d,
//    memcpy_h2d, memcpy_d2h); `launch` rows (empty-kernel time) are reported, not fitted.
//  - calibration table YAML (written by `fathom calibrate fit`), referenced from an accelerator's
//    catalog entry by `calibration_table: <path relative to the data dir>`.
#include "models/cost/calibration_table.h"

#include <initializer_list>
#include <istream>
#include <map>
#include <string>
#include <vector>

namespace fathom::scenarios {

struct MeasurementFile {
    std::vector<models::Measurement> rows;
    std::vector<double> launch_us;  // `launch` rows
};

MeasurementFile read_measurements_csv(const std::string& path);
// One CSV line's fields (RFC 4180: commas inside double quotes, "" for a literal quote).
std::vector<std::string> split_csv(const std::string& line);
// A CSV's header read from `in` (a byte order mark dropped): each column's index by name.
// InputError on line 1 of `path` when the file is empty ("empty <what>") or lacks a `required`
// column.
std::map<std::string, size_t> read_csv_header(std::istream& in, const std::string& path, const std::string& what,
                                              std::initializer_list<const char*> required);
void write_calibration_table(const models::CalibrationTable& t, const std::string& path);
models::CalibrationTable read_calibration_table(const std::string& path);

}  // namespace fathom::scenarios
