//! The haptic thread: 1 kHz on absolute deadlines ([`Deadlines`]; a
//! virtual clock in lockstep). Per tick: read the device → scaling →
//! virtual coupling → step the sub-world → scaling → command the device →
//! tick record; every r_sim ticks, synchronise with the simulation thread.
//! Nothing here allocates in the steady state, takes a lock, or formats a
//! string.

use super::coupling::{ProxyState, VirtualCoupling};
use super::deadlines::Deadlines;
use super::scaling::{Motion, Scaling, Wrench};
use super::stats::LoopRecorder;
use super::sync::{Exchange, SyncUp};
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
/// The sleeper spins the last stretch before a deadline.
const SPIN_NS: u32 = 150_000;

/// Everything the haptic thread owns.
pub(super) struct HapticLoop {
    pub device: Safety<Box<dyn Device>>,
    pub sub: SubWorld,
    pub proxy: BodyId,
    pub scaling: Scaling,
    pub coupling: VirtualCoupling,
    pub gravity_m_s2: Vector3<f64>,
    pub tick_s: f64,
    pub sync_ratio: u32,
    pub lockstep: bool,
    pub recorder: Option<RecorderHandle>,
    /// The scripted hand of a simulated arm, for the records.
    pub hand: Option<HandTrajectory>,
    pub stats: LoopRecorder,
    pub syncs: u64,
    pub late_syncs: u64,
    pub fractures: u64,
    pub device_errors: u64,
    pub safety_trips: u64,
    pub sub_world_bodies_sum: u64,
    pub peak_force_n: f64,
    /// Largest force and goal speed sent to the device, after the safety
    /// layer (impedance and admittance devices respectively).
    pub peak_commanded_force_n: f64,
    pub peak_commanded_speed_m_s: f64,
    /// Times the device could not be read after it could, and times it came
    /// back.
    pub device_losses: u64,
    pub device_restorations: u64,
    /// Set by another thread to end the session at the next tick.
    pub stop: Option<Arc<AtomicBool>>,
    /// Device losses and restorations for the thread that supervises the
    /// session (it prints them); full: the notice is dropped.
    pub notices: Option<Arc<ArrayQueue<Notice>>>,
    /// The tick the loop stopped at, if asked to stop before the end.
    pub stopped_at: Option<u64>,
    /// Hash of the proxy's path (bit patterns of every tick's position).
    pub proxy_path: xxhash_rust::xxh3::Xxh3,
    /// The proxy's position per tick (capacity reserved by the caller; the
    /// loop stops adding when it is full rather than grow).
    pub proxy_trace: Option<Vec<[f64; 3]>>,
    last_state: DeviceState,
    /// When the device was last lost (session clock, s), while it is.
    lost_since_s: Option<f64>,
    in_flight: bool,
    /// Time this tick spent waiting for the simulation (lockstep).
    waited_s: f64,
}

/// What the supervising thread is told about the device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Notice {
    /// The device could not be read: forces were zeroed at this tick.
    DeviceLost { time_s: f64 },
    /// The device answers again; forces ramp back in.
    DeviceRestored { time_s: f64, lost_for_s: f64 },
}

/// Why the loop stopped early.
#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    #[error("lockstep: no answer from the simulation thread for {0:?} (tick {1})")]
    SimulationStalled(Duration, u64),
}

impl HapticLoop {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        device: Safety<Box<dyn Device>>,
        sub: SubWorld,
        proxy: BodyId,
        scaling: Scaling,
        coupling: VirtualCoupling,
        gravity_m_s2: Vector3<f64>,
        sync_ratio: u32,
        lockstep: bool,
    ) -> Self {
        Self {
            device,
            sub,
            proxy,
            scaling,
            coupling,
            gravity_m_s2,
            tick_s: 1e-3,
            sync_ratio,
            lockstep,
            recorder: None,
            hand: None,
            stats: LoopRecorder::default(),
            syncs: 0,
            late_syncs: 0,
            fractures: 0,
            device_errors: 0,
            safety_trips: 0,
            sub_world_bodies_sum: 0,
            peak_force_n: 0.0,
            peak_commanded_force_n: 0.0,
            peak_commanded_speed_m_s: 0.0,
            device_losses: 0,
            device_restorations: 0,
            stop: None,
            notices: None,
            stopped_at: None,
            proxy_path: xxhash_rust::xxh3::Xxh3::new(),
            proxy_trace: None,
            last_state: DeviceState::default(),
            lost_since_s: None,
            in_flight: false,
            waited_s: 0.0,
        }
    }

    /// Runs `ticks` ticks, synchronising through `exchange`.
    pub(super) fn run(&mut self, ticks: u64, exchange: &Exchange) -> Result<(), LoopError> {
        let sleeper = spin_sleep::SpinSleeper::new(SPIN_NS);
        let mut deadlines = Deadlines::new(Instant::now(), self.tick_s);
        let mut up = exchange.free_up();
        for tick in 0..ticks {
            // Checked between ticks only: a stop while lockstep waits for
            // the simulation takes its answer first, so an interrupted
            // lockstep session is a prefix that replays bit for bit.
            if self.stop_requested() {
                self.stopped_at = Some(tick);
                break;
            }
            if !self.lockstep {
                sleeper.sleep_until(deadlines.due(tick));
            }
            let woke = Instant::now();
            let lateness_us = if self.lockstep {
                0.0
            } else {
                let late_us = deadlines.started(tick, woke) * 1e6;
                self.stats.clock_lag_s = deadlines.clock_lag_s();
                late_us
            };
            self.tick(tick, lateness_us, woke);
            if (tick + 1) % u64::from(self.sync_ratio) == 0 {
                up = self.synchronise(tick + 1, up, exchange)?;
            }
            // Waiting for the simulation in lockstep is not the loop's work.
            let compute_us = (woke.elapsed().as_secs_f64() - self.waited_s) * 1e6;
            self.waited_s = 0.0;
            self.stats.lateness.record(lateness_us);
            self.stats.compute.record(compute_us);
            self.stats.ticks += 1;
        }
        exchange.recycle_up(up);
        let end_s = self.stats.ticks as f64 * self.tick_s;
        if self.device.release(end_s).is_err() {
            self.device_errors += 1;
        }
        Ok(())
    }

    fn stop_requested(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// Counts a device loss or restoration, logs it and tells the
    /// supervisor (rare events: the log's text is their one allocation).
    fn device_presence(&mut self, tick: u64, now_s: f64, readable: Result<(), DeviceError>) {
        match (readable, self.lost_since_s) {
            (Err(error), None) => {
                self.device_losses += 1;
                self.lost_since_s = Some(now_s);
                if let Some(r) = &self.recorder {
                    r.event(Event::DeviceLost {
                        time_s: now_s,
                        tick,
                        error: error.to_string(),
                    });
                }
                if let Some(n) = &self.notices {
                    let _ = n.push(Notice::DeviceLost { time_s: now_s });
                }
            }
            (Ok(()), Some(since)) => {
                self.device_restorations += 1;
                self.lost_since_s = None;
                if let Some(r) = &self.recorder {
                    r.event(Event::DeviceRestored {
                        time_s: now_s,
                        tick,
                        lost_for_s: now_s - since,
                    });
                }
                if let Some(n) = &self.notices {
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
        let now_s = tick as f64 * self.tick_s;
        let state = match self.device.read(now_s) {
            Ok(state) => {
                self.device_presence(tick, now_s, Ok(()));
                state
            }
            Err(error) => {
                // No fresh state: forces go to zero this tick and ramp in
                // again when the device answers.
                self.device_errors += 1;
                self.device_presence(tick, now_s, Err(error));
                if self.device.fail_safe(now_s).is_err() {
                    self.device_errors += 1;
                }
                self.last_state
            }
        };
        let readable = self.lost_since_s.is_none();
        self.last_state = state;
        let handle = Motion {
            position_m: state.position_m,
            orientation: state.orientation,
            velocity_m_s: state.velocity_m_s,
            angular_velocity_rad_s: state.angular_velocity_rad_s,
        };
        let target = self.scaling.to_simulation(&handle);
        let wrench = match self.sub.proxy(self.proxy) {
            Some(p) => self.coupling.wrench(
                &target,
                &ProxyState {
                    motion: motion_of(&p),
                    mass_kg: p.mass_kg,
                    inertia_kg_m2: p.inertia_kg_m2,
                    external_force_n: self.gravity_m_s2 * p.mass_kg,
                },
                self.tick_s,
            ),
            None => Wrench::default(),
        };
        self.sub
            .step(self.proxy, &wrench.force_n, &wrench.torque_n_m);
        let proxy_motion = self.sub.proxy(self.proxy).map_or(target, |p| motion_of(&p));
        // The device feels the opposite of the wrench on the proxy.
        let on_device = self.scaling.wrench_to_device(&Wrench {
            force_n: -wrench.force_n,
            torque_n_m: -wrench.torque_n_m,
        });
        let command = match self.device.spec().control {
            ControlMode::Impedance => DeviceCommand::Wrench {
                force_n: on_device.force_n,
                torque_n_m: on_device.torque_n_m,
            },
            ControlMode::Admittance => {
                let goal = self.scaling.to_device(&proxy_motion);
                DeviceCommand::Goal {
                    position_m: goal.position_m,
                    orientation: goal.orientation,
                    velocity_m_s: goal.velocity_m_s,
                    angular_velocity_rad_s: goal.angular_velocity_rad_s,
                }
            }
        };
        if readable && self.device.command(&command, now_s).is_err() {
            self.device_errors += 1;
        }
        match self.device.filter().last_output() {
            Some(DeviceCommand::Wrench { force_n, .. }) => {
                self.peak_commanded_force_n = self.peak_commanded_force_n.max(force_n.norm());
            }
            Some(DeviceCommand::Goal { velocity_m_s, .. }) => {
                self.peak_commanded_speed_m_s =
                    self.peak_commanded_speed_m_s.max(velocity_m_s.norm());
            }
            None => {}
        }
        let trips = &mut self.safety_trips;
        let recorder = &self.recorder;
        self.device.drain_events(|e| {
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
        self.peak_force_n = self.peak_force_n.max(force);
        for v in proxy_motion.position_m.iter() {
            self.proxy_path.update(&v.to_bits().to_le_bytes());
        }
        if let Some(trace) = &mut self.proxy_trace {
            if trace.len() < trace.capacity() {
                trace.push(proxy_motion.position_m.into());
            }
        }
        let bodies = self.sub.len();
        self.sub_world_bodies_sum += bodies as u64;
        self.stats.max_sub_world_bodies = self.stats.max_sub_world_bodies.max(bodies);
        if let Some(recorder) = &self.recorder {
            let pq = proxy_motion.orientation.quaternion();
            let (command, command_is_force) = match command {
                DeviceCommand::Goal { position_m, .. } => (position_m, false),
                DeviceCommand::Wrench { force_n, .. } => (force_n, true),
            };
            let hand = self
                .hand
                .as_ref()
                .map_or(Vector3::zeros(), |h| h.at(now_s).0);
            recorder.tick(TickRecord {
                command: command.into(),
                command_is_force,
                hand_position_m: hand.into(),
                proxy_position_m: proxy_motion.position_m.into(),
                proxy_orientation_wxyz: [pq.w, pq.i, pq.j, pq.k],
                coupling_force_n: on_device.force_n.into(),
                period_us: (self.tick_s * 1e6 + lateness_us) as f32,
                compute_us: (woke.elapsed().as_secs_f64() * 1e6) as f32,
                ..TickRecord::of_device(tick, now_s, &state)
            });
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
        self.syncs += 1;
        if self.in_flight {
            let answer = if self.lockstep {
                let waited = Instant::now();
                loop {
                    if let Some(down) = exchange.take_down() {
                        self.waited_s += waited.elapsed().as_secs_f64();
                        break Some(down);
                    }
                    if waited.elapsed() > LOCKSTEP_TIMEOUT {
                        return Err(LoopError::SimulationStalled(LOCKSTEP_TIMEOUT, tick));
                    }

                    std::thread::yield_now();
                }
            } else {
                exchange.take_down()
            };
            match answer {
                Some(down) => {
                    self.sub.apply(&down.update);
                    self.fractures += u64::from(down.fractures);
                    exchange.recycle_down(down);
                    self.in_flight = false;
                }
                None => {
                    self.late_syncs += 1;
                    if let Some(r) = &self.recorder {
                        r.event(Event::LateSync {
                            time_s: tick as f64 * self.tick_s,
                            tick,
                            late_by_ticks: u64::from(self.sync_ratio),
                        });
                    }
                    return Ok(up);
                }
            }
        }
        up.tick = tick;
        self.sub.report(&mut up.report);
        match exchange.send_up(up) {
            Ok(()) => {
                self.in_flight = true;
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
