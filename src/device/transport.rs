//! Byte transports under the HID driver: the trait, and an in-memory
//! transport whose other end a test (or a simulated device) plays byte for
//! byte. This machine has no `/dev/uhid`, so the driver is tested here.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A transport failure. The driver treats every one as "reopen with
/// back-off": hidraw cannot tell a disconnect from other errors reliably.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TransportError(pub String);

/// One open connection to a device.
pub trait Transport: Send {
    /// Reads one report into `buf`, waiting at most `timeout`; `Ok(0)` when
    /// none came.
    fn read(&mut self, buf: &mut [u8], timeout: Duration) -> Result<usize, TransportError>;
    /// Writes one report (may block: the driver calls it off the haptic
    /// thread and watches how long it takes).
    fn write(&mut self, report: &[u8]) -> Result<(), TransportError>;
}

/// Opens connections, again after each failure.
pub trait Connector: Send + 'static {
    /// The connection it opens.
    type Transport: Transport + 'static;
    /// Opens a connection; an error when the device is absent or busy.
    fn open(&mut self) -> Result<Self::Transport, TransportError>;
}

#[derive(Debug, Default)]
struct Wire {
    connected: bool,
    /// Reports from the device, oldest first.
    inbound: VecDeque<Vec<u8>>,
    /// Reports to the device, oldest first.
    outbound: VecDeque<Vec<u8>>,
    /// How long the next writes block.
    write_stall: Duration,
    opens: usize,
}

/// The device end of an in-memory wire, for tests and simulated devices.
#[derive(Debug, Clone, Default)]
pub struct MemoryDevice {
    wire: Arc<(Mutex<Wire>, Condvar)>,
}

impl MemoryDevice {
    /// A device that is plugged in.
    pub fn new() -> Self {
        let device = Self::default();
        device.lock().connected = true;
        device
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Wire> {
        self.wire.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends a report to the host.
    pub fn send(&self, report: &[u8]) {
        self.lock().inbound.push_back(report.to_vec());
        self.wire.1.notify_all();
    }

    /// The reports the host wrote, oldest first.
    pub fn received(&self) -> Vec<Vec<u8>> {
        self.lock().outbound.drain(..).collect()
    }

    /// Unplugs (open connections fail) or plugs the device back in.
    pub fn set_connected(&self, connected: bool) {
        let mut wire = self.lock();
        wire.connected = connected;
        if !connected {
            wire.inbound.clear();
        }
        self.wire.1.notify_all();
    }

    /// Makes writes block this long (a stuck device).
    pub fn stall_writes(&self, stall: Duration) {
        self.lock().write_stall = stall;
    }

    /// How many times the host opened the device.
    pub fn opens(&self) -> usize {
        self.lock().opens
    }

    /// The host side's connector.
    pub fn connector(&self) -> MemoryConnector {
        MemoryConnector {
            device: self.clone(),
        }
    }
}

/// Opens [`MemoryTransport`]s to a [`MemoryDevice`].
#[derive(Debug, Clone)]
pub struct MemoryConnector {
    device: MemoryDevice,
}

impl Connector for MemoryConnector {
    type Transport = MemoryTransport;
    fn open(&mut self) -> Result<MemoryTransport, TransportError> {
        let mut wire = self.device.lock();
        if !wire.connected {
            return Err(TransportError("no such device".into()));
        }
        wire.opens += 1;
        Ok(MemoryTransport {
            device: self.device.clone(),
            generation: wire.opens,
        })
    }
}

/// The host end of an in-memory wire.
#[derive(Debug)]
pub struct MemoryTransport {
    device: MemoryDevice,
    generation: usize,
}

impl MemoryTransport {
    fn check(&self, wire: &Wire) -> Result<(), TransportError> {
        if wire.connected && wire.opens == self.generation {
            Ok(())
        } else {
            Err(TransportError("device disconnected".into()))
        }
    }
}

impl Transport for MemoryTransport {
    fn read(&mut self, buf: &mut [u8], timeout: Duration) -> Result<usize, TransportError> {
        let deadline = Instant::now() + timeout;
        let (lock, ready) = &*self.device.wire;
        let mut wire = lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            self.check(&wire)?;
            if let Some(report) = wire.inbound.pop_front() {
                let n = report.len().min(buf.len());
                buf[..n].copy_from_slice(&report[..n]);
                return Ok(n);
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(0);
            }
            wire = ready
                .wait_timeout(wire, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn write(&mut self, report: &[u8]) -> Result<(), TransportError> {
        let stall = {
            let wire = self.device.lock();
            self.check(&wire)?;
            wire.write_stall
        };
        if !stall.is_zero() {
            std::thread::sleep(stall);
        }
        let mut wire = self.device.lock();
        self.check(&wire)?;
        wire.outbound.push_back(report.to_vec());
        Ok(())
    }
}
