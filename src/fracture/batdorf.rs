//! Batdorf's weakest-link integrand for randomly oriented flaws under the
//! normal-stress criterion (Batdorf & Crose, J. Appl. Mech. 41, 1974;
//! Batdorf & Heinisch, J. Am. Ceram. Soc. 61, 1978).
//!
//! A flaw is a crack of random orientation; it grows when the normal stress
//! on its plane, `σ_n = n·σ·n`, exceeds its critical stress, and a crack
//! density `N(σ_cr) = k_B σ_cr^m` gives the risk of rupture per unit size
//! `k_B ⟨max(0, σ_n)^m⟩`, the mean over orientations: over the unit sphere
//! of normals for volume flaws, over the normals in the surface's plane for
//! surface flaws (a surface flaw lies across the surface, its normal in
//! it). `k_B` is normalised so that a uniaxial stress has Weibull's risk
//! `σ^m`, the normalised crack density of CARES (Nemeth, Powers, Janosik &
//! Gyekenyesi, NASA TM-106316, 1993, eq. 36):
//!
//! ```text
//! w(σ) = ⟨max(0, σ_n)^m⟩ / k̄,   k̄ = ⟨(n·e₁)^{2m}⟩,
//! ```
//!
//! so `k̄ = (2m−1)!!/(2m)!!` for surface flaws and `1/(2m+1)` for volume
//! flaws (integer m). An equal tension in every direction of the flaws'
//! space loads every orientation and has `w = σ^m/k̄`: about `√(πm)` times
//! Weibull's σ₁ integrand on a surface and `2m+1` times in a volume, where
//! the principle of independent action counts 2 and 3 times.
//!
//! The orientation means are Gauss–Legendre products in the principal
//! axes: over the flaw's angle α in the plane for surface flaws, over
//! `u = n·e₁` and the azimuth φ about e₁ on an octant of the sphere for
//! volume flaws, each integrated from where `σ_n` turns tensile (the
//! integrand vanishes there to order m, so it stays smooth).

use std::f64::consts::FRAC_PI_2;

use super::strength::FlawPopulation;

/// Fewest and most Gauss–Legendre nodes per dimension: a rule of N nodes
/// is exact for degree 2N − 1, and the uniaxial integrand `u^{2m}` (volume)
/// has degree 2m, so N = m + 1 up to the cap.
const MIN_NODES: usize = 16;
const MAX_NODES: usize = 64;

/// Batdorf's normal-stress integrand for one Weibull modulus and flaw
/// population (module docs).
#[derive(Debug, Clone)]
pub(super) struct NormalStressAverage {
    flaws: FlawPopulation,
    modulus: f64,
    /// Gauss–Legendre nodes and weights on [0, 1].
    nodes: Vec<f64>,
    weights: Vec<f64>,
    /// k̄, by the same rule as the mean it normalises, so that a uniaxial
    /// stress gives Weibull's integrand to rounding.
    normalisation: f64,
}

impl NormalStressAverage {
    /// The integrand for `flaws` at Weibull modulus `modulus` (≥ 1).
    pub(super) fn new(flaws: FlawPopulation, modulus: f64) -> Self {
        let count = (modulus.ceil() as usize + 1).clamp(MIN_NODES, MAX_NODES);
        let (nodes, weights) = gauss_legendre_unit(count);
        let mut average = Self {
            flaws,
            modulus,
            nodes,
            weights,
            normalisation: 1.0,
        };
        average.normalisation = average.mean(&[1.0, 0.0, 0.0]);
        average
    }

    /// `w(σ)/σ_ref^m`, the integrand relative to `reference` (Pa), for the
    /// principal stresses `principal` in decreasing order: the two in the
    /// surface's plane for surface flaws, the three for volume flaws.
    pub(super) fn weight(&self, principal: &[f64], reference: f64) -> f64 {
        let largest = principal[0];
        if largest <= 0.0 {
            return 0.0;
        }
        let ratios = [
            1.0,
            principal[1] / largest,
            principal.get(2).map_or(0.0, |s| s / largest),
        ];
        (largest / reference).powf(self.modulus) * self.mean(&ratios) / self.normalisation
    }

    /// The largest `w(σ)` relative to `(σ₁/σ_ref)^m`: `1/k̄`, reached where
    /// the principal stresses of the flaws' space are equal.
    pub(super) fn bound(&self) -> f64 {
        1.0 / self.normalisation
    }

    /// `⟨max(0, σ_n)^m⟩` for principal stresses `[1, r₂, r₃]` (r₃ unused
    /// for surface flaws), 1 ≥ r₂ ≥ r₃.
    fn mean(&self, [_, r2, r3]: &[f64; 3]) -> f64 {
        match self.flaws {
            // σ_n = cos²α + r₂ sin²α, tensile for tan²α < −1/r₂.
            FlawPopulation::Surface => {
                let top = if *r2 >= 0.0 {
                    FRAC_PI_2
                } else {
                    (1.0 / (-r2).sqrt()).atan()
                };
                self.integrate(0.0, top, |alpha| {
                    let (sin, cos) = alpha.sin_cos();
                    (cos * cos + r2 * sin * sin).max(0.0).powf(self.modulus)
                }) / FRAC_PI_2
            }
            // n = (u, √(1−u²) cos φ, √(1−u²) sin φ): σ_n = ρ + (1 − ρ)u²
            // with ρ(φ) = r₂cos²φ + r₃sin²φ, tensile for u² > −ρ/(1 − ρ);
            // dΩ = du dφ, and the octant's measure is π/2.
            FlawPopulation::Volume => {
                self.integrate(0.0, FRAC_PI_2, |phi| {
                    let (sin, cos) = phi.sin_cos();
                    let rho = r2 * cos * cos + r3 * sin * sin;
                    if rho >= 1.0 {
                        return 1.0;
                    }
                    let bottom = if rho >= 0.0 {
                        0.0
                    } else {
                        (-rho / (1.0 - rho)).sqrt()
                    };
                    self.integrate(bottom, 1.0, |u| {
                        (rho + (1.0 - rho) * u * u).max(0.0).powf(self.modulus)
                    })
                }) / FRAC_PI_2
            }
        }
    }

    /// `∫_a^b f` by the rule mapped onto [a, b].
    fn integrate(&self, a: f64, b: f64, mut f: impl FnMut(f64) -> f64) -> f64 {
        let width = b - a;
        self.nodes
            .iter()
            .zip(&self.weights)
            .map(|(x, w)| w * f(a + width * x))
            .sum::<f64>()
            * width
    }
}

/// The `count`-node Gauss–Legendre rule on [0, 1] (nodes, weights summing
/// to 1): the roots of P_count by Newton's method from Tricomi's estimate,
/// each weight `2/((1 − x²) P'(x)²)` on [−1, 1] halved.
fn gauss_legendre_unit(count: usize) -> (Vec<f64>, Vec<f64>) {
    let n = count as f64;
    let mut nodes = Vec::with_capacity(count);
    let mut weights = Vec::with_capacity(count);
    for i in 0..count {
        let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (n + 0.5)).cos();
        let mut derivative = 0.0;
        for _ in 0..100 {
            // P_count(x) and P'_count(x) by the three-term recurrence.
            let (mut p, mut previous) = (1.0, 0.0);
            for k in 1..=count {
                let k = k as f64;
                (p, previous) = (((2.0 * k - 1.0) * x * p - (k - 1.0) * previous) / k, p);
            }
            derivative = n * (x * p - previous) / (x * x - 1.0);
            let step = p / derivative;
            x -= step;
            if step.abs() < 1e-15 {
                break;
            }
        }
        nodes.push((1.0 - x) / 2.0);
        weights.push(1.0 / ((1.0 - x * x) * derivative * derivative));
    }
    (nodes, weights)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(2m)!!/(2m−1)!!`, the equibiaxial factor `1/k̄` of surface flaws.
    fn double_factorial_ratio(m: u32) -> f64 {
        (1..=m)
            .map(|k| (2 * k) as f64 / (2 * k - 1) as f64)
            .product()
    }

    #[test]
    fn the_rule_integrates_polynomials_to_its_degree() {
        for count in [16, 33, 64] {
            let (nodes, weights) = gauss_legendre_unit(count);
            assert!((weights.iter().sum::<f64>() - 1.0).abs() < 1e-14);
            for degree in [1, 7, 2 * count - 1] {
                let integral: f64 = nodes
                    .iter()
                    .zip(&weights)
                    .map(|(x, w)| w * x.powi(degree as i32))
                    .sum();
                let exact = 1.0 / (degree as f64 + 1.0);
                assert!(
                    (integral - exact).abs() < 1e-13 * exact.max(1e-3),
                    "{count} nodes, degree {degree}: {integral} against {exact}"
                );
            }
        }
    }

    /// A uniaxial stress has Weibull's integrand; a stress equal in every
    /// direction of the flaws' space the closed form's `1/k̄`; an
    /// equibiaxial stress in a volume loads the flaws as on a surface (its
    /// normals out of the plane see the in-plane mean's share).
    #[test]
    fn closed_forms_of_the_normal_stress_integrand() {
        for m in [5u32, 10, 20, 40] {
            let modulus = f64::from(m);
            let surface = NormalStressAverage::new(FlawPopulation::Surface, modulus);
            let volume = NormalStressAverage::new(FlawPopulation::Volume, modulus);
            let close = |got: f64, expected: f64, what: &str| {
                assert!(
                    (got - expected).abs() < 1e-9 * expected,
                    "m = {m}, {what}: {got} against {expected}"
                );
            };
            let reference = 7e6;
            let uniaxial = (3e6f64 / reference).powf(modulus);
            close(
                surface.weight(&[3e6, 0.0], reference),
                uniaxial,
                "surface uniaxial",
            );
            close(
                volume.weight(&[3e6, 0.0, 0.0], reference),
                uniaxial,
                "volume uniaxial",
            );
            let factor = double_factorial_ratio(m);
            close(surface.bound(), factor, "surface 1/k̄");
            close(
                surface.weight(&[3e6, 3e6], reference),
                factor * uniaxial,
                "equibiaxial",
            );
            close(volume.bound(), 2.0 * modulus + 1.0, "volume 1/k̄");
            close(
                volume.weight(&[3e6, 3e6, 3e6], reference),
                (2.0 * modulus + 1.0) * uniaxial,
                "equitriaxial",
            );
            // ⟨(1 − u²)^m⟩ over u = (2m)!!/(2m+1)!!, times 2m + 1.
            close(
                volume.weight(&[3e6, 3e6, 0.0], reference),
                factor * uniaxial,
                "volume equibiaxial",
            );
            // Compression loads nothing.
            assert_eq!(surface.weight(&[0.0, -3e6], reference), 0.0);
            assert_eq!(volume.weight(&[-1e6, -2e6, -3e6], reference), 0.0);
        }
    }

    /// Stresses of both signs, where the rules integrate from the angle at
    /// which σ_n turns tensile: against brute-force means over many
    /// orientations (a midpoint rule in α; a midpoint rule in u = cos θ
    /// and φ over the whole sphere, with the first principal axis along z).
    #[test]
    fn mixed_signs_agree_with_brute_force_orientation_means() {
        let modulus = 9.0;
        let surface = NormalStressAverage::new(FlawPopulation::Surface, modulus);
        let volume = NormalStressAverage::new(FlawPopulation::Volume, modulus);
        let tensile_power = |s: f64| s.max(0.0).powf(modulus);
        for r2 in [0.5, -0.3, -1.0, -4.0] {
            let count = 200_000;
            let brute: f64 = (0..count)
                .map(|i| {
                    let alpha = std::f64::consts::PI * (i as f64 + 0.5) / count as f64;
                    let (sin, cos) = alpha.sin_cos();
                    tensile_power(cos * cos + r2 * sin * sin)
                })
                .sum::<f64>()
                / count as f64;
            let expected =
                brute / ((1..=9).map(|k| (2 * k - 1) as f64 / (2 * k) as f64)).product::<f64>();
            let got = surface.weight(&[1.0, r2], 1.0);
            assert!(
                (got - expected).abs() < 1e-6 * expected,
                "surface r₂ = {r2}: {got} against {expected}"
            );
        }
        for [r2, r3] in [[0.5, -0.5], [0.0, -1.0], [-0.2, -3.0], [1.0, -1.0]] {
            let (nu, nphi) = (2000, 2000);
            let mut brute = 0.0;
            for i in 0..nu {
                let u = -1.0 + 2.0 * (i as f64 + 0.5) / nu as f64;
                let across = (1.0 - u * u).sqrt();
                for j in 0..nphi {
                    let phi = std::f64::consts::TAU * (j as f64 + 0.5) / nphi as f64;
                    let (sin, cos) = phi.sin_cos();
                    let (n2, n3) = (across * cos, across * sin);
                    brute += tensile_power(u * u + r2 * n2 * n2 + r3 * n3 * n3);
                }
            }
            let expected = brute / (nu * nphi) as f64 * (2.0 * modulus + 1.0);
            let got = volume.weight(&[1.0, r2, r3], 1.0);
            assert!(
                (got - expected).abs() < 1e-4 * expected,
                "volume [1, {r2}, {r3}]: {got} against {expected}"
            );
        }
    }
}
