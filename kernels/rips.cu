// Vietoris-Rips on the GPU (Ripser++, Zhang et al. 2020, sections 4-5): apparent pairs, one thread
// a column, and the next dimension's columns listed, one warp a simplex.
// The twins of `apparent::cofacet` and `reduce::next_columns` in src/topo/rips, which
// tests/cuda.rs holds them equal to.
//
// Simplices are numbered by the combinatorial number system: the simplex with vertices
// v_k > ... > v_1 is C(v_k, k) + ... + C(v_1, 1); `binom[v * kw + k]` is C(v, k). Distances
// are the lower triangle row by row: d(i, j) for i > j at i (i - 1) / 2 + j.
//
// A column s (dimension `dim`, diameter diam) pairs apparently with t when t is its earliest
// cofacet (smallest diameter, then largest number), t has s's diameter, and s is t's youngest
// facet (of t's diameter, smallest number). Cofacets s + {v} come in decreasing number as v
// goes down from n - 1, so the first v whose distances to s's vertices are all within diam
// gives t.

#define MAX_VERTICES 5  // a cofacet of dimension 4 at most (columns of dimension 3)

typedef unsigned long long u64;

__device__ __forceinline__ float dist(const float* lower, int i, int j) {
    if (i == j) return 0.0f;
    if (i < j) { int t = i; i = j; j = t; }
    return lower[(u64)i * (u64)(i - 1) / 2 + (u64)j];
}

// The largest v in [k - 1, top] with C(v, k) <= idx.
__device__ __forceinline__ int max_vertex(const u64* binom, int kw, u64 idx, int k, int top) {
    int lo = k - 1, hi = top;
    while (lo < hi) {
        int mid = hi - (hi - lo) / 2;
        if (binom[(u64)mid * kw + k] <= idx) lo = mid; else hi = mid - 1;
    }
    return lo;
}

// The k vertices of simplex s, largest first.
__device__ __forceinline__ void vertices_of(const u64* binom, int kw, int n, u64 s, int k, int* sv) {
    int top = n - 1;
    for (int i = 0; i < k; ++i) {
        int v = max_vertex(binom, kw, s, k - i, top);
        sv[i] = v;
        s -= binom[(u64)v * kw + (k - i)];
        top = v - 1;
    }
}

// The neighbours of every point within the threshold, by increasing index (the sparse
// matrix, src/topo/rips/index.rs's Neighbors), or none (start == 0): every point is tried.
struct Neighbours {
    const u64* start;  // n + 1 offsets
    const unsigned* vertex;
    const float* dist;
};

// The distance matrix of a complex with neighbour lists, built on the device from them (instead
// of uploading the whole lower triangle: 73 MB for 6,040 points, where the lists are 2 MB).
// Pairs beyond the threshold read +inf, which every kernel here treats as it treats a true
// distance beyond the threshold: a simplex with such an edge is left out.
extern "C" __global__ void rips_fill(float* __restrict__ out, u64 count, float value) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x)
        out[i] = value;
}

// One thread a point: its neighbours below it, into its row of the lower triangle.
extern "C" __global__ void rips_scatter_neighbours(
    float* __restrict__ lower,
    int n,
    const u64* __restrict__ nb_start,
    const unsigned* __restrict__ nb_vertex,
    const float* __restrict__ nb_dist)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const u64 row = (u64)i * (u64)(i - 1) / 2;
        for (u64 e = nb_start[i]; e < nb_start[i + 1]; ++e) {
            const unsigned j = nb_vertex[e];
            if ((int)j >= i) break;  // the list is by increasing index
            lower[row + j] = nb_dist[e];
        }
    }
}

// The largest vertex w, not one of tv (k vertices, largest first), within diam of every one
// of them, or -1: the vertex the first cofacet of tv's diameter adds (`first_joining` in
// src/topo/rips/apparent.rs). diam is within the threshold, so with neighbour lists every
// candidate is in tv[0]'s.
__device__ int first_joining(const float* lower, Neighbours nb, int n, const int* tv, int k, float diam) {
    if (nb.start) {
        for (u64 e = nb.start[tv[0] + 1]; e-- > nb.start[tv[0]];) {
            if (nb.dist[e] > diam) continue;
            int w = (int)nb.vertex[e];
            bool ok = true;
            for (int i = 1; i < k && ok; ++i) ok = tv[i] != w && dist(lower, w, tv[i]) <= diam;
            if (ok) return w;
        }
        return -1;
    }
    int at = 0;
    for (int w = n - 1; w >= 0; --w) {
        if (at < k && tv[at] == w) { ++at; continue; }
        bool ok = true;
        for (int i = 0; i < k && ok; ++i) ok = dist(lower, w, tv[i]) <= diam;
        if (ok) return w;
    }
    return -1;
}

extern "C" __global__ void rips_apparent(
    const float* __restrict__ lower,
    const u64* __restrict__ binom,
    int kw,
    int n,
    int dim,
    const u64* __restrict__ nb_start,
    const unsigned* __restrict__ nb_vertex,
    const float* __restrict__ nb_dist,
    const u64* __restrict__ columns,
    const float* __restrict__ diameters,
    u64 count,
    u64* __restrict__ out)  // the cofacet's number, or ~0 for none
{
    const Neighbours nb = {nb_start, nb_vertex, nb_dist};
    for (u64 c = blockIdx.x * (u64)blockDim.x + threadIdx.x; c < count; c += (u64)gridDim.x * blockDim.x) {
        const u64 s = columns[c];
        const float diam = diameters[c];
        int sv[MAX_VERTICES];
        const int k = dim + 1;
        vertices_of(binom, kw, n, s, k, sv);
        // The earliest cofacet: the first v from the top within diam of every vertex of s
        // (among the neighbours of its largest vertex, when the complex has neighbour lists).
        const int found = first_joining(lower, nb, n, sv, k, diam);
        u64 result = ~0ull;
        if (found >= 0) {
            // t's vertices, largest first.
            int tv[MAX_VERTICES];
            int m = 0;
            bool placed = false;
            for (int i = 0; i < k; ++i) {
                if (!placed && found > sv[i]) { tv[m++] = found; placed = true; }
                tv[m++] = sv[i];
            }
            if (!placed) tv[m++] = found;
            u64 t = 0;
            for (int i = 0; i < m; ++i) t += binom[(u64)tv[i] * kw + (m - i)];
            // s must be t's youngest facet of diameter diam (the smallest number).
            u64 youngest = ~0ull;
            for (int skip = 0; skip < m; ++skip) {
                float fd = 0.0f;
                u64 f = 0;
                int pos = 0;
                for (int i = 0; i < m; ++i) {
                    if (i == skip) continue;
                    for (int j = i + 1; j < m; ++j) {
                        if (j == skip) continue;
                        fd = fmaxf(fd, dist(lower, tv[i], tv[j]));
                    }
                    f += binom[(u64)tv[i] * kw + (k - pos)];
                    ++pos;
                }
                if (fd == diam && f < youngest) youngest = f;
            }
            if (youngest == s) result = t;
        }
        out[c] = result;
    }
}

// Whether the simplex tv (k vertices, largest first, diameter diam) has an apparent cofacet
// (`cofacet_vertex` in src/topo/rips/apparent.rs): the first cofacet of its diameter adds w,
// and every facet of tv + w that trades one of tv's vertices above w for w (those numbered
// below tv) has a smaller diameter.
__device__ bool has_apparent_cofacet(const float* lower, Neighbours nb, int n, const int* tv, int k, float diam) {
    int w = first_joining(lower, nb, n, tv, k, diam);
    if (w < 0) return false;
    for (int skip = 0; skip < k && tv[skip] > w; ++skip) {
        // The facet without tv[skip]: w and the other vertices of tv.
        float fd = 0.0f;
        for (int i = 0; i < k; ++i) {
            if (i == skip) continue;
            fd = fmaxf(fd, dist(lower, w, tv[i]));
            for (int j = i + 1; j < k; ++j) {
                if (j != skip) fd = fmaxf(fd, dist(lower, tv[i], tv[j]));
            }
        }
        if (fd >= diam) return false;
    }
    return true;
}

__device__ __forceinline__ bool is_cleared(const u64* cleared, u64 count, u64 t) {
    u64 lo = 0, hi = count;
    while (lo < hi) {
        u64 mid = lo + (hi - lo) / 2;
        if (cleared[mid] < t) lo = mid + 1; else hi = mid;
    }
    return lo < count && cleared[lo] == t;
}

// Appends (t, diam) to a list of cap entries; past cap only counts, and the host runs again.
__device__ __forceinline__ void append(u64* index, float* diam, unsigned long long* count, u64 cap, u64 t, float d) {
    u64 at = atomicAdd(count, 1ull);
    if (at < cap) { index[at] = t; diam[at] = d; }
}

// The next dimension's columns from the simplices of dimension dim (`next_columns` in
// src/topo/rips/reduce.rs, Ripser++'s filtration construction): one warp a simplex s, its
// lanes taking every 32nd candidate vertex (a simplex has up to n candidates, and a thread
// each left most of the GPU idle for a few tens of thousands of edges); each cofacet met
// once, from the facet without its largest vertex (the added vertex v above all of s's). A cofacet within the threshold goes to `next` (unless top: the highest dimension
// keeps none) and, unless it is a pivot of dimension dim (`cleared`, sorted) or, when top,
// has an apparent cofacet, to the columns. Neither list is in any order.
extern "C" __global__ void rips_columns(
    const float* __restrict__ lower,
    const u64* __restrict__ binom,
    int kw,
    int n,
    int dim,
    float threshold,
    const u64* __restrict__ nb_start,
    const unsigned* __restrict__ nb_vertex,
    const float* __restrict__ nb_dist,
    const u64* __restrict__ simplices,
    const float* __restrict__ diameters,
    u64 count,
    const u64* __restrict__ cleared,
    u64 cleared_count,
    int top,
    u64* __restrict__ col_index,
    float* __restrict__ col_diam,
    unsigned long long* col_count,
    u64 col_cap,
    u64* __restrict__ next_index,
    float* __restrict__ next_diam,
    unsigned long long* next_count,
    u64 next_cap)
{
    const Neighbours nb = {nb_start, nb_vertex, nb_dist};
    const int k = dim + 1;
    const unsigned lane = threadIdx.x & 31;
    const u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
    for (u64 c = (blockIdx.x * (u64)blockDim.x + threadIdx.x) >> 5; c < count; c += warps) {
        const u64 s = simplices[c];
        const float sdiam = diameters[c];
        int tv[MAX_VERTICES];
        vertices_of(binom, kw, n, s, k, tv + 1);
        const u64 above = nb.start ? nb.start[tv[1] + 1] : (u64)n;
        const u64 below = nb.start ? nb.start[tv[1]] : (u64)tv[1] + 1;
        // The candidates from the largest down (neighbour lists hold every point by
        // increasing index), lane by lane.
        for (u64 j = lane; j < above - below; j += 32) {
            const u64 e = above - 1 - j;
            int v;
            float d0;
            if (nb.start) {
                v = (int)nb.vertex[e];
                if (v <= tv[1]) break;
                d0 = nb.dist[e];
            } else {
                v = (int)e;
                d0 = dist(lower, v, tv[1]);
            }
            if (d0 > threshold) continue;
            float diam = fmaxf(sdiam, d0);
            bool within = true;
            for (int i = 2; i <= k && within; ++i) {
                float di = dist(lower, v, tv[i]);
                within = di <= threshold;
                diam = fmaxf(diam, di);
            }
            if (!within) continue;
            tv[0] = v;
            const u64 t = binom[(u64)v * kw + k + 1] + s;
            if (!top) append(next_index, next_diam, next_count, next_cap, t, diam);
            if (is_cleared(cleared, cleared_count, t)) continue;
            if (top && has_apparent_cofacet(lower, nb, n, tv, k + 1, diam)) continue;
            append(col_index, col_diam, col_count, col_cap, t, diam);
        }
    }
}
