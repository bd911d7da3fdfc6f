//! A brittle material's strength as materials scientists state it: the
//! characteristic strength of a reference test, its Weibull size effect and
//! its slow-crack-growth rate effect, turned into the Rankine threshold of
//! one event.
//!
//! **Size (weakest link; ASTM C1239 §4, C1683 §5).** The probability that a
//! body loaded to the field σ₁(x) breaks is
//! `P = 1 − exp(−(S_eff/S_0)(σ_max/σ_θ)^m)` with the *effective size*
//!
//! ```text
//! S_eff = ∫ (σ₁(x)/σ_max)^m dS      over the tensile region (σ₁ > 0),
//! ```
//!
//! S an area (surface flaws) or a volume (volume flaws). Two loadings break
//! at the same probability when `σ_max,1 / σ_max,2 = (S_eff,2 / S_eff,1)^(1/m)`,
//! so a material whose R_c is the characteristic strength of a test of
//! effective size `S_ref` has, under a field of effective size `S_eff`, the
//! threshold
//!
//! ```text
//! R = R_c (S_ref / S_eff)^(1/m).
//! ```
//!
//! A sharp contact-edge tension loads a small area and gets a high
//! threshold: this regularises the point-wise Rankine test near a Hertz
//! contact (issue 27 §1), where a plate's bending stress, spread wide, does
//! not.
//!
//! **Rate (slow crack growth; ASTM C1368 §4, eq. 1).** With crack speed
//! `∝ K_I^n`, the strength under a constant stress rate σ̇ grows as
//! `σ_f ∝ σ̇^(1/(n+1))`, so the threshold is further multiplied by
//! `(σ̇ / σ̇_ref)^(1/(n+1))`. An event's stress rate is its peak stress over
//! the time from the contact's start to the peak.
//!
//! The integral is taken element by element over the stress field the
//! stress points define ([`effective_size`]); the integrand is peaked for
//! large m, so it converges under mesh refinement rather than being exact
//! on one mesh (`tests/strength.rs` measures it against closed forms).

use super::batdorf::NormalStressAverage;
use super::stress::{max_principal_stress, principal_stresses};
use crate::config::{Material, WeibullCriterion};
use crate::mesh::TetMesh;
use crate::modal::ModalStress;
use nalgebra::{Point3, Vector3};

/// Which flaws the material's Weibull statistics describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlawPopulation {
    /// Flaws on the surface: effective sizes are areas (m²).
    Surface,
    /// Flaws in the volume: effective sizes are volumes (m³).
    Volume,
}

/// The Weibull size effect of a material.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WeibullScaling {
    /// The Weibull modulus m.
    pub modulus: f64,
    /// Surface or volume flaws.
    pub flaws: FlawPopulation,
    /// The reference test's effective size (m² or m³), under `criterion`.
    pub reference_size: f64,
    /// How a multiaxial stress loads the flaws.
    pub criterion: WeibullCriterion,
}

/// The slow-crack-growth rate effect of a material.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateScaling {
    /// The slow-crack-growth exponent n.
    pub exponent: f64,
    /// The reference test's stress rate (Pa/s).
    pub reference_rate_pa_s: f64,
}

/// A material's strength: R_c and how it scales (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Strength {
    /// R_c, the threshold at the reference test's size and rate (Pa).
    pub reference_pa: f64,
    /// The size effect, if the material gives a Weibull modulus.
    pub weibull: Option<WeibullScaling>,
    /// The rate effect, if the material gives a slow-crack-growth exponent.
    pub rate: Option<RateScaling>,
}

/// What decided an event's Rankine threshold.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct EventStrength {
    /// The threshold the event's stresses were tested against (Pa).
    pub threshold_pa: f64,
    /// The effective size of the event's field at its peak (m² or m³;
    /// 0 without the size effect).
    pub effective_size: f64,
    /// The event's stress rate, peak stress over time to peak (Pa/s;
    /// 0 without the rate effect or for a held load).
    pub stress_rate_pa_s: f64,
}

impl Strength {
    /// The strength of `material` (validated: the scaling fields come with
    /// their references).
    pub fn of(material: &Material) -> Self {
        let weibull = material.weibull_modulus.and_then(|modulus| {
            let (flaws, reference_size) = match (
                material.weibull_reference_area_m2,
                material.weibull_reference_volume_m3,
            ) {
                (Some(area), _) => (FlawPopulation::Surface, area),
                (None, Some(volume)) => (FlawPopulation::Volume, volume),
                (None, None) => return None,
            };
            Some(WeibullScaling {
                modulus,
                flaws,
                reference_size,
                criterion: material.weibull_criterion.unwrap_or_default(),
            })
        });
        let rate = material
            .slow_crack_growth_exponent
            .zip(material.reference_stress_rate_pa_s)
            .map(|(exponent, reference_rate_pa_s)| RateScaling {
                exponent,
                reference_rate_pa_s,
            });
        Self {
            reference_pa: material.rankine_threshold_pa,
            weibull,
            rate,
        }
    }

    /// Whether the threshold depends on the event (else it is R_c).
    pub fn scales(&self) -> bool {
        self.weibull.is_some() || self.rate.is_some()
    }

    /// The threshold for a field of effective size `effective_size` (ignored
    /// without the size effect) loaded at `stress_rate_pa_s` (`None`: at the
    /// reference rate, as a held load is checked).
    pub fn threshold_pa(&self, effective_size: f64, stress_rate_pa_s: Option<f64>) -> f64 {
        let mut threshold = self.reference_pa;
        if let Some(w) = self.weibull {
            // A field with no tension has no size; its threshold is moot.
            if effective_size > 0.0 {
                threshold *= (w.reference_size / effective_size).powf(1.0 / w.modulus);
            }
        }
        if let (Some(r), Some(rate)) = (self.rate, stress_rate_pa_s) {
            if rate > 0.0 {
                threshold *= (rate / r.reference_rate_pa_s).powf(1.0 / (r.exponent + 1.0));
            }
        }
        threshold
    }

    /// The lowest threshold an event on a body of size `whole_size` (its
    /// surface or volume, [`whole_size`]) can have, lasting at most
    /// `longest_time_s` (`None`: a held load, checked at the reference
    /// rate). The effective size is at most the whole times the
    /// criterion's largest integrand over σ₁'s (1, 2 or 3 under
    /// independent action, `1/k̄` under Batdorf's); a stress rate is
    /// at least σ_max/T, so a peak σ breaks only if
    /// `σ ≥ R_size (σ/(T σ̇_ref))^(1/(n+1))`, that is
    /// `σ ≥ R_size^((n+1)/n) (T σ̇_ref)^(−1/n)`. Stresses below it cannot
    /// break the body in that event, whatever its field.
    pub fn lowest_threshold_pa(&self, whole_size: f64, longest_time_s: Option<f64>) -> f64 {
        let largest_size = self.weibull.map_or(whole_size, |w| {
            whole_size * integrand_bound(w.criterion, w.flaws, w.modulus)
        });
        let mut threshold = self.threshold_pa(largest_size, None);
        if let (Some(r), Some(t)) = (self.rate, longest_time_s) {
            if t > 0.0 {
                let n = r.exponent;
                threshold =
                    threshold.powf((n + 1.0) / n) * (t * r.reference_rate_pa_s).powf(-1.0 / n);
            }
        }
        threshold
    }

    /// The event's threshold from its stress field: the stress (Voigt, Pa)
    /// at each stress point of `table` on `mesh` (or its `elements`,
    /// [`effective_size`]) at the peak, the peak and its time from the
    /// contact's start (`None` for a held load).
    pub fn event(
        &self,
        mesh: &TetMesh,
        table: &ModalStress,
        elements: Option<&[bool]>,
        voigt_at_peak: &[[f64; 6]],
        peak_pa: f64,
        time_to_peak_s: Option<f64>,
    ) -> EventStrength {
        let effective_size = match self.weibull {
            Some(w) => effective_size(
                mesh,
                table,
                voigt_at_peak,
                elements,
                w.flaws,
                w.modulus,
                w.criterion,
            ),
            None => 0.0,
        };
        let stress_rate_pa_s = match (self.rate, time_to_peak_s) {
            (Some(_), Some(t)) if t > 0.0 => peak_pa / t,
            _ => 0.0,
        };
        let rate = (stress_rate_pa_s > 0.0).then_some(stress_rate_pa_s);
        EventStrength {
            threshold_pa: self.threshold_pa(effective_size, rate),
            effective_size,
            stress_rate_pa_s,
        }
    }
}

/// `S_eff = ∫ (σ₁/σ_max)^m dS` over the tensile region of the field whose
/// stress (Voigt, Pa) at each stress point of `table` is `voigt`, on
/// `mesh` or the elements of it marked in `elements` (a fragment's region
/// of a shared mesh; its surface is then the mesh's boundary faces on
/// those elements), with σ_max the largest σ₁ of their points (module
/// docs); 0 if none is in tension. Under
/// [`WeibullCriterion::IndependentAction`] the integrand is the sum of
/// `(σ_i/σ_max)^m` over the tensile principal stresses σ_i: the three of
/// the stress for volume flaws, the two in the surface's plane for
/// surface flaws (the principle of independent action). Under
/// [`WeibullCriterion::BatdorfNormalStress`] it is Batdorf's mean over
/// flaw orientations of the same principal stresses
/// (`fracture::batdorf`).
///
/// A linear element's stress is constant; a quadratic element's is linear
/// (its strain is, on straight edges), so the stress between its corner
/// points is interpolated and σ₁ taken at the points of a Grundmann–Möller
/// rule ([`SimplexRule`]) on each tet or boundary triangle. σ₁ is convex
/// in the stress, so a piece's integral is at most its measure times
/// `(max σ₁ of its points / σ_max)^m`: pieces are integrated in decreasing
/// order of that bound until what is left is bounded below
/// `INTEGRAL_TOLERANCE` (1e-4) of the sum, and pieces whose bound is below
/// `CUTOFF_RATIO` (1e-12) of their measure are not considered.
pub fn effective_size(
    mesh: &TetMesh,
    table: &ModalStress,
    voigt: &[[f64; 6]],
    elements: Option<&[bool]>,
    flaws: FlawPopulation,
    modulus: f64,
    criterion: WeibullCriterion,
) -> f64 {
    debug_assert_eq!(voigt.len(), table.point_count());
    let included = |t: usize| elements.is_none_or(|e| e[t]);
    let principal: Vec<f64> = voigt.iter().map(max_principal_stress).collect();
    let peak = (0..mesh.tet_count())
        .filter(|&t| included(t))
        .flat_map(|t| table.element_points(t))
        .map(|&p| principal[p as usize])
        .fold(0.0, f64::max);
    if peak <= 0.0 {
        return 0.0;
    }
    let floor = peak * CUTOFF_RATIO.powf(1.0 / modulus);
    let linear = table.points_per_element() == 1;
    let weight = |sigma: f64| {
        if sigma > 0.0 {
            (sigma / peak).powf(modulus)
        } else {
            0.0
        }
    };
    let batdorf = (criterion == WeibullCriterion::BatdorfNormalStress)
        .then(|| NormalStressAverage::new(flaws, modulus));
    // `plane`: a boundary face's orthonormal tangents (surface flaws).
    let integrand = |s: &[f64; 6], plane: Option<&[Vector3<f64>; 2]>| match (criterion, plane) {
        (WeibullCriterion::MaximumPrincipal, _) => weight(max_principal_stress(s)),
        (WeibullCriterion::IndependentAction, None) => {
            principal_stresses(s).into_iter().map(weight).sum()
        }
        (WeibullCriterion::IndependentAction, Some(plane)) => in_plane_principal_stresses(s, plane)
            .into_iter()
            .map(weight)
            .sum(),
        (WeibullCriterion::BatdorfNormalStress, plane) => {
            let batdorf = batdorf.as_ref().expect("built for this criterion");
            match plane {
                None => batdorf.weight(&principal_stresses(s), peak),
                Some(plane) => batdorf.weight(&in_plane_principal_stresses(s, plane), peak),
            }
        }
    };
    let terms = batdorf
        .as_ref()
        .map_or_else(|| integrand_bound(criterion, flaws, modulus), |b| b.bound());
    // The stress at barycentric coordinates `bary` of the points `points`.
    let interpolate = |points: &[u32], bary: &[f64]| -> [f64; 6] {
        let mut s = [0.0; 6];
        for (&p, &b) in points.iter().zip(bary) {
            for (total, v) in s.iter_mut().zip(&voigt[p as usize]) {
                *total += b * v;
            }
        }
        s
    };
    let rule = SimplexRule::for_modulus(
        match flaws {
            FlawPopulation::Volume => 3,
            FlawPopulation::Surface => 2,
        },
        modulus,
    );
    // The pieces of the domain, each with its measure, its stress points
    // and the bound `terms · measure · (max σ₁ of its points / σ_max)^m`
    // of its integral (σ₁ is convex in the stress).
    let mut pieces: Vec<Piece> = Vec::new();
    let mut add = |measure: f64, points: &[u32], plane: Option<[Vector3<f64>; 2]>| {
        let largest = points
            .iter()
            .map(|&p| principal[p as usize])
            .fold(0.0, f64::max);
        if largest > floor {
            let mut held = [0u32; 4];
            held[..points.len()].copy_from_slice(points);
            pieces.push(Piece {
                bound: terms * measure * (largest / peak).powf(modulus),
                measure,
                points: held,
                count: points.len(),
                plane,
            });
        }
    };
    match flaws {
        FlawPopulation::Volume => {
            for t in (0..mesh.tet_count()).filter(|&t| included(t)) {
                add(mesh.tet_volume(t), table.element_points(t), None);
            }
        }
        FlawPopulation::Surface => {
            for face in &mesh.topology().boundary_faces {
                if !included(face.tet as usize) {
                    continue;
                }
                let element = table.element_points(face.tet as usize);
                let points: &[u32] = if linear { element } else { &face.nodes };
                let corners: [Point3<f64>; 3] = face.nodes.map(|n| mesh.nodes()[n as usize]);
                let edge = corners[1] - corners[0];
                let normal = edge.cross(&(corners[2] - corners[0]));
                let area = normal.norm() / 2.0;
                let tangent = edge.normalize();
                let plane = [tangent, normal.normalize().cross(&tangent)];
                add(area, points, Some(plane));
            }
        }
    }
    // Largest bounds first; stop once what is left is bounded below
    // `INTEGRAL_TOLERANCE` of the integral so far (a field peaked at a
    // contact integrates its neighbourhood only).
    pieces.sort_unstable_by(|a, b| b.bound.total_cmp(&a.bound).then(a.points.cmp(&b.points)));
    let mut left: f64 = pieces.iter().map(|p| p.bound).sum();
    let mut size = 0.0;
    for piece in pieces {
        if left <= INTEGRAL_TOLERANCE * size {
            break;
        }
        left -= piece.bound;
        let points = &piece.points[..piece.count];
        let plane = piece.plane.as_ref();
        let mean = if linear {
            integrand(&voigt[points[0] as usize], plane)
        } else {
            rule.mean(|bary| integrand(&interpolate(points, bary), plane))
        };
        size += piece.measure * mean;
    }
    size
}

/// The largest integrand of [`effective_size`] under `criterion` relative
/// to σ₁'s `(σ₁/σ_max)^m`. Independent action sums up to three (volume)
/// or two (in-plane) terms each at most σ₁'s: in-plane principal stresses
/// lie within the tensor's (Cauchy's interlacing). Batdorf's normal stress
/// on a flaw is at most σ₁, and its mean is normalised by k̄
/// (`fracture::batdorf`).
fn integrand_bound(criterion: WeibullCriterion, flaws: FlawPopulation, modulus: f64) -> f64 {
    match (criterion, flaws) {
        (WeibullCriterion::MaximumPrincipal, _) => 1.0,
        (WeibullCriterion::IndependentAction, FlawPopulation::Volume) => 3.0,
        (WeibullCriterion::IndependentAction, FlawPopulation::Surface) => 2.0,
        (WeibullCriterion::BatdorfNormalStress, _) => {
            NormalStressAverage::new(flaws, modulus).bound()
        }
    }
}

/// A tet or boundary triangle of [`effective_size`]'s domain.
struct Piece {
    /// A bound of its integral: `measure · terms · (max σ₁ of its points
    /// / σ_max)^m`.
    bound: f64,
    /// Volume (m³) or area (m²).
    measure: f64,
    /// Its stress points, the first `count`.
    points: [u32; 4],
    count: usize,
    /// A triangle's orthonormal tangents.
    plane: Option<[Vector3<f64>; 2]>,
}

/// The principal stresses of `s` in the plane of the orthonormal
/// `tangents`: the eigenvalues of the 2×2 tensor `tᵢ · s · tⱼ`.
fn in_plane_principal_stresses(s: &[f64; 6], tangents: &[Vector3<f64>; 2]) -> [f64; 2] {
    let [xx, yy, zz, yz, xz, xy] = *s;
    let tensor = nalgebra::Matrix3::new(xx, xy, xz, xy, yy, yz, xz, yz, zz);
    let [t, u] = tangents;
    let (a, b, c) = (
        t.dot(&(tensor * t)),
        u.dot(&(tensor * u)),
        t.dot(&(tensor * u)),
    );
    let mean = (a + b) / 2.0;
    let radius = ((a - b) / 2.0).hypot(c);
    [mean + radius, mean - radius]
}

/// The whole surface (m²) or volume (m³) of `mesh`, or of its `elements`
/// ([`effective_size`]): the most an effective size can be.
pub fn whole_size(mesh: &TetMesh, elements: Option<&[bool]>, flaws: FlawPopulation) -> f64 {
    let included = |t: usize| elements.is_none_or(|e| e[t]);
    match flaws {
        FlawPopulation::Volume => (0..mesh.tet_count())
            .filter(|&t| included(t))
            .map(|t| mesh.tet_volume(t))
            .sum(),
        FlawPopulation::Surface => mesh
            .topology()
            .boundary_faces
            .iter()
            .filter(|f| included(f.tet as usize))
            .map(|f| {
                let [a, b, c] = f.nodes.map(|n| mesh.nodes()[n as usize]);
                (b - a).cross(&(c - a)).norm() / 2.0
            })
            .sum(),
    }
}

/// The effective size's integration stops when what it leaves out is
/// bounded below this fraction of it: a hundred-thousandth of the
/// threshold for m ≥ 10.
const INTEGRAL_TOLERANCE: f64 = 1e-4;

/// An element whose integrand stays below this fraction everywhere is left
/// out of the effective size: a trillionth of its size, against fields
/// whose effective size is a millionth of a body's surface or more.
const CUTOFF_RATIO: f64 = 1e-12;

/// Largest s of the Grundmann–Möller rules used (degree 2s + 1 = 13; 210
/// points on a tet, 84 on a triangle).
const MAX_RULE_ORDER: usize = 6;

/// A Grundmann–Möller rule on a simplex (Grundmann & Möller, SIAM J.
/// Numer. Anal. 15, 1978, Theorem 4): exact for polynomials of degree
/// `2s + 1`, in barycentric points with weights summing to 1 (a mean over
/// the simplex). Some weights are negative.
#[derive(Debug, Clone)]
pub struct SimplexRule {
    /// Barycentric coordinates, `dimension + 1` per point.
    points: Vec<f64>,
    weights: Vec<f64>,
    vertices: usize,
}

impl SimplexRule {
    /// The rule of order `s` on the simplex of `dimension` (2 or 3).
    pub fn new(dimension: usize, s: usize) -> Self {
        let n = dimension;
        let vertices = n + 1;
        let d = 2 * s + 1;
        let factorial = |k: usize| (1..=k).map(|v| v as f64).product::<f64>();
        let mut rule = Self {
            points: Vec::new(),
            weights: Vec::new(),
            vertices,
        };
        for i in 0..=s {
            let denominator = (d + n - 2 * i) as f64;
            // Eq. (4.1), times n! so the weights are a mean.
            let weight =
                (-1f64).powi(i as i32) * 2f64.powi(-2 * s as i32) * denominator.powi(d as i32)
                    / (factorial(i) * factorial(d + n - i))
                    * factorial(n);
            let mut beta = vec![0usize; vertices];
            compositions(s - i, &mut beta, 0, &mut |beta| {
                rule.points
                    .extend(beta.iter().map(|&b| (2 * b + 1) as f64 / denominator));
                rule.weights.push(weight);
            });
        }
        rule
    }

    /// The rule for the integrand `(σ₁/σ_max)^m`: degree m or more, up to
    /// degree 13.
    pub fn for_modulus(dimension: usize, modulus: f64) -> Self {
        let s = ((modulus - 1.0) / 2.0)
            .ceil()
            .clamp(0.0, MAX_RULE_ORDER as f64) as usize;
        Self::new(dimension, s)
    }

    /// The mean of `f` (of barycentric coordinates) over the simplex.
    pub fn mean(&self, mut f: impl FnMut(&[f64]) -> f64) -> f64 {
        self.points
            .chunks_exact(self.vertices)
            .zip(&self.weights)
            .map(|(bary, w)| w * f(bary))
            .sum()
    }
}

/// Calls `visit` with every `beta` of non-negative entries from `from` on
/// summing to `total` (entries before `from` as given).
fn compositions(total: usize, beta: &mut [usize], from: usize, visit: &mut impl FnMut(&[usize])) {
    if from + 1 == beta.len() {
        beta[from] = total;
        visit(beta);
        return;
    }
    for v in 0..=total {
        beta[from] = v;
        compositions(total - v, beta, from + 1, visit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fem::ElementOrder;

    fn glass() -> Material {
        let mut m = crate::config::MaterialLibrary::builtin()
            .get("soda-lime-glass")
            .unwrap()
            .clone();
        m.weibull_modulus = Some(8.0);
        m.weibull_reference_area_m2 = Some(4e-4);
        m.slow_crack_growth_exponent = Some(17.0);
        m.reference_stress_rate_pa_s = Some(2e6);
        m
    }

    #[test]
    fn the_simplex_rules_are_exact_to_their_degree() {
        // The mean of λ₀^a over the n-simplex is n!·a!/(a + n)!.
        let factorial = |k: usize| (1..=k).map(|v| v as f64).product::<f64>();
        for dimension in [2, 3] {
            for s in 0..=MAX_RULE_ORDER {
                let rule = SimplexRule::new(dimension, s);
                for a in 0..=2 * s + 1 {
                    let exact = factorial(dimension) * factorial(a) / factorial(a + dimension);
                    let mean = rule.mean(|bary| bary[0].powi(a as i32));
                    assert!(
                        (mean - exact).abs() < 1e-12 * exact.max(1e-3),
                        "n {dimension} s {s} degree {a}: {mean} against {exact}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_uniform_tension_has_the_whole_size_and_compression_none() {
        let mesh = crate::mesh::box_mesh([0.2, 0.1, 0.05], [2, 2, 1], None).unwrap();
        for order in [ElementOrder::Linear, ElementOrder::Quadratic] {
            let elastic = crate::fem::ElasticMesh::new(&mesh, order);
            let shapes = faer::Mat::<f64>::zeros(elastic.dofs(), 1);
            let table = ModalStress::new(&elastic, &glass(), &shapes);
            let n = table.point_count();
            let uniform = vec![[5e6, 1e6, 0.0, 0.0, 0.0, 0.0]; n];
            let volume = effective_size(
                &mesh,
                &table,
                &uniform,
                None,
                FlawPopulation::Volume,
                9.0,
                WeibullCriterion::MaximumPrincipal,
            );
            assert!((volume - 1e-3).abs() < 1e-12, "{order:?}: {volume}");
            let area = effective_size(
                &mesh,
                &table,
                &uniform,
                None,
                FlawPopulation::Surface,
                9.0,
                WeibullCriterion::MaximumPrincipal,
            );
            let surface = 2.0 * (0.2 * 0.1 + 0.2 * 0.05 + 0.1 * 0.05);
            assert!((area - surface).abs() < 1e-12, "{order:?}: {area}");
            // A region: the half at x < 0.1, its surface without the cut.
            let half: Vec<bool> = (0..mesh.tet_count())
                .map(|t| mesh.tet_centroid(t).x < 0.1)
                .collect();
            let volume = effective_size(
                &mesh,
                &table,
                &uniform,
                Some(&half),
                FlawPopulation::Volume,
                9.0,
                WeibullCriterion::MaximumPrincipal,
            );
            assert!((volume - 0.5e-3).abs() < 1e-12, "{order:?}: {volume}");
            let area = effective_size(
                &mesh,
                &table,
                &uniform,
                Some(&half),
                FlawPopulation::Surface,
                9.0,
                WeibullCriterion::MaximumPrincipal,
            );
            let outer = 2.0 * 0.1 * 0.1 + 2.0 * 0.1 * 0.05 + 0.1 * 0.05;
            assert!((area - outer).abs() < 1e-12, "{order:?}: {area}");
            let compressed = vec![[-5e6, -1e6, 0.0, 0.0, 0.0, 0.0]; n];
            assert_eq!(
                effective_size(
                    &mesh,
                    &table,
                    &compressed,
                    None,
                    FlawPopulation::Volume,
                    9.0,
                    WeibullCriterion::MaximumPrincipal,
                ),
                0.0
            );
        }
    }

    /// Independent action counts each tensile principal stress: an
    /// equibiaxial tension loads the volume twice, and on the surface each
    /// face by the stresses in its own plane; Batdorf's flaws count it by
    /// the orientations it opens.
    #[test]
    fn multiaxial_criteria_count_the_tensile_principal_stresses() {
        let mesh = crate::mesh::box_mesh([0.2, 0.1, 0.05], [2, 2, 1], None).unwrap();
        let elastic = crate::fem::ElasticMesh::new(&mesh, ElementOrder::Quadratic);
        let shapes = faer::Mat::<f64>::zeros(elastic.dofs(), 1);
        let table = ModalStress::new(&elastic, &glass(), &shapes);
        let size = |voigt: [f64; 6], flaws, criterion| {
            let field = vec![voigt; table.point_count()];
            effective_size(&mesh, &table, &field, None, flaws, 9.0, criterion)
        };
        let (xy, xz, yz) = (0.2 * 0.1, 0.2 * 0.05, 0.1 * 0.05);
        let equibiaxial = [5e6, 5e6, 0.0, 0.0, 0.0, 0.0];
        let uniaxial = [5e6, 0.0, 0.0, 0.0, 0.0, 0.0];
        let (maximum, independent, batdorf) = (
            WeibullCriterion::MaximumPrincipal,
            WeibullCriterion::IndependentAction,
            WeibullCriterion::BatdorfNormalStress,
        );
        // Batdorf's equibiaxial factor at m = 9, (2m)!!/(2m−1)!!, and its
        // equitriaxial one, 2m + 1, in every direction of a volume.
        let factor: f64 = (1..=9)
            .map(|k| (2 * k) as f64 / (2 * k - 1) as f64)
            .product();
        for (voigt, flaws, criterion, expected) in [
            (equibiaxial, FlawPopulation::Volume, maximum, 1e-3),
            (equibiaxial, FlawPopulation::Volume, independent, 2e-3),
            (uniaxial, FlawPopulation::Volume, independent, 1e-3),
            (
                equibiaxial,
                FlawPopulation::Surface,
                maximum,
                2.0 * (xy + xz + yz),
            ),
            // The faces normal to z carry both stresses in their plane,
            // those normal to x or y one.
            (
                equibiaxial,
                FlawPopulation::Surface,
                independent,
                2.0 * (2.0 * xy + xz + yz),
            ),
            // Faces normal to x carry none of a uniaxial x tension.
            (
                uniaxial,
                FlawPopulation::Surface,
                independent,
                2.0 * (xy + xz),
            ),
            (uniaxial, FlawPopulation::Volume, batdorf, 1e-3),
            (equibiaxial, FlawPopulation::Volume, batdorf, factor * 1e-3),
            (
                [5e6, 5e6, 5e6, 0.0, 0.0, 0.0],
                FlawPopulation::Volume,
                batdorf,
                19.0 * 1e-3,
            ),
            // Faces normal to z see the equibiaxial stress, the others a
            // uniaxial one in their plane.
            (
                equibiaxial,
                FlawPopulation::Surface,
                batdorf,
                2.0 * (factor * xy + xz + yz),
            ),
            (uniaxial, FlawPopulation::Surface, batdorf, 2.0 * (xy + xz)),
        ] {
            // The trigonometric roots carry √ε where two coincide.
            let got = size(voigt, flaws, criterion);
            assert!(
                (got - expected).abs() < 1e-6 * expected,
                "{flaws:?} {criterion:?} {voigt:?}: {got} against {expected}"
            );
        }
    }

    #[test]
    fn the_threshold_scales_with_size_and_rate_by_the_weakest_link_and_slow_crack_growth() {
        let strength = Strength::of(&glass());
        let r_c = strength.reference_pa;
        // At the reference size and rate, R_c.
        assert!((strength.threshold_pa(4e-4, Some(2e6)) - r_c).abs() < 1e-9 * r_c);
        // 2^8 times smaller: twice as strong.
        assert!((strength.threshold_pa(4e-4 / 256.0, Some(2e6)) - 2.0 * r_c).abs() < 1e-9 * r_c);
        // 2^18 times faster: twice as strong (1/(n+1) = 1/18).
        let fast = strength.threshold_pa(4e-4, Some(2e6 * 2f64.powi(18)));
        assert!((fast - 2.0 * r_c).abs() < 1e-9 * r_c, "{fast}");
        // A held load is checked at the reference rate.
        assert!((strength.threshold_pa(4e-4, None) - r_c).abs() < 1e-9 * r_c);
        // The lowest threshold: met exactly by a peak over the whole body
        // at the end of the event, and no breaking peak lies below it.
        let (whole, duration) = (1e-2, 1e-3);
        let lowest = strength.lowest_threshold_pa(whole, Some(duration));
        let at_lowest = strength.threshold_pa(whole, Some(lowest / duration));
        assert!(
            (at_lowest - lowest).abs() < 1e-9 * lowest,
            "{at_lowest} against {lowest}"
        );
        for size in [whole, whole / 10.0, whole / 1e4] {
            for time in [duration, duration / 3.0, duration / 100.0] {
                for peak in [0.5, 0.9, 0.99, 1.01, 2.0].map(|f| f * lowest) {
                    let breaks = peak >= strength.threshold_pa(size, Some(peak / time));
                    assert!(!breaks || peak >= lowest, "{peak} breaks below {lowest}");
                }
            }
        }
        assert_eq!(
            strength.lowest_threshold_pa(whole, None),
            strength.threshold_pa(whole, None)
        );
        // Under a multiaxial criterion a uniform triaxial tension counts
        // the body's surface more than once: its threshold lies below the
        // whole surface's, and the lowest threshold still bounds it.
        let mesh = crate::mesh::box_mesh([0.2, 0.1, 0.05], [2, 2, 1], None).unwrap();
        let elastic = crate::fem::ElasticMesh::new(&mesh, ElementOrder::Linear);
        let shapes = faer::Mat::<f64>::zeros(elastic.dofs(), 1);
        let table = ModalStress::new(&elastic, &glass(), &shapes);
        let uniform = vec![[5e6, 5e6, 5e6, 0.0, 0.0, 0.0]; table.point_count()];
        let surface = whole_size(&mesh, None, FlawPopulation::Surface);
        for criterion in [
            WeibullCriterion::IndependentAction,
            WeibullCriterion::BatdorfNormalStress,
        ] {
            let mut material = glass();
            material.weibull_criterion = Some(criterion);
            let strength = Strength::of(&material);
            let size = effective_size(
                &mesh,
                &table,
                &uniform,
                None,
                FlawPopulation::Surface,
                8.0,
                criterion,
            );
            assert!(
                size >= 2.0 * surface * (1.0 - 1e-9),
                "{criterion:?}: {size}"
            );
            let event = strength.threshold_pa(size, None);
            assert!(
                event < strength.threshold_pa(surface, None),
                "{criterion:?}"
            );
            assert!(
                strength.lowest_threshold_pa(surface, None) <= event * (1.0 + 1e-12),
                "{criterion:?}"
            );
        }
        // Without the fields, R_c whatever the event.
        let plain = Strength::of(
            crate::config::MaterialLibrary::builtin()
                .get("soda-lime-glass")
                .unwrap(),
        );
        assert!(!plain.scales());
        assert_eq!(plain.threshold_pa(1e-9, Some(1e15)), plain.reference_pa);
    }
}
