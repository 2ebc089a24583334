// A plain C shared library for the campaign's Python scripts (loaded with ctypes, so no PyTorch
// extension build): Marlin's W4A16 GEMM (third_party/marlin at the top level, IST-DASLab/marlin 2f6d7c1, Apache 2.0)
// and the two ways serving engines move KV-cache blocks between host and GPU memory:
//   swap_blocks: one cudaMemcpyAsync per block, as vLLM's ops.swap_blocks (csrc/cache_kernels.cu)
//                that its CPU offloading connector calls per layer;
//   uva_gather:  SMs read pinned host memory directly (unified addressing) and write the blocks,
//                as LMCache's multi-layer transfer kernels and SGLang's HiCache IO kernels do.
// Build: nvcc -O3 --expt-relaxed-constexpr -shared -Xcompiler -fPIC -gencode=arch=compute_90,code=sm_90 \
//          -o libcalib_ext.so calib_ext.cu
#include "../../third_party/marlin/marlin_cuda_kernel.cu"

#include <cstdint>

extern "C" {

// C[m,n] = A[m,k] (fp16) x B (int4, Marlin's packed layout) with fp16 scales s[k/groupsize, n].
// Returns Marlin's error code (0: ran).
int marlin_mul(const void* a, const void* b, void* c, void* s, int m, int n, int k, void* workspace, int groupsize,
               int dev, void* stream, int max_par) {
    return marlin_cuda(a, b, c, s, m, n, k, workspace, groupsize, dev, static_cast<cudaStream_t>(stream), -1, -1, -1,
                       max_par);
}

// Copies blocks [src + map[2i] * bytes] -> [dst + map[2i+1] * bytes], one cudaMemcpyAsync each
// (kind: cudaMemcpyDefault, the pointers say where they live).
int swap_blocks(const char* src, char* dst, const int64_t* map, int64_t blocks, int64_t bytes, void* stream) {
    for (int64_t i = 0; i < blocks; ++i) {
        cudaError_t e = cudaMemcpyAsync(dst + map[2 * i + 1] * bytes, src + map[2 * i] * bytes, bytes,
                                        cudaMemcpyDefault, static_cast<cudaStream_t>(stream));
        if (e != cudaSuccess) return static_cast<int>(e);
    }
    return 0;
}

}  // extern "C"

// One CTA strides over blocks; its threads copy 16-byte words of a block.
__global__ void uva_gather_kernel(const int4* src, int4* dst, const int64_t* map, int64_t blocks, int64_t words) {
    for (int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
        const int4* s = src + map[2 * b] * words;
        int4* d = dst + map[2 * b + 1] * words;
        for (int64_t w = threadIdx.x; w < words; w += blockDim.x) d[w] = s[w];
    }
}

extern "C" int uva_gather(const void* src, void* dst, const int64_t* map_dev, int64_t blocks, int64_t bytes, int ctas,
                          int threads, void* stream) {
    if (bytes % 16 != 0) return -1;
    uva_gather_kernel<<<ctas, threads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const int4*>(src), static_cast<int4*>(dst), map_dev, blocks, bytes / 16);
    return static_cast<int>(cudaGetLastError());
}
