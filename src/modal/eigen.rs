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
//! 3. A guard band of extra modes is computed, then a deflation pass runs the
//!    Krylov method again on `A − Y Θ Yᵀ` (everything found removed) from a
//!    fresh start vector: any eigenvalue it finds above the last wanted one is
//!    a copy the first pass skipped. Passes repeat until none is found.
//! 4. Rayleigh–Ritz on the pencil (K, M) in the span of the found vectors
//!    refines eigenvalues and resolves repeated eigenvalues' subspaces; each
//!    mode's residual ‖Kx − λMx‖ / ‖Kx‖ is then checked.

use crate::fem::SparseMatrix;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::matrix_free::eigen::{partial_self_adjoint_eigen, partial_self_adjoint_eigen_scratch, PartialEigenParams};
use faer::matrix_free::LinOp;
use faer::sparse::linalg::matmul::sparse_dense_matmul;
use faer::sparse::linalg::cholesky::{factorize_symbolic_cholesky, LltRef, SymbolicCholesky};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, Mat, MatMut, MatRef, Par, Side};
use nalgebra::Point3;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// What to compute, and how hard to check it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EigenSettings {
    /// Elastic modes wanted (rigid modes excluded).
    pub modes: usize,
    /// Extra modes computed beyond `modes` and then dropped.
    pub guard: usize,
    /// The shift σ (rad²/s², negative).
    pub shift: f64,
    /// Largest accepted relative residual ‖Kx − λMx‖ / ‖Kx‖.
    pub residual_tolerance: f64,
    /// Most deflation passes looking for skipped copies.
    pub max_deflation_passes: usize,
}

impl EigenSettings {
    /// Defaults for `modes` elastic modes: guard band of max(20, modes/5),
    /// σ = −(2π·10 Hz)², residual tolerance 1e-8.
    pub fn new(modes: usize) -> Self {
        Self {
            modes,
            guard: 20.max(modes / 5),
            shift: -(std::f64::consts::TAU * 10.0).powi(2),
            residual_tolerance: 1e-8,
            max_deflation_passes: 8,
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
    pub stats: EigenStats,
}

/// How the solve went.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct EigenStats {
    pub factorization_s: f64,
    pub krylov_s: f64,
    pub deflation_s: f64,
    pub rayleigh_ritz_s: f64,
    /// Operator applications (one sparse triangular solve pair each).
    pub solves: usize,
    /// Deflation passes run, and modes they recovered that the first pass skipped.
    pub deflation_passes: usize,
    pub recovered_modes: usize,
    pub factor_nnz: usize,
}

/// Why the eigensolve failed.
#[derive(Debug, thiserror::Error)]
pub enum EigenError {
    #[error("K − σM is not positive definite (σ = {shift}); is the mesh connected and the material valid?")]
    NotPositiveDefinite { shift: f64 },
    #[error("the shift must be negative, got {0}")]
    BadShift(f64),
    #[error("{wanted} elastic modes asked for, but the body has only {dofs} DOFs ({available} elastic)")]
    TooManyModes { wanted: usize, dofs: usize, available: usize },
    #[error("only {found} of {wanted} modes converged")]
    NotConverged { found: usize, wanted: usize },
    #[error("mode {mode} has residual {residual:e} > {tolerance:e}; try a larger guard band")]
    Residual { mode: usize, residual: f64, tolerance: f64 },
    #[error("the mass matrix has a non-positive entry at DOF {0}")]
    BadMass(usize),
}

/// Computes the lowest `settings.modes` elastic modes of `(K, diag(mass))`.
///
/// `nodes` are the node positions (for the rigid modes); `on_solve` is called
/// after every operator application (for progress display).
pub fn lowest_modes(
    stiffness: &SparseMatrix,
    lumped_mass: &[f64],
    nodes: &[Point3<f64>],
    settings: &EigenSettings,
    on_solve: &(dyn Fn(usize) + Sync),
) -> Result<EigenSolution, EigenError> {
    let n = lumped_mass.len();
    let sigma = settings.shift;
    if !(sigma < 0.0 && sigma.is_finite()) {
        return Err(EigenError::BadShift(sigma));
    }
    if let Some(i) = lumped_mass.iter().position(|&m| !(m > 0.0 && m.is_finite())) {
        return Err(EigenError::BadMass(i));
    }
    let available = n.saturating_sub(6);
    if settings.modes == 0 || settings.modes > available {
        return Err(EigenError::TooManyModes {
            wanted: settings.modes,
            dofs: n,
            available,
        });
    }
    let mut stats = EigenStats::default();
    let par = Par::rayon(0);

    let t = Instant::now();
    let shifted = shifted_matrix(stiffness, lumped_mass, sigma);
    let llt = CholeskyFactor::new(&shifted, par).ok_or(EigenError::NotPositiveDefinite { shift: sigma })?;
    stats.factorization_s = t.elapsed().as_secs_f64();
    stats.factor_nnz = llt.values.len();
    drop(shifted);

    let sqrt_mass: Vec<f64> = lumped_mass.iter().map(|m| m.sqrt()).collect();
    let rigid = rigid_basis(nodes, &sqrt_mass);
    let counter = AtomicUsize::new(0);
    let mut operator = ShiftInvert {
        llt: &llt,
        sqrt_mass: &sqrt_mass,
        rigid: rigid.as_ref(),
        deflated: Mat::zeros(n, 0),
        deflated_theta: Vec::new(),
        scale: -sigma,
        counter: &counter,
        on_solve,
    };

    // Pass 1: wanted modes plus the guard band.
    let t = Instant::now();
    let wanted = (settings.modes + settings.guard).min(available);
    let (mut found_theta, mut found_vectors) = krylov_pass(&operator, wanted, 0x7e55e4a, par);
    stats.krylov_s = t.elapsed().as_secs_f64();
    if found_theta.len() < settings.modes {
        return Err(EigenError::NotConverged {
            found: found_theta.len(),
            wanted: settings.modes,
        });
    }

    // Deflation passes: anything above the last wanted θ is a skipped copy.
    let t = Instant::now();
    for pass in 0..settings.max_deflation_passes {
        let cutoff = sorted_desc(&found_theta)[settings.modes - 1] * (1.0 - 1e-9);
        operator.deflated = found_vectors.clone();
        operator.deflated_theta = found_theta.clone();
        let probe = 8.min(available.saturating_sub(found_theta.len()));
        if probe == 0 {
            break;
        }
        let (theta, vectors) = krylov_pass(&operator, probe, 0x5eed + pass as u64, par);
        stats.deflation_passes += 1;
        let missed: Vec<usize> = (0..theta.len()).filter(|&i| theta[i] > cutoff).collect();
        if missed.is_empty() {
            break;
        }
        stats.recovered_modes += missed.len();
        let mut merged = Mat::zeros(n, found_vectors.ncols() + missed.len());
        merged.as_mut().get_mut(.., ..found_vectors.ncols()).copy_from(&found_vectors);
        for (k, &i) in missed.iter().enumerate() {
            merged.as_mut().col_mut(found_vectors.ncols() + k).copy_from(vectors.col(i));
            found_theta.push(theta[i]);
        }
        found_vectors = merged;
    }
    stats.deflation_s = t.elapsed().as_secs_f64();
    operator.deflated = Mat::zeros(n, 0);
    operator.deflated_theta.clear();

    // One block inverse iteration, then Rayleigh–Ritz on (K, M).
    let t = Instant::now();
    let mut block = Mat::zeros(n, found_vectors.ncols());
    {
        let mut mem = MemBuffer::new(operator.apply_scratch(block.ncols(), par));
        operator.apply(block.as_mut(), found_vectors.as_ref(), par, MemStack::new(&mut mem));
    }
    for j in 0..block.ncols() {
        for i in 0..n {
            block[(i, j)] /= sqrt_mass[i];
        }
    }
    let (eigenvalues, shapes) = rayleigh_ritz(stiffness, lumped_mass, block.as_ref(), settings.modes);
    stats.rayleigh_ritz_s = t.elapsed().as_secs_f64();
    stats.solves = counter.load(Ordering::Relaxed);

    let residuals = relative_residuals(stiffness, lumped_mass, &eigenvalues, shapes.as_ref());
    for (mode, &residual) in residuals.iter().enumerate() {
        if !(residual <= settings.residual_tolerance) {
            return Err(EigenError::Residual {
                mode,
                residual,
                tolerance: settings.residual_tolerance,
            });
        }
    }
    Ok(EigenSolution {
        eigenvalues,
        shapes,
        residuals,
        stats,
    })
}

fn sorted_desc(values: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_by(|a, b| b.total_cmp(a));
    v
}

/// A sparse Cholesky factor (AMD ordering, simplicial or supernodal as faer
/// decides) kept as its symbolic and numeric parts, so solves can run on a
/// caller's stack and the factor size can be reported.
#[derive(Debug)]
struct CholeskyFactor {
    symbolic: SymbolicCholesky<usize>,
    values: Vec<f64>,
}

impl CholeskyFactor {
    /// `None` when the matrix is not positive definite.
    fn new(matrix: &SparseMatrix, par: Par) -> Option<Self> {
        let symbolic =
            factorize_symbolic_cholesky(matrix.symbolic(), Side::Lower, Default::default(), Default::default()).ok()?;
        let mut values = vec![0.0; symbolic.len_val()];
        let mut mem = MemBuffer::new(symbolic.factorize_numeric_llt_scratch::<f64>(par, Default::default()));
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
            .ok()?;
        Some(Self { symbolic, values })
    }

    fn solve_scratch(&self, rhs_ncols: usize, par: Par) -> StackReq {
        self.symbolic.solve_in_place_scratch::<f64>(rhs_ncols, par)
    }

    fn solve_in_place(&self, rhs: MatMut<'_, f64>, par: Par, stack: &mut MemStack) {
        LltRef::new(&self.symbolic, &self.values).solve_in_place_with_conj(faer::Conj::No, rhs, par, stack);
    }
}

/// K − σM with M diagonal, on K's pattern (which holds the diagonal).
fn shifted_matrix(stiffness: &SparseMatrix, mass: &[f64], sigma: f64) -> SparseMatrix {
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
fn rigid_basis(nodes: &[Point3<f64>], sqrt_mass: &[f64]) -> Mat<f64> {
    let n = sqrt_mass.len();
    let centroid = nodes.iter().fold(nalgebra::Vector3::zeros(), |acc, p| acc + p.coords) / nodes.len() as f64;
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
    orthonormalize(&mut basis);
    basis
}

/// Modified Gram–Schmidt, twice (enough for full working precision).
fn orthonormalize(q: &mut Mat<f64>) {
    for _ in 0..2 {
        for j in 0..q.ncols() {
            for i in 0..j {
                let r = q.col(i).transpose() * q.col(j);
                for k in 0..q.nrows() {
                    q[(k, j)] -= r * q[(k, i)];
                }
            }
            let norm = q.col(j).norm_l2();
            for k in 0..q.nrows() {
                q[(k, j)] /= norm;
            }
        }
    }
}

/// `(K − σM)⁻¹` symmetrised by `S = M^½`, with the rigid modes projected out
/// and the found modes deflated, scaled by `−σ` so the rigid eigenvalue
/// would be 1 and the tolerance below is relative.
struct ShiftInvert<'a> {
    llt: &'a CholeskyFactor,
    sqrt_mass: &'a [f64],
    rigid: MatRef<'a, f64>,
    deflated: Mat<f64>,
    deflated_theta: Vec<f64>,
    scale: f64,
    counter: &'a AtomicUsize,
    on_solve: &'a (dyn Fn(usize) + Sync),
}

impl std::fmt::Debug for ShiftInvert<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShiftInvert")
            .field("dofs", &self.sqrt_mass.len())
            .field("deflated", &self.deflated.ncols())
            .field("scale", &self.scale)
            .finish()
    }
}

impl ShiftInvert<'_> {
    fn project_rigid(&self, mut x: MatMut<'_, f64>) {
        let coefficients = self.rigid.transpose() * x.rb();
        faer::linalg::matmul::matmul(x.rb_mut(), Accum::Add, self.rigid, coefficients.as_ref(), -1.0, Par::Seq);
    }
}

impl LinOp<f64> for ShiftInvert<'_> {
    fn apply_scratch(&self, rhs_ncols: usize, par: Par) -> StackReq {
        self.llt.solve_scratch(rhs_ncols, par)
    }

    fn nrows(&self) -> usize {
        self.sqrt_mass.len()
    }

    fn ncols(&self) -> usize {
        self.sqrt_mass.len()
    }

    fn apply(&self, mut out: MatMut<'_, f64>, rhs: MatRef<'_, f64>, par: Par, stack: &mut MemStack) {
        out.copy_from(rhs);
        self.project_rigid(out.rb_mut());
        for j in 0..out.ncols() {
            for i in 0..out.nrows() {
                out[(i, j)] *= self.sqrt_mass[i];
            }
        }
        self.llt.solve_in_place(out.rb_mut(), par, stack);
        for j in 0..out.ncols() {
            for i in 0..out.nrows() {
                out[(i, j)] *= self.sqrt_mass[i] * self.scale;
            }
        }
        self.project_rigid(out.rb_mut());
        if self.deflated.ncols() > 0 {
            let mut coefficients = self.deflated.transpose() * rhs;
            for (k, theta) in self.deflated_theta.iter().enumerate() {
                for j in 0..coefficients.ncols() {
                    coefficients[(k, j)] *= theta * self.scale;
                }
            }
            faer::linalg::matmul::matmul(
                out.rb_mut(),
                Accum::Add,
                self.deflated.as_ref(),
                coefficients.as_ref(),
                -1.0,
                Par::Seq,
            );
        }
        let done = self.counter.fetch_add(out.ncols(), Ordering::Relaxed) + out.ncols();
        (self.on_solve)(done);
    }

    fn conj_apply(&self, out: MatMut<'_, f64>, rhs: MatRef<'_, f64>, par: Par, stack: &mut MemStack) {
        self.apply(out, rhs, par, stack)
    }
}

/// One Krylov–Schur run for the `count` largest θ; returns only converged pairs.
fn krylov_pass(operator: &ShiftInvert, count: usize, seed: u64, par: Par) -> (Vec<f64>, Mat<f64>) {
    use rand::{Rng, SeedableRng};
    let n = operator.nrows();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut start = Mat::<f64>::from_fn(n, 1, |_, _| rng.random_range(-1.0..1.0));
    operator.project_rigid(start.as_mut());
    if let Some(deflated) = (operator.deflated.ncols() > 0).then_some(&operator.deflated) {
        let c = deflated.transpose() * start.as_ref();
        faer::linalg::matmul::matmul(start.as_mut(), Accum::Add, deflated.as_ref(), c.as_ref(), -1.0, Par::Seq);
    }
    let norm = start.col(0).norm_l2();
    start.col_mut(0).iter_mut().for_each(|v| *v /= norm);

    let params = PartialEigenParams {
        max_dim: (2 * count).max(64).min(n),
        ..Default::default()
    };
    let mut vectors = Mat::<f64>::zeros(n, count);
    let mut theta = vec![0.0; count];
    let mut mem = MemBuffer::new(partial_self_adjoint_eigen_scratch(operator, count, par, params));
    // Residuals are absolute in θ; θ ≤ 1 after scaling, and the wanted θ are
    // ~ −σ/λ, so the tolerance is set relative to the smallest θ expected to
    // matter (1e-6 of the largest).
    let info = partial_self_adjoint_eigen(
        vectors.as_mut(),
        &mut theta,
        operator,
        start.col(0),
        1e-14,
        par,
        MemStack::new(&mut mem),
        params,
    );
    let converged = info.n_converged_eigen.min(count);
    let mut order: Vec<usize> = (0..converged).filter(|&i| theta[i] > 0.0).collect();
    order.sort_by(|&a, &b| theta[b].total_cmp(&theta[a]));
    let mut out = Mat::zeros(n, order.len());
    for (k, &i) in order.iter().enumerate() {
        out.col_mut(k).copy_from(vectors.col(i));
    }
    (order.iter().map(|&i| theta[i] / operator.scale).collect(), out)
}

/// Rayleigh–Ritz on (K, M) in the span of `basis` (x-space columns): the
/// `count` lowest Ritz pairs, M-orthonormal.
fn rayleigh_ritz(stiffness: &SparseMatrix, mass: &[f64], basis: MatRef<'_, f64>, count: usize) -> (Vec<f64>, Mat<f64>) {
    let n = basis.nrows();
    let p = basis.ncols();
    let mut k_basis = Mat::zeros(n, p);
    sparse_dense_matmul(k_basis.as_mut(), Accum::Replace, stiffness.as_ref(), basis, 1.0, Par::rayon(0));
    let mut m_basis = basis.to_owned();
    for j in 0..p {
        for i in 0..n {
            m_basis[(i, j)] *= mass[i];
        }
    }
    let kr = basis.transpose() * k_basis.as_ref();
    let mr = basis.transpose() * m_basis.as_ref();
    let kr = nalgebra::DMatrix::from_fn(p, p, |i, j| 0.5 * (kr[(i, j)] + kr[(j, i)]));
    let mr = nalgebra::DMatrix::from_fn(p, p, |i, j| 0.5 * (mr[(i, j)] + mr[(j, i)]));
    // Kr c = λ Mr c with Mr = L Lᵀ: (L⁻¹ Kr L⁻ᵀ) w = λ w, c = L⁻ᵀ w.
    let l = nalgebra::Cholesky::new(mr).expect("Ritz basis is linearly independent").l();
    let l_inv = l.clone().try_inverse().expect("Cholesky factor is invertible");
    let reduced = &l_inv * kr * l_inv.transpose();
    let reduced = 0.5 * (&reduced + reduced.transpose());
    let eig = nalgebra::SymmetricEigen::new(reduced);
    let mut order: Vec<usize> = (0..p).collect();
    order.sort_by(|&a, &b| eig.eigenvalues[a].total_cmp(&eig.eigenvalues[b]));
    order.truncate(count);
    let coefficients = l_inv.transpose() * &eig.eigenvectors;
    let c = Mat::from_fn(p, order.len(), |i, k| coefficients[(i, order[k])]);
    let shapes = basis * c.as_ref();
    (order.iter().map(|&i| eig.eigenvalues[i]).collect(), shapes)
}

/// ‖Kx − λMx‖ / ‖Kx‖ for each column.
pub fn relative_residuals(stiffness: &SparseMatrix, mass: &[f64], eigenvalues: &[f64], shapes: MatRef<'_, f64>) -> Vec<f64> {
    let mut k_shapes = Mat::zeros(shapes.nrows(), shapes.ncols());
    sparse_dense_matmul(k_shapes.as_mut(), Accum::Replace, stiffness.as_ref(), shapes, 1.0, Par::rayon(0));
    (0..shapes.ncols())
        .map(|j| {
            let (mut r2, mut k2) = (0.0, 0.0);
            for i in 0..shapes.nrows() {
                let kx = k_shapes[(i, j)];
                let r = kx - eigenvalues[j] * mass[i] * shapes[(i, j)];
                r2 += r * r;
                k2 += kx * kx;
            }
            (r2 / k2).sqrt()
        })
        .collect()
}
