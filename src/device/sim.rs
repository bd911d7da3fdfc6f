//! The simulated arm, the default device: per axis a mass–damper plant,
//! driven in admittance mode by a PD position controller towards the
//! commanded goal (in impedance mode by the commanded force), inside the
//! workspace; a hand holds the handle with a spring–damper towards a hand
//! trajectory and produces the user force the device reports. It runs on
//! the caller's clock (`now_s`), so real-time and lockstep runs share it.
//!
//! Translation only: the handle's orientation stays the identity and
//! torques are ignored (the tile and plate tasks need a ball, not a tool).

use super::hand::{Hand, HandTrajectory};
use super::{
    ControlMode, Device, DeviceCommand, DeviceError, DeviceProfile, DeviceSpec, DeviceState,
};
use nalgebra::Vector3;

/// Physical constants of the simulated arm and hand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArmModel {
    /// Moving mass per axis (kg) and viscous damping (N·s/m).
    pub mass_kg: f64,
    /// Viscous damping per axis (N·s/m).
    pub damping_n_s_m: f64,
    /// Position controller (admittance mode).
    pub controller_stiffness_n_m: f64,
    /// Damping of the position controller (N·s/m).
    pub controller_damping_n_s_m: f64,
    /// The hand's grip.
    pub hand_stiffness_n_m: f64,
    /// Damping of the hand's grip (N·s/m).
    pub hand_damping_n_s_m: f64,
    /// Integration step (s); the caller's ticks are split into these.
    pub substep_s: f64,
}

impl Default for ArmModel {
    fn default() -> Self {
        Self {
            mass_kg: 0.5,
            damping_n_s_m: 2.0,
            controller_stiffness_n_m: 8000.0,
            controller_damping_n_s_m: 120.0,
            hand_stiffness_n_m: 400.0,
            hand_damping_n_s_m: 10.0,
            substep_s: 1e-4,
        }
    }
}

/// The profile of the simulated arm, `devices/sim-arm.toml`, built in.
pub fn sim_arm_profile() -> DeviceProfile {
    DeviceProfile::parse(
        include_str!("../../devices/sim-arm.toml"),
        std::path::Path::new("devices/sim-arm.toml"),
    )
    .expect("the shipped sim-arm profile is valid (checked by the tests)")
}

/// The spec of the simulated admittance arm (from its profile).
pub fn sim_arm_spec() -> DeviceSpec {
    sim_arm_profile().spec
}

/// A simulated arm held by a hand: a scripted path by default, or any
/// [`Hand`] (the study's model participant).
#[derive(Debug, Clone)]
pub struct SimulatedArm<H: Hand = HandTrajectory> {
    spec: DeviceSpec,
    model: ArmModel,
    hand: H,
    time_s: f64,
    position_m: Vector3<f64>,
    velocity_m_s: Vector3<f64>,
    command: DeviceCommand,
    user_force_n: Vector3<f64>,
    sequence: u32,
}

impl<H: Hand> SimulatedArm<H> {
    /// The arm starts at rest where the hand starts.
    pub fn new(spec: DeviceSpec, model: ArmModel, hand: H) -> Self {
        let (start, _) = hand.at(0.0);
        let position = spec.workspace.clamp(&start);
        Self {
            command: match spec.control {
                ControlMode::Admittance => DeviceCommand::Goal {
                    position_m: position,
                    orientation: nalgebra::UnitQuaternion::identity(),
                    velocity_m_s: Vector3::zeros(),
                    angular_velocity_rad_s: Vector3::zeros(),
                },
                ControlMode::Impedance => DeviceCommand::zero_wrench(),
            },
            spec,
            model,
            hand,
            time_s: 0.0,
            position_m: position,
            velocity_m_s: Vector3::zeros(),
            user_force_n: Vector3::zeros(),
            sequence: 0,
        }
    }

    /// Where the hand wants the handle at `t`.
    pub fn hand_target(&self, t: f64) -> Vector3<f64> {
        self.hand.at(t).0
    }

    /// The hand.
    pub fn hand(&self) -> &H {
        &self.hand
    }

    /// Advances the plant to `now_s` (never backwards).
    fn advance(&mut self, now_s: f64) {
        let m = &self.model;
        let mut remaining = now_s - self.time_s;
        // A clock jump of more than a second is not integrated step by step.
        let integrate = remaining > 0.0 && remaining <= 1.0;
        if !integrate {
            self.time_s = now_s.max(self.time_s);
            return;
        }
        while remaining > 1e-12 {
            let h = remaining.min(m.substep_s);
            let t = self.time_s + h;
            // The hand feels the handle's reaction to its last push.
            self.hand.feel(t, &-self.user_force_n);
            let (hand_p, hand_v) = self.hand.at(t);
            let hand_force = (hand_p - self.position_m) * m.hand_stiffness_n_m
                + (hand_v - self.velocity_m_s) * m.hand_damping_n_s_m;
            let drive = match self.command {
                DeviceCommand::Goal {
                    position_m,
                    velocity_m_s,
                    ..
                } => {
                    (position_m - self.position_m) * m.controller_stiffness_n_m
                        + (velocity_m_s - self.velocity_m_s) * m.controller_damping_n_s_m
                }
                DeviceCommand::Wrench { force_n, .. } => force_n,
            };
            let force = drive + hand_force - self.velocity_m_s * m.damping_n_s_m;
            // Semi-implicit Euler: velocity first, then position.
            self.velocity_m_s += force * (h / m.mass_kg);
            self.position_m += self.velocity_m_s * h;
            let clamped = self.spec.workspace.clamp(&self.position_m);
            if clamped != self.position_m {
                // The end stop: no motion through it.
                let outward = self.position_m - clamped;
                let n = outward.norm();
                if n > 0.0 {
                    let normal = outward / n;
                    let vn = self.velocity_m_s.dot(&normal);
                    if vn > 0.0 {
                        self.velocity_m_s -= normal * vn;
                    }
                }
                self.position_m = clamped;
            }
            self.user_force_n = hand_force;
            self.time_s = t;
            remaining -= h;
        }
    }
}

impl<H: Hand> Device for SimulatedArm<H> {
    fn spec(&self) -> &DeviceSpec {
        &self.spec
    }

    fn read(&mut self, now_s: f64) -> Result<DeviceState, DeviceError> {
        self.advance(now_s);
        self.sequence = self.sequence.wrapping_add(1);
        Ok(DeviceState {
            position_m: self.position_m,
            velocity_m_s: self.velocity_m_s,
            user_force_n: self.user_force_n,
            device_time_us: (self.time_s * 1e6) as u64,
            sequence: self.sequence,
            ..DeviceState::default()
        })
    }

    fn command(&mut self, command: &DeviceCommand, now_s: f64) -> Result<(), DeviceError> {
        self.advance(now_s);
        self.command = *command;
        Ok(())
    }
}
