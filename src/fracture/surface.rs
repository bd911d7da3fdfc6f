//! The implicit crack surface of Glondu 2012 §3.2.1:
//! `s(p) = bump(R⁻¹(p − p₀))` with `bump(q) = q_y − A·noise(f·q_x, f·q_z)`
//! (eqs. 3.3–3.4), opened at `p₀` normal to the direction `d` of maximum
//! principal stress, `R = (d⊥₁ d d⊥₂)` (eqs. 3.5–3.6).

use nalgebra::{Matrix3, Point3, Vector3};
use noise::{Fbm, NoiseFn, Perlin};

/// One crack's surface; `s < 0` on one side, `s ≥ 0` on the other.
#[derive(Debug, Clone)]
pub struct CrackSurface {
    origin: Point3<f64>,
    /// Rows d⊥₁, d, d⊥₂: this is R⁻¹ = Rᵀ.
    to_local: Matrix3<f64>,
    amplitude_m: f64,
    frequency_per_m: f64,
    noise: Fbm<Perlin>,
}

impl CrackSurface {
    /// A surface through `origin` with mean normal `opening_direction`
    /// (normalised here), noise amplitude (m) and spatial frequency (1/m),
    /// and a noise seed.
    pub fn new(
        origin: Point3<f64>,
        opening_direction: Vector3<f64>,
        amplitude_m: f64,
        frequency_per_m: f64,
        seed: u32,
    ) -> Self {
        let d = opening_direction.normalize();
        // Any unit vector not parallel to d: the axis d is least aligned with.
        let axis = Vector3::ith(d.iamin(), 1.0);
        let perp1 = d.cross(&axis).normalize();
        let perp2 = perp1.cross(&d);
        Self {
            origin,
            to_local: Matrix3::from_rows(&[perp1.transpose(), d.transpose(), perp2.transpose()]),
            amplitude_m,
            frequency_per_m,
            noise: Fbm::new(seed),
        }
    }

    /// The mean normal d.
    pub fn normal(&self) -> Vector3<f64> {
        self.to_local.row(1).transpose()
    }

    pub fn origin(&self) -> Point3<f64> {
        self.origin
    }

    /// `s(p)` (metres along d, less the noise offset).
    pub fn value(&self, p: &Point3<f64>) -> f64 {
        let q = self.to_local * (p - self.origin);
        if self.amplitude_m == 0.0 {
            return q.y;
        }
        q.y - self.amplitude_m
            * self
                .noise
                .get([self.frequency_per_m * q.x, self.frequency_per_m * q.z])
    }
}
