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
// changes. In shared memory (u8, i8): a warp of one value adds once, others per lane. In global
// memory (u16, i16): lanes of a warp with the same value are counted once by their leader
// (__match_any_sync), which keeps background regions from serialising on one counter.

#define FULL 0xffffffffu
// Rows of x per block (the launch's grid.y is ceil(ny / ROWS)).
#define ROWS 8

struct Geo {
    int nx, ny, nz;     // volume dims
    int zs;             // first plane held in the buffer
    int z0;             // first plane computed by this launch
    int flags;          // bit 0: superlevel, bit 1: vertices construction
};

#include "keys.cuh"

// FLAGS and CHECK are compile-time so that the hot loop has no per-voxel tests of them: FLAGS
// is g.flags; CHECK is false for blocks whose voxels and neighbours are all inside the volume.
template <typename T, int FLAGS, bool CHECK>
__device__ __forceinline__ typename Keys<T>::K fetch(const T* __restrict__ d, const Geo& g, int x, int y, int z) {
    if (CHECK && (x < 0 || y < 0 || z < 0 || x >= g.nx || y >= g.ny || z >= g.nz)) return Keys<T>::absent();
    return Keys<T>::key(d[((size_t)(z - g.zs) * g.ny + y) * g.nx + x], (FLAGS & 1) != 0);
}

// B for a neighbour earlier / later in memory, XOR the construction.
#define EARLIER(n) ((int)((c < (n)) != vert))
#define LATER(n) ((int)((c <= (n)) != vert))

template <typename T, int FLAGS, bool CHECK>
__device__ __forceinline__ int change_3d(const T* __restrict__ d, const Geo& g, int x, int y, int z,
                                         typename Keys<T>::K c) {
    const bool vert = (FLAGS & 2) != 0;
    const int dd = EARLIER((fetch<T, FLAGS, CHECK>)(d, g, x, y, z - 1)), u = LATER((fetch<T, FLAGS, CHECK>)(d, g, x, y, z + 1));
    const int no = EARLIER((fetch<T, FLAGS, CHECK>)(d, g, x, y - 1, z)), so = LATER((fetch<T, FLAGS, CHECK>)(d, g, x, y + 1, z));
    const int w = EARLIER((fetch<T, FLAGS, CHECK>)(d, g, x - 1, y, z)), e = LATER((fetch<T, FLAGS, CHECK>)(d, g, x + 1, y, z));
    const int singles = dd + u + no + so + w + e;
    const int nw = EARLIER((fetch<T, FLAGS, CHECK>)(d, g, x - 1, y - 1, z)) & no & w;
    const int ne = EARLIER((fetch<T, FLAGS, CHECK>)(d, g, x + 1, y - 1, z)) & no & e;
    const int sw = LATER((fetch<T, FLAGS, CHECK>)(d, g, x - 1, y + 1, z)) & so & w;
    const int se = LATER((fetch<T, FLAGS, CHECK>)(d, g, x + 1, y + 1, z)) & so & e;
    const int dw = EARLIER((fetch<T, FLAGS, CHECK>)(d, g, x - 1, y, z - 1)) & dd & w;
    const int de = EARLIER((fetch<T, FLAGS, CHECK>)(d, g, x + 1, y, z - 1)) & dd & e;
    const int uw = LATER((fetch<T, FLAGS, CHECK>)(d, g, x - 1, y, z + 1)) & u & w;
    const int ue = LATER((fetch<T, FLAGS, CHECK>)(d, g, x + 1, y, z + 1)) & u & e;
    const int dn = EARLIER((fetch<T, FLAGS, CHECK>)(d, g, x, y - 1, z - 1)) & dd & no;
    const int ds = EARLIER((fetch<T, FLAGS, CHECK>)(d, g, x, y + 1, z - 1)) & dd & so;
    const int un = LATER((fetch<T, FLAGS, CHECK>)(d, g, x, y - 1, z + 1)) & u & no;
    const int us = LATER((fetch<T, FLAGS, CHECK>)(d, g, x, y + 1, z + 1)) & u & so;
    const int pairs = nw + ne + sw + se + dw + de + uw + ue + dn + ds + un + us;
    const int corners = (EARLIER((fetch<T, FLAGS, CHECK>)(d, g, x - 1, y - 1, z - 1)) & nw & dw & dn)
        + (EARLIER((fetch<T, FLAGS, CHECK>)(d, g, x + 1, y - 1, z - 1)) & ne & de & dn)
        + (EARLIER((fetch<T, FLAGS, CHECK>)(d, g, x - 1, y + 1, z - 1)) & sw & dw & ds)
        + (EARLIER((fetch<T, FLAGS, CHECK>)(d, g, x + 1, y + 1, z - 1)) & se & de & ds)
        + (LATER((fetch<T, FLAGS, CHECK>)(d, g, x - 1, y - 1, z + 1)) & nw & uw & un)
        + (LATER((fetch<T, FLAGS, CHECK>)(d, g, x + 1, y - 1, z + 1)) & ne & ue & un)
        + (LATER((fetch<T, FLAGS, CHECK>)(d, g, x - 1, y + 1, z + 1)) & sw & uw & us)
        + (LATER((fetch<T, FLAGS, CHECK>)(d, g, x + 1, y + 1, z + 1)) & se & ue & us);
    const int f = 1 - singles + pairs - corners;
    return vert ? f : -f;
}

template <typename T, int FLAGS, bool CHECK>
__device__ __forceinline__ int change_2d(const T* __restrict__ d, const Geo& g, int x, int y, int z,
                                         typename Keys<T>::K c) {
    const bool vert = (FLAGS & 2) != 0;
    const int t = EARLIER((fetch<T, FLAGS, CHECK>)(d, g, x, y - 1, z)), l = EARLIER((fetch<T, FLAGS, CHECK>)(d, g, x - 1, y, z));
    const int r = LATER((fetch<T, FLAGS, CHECK>)(d, g, x + 1, y, z)), b = LATER((fetch<T, FLAGS, CHECK>)(d, g, x, y + 1, z));
    const int tl = EARLIER((fetch<T, FLAGS, CHECK>)(d, g, x - 1, y - 1, z)) & t & l;
    const int tr = EARLIER((fetch<T, FLAGS, CHECK>)(d, g, x + 1, y - 1, z)) & t & r;
    const int bl = LATER((fetch<T, FLAGS, CHECK>)(d, g, x - 1, y + 1, z)) & b & l;
    const int br = LATER((fetch<T, FLAGS, CHECK>)(d, g, x + 1, y + 1, z)) & b & r;
    return 1 - (t + l + r + b) + (tl + tr + bl + br);
}

// One launch: planes [z0, z0 + gridDim.z) of the volume. `lo` is the smallest value of the type
// (bin = value - lo). SHARED_BINS > 0: per-block histograms in shared memory, flushed at the end.
template <typename T, bool THREE_D, int SHARED_BINS, int FLAGS, bool CHECK>
__device__ void ecc_hist_impl(const T* __restrict__ d, const Geo& g, int lo, unsigned long long* __restrict__ counts,
                              unsigned long long* __restrict__ sums, unsigned int* s_count, int* s_sum) {
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
            const T raw = d[((size_t)(z - g.zs) * g.ny + y) * g.nx + x];
            const int v = (int)raw;
            const int c = Keys<T>::key(raw, (FLAGS & 1) != 0);
            f = THREE_D ? change_3d<T, FLAGS, CHECK>(d, g, x, y, z, c) : change_2d<T, FLAGS, CHECK>(d, g, x, y, z, c);
            bin = v - lo;
        }
        if (SHARED_BINS > 0) {
            // A warp whose voxels share one value (a background) adds once; any other adds per
            // lane: shared-memory atomics seldom meet on one address then, and the match of
            // equal values costs more than they do.
            const int b0 = __shfl_sync(FULL, bin, 0);
            if (__all_sync(FULL, bin == b0)) {
                int s = f;
                for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(FULL, s, o);
                if ((threadIdx.x & 31) == 0 && b0 >= 0) {
                    atomicAdd(&s_count[b0], 32u);
                    if (s != 0) atomicAdd(&s_sum[b0], s);
                }
            } else if (valid) {
                atomicAdd(&s_count[bin], 1u);
                if (f != 0) atomicAdd(&s_sum[bin], f);
            }
            continue;
        }
        const unsigned group = __match_any_sync(FULL, bin);
        if (valid) {
            const bool leader = (threadIdx.x & 31) == __ffs(group) - 1;
            if (leader) atomicAdd(&counts[bin], (unsigned long long)__popc(group));
            if (f != 0) atomicAdd(&sums[bin], (unsigned long long)(long long)f);
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

// Whether every voxel of this block and all its neighbours lie inside the volume.
template <bool THREE_D>
__device__ __forceinline__ bool interior_block(const Geo& g) {
    const int x0 = blockIdx.x * blockDim.x, y0 = blockIdx.y * ROWS, z = g.z0 + blockIdx.z;
    const bool xy = x0 >= 1 && x0 + (int)blockDim.x + 1 <= g.nx && y0 >= 1 && y0 + ROWS + 1 <= g.ny;
    return THREE_D ? xy && z >= 1 && z + 2 <= g.nz : xy;
}

// Calls F<FLAGS, CHECK> with the launch's flags and the block's interior test as constants.
#define DISPATCH(CALL)                                                                             \
    do {                                                                                           \
        const bool in = interior_block<THREE_D>(g);                                                \
        switch (g.flags) {                                                                         \
        case 0: if (in) CALL(0, false); else CALL(0, true); break;                                \
        case 1: if (in) CALL(1, false); else CALL(1, true); break;                                \
        case 2: if (in) CALL(2, false); else CALL(2, true); break;                                \
        default: if (in) CALL(3, false); else CALL(3, true); break;                               \
        }                                                                                          \
    } while (0)

template <typename T, bool THREE_D, int SHARED_BINS>
__device__ void ecc_hist(const T* __restrict__ d, Geo g, int lo, unsigned long long* __restrict__ counts,
                         unsigned long long* __restrict__ sums) {
    // Declared here, once, rather than in each of the eight instantiations.
    __shared__ unsigned int s_count[SHARED_BINS > 0 ? SHARED_BINS : 1];
    __shared__ int s_sum[SHARED_BINS > 0 ? SHARED_BINS : 1];
#define HIST(F, C) ecc_hist_impl<T, THREE_D, SHARED_BINS, F, C>(d, g, lo, counts, sums, s_count, s_sum)
    DISPATCH(HIST);
#undef HIST
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

// ---- Wide types (u32, i32, f32, f64): any number of distinct values -------------------------
// Each voxel's (key, change) pair is appended to a list (NaN voxels are left out); the list is
// sorted by key (kernels below), and the changes of equal keys are summed. Order in the list
// does not matter, since it is sorted.

template <typename T, bool THREE_D, int FLAGS, bool CHECK>
__device__ void ecc_pairs_impl(const T* __restrict__ d, const Geo& g, unsigned long long* __restrict__ keys,
                               signed char* __restrict__ changes, unsigned int* __restrict__ count) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int z = g.z0 + blockIdx.z;
    const int lane = threadIdx.x & 31;
    for (int r = 0; r < ROWS; r++) {
        const int y = blockIdx.y * ROWS + r;
        if (y >= g.ny) break;
        bool keep = false;
        unsigned long long c = 0;
        int f = 0;
        if (x < g.nx) {
            c = Keys<T>::key(d[((size_t)(z - g.zs) * g.ny + y) * g.nx + x], (FLAGS & 1) != 0);
            keep = c != Keys<T>::absent();
            if (keep)
                f = THREE_D ? change_3d<T, FLAGS, CHECK>(d, g, x, y, z, c) : change_2d<T, FLAGS, CHECK>(d, g, x, y, z, c);
        }
        // One atomic per warp reserves the slots of its kept voxels.
        const unsigned mask = __ballot_sync(FULL, keep);
        unsigned base = 0;
        if (lane == 0 && mask) base = atomicAdd(count, (unsigned)__popc(mask));
        base = __shfl_sync(FULL, base, 0);
        if (keep) {
            const unsigned i = base + __popc(mask & ((1u << lane) - 1));
            keys[i] = c;
            changes[i] = (signed char)f;
        }
    }
}

template <typename T, bool THREE_D>
__device__ void ecc_pairs(const T* __restrict__ d, Geo g, unsigned long long* __restrict__ keys,
                          signed char* __restrict__ changes, unsigned int* __restrict__ count) {
#define PAIRS(F, C) ecc_pairs_impl<T, THREE_D, F, C>(d, g, keys, changes, count)
    DISPATCH(PAIRS);
#undef PAIRS
}

#define PAIR_KERNELS(T, NAME)                                                                      \
    extern "C" __global__ void pairs_##NAME##_2d(const T* d, Geo g, unsigned long long* k, signed char* c, \
                                                 unsigned int* n) {                                \
        ecc_pairs<T, false>(d, g, k, c, n);                                                        \
    }                                                                                              \
    extern "C" __global__ void pairs_##NAME##_3d(const T* d, Geo g, unsigned long long* k, signed char* c, \
                                                 unsigned int* n) {                                \
        ecc_pairs<T, true>(d, g, k, c, n);                                                         \
    }
PAIR_KERNELS(unsigned int, u32)
PAIR_KERNELS(int, i32)
PAIR_KERNELS(float, f32)
PAIR_KERNELS(double, f64)

// ---- chi at a grid of thresholds (the scale-space), f32 fields ------------------------------
// Each voxel's change counts towards the sets of the grid thresholds that hold it: sublevel, the
// grid values >= its value (binned at the first, summed upwards on the host); superlevel, those
// <= it (binned at the last, summed downwards). No sort and no curve: a block histogram of at
// most GRID_MAX bins in shared memory, flushed with one atomic per bin. NaN voxels (ABSENT keys)
// are in no set.

#define GRID_MAX 1024

template <bool THREE_D, int FLAGS, bool CHECK>
__device__ void grid_impl(const float* __restrict__ d, const Geo& g, int n, unsigned long long* __restrict__ hist,
                          const double* s_grid, int* s_hist) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int z = g.z0 + blockIdx.z;
    for (int r = 0; r < ROWS; r++) {
        const int y = blockIdx.y * ROWS + r;
        if (y >= g.ny) break;
        if (x >= g.nx) continue;
        const float raw = d[((size_t)(z - g.zs) * g.ny + y) * g.nx + x];
        const unsigned long long c = Keys<float>::key(raw, (FLAGS & 1) != 0);
        if (c == Keys<float>::absent()) continue;
        const int f = THREE_D ? change_3d<float, FLAGS, CHECK>(d, g, x, y, z, c)
                              : change_2d<float, FLAGS, CHECK>(d, g, x, y, z, c);
        if (f == 0) continue;
        const double v = (double)raw;
        int lo = 0, hi = n;
        if ((FLAGS & 1) == 0) {
            // The first grid value >= v (n: above the grid, in no set).
            while (lo < hi) {
                const int m = (lo + hi) >> 1;
                if (s_grid[m] < v) lo = m + 1; else hi = m;
            }
        } else {
            // The last grid value <= v (-1: below the grid, in no set).
            while (lo < hi) {
                const int m = (lo + hi) >> 1;
                if (s_grid[m] <= v) lo = m + 1; else hi = m;
            }
            lo -= 1;
        }
        if (lo >= 0 && lo < n) atomicAdd(&s_hist[lo], f);
    }
}

template <bool THREE_D>
__device__ void grid_hist(const float* __restrict__ d, Geo g, const double* __restrict__ grid, int n,
                          unsigned long long* __restrict__ hist) {
    __shared__ double s_grid[GRID_MAX];
    __shared__ int s_hist[GRID_MAX];
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        s_grid[i] = grid[i];
        s_hist[i] = 0;
    }
    __syncthreads();
#define GRID(F, C) grid_impl<THREE_D, F, C>(d, g, n, hist, s_grid, s_hist)
    DISPATCH(GRID);
#undef GRID
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        if (s_hist[i] != 0) atomicAdd(&hist[i], (unsigned long long)(long long)s_hist[i]);
}

extern "C" __global__ void grid_f32_2d(const float* d, Geo g, const double* grid, int n, unsigned long long* hist) {
    grid_hist<false>(d, g, grid, n, hist);
}
extern "C" __global__ void grid_f32_3d(const float* d, Geo g, const double* grid, int n, unsigned long long* hist) {
    grid_hist<true>(d, g, grid, n, hist);
}

// ---- Stable LSD radix sort of (key, change) pairs, 8 bits per pass ---------------------------
// A pass: radix_count (each block's digit counts over its TILE), an exclusive scan of the counts
// in digit-major order (scan_u32), radix_scatter (each block places its elements in order, so
// the pass is stable).

#define SORT_THREADS 256
#define SORT_ITEMS 16
#define TILE (SORT_THREADS * SORT_ITEMS)

extern "C" __global__ void radix_count(const unsigned long long* __restrict__ keys, unsigned int n, int shift,
                                       unsigned int* __restrict__ counts) {
    __shared__ unsigned int h[256];
    h[threadIdx.x] = 0;
    __syncthreads();
    const unsigned start = blockIdx.x * TILE;
    for (int it = 0; it < SORT_ITEMS; it++) {
        const unsigned i = start + it * SORT_THREADS + threadIdx.x;
        if (i < n) atomicAdd(&h[(keys[i] >> shift) & 255], 1u);
    }
    __syncthreads();
    counts[threadIdx.x * gridDim.x + blockIdx.x] = h[threadIdx.x];
}

extern "C" __global__ void radix_scatter(const unsigned long long* __restrict__ keys,
                                         const signed char* __restrict__ vals, unsigned int n, int shift,
                                         const unsigned int* __restrict__ offsets,
                                         unsigned long long* __restrict__ keys_out,
                                         signed char* __restrict__ vals_out) {
    __shared__ unsigned int running[256];
    __shared__ unsigned int warp_count[SORT_THREADS / 32][256];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    running[threadIdx.x] = offsets[threadIdx.x * gridDim.x + blockIdx.x];
    for (int w = 0; w < SORT_THREADS / 32; w++) warp_count[w][threadIdx.x] = 0;
    __syncthreads();
    const unsigned start = blockIdx.x * TILE;
    for (int it = 0; it < SORT_ITEMS; it++) {
        const unsigned i = start + it * SORT_THREADS + threadIdx.x;
        const bool valid = i < n;
        unsigned long long k = 0;
        int digit = 256 + lane;  // invalid lanes never group with others
        if (valid) {
            k = keys[i];
            digit = (int)((k >> shift) & 255);
        }
        const unsigned peers = __match_any_sync(FULL, digit);
        if (valid && lane == __ffs(peers) - 1) warp_count[warp][digit] = __popc(peers);
        __syncthreads();
        if (valid) {
            unsigned off = running[digit] + __popc(peers & ((1u << lane) - 1));
            for (int w = 0; w < warp; w++) off += warp_count[w][digit];
            keys_out[off] = k;
            vals_out[off] = vals[i];
        }
        __syncthreads();
        unsigned total = 0;
        for (int w = 0; w < SORT_THREADS / 32; w++) {
            total += warp_count[w][threadIdx.x];
            warp_count[w][threadIdx.x] = 0;
        }
        running[threadIdx.x] += total;
        __syncthreads();
    }
}

// In-place scan of u32 in blocks of 1024 (exclusive when `exclusive`), writing each block's
// total to `sums`; scan_add then adds the scanned totals of the earlier blocks.
extern "C" __global__ void scan_u32(unsigned int* data, unsigned int n, int exclusive, unsigned int* sums) {
    const unsigned int* in = data;
    unsigned int* out = data;
    __shared__ unsigned int warp_sums[32];
    const unsigned i = blockIdx.x * 1024 + threadIdx.x;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned v = i < n ? in[i] : 0;
    unsigned x = v;
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned y = __shfl_up_sync(FULL, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        unsigned s = warp_sums[lane];
        for (int o = 1; o < 32; o <<= 1) {
            const unsigned y = __shfl_up_sync(FULL, s, o);
            if (lane >= o) s += y;
        }
        warp_sums[lane] = s;
    }
    __syncthreads();
    const unsigned incl = x + (warp > 0 ? warp_sums[warp - 1] : 0);
    if (i < n) out[i] = exclusive ? incl - v : incl;
    if (threadIdx.x == 1023) sums[blockIdx.x] = incl;
}

extern "C" __global__ void scan_add(unsigned int* __restrict__ out, unsigned int n,
                                    const unsigned int* __restrict__ scanned_sums) {
    const unsigned i = blockIdx.x * 1024 + threadIdx.x;
    if (i < n && blockIdx.x > 0) out[i] += scanned_sums[blockIdx.x];
}

// ---- Sums of the changes per distinct key -------------------------------------------------
// head[i] = 1 where a new key starts; after an inclusive scan, seg[i] - 1 is the key's index.
extern "C" __global__ void mark_heads(const unsigned long long* __restrict__ keys, unsigned int n,
                                      unsigned int* __restrict__ head) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) head[i] = (i == 0 || keys[i] != keys[i - 1]) ? 1u : 0u;
}

extern "C" __global__ void reduce_segments(const unsigned long long* __restrict__ keys,
                                           const signed char* __restrict__ vals, unsigned int n,
                                           const unsigned int* __restrict__ seg,
                                           unsigned long long* __restrict__ unique_keys,
                                           unsigned long long* __restrict__ sums) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool valid = i < n;
    const unsigned s = valid ? seg[i] - 1 : 0xffffffffu;
    const int v = valid ? vals[i] : 0;
    if (valid && (i == 0 || seg[i - 1] != seg[i])) unique_keys[s] = keys[i];
    // Lanes of one key add once, through their leader.
    const unsigned peers = __match_any_sync(FULL, s);
    int total = v;
    for (int o = 0; o < 32; o++) {
        const int other = __shfl_sync(FULL, v, o);
        if (o != (threadIdx.x & 31) && ((peers >> o) & 1)) total += other;
    }
    if (valid && (threadIdx.x & 31) == __ffs(peers) - 1 && total != 0)
        atomicAdd(&sums[s], (unsigned long long)(long long)total);
}

// Narrowing for the trip back to the host (half the bytes): 32-bit types' keys fit in u32, and
// per-value sums almost always fit in i32; `overflow` is set when one does not (the host then
// takes the 64-bit sums).
extern "C" __global__ void narrow_keys(const unsigned long long* __restrict__ in, unsigned int* __restrict__ out,
                                       unsigned int n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (unsigned int)in[i];
}

extern "C" __global__ void narrow_sums(const unsigned long long* __restrict__ in, int* __restrict__ out,
                                       unsigned int n, unsigned int* __restrict__ overflow) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const long long v = (long long)in[i];
        if (v < -2147483647LL - 1 || v > 2147483647LL) atomicOr(overflow, 1u);
        out[i] = (int)v;
    }
}
