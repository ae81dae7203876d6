//! Binary STL of a [`Mesh`]: an 80-byte header, a little-endian `u32`
//! triangle count, then per triangle a unit normal, three vertices (all
//! `f32`) and a zero `u16` attribute, 50 bytes each. Binary rather than ASCII
//! because a topology-optimized design has millions of triangles; the header
//! never starts with `solid`, which some readers take as the ASCII format.

use super::Mesh;

const HEADER_BYTES: usize = 80;
const TRIANGLE_BYTES: usize = 50;

/// STL bytes, `84 + 50·n` long. `name` goes into the header after
/// `cuth topopt: ` (non-ASCII replaced, cut to fit). The count saturates at
/// `u32::MAX`; callers with more triangles must refuse (as `write_outputs` does).
pub fn stl_binary(mesh: &Mesh, name: &str) -> Vec<u8> {
    let n = mesh.triangles.len();
    let mut out = Vec::with_capacity(HEADER_BYTES + 4 + TRIANGLE_BYTES * n);
    let text: String = format!("cuth topopt: {name}")
        .chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() {
                c
            } else {
                '_'
            }
        })
        .take(HEADER_BYTES)
        .collect();
    out.extend_from_slice(text.as_bytes());
    out.resize(HEADER_BYTES, b' ');
    out.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
    for t in &mesh.triangles {
        for v in normal(t).iter().chain(t.iter().flatten()) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&0u16.to_le_bytes());
    }
    out
}

/// Unit normal by the right-hand rule, zero for a degenerate triangle
/// (readers recompute normals from the winding anyway).
fn normal(t: &[[f32; 3]; 3]) -> [f32; 3] {
    let [a, b, c] = t.map(|p| p.map(f64::from));
    let (u, v) = (
        [b[0] - a[0], b[1] - a[1], b[2] - a[2]],
        [c[0] - a[0], c[1] - a[1], c[2] - a[2]],
    );
    let n = [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ];
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    if len > 0.0 && len.is_finite() {
        n.map(|x| (x / len) as f32)
    } else {
        [0.0; 3]
    }
}
