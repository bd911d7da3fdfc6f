//! The modal basis of one body and how it is obtained.

use super::cache::ModalCache;
use super::displacement::ModalDisplacement;
use super::eigen::{lowest_modes, EigenSettings, EigenStats};
use super::response::ModeDynamics;
use super::static_correction::StaticCorrection;
use super::stress::ModalStress;
use super::ModalError;
use crate::config::Material;
use crate::fem::{ElasticMesh, ElementOrder};
use crate::mesh::TetMesh;
use faer::Mat;
use serde::Serialize;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// Bytes held by the tables of a [`ModalBasis`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ModalBytes {
    /// Mode shapes, f64, DOFs × modes.
    pub shapes: usize,
    /// Modal stresses (per element or per node, f32) with their screening
    /// bounds and incidence.
    pub stress: usize,
    /// Modal displacements of the mesh nodes (f32).
    pub displacement: usize,
    /// The static correction's factor of `K − σM`, masses and rigid
    /// motions; `None` until it is built (a basis from the cache builds it
    /// at its first impact).
    pub static_correction: Option<usize>,
}

impl ModalBytes {
    /// All tables together.
    pub fn total(&self) -> usize {
        self.shapes + self.stress + self.displacement + self.static_correction.unwrap_or(0)
    }
}

/// Modes of one body: shapes, dynamics, per-element modal stresses and
/// per-node modal displacements.
#[derive(Debug, Clone)]
pub struct ModalBasis {
    /// λ per elastic mode, ascending (rad²/s²).
    pub eigenvalues: Vec<f64>,
    /// Damped dynamics per mode (from the material's Rayleigh coefficients).
    pub dynamics: Vec<ModeDynamics>,
    /// Mode shapes, node-major DOFs × modes, M-orthonormal (lumped M): the
    /// DOFs of the [`ElasticMesh`] of `element`, whose first
    /// `3 · mesh.node_count()` are the mesh nodes'.
    pub shapes: Mat<f64>,
    /// The element the modes were solved with.
    pub element: ElementOrder,
    /// ‖Kx − λMx‖ / ‖Kx‖ per mode.
    pub residuals: Vec<f64>,
    stress: ModalStress,
    displacement: ModalDisplacement,
    elastic: OnceLock<ElasticMesh>,
    /// The factor for the static correction: the eigensolver's, or built on
    /// first use for a basis loaded from the cache (`None` if it failed).
    static_correction: OnceLock<Option<Arc<StaticCorrection>>>,
    /// The ordering for building that factor ([`Modes::factor_ordering`]).
    factor_ordering: Option<Vec<usize>>,
}

impl ModalBasis {
    /// Number of elastic modes.
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

    /// The elasticity's nodes and elements on `mesh`, which must be the
    /// basis's own (built by [`Self::from_modes`]).
    pub fn elastic_mesh(&self, mesh: &TetMesh) -> &ElasticMesh {
        self.elastic
            .get_or_init(|| ElasticMesh::new(mesh, self.element))
    }

    /// The per-element modal stress table.
    pub fn stress(&self) -> &ModalStress {
        &self.stress
    }

    /// The node-major modal displacement table.
    pub fn displacement(&self) -> &ModalDisplacement {
        &self.displacement
    }

    /// Stress (Voigt, Pa) at stress point `point` ([`ModalStress`]) at
    /// modal coordinates `z`.
    pub fn point_stress(&self, point: usize, z: &[f64]) -> [f64; 6] {
        let z: Vec<f32> = z.iter().map(|&v| v as f32).collect();
        self.stress.point_stress(point, &z).map(f64::from)
    }

    /// Bytes held by each of the basis's tables.
    pub fn table_bytes(&self) -> ModalBytes {
        ModalBytes {
            shapes: self.shapes.nrows() * self.shapes.ncols() * std::mem::size_of::<f64>(),
            stress: self.stress.bytes(),
            displacement: self.displacement.bytes(),
            static_correction: self
                .static_correction
                .get()
                .map(|c| c.as_ref().map_or(0, |c| c.bytes())),
        }
    }

    /// The static correction of this basis ([`StaticCorrection`]);
    /// `mesh` and `material` must be the basis's own. A basis loaded from
    /// the cache factorises `K − σM` on the first call (once; `None` if
    /// that fails, which the eigensolve that made the basis rules out).
    pub fn static_correction(
        &self,
        mesh: &TetMesh,
        material: &Material,
    ) -> Option<&StaticCorrection> {
        self.static_correction
            .get_or_init(|| {
                let shift = EigenSettings::new(self.mode_count()).shift;
                StaticCorrection::new(
                    self.elastic_mesh(mesh),
                    material,
                    shift,
                    self.factor_ordering.as_deref(),
                )
                .map(Arc::new)
                .map_err(|error| {
                    tracing::warn!(%error, "no static correction for this body");
                })
                .ok()
            })
            .as_deref()
    }

    /// Builds the basis from solved modes: dynamics and modal stresses.
    pub fn from_modes(mesh: &TetMesh, material: &Material, modes: Modes) -> Self {
        let Modes {
            eigenvalues,
            shapes,
            residuals,
            element,
            static_correction,
            factor_ordering,
        } = modes;
        let dynamics = mode_dynamics(&eigenvalues, material);
        let elastic = ElasticMesh::new(mesh, element);
        let stress = ModalStress::new(&elastic, material, &shapes);
        let displacement = ModalDisplacement::new(&shapes, elastic.corner_count());
        Self {
            eigenvalues,
            dynamics,
            shapes,
            element,
            residuals,
            stress,
            displacement,
            elastic: OnceLock::from(elastic),
            static_correction: static_correction
                .map_or_else(OnceLock::new, |factor| OnceLock::from(Some(factor))),
            factor_ordering,
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

/// Seconds spent per phase.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ModalTimings {
    /// Assembly of K and M (s).
    pub assembly: f64,
    /// Factorisation of the shifted K (s).
    pub factorization: f64,
    /// Lanczos iterations (s).
    pub lanczos: f64,
    /// Refinement of the eigenpairs (s).
    pub polish: f64,
    /// Modal stress tables (s).
    pub modal_stress: f64,
    /// Reading or writing the cache (s).
    pub cache: f64,
    /// The whole analysis (s).
    pub total: f64,
}

/// What [`analyse`] did.
#[derive(Debug, Clone, Serialize)]
pub struct ModalReport {
    /// Whether the basis came from the cache.
    pub from_cache: bool,
    /// Seconds spent per phase.
    pub seconds: ModalTimings,
    /// Eigensolver statistics (absent when loaded from the cache).
    pub solver: Option<EigenStats>,
    /// Degrees of freedom of the mesh.
    pub dofs: usize,
    /// Stored entries of K's upper triangle.
    pub stiffness_nnz: usize,
}

/// Solved modes of one body, before the per-element tables are built.
#[derive(Debug, Clone)]
pub struct Modes {
    /// Eigenvalues λ = ω² (rad²/s²), ascending.
    pub eigenvalues: Vec<f64>,
    /// Mode shapes, one column per mode, M-orthonormal.
    pub shapes: Mat<f64>,
    /// Relative residual of each mode.
    pub residuals: Vec<f64>,
    /// The element of K and M.
    pub element: ElementOrder,
    /// The eigensolver's factor, for the static correction (`None` when
    /// loaded from the cache).
    pub static_correction: Option<Arc<StaticCorrection>>,
    /// The factor's fill-reducing ordering ([`StaticCorrection::ordering`]),
    /// kept by the cache, so that a basis loaded from it factorises for its
    /// static correction without ordering again.
    pub factor_ordering: Option<Vec<usize>>,
}

/// The modes of `mesh` in `material`: from `cache` when it holds them for the
/// same mesh, elastic parameters and settings, otherwise solved (and stored).
/// The factorization and the Lanczos products run on `threads`.
pub fn solve_modes(
    mesh: &TetMesh,
    material: &Material,
    settings: &EigenSettings,
    cache: Option<&ModalCache>,
    threads: &rayon::ThreadPool,
    on_solve: &(dyn Fn(usize) + Sync),
) -> Result<(Modes, ModalReport), ModalError> {
    threads.install(|| solve_modes_in_pool(mesh, material, settings, cache, on_solve))
}

fn solve_modes_in_pool(
    mesh: &TetMesh,
    material: &Material,
    settings: &EigenSettings,
    cache: Option<&ModalCache>,
    on_solve: &(dyn Fn(usize) + Sync),
) -> Result<(Modes, ModalReport), ModalError> {
    let start = Instant::now();
    let mut seconds = ModalTimings::default();
    let dofs = 3 * settings.element.node_count(mesh);
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
    let elastic = ElasticMesh::new(mesh, settings.element);
    let stiffness = elastic.stiffness(material);
    let mass = elastic.lumped_mass(material.density_kg_m3);
    seconds.assembly = t.elapsed().as_secs_f64();
    let solution = lowest_modes(&stiffness, &mass, elastic.nodes(), settings, on_solve)?;
    seconds.factorization = solution.stats.factorization_s;
    seconds.lanczos = solution.stats.lanczos_s;
    seconds.polish = solution.stats.polish_s;
    let modes = Modes {
        eigenvalues: solution.eigenvalues,
        shapes: solution.shapes,
        residuals: solution.residuals,
        element: settings.element,
        static_correction: Some(solution.static_correction),
        factor_ordering: None,
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
/// `total` include the table, built on `threads` too.
pub fn analyse(
    mesh: &TetMesh,
    material: &Material,
    settings: &EigenSettings,
    cache: Option<&ModalCache>,
    threads: &rayon::ThreadPool,
    on_solve: &(dyn Fn(usize) + Sync),
) -> Result<(ModalBasis, ModalReport), ModalError> {
    let (modes, mut report) = solve_modes(mesh, material, settings, cache, threads, on_solve)?;
    let t = Instant::now();
    let basis = threads.install(|| ModalBasis::from_modes(mesh, material, modes));
    report.seconds.modal_stress = t.elapsed().as_secs_f64();
    report.seconds.total += report.seconds.modal_stress;
    Ok((basis, report))
}
