//! The simulation thread (ARCHITECTURE.md, Threads): per synchronisation,
//! impose the sub-world's poses, adopt fragments' finished modal analyses,
//! step the global world by one sync period, fracture, and choose the next
//! sub-world.
//!
//! The step is one sync period even after a late sync, when more ticks
//! have passed: a longer step would make the next sync late too
//! (docs/haptics.md, The sub-world). The world then falls behind the session
//! clock, and its events are stamped with their sync's tick.

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
    /// The sub-world's members (ascending), chosen at the last sync.
    members: Vec<BodyId>,
    /// The threads of the world's fracture checks.
    threads: rayon::ThreadPool,
    /// Which fragments' own modal analyses a sync adopts: in lockstep all
    /// those queued at earlier syncs, so the swap is deterministic.
    adoption: Adoption,
    /// The sync tick of each of the world's events, in order: the session
    /// time of an event (the world's own clock falls behind it after late
    /// syncs). In real time an event's check runs beside later steps
    /// (world/deferred.rs): its tick is the sync at which its fragments
    /// came, when the haptic thread gets them.
    pub event_ticks: Vec<u64>,
    /// The strike tick of each recent world step (the sync's tick when no
    /// sub-world strike was reported), oldest first: a deferred event
    /// answers the strike of its check's step.
    strike_ticks: std::collections::VecDeque<(u64, u64)>,
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

/// World steps whose strike tick is kept: 10 s at the default sync ratio,
/// far longer than a deferred check takes.
const STRIKE_TICKS_KEPT: usize = 1000;

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
            members: Vec::new(),
            threads,
            adoption: if lockstep {
                Adoption::AllQueued
            } else {
                Adoption::Finished
            },
            event_ticks: Vec::new(),
            strike_ticks: std::collections::VecDeque::with_capacity(STRIKE_TICKS_KEPT),
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
        down.felt_fractures = 0;
        if let Some(view) = &mut self.view {
            view.publish(&self.world, 0.0, 0, &[]);
        }
        if let Some(log_scene) = &mut self.log_scene {
            log_scene.record(&self.world, 0.0, 0);
        }
    }

    /// One synchronisation: the answer to `up` written into `down`.
    pub(super) fn sync(&mut self, up: &SyncUp, down: &mut SyncDown) {
        self.world.apply_sub_world(&up.report);
        self.world.adopt_own_bases(self.adoption);
        // Sampled with the sub-world's states just imposed: one snapshot of
        // the whole world at this sync.
        self.kinetic_energy_integral_j_s +=
            self.world.kinetic_energy_j(Some(self.extraction.proxy))
                * self.world.settings().time_step_s;
        let events_before = self.world.events().len();
        let inputs = StepInputs {
            external_contacts: &up.report.contacts,
            sub_world_members: &self.members,
        };
        self.world.step(&inputs, &self.threads, &mut self.counters);
        let strike_tick = up
            .tick
            .saturating_sub(u64::from(up.report.first_strike_steps_before.unwrap_or(0)));
        if self.strike_ticks.len() == STRIKE_TICKS_KEPT {
            self.strike_ticks.pop_front();
        }
        self.strike_ticks
            .push_back((self.world.steps(), strike_tick));
        let new_events = &self.world.events()[events_before..];
        self.event_ticks
            .extend(std::iter::repeat_n(up.tick, new_events.len()));
        if let Some(recorder) = &self.recorder {
            for event in new_events {
                recorder.event(fracture_event(event, up.tick, self.tick_s));
            }
        }
        let time_s = up.tick as f64 * self.tick_s;
        if let Some(view) = &mut self.view {
            view.set_analysing(&self.world);
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
        let impact_tick = |e: &FractureEvent| {
            self.strike_ticks
                .iter()
                .rev()
                .find(|(step, _)| *step == e.step)
                .map_or(strike_tick, |&(_, tick)| tick)
        };
        down.impact_tick = new_events
            .iter()
            .map(impact_tick)
            .min()
            .unwrap_or(strike_tick);
        self.world.extract_sub_world(
            &self.extraction,
            &up.report.edges,
            &self.members,
            &mut down.update,
        );
        // Felt: the body was in the sub-world, or a fragment is now (both
        // lists ascending).
        let in_sub_world = |members: &[BodyId], id: &BodyId| members.binary_search(id).is_ok();
        let felt = new_events.iter().filter(|e| {
            in_sub_world(&self.members, &e.body)
                || e.fragments
                    .iter()
                    .any(|f| in_sub_world(&down.update.members, f))
        });
        down.felt_fractures = felt.clone().count() as u32;
        down.felt_impact_tick = felt.map(impact_tick).min().unwrap_or(strike_tick);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{MaterialLibrary, Scene};
    use crate::world::SceneAssets;
    use std::path::Path;

    /// A ball in free fall and, far from it, the proxy.
    fn falling_ball() -> (Simulation, BodyId) {
        let scene = Scene::parse(
            r#"
            [[body]]
            name = "ball"
            kind = "dynamic"
            shape = { type = "sphere", radius_m = 0.02 }
            material = "steel"

            [[body]]
            name = "hand"
            kind = "dynamic"
            shape = { type = "sphere", radius_m = 0.02 }
            material = "steel"
            position_m = [1.0, 0.0, 0.0]
            "#,
            Path::new("fall.toml"),
        )
        .expect("the scene parses");
        let threads = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("a pool");
        let assets =
            SceneAssets::load(&scene, &MaterialLibrary::builtin(), None, &threads, &|_| {})
                .expect("the scene's assets");
        let world = World::from_scene(&scene, &assets, 0, &threads).expect("the world");
        let ball = world.find("ball").expect("the ball");
        let extraction = Extraction {
            proxy: world.find("hand").expect("the hand"),
            max_graph_bodies: 0,
            max_bodies: 0,
            max_added_per_sync: 0,
            boundary_side_m: 0.1,
            everything: false,
        };
        let simulation = Simulation::new(world, extraction, 0.001, 10, threads, false);
        (simulation, ball)
    }

    #[test]
    fn a_late_sync_steps_the_world_by_one_sync_period() {
        let (mut simulation, ball) = falling_ball();
        let mut down = SyncDown::default();
        simulation.initial(&mut down);
        // Syncs at ticks 10 and 40: those of ticks 20 and 30 were late.
        for tick in [10, 40] {
            let up = SyncUp {
                tick,
                ..SyncUp::default()
            };
            simulation.sync(&up, &mut down);
        }
        // Two steps of 10 ms: the fall's speed is g·20 ms (rapier's
        // integrator is exact for the velocity under constant gravity).
        let world = &simulation.world;
        assert!((world.time_s() - 0.02).abs() < 1e-12, "{}", world.time_s());
        let motion = world.motion(ball).expect("live");
        let momentum = nalgebra::Vector3::from(motion.momentum_n_s);
        let speed_m_s = momentum.norm() / motion.mass_kg;
        let g_m_s2 = nalgebra::Vector3::from(world.settings().gravity_m_s2).norm();
        assert!(
            (speed_m_s - g_m_s2 * 0.02).abs() < 1e-4 * g_m_s2 * 0.02,
            "{speed_m_s} m/s"
        );
    }
}
