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

// ---- 8-bit fields, four voxels a thread (the packed kernels) --------------------------------
// The same per-voxel changes and histogram as above, for u8 and i8 fields whose rows are whole
// 32-bit words (nx a multiple of 4), at a fraction of the integer work per voxel:
// * a thread holds four consecutive voxels of a row in one word and walks along z (y in 2D),
//   keeping the 3x3 rows of the planes around it in registers: one plane of loads per step;
// * each of the 26 (8) comparisons is made for the four voxels at once, in bit 7 of each byte
//   (a SIMD-within-a-register compare: three operations for four voxels);
// * each comparison's result is a clean byte (0x80 or 0: Fill), so are the bitwise
//   conjunctions, and the change's 26 terms are summed four bytes at once by one shift-and-add
//   each (26 instructions where a bit-sliced adder tree took 56), so a voxel's change costs no
//   branch and no per-voxel compare.
// Neighbours outside the volume (the collar, ABSENT in the scalar kernels) do not compare:
// B is fixed to "precedes" for them by a patch of the affected bytes.
// The histogram is one 32-bit shared counter per value: (voxels << 18) + sum of (change + 13),
// which holds a block's 8192 voxels (14 bits of count, 26 * 8192 < 2^18 of sum).

// Threads per block along x (words) and y (rows), and steps (planes in 3D, rows in 2D) a
// thread walks; a block covers at most 32 * 8 * 4 * 8 = 8192 voxels (see the packing above).
#define PW 32
#define PH 8
#define PSTEPS 8
#define PCOUNT 18
#define HI 0x80808080u

// lop3 with its truth table spelt out: LUT is an expression of A, B, C (the operands' roles),
// so that negations and three-input functions cost one instruction whatever the compiler does.
enum { LA = 0xf0, LB = 0xcc, LC = 0xaa };
template <int LUT>
__device__ __forceinline__ unsigned lop3(unsigned a, unsigned b, unsigned c) {
    unsigned r;
    asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(a), "r"(b), "r"(c), "n"(LUT & 0xff));
    return r;
}

// Where a word's bits 0..6 are filled for the comparisons' truth tables (precedes4): with
// ones in the centre word's form and zeros in the neighbours' (or the other way round, by the
// flags), each table yields 0 in bits 0..6 and a comparison's result is a clean byte, 0x80 or 0.
// Which filler a table needs depends on the signedness and on super == vert only, not on
// whether the neighbour is earlier or later (precedes4 asserts it).
template <bool SIGNED, int FLAGS>
struct Fill {
    static constexpr bool super = (FLAGS & 1) != 0, vert = (FLAGS & 2) != 0;
    static constexpr bool centre_ones = SIGNED ? super != vert : super == vert;
    // The neighbour's form of a raw word: its top bits over the neighbours' filler.
    static __device__ __forceinline__ unsigned neighbour(unsigned raw) { return centre_ones ? raw & HI : raw | ~HI; }
    // The centre's form, from its neighbour form.
    static __device__ __forceinline__ unsigned centre(unsigned top) { return centre_ones ? top | ~HI : top & HI; }
    // The raw word from its neighbour form and its low bits.
    static __device__ __forceinline__ unsigned raw(unsigned top, unsigned low) { return (top & HI) | low; }
};

// sum + bit 7 of each byte of t (bits 0..6 clear) as bit 0 of that byte: one shift-and-add
// (LEA.HI). Forcing it onto the multiply-add unit (a multiply-high by an opaque 2^25) measured
// slower: see docs/PERFORMANCE.md.
__device__ __forceinline__ unsigned acc(unsigned t, unsigned sum) { return sum + (t >> 7); }

// The centre word c's forms for its comparisons: its top bits over the centre's filler, c | HI,
// and that minus one in every byte.
template <bool SIGNED, int FLAGS>
struct Centre {
    unsigned raw, top, hi, hi1;
    __device__ __forceinline__ Centre(unsigned ntop, unsigned low)
        : raw(Fill<SIGNED, FLAGS>::raw(ntop, low)), top(Fill<SIGNED, FLAGS>::centre(ntop)), hi(low | HI),
          hi1((low | HI) - 0x01010101u) {}
};

// B (bit 7 of each byte, the other bits clear) for the four voxels of c against the neighbour
// word n (its neighbour form `top`, and low = n & ~HI), earlier or later in memory: keys NOT
// the values for superlevel sets, and NOT B for the vertices construction (as EARLIER and LATER
// above).
// The low seven bits compare without a borrow between bytes: bit 7 of c.hi - low is
// low7(c) >= low7(n), of c.hi1 - low is low7(c) > low7(n); the top bits decide where they differ
// (unsigned: a clear top bit is smaller; signed: a set one).
// key c < key n is c < n (sublevel) or n < c (superlevel); key c <= key n is NOT key n < key c.
template <bool SIGNED, int FLAGS, bool LATER>
__device__ __forceinline__ unsigned precedes4(const Centre<SIGNED, FLAGS>& c, unsigned top, unsigned low) {
    // c < n: (top c < top n) or (tops equal and NOT low7(c) >= low7(n)).
    constexpr int C_LT_N = SIGNED ? ((LA & ~LB) | (~(LA ^ LB) & ~LC)) : ((~LA & LB) | (~(LA ^ LB) & ~LC));
    // n < c: (top n < top c) or (tops equal and low7(c) > low7(n)).
    constexpr int N_LT_C = SIGNED ? ((LB & ~LA) | (~(LA ^ LB) & LC)) : ((~LB & LA) | (~(LA ^ LB) & LC));
    constexpr bool super = (FLAGS & 1) != 0, vert = (FLAGS & 2) != 0;
    // Earlier: key c < key n. Later: NOT key n < key c.
    constexpr bool c_lt_n = LATER == super;
    constexpr bool negate = LATER != vert;
    constexpr int lut = (c_lt_n ? C_LT_N : N_LT_C) ^ (negate ? 0xff : 0);
    // Bits 0..6: A and B hold the fillers, and the table gives 0 there whatever C holds.
    constexpr int fill_row = Fill<SIGNED, FLAGS>::centre_ones ? 4 : 2;
    static_assert(((lut >> fill_row) & 3) == 0, "the fillers must clear bits 0..6");
    return lop3<lut>(c.top, top, (c_lt_n ? c.hi : c.hi1) - low);
}

// B towards a neighbour outside the volume is "precedes" (ABSENT is larger than every key),
// XOR the vertices construction: bytes of `out` (bit 7) are set to that.
template <int FLAGS>
__device__ __forceinline__ unsigned patch(unsigned b, unsigned out) {
    return (FLAGS & 2) ? (b & ~out) : (b | out);
}

// The words of the 3x3 rows around a thread's word in one plane: top[dy][dx] holds the voxels
// at (x + dx - 1, y + dy - 1) byte for byte in their neighbour form (Fill), low the raw words
// with bit 7 of each byte cleared.
struct Plane {
    unsigned top[3][3], low[3][3];
};

// g = change + 13 (0..26) for the four voxels of the centre word of p[1] (p[dz]: the plane at
// z + dz - 1), and the centre's raw word in `raw`. out[dz][dy] marks rows outside the volume,
// xl / xr the first / last voxel of a row. `up` is B towards the voxels above (z + 1): the
// voxels below see it from the other side in the next step, B = NOT up, which `below` brings
// when `have_below` (not on a thread's first step).
// Every B is a clean byte (0x80 or 0), so are the conjunctions, and the terms are summed four
// bytes at once by shift-and-adds (acc): f = 1 - singles + pairs - corners, change = -f
// (top-cells) or f (vertices), so g = 12 + singles - pairs + corners or 14 - singles + pairs -
// corners, each side of the subtraction at most 26 in every byte and never less than the other.
template <bool SIGNED, int FLAGS>
__device__ __forceinline__ unsigned change4_3d(const Plane (&p)[3], bool edge, const bool (&out)[3][3],
                                                bool xl, bool xr, bool have_below, unsigned below, unsigned& up,
                                                unsigned& raw) {
    const Centre<SIGNED, FLAGS> c(p[1].top[1][1], p[1].low[1][1]);
    raw = c.raw;
#define E(z, y, x) precedes4<SIGNED, FLAGS, false>(c, p[z].top[y][x], p[z].low[y][x])
#define L(z, y, x) precedes4<SIGNED, FLAGS, true>(c, p[z].top[y][x], p[z].low[y][x])
    unsigned b[3][3][3] = {{{E(0, 0, 0), E(0, 0, 1), E(0, 0, 2)}, {E(0, 1, 0), have_below ? below : E(0, 1, 1), E(0, 1, 2)}, {E(0, 2, 0), E(0, 2, 1), E(0, 2, 2)}},
                           {{E(1, 0, 0), E(1, 0, 1), E(1, 0, 2)}, {E(1, 1, 0), 0u, L(1, 1, 2)}, {L(1, 2, 0), L(1, 2, 1), L(1, 2, 2)}},
                           {{L(2, 0, 0), L(2, 0, 1), L(2, 0, 2)}, {L(2, 1, 0), L(2, 1, 1), L(2, 1, 2)}, {L(2, 2, 0), L(2, 2, 1), L(2, 2, 2)}}};
#undef E
#undef L
    if (edge) {
#pragma unroll
        for (int z = 0; z < 3; z++)
#pragma unroll
            for (int y = 0; y < 3; y++) {
                const unsigned row = out[z][y] ? HI : 0u;
                b[z][y][0] = patch<FLAGS>(b[z][y][0], row | (xl ? 0x80u : 0u));
                b[z][y][1] = patch<FLAGS>(b[z][y][1], row);
                b[z][y][2] = patch<FLAGS>(b[z][y][2], row | (xr ? 0x80000000u : 0u));
            }
    }
    const unsigned dd = b[0][1][1], u = b[2][1][1], no = b[1][0][1], so = b[1][2][1], w_ = b[1][1][0], e = b[1][1][2];
    up = u;
    const unsigned nw = b[1][0][0] & no & w_, ne = b[1][0][2] & no & e;
    const unsigned sw = b[1][2][0] & so & w_, se = b[1][2][2] & so & e;
    const unsigned dw = b[0][1][0] & dd & w_, de = b[0][1][2] & dd & e;
    const unsigned uw = b[2][1][0] & u & w_, ue = b[2][1][2] & u & e;
    const unsigned dn = b[0][0][1] & dd & no, ds = b[0][2][1] & dd & so;
    const unsigned un = b[2][0][1] & u & no, us = b[2][2][1] & u & so;
    const unsigned singles[6] = {dd, u, no, so, w_, e};
    const unsigned pairs[12] = {nw, ne, sw, se, dw, de, uw, ue, dn, ds, un, us};
    const unsigned corners[8] = {b[0][0][0] & nw & dw & dn, b[0][0][2] & ne & de & dn, b[0][2][0] & sw & dw & ds,
                                 b[0][2][2] & se & de & ds, b[2][0][0] & nw & uw & un, b[2][0][2] & ne & ue & un,
                                 b[2][2][0] & sw & uw & us, b[2][2][2] & se & ue & us};
    constexpr bool vert = (FLAGS & 2) != 0;
    // Two sums: what g adds (pos, from its constant) and what it subtracts (neg).
    unsigned pos = vert ? 0x0e0e0e0eu : 0x0c0c0c0cu, neg = 0;
#pragma unroll
    for (int i = 0; i < 6; i++) (vert ? neg : pos) = acc(singles[i], vert ? neg : pos);
#pragma unroll
    for (int i = 0; i < 8; i++) (vert ? neg : pos) = acc(corners[i], vert ? neg : pos);
#pragma unroll
    for (int i = 0; i < 12; i++) (vert ? pos : neg) = acc(pairs[i], vert ? pos : neg);
    return pos - neg;
}

// g = change + 13 for the four voxels of the centre word of p (the rows y - 1, y, y + 1) in 2D,
// and the centre's raw word in `raw`.
template <bool SIGNED, int FLAGS>
__device__ __forceinline__ unsigned change4_2d(const Plane& p, bool edge, const bool (&out)[3], bool xl,
                                                bool xr, unsigned& raw) {
    const Centre<SIGNED, FLAGS> c(p.top[1][1], p.low[1][1]);
    raw = c.raw;
#define E(y, x) precedes4<SIGNED, FLAGS, false>(c, p.top[y][x], p.low[y][x])
#define L(y, x) precedes4<SIGNED, FLAGS, true>(c, p.top[y][x], p.low[y][x])
    unsigned b[3][3] = {{E(0, 0), E(0, 1), E(0, 2)}, {E(1, 0), 0u, L(1, 2)}, {L(2, 0), L(2, 1), L(2, 2)}};
#undef E
#undef L
    if (edge) {
#pragma unroll
        for (int y = 0; y < 3; y++) {
            const unsigned row = out[y] ? HI : 0u;
            b[y][0] = patch<FLAGS>(b[y][0], row | (xl ? 0x80u : 0u));
            b[y][1] = patch<FLAGS>(b[y][1], row);
            b[y][2] = patch<FLAGS>(b[y][2], row | (xr ? 0x80000000u : 0u));
        }
    }
    const unsigned t = b[0][1], l = b[1][0], r = b[1][2], bo = b[2][1];
    // f = 1 - singles + pairs; change = f in 2D for both constructions: g = 14 - singles + pairs.
    const unsigned pos = acc(b[0][0] & t & l, acc(b[0][2] & t & r, acc(b[2][0] & bo & l, acc(b[2][2] & bo & r, 0x0e0e0e0eu))));
    const unsigned neg = acc(t, acc(l, acc(r, acc(bo, 0u))));
    return pos - neg;
}

// Row dy of `plane` from the row at `p` (a pointer to the thread's word): the voxels at x - 1,
// x and x + 1 byte for byte. The slab is padded so that the words before the first and after
// the last voxel can be read; what they hold is patched out.
template <bool SIGNED, int FLAGS>
__device__ __forceinline__ void row3(const unsigned char* __restrict__ p, Plane& plane, int dy) {
    const unsigned* q = reinterpret_cast<const unsigned*>(p);
    const unsigned left = __ldg(q - 1), mid = __ldg(q), right = __ldg(q + 1);
    const unsigned raw[3] = {__byte_perm(left, mid, 0x6543), mid, __byte_perm(mid, right, 0x4321)};
#pragma unroll
    for (int dx = 0; dx < 3; dx++) {
        plane.top[dy][dx] = Fill<SIGNED, FLAGS>::neighbour(raw[dx]);
        plane.low[dy][dx] = raw[dx] & ~HI;
    }
}

// Adds the four voxels of word `c` (raw samples) with their g to the shared histogram; a warp
// whose 128 voxels hold one value adds once.
template <bool SIGNED>
__device__ __forceinline__ void add4(unsigned* s_hist, unsigned c, unsigned g, bool valid) {
    const unsigned c0 = __shfl_sync(FULL, c, 0);
    const bool same = valid && c == c0 && c == (c & 0xffu) * 0x01010101u;
    if (__all_sync(FULL, same)) {
        // The four g of a word sum without carries (at most 4 * 26 < 256) into its top byte.
        unsigned s = (g * 0x01010101u) >> 24;
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(FULL, s, o);
        if ((threadIdx.x & 31) == 0) atomicAdd(&s_hist[(c & 0xffu) ^ (SIGNED ? 0x80u : 0u)], (128u << PCOUNT) + s);
    } else if (valid) {
        const unsigned bins = SIGNED ? c ^ HI : c;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            // (1 << PCOUNT) + byte i of g, by one byte permutation: byte 2 of the constant is 4.
            atomicAdd(&s_hist[__byte_perm(bins, 0, 0x4440 + i)], __byte_perm(g, 1u << PCOUNT, 0x4640 + i));
        }
    }
}

// The block's histogram into the global one: counts, and sums of changes = sum of g - 13 * count.
__device__ __forceinline__ void flush(const unsigned* s_hist, unsigned long long* __restrict__ counts,
                                      unsigned long long* __restrict__ sums) {
    __syncthreads();
    for (int i = threadIdx.y * PW + threadIdx.x; i < 256; i += PW * PH) {
        const unsigned h = s_hist[i];
        if (h == 0) continue;
        const long long n = h >> PCOUNT, sum = (long long)(h & ((1u << PCOUNT) - 1)) - 13 * n;
        atomicAdd(&counts[i], (unsigned long long)n);
        if (sum != 0) atomicAdd(&sums[i], (unsigned long long)sum);
    }
}

// Planes [z0 + blockIdx.z * PSTEPS, + PSTEPS) (up to z1) of rows blockIdx.y * PH + threadIdx.y.
template <bool SIGNED, int FLAGS>
__device__ void packed_3d_impl(const unsigned char* __restrict__ d, const Geo& g, int z1,
                               unsigned long long* __restrict__ counts, unsigned long long* __restrict__ sums,
                               unsigned* s_hist) {
    const int x = (blockIdx.x * PW + threadIdx.x) * 4, y = blockIdx.y * PH + threadIdx.y;
    const bool valid = x < g.nx && y < g.ny;
    // Threads past the field's edge load the edge's words (their results are dropped).
    const int xc = min(x, g.nx - 4), yc = min(y, g.ny - 1);
    const bool xl = xc == 0, xr = xc + 4 == g.nx, yl = yc == 0, yr = yc == g.ny - 1;
    const bool edge_xy = xl || xr || yl || yr;
    size_t rows[3];
#pragma unroll
    for (int dy = 0; dy < 3; dy++) rows[dy] = (size_t)min(max(yc + dy - 1, 0), g.ny - 1) * g.nx + xc;
    const size_t plane = (size_t)g.nx * g.ny;
    const int zb = g.z0 + blockIdx.z * PSTEPS;
    // The buffer holds planes [zs, ze); outside the volume the nearest plane is read, and patched.
    const int ze = min(g.nz, z1 + 1);
    Plane p[3];
    unsigned up = 0;
#pragma unroll
    for (int dz = 0; dz < 2; dz++)
#pragma unroll
        for (int dy = 0; dy < 3; dy++)
            row3<SIGNED, FLAGS>(d + (size_t)(min(max(zb + dz - 1, g.zs), ze - 1) - g.zs) * plane + rows[dy], p[dz + 1], dy);
#pragma unroll
    for (int k = 0; k < PSTEPS; k++) {
        const int z = zb + k;
        if (z >= z1) break;  // uniform across the block
        p[0] = p[1];
        p[1] = p[2];
        const unsigned char* next = d + (size_t)(min(z + 1, ze - 1) - g.zs) * plane;
#pragma unroll
        for (int dy = 0; dy < 3; dy++) row3<SIGNED, FLAGS>(next + rows[dy], p[2], dy);
        const bool zl = z == 0, zr = z + 1 == g.nz;
        const bool out[3][3] = {{zl || yl, zl, zl || yr}, {yl, false, yr}, {zr || yl, zr, zr || yr}};
        unsigned raw;
        const unsigned g3 = change4_3d<SIGNED, FLAGS>(p, edge_xy || zl || zr, out, xl, xr, k > 0, up ^ HI, up, raw);
        add4<SIGNED>(s_hist, raw, g3, valid);
    }
    flush(s_hist, counts, sums);
}

// Rows [blockIdx.y * PH * PSTEPS + threadIdx.y * PSTEPS, + PSTEPS) of a 2D field.
template <bool SIGNED, int FLAGS>
__device__ void packed_2d_impl(const unsigned char* __restrict__ d, const Geo& g,
                               unsigned long long* __restrict__ counts, unsigned long long* __restrict__ sums,
                               unsigned* s_hist) {
    const int x = (blockIdx.x * PW + threadIdx.x) * 4;
    const int yb = (blockIdx.y * PH + threadIdx.y) * PSTEPS;
    const int xc = min(x, g.nx - 4);
    const bool xl = xc == 0, xr = xc + 4 == g.nx;
    // Rows y - 1, y, y + 1 as the planes of the 3D kernel's rows.
    Plane p;
#pragma unroll
    for (int dy = 0; dy < 2; dy++) row3<SIGNED, FLAGS>(d + (size_t)min(max(yb + dy - 1, 0), g.ny - 1) * g.nx + xc, p, dy + 1);
#pragma unroll
    for (int k = 0; k < PSTEPS; k++) {
        const int y = yb + k;
        // Not uniform across the block (rows differ by thread), but every lane of a warp has the
        // same y, so the warp's shuffles below stay whole.
        if (y >= g.ny) break;
#pragma unroll
        for (int dx = 0; dx < 3; dx++) {
            p.top[0][dx] = p.top[1][dx];
            p.top[1][dx] = p.top[2][dx];
            p.low[0][dx] = p.low[1][dx];
            p.low[1][dx] = p.low[2][dx];
        }
        row3<SIGNED, FLAGS>(d + (size_t)min(y + 1, g.ny - 1) * g.nx + xc, p, 2);
        const bool out[3] = {y == 0, false, y + 1 == g.ny};
        const bool edge = xl || xr || y == 0 || y + 1 == g.ny;
        unsigned raw;
        const unsigned g2 = change4_2d<SIGNED, FLAGS>(p, edge, out, xl, xr, raw);
        add4<SIGNED>(s_hist, raw, g2, x < g.nx);
    }
    flush(s_hist, counts, sums);
}

#define PACKED_FLAGS(CALL)                                                                         \
    switch (g.flags) {                                                                             \
    case 0: CALL(0); break;                                                                        \
    case 1: CALL(1); break;                                                                        \
    case 2: CALL(2); break;                                                                        \
    default: CALL(3); break;                                                                       \
    }

template <bool SIGNED>
__device__ void packed_3d(const unsigned char* d, const Geo& g, int z1, unsigned long long* counts,
                          unsigned long long* sums) {
    __shared__ unsigned s_hist[256];
    for (int i = threadIdx.y * PW + threadIdx.x; i < 256; i += PW * PH) s_hist[i] = 0;
    __syncthreads();
#define P3(F) packed_3d_impl<SIGNED, F>(d, g, z1, counts, sums, s_hist)
    PACKED_FLAGS(P3)
#undef P3
}

template <bool SIGNED>
__device__ void packed_2d(const unsigned char* d, const Geo& g, unsigned long long* counts, unsigned long long* sums) {
    __shared__ unsigned s_hist[256];
    for (int i = threadIdx.y * PW + threadIdx.x; i < 256; i += PW * PH) s_hist[i] = 0;
    __syncthreads();
#define P2(F) packed_2d_impl<SIGNED, F>(d, g, counts, sums, s_hist)
    PACKED_FLAGS(P2)
#undef P2
}

// d: the slab with at least 4 readable bytes before its first and after its last sample; the
// launch covers planes [g.z0, z1) in 3D (blocks of PW x PH threads, ceil(planes / PSTEPS) in z).
// __launch_bounds__(..., 3): at most 80 registers, three blocks an SM. The planes' forms are
// then recomputed where they are used rather than held, which measured faster than two blocks
// an SM holding them (docs/PERFORMANCE.md).
#define PACKED_KERNELS(NAME, SIGNED)                                                               \
    extern "C" __global__ void __launch_bounds__(PW * PH, 3) packed_##NAME##_3d(                  \
        const unsigned char* d, Geo g, int z1, unsigned long long* counts, unsigned long long* sums) { \
        packed_3d<SIGNED>(d, g, z1, counts, sums);                                                 \
    }                                                                                              \
    extern "C" __global__ void __launch_bounds__(PW * PH, 3) packed_##NAME##_2d(                  \
        const unsigned char* d, Geo g, int z1, unsigned long long* counts, unsigned long long* sums) { \
        packed_2d<SIGNED>(d, g, counts, sums);                                                     \
    }

PACKED_KERNELS(u8, false)
PACKED_KERNELS(i8, true)

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
