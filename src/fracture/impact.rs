//! Modal impact fracture (Glondu 2012 §3.3, Alg. 3) and the quasi-static
//! check for resting contacts (§3.3.7), on a [`BreakableBody`].

use super::propagate::{propagate, Crack, EnergyBalance};
use super::stress::{max_principal_stress, principal_direction};
use super::surface::CrackSurface;
use super::{fragments, FractureState, Fragment};
use crate::config::Material;
use crate::fem::constitutive_matrix;
use crate::mesh::TetMesh;
use crate::modal::{ModalBasis, ModalState};
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};
use nalgebra::{Matrix6, Point3, Vector3};
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde::Serialize;
use std::time::Instant;

/// One contact point of an impact on the body.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactPoint {
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
    pub mass_kg: f64,
    pub youngs_modulus_pa: f64,
    pub poisson_ratio: f64,
    /// Radius of curvature at the contact (m).
    pub radius_m: f64,
}

impl Impactor {
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
    /// Most cracks started at one time sample.
    pub max_cracks_per_step: usize,
    /// Seeds the weak points and the crack noise.
    pub seed: u64,
}

impl Default for FractureSettings {
    fn default() -> Self {
        Self {
            energy_length_m: 5e-3,
            excitation_threshold: 1e-3,
            max_steps: 64,
            max_cracks_per_step: 4,
            seed: 0,
        }
    }
}

/// What one impact (or static load) did.
#[derive(Debug, Clone, Serialize)]
pub struct ImpactOutcome {
    pub contact_duration_s: f64,
    pub time_step_s: f64,
    pub steps: usize,
    /// Largest maximum principal stress over the contact (Pa).
    pub peak_stress_pa: f64,
    pub cracks: Vec<Crack>,
    pub milliseconds: PhaseTimes,
}

/// Wall time per phase (ms).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct PhaseTimes {
    pub initiation: f64,
    pub propagation: f64,
}

/// A breakable body: its mesh, material, modal basis, fracture state and
/// weak points.
///
/// Fragments keep using the body's modal basis (Glondu §3.3.7, "the same
/// deformation modes"): an impact on a fragment excites the parent's modes
/// and only the fragment's elements can crack. A basis of its own for large
/// fragments is future work.
#[derive(Debug, Clone)]
pub struct BreakableBody {
    mesh: TetMesh,
    material: Material,
    basis: ModalBasis,
    state: FractureState,
    /// Material flaws (§3.3.5): positions and the tets holding them.
    weak_points: Vec<(Point3<f64>, u32)>,
    compliance: Matrix6<f64>,
    crack_seed: u32,
}

impl BreakableBody {
    /// `basis` must be the modal basis of `mesh` in `material`. Weak points
    /// are sampled uniformly in volume at the material's density (the count
    /// is the expected number, its fraction rounded at random).
    pub fn new(mesh: TetMesh, material: Material, basis: ModalBasis, seed: u64) -> Self {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let expected = material.weak_point_density_per_m3 * mesh.volume();
        let count = expected.floor() as usize + usize::from(rng.random::<f64>() < expected.fract());
        let mut cumulative = Vec::with_capacity(mesh.tet_count());
        let mut total = 0.0;
        for t in 0..mesh.tet_count() {
            total += mesh.tet_volume(t);
            cumulative.push(total);
        }
        let weak_points = (0..count)
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
        let compliance = constitutive_matrix(&material)
            .try_inverse()
            .expect("the isotropic elasticity matrix is invertible for ν < 0.5");
        let state = FractureState::new(&mesh);
        Self {
            mesh,
            material,
            basis,
            state,
            weak_points,
            compliance,
            crack_seed: (seed as u32) ^ 0x5ca1ab1e,
        }
    }

    pub fn mesh(&self) -> &TetMesh {
        &self.mesh
    }

    pub fn state(&self) -> &FractureState {
        &self.state
    }

    pub fn basis(&self) -> &ModalBasis {
        &self.basis
    }

    pub fn weak_points(&self) -> &[(Point3<f64>, u32)] {
        &self.weak_points
    }

    /// The body's fragments (one, intact, until a crack separates it).
    pub fn fragments(&self) -> Vec<Fragment> {
        fragments(&self.mesh, &self.state, self.material.density_kg_m3)
    }

    /// Modal forces of a unit force along `direction` at `point`, spread on
    /// the nearest boundary face with barycentric weights: g = Wᵀ f.
    fn unit_modal_force(&self, point: &Point3<f64>, direction: &Vector3<f64>) -> Vec<f64> {
        let (nodes, weights) = nearest_boundary_face(&self.mesh, point);
        let shapes = &self.basis.shapes;
        (0..self.basis.mode_count())
            .map(|j| {
                (0..3)
                    .map(|k| {
                        let n = nodes[k] as usize;
                        let x = Vector3::new(
                            shapes[(3 * n, j)],
                            shapes[(3 * n + 1, j)],
                            shapes[(3 * n + 2, j)],
                        );
                        weights[k] * x.dot(direction)
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
        const HERTZ: f64 = 2.87;
        let speed = speed.max(1e-6);
        let body = self
            .most_excited(modal_amplitude)
            .map(|j| {
                let omega = self.basis.dynamics[j].damped_angular_frequency();
                HERTZ * (impactor.radius_m / (omega.powi(4) * speed)).powf(0.2)
            })
            .unwrap_or(0.0);
        let e_star = 1.0
            / ((1.0 - self.material.poisson_ratio.powi(2)) / self.material.youngs_modulus_pa
                + (1.0 - impactor.poisson_ratio.powi(2)) / impactor.youngs_modulus_pa);
        let hertz = HERTZ
            * (impactor.mass_kg.powi(2) / (e_star.powi(2) * impactor.radius_m * speed)).powf(0.2);
        body.max(hertz)
    }

    /// The under-damped mode with the largest impulse response |g|/ω.
    fn most_excited(&self, modal_amplitude: &[f64]) -> Option<usize> {
        (0..modal_amplitude.len())
            .filter(|&j| self.basis.dynamics[j].is_underdamped())
            .max_by(|&a, &b| modal_amplitude[a].total_cmp(&modal_amplitude[b]))
    }

    /// Applies one impact event: all contacts act together (§3.3.5).
    pub fn impact(
        &mut self,
        contacts: &[ContactPoint],
        impactor: &Impactor,
        settings: &FractureSettings,
    ) -> ImpactOutcome {
        let start = Instant::now();
        let m = self.basis.mode_count();
        let unit_forces: Vec<Vec<f64>> = contacts
            .iter()
            .map(|c| self.unit_modal_force(&c.point_m, &c.normal))
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
        let mut z = Mat::<f32>::zeros(m, steps);
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
                z[(j, k)] = states[j].z as f32;
            }
        }
        let mut outcome = self.fracture_from_modal_states(z.as_ref(), settings, start);
        outcome.contact_duration_s = duration;
        outcome.time_step_s = dt;
        outcome
    }

    /// The quasi-static check for resting contacts (§3.3.7): the static
    /// response `z_j = g_j / λ_j` of the modal basis to the held forces.
    pub fn static_load(
        &mut self,
        loads: &[StaticLoad],
        settings: &FractureSettings,
    ) -> ImpactOutcome {
        let start = Instant::now();
        let m = self.basis.mode_count();
        let mut z = Mat::<f32>::zeros(m, 1);
        for load in loads {
            let magnitude = load.force_n.norm();
            if magnitude == 0.0 {
                continue;
            }
            let g = self.unit_modal_force(&load.point_m, &(load.force_n / magnitude));
            for j in 0..m {
                z[(j, 0)] += (magnitude * g[j] / self.basis.eigenvalues[j]) as f32;
            }
        }
        let mut outcome = self.fracture_from_modal_states(z.as_ref(), settings, start);
        outcome.steps = 1;
        outcome
    }

    /// Stresses of every element at every modal state (one product of the
    /// modal stress table with the states), then the Rankine test in time
    /// order, cracks starting at weak points (Alg. 3).
    fn fracture_from_modal_states(
        &mut self,
        z: faer::MatRef<'_, f32>,
        settings: &FractureSettings,
        start: Instant,
    ) -> ImpactOutcome {
        let elements = self.mesh.tet_count();
        let steps = z.ncols();
        let mut stress = Mat::<f32>::zeros(6 * elements, steps);
        matmul(
            stress.as_mut(),
            Accum::Replace,
            self.basis.modal_stress(),
            z,
            1.0,
            Par::rayon(0),
        );
        let voigt = |e: usize, k: usize| -> [f64; 6] {
            std::array::from_fn(|c| f64::from(stress[(6 * e + c, k)]))
        };
        // σ₁ per element and step, elements in parallel.
        let principal: Vec<f32> = (0..elements)
            .into_par_iter()
            .flat_map_iter(|e| (0..steps).map(move |k| (e, k)))
            .map(|(e, k)| max_principal_stress(&voigt(e, k)) as f32)
            .collect();
        let sigma1 = |e: usize, k: usize| f64::from(principal[e * steps + k]);
        let peak_stress_pa = principal.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let threshold = self.material.rankine_threshold_pa;
        let mut times = PhaseTimes {
            initiation: start.elapsed().as_secs_f64() * 1e3,
            propagation: 0.0,
        };
        let balance = EnergyBalance {
            toughness_j_m2: self.material.fracture_toughness_j_m2,
            energy_length_m: settings.energy_length_m,
        };
        let mut cracks = Vec::new();
        for k in 0..steps {
            for _ in 0..settings.max_cracks_per_step {
                let t = Instant::now();
                let hottest = (0..elements)
                    .filter(|&e| !self.state.is_damaged(e) && sigma1(e, k) > threshold)
                    .max_by(|&a, &b| sigma1(a, k).total_cmp(&sigma1(b, k)));
                let Some(hottest) = hottest else {
                    times.initiation += t.elapsed().as_secs_f64() * 1e3;
                    break;
                };
                let centre = self.mesh.tet_centroid(hottest);
                let origin_tet = self
                    .weak_points
                    .iter()
                    .filter(|(_, tet)| !self.state.is_damaged(*tet as usize))
                    .min_by(|a, b| {
                        (a.0 - centre)
                            .norm_squared()
                            .total_cmp(&(b.0 - centre).norm_squared())
                    })
                    .map(|&(_, tet)| tet as usize)
                    .unwrap_or(hottest);
                // Open normal to the largest principal stress (eqs. 3.5–3.6),
                // of the start element if it is in tension, else of the hottest.
                let direction_from = if sigma1(origin_tet, k) > 0.0 {
                    origin_tet
                } else {
                    hottest
                };
                let direction = principal_direction(&voigt(direction_from, k));
                self.crack_seed = self.crack_seed.wrapping_add(0x9e37_79b9);
                let surface = CrackSurface::new(
                    self.mesh.tet_centroid(origin_tet),
                    direction,
                    self.material.crack_noise_amplitude_m,
                    self.material.crack_noise_frequency_per_m,
                    self.crack_seed ^ settings.seed as u32,
                );
                times.initiation += t.elapsed().as_secs_f64() * 1e3;
                let t = Instant::now();
                let compliance = self.compliance;
                let energy_density = |e: usize| {
                    let s = nalgebra::Vector6::from(voigt(e, k));
                    0.5 * s.dot(&(compliance * s))
                };
                let crack = propagate(
                    &self.mesh,
                    &mut self.state,
                    &surface,
                    origin_tet,
                    &balance,
                    &energy_density,
                );
                times.propagation += t.elapsed().as_secs_f64() * 1e3;
                cracks.push(crack);
            }
        }
        ImpactOutcome {
            contact_duration_s: 0.0,
            time_step_s: 0.0,
            steps,
            peak_stress_pa,
            cracks,
            milliseconds: times,
        }
    }
}

/// The boundary face nearest `point` and the barycentric weights of the
/// nearest point on it.
fn nearest_boundary_face(mesh: &TetMesh, point: &Point3<f64>) -> ([u32; 3], [f64; 3]) {
    let mut best = ([0u32; 3], [1.0, 0.0, 0.0], f64::INFINITY);
    for face in &mesh.topology().boundary_faces {
        let [a, b, c] = face.nodes.map(|n| mesh.nodes()[n as usize]);
        let weights = closest_on_triangle(point, &a, &b, &c);
        let q = Point3::from(a.coords * weights[0] + b.coords * weights[1] + c.coords * weights[2]);
        let d = (q - point).norm_squared();
        if d < best.2 {
            best = (face.nodes, weights, d);
        }
    }
    (best.0, best.1)
}

/// Barycentric weights of the point of triangle abc nearest p (Ericson,
/// Real-Time Collision Detection §5.1.5).
fn closest_on_triangle(
    p: &Point3<f64>,
    a: &Point3<f64>,
    b: &Point3<f64>,
    c: &Point3<f64>,
) -> [f64; 3] {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(&ap), ac.dot(&ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return [1.0, 0.0, 0.0];
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(&bp), ac.dot(&bp));
    if d3 >= 0.0 && d4 <= d3 {
        return [0.0, 1.0, 0.0];
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return [1.0 - v, v, 0.0];
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(&cp), ac.dot(&cp));
    if d6 >= 0.0 && d5 <= d6 {
        return [0.0, 0.0, 1.0];
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return [1.0 - w, 0.0, w];
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return [0.0, 1.0 - w, w];
    }
    let denom = 1.0 / (va + vb + vc);
    let (v, w) = (vb * denom, vc * denom);
    [1.0 - v - w, v, w]
}
