// Inter-pixel filtering on the GPU: the CUDA twin of src/topo/cracks (separable.rs and the
// steering in mod.rs), giving the same f32 results bit for bit: mirrored pairs summed in the
// order k = 1..r as acc = acc + w[k] * (a + b), round-to-nearest multiplies and adds (no fused
// multiply-add), clamped edges. One thread per pixel (pass A) or per crack (pass B, best).

#define ADD(a, b) __fadd_rn((a), (b))
#define SUB(a, b) __fsub_rn((a), (b))
#define MUL(a, b) __fmul_rn((a), (b))

__device__ __forceinline__ int clampi(int i, int n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }

// Pass A along the crack (x when along_y == 0, else y) of a w x h image: value s, derivative d
// and (when dd is not null) second derivative dd of the Gaussian. taps: g[0..r], gd[0..r],
// gdd[0..r].
extern "C" __global__ void cracks_pass_a(const float* __restrict__ img, float* __restrict__ s,
                                         float* __restrict__ d, float* __restrict__ dd, int w, int h,
                                         int along_y, const float* __restrict__ taps, int r) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    const float* g = taps;
    const float* gd = taps + (r + 1);
    const float* gdd = taps + 2 * (r + 1);
    const float c = img[(long long)y * w + x];
    float as = MUL(g[0], c), ad = 0.0f, add = MUL(gdd[0], c);
    for (int k = 1; k <= r; k++) {
        float p, m;
        if (along_y) {
            p = img[(long long)clampi(y + k, h) * w + x];
            m = img[(long long)clampi(y - k, h) * w + x];
        } else {
            p = img[(long long)y * w + clampi(x + k, w)];
            m = img[(long long)y * w + clampi(x - k, w)];
        }
        const float sum = ADD(p, m), diff = SUB(p, m);
        as = ADD(as, MUL(g[k], sum));
        ad = ADD(ad, MUL(gd[k], diff));
        if (dd) add = ADD(add, MUL(gdd[k], sum));
    }
    const long long i = (long long)y * w + x;
    s[i] = as;
    d[i] = ad;
    if (dd) dd[i] = add;
}

// Pass B across the cracks of one family (0: h, across y; 1: v, across x) from pass A's s, d,
// dd; half: g, gd, gdd at offsets j + 0.5 (j = 0..r-1). Writes gx, gy (and gxx, gxy, gyy when
// all != 0) to out[k * n + crack], n = cw * ch.
extern "C" __global__ void cracks_pass_b(const float* __restrict__ s, const float* __restrict__ d,
                                         const float* __restrict__ dd, float* __restrict__ out, int w,
                                         int h, int family, const float* __restrict__ half, int r, int all) {
    const int cw = family == 0 ? w : w - 1, ch = family == 0 ? h - 1 : h;
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= cw || y >= ch) return;
    const float* g = half;
    const float* gd = half + r;
    const float* gdd = half + 2 * r;
    float a = 0.0f, b = 0.0f, aa = 0.0f, ab = 0.0f, bb = 0.0f;
    for (int j = 0; j < r; j++) {
        long long hi, lo;
        if (family == 0) {
            hi = (long long)clampi(y + 1 + j, h) * w + x;
            lo = (long long)clampi(y - j, h) * w + x;
        } else {
            hi = (long long)y * w + clampi(x + 1 + j, w);
            lo = (long long)y * w + clampi(x - j, w);
        }
        const float va = MUL(g[j], ADD(d[hi], d[lo]));
        const float vb = MUL(gd[j], SUB(s[hi], s[lo]));
        a = j == 0 ? va : ADD(a, va);
        b = j == 0 ? vb : ADD(b, vb);
        if (all) {
            const float vaa = MUL(g[j], ADD(dd[hi], dd[lo]));
            const float vab = MUL(gd[j], SUB(d[hi], d[lo]));
            const float vbb = MUL(gdd[j], ADD(s[hi], s[lo]));
            aa = j == 0 ? vaa : ADD(aa, vaa);
            ab = j == 0 ? vab : ADD(ab, vab);
            bb = j == 0 ? vbb : ADD(bb, vbb);
        }
    }
    const long long n = (long long)cw * ch, i = (long long)y * cw + x;
    // Along/across to x/y: for h cracks pass A ran along x, for v along y.
    out[i] = family == 0 ? a : b;
    out[n + i] = family == 0 ? b : a;
    if (all) {
        out[2 * n + i] = family == 0 ? aa : bb;
        out[3 * n + i] = ab;
        out[4 * n + i] = family == 0 ? bb : aa;
    }
}

// Folds one scale (index si) into the running best of each crack: first holds, per channel,
// gx then gy (2 * n values each); dirs the (cos, sin) of each orientation. The energy across
// the crack (gy for h, gx for v, summed over channels) decides; the orientation is the most
// energetic steered direction at the winning scale.
extern "C" __global__ void cracks_best(const float* __restrict__ first, int channels, long long n, int family,
                                       const float* __restrict__ dirs, int orientations, int si,
                                       float* __restrict__ energy, unsigned short* __restrict__ orient,
                                       unsigned short* __restrict__ scale) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        float across = 0.0f;
        for (int c = 0; c < channels; c++) {
            const float r = first[(2 * (long long)c + (family == 0 ? 1 : 0)) * n + i];
            across = ADD(across, MUL(r, r));
        }
        // The first scale always writes (the CPU starts from -1, below any energy).
        if (si != 0 && !(across > energy[i])) continue;
        energy[i] = across;
        scale[i] = (unsigned short)si;
        float best = -1.0f;
        int bk = 0;
        for (int k = 0; k < orientations; k++) {
            const float co = dirs[2 * k], sn = dirs[2 * k + 1];
            float sum = 0.0f;
            for (int c = 0; c < channels; c++) {
                const float gx = first[2 * (long long)c * n + i], gy = first[(2 * (long long)c + 1) * n + i];
                const float r = ADD(MUL(co, gx), MUL(sn, gy));
                sum = ADD(sum, MUL(r, r));
            }
            if (sum > best) {
                best = sum;
                bk = k;
            }
        }
        orient[i] = (unsigned short)bk;
    }
}
