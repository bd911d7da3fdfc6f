//! The safety layer: every device is wrapped in [`Safety`], and every
//! command goes through [`SafetyFilter::filter`] on its way to the device.
//!
//! Per command, in order: non-finite values → zero and a latched fault;
//! velocity trip (the handle faster than the spec's maximum → zero, fault
//! latched until [`Safety::reset`]); deadman button (optional); soft start
//! (output scaled from 0 to 1 over `ramp_s`, starting only once the user's
//! force is below `engage_force_n`); clamp to the spec's maxima keeping
//! direction; slew-rate limit. A command watchdog zeroes the output when no
//! command came for `watchdog_s`. "Zero" is no force for an impedance
//! device and holding still where the handle is for an admittance device.

use super::{ControlMode, Device, DeviceCommand, DeviceError, DeviceSpec, DeviceState, SpecError};
use nalgebra::{UnitQuaternion, Vector3};
use serde::Serialize;

/// Tunables of the safety layer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SafetySettings {
    /// Time over which forces ramp in after start or reset (s).
    pub ramp_s: f64,
    /// The ramp starts only once the user's force is below this (N).
    pub engage_force_n: f64,
    /// Largest change of force per second (N/s) and torque (N·m/s).
    pub force_slew_n_per_s: f64,
    /// Largest change of torque per second (N·m/s).
    pub torque_slew_n_m_per_s: f64,
    /// Largest change of goal velocity per second (m/s²), admittance.
    pub goal_acceleration_m_s2: f64,
    /// No command for this long → zero output (s).
    pub watchdog_s: f64,
    /// Output only while this button is held.
    pub deadman_button: Option<u8>,
    /// `false`: never any force (a study's condition without force
    /// feedback): the device is still read and moves the proxy, and the
    /// output is [`SafetyFilter::free`] — no wrench, or an admittance
    /// device's goal moving with the handle.
    pub force_output: bool,
}

impl SafetySettings {
    /// Defaults scaled to `spec`: 1 s ramp, full force in 20 ms, full speed
    /// in 50 ms, 20 ms watchdog, no deadman.
    pub fn for_spec(spec: &DeviceSpec) -> Self {
        Self {
            ramp_s: 1.0,
            engage_force_n: (0.2 * spec.max_force_n).max(1.0),
            force_slew_n_per_s: spec.max_force_n / 0.02,
            torque_slew_n_m_per_s: spec.max_torque_n_m / 0.02,
            goal_acceleration_m_s2: spec.max_velocity_m_s / 0.05,
            watchdog_s: 0.02,
            deadman_button: None,
            force_output: true,
        }
    }
}

/// Safety settings or a device spec the safety layer refuses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SafetySettingsError {
    /// The device spec is invalid.
    #[error("device {0}")]
    Spec(#[from] SpecError),
    /// A safety setting is out of range.
    #[error("safety setting {field} = {value}: {message}")]
    Setting {
        /// The setting.
        field: &'static str,
        /// Its value.
        value: f64,
        /// Why it is refused.
        message: &'static str,
    },
}

impl SafetySettings {
    /// Every rate and time finite and positive (the ramp may be 0), the
    /// deadman button one of 0–31.
    pub fn validate(&self) -> Result<(), SafetySettingsError> {
        for (field, value, zero_allowed) in [
            ("ramp_s", self.ramp_s, true),
            ("engage_force_n", self.engage_force_n, false),
            ("force_slew_n_per_s", self.force_slew_n_per_s, false),
            ("torque_slew_n_m_per_s", self.torque_slew_n_m_per_s, false),
            ("goal_acceleration_m_s2", self.goal_acceleration_m_s2, false),
            ("watchdog_s", self.watchdog_s, false),
        ] {
            if !(value.is_finite() && (value > 0.0 || zero_allowed && value == 0.0)) {
                return Err(SafetySettingsError::Setting {
                    field,
                    value,
                    message: "must be finite and positive",
                });
            }
        }
        if let Some(button) = self.deadman_button.filter(|&b| b >= 32) {
            return Err(SafetySettingsError::Setting {
                field: "deadman_button",
                value: f64::from(button),
                message: "buttons are numbered 0 to 31",
            });
        }
        Ok(())
    }
}

/// Why the safety layer changed a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TripCause {
    /// A command or state held NaN or an infinity.
    NonFinite,
    /// The handle moved faster than the spec allows.
    Overspeed,
    /// No fresh device state for too long.
    Watchdog,
    /// The deadman button was released.
    Deadman,
}

impl TripCause {
    /// The name logs use (the serialised one).
    pub fn name(self) -> &'static str {
        match self {
            TripCause::NonFinite => "non_finite",
            TripCause::Overspeed => "overspeed",
            TripCause::Watchdog => "watchdog",
            TripCause::Deadman => "deadman",
        }
    }
}

/// A trip: when and why.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SafetyEvent {
    /// When it tripped (s since the session's start).
    pub time_s: f64,
    /// Why.
    pub cause: TripCause,
    /// Whether the fault stays until reset.
    pub latched: bool,
}

/// The command filter itself, without a device: pure and deterministic.
#[derive(Debug, Clone)]
pub struct SafetyFilter {
    spec: DeviceSpec,
    settings: SafetySettings,
    latched: Option<TripCause>,
    /// When the soft start began (None: not engaged yet).
    ramp_start_s: Option<f64>,
    last_output: Option<DeviceCommand>,
    last_time_s: Option<f64>,
    /// Trips since the last drain; preallocated, never grows past capacity.
    events: Vec<SafetyEvent>,
    dropped_events: u64,
    /// Whether the deadman was released at the last command (to report the
    /// release once, not every tick).
    deadman_released: bool,
}

const EVENT_CAPACITY: usize = 64;

impl SafetyFilter {
    /// A filter for a device of `spec`; both `spec` and `settings` must
    /// pass validation.
    pub fn new(spec: DeviceSpec, settings: SafetySettings) -> Result<Self, SafetySettingsError> {
        spec.validate()?;
        settings.validate()?;
        Ok(Self {
            spec,
            settings,
            latched: None,
            ramp_start_s: None,
            last_output: None,
            last_time_s: None,
            events: Vec::with_capacity(EVENT_CAPACITY),
            dropped_events: 0,
            deadman_released: false,
        })
    }

    /// The last command sent (after every limit), if any.
    pub fn last_output(&self) -> Option<&DeviceCommand> {
        self.last_output.as_ref()
    }

    /// The device spec the filter enforces.
    pub fn spec(&self) -> &DeviceSpec {
        &self.spec
    }

    /// The filter's settings.
    pub fn settings(&self) -> &SafetySettings {
        &self.settings
    }

    /// The latched fault, if any.
    pub fn fault(&self) -> Option<TripCause> {
        self.latched
    }

    /// Clears a latched fault; forces ramp in again.
    pub fn reset(&mut self) {
        self.latched = None;
        self.ramp_start_s = None;
    }

    /// Hands the trips since the last call to `sink`, oldest first.
    pub fn drain_events(&mut self, mut sink: impl FnMut(SafetyEvent)) {
        for event in self.events.drain(..) {
            sink(event);
        }
    }

    /// Trips lost because nobody drained them.
    pub fn dropped_events(&self) -> u64 {
        self.dropped_events
    }

    fn trip(&mut self, time_s: f64, cause: TripCause, latched: bool) {
        if latched {
            self.latched = Some(cause);
        }
        if self.events.len() < EVENT_CAPACITY {
            self.events.push(SafetyEvent {
                time_s,
                cause,
                latched,
            });
        } else {
            self.dropped_events += 1;
        }
    }

    /// The zero command: no force, or hold the handle where it is.
    pub fn zero(&self, state: &DeviceState) -> DeviceCommand {
        match self.spec.control {
            ControlMode::Impedance => DeviceCommand::zero_wrench(),
            ControlMode::Admittance => DeviceCommand::Goal {
                position_m: self
                    .spec
                    .workspace
                    .clamp(&finite_or_zero(&state.position_m)),
                orientation: if is_finite_quaternion(&state.orientation) {
                    state.orientation
                } else {
                    UnitQuaternion::identity()
                },
                velocity_m_s: Vector3::zeros(),
                angular_velocity_rad_s: Vector3::zeros(),
            },
        }
    }

    /// The command that exerts no force on a moving handle: no wrench, or
    /// an admittance device's goal moving with the handle (its controller
    /// then pushes neither way), where [`zero`](Self::zero) brakes it.
    pub fn free(&self, state: &DeviceState) -> DeviceCommand {
        match (self.spec.control, self.zero(state)) {
            (
                ControlMode::Admittance,
                DeviceCommand::Goal {
                    position_m,
                    orientation,
                    ..
                },
            ) => DeviceCommand::Goal {
                position_m,
                orientation,
                velocity_m_s: finite_or_zero(&state.velocity_m_s),
                angular_velocity_rad_s: Vector3::zeros(),
            },
            (_, zero) => zero,
        }
    }

    /// The command to send for `requested`, given the device's `state` at
    /// time `now_s`. The output is finite, within the spec and within the
    /// slew limit of the previous output.
    pub fn filter(
        &mut self,
        requested: &DeviceCommand,
        state: &DeviceState,
        now_s: f64,
    ) -> DeviceCommand {
        let dt = match self.last_time_s {
            Some(t) if now_s.is_finite() => (now_s - t).clamp(0.0, 1.0),
            _ => 0.0,
        };
        if now_s.is_finite() {
            self.last_time_s = Some(now_s);
        }
        let zero = self.zero(state);
        let wanted = self.judge(requested, state, now_s, zero);
        let output = self.limit(wanted, dt, zero);
        self.last_output = Some(output);
        output
    }

    /// The command as allowed by faults, trips, deadman and soft start.
    fn judge(
        &mut self,
        requested: &DeviceCommand,
        state: &DeviceState,
        now_s: f64,
        zero: DeviceCommand,
    ) -> DeviceCommand {
        if !command_is_finite(requested) || !state_is_finite(state) {
            if self.latched.is_none() {
                self.trip(now_s, TripCause::NonFinite, true);
            }
            return zero;
        }
        let speed = state.velocity_m_s.norm();
        if speed > self.spec.max_velocity_m_s {
            if self.latched.is_none() {
                self.trip(now_s, TripCause::Overspeed, true);
            }
            return zero;
        }
        if self.latched.is_some() {
            return zero;
        }
        if !self.settings.force_output {
            return self.free(state);
        }
        if let Some(button) = self.settings.deadman_button {
            let held = button < 32 && state.buttons & (1 << button) != 0;
            if !held {
                if !self.deadman_released {
                    self.deadman_released = true;
                    self.trip(now_s, TripCause::Deadman, false);
                }
                self.ramp_start_s = None;
                return zero;
            }
            self.deadman_released = false;
        }
        if self.ramp_start_s.is_none() {
            if state.user_force_n.norm() < self.settings.engage_force_n {
                self.ramp_start_s = Some(now_s);
            } else {
                return zero;
            }
        }
        let ramp = match self.ramp_start_s {
            Some(start) if self.settings.ramp_s > 0.0 => {
                ((now_s - start) / self.settings.ramp_s).clamp(0.0, 1.0)
            }
            _ => 1.0,
        };
        blend(&zero, requested, ramp)
    }

    /// Clamp to the spec, then the slew limit from the previous output.
    fn limit(&self, wanted: DeviceCommand, dt: f64, zero: DeviceCommand) -> DeviceCommand {
        let spec = &self.spec;
        let s = &self.settings;
        let previous = match (self.last_output, wanted) {
            (Some(p @ DeviceCommand::Wrench { .. }), DeviceCommand::Wrench { .. })
            | (Some(p @ DeviceCommand::Goal { .. }), DeviceCommand::Goal { .. }) => p,
            _ => zero,
        };
        match (wanted, previous) {
            (
                DeviceCommand::Wrench {
                    force_n,
                    torque_n_m,
                },
                DeviceCommand::Wrench {
                    force_n: f0,
                    torque_n_m: t0,
                },
            ) => {
                let force = clamp_norm(&force_n, spec.max_force_n);
                let torque = clamp_norm(&torque_n_m, spec.max_torque_n_m);
                DeviceCommand::Wrench {
                    force_n: f0 + clamp_norm(&(force - f0), s.force_slew_n_per_s * dt),
                    torque_n_m: t0 + clamp_norm(&(torque - t0), s.torque_slew_n_m_per_s * dt),
                }
            }
            (
                DeviceCommand::Goal {
                    position_m,
                    orientation,
                    velocity_m_s,
                    angular_velocity_rad_s,
                },
                DeviceCommand::Goal {
                    velocity_m_s: v0, ..
                },
            ) => {
                let velocity = clamp_norm(&velocity_m_s, spec.max_velocity_m_s);
                DeviceCommand::Goal {
                    position_m: spec.workspace.clamp(&position_m),
                    orientation,
                    velocity_m_s: v0 + clamp_norm(&(velocity - v0), s.goal_acceleration_m_s2 * dt),
                    angular_velocity_rad_s,
                }
            }
            _ => zero,
        }
    }

    /// Called once per tick before reading: whether the watchdog fired
    /// (no command for `watchdog_s`), in which case the zero command must
    /// be sent.
    pub fn watchdog_expired(&mut self, now_s: f64) -> bool {
        match self.last_time_s {
            Some(t) if now_s - t > self.settings.watchdog_s => {
                if self.last_output.is_some() {
                    self.trip(now_s, TripCause::Watchdog, false);
                    self.last_output = None;
                    self.ramp_start_s = None;
                }
                true
            }
            _ => false,
        }
    }
}

/// A device behind the safety layer. It is the only way the haptic layer
/// reaches a device: `Safety::new` takes the device by value.
pub struct Safety<D: Device> {
    device: D,
    filter: SafetyFilter,
    last_state: DeviceState,
}

impl<D: Device> Safety<D> {
    /// Wraps `device`; refuses a device spec or settings that fail
    /// validation.
    pub fn new(device: D, settings: SafetySettings) -> Result<Self, SafetySettingsError> {
        let filter = SafetyFilter::new(device.spec().clone(), settings)?;
        Ok(Self {
            device,
            filter,
            last_state: DeviceState::default(),
        })
    }

    /// The filter.
    pub fn filter(&self) -> &SafetyFilter {
        &self.filter
    }

    /// Clears a latched trip and restarts the force ramp.
    pub fn reset(&mut self) {
        self.filter.reset();
    }

    /// Hands every trip since the last call to `sink`, oldest first.
    pub fn drain_events(&mut self, sink: impl FnMut(SafetyEvent)) {
        self.filter.drain_events(sink);
    }

    /// The wrapped device.
    pub fn device(&self) -> &D {
        &self.device
    }

    /// The wrapped device, mutable.
    pub fn device_mut(&mut self) -> &mut D {
        &mut self.device
    }

    /// The wrapped device, without the safety layer (which sends nothing
    /// more: call [`Device::release`] or [`Safety::fail_safe`] first to
    /// leave the device at rest).
    pub fn into_inner(self) -> D {
        self.device
    }

    /// The device could not be read: send the zero command at once (no
    /// slew: zero is always safe) and ramp forces in again once it can.
    pub fn fail_safe(&mut self, now_s: f64) -> Result<(), DeviceError> {
        let zero = self.filter.zero(&self.last_state);
        self.filter.ramp_start_s = None;
        self.filter.last_output = Some(zero);
        // A command was sent: the watchdog counts from here.
        if now_s.is_finite() {
            self.filter.last_time_s = Some(now_s);
        }
        self.device.command(&zero, now_s)
    }
}

impl<D: Device> Device for Safety<D> {
    fn spec(&self) -> &DeviceSpec {
        self.filter.spec()
    }

    fn read(&mut self, now_s: f64) -> Result<DeviceState, DeviceError> {
        if self.filter.watchdog_expired(now_s) {
            let zero = self.filter.zero(&self.last_state);
            self.device.command(&zero, now_s)?;
        }
        let state = self.device.read(now_s)?;
        self.last_state = state;
        Ok(state)
    }

    fn command(&mut self, command: &DeviceCommand, now_s: f64) -> Result<(), DeviceError> {
        let safe = self.filter.filter(command, &self.last_state, now_s);
        self.device.command(&safe, now_s)
    }

    /// Sends the zero command, then disables the device.
    fn release(&mut self, now_s: f64) -> Result<(), DeviceError> {
        let zeroed = self.fail_safe(now_s);
        let released = self.device.release(now_s);
        zeroed.and(released)
    }
}

fn clamp_norm(v: &Vector3<f64>, max: f64) -> Vector3<f64> {
    let n = v.norm();
    if n > max && n > 0.0 {
        v * (max.max(0.0) / n)
    } else {
        *v
    }
}

fn finite_or_zero(v: &Vector3<f64>) -> Vector3<f64> {
    if v.iter().all(|x| x.is_finite()) {
        *v
    } else {
        Vector3::zeros()
    }
}

fn is_finite_quaternion(q: &UnitQuaternion<f64>) -> bool {
    q.coords.iter().all(|x| x.is_finite())
}

fn command_is_finite(c: &DeviceCommand) -> bool {
    let finite = |v: &Vector3<f64>| v.iter().all(|x| x.is_finite());
    match c {
        DeviceCommand::Wrench {
            force_n,
            torque_n_m,
        } => finite(force_n) && finite(torque_n_m),
        DeviceCommand::Goal {
            position_m,
            orientation,
            velocity_m_s,
            angular_velocity_rad_s,
        } => {
            finite(position_m)
                && is_finite_quaternion(orientation)
                && finite(velocity_m_s)
                && finite(angular_velocity_rad_s)
        }
    }
}

fn state_is_finite(s: &DeviceState) -> bool {
    let finite = |v: &Vector3<f64>| v.iter().all(|x| x.is_finite());
    finite(&s.position_m)
        && finite(&s.velocity_m_s)
        && finite(&s.user_force_n)
        && is_finite_quaternion(&s.orientation)
}

/// `from + t (to − from)`, the kinds of `from` and `to` matching (else `from`).
fn blend(from: &DeviceCommand, to: &DeviceCommand, t: f64) -> DeviceCommand {
    match (from, to) {
        (
            DeviceCommand::Wrench { .. },
            DeviceCommand::Wrench {
                force_n,
                torque_n_m,
            },
        ) => DeviceCommand::Wrench {
            force_n: force_n * t,
            torque_n_m: torque_n_m * t,
        },
        (
            DeviceCommand::Goal {
                position_m: p0,
                orientation: q0,
                ..
            },
            DeviceCommand::Goal {
                position_m,
                orientation,
                velocity_m_s,
                angular_velocity_rad_s,
            },
        ) => DeviceCommand::Goal {
            position_m: p0 + (position_m - p0) * t,
            orientation: q0.try_slerp(orientation, t, 1e-9).unwrap_or(*orientation),
            velocity_m_s: velocity_m_s * t,
            angular_velocity_rad_s: angular_velocity_rad_s * t,
        },
        _ => *from,
    }
}
