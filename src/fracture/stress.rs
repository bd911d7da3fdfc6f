//! Principal stresses of a Voigt stress `[xx, yy, zz, yz, xz, xy]`, in
//! closed form for the per-element Rankine test (Glondu §3.3.5).

use nalgebra::Vector3;

/// The largest principal stress, by the trigonometric solution of the
/// characteristic cubic of the symmetric 3×3 tensor.
pub fn max_principal_stress(s: &[f64; 6]) -> f64 {
    let (q, p, phi) = characteristic_cubic(s);
    q + 2.0 * p * phi.cos()
}

/// The three principal stresses, largest first (the trigonometric
/// solution of [`max_principal_stress`]: the roots are `q + 2p cos(φ +
/// 2πk/3)`, and φ ∈ [0, π/3] orders them k = 0, 2, 1).
pub(super) fn principal_stresses(s: &[f64; 6]) -> [f64; 3] {
    use std::f64::consts::TAU;
    let (q, p, phi) = characteristic_cubic(s);
    [
        q + 2.0 * p * phi.cos(),
        q + 2.0 * p * (phi + 2.0 * TAU / 3.0).cos(),
        q + 2.0 * p * (phi + TAU / 3.0).cos(),
    ]
}

/// `(q, p, φ)` of the symmetric tensor `s`: its mean normal stress q, the
/// scale p of its deviator, and φ ∈ [0, π/3] with the largest root
/// `q + 2p cos φ` (p = 0 for an isotropic tensor).
fn characteristic_cubic(s: &[f64; 6]) -> (f64, f64, f64) {
    let [xx, yy, zz, yz, xz, xy] = *s;
    let off = xy * xy + xz * xz + yz * yz;
    let q = (xx + yy + zz) / 3.0;
    let p2 = (xx - q).powi(2) + (yy - q).powi(2) + (zz - q).powi(2) + 2.0 * off;
    if p2 <= f64::MIN_POSITIVE {
        return (q, 0.0, 0.0);
    }
    let p = (p2 / 6.0).sqrt();
    // det((S − qI)/p) / 2
    let (a, b, c) = ((xx - q) / p, (yy - q) / p, (zz - q) / p);
    let (d, e, f) = (xy / p, xz / p, yz / p);
    let r = 0.5 * (a * (b * c - f * f) - d * (d * c - f * e) + e * (d * f - b * e));
    (q, p, r.clamp(-1.0, 1.0).acos() / 3.0)
}

/// Unit direction of the largest principal stress.
pub fn principal_direction(s: &[f64; 6]) -> Vector3<f64> {
    let voigt = crate::fem::Voigt::from(*s);
    let (_, directions) = crate::fem::principal_stresses(&voigt);
    directions.column(0).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed-form roots are the symmetric eigenvalues, largest first.
    #[test]
    fn the_principal_stresses_are_the_tensors_eigenvalues() {
        for s in [
            [3.0, -1.0, 2.0, 0.5, -0.7, 1.1],
            [1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
            [2.0, 2.0, -1.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.0, 0.0, 4.0],
        ] {
            let [xx, yy, zz, yz, xz, xy] = s;
            let tensor = nalgebra::Matrix3::new(xx, xy, xz, xy, yy, yz, xz, yz, zz);
            let mut eigen: Vec<f64> = tensor.symmetric_eigenvalues().iter().copied().collect();
            eigen.sort_by(|a, b| b.total_cmp(a));
            let roots = principal_stresses(&s);
            for (root, value) in roots.iter().zip(&eigen) {
                assert!((root - value).abs() < 1e-12, "{roots:?} against {eigen:?}");
            }
            assert_eq!(roots[0], max_principal_stress(&s));
        }
    }
}
