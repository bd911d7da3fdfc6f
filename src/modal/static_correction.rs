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
//! The quasi-static response is the first term of a series. Each mode k
//! left out obeys `z̈_k + λ_k z_k = (x_kᵀ p̂) F(t)`, so
//! `z_k = (x_kᵀ p̂)(F/λ_k − F̈/λ_k² + …)` and
//!
//! ```text
//! u(t) = Σ_j x_j z_j(t) + F(t) r − F̈(t) s + …,   K s = M r,   s ⊥_M R, X
//! ```
//!
//! The second term ([`StaticCorrection::second_order_shapes`]) is the
//! dynamic amplification of the modes left out, of relative size about
//! `|F̈| / (λ_{m+1} F)`: it matters when the load changes within a few
//! periods of the lowest mode left out, as an impact's force does with few
//! modes retained. Stiffness-proportional damping would add `−α Ḟ r`,
//! of relative size `α |Ḟ| / F`: about 3e-5 for the library's α ≤ 1e-8 s
//! and a contact of a millisecond, so it is left out.
//!
//! K is singular (rigid motions), so `K r = b` is solved with the Cholesky
//! factor of `K − σM` (σ < 0) the eigensolver already has, as the fixed
//! point `r ← (K − σM)⁻¹ (b − σ M r)` projected back M-orthogonal to `R` and
//! `X`. The iteration contracts component i by `|σ| / (λ_i + |σ|)`, and
//! only the modes above the retained ones remain, so it converges in two or
//! three solves.
//!
//! An impact's loads are point loads on a few DOFs (a contact's triangle),
//! and a body's contacts come back to the same DOFs check after check (a
//! plate on its supports, a pile settling). [`StaticCorrection::point_load_shapes`]
//! therefore solves the shape of a unit load on each DOF once, keeps it
//! (least recently used dropped past
//! [`StaticCorrection::unit_shape_cap_bytes`]), and forms each load's
//! shape by linearity, `r(p) = Σ_d p_d r(e_d)`. Unit
//! shapes are solved in batches of exactly `UNIT_BATCH` columns on one
//! thread: faer's solve rounds a column differently for different column
//! counts, but alike whichever columns share its batch, so a DOF's shape has
//! the same bits whether it was solved cold or taken from the cache, and a
//! replay in a fresh process computes what the session did.

use super::eigen::{rigid_basis, shifted_matrix, CholeskyFactor, EigenError};
use crate::config::Material;
use crate::fem::ElasticMesh;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Mat, MatMut, MatRef, Par};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Relative error of a residual shape at which the fixed point stops: a
/// hundredth of a percent of a part of the stress, which is compared with
/// strengths known to a few percent. The a priori bound ρ^k reaches it in
/// one solve once the highest retained mode is above 100·√|σ| (1 kHz for
/// the default shift).
const TOLERANCE: f64 = 1e-4;
/// Fixed-point iterations before the last one is taken as it is.
const MAX_ITERATIONS: usize = 50;

/// Columns of every solve of unit shapes (module docs): wide enough that
/// the factor is read once for several DOFs (a contact loads 9 or 18), and
/// fixed, so that a shape's rounding does not depend on its batch.
const UNIT_BATCH: usize = 8;

/// Bytes of unit shapes a correction keeps at least: the 5 contacts of a
/// plate on its pegs and a ball (45 DOFs) on a 30 000-DOF body, with room
/// to spare.
const UNIT_SHAPE_CACHE_BYTES: usize = 16 << 20;

/// The factor's bytes per byte of unit shapes a larger body's correction
/// may keep beside it (`StaticCorrection::unit_shape_cap_bytes`): the kept
/// shapes add at most a quarter to what the correction holds anyway. A
/// 40k-tet quadratic tile on four pegs (72 DOFs of 205k) keeps 118 MB
/// beside its 887 MB factor.
const FACTOR_BYTES_PER_UNIT_SHAPE_BYTE: usize = 4;

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
    /// Shapes of unit loads on single DOFs, for the modes of the first
    /// [`Self::point_load_shapes`] call.
    unit_shapes: Mutex<UnitShapes>,
}

/// Unit shapes by DOF, least recently used dropped first past a byte cap.
#[derive(Debug, Default)]
struct UnitShapes {
    /// The modes (their count and the highest eigenvalue's bits) the shapes
    /// are residual to; other modes clear the cache.
    modes: Option<(usize, u64)>,
    by_dof: HashMap<usize, (Arc<[f64]>, u64)>,
    /// Counts uses, to find the least recently used.
    clock: u64,
    bytes: usize,
}

impl UnitShapes {
    /// Empties the cache unless it holds shapes residual to `modes`.
    fn serve_modes(&mut self, modes: (usize, u64)) {
        if self.modes != Some(modes) {
            *self = Self {
                modes: Some(modes),
                ..Self::default()
            };
        }
    }

    fn get(&mut self, dof: usize) -> Option<Arc<[f64]>> {
        self.clock += 1;
        let clock = self.clock;
        self.by_dof.get_mut(&dof).map(|(shape, used)| {
            *used = clock;
            Arc::clone(shape)
        })
    }

    /// Keeps `shape` and drops the least recently used shapes while more
    /// than `cap_bytes` are held (the newest is always kept).
    fn insert(&mut self, dof: usize, shape: Arc<[f64]>, cap_bytes: usize) {
        self.clock += 1;
        self.bytes += std::mem::size_of_val(&*shape);
        if let Some((old, _)) = self.by_dof.insert(dof, (shape, self.clock)) {
            self.bytes -= std::mem::size_of_val(&*old);
        }
        while self.bytes > cap_bytes && self.by_dof.len() > 1 {
            let Some(oldest) = self
                .by_dof
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(&d, _)| d)
            else {
                break;
            };
            if let Some((old, _)) = self.by_dof.remove(&oldest) {
                self.bytes -= std::mem::size_of_val(&*old);
            }
        }
    }
}

impl StaticCorrection {
    /// Bytes held: the factor of `K − σM`, the lumped masses, the rigid
    /// motions and the unit shapes kept now.
    pub fn bytes(&self) -> usize {
        self.factor.bytes()
            + (self.mass.len() + self.rigid.nrows() * self.rigid.ncols())
                * std::mem::size_of::<f64>()
            + self.unit_shapes().bytes
    }

    /// Bytes of unit shapes this correction keeps at most: 16 MiB, or a
    /// quarter of its factor's bytes if that is more. The shapes a body's
    /// supports need grow with its DOFs as the factor does (faster: a
    /// contact patch covers more DOFs on a finer mesh), so a fixed cap
    /// would keep none of them on a large body; a share of the factor
    /// bounds them by what the body costs already.
    pub fn unit_shape_cap_bytes(&self) -> usize {
        UNIT_SHAPE_CACHE_BYTES.max(self.factor.bytes() / FACTOR_BYTES_PER_UNIT_SHAPE_BYTE)
    }

    /// Whether the unit shapes of `dof_count` DOFs fit in what a
    /// correction keeps ([`Self::unit_shape_cap_bytes`]): only then does
    /// solving them once ([`Self::point_load_shapes`]) pay for later checks, and
    /// only then is what that call holds at once bounded. A load spread
    /// over a face (a tile resting flat) has thousands of DOFs, whose unit
    /// shapes would take minutes to solve and gigabytes to hold, where one
    /// direct solve takes a column.
    pub fn keeps_unit_shapes_of(&self, dof_count: usize) -> bool {
        dof_count
            .checked_mul(self.dofs() * std::mem::size_of::<f64>())
            .is_some_and(|bytes| bytes <= self.unit_shape_cap_bytes())
    }

    fn unit_shapes(&self) -> std::sync::MutexGuard<'_, UnitShapes> {
        // A panic while the cache is held leaves whole entries only.
        self.unit_shapes.lock().unwrap_or_else(|p| p.into_inner())
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
            unit_shapes: Mutex::default(),
        }
    }

    /// Assembles and factorises `K − shift·M` of `elastic` in `material`
    /// (for a basis loaded from the cache, which keeps no factor), in the
    /// fill-reducing `ordering` of an earlier factor of the same matrix
    /// ([`Self::ordering`]; the modal cache keeps the eigensolver's), else
    /// in the default ordering.
    pub fn new(
        elastic: &ElasticMesh,
        material: &Material,
        shift: f64,
        ordering: Option<&[usize]>,
    ) -> Result<Self, EigenError> {
        if !(shift < 0.0 && shift.is_finite()) {
            return Err(EigenError::BadShift(shift));
        }
        let stiffness = elastic.stiffness(material);
        let mass = elastic.lumped_mass(material.density_kg_m3);
        if let Some(i) = mass.iter().position(|&m| !(m > 0.0 && m.is_finite())) {
            return Err(EigenError::BadMass(i));
        }
        let shifted = shifted_matrix(&stiffness, &mass, shift);
        let factor =
            CholeskyFactor::new(&shifted, Par::rayon(0), shift, Default::default(), ordering)?;
        let sqrt_mass: Vec<f64> = mass.iter().map(|m| m.sqrt()).collect();
        let rigid_y = rigid_basis(elastic.nodes(), &sqrt_mass);
        Ok(Self::from_factor(factor, shift, &mass, rigid_y.as_ref()))
    }

    /// The factor's fill-reducing permutation of the DOFs (forward: new
    /// index to old), if it has one.
    pub fn ordering(&self) -> Option<&[usize]> {
        self.factor.permutation()
    }

    /// Degrees of freedom.
    pub fn dofs(&self) -> usize {
        self.mass.len()
    }

    /// The residual shape `r` of each load column of `loads` (DOFs × C,
    /// N per unit force) against the retained `modes` (DOFs × m,
    /// M-orthonormal, of `eigenvalues`, ascending): the static response
    /// less its rigid and retained parts (module docs).
    /// Column c of the result is load c's shape (m per N).
    ///
    /// From `r₀ = 0`, k solves leave an error of at most `ρ^k ‖r‖` (M-norm)
    /// with `ρ = |σ| / (λ_m + |σ|)`, which bounds the contraction over the
    /// modes left out: a column stops once that bound or its own change is
    /// below 1e-4, one solve for the shipped bodies (ρ ≈ 1e-6 to 1e-5).
    /// A column's iterations do not depend on the other columns. They run
    /// on the calling thread: faer's parallel solve of a few columns
    /// splits each supernode's work between the threads and waits at
    /// every one, which made an impact's solve slower, not faster.
    pub fn residual_shapes(
        &self,
        loads: MatRef<'_, f64>,
        modes: MatRef<'_, f64>,
        eigenvalues: &[f64],
    ) -> Mat<f64> {
        self.residual_shapes_in(loads, modes, eigenvalues, Par::Seq)
    }

    /// The second-order shapes `s` of residual shapes `r` (module docs):
    /// `K s = M r` with `s` M-orthogonal to the rigid motions and `modes`
    /// (as `r` is), column by column (m·s²/N: per unit F̈). `modes` and
    /// `eigenvalues` are as for [`Self::residual_shapes`].
    pub fn second_order_shapes(
        &self,
        residual: MatRef<'_, f64>,
        modes: MatRef<'_, f64>,
        eigenvalues: &[f64],
    ) -> Mat<f64> {
        // M r has no part in R or X (r ⊥_M R, X), so it is its own
        // relieved load.
        let inertia = Mat::from_fn(residual.nrows(), residual.ncols(), |i, j| {
            self.mass[i] * residual[(i, j)]
        });
        self.residual_shapes(inertia.as_ref(), modes, eigenvalues)
    }

    /// [`Self::residual_shapes`], with the products and the solve in `par`.
    fn residual_shapes_in(
        &self,
        loads: MatRef<'_, f64>,
        modes: MatRef<'_, f64>,
        eigenvalues: &[f64],
        par: Par,
    ) -> Mat<f64> {
        let (n, count) = (loads.nrows(), loads.ncols());
        debug_assert_eq!(n, self.dofs());
        // The relieved load b = p − M R Rᵀ p − M X Xᵀ p differs from p by
        // M R a + M X c, whose image (K − σM)⁻¹ M (R a + X c) = R a/(−σ)
        // + X diag(1/(λ − σ)) c lies in the span of R and X (the modes
        // are eigenvectors: K X = M X Λ) and is removed by the projection
        // after each solve. So each iteration solves with p in place of b:
        // the same iterates, and the first solve's right-hand side is the
        // contact's few DOFs, not a dense vector (`solve_sparse_in_place`).
        // Most of each solution then lies in that span, and one projection
        // would leave rounding errors of its size. The first solve's part
        // there is known from the loaded DOFs' rows of R and X
        // (`known_span_part`): it is subtracted, and what is left (the
        // solve's rounding, the modes' residuals) projected once. Later
        // solves, and dense loads, are projected twice ("twice is
        // enough", as Gram–Schmidt).
        let mut mem = MemBuffer::new(self.factor.solve_scratch(count, par));
        let mut shapes = Mat::<f64>::zeros(n, count);
        let mut next = Mat::<f64>::zeros(n, count);
        let highest_eigenvalue = eigenvalues.last().copied().unwrap_or(0.0);
        let contraction = if highest_eigenvalue > 0.0 {
            self.shift.abs() / (highest_eigenvalue + self.shift.abs())
        } else {
            1.0
        };
        let mut error_bound = 1.0;
        let mut converged = vec![false; count];
        let known = self.known_span_part(loads, modes, eigenvalues);
        for iteration in 0..MAX_ITERATIONS {
            // Each solve reads the whole factor: a background check makes
            // way here for one the person waits to feel.
            crate::worker::yield_to_urgent_work();
            if iteration == 0 {
                next.copy_from(loads);
                self.factor
                    .solve_sparse_in_place(next.as_mut(), par, MemStack::new(&mut mem));
            } else {
                for j in 0..count {
                    for i in 0..n {
                        next[(i, j)] = loads[(i, j)] - self.shift * self.mass[i] * shapes[(i, j)];
                    }
                }
                self.factor
                    .solve_in_place(next.as_mut(), par, MemStack::new(&mut mem));
            }
            match &known {
                Some(known) if iteration == 0 => {
                    self.project_known(next.as_mut(), modes, known.as_ref())
                }
                _ => self.project_twice(next.as_mut(), modes),
            }
            error_bound *= contraction;
            for (j, done) in converged.iter_mut().enumerate() {
                if *done {
                    continue;
                }
                let change = (next.col(j) - shapes.col(j)).norm_l2();
                let size = next.col(j).norm_l2();
                shapes.col_mut(j).copy_from(next.col(j));
                *done = error_bound <= TOLERANCE || change <= TOLERANCE * size;
            }
            if converged.iter().all(|&done| done) {
                break;
            }
        }
        shapes
    }

    /// The residual shape of each of `loads` (sparse columns: DOF and
    /// force, N per unit force), formed from the shapes of unit loads on
    /// their DOFs (module docs): column c of the result is load c's shape
    /// (m per N). `modes` and `eigenvalues` are as for
    /// [`Self::residual_shapes`] and must be the same at every call (the
    /// basis's own); other modes empty the kept shapes.
    ///
    /// Missing unit shapes are solved in parallel batches in the current
    /// rayon pool, and all of the loads' unit shapes are held at once:
    /// callers keep the loads' distinct DOFs within
    /// [`Self::keeps_unit_shapes_of`]. The result agrees with
    /// [`Self::residual_shapes`] of the dense loads to the iteration's
    /// tolerance, and its bits do not depend on which shapes were kept
    /// before.
    pub fn point_load_shapes(
        &self,
        loads: &[impl AsRef<[(usize, f64)]>],
        modes: MatRef<'_, f64>,
        eigenvalues: &[f64],
    ) -> Mat<f64> {
        let highest_eigenvalue = eigenvalues.last().copied().unwrap_or(0.0);
        let n = self.dofs();
        let mut dofs: Vec<usize> = loads
            .iter()
            .flat_map(|load| load.as_ref())
            .map(|&(dof, _)| dof)
            .collect();
        dofs.sort_unstable();
        dofs.dedup();
        let mut shapes: HashMap<usize, Arc<[f64]>> = HashMap::with_capacity(dofs.len());
        let mut missing = Vec::new();
        {
            let mut kept = self.unit_shapes();
            kept.serve_modes((modes.ncols(), highest_eigenvalue.to_bits()));
            for &dof in &dofs {
                match kept.get(dof) {
                    Some(shape) => {
                        shapes.insert(dof, shape);
                    }
                    None => missing.push(dof),
                }
            }
        }
        let solved: Vec<Vec<(usize, Arc<[f64]>)>> = missing
            .par_chunks(UNIT_BATCH)
            .map(|batch| {
                let mut units = Mat::<f64>::zeros(n, UNIT_BATCH);
                for (k, &dof) in batch.iter().enumerate() {
                    units[(dof, k)] = 1.0;
                }
                // One thread per batch: a parallel product splits its work by
                // the threads free, which would change its rounding.
                let r = self.residual_shapes_in(units.as_ref(), modes, eigenvalues, Par::Seq);
                batch
                    .iter()
                    .enumerate()
                    .map(|(k, &dof)| (dof, (0..n).map(|i| r[(i, k)]).collect()))
                    .collect()
            })
            .collect();
        if !solved.is_empty() {
            let cap_bytes = self.unit_shape_cap_bytes();
            let mut kept = self.unit_shapes();
            for (dof, shape) in solved.into_iter().flatten() {
                kept.insert(dof, Arc::clone(&shape), cap_bytes);
                shapes.insert(dof, shape);
            }
        }
        let mut out = Mat::<f64>::zeros(n, loads.len());
        for (c, load) in loads.iter().enumerate() {
            for (dof, f) in load.as_ref() {
                let shape = &shapes[dof];
                for (i, r) in shape.iter().enumerate() {
                    out[(i, c)] += f * r;
                }
            }
        }
        out
    }

    /// `u ← u − R Rᵀ M u − X Xᵀ M u`, twice (classical Gram–Schmidt
    /// against `[R X]`, "twice is enough").
    ///
    /// Reads `X` three times, not four: the first projection's update of a
    /// chunk of rows and the second's products on it are one sweep. Chunks
    /// of [`PROJECT_ROWS`] rows run on the current rayon pool and their
    /// products are summed in row order, so the bits do not depend on the
    /// threads (unit shapes are solved in parallel batches and must not
    /// depend on their batch).
    fn project_twice(&self, u: MatMut<'_, f64>, modes: MatRef<'_, f64>) {
        let first = sum_in_order(
            u.rb()
                .par_row_chunks(PROJECT_ROWS)
                .enumerate()
                .map(|(chunk, u)| self.chunk_products(chunk, u, modes))
                .collect(),
        );
        self.project_known(u, modes, first.as_ref());
    }

    /// `u ← u − [R X] known`, then projected once M-orthogonal to `R` and
    /// `modes` (the same chunks as [`Self::project_twice`], one pass over
    /// the basis fewer): `known` holds the coefficients of most of `u`'s
    /// part in their span, and what it leaves is small enough for one
    /// projection's rounding.
    fn project_known(
        &self,
        mut u: MatMut<'_, f64>,
        modes: MatRef<'_, f64>,
        known: MatRef<'_, f64>,
    ) {
        let left = sum_in_order(
            u.rb_mut()
                .par_row_chunks_mut(PROJECT_ROWS)
                .enumerate()
                .map(|(chunk, mut u)| {
                    self.chunk_subtract(chunk, u.rb_mut(), modes, known);
                    self.chunk_products(chunk, u.rb(), modes)
                })
                .collect(),
        );
        u.par_row_chunks_mut(PROJECT_ROWS)
            .enumerate()
            .for_each(|(chunk, u)| self.chunk_subtract(chunk, u, modes, left.as_ref()));
    }

    /// The coefficients in `[R X]` of the part of `(K − σM)⁻¹ p` in their
    /// span, for each column `p` of `loads`: `Rᵀp / (−σ)` and
    /// `(Xᵀp)_j / (λ_j − σ)`, since `(K − σM) R = −σ M R` and
    /// `(K − σM) X = M X (Λ − σ)`. A column loads a few DOFs, so these
    /// read only their rows of the basis. `None` when the loads are not
    /// that sparse (the second-order term's `M r`) or `eigenvalues` are not
    /// the modes' own.
    fn known_span_part(
        &self,
        loads: MatRef<'_, f64>,
        modes: MatRef<'_, f64>,
        eigenvalues: &[f64],
    ) -> Option<Mat<f64>> {
        if eigenvalues.len() != modes.ncols() {
            return None;
        }
        let (n, rigid) = (loads.nrows(), self.rigid.ncols());
        let mut known = Mat::<f64>::zeros(rigid + modes.ncols(), loads.ncols());
        let mut loaded = Vec::new();
        for k in 0..loads.ncols() {
            loaded.clear();
            for (i, &p) in column(loads, k).iter().enumerate() {
                if p != 0.0 {
                    if loaded.len() == n / SPARSE_LOAD_FRACTION {
                        return None;
                    }
                    loaded.push((i, p));
                }
            }
            for &(i, p) in &loaded {
                for j in 0..rigid {
                    known[(j, k)] += self.rigid[(i, j)] * p;
                }
                for j in 0..modes.ncols() {
                    known[(rigid + j, k)] += modes[(i, j)] * p;
                }
            }
            for j in 0..rigid {
                known[(j, k)] /= -self.shift;
            }
            for (j, &lambda) in eigenvalues.iter().enumerate() {
                known[(rigid + j, k)] /= lambda - self.shift;
            }
        }
        Some(known)
    }

    /// `[R X]ᵀ M u` over the rows of chunk `chunk` (`u` holds them).
    fn chunk_products(&self, chunk: usize, u: MatRef<'_, f64>, modes: MatRef<'_, f64>) -> Mat<f64> {
        crate::worker::yield_to_urgent_work();
        let start = chunk * PROJECT_ROWS;
        let rows = u.nrows();
        let mass = &self.mass[start..start + rows];
        let rigid = self.rigid.subrows(start, rows);
        let modes = modes.subrows(start, rows);
        let mut products = Mat::<f64>::zeros(rigid.ncols() + modes.ncols(), u.ncols());
        let mut weighted = vec![0.0; rows];
        for k in 0..u.ncols() {
            for ((w, &m), &x) in weighted.iter_mut().zip(mass).zip(column(u, k)) {
                *w = m * x;
            }
            for (j, basis) in columns(rigid, modes).enumerate() {
                products[(j, k)] = dot(basis, &weighted);
            }
        }
        products
    }

    /// `u ← u − [R X] c` on the rows of chunk `chunk` (`u` holds them).
    fn chunk_subtract(
        &self,
        chunk: usize,
        mut u: MatMut<'_, f64>,
        modes: MatRef<'_, f64>,
        coefficients: MatRef<'_, f64>,
    ) {
        crate::worker::yield_to_urgent_work();
        let start = chunk * PROJECT_ROWS;
        let rows = u.nrows();
        let rigid = self.rigid.subrows(start, rows);
        let modes = modes.subrows(start, rows);
        for k in 0..u.ncols() {
            let target = u
                .rb_mut()
                .col_mut(k)
                .try_as_col_major_mut()
                .expect("faer's columns are contiguous")
                .as_slice_mut();
            for (j, basis) in columns(rigid, modes).enumerate() {
                let c = coefficients[(j, k)];
                for (t, &b) in target.iter_mut().zip(basis) {
                    *t -= c * b;
                }
            }
        }
    }
}

/// The chunks' products summed in chunk order, so that the bits do not
/// depend on the threads.
fn sum_in_order(partials: Vec<Mat<f64>>) -> Mat<f64> {
    let mut parts = partials.into_iter();
    let mut total = parts.next().expect("a matrix has a row chunk");
    for partial in parts {
        total += &partial;
    }
    total
}

/// A load column with more than one DOF in this many loaded is dense for
/// [`StaticCorrection::known_span_part`]: a contact loads 9 or 18 DOFs of
/// thousands.
const SPARSE_LOAD_FRACTION: usize = 64;

/// Rows of one task of [`StaticCorrection::project_twice`]: the chunk's
/// rows of `u` and of its weights stay in L1 while the basis streams by.
const PROJECT_ROWS: usize = 512;

/// Column `j` of `m` as a slice (faer's columns are contiguous).
fn column(m: MatRef<'_, f64>, j: usize) -> &[f64] {
    m.col(j)
        .try_as_col_major()
        .expect("faer's columns are contiguous")
        .as_slice()
}

/// The columns of `R` then of `X`, as slices.
fn columns<'a>(rigid: MatRef<'a, f64>, modes: MatRef<'a, f64>) -> impl Iterator<Item = &'a [f64]> {
    (0..rigid.ncols())
        .map(move |j| column(rigid, j))
        .chain((0..modes.ncols()).map(move |j| column(modes, j)))
}

/// `aᵀ b` in four independent sums (one running sum would be a chain of
/// dependent additions).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut lanes = [0.0f64; 4];
    let (a4, b4) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f64 = a4
        .remainder()
        .iter()
        .zip(b4.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a4.zip(b4) {
        for l in 0..4 {
            lanes[l] += x[l] * y[l];
        }
    }
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]) + tail
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::config::MaterialLibrary;
    use crate::fem::{ElementOrder, SparseMatrix};
    use crate::mesh::box_mesh;
    use crate::modal::{lowest_modes, EigenSettings};
    use faer::sparse::linalg::matmul::sparse_dense_matmul;
    use faer::Accum;

    /// A 20 × 4 × 2 cm ceramic bar of `cells` in `order` elements: its
    /// elasticity, material, K and lumped M.
    pub(in crate::modal) fn bar(
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
            let eigenvalues = &solution.eigenvalues[..modes];
            let residual =
                correction.residual_shapes(loads.as_ref(), solution.shapes.as_ref(), eigenvalues);
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
            let second = correction.second_order_shapes(residual.as_ref(), x.as_ref(), eigenvalues);
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
                // The second-order shape: K s = M r, s ⊥_M R, X.
                let mut ks = Mat::<f64>::zeros(n, 1);
                sparse_dense_matmul(
                    ks.as_mut(),
                    Accum::Replace,
                    stiffness.as_ref(),
                    second.col(c).as_mat(),
                    1.0,
                    Par::Seq,
                );
                let inertia = (0..n).map(|i| mass[i] * residual[(i, c)]);
                let size = inertia.clone().fold(0.0f64, |a, b| a.max(b.abs()));
                let error = inertia
                    .enumerate()
                    .fold(0.0f64, |a, (i, b)| a.max((ks[(i, 0)] - b).abs()));
                // To the fixed point's tolerance: with 4 modes its bound
                // contracts slowly and it stops on the change instead.
                assert!(
                    error < TOLERANCE * size,
                    "{order:?}, {modes} modes, load {c}: |Ks − Mr| = {error:e} of {size:e}"
                );
                for (shape, what) in [(&residual, "residual"), (&second, "second-order")] {
                    let norm: f64 = (0..n)
                        .map(|i| mass[i] * shape[(i, c)].powi(2))
                        .sum::<f64>()
                        .sqrt();
                    for basis in [x.as_ref(), rigid.as_ref()] {
                        for j in 0..basis.ncols() {
                            let overlap: f64 = (0..n)
                                .map(|i| basis[(i, j)] * mass[i] * shape[(i, c)])
                                .sum();
                            assert!(
                                overlap.abs() < 1e-9 * norm,
                                "{modes} modes: {what} overlap {overlap:e}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// Point loads spread over a few nodes, as a contact's: shapes formed
    /// from unit shapes agree with the shapes of the dense loads, and a
    /// DOF's unit shape has the same bits whether it was solved alone, in a
    /// batch with other DOFs at another place in it, or taken from the
    /// kept shapes.
    #[test]
    fn point_load_shapes_are_unit_shapes_summed_and_do_not_depend_on_their_batch() {
        // A plate large enough that faer's solve takes its blocked paths,
        // where the count of columns changes the rounding.
        let mesh = box_mesh([0.1, 0.1, 0.005], [8, 8, 2], None).unwrap();
        let elastic = ElasticMesh::new(&mesh, ElementOrder::Quadratic);
        let material = MaterialLibrary::builtin().get("porcelain").unwrap().clone();
        let stiffness = elastic.stiffness(&material);
        let mass = elastic.lumped_mass(material.density_kg_m3);
        let n = mass.len();
        let settings = EigenSettings::new(10);
        let solution =
            lowest_modes(&stiffness, &mass, elastic.nodes(), &settings, &|_| {}).unwrap();
        let modes = solution.shapes.as_ref();
        let eigenvalues = &solution.eigenvalues[..10];
        let spread = |nodes: [usize; 3], direction: [f64; 3]| -> Vec<(usize, f64)> {
            let weights = [0.5, 0.3, 0.2];
            nodes
                .iter()
                .zip(weights)
                .flat_map(|(&node, w)| (0..3).map(move |a| (3 * node + a, w * direction[a])))
                .collect()
        };
        let loads = vec![
            spread([40, 41, 52], [0.0, 0.6, -0.8]),
            spread([3, 7, 11], [1.0, 0.0, 0.0]),
        ];
        let mut dense = Mat::<f64>::zeros(n, loads.len());
        for (c, load) in loads.iter().enumerate() {
            for &(dof, f) in load {
                dense[(dof, c)] += f;
            }
        }
        let cold = StaticCorrection::new(&elastic, &material, settings.shift, None).unwrap();
        let summed = cold.point_load_shapes(&loads, modes, eigenvalues);
        let direct = cold.residual_shapes(dense.as_ref(), modes, eigenvalues);
        // Alike far inside the iteration's tolerance: each solve's
        // rounding scales with its rigid and modal parts, which the
        // projection then removes (about 1e-9 of the shape).
        assert!(
            (&summed - &direct).norm_l2() < 1e-3 * TOLERANCE * direct.norm_l2(),
            "summed {:e} against direct {:e}",
            (&summed - &direct).norm_l2(),
            direct.norm_l2()
        );
        // Each DOF solved in a batch of its own (cold), and all of them in
        // one batch, then read back from the kept shapes.
        let dofs = [2, 9, 30, 64, 100, 121, 140, 200];
        let kept = StaticCorrection::new(&elastic, &material, settings.shift, None).unwrap();
        let together: Vec<(usize, f64)> = dofs.iter().map(|&dof| (dof, 1.0)).collect();
        kept.point_load_shapes(&[together], modes, eigenvalues);
        let bytes_before = kept.bytes();
        for dof in dofs {
            let probe = vec![vec![(dof, 1.0)]];
            let alone = cold.point_load_shapes(&probe, modes, eigenvalues);
            let from_kept = kept.point_load_shapes(&probe, modes, eigenvalues);
            for i in 0..n {
                assert_eq!(
                    alone[(i, 0)].to_bits(),
                    from_kept[(i, 0)].to_bits(),
                    "unit load on DOF {dof}, DOF {i}: {} against {}",
                    alone[(i, 0)],
                    from_kept[(i, 0)]
                );
            }
        }
        assert_eq!(kept.bytes(), bytes_before, "the shapes were kept");
    }

    #[test]
    fn kept_unit_shapes_stay_under_their_cap_dropping_the_least_recently_used() {
        let mut kept = UnitShapes::default();
        kept.serve_modes((10, 1.0f64.to_bits()));
        let shape = |v: f64| -> Arc<[f64]> { vec![v; 100].into() };
        let cap = 3 * 100 * std::mem::size_of::<f64>();
        for dof in 0..3 {
            kept.insert(dof, shape(dof as f64), cap);
        }
        assert!(kept.get(0).is_some());
        kept.insert(3, shape(3.0), cap);
        assert_eq!(kept.bytes, cap);
        assert!(kept.get(1).is_none(), "the least recently used goes");
        assert!(kept.get(0).is_some() && kept.get(2).is_some() && kept.get(3).is_some());
        kept.serve_modes((11, 1.0f64.to_bits()));
        assert!(kept.get(0).is_none(), "other modes empty the cache");
        assert_eq!(kept.bytes, 0);
    }

    /// A quadratic 8 × 2 × 2 bar, its lowest 10 modes with their
    /// eigensolve's factor, and the settings that solved them.
    fn bar_with_ten_modes() -> (
        ElasticMesh,
        Material,
        Vec<f64>,
        EigenSettings,
        crate::modal::EigenSolution,
    ) {
        let (elastic, material, stiffness, mass) = bar([8, 2, 2], ElementOrder::Quadratic);
        let settings = EigenSettings::new(10);
        let solution =
            lowest_modes(&stiffness, &mass, elastic.nodes(), &settings, &|_| {}).unwrap();
        (elastic, material, mass, settings, solution)
    }

    /// The first solve's part in the span of R and X, known from the
    /// loaded DOFs, is most of that part: subtracted and projected once,
    /// the solve is the same as projected twice. A dense load
    /// (or eigenvalues not the modes') is projected twice.
    #[test]
    fn the_known_span_part_leaves_one_projection_to_do() {
        let (_, _, mass, _, solution) = bar_with_ten_modes();
        let correction = &solution.static_correction;
        let (modes, eigenvalues) = (solution.shapes.as_ref(), &solution.eigenvalues[..10]);
        let n = mass.len();
        let mut loads = Mat::<f64>::zeros(n, 2);
        for (k, (dof, force)) in [(5, 1.0), (n - 4, -2.0), (n / 2, 0.5)]
            .into_iter()
            .enumerate()
        {
            loads[(dof, k.min(1))] = force;
        }
        let mut solved = loads.clone();
        let mut mem = MemBuffer::new(correction.factor.solve_scratch(2, Par::Seq));
        correction
            .factor
            .solve_in_place(solved.as_mut(), Par::Seq, MemStack::new(&mut mem));
        let known = correction
            .known_span_part(loads.as_ref(), modes, eigenvalues)
            .expect("point loads are sparse");
        let span_part = |u: MatRef<'_, f64>| {
            sum_in_order(vec![correction.chunk_products(0, u, modes)]).norm_l2()
        };
        let mut left = solved.clone();
        correction.chunk_subtract(0, left.as_mut(), modes, known.as_ref());
        assert!(
            span_part(left.as_ref()) < 1e-2 * span_part(solved.as_ref()),
            "{} of {}",
            span_part(left.as_ref()),
            span_part(solved.as_ref())
        );
        let mut twice = solved.clone();
        correction.project_twice(twice.as_mut(), modes);
        let mut once = solved;
        correction.project_known(once.as_mut(), modes, known.as_ref());
        // To the rounding of removing the large part in the span, which
        // both leave in every component (1e-10 here).
        assert!((&once - &twice).norm_l2() < 1e-8 * twice.norm_l2());
        assert!(span_part(once.as_ref()) < 1e-12 * once.norm_l2());

        let dense = Mat::<f64>::from_fn(n, 1, |i, _| mass[i]);
        assert!(correction
            .known_span_part(dense.as_ref(), modes, eigenvalues)
            .is_none());
        assert!(correction
            .known_span_part(loads.as_ref(), modes, &eigenvalues[..9])
            .is_none());
    }

    #[test]
    fn a_factor_built_apart_gives_the_eigensolvers_residuals() {
        let (elastic, material, mass, settings, solution) = bar_with_ten_modes();
        let apart = StaticCorrection::new(&elastic, &material, settings.shift, None).unwrap();
        let mut loads = Mat::<f64>::zeros(mass.len(), 1);
        loads[(5, 0)] = 1.0;
        let eigenvalues = &solution.eigenvalues[..10];
        let shapes = solution.shapes.as_ref();
        let a = solution
            .static_correction
            .residual_shapes(loads.as_ref(), shapes, eigenvalues);
        let b = apart.residual_shapes(loads.as_ref(), shapes, eigenvalues);
        assert!((&a - &b).norm_l2() < 1e-10 * a.norm_l2());
        assert!(matches!(
            StaticCorrection::new(&elastic, &material, 1.0, None),
            Err(EigenError::BadShift(_))
        ));
    }

    /// A factor given the ordering an earlier factor of the same matrix
    /// computed (as the modal cache keeps it) has that factor's bits; one
    /// given something that is not a permutation of its DOFs orders anew.
    #[test]
    fn a_factor_given_its_ordering_back_solves_to_the_same_bits() {
        let (elastic, material, mass, settings, solution) = bar_with_ten_modes();
        let shapes = solution.shapes.as_ref();
        let eigenvalues = &solution.eigenvalues[..10];
        let n = mass.len();
        let mut loads = Mat::<f64>::zeros(n, 2);
        loads[(5, 0)] = 1.0;
        loads[(n - 4, 1)] = -2.0;
        let ordered = StaticCorrection::new(&elastic, &material, settings.shift, None).unwrap();
        let ordering = ordered
            .ordering()
            .expect("a fill-reducing ordering")
            .to_vec();
        assert_eq!(ordering.len(), n);
        let expected = ordered.residual_shapes(loads.as_ref(), shapes, eigenvalues);
        let mut repeated = ordering.clone();
        repeated[1] = repeated[0];
        for (given, what) in [
            (ordering.clone(), "its own ordering"),
            (ordering[..n - 1].to_vec(), "too short"),
            ((0..n - 1).collect(), "a permutation of too few DOFs"),
            (repeated, "a DOF twice"),
            (vec![n; n], "past the DOFs"),
        ] {
            let factor =
                StaticCorrection::new(&elastic, &material, settings.shift, Some(&given)).unwrap();
            assert_eq!(factor.ordering(), Some(&ordering[..]), "{what}");
            let got = factor.residual_shapes(loads.as_ref(), shapes, eigenvalues);
            for i in 0..n {
                for c in 0..2 {
                    assert_eq!(got[(i, c)].to_bits(), expected[(i, c)].to_bits(), "{what}");
                }
            }
        }
    }
}
