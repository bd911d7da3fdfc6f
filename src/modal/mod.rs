//! Modal analysis: the generalised eigenproblem `K x = λ M x`, the modal
//! basis with its per-element modal stresses and per-node displacements,
//! the analytic modal response, and an on-disk cache (Glondu 2012
//! §2.4.3.2, §3.3).

mod backward;
mod basis;
mod cache;
mod displacement;
mod eigen;
mod lanczos;
mod ordering;
mod response;
mod static_correction;
mod stress;

pub use basis::{
    analyse, mode_dynamics, solve_modes, ModalBasis, ModalBytes, ModalReport, ModalTimings, Modes,
};
pub use cache::{default_cache_dir, ModalCache};
pub use displacement::ModalDisplacement;
pub use eigen::{lowest_modes, EigenError, EigenSettings, EigenSolution, EigenStats};
pub use ordering::FactorOrdering;
pub use response::{ModalState, ModeDynamics};
pub use static_correction::StaticCorrection;
pub use stress::{ModalStress, GROUP_POINTS};

/// Why a modal basis could not be had.
#[derive(Debug, thiserror::Error)]
pub enum ModalError {
    /// The eigensolve failed.
    #[error(transparent)]
    Eigen(#[from] EigenError),
    /// The modal cache could not be read or written.
    #[error("modal cache {path}: {message}")]
    Cache {
        /// The cache file.
        path: std::path::PathBuf,
        /// What went wrong.
        message: String,
    },
}
