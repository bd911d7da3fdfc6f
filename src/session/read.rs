//! Reading session logs back, in order, up to the last complete chunk of a
//! truncated file. Every chunk's CRC is checked: a damaged or edited file
//! is refused. Record lengths are checked
//! against the file by the MCAP reader, which reads from the file's bytes
//! in memory (no length in the file makes it allocate beyond them).

use super::{Event, SessionError, TickRecord, EVENT_TOPIC, TICK_TOPIC};
use serde::Serialize;
use std::path::Path;

/// One message of a session log.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    Tick(TickRecord),
    Event(Event),
}

/// A session log read into memory.
#[derive(Debug, Clone)]
pub struct SessionReader {
    records: Vec<Record>,
    /// Why reading stopped early (a truncated file, a chunk whose CRC does
    /// not match), if it did.
    pub truncated: Option<String>,
}

impl SessionReader {
    pub fn open(path: &Path) -> Result<Self, SessionError> {
        let io = |message: String| SessionError::Io {
            path: path.display().to_string(),
            message,
        };
        // The file's bytes and the records read from them (a record in
        // memory is smaller than its JSON text).
        let length = std::fs::metadata(path)
            .map_err(|e| io(e.to_string()))?
            .len();
        crate::limits::check_memory(
            || format!("reading a {} log", crate::limits::human_bytes(length)),
            2.0 * length as f64,
        )
        .map_err(|e| io(e.to_string()))?;
        let bytes = std::fs::read(path).map_err(|e| io(e.to_string()))?;
        Self::from_bytes(&bytes, &path.display().to_string())
    }

    /// Reads a log from memory; `name` appears in errors.
    pub fn from_bytes(bytes: &[u8], name: &str) -> Result<Self, SessionError> {
        let format = |message: String| SessionError::Format {
            path: name.to_owned(),
            message,
        };
        let stream = mcap::MessageStream::new_with_options(
            bytes,
            mcap::read::Options::IgnoreEndMagic | mcap::read::Options::ValidateChunkCrcs,
        )
        .map_err(|e| format(format!("not an MCAP file: {e}")))?;
        let mut records = Vec::new();
        let mut truncated = None;
        for message in stream {
            let message = match message {
                Ok(m) => m,
                Err(mcap::McapError::BadChunkCrc { saved, calculated }) => {
                    return Err(format(format!(
                        "a chunk's CRC is {calculated:08x}, not the {saved:08x} written: \
                         the file was damaged or edited after it was written"
                    )))
                }
                Err(e) => {
                    truncated = Some(e.to_string());
                    break;
                }
            };
            let record = match message.channel.topic.as_str() {
                TICK_TOPIC => serde_json::from_slice(&message.data).map(Record::Tick),
                EVENT_TOPIC => serde_json::from_slice(&message.data).map(Record::Event),
                _ => continue,
            };
            match record {
                Ok(r) => records.push(r),
                Err(e) => {
                    return Err(format(format!(
                        "message {} on {}: {e}",
                        message.sequence, message.channel.topic
                    )))
                }
            }
        }
        if records.is_empty() && truncated.is_some() {
            return Err(format(format!(
                "no complete chunk: {}",
                truncated.unwrap_or_default()
            )));
        }
        Ok(Self { records, truncated })
    }

    /// Every record, in file order (ticks ascending).
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    pub fn ticks(&self) -> impl Iterator<Item = &TickRecord> {
        self.records.iter().filter_map(|r| match r {
            Record::Tick(t) => Some(t),
            Record::Event(_) => None,
        })
    }

    pub fn events(&self) -> impl Iterator<Item = &Event> {
        self.records.iter().filter_map(|r| match r {
            Record::Event(e) => Some(e),
            Record::Tick(_) => None,
        })
    }

    /// The recorded hand path (simulated-device sessions), to drive the
    /// simulated arm again in a replay.
    pub fn hand_trajectory(&self) -> crate::device::HandTrajectory {
        crate::device::HandTrajectory::from_samples(
            self.ticks()
                .map(|t| (t.time_s, nalgebra::Vector3::from(t.hand_position_m))),
        )
    }

    /// Duration, counts and events of the log.
    pub fn summary(&self) -> LogSummary {
        let mut ticks = 0u64;
        let (mut first, mut last) = (f64::INFINITY, f64::NEG_INFINITY);
        for t in self.ticks() {
            ticks += 1;
            first = first.min(t.time_s);
            last = last.max(t.time_s);
        }
        let mut events = std::collections::BTreeMap::new();
        let (mut dropped_ticks, mut dropped_events) = (0, 0);
        let mut complete = false;
        for e in self.events() {
            *events.entry(e.kind().to_owned()).or_insert(0u64) += 1;
            match e {
                Event::Dropped { ticks, events, .. } => {
                    dropped_ticks += ticks;
                    dropped_events += events;
                }
                Event::SessionEnd { .. } => complete = true,
                _ => {}
            }
        }
        LogSummary {
            duration_s: if ticks > 0 { last - first } else { 0.0 },
            ticks,
            dropped_ticks,
            dropped_events,
            events,
            complete,
            truncated: self.truncated.clone(),
        }
    }
}

/// What `tessera log info` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogSummary {
    pub duration_s: f64,
    pub ticks: u64,
    pub dropped_ticks: u64,
    pub dropped_events: u64,
    /// Events by kind.
    pub events: std::collections::BTreeMap<String, u64>,
    /// Whether the log ends with its end-of-session event.
    pub complete: bool,
    pub truncated: Option<String>,
}
