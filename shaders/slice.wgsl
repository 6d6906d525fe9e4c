// One slice of a volume texture, windowed through a colormap, with the threshold mask on top.
// The Rust side replaces TEXEL with u32, i32 or f32 to match the texture's sample type, and
// the mask test then compares in that type: integer data are compared exactly.

struct Params {
    // Plane coordinates (in voxels) at the view's centre, and the half extent of the view.
    center: vec2<f32>,
    half_extent: vec2<f32>,
    // Volume axes shown left-to-right (u) and bottom-to-top (v), the normal axis w, and the
    // slice index along w (full-resolution voxels).
    axes: vec4<u32>,
    // Full-resolution dims (x, y, z) and the display stride (texture = volume / stride).
    dims: vec4<u32>,
    window: vec2<f32>,
    colormap: u32,
    // Bits 0-1: 0 no mask, 1 value <= threshold, 2 value >= threshold, 3 every voxel.
    // Bit 2 (MASK_OUTLINE): also draw the set's boundary, opaque, about one pixel wide.
    mask_mode: u32,
    threshold: vec4<TEXEL>,
    mask_color: vec4<f32>,
    background: vec4<f32>,
};

// The row of Colormap::Labels in the lookup texture (render::colormap tests check it).
const LABELS_ROW: u32 = 5u;

@group(0) @binding(0) var<uniform> params: Params;
@group(1) @binding(0) var volume: texture_3d<TEXEL>;
@group(1) @binding(1) var lut: texture_2d<f32>;

struct VertexOut {
    @builtin(position) position: vec4<f32>,
    @location(0) ndc: vec2<f32>,
};

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> VertexOut {
    // A triangle strip covering the viewport: (-1,-1), (1,-1), (-1,1), (1,1).
    let ndc = vec2<f32>(f32(i & 1u) * 2.0 - 1.0, f32(i >> 1u) * 2.0 - 1.0);
    var out: VertexOut;
    out.position = vec4<f32>(ndc, 0.0, 1.0);
    out.ndc = ndc;
    return out;
}

// The sample of the slice at plane point p, if p lies inside the volume.
fn sample_at(p: vec2<f32>) -> vec2<u32> {
    let nu = f32(params.dims[params.axes.x]);
    let nv = f32(params.dims[params.axes.y]);
    if (p.x < 0.0 || p.y < 0.0 || p.x >= nu || p.y >= nv) {
        return vec2<u32>(0u, 0u);
    }
    var voxel = vec3<u32>(0u, 0u, 0u);
    voxel[params.axes.x] = u32(p.x);
    voxel[params.axes.y] = u32(p.y);
    voxel[params.axes.z] = params.axes.w;
    let size = textureDimensions(volume);
    let texel = min(voxel / params.dims.w, size - vec3<u32>(1u, 1u, 1u));
    return vec2<u32>(bitcast<u32>(textureLoad(volume, vec3<i32>(texel), 0).x), 1u);
}

// Whether a sample (its bits, as sample_at returns them) is in the threshold set.
fn in_set(s: vec2<u32>) -> bool {
    if (s.y == 0u) {
        return false;
    }
    let raw = bitcast<TEXEL>(s.x);
    switch params.mask_mode & 3u {
        case 1u: { return raw <= params.threshold.x; }
        case 2u: { return raw >= params.threshold.x; }
        case 3u: { return true; }
        default: { return false; }
    }
}

@fragment
fn fs_main(in: VertexOut) -> @location(0) vec4<f32> {
    let p = params.center + params.half_extent * in.ndc;
    // One screen pixel in plane units (taken before any branch, as derivatives need).
    let px = abs(dpdx(p.x)) + abs(dpdy(p.x));
    let py = abs(dpdx(p.y)) + abs(dpdy(p.y));
    let here = sample_at(p);
    if (here.y == 0u) {
        return params.background;
    }
    let raw = bitcast<TEXEL>(here.x);
    let value = f32(raw);
    let t = clamp((value - params.window.x) / max(params.window.y - params.window.x, 1e-30), 0.0, 1.0);
    // A NaN sample fails every comparison: it shows as the lowest colour and is never masked.
    var index = select(u32(t * 255.0 + 0.5), 0u, value != value);
    // The label map's palette (row LABELS_ROW) takes the id itself, unwindowed: 0 and negative
    // ids (none) black, id k in entry k mod 256.
    if (params.colormap == LABELS_ROW) {
        index = select(u32(max(value, 0.0)) % 256u, 0u, value != value);
    }
    var color = textureLoad(lut, vec2<i32>(i32(index), i32(params.colormap)), 0);
    let masked = in_set(here);
    if (masked) {
        color = vec4<f32>(mix(color.rgb, params.mask_color.rgb, params.mask_color.a), 1.0);
    }
    // The boundary: a pixel of the set with a neighbour pixel outside it (the volume's edge
    // included, so a set that reaches the border is closed there).
    if ((params.mask_mode & 4u) != 0u && masked) {
        let edge = !in_set(sample_at(p + vec2<f32>(px, 0.0))) || !in_set(sample_at(p - vec2<f32>(px, 0.0)))
            || !in_set(sample_at(p + vec2<f32>(0.0, py))) || !in_set(sample_at(p - vec2<f32>(0.0, py)));
        if (edge) {
            color = vec4<f32>(params.mask_color.rgb, 1.0);
        }
    }
    return vec4<f32>(color.rgb, 1.0);
}
