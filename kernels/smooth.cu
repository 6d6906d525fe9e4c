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

// The tiled passes: each block copies the samples its outputs need (with their reflected
// halo) into shared memory once, with coalesced loads, and sums every output's taps from there,
// in the same order and rounding as above. The untiled passes read each sample ntaps times.
#define TILE_X 128      // threads per block, along x
#define TILE_SEG 32     // outputs per thread along y or z (smooth_columns)
#define TILE_ROW_OUT 4  // outputs per thread along x (smooth_rows)
#define TILE_MAX_R 30   // the largest radius tiled (shared memory: see Gpu::pass in smooth.rs)
// Loads per thread of smooth_rows' run and halo, at most.
#define ROW_LOADS ((TILE_X * TILE_ROW_OUT + 2 * TILE_MAX_R + TILE_X - 1) / TILE_X)

// i reflected into 0..n, cheap when it is inside already (the common case).
__device__ __forceinline__ int reflect_fast(int i, int n) {
    return (i >= 0 && i < n) ? i : (int)reflect(i, n);
}

// i reflected into 0..n when it lies within n of it (one reflection), by selects, no branch.
__device__ __forceinline__ int reflect_once(int i, int n) {
    return i < 0 ? -1 - i : (i >= n ? 2 * n - 1 - i : i);
}

// Along x: block (bx, y, z) smooths x in [bx*TILE_X*TILE_ROW_OUT, +TILE_X*TILE_ROW_OUT) of row
// (y, z), TILE_ROW_OUT outputs a thread, from a shared copy of that run and its halo.
extern "C" __global__ void smooth_rows(const float* __restrict__ src, float* __restrict__ dst, int nx, int ny,
                                       const float* __restrict__ w, int ntaps) {
    extern __shared__ float tile[];
    __shared__ float sw[2 * TILE_MAX_R + 1];
    const int r = ntaps / 2, t = threadIdx.x;
    const int x0 = blockIdx.x * (TILE_X * TILE_ROW_OUT);
    const long long row = ((long long)blockIdx.z * ny + blockIdx.y) * nx;
    if (t < ntaps) sw[t] = w[t];
    const int n = min(TILE_X * TILE_ROW_OUT, nx - x0) + 2 * r;
    if (r <= nx) {
        // Every load issued before the first is stored, which keeps enough bytes in flight (a
        // branch between loads would serialize them): the halo reflects once, by a select.
        const float* p = src + row;
        float v[ROW_LOADS];
#pragma unroll
        for (int i = 0; i < ROW_LOADS; i++)
            v[i] = t + i * TILE_X < n ? p[reflect_once(x0 - r + t + i * TILE_X, nx)] : 0.0f;
#pragma unroll
        for (int i = 0; i < ROW_LOADS; i++)
            if (t + i * TILE_X < n) tile[t + i * TILE_X] = v[i];
    } else {
        for (int j = t; j < n; j += TILE_X) tile[j] = src[row + reflect_fast(x0 - r + j, nx)];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TILE_ROW_OUT; i++) {
        const int u = t + i * TILE_X;
        if (u + 2 * r >= n) break;
        float acc = 0.0f;
        for (int k = 0; k < ntaps; k++) acc = __fadd_rn(acc, __fmul_rn(sw[k], tile[u + k]));
        dst[row + x0 + u] = acc;
    }
}

// Along y (axis 1) or z (axis 2): block (bx, by, o) smooths TILE_SEG positions from
// c0 = by*TILE_SEG along the axis for x in [bx*TILE_X, +TILE_X), o being z (axis 1) or y
// (axis 2), from a shared tile of TILE_SEG + 2r rows of TILE_X samples.
extern "C" __global__ void smooth_columns(const float* __restrict__ src, float* __restrict__ dst, int nx, int ny,
                                          int nz, int axis, const float* __restrict__ w, int ntaps) {
    extern __shared__ float tile[];
    __shared__ float sw[2 * TILE_MAX_R + 1];
    const int r = ntaps / 2, t = threadIdx.x;
    const int x = blockIdx.x * TILE_X + t;
    const int c0 = blockIdx.y * TILE_SEG;
    const int len = axis == 1 ? ny : nz;
    const long long stride = axis == 1 ? (long long)nx : (long long)nx * ny;
    // The voxel at position 0 along the axis, x = 0.
    const long long base = axis == 1 ? (long long)blockIdx.z * ny * nx : (long long)blockIdx.z * nx;
    if (t < ntaps) sw[t] = w[t];
    const int rows = min(TILE_SEG, len - c0) + 2 * r;
    if (x < nx) {
        // Rows lo..hi lie inside the field: loaded in batches of 8 with no reflect between
        // them (as in smooth_rows); the rest reflected one at a time.
        const int lo = min(rows, max(0, r - c0)), hi = max(lo, min(rows, len - c0 + r));
        for (int j = 0; j < lo; j++) tile[j * TILE_X + t] = src[base + reflect(c0 - r + j, len) * stride + x];
        const float* p = src + base + (long long)(c0 - r) * stride + x;
        int j = lo;
        for (; j + 8 <= hi; j += 8) {
            float v[8];
#pragma unroll
            for (int q = 0; q < 8; q++) v[q] = p[(j + q) * stride];
#pragma unroll
            for (int q = 0; q < 8; q++) tile[(j + q) * TILE_X + t] = v[q];
        }
        for (; j < hi; j++) tile[j * TILE_X + t] = p[j * stride];
        for (j = hi; j < rows; j++) tile[j * TILE_X + t] = src[base + reflect(c0 - r + j, len) * stride + x];
    }
    __syncthreads();
    if (x >= nx) return;
    for (int j = 0; j + 2 * r < rows; j++) {
        float acc = 0.0f;
        for (int k = 0; k < ntaps; k++) acc = __fadd_rn(acc, __fmul_rn(sw[k], tile[(j + k) * TILE_X + t]));
        dst[base + (long long)(c0 + j) * stride + x] = acc;
    }
}

// The smoothed field kept within the input's range [lo, hi], as the CPU's `smooth::clamp`:
// rounding can carry a value an ulp past it. NaN compares false and stays NaN.
extern "C" __global__ void clamp_f32(float* __restrict__ data, long long n, float lo, float hi) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        float v = data[i];
        data[i] = v > hi ? hi : (v < lo ? lo : v);
    }
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
