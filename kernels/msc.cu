// The discrete gradient of a lower-star filtration on the GPU: one thread per vertex runs
// ProcessLowerStars (Robins, Wood and Sheppard, TPAMI 2011) on the vertex's lower star.
//
// This is the CUDA twin of src/topo/msc/gradient.rs and must give the same codes bit for bit:
// * vertices are ordered by (key, voxel index), keys as in keys.cuh (to_key of
//   src/field/sample.rs); among a vertex's neighbours the voxel index orders as the slot does,
//   so ties are broken by slot;
// * lower-star cells are slots (dx + 1) + 3 (dy + 1) + 9 (dz + 1) of the doubled grid around
//   the vertex (slot 13), in the G-order: the ranks of their other corners among the lower
//   neighbours, highest first, one byte each from the top of a 64-bit integer;
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

// Vertex v's lower star, paired. `tb` is the block's copy of STAR in shared memory (threads
// index it by their own slots, which constant memory would serialise).
template <typename T>
__device__ void process_lower_star(const T* __restrict__ f, unsigned* __restrict__ codes, int nx, int ny, int nz,
                                   long long v, const StarTables& tb) {
    typedef typename Keys<T>::K K;
    const int x = (int)(v % nx), y = (int)((v / nx) % ny), z = (int)(v / ((long long)nx * ny));
    const K kv = Keys<T>::key(f[v], false);

    // The lower neighbours, sorted by (key, slot) as they are found (slots come in order, so
    // an equal key stays behind the ones before it).
    K key[26];
    unsigned char sl[26];
    int n = 0;
    for (int dz = z > 0 ? -1 : 0; dz <= (z + 1 < nz ? 1 : 0); dz++)
        for (int dy = y > 0 ? -1 : 0; dy <= (y + 1 < ny ? 1 : 0); dy++)
            for (int dx = x > 0 ? -1 : 0; dx <= (x + 1 < nx ? 1 : 0); dx++) {
                const int s = slot(dx, dy, dz);
                if (s == CENTER) continue;
                const K ku = Keys<T>::key(f[v + dx + (long long)nx * (dy + (long long)ny * dz)], false);
                if (!(ku < kv || (ku == kv && s < CENTER))) continue;
                int j = n++;
                while (j > 0 && key[j - 1] > ku) {
                    key[j] = key[j - 1];
                    sl[j] = sl[j - 1];
                    j--;
                }
                key[j] = ku;
                sl[j] = (unsigned char)s;
            }
    unsigned char rank[27];
    unsigned below = 0;
    for (int r = 0; r < n; r++) {
        rank[sl[r]] = (unsigned char)(r + 1);
        below |= 1u << sl[r];
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

    // The star: a cell is in it when every other corner is a lower neighbour; its G-order key.
    unsigned present = 1u << CENTER;
    unsigned long long order[27];
    for (unsigned m = ((1u << 27) - 1) & ~(1u << CENTER); m != 0; m &= m - 1) {
        const int s = __ffs(m) - 1;
        unsigned c = tb.corners[s];
        if (c & ~below) continue;
        unsigned char r[7];
        int k = 0;
        for (; c != 0; c &= c - 1) {
            const unsigned char q = rank[__ffs(c) - 1];
            int j = k++;
            while (j > 0 && r[j - 1] < q) {
                r[j] = r[j - 1];
                j--;
            }
            r[j] = q;
        }
        unsigned long long o = 0;
        for (int i = 0; i < k; i++) o |= (unsigned long long)r[i] << (56 - 8 * i);
        present |= 1u << s;
        order[s] = o;
    }
    // Lower neighbours only across diagonals leave the vertex alone in its star: a minimum.
    if (present == 1u << CENTER) {
        set(CENTER, CRITICAL);
        return;
    }

    auto min_of = [&](unsigned mask) -> int {
        int best = -1;
        for (; mask != 0; mask &= mask - 1) {
            const int s = __ffs(mask) - 1;
            if (best < 0 || order[s] < order[best]) best = s;
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
    if (threadIdx.x == 0) tb = STAR;
    __syncthreads();
    const long long n = (long long)nx * ny * nz;
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n; v += (long long)gridDim.x * blockDim.x)
        process_lower_star(f, codes, nx, ny, nz, v, tb);
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
