//! The messages of a synchronisation and the lock-free exchange that
//! carries them (DESIGN.md, Threads). Each message is a boxed buffer that
//! travels to the other thread and comes back through a free list, so
//! neither thread allocates in the steady state and neither ever blocks
//! on the other: a push or pop either succeeds at once or is retried.
//! The one exception is lockstep, where the haptic thread must wait for
//! each answer anyway: it sleeps on a condition variable
//! ([`Exchange::wait_down`]) instead of spinning on a core the simulation
//! needs.

use crate::world::{SubWorldReport, SubWorldUpdate};
use crossbeam_queue::ArrayQueue;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Haptic → simulation, at tick `tick` (a multiple of r_sim).
#[derive(Default)]
pub(super) struct SyncUp {
    pub tick: u64,
    pub report: SubWorldReport,
}

/// Simulation → haptic: the answer to the [`SyncUp`] of `tick`.
#[derive(Default)]
pub(super) struct SyncDown {
    pub tick: u64,
    pub update: SubWorldUpdate,
    /// How many fracture events the global step had (the simulation
    /// thread keeps and logs the details).
    pub fractures: u32,
    /// The haptic tick of the strike that the fractures answer (the sync's
    /// tick when no sub-world strike was reported).
    pub impact_tick: u64,
    /// How many of the fractures the hand feels: of a body in the
    /// sub-world, or with a fragment in it once this answer is applied.
    pub felt_fractures: u32,
    /// The haptic tick of the strike the felt fractures answer.
    pub felt_impact_tick: u64,
}

/// Two one-slot mailboxes and their free lists.
pub(super) struct Exchange {
    up: ArrayQueue<Box<SyncUp>>,
    down: ArrayQueue<Box<SyncDown>>,
    free_up: ArrayQueue<Box<SyncUp>>,
    free_down: ArrayQueue<Box<SyncDown>>,
    stop: AtomicBool,
    /// Held while an answer is pushed and while a lockstep waiter looks
    /// for one, so that a wake-up is never lost.
    answered: Mutex<()>,
    answer_ready: Condvar,
}

impl Exchange {
    /// With `spares` buffers of each kind on the free lists.
    pub(super) fn new(spares: usize) -> Self {
        let exchange = Self {
            up: ArrayQueue::new(spares.max(1)),
            down: ArrayQueue::new(spares.max(1)),
            free_up: ArrayQueue::new(spares.max(1)),
            free_down: ArrayQueue::new(spares.max(1)),
            stop: AtomicBool::new(false),
            answered: Mutex::new(()),
            answer_ready: Condvar::new(),
        };
        for _ in 0..spares.max(1) {
            let _ = exchange.free_up.push(Box::default());
            let _ = exchange.free_down.push(Box::default());
        }
        exchange
    }

    pub(super) fn send_up(&self, message: Box<SyncUp>) -> Result<(), Box<SyncUp>> {
        self.up.push(message)
    }
    pub(super) fn take_up(&self) -> Option<Box<SyncUp>> {
        self.up.pop()
    }
    /// Sends an answer (the simulation thread) and wakes a lockstep
    /// waiter.
    pub(super) fn send_down(&self, message: Box<SyncDown>) -> Result<(), Box<SyncDown>> {
        let _held = self.answered.lock().unwrap_or_else(|e| e.into_inner());
        let sent = self.down.push(message);
        self.answer_ready.notify_one();
        sent
    }
    pub(super) fn take_down(&self) -> Option<Box<SyncDown>> {
        self.down.pop()
    }
    /// The next answer, waiting for it at most `timeout` (lockstep only:
    /// the real-time loop never waits, it takes what has come).
    pub(super) fn wait_down(&self, timeout: Duration) -> Option<Box<SyncDown>> {
        let held = self.answered.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(down) = self.down.pop() {
            return Some(down);
        }
        let _held = self
            .answer_ready
            .wait_timeout(held, timeout)
            .unwrap_or_else(|e| e.into_inner());
        self.down.pop()
    }
    pub(super) fn recycle_up(&self, message: Box<SyncUp>) {
        let _ = self.free_up.push(message);
    }
    pub(super) fn recycle_down(&self, message: Box<SyncDown>) {
        let _ = self.free_down.push(message);
    }
    /// A free buffer (a new one only if all are in flight).
    pub(super) fn free_up(&self) -> Box<SyncUp> {
        self.free_up.pop().unwrap_or_default()
    }
    pub(super) fn free_down(&self) -> Box<SyncDown> {
        self.free_down.pop().unwrap_or_default()
    }
    pub(super) fn stop(&self) {
        self.stop.store(true, Ordering::Release);
    }
    pub(super) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }
}
