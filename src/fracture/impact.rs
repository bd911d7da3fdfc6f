//! Modal impact fracture (Glondu 2012 §3.3, Alg. 3) and the quasi-static
//! check for resting contacts (§3.3.7), on a [`BreakableBody`].

use super::contact::{chord_weights, contact_patch, face_patches};
use super::energy::{EnergyLedger, EnergyTables, StrainEnergy};
use super::hertz::{
    ContactEnd, ContactHistory, ContactModel, HertzContact, ModesAtRest, PhaseImpulses,
};
use super::impact_stress::ResidualField;
use super::initiation::{element_stress, point_stress, screen, Screening, StressPart};
use super::propagate::{propagate_deferred, Crack, CrackScratch, EnergyBalance};
use super::shielding::CrackShield;
use super::strength::{whole_size, EventStrength, Strength};
use super::stress::{max_principal_stress, principal_direction};
use super::surface::CrackSurface;
use super::BreakableBody;
use crate::config::Material;
use crate::fem::ElementOrder;
use crate::mesh::TET_EDGES;
use crate::modal::GROUP_POINTS;
use nalgebra::{Point3, Vector3};
use rayon::prelude::*;
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// Checks in a row a load must have held on the same DOFs before its
/// residual shape is formed from kept unit shapes
/// ([`BreakableBody::residual_shapes`]). Keeping them is buying against
/// renting: a contact's 9 or 18 unit shapes cost 2 or 3 solves of 8
/// columns, each about two one-column solves (on a 16 335-DOF plate:
/// 23 ms against 13 ms), while its direct solve costs one column per check.
/// Renting until about the price of buying has been paid, the classic
/// break-even rule of the ski-rental problem (Karlin et al. 1988), is
/// within twice the best choice made knowing how long the contact stays.
/// Three checks is about that price for a linear element's contact (two
/// batches, some 3.6 one-column solves) and below it for a quadratic
/// one's (three batches, 5.4), which leans towards keeping.
pub(super) const STAYING_CHECKS: usize = 3;

/// One contact point of an impact on the body.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactPoint {
    /// Where the contact is, in the body's frame (m).
    pub point_m: Point3<f64>,
    /// Unit normal pointing into the body (the direction the force pushes).
    pub normal: Vector3<f64>,
    /// Normal impulse of the contact in the rigid-body step (N·s), for
    /// sharing an impactor's mass among its simultaneous contacts
    /// ([`Impactor::shared`]); the impact's load does not use it.
    pub impulse_n_s: f64,
    /// Relative normal speed at the contact (m/s).
    pub relative_speed_m_s: f64,
    /// The other body at this contact, with the mass that acts here.
    pub impactor: Impactor,
    /// The face-to-face contact this point is a corner of, if any: the
    /// points of an impact with the same value are the solver's corners
    /// of one flat contact (a tile landing flat), and each one's force
    /// spreads over its part of the polygon they span instead of a Hertz
    /// patch around the point.
    pub face: Option<u32>,
    /// How far the contact is from touching when the impact starts (m):
    /// 0 for one that touches then, more for one that closes during the
    /// impact (the other corners of a tile landing nearly flat).
    pub gap_m: f64,
}

/// The other body of an impact, for the Hertz contact (`hertz` module).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Impactor {
    /// The impactor's mass (kg; infinite for a static body); of an
    /// impactor touching at several points, this contact's share. The
    /// struck body's own mass and inertia enter through its rigid motion
    /// unless it is held ([`BreakableBody::set_held`]).
    pub mass_kg: f64,
    /// The impactor's Young's modulus (Pa).
    pub youngs_modulus_pa: f64,
    /// The impactor's Poisson's ratio.
    pub poisson_ratio: f64,
    /// Radius of curvature at the contact (m).
    pub radius_m: f64,
    /// Coefficient of restitution of the pair against a rigid wall, in
    /// [0, 1]: the contact's own dissipation (local plasticity, damage at
    /// the contact), which Hertz's elastic law lacks. It does not change
    /// the computed force, which loads the body elastically (an upper
    /// bound of the stresses), only the impulse the event exchanges
    /// ([`ImpactOutcome::contact_impulses_n_s`], Poisson's hypothesis).
    pub restitution: f64,
}

impl Impactor {
    /// The effective modulus E* of the contact with `material`:
    /// `1/E* = (1−ν₁²)/E₁ + (1−ν₂²)/E₂` (Johnson, *Contact Mechanics*, §4.2).
    pub fn effective_modulus(&self, material: &Material) -> f64 {
        1.0 / ((1.0 - material.poisson_ratio.powi(2)) / material.youngs_modulus_pa
            + (1.0 - self.poisson_ratio.powi(2)) / self.youngs_modulus_pa)
    }

    /// This impactor at each of `contacts`, its mass shared among them as
    /// their impulses in the rigid-body step are (equally if they are all
    /// zero).
    pub fn shared(&self, impulses_n_s: &[f64]) -> Vec<Impactor> {
        let total: f64 = impulses_n_s.iter().map(|i| i.max(0.0)).sum();
        impulses_n_s
            .iter()
            .map(|i| {
                let share = if total > 0.0 {
                    i.max(0.0) / total
                } else {
                    1.0 / impulses_n_s.len() as f64
                };
                Impactor {
                    mass_kg: self.mass_kg * share,
                    ..*self
                }
            })
            .collect()
    }

    /// The 110 g steel ball, 25 mm across, of the tile scene.
    pub fn steel_ball() -> Self {
        Self {
            mass_kg: 0.110,
            youngs_modulus_pa: 200e9,
            poisson_ratio: 0.3,
            radius_m: 0.0125,
            restitution: 1.0,
        }
    }
}

/// A force held on the body (resting contact), for the quasi-static check.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StaticLoad {
    /// Where the force acts, in the body's frame (m).
    pub point_m: Point3<f64>,
    /// Force vector (N).
    pub force_n: Vector3<f64>,
    /// The face-to-face contact this point is a corner of, if any, as
    /// [`ContactPoint::face`]: a piece resting flat on a face carries its
    /// weight over the polygon its corners span, not at the corners.
    pub face: Option<u32>,
}

/// Where a unit load acts, for [`BreakableBody::face_loads`].
struct LoadSite {
    point_m: Point3<f64>,
    /// Unit vector the force pushes along.
    direction: Vector3<f64>,
    face: Option<u32>,
}

/// Model constants of fracture initiation and propagation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FractureSettings {
    /// γ of eq. 3.8 (m): strain-energy density × crack area × γ is the
    /// energy available to the crack.
    pub energy_length_m: f64,
    /// A mode counts as excited when its impulse response is at least this
    /// fraction of the largest (§3.3.3).
    pub excitation_threshold: f64,
    /// Most time samples over one contact.
    pub max_steps: usize,
    /// Most cracks started at one time sample. Glondu's Alg. 3 (line 12)
    /// starts one, at the most stressed element; more start cracks in the
    /// same stress field, relieved only by `crack_shielding`.
    pub max_cracks_per_sample: usize,
    /// Seeds the weak points and the crack noise.
    pub seed: u64,
    /// Report the exact peak stress even when nothing breaks (it costs
    /// evaluating elements that cannot crack); otherwise a peak below the
    /// Rankine threshold is a lower bound.
    pub exact_peak_stress: bool,
    /// Add the static correction of the modes left out to the modal
    /// stresses (the `modal` module's `StaticCorrection`); off, the
    /// stresses are the modal sum alone (Glondu 2012 §3.3.4), for
    /// comparison.
    pub static_correction: bool,
    /// Add the static correction's second-order term, `−F̈ s` (the
    /// dynamic amplification of the modes left out; the `modal` module's
    /// `StaticCorrection`): it matters with few modes, and costs another
    /// solve per contact. Needs `static_correction`.
    pub second_order_correction: bool,
    /// Let the modes left out answer a contact as a continuum above the
    /// retained spectrum (the `residual_tail` module) instead of at once.
    /// Needs `static_correction`.
    pub residual_tail: bool,
    /// Set modes to rest during each impact (`None` in a simulation): a
    /// study of what the modes above a basis carry from one contact phase
    /// to the next (docs/fracture.md, the static correction).
    pub modes_at_rest: Option<ModesAtRest>,
    /// Relieve the tension normal to each crack of an event around it
    /// before the next crack starts (`shielding.rs`: Westergaard's
    /// field of a through crack); off, every crack of an event starts in
    /// the stress of the intact body (Glondu 2012 Alg. 3), for comparison.
    pub crack_shielding: bool,
    /// Pay each crack by the energy of the stress it releases, the
    /// traction on its plane (`energy.rs`, [`crate::fem::crack_plane_stress`]),
    /// instead of the whole strain-energy density of the elements it
    /// enters (Glondu 2012 eq. 3.8 as written). Off by default until the
    /// thresholds and patterns it gives are measured through (see
    /// docs/fracture.md, the energy stop).
    pub crack_plane_energy: bool,
}

/// Time samples per contact pulse when the static correction is on
/// (see where the samples are chosen in [`BreakableBody::impact`]).
const SAMPLES_PER_PULSE: usize = 35;

impl Default for FractureSettings {
    fn default() -> Self {
        Self {
            energy_length_m: 5e-3,
            excitation_threshold: 1e-3,
            max_steps: 64,
            max_cracks_per_sample: 1,
            seed: 0,
            exact_peak_stress: true,
            static_correction: true,
            second_order_correction: false,
            residual_tail: false,
            modes_at_rest: None,
            crack_shielding: true,
            crack_plane_energy: false,
        }
    }
}

/// What one impact (or static load) did.
#[derive(Debug, Clone, Serialize)]
pub struct ImpactOutcome {
    /// Duration of the computed contact, first touch to last separation
    /// (s); 0 for a static load.
    pub contact_duration_s: f64,
    /// Interval between the time samples of the Rankine test (s).
    pub time_step_s: f64,
    /// The computed contact (its default for a static load).
    pub contact: ContactHistory,
    /// The normal impulse the event exchanges at each of its contacts, in
    /// their order (N·s): the computed contact's, with its restitution
    /// phase scaled by the pair's restitution
    /// ([`crate::fracture::PhaseImpulses::with_restitution`]); 0 at a
    /// contact that took no part (a held body's against a static body);
    /// empty for a static load.
    pub contact_impulses_n_s: Vec<f64>,
    /// Time samples taken.
    pub steps: usize,
    /// Largest maximum principal stress over the contact (Pa), 0 if no
    /// element is in tension; without [`FractureSettings::exact_peak_stress`],
    /// a lower bound if below the lowest threshold the event could have
    /// (R_c for a material with one; [`Strength::lowest_threshold_pa`]).
    pub peak_stress_pa: f64,
    /// When the peak stress was read (s from first touch): the time of its
    /// sample; 0 for a static load or with no element in tension (a lower
    /// bound's sample where `peak_stress_pa` is one).
    pub peak_stress_time_s: f64,
    /// The Rankine threshold the event was tested against, and what set it
    /// (the material's size and rate effects, [`crate::fracture::Strength`]).
    pub strength: EventStrength,
    /// Stress points (elements of a linear body, nodes of a quadratic one;
    /// [`crate::modal::ModalStress`]) whose stresses were formed (the
    /// others were bounded below the threshold and the peak; see the
    /// `initiation` module).
    pub points_evaluated: usize,
    /// The cracks started and propagated, in order.
    pub cracks: Vec<Crack>,
    /// Fragment identifiers the event's cracks created (the fragments are
    /// updated once, after the last crack).
    pub new_fragments: Vec<u32>,
}

/// Wall time of the engine's phases and counts of its work, accumulated
/// over calls by the caller that owns it and kept apart from the physical
/// [`ImpactOutcome`] (as rapier keeps its `Counters` apart from the
/// simulation state).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Counters {
    /// Modal response, stress screening and crack starts (s).
    pub initiation_s: f64,
    /// Crack propagation, less the crack starts it contains (s).
    pub propagation_s: f64,
    /// Of `initiation_s`, the event's threshold for a material whose
    /// strength scales (σ₁ at every stress point at the peak's sample and
    /// the effective size, s; [`Strength`]).
    pub strength_s: f64,
    /// Contact loads whose static-correction residual shape was solved
    /// directly, a column each (a passing touch).
    pub residual_loads_solved: u64,
    /// Contact loads whose residual shape was formed from kept unit shapes
    /// ([`crate::modal::StaticCorrection::point_load_shapes`]: a support,
    /// a resting piece).
    pub residual_loads_from_unit_shapes: u64,
}

impl Counters {
    /// Adds `other`'s times and counts to these.
    pub fn add(&mut self, other: &Counters) {
        self.initiation_s += other.initiation_s;
        self.propagation_s += other.propagation_s;
        self.strength_s += other.strength_s;
        self.residual_loads_solved += other.residual_loads_solved;
        self.residual_loads_from_unit_shapes += other.residual_loads_from_unit_shapes;
    }
}

impl BreakableBody {
    /// The load of a unit force along `direction` spread over the contact
    /// patch of radius `radius_m` around `point`: (DOF, N) pairs.
    fn unit_load(
        &self,
        point: &Point3<f64>,
        direction: &Vector3<f64>,
        radius_m: f64,
    ) -> Vec<(usize, f64)> {
        let region = self.region.as_ref().map(|r| &*r.tets);
        let patch = contact_patch(&self.mesh, region, point, radius_m);
        nodal_load(patch, direction)
    }

    /// The load of a unit force at each of `sites` spread over its part of
    /// the face-to-face contact it is a corner of (`face_patches`), or
    /// `None` for a point contact, one of a face contact with fewer than
    /// three corners, or one whose part of the polygon holds none of the
    /// mesh's boundary faces (it keeps its point or Hertz patch).
    fn face_loads(&self, sites: &[LoadSite]) -> Vec<Option<Vec<(usize, f64)>>> {
        let mut loads: Vec<Option<Vec<(usize, f64)>>> = vec![None; sites.len()];
        let mut faces: Vec<u32> = sites.iter().filter_map(|c| c.face).collect();
        faces.sort_unstable();
        faces.dedup();
        let region = self.region.as_ref().map(|r| &*r.tets);
        let boundary = &self.mesh.topology().boundary_faces;
        let elastic = self.basis.elastic_mesh(&self.mesh);
        let quadratic = elastic.order() == ElementOrder::Quadratic;
        // A uniform pressure's consistent nodal forces on a flat face: a
        // third of it at each corner of a linear triangle; on a quadratic
        // one none at the corners and a third at each edge node (the
        // integrals of its shape functions, Zienkiewicz & Taylor,
        // *The Finite Element Method* vol. 1, §8.8).
        let face_nodes = |index: usize| -> [u32; 3] {
            let face = &boundary[index];
            if !quadratic {
                return face.nodes;
            }
            let element = elastic.element_nodes(face.tet as usize);
            let opposite = usize::from(face.opposite);
            let mut edges = TET_EDGES
                .iter()
                .enumerate()
                .filter(|(_, [i, j])| *i != opposite && *j != opposite)
                .map(|(e, _)| element[4 + e]);
            [(); 3].map(|_| edges.next().expect("a face has three edges"))
        };
        for face in faces {
            let members: Vec<usize> = (0..sites.len())
                .filter(|&c| sites[c].face == Some(face))
                .collect();
            if members.len() < 3 {
                continue;
            }
            let corners: Vec<Point3<f64>> = members.iter().map(|&c| sites[c].point_m).collect();
            let normal = &sites[members[0]].direction;
            let patches = face_patches(&self.mesh, region, &corners, normal);
            for (&member, patch) in members.iter().zip(patches) {
                if patch.is_empty() {
                    continue;
                }
                let nodes = patch
                    .into_iter()
                    .flat_map(|(index, weight)| face_nodes(index).map(|node| (node, weight / 3.0)));
                loads[member] = Some(nodal_load(nodes, &sites[member].direction));
            }
        }
        loads
    }

    /// The modal forces of `load`: g = Xᵀ p.
    fn modal_force(&self, load: &[(usize, f64)]) -> Vec<f64> {
        let shapes = &self.basis.shapes;
        (0..self.basis.mode_count())
            .map(|j| load.iter().map(|&(dof, f)| f * shapes[(dof, j)]).sum())
            .collect()
    }

    /// The residual shapes of `loads` (one per contact, per unit force; a
    /// column each, m per N), or `None` without the static correction.
    ///
    /// A load that stays is formed from the basis's kept unit shapes,
    /// solved once per DOF ([`StaticCorrection::point_load_shapes`]), if
    /// the unit shapes of all such loads fit in what the basis keeps
    /// ([`StaticCorrection::keeps_unit_shapes_of`]: not a face's pressure,
    /// nor a large body's); any other load (a passing touch) is solved
    /// directly, one column instead of one per DOF. A load stays if it is
    /// `held` (the weight a body rests with: a plate on its supports, a
    /// pile on a piece), if it lies on the same DOFs as a load of each of
    /// the body's last [`STAYING_CHECKS`] checks, or if it lies on DOFs of
    /// the body's held loads (a support, in a strike on the plate it
    /// holds: its unit shapes were solved for the weight, so it costs no
    /// solve). The choice depends on the body's own checks and its mesh
    /// only, not on the unit shapes kept now (bodies of one mesh share
    /// them), so a replay makes it as the session did.
    ///
    /// A fragment that still vibrates in its parent's modes (a body with a
    /// region) gets none: the parent's stiffness would carry its load
    /// across the cracks into the rest of the parent. Once large enough it
    /// gets a basis of its own, and its own correction with it.
    ///
    /// [`StaticCorrection::point_load_shapes`]: crate::modal::StaticCorrection::point_load_shapes
    fn residual_shapes(
        &mut self,
        loads: &[Vec<(usize, f64)>],
        held: bool,
        settings: &FractureSettings,
        counters: &mut Counters,
    ) -> Option<faer::Mat<f64>> {
        let load_dofs: Vec<Vec<usize>> = loads
            .iter()
            .map(|load| {
                let mut dofs: Vec<usize> = load.iter().map(|&(dof, _)| dof).collect();
                dofs.sort_unstable();
                dofs.dedup();
                dofs
            })
            .collect();
        let stays: Vec<bool> = load_dofs
            .iter()
            .map(|dofs| {
                let recurs = self.recent_load_dofs.len() == STAYING_CHECKS
                    && self
                        .recent_load_dofs
                        .iter()
                        .all(|check| check.contains(dofs));
                let on_supports = dofs
                    .iter()
                    .all(|dof| self.held_load_dofs.binary_search(dof).is_ok());
                held || recurs || on_supports
            })
            .collect();
        if held {
            // The union over the body's held checks: the solver's contact
            // points on a support move between a few neighbouring faces
            // from step to step. At most the body's DOFs.
            self.held_load_dofs.extend(load_dofs.iter().flatten());
            self.held_load_dofs.sort_unstable();
            self.held_load_dofs.dedup();
        }
        if self.recent_load_dofs.len() == STAYING_CHECKS {
            self.recent_load_dofs.pop_front();
        }
        self.recent_load_dofs.push_back(load_dofs.clone());
        if !settings.static_correction || loads.is_empty() || self.region.is_some() {
            return None;
        }
        let correction = self.basis.static_correction(&self.mesh, &self.material)?;
        let eigenvalues = &self.basis.eigenvalues[..];
        let modes = self.basis.shapes.as_ref();
        let n = correction.dofs();
        let mut staying_dofs: Vec<usize> = (0..loads.len())
            .filter(|&c| stays[c])
            .flat_map(|c| load_dofs[c].iter().copied())
            .collect();
        staying_dofs.sort_unstable();
        staying_dofs.dedup();
        let keeps = correction.keeps_unit_shapes_of(staying_dofs.len());
        let (staying, new): (Vec<usize>, Vec<usize>) =
            (0..loads.len()).partition(|&c| keeps && stays[c]);
        counters.residual_loads_solved += new.len() as u64;
        counters.residual_loads_from_unit_shapes += staying.len() as u64;
        let mut shapes = faer::Mat::<f64>::zeros(n, loads.len());
        if !staying.is_empty() {
            let kept: Vec<&[(usize, f64)]> = staying.iter().map(|&c| &loads[c][..]).collect();
            let kept_shapes = correction.point_load_shapes(&kept, modes, eigenvalues);
            for (k, &c) in staying.iter().enumerate() {
                shapes.col_mut(c).copy_from(kept_shapes.col(k));
            }
        }
        if !new.is_empty() {
            let mut dense = faer::Mat::<f64>::zeros(n, new.len());
            for (k, &c) in new.iter().enumerate() {
                for &(dof, f) in &loads[c] {
                    dense[(dof, k)] += f;
                }
            }
            let new_shapes = correction.residual_shapes(dense.as_ref(), modes, eigenvalues);
            for (k, &c) in new.iter().enumerate() {
                shapes.col_mut(c).copy_from(new_shapes.col(k));
            }
        }
        Some(shapes)
    }

    /// Residual shapes `r` (one column per contact) with their
    /// second-order shapes `s` beside them, and the contact forces
    /// (sample-major, every `dt_s` from `dt_s`) with each sample's `−F̈`
    /// beside them: the residual field of `F r − F̈ s` (`modal`'s
    /// `StaticCorrection` docs). F̈ is the central difference of the
    /// samples, the force being zero before the contact and after it.
    fn with_second_order(
        &self,
        residual: faer::Mat<f64>,
        forces: &[f32],
        dt_s: f64,
    ) -> (faer::Mat<f64>, Vec<f32>) {
        let n = residual.ncols();
        let correction = self
            .basis
            .static_correction(&self.mesh, &self.material)
            .expect("residual shapes come from the static correction");
        let second = correction.second_order_shapes(
            residual.as_ref(),
            self.basis.shapes.as_ref(),
            &self.basis.eigenvalues,
        );
        let mut shapes = faer::Mat::<f64>::zeros(residual.nrows(), 2 * n);
        for c in 0..n {
            shapes.col_mut(c).copy_from(residual.col(c));
            shapes.col_mut(n + c).copy_from(second.col(c));
        }
        let steps = forces.len() / n.max(1);
        let force = |k: isize, c: usize| -> f64 {
            usize::try_from(k)
                .ok()
                .filter(|&k| k < steps)
                .map_or(0.0, |k| f64::from(forces[k * n + c]))
        };
        let mut both = vec![0.0f32; 2 * n * steps];
        for k in 0..steps {
            let at = k as isize;
            for c in 0..n {
                let acceleration =
                    (force(at + 1, c) - 2.0 * force(at, c) + force(at - 1, c)) / (dt_s * dt_s);
                both[k * 2 * n + c] = forces[k * n + c];
                both[k * 2 * n + n + c] = -acceleration as f32;
            }
        }
        (shapes, both)
    }

    /// `R_cd` (m/N), contact-major: the residual deflection at contact c
    /// per newton at contact d, `r` holding the residual shapes of the
    /// contacts' unit `loads`. Measured through the body's thickness under
    /// c ([`chord_weights`]: Hertz's `k` counts the indentation under the
    /// contact, which the surface's deflection holds too) and symmetrised.
    fn residual_compliance(
        &self,
        contacts: &[ContactPoint],
        loads: &[Vec<(usize, f64)>],
        r: &faer::Mat<f64>,
    ) -> Vec<f64> {
        let deflection = |weights: &[(usize, f64)], d: usize| -> f64 {
            weights.iter().map(|&(dof, w)| w * r[(dof, d)]).sum()
        };
        let elastic = self.basis.elastic_mesh(&self.mesh);
        let chords: Vec<Vec<(usize, f64)>> = contacts
            .iter()
            .map(|c| chord_weights(&self.mesh, elastic, &c.point_m, &c.normal))
            .collect();
        // A contact's own deflection through the thickness is positive and
        // below the surface's. A chord that is not (one through a corner or
        // a sliver, where its mean no longer reads the body's bending)
        // keeps the surface's.
        let measures: Vec<&[(usize, f64)]> = chords
            .iter()
            .zip(loads)
            .enumerate()
            .map(|(c, (chord, load))| {
                // A flat contact's approach is its patch's mean deflection,
                // the work-conjugate of its spread load.
                if contacts[c].face.is_some() {
                    return &load[..];
                }
                let through = deflection(chord, c);
                let plausible =
                    !chord.is_empty() && through > 0.0 && through <= deflection(load, c);
                if plausible {
                    &chord[..]
                } else {
                    &load[..]
                }
            })
            .collect();
        let n = loads.len();
        let symmetrised = |weights: &[&[(usize, f64)]]| -> Vec<f64> {
            (0..n * n)
                .map(|i| {
                    let (c, d) = (i / n, i % n);
                    0.5 * (deflection(weights[c], d) + deflection(weights[d], c))
                })
                .collect()
        };
        let compliance = symmetrised(&measures);
        // A compliance with a negative eigenvalue would let contacts pull
        // the bodies together; the surface's, `P̂ᵀ K⁺ P̂`, is semi-definite.
        let matrix = nalgebra::DMatrix::from_row_slice(n, n, &compliance);
        let scale = (0..n).map(|c| matrix[(c, c)].abs()).fold(0.0, f64::max);
        let lowest = matrix.symmetric_eigenvalues().min();
        if lowest >= -1e-6 * scale {
            compliance
        } else {
            let surface: Vec<&[(usize, f64)]> = loads.iter().map(|l| &l[..]).collect();
            symmetrised(&surface)
        }
    }

    /// Applies one impact event: all contacts act together (§3.3.5). The
    /// parallel phases run on `threads`; phase times are added to
    /// `counters`.
    pub fn impact(
        &mut self,
        contacts: &[ContactPoint],
        settings: &FractureSettings,
        threads: &rayon::ThreadPool,
        counters: &mut Counters,
    ) -> ImpactOutcome {
        threads.install(|| self.impact_in_pool(contacts, settings, counters))
    }

    fn impact_in_pool(
        &mut self,
        contacts: &[ContactPoint],
        settings: &FractureSettings,
        counters: &mut Counters,
    ) -> ImpactOutcome {
        let start = Instant::now();
        let m = self.basis.mode_count();
        let all_contacts = contacts;
        let contacts: Vec<ContactPoint> = contacts
            .iter()
            .filter(|c| self.takes_part(c))
            .copied()
            .collect();
        let (rigid_gains, hertz) = self.rigid_contacts(&contacts);
        // The mass each contact decelerates against the body's rigid
        // motion: 1/(1/m + Σ_r g_r²), finite for a static impactor on a
        // free body.
        let effective_kg: Vec<f64> = (0..contacts.len())
            .map(|c| {
                let mobility: f64 = rigid_gains
                    .get(6 * c..6 * c + 6)
                    .map_or(0.0, |g| g.iter().map(|g| g * g).sum());
                1.0 / (1.0 / contacts[c].impactor.mass_kg + mobility)
            })
            .collect();
        // The force spreads over the Hertz patch at its largest extent on a
        // rigid half-space, a = √(R δ) (Johnson §4.2): an upper bound
        // of the patch on the flexible body, known before the integration.
        let sites: Vec<LoadSite> = contacts
            .iter()
            .map(|c| LoadSite {
                point_m: c.point_m,
                direction: c.normal,
                face: c.face,
            })
            .collect();
        let face_loads = self.face_loads(&sites);
        let loads: Vec<Vec<(usize, f64)>> = contacts
            .iter()
            .zip(&hertz)
            .zip(&effective_kg)
            .zip(face_loads)
            .map(|(((c, h), &mass_kg), face_load)| {
                if let Some(load) = face_load {
                    return load;
                }
                let h = HertzContact { mass_kg, ..*h };
                let radius = (c.impactor.radius_m * h.rigid_indentation_m()).sqrt();
                let radius = if radius.is_finite() { radius } else { 0.0 };
                self.unit_load(&c.point_m, &c.normal, radius)
            })
            .collect();
        let gains: Vec<f64> = loads.iter().flat_map(|l| self.modal_force(l)).collect();
        let residual_shapes = self.residual_shapes(&loads, false, settings, counters);
        let residual_compliance = residual_shapes
            .as_ref()
            .map_or_else(Vec::new, |r| self.residual_compliance(&contacts, &loads, r));
        let model = ContactModel {
            modes: &self.basis.dynamics,
            gains: &gains,
            rigid_gains: &rigid_gains,
            contacts: &hertz,
            residual_compliance: &residual_compliance,
            residual_tail: settings.residual_tail,
            modes_at_rest: settings.modes_at_rest,
        };
        let (history, impulses, tape) = model.integrate_per_contact();
        // Impulse response amplitude per mode, |Σ_c J_c g_cj| / ω_j, with
        // the impulse shared as the effective masses are.
        let total_mass_kg: f64 = effective_kg.iter().sum();
        let amplitude: Vec<f64> = (0..m)
            .map(|j| {
                let g: f64 = (0..contacts.len())
                    .map(|c| effective_kg[c] / total_mass_kg * gains[c * m + j])
                    .sum();
                (history.impulse_n_s * g).abs() / self.basis.eigenvalues[j].sqrt()
            })
            .collect();
        let largest = amplitude.iter().copied().fold(0.0, f64::max);
        // Samples for the Rankine test (eq. 3.11): Nyquist for the highest
        // excited under-damped mode, π/ω (the printed 4π/ω would sample
        // every second period), over the computed contact.
        let omega_high = (0..m)
            .filter(|&j| {
                self.basis.dynamics[j].is_underdamped()
                    && amplitude[j] >= settings.excitation_threshold * largest
            })
            .map(|j| self.basis.dynamics[j].damped_angular_frequency())
            .fold(0.0, f64::max);
        let duration = history.duration_s;
        // The static correction's stresses follow the contact force, so
        // the samples resolve its pulses too: a half-sine pulse of length
        // T sampled every Δ reads its top at worst (πΔ/T)²/8 low (a sample
        // Δ/2 off it), within 1e-3 for Δ ≤ T/35.
        let force_steps = if residual_shapes.is_some() {
            SAMPLES_PER_PULSE * history.phases
        } else {
            0
        };
        let steps = if history.end == ContactEnd::None {
            0
        } else if omega_high > 0.0 {
            ((duration * omega_high / std::f64::consts::PI).ceil() as usize)
                .max(force_steps)
                .clamp(1, settings.max_steps.max(1))
        } else {
            force_steps.clamp(1, settings.max_steps.max(1))
        };
        let dt = if steps > 0 {
            duration / steps as f64
        } else {
            0.0
        };
        // The modal states at the samples, from the integration's tape.
        let mut z = vec![0.0f32; m * steps];
        let n = contacts.len();
        let mut forces = vec![0.0f32; n * steps];
        model.sample_tape(&tape, dt, steps, &mut |k, states, f| {
            for (slot, s) in z[k * m..(k + 1) * m].iter_mut().zip(states) {
                *slot = s.z as f32;
            }
            for (slot, f) in forces[k * n..(k + 1) * n].iter_mut().zip(f) {
                *slot = *f as f32;
            }
        });
        let (residual_shapes, forces) = match residual_shapes {
            Some(r) if settings.second_order_correction && steps > 0 => {
                let (shapes, forces) = self.with_second_order(r, &forces, dt);
                (Some(shapes), forces)
            }
            r => (r, forces),
        };
        let residual = residual_shapes.filter(|_| steps > 0).map(|shapes| {
            let field =
                ResidualField::new(self.basis.elastic_mesh(&self.mesh), &self.material, &shapes);
            (Arc::new(field), Arc::from(forces))
        });
        self.keep_impact(&z, residual.clone());
        let mut outcome = self.fracture_from_modal_states(
            &z,
            residual.as_ref().map(|(field, f)| (&**field, &**f)),
            Some(dt),
            settings,
            start,
            counters,
        );
        self.last_impact_threshold_pa = outcome.strength.threshold_pa;
        outcome.contact_duration_s = duration;
        outcome.time_step_s = dt;
        outcome.contact = history;
        outcome.contact_impulses_n_s = self.exchanged_impulses(all_contacts, &impulses);
        outcome
    }

    /// The normal impulse each of `contacts` exchanges in an impact on
    /// this body taken as rigid: the contact of [`Self::impact`] with the
    /// body's rigid motion and no elastic modes, its unloading scaled by
    /// the pair's restitution (as `ImpactOutcome::contact_impulses_n_s`);
    /// `None` if the bodies are still in contact at the integration's
    /// horizon or after `max_steps` integration steps. What a world that
    /// cannot wait for the impact's check applies in its step (deferred
    /// checks): against a flexible body the
    /// elastic modes keep part of the energy, which the rigid body returns,
    /// so the two agree where the restitution of [`Self::impact`] is near
    /// one (a plate landing on its face) and the rigid one bounces harder
    /// where the impact sets the body ringing (a ball on a plate's centre).
    /// The integration runs on the world's thread, so it lengthens its
    /// step while only slow contacts are engaged
    /// (`ContactModel::integrate_phases`), and its caller bounds its cost
    /// by `max_steps`.
    pub fn rigid_impact_impulses(
        &self,
        contacts: &[ContactPoint],
        max_steps: usize,
    ) -> Option<Vec<f64>> {
        let taking_part: Vec<ContactPoint> = contacts
            .iter()
            .filter(|c| self.takes_part(c))
            .copied()
            .collect();
        let (rigid_gains, hertz) = self.rigid_contacts(&taking_part);
        let model = ContactModel {
            modes: &[],
            gains: &[],
            rigid_gains: &rigid_gains,
            contacts: &hertz,
            residual_compliance: &[],
            residual_tail: false,
            modes_at_rest: None,
        };
        let (history, impulses) = model.integrate_phases(max_steps);
        (history.end == ContactEnd::Separated).then(|| self.exchanged_impulses(contacts, &impulses))
    }

    /// Whether a contact takes part in an impact: one between a held body
    /// and a static one (infinite mass on both sides) only holds.
    fn takes_part(&self, c: &ContactPoint) -> bool {
        c.impactor.mass_kg > 0.0 && (c.impactor.mass_kg.is_finite() || !self.held)
    }

    /// The rigid-motion gains of the body at `contacts` (all taking part)
    /// and each one's Hertz contact.
    fn rigid_contacts(&self, contacts: &[ContactPoint]) -> (Vec<f64>, Vec<HertzContact>) {
        let rigid_gains = self.rigid_gains(
            &contacts
                .iter()
                .map(|c| (c.point_m, c.normal))
                .collect::<Vec<_>>(),
        );
        let hertz = contacts
            .iter()
            .map(|c| HertzContact {
                gap_m: c.gap_m,
                ..HertzContact::sphere(
                    c.impactor.mass_kg,
                    c.impactor.radius_m,
                    c.impactor.effective_modulus(&self.material),
                    c.relative_speed_m_s,
                )
            })
            .collect();
        (rigid_gains, hertz)
    }

    /// Each of `all_contacts`' exchanged normal impulse: its phases'
    /// (`impulses`, one per contact taking part, in order) with the
    /// restitution of its pair, zero for a contact taking no part.
    fn exchanged_impulses(
        &self,
        all_contacts: &[ContactPoint],
        impulses: &[PhaseImpulses],
    ) -> Vec<f64> {
        let mut taking_part = impulses.iter();
        all_contacts
            .iter()
            .map(|c| {
                if self.takes_part(c) {
                    taking_part
                        .next()
                        .map_or(0.0, |p| p.with_restitution(c.impactor.restitution))
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// The quasi-static check for resting contacts (§3.3.7): the static
    /// response `z_j = g_j / λ_j` of the modal basis to the held forces.
    /// Threads and counters as for [`Self::impact`].
    pub fn static_load(
        &mut self,
        loads: &[StaticLoad],
        settings: &FractureSettings,
        threads: &rayon::ThreadPool,
        counters: &mut Counters,
    ) -> ImpactOutcome {
        threads.install(|| self.static_load_in_pool(loads, settings, counters))
    }

    fn static_load_in_pool(
        &mut self,
        loads: &[StaticLoad],
        settings: &FractureSettings,
        counters: &mut Counters,
    ) -> ImpactOutcome {
        let start = Instant::now();
        let m = self.basis.mode_count();
        let mut z = vec![0.0f32; m];
        let held: Vec<&StaticLoad> = loads.iter().filter(|l| l.force_n.norm() > 0.0).collect();
        let sites: Vec<LoadSite> = held
            .iter()
            .map(|l| LoadSite {
                point_m: l.point_m,
                direction: l.force_n.normalize(),
                face: l.face,
            })
            .collect();
        // A held force at a point is a point load (no patch: the contact's
        // extent is not known without its approach); one at a corner of a
        // face contact spreads over its part of the face.
        let unit_loads: Vec<Vec<(usize, f64)>> = self
            .face_loads(&sites)
            .into_iter()
            .zip(&sites)
            .map(|(face_load, site)| {
                face_load.unwrap_or_else(|| self.unit_load(&site.point_m, &site.direction, 0.0))
            })
            .collect();
        for (load, held) in unit_loads.iter().zip(&held) {
            let magnitude = held.force_n.norm();
            let g = self.modal_force(load);
            for j in 0..m {
                z[j] += (magnitude * g[j] / self.basis.eigenvalues[j]) as f32;
            }
        }
        // The held forces do not change, and the static response is linear
        // in the load: they act as one load, whose residual shape is one
        // column however many contacts hold the body (a pile resting on
        // it), in place of one column per contact and its residual field.
        // A DOF may appear more than once; every use of a load sums them.
        let held_load: Vec<(usize, f64)> = unit_loads
            .iter()
            .zip(&held)
            .flat_map(|(load, held)| {
                let magnitude = held.force_n.norm();
                load.iter().map(move |&(dof, f)| (dof, magnitude * f))
            })
            .collect();
        let held_loads = if held_load.is_empty() {
            Vec::new()
        } else {
            vec![held_load]
        };
        let residual = self
            .residual_shapes(&held_loads, true, settings, counters)
            .map(|shapes| {
                ResidualField::new(self.basis.elastic_mesh(&self.mesh), &self.material, &shapes)
            });
        let unit_force = [1.0f32];
        self.fracture_from_modal_states(
            &z,
            residual.as_ref().map(|field| (field, &unit_force[..])),
            None,
            settings,
            start,
            counters,
        )
    }

    /// Keeps an impact's modal states and residual field for
    /// [`BreakableBody::last_impact_stress`] (a few kB per impact, and the
    /// residual field's tables: 7 floats per element and node per contact).
    fn keep_impact(&mut self, z: &[f32], residual: Option<(Arc<ResidualField>, Arc<[f32]>)>) {
        self.impacts += 1;
        self.last_impact_states = Some(Arc::from(z));
        self.last_impact_residual = residual;
    }

    /// The threshold of the event whose stress field is `parts`, sampled
    /// every `sample_interval_s` from the contact's start (`None`: a held
    /// load) and screened into `screening` against at most
    /// [`Self::lowest_threshold_pa`]: R_c scaled to the field's effective
    /// size at its peak and to its stress rate ([`Strength`]), from σ₁ at
    /// every stress point at the peak's sample. An event whose peak is
    /// below the lowest threshold cannot break; without the exact peak its
    /// peak is then not known, and it reports the lowest threshold.
    fn event_strength(
        &self,
        strength: &Strength,
        parts: &[StressPart],
        screening: &Screening,
        lowest_threshold_pa: f64,
        sample_interval_s: Option<f64>,
    ) -> EventStrength {
        let peak = screening.peak_stress_pa;
        if !strength.scales() || !(peak > lowest_threshold_pa || (peak > 0.0 && screening.exact)) {
            return EventStrength {
                threshold_pa: lowest_threshold_pa,
                ..EventStrength::default()
            };
        }
        let time_to_peak_s = screening.peak_time_s(sample_interval_s);
        let table = self.basis.stress();
        let voigt: Vec<[f64; 6]> = if strength.weibull.is_some() {
            (0..table.point_count())
                .into_par_iter()
                .with_min_len(1024)
                .map(|p| point_stress(parts, p, screening.peak_sample))
                .collect()
        } else {
            Vec::new()
        };
        strength.event(
            &self.mesh,
            table,
            self.region.as_ref().map(|r| &r.tets[..]),
            &voigt,
            peak,
            time_to_peak_s,
        )
    }

    /// The lowest threshold an event of `samples` samples every
    /// `sample_interval_s` (`None`: a held load) can have on this body
    /// ([`Strength::lowest_threshold_pa`] over its whole surface or volume).
    fn lowest_threshold_pa(
        &self,
        strength: &Strength,
        samples: usize,
        sample_interval_s: Option<f64>,
    ) -> f64 {
        let whole = strength.weibull.map_or(0.0, |w| {
            whole_size(
                &self.mesh,
                self.region.as_ref().map(|r| &r.tets[..]),
                w.flaws,
            )
        });
        strength.lowest_threshold_pa(whole, sample_interval_s.map(|dt| dt * samples as f64))
    }

    /// The Rankine test at every modal state `z` (sample-major, m per
    /// sample) in time order, with the static correction `residual` (the
    /// residual field and its contact forces, sample-major, one per
    /// contact), sampled every `sample_interval_s` (`None` for a held
    /// load), cracks starting at weak points (Alg. 3).
    fn fracture_from_modal_states(
        &mut self,
        z: &[f32],
        residual: Option<(&ResidualField, &[f32])>,
        sample_interval_s: Option<f64>,
        settings: &FractureSettings,
        start: Instant,
        counters: &mut Counters,
    ) -> ImpactOutcome {
        let m = self.basis.mode_count();
        // Owned handles: the propagation below holds `self` mutably while
        // density tasks read the mesh and basis.
        let (mesh, basis, stiffness) = (
            Arc::clone(&self.mesh),
            Arc::clone(&self.basis),
            self.stiffness,
        );
        let mut parts = vec![StressPart {
            table: basis.stress(),
            coordinates: z,
        }];
        if let Some((field, forces)) = residual {
            parts.push(StressPart {
                table: &field.stress,
                coordinates: forces,
            });
        }
        // One screening against the lowest threshold the event can have
        // (R_c for a material with one), then the event's own from its
        // peak; the hot lists are popped against the latter.
        let material_strength = Strength::of(&self.material);
        let samples = z.len().checked_div(m).unwrap_or(0);
        let lowest = self.lowest_threshold_pa(&material_strength, samples, sample_interval_s);
        let mut screening = screen(&parts, lowest, settings.exact_peak_stress);
        let strength_start = Instant::now();
        let strength = self.event_strength(
            &material_strength,
            &parts,
            &screening,
            lowest,
            sample_interval_s,
        );
        let strength_s = strength_start.elapsed().as_secs_f64();
        let threshold = strength.threshold_pa;
        let state_at = |k: usize| &z[k * m..(k + 1) * m];
        let contacts = residual.map_or(0, |(field, _)| field.contacts());
        let forces_at =
            |k: usize| residual.map_or(&[][..], |(_, f)| &f[k * contacts..(k + 1) * contacts]);
        // The cracks of this event so far, and where each relieves stress.
        let mut shields: Vec<CrackShield> = Vec::new();
        let point_position = |point: u32| match basis.element {
            ElementOrder::Linear => mesh.tet_centroid(point as usize),
            ElementOrder::Quadratic => mesh.nodes()[point as usize],
        };
        let relieve = |stress: &mut [f64; 6], at: &Point3<f64>, shields: &[CrackShield]| {
            for shield in shields {
                shield.relieve(at, stress);
            }
        };
        let voigt = |e: usize, k: usize, shields: &[CrackShield]| {
            let mut stress = element_stress(&parts, e, k);
            relieve(&mut stress, &mesh.tet_centroid(e), shields);
            stress
        };
        let mut initiation_s = start.elapsed().as_secs_f64();
        let balance = EnergyBalance {
            toughness_j_m2: self.material.fracture_toughness_j_m2,
            energy_length_m: settings.energy_length_m,
        };
        let mut cracks = Vec::new();
        let mut ledgers = Vec::new();
        let tables = match basis.element {
            ElementOrder::Linear => EnergyTables::Displacement {
                modes: basis.displacement(),
                residual: residual.map(|(field, _)| &field.displacement),
            },
            ElementOrder::Quadratic => EnergyTables::NodeStress {
                modes: basis.stress(),
                residual: residual.map(|(field, _)| &field.stress),
            },
        };
        let mut energy = StrainEnergy::new(&mesh, tables, &stiffness);
        let pending = energy.pending_densities();
        let steps = screening.hot.len();
        // Propagation is serial; the densities its energy stop did not ask
        // for are evaluated on the other workers meanwhile (eq. 3.8). The
        // phase's time is its wall time less the crack starts' (initiation).
        let phase = Instant::now();
        let initiation_before_s = initiation_s;
        let new_fragments = rayon::scope(|scope| {
            let mut scratch: Option<CrackScratch> = None;
            for (k, hot) in screening.hot.iter_mut().enumerate() {
                energy.set_state(state_at(k), forces_at(k));
                let mut started = 0;
                while started < settings.max_cracks_per_sample {
                    let relieve_since = |point: u32, stress: &mut [f64; 6], from: u32| {
                        relieve(stress, &point_position(point), &shields[from as usize..]);
                        max_principal_stress(stress)
                    };
                    let Some((_, point)) = hot.pop_hottest_relieved(
                        threshold,
                        &screening.stresses,
                        shields.len() as u32,
                        relieve_since,
                    ) else {
                        break;
                    };
                    // The point's first element where a crack may start
                    // (a quadratic body's points are nodes, shared).
                    let Some(hottest) = basis
                        .stress()
                        .point_elements(point as usize)
                        .iter()
                        .map(|&t| t as usize)
                        .find(|&t| self.can_initiate(t))
                    else {
                        continue;
                    };
                    started += 1;
                    let t = Instant::now();
                    let centre = mesh.tet_centroid(hottest);
                    // At the weak point nearest the hottest element
                    // (§3.3.5), if it is a flaw loaded beyond the strength:
                    // the nearest may lie far off, past elements already
                    // cracked or in stress a crack relieved, and a crack
                    // does not start where the Rankine test fails. Then at
                    // the hottest element itself.
                    let (origin_tet, origin_stress) = self
                        .weak_points
                        .nearest(&centre, |tet| self.can_initiate(tet as usize))
                        .map(|tet| (tet as usize, voigt(tet as usize, k, &shields)))
                        .filter(|(_, stress)| max_principal_stress(stress) > threshold)
                        .unwrap_or_else(|| (hottest, voigt(hottest, k, &shields)));
                    // Open normal to the largest principal stress (eqs. 3.5–3.6),
                    // of the start element if it is in tension, else of the hottest.
                    let direction = if max_principal_stress(&origin_stress) > 0.0 {
                        principal_direction(&origin_stress)
                    } else {
                        principal_direction(&voigt(hottest, k, &shields))
                    };
                    self.crack_seed = self.crack_seed.wrapping_add(0x9e37_79b9);
                    let surface = CrackSurface::new(
                        mesh.tet_centroid(origin_tet),
                        direction,
                        self.material.crack_noise_amplitude_m,
                        self.material.crack_noise_frequency_per_m,
                        self.crack_seed ^ settings.seed as u32,
                    )
                    .with_noise_octaves(self.noise_octaves);
                    initiation_s += t.elapsed().as_secs_f64();
                    let plane = settings.crack_plane_energy.then_some(direction);
                    let scratch = scratch.get_or_insert_with(|| CrackScratch::new(&mesh));
                    let mut ledger = EnergyLedger::default();
                    let crack = propagate_deferred(
                        scratch,
                        &mesh,
                        &mut self.state,
                        &surface,
                        origin_tet,
                        &balance,
                        &mut |e| energy.density_for(e, plane.as_ref()),
                        &mut ledger,
                    );
                    pending.spawn(
                        scope,
                        ledgers.len(),
                        state_at(k),
                        forces_at(k),
                        plane,
                        &ledger,
                    );
                    if settings.crack_shielding {
                        shields.extend(crack.shield);
                    }
                    cracks.push(crack);
                    ledgers.push(ledger);
                }
            }
            scratch.map_or_else(Vec::new, |mut scratch| {
                scratch.update_fragments(&mesh, &mut self.state)
            })
        });
        pending.fill(&mut ledgers);
        for (crack, ledger) in cracks.iter_mut().zip(&ledgers) {
            crack.available_energy_j = ledger.total_j().expect("every density filled in");
        }
        counters.add(&Counters {
            initiation_s,
            strength_s,
            propagation_s: phase.elapsed().as_secs_f64() - (initiation_s - initiation_before_s),
            ..Counters::default()
        });
        ImpactOutcome {
            contact_duration_s: 0.0,
            time_step_s: 0.0,
            contact: ContactHistory::default(),
            contact_impulses_n_s: Vec::new(),
            steps,
            peak_stress_pa: screening.peak_stress_pa,
            peak_stress_time_s: screening
                .peak_time_s(sample_interval_s)
                .filter(|_| screening.peak_stress_pa > 0.0)
                .unwrap_or(0.0),
            strength,
            points_evaluated: (screening.groups_evaluated * GROUP_POINTS)
                .min(basis.stress().point_count()),
            cracks,
            new_fragments,
        }
    }
}

/// The (DOF, N) pairs of a force along `direction` shared by `nodes` with
/// their weights.
fn nodal_load(
    nodes: impl IntoIterator<Item = (u32, f64)>,
    direction: &Vector3<f64>,
) -> Vec<(usize, f64)> {
    nodes
        .into_iter()
        .flat_map(|(node, weight)| {
            (0..3).map(move |axis| (3 * node as usize + axis, weight * direction[axis]))
        })
        .collect()
}
