//! The HID driver: one I/O thread owns the device handle (hidapi's
//! `HidDevice` is Send, not Sync), reads with timeouts, keeps the newest
//! input report, writes the newest command, and reopens the device with
//! back-off after any error. The haptic thread only exchanges small values
//! with it through `try_lock`ed slots, so it never waits on the device:
//! a hidraw `write()` can block for seconds on a stuck device, and that is
//! detected and reported here as [`DeviceError::StalledWrite`].

use super::codec::ReportCodec;
use super::profile::DeviceProfile;
use super::transport::{Connector, Transport, TransportError};
use super::{Device, DeviceCommand, DeviceError, DeviceSpec, DeviceState};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Timing of the driver.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HidTiming {
    /// Longest wait of one read on the I/O thread.
    pub read_timeout: Duration,
    /// No report for this long → [`DeviceError::Timeout`].
    pub stale_after: Duration,
    /// A write running longer than this is reported as stalled.
    pub write_limit: Duration,
    /// First and largest wait between reopen attempts (doubling).
    pub backoff_min: Duration,
    /// Largest wait between reopen attempts.
    pub backoff_max: Duration,
}

impl Default for HidTiming {
    fn default() -> Self {
        Self {
            read_timeout: Duration::from_millis(1),
            stale_after: Duration::from_millis(20),
            write_limit: Duration::from_millis(2),
            backoff_min: Duration::from_millis(10),
            backoff_max: Duration::from_secs(1),
        }
    }
}

/// Counters of the driver, for reports and logs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct HidCounters {
    /// Input reports read.
    pub reports: u64,
    /// Reports superseded before a tick read them.
    pub stale: u64,
    /// Reports missing by their sequence numbers.
    pub lost: u64,
    /// Reports the codec refused.
    pub malformed: u64,
    /// Times the device was reopened after a loss.
    pub reopens: u64,
    /// Command writes that took longer than `write_limit`.
    pub stalled_writes: u64,
}

#[derive(Debug, Default)]
struct Inbox {
    state: Option<DeviceState>,
    status: u32,
    received_at: Option<Instant>,
    /// Reports since the haptic thread last took the state.
    unread: u64,
    last_error: Option<DeviceError>,
}

#[derive(Debug, Default)]
struct Outbox {
    command: Option<DeviceCommand>,
    enable: bool,
}

struct Shared {
    inbox: Mutex<Inbox>,
    outbox: Mutex<Outbox>,
    connected: AtomicBool,
    stop: AtomicBool,
    /// Micros since `epoch` when the current write started (0: none).
    write_started_us: AtomicU64,
    epoch: Instant,
    counters: Mutex<HidCounters>,
    /// Why the last attempt to open the device failed (None once open).
    open_error: Mutex<Option<String>>,
}

/// A HID device driven through a [`Connector`] (hidapi for real devices,
/// in memory for tests).
pub struct HidDriver {
    spec: DeviceSpec,
    shared: Arc<Shared>,
    timing: HidTiming,
    thread: Option<JoinHandle<()>>,
    last_state: DeviceState,
    counters: HidCounters,
}

impl HidDriver {
    /// Starts the I/O thread; the device is opened there (and reopened).
    pub fn spawn<C: Connector>(
        profile: &DeviceProfile,
        connector: C,
        timing: HidTiming,
    ) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            inbox: Mutex::new(Inbox::default()),
            outbox: Mutex::new(Outbox::default()),
            connected: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            write_started_us: AtomicU64::new(0),
            epoch: Instant::now(),
            counters: Mutex::new(HidCounters::default()),
            open_error: Mutex::new(None),
        });
        let codec = ReportCodec::new(profile);
        let io_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("tessera-hid".into())
            .spawn(move || io_loop(connector, codec, io_shared, timing))?;
        Ok(Self {
            spec: profile.spec.clone(),
            shared,
            timing,
            thread: Some(thread),
            last_state: DeviceState::default(),
            counters: HidCounters::default(),
        })
    }

    /// The counters as of the last tick.
    pub fn counters(&self) -> HidCounters {
        self.counters
    }

    /// Whether the device is open now.
    pub fn is_connected(&self) -> bool {
        self.shared.connected.load(Ordering::Acquire)
    }

    /// Waits up to `timeout` for the device to be open; on failure, why the
    /// last attempt failed.
    pub fn wait_connected(&self, timeout: Duration) -> Result<(), NotOpened> {
        let start = Instant::now();
        loop {
            if self.is_connected() {
                return Ok(());
            }
            if start.elapsed() >= timeout {
                let error = self.shared.open_error.lock().ok().and_then(|e| e.clone());
                return Err(NotOpened(
                    error.unwrap_or_else(|| "no answer from the device".into()),
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Why a HID device could not be opened ([`HidDriver::wait_connected`]):
/// the reason hidapi gave for the last attempt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotOpened(pub String);

impl Device for HidDriver {
    fn spec(&self) -> &DeviceSpec {
        &self.spec
    }

    fn read(&mut self, _now_s: f64) -> Result<DeviceState, DeviceError> {
        if let Ok(c) = self.shared.counters.try_lock() {
            self.counters = *c;
        }
        let Ok(mut inbox) = self.shared.inbox.try_lock() else {
            // The I/O thread is copying a report in: last tick's state.
            return Ok(self.last_state);
        };
        if let Some(error) = inbox.last_error.take() {
            return Err(error);
        }
        if !self.shared.connected.load(Ordering::Acquire) {
            return Err(DeviceError::Disconnected);
        }
        let fresh = inbox
            .received_at
            .is_some_and(|t| t.elapsed() <= self.timing.stale_after);
        let Some(state) = inbox.state.filter(|_| fresh) else {
            return Err(DeviceError::Timeout(self.timing.stale_after));
        };
        if inbox.unread > 1 {
            self.counters.stale += inbox.unread - 1;
        }
        inbox.unread = 0;
        if inbox.status != 0 {
            return Err(DeviceError::Fault(inbox.status));
        }
        self.last_state = state;
        Ok(state)
    }

    fn command(&mut self, command: &DeviceCommand, _now_s: f64) -> Result<(), DeviceError> {
        let started = self.shared.write_started_us.load(Ordering::Acquire);
        if started != 0 {
            let now_us = self.shared.epoch.elapsed().as_micros() as u64;
            let running = Duration::from_micros(now_us.saturating_sub(started));
            if running > self.timing.write_limit {
                return Err(DeviceError::StalledWrite(running));
            }
        }
        if let Ok(mut outbox) = self.shared.outbox.try_lock() {
            outbox.command = Some(*command);
            outbox.enable = true;
        }
        Ok(())
    }

    /// Queues the last command with the enable flag cleared and waits up to
    /// `RELEASE_WAIT` (100 ms) for the I/O thread to write it.
    fn release(&mut self, _now_s: f64) -> Result<(), DeviceError> {
        let start = Instant::now();
        let mut queued = false;
        while start.elapsed() < RELEASE_WAIT {
            if let Ok(mut outbox) = self.shared.outbox.try_lock() {
                if !queued {
                    let command = outbox.command.unwrap_or_else(DeviceCommand::zero_wrench);
                    outbox.command = Some(command);
                    outbox.enable = false;
                    queued = true;
                } else if outbox.command.is_none() {
                    return Ok(());
                }
            }
            if !self.is_connected() {
                // Nobody to tell; the device's own watchdog disables it.
                return Err(DeviceError::Disconnected);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Err(DeviceError::StalledWrite(RELEASE_WAIT))
    }
}

/// How long [`HidDriver`]'s release waits for the disable report's write.
const RELEASE_WAIT: Duration = Duration::from_millis(100);

impl Drop for HidDriver {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            // A write stuck in the kernel would hold this join; the thread
            // is left to finish on its own rather than stalling the caller.
            if self.shared.write_started_us.load(Ordering::Acquire) == 0 {
                let _ = thread.join();
            }
        }
    }
}

fn io_loop<C: Connector>(
    mut connector: C,
    codec: ReportCodec,
    shared: Arc<Shared>,
    timing: HidTiming,
) {
    let mut backoff = timing.backoff_min;
    let mut buf = vec![0u8; codec.input_length() + 1];
    let mut report = Vec::with_capacity(codec.output_length());
    let mut last_sequence: Option<u32> = None;
    let mut out_sequence = 0u32;
    let mut first_open = true;
    while !shared.stop.load(Ordering::Acquire) {
        let mut transport = match connector.open() {
            Ok(t) => {
                if let Ok(mut e) = shared.open_error.lock() {
                    *e = None;
                }
                t
            }
            Err(error) => {
                if let Ok(mut e) = shared.open_error.lock() {
                    *e = Some(error.0);
                }
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(timing.backoff_max);
                continue;
            }
        };
        if !first_open {
            bump(&shared, |c| c.reopens += 1);
        }
        first_open = false;
        backoff = timing.backoff_min;
        shared.connected.store(true, Ordering::Release);
        let failure = run_connection(
            &mut transport,
            &codec,
            &shared,
            &timing,
            &mut buf,
            &mut report,
            &mut last_sequence,
            &mut out_sequence,
        );
        shared.connected.store(false, Ordering::Release);
        if let Err(e) = failure {
            tracing::warn!("HID device: {e}; reopening");
            if let Ok(mut inbox) = shared.inbox.lock() {
                inbox.last_error = Some(DeviceError::Disconnected);
                inbox.state = None;
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn run_connection<T: Transport>(
    transport: &mut T,
    codec: &ReportCodec,
    shared: &Shared,
    timing: &HidTiming,
    buf: &mut [u8],
    report: &mut Vec<u8>,
    last_sequence: &mut Option<u32>,
    out_sequence: &mut u32,
) -> Result<(), TransportError> {
    while !shared.stop.load(Ordering::Acquire) {
        // Drain what is queued, newest kept.
        let mut waited = false;
        loop {
            let timeout = if waited {
                Duration::ZERO
            } else {
                timing.read_timeout
            };
            waited = true;
            let n = transport.read(buf, timeout)?;
            if n == 0 {
                break;
            }
            match codec.decode(&buf[..n]) {
                Ok(decoded) => {
                    let seq = decoded.state.sequence;
                    let lost = last_sequence
                        .map(|s| u64::from(seq.wrapping_sub(s).saturating_sub(1)))
                        .filter(|&l| l < 1 << 16)
                        .unwrap_or(0);
                    *last_sequence = Some(seq);
                    bump(shared, |c| {
                        c.reports += 1;
                        c.lost += lost;
                    });
                    if let Ok(mut inbox) = shared.inbox.lock() {
                        inbox.state = Some(decoded.state);
                        inbox.status = decoded.status;
                        inbox.received_at = Some(Instant::now());
                        inbox.unread += 1;
                    }
                }
                Err(e) => {
                    bump(shared, |c| c.malformed += 1);
                    if let Ok(mut inbox) = shared.inbox.lock() {
                        inbox.last_error = Some(DeviceError::Protocol(e));
                    }
                }
            }
        }
        let pending = shared
            .outbox
            .lock()
            .ok()
            .and_then(|mut o| o.command.take().map(|c| (c, o.enable)));
        if let Some((command, enable)) = pending {
            *out_sequence = out_sequence.wrapping_add(1);
            codec.encode(&command, enable, *out_sequence, report);
            let start_us = (shared.epoch.elapsed().as_micros() as u64).max(1);
            shared.write_started_us.store(start_us, Ordering::Release);
            let started = Instant::now();
            let result = transport.write(report);
            shared.write_started_us.store(0, Ordering::Release);
            if started.elapsed() > timing.write_limit {
                bump(shared, |c| c.stalled_writes += 1);
            }
            result?;
        }
    }
    Ok(())
}

fn bump(shared: &Shared, f: impl FnOnce(&mut HidCounters)) {
    if let Ok(mut c) = shared.counters.lock() {
        f(&mut c);
    }
}

/// Opens real devices through hidapi, by the profile's ids.
pub struct HidApiConnector {
    vendor_id: u16,
    product_id: u16,
    usage_page: Option<u16>,
}

impl HidApiConnector {
    /// A connector to the first device matching `profile`'s vendor and product ids (and usage page, if it names one).
    pub fn new(profile: &DeviceProfile) -> Self {
        Self {
            vendor_id: profile.vendor_id,
            product_id: profile.product_id,
            usage_page: profile.usage_page,
        }
    }
}

/// An open hidapi device.
pub struct HidApiTransport(hidapi::HidDevice);

impl Transport for HidApiTransport {
    fn read(&mut self, buf: &mut [u8], timeout: Duration) -> Result<usize, TransportError> {
        let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        self.0
            .read_timeout(buf, ms)
            .map_err(|e| TransportError(e.to_string()))
    }

    fn write(&mut self, report: &[u8]) -> Result<(), TransportError> {
        self.0
            .write(report)
            .map(|_| ())
            .map_err(|e| TransportError(e.to_string()))
    }
}

impl Connector for HidApiConnector {
    type Transport = HidApiTransport;
    fn open(&mut self) -> Result<HidApiTransport, TransportError> {
        let api = hidapi::HidApi::new().map_err(|e| TransportError(e.to_string()))?;
        let info = api
            .device_list()
            .find(|d| {
                d.vendor_id() == self.vendor_id
                    && d.product_id() == self.product_id
                    && self.usage_page.is_none_or(|u| d.usage_page() == u)
            })
            .ok_or_else(|| TransportError("device not present".into()))?;
        info.open_device(&api)
            .map(HidApiTransport)
            .map_err(|e| TransportError(e.to_string()))
    }
}

/// A HID device present on this machine.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PresentDevice {
    /// USB vendor id.
    pub vendor_id: u16,
    /// USB product id.
    pub product_id: u16,
    /// HID usage page of the interface.
    pub usage_page: u16,
    /// Product string the device reports.
    pub product: String,
    /// hidapi's path of the interface.
    pub path: String,
}

/// Lists HID devices present (empty when HID is not available here).
pub fn present_devices() -> Result<Vec<PresentDevice>, hidapi::HidError> {
    let api = hidapi::HidApi::new()?;
    Ok(api
        .device_list()
        .map(|d| PresentDevice {
            vendor_id: d.vendor_id(),
            product_id: d.product_id(),
            usage_page: d.usage_page(),
            product: d.product_string().unwrap_or_default().to_owned(),
            path: d.path().to_string_lossy().into_owned(),
        })
        .collect())
}
