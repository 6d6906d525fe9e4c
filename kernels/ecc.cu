// Euler characteristic curves on the GPU: per-voxel changes of chi (the "faces introduced by a
// voxel" counting of Wang, Wagner and Chen, SoCG 2022), summed per value in a histogram.
//
// This is the CUDA twin of src/topo/ecc/kernel.rs and must give exactly the same integers:
// * keys: the sample value (narrow integer types), bitwise NOT for superlevel sets; voxels
//   outside the field (the collar) hold ABSENT, larger than every key;
// * B(o), "v precedes its neighbour n": c < n, or c == n and n comes later in memory; the
//   vertices construction uses NOT B;
// * top-cells: change = (-1)^d F(B); vertices: change = F(NOT B), with
//   F = 1 - singles + pairs - corners over the neighbours' conjunctions (see kernel.rs).
// A 1D field is a 2D field with one row.
//
// Layout: one thread per voxel of an x-row, ROWS rows per block; blockIdx.z is the plane (within
// the chunk); the chunk's buffer holds planes [zs, zs + planes) of the volume, so the planes
// around the computed ones are read from it and those outside the volume are ABSENT.
//
// Histogram: per value, the number of voxels (to know which values occur) and the sum of their
// changes. Lanes of a warp with the same value are counted once by their leader
// (__match_any_sync), which keeps background regions from serialising on one counter.

#define ABSENT 0x7fffffff
#define FULL 0xffffffffu
// Rows of x per block (the launch's grid.y is ceil(ny / ROWS)).
#define ROWS 8

struct Geo {
    int nx, ny, nz;     // volume dims
    int zs;             // first plane held in the buffer
    int z0;             // first plane computed by this launch
    int flags;          // bit 0: superlevel, bit 1: vertices construction
};

template <typename T>
__device__ __forceinline__ int fetch(const T* __restrict__ d, const Geo& g, int x, int y, int z) {
    if (x < 0 || y < 0 || z < 0 || x >= g.nx || y >= g.ny || z >= g.nz) return ABSENT;
    int k = (int)d[((size_t)(z - g.zs) * g.ny + y) * g.nx + x];
    return (g.flags & 1) ? ~k : k;
}

// B for a neighbour earlier / later in memory, XOR the construction.
#define EARLIER(n) ((int)((c < (n)) != vert))
#define LATER(n) ((int)((c <= (n)) != vert))

template <typename T>
__device__ __forceinline__ int change_3d(const T* __restrict__ d, const Geo& g, int x, int y, int z, int c) {
    const bool vert = (g.flags & 2) != 0;
    const int dd = EARLIER(fetch(d, g, x, y, z - 1)), u = LATER(fetch(d, g, x, y, z + 1));
    const int no = EARLIER(fetch(d, g, x, y - 1, z)), so = LATER(fetch(d, g, x, y + 1, z));
    const int w = EARLIER(fetch(d, g, x - 1, y, z)), e = LATER(fetch(d, g, x + 1, y, z));
    const int singles = dd + u + no + so + w + e;
    const int nw = EARLIER(fetch(d, g, x - 1, y - 1, z)) & no & w;
    const int ne = EARLIER(fetch(d, g, x + 1, y - 1, z)) & no & e;
    const int sw = LATER(fetch(d, g, x - 1, y + 1, z)) & so & w;
    const int se = LATER(fetch(d, g, x + 1, y + 1, z)) & so & e;
    const int dw = EARLIER(fetch(d, g, x - 1, y, z - 1)) & dd & w;
    const int de = EARLIER(fetch(d, g, x + 1, y, z - 1)) & dd & e;
    const int uw = LATER(fetch(d, g, x - 1, y, z + 1)) & u & w;
    const int ue = LATER(fetch(d, g, x + 1, y, z + 1)) & u & e;
    const int dn = EARLIER(fetch(d, g, x, y - 1, z - 1)) & dd & no;
    const int ds = EARLIER(fetch(d, g, x, y + 1, z - 1)) & dd & so;
    const int un = LATER(fetch(d, g, x, y - 1, z + 1)) & u & no;
    const int us = LATER(fetch(d, g, x, y + 1, z + 1)) & u & so;
    const int pairs = nw + ne + sw + se + dw + de + uw + ue + dn + ds + un + us;
    const int corners = (EARLIER(fetch(d, g, x - 1, y - 1, z - 1)) & nw & dw & dn)
        + (EARLIER(fetch(d, g, x + 1, y - 1, z - 1)) & ne & de & dn)
        + (EARLIER(fetch(d, g, x - 1, y + 1, z - 1)) & sw & dw & ds)
        + (EARLIER(fetch(d, g, x + 1, y + 1, z - 1)) & se & de & ds)
        + (LATER(fetch(d, g, x - 1, y - 1, z + 1)) & nw & uw & un)
        + (LATER(fetch(d, g, x + 1, y - 1, z + 1)) & ne & ue & un)
        + (LATER(fetch(d, g, x - 1, y + 1, z + 1)) & sw & uw & us)
        + (LATER(fetch(d, g, x + 1, y + 1, z + 1)) & se & ue & us);
    const int f = 1 - singles + pairs - corners;
    return vert ? f : -f;
}

template <typename T>
__device__ __forceinline__ int change_2d(const T* __restrict__ d, const Geo& g, int x, int y, int z, int c) {
    const bool vert = (g.flags & 2) != 0;
    const int t = EARLIER(fetch(d, g, x, y - 1, z)), l = EARLIER(fetch(d, g, x - 1, y, z));
    const int r = LATER(fetch(d, g, x + 1, y, z)), b = LATER(fetch(d, g, x, y + 1, z));
    const int tl = EARLIER(fetch(d, g, x - 1, y - 1, z)) & t & l;
    const int tr = EARLIER(fetch(d, g, x + 1, y - 1, z)) & t & r;
    const int bl = LATER(fetch(d, g, x - 1, y + 1, z)) & b & l;
    const int br = LATER(fetch(d, g, x + 1, y + 1, z)) & b & r;
    return 1 - (t + l + r + b) + (tl + tr + bl + br);
}

// One launch: planes [z0, z0 + gridDim.z) of the volume. `lo` is the smallest value of the type
// (bin = value - lo). SHARED_BINS > 0: per-block histograms in shared memory, flushed at the end.
template <typename T, bool THREE_D, int SHARED_BINS>
__device__ void ecc_hist(const T* __restrict__ d, Geo g, int lo, unsigned long long* __restrict__ counts,
                         unsigned long long* __restrict__ sums) {
    __shared__ unsigned int s_count[SHARED_BINS > 0 ? SHARED_BINS : 1];
    __shared__ int s_sum[SHARED_BINS > 0 ? SHARED_BINS : 1];
    if (SHARED_BINS > 0) {
        for (int i = threadIdx.x; i < SHARED_BINS; i += blockDim.x) {
            s_count[i] = 0;
            s_sum[i] = 0;
        }
        __syncthreads();
    }
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int z = g.z0 + blockIdx.z;
    // ROWS rows per block, so a shared histogram is cleared and flushed once per ROWS rows.
    for (int r = 0; r < ROWS; r++) {
        const int y = blockIdx.y * ROWS + r;
        if (y >= g.ny) break;  // uniform across the block
        const bool valid = x < g.nx;
        int bin = -1, f = 0;
        if (valid) {
            const int v = (int)d[((size_t)(z - g.zs) * g.ny + y) * g.nx + x];
            const int c = (g.flags & 1) ? ~v : v;
            f = THREE_D ? change_3d(d, g, x, y, z, c) : change_2d(d, g, x, y, z, c);
            bin = v - lo;
        }
        const unsigned group = __match_any_sync(FULL, bin);
        if (valid) {
            const bool leader = (threadIdx.x & 31) == __ffs(group) - 1;
            if (SHARED_BINS > 0) {
                if (leader) atomicAdd(&s_count[bin], (unsigned)__popc(group));
                if (f != 0) atomicAdd(&s_sum[bin], f);
            } else {
                if (leader) atomicAdd(&counts[bin], (unsigned long long)__popc(group));
                if (f != 0) atomicAdd(&sums[bin], (unsigned long long)(long long)f);
            }
        }
    }
    if (SHARED_BINS > 0) {
        __syncthreads();
        for (int i = threadIdx.x; i < SHARED_BINS; i += blockDim.x) {
            if (s_count[i] != 0) atomicAdd(&counts[i], (unsigned long long)s_count[i]);
            if (s_sum[i] != 0) atomicAdd(&sums[i], (unsigned long long)(long long)s_sum[i]);
        }
    }
}

#define ECC_KERNELS(T, NAME, BINS)                                                                 \
    extern "C" __global__ void ecc_##NAME##_2d(const T* d, Geo g, int lo, unsigned long long* counts, \
                                               unsigned long long* sums) {                          \
        ecc_hist<T, false, BINS>(d, g, lo, counts, sums);                                          \
    }                                                                                              \
    extern "C" __global__ void ecc_##NAME##_3d(const T* d, Geo g, int lo, unsigned long long* counts, \
                                               unsigned long long* sums) {                          \
        ecc_hist<T, true, BINS>(d, g, lo, counts, sums);                                           \
    }

ECC_KERNELS(unsigned char, u8, 256)
ECC_KERNELS(signed char, i8, 256)
ECC_KERNELS(unsigned short, u16, 0)
ECC_KERNELS(short, i16, 0)
