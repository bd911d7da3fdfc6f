//! A haptic session: the global world on the simulation thread, the
//! sub-world, coupling and device on the haptic thread, and the summary
//! both report at the end.

use super::controls::SessionControls;
use super::coupling::{CouplingGains, Integration, VirtualCoupling};
use super::haptic_loop::{HapticLoop, Latency, LoopConfig, LoopError, LoopIo, LoopRun, Notice};
use super::log_scene::LogScene;
use super::realtime::{
    self, CpuPin, HeapReserveError, HostSteal, RealtimeReport, StealSample,
    HAPTIC_HEAP_RESERVE_BYTES, SIMULATION_HEAP_RESERVE_BYTES,
};
use super::scaling::Scaling;
use super::simulation::Simulation;
use super::stats::{LoopStats, SyncStats};
use super::sync::Exchange;
use super::view::{ViewFeed, ViewPublisher, ViewSession};
use super::watch::{BodyWatch, WatchWriter};
use crate::config::{HapticSpec, ScalingFactors};
use crate::device::{Device, HandTrajectory, Safety, SafetySettings};
use crate::session::RecorderHandle;
use crate::world::{BodyId, Extraction, FractureKind, FractureWorker, SubWorld, World};
use crossbeam_queue::ArrayQueue;
use nalgebra::Vector3;
use serde::Serialize;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// How a session runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerOptions {
    /// Session length (s).
    pub seconds: f64,
    /// Wait for every sync on a virtual clock (bit-reproducible).
    pub lockstep: bool,
    /// Request SCHED_FIFO and locked memory for the haptic thread
    /// (real-time mode only).
    pub realtime: bool,
    /// Which CPU the haptic thread is pinned to (real-time mode only).
    pub haptic_cpu: CpuPin,
    /// How the proxy is integrated with the coupling spring.
    pub integration: Integration,
    /// Direct coupling: the whole world is the sub-world, stepped in the
    /// haptic thread (the baseline of Glondu §4.3.3.2).
    pub direct: bool,
    /// Overrides the scene's r_sim.
    pub sync_ratio: Option<u32>,
    /// Keep the proxy's position at every tick in [`Summary::proxy_trace`]
    /// (memory reserved before the loop starts).
    pub trace: bool,
    /// Safety settings (default: [`SafetySettings::for_spec`] of the
    /// device); validated, as the device's spec is.
    pub safety: Option<SafetySettings>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            seconds: 15.0,
            lockstep: false,
            realtime: true,
            haptic_cpu: CpuPin::Auto,
            integration: Integration::Implicit,
            direct: false,
            sync_ratio: None,
            trace: false,
            safety: None,
        }
    }
}

/// How much the pool of the fracture checks no one waits to feel raises
/// its nice value (real-time sessions): 5 more than the checks that are
/// felt, whose weight in the kernel's fair scheduler is then 110 against
/// 36 (`sched_prio_to_weight`), three quarters of a core they share.
const OTHER_CHECKS_NICE: i32 = crate::worker::BACKGROUND_NICE + 5;

/// Why a session could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The scene has no body named as its proxy.
    #[error("scene {scene}: the haptic proxy `{proxy}` is not in the world")]
    NoProxy {
        /// The scene's path.
        scene: String,
        /// The proxy's name in the `[haptic]` table.
        proxy: String,
    },
    /// The session length is out of range.
    #[error("seconds must be in (0, {max}] (one week; got {0})", max = crate::limits::MAX_SESSION_S)]
    Seconds(f64),
    /// The sync ratio is out of range.
    #[error("sync ratio must be in 1..=1000 haptic ticks per global step (got {0})")]
    SyncRatio(u32),
    /// The session would need more memory than allowed.
    #[error(transparent)]
    Limit(#[from] crate::limits::LimitError),
    /// The safety settings or the device spec are invalid.
    #[error(transparent)]
    Safety(#[from] crate::device::SafetySettingsError),
    /// The haptic loop stopped early.
    #[error(transparent)]
    Loop(#[from] LoopError),
    /// A thread panicked; its name.
    #[error("the {0} thread panicked")]
    Panicked(&'static str),
    /// A thread could not be started; its name and the system's error.
    #[error("could not start the {0} thread: {1}")]
    Spawn(&'static str, std::io::Error),
}

/// One fracture of the session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FractureSummary {
    /// When (s since the session's start).
    pub time_s: f64,
    /// The body that broke.
    pub body: String,
    /// Impact or static load.
    pub kind: FractureKind,
    /// Bodies that replaced it.
    pub fragments: usize,
    /// Pieces removed as debris.
    pub debris: usize,
    /// Crack area (m²).
    pub crack_area_m2: f64,
    /// Normal impulse of the contacts that broke it (N·s).
    pub impulse_n_s: f64,
    /// Wall time of the fracture check and of the fragments' insertion (ms).
    pub fracture_ms: f64,
}

/// The latency from a strike to the fragments it made in the sub-world:
/// the strike's report waits for its sync (at most r_sim ticks), the global
/// step breaks the body, and the haptic thread takes the answer at a later
/// sync (the next one in lockstep; in real time the first after the
/// simulation answered). [`Summary::fracture_to_world`] measures the same
/// for every fracture, from the impact's step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FractureToFeel {
    /// Syncs that brought fractures.
    pub events: u64,
    /// Mean latency (ms of session time).
    pub mean_ms: f64,
    /// Largest latency (ms of session time).
    pub max_ms: f64,
}

impl FractureToFeel {
    fn of(latency: &Latency, tick_s: f64) -> Option<Self> {
        (latency.syncs > 0).then(|| Self {
            events: latency.syncs,
            mean_ms: latency.ticks_sum as f64 * tick_s * 1e3 / latency.syncs as f64,
            max_ms: latency.ticks_max as f64 * tick_s * 1e3,
        })
    }
}

/// What the session ended with, for replays.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// Hash of the global world's final body states.
    pub state_hash: u64,
    /// Hash of the proxy's position at every tick.
    pub proxy_path_hash: u64,
    /// Live bodies at the end.
    pub bodies: usize,
    /// ∫ kinetic energy dt of the global world's dynamic bodies but the
    /// proxy, sampled at every global step (J·s).
    pub kinetic_energy_integral_j_s: f64,
}

/// The session's summary (`--json` prints it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// `real-time` or `lockstep`.
    pub mode: &'static str,
    /// Simulated time (s).
    pub seconds: f64,
    /// The device's name.
    pub device: String,
    /// What the haptic loop measured.
    pub haptic: LoopStats,
    /// The synchronisations with the simulation thread.
    pub syncs: SyncStats,
    /// Every fracture, in order.
    pub fractures: Vec<FractureSummary>,
    /// From a strike to its fragments in the haptic sub-world, where the
    /// hand feels them: the fractures of bodies in the sub-world or with a
    /// fragment in it; `None` without such fractures.
    pub fracture_to_feel: Option<FractureToFeel>,
    /// From an impact to the haptic thread's sync that brings its
    /// fractures into the world, for every fracture (a tile breaking on
    /// the floor too, which the hand does not feel); `None` without
    /// fractures.
    pub fracture_to_world: Option<FractureToFeel>,
    /// Fragments swapped to a modal basis of their own
    /// ([`World::adopt_own_bases`]).
    pub own_bases_adopted: u64,
    /// Where the session log was written (set by the caller).
    pub log: Option<String>,
    /// The viewer's URL (set by the caller).
    pub ui_url: Option<String>,
    /// What the viewer did (set by the caller).
    pub ui: Option<super::ViewStats>,
    /// What the haptic thread obtained from the scheduler.
    pub realtime: RealtimeReport,
    /// CPU time the host took from this machine during the run; `None`
    /// where the kernel does not report it.
    pub host_steal: Option<HostSteal>,
    /// The virtual coupling's gains.
    pub coupling: CouplingGains,
    /// The scaling factors used.
    pub scaling: ScalingFactors,
    /// Haptic ticks per global step.
    pub sync_ratio: u32,
    /// Mean number of bodies in the sub-world.
    pub sub_world_mean_bodies: f64,
    /// Largest coupling force felt on the device side (N).
    pub peak_coupling_force_n: f64,
    /// What the device was sent, after the safety layer.
    pub commanded: Commanded,
    /// Device reads and writes that failed.
    pub device_errors: u64,
    /// Times the device was lost (could not be read) and came back.
    pub device_losses: u64,
    /// Times the device came back after a loss.
    pub device_restorations: u64,
    /// The device was lost or failed during the session: what the user
    /// felt was not the simulation throughout.
    pub degraded: bool,
    /// The session was stopped (a signal) before its planned end.
    pub interrupted: bool,
    /// Times the safety layer tripped.
    pub safety_trips: u64,
    /// The world's final state, for comparing runs.
    pub outcome: Outcome,
    /// The proxy's position at every tick, if asked for.
    #[serde(skip)]
    pub proxy_trace: Vec<[f64; 3]>,
}

/// The largest output the device was sent, after the safety layer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Commanded {
    /// Impedance devices: the largest force sent (N); 0 for admittance.
    pub peak_force_n: f64,
    /// Admittance devices: the largest goal speed sent (m/s).
    pub peak_goal_speed_m_s: f64,
}

/// Everything a session needs.
pub struct ServeInputs {
    /// The global world, with the proxy in it.
    pub world: World,
    /// The worker threads of the world's fracture checks.
    pub threads: rayon::ThreadPool,
    /// The scene's `[haptic]` table.
    pub haptic: HapticSpec,
    /// The scene's name or path, for messages.
    pub scene_name: String,
    /// The device, already open.
    pub device: Box<dyn Device>,
    /// The device profile's name (selects per-device scaling).
    pub device_name: String,
    /// The scripted hand of a simulated device.
    pub hand: Option<HandTrajectory>,
    /// Where ticks and events are recorded.
    pub recorder: Option<RecorderHandle>,
    /// Length, mode and scheduling of the session.
    pub options: ServerOptions,
    /// Set from another thread (a signal handler) to end the session
    /// cleanly at the next tick.
    pub stop: Option<Arc<AtomicBool>>,
    /// Called on the calling thread for each device loss and restoration,
    /// while the session runs.
    pub on_notice: Option<Box<dyn FnMut(Notice)>>,
    /// Where a viewer reads the session (`crate::haptics::ViewFeed`).
    pub view: Option<Arc<ViewFeed>>,
    /// A viewer's pause, steps, pace, seeks and restarts; honoured in
    /// lockstep with a scripted hand only (never with a hand in the loop).
    pub controls: Option<Arc<SessionControls>>,
    /// Bodies whose strikes and breaks a study follows.
    pub watch: Option<Arc<BodyWatch>>,
}

/// How long the haptic thread's start waits for the simulation thread's
/// heap reserve.
const HEAP_RESERVE_TIMEOUT: Duration = Duration::from_secs(10);

/// How often the calling thread looks for notices while a session runs.
const SUPERVISE_EVERY: Duration = Duration::from_millis(20);

/// Ticks per second of the haptic loop.
pub const HAPTIC_RATE_HZ: f64 = 1000.0;

/// Runs a session to its end: set-up, the haptic and simulation threads,
/// then the summary.
pub fn serve(mut inputs: ServeInputs) -> Result<Summary, ServerError> {
    let on_notice = inputs.on_notice.take();
    let session = set_up(inputs)?;
    let view = session
        .threads
        .simulation
        .view
        .as_ref()
        .map(ViewPublisher::feed);
    let mut ran = run_threads(session.threads, on_notice);
    if let Ok(ran) = &mut ran {
        // The last frame, whatever the frame rate let through.
        let tick = ran.haptic.stats.ticks;
        let simulation = &mut ran.simulation;
        if let Some(publisher) = simulation.view.as_mut() {
            let time_s = tick as f64 * session.fixed.tick_s;
            publisher.finish(&simulation.world, time_s, tick);
        }
    }
    if let Some(feed) = view {
        feed.finish();
    }
    let ran = ran?;
    if let (Some(tick), Some(r)) = (ran.haptic.stopped_at, &session.recorder) {
        r.event(crate::session::Event::Interrupted {
            time_s: tick as f64 * session.fixed.tick_s,
            tick,
        });
    }
    Ok(summarise(session.fixed, ran))
}

/// A session ready to start.
struct SetUp {
    threads: SessionThreads,
    recorder: Option<RecorderHandle>,
    fixed: FixedSummary,
}

/// What the two threads of a session run on.
struct SessionThreads {
    haptic_loop: HapticLoop,
    simulation: Simulation,
    exchange: Exchange,
    notices: Arc<ArrayQueue<Notice>>,
    ticks: u64,
    want_realtime: bool,
    haptic_cpu: CpuPin,
}

/// The parts of the summary known before the session runs.
struct FixedSummary {
    lockstep: bool,
    tick_s: f64,
    device_name: String,
    gains: CouplingGains,
    factors: ScalingFactors,
    sync_ratio: u32,
}

/// What the threads returned.
struct Ran {
    haptic: LoopRun,
    realtime: RealtimeReport,
    host_steal: Option<HostSteal>,
    simulation: Simulation,
}

/// Checks the options and builds the world's sub-world, the coupling, the
/// safety layer and both loops.
fn set_up(inputs: ServeInputs) -> Result<SetUp, ServerError> {
    let ServeInputs {
        world,
        threads,
        haptic,
        scene_name,
        device,
        device_name,
        hand,
        recorder,
        options,
        stop,
        on_notice: _,
        view,
        controls,
        watch,
    } = inputs;
    // No one holds the arm: a scripted hand on a virtual clock.
    let controllable = options.lockstep && hand.is_some();
    let controls = controls.filter(|_| controllable);
    if !(options.seconds > 0.0 && options.seconds <= crate::limits::MAX_SESSION_S) {
        return Err(ServerError::Seconds(options.seconds));
    }
    if let Some(ratio) = options.sync_ratio.filter(|r| !(1..=1000).contains(r)) {
        return Err(ServerError::SyncRatio(ratio));
    }
    let mut world = world;
    if !options.lockstep {
        // A fracture check lasts several global steps: in real time it
        // runs beside them (world/deferred.rs) so that syncs stay on time.
        // The checks the person waits to feel have a thread and pool of
        // their own, so they never wait for another body's check, and
        // the other checks' pool yields the CPU to them.
        let spawn_error = |e: std::io::Error| ServerError::Spawn("deferred fracture", e);
        let pool = |name, nice| {
            crate::worker::background_pool_below(name, Some(threads.current_num_threads()), nice)
                .map_err(|e| spawn_error(std::io::Error::other(e)))
        };
        let (others, felt) = (
            pool("tessera-fracture-deferred", OTHER_CHECKS_NICE)?,
            pool("tessera-fracture-felt", crate::worker::BACKGROUND_NICE)?,
        );
        let worker = FractureWorker::spawn(others)
            .and_then(|w| w.with_felt_lane(felt))
            .map_err(spawn_error)?;
        world.defer_fractures(worker);
    }
    let tick_s = 1.0 / HAPTIC_RATE_HZ;
    let proxy = world
        .find(&haptic.proxy)
        .ok_or_else(|| ServerError::NoProxy {
            scene: scene_name.clone(),
            proxy: haptic.proxy.clone(),
        })?;
    let sync_ratio = options.sync_ratio.unwrap_or(haptic.sync_ratio);
    let factors = haptic.scaling_for(&device_name);
    let origin = haptic
        .origin_m
        .map(Vector3::from)
        .or_else(|| world.center_of_mass(proxy).map(|p| p.coords))
        .unwrap_or_else(Vector3::zeros);
    let scaling = Scaling::new(factors, origin);
    let spec = device.spec().clone();
    let extraction = Extraction {
        proxy,
        max_graph_bodies: haptic.max_graph_bodies,
        max_bodies: haptic.max_sub_world_bodies,
        max_added_per_sync: haptic.max_added_per_sync,
        boundary_side_m: boundary_side_m(
            &world,
            proxy,
            &haptic,
            &scaling,
            spec.max_velocity_m_s,
            sync_ratio,
            tick_s,
        ),
        everything: options.direct,
    };
    let gravity = Vector3::from(world.settings().gravity_m_s2);
    let mut sub = SubWorld::new(world.settings(), tick_s);
    let mut simulation = Simulation::new(
        world,
        extraction,
        tick_s,
        sync_ratio,
        threads,
        options.lockstep,
    );
    simulation.recorder = recorder.clone();
    simulation.log_scene = recorder.clone().map(LogScene::new);
    simulation.watch = watch.map(WatchWriter::new);
    if let Some(feed) = &view {
        feed.set_session(ViewSession {
            mode: if options.lockstep {
                "lockstep"
            } else {
                "real-time"
            },
            scene: scene_name.clone(),
            device: device_name.clone(),
            proxy: proxy.0,
            seconds: options.seconds,
            controls: controls.is_some(),
        });
        simulation.view = Some(ViewPublisher::new(Arc::clone(feed)));
    }
    let exchange = Exchange::new(2);
    let mut first = exchange.free_down();
    simulation.initial(&mut first);
    sub.apply(&first.update);
    exchange.recycle_down(first);
    let proxy_body = sub.proxy(proxy).ok_or_else(|| ServerError::NoProxy {
        scene: scene_name.clone(),
        proxy: haptic.proxy.clone(),
    })?;
    let smallest_inertia = proxy_body
        .inertia_kg_m2
        .symmetric_eigenvalues()
        .min()
        .max(1e-12);
    let gains = CouplingGains::auto_tuned(&spec, &scaling, proxy_body.mass_kg, smallest_inertia);
    let coupling = VirtualCoupling {
        gains,
        integration: options.integration,
    };
    let device = Safety::new(
        device,
        options.safety.unwrap_or(SafetySettings::for_spec(&spec)),
    )?;
    let ticks = (options.seconds * HAPTIC_RATE_HZ).round().max(1.0) as u64;
    if options.trace {
        crate::limits::check_memory(
            || format!("the proxy's path over {ticks} ticks"),
            ticks as f64 * std::mem::size_of::<[f64; 3]>() as f64,
        )?;
    }
    let notices = Arc::new(ArrayQueue::new(64));
    let haptic_loop = HapticLoop::new(
        LoopConfig {
            proxy,
            scaling,
            coupling,
            gravity_m_s2: gravity,
            tick_s,
            sync_ratio,
            lockstep: options.lockstep,
            trace_ticks: if options.trace { ticks as usize } else { 0 },
        },
        LoopIo {
            device,
            sub,
            recorder: recorder.clone(),
            hand,
            stop,
            notices: Some(Arc::clone(&notices)),
            view: view.clone(),
            controls,
        },
    );
    Ok(SetUp {
        threads: SessionThreads {
            haptic_loop,
            simulation,
            exchange,
            notices,
            ticks,
            want_realtime: options.realtime && !options.lockstep,
            haptic_cpu: options.haptic_cpu,
        },
        recorder,
        fixed: FixedSummary {
            lockstep: options.lockstep,
            tick_s,
            device_name,
            gains,
            factors,
            sync_ratio,
        },
    })
}

/// Runs the haptic and simulation threads to the end of the session,
/// passing the haptic thread's notices to `on_notice` meanwhile.
fn run_threads(
    threads: SessionThreads,
    mut on_notice: Option<Box<dyn FnMut(Notice)>>,
) -> Result<Ran, ServerError> {
    let SessionThreads {
        haptic_loop,
        mut simulation,
        exchange,
        notices,
        ticks,
        want_realtime,
        haptic_cpu,
    } = threads;
    let steal_before = StealSample::now();
    // The world was built on this thread, and its containers grow where
    // they were allocated (glibc's realloc keeps a block's arena): both
    // this thread's arena and the simulation thread's get a reserve.
    let caller_reserved = reserve_session_heap(want_realtime, SIMULATION_HEAP_RESERVE_BYTES);
    let (reserved_tx, reserved_rx) = std::sync::mpsc::channel();
    let (loop_result, realtime_report, simulation) = std::thread::scope(|scope| {
        let exchange = &exchange;
        let sim_thread = std::thread::Builder::new()
            .name("tessera-sim".into())
            .spawn_scoped(scope, move || {
                // Before the first tick: faulting the reserve in takes
                // longer than a sync period.
                let _ = reserved_tx.send(reserve_session_heap(
                    want_realtime,
                    SIMULATION_HEAP_RESERVE_BYTES,
                ));
                simulation.serve(exchange);
                simulation
            })
            .map_err(|e| ServerError::Spawn("simulation", e))?;
        let heap_reserved = reserved_rx
            .recv_timeout(HEAP_RESERVE_TIMEOUT)
            .unwrap_or(Err(HeapReserveError::TimedOut(HEAP_RESERVE_TIMEOUT)))
            .and_then(|simulation| Ok(caller_reserved? + simulation));
        let haptic_thread = std::thread::Builder::new()
            .name("tessera-haptic".into())
            .spawn_scoped(scope, move || {
                // Before the memory lock, which then holds these pages.
                let heap_reserved = heap_reserved.and_then(|world| {
                    Ok(world + reserve_session_heap(want_realtime, HAPTIC_HEAP_RESERVE_BYTES)?)
                });
                let report = realtime::request(want_realtime, haptic_cpu, heap_reserved);
                haptic_loop.show_realtime(&report);
                let result = haptic_loop.run(ticks, exchange);
                realtime::release(&report);
                exchange.stop();
                (result, report)
            });
        let haptic_thread = match haptic_thread {
            Ok(t) => t,
            Err(e) => {
                exchange.stop();
                return Err(ServerError::Spawn("haptic", e));
            }
        };
        while !haptic_thread.is_finished() {
            std::thread::sleep(SUPERVISE_EVERY);
            while let Some(notice) = notices.pop() {
                if let Some(f) = on_notice.as_mut() {
                    f(notice);
                }
            }
        }
        let haptic = haptic_thread.join();
        exchange.stop();
        let simulation = sim_thread
            .join()
            .map_err(|_| ServerError::Panicked("simulation"))?;
        let (result, report) = haptic.map_err(|_| ServerError::Panicked("haptic"))?;
        Ok((result, report, simulation))
    })?;
    let host_steal = steal_before.until(&StealSample::now(), realtime_report.cpu);
    let haptic = loop_result?;
    while let Some(notice) = notices.pop() {
        if let Some(f) = on_notice.as_mut() {
            f(notice);
        }
    }
    Ok(Ran {
        haptic,
        realtime: realtime_report,
        host_steal,
        simulation,
    })
}

/// A heap reserve of `bytes` on the calling thread, in a real-time session
/// only: lockstep runs have no deadline to fault pages in before.
fn reserve_session_heap(want_realtime: bool, bytes: u64) -> Result<u64, HeapReserveError> {
    if want_realtime {
        realtime::reserve_heap(bytes)
    } else {
        Ok(0)
    }
}

/// The session's summary from what the threads returned.
fn summarise(fixed: FixedSummary, ran: Ran) -> Summary {
    let FixedSummary {
        lockstep,
        tick_s,
        device_name,
        gains,
        factors,
        sync_ratio,
    } = fixed;
    let Ran {
        haptic: haptic_loop,
        realtime: realtime_report,
        host_steal,
        simulation,
    } = ran;
    let proxy_trace = haptic_loop.proxy_trace;
    let world = &simulation.world;
    let fractures = world
        .events()
        .iter()
        .zip(&simulation.counters.events)
        .zip(&simulation.event_ticks)
        .map(|((e, times), &tick)| FractureSummary {
            time_s: tick as f64 * tick_s,
            body: e.name.clone(),
            kind: e.kind,
            fragments: e.fragments.len(),
            debris: e.debris,
            crack_area_m2: e.crack_area_m2,
            impulse_n_s: e.impulse_n_s,
            fracture_ms: (times.check_s + times.insertion_s) * 1e3,
        })
        .collect();
    let ticks_run = haptic_loop.stats.ticks.max(1);
    Summary {
        mode: if lockstep { "lockstep" } else { "real-time" },
        seconds: haptic_loop.stats.ticks as f64 * tick_s,
        device: device_name,
        haptic: haptic_loop.stats.stats(),
        syncs: SyncStats {
            total: haptic_loop.syncs,
            late: haptic_loop.late_syncs,
            global_step_ms_mean: simulation.counters.step_total_s * 1e3
                / simulation.counters.steps.max(1) as f64,
            global_step_ms_max: simulation.counters.step_max_s * 1e3,
            rigid_exchanges: simulation.counters.rigid_exchanges,
            solver_exchanges: simulation.counters.solver_exchanges,
            unchecked_impacts: simulation.counters.unchecked_impacts,
        },
        fractures,
        fracture_to_feel: FractureToFeel::of(&haptic_loop.fracture_feels, tick_s),
        fracture_to_world: FractureToFeel::of(&haptic_loop.fracture_answers, tick_s),
        own_bases_adopted: simulation.world.adopted_own_bases(),
        log: None,
        ui_url: None,
        ui: None,
        realtime: realtime_report,
        host_steal,
        coupling: gains,
        scaling: factors,
        sync_ratio,
        sub_world_mean_bodies: haptic_loop.sub_world_bodies_sum as f64 / ticks_run as f64,
        peak_coupling_force_n: haptic_loop.peak_force_n,
        commanded: Commanded {
            peak_force_n: haptic_loop.peak_commanded_force_n,
            peak_goal_speed_m_s: haptic_loop.peak_commanded_speed_m_s,
        },
        device_errors: haptic_loop.device_errors,
        device_losses: haptic_loop.device_losses,
        device_restorations: haptic_loop.device_restorations,
        degraded: haptic_loop.device_errors > 0 || haptic_loop.device_losses > 0,
        interrupted: haptic_loop.stopped_at.is_some(),
        safety_trips: haptic_loop.safety_trips,
        outcome: Outcome {
            state_hash: world.state_hash(),
            proxy_path_hash: haptic_loop.proxy_path_hash,
            bodies: world.body_count(),
            kinetic_energy_integral_j_s: simulation.kinetic_energy_integral_j_s,
        },
        proxy_trace,
    }
}

/// The boundary cube's side, `c_size + 2·p_max` with `p_max = r_sim / f ·
/// v_max` (Glondu §4.3.3.1), `v_max` the device's, scaled.
fn boundary_side_m(
    world: &World,
    proxy: BodyId,
    haptic: &HapticSpec,
    scaling: &Scaling,
    device_max_speed_m_s: f64,
    sync_ratio: u32,
    tick_s: f64,
) -> f64 {
    let cube = haptic.proxy_cube_m.unwrap_or_else(|| {
        world.body(proxy).map_or(0.0, |b| {
            let points = &b.surface.points;
            (0..3)
                .map(|i| {
                    let (lo, hi) = points.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| {
                        (lo.min(p[i]), hi.max(p[i]))
                    });
                    hi - lo
                })
                .fold(0.0, f64::max)
        })
    });
    let v_max = device_max_speed_m_s * scaling.factors.s_fact;
    cube + 2.0 * f64::from(sync_ratio) * tick_s * v_max
}
