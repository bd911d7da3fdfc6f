//! The recorder: a writer thread fed through bounded lock-free queues, so
//! the haptic thread's `tick()` is one non-blocking push (a full queue
//! drops the record and counts it).

use super::foxglove::{SceneLog, SCENE_SCHEMA, SCENE_TOPIC, TRANSFORMS_SCHEMA, TRANSFORMS_TOPIC};
use super::{Event, SessionError, TickRecord, EVENT_SCHEMA, EVENT_TOPIC, TICK_SCHEMA, TICK_TOPIC};
use crossbeam_queue::ArrayQueue;
use std::collections::BTreeMap;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Ticks the queue holds: 4 s at 1 kHz.
const TICK_QUEUE: usize = 4096;
const EVENT_QUEUE: usize = 1024;
/// 3D-channel messages the queue holds: 8 s at 30 per second.
const SCENE_QUEUE: usize = 256;
/// A chunk is closed and flushed at least this often, so a crash loses at
/// most this much of the log.
const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// The writer thread's pause when the queues are empty.
const IDLE: Duration = Duration::from_millis(2);

struct Queues {
    ticks: ArrayQueue<TickRecord>,
    events: ArrayQueue<Event>,
    scenes: ArrayQueue<SceneLog>,
    dropped_ticks: AtomicU64,
    dropped_events: AtomicU64,
    stop: AtomicBool,
    last_time_s: AtomicU64,
}

/// The producer side, cheap to clone; safe to call from the haptic thread.
#[derive(Clone)]
pub struct RecorderHandle {
    queues: Arc<Queues>,
}

impl RecorderHandle {
    /// Queues a tick; `false` (and a counted drop) if the queue is full.
    pub fn tick(&self, record: TickRecord) -> bool {
        self.queues
            .last_time_s
            .store(record.time_s.to_bits(), Ordering::Relaxed);
        let queued = self.queues.ticks.push(record).is_ok();
        if !queued {
            self.queues.dropped_ticks.fetch_add(1, Ordering::Relaxed);
        }
        queued
    }

    /// Queues an event; `false` (and a counted drop) if the queue is full.
    pub fn event(&self, event: Event) -> bool {
        let queued = self.queues.events.push(event).is_ok();
        if !queued {
            self.queues.dropped_events.fetch_add(1, Ordering::Relaxed);
        }
        queued
    }

    /// Queues a message of the 3D channels (`/scene`, `/tf`); `false` (and
    /// a counted event drop) if the queue is full.
    pub fn scene(&self, message: SceneLog) -> bool {
        let queued = self.queues.scenes.push(message).is_ok();
        if !queued {
            self.queues.dropped_events.fetch_add(1, Ordering::Relaxed);
        }
        queued
    }
}

/// What the recorder wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct RecorderStats {
    /// Tick records written.
    pub ticks: u64,
    /// Events written.
    pub events: u64,
    /// Tick records dropped (queue full).
    pub dropped_ticks: u64,
    /// Events dropped (queue full).
    pub dropped_events: u64,
    /// MCAP chunks written.
    pub chunks_flushed: u64,
}

/// A session log being written.
pub struct Recorder {
    path: PathBuf,
    handle: RecorderHandle,
    thread: Option<JoinHandle<Result<RecorderStats, SessionError>>>,
}

impl Recorder {
    /// Creates `path` and starts the writer thread; `config` is logged as
    /// the first event.
    pub fn create(path: &Path, config: serde_json::Value) -> Result<Self, SessionError> {
        let io = |e: &dyn std::fmt::Display| SessionError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| io(&e))?;
        }
        let file = std::fs::File::create(path).map_err(|e| io(&e))?;
        let queues = Arc::new(Queues {
            ticks: ArrayQueue::new(TICK_QUEUE),
            events: ArrayQueue::new(EVENT_QUEUE),
            scenes: ArrayQueue::new(SCENE_QUEUE),
            dropped_ticks: AtomicU64::new(0),
            dropped_events: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            last_time_s: AtomicU64::new(0f64.to_bits()),
        });
        let handle = RecorderHandle {
            queues: Arc::clone(&queues),
        };
        handle.event(Event::Configuration {
            time_s: 0.0,
            config,
        });
        let name = path.display().to_string();
        let thread = std::thread::Builder::new()
            .name("tessera-log".into())
            .spawn(move || write_loop(BufWriter::new(file), &queues, &name))
            .map_err(|e| io(&e))?;
        Ok(Self {
            path: path.to_owned(),
            handle,
            thread: Some(thread),
        })
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A handle for the haptic and simulation threads to record through.
    pub fn handle(&self) -> RecorderHandle {
        self.handle.clone()
    }

    /// Drains the queues, writes the end of session and the summary.
    pub fn finish(mut self) -> Result<RecorderStats, SessionError> {
        self.stop()
    }

    fn stop(&mut self) -> Result<RecorderStats, SessionError> {
        self.handle.queues.stop.store(true, Ordering::Release);
        match self.thread.take() {
            Some(thread) => thread.join().unwrap_or_else(|_| {
                Err(SessionError::Io {
                    path: self.path.display().to_string(),
                    message: "log writer thread panicked".into(),
                })
            }),
            None => Ok(RecorderStats::default()),
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            tracing::error!("{e}");
        }
    }
}

/// The MCAP writer with its channels and a reused serialisation buffer.
struct LogWriter<'a> {
    writer: mcap::Writer<BufWriter<std::fs::File>>,
    tick_channel: u16,
    event_channel: u16,
    scene_channel: u16,
    transforms_channel: u16,
    scene_messages: u64,
    buffer: Vec<u8>,
    stats: RecorderStats,
    name: &'a str,
}

impl<'a> LogWriter<'a> {
    fn new(file: BufWriter<std::fs::File>, name: &'a str) -> Result<Self, SessionError> {
        let options = mcap::WriteOptions::new()
            .compression(None)
            .profile("tessera");
        let format = |e| mcap_error(name, e);
        let mut writer = mcap::Writer::with_options(file, options).map_err(format)?;
        let tick_schema = writer
            .add_schema("tessera.TickRecord", "jsonschema", TICK_SCHEMA.as_bytes())
            .map_err(format)?;
        let event_schema = writer
            .add_schema("tessera.Event", "jsonschema", EVENT_SCHEMA.as_bytes())
            .map_err(format)?;
        let metadata = BTreeMap::new();
        let tick_channel = writer
            .add_channel(tick_schema, TICK_TOPIC, "json", &metadata)
            .map_err(format)?;
        let event_channel = writer
            .add_channel(event_schema, EVENT_TOPIC, "json", &metadata)
            .map_err(format)?;
        let scene_schema = writer
            .add_schema(
                "foxglove.SceneUpdate",
                "jsonschema",
                SCENE_SCHEMA.as_bytes(),
            )
            .map_err(format)?;
        let transforms_schema = writer
            .add_schema(
                "foxglove.FrameTransforms",
                "jsonschema",
                TRANSFORMS_SCHEMA.as_bytes(),
            )
            .map_err(format)?;
        let scene_channel = writer
            .add_channel(scene_schema, SCENE_TOPIC, "json", &metadata)
            .map_err(format)?;
        let transforms_channel = writer
            .add_channel(transforms_schema, TRANSFORMS_TOPIC, "json", &metadata)
            .map_err(format)?;
        Ok(Self {
            writer,
            tick_channel,
            event_channel,
            scene_channel,
            transforms_channel,
            scene_messages: 0,
            buffer: Vec::with_capacity(1024),
            stats: RecorderStats::default(),
            name,
        })
    }

    fn tick(&mut self, tick: &TickRecord) -> Result<(), SessionError> {
        self.write(self.tick_channel, self.stats.ticks, tick.time_s, tick)?;
        self.stats.ticks += 1;
        Ok(())
    }

    fn event(&mut self, event: &Event) -> Result<(), SessionError> {
        self.write(self.event_channel, self.stats.events, event.time_s(), event)?;
        self.stats.events += 1;
        Ok(())
    }

    fn scene(&mut self, message: &SceneLog) -> Result<(), SessionError> {
        let sequence = self.scene_messages;
        self.scene_messages += 1;
        match message {
            SceneLog::Update { time_s, update } => {
                self.write(self.scene_channel, sequence, *time_s, update)
            }
            SceneLog::Transforms { time_s, transforms } => {
                self.write(self.transforms_channel, sequence, *time_s, transforms)
            }
        }
    }

    fn write(
        &mut self,
        channel: u16,
        sequence: u64,
        time_s: f64,
        value: &impl serde::Serialize,
    ) -> Result<(), SessionError> {
        self.buffer.clear();
        serde_json::to_writer(&mut self.buffer, value).map_err(|e| SessionError::Io {
            path: self.name.to_owned(),
            message: e.to_string(),
        })?;
        let log_time = (time_s.max(0.0) * 1e9) as u64;
        self.writer
            .write_to_known_channel(
                &mcap::records::MessageHeader {
                    channel_id: channel,
                    sequence: sequence as u32,
                    log_time,
                    publish_time: log_time,
                },
                &self.buffer,
            )
            .map_err(|e| mcap_error(self.name, e))
    }
}

fn mcap_error(name: &str, e: mcap::McapError) -> SessionError {
    SessionError::Io {
        path: name.to_owned(),
        message: e.to_string(),
    }
}

fn write_loop(
    file: BufWriter<std::fs::File>,
    queues: &Queues,
    name: &str,
) -> Result<RecorderStats, SessionError> {
    let mut log = LogWriter::new(file, name)?;
    let mut last_flush = Instant::now();
    let mut reported_drops = (0u64, 0u64);
    loop {
        let stopping = queues.stop.load(Ordering::Acquire);
        let mut wrote = false;
        // Events first: an event logged at a tick precedes that tick's
        // successors in the file even if it was queued a little later.
        while let Some(event) = queues.events.pop() {
            log.event(&event)?;
            wrote = true;
        }
        while let Some(message) = queues.scenes.pop() {
            log.scene(&message)?;
            wrote = true;
        }
        while let Some(tick) = queues.ticks.pop() {
            log.tick(&tick)?;
            wrote = true;
        }
        let drops = (
            queues.dropped_ticks.load(Ordering::Relaxed),
            queues.dropped_events.load(Ordering::Relaxed),
        );
        if drops != reported_drops {
            let (ticks, events) = (drops.0 - reported_drops.0, drops.1 - reported_drops.1);
            tracing::warn!(
                "session log: dropped {ticks} tick(s) and {events} event(s) (queue full)"
            );
            log.event(&Event::Dropped {
                time_s: f64::from_bits(queues.last_time_s.load(Ordering::Relaxed)),
                ticks,
                events,
            })?;
            reported_drops = drops;
        }
        if last_flush.elapsed() >= FLUSH_EVERY {
            log.writer.flush().map_err(|e| mcap_error(name, e))?;
            log.stats.chunks_flushed += 1;
            last_flush = Instant::now();
        }
        if stopping
            && queues.ticks.is_empty()
            && queues.events.is_empty()
            && queues.scenes.is_empty()
        {
            break;
        }
        if !wrote {
            std::thread::sleep(IDLE);
        }
    }
    log.stats.dropped_ticks = reported_drops.0;
    log.stats.dropped_events = reported_drops.1;
    log.event(&Event::SessionEnd {
        time_s: f64::from_bits(queues.last_time_s.load(Ordering::Relaxed)),
        ticks: log.stats.ticks,
        dropped_ticks: reported_drops.0,
        dropped_events: reported_drops.1,
    })?;
    log.writer.finish().map_err(|e| mcap_error(name, e))?;
    Ok(log.stats)
}
