//! Session logs: every haptic tick and every event of a run, in an MCAP
//! file with JSON-encoded messages and JSON schemas, so standard MCAP tools
//! (the `mcap` CLI, Foxglove, the Python `mcap` package) read them.
//!
//! Channels: `/tick` ([`TickRecord`], one per haptic tick) and `/event`
//! ([`Event`]: configuration at start, fractures, safety trips, late syncs,
//! dropped records, end of session). Message log times are the session
//! clock in nanoseconds.

mod compare;
mod read;
mod record;

pub use compare::{compare, first_difference, Comparison, ReplaySide, Replayed};
pub use read::{LogSummary, Record, SessionReader};
pub use record::{Recorder, RecorderHandle, RecorderStats};

use serde::{Deserialize, Serialize};

/// One haptic tick: plain numbers, copied into the recorder's queue.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct TickRecord {
    pub tick: u64,
    /// Session clock at the tick's deadline (s).
    pub time_s: f64,
    pub device_position_m: [f64; 3],
    pub device_orientation_wxyz: [f64; 4],
    pub device_velocity_m_s: [f64; 3],
    pub user_force_n: [f64; 3],
    pub buttons: u32,
    pub device_sequence: u32,
    /// What was sent: goal position (admittance) or force (impedance).
    pub command: [f64; 3],
    pub command_is_force: bool,
    /// Where the scripted hand was (simulated device), for replays.
    pub hand_position_m: [f64; 3],
    pub proxy_position_m: [f64; 3],
    pub proxy_orientation_wxyz: [f64; 4],
    pub coupling_force_n: [f64; 3],
    /// Period since the previous tick and compute time of this one (µs).
    pub period_us: f32,
    pub compute_us: f32,
}

impl TickRecord {
    /// A record of what the device reported at `tick`; the caller fills in
    /// the command, hand, proxy and timing.
    pub fn of_device(tick: u64, time_s: f64, state: &crate::device::DeviceState) -> Self {
        let q = state.orientation.quaternion();
        Self {
            tick,
            time_s,
            device_position_m: state.position_m.into(),
            device_orientation_wxyz: [q.w, q.i, q.j, q.k],
            device_velocity_m_s: state.velocity_m_s.into(),
            user_force_n: state.user_force_n.into(),
            buttons: state.buttons,
            device_sequence: state.sequence,
            ..Self::default()
        }
    }
}

/// Something that happened, logged on `/event`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// The run's configuration, first message of every log.
    Configuration {
        time_s: f64,
        config: serde_json::Value,
    },
    Fracture {
        time_s: f64,
        tick: u64,
        body: String,
        fragments: usize,
        crack_area_m2: f64,
    },
    SafetyTrip {
        time_s: f64,
        cause: String,
        latched: bool,
    },
    LateSync {
        time_s: f64,
        tick: u64,
        late_by_ticks: u64,
    },
    /// The device could not be read: forces were zeroed.
    DeviceLost {
        time_s: f64,
        tick: u64,
        error: String,
    },
    /// The device answers again after a loss.
    DeviceRestored {
        time_s: f64,
        tick: u64,
        lost_for_s: f64,
    },
    /// The session was stopped before its end (a signal).
    Interrupted { time_s: f64, tick: u64 },
    /// Records the recorder could not queue since the last such event.
    Dropped {
        time_s: f64,
        ticks: u64,
        events: u64,
    },
    SessionEnd {
        time_s: f64,
        ticks: u64,
        dropped_ticks: u64,
        dropped_events: u64,
    },
    /// How a haptic session ended, for replays: hashes of the final global
    /// state and of the proxy's path, and the live bodies.
    Outcome {
        time_s: f64,
        state_hash: u64,
        proxy_path_hash: u64,
        bodies: usize,
    },
}

impl Event {
    pub fn time_s(&self) -> f64 {
        match self {
            Event::Configuration { time_s, .. }
            | Event::Fracture { time_s, .. }
            | Event::SafetyTrip { time_s, .. }
            | Event::LateSync { time_s, .. }
            | Event::DeviceLost { time_s, .. }
            | Event::DeviceRestored { time_s, .. }
            | Event::Interrupted { time_s, .. }
            | Event::Dropped { time_s, .. }
            | Event::SessionEnd { time_s, .. }
            | Event::Outcome { time_s, .. } => *time_s,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Event::Configuration { .. } => "configuration",
            Event::Fracture { .. } => "fracture",
            Event::SafetyTrip { .. } => "safety_trip",
            Event::LateSync { .. } => "late_sync",
            Event::DeviceLost { .. } => "device_lost",
            Event::DeviceRestored { .. } => "device_restored",
            Event::Interrupted { .. } => "interrupted",
            Event::Dropped { .. } => "dropped",
            Event::SessionEnd { .. } => "session_end",
            Event::Outcome { .. } => "outcome",
        }
    }
}

/// Why a log could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("session log {path}: {message}")]
    Io { path: String, message: String },
    #[error("session log {path}: {message}")]
    Format { path: String, message: String },
}

pub(crate) const TICK_TOPIC: &str = "/tick";
pub(crate) const EVENT_TOPIC: &str = "/event";

/// JSON schema of [`TickRecord`].
pub(crate) const TICK_SCHEMA: &str = r#"{
  "type": "object",
  "title": "tessera.TickRecord",
  "properties": {
    "tick": {"type": "integer"},
    "time_s": {"type": "number"},
    "device_position_m": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3},
    "device_orientation_wxyz": {"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4},
    "device_velocity_m_s": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3},
    "user_force_n": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3},
    "buttons": {"type": "integer"},
    "device_sequence": {"type": "integer"},
    "command": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3},
    "command_is_force": {"type": "boolean"},
    "hand_position_m": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3},
    "proxy_position_m": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3},
    "proxy_orientation_wxyz": {"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4},
    "coupling_force_n": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3},
    "period_us": {"type": "number"},
    "compute_us": {"type": "number"}
  },
  "required": ["tick", "time_s"]
}"#;

/// JSON schema of [`Event`].
pub(crate) const EVENT_SCHEMA: &str = r#"{
  "type": "object",
  "title": "tessera.Event",
  "properties": {
    "kind": {"type": "string", "enum": ["configuration", "fracture", "safety_trip", "late_sync", "device_lost", "device_restored", "interrupted", "dropped", "session_end", "outcome"]},
    "time_s": {"type": "number"}
  },
  "required": ["kind", "time_s"]
}"#;
