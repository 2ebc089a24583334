// fathom_calibrate: measures, on the GPU it runs on, the kernels fathom's cost models price, and
// writes them as fathom's long-format calibration CSV plus a metadata JSON:
//   - GEMMs through cuBLASLt in bf16 and fp8 (e4m3, TN layout as Hopper fp8 requires), bf16 output,
//     over a grid of (M, N, K) covering the shapes of the catalog models under common TP degrees,
//     skinny decode shapes included;
//   - memory-bound kernels written here: RMSNorm, LayerNorm, SwiGLU, GELU, rotary, softmax,
//     residual add, over token x width sizes;
//   - copies device-to-device, host-to-device and device-to-host (pinned) by size;
//   - kernel launch overhead (back-to-back empty kernels).
// Attention is measured by attention.py beside this file (PyTorch SDPA, flash backend).
// Timing: CUDA events around `reps` launches after `warmup` launches, repeated `trials` times; the
// CSV keeps the median per-launch time and the 10th/90th percentiles. GEMM operands hold random
// values (zeros draw less power and run faster than real data), and the weight operand rotates over
// copies spanning more than the L2 cache, so skinny decode GEMMs read their weights from HBM as
// they do in a model whose layers each have their own weights.
//
// Dependencies: the CUDA toolkit only (runtime, cuBLASLt), so it builds on a bare GPU machine:
//   cmake -S tools/calibrate -B build-cal && cmake --build build-cal && build-cal/fathom_calibrate OUT_DIR
#include "measure.h"

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <ctime>
#include <string>
#include <vector>

namespace fathom::calibrate {

Timing time_it(cudaStream_t stream, int reps, const std::function<void()>& launch) {
    cudaEvent_t a, b;
    CHECK_CUDA(cudaEventCreate(&a));
    CHECK_CUDA(cudaEventCreate(&b));
    for (int i = 0; i < kWarmup; ++i) launch();
    std::vector<double> us;
    for (int t = 0; t < kTrials; ++t) {
        CHECK_CUDA(cudaEventRecord(a, stream));
        for (int i = 0; i < reps; ++i) launch();
        CHECK_CUDA(cudaEventRecord(b, stream));
        CHECK_CUDA(cudaEventSynchronize(b));
        float ms = 0;
        CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
        us.push_back(1000.0 * ms / reps);
    }
    CHECK_CUDA(cudaEventDestroy(a));
    CHECK_CUDA(cudaEventDestroy(b));
    std::sort(us.begin(), us.end());
    auto q = [&](double f) { return us[static_cast<size_t>(f * (us.size() - 1) + 0.5)]; };
    return {q(0.5), q(0.1), q(0.9)};
}

int reps_for(double expected_us) {
    return std::max(3, std::min(200, static_cast<int>(20000.0 / std::max(expected_us, 1.0))));
}

namespace {

FILE* g_csv = nullptr;

}  // namespace

void row(const char* op, const char* dtype, long m, long n, long k, long batch, long heads, long seq, long width,
         double bytes, const Timing& t, double achieved) {
    auto f = [](long v) { return v > 0 ? std::to_string(v) : std::string(); };
    // op,dtype,m,n,k,batch,heads,kv_heads,seq_len,kv_len,head_dim,causal,bytes,time_us,time_p10_us,time_p90_us,achieved,source
    std::fprintf(g_csv, "%s,%s,%s,%s,%s,%s,%s,,%s,,%s,,%.0f,%.4f,%.4f,%.4f,%.3f,%s\n", op, dtype, f(m).c_str(),
                 f(n).c_str(), f(k).c_str(), f(batch).c_str(), f(heads).c_str(), f(seq).c_str(), f(width).c_str(),
                 bytes, t.median_us, t.p10_us, t.p90_us, achieved, kToolVersion);
    std::fflush(g_csv);
}

namespace {

// ---------------------------------------------------------------- GEMM (cuBLASLt)
struct GemmShape {
    long m, n, k;
};

std::vector<GemmShape> gemm_grid() {
    // (N, K) pairs: QKV, attention projection, MLP up and down of Llama 3 8B/70B/405B, GPT-3 175B
    // and Nemotron-4 340B at TP 1, 4 and 8 (rounded to multiples of 16 for fp8); M = tokens.
    const std::vector<std::pair<long, long>> nk = {
        {6144, 4096},
        {4096, 4096},
        {28672, 4096},
        {4096, 14336},
        {1280, 8192},
        {8192, 1024},
        {7168, 8192},
        {8192, 3584},
        {2560, 16384},
        {16384, 2048},
        {13312, 16384},
        {16384, 6656},
        {9216, 12288},
        {12288, 3072},
        {12288, 12288},
        {4608, 12288},
        {12288, 1536},
        {6144, 12288},
        {12288, 6144},
        {2688, 18432},
        {18432, 2304},
        {9216, 18432},
        {18432, 9216},
        {16032, 4096},
        {16032, 8192},
        // Llama 3 70B at TP 1 (QKV, projection, fused gate-up, down): the whole layers layers.py times
        {10240, 8192},
        {8192, 8192},
        {57344, 8192},
        {8192, 28672}};
    const std::vector<long> ms = {1, 8, 32, 128, 512, 1024, 2048, 4096, 8192, 16384};
    std::vector<GemmShape> out;
    for (const auto& [n, k] : nk)
        for (long m : ms) out.push_back({m, n, k});
    return out;
}

// Uniform values in [-1, 1) from a counter hash, written as bf16 or fp8 e4m3 (never NaN or Inf).
__device__ float hash_uniform(size_t i) {
    unsigned long long z = (i + 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 31)) * 0x94D049BB133111EBull;
    z ^= z >> 29;
    return static_cast<float>(z & 0xFFFFFF) / 8388608.0f - 1.0f;
}
__global__ void fill_bf16(__nv_bfloat16* p, size_t n, size_t seed) {
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x)
        p[i] = __float2bfloat16(hash_uniform(i + seed));
}
__global__ void fill_fp8(__nv_fp8_e4m3* p, size_t n, size_t seed) {
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x)
        p[i] = __nv_fp8_e4m3(hash_uniform(i + seed));
}
void fill_random(void* p, size_t elems, bool fp8, size_t seed) {
    if (fp8) fill_fp8<<<1024, 256>>>(static_cast<__nv_fp8_e4m3*>(p), elems, seed);
    else fill_bf16<<<1024, 256>>>(static_cast<__nv_bfloat16*>(p), elems, seed);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
}

void measure_gemms(cudaStream_t stream) {
    cublasLtHandle_t lt;
    CHECK_LT(cublasLtCreate(&lt));
    const size_t workspace_bytes = 32u << 20;
    void* workspace;
    CHECK_CUDA(cudaMalloc(&workspace, workspace_bytes));
    long max_elems_a = 0, max_elems_b = 0, max_elems_c = 0;
    const auto grid = gemm_grid();
    for (const auto& s : grid) {
        max_elems_a = std::max(max_elems_a, s.m * s.k);
        max_elems_b = std::max(max_elems_b, s.k * s.n);
        max_elems_c = std::max(max_elems_c, s.m * s.n);
    }
    // The weight operand B rotates over copies in a pool of at least 4x the L2 cache (50 MB on
    // H100, 60 MB on H200): each launch reads a copy the previous ones evicted.
    int l2_bytes = 0;
    CHECK_CUDA(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, 0));
    const size_t pool_b = std::max<size_t>(static_cast<size_t>(max_elems_b) * 2, 4ul * static_cast<size_t>(l2_bytes));
    void *A, *B, *C;
    CHECK_CUDA(cudaMalloc(&A, max_elems_a * 2));
    CHECK_CUDA(cudaMalloc(&B, pool_b));
    CHECK_CUDA(cudaMalloc(&C, max_elems_c * 2));
    for (int fp8 = 0; fp8 <= 1; ++fp8) {
        const cudaDataType_t in_type = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
        const char* dtype = fp8 ? "fp8" : "bf16";
        const size_t elem = fp8 ? 1 : 2;
        fill_random(A, max_elems_a * 2 / elem, fp8 != 0, 1);
        fill_random(B, pool_b / elem, fp8 != 0, 1ull << 40);
        for (const auto& s : grid) {
            if (fp8 && (s.m % 16 != 0 || s.n % 16 != 0 || s.k % 16 != 0)) continue;  // fp8 needs 16-aligned dims
            cublasLtMatmulDesc_t desc;
            CHECK_LT(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
            const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
            CHECK_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
            CHECK_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
            // Column-major: D[M,N] = A^T B with A stored K x M, B stored K x N (the "TN" layout).
            cublasLtMatrixLayout_t la, lb, lc;
            CHECK_LT(cublasLtMatrixLayoutCreate(&la, in_type, s.k, s.m, s.k));
            CHECK_LT(cublasLtMatrixLayoutCreate(&lb, in_type, s.k, s.n, s.k));
            CHECK_LT(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, s.m, s.n, s.m));
            cublasLtMatmulPreference_t pref;
            CHECK_LT(cublasLtMatmulPreferenceCreate(&pref));
            CHECK_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                          &workspace_bytes, sizeof workspace_bytes));
            cublasLtMatmulHeuristicResult_t heur;
            int found = 0;
            const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1, &heur, &found);
            if (hs == CUBLAS_STATUS_SUCCESS && found > 0) {
                const float alpha = 1.0f, beta = 0.0f;
                const double flops = 2.0 * s.m * s.n * s.k;
                const int reps = reps_for(flops / 5e8);
                const size_t b_bytes = static_cast<size_t>(s.k) * static_cast<size_t>(s.n) * elem;
                const size_t b_stride = (b_bytes + 255) / 256 * 256;
                const size_t copies = std::max<size_t>(1, pool_b / b_stride);
                size_t next = 0;
                const Timing t = time_it(stream, reps, [&] {
                    const void* b = static_cast<const char*>(B) + (next++ % copies) * b_stride;
                    CHECK_LT(cublasLtMatmul(lt, desc, &alpha, A, la, b, lb, &beta, C, lc, C, lc, &heur.algo, workspace,
                                            workspace_bytes, stream));
                });
                row("gemm", dtype, s.m, s.n, s.k, 1, 0, 0, 0, 0, t, flops / (t.median_us * 1e-6) / 1e12);
            } else {
                std::fprintf(stderr, "no cuBLASLt algorithm for %s %ldx%ldx%ld\n", dtype, s.m, s.n, s.k);
            }
            cublasLtMatmulPreferenceDestroy(pref);
            cublasLtMatrixLayoutDestroy(la);
            cublasLtMatrixLayoutDestroy(lb);
            cublasLtMatrixLayoutDestroy(lc);
            cublasLtMatmulDescDestroy(desc);
        }
    }
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(workspace);
    cublasLtDestroy(lt);
}

void measure_copies(cudaStream_t stream) {
    const size_t max_bytes = 1ul << 30;
    void *d0, *d1, *h;
    CHECK_CUDA(cudaMalloc(&d0, max_bytes));
    CHECK_CUDA(cudaMalloc(&d1, max_bytes));
    CHECK_CUDA(cudaMallocHost(&h, max_bytes));
    for (size_t bytes = 1ul << 20; bytes <= max_bytes; bytes <<= 2) {
        const int reps = reps_for(static_cast<double>(bytes) / 2e4);
        struct {
            const char* op;
            void* dst;
            const void* src;
            cudaMemcpyKind kind;
            double traffic;  // bytes moved through the bottleneck: D2D reads and writes HBM
        } copies[] = {{"memcpy_d2d", d1, d0, cudaMemcpyDeviceToDevice, 2.0 * bytes},
                      {"memcpy_h2d", d0, h, cudaMemcpyHostToDevice, static_cast<double>(bytes)},
                      {"memcpy_d2h", h, d0, cudaMemcpyDeviceToHost, static_cast<double>(bytes)}};
        for (const auto& c : copies) {
            const Timing t =
                time_it(stream, reps, [&] { CHECK_CUDA(cudaMemcpyAsync(c.dst, c.src, bytes, c.kind, stream)); });
            row(c.op, "bf16", 0, 0, 0, 0, 0, 0, 0, c.traffic, t,
                static_cast<double>(bytes) / (t.median_us * 1e-6) / 1e9);
        }
    }
    cudaFree(d0);
    cudaFree(d1);
    cudaFreeHost(h);
}

void write_metadata(const std::string& path, const cudaDeviceProp& p, int driver, int runtime) {
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) {
        std::perror(path.c_str());
        std::exit(1);
    }
    int clock_khz = 0, mem_clock_khz = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
    cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, 0);
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    std::fprintf(
        f,
        "{\n  \"gpu\": \"%s\",\n  \"sm_count\": %d,\n  \"compute_capability\": \"%d.%d\",\n"
        "  \"sm_clock_mhz\": %d,\n  \"memory_clock_mhz\": %d,\n  \"memory_bytes\": %zu,\n"
        "  \"driver_version\": %d,\n  \"cuda_runtime_version\": %d,\n  \"date\": \"%s\",\n"
        "  \"tool\": \"%s\",\n  \"timing\": \"CUDA events, %d warm-up launches, %d trials, median per launch\"\n}\n",
        p.name, p.multiProcessorCount, p.major, p.minor, clock_khz / 1000, mem_clock_khz / 1000, p.totalGlobalMem,
        driver, runtime, date, kToolVersion, kWarmup, kTrials);
    std::fclose(f);
}

}  // namespace
}  // namespace fathom::calibrate

int main(int argc, char** argv) {
    using namespace fathom::calibrate;
    const std::string part = argc == 3 ? argv[2] : "all";
    if (argc < 2 || argc > 3 || (part != "all" && part != "gemm" && part != "memory" && part != "copies")) {
        std::fprintf(stderr,
                     "usage: %s OUT_DIR [all|gemm|memory|copies]   (writes OUT_DIR/measurements.csv and "
                     "OUT_DIR/metadata.json)\n",
                     argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    int driver = 0, runtime = 0;
    CHECK_CUDA(cudaDriverGetVersion(&driver));
    CHECK_CUDA(cudaRuntimeGetVersion(&runtime));
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    write_metadata(dir + "/metadata.json", prop, driver, runtime);
    g_csv = std::fopen((dir + "/measurements.csv").c_str(), "w");
    if (!g_csv) {
        std::perror("measurements.csv");
        return 1;
    }
    std::fprintf(g_csv,
                 "op,dtype,m,n,k,batch,heads,kv_heads,seq_len,kv_len,head_dim,causal,bytes,time_us,time_p10_us,time_"
                 "p90_us,achieved,source\n");
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));
    if (part == "all" || part == "gemm") measure_gemms(stream);
    if (part == "all" || part == "memory") measure_memory_kernels(stream, prop.multiProcessorCount);
    if (part == "all" || part == "copies") measure_copies(stream);
    CHECK_CUDA(cudaStreamDestroy(stream));
    std::fclose(g_csv);
    std::printf("wrote %s/measurements.csv and %s/metadata.json\n", dir.c_str(), dir.c_str());
    return 0;
}
