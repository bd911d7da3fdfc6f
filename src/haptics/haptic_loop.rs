//! The haptic thread: 1 kHz on absolute deadlines ([`Deadlines`]; a
//! virtual clock in lockstep). Per tick: read the device → scaling →
//! virtual coupling → step the sub-world → scaling → command the device →
//! tick record; every r_sim ticks, synchronise with the simulation thread.
//! Nothing here allocates in the steady state, takes a lock, or formats a
//! string; rapier's step of the sub-world does make about two small
//! allocations a tick (measured in the demo), from the thread's own
//! allocator arena ([`super::private_arenas`]). In lockstep with a
//! scripted hand, a viewer's controls may hold the loop at a sync
//! ([`Pacer`], sleeps of at most 2 ms).

use super::controls::{Gate, Pacer, SessionControls};
use super::coupling::{ProxyState, VirtualCoupling};
use super::deadlines::Deadlines;
use super::realtime;
use super::scaling::{Motion, Scaling, Wrench};
use super::stats::{LoopRecorder, SlowestTick};
use super::sync::{Exchange, SyncDown, SyncUp};
use crate::device::{
    ControlMode, Device, DeviceCommand, DeviceError, DeviceState, HandTrajectory, Safety,
};
use crate::session::{Event, RecorderHandle, TickRecord};
use crate::world::{BodyId, ProxyBody, SubWorld};
use crossbeam_queue::ArrayQueue;
use nalgebra::Vector3;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long lockstep waits for an answer before it gives up: a simulation
/// thread that takes this long has failed.
const LOCKSTEP_TIMEOUT: Duration = Duration::from_secs(120);

/// How long lockstep spins for an answer before it sleeps for it.
const LOCKSTEP_SPIN: Duration = Duration::from_micros(200);
/// The sleeper spins the last stretch before a deadline (the device
/// keeper's too): a sleep's wake-up is late by tens of microseconds.
pub(super) const SPIN_NS: u32 = 150_000;

/// How the loop runs: plain data fixed for the session.
pub(super) struct LoopConfig {
    pub(super) proxy: BodyId,
    pub(super) scaling: Scaling,
    pub(super) coupling: VirtualCoupling,
    pub(super) gravity_m_s2: Vector3<f64>,
    pub(super) tick_s: f64,
    pub(super) sync_ratio: u32,
    pub(super) lockstep: bool,
    /// Ticks of the proxy's path to keep in [`LoopRun::proxy_trace`]
    /// (reserved before the loop starts; 0 for none).
    pub(super) trace_ticks: usize,
}

/// What the loop talks to.
pub(super) struct LoopIo {
    pub(super) device: Safety<Box<dyn Device>>,
    pub(super) sub: SubWorld,
    pub(super) recorder: Option<RecorderHandle>,
    /// The scripted hand of a simulated arm, for the records.
    pub(super) hand: Option<HandTrajectory>,
    /// Set by another thread to end the session at the next tick.
    pub(super) stop: Option<Arc<AtomicBool>>,
    /// Device losses and restorations for the thread that supervises the
    /// session (it prints them); full: the notice is dropped.
    pub(super) notices: Option<Arc<ArrayQueue<Notice>>>,
    /// The viewer's feed: every tick's count and decimated records.
    pub(super) view: Option<Arc<super::ViewFeed>>,
    /// A viewer's pause, steps, pace and seeks, looked at every sync
    /// (lockstep with a scripted hand only).
    pub(super) controls: Option<Arc<SessionControls>>,
}

/// How many syncs brought some news, and the sum and largest of their
/// ticks since what the news answers.
#[derive(Default, Clone, Copy)]
pub(super) struct Latency {
    pub(super) syncs: u64,
    pub(super) ticks_sum: u64,
    pub(super) ticks_max: u64,
}

impl Latency {
    fn record(&mut self, ticks: u64) {
        self.syncs += 1;
        self.ticks_sum += ticks;
        self.ticks_max = self.ticks_max.max(ticks);
    }
}

/// What a run of the loop counted, returned by [`HapticLoop::run`].
#[derive(Default)]
pub(super) struct LoopRun {
    pub(super) stats: LoopRecorder,
    pub(super) syncs: u64,
    pub(super) late_syncs: u64,
    pub(super) fractures: u64,
    /// Syncs that brought fractures the hand feels, and the sum and
    /// largest of their ticks from the strike to the fragments in the
    /// sub-world.
    pub(super) fracture_feels: Latency,
    /// Syncs that brought any fractures, and their ticks from the impact.
    pub(super) fracture_answers: Latency,
    pub(super) device_errors: u64,
    pub(super) safety_trips: u64,
    pub(super) sub_world_bodies_sum: u64,
    pub(super) peak_force_n: f64,
    /// Largest force and goal speed sent to the device, after the safety
    /// layer (impedance and admittance devices respectively).
    pub(super) peak_commanded_force_n: f64,
    pub(super) peak_commanded_speed_m_s: f64,
    /// Times the device could not be read after it could, and times it came
    /// back.
    pub(super) device_losses: u64,
    pub(super) device_restorations: u64,
    /// The tick the loop stopped at, if asked to stop before the end.
    pub(super) stopped_at: Option<u64>,
    /// Hash of the proxy's path (bit patterns of every tick's position).
    pub(super) proxy_path_hash: u64,
    /// The proxy's position per tick, up to [`LoopConfig::trace_ticks`].
    pub(super) proxy_trace: Vec<[f64; 3]>,
}

/// The loop's own state between ticks.
struct LoopState {
    last_state: DeviceState,
    /// When the device was last lost (session clock, s), while it is.
    lost_since_s: Option<f64>,
    in_flight: bool,
    /// Time this tick spent waiting for the simulation (lockstep).
    waited_s: f64,
    proxy_path: xxhash_rust::xxh3::Xxh3,
}

/// The haptic thread's loop: its configuration, what it talks to, its
/// state, and the counts of the run under way.
pub(super) struct HapticLoop {
    config: LoopConfig,
    io: LoopIo,
    state: LoopState,
    run: LoopRun,
    pacer: Pacer,
}

/// What the supervising thread is told about the device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Notice {
    /// The device could not be read: forces were zeroed at this tick.
    DeviceLost {
        /// When (s since the session's start).
        time_s: f64,
    },
    /// The device answers again; forces ramp back in.
    DeviceRestored {
        /// When (s since the session's start).
        time_s: f64,
        /// How long it had been lost (s).
        lost_for_s: f64,
    },
}

/// Why the loop stopped early.
#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    /// In lockstep, the simulation thread did not answer a sync within this time; the tick.
    #[error("lockstep: no answer from the simulation thread for {0:?} (tick {1})")]
    SimulationStalled(Duration, u64),
}

impl HapticLoop {
    /// A loop ready to run; the proxy trace is reserved here, before the
    /// steady state.
    pub(super) fn new(config: LoopConfig, io: LoopIo) -> Self {
        let run = LoopRun {
            proxy_trace: Vec::with_capacity(config.trace_ticks),
            ..LoopRun::default()
        };
        Self {
            config,
            io,
            state: LoopState {
                last_state: DeviceState::default(),
                lost_since_s: None,
                in_flight: false,
                waited_s: 0.0,
                proxy_path: xxhash_rust::xxh3::Xxh3::new(),
            },
            run,
            pacer: Pacer::new(),
        }
    }

    /// Tells the viewer what the scheduler gave this thread (once, before
    /// the loop).
    pub(super) fn show_realtime(&self, report: &super::RealtimeReport) {
        let Some(view) = &self.io.view else {
            return;
        };
        let mut text = if self.config.lockstep {
            "lockstep (virtual clock)".to_string()
        } else {
            format!("{} {}", report.policy, report.priority)
        };
        if let Some(cpu) = report.cpu {
            text.push_str(&format!(", CPU {cpu}"));
        }
        if report.memory_locked {
            text.push_str(", memory locked");
        }
        view.set_realtime(text);
    }

    /// Runs `ticks` ticks, synchronising through `exchange`, then releases
    /// the device (also when the simulation stalls).
    pub(super) fn run(mut self, ticks: u64, exchange: &Exchange) -> Result<LoopRun, LoopError> {
        let result = self.ticks(ticks, exchange);
        let end_s = self.run.stats.ticks as f64 * self.config.tick_s;
        if self.io.device.release(end_s).is_err() {
            self.run.device_errors += 1;
        }
        result?;
        self.run.proxy_path_hash = self.state.proxy_path.digest();
        Ok(self.run)
    }

    fn ticks(&mut self, ticks: u64, exchange: &Exchange) -> Result<(), LoopError> {
        let sleeper = spin_sleep::SpinSleeper::new(SPIN_NS);
        let mut deadlines = Deadlines::new(Instant::now(), self.config.tick_s);
        let mut up = exchange.free_up();
        let stop = self.io.stop.clone();
        let stopped = move || stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed));
        let sync_ratio = u64::from(self.config.sync_ratio);
        for tick in 0..ticks {
            // A viewer holds a lockstep session at a sync only: its sync
            // message is sent, and the world the viewer shows is the one
            // that sync's step leaves.
            if let Some(controls) = &self.io.controls {
                if tick % sync_ratio == 0
                    && self
                        .pacer
                        .gate(controls, tick, self.config.tick_s, &stopped)
                        == Gate::Restart
                {
                    self.run.stopped_at = Some(tick);
                    break;
                }
            }
            // Checked between ticks only: a stop while lockstep waits for
            // the simulation takes its answer first, so an interrupted
            // lockstep session is a prefix that replays bit for bit.
            if stopped() {
                self.run.stopped_at = Some(tick);
                break;
            }
            if !self.config.lockstep {
                sleeper.sleep_until(deadlines.due(tick));
            }
            let woke = Instant::now();
            let woke_on_cpu_s = realtime::thread_cpu_s();
            let woke_switches = realtime::thread_switches();
            let lateness_us = if self.config.lockstep {
                0.0
            } else {
                let late_us = deadlines.started(tick, woke) * 1e6;
                self.run.stats.clock_lag_s = deadlines.clock_lag_s();
                late_us
            };
            self.tick(tick, lateness_us, woke);
            if (tick + 1) % u64::from(self.config.sync_ratio) == 0 {
                up = self.synchronise(tick + 1, up, exchange)?;
            }
            // Waiting for the simulation in lockstep is not the loop's work.
            let compute_us = (woke.elapsed().as_secs_f64() - self.state.waited_s) * 1e6;
            self.state.waited_s = 0.0;
            self.run.stats.lateness.record(lateness_us);
            self.run.stats.compute.record(compute_us);
            if compute_us > self.run.stats.slowest_tick.compute_us {
                let switches = realtime::thread_switches();
                self.run.stats.slowest_tick = SlowestTick {
                    tick,
                    compute_us,
                    on_cpu_us: (realtime::thread_cpu_s() - woke_on_cpu_s) * 1e6,
                    waits: switches.0 - woke_switches.0,
                    preemptions: switches.1 - woke_switches.1,
                };
            }
            self.run.stats.ticks += 1;
        }
        exchange.recycle_up(up);
        // Lockstep: the last sync's answer is taken before the end, so the
        // world's final state always includes that sync's global step
        // (otherwise it would depend on whether the simulation thread took
        // the sync before the stop).
        if self.config.lockstep && self.state.in_flight {
            let down = self.wait_for_answer(self.run.stats.ticks, exchange)?;
            self.run.fractures += u64::from(down.fractures);
            exchange.recycle_down(down);
            self.state.in_flight = false;
        }
        Ok(())
    }

    /// Counts a device loss or restoration, logs it and tells the
    /// supervisor (rare events: the log's text is their one allocation).
    fn device_presence(&mut self, tick: u64, now_s: f64, readable: Result<(), DeviceError>) {
        match (readable, self.state.lost_since_s) {
            (Err(error), None) => {
                self.run.device_losses += 1;
                self.state.lost_since_s = Some(now_s);
                if let Some(r) = &self.io.recorder {
                    r.event(Event::DeviceLost {
                        time_s: now_s,
                        tick,
                        error: error.to_string(),
                    });
                }
                if let Some(n) = &self.io.notices {
                    let _ = n.push(Notice::DeviceLost { time_s: now_s });
                }
            }
            (Ok(()), Some(since)) => {
                self.run.device_restorations += 1;
                self.state.lost_since_s = None;
                if let Some(r) = &self.io.recorder {
                    r.event(Event::DeviceRestored {
                        time_s: now_s,
                        tick,
                        lost_for_s: now_s - since,
                    });
                }
                if let Some(n) = &self.io.notices {
                    let _ = n.push(Notice::DeviceRestored {
                        time_s: now_s,
                        lost_for_s: now_s - since,
                    });
                }
            }
            _ => {}
        }
    }

    /// One tick at `tick · tick_s` on the session clock.
    fn tick(&mut self, tick: u64, lateness_us: f64, woke: Instant) {
        let now_s = tick as f64 * self.config.tick_s;
        let state = match self.io.device.read(now_s) {
            Ok(state) => {
                self.device_presence(tick, now_s, Ok(()));
                state
            }
            Err(error) => {
                // No fresh state: forces go to zero this tick and ramp in
                // again when the device answers.
                self.run.device_errors += 1;
                self.device_presence(tick, now_s, Err(error));
                if self.io.device.fail_safe(now_s).is_err() {
                    self.run.device_errors += 1;
                }
                self.state.last_state
            }
        };
        let readable = self.state.lost_since_s.is_none();
        self.state.last_state = state;
        let handle = Motion {
            position_m: state.position_m,
            orientation: state.orientation,
            velocity_m_s: state.velocity_m_s,
            angular_velocity_rad_s: state.angular_velocity_rad_s,
        };
        let target = self.config.scaling.to_simulation(&handle);
        let wrench = match self.io.sub.proxy(self.config.proxy) {
            Some(p) => self.config.coupling.wrench(
                &target,
                &ProxyState {
                    motion: motion_of(&p),
                    mass_kg: p.mass_kg,
                    inertia_kg_m2: p.inertia_kg_m2,
                    external_force_n: self.config.gravity_m_s2 * p.mass_kg,
                },
                self.config.tick_s,
            ),
            None => Wrench::default(),
        };
        self.io
            .sub
            .step(self.config.proxy, &wrench.force_n, &wrench.torque_n_m);
        let proxy_motion = self
            .io
            .sub
            .proxy(self.config.proxy)
            .map_or(target, |p| motion_of(&p));
        // The device feels the opposite of the wrench on the proxy.
        let on_device = self.config.scaling.wrench_to_device(&Wrench {
            force_n: -wrench.force_n,
            torque_n_m: -wrench.torque_n_m,
        });
        let command = match self.io.device.spec().control {
            ControlMode::Impedance => DeviceCommand::Wrench {
                force_n: on_device.force_n,
                torque_n_m: on_device.torque_n_m,
            },
            ControlMode::Admittance => {
                let goal = self.config.scaling.to_device(&proxy_motion);
                DeviceCommand::Goal {
                    position_m: goal.position_m,
                    orientation: goal.orientation,
                    velocity_m_s: goal.velocity_m_s,
                    angular_velocity_rad_s: goal.angular_velocity_rad_s,
                }
            }
        };
        if readable && self.io.device.command(&command, now_s).is_err() {
            self.run.device_errors += 1;
        }
        match self.io.device.filter().last_output() {
            Some(DeviceCommand::Wrench { force_n, .. }) => {
                self.run.peak_commanded_force_n =
                    self.run.peak_commanded_force_n.max(force_n.norm());
            }
            Some(DeviceCommand::Goal { velocity_m_s, .. }) => {
                self.run.peak_commanded_speed_m_s =
                    self.run.peak_commanded_speed_m_s.max(velocity_m_s.norm());
            }
            None => {}
        }
        let trips = &mut self.run.safety_trips;
        let recorder = &self.io.recorder;
        self.io.device.drain_events(|e| {
            *trips += 1;
            if let Some(r) = recorder {
                r.event(Event::SafetyTrip {
                    time_s: e.time_s,
                    // Trips are rare events; the log's text is the one
                    // allocation they cost.
                    cause: e.cause.name().to_owned(),
                    latched: e.latched,
                });
            }
        });
        let force = on_device.force_n.norm();
        self.run.peak_force_n = self.run.peak_force_n.max(force);
        for v in proxy_motion.position_m.iter() {
            self.state.proxy_path.update(&v.to_bits().to_le_bytes());
        }
        let trace = &mut self.run.proxy_trace;
        if trace.len() < trace.capacity() {
            trace.push(proxy_motion.position_m.into());
        }
        let bodies = self.io.sub.len();
        self.run.sub_world_bodies_sum += bodies as u64;
        self.run.stats.max_sub_world_bodies = self.run.stats.max_sub_world_bodies.max(bodies);
        if self.io.recorder.is_some() || self.io.view.is_some() {
            let pq = proxy_motion.orientation.quaternion();
            let (command, command_is_force) = match command {
                DeviceCommand::Goal { position_m, .. } => (position_m, false),
                DeviceCommand::Wrench { force_n, .. } => (force_n, true),
            };
            let hand = self
                .io
                .hand
                .as_ref()
                .map_or(Vector3::zeros(), |h| h.at(now_s).0);
            let record = TickRecord {
                command: command.into(),
                command_is_force,
                hand_position_m: hand.into(),
                proxy_position_m: proxy_motion.position_m.into(),
                proxy_orientation_wxyz: [pq.w, pq.i, pq.j, pq.k],
                coupling_force_n: on_device.force_n.into(),
                period_us: (self.config.tick_s * 1e6 + lateness_us) as f32,
                compute_us: (woke.elapsed().as_secs_f64() * 1e6) as f32,
                ..TickRecord::of_device(tick, now_s, &state)
            };
            if let Some(recorder) = &self.io.recorder {
                recorder.tick(record);
            }
            if let Some(view) = &self.io.view {
                let sample = super::view::SignalSample {
                    record,
                    goal_position_m: target.position_m.into(),
                    late_syncs: self.run.late_syncs,
                };
                view.tick(&sample, self.run.safety_trips);
            }
        }
    }

    /// Lockstep: the answer to the sync in flight, waiting at most
    /// [`LOCKSTEP_TIMEOUT`].
    fn wait_for_answer(
        &mut self,
        tick: u64,
        exchange: &Exchange,
    ) -> Result<Box<SyncDown>, LoopError> {
        let waited = Instant::now();
        loop {
            // A quick answer is caught spinning; a slow one (a fracture
            // event) asleep, leaving the cores to the simulation's work.
            let down = if waited.elapsed() < LOCKSTEP_SPIN {
                std::thread::yield_now();
                exchange.take_down()
            } else {
                exchange.wait_down(Duration::from_millis(10))
            };
            if let Some(down) = down {
                self.state.waited_s += waited.elapsed().as_secs_f64();
                return Ok(down);
            }
            if waited.elapsed() > LOCKSTEP_TIMEOUT {
                return Err(LoopError::SimulationStalled(LOCKSTEP_TIMEOUT, tick));
            }
        }
    }

    /// The sync at `tick`: take the answer to the last one (waiting for it
    /// in lockstep, counting it late otherwise), then send this one.
    fn synchronise(
        &mut self,
        tick: u64,
        mut up: Box<SyncUp>,
        exchange: &Exchange,
    ) -> Result<Box<SyncUp>, LoopError> {
        self.run.syncs += 1;
        if self.state.in_flight {
            let answer = if self.config.lockstep {
                Some(self.wait_for_answer(tick, exchange)?)
            } else {
                exchange.take_down()
            };
            match answer {
                Some(down) => {
                    self.io.sub.apply(&down.update);
                    self.run.fractures += u64::from(down.fractures);
                    if down.fractures > 0 {
                        let ticks = tick.saturating_sub(down.impact_tick);
                        self.run.fracture_answers.record(ticks);
                    }
                    if down.felt_fractures > 0 {
                        let ticks = tick.saturating_sub(down.felt_impact_tick);
                        self.run.fracture_feels.record(ticks);
                    }
                    exchange.recycle_down(down);
                    self.state.in_flight = false;
                }
                None => {
                    self.run.late_syncs += 1;
                    if let Some(r) = &self.io.recorder {
                        r.event(Event::LateSync {
                            time_s: tick as f64 * self.config.tick_s,
                            tick,
                            late_by_ticks: u64::from(self.config.sync_ratio),
                        });
                    }
                    return Ok(up);
                }
            }
        }
        up.tick = tick;
        self.io.sub.report(&mut up.report);
        match exchange.send_up(up) {
            Ok(()) => {
                self.state.in_flight = true;
                Ok(exchange.free_up())
            }
            Err(up) => Ok(up),
        }
    }
}

/// The proxy's centre of mass as a [`Motion`].
fn motion_of(p: &ProxyBody) -> Motion {
    Motion {
        position_m: p.com_pose.translation.vector,
        orientation: p.com_pose.rotation,
        velocity_m_s: p.linvel_m_s,
        angular_velocity_rad_s: p.angvel_rad_s,
    }
}
