//! Thick-restart block Lanczos with full reorthogonalisation, for the
//! largest eigenvalues of a symmetric operator (Wu & Simon 2000 for the thick
//! restart; Golub & Underwood 1977 for the block recurrence).
//!
//! Written here rather than taken from faer because faer 0.24's
//! `partial_self_adjoint_eigen` can loop forever in its reorthogonalisation
//! (`iterate_lanczos`, observed on a deflated shift-invert operator) and is
//! single-vector only. This version reorthogonalises exactly twice (CGS2,
//! "twice is enough"), so every step has a bounded cost; restarts are
//! bounded; and blocks turn the operator's triangular solves and the
//! reorthogonalisation into matrix–matrix work, and find up to `block`
//! copies of a repeated eigenvalue at once.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};

/// Largest Ritz pairs found, descending in θ.
pub(super) struct LanczosOutcome {
    pub theta: Vec<f64>,
    pub vectors: Mat<f64>,
    pub converged: usize,
    pub restarts: usize,
}

/// Problem and stopping rule for [`largest_eigenpairs`].
pub(super) struct LanczosSettings {
    pub count: usize,
    pub block: usize,
    /// Largest basis size (columns), rounded to whole blocks.
    pub max_dim: usize,
    /// Pairs are converged when `‖A y − θ y‖ ≤ tolerance · θ_max`.
    pub tolerance: f64,
    pub max_restarts: usize,
}

/// The `settings.count` largest eigenpairs of the symmetric operator `apply`
/// (`apply(out, x)` writes `A x` for every column). `start` holds
/// `settings.block` starting columns; `fresh_column` supplies a new random
/// direction when the Krylov space becomes invariant.
pub(super) fn largest_eigenpairs(
    apply: &mut dyn FnMut(MatMut<'_, f64>, MatRef<'_, f64>),
    start: Mat<f64>,
    settings: &LanczosSettings,
    fresh_column: &mut dyn FnMut(MatMut<'_, f64>),
) -> LanczosOutcome {
    let n = start.nrows();
    let b = settings.block.max(1);
    let count = settings.count;
    // Whole blocks beyond the kept vectors; at least two blocks of room.
    let max_dim = settings.max_dim.max(count + 2 * b).min(n);
    let mut basis = Mat::<f64>::zeros(n, max_dim + b);
    let mut projected = Mat::<f64>::zeros(max_dim + b, max_dim + b);
    let mut w = Mat::<f64>::zeros(n, b);
    basis.as_mut().get_mut(.., ..b).copy_from(&start);
    orthonormalise_block(basis.as_mut(), 0, b, fresh_column);

    let mut filled = 0usize;
    let mut restarts = 0usize;
    loop {
        let mut coupling = Mat::<f64>::zeros(b, b);
        while filled + b <= max_dim {
            apply(w.as_mut(), basis.as_ref().get(.., filled..filled + b));
            let known = filled + b;
            let c = orthogonalise(w.as_mut(), basis.as_ref().get(.., ..known));
            for i in 0..known {
                for k in 0..b {
                    projected[(i, filled + k)] = c[(i, k)];
                    projected[(filled + k, i)] = c[(i, k)];
                }
            }
            basis.as_mut().get_mut(.., known..known + b).copy_from(&w);
            coupling = orthonormalise_block(basis.as_mut(), known, b, fresh_column);
            filled += b;
        }
        // Rayleigh–Ritz in the basis.
        let h = Mat::from_fn(filled, filled, |i, j| {
            0.5 * (projected[(i, j)] + projected[(j, i)])
        });
        let eig = symmetric_eigen(h.as_ref());
        let mut order: Vec<usize> = (0..filled).collect();
        order.sort_by(|&x, &y| eig.eigenvalues[y].total_cmp(&eig.eigenvalues[x]));
        let theta_max = eig.eigenvalues[order[0]].abs().max(f64::MIN_POSITIVE);
        // ‖A y − θ y‖ = ‖R s_last‖ for the Ritz vector y = V s.
        let residual = |k: usize| {
            let mut r2 = 0.0;
            for i in 0..b {
                let mut v = 0.0;
                for j in 0..b {
                    v += coupling[(i, j)] * eig.eigenvectors[(filled - b + j, order[k])];
                }
                r2 += v * v;
            }
            r2.sqrt()
        };
        let converged = (0..count)
            .take_while(|&k| residual(k) <= settings.tolerance * theta_max)
            .count();
        let done = converged >= count || restarts >= settings.max_restarts;
        let kept = if done {
            count
        } else {
            // Keep the wanted pairs and half the rest, in whole blocks of room.
            (count + (max_dim - count) / 2).min(max_dim - b)
        };
        let ritz = Mat::from_fn(filled, kept, |i, k| eig.eigenvectors[(i, order[k])]);
        let mut kept_vectors = Mat::<f64>::zeros(n, kept);
        matmul(
            kept_vectors.as_mut(),
            Accum::Replace,
            basis.as_ref().get(.., ..filled),
            ritz.as_ref(),
            1.0,
            Par::rayon(0),
        );
        if done {
            return LanczosOutcome {
                theta: (0..kept).map(|k| eig.eigenvalues[order[k]]).collect(),
                vectors: kept_vectors,
                converged,
                restarts,
            };
        }
        // Thick restart: the kept Ritz vectors, then the residual block.
        let residual_block = basis.as_ref().get(.., filled..filled + b).to_owned();
        basis.as_mut().get_mut(.., ..kept).copy_from(&kept_vectors);
        basis
            .as_mut()
            .get_mut(.., kept..kept + b)
            .copy_from(&residual_block);
        projected.fill(0.0);
        for k in 0..kept {
            projected[(k, k)] = eig.eigenvalues[order[k]];
        }
        filled = kept;
        restarts += 1;
    }
}

/// Eigenvalues (ascending) and orthonormal eigenvectors of a small dense
/// symmetric matrix: see [`symmetric_eigen`].
pub(super) struct SymmetricEigen {
    pub eigenvalues: Vec<f64>,
    pub eigenvectors: Mat<f64>,
}

/// Removes from `w` its components along the orthonormal columns of `basis`
/// (classical Gram–Schmidt, twice) and returns the total coefficients.
pub(super) fn orthogonalise(mut w: MatMut<'_, f64>, basis: MatRef<'_, f64>) -> Mat<f64> {
    let mut total = Mat::<f64>::zeros(basis.ncols(), w.ncols());
    for _ in 0..2 {
        let c = basis.transpose() * w.as_ref();
        matmul(
            w.as_mut(),
            Accum::Add,
            basis,
            c.as_ref(),
            -1.0,
            Par::rayon(0),
        );
        total += &c;
    }
    total
}

/// Orthonormalises columns `from..from + width` of `basis` in place, against
/// each other only (they are already orthogonal to the columns before), and
/// returns the triangular factor R. A column that vanishes (an invariant
/// subspace) is replaced by a fresh direction orthogonal to everything
/// before it, with a zero row in R.
pub(super) fn orthonormalise_block(
    mut basis: MatMut<'_, f64>,
    from: usize,
    width: usize,
    fresh_column: &mut dyn FnMut(MatMut<'_, f64>),
) -> Mat<f64> {
    let mut r = Mat::<f64>::zeros(width, width);
    let scale = (0..width)
        .map(|k| basis.rb().col(from + k).norm_l2())
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    for k in 0..width {
        let col = from + k;
        let (before, mut rest) = basis.rb_mut().split_at_col_mut(col);
        let mut current = rest.rb_mut().get_mut(.., 0..1);
        let c = orthogonalise(current.rb_mut(), before.rb().get(.., from..col));
        for i in 0..k {
            r[(i, k)] = c[(i, 0)];
        }
        let norm = current.rb().col(0).norm_l2();
        if norm > 1e-12 * scale {
            r[(k, k)] = norm;
            current
                .rb_mut()
                .col_mut(0)
                .iter_mut()
                .for_each(|v| *v /= norm);
        } else {
            fresh_column(current.rb_mut());
            orthogonalise(current.rb_mut(), before.rb());
            let norm = current.rb().col(0).norm_l2();
            current
                .rb_mut()
                .col_mut(0)
                .iter_mut()
                .for_each(|v| *v /= norm);
        }
    }
    r
}

use faer::reborrow::{Reborrow, ReborrowMut};

/// Uses faer's tridiagonal QR iteration, not its default divide and conquer:
/// on Lanczos projected matrices (near-diagonal, entries over many orders of
/// magnitude) faer 0.24's divide and conquer returned eigenvectors accurate
/// to only ~1e-6, which cost five extra polish steps; with the recursion
/// threshold at its maximum they are accurate to rounding.
pub(super) fn symmetric_eigen(matrix: MatRef<'_, f64>) -> SymmetricEigen {
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::evd::{
        self_adjoint_evd, self_adjoint_evd_scratch, ComputeEigenvectors, SelfAdjointEvdParams,
    };
    let n = matrix.nrows();
    let mut params: faer::Spec<SelfAdjointEvdParams, f64> = Default::default();
    params.recursion_threshold = usize::MAX;
    let mut values = faer::diag::Diag::<f64>::zeros(n);
    let mut vectors = Mat::<f64>::zeros(n, n);
    let mut mem = MemBuffer::new(self_adjoint_evd_scratch::<f64>(
        n,
        ComputeEigenvectors::Yes,
        Par::Seq,
        params,
    ));
    self_adjoint_evd(
        matrix,
        values.as_mut(),
        Some(vectors.as_mut()),
        Par::Seq,
        MemStack::new(&mut mem),
        params,
    )
    .expect("the symmetric QR algorithm converges on finite input");
    SymmetricEigen {
        eigenvalues: values.column_vector().iter().copied().collect(),
        eigenvectors: vectors,
    }
}
