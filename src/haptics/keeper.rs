//! A device kept open and commanded across sessions.
//!
//! A study runs one haptic session per trial, and between two trials the
//! next trial's world is built. A [`DeviceKeeper`] owns the device for the
//! whole run: between sessions its thread reads the device and sends the
//! safety layer's zero command at the haptic rate (no force, or an
//! admittance device held where it is), so the device is opened once and
//! never goes without commands while a world is built. A session borrows
//! the device as a [`KeptDevice`], which takes it over from the keeper at
//! its first read, not when it is lent: the keeper goes on commanding the
//! device through the session's set-up, and the hand-over takes about
//! [`HANDOVER_SLICE`].
//!
//! The device sees one clock for the whole run (the keeper's, seconds
//! since it started); a session's clock, which starts at 0, is shifted
//! onto it at the take-over, so a driver that dates reports or runs a
//! watchdog on `now_s` never sees time go back. The keeper also measures
//! the longest time the device went without a command, over sessions
//! and hand-overs alike, and across hand-overs alone
//! ([`DeviceKeeper::take_gaps`]), and how late its own ticks started, in
//! the haptic loop's terms ([`DeviceKeeper::take_ticks`]): together with
//! the sessions' loop figures they cover a run's resets.
//!
//! With `realtime`, the keeper's thread asks for SCHED_FIFO at
//! [`KEEPER_PRIORITY`] (below the haptic thread's, above the world being
//! built), unpinned and without locking memory (`mlockall` is
//! process-wide and lasts; the haptic thread asks for it when a real-time
//! session starts), and reports what it obtained
//! ([`DeviceKeeper::realtime`]). Between its ticks it sleeps in slices of
//! [`HANDOVER_SLICE`] and spins only the last [`SPIN_NS`] before a
//! deadline, as the haptic loop does, and it parks while a session holds
//! the device: a real-time thread that waits leaves its CPU to the
//! others but for that stretch.
//!
//! Neither hand-over leaves the device waiting for the rest of a tick: the
//! keeper sends a zero command just before it lends the device, and a
//! give-back wakes it to command the device at once and start its ticks
//! from there.

use super::deadlines::Deadlines;
use super::haptic_loop::SPIN_NS;
use super::realtime::{request_fifo, RealtimeReport, KEEPER_PRIORITY};
use super::server::HAPTIC_RATE_HZ;
use super::stats::{Distribution, Histogram};
use crate::device::{
    Device, DeviceCommand, DeviceError, DeviceSpec, DeviceState, Safety, SafetySettings,
    SafetySettingsError,
};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, TryLockError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a session's first read waits for the keeper to hand the device
/// over (the keeper looks every [`HANDOVER_SLICE`]); past it the read fails with
/// [`DeviceError::Timeout`] and the next tick asks again.
const TAKEOVER_WAIT: Duration = Duration::from_millis(5);

/// How often the keeper looks for a session's request between ticks.
const HANDOVER_SLICE: Duration = Duration::from_micros(100);

/// No command yet.
const NEVER: u64 = u64::MAX;

/// The state the keeper and its borrowers share.
struct Shared {
    /// The device while it passes between the keeper and a session.
    slot: Mutex<Option<Box<dyn Device>>>,
    /// A session asked for the device (set by the session, cleared when it
    /// gives the device back).
    wanted: AtomicBool,
    /// A [`KeptDevice`] exists.
    lent: AtomicBool,
    /// The keeper releases the device and ends.
    stop: AtomicBool,
    /// The keeper's clock: the device's `now_s` is seconds since this.
    origin: Instant,
    /// The device's clock at the last call, as `f64` bits.
    device_time_bits: AtomicU64,
    /// Nanoseconds since `origin` of the last command, or [`NEVER`].
    last_command_ns: AtomicU64,
    /// The longest time between two commands since the last
    /// [`DeviceKeeper::take_gaps`] (ns).
    longest_gap_ns: AtomicU64,
    /// The same, for two commands from different senders (a hand-over).
    longest_handover_gap_ns: AtomicU64,
    /// The last command was the keeper's.
    last_by_keeper: AtomicBool,
    /// The keeper's thread, which a give-back wakes.
    keeper_thread: OnceLock<std::thread::Thread>,
    /// How late the keeper's ticks started (µs), since the last
    /// [`DeviceKeeper::take_ticks`]. Locked once per tick by the keeper and
    /// for a swap by the taker: never contended for longer.
    lateness: Mutex<Histogram>,
}

impl Shared {
    /// Records a command sent now by the keeper (`by_keeper`) or a
    /// session.
    fn commanded(&self, by_keeper: bool) {
        let now_ns = self.origin.elapsed().as_nanos() as u64;
        let last = self.last_command_ns.swap(now_ns, Ordering::AcqRel);
        let last_by_keeper = self.last_by_keeper.swap(by_keeper, Ordering::AcqRel);
        if last != NEVER {
            let gap_ns = now_ns.saturating_sub(last);
            self.longest_gap_ns.fetch_max(gap_ns, Ordering::AcqRel);
            if last_by_keeper != by_keeper {
                self.longest_handover_gap_ns
                    .fetch_max(gap_ns, Ordering::AcqRel);
            }
        }
    }

    /// The device's clock for a call at `device_s` (the caller's clock
    /// shifted onto the device's), never behind the last call's.
    fn device_time(&self, device_s: f64) -> f64 {
        let last = f64::from_bits(self.device_time_bits.load(Ordering::Acquire));
        let t = device_s.max(last);
        self.device_time_bits.store(t.to_bits(), Ordering::Release);
        t
    }

    /// Seconds since the keeper started.
    fn keeper_clock_s(&self) -> f64 {
        self.origin.elapsed().as_secs_f64()
    }

    fn lateness(&self) -> std::sync::MutexGuard<'_, Histogram> {
        // A histogram is valid after any partial update.
        self.lateness.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Box<dyn Device>>> {
        // The slot only ever holds a device: a panic elsewhere cannot leave
        // it half-written.
        self.slot.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The longest times a kept device went without a command (s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CommandGaps {
    /// Between any two commands: within sessions, between them, and
    /// across hand-overs (one tick when all is well).
    pub longest_s: f64,
    /// Across a hand-over: from the keeper's last command to a session's
    /// first, or from a session's last to the keeper's first.
    pub handover_s: f64,
}

/// The keeper's own ticks, while no session held the device: how late
/// each started after its 1 kHz deadline, as the haptic loop reports its
/// ticks ([`LoopStats`](super::LoopStats)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeeperTicks {
    /// Ticks run.
    pub ticks: u64,
    /// How late each started (µs).
    pub period_error_us: Distribution,
    /// Ticks that started over 1 ms late.
    pub late_over_1ms: u64,
}

/// What went wrong keeping a device.
#[derive(Debug, thiserror::Error)]
pub enum KeeperError {
    /// The device spec fails the safety layer's validation.
    #[error("the device cannot be kept: {0}")]
    Safety(#[from] SafetySettingsError),
    /// The keeper thread could not be started.
    #[error("starting the device keeper thread: {0}")]
    Spawn(#[source] std::io::Error),
    /// A session already holds the device.
    #[error("the kept device is already lent to a session")]
    AlreadyLent,
    /// The keeper thread ended before it started commanding.
    #[error("the device keeper thread ended before it started")]
    Ended,
}

/// Owns a device across sessions and commands it between them (module
/// docs). Dropping the keeper sends the zero command and releases the
/// device.
pub struct DeviceKeeper {
    shared: Arc<Shared>,
    spec: DeviceSpec,
    realtime: RealtimeReport,
    thread: Option<JoinHandle<()>>,
}

impl DeviceKeeper {
    /// Starts commanding `device` (already open) at the haptic rate, its
    /// thread at SCHED_FIFO if `realtime` (module docs).
    pub fn keep(device: Box<dyn Device>, realtime: bool) -> Result<Self, KeeperError> {
        let spec = device.spec().clone();
        let safety = Safety::new(device, SafetySettings::for_spec(&spec))?;
        let shared = Arc::new(Shared {
            slot: Mutex::new(None),
            wanted: AtomicBool::new(false),
            lent: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            origin: Instant::now(),
            device_time_bits: AtomicU64::new(0.0f64.to_bits()),
            last_command_ns: AtomicU64::new(NEVER),
            longest_gap_ns: AtomicU64::new(0),
            longest_handover_gap_ns: AtomicU64::new(0),
            last_by_keeper: AtomicBool::new(true),
            keeper_thread: OnceLock::new(),
            lateness: Mutex::new(Histogram::default()),
        });
        let (report_tx, report_rx) = std::sync::mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("tessera-keeper".into())
            .spawn({
                let shared = Arc::clone(&shared);
                move || {
                    let _ = shared.keeper_thread.set(std::thread::current());
                    let report = request_fifo(realtime, KEEPER_PRIORITY);
                    let _ = report_tx.send(report);
                    keep_commanding(safety, &shared)
                }
            })
            .map_err(KeeperError::Spawn)?;
        let mut keeper = Self {
            shared,
            spec,
            realtime: RealtimeReport {
                requested: realtime,
                policy: String::new(),
                priority: 0,
                memory_locked: false,
                heap_reserved_bytes: 0,
                cpu: None,
                cpu_choice: String::new(),
                errors: Vec::new(),
            },
            thread: Some(thread),
        };
        // The thread sends its report before its first tick; dropping the
        // keeper on failure stops the thread and releases the device.
        keeper.realtime = report_rx.recv().map_err(|_| KeeperError::Ended)?;
        Ok(keeper)
    }

    /// The scheduling the keeper's thread obtained.
    pub fn realtime(&self) -> &RealtimeReport {
        &self.realtime
    }

    /// The device's spec.
    pub fn spec(&self) -> &DeviceSpec {
        &self.spec
    }

    /// The device for one session. The keeper commands it until the
    /// session's first read; dropping or releasing the [`KeptDevice`] gives
    /// it back. One session at a time.
    pub fn lend(&self) -> Result<KeptDevice, KeeperError> {
        if self.shared.lent.swap(true, Ordering::AcqRel) {
            return Err(KeeperError::AlreadyLent);
        }
        Ok(KeptDevice {
            shared: Arc::clone(&self.shared),
            spec: self.spec.clone(),
            inner: None,
            offset_s: 0.0,
        })
    }

    /// The longest times the device went without a command since the
    /// last call, and starts the next measurement.
    pub fn take_gaps(&self) -> CommandGaps {
        let take = |ns: &AtomicU64| ns.swap(0, Ordering::AcqRel) as f64 * 1e-9;
        CommandGaps {
            longest_s: take(&self.shared.longest_gap_ns),
            handover_s: take(&self.shared.longest_handover_gap_ns),
        }
    }

    /// The keeper's ticks since the last call, and starts the next
    /// measurement.
    pub fn take_ticks(&self) -> KeeperTicks {
        // Allocated here, not under the lock the keeper's ticks take.
        let mut taken = Histogram::default();
        std::mem::swap(&mut taken, &mut self.shared.lateness());
        KeeperTicks {
            ticks: taken.total(),
            period_error_us: taken.summary(),
            late_over_1ms: taken.count_over(1000.0),
        }
    }
}

impl Drop for DeviceKeeper {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The keeper thread: commands the device while no session holds it.
fn keep_commanding(safety: Safety<Box<dyn Device>>, shared: &Shared) {
    let tick_s = 1.0 / HAPTIC_RATE_HZ;
    let mut device = Some(safety);
    let mut deadlines = Deadlines::new(Instant::now(), tick_s);
    let mut tick = 0u64;
    while !shared.stop.load(Ordering::Acquire) {
        let Some(mut held) = device.take() else {
            // Lent: wait for the session's give-back, which wakes this
            // thread, and command the device at once.
            let back = (!shared.wanted.load(Ordering::Acquire))
                .then(|| shared.slot().take())
                .flatten();
            let Some(back) = back else {
                std::thread::park_timeout(Duration::from_secs_f64(tick_s));
                continue;
            };
            // A fresh safety layer: the session's soft start does not
            // carry over.
            let settings = SafetySettings::for_spec(back.spec());
            match Safety::new(back, settings) {
                Ok(back) => device = Some(back),
                // Validated when kept; the spec cannot change.
                Err(_) => return,
            }
            send_zero(device.as_mut().expect("just set"), shared);
            deadlines = Deadlines::new(Instant::now(), tick_s);
            tick = 1;
            continue;
        };
        if shared.wanted.load(Ordering::Acquire) {
            // A zero command just before the hand-over, so that the
            // device's wait for the session's first command is the
            // hand-over's, not the rest of a tick. The safety layer's
            // state (its ramp, its watchdog) belongs to this keeper; the
            // session brings its own.
            send_zero(&mut held, shared);
            *shared.slot() = Some(held.into_inner());
            continue;
        }
        // Sleeps in slices, so that a session asking for the device gets
        // it within a slice, not a whole tick, and spins the last
        // stretch, as the haptic loop does, so that the tick starts on
        // time rather than a wake-up late.
        let due = deadlines.due(tick);
        let spin = Duration::from_nanos(SPIN_NS.into());
        loop {
            let now = Instant::now();
            if now >= due
                || shared.wanted.load(Ordering::Acquire)
                || shared.stop.load(Ordering::Acquire)
            {
                break;
            }
            let left = due - now;
            if left > spin {
                std::thread::sleep((left - spin).min(HANDOVER_SLICE));
            } else {
                std::hint::spin_loop();
            }
        }
        let now = Instant::now();
        if now >= due {
            let late_s = deadlines.started(tick, now);
            shared.lateness().record(late_s * 1e6);
            tick += 1;
            send_zero(&mut held, shared);
        }
        device = Some(held);
    }
    let back = device.or_else(|| {
        let inner = shared.slot().take()?;
        let settings = SafetySettings::for_spec(inner.spec());
        Safety::new(inner, settings).ok()
    });
    if let Some(mut held) = back {
        let now_s = shared.device_time(shared.keeper_clock_s());
        let _ = held.release(now_s);
    }
}

/// Reads the device and sends the safety layer's zero command. A device
/// that cannot be read gets the zero command of its last good state (an
/// admittance arm is held where it was last seen); a session that takes it
/// over reports the loss.
fn send_zero(held: &mut Safety<Box<dyn Device>>, shared: &Shared) {
    let now_s = shared.device_time(shared.keeper_clock_s());
    let _ = match held.read(now_s) {
        Ok(state) => {
            let zero = held.filter().zero(&state);
            held.command(&zero, now_s)
        }
        Err(_) => held.fail_safe(now_s),
    };
    shared.commanded(true);
}

/// A kept device lent to one session (see [`DeviceKeeper::lend`]).
pub struct KeptDevice {
    shared: Arc<Shared>,
    spec: DeviceSpec,
    inner: Option<Box<dyn Device>>,
    /// The session's clock + this = the device's clock.
    offset_s: f64,
}

impl KeptDevice {
    /// Takes the device over from the keeper at the first call: waits up
    /// to [`TAKEOVER_WAIT`] for the keeper's next tick.
    fn take_over(&mut self, now_s: f64) -> Result<(), DeviceError> {
        if self.inner.is_some() {
            return Ok(());
        }
        self.shared.wanted.store(true, Ordering::Release);
        let asked = Instant::now();
        loop {
            let taken = match self.shared.slot.try_lock() {
                Ok(mut slot) => slot.take(),
                Err(TryLockError::Poisoned(p)) => p.into_inner().take(),
                Err(TryLockError::WouldBlock) => None,
            };
            if let Some(device) = taken {
                self.offset_s = self.shared.keeper_clock_s() - now_s;
                self.inner = Some(device);
                return Ok(());
            }
            if asked.elapsed() >= TAKEOVER_WAIT {
                return Err(DeviceError::Timeout(TAKEOVER_WAIT));
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    /// Gives the device back to the keeper, which wakes and commands it
    /// at once.
    fn give_back(&mut self) {
        if let Some(device) = self.inner.take() {
            *self.shared.slot() = Some(device);
        }
        self.shared.wanted.store(false, Ordering::Release);
        if let Some(keeper) = self.shared.keeper_thread.get() {
            keeper.unpark();
        }
    }
}

impl Device for KeptDevice {
    fn spec(&self) -> &DeviceSpec {
        &self.spec
    }

    fn read(&mut self, now_s: f64) -> Result<DeviceState, DeviceError> {
        self.take_over(now_s)?;
        let t = self.shared.device_time(now_s + self.offset_s);
        match self.inner.as_mut() {
            Some(device) => device.read(t),
            None => Err(DeviceError::Disconnected),
        }
    }

    fn command(&mut self, command: &DeviceCommand, now_s: f64) -> Result<(), DeviceError> {
        self.take_over(now_s)?;
        let t = self.shared.device_time(now_s + self.offset_s);
        let sent = match self.inner.as_mut() {
            Some(device) => device.command(command, t),
            None => Err(DeviceError::Disconnected),
        };
        self.shared.commanded(false);
        sent
    }

    /// Hands the device back to the keeper instead of disabling it (the
    /// safety layer has sent the zero command): the keeper releases it
    /// when the run ends.
    fn release(&mut self, _now_s: f64) -> Result<(), DeviceError> {
        self.give_back();
        Ok(())
    }
}

impl Drop for KeptDevice {
    fn drop(&mut self) {
        self.give_back();
        self.shared.lent.store(false, Ordering::Release);
    }
}
