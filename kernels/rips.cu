// Vietoris-Rips apparent pairs (Ripser++, Zhang et al. 2020, section 4): one thread a column.
// The twin of `apparent_cofacet` in src/topo/rips/reduce.rs, which the tests hold it equal to.
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

extern "C" __global__ void rips_apparent(
    const float* __restrict__ lower,
    const u64* __restrict__ binom,
    int kw,
    int n,
    int dim,
    const u64* __restrict__ columns,
    const float* __restrict__ diameters,
    u64 count,
    u64* __restrict__ out)  // the cofacet's number, or ~0 for none
{
    for (u64 c = blockIdx.x * (u64)blockDim.x + threadIdx.x; c < count; c += (u64)gridDim.x * blockDim.x) {
        const u64 s = columns[c];
        const float diam = diameters[c];
        int sv[MAX_VERTICES];
        const int k = dim + 1;
        u64 idx = s;
        int top = n - 1;
        for (int i = 0; i < k; ++i) {
            int v = max_vertex(binom, kw, idx, k - i, top);
            sv[i] = v;
            idx -= binom[(u64)v * kw + (k - i)];
            top = v - 1;
        }
        // The earliest cofacet: the first v from the top within diam of every vertex of s.
        int found = -1;
        int at = 0;  // vertices of s above v
        for (int v = n - 1; v >= 0; --v) {
            if (at < k && sv[at] == v) { ++at; continue; }
            bool within = true;
            for (int i = 0; i < k; ++i) {
                if (dist(lower, v, sv[i]) > diam) { within = false; break; }
            }
            if (within) { found = v; break; }
        }
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
