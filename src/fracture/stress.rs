//! Principal stresses of a Voigt stress `[xx, yy, zz, yz, xz, xy]`, in
//! closed form for the per-element Rankine test (Glondu §3.3.5).

use nalgebra::Vector3;

/// The largest principal stress, by the trigonometric solution of the
/// characteristic cubic of the symmetric 3×3 tensor.
pub fn max_principal_stress(s: &[f64; 6]) -> f64 {
    let [xx, yy, zz, yz, xz, xy] = *s;
    let off = xy * xy + xz * xz + yz * yz;
    let q = (xx + yy + zz) / 3.0;
    let p2 = (xx - q).powi(2) + (yy - q).powi(2) + (zz - q).powi(2) + 2.0 * off;
    if p2 <= f64::MIN_POSITIVE {
        return q;
    }
    let p = (p2 / 6.0).sqrt();
    // det((S − qI)/p) / 2
    let (a, b, c) = ((xx - q) / p, (yy - q) / p, (zz - q) / p);
    let (d, e, f) = (xy / p, xz / p, yz / p);
    let r = 0.5 * (a * (b * c - f * f) - d * (d * c - f * e) + e * (d * f - b * e));
    let phi = r.clamp(-1.0, 1.0).acos() / 3.0;
    q + 2.0 * p * phi.cos()
}

/// Unit direction of the largest principal stress.
pub fn principal_direction(s: &[f64; 6]) -> Vector3<f64> {
    let voigt = crate::fem::Voigt::from(*s);
    let (_, directions) = crate::fem::principal_stresses(&voigt);
    directions.column(0).into_owned()
}
