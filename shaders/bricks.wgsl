// The coarse min/max grid of the 3D view's empty-space skipping: one entry per brick of 8^3
// texels, over the 9^3 texels a trilinear sample inside the brick can read (the brick and the
// first texel of the next). NaN samples are left out; a brick without a finite sample gets
// min > max, which every test reads as empty. Integer texels become f32: rounding keeps
// order, so a brick is never judged empty when one of its samples qualifies.
// The Rust side replaces TEXEL with u32, i32 or f32.

@group(0) @binding(0) var volume: texture_3d<TEXEL>;
@group(0) @binding(1) var bricks: texture_storage_3d<rg32float, write>;

@compute @workgroup_size(4, 4, 4)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let nb = textureDimensions(bricks);
    if (any(id >= nb)) {
        return;
    }
    let last = vec3<i32>(textureDimensions(volume)) - vec3<i32>(1);
    let lo = vec3<i32>(id) * 8;
    let hi = min(lo + vec3<i32>(8), last);
    var mn = 3.4e38;
    var mx = -3.4e38;
    for (var z = lo.z; z <= hi.z; z++) {
        for (var y = lo.y; y <= hi.y; y++) {
            for (var x = lo.x; x <= hi.x; x++) {
                let v = f32(textureLoad(volume, vec3<i32>(x, y, z), 0).x);
                // NaN by its bits (WGSL may assume no NaN in comparisons).
                if ((bitcast<u32>(v) & 0x7fffffffu) <= 0x7f800000u) {
                    mn = min(mn, v);
                    mx = max(mx, v);
                }
            }
        }
    }
    textureStore(bricks, vec3<i32>(id), vec4<f32>(mn, mx, 0.0, 0.0));
}
