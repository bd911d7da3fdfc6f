//! Reading session logs back, in order, up to the last complete record of a
//! truncated file. Every chunk's CRC is checked: a damaged or edited file
//! is refused. Record lengths are checked
//! against the file by the MCAP reader, which reads from the file's bytes
//! in memory (no length in the file makes it allocate beyond them).

use super::{Event, SessionError, TickRecord, EVENT_TOPIC, TICK_TOPIC};
use serde::Serialize;
use std::path::Path;

/// One message of a session log.
// Nearly every record is a tick: boxing the large variant would add an
// allocation per tick to save space only on the rare events.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// One haptic tick.
    Tick(TickRecord),
    /// A session event.
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
    /// Reads the whole log at `path`, checking chunk CRCs; a truncated log is read as far as it goes (see `truncated`).
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
        let mut records = Vec::new();
        let mut truncated = None;
        let mut topics = std::collections::HashMap::new();
        let mut messages = Messages::new(bytes);
        loop {
            // mcap 0.26 subtracts a record's length from its chunk's
            // remaining bytes unchecked (a panic with overflow checks; found
            // by `fuzz/fuzz_targets/mcap.rs`): the log ends there.
            let next =
                crate::contained::contained(std::panic::AssertUnwindSafe(|| messages.next()));
            let Some(next) = next else {
                truncated = Some(format!(
                    "a chunk's records overrun it near byte {} (the file was damaged)",
                    messages.offset()
                ));
                break;
            };
            let record = match next {
                None => break,
                Some(Ok(record)) => record,
                Some(Err(mcap::McapError::BadChunkCrc { saved, calculated })) => {
                    return Err(format(format!(
                        "a chunk's CRC is {calculated:08x}, not the {saved:08x} written: \
                         the file was damaged or edited after it was written"
                    )))
                }
                Some(Err(mcap::McapError::BadMagic)) => {
                    return Err(format(
                        "not an MCAP file (no MCAP magic at its start)".into(),
                    ))
                }
                Some(Err(
                    mcap::McapError::ChunkTooLarge(length)
                    | mcap::McapError::RecordTooLarge { len: length, .. },
                )) => {
                    truncated = Some(format!(
                        "a record near byte {} declares {}, more than the file holds \
                         (the file ends early or was damaged)",
                        messages.offset(),
                        crate::limits::human_bytes(length)
                    ));
                    break;
                }
                Some(Err(e)) => {
                    truncated = Some(e.to_string());
                    break;
                }
            };
            let (header, data) = match record {
                mcap::records::Record::Channel(channel) => {
                    topics.insert(channel.id, channel.topic);
                    continue;
                }
                mcap::records::Record::Message { header, data } => (header, data),
                // With the end magic optional, the data section's end is the
                // log's end (a chunk holds only schemas, channels and
                // messages).
                mcap::records::Record::DataEnd(_) => break,
                _ => continue,
            };
            let topic = topics.get(&header.channel_id).map(String::as_str);
            let parsed = match topic {
                Some(TICK_TOPIC) => serde_json::from_slice(&data).map(Record::Tick),
                Some(EVENT_TOPIC) => serde_json::from_slice(&data).map(Record::Event),
                Some(_) => continue,
                None => {
                    return Err(format(format!(
                        "message {} names channel {}, which the log never declares",
                        header.sequence, header.channel_id
                    )))
                }
            };
            match parsed {
                Ok(r) => records.push(r),
                Err(e) => {
                    return Err(format(format!(
                        "message {} on {}: {e}",
                        header.sequence,
                        topic.unwrap_or_default()
                    )))
                }
            }
        }
        if records.is_empty() && truncated.is_some() {
            return Err(format(format!(
                "no complete record: {}",
                truncated.unwrap_or_default()
            )));
        }
        Ok(Self { records, truncated })
    }

    /// Every record, in file order (ticks ascending).
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// The tick records, in order.
    pub fn ticks(&self) -> impl Iterator<Item = &TickRecord> {
        self.records.iter().filter_map(|r| match r {
            Record::Tick(t) => Some(t),
            Record::Event(_) => None,
        })
    }

    /// The events, in order.
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
    /// Simulated time the log covers (s).
    pub duration_s: f64,
    /// Tick records.
    pub ticks: u64,
    /// Ticks the recorder dropped (queue full).
    pub dropped_ticks: u64,
    /// Events the recorder dropped.
    pub dropped_events: u64,
    /// Events by kind.
    pub events: std::collections::BTreeMap<String, u64>,
    /// Whether the log ends with its end-of-session event.
    pub complete: bool,
    /// Why the log ends early, if it does.
    pub truncated: Option<String>,
}

/// The records of an MCAP file in memory, chunks opened, each chunk's CRC
/// checked at its end (a mismatch refuses the whole log), the end magic
/// optional: a truncated log ends anywhere, and the records of its last,
/// incomplete chunk are read up to the cut.
///
/// This drives mcap's sans-IO reader itself rather than `MessageStream`,
/// because only the sans-IO options can cap record lengths: without the
/// cap, a length field near 2⁶⁴ inside a chunk overflows mcap 0.26's
/// arithmetic (found by `fuzz/fuzz_targets/mcap.rs`). No record can be
/// longer than the file.
struct Messages<'a> {
    length: usize,
    unread: &'a [u8],
    reader: mcap::sans_io::LinearReader,
}

impl<'a> Messages<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        let options = mcap::sans_io::LinearReaderOptions::default()
            .with_skip_end_magic(true)
            .with_validate_chunk_crcs(true)
            .with_record_length_limit(bytes.len());
        Self {
            length: bytes.len(),
            unread: bytes,
            reader: mcap::sans_io::LinearReader::new_with_options(options),
        }
    }

    /// Bytes handed to the reader so far.
    fn offset(&self) -> usize {
        self.length - self.unread.len()
    }

    fn next(&mut self) -> Option<mcap::McapResult<mcap::records::Record<'static>>> {
        while let Some(event) = self.reader.next_event() {
            match event {
                Ok(mcap::sans_io::LinearReadEvent::ReadRequest(wanted)) => {
                    let length = wanted.min(self.unread.len());
                    self.reader
                        .insert(length)
                        .copy_from_slice(&self.unread[..length]);
                    self.reader.notify_read(length);
                    self.unread = &self.unread[length..];
                }
                Ok(mcap::sans_io::LinearReadEvent::Record { data, opcode }) => {
                    use mcap::records::op;
                    // Only what a session log is read for is parsed: mcap
                    // 0.26 slices some other records (attachments) before
                    // checking their length, which panics on a damaged file
                    // (found by `fuzz/fuzz_targets/mcap.rs`).
                    if matches!(opcode, op::CHANNEL | op::MESSAGE | op::DATA_END) {
                        return Some(mcap::parse_record(opcode, data).map(|r| r.into_owned()));
                    }
                }
                Err(e) => return Some(Err(e)),
            }
        }
        None
    }
}
