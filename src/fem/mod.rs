//! Linear elasticity on 4-node tetrahedra: element kinematics and stress,
//! stiffness and mass, sparse assembly.
//!
//! Conventions: displacement vectors are node-major (`u[3n + axis]`); strain
//! and stress use Voigt order `[xx, yy, zz, yz, xz, xy]` with engineering
//! shear strains (γ = 2ε), so `σ = C ε` with the isotropic 6×6 `C`.

mod assembly;
mod element;
mod matrix_market;

pub use assembly::{assemble_consistent_mass, assemble_stiffness, lumped_mass, DofPattern};
pub use element::{
    constitutive_matrix, element_stiffness, principal_stresses, strain_energy_density,
    stress_tensor, TetElement, Voigt,
};
pub use matrix_market::{write_diagonal_matrix_market, write_matrix_market};

/// Sparse matrices used throughout: column-major, `usize` indices.
pub type SparseMatrix = faer::sparse::SparseColMat<usize, f64>;
