//! Exact mass integrals of tets and of regions built from them.

use super::signed_volume;
use nalgebra::{Matrix3, Point3, Vector3};

/// Volume integrals of a region: ∫1, ∫x, ∫x xᵀ (signed, additive).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MassIntegrals {
    /// ∫1 dV (m³).
    pub volume: f64,
    /// ∫x dV (m⁴).
    pub first: Vector3<f64>,
    /// ∫x xᵀ dV (m⁵).
    pub second: Matrix3<f64>,
}

impl Default for MassIntegrals {
    fn default() -> Self {
        Self {
            volume: 0.0,
            first: Vector3::zeros(),
            second: Matrix3::zeros(),
        }
    }
}

impl MassIntegrals {
    /// Exact integrals over the tet (p0, p1, p2, p3), signed by its orientation:
    /// ∫x = V·Σp/4, ∫x xᵀ = V/20·(Σ pᵢpᵢᵀ + (Σpᵢ)(Σpᵢ)ᵀ).
    pub fn tet(p: [Point3<f64>; 4]) -> Self {
        let volume = signed_volume(&p);
        let sum: Vector3<f64> = p.iter().map(|q| q.coords).sum();
        // Symmetric: the six distinct entries, each summed as the full
        // matrix sum would (from zero, in point order).
        let mut second = Matrix3::zeros();
        for i in 0..3 {
            for j in i..3 {
                let outer = p.iter().fold(0.0, |acc, q| acc + q[i] * q[j]);
                let entry = volume / 20.0 * (outer + sum[i] * sum[j]);
                second[(i, j)] = entry;
                second[(j, i)] = entry;
            }
        }
        Self {
            volume,
            first: volume * sum / 4.0,
            second,
        }
    }

    pub(crate) fn add(&mut self, other: &Self) {
        self.volume += other.volume;
        self.first += other.first;
        self.second += other.second;
    }

    pub(crate) fn sub(&mut self, other: &Self) {
        self.volume -= other.volume;
        self.first -= other.first;
        self.second -= other.second;
    }

    /// ∫x / ∫1, the centroid (m).
    pub fn centroid(&self) -> Point3<f64> {
        Point3::from(self.first / self.volume)
    }

    /// Inertia tensor about the centroid for density ρ (kg·m²).
    pub fn inertia_about_centroid(&self, density_kg_m3: f64) -> Matrix3<f64> {
        let c = self.first / self.volume;
        let central = self.second - self.volume * c * c.transpose();
        density_kg_m3 * (Matrix3::from_diagonal_element(central.trace()) - central)
    }
}
