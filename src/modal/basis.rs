//! The modal basis of one body and how it is obtained.

use super::cache::ModalCache;
use super::eigen::{lowest_modes, EigenSettings, EigenStats};
use super::response::ModeDynamics;
use super::ModalError;
use crate::config::Material;
use crate::fem::{assemble_stiffness, constitutive_matrix, lumped_mass, DofPattern, TetElement};
use crate::mesh::TetMesh;
use faer::Mat;
use rayon::prelude::*;
use serde::Serialize;
use std::time::Instant;

/// Modes of one body: shapes, dynamics and per-element modal stresses.
///
/// The modal stress matrices are stored in `f32`: one 6×m matrix per element
/// is the largest table of the fracture engine (175k tets × 100 modes is 420 MB
/// in f32, 840 MB in f64), and the Rankine test compares stresses against a
/// threshold known to a few percent, far above f32's 1e-7 relative precision.
/// Shapes and modal coordinates stay in f64.
#[derive(Debug, Clone)]
pub struct ModalBasis {
    /// λ per elastic mode, ascending (rad²/s²).
    pub eigenvalues: Vec<f64>,
    /// Damped dynamics per mode (from the material's Rayleigh coefficients).
    pub dynamics: Vec<ModeDynamics>,
    /// Mode shapes, node-major DOFs × modes, M-orthonormal (lumped M).
    pub shapes: Mat<f64>,
    /// ‖Kx − λMx‖ / ‖Kx‖ per mode.
    pub residuals: Vec<f64>,
    /// Row 6e + c, column j: Voigt component c of the stress of mode j in
    /// element e, at unit modal coordinate (Pa). Column-major, so the
    /// stresses of every element at several modal states are one product.
    modal_stress: Mat<f32>,
}

impl ModalBasis {
    pub fn mode_count(&self) -> usize {
        self.eigenvalues.len()
    }

    /// Undamped natural frequencies (Hz), ascending.
    pub fn frequencies_hz(&self) -> Vec<f64> {
        self.dynamics
            .iter()
            .map(ModeDynamics::natural_frequency_hz)
            .collect()
    }

    /// The modal stress table: row 6e + c, column j is Voigt component c
    /// of mode j's stress in element e (Pa per unit modal coordinate).
    pub fn modal_stress(&self) -> faer::MatRef<'_, f32> {
        self.modal_stress.as_ref()
    }

    /// Stress (Voigt, Pa) of `element` at modal coordinates `z`:
    /// one small matrix–vector product.
    pub fn element_stress(&self, element: usize, z: &[f64]) -> [f64; 6] {
        let mut s = [0.0f64; 6];
        for (j, &zj) in z.iter().enumerate() {
            for (c, sc) in s.iter_mut().enumerate() {
                *sc += f64::from(self.modal_stress[(6 * element + c, j)]) * zj;
            }
        }
        s
    }

    /// Bytes held by the modal stress table.
    pub fn modal_stress_bytes(&self) -> usize {
        self.modal_stress.nrows() * self.modal_stress.ncols() * std::mem::size_of::<f32>()
    }

    /// Builds the basis from solved modes: dynamics and modal stresses.
    pub fn from_modes(mesh: &TetMesh, material: &Material, modes: Modes) -> Self {
        let Modes {
            eigenvalues,
            shapes,
            residuals,
        } = modes;
        let dynamics = eigenvalues
            .iter()
            .map(|&l| {
                ModeDynamics::new(l, material.damping_stiffness_s, material.damping_mass_per_s)
            })
            .collect();
        let modal_stress = modal_stresses(mesh, material, &shapes);
        Self {
            eigenvalues,
            dynamics,
            shapes,
            residuals,
            modal_stress,
        }
    }
}

/// The damped dynamics of each mode in the material's Rayleigh damping.
pub fn mode_dynamics(eigenvalues: &[f64], material: &Material) -> Vec<ModeDynamics> {
    eigenvalues
        .iter()
        .map(|&l| ModeDynamics::new(l, material.damping_stiffness_s, material.damping_mass_per_s))
        .collect()
}

/// σ_e,j = C B_e x_j restricted to element e, for every element and mode.
fn modal_stresses(mesh: &TetMesh, material: &Material, shapes: &Mat<f64>) -> Mat<f32> {
    let m = shapes.ncols();
    let elements = mesh.tet_count();
    let c = constitutive_matrix(material);
    let mut table = Mat::<f32>::zeros(6 * elements, m);
    if m == 0 {
        return table;
    }
    let cb: Vec<nalgebra::SMatrix<f64, 6, 12>> = (0..elements)
        .into_par_iter()
        .map(|t| {
            c * TetElement::new(&mesh.tet_points(t))
                .expect("validated mesh")
                .b_matrix()
        })
        .collect();
    // Each mode's column is independent: fill columns in parallel.
    let columns: Vec<Vec<f32>> = (0..m)
        .into_par_iter()
        .map(|j| {
            let mut column = vec![0.0f32; 6 * elements];
            for (t, tet) in mesh.tets().iter().enumerate() {
                let mut u = nalgebra::SVector::<f64, 12>::zeros();
                for (a, &node) in tet.iter().enumerate() {
                    for axis in 0..3 {
                        u[3 * a + axis] = shapes[(3 * node as usize + axis, j)];
                    }
                }
                let s = cb[t] * u;
                for k in 0..6 {
                    column[6 * t + k] = s[k] as f32;
                }
            }
            column
        })
        .collect();
    for (j, column) in columns.into_iter().enumerate() {
        table
            .col_mut(j)
            .iter_mut()
            .zip(column)
            .for_each(|(t, v)| *t = v);
    }
    table
}

/// Seconds spent per phase.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ModalTimings {
    pub assembly: f64,
    pub factorization: f64,
    pub lanczos: f64,
    pub polish: f64,
    pub modal_stress: f64,
    pub cache: f64,
    pub total: f64,
}

/// What [`analyse`] did.
#[derive(Debug, Clone, Serialize)]
pub struct ModalReport {
    pub from_cache: bool,
    pub seconds: ModalTimings,
    /// Eigensolver statistics (absent when loaded from the cache).
    pub solver: Option<EigenStats>,
    pub dofs: usize,
    pub stiffness_nnz: usize,
}

/// Solved modes of one body, before the per-element tables are built.
#[derive(Debug, Clone)]
pub struct Modes {
    pub eigenvalues: Vec<f64>,
    pub shapes: Mat<f64>,
    pub residuals: Vec<f64>,
}

/// The modes of `mesh` in `material`: from `cache` when it holds them for the
/// same mesh, elastic parameters and settings, otherwise solved (and stored).
pub fn solve_modes(
    mesh: &TetMesh,
    material: &Material,
    settings: &EigenSettings,
    cache: Option<&ModalCache>,
    on_solve: &(dyn Fn(usize) + Sync),
) -> Result<(Modes, ModalReport), ModalError> {
    let start = Instant::now();
    let mut seconds = ModalTimings::default();
    let dofs = 3 * mesh.node_count();
    if let Some(cache) = cache {
        let t = Instant::now();
        if let Some(modes) = cache.load(mesh, material, settings)? {
            seconds.cache = t.elapsed().as_secs_f64();
            seconds.total = start.elapsed().as_secs_f64();
            tracing::info!(
                modes = settings.modes,
                seconds = seconds.total,
                "modal analysis loaded from the cache"
            );
            let report = ModalReport {
                from_cache: true,
                seconds,
                solver: None,
                dofs,
                stiffness_nnz: 0,
            };
            return Ok((modes, report));
        }
    }
    let t = Instant::now();
    let pattern = DofPattern::new(mesh);
    let stiffness = assemble_stiffness(mesh, &pattern, material);
    let mass = lumped_mass(mesh, material.density_kg_m3);
    seconds.assembly = t.elapsed().as_secs_f64();
    let solution = lowest_modes(&stiffness, &mass, mesh.nodes(), settings, on_solve)?;
    seconds.factorization = solution.stats.factorization_s;
    seconds.lanczos = solution.stats.lanczos_s;
    seconds.polish = solution.stats.polish_s;
    let modes = Modes {
        eigenvalues: solution.eigenvalues,
        shapes: solution.shapes,
        residuals: solution.residuals,
    };
    if let Some(cache) = cache {
        let t = Instant::now();
        cache.store(mesh, material, settings, &modes)?;
        seconds.cache = t.elapsed().as_secs_f64();
    }
    seconds.total = start.elapsed().as_secs_f64();
    tracing::info!(
        modes = settings.modes,
        dofs,
        seconds = seconds.total,
        solves = solution.stats.solves,
        "modal analysis solved"
    );
    let report = ModalReport {
        from_cache: false,
        seconds,
        solver: Some(solution.stats),
        dofs,
        stiffness_nnz: stiffness.compute_nnz(),
    };
    Ok((modes, report))
}

/// The full modal basis (modes, dynamics, modal stresses) of `mesh` in
/// `material`, through [`solve_modes`]; `report.seconds.modal_stress` and
/// `total` include the table.
pub fn analyse(
    mesh: &TetMesh,
    material: &Material,
    settings: &EigenSettings,
    cache: Option<&ModalCache>,
    on_solve: &(dyn Fn(usize) + Sync),
) -> Result<(ModalBasis, ModalReport), ModalError> {
    let (modes, mut report) = solve_modes(mesh, material, settings, cache, on_solve)?;
    let t = Instant::now();
    let basis = ModalBasis::from_modes(mesh, material, modes);
    report.seconds.modal_stress = t.elapsed().as_secs_f64();
    report.seconds.total += report.seconds.modal_stress;
    Ok((basis, report))
}
