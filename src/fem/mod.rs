//! Linear elasticity on tetrahedra, linear (4-node) or quadratic (10-node):
//! element kinematics and stress, stiffness and lumped mass, sparse
//! assembly on an [`ElasticMesh`].
//!
//! Conventions: displacement vectors are node-major (`u[3n + axis]`); strain
//! and stress use Voigt order `[xx, yy, zz, yz, xz, xy]` with engineering
//! shear strains (γ = 2ε), so `σ = C ε` with the isotropic 6×6 `C`.

mod assembly;
mod element;
mod matrix_market;
mod quadratic;

pub use assembly::{ElasticMesh, ElementOrder};
pub use element::{
    constitutive_matrix, crack_plane_stress, element_stiffness, principal_stresses,
    strain_energy_density, stress_tensor, symmetric_strain, voigt_of, TetElement, Voigt,
};
pub use matrix_market::{write_diagonal_matrix_market, write_matrix_market};
pub use quadratic::{
    quadratic_corner_b_matrices, quadratic_element_stiffness, quadratic_gradients,
    quadratic_strain, HRZ_MASS_FRACTIONS, TET10_NODES,
};

/// Sparse matrices used throughout: column-major, `usize` indices.
pub type SparseMatrix = faer::sparse::SparseColMat<usize, f64>;
