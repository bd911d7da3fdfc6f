//! A breakable body: mesh, material, modal basis, fracture state, weak
//! points, and the region of the mesh it stands for.

use super::fragments::{labelled_fragments, Labels};
use super::impact_stress::ResidualField;
use super::surface::resolved_octaves;
use super::{fragments, BasisJob, BasisResult, FractureState, Fragment, ImpactStress, WeakPoints};
use crate::config::Material;
use crate::fem::constitutive_matrix;
use crate::mesh::{MassIntegrals, TetMesh, NO_NEIGHBOUR};
use crate::modal::{EigenSettings, ModalBasis, ModalBytes, ModalError};
use nalgebra::{Matrix3, Matrix6, Point3, Vector3};
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::sync::Arc;

/// A body that breaks under impacts ([`BreakableBody::impact`]) and held
/// loads ([`BreakableBody::static_load`]).
///
/// Mesh and modal basis are shared (`Arc`): the fragments of a body are
/// bodies over the same mesh and basis, each restricted to its own tets
/// (its *region*), so a fragment breaks again at once, without waiting for
/// an analysis of its own (Glondu 2012 §3.3.7 keeps "the same deformation
/// modes"). The parent's modes describe the fragment's vibration only
/// approximately: they still carry the stiffness and inertia of its
/// siblings, so stresses in a small fragment are those of the whole body
/// and a fragment's own low modes are missing. A fragment large enough to
/// matter gets a basis of its own: [`BreakableBody::own_basis_job`] meshes
/// its intact part for a background analysis ([`super::BasisWorker`]) and
/// [`BreakableBody::with_own_basis`] makes it a body of its own.
#[derive(Debug, Clone)]
pub struct BreakableBody {
    pub(super) mesh: Arc<TetMesh>,
    pub(super) material: Material,
    pub(super) basis: Arc<ModalBasis>,
    pub(super) state: FractureState,
    /// For a fragment body: its tets that were intact when it split off
    /// (where cracks may start) and its nodes.
    pub(super) region: Option<Region>,
    /// Material flaws (§3.3.5): positions and the tets holding them.
    pub(super) weak_points: WeakPoints,
    /// The material's constitutive matrix C, for η_e.
    pub(super) stiffness: Matrix6<f64>,
    pub(super) crack_seed: u32,
    /// Octaves of the crack noise this mesh resolves
    /// ([`super::surface::resolved_octaves`]).
    pub(super) noise_octaves: usize,
    /// Impacts taken so far.
    pub(super) impacts: u64,
    /// The DOFs of each load (sorted) of the body's last
    /// [`super::impact::STAYING_CHECKS`] impact or held-load checks, which
    /// decide how the next check's residual shapes are solved.
    pub(super) recent_load_dofs: std::collections::VecDeque<Vec<Vec<usize>>>,
    /// The DOFs (sorted) of the body's held-load checks so far: its
    /// supports, whose loads in a strike are formed from kept unit shapes.
    pub(super) held_load_dofs: Vec<usize>,
    /// The modal states of the last impact's samples, for
    /// [`Self::last_impact_stress`]; `None` before the body's first.
    pub(super) last_impact_states: Option<Arc<[f32]>>,
    /// The last impact's static correction and contact forces.
    pub(super) last_impact_residual: Option<(Arc<ResidualField>, Arc<[f32]>)>,
    /// The Rankine threshold of the last impact (R_c, or R_c scaled to
    /// the event: [`crate::fracture::Strength`]).
    pub(super) last_impact_threshold_pa: f64,
    /// Whether the body is held still (a static body): its rigid motion
    /// takes no part in an impact's contact.
    pub(super) held: bool,
}

/// Bytes held by a [`BreakableBody`]'s tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct BodyBytes {
    /// The modal basis's tables.
    pub modal: ModalBytes,
    /// The weak points and their grid.
    pub weak_points: usize,
    /// The fracture state.
    pub fracture_state: usize,
}

impl BodyBytes {
    /// All tables together.
    pub fn total(&self) -> usize {
        self.modal.total() + self.weak_points + self.fracture_state
    }
}

/// The part of a parent's mesh a fragment body stands for.
#[derive(Debug, Clone)]
pub(super) struct Region {
    pub(super) tets: Arc<[bool]>,
    nodes: Arc<[bool]>,
}

impl BreakableBody {
    /// `basis` must be the modal basis of `mesh` in `material`. Weak points
    /// are sampled uniformly in volume at the material's density (the count
    /// is the expected number, its fraction rounded at random). An error
    /// when that number does not fit the memory budget
    /// ([`crate::limits`]).
    pub fn new(
        mesh: impl Into<Arc<TetMesh>>,
        material: Material,
        basis: impl Into<Arc<ModalBasis>>,
        seed: u64,
    ) -> Result<Self, crate::limits::LimitError> {
        let mesh = mesh.into();
        let expected = material.weak_point_density_per_m3 * mesh.volume();
        // A point, its tet and its grid slot.
        const BYTES_PER_WEAK_POINT: f64 = 40.0;
        crate::limits::check_count(
            || format!("weak points ({expected:.3e} from weak_point_density_per_m3 × volume)"),
            expected,
            f64::from(u32::MAX - 1),
        )?;
        crate::limits::check_memory(
            || format!("{expected:.3e} weak points"),
            expected * BYTES_PER_WEAK_POINT,
        )?;
        // Fragment meshing reads them; a fracture event should not pay for them.
        mesh.tet_integrals();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let count = expected.floor() as usize + usize::from(rng.random::<f64>() < expected.fract());
        let mut cumulative = Vec::with_capacity(mesh.tet_count());
        let mut total = 0.0;
        for t in 0..mesh.tet_count() {
            total += mesh.tet_volume(t);
            cumulative.push(total);
        }
        let weak_points: Vec<(Point3<f64>, u32)> = (0..count)
            .map(|_| {
                let pick = rng.random::<f64>() * total;
                let t = cumulative
                    .partition_point(|&c| c < pick)
                    .min(mesh.tet_count() - 1);
                // Uniform in a tet: sorted uniforms give barycentric weights.
                let mut u = [
                    rng.random::<f64>(),
                    rng.random::<f64>(),
                    rng.random::<f64>(),
                ];
                u.sort_by(f64::total_cmp);
                let w = [u[0], u[1] - u[0], u[2] - u[1], 1.0 - u[2]];
                let p = mesh.tet_points(t);
                let point = Point3::from((0..4).map(|k| p[k].coords * w[k]).sum::<Vector3<f64>>());
                (point, t as u32)
            })
            .collect();
        let basis = basis.into();
        // Nor for the static correction's factor, which a basis loaded
        // from the modal cache lacks.
        basis.static_correction(&mesh, &material);
        let stiffness = constitutive_matrix(&material);
        let state = FractureState::new(&mesh);
        let noise_octaves = resolved_octaves(
            material.crack_noise_frequency_per_m,
            mesh.mean_edge_length(),
        );
        Ok(Self {
            mesh,
            basis,
            state,
            region: None,
            weak_points: WeakPoints::new(weak_points),
            stiffness,
            crack_seed: (seed as u32) ^ 0x5ca1ab1e,
            noise_octaves,
            last_impact_threshold_pa: material.rankine_threshold_pa,
            material,
            impacts: 0,
            recent_load_dofs: Default::default(),
            held_load_dofs: Vec::new(),
            last_impact_states: None,
            last_impact_residual: None,
            held: false,
        })
    }

    /// The stresses of the last load this body took (impact or held
    /// force), to be evaluated where wanted; `None` before its first.
    pub fn last_impact_stress(&self) -> Option<ImpactStress> {
        Some(ImpactStress {
            mesh: Arc::clone(&self.mesh),
            basis: Arc::clone(&self.basis),
            tets: self.region.as_ref().map(|r| Arc::clone(&r.tets)),
            states: Arc::clone(self.last_impact_states.as_ref()?),
            residual: self.last_impact_residual.clone(),
            threshold_pa: self.last_impact_threshold_pa,
            serial: self.impacts,
        })
    }

    /// The mesh (shared with the body's fragments).
    pub fn mesh(&self) -> &TetMesh {
        &self.mesh
    }

    /// The material.
    pub fn material(&self) -> &Material {
        &self.material
    }

    /// Which tets are damaged and which edges cut.
    pub fn state(&self) -> &FractureState {
        &self.state
    }

    /// The modal basis the body vibrates in.
    pub fn basis(&self) -> &ModalBasis {
        &self.basis
    }

    /// Bytes held by the body's precomputed tables (its mesh apart; a
    /// fragment body shares its parent's basis).
    pub fn table_bytes(&self) -> BodyBytes {
        BodyBytes {
            modal: self.basis.table_bytes(),
            weak_points: self.weak_points.bytes(),
            fracture_state: self.state.bytes(),
        }
    }

    /// Weak points (§3.3.5): position and the tet holding it.
    pub fn weak_points(&self) -> &[(Point3<f64>, u32)] {
        self.weak_points.points()
    }

    /// Whether a crack in `tet` belongs to this body: for a fragment body,
    /// the tets that were intact when it split off.
    pub fn contains_tet(&self, tet: usize) -> bool {
        self.region.as_ref().is_none_or(|r| r.tets[tet])
    }

    /// Holds the body still (a static body) or frees it: a free body's
    /// rigid motion yields to an impact (its mass and inertia enter the
    /// contact, `hertz::rigid_gains`). Bodies are free when made.
    pub fn set_held(&mut self, held: bool) {
        self.held = held;
    }

    /// Mass (kg), centre of mass (m) and inertia about it (kg·m²) of the
    /// body's tets (a fragment body's region).
    fn mass_properties(&self) -> (f64, Point3<f64>, Matrix3<f64>) {
        let mut integrals = MassIntegrals::default();
        for (t, tet) in self.mesh.tet_integrals().iter().enumerate() {
            if self.contains_tet(t) {
                integrals.add(tet);
            }
        }
        let density = self.material.density_kg_m3;
        (
            density * integrals.volume,
            integrals.centroid(),
            integrals.inertia_about_centroid(density),
        )
    }

    /// The rigid-motion gains of this body at `contacts` (point, normal),
    /// empty for a held body.
    pub(super) fn rigid_gains(&self, contacts: &[(Point3<f64>, Vector3<f64>)]) -> Vec<f64> {
        if self.held {
            return Vec::new();
        }
        let (mass_kg, centre, inertia) = self.mass_properties();
        super::hertz::rigid_gains(mass_kg, &centre, &inertia, contacts)
    }

    /// Whether a crack may start in `tet`: in the region and undamaged.
    pub(super) fn can_initiate(&self, tet: usize) -> bool {
        self.contains_tet(tet) && !self.state.is_damaged(tet)
    }

    /// The body's fragments (one, intact, until a crack separates it); for
    /// a fragment body, the pieces of its region. Meshed on `threads`.
    pub fn fragments(&self, threads: &rayon::ThreadPool) -> Vec<Fragment> {
        let density = self.material.density_kg_m3;
        let Some(region) = &self.region else {
            return threads.install(|| fragments(&self.mesh, &self.state, density));
        };
        // Every node outside the region is one "elsewhere": the region's
        // pieces in a tet depend only on its own nodes and the cut points
        // on the edges leaving them, so they are those of the split that
        // made it, and a later crack's gap in a tet the region shares is
        // carved from the region's part alone (a sibling's fragments and
        // the old gap there stay one piece of "elsewhere").
        let elsewhere = self.state.fragment_id_bound();
        let ids = self.state.node_fragments();
        let node_ids: Vec<u32> = (0..ids.len())
            .map(|n| if region.nodes[n] { ids[n] } else { elsewhere })
            .collect();
        let labels = Labels {
            node_ids: &node_ids,
            bound: elsewhere + 1,
        };
        let mut pieces =
            threads.install(|| labelled_fragments(&self.mesh, &self.state, labels, density));
        // A gap needs three labels in a tet, so two of the region's: all
        // gaps are the region's.
        pieces.retain(|f| f.is_gap || f.id != elsewhere);
        pieces
    }

    /// The fracture pattern (Glondu §5.1) of this body broken into
    /// `pieces` (its [`Self::fragments`]); `None` for a fragment body,
    /// whose mesh also holds its siblings, so that areas and cracks over
    /// the whole mesh are not its own.
    pub fn pattern(&self, pieces: &[Fragment]) -> Option<super::Pattern> {
        self.region
            .is_none()
            .then(|| super::Pattern::of(&self.mesh, &self.state, pieces))
    }

    /// The body standing for `fragment` (one of [`Self::fragments`]): same
    /// mesh, basis and fracture state, cracks starting only in its intact
    /// tets (its cut tets are damaged and cannot crack again).
    pub fn fragment_body(&self, fragment: &Fragment) -> Self {
        let mut tets = vec![false; self.mesh.tet_count()];
        let ids = self.state.node_fragments();
        for &t in &fragment.tets {
            tets[t as usize] = !self.state.is_damaged(t as usize);
        }
        let nodes: Vec<bool> = ids
            .iter()
            .map(|&id| id == fragment.id && !fragment.is_gap)
            .collect();
        let weak_points = WeakPoints::new(
            self.weak_points
                .points()
                .iter()
                .copied()
                .filter(|&(_, t)| tets[t as usize])
                .collect(),
        );
        Self {
            region: Some(Region {
                tets: tets.into(),
                nodes: nodes.into(),
            }),
            weak_points,
            crack_seed: self.crack_seed ^ fragment.id.wrapping_mul(0x2545_f491),
            // A fragment's impacts are its own.
            impacts: 0,
            recent_load_dofs: Default::default(),
            held_load_dofs: Vec::new(),
            last_impact_states: None,
            last_impact_residual: None,
            last_impact_threshold_pa: self.material.rankine_threshold_pa,
            held: false,
            ..self.clone()
        }
    }
}

impl BreakableBody {
    /// A background analysis for `fragment` (one of [`Self::fragments`]) if
    /// its intact part has at least `min_tets` tets, with as many modes as
    /// this body's basis (fewer for a small piece). The intact part is the
    /// largest face-connected set of the fragment's undamaged tets whose
    /// nodes all belong to it (a basis needs exactly six rigid modes, so
    /// one connected piece); `None` for a gap or a piece with too few.
    pub fn own_basis_job(
        &self,
        fragment: &Fragment,
        key: u64,
        min_tets: usize,
    ) -> Option<BasisJob> {
        if fragment.tets.len() < min_tets {
            return None;
        }
        let (mesh, parent_tets) = fragment_mesh(&self.mesh, &self.state, fragment)?;
        if mesh.tet_count() < min_tets.max(1) {
            return None;
        }
        // Lanczos needs several times more DOFs than modes.
        let modes = self
            .basis
            .mode_count()
            .min(3 * mesh.node_count() / 8)
            .max(1);
        let mut settings = EigenSettings::new(modes);
        settings.element = self.basis.element;
        Some(BasisJob {
            key,
            mesh,
            material: self.material.clone(),
            settings,
            parent_tets,
        })
    }

    /// The fragment this body stands for as a body of its own, in the basis
    /// `result` of its [`Self::own_basis_job`]: its intact part, intact,
    /// with the weak points that lie in it and its crack-noise stream. Its
    /// vibration starts at rest in the new modes (the parent's modal state
    /// does not map onto them). The analysis' error if it failed.
    pub fn with_own_basis(&self, result: BasisResult) -> Result<Self, ModalError> {
        let basis = result.basis?;
        let mesh = Arc::new(result.mesh);
        let own_tet: HashMap<u32, u32> = result
            .parent_tets
            .iter()
            .enumerate()
            .map(|(own, &parent)| (parent, own as u32))
            .collect();
        let weak_points = self
            .weak_points
            .points()
            .iter()
            .filter_map(|&(point, t)| own_tet.get(&t).map(|&own| (point, own)))
            .collect();
        mesh.tet_integrals();
        Ok(Self {
            state: FractureState::new(&mesh),
            region: None,
            weak_points: WeakPoints::new(weak_points),
            basis: Arc::new(basis),
            noise_octaves: resolved_octaves(
                self.material.crack_noise_frequency_per_m,
                mesh.mean_edge_length(),
            ),
            mesh,
            material: self.material.clone(),
            stiffness: self.stiffness,
            crack_seed: self.crack_seed,
            impacts: 0,
            recent_load_dofs: Default::default(),
            held_load_dofs: Vec::new(),
            last_impact_states: None,
            last_impact_residual: None,
            last_impact_threshold_pa: self.material.rankine_threshold_pa,
            held: false,
        })
    }
}

/// The mesh of the intact part of `fragment` (see
/// [`BreakableBody::own_basis_job`]), renumbered, and the tet of `mesh`
/// each of its tets is. `None` for a gap or a piece with no intact tet.
fn fragment_mesh(
    mesh: &TetMesh,
    state: &FractureState,
    fragment: &Fragment,
) -> Option<(TetMesh, Vec<u32>)> {
    if fragment.is_gap {
        return None;
    }
    let node_ids = state.node_fragments();
    let mut intact = vec![false; mesh.tet_count()];
    for &t in &fragment.tets {
        let t = t as usize;
        intact[t] = !state.is_damaged(t)
            && mesh.tets()[t]
                .iter()
                .all(|&n| node_ids[n as usize] == fragment.id);
    }
    let kept = largest_component(mesh, &intact);
    if kept.is_empty() {
        return None;
    }
    let mut renumber: HashMap<u32, u32> = HashMap::new();
    let mut nodes = Vec::new();
    let tets: Vec<[u32; 4]> = kept
        .iter()
        .map(|&t| {
            mesh.tets()[t as usize].map(|n| {
                *renumber.entry(n).or_insert_with(|| {
                    nodes.push(mesh.nodes()[n as usize]);
                    (nodes.len() - 1) as u32
                })
            })
        })
        .collect();
    // A subset of a valid mesh's tets is valid; `ok()` only guards that.
    Some((TetMesh::new(nodes, tets).ok()?, kept))
}

/// The largest set of `selected` tets connected through shared faces,
/// ascending.
fn largest_component(mesh: &TetMesh, selected: &[bool]) -> Vec<u32> {
    let neighbours = &mesh.topology().face_neighbours;
    let mut seen = vec![false; mesh.tet_count()];
    let mut best: Vec<u32> = Vec::new();
    for start in 0..mesh.tet_count() {
        if !selected[start] || seen[start] {
            continue;
        }
        seen[start] = true;
        let mut component = vec![start as u32];
        let mut next = 0;
        while next < component.len() {
            let t = component[next] as usize;
            next += 1;
            for &n in &neighbours[t] {
                if n != NO_NEIGHBOUR && selected[n as usize] && !seen[n as usize] {
                    seen[n as usize] = true;
                    component.push(n);
                }
            }
        }
        if component.len() > best.len() {
            best = component;
        }
    }
    best.sort_unstable();
    best
}
