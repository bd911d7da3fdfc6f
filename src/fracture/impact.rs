//! Modal impact fracture (Glondu 2012 §3.3, Alg. 3) and the quasi-static
//! check for resting contacts (§3.3.7), on a [`BreakableBody`].

use super::contact::contact_patch;
use super::energy::{EnergyLedger, StrainEnergy};
use super::initiation::screen;
use super::propagate::{propagate_deferred, Crack, CrackScratch, EnergyBalance};
use super::stress::{max_principal_stress, principal_direction};
use super::surface::CrackSurface;
use super::BreakableBody;
use crate::config::Material;
use crate::modal::{ModalState, GROUP_ELEMENTS};
use nalgebra::{Point3, Vector3};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// One contact point of an impact on the body.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactPoint {
    /// Where the contact is, in the body's frame (m).
    pub point_m: Point3<f64>,
    /// Unit normal pointing into the body (the direction the force pushes).
    pub normal: Vector3<f64>,
    /// Normal impulse of the contact (N·s).
    pub impulse_n_s: f64,
    /// Relative normal speed at the contact (m/s).
    pub relative_speed_m_s: f64,
}

/// The other body of an impact, for the Hertz contact duration (eq. 3.9).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Impactor {
    /// Reduced mass of the pair (kg).
    pub mass_kg: f64,
    /// The impactor's Young's modulus (Pa).
    pub youngs_modulus_pa: f64,
    /// The impactor's Poisson's ratio.
    pub poisson_ratio: f64,
    /// Radius of curvature at the contact (m).
    pub radius_m: f64,
}

/// Hertz's constant of the contact duration `t = 2.87 (m²/(E*² R v))^{1/5}`.
const HERTZ_DURATION: f64 = 2.87;

impl Impactor {
    /// The effective modulus E* of the contact with `material`.
    fn effective_modulus(&self, material: &Material) -> f64 {
        1.0 / ((1.0 - material.poisson_ratio.powi(2)) / material.youngs_modulus_pa
            + (1.0 - self.poisson_ratio.powi(2)) / self.youngs_modulus_pa)
    }

    /// Hertz's contact duration against `material` at normal speed
    /// `speed` (s).
    fn hertz_duration(&self, material: &Material, speed: f64) -> f64 {
        let e_star = self.effective_modulus(material);
        HERTZ_DURATION
            * (self.mass_kg.powi(2) / (e_star.powi(2) * self.radius_m * speed.max(1e-6))).powf(0.2)
    }

    /// Radius of the Hertz contact patch at the peak of the sinusoidal force
    /// of `contact` (eq. 3.13, peak φπ/(2t)): a = (3FR / 4E*)^{1/3}.
    fn hertz_contact_radius(&self, material: &Material, contact: &ContactPoint) -> f64 {
        let duration = self.hertz_duration(material, contact.relative_speed_m_s);
        let peak_force = contact.impulse_n_s.abs() * std::f64::consts::PI / (2.0 * duration);
        (3.0 * peak_force * self.radius_m / (4.0 * self.effective_modulus(material))).cbrt()
    }

    /// The 110 g steel ball, 25 mm across, of the tile scene.
    pub fn steel_ball() -> Self {
        Self {
            mass_kg: 0.110,
            youngs_modulus_pa: 200e9,
            poisson_ratio: 0.3,
            radius_m: 0.0125,
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
    /// same unrelaxed stress field (the basis is not updated after a
    /// crack), next to the first, and shatter more.
    pub max_cracks_per_sample: usize,
    /// Seeds the weak points and the crack noise.
    pub seed: u64,
    /// Report the exact peak stress even when nothing breaks (it costs
    /// evaluating elements that cannot crack); otherwise a peak below the
    /// Rankine threshold is a lower bound.
    pub exact_peak_stress: bool,
}

impl Default for FractureSettings {
    fn default() -> Self {
        Self {
            energy_length_m: 5e-3,
            excitation_threshold: 1e-3,
            max_steps: 64,
            max_cracks_per_sample: 1,
            seed: 0,
            exact_peak_stress: true,
        }
    }
}

/// What one impact (or static load) did.
#[derive(Debug, Clone, Serialize)]
pub struct ImpactOutcome {
    /// Hertz contact duration (eq. 3.9; s); 0 for a static load.
    pub contact_duration_s: f64,
    /// Time step of the modal integration over the contact (s).
    pub time_step_s: f64,
    /// Time samples taken.
    pub steps: usize,
    /// Largest maximum principal stress over the contact (Pa), 0 if no
    /// element is in tension; a lower bound if below the Rankine threshold
    /// without [`FractureSettings::exact_peak_stress`].
    pub peak_stress_pa: f64,
    /// Elements whose stresses were formed (the others were bounded below
    /// the threshold and the peak; see the `initiation` module).
    pub elements_evaluated: usize,
    /// The cracks started and propagated, in order.
    pub cracks: Vec<Crack>,
    /// Fragment identifiers the event's cracks created (the fragments are
    /// updated once, after the last crack).
    pub new_fragments: Vec<u32>,
}

/// Wall time of the engine's phases, accumulated over calls by the caller
/// that owns it and kept apart from the physical [`ImpactOutcome`] (as
/// rapier keeps its `Counters` apart from the simulation state).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Counters {
    /// Modal response, stress screening and crack starts (s).
    pub initiation_s: f64,
    /// Crack propagation, less the crack starts it contains (s).
    pub propagation_s: f64,
}

impl Counters {
    /// Adds `other`'s times to these.
    pub fn add(&mut self, other: &Counters) {
        self.initiation_s += other.initiation_s;
        self.propagation_s += other.propagation_s;
    }
}

impl BreakableBody {
    /// Modal forces of a unit force along `direction` spread over the
    /// contact patch of radius `radius_m` around `point`: g = Wᵀ f.
    fn unit_modal_force(
        &self,
        point: &Point3<f64>,
        direction: &Vector3<f64>,
        radius_m: f64,
    ) -> Vec<f64> {
        let region = self.region.as_ref().map(|r| &*r.tets);
        let patch = contact_patch(&self.mesh, region, point, radius_m);
        let shapes = &self.basis.shapes;
        (0..self.basis.mode_count())
            .map(|j| {
                patch
                    .iter()
                    .map(|&(node, weight)| {
                        let n = node as usize;
                        let x = Vector3::new(
                            shapes[(3 * n, j)],
                            shapes[(3 * n + 1, j)],
                            shapes[(3 * n + 2, j)],
                        );
                        weight * x.dot(direction)
                    })
                    .sum()
            })
            .collect()
    }

    /// Contact duration of one contact (eqs. 3.9–3.10), before the
    /// material's scale: the larger of the body's modal estimate and the
    /// impactor's Hertz estimate (§3.3.2).
    ///
    /// Eq. 3.10 as printed, `c((2π/ω)²/v)^{1/5}`, is not a time. Hertz's
    /// `t = 2.87 (m²/(E*² R v))^{1/5}` is `2.87 (R/(ω⁴ v))^{1/5}` with the
    /// contact's natural frequency `ω² = E* R / m`; the modal estimate
    /// substitutes the most excited mode's damped frequency for that ω,
    /// keeping R the impactor's radius.
    fn contact_duration(&self, modal_amplitude: &[f64], speed: f64, impactor: &Impactor) -> f64 {
        let speed = speed.max(1e-6);
        let body = self
            .most_excited(modal_amplitude)
            .map(|j| {
                let omega = self.basis.dynamics[j].damped_angular_frequency();
                HERTZ_DURATION * (impactor.radius_m / (omega.powi(4) * speed)).powf(0.2)
            })
            .unwrap_or(0.0);
        body.max(impactor.hertz_duration(&self.material, speed))
    }

    /// The under-damped mode with the largest impulse response |g|/ω.
    fn most_excited(&self, modal_amplitude: &[f64]) -> Option<usize> {
        (0..modal_amplitude.len())
            .filter(|&j| self.basis.dynamics[j].is_underdamped())
            .max_by(|&a, &b| modal_amplitude[a].total_cmp(&modal_amplitude[b]))
    }

    /// Applies one impact event: all contacts act together (§3.3.5). The
    /// parallel phases run on `threads`; phase times are added to
    /// `counters`.
    pub fn impact(
        &mut self,
        contacts: &[ContactPoint],
        impactor: &Impactor,
        settings: &FractureSettings,
        threads: &rayon::ThreadPool,
        counters: &mut Counters,
    ) -> ImpactOutcome {
        threads.install(|| self.impact_in_pool(contacts, impactor, settings, counters))
    }

    fn impact_in_pool(
        &mut self,
        contacts: &[ContactPoint],
        impactor: &Impactor,
        settings: &FractureSettings,
        counters: &mut Counters,
    ) -> ImpactOutcome {
        let start = Instant::now();
        let m = self.basis.mode_count();
        let unit_forces: Vec<Vec<f64>> = contacts
            .iter()
            .map(|c| {
                let radius = impactor.hertz_contact_radius(&self.material, c);
                self.unit_modal_force(&c.point_m, &c.normal, radius)
            })
            .collect();
        // Impulse response amplitude per mode and contact: |I g_j| / ω_j.
        let amplitude = |c: usize| -> Vec<f64> {
            (0..m)
                .map(|j| {
                    (contacts[c].impulse_n_s * unit_forces[c][j]).abs()
                        / self.basis.eigenvalues[j].sqrt()
                })
                .collect()
        };
        let amplitudes: Vec<Vec<f64>> = (0..contacts.len()).map(amplitude).collect();
        // Several simultaneous contacts: the shortest duration (§3.3.2).
        let duration = contacts
            .iter()
            .enumerate()
            .map(|(c, contact)| {
                self.contact_duration(&amplitudes[c], contact.relative_speed_m_s, impactor)
            })
            .fold(f64::INFINITY, f64::min)
            * self.material.contact_duration_scale;
        let total_amplitude: Vec<f64> = (0..m)
            .map(|j| amplitudes.iter().map(|a| a[j]).sum())
            .collect();
        let largest = total_amplitude.iter().copied().fold(0.0, f64::max);
        // Time step (eq. 3.11): Nyquist for the highest excited under-damped
        // mode, π/ω. The printed 4π/ω would sample every second period.
        let omega_high = (0..m)
            .filter(|&j| {
                self.basis.dynamics[j].is_underdamped()
                    && total_amplitude[j] >= settings.excitation_threshold * largest
            })
            .map(|j| self.basis.dynamics[j].damped_angular_frequency())
            .fold(0.0, f64::max);
        let nyquist = if omega_high > 0.0 {
            std::f64::consts::PI / omega_high
        } else {
            duration
        };
        let steps = ((duration / nyquist).ceil() as usize).clamp(1, settings.max_steps.max(1));
        let dt = duration / steps as f64;
        // Sinusoidal contact force whose integral over the contact is the
        // impulse (eqs. 3.12–3.13): a = φu / (1 − cos(u t_d)) = φu/2, u = π/t_d.
        // Each interval uses the force's mean over it, so impulses are exact.
        let u = std::f64::consts::PI / duration;
        let mut states = vec![ModalState::default(); m];
        let mut z = vec![0.0f32; m * steps];
        for k in 0..steps {
            let (t0, t1) = (k as f64 * dt, (k + 1) as f64 * dt);
            let mean_profile = ((u * t0).cos() - (u * t1).cos()) / (2.0 * dt); // (a/u)(…)/dt with a = φu/2, per unit φ
            for j in 0..m {
                let g: f64 = contacts
                    .iter()
                    .zip(&unit_forces)
                    .map(|(c, f)| c.impulse_n_s * mean_profile * f[j])
                    .sum();
                states[j] = self.basis.dynamics[j].step(states[j], g, dt);
                z[k * m + j] = states[j].z as f32;
            }
        }
        self.keep_impact(&z);
        let mut outcome = self.fracture_from_modal_states(&z, settings, start, counters);
        outcome.contact_duration_s = duration;
        outcome.time_step_s = dt;
        outcome
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
        for load in loads {
            let magnitude = load.force_n.norm();
            if magnitude == 0.0 {
                continue;
            }
            let g = self.unit_modal_force(&load.point_m, &(load.force_n / magnitude), 0.0);
            for j in 0..m {
                z[j] += (magnitude * g[j] / self.basis.eigenvalues[j]) as f32;
            }
        }
        self.fracture_from_modal_states(&z, settings, start, counters)
    }

    /// Keeps an impact's modal states for
    /// [`BreakableBody::last_impact_stress`] (a few kB per impact).
    fn keep_impact(&mut self, z: &[f32]) {
        self.impacts += 1;
        self.last_impact_states = Some(Arc::from(z));
    }

    /// The Rankine test at every modal state `z` (sample-major, m per
    /// sample) in time order, cracks starting at weak points (Alg. 3).
    fn fracture_from_modal_states(
        &mut self,
        z: &[f32],
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
        let stress = basis.stress();
        let threshold = self.material.rankine_threshold_pa;
        let mut screening = screen(stress, z, threshold, settings.exact_peak_stress);
        let state_at = |k: usize| &z[k * m..(k + 1) * m];
        let voigt = |e: usize, k: usize| stress.element_stress(e, state_at(k)).map(f64::from);
        let mut initiation_s = start.elapsed().as_secs_f64();
        let balance = EnergyBalance {
            toughness_j_m2: self.material.fracture_toughness_j_m2,
            energy_length_m: settings.energy_length_m,
        };
        let mut cracks = Vec::new();
        let mut ledgers = Vec::new();
        let mut energy = StrainEnergy::new(&mesh, basis.displacement(), &stiffness);
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
                energy.set_state(state_at(k));
                let mut started = 0;
                while started < settings.max_cracks_per_sample {
                    let Some((_, hottest)) = hot.pop_hottest(threshold, &screening.stresses) else {
                        break;
                    };
                    let hottest = hottest as usize;
                    if !self.can_initiate(hottest) {
                        continue;
                    }
                    started += 1;
                    let t = Instant::now();
                    let centre = mesh.tet_centroid(hottest);
                    let origin_tet = self
                        .weak_points
                        .nearest(&centre, |tet| self.can_initiate(tet as usize))
                        .map_or(hottest, |tet| tet as usize);
                    // Open normal to the largest principal stress (eqs. 3.5–3.6),
                    // of the start element if it is in tension, else of the hottest.
                    let origin_stress = voigt(origin_tet, k);
                    let direction = if max_principal_stress(&origin_stress) > 0.0 {
                        principal_direction(&origin_stress)
                    } else {
                        principal_direction(&voigt(hottest, k))
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
                    let scratch = scratch.get_or_insert_with(|| CrackScratch::new(&mesh));
                    let mut ledger = EnergyLedger::default();
                    let crack = propagate_deferred(
                        scratch,
                        &mesh,
                        &mut self.state,
                        &surface,
                        origin_tet,
                        &balance,
                        &mut |e| energy.density(e),
                        &mut ledger,
                    );
                    pending.spawn(scope, ledgers.len(), state_at(k), &ledger);
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
            propagation_s: phase.elapsed().as_secs_f64() - (initiation_s - initiation_before_s),
        });
        ImpactOutcome {
            contact_duration_s: 0.0,
            time_step_s: 0.0,
            steps,
            peak_stress_pa: screening.peak_stress_pa,
            elements_evaluated: (screening.groups_evaluated * GROUP_ELEMENTS)
                .min(self.mesh.tet_count()),
            cracks,
            new_fragments,
        }
    }
}
