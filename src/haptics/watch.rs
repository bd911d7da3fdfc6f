//! What a study needs to know of a trial while it runs: for each watched
//! body (the two plates), how many times the proxy struck it and the tick
//! it broke at (its first crack). The simulation thread writes it at each synchronisation,
//! before it answers the haptic thread, so that in lockstep whatever reads
//! it after that synchronisation's tick sees the same values every run.

use crate::world::{BodyContact, BodyId, FractureEvent, World};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Strikes and breaks of named bodies, shared between threads.
#[derive(Debug)]
pub struct BodyWatch {
    names: Vec<String>,
    strikes: Vec<AtomicU32>,
    /// The tick of the synchronisation whose step broke the body, or
    /// `u64::MAX`.
    broken_at_tick: Vec<AtomicU64>,
    /// The tick of the last synchronisation observed.
    tick: AtomicU64,
}

/// A contact approaching faster than this starts a strike (m/s): slower
/// ones are the ball resting or sliding on the plate.
pub const STRIKE_SPEED_M_S: f64 = 0.05;

impl BodyWatch {
    /// Watches the bodies named `names` (and their fragments, named
    /// `name/N`).
    pub fn new(names: &[&str]) -> Self {
        Self {
            names: names.iter().map(|n| (*n).to_owned()).collect(),
            strikes: names.iter().map(|_| AtomicU32::new(0)).collect(),
            broken_at_tick: names.iter().map(|_| AtomicU64::new(u64::MAX)).collect(),
            tick: AtomicU64::new(0),
        }
    }

    /// The watched names.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Strikes of the proxy on body `i` so far.
    pub fn strikes(&self, i: usize) -> u32 {
        self.strikes[i].load(Ordering::Acquire)
    }

    /// The tick of the synchronisation at which body `i` broke.
    pub fn broken_at_tick(&self, i: usize) -> Option<u64> {
        let tick = self.broken_at_tick[i].load(Ordering::Acquire);
        (tick != u64::MAX).then_some(tick)
    }

    /// The tick of the last synchronisation observed: the session's
    /// clock as a study runner sees it.
    pub fn tick(&self) -> u64 {
        self.tick.load(Ordering::Acquire)
    }

    fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|watched| {
            name == watched
                || name
                    .strip_prefix(watched.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        })
    }
}

/// The simulation thread's side: which watched bodies the proxy touched at
/// the last synchronisation.
#[derive(Debug)]
pub(super) struct WatchWriter {
    pub watch: std::sync::Arc<BodyWatch>,
    touching: Vec<bool>,
    /// Scratch: touched at this synchronisation.
    now: Vec<bool>,
}

impl WatchWriter {
    pub(super) fn new(watch: std::sync::Arc<BodyWatch>) -> Self {
        let touching = vec![false; watch.names.len()];
        Self {
            now: touching.clone(),
            watch,
            touching,
        }
    }

    /// One synchronisation's contacts and fracture events.
    pub(super) fn observe(
        &mut self,
        world: &World,
        proxy: BodyId,
        contacts: &[BodyContact],
        events: &[FractureEvent],
        tick: u64,
    ) {
        let w = &self.watch;
        self.now.fill(false);
        for c in contacts {
            let other_is_proxy = c.other == Some(proxy);
            if !other_is_proxy {
                continue;
            }
            let Some(i) = world.body(c.body).and_then(|b| w.index_of(&b.name)) else {
                continue;
            };
            if c.approach_speed_m_s > STRIKE_SPEED_M_S {
                self.now[i] = true;
            }
        }
        for (i, (touching, &struck)) in self.touching.iter_mut().zip(&self.now).enumerate() {
            if struck && !*touching {
                w.strikes[i].fetch_add(1, Ordering::AcqRel);
            }
            *touching = struck;
        }
        // A break is the first crack, split or not: a participant sees it
        // (the viewer draws crack surfaces), and R_c, the weakness a study
        // varies, sets when cracks start (Glondu 2012 §5.2.2: "the amount
        // of deformation the body can undergo before it begins to
        // fracture"); whether a crack splits the plate depends on G_c.
        for event in events {
            if let Some(i) = w.index_of(&event.name) {
                let _ = w.broken_at_tick[i].compare_exchange(
                    u64::MAX,
                    tick,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                );
            }
        }
        w.tick.store(tick, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_belong_to_their_watched_body() {
        let w = BodyWatch::new(&["plate-left", "plate-right"]);
        assert_eq!(w.index_of("plate-left"), Some(0));
        assert_eq!(w.index_of("plate-left/3"), Some(0));
        assert_eq!(w.index_of("plate-left/3/1"), Some(0));
        assert_eq!(w.index_of("plate-leftover"), None);
        assert_eq!(w.index_of("plate-right/1"), Some(1));
    }
}
