// The 3D view: one ray per pixel through the volume texture, in voxel-index space (voxel i
// spans [i, i + 1) along each axis; the texture holds every `stride`-th voxel). The Rust side
// replaces TEXEL with u32, i32 or f32 to match the texture, so the "voxels" threshold mode
// compares integer data in their own type: the set drawn is exactly the set the ECC counts.
//
// Modes: 0 composite (emission-absorption through the transfer function), 1 maximum- and
// 2 minimum-intensity projection, 3 isosurface (first point >= iso, optional second translucent
// surface), 4 threshold set as a smooth surface, 5 threshold set as voxels (the boundary faces
// of the voxel set, found by walking the voxel grid).

struct Params {
    // Clip space to index space, and back.
    inv_mvp: mat4x4<f32>,
    mvp: mat4x4<f32>,
    // Index-space gradients to world-space normals (inverse transpose of the affine's linear
    // part), and index-space directions to world space.
    normal_mat: mat4x4<f32>,
    model: mat4x4<f32>,
    // Field dims (x, y, z) and the display stride.
    dims: vec4<u32>,
    // The clipping box in index space.
    clip_min: vec4<f32>,
    clip_max: vec4<f32>,
    // Slice planes (index space, x, y, z) and w > 0.5 to draw them.
    planes: vec4<f32>,
    // Display window low and high, the step in voxels, and the length (voxels) over which a
    // sample's table opacity applies.
    window: vec4<f32>,
    // Isovalue, second isovalue, its opacity, and w > 0.5 when the second surface is shown.
    iso: vec4<f32>,
    // Mode, threshold mask mode (0 none, 1 <=, 2 >=, 3 all), pixel jitter seed, skipping on.
    mode: vec4<u32>,
    // The threshold in the texture's own type (voxels mode).
    threshold: vec4<TEXEL>,
    // x: the level of the smooth threshold surface (between integers for integer data);
    // y > 0.5: caps, i.e. the set is closed where it meets the volume's or the clipping box
    // (else only faces between the set and its complement are drawn); z > 0.5: the voxels
    // mode colours each face by its texel's component (`parts`).
    threshold_f: vec4<f32>,
    surface: vec4<f32>,
    surface2: vec4<f32>,
    background: vec4<f32>,
};

@group(0) @binding(0) var<uniform> params: Params;
@group(1) @binding(0) var volume: texture_3d<TEXEL>;
@group(1) @binding(1) var table: texture_2d<f32>;
@group(1) @binding(2) var<storage, read> visible: array<u32, 256>;
@group(1) @binding(3) var bricks: texture_3d<f32>;
// The threshold set's components, a colour per texel (alpha 0: none); one texel when not shown.
@group(1) @binding(4) var parts: texture_3d<f32>;
// The image and its depth, written one pixel per invocation.
@group(2) @binding(0) var out_color: texture_storage_2d<rgba8unorm, write>;
@group(2) @binding(1) var out_depth: texture_storage_2d<r32float, write>;

const BRICK: f32 = 8.0;
// Threshold-set faces seen from inside the set (the ray started in it).
const INNER: vec3<f32> = vec3<f32>(0.35, 0.55, 0.95);
// A safety bound only: each ray's own bound is its length in steps.
const MAX_STEPS: i32 = 1000000;

// The ray's result: colour and depth (NDC z, 1 where nothing was hit).
struct Hit {
    color: vec4<f32>,
    depth: f32,
};

// NaN by its bits: WGSL lets an implementation assume no NaN, so `v != v` may fold to false.
fn is_nan(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

// 1 / d without infinities (a component of 0 becomes a huge step of the same use).
fn inverse_dir(d: vec3<f32>) -> vec3<f32> {
    return select(vec3<f32>(1e30), 1.0 / d, abs(d) > vec3<f32>(1e-12));
}

fn stride() -> f32 {
    return f32(params.dims.w);
}

fn texel_max() -> vec3<i32> {
    return vec3<i32>(textureDimensions(volume)) - vec3<i32>(1);
}

// The texel holding the voxel at index-space point p.
fn texel_at(p: vec3<f32>) -> vec3<i32> {
    return clamp(vec3<i32>(floor(p / stride())), vec3<i32>(0), texel_max());
}

fn load(c: vec3<i32>) -> f32 {
    return f32(textureLoad(volume, c, 0).x);
}

// Trilinear interpolation between texel centres.
fn sample(p: vec3<f32>) -> f32 {
    let u = p / stride() - vec3<f32>(0.5);
    let base = floor(u);
    let f = u - base;
    let hi = texel_max();
    let a = clamp(vec3<i32>(base), vec3<i32>(0), hi);
    let b = clamp(vec3<i32>(base) + vec3<i32>(1), vec3<i32>(0), hi);
    let c00 = mix(load(vec3<i32>(a.x, a.y, a.z)), load(vec3<i32>(b.x, a.y, a.z)), f.x);
    let c10 = mix(load(vec3<i32>(a.x, b.y, a.z)), load(vec3<i32>(b.x, b.y, a.z)), f.x);
    let c01 = mix(load(vec3<i32>(a.x, a.y, b.z)), load(vec3<i32>(b.x, a.y, b.z)), f.x);
    let c11 = mix(load(vec3<i32>(a.x, b.y, b.z)), load(vec3<i32>(b.x, b.y, b.z)), f.x);
    return mix(mix(c00, c10, f.y), mix(c01, c11, f.y), f.z);
}

// Central differences in index space, mapped to a world-space unit normal.
fn normal_at(p: vec3<f32>) -> vec3<f32> {
    // One voxel either side: half a voxel picks up the steps of quantised (8-bit) data.
    let h = stride();
    let g = vec3<f32>(
        sample(p + vec3<f32>(h, 0.0, 0.0)) - sample(p - vec3<f32>(h, 0.0, 0.0)),
        sample(p + vec3<f32>(0.0, h, 0.0)) - sample(p - vec3<f32>(0.0, h, 0.0)),
        sample(p + vec3<f32>(0.0, 0.0, h)) - sample(p - vec3<f32>(0.0, 0.0, h)),
    );
    let n = (params.normal_mat * vec4<f32>(g, 0.0)).xyz;
    let len = length(n);
    return select(vec3<f32>(0.0, 0.0, 1.0), n / len, len > 1e-20);
}

// The normal of the face crossed along index axis `axis`, in world space.
fn face_normal(axis: u32) -> vec3<f32> {
    var e = vec3<f32>(0.0);
    e[axis] = 1.0;
    return normalize((params.normal_mat * vec4<f32>(e, 0.0)).xyz);
}

// Headlight shading, two-sided: `view` is the world-space direction of the ray.
fn shade(base: vec3<f32>, n: vec3<f32>, view: vec3<f32>) -> vec3<f32> {
    let l = -view;
    let diffuse = abs(dot(n, l));
    let spec = pow(diffuse, 40.0);
    return base * (0.25 + 0.7 * diffuse) + vec3<f32>(0.25 * spec);
}

fn table_index(v: f32) -> i32 {
    let t = (v - params.window.x) / max(params.window.y - params.window.x, 1e-30);
    return clamp(i32(floor(t * 255.0 + 0.5)), 0, 255);
}

fn table_at(v: f32) -> vec4<f32> {
    return textureLoad(table, vec2<i32>(table_index(v), 0), 0);
}

// The brick holding index-space point p (bricks cover the texels a trilinear sample reads).
fn brick_of(p: vec3<f32>) -> vec3<i32> {
    let nb = vec3<i32>(textureDimensions(bricks)) - vec3<i32>(1);
    return clamp(vec3<i32>(floor((p / stride() - vec3<f32>(0.5)) / BRICK)), vec3<i32>(0), nb);
}

// Ray parameter where the ray leaves brick b (never behind t + step: see the caller).
fn brick_exit(o: vec3<f32>, d: vec3<f32>, b: vec3<i32>) -> f32 {
    let lo = (vec3<f32>(b) * BRICK + vec3<f32>(0.5)) * stride();
    let hi = lo + vec3<f32>(BRICK * stride());
    let inv = inverse_dir(d);
    let t1 = (lo - o) * inv;
    let t2 = (hi - o) * inv;
    let tmax = max(t1, t2);
    return min(tmax.x, min(tmax.y, tmax.z));
}

// Whether no sample in brick b can be seen in the current mode (first-hit modes: whether
// no sample in it lies on the other side from where the ray started).
fn brick_empty(b: vec3<i32>, best: f32, from_inside: bool) -> bool {
    let mm = textureLoad(bricks, b, 0).xy;
    if (mm.x > mm.y) {
        return true; // no finite sample at all
    }
    switch params.mode.x {
        case 0u: {
            let ka = table_index(mm.x);
            let kb = table_index(mm.y);
            let before = select(0u, visible[max(ka - 1, 0)], ka > 0);
            return visible[kb] == before;
        }
        case 1u: { return mm.y <= best; }
        case 2u: { return mm.x >= best; }
        case 3u: {
            // Looking for a change from the side the ray started on.
            if (from_inside) {
                return mm.x >= params.iso.x && (params.iso.w < 0.5 || mm.x >= params.iso.y);
            }
            var level = params.iso.x;
            if (params.iso.w > 0.5) {
                level = min(level, params.iso.y);
            }
            return mm.y < level;
        }
        case 4u: {
            let t = params.threshold_f.x;
            switch params.mode.y {
                case 1u: { return select((mm.x > t), (mm.y <= t), from_inside); }
                case 2u: { return select((mm.y < t), (mm.x >= t), from_inside); }
                case 3u: { return from_inside; }
                default: { return !from_inside; }
            }
        }
        default: { return false; }
    }
}

// Whether value v lies in the set a first-hit mode looks for.
fn inside(v: f32) -> bool {
    if (params.mode.x == 3u) {
        return v >= params.iso.x;
    }
    switch params.mode.y {
        case 1u: { return v <= params.threshold_f.x; }
        case 2u: { return v >= params.threshold_f.x; }
        case 3u: { return !is_nan(v); }
        default: { return false; }
    }
}

// How far back from the sample of value v, in steps (0..1), the values cross the level of the
// first-hit mode when the previous sample had value `prev`, taking them as linear in between.
fn crossing(prev: f32, v: f32) -> f32 {
    var level = params.threshold_f.x;
    if (params.mode.x == 3u) {
        level = params.iso.x;
    } else if (params.mode.y == 3u) {
        return 0.0; // the set of all finite samples has no level
    }
    if (abs(v - prev) < 1e-30) {
        return 0.0;
    }
    return clamp((v - level) / (v - prev), 0.0, 1.0);
}

fn member(raw: TEXEL) -> bool {
    switch params.mode.y {
        case 1u: { return raw <= params.threshold.x; }
        case 2u: { return raw >= params.threshold.x; }
        case 3u: { return !is_nan(f32(raw)); }
        default: { return false; }
    }
}

fn depth_of(p: vec3<f32>) -> f32 {
    let c = params.mvp * vec4<f32>(p, 1.0);
    return clamp(c.z / c.w, 0.0, 1.0);
}

// A small per-pixel offset of the first sample, so that slices of samples do not show as
// rings: an integer hash of the pixel (and of the frame while the camera moves), the same bits
// on every GPU and driver, unlike a hash built on sin().
fn jitter(pix: vec2<f32>) -> f32 {
    var h = u32(pix.x) * 1973u + u32(pix.y) * 9277u + params.mode.z * 26699u;
    h = (h ^ (h >> 16u)) * 0x45d9f3bu;
    h = (h ^ (h >> 16u)) * 0x45d9f3bu;
    h = h ^ (h >> 16u);
    return f32(h & 0xffffu) / 65536.0;
}

// A compute kernel, not a full-screen fragment shader: GPUs made for computing run fragment
// shaders on a few of their multiprocessors only (the H100 on 4 of 132), compute on all; on
// graphics GPUs the two cost the same. 8x8 pixels a workgroup keep neighbouring rays together.
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let size = textureDimensions(out_color);
    if (gid.x >= size.x || gid.y >= size.y) {
        return;
    }
    let pix = vec2<f32>(gid.xy) + vec2<f32>(0.5);
    let ndc = vec2<f32>(2.0 * pix.x / f32(size.x) - 1.0, 1.0 - 2.0 * pix.y / f32(size.y));
    let hit = cast_ray(ndc, pix);
    textureStore(out_color, gid.xy, hit.color);
    textureStore(out_depth, gid.xy, vec4<f32>(hit.depth, 0.0, 0.0, 0.0));
}

// The ray through the pixel centre `pix` (at `ndc` in clip space).
fn cast_ray(ndc: vec2<f32>, pix: vec2<f32>) -> Hit {
    var out: Hit;
    out.color = params.background;
    out.depth = 1.0;
    let n4 = params.inv_mvp * vec4<f32>(ndc, 0.0, 1.0);
    let f4 = params.inv_mvp * vec4<f32>(ndc, 1.0, 1.0);
    let o = n4.xyz / n4.w;
    let d = normalize(f4.xyz / f4.w - o);
    let view = normalize((params.model * vec4<f32>(d, 0.0)).xyz);
    let dims = vec3<f32>(params.dims.xyz);
    let bmin = max(params.clip_min.xyz, vec3<f32>(0.0));
    let bmax = min(params.clip_max.xyz, dims);
    if (any(bmin >= bmax)) {
        return out;
    }
    // Where the ray enters and leaves the (clipped) box, and which face it enters by.
    let inv = inverse_dir(d);
    let ta = (bmin - o) * inv;
    let tb = (bmax - o) * inv;
    let tlo = min(ta, tb);
    let thi = max(ta, tb);
    let t0 = max(max(tlo.x, tlo.y), max(tlo.z, 0.0));
    let t1 = min(thi.x, min(thi.y, thi.z));
    if (t0 >= t1) {
        return out;
    }
    // Whether the ray enters through a face of the box (not from a camera inside it): only
    // then is there a face to cap.
    let entered = max(tlo.x, max(tlo.y, tlo.z)) > 0.0;
    var entry_axis = 0u;
    if (tlo.y >= tlo.x && tlo.y >= tlo.z) {
        entry_axis = 1u;
    } else if (tlo.z >= tlo.x && tlo.z >= tlo.y) {
        entry_axis = 2u;
    }

    // The nearest slice plane inside the box: opaque, it ends the ray.
    var t_plane = t1;
    var plane_color = vec4<f32>(0.0);
    var plane_axis = 3u;
    if (params.planes.w > 0.5) {
        for (var a = 0u; a < 3u; a++) {
            if (abs(d[a]) < 1e-12) {
                continue;
            }
            let t = (params.planes[a] - o[a]) / d[a];
            let p = o + t * d;
            let e = 1e-3;
            if (t >= t0 && t < t_plane && all(p >= bmin - vec3<f32>(e)) && all(p <= bmax + vec3<f32>(e))) {
                t_plane = t;
                plane_axis = a;
            }
        }
        if (plane_axis < 3u) {
            let v = load(texel_at(o + t_plane * d));
            plane_color = vec4<f32>(table_at(v).rgb, 1.0);
            if (is_nan(v)) {
                plane_color = vec4<f32>(0.0, 0.0, 0.0, 1.0);
            }
        }
    }
    let mode = params.mode.x;
    // Projections see through the planes; every other mode stops at them.
    let t_end = select(t_plane, t1, mode == 1u || mode == 2u);
    let step = params.window.z;
    let skipping = params.mode.w == 1u;

    if (mode == 5u) {
        // Walk the texel grid (Amanatides and Woo) from the entry point: the first member
        // texel's entry face is the surface.
        let s = stride();
        let lo_cell = texel_at(bmin);
        let hi_cell = texel_at(bmax - vec3<f32>(1e-3));
        let p0 = o + (t0 + 1e-4) * d;
        var cell = clamp(texel_at(p0), lo_cell, hi_cell);
        let dir = vec3<i32>(sign(d));
        let next = (vec3<f32>(cell) + select(vec3<f32>(0.0), vec3<f32>(1.0), d > vec3<f32>(0.0))) * s;
        var tmax = select(vec3<f32>(1e30), (next - o) / d, abs(d) > vec3<f32>(1e-12));
        let tdelta = select(vec3<f32>(1e30), abs(vec3<f32>(s) / d), abs(d) > vec3<f32>(1e-12));
        var t_cell = t0;
        var axis = entry_axis;
        let limit = i32(dot(vec3<f32>(hi_cell - lo_cell), vec3<f32>(1.0))) + 4;
        let caps = params.threshold_f.y > 0.5 && entered;
        let start = member(textureLoad(volume, cell, 0).x);
        for (var i = 0; i < limit; i++) {
            if (t_cell >= t_end) {
                break;
            }
            let m = member(textureLoad(volume, cell, 0).x);
            if ((m && caps && i == 0) || m != start) {
                var base = select(INNER, params.surface.rgb, m);
                if (m && params.threshold_f.z > 0.5) {
                    let part = textureLoad(parts, cell, 0);
                    if (part.a > 0.5) {
                        base = part.rgb;
                    }
                }
                out.color = vec4<f32>(shade(base, face_normal(axis), view), 1.0);
                out.depth = depth_of(o + t_cell * d);
                return out;
            }
            if (tmax.x <= tmax.y && tmax.x <= tmax.z) {
                cell.x += dir.x; t_cell = tmax.x; tmax.x += tdelta.x; axis = 0u;
            } else if (tmax.y <= tmax.z) {
                cell.y += dir.y; t_cell = tmax.y; tmax.y += tdelta.y; axis = 1u;
            } else {
                cell.z += dir.z; t_cell = tmax.z; tmax.z += tdelta.z; axis = 2u;
            }
            if (any(cell < lo_cell) || any(cell > hi_cell)) {
                break;
            }
        }
        if (plane_axis < 3u) {
            out.color = plane_color;
            out.depth = depth_of(o + t_plane * d);
        }
        return out;
    }

    var acc = vec4<f32>(0.0);
    var best = select(3.4e38, -3.4e38, mode == 1u);
    var found = false;
    var depth_set = false;
    var t = t0 + step * jitter(pix);
    var prev = 0.0;
    var have_prev = false;
    let caps = params.threshold_f.y > 0.5 && entered;
    // First-hit modes look for the first change from the side the ray starts on.
    let from_inside = (mode == 3u || mode == 4u) && !caps && inside(sample(o + t * d));
    // Bounded by the ray's length in steps (plus the skips, each at least one step).
    let steps = min(i32(ceil((t_end - t0) / step)) + 2, MAX_STEPS);
    // The brick of the last sample and whether it was judged empty: a brick is judged once
    // per visit (for projections, against the best value when the ray entered it, which only
    // ever keeps a brick that could have been skipped).
    var brick = vec3<i32>(-1);
    var empty = false;
    for (var i = 0; i < steps; i++) {
        if (t >= t_end) {
            break;
        }
        let p = o + t * d;
        if (skipping) {
            let b = brick_of(p);
            if (any(b != brick)) {
                brick = b;
                empty = brick_empty(b, best, from_inside);
            }
            if (empty) {
                // Whole steps past the brick's exit keep this ray's jitter (samples on planes
                // parallel to the bricks would show as rings).
                let exit = brick_exit(o, d, b);
                t += max(ceil((exit - t) / step), 1.0) * step;
                have_prev = false;
                continue;
            }
        }
        let v = sample(p);
        if (is_nan(v)) {
            t += step;
            have_prev = false;
            continue;
        }
        switch mode {
            case 0u: {
                let c = table_at(v);
                if (c.a > 0.0) {
                    let a = 1.0 - pow(1.0 - min(c.a, 0.999), step / params.window.w);
                    acc = vec4<f32>(acc.rgb + (1.0 - acc.a) * a * c.rgb, acc.a + (1.0 - acc.a) * a);
                    if (!depth_set && acc.a >= 0.5) {
                        out.depth = depth_of(p);
                        depth_set = true;
                    }
                }
            }
            case 1u: { best = max(best, v); }
            case 2u: { best = min(best, v); }
            default: {
                // The second, translucent isosurface is crossed on the way to the first.
                if (mode == 3u && params.iso.w > 0.5 && have_prev && prev < params.iso.y && v >= params.iso.y) {
                    let a = params.iso.z;
                    let c = shade(params.surface2.rgb, normal_at(p), view);
                    acc = vec4<f32>(acc.rgb + (1.0 - acc.a) * a * c, acc.a + (1.0 - acc.a) * a);
                }
                if (inside(v) != from_inside) {
                    var hit = p;
                    var n = vec3<f32>(0.0);
                    if (!from_inside && !have_prev && t <= t0 + step) {
                        // Inside from the start: the cap where the box cuts the set.
                        hit = o + t0 * d;
                        n = face_normal(entry_axis);
                    } else if (have_prev) {
                        // Between the last sample on the starting side and this one, where the
                        // values, taken as linear along the step, cross the level.
                        hit = o + (t - step * crossing(prev, v)) * d;
                        n = normal_at(hit);
                    } else {
                        n = normal_at(hit);
                    }
                    var base = select(params.surface.rgb, table_at(sample(hit)).rgb, mode == 3u && params.surface.a < 0.5);
                    if (from_inside && mode == 4u) {
                        base = INNER;
                    }
                    let c = shade(base, n, view);
                    acc = vec4<f32>(acc.rgb + (1.0 - acc.a) * c, 1.0);
                    out.depth = depth_of(hit);
                    found = true;
                }
            }
        }
        if (found || acc.a >= 0.99) {
            break;
        }
        prev = v;
        have_prev = true;
        t += step;
    }
    if (mode == 1u || mode == 2u) {
        if (abs(best) < 3.0e38) {
            out.color = vec4<f32>(table_at(best).rgb, 1.0);
        }
        return out;
    }
    if (!found && plane_axis < 3u) {
        acc = vec4<f32>(acc.rgb + (1.0 - acc.a) * plane_color.rgb, 1.0);
        if (!depth_set) {
            out.depth = depth_of(o + t_plane * d);
        }
    }
    out.color = vec4<f32>(acc.rgb + (1.0 - acc.a) * params.background.rgb, 1.0);
    return out;
}
