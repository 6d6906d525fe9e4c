// Betti curves on the GPU: the merges of a growing set of voxels, counted per voxel, as the
// minimum spanning forest of the grid graph by Borůvka's algorithm (src/cuda/betti.rs drives it;
// src/topo/betti/sweep.rs is the CPU twin, a union-find in the same order).
//
// Each voxel v comes at a distinct time t[v] (its place in the sweep; NEVER: not in the sweep).
// An edge (u, v) of the grid graph comes with the later of its voxels; its key is
// (max(t[u], t[v]) << 32) | min(t[u], t[v]): distinct for distinct edges, ordered first by when
// the edge comes. With distinct keys the minimum spanning forest is unique, and Kruskal's merges
// in time order are its edges: the number of merges once t voxels are in is the number of its
// edges whose later voxel came before t. So each forest edge adds one to the count of its
// later voxel's time, and the order of work within a round does not matter.
//
// The node around the box (for the voids: every boundary voxel touches it) is vertex n, in from
// the start; its edge to voxel v has key (t[v] << 32) | AROUND_LO. It has no thread: the voxels
// on the boundary propose its edges for its component too.
//
// A round: every component finds its lightest outgoing edge (best: atomicMin over its voxels,
// then the voxel holding that edge writes the component at its other end), hooks onto that
// component (of two that chose each other, the lower id stays a root), and labels are
// shortened until every vertex points at its root. Components with an outgoing edge at least
// halve per round (6 or 7 rounds for a 256^3 random field).

#define NEVER 0xffffffffu
#define AROUND_LO 0xfffffffeu
#define NO_EDGE 0xffffffffffffffffull

struct Grid {
    int nx, ny, nz;
    int three_d;  // the box's z faces are boundary (for the node around)
    int full;     // 8 / 26 neighbours; else 4 / 6
    int around;   // vertex nx*ny*nz is the node around the box
};

__device__ __forceinline__ unsigned voxels(const Grid& g) { return (unsigned)g.nx * g.ny * g.nz; }

__device__ __forceinline__ unsigned long long edge_key(unsigned a, unsigned b) {
    unsigned hi = a > b ? a : b, lo = a > b ? b : a;
    return ((unsigned long long)hi << 32) | lo;
}

// Time of each voxel: forward, the finite voxels in order (NaN never comes); backward, the NaN
// voxels first, then the finite ones from the last. `order` lists the finite voxels in
// filtration order, then the NaN ones.
extern "C" __global__ void betti_times(const unsigned* __restrict__ order, unsigned n, unsigned finite, int backward,
                                       unsigned* __restrict__ time) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned v = order[i];
    if (!backward) {
        time[v] = i < finite ? i : NEVER;
    } else {
        time[v] = i < finite ? (n - finite) + (finite - 1 - i) : i - finite;
    }
}

// Calls f(neighbour index) for each neighbour of (x, y, z) inside the grid; returns whether the
// voxel lies on the box's boundary.
template <typename F>
__device__ __forceinline__ bool neighbours(const Grid& g, int x, int y, int z, F f) {
    for (int dz = -1; dz <= 1; dz++) {
        int zz = z + dz;
        if (zz < 0 || zz >= g.nz) continue;
        for (int dy = -1; dy <= 1; dy++) {
            int yy = y + dy;
            if (yy < 0 || yy >= g.ny) continue;
            for (int dx = -1; dx <= 1; dx++) {
                int xx = x + dx;
                if (xx < 0 || xx >= g.nx) continue;
                int steps = (dx != 0) + (dy != 0) + (dz != 0);
                if (steps == 0 || (!g.full && steps > 1)) continue;
                f((unsigned)xx + (unsigned)g.nx * ((unsigned)yy + (unsigned)g.ny * (unsigned)zz));
            }
        }
    }
    return x == 0 || x == g.nx - 1 || y == 0 || y == g.ny - 1 || (g.three_d && (z == 0 || z == g.nz - 1));
}

// The lightest edge from voxel v to another component, and that component (NO_EDGE if none);
// `around_key` gets the key of v's edge to the node around when v's component is not its.
__device__ __forceinline__ unsigned long long lightest(const Grid& g, unsigned v, const unsigned* __restrict__ time,
                                                       const unsigned* __restrict__ comp, unsigned* other,
                                                       unsigned long long* around_key) {
    *around_key = NO_EDGE;
    unsigned tv = time[v];
    if (tv == NEVER) return NO_EDGE;
    unsigned c = comp[v];
    int x = v % (unsigned)g.nx, y = (v / (unsigned)g.nx) % (unsigned)g.ny, z = v / ((unsigned)g.nx * g.ny);
    unsigned long long best = NO_EDGE;
    bool boundary = neighbours(g, x, y, z, [&](unsigned u) {
        unsigned tu = time[u];
        if (tu == NEVER) return;
        unsigned cu = comp[u];
        if (cu == c) return;
        unsigned long long k = edge_key(tv, tu);
        if (k < best) {
            best = k;
            *other = cu;
        }
    });
    if (g.around && boundary) {
        unsigned n = voxels(g);
        unsigned ca = comp[n];
        if (ca != c) {
            unsigned long long k = ((unsigned long long)tv << 32) | AROUND_LO;
            *around_key = k;
            if (k < best) {
                best = k;
                *other = ca;
            }
        }
    }
    return best;
}

// Each component's lightest outgoing edge, into best[root] (reset to NO_EDGE before); *found
// is set when any component has one.
extern "C" __global__ void betti_best(Grid g, const unsigned* __restrict__ time, const unsigned* __restrict__ comp,
                                      unsigned long long* best, unsigned* found) {
    unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= voxels(g)) return;
    unsigned other;
    unsigned long long around_key;
    unsigned long long k = lightest(g, v, time, comp, &other, &around_key);
    if (k != NO_EDGE) {
        atomicMin(&best[comp[v]], k);
        *found = 1;
    }
    if (around_key != NO_EDGE) atomicMin(&best[comp[voxels(g)]], around_key);
}

// The component at the other end of each component's lightest edge, written by the one voxel
// that holds it.
extern "C" __global__ void betti_target(Grid g, const unsigned* __restrict__ time, const unsigned* __restrict__ comp,
                                        const unsigned long long* __restrict__ best, unsigned* target) {
    unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= voxels(g)) return;
    unsigned other;
    unsigned long long around_key;
    unsigned long long k = lightest(g, v, time, comp, &other, &around_key);
    unsigned c = comp[v];
    if (k != NO_EDGE && best[c] == k) target[c] = other;
    if (around_key != NO_EDGE) {
        unsigned ca = comp[voxels(g)];
        if (best[ca] == around_key) target[ca] = c;
    }
}

// Roots hook onto the component their lightest edge reaches, counting the edge at its later
// voxel's time (one byte per time, four to a word: at most 27 merges at one time).
extern "C" __global__ void betti_hook(unsigned vertices, const unsigned long long* __restrict__ best,
                                      const unsigned* __restrict__ target, unsigned* comp, unsigned* merges) {
    unsigned c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= vertices || comp[c] != c || best[c] == NO_EDGE) return;
    unsigned t = target[c];
    // Two components that chose each other chose the same edge: count it once.
    if (target[t] == c && best[t] == best[c] && c < t) return;
    comp[c] = t;
    unsigned when = (unsigned)(best[c] >> 32);
    atomicAdd(&merges[when >> 2], 1u << ((when & 3) * 8));
}

// One step of shortening: each vertex points at its parent's parent; *changed when any moved.
extern "C" __global__ void betti_jump(unsigned vertices, unsigned* comp, unsigned* changed) {
    unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= vertices) return;
    unsigned p = comp[v], gp = comp[p];
    if (p != gp) {
        comp[v] = gp;
        *changed = 1;
    }
}

// Every vertex its own component.
extern "C" __global__ void betti_init(unsigned vertices, unsigned* comp) {
    unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < vertices) comp[v] = v;
}

// No component has an edge yet (before each round).
extern "C" __global__ void betti_reset(unsigned vertices, unsigned long long* best) {
    unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < vertices) best[v] = NO_EDGE;
}
