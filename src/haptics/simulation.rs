//! The simulation thread (ARCHITECTURE.md, Threads): per synchronisation,
//! impose the sub-world's poses, adopt fragments' finished modal analyses,
//! step the global world over the ticks since the last one, fracture, and
//! choose the next sub-world.

use super::log_scene::LogScene;
use super::sync::{Exchange, SyncDown, SyncUp};
use super::view::ViewPublisher;
use super::watch::WatchWriter;
use crate::session::{Event, RecorderHandle};
use crate::world::{Adoption, BodyId, Counters, Extraction, FractureEvent, StepInputs, World};
use std::time::{Duration, Instant};

/// The global world and what the simulation thread keeps about it.
pub(super) struct Simulation {
    pub world: World,
    pub extraction: Extraction,
    /// Haptic tick length (s) and ticks per sync.
    pub tick_s: f64,
    pub sync_ratio: u32,
    last_tick: u64,
    /// The sub-world's members (ascending), chosen at the last sync.
    members: Vec<BodyId>,
    /// The threads of the world's fracture checks.
    threads: rayon::ThreadPool,
    /// Which fragments' own modal analyses a sync adopts: in lockstep all
    /// those queued at earlier syncs, so the swap is deterministic.
    adoption: Adoption,
    /// Wall time of the global steps.
    pub counters: Counters,
    /// ∫ kinetic energy dt of every dynamic body but the proxy (J·s).
    pub kinetic_energy_integral_j_s: f64,
    pub recorder: Option<RecorderHandle>,
    /// What a viewer is shown.
    pub view: Option<ViewPublisher>,
    /// The session log's 3D channels.
    pub log_scene: Option<LogScene>,
    /// A study's watched bodies.
    pub watch: Option<WatchWriter>,
}

/// The longest global step taken after late syncs, in sync periods.
const MAX_CATCH_UP: u64 = 5;

/// How long the simulation thread spins for the next sync in lockstep.
const LOCKSTEP_SPIN: Duration = Duration::from_micros(500);

impl Simulation {
    /// The simulation of `world`, its fracture checks running on `threads`.
    pub(super) fn new(
        world: World,
        extraction: Extraction,
        tick_s: f64,
        sync_ratio: u32,
        threads: rayon::ThreadPool,
        lockstep: bool,
    ) -> Self {
        Self {
            world,
            extraction,
            tick_s,
            sync_ratio,
            last_tick: 0,
            members: Vec::new(),
            threads,
            adoption: if lockstep {
                Adoption::AllQueued
            } else {
                Adoption::Finished
            },
            counters: Counters::default(),
            kinetic_energy_integral_j_s: 0.0,
            recorder: None,
            view: None,
            log_scene: None,
            watch: None,
        }
    }

    /// The first sub-world, before the haptic loop starts.
    pub(super) fn initial(&mut self, down: &mut SyncDown) {
        self.world
            .set_time_step(self.tick_s * f64::from(self.sync_ratio));
        self.world
            .extract_sub_world(&self.extraction, &[], &[], &mut down.update);
        self.members.clone_from(&down.update.members);
        down.tick = 0;
        down.fractures = 0;
        if let Some(view) = &mut self.view {
            view.publish(&self.world, 0.0, 0, &[]);
        }
        if let Some(log_scene) = &mut self.log_scene {
            log_scene.record(&self.world, 0.0, 0);
        }
    }

    /// One synchronisation: the answer to `up` written into `down`.
    pub(super) fn sync(&mut self, up: &SyncUp, down: &mut SyncDown) {
        let ticks = up
            .tick
            .saturating_sub(self.last_tick)
            .clamp(1, MAX_CATCH_UP * u64::from(self.sync_ratio));
        self.last_tick = up.tick;
        self.world.set_time_step(ticks as f64 * self.tick_s);
        self.world.apply_sub_world(&up.report);
        self.world.adopt_own_bases(self.adoption);
        // Sampled with the sub-world's states just imposed: one snapshot of
        // the whole world at this sync.
        self.kinetic_energy_integral_j_s +=
            self.world.kinetic_energy_j(Some(self.extraction.proxy)) * ticks as f64 * self.tick_s;
        let events_before = self.world.events().len();
        let inputs = StepInputs {
            external_contacts: &up.report.contacts,
            sub_world_members: &self.members,
        };
        self.world.step(&inputs, &self.threads, &mut self.counters);
        let new_events = &self.world.events()[events_before..];
        if let Some(recorder) = &self.recorder {
            for event in new_events {
                recorder.event(fracture_event(event, up.tick, self.tick_s));
            }
        }
        let time_s = up.tick as f64 * self.tick_s;
        if let Some(view) = &mut self.view {
            view.publish(&self.world, time_s, up.tick, new_events);
        }
        if let Some(log_scene) = &mut self.log_scene {
            log_scene.record(&self.world, time_s, up.tick);
        }
        if let Some(watch) = &mut self.watch {
            watch.observe(
                &self.world,
                self.extraction.proxy,
                &up.report.contacts,
                new_events,
                up.tick,
            );
        }
        down.fractures = new_events.len() as u32;
        down.tick = up.tick;
        down.impact_tick = up
            .tick
            .saturating_sub(u64::from(up.report.first_strike_steps_before.unwrap_or(0)));
        self.world.extract_sub_world(
            &self.extraction,
            &up.report.edges,
            &self.members,
            &mut down.update,
        );
        self.members.clone_from(&down.update.members);
    }

    /// Serves syncs until the exchange is stopped.
    pub(super) fn serve(&mut self, exchange: &Exchange) {
        let lockstep = matches!(self.adoption, Adoption::AllQueued);
        let mut idle_since: Option<Instant> = None;
        while !exchange.stopped() {
            let Some(up) = exchange.take_up() else {
                if let Some(view) = &mut self.view {
                    view.flush(&self.world);
                }
                // In lockstep the haptic thread waits on every answer:
                // the next sync is caught spinning for a while (a sleep
                // costs its wake-up latency at every sync), then asleep.
                let idle = *idle_since.get_or_insert_with(Instant::now);
                if lockstep && idle.elapsed() < LOCKSTEP_SPIN {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(Duration::from_micros(50));
                }
                continue;
            };
            idle_since = None;
            let mut down = exchange.free_down();
            self.sync(&up, &mut down);
            exchange.recycle_up(up);
            if let Err(down) = exchange.send_down(down) {
                // Only one answer is ever in flight; a full mailbox means the
                // haptic thread has stopped reading.
                exchange.recycle_down(down);
            }
        }
    }
}

fn fracture_event(event: &FractureEvent, tick: u64, tick_s: f64) -> Event {
    Event::Fracture {
        time_s: tick as f64 * tick_s,
        tick,
        body: event.name.clone(),
        fragments: event.fragments.len(),
        crack_area_m2: event.crack_area_m2,
    }
}
