// Marks in the 3D view (critical points as discs facing the camera, arcs as lines), drawn into
// the ray marcher's image after it. Each fragment is tested against the ray marcher's depth
// image (NDC z of the first surface, or where a composite ray passes half opacity), so the
// volume hides what lies behind what it shows. Positions are in voxel-index space, as the ray
// marcher's `mvp` expects.

struct Params {
    mvp: mat4x4<f32>,
    // The image's size in pixels (x, y).
    viewport: vec4<f32>,
    // The clipping box in index space: marks outside it are cut away with the volume.
    clip_min: vec4<f32>,
    clip_max: vec4<f32>,
};

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var depth_image: texture_2d<f32>;

// Whether the volume hides the fragment at `pos` (its framebuffer position), or the clipping
// box cuts away its point `p` (index space).
fn hidden(pos: vec4<f32>, p: vec3<f32>) -> bool {
    if (any(p < params.clip_min.xyz) || any(p > params.clip_max.xyz)) {
        return true;
    }
    let d = textureLoad(depth_image, vec2<i32>(pos.xy), 0).x;
    return pos.z > d + 1e-5;
}

struct PointOut {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec4<f32>,
    // The corner of the disc's square, -1..1 on each axis.
    @location(1) local: vec2<f32>,
    // The disc's centre in index space.
    @location(2) center: vec3<f32>,
};

@vertex
fn vs_point(
    @builtin(vertex_index) i: u32,
    @location(0) p: vec3<f32>,
    @location(1) radius: f32,
    @location(2) color: vec4<f32>,
) -> PointOut {
    let corner = vec2<f32>(f32(i & 1u) * 2.0 - 1.0, f32(i >> 1u) * 2.0 - 1.0);
    let c = params.mvp * vec4<f32>(p, 1.0);
    // A radius in pixels: an offset in clip space scaled by w stays that size on screen.
    let offset = corner * radius * 2.0 / params.viewport.xy * c.w;
    var out: PointOut;
    out.position = vec4<f32>(c.xy + offset, c.z, c.w);
    out.color = color;
    out.local = corner;
    out.center = p;
    return out;
}

@fragment
fn fs_point(in: PointOut) -> @location(0) vec4<f32> {
    let r2 = dot(in.local, in.local);
    if (r2 > 1.0 || hidden(in.position, in.center)) {
        discard;
    }
    // A dark rim, as the slice views draw them.
    let rgb = select(in.color.rgb, vec3<f32>(0.0), r2 > 0.55);
    return vec4<f32>(rgb, in.color.a);
}

struct LineOut {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec4<f32>,
    @location(1) p: vec3<f32>,
};

@vertex
fn vs_line(@location(0) p: vec3<f32>, @location(1) color: vec4<f32>) -> LineOut {
    var out: LineOut;
    out.position = params.mvp * vec4<f32>(p, 1.0);
    out.color = color;
    out.p = p;
    return out;
}

@fragment
fn fs_line(in: LineOut) -> @location(0) vec4<f32> {
    if (hidden(in.position, in.p)) {
        discard;
    }
    return in.color;
}
