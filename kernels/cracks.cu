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

// The three steps above fused for one scale and family: each block (TX x 8 threads) takes a
// tile of TX x TY cracks (TY / 8 rows a thread), loads the image around it into shared memory,
// runs pass A there, then pass B and the running best for its cracks, for every channel (at
// most MAXC), in the same operations and order as the separate kernels (so the same bits). img
// holds the channels one after another. Shared memory: the image tile, then s and d of the
// pass-A tile. Loops over the tiles are 2D (no integer division) and the per-crack arrays are
// indexed by unrolled constants (registers, not local memory).
#define TX 32
#define TY 32
#define ROWS (TY / 8)
#define MAXC 4

extern "C" __global__ void __launch_bounds__(256) cracks_fused(const float* __restrict__ img, int channels, int w, int h,
                                        int family, const float* __restrict__ taps,
                                        const float* __restrict__ half, int r, const float* __restrict__ dirs,
                                        int orientations, int si, float* __restrict__ energy,
                                        unsigned short* __restrict__ orient, unsigned short* __restrict__ scale) {
    extern __shared__ float sh[];
    const int cw = family == 0 ? w : w - 1, ch = family == 0 ? h - 1 : h;
    const int x0 = blockIdx.x * TX, y0 = blockIdx.y * TY;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x = x0 + tx;
    const float* g = taps;
    const float* gd = taps + (r + 1);
    const float* hg = half;
    const float* hgd = half + r;
    // Tile shapes. h: pass A along x for rows y0-r+1 .. y0+TY-1+r (clamped), columns x0..x0+TX-1;
    // v: pass A along y for rows y0..y0+TY-1, columns x0-r+1 .. x0+TX-1+r (clamped).
    const int arows = family == 0 ? TY + 2 * r - 1 : TY;
    const int acols = family == 0 ? TX : TX + 2 * r - 1;
    const int irows = family == 0 ? arows : TY + 2 * r;
    const int icols = family == 0 ? TX + 2 * r : acols;
    const int ay0 = family == 0 ? y0 - r + 1 : y0, ax0 = family == 0 ? x0 : x0 - r + 1;
    const int iy0 = family == 0 ? ay0 : y0 - r, ix0 = family == 0 ? x0 - r : ax0;
    float* ti = sh;
    float* ts = sh + irows * icols;
    float* td = ts + arows * acols;
    float gxs[MAXC][ROWS], gys[MAXC][ROWS];
#pragma unroll
    for (int c = 0; c < MAXC; c++) {
        if (c >= channels) break;
        const float* src = img + (long long)c * w * h;
        __syncthreads();
        for (int ir = ty; ir < irows; ir += 8) {
            const long long yy = clampi(iy0 + ir, h);
            for (int ic = tx; ic < icols; ic += TX) ti[ir * icols + ic] = src[yy * w + clampi(ix0 + ic, w)];
        }
        __syncthreads();
        // Pass A on the tile: the image tile holds each pixel's clamped neighbours, so this is
        // what the separate kernel computes at the (clamped) pixel.
        for (int ar = ty; ar < arows; ar += 8) {
            for (int ac = tx; ac < acols; ac += TX) {
                float as, ad = 0.0f;
                if (family == 0) {
                    const float* row = ti + ar * icols + ac + r;
                    as = MUL(g[0], row[0]);
                    for (int k = 1; k <= r; k++) {
                        const float p = row[k], m = row[-k];
                        as = ADD(as, MUL(g[k], ADD(p, m)));
                        ad = ADD(ad, MUL(gd[k], SUB(p, m)));
                    }
                } else {
                    const float* col = ti + (ar + r) * icols + ac;
                    as = MUL(g[0], col[0]);
                    for (int k = 1; k <= r; k++) {
                        const float p = col[k * icols], m = col[-k * icols];
                        as = ADD(as, MUL(g[k], ADD(p, m)));
                        ad = ADD(ad, MUL(gd[k], SUB(p, m)));
                    }
                }
                ts[ar * acols + ac] = as;
                td[ar * acols + ac] = ad;
            }
        }
        __syncthreads();
#pragma unroll
        for (int q = 0; q < ROWS; q++) {
            const int y = y0 + ty + 8 * q;
            float a = 0.0f, b = 0.0f;
            if (x < cw && y < ch) {
                for (int j = 0; j < r; j++) {
                    int hi, lo;
                    if (family == 0) {
                        // Rows y+1+j and y-j, clamped to the image, as tile rows.
                        hi = (clampi(y + 1 + j, h) - ay0) * acols + tx;
                        lo = (clampi(y - j, h) - ay0) * acols + tx;
                    } else {
                        hi = (y - y0) * acols + (clampi(x + 1 + j, w) - ax0);
                        lo = (y - y0) * acols + (clampi(x - j, w) - ax0);
                    }
                    const float va = MUL(hg[j], ADD(td[hi], td[lo]));
                    const float vb = MUL(hgd[j], SUB(ts[hi], ts[lo]));
                    a = j == 0 ? va : ADD(a, va);
                    b = j == 0 ? vb : ADD(b, vb);
                }
            }
            gxs[c][q] = family == 0 ? a : b;
            gys[c][q] = family == 0 ? b : a;
        }
    }
#pragma unroll
    for (int q = 0; q < ROWS; q++) {
        const int y = y0 + ty + 8 * q;
        if (x >= cw || y >= ch) continue;
        const long long i = (long long)y * cw + x;
        float across = 0.0f;
#pragma unroll
        for (int c = 0; c < MAXC; c++) {
            if (c >= channels) break;
            const float rr = family == 0 ? gys[c][q] : gxs[c][q];
            across = ADD(across, MUL(rr, rr));
        }
        if (si != 0 && !(across > energy[i])) continue;
        energy[i] = across;
        scale[i] = (unsigned short)si;
        float best = -1.0f;
        int bk = 0;
        for (int k = 0; k < orientations; k++) {
            const float co = dirs[2 * k], sn = dirs[2 * k + 1];
            float sum = 0.0f;
#pragma unroll
            for (int c = 0; c < MAXC; c++) {
                if (c >= channels) break;
                const float rr = ADD(MUL(co, gxs[c][q]), MUL(sn, gys[c][q]));
                sum = ADD(sum, MUL(rr, rr));
            }
            if (sum > best) {
                best = sum;
                bk = k;
            }
        }
        orient[i] = (unsigned short)bk;
    }
}
