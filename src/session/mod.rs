//! Session logs: every haptic tick and every event of a run, in an MCAP
//! file with JSON-encoded messages and JSON schemas, so standard MCAP tools
//! (the `mcap` CLI, Foxglove, the Python `mcap` package) read them.
//!
//! Channels: `/tick` ([`TickRecord`], one per haptic tick) and `/event`
//! ([`Event`]: configuration at start, fractures, safety trips, late syncs,
//! dropped records, end of session), and the 3D channels `/scene` and
//! `/tf` in the Foxglove schemas ([`foxglove`]). Message log times are the
//! session clock in nanoseconds.

mod compare;
pub mod foxglove;
mod read;
mod record;

pub use compare::{compare, first_difference, Comparison, ReplaySide, Replayed};
pub use read::{LogSummary, Record, SessionReader};
pub use record::{Recorder, RecorderHandle, RecorderStats};

use serde::{Deserialize, Serialize};

/// One haptic tick: plain numbers, copied into the recorder's queue.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct TickRecord {
    /// Tick number from the session start.
    pub tick: u64,
    /// Session clock at the tick's deadline (s).
    pub time_s: f64,
    /// Handle position the device reported (m).
    pub device_position_m: [f64; 3],
    /// Handle orientation the device reported (quaternion w, x, y, z).
    pub device_orientation_wxyz: [f64; 4],
    /// Handle velocity the device reported (m/s).
    pub device_velocity_m_s: [f64; 3],
    /// The user's force on the handle (N; admittance devices).
    pub user_force_n: [f64; 3],
    /// Button states, one bit per button.
    pub buttons: u32,
    /// The device report's sequence number.
    pub device_sequence: u32,
    /// What was sent: goal position (admittance) or force (impedance).
    pub command: [f64; 3],
    /// Whether `command` is a force (impedance) rather than a goal position.
    pub command_is_force: bool,
    /// Where the scripted hand was (simulated device), for replays.
    pub hand_position_m: [f64; 3],
    /// The proxy's position in the scene (m).
    pub proxy_position_m: [f64; 3],
    /// The proxy's orientation (quaternion w, x, y, z).
    pub proxy_orientation_wxyz: [f64; 4],
    /// The virtual coupling's force on the proxy (N, scene side).
    pub coupling_force_n: [f64; 3],
    /// Period since the previous tick and compute time of this one (µs).
    pub period_us: f32,
    /// This tick's compute time (µs).
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
        /// Session time (s).
        time_s: f64,
        /// Every input of the session (see `SessionConfig` in the command line tool).
        config: serde_json::Value,
    },
    /// A body broke.
    Fracture {
        /// Session time (s).
        time_s: f64,
        /// Haptic tick.
        tick: u64,
        /// The body that broke.
        body: String,
        /// Bodies that replaced it.
        fragments: usize,
        /// Crack area (m²).
        crack_area_m2: f64,
    },
    /// The safety layer tripped.
    SafetyTrip {
        /// Session time (s).
        time_s: f64,
        /// Why it tripped.
        cause: String,
        /// Whether the trip holds until reset.
        latched: bool,
    },
    /// A sync answer came late (real time).
    LateSync {
        /// Session time (s).
        time_s: f64,
        /// Haptic tick.
        tick: u64,
        /// How many ticks the answer was late.
        late_by_ticks: u64,
    },
    /// The device could not be read: forces were zeroed.
    DeviceLost {
        /// Session time (s).
        time_s: f64,
        /// Haptic tick.
        tick: u64,
        /// Why the read failed.
        error: String,
    },
    /// The device answers again after a loss.
    DeviceRestored {
        /// Session time (s).
        time_s: f64,
        /// Haptic tick.
        tick: u64,
        /// How long it had been lost (s).
        lost_for_s: f64,
    },
    /// The session was stopped before its end (a signal).
    Interrupted {
        /// Session time (s).
        time_s: f64,
        /// Haptic tick.
        tick: u64,
    },
    /// Records the recorder could not queue since the last such event.
    Dropped {
        /// Session time (s).
        time_s: f64,
        /// Tick records.
        ticks: u64,
        /// Events.
        events: u64,
    },
    /// The last event of a complete log.
    SessionEnd {
        /// Session time (s).
        time_s: f64,
        /// Tick records.
        ticks: u64,
        /// Tick records dropped over the session.
        dropped_ticks: u64,
        /// Events dropped over the session.
        dropped_events: u64,
    },
    /// The path a closed-loop simulated hand followed (a study's model
    /// participant, who decides each strike from what it felt): known
    /// only at the end, so written then; a replay drives the simulated arm
    /// along it.
    HandPath {
        /// Session time (s).
        time_s: f64,
        /// The path's corners: time (s) and hand position (m, device frame).
        points: Vec<[f64; 4]>,
    },
    /// How a haptic session ended, for replays: hashes of the final global
    /// state and of the proxy's path, and the live bodies.
    Outcome {
        /// Session time (s).
        time_s: f64,
        /// Hash of the final world state.
        state_hash: u64,
        /// Hash of the proxy's position at every tick.
        proxy_path_hash: u64,
        /// Live bodies at the end.
        bodies: usize,
    },
}

impl Event {
    /// Session time of the event (s).
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
            | Event::HandPath { time_s, .. }
            | Event::Outcome { time_s, .. } => *time_s,
        }
    }

    /// The event's kind, as in the log's `kind` field.
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
            Event::HandPath { .. } => "hand_path",
            Event::Outcome { .. } => "outcome",
        }
    }
}

/// Why a log could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The file cannot be created, written or read.
    #[error("session log {path}: {message}")]
    Io {
        /// The log's path.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The file is not a tessera session log, or is damaged.
    #[error("session log {path}: {message}")]
    Format {
        /// The log's path.
        path: String,
        /// What is wrong.
        message: String,
    },
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
