//! When each haptic tick is due on the wall clock.
//!
//! Deadlines are absolute, `anchor + (tick − anchor_tick)·period`, so that
//! small delays do not accumulate into drift. A tick that starts a whole
//! period late or more has missed the next deadline too; it then becomes the
//! new anchor, and the ticks it missed are not run back to back. A device
//! renders one command at a time, so a burst of catch-up commands within
//! microseconds would never be felt, and it would spend CPU on stale ticks
//! just when the loop is behind. The session clock (`tick · period`, which
//! drives the sub-world and a scripted hand) then runs behind the wall clock
//! by the time lost, and [`Deadlines::clock_lag_s`] says by how much.

use std::time::{Duration, Instant};

/// The deadline grid of a loop with a fixed period.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    period_s: f64,
    anchor: Instant,
    anchor_tick: u64,
    clock_lag_s: f64,
}

impl Deadlines {
    /// A grid whose tick 0 is due at `start`.
    pub fn new(start: Instant, period_s: f64) -> Self {
        Self {
            period_s,
            anchor: start,
            anchor_tick: 0,
            clock_lag_s: 0.0,
        }
    }

    /// When `tick` is due. Ticks are asked for in increasing order, from the
    /// last one passed to [`Deadlines::started`] on.
    pub fn due(&self, tick: u64) -> Instant {
        let ticks = tick.saturating_sub(self.anchor_tick);
        self.anchor + Duration::from_secs_f64(ticks as f64 * self.period_s)
    }

    /// Records that `tick` started at `at`, and returns how late it started
    /// (s). A whole period late or more restarts the grid at `at`.
    pub fn started(&mut self, tick: u64, at: Instant) -> f64 {
        let late_s = at.saturating_duration_since(self.due(tick)).as_secs_f64();
        if late_s >= self.period_s {
            self.anchor = at;
            self.anchor_tick = tick;
            self.clock_lag_s += late_s;
        }
        late_s
    }

    /// Wall-clock time lost to restarts so far (s): how far the session
    /// clock is behind.
    pub fn clock_lag_s(&self) -> f64 {
        self.clock_lag_s
    }
}
