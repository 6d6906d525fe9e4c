// The discrete gradient of a lower-star filtration on the GPU: one thread per vertex runs
// ProcessLowerStars (Robins, Wood and Sheppard, TPAMI 2011) on the vertex's lower star.
//
// This is the CUDA twin of src/topo/msc/gradient.rs and must give the same codes bit for bit:
// * vertices are ordered by (key, voxel index), keys as in keys.cuh (to_key of
//   src/field/sample.rs); among a vertex's neighbours the voxel index orders as the slot does,
//   so ties are broken by slot;
// * lower-star cells are slots (dx + 1) + 3 (dy + 1) + 9 (dz + 1) of the doubled grid around
//   the vertex (slot 13), in the G-order: the descending lists of the ranks of their other
//   corners among the lower neighbours, compared lexicographically, a prefix first (the CPU
//   packs them as bytes from the top of a 64-bit integer, this kernel as bit masks of ranks:
//   see process_lower_star);
// * pairing: the vertex with its lowest edge, then every cell with exactly one unpaired facet
//   with it (lowest in the G-order first), cells with none become critical;
// * codes: 4 bits a cell (cell c in bits 4 (c % 8) of word c / 8, which is the CPU's byte
//   c / 2, nibble c % 2, on a little-endian host): CRITICAL, or PAIRED + 2 axis + (partner is
//   one step up). Every cell is written once, by the lower star of its highest corner, so an
//   atomic or into zeroed memory is the whole write.

#include "keys.cuh"

#define CENTER 13
#define CRITICAL 1u
#define PAIRED 2u

// Per slot: the slots of its facets that contain the vertex, the slots whose facets include it,
// the slots of its corners other than the vertex; and the slots of the edges.
struct StarTables {
    unsigned facets[27], cofacets[27], corners[27], edges;
};

__host__ __device__ constexpr int offset(int s, int axis) {
    return axis == 0 ? s % 3 - 1 : axis == 1 ? (s / 3) % 3 - 1 : s / 9 - 1;
}

__host__ __device__ constexpr int slot(int dx, int dy, int dz) { return (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1); }

constexpr StarTables star_tables() {
    StarTables t{};
    for (int s = 0; s < 27; s++) {
        const int d[3] = {offset(s, 0), offset(s, 1), offset(s, 2)};
        for (int a = 0; a < 3; a++) {
            if (d[a] != 0) {
                int e[3] = {d[0], d[1], d[2]};
                e[a] = 0;
                t.facets[s] |= 1u << slot(e[0], e[1], e[2]);
            }
        }
        for (int k = 1; k < 8; k++) {
            const int c = slot((k & 1) * d[0], ((k >> 1) & 1) * d[1], ((k >> 2) & 1) * d[2]);
            if (c != CENTER) t.corners[s] |= 1u << c;
        }
    }
    for (int s = 0; s < 27; s++) {
        for (int u = 0; u < 27; u++)
            if (t.facets[u] & (1u << s)) t.cofacets[s] |= 1u << u;
        int corners = 0;
        for (int k = 0; k < 27; k++) corners += (t.corners[s] >> k) & 1;
        if (corners == 1) t.edges |= 1u << s;
    }
    return t;
}

__constant__ StarTables STAR = star_tables();

// Threads a block of the gradient kernel (the host launches it with this many).
#define STAR_THREADS 256

// Keys of the gradient's comparisons: 32 bits where the type's keys fit (sublevel keys of
// 32-bit types are below 2^32), else the type's own.
template <typename T> struct StarKey { typedef typename Keys<T>::K K; };
template <> struct StarKey<unsigned int> { typedef unsigned K; };
template <> struct StarKey<int> { typedef unsigned K; };
template <> struct StarKey<float> { typedef unsigned K; };

// Vertex v's lower star, paired. `tb` is the block's copy of STAR in shared memory (threads
// index it by their own slots, which constant memory would serialise); `ord` is this thread's
// column of the block's G-order keys (slot s at ord[s * STAR_THREADS]), in shared memory because
// the pairing indexes it by slot: as a local array those loads diverged across the warp, and
// their traffic held the kernel at the L2's throughput (ncu, 2026-11-27).
//
// The G-order key of a star cell is the set of its other corners' ranks (1 for the lowest lower
// neighbour) as a bit mask: comparing masks as integers compares the descending lists of ranks
// lexicographically, a prefix first (the highest rank in one set and not the other decides).
// The neighbours' keys, ranks and masks are in registers: every loop over slots is unrolled.
template <typename T>
__device__ void process_lower_star(const T* __restrict__ f, unsigned* __restrict__ codes, int nx, int ny, int nz,
                                   long long v, const StarTables& tb, unsigned* __restrict__ ord) {
    typedef typename StarKey<T>::K K;
    const int x = (int)(v % nx), y = (int)((v / nx) % ny), z = (int)(v / ((long long)nx * ny));
    const K kv = (K)Keys<T>::key(f[v], false);

    // The lower neighbours, by slot: those inside the grid whose (key, voxel index) is below
    // the vertex's (the voxel index orders as the slot does).
    K key[27];
    unsigned below = 0;
#pragma unroll
    for (int s = 0; s < 27; s++) {
        if (s == CENTER) continue;
        const int dx = offset(s, 0), dy = offset(s, 1), dz = offset(s, 2);
        const bool in = (dx >= 0 || x > 0) && (dx <= 0 || x + 1 < nx) && (dy >= 0 || y > 0) && (dy <= 0 || y + 1 < ny) &&
                        (dz >= 0 || z > 0) && (dz <= 0 || z + 1 < nz);
        key[s] = in ? (K)Keys<T>::key(f[v + dx + (long long)nx * (dy + (long long)ny * dz)], false) : kv;
        if (in && (key[s] < kv || (key[s] == kv && s < CENTER))) below |= 1u << s;
    }
    // Ranks among the lower neighbours by (key, slot), each pair compared once.
    unsigned rank[27];
#pragma unroll
    for (int s = 0; s < 27; s++) rank[s] = 1;
#pragma unroll
    for (int s = 0; s < 27; s++) {
#pragma unroll
        for (int u = 0; u < s; u++) {
            if (s == CENTER || u == CENTER) continue;
            // (key u, u) < (key s, s) as u < s.
            const bool u_first = key[u] <= key[s];
            rank[s] += u_first && (below >> u & 1u);
            rank[u] += !u_first && (below >> s & 1u);
        }
    }
    // The star: a cell is in it when every other corner is a lower neighbour.
    unsigned present = 1u << CENTER;
#pragma unroll
    for (int s = 0; s < 27; s++) {
        if (s == CENTER) continue;
        const int d[3] = {offset(s, 0), offset(s, 1), offset(s, 2)};
        unsigned o = 0, corners = 0;
#pragma unroll
        for (int k = 1; k < 8; k++) {
            const int c = slot((k & 1) * d[0], ((k >> 1) & 1) * d[1], ((k >> 2) & 1) * d[2]);
            if (c == CENTER) continue;
            corners |= 1u << c;
            o |= 1u << rank[c];
        }
        if ((corners & ~below) == 0) {
            present |= 1u << s;
            ord[s * STAR_THREADS] = o;
        }
    }

    // The cell of a slot on the doubled grid.
    const long long cx = 2LL * nx - 1, cy = 2LL * ny - 1;
    const long long vc = 2LL * x + cx * (2LL * y + cy * 2LL * z);
    auto cell = [&](int s) -> long long { return vc + offset(s, 0) + cx * (offset(s, 1) + cy * offset(s, 2)); };
    auto set = [&](int s, unsigned code) {
        const long long c = cell(s);
        atomicOr(codes + (c >> 3), code << (4 * (c & 7)));
    };
    // Pairs a facet slot with a slot one dimension up: they differ by 1, 3 or 9 (the axis).
    auto pair = [&](int fa, int s) {
        const int d = s > fa ? s - fa : fa - s;
        const unsigned axis = d == 1 ? 0 : d == 3 ? 1 : 2, up = s > fa;
        set(fa, PAIRED + 2 * axis + up);
        set(s, PAIRED + 2 * axis + (1 - up));
    };

    // Lower neighbours only across diagonals leave the vertex alone in its star: a minimum.
    if (present == 1u << CENTER) {
        set(CENTER, CRITICAL);
        return;
    }

    auto min_of = [&](unsigned mask) -> int {
        int best = -1;
        unsigned least = 0;
        for (; mask != 0; mask &= mask - 1) {
            const int s = __ffs(mask) - 1;
            const unsigned o = ord[s * STAR_THREADS];
            if (best < 0 || o < least) best = s, least = o;
        }
        return best;
    };
    unsigned assigned = 0;
    // Star slots with exactly one unpaired facet among the cofacets of slot `of`.
    auto ready_cofacets = [&](int of) -> unsigned {
        unsigned out = 0;
        for (unsigned m = present & ~assigned & tb.cofacets[of]; m != 0; m &= m - 1) {
            const int s = __ffs(m) - 1;
            if (__popc(tb.facets[s] & ~assigned) == 1) out |= 1u << s;
        }
        return out;
    };

    const unsigned edges = present & tb.edges;
    const int delta = min_of(edges);
    pair(CENTER, delta);
    assigned |= 1u << CENTER | 1u << delta;
    unsigned pq_zero = edges & ~(1u << delta);
    unsigned pq_one = ready_cofacets(delta);
    while (pq_one != 0 || pq_zero != 0) {
        while (pq_one != 0) {
            const int a = min_of(pq_one);
            pq_one &= ~(1u << a);
            if (assigned & (1u << a)) continue;
            const unsigned faces = tb.facets[a] & ~assigned;
            if (faces == 0) {
                pq_zero |= 1u << a;
                continue;
            }
            const int face = __ffs(faces) - 1;
            pair(face, a);
            assigned |= 1u << face | 1u << a;
            pq_zero &= ~(1u << face);
            pq_one |= ready_cofacets(a) | ready_cofacets(face);
        }
        if (pq_zero != 0) {
            const int g = min_of(pq_zero);
            pq_zero &= ~(1u << g);
            if (assigned & (1u << g)) continue;
            set(g, CRITICAL);
            assigned |= 1u << g;
            pq_one |= ready_cofacets(g);
        }
    }
}

template <typename T>
__device__ void gradient(const T* __restrict__ f, unsigned* __restrict__ codes, int nx, int ny, int nz) {
    __shared__ StarTables tb;
    __shared__ unsigned ord[27 * STAR_THREADS];
    if (threadIdx.x == 0) tb = STAR;
    __syncthreads();
    const long long n = (long long)nx * ny * nz;
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n; v += (long long)gridDim.x * blockDim.x)
        process_lower_star(f, codes, nx, ny, nz, v, tb, ord + threadIdx.x);
}

#define GRADIENT(T, NAME)                                                                                  \
    extern "C" __global__ void gradient_##NAME(const T* __restrict__ f, unsigned* __restrict__ codes, int nx, \
                                               int ny, int nz) {                                           \
        gradient(f, codes, nx, ny, nz);                                                                    \
    }
GRADIENT(unsigned char, u8)
GRADIENT(signed char, i8)
GRADIENT(unsigned short, u16)
GRADIENT(short, i16)
GRADIENT(unsigned int, u32)
GRADIENT(int, i32)
GRADIENT(float, f32)
GRADIENT(double, f64)

// Manifold labels (the twin of basins and mountains in src/topo/msc/complex.rs): every vertex
// (top cell) points to the next one on its descending (ascending) V-path, the paths are
// shortened by pointer jumping until each element points at its extremum, and the extremum is
// replaced by its critical point id.

#define NO_LABEL 0xffffffffu

__device__ __forceinline__ unsigned code_of(const unsigned* __restrict__ codes, long long c) {
    return (codes[c >> 3] >> (4 * (c & 7))) & 0xfu;
}

// Per vertex, the vertex at the other end of the edge it pairs with (lower); itself at a minimum.
extern "C" __global__ void basin_next(const unsigned* __restrict__ codes, unsigned* __restrict__ next, int nx, int ny,
                                      int nz) {
    const long long n = (long long)nx * ny * nz, cx = 2LL * nx - 1, cy = 2LL * ny - 1;
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n; v += (long long)gridDim.x * blockDim.x) {
        const long long x = v % nx, y = (v / nx) % ny, z = v / ((long long)nx * ny);
        const unsigned k = code_of(codes, 2 * x + cx * (2 * y + cy * 2 * z));
        if (k < PAIRED) {
            next[v] = (unsigned)v;
            continue;
        }
        const unsigned axis = (k - PAIRED) / 2;
        const long long stride = axis == 0 ? 1 : axis == 1 ? nx : (long long)nx * ny;
        next[v] = (unsigned)(((k - PAIRED) % 2 == 1) ? v + stride : v - stride);
    }
}

// Per top cell of an `ndim`-dimensional grid (the dual grid: one fewer along each used axis),
// the top cell across the facet it pairs with; itself at a maximum, NO_LABEL where that facet
// is on the boundary.
extern "C" __global__ void mountain_next(const unsigned* __restrict__ codes, unsigned* __restrict__ next, int nx, int ny,
                                         int nz, int ndim) {
    const long long dx = nx - 1, dy = ny - 1, dz = ndim == 3 ? nz - 1 : 1;
    const long long n = dx * dy * dz, cx = 2LL * nx - 1, cy = 2LL * ny - 1;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const long long q[3] = {i % dx, (i / dx) % dy, i / (dx * dy)};
        const long long c = (2 * q[0] + 1) + cx * ((2 * q[1] + 1) + cy * (ndim == 3 ? 2 * q[2] + 1 : 0));
        const unsigned k = code_of(codes, c);
        if (k < PAIRED) {
            next[i] = (unsigned)i;
            continue;
        }
        const unsigned axis = (k - PAIRED) / 2;
        const long long dims[3] = {dx, dy, dz}, strides[3] = {1, dx, dx * dy};
        // The partner facet lies on the side the code names; the next top cell beyond it.
        const long long to = q[axis] + (((k - PAIRED) % 2 == 1) ? 1 : -1);
        next[i] = (to < 0 || to >= dims[axis]) ? NO_LABEL : (unsigned)(i + (to - q[axis]) * strides[axis]);
    }
}

// One round of pointer jumping: each element takes its successor's successor; `changed` is set
// when any element moved. Launched with whole warps (blocks of a multiple of 32 threads), which
// all reach the vote after the loop.
extern "C" __global__ void jump(unsigned* __restrict__ next, long long n, int* __restrict__ changed) {
    bool moved = false;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const unsigned x = next[i];
        if (x == NO_LABEL) continue;
        const unsigned y = next[x];
        if (y != x) {
            next[i] = y;
            moved = true;
        }
    }
    if (__any_sync(0xffffffffu, moved) && (threadIdx.x & 31) == 0) *changed = 1;
}

// Each element's extremum (an element of the ascending list `roots`, of length m) becomes
// `base` plus its place in the list.
extern "C" __global__ void label(unsigned* __restrict__ next, long long n, const unsigned* __restrict__ roots, int m,
                                 unsigned base) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const unsigned x = next[i];
        if (x == NO_LABEL) continue;
        int lo = 0, hi = m;
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (roots[mid] < x) lo = mid + 1;
            else hi = mid;
        }
        next[i] = (lo < m && roots[lo] == x) ? base + (unsigned)lo : NO_LABEL;
    }
}

// Saddle-saddle arcs of a 3D grid (the twin of morse::descending from 2-saddles): every
// 2-saddle's DAG of edges explored at once, level by level, in one hash table keyed by (saddle,
// edge); then paths counted in a topological order (Kahn's), and each arc's kept path walked
// back through the parents. The kept path is the CPU's: a shortest one, whose parent at each
// step back is the predecessor of smallest cell id among those one level less deep.
//
// The table's slots are nodes of 32 bytes, one memory sector: every access to a node after its
// probe touches the sector the probe read (four arrays of fields took 33.5 ms to explore the
// 256^3 GRF of the benchmark and 12.4 ms to count it on the H100). The host keeps the table at
// most 70% full, so a probe always ends.

#define EMPTY_KEY 0xffffffffffffffffull
#define UNSEEN 0xffffffffu

struct __align__(32) Node {
    unsigned long long key;    // saddle << 32 | cell; EMPTY_KEY where free
    unsigned long long paths;  // V-paths from the saddle (mod 2^64), once counting starts
    unsigned depth;            // steps from the saddle's facets; UNSEEN until written
    unsigned parent;           // the least predecessor one step less deep (atomicMin from UNSEEN)
    unsigned waiting;          // arcs into it not yet counted
    unsigned over;             // set where a count passed `most` (the host recounts the saddle)
};

extern "C" __global__ void ss_clear(Node* __restrict__ t, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        t[i] = Node{EMPTY_KEY, 0, UNSEEN, UNSEEN, 0, 0};
}

__device__ __forceinline__ unsigned long long slot_of(unsigned long long key, unsigned long long mask) {
    // The murmur3 finaliser: neighbouring cells of one saddle spread over the table.
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    key *= 0xc4ceb9fe1a85ec53ull;
    key ^= key >> 33;
    return key & mask;
}

// The slot of `key`, inserted if absent (`inserted` says which); -1 when no slot is free.
__device__ long long find_or_insert(Node* t, unsigned long long mask, unsigned long long key, bool* inserted) {
    unsigned long long s = slot_of(key, mask);
    for (unsigned long long probe = 0; probe <= mask; probe++, s = (s + 1) & mask) {
        // A key, once written, never changes: a stale read is EMPTY_KEY, which the CAS corrects.
        const unsigned long long k = t[s].key;
        if (k == key) {
            *inserted = false;
            return (long long)s;
        }
        if (k != EMPTY_KEY) continue;
        const unsigned long long old = atomicCAS(&t[s].key, EMPTY_KEY, key);
        if (old == EMPTY_KEY || old == key) {
            *inserted = old == EMPTY_KEY;
            return (long long)s;
        }
    }
    return -1;
}

// The slot of a key known to be in the table (whose other fields other threads may be updating).
__device__ unsigned long long find(const Node* t, unsigned long long mask, unsigned long long key) {
    unsigned long long s = slot_of(key, mask);
    while (t[s].key != key) s = (s + 1) & mask;
    return s;
}

// The doubled grid's geometry: its x and y sides and the strides of the three axes.
struct Cells {
    long long cx, cy;
    __device__ long long stride(int axis) const { return axis == 0 ? 1 : axis == 1 ? cx : cx * cy; }
    __device__ long long coord(long long c, int axis) const {
        return axis == 0 ? c % cx : axis == 1 ? (c / cx) % cy : c / (cx * cy);
    }
    // The cell `a` pairs with when that is one dimension up (a path goes on through it), else
    // -1 (critical, or paired downwards).
    __device__ long long up_partner(const unsigned* __restrict__ codes, long long a) const {
        const unsigned k = code_of(codes, a);
        if (k < PAIRED) return -1;
        const int axis = (k - PAIRED) / 2;
        // One step along an axis where `a` is even (it spans none) reaches a cell of one more dimension.
        if (coord(a, axis) % 2 != 0) return -1;
        return ((k - PAIRED) % 2 == 1) ? a + stride(axis) : a - stride(axis);
    }
    // The facets of `b` other than `a` (at most 5), into `out`; how many.
    __device__ int other_facets(long long b, long long a, long long* out) const {
        int n = 0;
        for (int axis = 0; axis < 3; axis++) {
            if (coord(b, axis) % 2 == 0) continue;
            const long long s = stride(axis);
            if (b - s != a) out[n++] = b - s;
            if (b + s != a) out[n++] = b + s;
        }
        return n;
    }
};

__device__ __forceinline__ unsigned long long with_cell(unsigned long long key, long long cell) {
    return (key & ~0xffffffffull) | (unsigned long long)cell;
}

// Level 0: each saddle's facets, depth 0, parent the saddle; pushed to `frontier`.
extern "C" __global__ void ss_seed(const unsigned* __restrict__ saddles, int n, Node* t, unsigned long long mask,
                                   long long cx, long long cy, unsigned* __restrict__ frontier,
                                   unsigned* __restrict__ count, int* __restrict__ full) {
    const Cells g{cx, cy};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        long long f[6];
        const int m = g.other_facets(saddles[i], -1, f);
        for (int k = 0; k < m; k++) {
            bool inserted;
            const long long s = find_or_insert(t, mask, (unsigned long long)i << 32 | (unsigned long long)f[k], &inserted);
            if (s < 0) {
                *full = 1;
                return;
            }
            t[s].depth = 0;
            t[s].parent = saddles[i];
            frontier[atomicAdd(count, 1u)] = (unsigned)s;
        }
    }
}

// One level: each frontier node's successors are found or inserted (depth `level` + 1, pushed
// to `next`), their `waiting` counts the arc, and a successor first seen at this level takes
// the node as parent if it is the smallest so far.
extern "C" __global__ void ss_expand(const unsigned* __restrict__ codes, const unsigned* __restrict__ frontier, int n,
                                     Node* t, unsigned long long mask, long long cx, long long cy, unsigned level,
                                     unsigned* __restrict__ next, unsigned* __restrict__ count, int* __restrict__ full) {
    const Cells g{cx, cy};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const unsigned long long key = t[frontier[i]].key;
        const long long a = (long long)(key & 0xffffffffull);
        const long long b = g.up_partner(codes, a);
        if (b < 0) continue;
        long long w[6];
        const int m = g.other_facets(b, a, w);
        for (int k = 0; k < m; k++) {
            bool inserted;
            const long long s = find_or_insert(t, mask, with_cell(key, w[k]), &inserted);
            if (s < 0) {
                *full = 1;
                return;
            }
            if (inserted) {
                t[s].depth = level + 1;
                next[atomicAdd(count, 1u)] = (unsigned)s;
            }
            atomicAdd(&t[s].waiting, 1u);
            // Written in an earlier launch, a depth is final; one written in this launch is
            // level + 1, and may still read UNSEEN.
            const unsigned d = ((volatile Node*)t)[s].depth;
            if (d == UNSEEN || d == level + 1) atomicMin(&t[s].parent, (unsigned)a);
        }
    }
}

// Moves a full table's nodes into a larger one (a larger power of two).
extern "C" __global__ void ss_rehash(const Node* __restrict__ t, unsigned long long n, Node* bigger,
                                     unsigned long long new_mask, int* __restrict__ full) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        if (t[i].key == EMPTY_KEY) continue;
        bool inserted;
        const long long s = find_or_insert(bigger, new_mask, t[i].key, &inserted);
        if (s < 0) {
            *full = 1;
            return;
        }
        bigger[s] = t[i];
    }
}

// The frontier's slots in the grown table.
extern "C" __global__ void ss_remap(const unsigned* __restrict__ frontier, int n, const Node* __restrict__ t,
                                    const Node* __restrict__ bigger, unsigned long long new_mask,
                                    unsigned* __restrict__ out) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = (unsigned)find(bigger, new_mask, t[frontier[i]].key);
}

// Before counting: one path to each saddle facet (from the saddle), none elsewhere; the
// sources (nothing waiting) pushed to `ready`.
extern "C" __global__ void ss_sources(Node* __restrict__ t, unsigned long long n, unsigned* __restrict__ ready,
                                      unsigned* __restrict__ count) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        if (t[i].key == EMPTY_KEY) continue;
        t[i].paths = t[i].depth == 0 ? 1 : 0;
        if (t[i].waiting == 0) ready[atomicAdd(count, 1u)] = (unsigned)i;
    }
}

// One round of counting: each ready node adds its paths to its successors' (flagging a sum
// past `most` or 2^64); a successor with nothing left waiting is ready next round.
extern "C" __global__ void ss_count(const unsigned* __restrict__ codes, const unsigned* __restrict__ ready, int n,
                                    Node* __restrict__ t, unsigned long long mask, long long cx, long long cy,
                                    unsigned long long most, unsigned* __restrict__ next, unsigned* __restrict__ count) {
    const Cells g{cx, cy};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const Node node = t[ready[i]];
        const long long a = (long long)(node.key & 0xffffffffull);
        const long long b = g.up_partner(codes, a);
        if (b < 0) continue;
        long long w[6];
        const int k = g.other_facets(b, a, w);
        for (int j = 0; j < k; j++) {
            const unsigned long long s = find(t, mask, with_cell(node.key, w[j]));
            const unsigned long long old = atomicAdd(&t[s].paths, node.paths);
            if (node.over || old + node.paths < old || old + node.paths > most) t[s].over = 1;
            if (atomicSub(&t[s].waiting, 1u) == 1) next[atomicAdd(count, 1u)] = (unsigned)s;
        }
    }
}

// The arcs: every critical cell in the table, with its key, paths, flag and depth.
extern "C" __global__ void ss_arcs(const unsigned* __restrict__ codes, const Node* __restrict__ t,
                                   unsigned long long n, unsigned long long* __restrict__ out_key,
                                   unsigned long long* __restrict__ out_paths, unsigned char* __restrict__ out_over,
                                   unsigned* __restrict__ out_depth, unsigned* __restrict__ count) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        const unsigned long long key = t[i].key;
        if (key == EMPTY_KEY || code_of(codes, (long long)(key & 0xffffffffull)) != CRITICAL) continue;
        const unsigned k = atomicAdd(count, 1u);
        out_key[k] = key;
        out_paths[k] = t[i].paths;
        out_over[k] = t[i].over != 0;
        out_depth[k] = t[i].depth;
    }
}

// Each arc's kept path, from the saddle to the target (2 depth + 2 cells from `offset`):
// walked back through the parents, each parent followed by the square it pairs with.
extern "C" __global__ void ss_paths(const unsigned* __restrict__ codes, const Node* __restrict__ t,
                                    unsigned long long mask, long long cx, long long cy,
                                    const unsigned long long* __restrict__ arc_key,
                                    const unsigned long long* __restrict__ offset, int n, unsigned* __restrict__ cells) {
    const Cells g{cx, cy};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        unsigned long long s = find(t, mask, arc_key[i]);
        unsigned long long at = offset[i] + 2ull * t[s].depth + 1;
        cells[at] = (unsigned)(arc_key[i] & 0xffffffffull);
        while (t[s].depth > 0) {
            const unsigned p = t[s].parent;
            cells[--at] = (unsigned)g.up_partner(codes, p);
            cells[--at] = p;
            s = find(t, mask, with_cell(arc_key[i], p));
        }
        cells[--at] = t[s].parent;
    }
}
