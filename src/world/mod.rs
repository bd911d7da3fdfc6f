//! The global world: rigid bodies on rapier3d, breakable bodies among them,
//! contact impulses handed to the fracture engine, broken bodies replaced by
//! their fragments in the same step (Glondu 2012 §4.1–4.2), or in real-time
//! sessions at a later one (`deferred.rs`).
//!
//! This is the only module that speaks rapier; `units.rs` converts between
//! its glam f32 simulation units and the crate's nalgebra SI values.
//!
//! A body's frame is the frame of its shape: for a tet-mesh body, the mesh's
//! coordinates. A fragment keeps its parent's frame (its collider and mass
//! properties are expressed in it), so its pose at the split is the parent's.

mod breaking;
mod build;
mod contacts;
mod deferred;
mod drop;
mod extract;
mod frames;
mod own_basis;
mod shapes;
mod speculative;
mod sub;
mod units;

pub use breaking::{FractureEvent, FractureKind, ImpactCheck};
pub use build::{AnalysisProgress, SceneAssets, WorldError};
pub use contacts::BodyContact;
pub use deferred::{FractureWorker, MAX_WAITING_IMPACTS};
pub use drop::{drop_run, place_above, DropRun, FrameOutput};
pub use extract::Extraction;
pub use frames::write_obj_frame;
pub use own_basis::{Adoption, OWN_BASIS_MIN_TETS};
pub use shapes::Surface;
pub use sub::{
    BorderContact, FrictionImpulse, MemberBody, MemberState, ProxyBody, SubWorld, SubWorldReport,
    SubWorldUpdate,
};

use crate::config::{Material, WorldSettings};
use crate::fracture::{BreakableBody, FractureSettings};
use contacts::{Kinematics, Placement};
use nalgebra::{Isometry3, Point3, Vector3};
use rapier3d::dynamics::RigidBodyHandle;
use rapier3d::pipeline::PhysicsWorld;
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;
use units::Units;

/// Feeds a body's id, pose and velocities (bit patterns) to `hasher`.
fn hash_body_state(
    hasher: &mut xxhash_rust::xxh3::Xxh3,
    id: BodyId,
    rb: &rapier3d::dynamics::RigidBody,
) {
    hasher.update(&id.0.to_le_bytes());
    let p = rb.position();
    let values = [
        p.translation.to_array(),
        rb.linvel().to_array(),
        rb.angvel().to_array(),
    ];
    for v in values.iter().flatten().chain(&p.rotation.to_array()) {
        hasher.update(&v.to_bits().to_le_bytes());
    }
}

/// A body of the world, stable across steps (rapier handles are not
/// exposed). Fragments get new ids; a broken body's id is retired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct BodyId(pub u32);

/// What the world keeps about one body beside rapier's state.
#[derive(Debug, Clone)]
pub struct WorldBody {
    /// Name from the scene (fragments: the parent's name and `/N`).
    pub name: String,
    pub(crate) handle: RigidBodyHandle,
    /// Its material.
    pub material: Arc<Material>,
    /// `None` for a static body.
    pub mass_kg: Option<f64>,
    /// Volume (m³).
    pub volume_m3: f64,
    /// Radius of curvature in contacts (Hertz), m.
    pub contact_radius_m: f64,
    /// Coulomb friction coefficient.
    pub friction: f64,
    /// Restitution coefficient.
    pub restitution: f64,
    /// Its surface, in its frame (for display and frames).
    pub surface: Arc<Surface>,
    /// The fracture side, for a breakable body.
    pub breakable: Option<Breakable>,
    /// The body this one is a fragment of.
    pub parent: Option<BodyId>,
}

/// The fracture side of a breakable body.
#[derive(Debug, Clone)]
pub struct Breakable {
    /// The fracture engine's body.
    pub body: BreakableBody,
    last_static_check_s: f64,
    /// Total held force at the last quasi-static check (N).
    last_static_force_n: f64,
    /// Whether a deferred check of the body is out (`deferred.rs`).
    checking: bool,
}

/// Mass, momentum and kinetic energy of a body (Glondu eq. 4.3), SI.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BodyMotion {
    /// Mass (kg).
    pub mass_kg: f64,
    /// Centre of mass (m).
    pub com_m: [f64; 3],
    /// Linear momentum (N·s).
    pub momentum_n_s: [f64; 3],
    /// ½ m v² + ½ ωᵀ I ω (J).
    pub kinetic_energy_j: f64,
}

/// What a step of the world takes from outside it. The haptic sub-world
/// (Glondu 2012 §4.3.3.1) computes the contacts of the bodies it holds;
/// the simulation thread that exchanges with it passes them here, so the
/// world keeps no state between a sync and its step.
#[derive(Debug, Clone, Copy, Default)]
pub struct StepInputs<'a> {
    /// Contacts on breakable bodies computed elsewhere (the sub-world's),
    /// fed to this step's fracture checks.
    pub external_contacts: &'a [BodyContact],
    /// Bodies whose contacts come only from `external_contacts` (the
    /// sub-world's members), ascending: their contacts in this world are
    /// their dynamic twins' and do not feed the fracture engine.
    pub sub_world_members: &'a [BodyId],
}

/// Wall time of the world's steps, accumulated by the caller that owns it
/// and kept apart from the physical results (rapier's `Counters`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Counters {
    /// Steps counted.
    pub steps: u64,
    /// All steps, the longest one and the last one (s).
    pub step_total_s: f64,
    /// Longest step (s).
    pub step_max_s: f64,
    /// Last step (s).
    pub last_step_s: f64,
    /// rapier's steps (s).
    pub physics_s: f64,
    /// Contact gathering, fracture checks and fragment insertion (s).
    pub fracture_s: f64,
    /// Deferred impacts whose contacts exchanged, in their step, the
    /// impulses of the contact on the body taken as rigid (docs/world.md,
    /// "Checks beside the steps").
    pub rigid_exchanges: u64,
    /// Deferred impacts whose rigid contact ran past the world's budget or
    /// its horizon: they kept the solver's impulses in their step.
    pub solver_exchanges: u64,
    /// Deferred impacts never checked, their rigid impulses left standing:
    /// on a body whose check was out, past the [`MAX_WAITING_IMPACTS`]
    /// that wait for it, or on a body that check split.
    pub unchecked_impacts: u64,
    /// Fracture checks' engine phases, summed over checks (s; the checks
    /// of a step run in parallel, so this can exceed `fracture_s`).
    pub engine: crate::fracture::Counters,
    /// Per event of [`World::events`] recorded while counting, in order.
    pub events: Vec<EventTimes>,
}

/// Wall time of one fracture event (s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct EventTimes {
    /// The check's engine phases and fragment meshing.
    pub check_s: f64,
    /// Replacing the body by its fragments in the world.
    pub insertion_s: f64,
}

/// The global rigid-body world.
pub struct World {
    physics: PhysicsWorld,
    units: Units,
    settings: WorldSettings,
    fracture_settings: FractureSettings,
    bodies: Vec<Option<WorldBody>>,
    /// The parent of every body ever created (retired ones included).
    parents: Vec<Option<BodyId>>,
    time_s: f64,
    steps: u64,
    events: Vec<FractureEvent>,
    /// Scratch, per step: kinematics before the step, by body id.
    before: Vec<Kinematics>,
    /// Scratch, per step, by body id: the velocities the body moved with
    /// over the step before, from its poses (`World::gather_contacts`);
    /// `None` for a body that was not in that step or was placed since.
    moved: Vec<Option<Kinematics>>,
    /// By body id: its centre of mass and orientation before the last step.
    placements: Vec<Option<Placement>>,
    contacts: Vec<BodyContact>,
    /// The last step's impact checks.
    impacts: Vec<ImpactCheck>,
    /// The last load of each body the last step split.
    split_loads: Vec<(BodyId, crate::fracture::ImpactStress)>,
    /// Fragments' own modal analyses, if enabled.
    own_bases: Option<own_basis::OwnBases>,
    /// The worker of deferred fracture checks, if the world has one.
    deferred: Option<deferred::Deferred>,
    /// Whether a split's event carries its fracture pattern.
    record_patterns: bool,
    /// The budget of a deferred impact's exchange on its body taken as
    /// rigid, in contact steps times contacts.
    rigid_exchange_contact_steps: usize,
}

impl World {
    /// An empty world with these settings.
    pub fn new(settings: WorldSettings, seed: u64) -> Self {
        let units = Units {
            z_fact: settings.z_fact,
        };
        let mut physics = PhysicsWorld::new();
        physics.gravity = units.to_sim(&Vector3::from(settings.gravity_m_s2));
        physics.integration_parameters.dt = settings.time_step_s as f32;
        physics.integration_parameters.num_solver_iterations = settings.solver_iterations;
        speculative::configure(&mut physics.integration_parameters);
        Self {
            physics,
            units,
            fracture_settings: FractureSettings {
                seed,
                // A world checks every impact of every step; an event's
                // peak is above the threshold, hence exact anyway.
                exact_peak_stress: false,
                energy_length_m: settings.energy_length_m,
                crack_plane_energy: settings.crack_plane_energy,
                ..FractureSettings::default()
            },
            settings,
            bodies: Vec::new(),
            parents: Vec::new(),
            time_s: 0.0,
            steps: 0,
            events: Vec::new(),
            before: Vec::new(),
            moved: Vec::new(),
            placements: Vec::new(),
            contacts: Vec::new(),
            impacts: Vec::new(),
            split_loads: Vec::new(),
            own_bases: None,
            deferred: None,
            record_patterns: false,
            rigid_exchange_contact_steps: breaking::RIGID_EXCHANGE_CONTACT_STEPS,
        }
    }

    /// The world's settings.
    pub fn settings(&self) -> &WorldSettings {
        &self.settings
    }

    /// Sets the time step of the next steps (s).
    pub fn set_time_step(&mut self, dt_s: f64) {
        self.settings.time_step_s = dt_s;
        self.physics.integration_parameters.dt = dt_s as f32;
        self.placements.clear();
    }

    /// World time (s).
    pub fn time_s(&self) -> f64 {
        self.time_s
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Every fracture event so far, in order.
    pub fn events(&self) -> &[FractureEvent] {
        &self.events
    }

    /// Live bodies, ascending id.
    pub fn bodies(&self) -> impl Iterator<Item = (BodyId, &WorldBody)> {
        self.bodies
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.as_ref().map(|b| (BodyId(i as u32), b)))
    }

    /// The live body `id`.
    pub fn body(&self, id: BodyId) -> Option<&WorldBody> {
        self.bodies.get(id.0 as usize).and_then(Option::as_ref)
    }

    /// The live body named `name` (fragments carry their parent's name with
    /// a `/N` suffix).
    pub fn find(&self, name: &str) -> Option<BodyId> {
        self.bodies()
            .find(|(_, b)| b.name == name)
            .map(|(id, _)| id)
    }

    /// Makes each later split of a whole body carry its fracture pattern
    /// ([`FractureEvent::pattern`]). Off by default: the pattern is
    /// computed over the whole mesh, in the step that splits the body.
    pub fn record_split_patterns(&mut self, on: bool) {
        self.record_patterns = on;
    }

    /// Bounds the work of a deferred impact's exchange on its body taken
    /// as rigid, which runs in the step (docs/world.md, "Checks beside the
    /// steps"), to `contact_steps` integration steps times contacts
    /// (default 20 000, a few milliseconds): past it the solver's impulses
    /// stand in the step until the check's elastic ones replace them. 0
    /// leaves every deferred impact the solver's impulses in its step.
    pub fn limit_rigid_exchanges(&mut self, contact_steps: usize) {
        self.rigid_exchange_contact_steps = contact_steps;
    }

    /// Whether `id` is `ancestor` or one of its fragments, at any depth.
    pub fn descends_from(&self, id: BodyId, ancestor: BodyId) -> bool {
        let mut current = Some(id);
        while let Some(c) = current {
            if c == ancestor {
                return true;
            }
            current = self.parents.get(c.0 as usize).copied().flatten();
        }
        false
    }

    /// The contacts of the last step on breakable bodies.
    pub fn last_contacts(&self) -> &[BodyContact] {
        &self.contacts
    }

    /// The last step's impact checks, with the contact computed for each
    /// (in a world that defers its checks, those finished in the step).
    pub fn last_impacts(&self) -> &[ImpactCheck] {
        &self.impacts
    }

    /// The last load (impact or held force) of each body the last step
    /// split, usually the one that split it: shared handles, for a viewer
    /// to draw the stress where it broke.
    pub fn last_split_loads(&self) -> &[(BodyId, crate::fracture::ImpactStress)] {
        &self.split_loads
    }

    /// Number of live bodies.
    pub fn body_count(&self) -> usize {
        self.bodies().count()
    }

    /// The pose of a body's frame (translation in metres).
    pub fn pose(&self, id: BodyId) -> Option<Isometry3<f64>> {
        let body = self.body(id)?;
        Some(
            self.units
                .pose_to_si(self.physics.bodies[body.handle].position()),
        )
    }

    /// Mass, momentum and kinetic energy; `None` for static or unknown bodies.
    pub fn motion(&self, id: BodyId) -> Option<BodyMotion> {
        let body = self.body(id)?;
        let mass_kg = body.mass_kg?;
        let rb = &self.physics.bodies[body.handle];
        let k = Kinematics::of(rb, &self.units);
        Some(BodyMotion {
            mass_kg,
            com_m: k.com_m.coords.into(),
            momentum_n_s: (k.linvel_m_s * mass_kg).into(),
            // rapier's ½ m v² + ½ ωᵀ I ω, in kg·unit²/s².
            kinetic_energy_j: self.units.energy_to_si(rb.kinetic_energy()),
        })
    }

    /// Sets a body's pose (translation in metres) and velocities, waking it.
    pub fn set_state(
        &mut self,
        id: BodyId,
        pose: &Isometry3<f64>,
        linvel_m_s: &Vector3<f64>,
        angvel_rad_s: &Vector3<f64>,
    ) -> bool {
        let Some(handle) = self.body(id).map(|b| b.handle) else {
            return false;
        };
        if let Some(placement) = self.placements.get_mut(id.0 as usize) {
            *placement = None;
        }
        let rb = &mut self.physics.bodies[handle];
        rb.set_position(self.units.pose_to_sim(pose), true);
        rb.set_linvel(self.units.to_sim(linvel_m_s), true);
        rb.set_angvel(units::glam(angvel_rad_s), true);
        true
    }

    /// Advances the world by one time step: rapier's step, then contact
    /// impulses on breakable bodies (with `inputs`' external contacts) to
    /// the fracture engine, then broken bodies replaced by their fragments.
    /// The fracture checks run in parallel on `threads`; wall times go to
    /// `counters`. Returns how many bodies cracked.
    ///
    /// A world that defers its checks ([`Self::defer_fractures`]) hands
    /// this step's to its worker, then finishes those that have come back;
    /// their bodies crack at the end of a later step.
    pub fn step(
        &mut self,
        inputs: &StepInputs,
        threads: &rayon::ThreadPool,
        counters: &mut Counters,
    ) -> usize {
        let start = Instant::now();
        self.record_kinematics();
        self.physics.step();
        let physics_s = start.elapsed().as_secs_f64();
        self.time_s += self.settings.time_step_s;
        self.steps += 1;
        let mut cracked = self.fracture_step(inputs, threads, counters);
        cracked += self.finish_deferred_checks(inputs.sub_world_members, counters);
        let step_s = start.elapsed().as_secs_f64();
        counters.steps += 1;
        counters.physics_s += physics_s;
        counters.fracture_s += step_s - physics_s;
        counters.step_total_s += step_s;
        counters.step_max_s = counters.step_max_s.max(step_s);
        counters.last_step_s = step_s;
        cracked
    }

    /// Records every live body's kinematics before a step, and the
    /// velocities it moved with over the step before.
    fn record_kinematics(&mut self) {
        let dt_s = self.settings.time_step_s;
        let count = self.bodies.len();
        self.before.clear();
        self.before.resize(count, Kinematics::default());
        self.moved.clear();
        self.moved.resize(count, None);
        self.placements.resize(count, None);
        for (i, body) in self.bodies.iter().enumerate() {
            let Some(body) = body else {
                self.placements[i] = None;
                continue;
            };
            let rb = &self.physics.bodies[body.handle];
            let kinematics = Kinematics::of(rb, &self.units);
            let placement = Placement {
                com_m: kinematics.com_m,
                rotation: self.units.pose_to_si(rb.position()).rotation,
            };
            self.moved[i] = self.placements[i].map(|p| placement.moved_since(&p, dt_s));
            self.before[i] = kinematics;
            self.placements[i] = Some(placement);
        }
    }

    /// A hash of every live body's id, pose and velocities (bit patterns):
    /// equal hashes mean identical states.
    pub fn state_hash(&self) -> u64 {
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        for (id, body) in self.bodies() {
            hash_body_state(&mut hasher, id, &self.physics.bodies[body.handle]);
        }
        hasher.digest()
    }

    /// The world-space surfaces of all live bodies (metres).
    pub fn world_surfaces(&self) -> impl Iterator<Item = (BodyId, Vec<Point3<f64>>, &[[u32; 3]])> {
        self.bodies().map(|(id, body)| {
            let pose = self
                .units
                .pose_to_si(self.physics.bodies[body.handle].position());
            let points = body.surface.points.iter().map(|p| pose * p).collect();
            (id, points, body.surface.triangles.as_slice())
        })
    }

    fn push_body(&mut self, body: WorldBody) -> BodyId {
        let id = BodyId(self.bodies.len() as u32);
        self.physics.bodies[body.handle].user_data = u128::from(id.0);
        self.parents.push(body.parent);
        self.bodies.push(Some(body));
        id
    }
}
