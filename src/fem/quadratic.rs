//! The 10-node (quadratic) tetrahedron on a straight-edged tet: corners
//! 0–3, then one node at the midpoint of each edge in
//! [`TET_EDGES`](crate::mesh::TET_EDGES) order. Its displacement is
//! complete to second order, so its strain is linear and a bending field
//! (strain linear through the thickness) is exact in each element: the
//! shear locking of the linear tet, whose constant strain cannot bend,
//! is gone (Zienkiewicz, Taylor & Zhu, *The Finite Element Method*, 7th
//! ed., §6.3 and §8.8).
//!
//! Shape functions in the barycentric coordinates L of the linear tet:
//! `N_i = L_i(2L_i − 1)` at corner i and `N_ij = 4 L_i L_j` at the node of
//! edge ij, so `∇N_i = (4L_i − 1)∇L_i` and `∇N_ij = 4(L_j∇L_i + L_i∇L_j)`
//! with the constant `∇L_i` of [`TetElement`].

use super::element::{add_gradient_stiffness, b_matrix_of, symmetric_strain, TetElement, Voigt};
use crate::mesh::TET_EDGES;
use nalgebra::{Matrix3, SMatrix, Vector3};

/// Nodes of one quadratic tet.
pub const TET10_NODES: usize = 10;

/// The 4-point Gauss rule on a tet (barycentric points, equal weights ¼),
/// exact for polynomials of degree 2: the integrand ∇N_a·∇N_b of the
/// stiffness is one (Zienkiewicz, Taylor & Zhu, Table 6.4).
const GAUSS_4: [[f64; 4]; 4] = {
    const A: f64 = 0.585_410_196_624_968_5;
    const B: f64 = 0.138_196_601_125_010_5;
    [[A, B, B, B], [B, A, B, B], [B, B, A, B], [B, B, B, A]]
};

/// Gradients (1/m) of the ten shape functions at barycentric point `l`.
pub fn quadratic_gradients(element: &TetElement, l: &[f64; 4]) -> [Vector3<f64>; TET10_NODES] {
    let g = &element.gradients;
    let mut out = [Vector3::zeros(); TET10_NODES];
    for i in 0..4 {
        out[i] = (4.0 * l[i] - 1.0) * g[i];
    }
    for (k, &[i, j]) in TET_EDGES.iter().enumerate() {
        out[4 + k] = 4.0 * (l[j] * g[i] + l[i] * g[j]);
    }
    out
}

/// The 30×30 stiffness of the quadratic tet as 10×10 blocks of 3×3,
/// `K_ab = ∫ (λ ∇N_a ∇N_bᵀ + μ ∇N_b ∇N_aᵀ + μ ∇N_a·∇N_b I) dV`, by the
/// 4-point rule (exact: the integrand is quadratic).
pub fn quadratic_element_stiffness(
    element: &TetElement,
    lambda: f64,
    mu: f64,
) -> [[Matrix3<f64>; TET10_NODES]; TET10_NODES] {
    let mut k = [[Matrix3::zeros(); TET10_NODES]; TET10_NODES];
    for point in &GAUSS_4 {
        let gradients = quadratic_gradients(element, point);
        add_gradient_stiffness(&mut k, &gradients, element.volume / 4.0, lambda, mu);
    }
    k
}

/// Lumped mass of each node of a quadratic tet as a fraction of the
/// tet's mass: the consistent mass matrix's diagonal (ρV/70 at a corner,
/// 8ρV/105 at an edge node) scaled to sum to ρV (Hinton, Rock &
/// Zienkiewicz 1976, "HRZ"): 1/36 per corner, 4/27 per edge node. Row
/// sums would give the corners negative mass.
pub const HRZ_MASS_FRACTIONS: [f64; TET10_NODES] = [
    1.0 / 36.0,
    1.0 / 36.0,
    1.0 / 36.0,
    1.0 / 36.0,
    4.0 / 27.0,
    4.0 / 27.0,
    4.0 / 27.0,
    4.0 / 27.0,
    4.0 / 27.0,
    4.0 / 27.0,
];

/// The 6×30 strain–displacement matrix at each corner of the tet:
/// `ε(corner c) = B_c u_e` for the element's 30 nodal displacements.
/// Strain is linear in the element, so its values at the corners define
/// it, and any convex function of it (the largest principal stress) is
/// largest at a corner.
pub fn quadratic_corner_b_matrices(element: &TetElement) -> [SMatrix<f64, 6, 30>; 4] {
    std::array::from_fn(|c| {
        let mut l = [0.0; 4];
        l[c] = 1.0;
        b_matrix_of(&quadratic_gradients(element, &l))
    })
}

/// Strain (Voigt, engineering shear) at barycentric point `l` from the ten
/// nodal displacements.
pub fn quadratic_strain(
    element: &TetElement,
    l: &[f64; 4],
    u: &[Vector3<f64>; TET10_NODES],
) -> Voigt {
    let gradients = quadratic_gradients(element, l);
    let grad_u: Matrix3<f64> = (0..TET10_NODES)
        .map(|a| u[a] * gradients[a].transpose())
        .sum();
    symmetric_strain(&grad_u)
}
