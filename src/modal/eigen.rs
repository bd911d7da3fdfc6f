//! The lowest elastic modes of `K x = λ M x` for a free-floating body.
//!
//! Glondu writes the eigenproblem `Kx + λMx = 0` (2.4.3.2); the correct form
//! is `Kx = λMx` (DESIGN.md). The method:
//!
//! 1. Shift-invert on the mass-symmetrised operator
//!    `A = S (K − σM)⁻¹ S` with `S = M^½` (lumped M, so S is diagonal) and
//!    σ < 0, so `K − σM` is positive definite although K is singular. A has
//!    the same eigenvectors (in `y = S x`) with `θ = 1/(λ − σ)`: the lowest λ
//!    become the largest θ, which Krylov–Schur finds first.
//! 2. The six rigid modes are known exactly (K annihilates rigid motion), so
//!    they are projected out of A instead of being searched for: a
//!    single-vector Krylov method can skip copies of a repeated eigenvalue,
//!    and the rigid eigenvalue is six-fold.
//! 3. Thick-restart Lanczos ([`super::lanczos`]) finds the wanted modes plus a
//!    guard band.
//! 4. The Lanczos vectors, augmented by a few random vectors, go through
//!    block inverse iteration (one multi-right-hand-side solve) and
//!    Rayleigh–Ritz on the pencil (K, M). A copy of a repeated eigenvalue that
//!    Lanczos skipped is present in the random vectors and grows under the
//!    iteration like any low mode, so it surfaces as a new Ritz value; the
//!    step repeats until every wanted mode's residual ‖Kx − λMx‖ / ‖Kx‖ is
//!    below the tolerance.

use super::backward::BackwardSplit;
use super::lanczos::{largest_eigenpairs, orthonormalise_block, symmetric_eigen, LanczosSettings};
use super::ordering::{nested_dissection, FactorOrdering};
use super::static_correction::StaticCorrection;
use crate::fem::{ElementOrder, SparseMatrix};
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::perm::PermRef;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, LltRef, SymbolicCholesky, SymmetricOrdering,
};
use faer::sparse::linalg::matmul::sparse_dense_matmul;
use faer::{Accum, Col, Mat, MatMut, MatRef, Par, Side};
use nalgebra::Point3;
use std::time::Instant;

/// How far above the rounding floor ε·λ_max/λ of a mode's relative
/// residual it is accepted after the last polish step: the floor is an
/// estimate (K x sums ~80 products per row, the solves add their own
/// rounding).
const ROUNDING_MARGIN: f64 = 10.0;

/// An upper bound of the largest eigenvalue of `M⁻¹K` (lumped M):
/// Gershgorin's circles, `max_i Σ_k |K_ik| / m_i`.
fn gershgorin_largest(stiffness: &SparseMatrix, mass: &[f64]) -> f64 {
    let k = stiffness.as_ref();
    // K is symmetric: column sums are row sums.
    (0..k.ncols())
        .map(|j| k.val_of_col(j).iter().map(|v| v.abs()).sum::<f64>() / mass[j])
        .fold(0.0, f64::max)
}

/// What to compute, and how hard to check it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EigenSettings {
    /// Elastic modes wanted (rigid modes excluded).
    pub modes: usize,
    /// Extra modes computed beyond `modes` and then dropped.
    pub guard: usize,
    /// The shift σ (rad²/s², negative).
    pub shift: f64,
    /// Largest accepted relative residual ‖Kx − λMx‖ / ‖Kx‖ (or ten times
    /// the floor rounding sets, ε·λ_max/λ, where that is higher: thin
    /// plates).
    pub residual_tolerance: f64,
    /// Lanczos block size (columns solved together).
    pub block: usize,
    /// The element of K and M (the basis's DOFs are its nodes').
    pub element: ElementOrder,
    /// The ordering of the factor of `K − σM` (it changes the factor's
    /// size and the solves' cost, not the modes beyond rounding).
    pub ordering: FactorOrdering,
}

impl EigenSettings {
    /// Defaults for `modes` elastic modes: guard band of max(20, modes/5),
    /// σ = −(2π·10 Hz)², residual tolerance 1e-8, Lanczos blocks of 8 in
    /// a basis of up to three columns per wanted pair (measured fastest on
    /// slabs and tiles of 1.7k–40k tets, docs/modal.md), quadratic
    /// elements.
    pub fn new(modes: usize) -> Self {
        Self {
            modes,
            guard: 20.max(modes / 5),
            shift: -(std::f64::consts::TAU * 10.0).powi(2),
            residual_tolerance: 1e-8,
            block: 8,
            element: ElementOrder::default(),
            ordering: FactorOrdering::default(),
        }
    }
}

/// Eigenpairs, ascending, M-orthonormal.
#[derive(Debug, Clone)]
pub struct EigenSolution {
    /// λ_i = ω_i² (rad²/s²).
    pub eigenvalues: Vec<f64>,
    /// Column i is mode i, node-major DOFs, `xᵢᵀ M xⱼ = δᵢⱼ`.
    pub shapes: Mat<f64>,
    /// ‖Kx − λMx‖ / ‖Kx‖ per mode.
    pub residuals: Vec<f64>,
    /// How the solve went.
    pub stats: EigenStats,
    /// The factor of `K − σM`, kept for the static correction.
    pub static_correction: std::sync::Arc<StaticCorrection>,
}

/// How the solve went.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct EigenStats {
    /// Factorisation of K − σM (s).
    pub factorization_s: f64,
    /// Lanczos iterations (s).
    pub lanczos_s: f64,
    /// Refinement of the eigenpairs (s).
    pub polish_s: f64,
    /// Operator applications, counted per right-hand side.
    pub solves: usize,
    /// Lanczos restarts.
    pub lanczos_restarts: usize,
    /// Pairs Lanczos converged (of modes + guard) before polishing.
    pub lanczos_converged: usize,
    /// Block inverse iteration + Rayleigh–Ritz steps.
    pub polish_steps: usize,
    /// Wanted modes that Lanczos did not return (skipped copies of repeated
    /// eigenvalues, or unconverged pairs) and the polish step found.
    pub recovered_modes: usize,
    /// Entries of the Cholesky factor of K − σM.
    pub factor_nnz: usize,
}

/// Why the eigensolve failed.
#[derive(Debug, thiserror::Error)]
pub enum EigenError {
    /// K − σM could not be factorised.
    #[error("K − σM is not positive definite (σ = {shift}); is the mesh connected and the material valid?")]
    NotPositiveDefinite {
        /// The shift σ.
        shift: f64,
    },
    /// The shift is not negative.
    #[error("the shift must be negative, got {0}")]
    BadShift(f64),
    #[error(
        "{wanted} elastic modes asked for, but the body has only {dofs} DOFs (at most {available} modes)"
    )]
    /// More modes asked for than the mesh has.
    TooManyModes {
        /// Elastic modes asked for.
        wanted: usize,
        /// Degrees of freedom of the mesh.
        dofs: usize,
        /// Elastic modes the solver can find: DOFs less the six rigid
        /// ones and two Lanczos blocks.
        available: usize,
    },
    /// A mode did not converge.
    #[error("mode {mode} has residual {residual:e} > {tolerance:e} after {steps} refinement steps; try a larger guard band")]
    Residual {
        /// The mode's index.
        mode: usize,
        /// Its relative residual.
        residual: f64,
        /// The residual asked for.
        tolerance: f64,
        /// Refinement steps taken.
        steps: usize,
    },
    /// The lumped mass matrix has a non-positive entry; the DOF.
    #[error("the mass matrix has a non-positive entry at DOF {0}")]
    BadMass(usize),
    /// The problem would need more memory than allowed.
    #[error(transparent)]
    Limit(#[from] crate::limits::LimitError),
    /// The Ritz basis became linearly dependent.
    #[error("the Ritz basis lost linear independence: the stiffness and mass are out of range for f64 (check the material's modulus and density, and the mesh)")]
    DependentBasis,
}

/// Residual bound for Lanczos convergence, relative to the largest θ. The
/// polish step refines the vectors afterwards, so this only needs to pin
/// down the wanted subspace.
const LANCZOS_TOLERANCE: f64 = 1e-10;

/// The Lanczos basis's largest size, in columns per wanted pair (modes and
/// guard band). Room for three per pair lets blocks of 8 converge without
/// a restart on the slabs and tiles measured; with two they restarted two
/// or three times and took more solves.
const LANCZOS_BASIS_PER_PAIR: usize = 3;
/// Restarts before Lanczos hands what it has to the polish step.
const MAX_RESTARTS: usize = 100;
/// Random vectors added to the polish block to catch skipped copies.
const PROBE_VECTORS: usize = 8;
/// Block inverse iteration + Rayleigh–Ritz steps before a residual failure is final.
const MAX_POLISH_STEPS: usize = 6;

/// Computes the lowest `settings.modes` elastic modes of `(K, diag(mass))`.
///
/// `nodes` are the node positions (for the rigid modes); `on_solve` is called
/// with the running count of solves (for progress display).
pub fn lowest_modes(
    stiffness: &SparseMatrix,
    lumped_mass: &[f64],
    nodes: &[Point3<f64>],
    settings: &EigenSettings,
    on_solve: &(dyn Fn(usize) + Sync),
) -> Result<EigenSolution, EigenError> {
    use rand::{Rng, SeedableRng};
    let n = lumped_mass.len();
    let sigma = settings.shift;
    if !(sigma < 0.0 && sigma.is_finite()) {
        return Err(EigenError::BadShift(sigma));
    }
    if let Some(i) = lumped_mass
        .iter()
        .position(|&m| !(m > 0.0 && m.is_finite()))
    {
        return Err(EigenError::BadMass(i));
    }
    // Block Lanczos needs two blocks beyond its pairs in the space
    // orthogonal to the six rigid modes; a small body takes smaller
    // blocks, down to single vectors.
    let available = n.saturating_sub(6 + 2);
    if settings.modes == 0 || settings.modes > available {
        return Err(EigenError::TooManyModes {
            wanted: settings.modes,
            dofs: n,
            available,
        });
    }
    let lanczos_count = (settings.modes + settings.guard).min(available);
    let block = settings
        .block
        .min((n - 6 - lanczos_count) / 2)
        .clamp(1, lanczos_count);
    // The operator acts on the n − 6 dimensions orthogonal to the rigid
    // modes. On a body of a few elements Lanczos's basis and its residual
    // block would fill them: the last block is then rounding noise, which
    // normalised is neither orthogonal nor rigid-free, and the Ritz values
    // go wrong. There the whole small problem is solved densely instead.
    let max_dim = (LANCZOS_BASIS_PER_PAIR * lanczos_count).max(64);
    let dense = max_dim + block > n - 6;
    // The Krylov basis (up to three columns per wanted pair) and the Ritz
    // vectors a restart keeps from it (up to two per pair), or the dense
    // matrix and its eigenvectors; later the polish block, its images and
    // its Ritz vectors (three per pair): n values per column.
    let columns =
        5.0 * (settings.modes + settings.guard) as f64 + if dense { 2.0 * n as f64 } else { 0.0 };
    crate::limits::check_shared_memory(
        || format!("{} modes of a body of {n} DOFs", settings.modes),
        n as f64 * columns * 8.0,
    )?;
    let mut stats = EigenStats::default();
    let par = Par::rayon(0);

    let t = Instant::now();
    let shifted = shifted_matrix(stiffness, lumped_mass, sigma);
    let llt = CholeskyFactor::new(&shifted, par, sigma, settings.ordering, None)?;
    stats.factorization_s = t.elapsed().as_secs_f64();
    stats.factor_nnz = llt.values.len();
    drop(shifted);

    let sqrt_mass: Vec<f64> = lumped_mass.iter().map(|m| m.sqrt()).collect();
    let rigid = rigid_basis(nodes, &sqrt_mass);
    let operator = ShiftInvert {
        llt: &llt,
        sqrt_mass: &sqrt_mass,
        rigid: rigid.as_ref(),
    };
    let mut solves = 0usize;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x7e55e4a);
    let random_column = |rng: &mut rand_chacha::ChaCha8Rng| {
        let mut v = Col::<f64>::from_fn(n, |_| rng.random_range(-1.0..1.0));
        operator.project_rigid(v.as_mat_mut());
        v
    };

    // Block Lanczos for the wanted modes and the guard band.
    let t = Instant::now();
    let (lanczos_eigenvalues, lanczos_vectors) = if dense {
        stats.lanczos_converged = lanczos_count;
        dense_lowest(stiffness, &sqrt_mass, &operator, lanczos_count)
    } else {
        let mut mem = MemBuffer::new(operator.solve_scratch(block));
        let mut start = Mat::<f64>::zeros(n, block);
        for j in 0..block {
            start.col_mut(j).copy_from(&random_column(&mut rng));
        }
        let mut probe_rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed);
        let outcome = largest_eigenpairs(
            &mut |out, x| {
                operator.apply(out, x, MemStack::new(&mut mem));
                solves += x.ncols();
                on_solve(solves);
            },
            start,
            &LanczosSettings {
                count: lanczos_count,
                block,
                max_dim,
                tolerance: LANCZOS_TOLERANCE,
                max_restarts: MAX_RESTARTS,
            },
            &mut |column| column.col_mut(0).copy_from(&random_column(&mut probe_rng)),
        );
        stats.lanczos_restarts = outcome.restarts;
        stats.lanczos_converged = outcome.converged;
        let eigenvalues = outcome
            .theta
            .iter()
            .map(|&theta| sigma + 1.0 / theta)
            .collect();
        (eigenvalues, outcome.vectors)
    };
    stats.lanczos_s = t.elapsed().as_secs_f64();

    // The residual a mode computed in f64 can reach: K x rounds to about
    // ε·λ_max relative to M x, so mode j's relative residual cannot go
    // below ~ε·λ_max/λ_j. A thin plate of quadratic elements (λ_max/λ₁ ~
    // 10⁹) sits there, above the tolerance; a mode is accepted within
    // ROUNDING_MARGIN of that floor (λ_max bounded by Gershgorin's circles
    // of M⁻¹K). Polishing still aims at the tolerance.
    let largest_eigenvalue = gershgorin_largest(stiffness, lumped_mass);
    let accepted = |lambda: f64| {
        settings
            .residual_tolerance
            .max(ROUNDING_MARGIN * f64::EPSILON * largest_eigenvalue / lambda.abs())
    };
    // Polish: block inverse iteration + Rayleigh–Ritz on [Lanczos vectors |
    // probes]. Three n × width buffers: the subspace (y-space), its image,
    // and the Ritz vectors.
    let t = Instant::now();
    let width = (lanczos_count + PROBE_VECTORS).min(available);
    let mut subspace = Mat::<f64>::zeros(n, width);
    subspace
        .as_mut()
        .get_mut(.., ..lanczos_vectors.ncols())
        .copy_from(&lanczos_vectors);
    drop(lanczos_vectors);
    for j in lanczos_count..width {
        subspace.col_mut(j).copy_from(&random_column(&mut rng));
    }
    let mut mem = MemBuffer::new(operator.solve_scratch(width));
    let mut image = Mat::<f64>::zeros(n, width);
    let mut result = None;
    for step in 1..=MAX_POLISH_STEPS {
        operator.apply(image.as_mut(), subspace.as_ref(), MemStack::new(&mut mem));
        solves += width;
        on_solve(solves);
        let polished = rayleigh_ritz(
            stiffness,
            &sqrt_mass,
            image.as_mut(),
            subspace.as_mut(),
            settings.modes,
        )?;
        stats.polish_steps = step;
        // Polish to the tolerance; the rounding floor is only for the final
        // check.
        let worst = polished.residuals.iter().copied().fold(0.0, f64::max);
        let done = worst <= settings.residual_tolerance;
        if !done && step < MAX_POLISH_STEPS {
            // Next subspace: the Ritz vectors, back in y = S x.
            for j in 0..width {
                for i in 0..n {
                    subspace[(i, j)] = polished.vectors[(i, j)] * sqrt_mass[i];
                }
            }
        }
        result = Some(polished);
        if done {
            break;
        }
    }
    let polished = result.expect("at least one polish step");
    let shapes = polished
        .vectors
        .as_ref()
        .get(.., ..settings.modes)
        .to_owned();
    let (eigenvalues, residuals) = (
        polished.values[..settings.modes].to_vec(),
        polished.residuals,
    );
    stats.polish_s = t.elapsed().as_secs_f64();
    stats.solves = solves;
    stats.recovered_modes = unmatched(&eigenvalues, &lanczos_eigenvalues, 1e-6);
    for (mode, (&residual, &lambda)) in residuals.iter().zip(&eigenvalues).enumerate() {
        if residual.is_nan() || residual > accepted(lambda) {
            return Err(EigenError::Residual {
                mode,
                residual,
                tolerance: accepted(lambda),
                steps: stats.polish_steps,
            });
        }
    }
    let static_correction = std::sync::Arc::new(StaticCorrection::from_factor(
        llt,
        sigma,
        lumped_mass,
        rigid.as_ref(),
    ));
    Ok(EigenSolution {
        eigenvalues,
        shapes,
        residuals,
        stats,
        static_correction,
    })
}

/// How many of `values` have no partner in `reference` within `relative`
/// (each partner used once; both ascending).
fn unmatched(values: &[f64], reference: &[f64], relative: f64) -> usize {
    let mut reference: Vec<f64> = reference.to_vec();
    reference.sort_by(f64::total_cmp);
    let mut used = vec![false; reference.len()];
    values
        .iter()
        .filter(|&&v| {
            let hit = (0..reference.len())
                .find(|&i| !used[i] && (reference[i] - v).abs() <= relative * v.abs());
            if let Some(i) = hit {
                used[i] = true;
            }
            hit.is_none()
        })
        .count()
}

/// The inverse of `forward` if it is a permutation of `0..forward.len()`
/// (a cached ordering is checked, its length too, before faer, which
/// panics on others).
fn inverse_permutation(forward: &[usize]) -> Option<Vec<usize>> {
    let mut inverse = vec![usize::MAX; forward.len()];
    for (new, &old) in forward.iter().enumerate() {
        let slot = inverse.get_mut(old)?;
        if *slot != usize::MAX {
            return None;
        }
        *slot = new;
    }
    Some(inverse)
}

/// A sparse Cholesky factor (nested dissection ordering, `ordering.rs`,
/// else AMD; simplicial or supernodal as faer decides) kept as its
/// symbolic and numeric parts, so solves can run on a caller's stack and
/// the factor size can be reported.
#[derive(Debug)]
pub(super) struct CholeskyFactor {
    symbolic: SymbolicCholesky<usize>,
    values: Vec<f64>,
    /// The backward solve's split between two threads, for a supernodal
    /// factor whose tree has one (`backward.rs`).
    backward_split: Option<BackwardSplit>,
}

impl CholeskyFactor {
    /// Bytes held by the factor: its values, its structure and its
    /// ordering.
    pub(super) fn bytes(&self) -> usize {
        use faer::sparse::linalg::cholesky::SymbolicCholeskyRaw;
        let structure = match self.symbolic.raw() {
            SymbolicCholeskyRaw::Simplicial(simplicial) => {
                simplicial.col_ptr().len() + simplicial.row_idx().len()
            }
            // A supernode's row pattern is stored once for all its
            // columns, by column and again by row (faer 0.24's
            // `SymbolicSupernodalCholesky`), beside four arrays with an
            // entry per supernode.
            SymbolicCholeskyRaw::Supernodal(supernodal) => {
                2 * supernodal.row_idx().len() + 4 * (supernodal.n_supernodes() + 1)
            }
        };
        let ordering = 2 * self.symbolic.nrows();
        self.values.len() * std::mem::size_of::<f64>()
            + (structure + ordering) * std::mem::size_of::<usize>()
    }

    /// The factor of `matrix` (`K − σM` for the shift σ = `shift`, which
    /// errors name) in `ordering`, or in the `given` permutation (forward,
    /// new index to old) when it is one of `matrix`'s DOFs: the ordering a
    /// factor of the same matrix computed before ([`Self::permutation`]),
    /// which spares computing it again. The factor's size is known once its
    /// structure is (the symbolic factorisation) and is checked against the memory
    /// budget before its values are allocated: it is the largest part of
    /// a modal analysis, far above the mesh and the Krylov basis.
    pub(super) fn new(
        matrix: &SparseMatrix,
        par: Par,
        shift: f64,
        ordering: FactorOrdering,
        given: Option<&[usize]>,
    ) -> Result<Self, EigenError> {
        let not_positive_definite = || EigenError::NotPositiveDefinite { shift };
        let given = given
            .filter(|forward| forward.len() == matrix.nrows())
            .and_then(|forward| Some((forward.to_vec(), inverse_permutation(forward)?)));
        let dissection = match (given, ordering) {
            (Some(permutation), _) => Some(permutation),
            (None, FactorOrdering::NestedDissection) => nested_dissection(matrix.symbolic()),
            (None, FactorOrdering::MinimumDegree) => None,
        };
        let ordering = match &dissection {
            Some((forward, inverse)) => {
                SymmetricOrdering::Custom(PermRef::new_checked(forward, inverse, forward.len()))
            }
            None => SymmetricOrdering::Amd,
        };
        let symbolic = factorize_symbolic_cholesky(
            matrix.symbolic(),
            Side::Lower,
            ordering,
            Default::default(),
        )
        .map_err(|_| not_positive_definite())?;
        let scratch = symbolic.factorize_numeric_llt_scratch::<f64>(par, Default::default());
        crate::limits::check_shared_memory(
            || {
                format!(
                    "the Cholesky factor of K − σM ({} nonzeros for {} DOFs)",
                    symbolic.len_val(),
                    matrix.nrows()
                )
            },
            symbolic.len_val() as f64 * 8.0 + scratch.unaligned_bytes_required() as f64,
        )?;
        let mut values = vec![0.0; symbolic.len_val()];
        let mut mem = MemBuffer::new(scratch);
        symbolic
            .factorize_numeric_llt(
                &mut values,
                matrix.as_ref(),
                Side::Lower,
                Default::default(),
                par,
                MemStack::new(&mut mem),
                Default::default(),
            )
            .map_err(|_| not_positive_definite())?;
        let mut factor = Self {
            symbolic,
            values,
            backward_split: None,
        };
        factor.backward_split = factor.supernodes().and_then(BackwardSplit::new);
        Ok(factor)
    }

    /// The factor's fill-reducing permutation (forward: new index to old),
    /// if it has one.
    pub(super) fn permutation(&self) -> Option<&[usize]> {
        self.symbolic.perm().map(|p| p.arrays().0)
    }

    /// The factor as supernodes, if faer made it supernodal.
    pub(super) fn supernodes(
        &self,
    ) -> Option<faer::sparse::linalg::cholesky::supernodal::SupernodalLltRef<'_, usize, f64>> {
        use faer::sparse::linalg::cholesky::supernodal::SupernodalLltRef;
        use faer::sparse::linalg::cholesky::SymbolicCholeskyRaw;
        match self.symbolic.raw() {
            SymbolicCholeskyRaw::Supernodal(symbolic) => {
                Some(SupernodalLltRef::new(symbolic, &self.values))
            }
            SymbolicCholeskyRaw::Simplicial(_) => None,
        }
    }

    /// The split of the backward solve, if the factor has one.
    #[cfg(test)]
    pub(super) fn backward_split(&self) -> Option<&BackwardSplit> {
        self.backward_split.as_ref()
    }

    pub(super) fn solve_scratch(&self, rhs_ncols: usize, par: Par) -> StackReq {
        self.symbolic.solve_in_place_scratch::<f64>(rhs_ncols, par)
    }

    pub(super) fn solve_in_place(&self, rhs: MatMut<'_, f64>, par: Par, stack: &mut MemStack) {
        LltRef::new(&self.symbolic, &self.values).solve_in_place_with_conj(
            faer::Conj::No,
            rhs,
            par,
            stack,
        );
    }

    /// [`Self::solve_in_place`] for a right-hand side that is zero on most
    /// DOFs (loads at a contact). The forward solve `L y = P b` visits
    /// only the supernodes where `y` is not zero: those holding a loaded
    /// DOF and their ancestors in the elimination tree, one separator per
    /// level of the nested dissection above the load. The backward solve
    /// visits every supernode (the response is everywhere), on two
    /// threads of the current rayon pool where the tree splits
    /// (`backward.rs`). Each visited supernode does what faer's solve
    /// does, with the same kernels.
    pub(super) fn solve_sparse_in_place(
        &self,
        mut rhs: MatMut<'_, f64>,
        par: Par,
        stack: &mut MemStack,
    ) {
        use faer::sparse::linalg::cholesky::supernodal::SupernodalLltRef;
        use faer::sparse::linalg::cholesky::SymbolicCholeskyRaw;
        let SymbolicCholeskyRaw::Supernodal(symbolic) = self.symbolic.raw() else {
            return self.solve_in_place(rhs, par, stack);
        };
        let (n, k) = (rhs.nrows(), rhs.ncols());
        let mut x = Mat::<f64>::zeros(n, k);
        let permutation = self.symbolic.perm();
        match permutation {
            Some(perm) => faer::perm::permute_rows(x.as_mut(), rhs.rb(), perm),
            None => x.copy_from(rhs.rb()),
        }
        let factor = SupernodalLltRef::new(symbolic, &self.values);
        // One buffer for every supernode's update to the rows below it.
        let longest_pattern = (0..symbolic.n_supernodes())
            .map(|s| factor.supernode(s).pattern().len())
            .max()
            .unwrap_or(0);
        let mut update = Mat::<f64>::zeros(longest_pattern, k);
        for s in 0..symbolic.n_supernodes() {
            let supernode = factor.supernode(s);
            let block = supernode.val();
            let size = block.ncols();
            let mut top = x.as_mut().subrows_mut(supernode.start(), size);
            if (0..k).all(|j| top.rb().col(j).iter().all(|&v| v == 0.0)) {
                continue;
            }
            let (diagonal, below) = block.split_at_row(size);
            solve_lower_triangular_in_place(diagonal, top.rb_mut(), par);
            let pattern = supernode.pattern();
            let mut product = update.as_mut().subrows_mut(0, pattern.len());
            matmul(product.rb_mut(), Accum::Replace, below, top.rb(), 1.0, par);
            for j in 0..k {
                for (at, &i) in pattern.iter().enumerate() {
                    x[(i, j)] -= product[(at, j)];
                }
            }
        }
        match &self.backward_split {
            Some(split) => split.solve(factor, x.as_mut()),
            None => factor.l_transpose_solve_with_conj(faer::Conj::No, x.as_mut(), par, stack),
        }
        match permutation {
            Some(perm) => faer::perm::permute_rows(rhs, x.as_ref(), perm.inverse()),
            None => rhs.copy_from(x.as_ref()),
        }
    }
}

/// K − σM with M diagonal, on K's pattern (which holds the diagonal).
pub(super) fn shifted_matrix(stiffness: &SparseMatrix, mass: &[f64], sigma: f64) -> SparseMatrix {
    let symbolic = stiffness.symbolic();
    let mut values = stiffness.val().to_vec();
    for (j, m) in mass.iter().enumerate() {
        let range = symbolic.col_range(j);
        let k = symbolic.row_idx()[range.clone()]
            .binary_search(&j)
            .expect("stiffness pattern holds the diagonal");
        values[range.start + k] -= sigma * m;
    }
    faer::sparse::SparseColMat::new(symbolic.to_owned().expect("allocation"), values)
}

/// Orthonormal basis (in y = S x) of the six rigid motions: translations and
/// infinitesimal rotations about the centroid.
pub(super) fn rigid_basis(nodes: &[Point3<f64>], sqrt_mass: &[f64]) -> Mat<f64> {
    let n = sqrt_mass.len();
    let centroid = nodes
        .iter()
        .fold(nalgebra::Vector3::zeros(), |acc, p| acc + p.coords)
        / nodes.len() as f64;
    let mut basis = Mat::<f64>::zeros(n, 6);
    for (node, p) in nodes.iter().enumerate() {
        let r = p.coords - centroid;
        for axis in 0..3 {
            basis[(3 * node + axis, axis)] = 1.0;
            let e = nalgebra::Vector3::ith(axis, 1.0);
            let rotation = e.cross(&r);
            for c in 0..3 {
                basis[(3 * node + c, 3 + axis)] = rotation[c];
            }
        }
    }
    for j in 0..6 {
        for i in 0..n {
            basis[(i, j)] *= sqrt_mass[i];
        }
    }
    // Rigid motions of a mesh with at least one tet are independent.
    orthonormalise_block(basis.as_mut(), 0, 6, &mut |_| {
        unreachable!("rigid modes are independent")
    });
    basis
}

/// The lowest `count` elastic eigenvalues (ascending) and their
/// orthonormal vectors in y = S x (S = M^½) of a body small enough to
/// solve whole: a dense eigensolve of `S⁻¹ K S⁻¹`, whose six lowest
/// pairs are the rigid motions (eigenvalue zero; K is positive
/// semi-definite).
fn dense_lowest(
    stiffness: &SparseMatrix,
    sqrt_mass: &[f64],
    operator: &ShiftInvert<'_>,
    count: usize,
) -> (Vec<f64>, Mat<f64>) {
    let k = stiffness.as_ref();
    let mut matrix = Mat::<f64>::zeros(k.nrows(), k.ncols());
    for j in 0..k.ncols() {
        for (i, &v) in k.row_idx_of_col(j).zip(k.val_of_col(j)) {
            matrix[(i, j)] = v / (sqrt_mass[i] * sqrt_mass[j]);
        }
    }
    let eig = symmetric_eigen(matrix.as_ref());
    let mut vectors = eig.eigenvectors.as_ref().get(.., 6..6 + count).to_owned();
    // Rounding leaves the rigid motions' traces in the elastic vectors.
    operator.project_rigid(vectors.as_mut());
    (eig.eigenvalues[6..6 + count].to_vec(), vectors)
}

/// `(K − σM)⁻¹` symmetrised by `S = M^½`, with the rigid modes projected
/// out: `A = P S (K − σM)⁻¹ S P`, `P = I − R Rᵀ`.
struct ShiftInvert<'a> {
    llt: &'a CholeskyFactor,
    sqrt_mass: &'a [f64],
    rigid: MatRef<'a, f64>,
}

impl ShiftInvert<'_> {
    fn project_rigid(&self, mut x: MatMut<'_, f64>) {
        let coefficients = self.rigid.transpose() * x.rb();
        matmul(
            x.rb_mut(),
            Accum::Add,
            self.rigid,
            coefficients.as_ref(),
            -1.0,
            Par::Seq,
        );
    }

    /// Scratch of [`ShiftInvert::apply`] on `rhs_ncols` columns: one
    /// sequential solve's for each half.
    fn solve_scratch(&self, rhs_ncols: usize) -> StackReq {
        let half = self.llt.solve_scratch(rhs_ncols.div_ceil(2), Par::Seq);
        StackReq::all_of(&[half, half])
    }

    /// `out = A rhs` for every column.
    ///
    /// The columns are solved in two halves, each by one thread (of the
    /// calling rayon pool) walking the whole factor, rather than all of
    /// them by faer's parallel solve, which splits each supernode's few
    /// columns of work between the threads and waits at every one (the
    /// halves are faster on every body measured, docs/modal.md). The
    /// halves are fixed by the column count, so the result does not
    /// depend on the threads.
    fn apply(&self, mut out: MatMut<'_, f64>, rhs: MatRef<'_, f64>, stack: &mut MemStack) {
        out.copy_from(rhs);
        self.project_rigid(out.rb_mut());
        for j in 0..out.ncols() {
            for i in 0..out.nrows() {
                out[(i, j)] *= self.sqrt_mass[i];
            }
        }
        let first_columns = out.ncols().div_ceil(2);
        let half = self.llt.solve_scratch(first_columns, Par::Seq);
        let (first_scratch, second_scratch) =
            stack.make_aligned_uninit::<u8>(half.size_bytes(), half.align_bytes());
        let (first, second) = out.rb_mut().split_at_col_mut(first_columns);
        rayon::join(
            || {
                self.llt
                    .solve_in_place(first, Par::Seq, MemStack::new(first_scratch))
            },
            || self.llt.solve_in_place(second, Par::Seq, second_scratch),
        );
        for j in 0..out.ncols() {
            for i in 0..out.nrows() {
                out[(i, j)] *= self.sqrt_mass[i];
            }
        }
        self.project_rigid(out.rb_mut());
    }
}

/// `out ← K x`, blocks of [`PRODUCT_COLUMNS`] columns in parallel on the
/// current rayon pool: faer 0.24's sparse × dense product runs on one
/// thread whatever its `Par`. A column of the result depends on that
/// column of `x` only, so the bits do not depend on the threads.
fn stiffness_times(out: MatMut<'_, f64>, stiffness: &SparseMatrix, x: MatRef<'_, f64>) {
    use rayon::prelude::*;
    out.par_col_chunks_mut(PRODUCT_COLUMNS)
        .zip(x.par_col_chunks(PRODUCT_COLUMNS))
        .for_each(|(out, x)| {
            sparse_dense_matmul(out, Accum::Replace, stiffness.as_ref(), x, 1.0, Par::Seq);
        });
}

/// Columns of one task of [`stiffness_times`]: enough that a task's work
/// outweighs its scheduling.
const PRODUCT_COLUMNS: usize = 8;

/// Ritz pairs of one polish step.
struct Polished {
    /// All Ritz values, ascending.
    values: Vec<f64>,
    /// All Ritz vectors (x-space), M-orthonormal.
    vectors: Mat<f64>,
    /// Relative residuals of the first `wanted`.
    residuals: Vec<f64>,
}

/// Rayleigh–Ritz on (K, M) in the span of `image` (y-space columns, `y = S x`).
/// `image` and `scratch` are overwritten.
fn rayleigh_ritz(
    stiffness: &SparseMatrix,
    sqrt_mass: &[f64],
    mut image: MatMut<'_, f64>,
    mut scratch: MatMut<'_, f64>,
    wanted: usize,
) -> Result<Polished, EigenError> {
    let (n, p) = (image.nrows(), image.ncols());
    let par = Par::rayon(0);
    // Inverse iteration scales column j by θ_j, over orders of magnitude;
    // unit columns keep Mr well conditioned (the span is what matters).
    for j in 0..p {
        let norm = image.rb().col(j).norm_l2();
        image
            .rb_mut()
            .col_mut(j)
            .iter_mut()
            .for_each(|v| *v /= norm);
    }
    // With x = S⁻¹ y: xᵀ M x = yᵀ y (M = S²), so Mr needs no mass scaling.
    let mut mr = Mat::<f64>::zeros(p, p);
    matmul(
        mr.as_mut(),
        Accum::Replace,
        image.rb().transpose(),
        image.rb(),
        1.0,
        par,
    );
    for j in 0..p {
        for i in 0..n {
            image[(i, j)] /= sqrt_mass[i];
        }
    }
    let x = image;
    stiffness_times(scratch.rb_mut(), stiffness, x.rb());
    let mut kr = Mat::<f64>::zeros(p, p);
    matmul(
        kr.as_mut(),
        Accum::Replace,
        x.rb().transpose(),
        scratch.rb(),
        1.0,
        par,
    );
    // Kr c = λ Mr c with Mr = L Lᵀ: (L⁻¹ Kr L⁻ᵀ) w = λ w, c = L⁻ᵀ w.
    let mr = Mat::from_fn(p, p, |i, j| 0.5 * (mr[(i, j)] + mr[(j, i)]));
    // A basis that lost independence means the operator's spectrum is
    // beyond f64 (a material far outside physical ranges, a degenerate mesh).
    let llt = mr
        .llt(Side::Lower)
        .map_err(|_| EigenError::DependentBasis)?;
    let l = llt.L();
    let mut reduced = Mat::from_fn(p, p, |i, j| 0.5 * (kr[(i, j)] + kr[(j, i)]));
    solve_lower_triangular_in_place(l, reduced.as_mut(), par);
    let mut reduced = reduced.transpose().to_owned();
    solve_lower_triangular_in_place(l, reduced.as_mut(), par);
    let reduced = Mat::from_fn(p, p, |i, j| 0.5 * (reduced[(i, j)] + reduced[(j, i)]));
    let eig = symmetric_eigen(reduced.as_ref());
    let mut coefficients = eig.eigenvectors;
    solve_upper_triangular_in_place(l.transpose(), coefficients.as_mut(), par);
    // faer returns ascending eigenvalues.
    let order: Vec<usize> = (0..p).collect();
    let c = coefficients;
    let values: Vec<f64> = order.iter().map(|&i| eig.eigenvalues[i]).collect();
    let mut vectors = Mat::<f64>::zeros(n, p);
    matmul(
        vectors.as_mut(),
        Accum::Replace,
        x.rb(),
        c.as_ref(),
        1.0,
        par,
    );
    // K x formed afresh: (K X) c would carry the rounding of K X's
    // columns, which for the random probes of a thin plate's subspace are
    // λ_max / λ_1 ~ 10⁸ times larger than K x.
    let mut k_vectors = x;
    stiffness_times(
        k_vectors.rb_mut().get_mut(.., ..wanted),
        stiffness,
        vectors.as_ref().get(.., ..wanted),
    );
    let residuals = (0..wanted)
        .map(|j| {
            let (mut r2, mut k2) = (0.0, 0.0);
            for i in 0..n {
                let kx = k_vectors[(i, j)];
                let r = kx - values[j] * sqrt_mass[i] * sqrt_mass[i] * vectors[(i, j)];
                r2 += r * r;
                k2 += kx * kx;
            }
            (r2 / k2).sqrt()
        })
        .collect();
    Ok(Polished {
        values,
        vectors,
        residuals,
    })
}
