//! Force-feedback devices, as the haptic thread sees them (Glondu 2012
//! §4.3.2, Fig. 4.18): each tick it reads a [`DeviceState`] and hands a
//! [`DeviceCommand`]. Admittance devices (the arm senses the user's force
//! and moves to a commanded goal) and impedance devices (the arm takes a
//! force) share one interface; [`Safety`] wraps every device. This module
//! is the only one that speaks hidapi (`hid.rs`, [`HidDriver`]).

mod codec;
mod hand;
mod hid;
mod profile;
mod safety;
mod sim;
mod transport;

pub use codec::{CodecError, Decoded, ReportCodec};
pub use hand::{Hand, HandError, HandScript, HandStep, HandTrajectory};
pub use hid::{
    present_devices, HidApiConnector, HidApiTransport, HidCounters, HidDriver, HidTiming,
    NotOpened, PresentDevice,
};
pub use profile::{
    DeviceProfile, Field, FieldType, InputQuantity, OutputQuantity, ProfileError, ProfileSafety,
    ReportLayout,
};
pub use safety::{
    Safety, SafetyEvent, SafetyFilter, SafetySettings, SafetySettingsError, TripCause,
};
pub use sim::{sim_arm_profile, sim_arm_spec, ArmModel, SimulatedArm};
pub use transport::{
    Connector, MemoryConnector, MemoryDevice, MemoryTransport, Transport, TransportError,
};

use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Whether the device takes a goal motion or a force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ControlMode {
    /// Senses the user's force, moves to a commanded goal pose and velocity.
    Admittance,
    /// Senses its pose, renders a commanded force and torque.
    Impedance,
}

/// The reachable space of the handle, in device coordinates (m).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "shape", rename_all = "lowercase", deny_unknown_fields)]
pub enum Workspace {
    /// An axis-aligned box centred on the origin, of these half extents.
    Box {
        /// Half the box's edge lengths (m).
        half_extents_m: [f64; 3],
    },
    /// A ball centred on the origin.
    Sphere {
        /// The ball's radius (m).
        radius_m: f64,
    },
}

impl Workspace {
    /// The point of the workspace nearest `p`.
    pub fn clamp(&self, p: &Vector3<f64>) -> Vector3<f64> {
        match *self {
            Workspace::Box { half_extents_m: h } => {
                Vector3::from_fn(|i, _| p[i].clamp(-h[i], h[i]))
            }
            Workspace::Sphere { radius_m } => {
                let n = p.norm();
                if n > radius_m {
                    p * (radius_m / n)
                } else {
                    *p
                }
            }
        }
    }
}

/// What a device can do (in the spirit of CHAI3D's device info). Every
/// limit is checked by [`DeviceSpec::validate`], which the safety layer
/// requires: a limit cannot be configured away.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceSpec {
    /// The model's name.
    pub name: String,
    /// Impedance (forces out) or admittance (goal poses out).
    pub control: ControlMode,
    /// Degrees of freedom sensed and actuated (3 or 6).
    pub dof_sensed: u8,
    /// Degrees of freedom actuated (3 or 6).
    pub dof_actuated: u8,
    /// Where the handle may go.
    pub workspace: Workspace,
    /// Largest force the device may render (N).
    pub max_force_n: f64,
    /// Largest torque the device may render (N·m).
    pub max_torque_n_m: f64,
    /// Largest stable coupling stiffness and damping at 1 kHz.
    pub max_stiffness_n_m: f64,
    /// Largest stable coupling damping at 1 kHz (N·s/m).
    pub max_damping_n_s_m: f64,
    /// Largest stable angular coupling stiffness at 1 kHz (N·m/rad).
    pub max_angular_stiffness_n_m_rad: f64,
    /// Largest stable angular coupling damping at 1 kHz (N·m·s/rad).
    pub max_angular_damping_n_m_s_rad: f64,
    /// Largest handle speed the device may be commanded (m/s).
    pub max_velocity_m_s: f64,
}

/// A device limit that is not finite and positive, or a workspace that is
/// not a finite positive box or ball.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("spec.{field} = {value}: {message}")]
pub struct SpecError {
    /// The field, under `spec.`.
    pub field: &'static str,
    /// Its value, as written.
    pub value: String,
    /// Why it is refused.
    pub message: &'static str,
}

impl DeviceSpec {
    /// Checks that every limit is finite and positive and that the
    /// degrees of freedom are 3 or 6; the error names the field.
    pub fn validate(&self) -> Result<(), SpecError> {
        let positive = |field: &'static str, value: f64| {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                Err(SpecError {
                    field,
                    value: value.to_string(),
                    message: "must be finite and positive",
                })
            }
        };
        match self.workspace {
            Workspace::Box { half_extents_m } => {
                for h in half_extents_m {
                    positive("workspace.half_extents_m", h)?;
                }
            }
            Workspace::Sphere { radius_m } => positive("workspace.radius_m", radius_m)?,
        }
        for (field, value) in [
            ("max_force_n", self.max_force_n),
            ("max_torque_n_m", self.max_torque_n_m),
            ("max_stiffness_n_m", self.max_stiffness_n_m),
            ("max_damping_n_s_m", self.max_damping_n_s_m),
            (
                "max_angular_stiffness_n_m_rad",
                self.max_angular_stiffness_n_m_rad,
            ),
            (
                "max_angular_damping_n_m_s_rad",
                self.max_angular_damping_n_m_s_rad,
            ),
            ("max_velocity_m_s", self.max_velocity_m_s),
        ] {
            positive(field, value)?;
        }
        for (field, dof) in [
            ("dof_sensed", self.dof_sensed),
            ("dof_actuated", self.dof_actuated),
        ] {
            if !matches!(dof, 3 | 6) {
                return Err(SpecError {
                    field,
                    value: dof.to_string(),
                    message: "must be 3 or 6",
                });
            }
        }
        Ok(())
    }
}

/// What the device reports once per tick.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DeviceState {
    /// Handle position (m, device frame).
    pub position_m: Vector3<f64>,
    /// Handle orientation.
    pub orientation: UnitQuaternion<f64>,
    /// Handle velocity (m/s).
    pub velocity_m_s: Vector3<f64>,
    /// Handle angular velocity (rad/s).
    pub angular_velocity_rad_s: Vector3<f64>,
    /// The user's force and torque on the handle (admittance devices).
    pub user_force_n: Vector3<f64>,
    /// The user's torque on the handle (N·m; admittance devices).
    pub user_torque_n_m: Vector3<f64>,
    /// Bit i: button i pressed.
    pub buttons: u32,
    /// The device's own clock (µs).
    pub device_time_us: u64,
    /// Counts reports; a gap means lost reports.
    pub sequence: u32,
}

impl Default for DeviceState {
    fn default() -> Self {
        Self {
            position_m: Vector3::zeros(),
            orientation: UnitQuaternion::identity(),
            velocity_m_s: Vector3::zeros(),
            angular_velocity_rad_s: Vector3::zeros(),
            user_force_n: Vector3::zeros(),
            user_torque_n_m: Vector3::zeros(),
            buttons: 0,
            device_time_us: 0,
            sequence: 0,
        }
    }
}

/// What the haptic thread asks of the device once per tick.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum DeviceCommand {
    /// Admittance: move the handle to this pose with this velocity.
    Goal {
        /// Goal position (m).
        position_m: Vector3<f64>,
        /// Goal orientation.
        orientation: UnitQuaternion<f64>,
        /// Goal velocity (m/s).
        velocity_m_s: Vector3<f64>,
        /// Goal angular velocity (rad/s).
        angular_velocity_rad_s: Vector3<f64>,
    },
    /// Impedance: render this force and torque.
    Wrench {
        /// Force on the handle (N).
        force_n: Vector3<f64>,
        /// Torque on the handle (N·m).
        torque_n_m: Vector3<f64>,
    },
}

impl DeviceCommand {
    /// No force: the safe command of either kind.
    pub fn zero_wrench() -> Self {
        DeviceCommand::Wrench {
            force_n: Vector3::zeros(),
            torque_n_m: Vector3::zeros(),
        }
    }
}

/// Why a device call failed; failures are values, the caller decides.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeviceError {
    /// No input report came within this time.
    #[error("no report within {0:?}")]
    Timeout(Duration),
    /// The device went away; the driver reopens it.
    #[error("device disconnected (reopening)")]
    Disconnected,
    /// A report could not be decoded.
    #[error("protocol error: {0}")]
    Protocol(#[from] CodecError),
    /// The device reports a fault, with its code.
    #[error("device reports fault code {0}")]
    Fault(u32),
    /// A command write did not finish within this time.
    #[error("command write stalled (over {0:?})")]
    StalledWrite(Duration),
}

/// A force-feedback device, driven once per haptic tick. Neither method
/// may block longer than the device's own timeout.
pub trait Device: Send {
    /// The device's limits and workspace; fixed for the device's life.
    fn spec(&self) -> &DeviceSpec;
    /// The newest state; `now_s` is the caller's clock (real or virtual).
    fn read(&mut self, now_s: f64) -> Result<DeviceState, DeviceError>;
    /// Sends the command for this tick.
    fn command(&mut self, command: &DeviceCommand, now_s: f64) -> Result<(), DeviceError>;
    /// Ends the session: the device stops rendering and its actuators are
    /// disabled. Called once, after the last command (the safety layer
    /// sends the zero command first). The default has nothing to disable.
    fn release(&mut self, _now_s: f64) -> Result<(), DeviceError> {
        Ok(())
    }
}

impl<D: Device + ?Sized> Device for Box<D> {
    fn spec(&self) -> &DeviceSpec {
        (**self).spec()
    }
    fn read(&mut self, now_s: f64) -> Result<DeviceState, DeviceError> {
        (**self).read(now_s)
    }
    fn command(&mut self, command: &DeviceCommand, now_s: f64) -> Result<(), DeviceError> {
        (**self).command(command, now_s)
    }
    fn release(&mut self, now_s: f64) -> Result<(), DeviceError> {
        (**self).release(now_s)
    }
}
