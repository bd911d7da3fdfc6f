//! The static correction of a truncated modal basis (the mode-acceleration
//! method; Craig & Kurdila, *Fundamentals of Structural Dynamics*, §14.2;
//! Glondu 2012 §3.3 keeps only the modal sum).
//!
//! A load `p(t) = F(t) p̂` that lasts long against the periods of the modes
//! left out drives them quasi-statically: their response is the static
//! response to `p̂` less its part in the retained modes,
//!
//! ```text
//! u(t) = Σ_j x_j z_j(t) + F(t) r,   K r = p̂ − M R Rᵀ p̂ − M X Xᵀ p̂,   r ⊥_M R, X
//! ```
//!
//! with `X` the retained modes and `R` the rigid motions (both
//! M-orthonormal). Removing `M R Rᵀ p̂` is the inertia relief of a free body:
//! the load's resultant and moment accelerate it rigidly and the rest
//! deforms it. `r` is the *residual shape* of the load; its stresses are
//! added to the modal stresses with the load's force as their coordinate.
//!
//! K is singular (rigid motions), so `K r = b` is solved with the Cholesky
//! factor of `K − σM` (σ < 0) the eigensolver already has, as the fixed
//! point `r ← (K − σM)⁻¹ (b − σ M r)` projected back M-orthogonal to `R` and
//! `X`. The iteration contracts component i by `|σ| / (λ_i + |σ|)`, and
//! only the modes above the retained ones remain, so it converges in two or
//! three solves.

use super::eigen::{rigid_basis, shifted_matrix, CholeskyFactor, EigenError};
use crate::config::Material;
use crate::fem::ElasticMesh;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::matmul::matmul;
use faer::reborrow::ReborrowMut;
use faer::{Accum, Mat, MatMut, MatRef, Par};

/// Relative error of a residual shape at which the fixed point stops: a
/// hundredth of a percent of a part of the stress, which is compared with
/// strengths known to a few percent. The a priori bound ρ^k reaches it in
/// one solve once the highest retained mode is above 100·√|σ| (1 kHz for
/// the default shift).
const TOLERANCE: f64 = 1e-4;
/// Fixed-point iterations before the last one is taken as it is.
const MAX_ITERATIONS: usize = 50;

/// The factor of `K − σM` of a body and what the residual shapes need
/// beside it.
#[derive(Debug)]
pub struct StaticCorrection {
    factor: CholeskyFactor,
    shift: f64,
    /// Lumped mass per DOF (kg).
    mass: Vec<f64>,
    /// The six rigid motions, x-space, M-orthonormal.
    rigid: Mat<f64>,
}

impl StaticCorrection {
    /// Bytes held: the factor of `K − σM`, the lumped masses and the rigid
    /// motions.
    pub fn bytes(&self) -> usize {
        self.factor.bytes()
            + (self.mass.len() + self.rigid.nrows() * self.rigid.ncols())
                * std::mem::size_of::<f64>()
    }

    /// From the eigensolver's factor of `K − shift·M` (lumped `mass`) and
    /// its rigid basis in y = M^½ x.
    pub(super) fn from_factor(
        factor: CholeskyFactor,
        shift: f64,
        mass: &[f64],
        rigid_y: MatRef<'_, f64>,
    ) -> Self {
        let rigid = Mat::from_fn(rigid_y.nrows(), rigid_y.ncols(), |i, j| {
            rigid_y[(i, j)] / mass[i].sqrt()
        });
        Self {
            factor,
            shift,
            mass: mass.to_vec(),
            rigid,
        }
    }

    /// Assembles and factorises `K − shift·M` of `elastic` in `material`
    /// (for a basis loaded from the cache, which keeps no factor).
    pub fn new(elastic: &ElasticMesh, material: &Material, shift: f64) -> Result<Self, EigenError> {
        if !(shift < 0.0 && shift.is_finite()) {
            return Err(EigenError::BadShift(shift));
        }
        let stiffness = elastic.stiffness(material);
        let mass = elastic.lumped_mass(material.density_kg_m3);
        if let Some(i) = mass.iter().position(|&m| !(m > 0.0 && m.is_finite())) {
            return Err(EigenError::BadMass(i));
        }
        let shifted = shifted_matrix(&stiffness, &mass, shift);
        let factor = CholeskyFactor::new(&shifted, Par::rayon(0), shift)?;
        let sqrt_mass: Vec<f64> = mass.iter().map(|m| m.sqrt()).collect();
        let rigid_y = rigid_basis(elastic.nodes(), &sqrt_mass);
        Ok(Self::from_factor(factor, shift, &mass, rigid_y.as_ref()))
    }

    /// Degrees of freedom.
    pub fn dofs(&self) -> usize {
        self.mass.len()
    }

    /// The residual shape `r` of each load column of `loads` (DOFs × C,
    /// N per unit force) against the retained `modes` (DOFs × m,
    /// M-orthonormal, the highest of eigenvalue `highest_eigenvalue`): the
    /// static response less its rigid and retained parts (module docs).
    /// Column c of the result is load c's shape (m per N).
    ///
    /// From `r₀ = 0`, k solves leave an error of at most `ρ^k ‖r‖` (M-norm)
    /// with `ρ = |σ| / (λ_m + |σ|)`, which bounds the contraction over the
    /// modes left out: the iteration stops once that is below 1e-4, one
    /// solve for the shipped bodies (ρ ≈ 1e-6 to 1e-5).
    pub fn residual_shapes(
        &self,
        loads: MatRef<'_, f64>,
        modes: MatRef<'_, f64>,
        highest_eigenvalue: f64,
    ) -> Mat<f64> {
        let (n, count) = (loads.nrows(), loads.ncols());
        debug_assert_eq!(n, self.dofs());
        let par = Par::rayon(0);
        // b = p − M R Rᵀ p − M X Xᵀ p.
        let mut b = loads.to_owned();
        for basis in [self.rigid.as_ref(), modes] {
            let coefficients = basis.transpose() * loads;
            let mut part = Mat::<f64>::zeros(n, count);
            matmul(
                part.as_mut(),
                Accum::Replace,
                basis,
                coefficients.as_ref(),
                1.0,
                par,
            );
            for j in 0..count {
                for i in 0..n {
                    b[(i, j)] -= self.mass[i] * part[(i, j)];
                }
            }
        }
        let mut mem = MemBuffer::new(self.factor.solve_scratch(count, par));
        let mut shapes = Mat::<f64>::zeros(n, count);
        let mut next = Mat::<f64>::zeros(n, count);
        let contraction = if highest_eigenvalue > 0.0 {
            self.shift.abs() / (highest_eigenvalue + self.shift.abs())
        } else {
            1.0
        };
        let mut error_bound = 1.0;
        for _ in 0..MAX_ITERATIONS {
            for j in 0..count {
                for i in 0..n {
                    next[(i, j)] = b[(i, j)] - self.shift * self.mass[i] * shapes[(i, j)];
                }
            }
            self.factor
                .solve_in_place(next.as_mut(), par, MemStack::new(&mut mem));
            self.project(next.as_mut(), modes);
            let change = (&next - &shapes).norm_l2();

            let size = next.norm_l2();
            std::mem::swap(&mut shapes, &mut next);
            error_bound *= contraction;
            if error_bound <= TOLERANCE || change <= TOLERANCE * size {
                break;
            }
        }
        shapes
    }

    /// `u ← u − R Rᵀ M u − X Xᵀ M u`.
    fn project(&self, mut u: MatMut<'_, f64>, modes: MatRef<'_, f64>) {
        let weighted = Mat::from_fn(u.nrows(), u.ncols(), |i, j| self.mass[i] * u[(i, j)]);
        for basis in [self.rigid.as_ref(), modes] {
            let coefficients = basis.transpose() * weighted.as_ref();
            matmul(
                u.rb_mut(),
                Accum::Add,
                basis,
                coefficients.as_ref(),
                -1.0,
                Par::Seq,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MaterialLibrary;
    use crate::fem::{ElementOrder, SparseMatrix};
    use crate::mesh::box_mesh;
    use crate::modal::{lowest_modes, EigenSettings};
    use faer::sparse::linalg::matmul::sparse_dense_matmul;

    /// A 20 × 4 × 2 cm ceramic bar of `cells` in `order` elements: its
    /// elasticity, material, K and lumped M.
    fn bar(
        cells: [usize; 3],
        order: ElementOrder,
    ) -> (ElasticMesh, Material, SparseMatrix, Vec<f64>) {
        let mesh = box_mesh([0.2, 0.04, 0.02], cells, None).unwrap();
        let elastic = ElasticMesh::new(&mesh, order);
        let material = MaterialLibrary::builtin()
            .get("ceramic-tile")
            .unwrap()
            .clone();
        let stiffness = elastic.stiffness(&material);
        let mass = elastic.lumped_mass(material.density_kg_m3);
        (elastic, material, stiffness, mass)
    }

    /// The modal part plus the residual shape is the static response of the
    /// free body with inertia relief: `K u = p − M R Rᵀ p`, whatever the
    /// number of modes retained, and the residual is M-orthogonal to the
    /// retained and rigid modes.
    #[test]
    fn modes_plus_residual_solve_the_inertia_relieved_static_problem() {
        for order in [ElementOrder::Linear, ElementOrder::Quadratic] {
            inertia_relieved_static_problem(order);
        }
    }

    fn inertia_relieved_static_problem(order: ElementOrder) {
        let (elastic, _, stiffness, mass) = bar([10, 3, 2], order);
        let n = mass.len();
        // A unit force down at one corner node and a sideways pull at
        // another: both bend, twist and accelerate the body.
        let mut loads = Mat::<f64>::zeros(n, 2);
        loads[(2, 0)] = -1.0;
        loads[(3 * (elastic.corner_count() - 1), 1)] = 1.0;
        for modes in [4, 12, 30] {
            let solution = lowest_modes(
                &stiffness,
                &mass,
                elastic.nodes(),
                &EigenSettings::new(modes),
                &|_| {},
            )
            .unwrap();
            let correction = &solution.static_correction;
            let highest = solution.eigenvalues[modes - 1];
            let residual =
                correction.residual_shapes(loads.as_ref(), solution.shapes.as_ref(), highest);
            let x = &solution.shapes;
            // u = X Λ⁻¹ Xᵀ p + r.
            let mut u = residual.clone();
            for c in 0..2 {
                for (j, lambda) in solution.eigenvalues.iter().enumerate() {
                    let g: f64 = (0..n).map(|i| x[(i, j)] * loads[(i, c)]).sum();
                    for i in 0..n {
                        u[(i, c)] += x[(i, j)] * g / lambda;
                    }
                }
            }
            let mut ku = Mat::<f64>::zeros(n, 2);
            sparse_dense_matmul(
                ku.as_mut(),
                Accum::Replace,
                stiffness.as_ref(),
                u.as_ref(),
                1.0,
                Par::Seq,
            );
            let rigid = &correction.rigid;
            for c in 0..2 {
                let rp: Vec<f64> = (0..6)
                    .map(|r| (0..n).map(|i| rigid[(i, r)] * loads[(i, c)]).sum())
                    .collect();
                let mut error = 0.0f64;
                let mut size = 0.0f64;
                for i in 0..n {
                    let relieved = loads[(i, c)]
                        - mass[i] * (0..6).map(|r| rigid[(i, r)] * rp[r]).sum::<f64>();
                    error = error.max((ku[(i, c)] - relieved).abs());
                    size = size.max(relieved.abs());
                }
                assert!(
                    error < 1e-6 * size,
                    "{order:?}, {modes} modes, load {c}: |Ku − p̃| = {error:e}"
                );
                for basis in [x.as_ref(), rigid.as_ref()] {
                    for j in 0..basis.ncols() {
                        let overlap: f64 = (0..n)
                            .map(|i| basis[(i, j)] * mass[i] * residual[(i, c)])
                            .sum();
                        let norm: f64 = (0..n)
                            .map(|i| mass[i] * residual[(i, c)].powi(2))
                            .sum::<f64>()
                            .sqrt();
                        assert!(
                            overlap.abs() < 1e-9 * norm,
                            "{modes} modes: overlap {overlap:e}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_factor_built_apart_gives_the_eigensolvers_residuals() {
        let (elastic, material, stiffness, mass) = bar([8, 2, 2], ElementOrder::Quadratic);
        let settings = EigenSettings::new(10);
        let solution =
            lowest_modes(&stiffness, &mass, elastic.nodes(), &settings, &|_| {}).unwrap();
        let apart = StaticCorrection::new(&elastic, &material, settings.shift).unwrap();
        let mut loads = Mat::<f64>::zeros(mass.len(), 1);
        loads[(5, 0)] = 1.0;
        let highest = solution.eigenvalues[9];
        let shapes = solution.shapes.as_ref();
        let a = solution
            .static_correction
            .residual_shapes(loads.as_ref(), shapes, highest);
        let b = apart.residual_shapes(loads.as_ref(), shapes, highest);
        assert!((&a - &b).norm_l2() < 1e-10 * a.norm_l2());
        assert!(matches!(
            StaticCorrection::new(&elastic, &material, 1.0),
            Err(EigenError::BadShift(_))
        ));
    }
}
