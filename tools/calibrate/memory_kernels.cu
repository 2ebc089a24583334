// fathom_calibrate's memory-bound kernels (norms, softmax, SwiGLU, GELU, residual add, rotary) and
// the kernel launch overhead, timed over token x width sizes (calibrate.cu has the GEMMs and copies).
#include "measure.h"

#include <cuda_bf16.h>

#include <vector>

namespace fathom::calibrate {
namespace {

// ---------------------------------------------------------------- memory-bound kernels
// bf16 in and out, fp32 math, 16-byte accesses (8 values) as production fused kernels make them
// (Transformer Engine, Apex, PyTorch's vectorized norms): scalar 2-byte accesses reach only about
// half the HBM bandwidth on Hopper and would calibrate fathom to slower kernels than frameworks run.
// Row kernels (norms, softmax) take one block per row (token) and keep the row in registers.
constexpr int kVec = 8;      // bf16 values per 16-byte access
constexpr int kRowVecs = 4;  // vectors per thread in a row kernel (width <= 512 x 4 x 8 = 16384)

__device__ __forceinline__ void load8(const __nv_bfloat16* p, float (&f)[kVec]) {
    const uint4 u = *reinterpret_cast<const uint4*>(p);
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const float2 t = __bfloat1622float2(h[k]);
        f[2 * k] = t.x;
        f[2 * k + 1] = t.y;
    }
}
__device__ __forceinline__ void store8(__nv_bfloat16* p, const float (&f)[kVec]) {
    uint4 u;
    __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&u);
#pragma unroll
    for (int k = 0; k < 4; ++k) h[k] = __floats2bfloat162_rn(f[2 * k], f[2 * k + 1]);
    *reinterpret_cast<uint4*>(p) = u;
}

// Block-wide sum (op 0) or max (op 1) of one float per thread; every thread gets the result.
template <int Op>
__device__ float block_reduce(float v, float* scratch) {
    auto combine = [](float a, float b) { return Op == 0 ? a + b : fmaxf(a, b); };
    for (int o = 16; o > 0; o >>= 1) v = combine(v, __shfl_xor_sync(0xffffffff, v, o));
    __syncthreads();  // scratch may still be read by a previous reduction
    if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
    __syncthreads();
    const int warps = (blockDim.x + 31) / 32;
    v = threadIdx.x < warps ? scratch[threadIdx.x] : (Op == 0 ? 0.f : -1e30f);
    if (threadIdx.x < 32)
        for (int o = 16; o > 0; o >>= 1) v = combine(v, __shfl_xor_sync(0xffffffff, v, o));
    if (threadIdx.x == 0) scratch[0] = v;
    __syncthreads();
    return scratch[0];
}

// Loads this thread's vectors of row `row` (vector j = threadIdx.x + i * blockDim.x); returns how many.
__device__ int load_row(const __nv_bfloat16* x, int width, float (&v)[kRowVecs][kVec]) {
    const __nv_bfloat16* xr = x + static_cast<size_t>(blockIdx.x) * width;
    int n = 0;
    for (int j = threadIdx.x; j < width / kVec && n < kRowVecs; j += blockDim.x) load8(xr + j * kVec, v[n++]);
    return n;
}

// The sum over the whole row (all threads of the block) of f(value).
template <typename F>
__device__ float row_sum(const float (&v)[kRowVecs][kVec], int n, float* scratch, F f) {
    float s = 0;
    for (int i = 0; i < n; ++i)
#pragma unroll
        for (int k = 0; k < kVec; ++k) s += f(v[i][k]);
    return block_reduce<0>(s, scratch);
}

// Writes this thread's vectors of row `blockIdx.x` (as load_row read them), each value mapped by
// f(value, weight) with the row weight `w` (1 when null).
template <typename F>
__device__ void store_row(__nv_bfloat16* y, const __nv_bfloat16* w, int width, float (&v)[kRowVecs][kVec], int n, F f) {
    __nv_bfloat16* yr = y + static_cast<size_t>(blockIdx.x) * width;
    for (int i = 0; i < n; ++i) {
        const int j = threadIdx.x + i * blockDim.x;
        float g[kVec];
        if (w) {
            load8(w + j * kVec, g);
        } else {
#pragma unroll
            for (int k = 0; k < kVec; ++k) g[k] = 1.f;
        }
#pragma unroll
        for (int k = 0; k < kVec; ++k) v[i][k] = f(v[i][k], g[k]);
        store8(yr + j * kVec, v[i]);
    }
}

__global__ void rmsnorm_kernel(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int width) {
    __shared__ float scratch[32];
    float v[kRowVecs][kVec];
    const int n = load_row(x, width, v);
    const float r = rsqrtf(row_sum(v, n, scratch, [](float x) { return x * x; }) / width + 1e-6f);
    store_row(y, w, width, v, n, [r](float x, float g) { return x * r * g; });
}

__global__ void layernorm_kernel(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int width) {
    __shared__ float scratch[32];
    float v[kRowVecs][kVec];
    const int n = load_row(x, width, v);
    const float mean = row_sum(v, n, scratch, [](float x) { return x; }) / width;
    const float r = rsqrtf(row_sum(v, n, scratch, [mean](float x) { return (x - mean) * (x - mean); }) / width + 1e-5f);
    store_row(y, w, width, v, n, [mean, r](float x, float g) { return (x - mean) * r * g; });
}

__global__ void softmax_kernel(const __nv_bfloat16* x, __nv_bfloat16* y, int width) {
    __shared__ float scratch[32];
    float v[kRowVecs][kVec];
    const int n = load_row(x, width, v);
    float mx = -1e30f;
    for (int i = 0; i < n; ++i)
#pragma unroll
        for (int k = 0; k < kVec; ++k) mx = fmaxf(mx, v[i][k]);
    mx = block_reduce<1>(mx, scratch);
    float s = 0;
    for (int i = 0; i < n; ++i)
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
            v[i][k] = __expf(v[i][k] - mx);
            s += v[i][k];
        }
    const float inv = 1.f / block_reduce<0>(s, scratch);
    store_row(y, nullptr, width, v, n, [inv](float x, float) { return x * inv; });
}

// Threads per block of a row kernel: one 16-byte vector each, up to 512 (then kRowVecs per thread).
int row_block(long width) { return static_cast<int>(std::min<long>(512, std::max<long>(32, width / kVec))); }

__global__ void swiglu_kernel(const __nv_bfloat16* gate_up, __nv_bfloat16* y, size_t rows, int width) {
    const size_t per_row = width / kVec;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < rows * per_row;
         i += gridDim.x * static_cast<size_t>(blockDim.x)) {
        const size_t r = i / per_row, c = (i % per_row) * kVec;
        float g[kVec], u[kVec];
        load8(gate_up + r * 2 * width + c, g);
        load8(gate_up + r * 2 * width + width + c, u);
#pragma unroll
        for (int k = 0; k < kVec; ++k) g[k] = g[k] / (1.f + __expf(-g[k])) * u[k];
        store8(y + r * width + c, g);
    }
}

__global__ void gelu_kernel(const __nv_bfloat16* x, __nv_bfloat16* y, size_t n) {
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n / kVec;
         i += gridDim.x * static_cast<size_t>(blockDim.x)) {
        float v[kVec];
        load8(x + i * kVec, v);
#pragma unroll
        for (int k = 0; k < kVec; ++k)
            v[k] = 0.5f * v[k] * (1.f + tanhf(0.7978845608f * (v[k] + 0.044715f * v[k] * v[k] * v[k])));
        store8(y + i * kVec, v);
    }
}

__global__ void residual_kernel(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* y, size_t n) {
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n / kVec;
         i += gridDim.x * static_cast<size_t>(blockDim.x)) {
        float u[kVec], v[kVec];
        load8(a + i * kVec, u);
        load8(b + i * kVec, v);
#pragma unroll
        for (int k = 0; k < kVec; ++k) u[k] += v[k];
        store8(y + i * kVec, u);
    }
}

// Rotary embedding over [rows, heads * head_dim] with head_dim 128, rotating pairs (i, i + 64):
// each thread takes 8 consecutive i of one head and their partners 64 further on.
__global__ void rotary_kernel(const __nv_bfloat16* x, __nv_bfloat16* y, size_t rows, int width) {
    const size_t units = rows * width / (2 * kVec);
    const size_t per_row = width / (2 * kVec);
    for (size_t p = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; p < units;
         p += gridDim.x * static_cast<size_t>(blockDim.x)) {
        const size_t r = p / per_row, j = p % per_row;
        const size_t head = j / (64 / kVec), i0 = (j % (64 / kVec)) * kVec;
        const size_t base = r * width + head * 128 + i0;
        float x0[kVec], x1[kVec];
        load8(x + base, x0);
        load8(x + base + 64, x1);
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
            float sn, cs;
            __sincosf(static_cast<float>(r) * __powf(10000.f, -static_cast<float>(i0 + k) / 64.f), &sn, &cs);
            const float a = x0[k], b = x1[k];
            x0[k] = a * cs - b * sn;
            x1[k] = a * sn + b * cs;
        }
        store8(y + base, x0);
        store8(y + base + 64, x1);
    }
}

__global__ void empty_kernel() {}

}  // namespace

void measure_memory_kernels(cudaStream_t stream, int sms) {
    const std::vector<long> widths = {2048, 4096, 8192, 16384};
    const std::vector<long> token_counts = {256, 1024, 4096, 16384, 65536};
    const size_t max_elems = 65536ul * 16384 * 2;
    __nv_bfloat16 *x, *y, *w;
    CHECK_CUDA(cudaMalloc(&x, max_elems * 2));
    CHECK_CUDA(cudaMalloc(&y, max_elems * 2));
    CHECK_CUDA(cudaMalloc(&w, 16384 * 2));
    CHECK_CUDA(cudaMemset(x, 0, max_elems * 2));
    CHECK_CUDA(cudaMemset(w, 0, 16384 * 2));
    const int grid = sms * 8, block = 256;
    for (long width : widths) {
        for (long rows : token_counts) {
            const double n = static_cast<double>(rows) * width;
            if (n * 2 > static_cast<double>(max_elems)) continue;
            // m = rows (tokens), n = width; `bytes` is the ideal HBM traffic of the kernel.
            auto report = [&](const char* op, double bytes, const Timing& t) {
                row(op, "bf16", rows, width, 0, 0, 0, 0, 0, bytes, t, bytes / (t.median_us * 1e-6) / 1e9);
            };
            const int reps = reps_for(n * 4 / 2e6);
            const int rb = row_block(width);
            report("rmsnorm", n * 4, time_it(stream, reps, [&] {
                       rmsnorm_kernel<<<rows, rb, 0, stream>>>(x, w, y, static_cast<int>(width));
                   }));
            report("layernorm", n * 4, time_it(stream, reps, [&] {
                       layernorm_kernel<<<rows, rb, 0, stream>>>(x, w, y, static_cast<int>(width));
                   }));
            report("softmax", n * 4, time_it(stream, reps, [&] {
                       softmax_kernel<<<rows, rb, 0, stream>>>(x, y, static_cast<int>(width));
                   }));
            report("swiglu", n * 6, time_it(stream, reps, [&] {
                       swiglu_kernel<<<grid, block, 0, stream>>>(x, y, rows, static_cast<int>(width));
                   }));
            report("gelu", n * 4, time_it(stream, reps, [&] {
                       gelu_kernel<<<grid, block, 0, stream>>>(x, y, static_cast<size_t>(n));
                   }));
            report("residual_add", n * 6, time_it(stream, reps, [&] {
                       residual_kernel<<<grid, block, 0, stream>>>(x, x + static_cast<size_t>(n), y,
                                                                   static_cast<size_t>(n));
                   }));
            report("rotary", n * 4, time_it(stream, reps, [&] {
                       rotary_kernel<<<grid, block, 0, stream>>>(x, y, rows, static_cast<int>(width));
                   }));
            CHECK_CUDA(cudaGetLastError());
        }
    }
    // Launch overhead: back-to-back empty kernels.
    const Timing t = time_it(stream, 1000, [&] { empty_kernel<<<1, 32, 0, stream>>>(); });
    row("launch", "bf16", 0, 0, 0, 0, 0, 0, 0, 0, t, 0);
    cudaFree(x);
    cudaFree(y);
    cudaFree(w);
}

}  // namespace fathom::calibrate
