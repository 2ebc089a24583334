#pragma once
// What the measuring programs of fathom_calibrate share (calibrate.cu, memory_kernels.cu): error
// checks, the timing loop and the CSV row writer. CUDA toolkit only.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <functional>

#define CHECK_CUDA(x)                                                                                       \
    do {                                                                                                    \
        cudaError_t err_ = (x);                                                                             \
        if (err_ != cudaSuccess) {                                                                          \
            std::fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(err_), __FILE__, __LINE__); \
            std::exit(1);                                                                                   \
        }                                                                                                   \
    } while (0)
#define CHECK_LT(x)                                                                                          \
    do {                                                                                                     \
        cublasStatus_t st_ = (x);                                                                            \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                                  \
            std::fprintf(stderr, "cuBLASLt error %d at %s:%d\n", static_cast<int>(st_), __FILE__, __LINE__); \
            std::exit(1);                                                                                    \
        }                                                                                                    \
    } while (0)

namespace fathom::calibrate {

constexpr const char* kToolVersion = "fathom_calibrate 0.3";
constexpr int kWarmup = 3;
constexpr int kTrials = 7;

struct Timing {
    double median_us, p10_us, p90_us;
};

// Times `launch` (which enqueues one kernel or copy on `stream`): per-launch time of each trial.
Timing time_it(cudaStream_t stream, int reps, const std::function<void()>& launch);
// Launches per trial for a kernel expected to take `expected_us`: about 20 ms a trial.
int reps_for(double expected_us);
// One row of the long-format CSV (calibrate.cu writes the file).
void row(const char* op, const char* dtype, long m, long n, long k, long batch, long heads, long seq, long width,
         double bytes, const Timing& t, double achieved);
// The memory-bound kernels (memory_kernels.cu): norms, softmax, activations, residual, rotary, and
// the launch overhead.
void measure_memory_kernels(cudaStream_t stream, int sms);

}  // namespace fathom::calibrate
