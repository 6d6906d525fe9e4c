// Separable Gaussian smoothing on the GPU: the CUDA twin of src/topo/smooth.rs, giving the
// same f32 results bit for bit: taps summed in the order k = -r..r as acc = acc + w[k] * x
// with round-to-nearest multiplies and adds (no fused multiply-add), reflect boundary
// (half-sample symmetric), axes filtered x, then y, then z.

// Index i reflected into 0..n (any i, any n >= 1).
__device__ __forceinline__ long long reflect(long long i, long long n) {
    long long m = i % (2 * n);
    if (m < 0) m += 2 * n;
    return m < n ? m : 2 * n - 1 - m;
}

// One pass along `axis` (0, 1, 2) of an nx*ny*nz f32 volume with `ntaps` taps in w.
extern "C" __global__ void smooth_pass(const float* __restrict__ src, float* __restrict__ dst, int nx, int ny,
                                       int nz, int axis, const float* __restrict__ w, int ntaps) {
    const long long n = (long long)nx * ny * nz;
    const int r = ntaps / 2;
    const long long stride = axis == 0 ? 1 : axis == 1 ? (long long)nx : (long long)nx * ny;
    const long long len = axis == 0 ? nx : axis == 1 ? ny : nz;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const long long c = (i / stride) % len;
        const long long base = i - c * stride;
        float acc = 0.0f;
        if (c >= r && c + r < len) {
            const float* p = src + base + (c - r) * stride;
            for (int k = 0; k < ntaps; k++) acc = __fadd_rn(acc, __fmul_rn(w[k], p[k * stride]));
        } else {
            for (int k = 0; k < ntaps; k++)
                acc = __fadd_rn(acc, __fmul_rn(w[k], src[base + reflect(c + k - r, len) * stride]));
        }
        dst[i] = acc;
    }
}

// The same pass with one thread per voxel of a (x, y, z) grid: no index division per voxel
// (for ny, nz <= 65535, the grid's limits; larger fields use smooth_pass).
extern "C" __global__ void smooth_pass_3d(const float* __restrict__ src, float* __restrict__ dst, int nx, int ny,
                                          int nz, int axis, const float* __restrict__ w, int ntaps) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= nx) return;
    const int y = blockIdx.y, z = blockIdx.z;
    const long long i = ((long long)z * ny + y) * nx + x;
    const int r = ntaps / 2;
    const int c = axis == 0 ? x : axis == 1 ? y : z;
    const int len = axis == 0 ? nx : axis == 1 ? ny : nz;
    const long long stride = axis == 0 ? 1 : axis == 1 ? (long long)nx : (long long)nx * ny;
    const long long base = i - c * stride;
    float acc = 0.0f;
    if (c >= r && c + r < len) {
        const float* p = src + base + (long long)(c - r) * stride;
        for (int k = 0; k < ntaps; k++) acc = __fadd_rn(acc, __fmul_rn(w[k], p[k * stride]));
    } else {
        for (int k = 0; k < ntaps; k++)
            acc = __fadd_rn(acc, __fmul_rn(w[k], src[base + reflect(c + k - r, len) * stride]));
    }
    dst[i] = acc;
}

// Sample conversion to f32, as the CPU's to_f32 (round to nearest).
#define TO_F32(T, NAME)                                                                            \
    extern "C" __global__ void to_f32_##NAME(const T* __restrict__ src, float* __restrict__ dst, long long n) { \
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;                 \
             i += (long long)gridDim.x * blockDim.x)                                               \
            dst[i] = (float)src[i];                                                                \
    }
TO_F32(unsigned char, u8)
TO_F32(signed char, i8)
TO_F32(unsigned short, u16)
TO_F32(short, i16)
TO_F32(unsigned int, u32)
TO_F32(int, i32)
TO_F32(float, f32)
TO_F32(double, f64)
