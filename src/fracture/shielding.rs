//! Crack shielding: the stress a crack relieves around itself, so that the
//! next crack of an event does not start in it.
//!
//! A crack's faces carry no traction. By superposition (the route to
//! Griffith's and Westergaard's solutions), the stress after a crack opens
//! is the stress before it plus the field of the crack with its faces
//! loaded by the traction they carried. For a straight through crack of
//! length 2a in a plate under a uniform remote stress, that field is known
//! in closed form (Westergaard 1939; Tada, Paris & Irwin, *The Stress
//! Analysis of Cracks Handbook*, §1.1, §3.1): in the crack's frame (x along
//! it, y along its normal, z = x + iy, lengths in units of a), with
//! `Z = z / √(z² − 1)` and `Z' = −1 / (z² − 1)^{3/2}`, a remote normal stress
//! σ leaves
//!
//! `σ_yy / σ = Re Z + y·Im Z'`   (mode I)
//!
//! and a remote shear τ on the crack's plane leaves
//!
//! `σ_xy / τ = Re Z − y·Im Z'`   (mode II),
//!
//! both zero on the crack's faces, rising to 1 a few lengths away (on the
//! axis through the centre, `y³ / (y² + 1)^{3/2}` and
//! `y (y² + 2) / (y² + 1)^{3/2}`), and singular ahead of its tips. Each
//! stress point then sees the traction on the crack's plane of an open
//! crack (tension across it) scaled by these ratios, clamped to [0, 1]:
//! the relief on the crack's flanks is kept, the concentration ahead of
//! its tips is not (whether a crack grows there is the propagation's
//! energy stop, eqs. 3.7–3.8). A crack compressed across its plane
//! carries its traction.
//!
//! A crack that ran into other cracks or the body's surface wherever it
//! went has no tip inside the body: its ends lie on free surfaces, where
//! nothing is left to concentrate stress (as the singularity of a crack
//! reaching a free edge is gone once it has cut through). Such a crack
//! relieves each point as Westergaard's field relieves the point at the
//! same distance on the axis through its centre, the distance taken from
//! the nearest point of the crack ([`closed_traction`]): beside it the
//! same, beyond its ends a relief that fades over about a half-length
//! instead of the clamped concentration. Without it, the next cracks of
//! an event start just past the ends of the cracks before them, beside
//! their lines, and a plate breaks into more pieces the finer its mesh.
//!
//! This replaces Glondu's relaxation kernel (§3.4, eqs. 3.15–3.16, used
//! there for aging), whose radius and rate are fitted to each pattern,
//! with the closed form: the crack's own length sets the zone, and
//! nothing is fitted. What it leaves out: the body's edges (the solution
//! is the infinite plate's), the shear across the crack's front (mode III),
//! a crack that does not run through the body's thickness, which is
//! treated as one that does over its own span there, and a traction that
//! varies along the crack (a radial crack under a central load is loaded
//! near the centre only, and relieves less far than this field says).
//! And the relief is a tensor along the crack's normal taken off the
//! intact body's stress: after two perpendicular cracks, what is left of
//! an equibiaxial stress has their normals for principal axes, so later
//! cracks run parallel to them, where a struck plate's next radial crack
//! runs between them (the stress of the cut body, which this does not
//! solve for; docs/fracture.md, crack shielding).

use crate::fem::voigt_of;
use nalgebra::{Complex, Matrix3, Point3, SymmetricEigen, Vector3};
use serde::Serialize;

/// Where a crack relieves stress: its mean plane, its length and its span
/// across that length (through a plate's thickness).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CrackShield {
    /// Area-weighted centre of the crack surface (m).
    pub centre_m: [f64; 3],
    /// Unit normal of the crack's mean plane.
    pub normal: [f64; 3],
    /// Unit direction of the crack's length in its plane.
    pub length_axis: [f64; 3],
    /// Half the crack's length a (m): `√(3 λ)` for λ the surface's
    /// variance along `length_axis`, the half-length of a uniform strip of
    /// that variance.
    pub half_length_m: f64,
    /// The crack's extent across its length, along `normal × length_axis`,
    /// from the centre (m), widened by half an element: where it relieves.
    pub span_m: [f64; 2],
    /// Whether the crack has a tip inside the body (it stopped for want of
    /// energy); `false` when it ran into other cracks or the body's
    /// surface wherever it went, so that its ends lie on free surfaces.
    pub free_tips: bool,
}

/// Area moments of a crack surface, gathered section by section, and the
/// corners of its sections, relative to the crack's origin.
#[derive(Debug, Clone, Default)]
pub(super) struct SurfaceMoments {
    area_m2: f64,
    first: Vector3<f64>,
    second: Matrix3<f64>,
    points: Vec<Vector3<f64>>,
}

impl SurfaceMoments {
    /// Empties the moments for the next crack.
    pub(super) fn clear(&mut self) {
        self.area_m2 = 0.0;
        self.first = Vector3::zeros();
        self.second = Matrix3::zeros();
        self.points.clear();
    }

    /// Adds the triangle `a, b, c` (relative to the crack's origin):
    /// `∫ p dA = A (a + b + c) / 3` and
    /// `∫ p pᵀ dA = A/12 (a aᵀ + b bᵀ + c cᵀ + s sᵀ)`, `s = a + b + c`.
    pub(super) fn add_triangle(&mut self, a: Vector3<f64>, b: Vector3<f64>, c: Vector3<f64>) {
        let area = 0.5 * (b - a).cross(&(c - a)).norm();
        let s = a + b + c;
        self.area_m2 += area;
        self.first += s * (area / 3.0);
        self.second +=
            (a * a.transpose() + b * b.transpose() + c * c.transpose() + s * s.transpose())
                * (area / 12.0);
        self.points.extend([a, b, c]);
    }

    /// The shield of the crack through `origin` with mean-plane `normal`
    /// whose sections were added, in a mesh of mean edge length
    /// `element_m`, with or without `free_tips`; `None` for a crack of no
    /// area.
    pub(super) fn shield(
        &self,
        origin: Point3<f64>,
        normal: Vector3<f64>,
        element_m: f64,
        free_tips: bool,
    ) -> Option<CrackShield> {
        if self.area_m2 <= 0.0 || normal.norm() == 0.0 {
            return None;
        }
        let n = normal.normalize();
        let mean = self.first / self.area_m2;
        let covariance = self.second / self.area_m2 - mean * mean.transpose();
        // The covariance in the crack's plane: its largest axis is the
        // crack's length.
        let projector = Matrix3::identity() - n * n.transpose();
        let in_plane = projector * covariance * projector;
        let eigen = SymmetricEigen::new(in_plane);
        let largest = eigen.eigenvalues.imax();
        let mut u: Vector3<f64> = projector * eigen.eigenvectors.column(largest).into_owned();
        if u.norm() == 0.0 {
            return None;
        }
        u.normalize_mut();
        let half_length_m = (3.0 * eigen.eigenvalues[largest].max(0.0)).sqrt();
        let w = n.cross(&u);
        let (low, high) =
            self.points
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                    let across = (p - mean).dot(&w);
                    (lo.min(across), hi.max(across))
                });
        let centre = origin + mean;
        Some(CrackShield {
            centre_m: [centre.x, centre.y, centre.z],
            normal: [n.x, n.y, n.z],
            length_axis: [u.x, u.y, u.z],
            half_length_m,
            span_m: [low - 0.5 * element_m, high + 0.5 * element_m],
            free_tips,
        })
    }
}

impl CrackShield {
    /// The factors in [0, 1] by which the crack scales the normal and the
    /// shear traction on its plane at `point` (module docs).
    pub fn traction_factors(&self, point: &Point3<f64>) -> TractionFactors {
        let d = point - Point3::from(self.centre_m);
        let n = Vector3::from(self.normal);
        let u = Vector3::from(self.length_axis);
        let across = d.dot(&n.cross(&u));
        if across < self.span_m[0] || across > self.span_m[1] || self.half_length_m <= 0.0 {
            return TractionFactors::NONE;
        }
        let (x, y) = (
            d.dot(&u) / self.half_length_m,
            d.dot(&n) / self.half_length_m,
        );
        if self.free_tips {
            griffith_traction(x, y)
        } else {
            closed_traction(x, y)
        }
    }

    /// `stress` (Voigt: xx, yy, zz, yz, xz, xy) at `point` with the
    /// traction on the crack's plane relieved where the crack is open
    /// (σ_nn = nᵀσn > 0): the normal part by `σ − (1 − g_I) σ_nn n nᵀ`, the
    /// shear part τ = σn − σ_nn n by `σ − (1 − g_II)(n τᵀ + τ nᵀ)`. Neither
    /// raises the largest principal stress: the first takes off a positive
    /// semi-definite tensor; the second scales the shear components in the
    /// crack's frame towards 0, and σ₁ is a convex function of them, even
    /// (the same on −τ, by the reflection n → −n).
    pub fn relieve(&self, point: &Point3<f64>, stress: &mut [f64; 6]) {
        let [xx, yy, zz, yz, xz, xy] = *stress;
        let sigma = Matrix3::new(xx, xy, xz, xy, yy, yz, xz, yz, zz);
        let n = Vector3::from(self.normal);
        let traction = sigma * n;
        let normal_pa = n.dot(&traction);
        if normal_pa <= 0.0 {
            return;
        }
        let factors = self.traction_factors(point);
        let shear = traction - n * normal_pa;
        let relief = n * n.transpose() * ((1.0 - factors.normal) * normal_pa)
            + (n * shear.transpose() + shear * n.transpose()) * (1.0 - factors.shear);
        for (s, r) in stress.iter_mut().zip(voigt_of(&relief).iter()) {
            *s -= r;
        }
    }
}

/// What is left of the normal and the shear traction on a crack's plane
/// at a point ([`CrackShield::traction_factors`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TractionFactors {
    /// σ_yy/σ of mode I.
    pub normal: f64,
    /// σ_xy/τ of mode II.
    pub shear: f64,
}

impl TractionFactors {
    /// No relief.
    pub const NONE: Self = Self {
        normal: 1.0,
        shear: 1.0,
    };
}

/// σ_yy/σ (mode I) and σ_xy/τ (mode II) of a Griffith crack from −1 to 1
/// on the x axis under a remote normal stress σ or shear τ, at (x, y) in
/// units of its half-length, clamped to [0, 1] (module docs).
pub(super) fn griffith_traction(x: f64, y: f64) -> TractionFactors {
    let y = y.abs();
    let z = Complex::new(x, y);
    // √(z − 1)·√(z + 1) with principal roots: the branch cut on the crack,
    // √(z² − 1) ≈ z far away.
    let root = (z - 1.0).sqrt() * (z + 1.0).sqrt();
    if root.norm() < 1e-12 {
        // A tip: the stress concentration is not relief.
        return TractionFactors::NONE;
    }
    let potential = z / root;
    let derivative = -1.0 / (root * root * root);
    let clamp = |ratio: f64| {
        if ratio.is_finite() {
            ratio.clamp(0.0, 1.0)
        } else {
            1.0
        }
    };
    TractionFactors {
        normal: clamp(potential.re + y * derivative.im),
        shear: clamp(potential.re - y * derivative.im),
    }
}

/// The factors of a crack whose ends lie on free surfaces (other cracks,
/// the body's surface): no tip concentrates stress (the ligament ahead of
/// an end is gone), so every point is relieved as the point at the same
/// distance d from the crack on the axis through its centre, d measured
/// from the nearest point of the crack (units of its half-length):
/// `d³ / (d² + 1)^{3/2}` and `d (d² + 2) / (d² + 1)^{3/2}` (module docs).
/// Beside the crack this is Westergaard's axis profile; beyond an end it
/// decays from the face's zero back to the remote stress over about a
/// half-length, as the flank's relief does.
pub(super) fn closed_traction(x: f64, y: f64) -> TractionFactors {
    let d = (x.abs() - 1.0).max(0.0).hypot(y);
    let squared = d * d + 1.0;
    let cube = squared * squared.sqrt();
    TractionFactors {
        normal: (d * d * d / cube).min(1.0),
        shear: (d * (d * d + 2.0) / cube).min(1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tractions_on_the_crack_axis_are_westergaards() {
        // On the axis through the centre (z = iy, worked by hand from the
        // same potential): σ_yy/σ = y³ / (y² + 1)^{3/2} and
        // σ_xy/τ = y (y² + 2) / (y² + 1)^{3/2}, clamped to 1.
        for y in [0.05, 0.3, 1.0, 2.0, 5.0, 30.0] {
            let normal = y * y * y / (y * y + 1.0_f64).powf(1.5);
            let shear = (y * (y * y + 2.0) / (y * y + 1.0_f64).powf(1.5)).min(1.0);
            let factors = griffith_traction(0.0, y);
            assert!((factors.normal - normal).abs() < 1e-12, "y = {y}");
            assert!((factors.shear - shear).abs() < 1e-12, "y = {y}");
            assert_eq!(griffith_traction(0.0, -y), factors);
        }
        // The faces carry no traction; ahead of a tip it is concentrated
        // (clamped to 1); far away it is the remote stress.
        let face = griffith_traction(0.5, 1e-9);
        assert!(face.normal < 1e-6 && face.shear < 1e-6);
        assert_eq!(griffith_traction(1.5, 0.0).normal, 1.0);
        assert_eq!(griffith_traction(1.0, 0.0), TractionFactors::NONE);
        assert!(griffith_traction(100.0, 100.0).normal > 0.999);
    }

    #[test]
    fn a_crack_with_no_free_tip_relieves_by_its_distance_and_concentrates_nothing() {
        // Beside the crack, on the axis through its centre, Westergaard's
        // profile; zero on the faces up to the ends; beyond an end, the
        // profile at the distance from that end; never above the remote
        // stress, which it approaches far away.
        for y in [0.05, 0.3, 1.0, 2.0, 5.0] {
            let axis = griffith_traction(0.0, y);
            let (dx, dy) = (0.6 * y, 0.8 * y);
            for at in [(0.0, y), (0.7, -y), (1.0 + y, 0.0), (-1.0 - dx, dy)] {
                let closed = closed_traction(at.0, at.1);
                assert!((closed.normal - axis.normal).abs() < 1e-12, "{at:?}");
                assert!((closed.shear - axis.shear).abs() < 1e-12, "{at:?}");
            }
        }
        for x in [-1.0, -0.5, 0.0, 0.99, 1.0] {
            let face = closed_traction(x, 0.0);
            assert!(face.normal == 0.0 && face.shear == 0.0, "x = {x}");
        }
        for x in [-3.0, -1.2, -0.9, 0.0, 0.95, 1.05, 1.3, 2.0] {
            for y in [0.0, 0.1, 0.25, 0.5, 1.0] {
                let f = closed_traction(x, y);
                assert!((0.0..=1.0).contains(&f.normal) && (0.0..=1.0).contains(&f.shear));
            }
        }
        // Just past an end, beside the crack's line, a free tip
        // concentrates the stress (clamped to the remote stress) where a
        // closed end relieves it.
        assert_eq!(griffith_traction(1.05, 0.2).normal, 1.0);
        assert!(closed_traction(1.05, 0.2).normal < 0.01);
        assert!(closed_traction(40.0, 30.0).normal > 0.999);
    }

    #[test]
    fn a_rectangular_crack_has_its_length_and_span() {
        // A 40 × 6 mm crack in the plane z = 0, length along x, made of
        // two triangles per 2 mm cell.
        let mut moments = SurfaceMoments::default();
        for i in 0..20 {
            for j in 0..3 {
                let (x0, y0) = (i as f64 * 2e-3 - 0.02, j as f64 * 2e-3 - 0.003);
                let p = |dx: f64, dy: f64| Vector3::new(x0 + dx, y0 + dy, 0.0);
                moments.add_triangle(p(0.0, 0.0), p(2e-3, 0.0), p(2e-3, 2e-3));
                moments.add_triangle(p(0.0, 0.0), p(2e-3, 2e-3), p(0.0, 2e-3));
            }
        }
        let origin = Point3::new(1.0, 2.0, 3.0);
        let shield = moments
            .shield(origin, Vector3::new(0.0, 0.0, 2.0), 1e-3, true)
            .unwrap();
        assert!((shield.half_length_m - 0.02).abs() < 1e-12);
        assert!((shield.length_axis[0].abs() - 1.0).abs() < 1e-12);
        let [low, high] = shield.span_m;
        assert!((high - low - 7e-3).abs() < 1e-12, "{low} {high}");
        for (c, o) in shield.centre_m.iter().zip([1.0, 2.0, 3.0]) {
            assert!((c - o).abs() < 1e-12);
        }
        // Beside the crack's centre the tension normal to it is relieved,
        // the tension along it is not; beyond its span nothing is.
        let mut stress = [1e6, 2e6, 3e6, 0.0, 0.0, 0.0];
        shield.relieve(&Point3::new(1.0, 2.0, 3.0 + 0.02), &mut stress);
        let g = griffith_traction(0.0, 1.0);
        assert!((stress[2] - 3e6 * g.normal).abs() < 1e-6);
        assert_eq!(&stress[..2], &[1e6, 2e6]);
        // The shear on the crack's plane is relieved by mode II's factor;
        // the shear in the plane of the crack is not.
        let mut sheared = [0.0, 0.0, 3e6, 1e6, 0.0, 5e5];
        shield.relieve(&Point3::new(1.0, 2.0, 3.0 + 0.02), &mut sheared);
        assert!((sheared[3] - 1e6 * g.shear).abs() < 1e-6);
        assert_eq!(sheared[5], 5e5);
        let mut beyond = [0.0, 0.0, 3e6, 0.0, 0.0, 0.0];
        shield.relieve(&Point3::new(1.0, 2.0 + 0.01, 3.0 + 0.02), &mut beyond);
        assert_eq!(beyond[2], 3e6);
        // Compression across the crack is carried by its closed faces.
        let mut compressed = [0.0, 0.0, -3e6, 0.0, 0.0, 0.0];
        shield.relieve(&Point3::new(1.0, 2.0, 3.0 + 1e-4), &mut compressed);
        assert_eq!(compressed[2], -3e6);
    }
}
