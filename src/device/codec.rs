//! Reports ↔ device states and commands, as a [`DeviceProfile`] lays them
//! out. Decoding never panics: any byte string is a state or an error.

use super::profile::{
    DeviceProfile, FieldType, InputQuantity as In, OutputQuantity as Out, ReportLayout,
};
use super::{DeviceCommand, DeviceState};
use nalgebra::{Quaternion, UnitQuaternion, Vector3};

/// Why a report could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// The report is not as long as the profile's layout.
    #[error("report of {got} bytes, expected {expected}")]
    Length {
        /// Bytes received.
        got: usize,
        /// Bytes the profile's layout has.
        expected: usize,
    },
    /// The report's first byte is not the profile's report id.
    #[error("report id {got}, expected {expected}")]
    ReportId {
        /// Id received.
        got: u8,
        /// Id the profile expects.
        expected: u8,
    },
    /// A field decoded to NaN or an infinity; its quantity's name.
    #[error("field {0} is not a finite number")]
    NonFinite(&'static str),
    /// The orientation's norm is far from 1; the norm, formatted.
    #[error("orientation is not a unit quaternion (norm {0:.3})")]
    Orientation(String),
}

/// Encoder and decoder for one profile's reports.
#[derive(Debug, Clone)]
pub struct ReportCodec {
    input: ReportLayout<In>,
    output: ReportLayout<Out>,
}

/// What a decoded input report says besides the state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decoded {
    /// The device state the report carries.
    pub state: DeviceState,
    /// The device's fault code (0: none).
    pub status: u32,
}

impl ReportCodec {
    /// A codec for `profile`'s input and output layouts.
    pub fn new(profile: &DeviceProfile) -> Self {
        Self {
            input: profile.input.clone(),
            output: profile.output.clone(),
        }
    }

    /// Bytes of an input report.
    pub fn input_length(&self) -> usize {
        self.input.length
    }

    /// Bytes of an output report.
    pub fn output_length(&self) -> usize {
        self.output.length
    }

    /// Decodes an input report. Absent fields keep their defaults (an
    /// absent orientation is the identity).
    pub fn decode(&self, report: &[u8]) -> Result<Decoded, CodecError> {
        let layout = &self.input;
        check_header(layout, report)?;
        let mut state = DeviceState::default();
        let mut status = 0u32;
        let mut quaternion = [1.0, 0.0, 0.0, 0.0];
        let mut has_orientation = false;
        for field in &layout.fields {
            let raw = read_raw(report, field.offset, field.kind);
            let value = raw * field.scale;
            if !value.is_finite() {
                return Err(CodecError::NonFinite(input_name(field.quantity)));
            }
            let integer = raw.clamp(0.0, u32::MAX as f64) as u32;
            match field.quantity {
                In::PositionX => state.position_m.x = value,
                In::PositionY => state.position_m.y = value,
                In::PositionZ => state.position_m.z = value,
                In::OrientationW => (quaternion[0], has_orientation) = (value, true),
                In::OrientationX => (quaternion[1], has_orientation) = (value, true),
                In::OrientationY => (quaternion[2], has_orientation) = (value, true),
                In::OrientationZ => (quaternion[3], has_orientation) = (value, true),
                In::VelocityX => state.velocity_m_s.x = value,
                In::VelocityY => state.velocity_m_s.y = value,
                In::VelocityZ => state.velocity_m_s.z = value,
                In::AngularVelocityX => state.angular_velocity_rad_s.x = value,
                In::AngularVelocityY => state.angular_velocity_rad_s.y = value,
                In::AngularVelocityZ => state.angular_velocity_rad_s.z = value,
                In::ForceX => state.user_force_n.x = value,
                In::ForceY => state.user_force_n.y = value,
                In::ForceZ => state.user_force_n.z = value,
                In::TorqueX => state.user_torque_n_m.x = value,
                In::TorqueY => state.user_torque_n_m.y = value,
                In::TorqueZ => state.user_torque_n_m.z = value,
                In::Buttons => state.buttons = integer,
                In::Status => status = integer,
                In::Sequence => state.sequence = integer,
                In::Timestamp => {
                    state.device_time_us = (value * 1e6).clamp(0.0, u64::MAX as f64) as u64
                }
            }
        }
        if has_orientation {
            let q = Quaternion::new(quaternion[0], quaternion[1], quaternion[2], quaternion[3]);
            // Quantised unit quaternions are off by the quantum; a wrong one is far off.
            if (q.norm() - 1.0).abs() > 0.05 {
                return Err(CodecError::Orientation(format!("{}", q.norm())));
            }
            state.orientation = UnitQuaternion::from_quaternion(q);
        }
        Ok(Decoded { state, status })
    }

    /// Encodes `command` into `report` (resized to the output length; no
    /// allocation once it has that capacity). Values outside a field's
    /// range saturate.
    pub fn encode(
        &self,
        command: &DeviceCommand,
        enable: bool,
        sequence: u32,
        report: &mut Vec<u8>,
    ) {
        let layout = &self.output;
        start_report(layout, report);
        let zero = Vector3::zeros();
        let (goal_p, goal_q, goal_v, goal_w, force, torque) = match command {
            DeviceCommand::Goal {
                position_m,
                orientation,
                velocity_m_s,
                angular_velocity_rad_s,
            } => (
                *position_m,
                *orientation,
                *velocity_m_s,
                *angular_velocity_rad_s,
                zero,
                zero,
            ),
            DeviceCommand::Wrench {
                force_n,
                torque_n_m,
            } => (
                zero,
                UnitQuaternion::identity(),
                zero,
                zero,
                *force_n,
                *torque_n_m,
            ),
        };
        for field in &layout.fields {
            let value = match field.quantity {
                Out::GoalPositionX => goal_p.x,
                Out::GoalPositionY => goal_p.y,
                Out::GoalPositionZ => goal_p.z,
                Out::GoalOrientationW => goal_q.w,
                Out::GoalOrientationX => goal_q.i,
                Out::GoalOrientationY => goal_q.j,
                Out::GoalOrientationZ => goal_q.k,
                Out::GoalVelocityX => goal_v.x,
                Out::GoalVelocityY => goal_v.y,
                Out::GoalVelocityZ => goal_v.z,
                Out::GoalAngularVelocityX => goal_w.x,
                Out::GoalAngularVelocityY => goal_w.y,
                Out::GoalAngularVelocityZ => goal_w.z,
                Out::ForceX => force.x,
                Out::ForceY => force.y,
                Out::ForceZ => force.z,
                Out::TorqueX => torque.x,
                Out::TorqueY => torque.y,
                Out::TorqueZ => torque.z,
                Out::Enable => f64::from(u8::from(enable)) * field.scale,
                Out::Sequence => f64::from(sequence) * field.scale,
            };
            write_raw(report, field.offset, field.kind, value / field.scale);
        }
    }

    /// Encodes a state as the device would send it (for simulated and
    /// in-memory devices, and golden tests).
    pub fn encode_state(&self, state: &DeviceState, status: u32, report: &mut Vec<u8>) {
        let layout = &self.input;
        start_report(layout, report);
        let q = state.orientation;
        for field in &layout.fields {
            let value = match field.quantity {
                In::PositionX => state.position_m.x,
                In::PositionY => state.position_m.y,
                In::PositionZ => state.position_m.z,
                In::OrientationW => q.w,
                In::OrientationX => q.i,
                In::OrientationY => q.j,
                In::OrientationZ => q.k,
                In::VelocityX => state.velocity_m_s.x,
                In::VelocityY => state.velocity_m_s.y,
                In::VelocityZ => state.velocity_m_s.z,
                In::AngularVelocityX => state.angular_velocity_rad_s.x,
                In::AngularVelocityY => state.angular_velocity_rad_s.y,
                In::AngularVelocityZ => state.angular_velocity_rad_s.z,
                In::ForceX => state.user_force_n.x,
                In::ForceY => state.user_force_n.y,
                In::ForceZ => state.user_force_n.z,
                In::TorqueX => state.user_torque_n_m.x,
                In::TorqueY => state.user_torque_n_m.y,
                In::TorqueZ => state.user_torque_n_m.z,
                In::Buttons => f64::from(state.buttons) * field.scale,
                In::Status => f64::from(status) * field.scale,
                In::Sequence => f64::from(state.sequence) * field.scale,
                In::Timestamp => state.device_time_us as f64 * 1e-6,
            };
            write_raw(report, field.offset, field.kind, value / field.scale);
        }
    }

    /// Decodes an output report back into (command fields, enable,
    /// sequence): what a device would see. Goal fields present → `Goal`.
    pub fn decode_command(&self, report: &[u8]) -> Result<(DeviceCommand, bool, u32), CodecError> {
        let layout = &self.output;
        check_header(layout, report)?;
        let (mut p, mut v, mut w, mut f, mut t) = (
            Vector3::zeros(),
            Vector3::zeros(),
            Vector3::zeros(),
            Vector3::zeros(),
            Vector3::zeros(),
        );
        let mut q = [1.0, 0.0, 0.0, 0.0];
        let (mut enable, mut sequence, mut goal) = (false, 0u32, false);
        for field in &layout.fields {
            let raw = read_raw(report, field.offset, field.kind);
            let value = raw * field.scale;
            if !value.is_finite() {
                return Err(CodecError::NonFinite("output field"));
            }
            match field.quantity {
                Out::GoalPositionX => (p.x, goal) = (value, true),
                Out::GoalPositionY => (p.y, goal) = (value, true),
                Out::GoalPositionZ => (p.z, goal) = (value, true),
                Out::GoalOrientationW => q[0] = value,
                Out::GoalOrientationX => q[1] = value,
                Out::GoalOrientationY => q[2] = value,
                Out::GoalOrientationZ => q[3] = value,
                Out::GoalVelocityX => v.x = value,
                Out::GoalVelocityY => v.y = value,
                Out::GoalVelocityZ => v.z = value,
                Out::GoalAngularVelocityX => w.x = value,
                Out::GoalAngularVelocityY => w.y = value,
                Out::GoalAngularVelocityZ => w.z = value,
                Out::ForceX => f.x = value,
                Out::ForceY => f.y = value,
                Out::ForceZ => f.z = value,
                Out::TorqueX => t.x = value,
                Out::TorqueY => t.y = value,
                Out::TorqueZ => t.z = value,
                Out::Enable => enable = raw != 0.0,
                Out::Sequence => sequence = raw.clamp(0.0, u32::MAX as f64) as u32,
            }
        }
        let command = if goal {
            let quaternion = Quaternion::new(q[0], q[1], q[2], q[3]);
            DeviceCommand::Goal {
                position_m: p,
                orientation: if quaternion.norm() > 0.5 {
                    UnitQuaternion::from_quaternion(quaternion)
                } else {
                    UnitQuaternion::identity()
                },
                velocity_m_s: v,
                angular_velocity_rad_s: w,
            }
        } else {
            DeviceCommand::Wrench {
                force_n: f,
                torque_n_m: t,
            }
        };
        Ok((command, enable, sequence))
    }
}

/// The length and report id every report of `layout` has.
fn check_header<Q>(layout: &ReportLayout<Q>, report: &[u8]) -> Result<(), CodecError> {
    if report.len() != layout.length {
        return Err(CodecError::Length {
            got: report.len(),
            expected: layout.length,
        });
    }
    if report[0] != layout.report_id {
        return Err(CodecError::ReportId {
            got: report[0],
            expected: layout.report_id,
        });
    }
    Ok(())
}

/// `report` zeroed to `layout`'s length, its report id set (no allocation
/// once it has the capacity).
fn start_report<Q>(layout: &ReportLayout<Q>, report: &mut Vec<u8>) {
    report.clear();
    report.resize(layout.length, 0);
    report[0] = layout.report_id;
}

fn input_name(q: In) -> &'static str {
    match q {
        In::PositionX | In::PositionY | In::PositionZ => "position",
        In::OrientationW | In::OrientationX | In::OrientationY | In::OrientationZ => "orientation",
        In::VelocityX | In::VelocityY | In::VelocityZ => "velocity",
        In::AngularVelocityX | In::AngularVelocityY | In::AngularVelocityZ => "angular_velocity",
        In::ForceX | In::ForceY | In::ForceZ => "force",
        In::TorqueX | In::TorqueY | In::TorqueZ => "torque",
        In::Buttons => "buttons",
        In::Status => "status",
        In::Sequence => "sequence",
        In::Timestamp => "timestamp",
    }
}

/// The raw number at `offset` (bounds checked by profile validation and
/// the length check; out of range reads give 0 rather than panicking).
fn read_raw(report: &[u8], offset: usize, kind: FieldType) -> f64 {
    let Some(bytes) = report.get(offset..offset + kind.size()) else {
        return 0.0;
    };
    let b2 = || [bytes[0], bytes[1]];
    let b4 = || [bytes[0], bytes[1], bytes[2], bytes[3]];
    match kind {
        FieldType::U8 => f64::from(bytes[0]),
        FieldType::I16le => f64::from(i16::from_le_bytes(b2())),
        FieldType::I16be => f64::from(i16::from_be_bytes(b2())),
        FieldType::U16le => f64::from(u16::from_le_bytes(b2())),
        FieldType::U16be => f64::from(u16::from_be_bytes(b2())),
        FieldType::I32le => f64::from(i32::from_le_bytes(b4())),
        FieldType::I32be => f64::from(i32::from_be_bytes(b4())),
        FieldType::U32le => f64::from(u32::from_le_bytes(b4())),
        FieldType::U32be => f64::from(u32::from_be_bytes(b4())),
        FieldType::F32le => f64::from(f32::from_le_bytes(b4())),
        FieldType::F32be => f64::from(f32::from_be_bytes(b4())),
    }
}

/// Writes `raw` at `offset`, rounded and saturated for integer types
/// (non-finite values write 0).
fn write_raw(report: &mut [u8], offset: usize, kind: FieldType, raw: f64) {
    let Some(bytes) = report.get_mut(offset..offset + kind.size()) else {
        return;
    };
    let raw = if raw.is_finite() { raw } else { 0.0 };
    let r = raw.round();
    match kind {
        FieldType::U8 => bytes[0] = r.clamp(0.0, 255.0) as u8,
        FieldType::I16le => {
            bytes.copy_from_slice(&(r.clamp(-32768.0, 32767.0) as i16).to_le_bytes())
        }
        FieldType::I16be => {
            bytes.copy_from_slice(&(r.clamp(-32768.0, 32767.0) as i16).to_be_bytes())
        }
        FieldType::U16le => bytes.copy_from_slice(&(r.clamp(0.0, 65535.0) as u16).to_le_bytes()),
        FieldType::U16be => bytes.copy_from_slice(&(r.clamp(0.0, 65535.0) as u16).to_be_bytes()),
        FieldType::I32le => {
            bytes.copy_from_slice(&(r.clamp(i32::MIN as f64, i32::MAX as f64) as i32).to_le_bytes())
        }
        FieldType::I32be => {
            bytes.copy_from_slice(&(r.clamp(i32::MIN as f64, i32::MAX as f64) as i32).to_be_bytes())
        }
        FieldType::U32le => {
            bytes.copy_from_slice(&(r.clamp(0.0, u32::MAX as f64) as u32).to_le_bytes())
        }
        FieldType::U32be => {
            bytes.copy_from_slice(&(r.clamp(0.0, u32::MAX as f64) as u32).to_be_bytes())
        }
        FieldType::F32le => bytes.copy_from_slice(&(raw as f32).to_le_bytes()),
        FieldType::F32be => bytes.copy_from_slice(&(raw as f32).to_be_bytes()),
    }
}
