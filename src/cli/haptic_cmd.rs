//! `tessera serve`, `tessera demo` and `tessera replay`: haptic sessions.

use super::scene_cmd::load_scene;
use super::Cli;
use anyhow::{bail, Context};
use serde::Serialize;
use std::path::{Path, PathBuf};
use tessera::device::hid::{HidApiConnector, HidDriver, HidTiming};
use tessera::device::sim::{sim_arm_spec, ArmModel};
use tessera::device::{Device, DeviceProfile, HandScript, SimulatedArm};
use tessera::haptics::{serve, CpuPin, ServerOptions, Session, Summary};
use tessera::session::{Event, Recorder, SessionReader};
use tessera::world::World;

/// The scene of `tessera demo` and the default of `serve`.
const DEMO_SCENE: &str = "tile-strike";
/// Where `tessera demo` writes its session log by default.
const DEMO_LOG: &str = "tessera-demo.mcap";

#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Scene file or shipped scene name; it needs a [haptic] table.
    #[arg(long, default_value = DEMO_SCENE)]
    pub scene: String,
    /// `sim` (the simulated arm and a scripted hand) or `hid:PROFILE`
    /// (a device profile file or a name in devices/).
    #[arg(long, default_value = "sim")]
    pub device: String,
    /// Hand script for the simulated arm (default: the scene's).
    #[arg(long, value_name = "FILE")]
    pub hand: Option<PathBuf>,
    /// Write the session log (MCAP) here.
    #[arg(long, value_name = "FILE.mcap")]
    pub record: Option<PathBuf>,
    /// Session length (default: the hand script's length plus 1 s; 60 s
    /// with a real device).
    #[arg(long)]
    pub seconds: Option<f64>,
    /// Wait for every synchronisation on a virtual clock: reproducible bit
    /// for bit, not real time.
    #[arg(long)]
    pub lockstep: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Count of the scene's arrayed body (cube scenes).
    #[arg(long)]
    pub count: Option<usize>,
    /// Haptic ticks per global step (default: the scene's sync_ratio).
    #[arg(long)]
    pub sync_ratio: Option<u32>,
    /// Direct coupling: the whole world in the haptic thread (baseline).
    #[arg(long)]
    pub direct: bool,
    /// Do not request SCHED_FIFO and locked memory.
    #[arg(long)]
    pub no_realtime: bool,
    /// The CPU for the haptic thread: a number, `auto` (the one with the
    /// fewest device interrupts) or `none` (not pinned).
    #[arg(long, value_name = "N|auto|none", default_value = "auto")]
    pub haptic_cpu: CpuPin,
}

#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Session length (default: the demo hand's script plus 1 s, ~15 s).
    #[arg(long)]
    pub seconds: Option<f64>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Where to write the session log.
    #[arg(long, value_name = "FILE.mcap", default_value = DEMO_LOG)]
    pub record: PathBuf,
    /// Wait for every synchronisation (reproducible, not real time).
    #[arg(long)]
    pub lockstep: bool,
}

#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// A session log written by `serve --record` or `demo`.
    pub file: PathBuf,
    /// Replay on a virtual clock (the way to reproduce a lockstep log).
    #[arg(long)]
    pub lockstep: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// What a session log's configuration event holds: enough to run it again.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
struct SessionConfig {
    command: String,
    scene: String,
    count: Option<usize>,
    seed: u64,
    device: String,
    /// The hand script's text (simulated arm).
    hand_script: Option<String>,
    lockstep: bool,
    seconds: f64,
    sync_ratio: Option<u32>,
    direct: bool,
}

pub fn serve_cmd(args: &ServeArgs, cli: &Cli) -> anyhow::Result<()> {
    let summary = run_session(args, "serve", cli, None)?;
    print_summary(&summary, args.json)
}

pub fn demo(args: &DemoArgs, cli: &Cli) -> anyhow::Result<()> {
    let serve_args = ServeArgs {
        scene: DEMO_SCENE.into(),
        device: "sim".into(),
        hand: None,
        record: Some(args.record.clone()),
        seconds: args.seconds,
        lockstep: args.lockstep,
        json: args.json,
        seed: 0,
        count: None,
        sync_ratio: None,
        direct: false,
        no_realtime: false,
        haptic_cpu: CpuPin::Auto,
    };
    if !args.json {
        println!(
            "tessera demo: a simulated hand strikes the ceramic tile through the haptic arm, harder each time"
        );
    }
    let summary = run_session(&serve_args, "demo", cli, None)?;
    print_summary(&summary, args.json)
}

/// Builds and runs a session; records it if asked. A replay passes the
/// recorded hand script, and gets the proxy's path traced.
fn run_session(
    args: &ServeArgs,
    command: &str,
    cli: &Cli,
    replay_hand: Option<String>,
) -> anyhow::Result<Summary> {
    let trace = replay_hand.is_some();
    let (scene, assets) = load_scene(&args.scene, args.count, cli)?;
    let Some(haptic) = scene.haptic.clone() else {
        bail!(
            "{}: the scene has no [haptic] table (which body is the proxy)",
            scene.path.display()
        );
    };
    let world = World::from_scene(&scene, &assets, args.seed)?;
    let (device, device_name, hand_text) =
        open_device(args, &scene.path, haptic.hand.as_deref(), replay_hand)?;
    let hand = match &hand_text {
        Some(text) => Some(HandScript::parse(text, "hand script")?.trajectory()),
        None => None,
    };
    let seconds = match args.seconds {
        Some(s) => s,
        None => hand.as_ref().map_or(60.0, |h| h.duration_s() + 1.0),
    };
    let config = SessionConfig {
        command: command.into(),
        scene: scene.path.display().to_string(),
        count: args.count,
        seed: args.seed,
        device: args.device.clone(),
        hand_script: hand_text,
        lockstep: args.lockstep,
        seconds,
        sync_ratio: args.sync_ratio,
        direct: args.direct,
    };
    let recorder = match &args.record {
        Some(path) => Some(Recorder::create(path, serde_json::to_value(&config)?)?),
        None => None,
    };
    let session = Session {
        world,
        haptic,
        scene_name: scene.path.display().to_string(),
        device,
        device_name,
        hand,
        recorder: recorder.as_ref().map(Recorder::handle),
        options: ServerOptions {
            seconds,
            lockstep: args.lockstep,
            realtime: !args.no_realtime,
            haptic_cpu: args.haptic_cpu,
            direct: args.direct,
            sync_ratio: args.sync_ratio,
            trace,
            ..ServerOptions::default()
        },
    };
    let mut summary = serve(session)?;
    if let Some(recorder) = recorder {
        recorder.handle().event(Event::Outcome {
            time_s: seconds,
            state_hash: summary.outcome.state_hash,
            proxy_path_hash: summary.outcome.proxy_path_hash,
            bodies: summary.outcome.bodies,
        });
        summary.log = Some(recorder.path().display().to_string());
        recorder.finish()?;
    }
    Ok(summary)
}

/// The device, its profile name, and the hand script's text (simulated arm).
fn open_device(
    args: &ServeArgs,
    scene: &Path,
    scene_hand: Option<&str>,
    replay_hand: Option<String>,
) -> anyhow::Result<(Box<dyn Device>, String, Option<String>)> {
    if args.device == "sim" {
        let text = match (&args.hand, scene_hand) {
            _ if replay_hand.is_some() => replay_hand,
            (Some(path), _) => Some(read(path)?),
            (None, Some(relative)) => {
                let base = scene.parent().unwrap_or(Path::new("."));
                Some(read(&base.join(relative))?)
            }
            (None, None) => None,
        };
        let script = match &text {
            Some(t) => HandScript::parse(t, "hand script")?,
            None => HandScript::parse("start_m = [0.0, 0.0, 0.0]", "built-in hand")?,
        };
        let arm = SimulatedArm::new(sim_arm_spec(), ArmModel::default(), script.trajectory());
        let text = text.unwrap_or_else(|| "start_m = [0.0, 0.0, 0.0]".into());
        return Ok((Box::new(arm), "sim-arm".into(), Some(text)));
    }
    let Some(profile) = args.device.strip_prefix("hid:") else {
        bail!(
            "--device `{}`: expected `sim` or `hid:PROFILE`",
            args.device
        );
    };
    let path = profile_path(profile);
    let profile = DeviceProfile::load(&path)?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let driver = HidDriver::spawn(
        &profile,
        HidApiConnector::new(&profile),
        HidTiming::default(),
    )
    .context("starting the HID driver thread")?;
    Ok((Box::new(driver), name, None))
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("hand script {}", path.display()))
}

/// A profile file, or a profile name in the shipped `devices/`.
fn profile_path(profile: &str) -> PathBuf {
    let given = PathBuf::from(profile);
    if given.is_file() {
        return given;
    }
    let name = profile.strip_suffix(".toml").unwrap_or(profile);
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("devices")
        .join(format!("{name}.toml"))
}

fn print_summary(summary: &Summary, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(summary)?);
        return Ok(());
    }
    let h = &summary.haptic;
    println!(
        "{} session, {:.1} s, device {}, r_sim {}",
        summary.mode, summary.seconds, summary.device, summary.sync_ratio
    );
    let r = &summary.realtime;
    println!(
        "real-time: requested {}, obtained {} (priority {}), memory locked {}, CPU {}{}",
        r.requested,
        r.policy,
        r.priority,
        r.memory_locked,
        match r.cpu {
            Some(cpu) => format!("{cpu} ({})", r.cpu_choice),
            None => r.cpu_choice.clone(),
        },
        super::errors_suffix(&r.errors)
    );
    if let Some(steal) = &summary.host_steal {
        println!(
            "host steal during the run: {:.0} ms over all CPUs{}",
            steal.all_cpus_ms,
            match steal.haptic_cpu_ms {
                Some(ms) => format!(", {ms:.0} ms on the haptic CPU"),
                None => String::new(),
            }
        );
    }
    println!(
        "haptic loop: {} ticks; period error p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs; late > 100 µs: {}, > 1 ms: {}; session clock {:.1} ms behind",
        h.ticks,
        h.period_error_us.p50,
        h.period_error_us.p99,
        h.period_error_us.max,
        h.late_over_100us,
        h.late_over_1ms,
        h.clock_lag_ms
    );
    println!(
        "tick compute: p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs; sub-world {:.1} bodies on average, {} at most",
        h.compute_us.p50,
        h.compute_us.p99,
        h.compute_us.max,
        summary.sub_world_mean_bodies,
        h.max_sub_world_bodies
    );
    println!(
        "syncs: {} ({} late); global step {:.2} ms mean, {:.2} ms max",
        summary.syncs.total,
        summary.syncs.late,
        summary.syncs.global_step_ms_mean,
        summary.syncs.global_step_ms_max
    );
    println!(
        "coupling: k {:.0} N/m, c {:.1} N·s/m (simulation units); peak force on the device {:.1} N; safety trips {}",
        summary.coupling.stiffness_n_m,
        summary.coupling.damping_n_s_m,
        summary.peak_coupling_force_n,
        summary.safety_trips
    );
    if summary.fractures.is_empty() {
        println!("fractures: none");
    }
    for f in &summary.fractures {
        println!(
            "fracture at {:.3} s: {} ({:?}), {} fragments, {} debris, crack area {:.3e} m², impulse {:.3} N·s, {:.1} ms",
            f.time_s, f.body, f.kind, f.fragments, f.debris, f.crack_area_m2, f.impulse_n_s, f.fracture_ms
        );
    }
    if let Some(log) = &summary.log {
        println!("session log: {log}");
    }
    Ok(())
}

/// What `tessera replay` reports.
#[derive(Debug, Serialize)]
struct ReplayReport {
    file: String,
    mode: &'static str,
    matches: bool,
    /// The first tick at which the proxy's path or the fractures differ.
    first_divergence: Option<u64>,
    recorded: ReplaySide,
    replayed: ReplaySide,
}

#[derive(Debug, Serialize)]
struct ReplaySide {
    ticks: u64,
    fractures: Vec<(String, usize)>,
    state_hash: Option<u64>,
}

pub fn replay(args: &ReplayArgs, cli: &Cli) -> anyhow::Result<()> {
    let log = SessionReader::open(&args.file)?;
    let name = args.file.display().to_string();
    let config: SessionConfig = log
        .events()
        .find_map(|e| match e {
            Event::Configuration { config, .. } => Some(config.clone()),
            _ => None,
        })
        .with_context(|| format!("{name}: no configuration event"))
        .and_then(|c| {
            serde_json::from_value(c)
                .with_context(|| format!("{name}: not a haptic session's configuration"))
        })?;
    if config.device != "sim" {
        bail!(
            "{name}: recorded with device `{}`; a replay drives the simulated arm with the recorded hand, which only simulated sessions record",
            config.device
        );
    }
    // The recorded script reproduces the hand exactly.
    let Some(hand_script) = config.hand_script.clone() else {
        bail!("{name}: the log has no hand script to replay");
    };
    let serve_args = ServeArgs {
        scene: config.scene.clone(),
        device: "sim".into(),
        hand: None,
        record: None,
        seconds: Some(config.seconds),
        lockstep: args.lockstep,
        json: args.json,
        seed: config.seed,
        count: config.count,
        sync_ratio: config.sync_ratio,
        direct: config.direct,
        no_realtime: false,
        haptic_cpu: CpuPin::Auto,
    };
    let summary = run_session(&serve_args, "replay", cli, Some(hand_script))?;
    let recorded_trace: Vec<(u64, [f64; 3])> =
        log.ticks().map(|t| (t.tick, t.proxy_position_m)).collect();
    let mut first_divergence = recorded_trace
        .iter()
        .zip(&summary.proxy_trace)
        .find(|((_, a), b)| a != *b)
        .map(|((tick, _), _)| *tick);
    if first_divergence.is_none() && recorded_trace.len() != summary.proxy_trace.len() {
        first_divergence = Some(recorded_trace.len().min(summary.proxy_trace.len()) as u64);
    }
    let recorded_fractures: Vec<(u64, String, usize)> = log
        .events()
        .filter_map(|e| match e {
            Event::Fracture {
                tick,
                body,
                fragments,
                ..
            } => Some((*tick, body.clone(), *fragments)),
            _ => None,
        })
        .collect();
    let replayed_fractures: Vec<(String, usize)> = summary
        .fractures
        .iter()
        .map(|f| (f.body.clone(), f.fragments))
        .collect();
    let fractures_match = recorded_fractures
        .iter()
        .map(|(_, b, n)| (b.clone(), *n))
        .eq(replayed_fractures.iter().cloned());
    if !fractures_match {
        let at = recorded_fractures
            .iter()
            .zip(&replayed_fractures)
            .find(|((_, b, n), (rb, rn))| b != rb || n != rn)
            .map(|((tick, ..), _)| *tick)
            .or_else(|| {
                recorded_fractures
                    .get(replayed_fractures.len())
                    .map(|f| f.0)
            });
        first_divergence = match (first_divergence, at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    let recorded_hash = log.events().find_map(|e| match e {
        Event::Outcome { state_hash, .. } => Some(*state_hash),
        _ => None,
    });
    let hashes_match = recorded_hash.is_none_or(|h| h == summary.outcome.state_hash);
    let report = ReplayReport {
        file: name,
        mode: summary.mode,
        matches: first_divergence.is_none() && fractures_match && hashes_match,
        first_divergence,
        recorded: ReplaySide {
            ticks: recorded_trace.len() as u64,
            fractures: recorded_fractures
                .into_iter()
                .map(|(_, b, n)| (b, n))
                .collect(),
            state_hash: recorded_hash,
        },
        replayed: ReplaySide {
            ticks: summary.proxy_trace.len() as u64,
            fractures: replayed_fractures,
            state_hash: Some(summary.outcome.state_hash),
        },
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "replay of {} ({}): {}",
            report.file,
            report.mode,
            if report.matches {
                "matches the recording"
            } else {
                "differs from the recording"
            }
        );
        match report.first_divergence {
            Some(tick) => println!("first divergence at tick {tick}"),
            None => println!("no divergence in {} ticks", report.replayed.ticks),
        }
        println!(
            "fractures recorded {:?}, replayed {:?}",
            report.recorded.fractures, report.replayed.fractures
        );
    }
    Ok(())
}
