//! `tessera serve`, `tessera demo` and `tessera replay`: haptic sessions.
//!
//! A session's inputs (scene, materials, hand script, device profile,
//! options, seed, tessera's version) are gathered into one
//! [`SessionConfig`] before it starts; the session log stores it whole as
//! its first event, so `replay` needs nothing but the log. A study trial
//! (`study run`) records the same, with its levels and condition; its
//! closed-loop hand's path goes into a `hand_path` event at the end.

use super::scene_cmd::{prepare_scene, scene_text};
use super::{material_source, Cli, Stop};
use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tessera::assets;
use tessera::config::{HapticOverrides, HapticSpec, Material, MaterialLibrary, Scene, ShapeSpec};
use tessera::device::{sim_arm_spec, ArmModel};
use tessera::device::{
    Device, DeviceProfile, HandScript, HandTrajectory, SafetySettings, SimulatedArm,
};
use tessera::device::{HidApiConnector, HidDriver, HidTiming};
use tessera::fracture::BasisWorker;
use tessera::haptics::{
    serve, CpuPin, Notice, ServeInputs, ServerOptions, SessionControls, Summary, ViewFeed,
};
use tessera::session::{
    compare, first_difference, Comparison, Event, Recorder, Replayed, SessionReader,
};
use tessera::ui::{Viewer, ViewerOptions};
use tessera::world::{World, OWN_BASIS_MIN_TETS};

/// The scene of `tessera demo` and the default of `serve`.
const DEMO_SCENE: &str = "tile-strike";
/// Where `tessera demo` writes its session log by default.
const DEMO_LOG: &str = "tessera-demo.mcap";
/// The hand of a simulated arm when neither the scene nor `--hand` gives one.
pub(super) const STILL_HAND: &str = "start_m = [0.0, 0.0, 0.0]";
/// How long `serve` waits for a HID device to open before it gives up
/// (without `--wait-for-device`).
const DEVICE_OPEN_WAIT: Duration = Duration::from_secs(2);

/// Exit status of a session the device failed in (lost, errors).
pub const EXIT_DEGRADED: u8 = 2;
/// Exit status of a replay that differs from its recording, or of a
/// truncated log.
pub const EXIT_DIFFERS: u8 = 3;

/// The viewer's options, shared by `serve`, `demo` and `replay`.
#[derive(Debug, Clone, clap::Args)]
pub struct UiArgs {
    /// Serve the viewer (on by default) at ADDR:PORT (port 0: a free
    /// one). Default, and for a bare `--ui`: 127.0.0.1:7878, or a free port
    /// if that one is taken.
    #[arg(long, value_name = "ADDR:PORT", num_args = 0..=1, conflicts_with = "no_ui")]
    pub ui: Option<Option<SocketAddr>>,
    /// Do not start the viewer.
    #[arg(long)]
    pub no_ui: bool,
    /// Allow --ui on an address other machines can reach; clients then
    /// need the access token printed with the URL.
    #[arg(long)]
    pub ui_public: bool,
    /// Pace the session at FACTOR times real time, 0.01–100 (implies
    /// --lockstep and the simulated arm; the viewer can change it).
    #[arg(long, value_name = "FACTOR", value_parser = speed_factor)]
    pub speed: Option<f64>,
    /// After the session, keep the viewer open until Ctrl-C so that it can
    /// seek back and restart (implies --lockstep and the simulated arm).
    #[arg(long, conflicts_with = "no_ui")]
    pub hold: bool,
    /// Start paused at the first synchronisation, until the viewer says
    /// play (implies --lockstep and the simulated arm).
    #[arg(long, conflicts_with = "no_ui")]
    pub paused: bool,
}

fn speed_factor(text: &str) -> Result<f64, String> {
    let factor: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if tessera::haptics::SPEED_RANGE.contains(&factor) {
        Ok(factor)
    } else {
        Err(format!("{factor} is outside 0.01..=100 times real time"))
    }
}

impl UiArgs {
    fn options(&self) -> Option<ViewerOptions> {
        (!self.no_ui).then_some(ViewerOptions {
            addr: self.ui.flatten(),
            public: self.ui_public,
        })
    }

    /// Whether the session must run on a virtual clock: pacing and holding
    /// need one.
    fn needs_lockstep(&self) -> bool {
        self.speed.is_some() || self.hold || self.paused
    }

    /// Refuses pacing and holding with a device someone holds.
    fn check_device(&self, device: &str) -> anyhow::Result<()> {
        if self.needs_lockstep() && device != "sim" {
            bail!(
                "--speed, --hold and --paused need the simulated arm (`--device sim`): with a real device the hand is in the loop"
            );
        }
        Ok(())
    }
}

#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Scene file or shipped scene name; it needs a [haptic] table.
    #[arg(long, default_value = DEMO_SCENE)]
    pub scene: String,
    /// `sim` (the simulated arm and a scripted hand) or `hid:PROFILE`
    /// (a device profile file or the name of a shipped one).
    #[arg(long, default_value = "sim")]
    pub device: String,
    /// With a HID device: wait until it can be opened instead of failing.
    #[arg(long)]
    pub wait_for_device: bool,
    /// Output forces only while this device button (0–31) is held
    /// (default: the profile's `[safety] deadman_button`, else none).
    #[arg(long, value_name = "BUTTON", value_parser = clap::value_parser!(u8).range(0..32))]
    pub deadman: Option<u8>,
    /// Hand script for the simulated arm (default: the scene's).
    #[arg(long, value_name = "FILE")]
    pub hand: Option<PathBuf>,
    /// Write the session log (MCAP) here.
    #[arg(long, value_name = "FILE.mcap")]
    pub record: Option<PathBuf>,
    /// Session length in seconds, at most one week (default: the hand
    /// script's length plus 1 s; 60 s with a real device).
    #[arg(long, allow_negative_numbers = true, value_parser = super::session_seconds)]
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
    /// Haptic ticks per global step, 1–1000 (default: the scene's sync_ratio).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
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
    #[command(flatten)]
    pub ui: UiArgs,
}

#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Session length in seconds (default: the demo hand's script plus 1 s,
    /// ~15 s).
    #[arg(long, allow_negative_numbers = true, value_parser = super::session_seconds)]
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
    #[command(flatten)]
    pub ui: UiArgs,
}

#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// A session log written by `serve --record`, `demo` or `study run`
    /// (a trial on the simulated arm).
    pub file: PathBuf,
    /// Replay on a virtual clock, as fast as it goes (the way to reproduce
    /// a lockstep log). Without it a replay the viewer watches runs on the
    /// virtual clock paced at real speed (its timeline can pause, slow
    /// down and seek), and one with --no-ui runs in real time.
    #[arg(long)]
    pub lockstep: bool,
    /// Use this scene file instead of the one the log holds (the replay
    /// says where they differ).
    #[arg(long, value_name = "FILE")]
    pub scene: Option<PathBuf>,
    /// Use this hand script instead of the one the log holds.
    #[arg(long, value_name = "FILE")]
    pub hand: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub ui: UiArgs,
}

/// A text input of a session and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Source {
    pub path: String,
    pub text: String,
}

/// A mesh file a scene reads, by its resolved path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct MeshFile {
    path: String,
    bytes: Vec<u8>,
}

/// Everything a session was run with: its log's configuration event.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct SessionConfig {
    /// The tessera version that ran it.
    version: String,
    command: String,
    scene: Source,
    /// The mesh files the scene's bodies read.
    mesh_files: Vec<MeshFile>,
    materials: Source,
    /// The simulated arm's hand script.
    hand_script: Option<String>,
    /// `sim` or `hid:PROFILE`.
    device: String,
    /// The HID device profile's text.
    device_profile: Option<Source>,
    deadman_button: Option<u8>,
    count: Option<usize>,
    seed: u64,
    lockstep: bool,
    seconds: Option<f64>,
    sync_ratio: Option<u32>,
    direct: bool,
    /// What a study trial changed in the scene (`tessera study run`); its
    /// hand is the one the log's `hand_path` event holds.
    #[serde(default)]
    trial: Option<TrialSettings>,
    /// Whether fragments of at least `OWN_BASIS_MIN_TETS` intact tets get
    /// modal bases of their own (a study's model trials do without).
    #[serde(default = "own_bases_by_default")]
    pub(super) own_bases: bool,
}

/// Logs written before `own_bases` was recorded had them.
fn own_bases_by_default() -> bool {
    true
}

/// Gives `world`'s fragments of at least `OWN_BASIS_MIN_TETS` intact tets
/// bases of their own, analysed on `threads` threads (rayon's default if
/// `None`) of background priority ([`tessera::haptics::BACKGROUND_NICE`]):
/// the analyses take only what the session's threads leave. Not cached:
/// fragment meshes rarely repeat.
pub(super) fn enable_own_bases(world: &mut World, threads: Option<usize>) -> anyhow::Result<()> {
    let pool = tessera::haptics::background_pool("tessera-modal", threads)?;
    world.enable_own_bases(BasisWorker::spawn(None, pool)?, OWN_BASIS_MIN_TETS);
    Ok(())
}

/// What a study trial changes in its scene: the two alternatives'
/// materials at the trial's levels and the condition's haptic options.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct TrialSettings {
    pub study: String,
    pub condition: String,
    /// The stimulus values of the left and right alternatives.
    pub values: [f64; 2],
    pub procedure: String,
    /// Each alternative's body and the material its level makes.
    pub materials: Vec<BodyMaterial>,
    pub haptic: HapticOverrides,
    /// The condition's force feedback: off, the safety layer sends zero
    /// force.
    pub force_feedback: bool,
}

/// A body given its own material.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct BodyMaterial {
    pub body: String,
    /// The name it gets in the library (`ceramic@left`).
    pub name: String,
    pub material: Material,
}

impl TrialSettings {
    /// Gives each alternative its material, in `scene` and `library`.
    pub(super) fn set_materials(
        &self,
        scene: &mut Scene,
        library: &mut MaterialLibrary,
    ) -> anyhow::Result<()> {
        for m in &self.materials {
            let Some(body) = scene.bodies.iter_mut().find(|b| b.name == m.body) else {
                bail!("{}: no body `{}`", scene.path.display(), m.body);
            };
            library.insert(&m.name, m.material.clone())?;
            body.material = m.name.clone();
        }
        Ok(())
    }

    /// Applies the condition's haptic options; a scaling factor the
    /// condition sets replaces the scene's per-device ones.
    pub(super) fn set_haptic(&self, haptic: &mut HapticSpec) {
        let h = &self.haptic;
        if h.s_fact.is_some() || h.f_fact.is_some() {
            haptic.device.clear();
        }
        haptic.s_fact = h.s_fact.unwrap_or(haptic.s_fact);
        haptic.f_fact = h.f_fact.unwrap_or(haptic.f_fact);
        if let Some(r) = h.sync_ratio {
            haptic.sync_ratio = r;
        }
    }
}

/// The mesh files `scene` reads, with their bytes.
fn mesh_files(scene: &Scene) -> anyhow::Result<Vec<MeshFile>> {
    let mut files = Vec::new();
    for body in &scene.bodies {
        if let ShapeSpec::TetMesh { mesh } = &body.shape {
            for path in scene.resolve_mesh(mesh)?.files() {
                let bytes = std::fs::read(&path).with_context(|| {
                    format!(
                        "{}: body `{}`: {}",
                        scene.path.display(),
                        body.name,
                        path.display()
                    )
                })?;
                files.push(MeshFile {
                    path: path.display().to_string(),
                    bytes,
                });
            }
        }
    }
    Ok(files)
}

impl SessionConfig {
    /// The inputs of `serve` (or `demo`), read from files and options.
    fn gather(args: &ServeArgs, command: &str, cli: &Cli) -> anyhow::Result<Self> {
        let (scene_path, scene_text) = scene_text(&args.scene)?;
        let scene = Scene::parse(&scene_text, &scene_path)?;
        let (materials_path, materials_text) = material_source(cli)?;
        let mesh_files = mesh_files(&scene)?;
        let (hand_script, device_profile) = if args.device == "sim" {
            let hand_path = match (
                &args.hand,
                scene.haptic.as_ref().and_then(|h| h.hand.as_ref()),
            ) {
                (Some(path), _) => Some(path.clone()),
                (None, Some(relative)) => {
                    Some(scene_path.parent().unwrap_or(Path::new(".")).join(relative))
                }
                (None, None) => None,
            };
            let hand = match &hand_path {
                Some(path) => {
                    let text = read_hand(path)?;
                    // Checked now, before the scene's modal analyses.
                    HandScript::parse(&text, &path.display().to_string())?;
                    text
                }
                None => STILL_HAND.to_owned(),
            };
            (Some(hand), None)
        } else {
            let Some(profile) = args.device.strip_prefix("hid:") else {
                bail!(
                    "--device `{}`: expected `sim` or `hid:PROFILE`",
                    args.device
                );
            };
            let path = profile_path(profile)?;
            let text = assets::read_text(&path)
                .with_context(|| format!("device profile {}", path.display()))?;
            DeviceProfile::parse(&text, &path)?;
            (
                None,
                Some(Source {
                    path: path.display().to_string(),
                    text,
                }),
            )
        };
        Ok(Self {
            version: env!("CARGO_PKG_VERSION").into(),
            command: command.into(),
            scene: Source {
                path: scene_path.display().to_string(),
                text: scene_text,
            },
            mesh_files,
            materials: Source {
                path: materials_path.display().to_string(),
                text: materials_text,
            },
            hand_script,
            device: args.device.clone(),
            device_profile,
            deadman_button: args.deadman,
            count: args.count,
            seed: args.seed,
            lockstep: args.lockstep,
            seconds: args.seconds,
            sync_ratio: args.sync_ratio,
            direct: args.direct,
            trial: None,
            own_bases: true,
        })
    }

    /// A study's inputs: its scene (`parsed` from `scene`'s text, whose
    /// mesh files are read once here) and the material library; each
    /// trial completes a copy with [`for_trial`](Self::for_trial).
    pub(super) fn for_study(
        parsed: &Scene,
        scene: Source,
        materials: Source,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            version: env!("CARGO_PKG_VERSION").into(),
            command: "study run".into(),
            mesh_files: mesh_files(parsed)?,
            scene,
            materials,
            hand_script: None,
            device: "sim".into(),
            device_profile: None,
            deadman_button: None,
            count: None,
            seed: 0,
            lockstep: true,
            seconds: None,
            sync_ratio: None,
            direct: false,
            trial: None,
            own_bases: true,
        })
    }

    /// One trial of the study: its device, seed, clock and settings; the
    /// simulated arm's hand is the path the log's `hand_path` event will
    /// hold. A lockstep trial (the model's) gives no fragment a basis of
    /// its own: the model never strikes a broken plate's pieces (it turns
    /// to the other plate), and its session would wait for every analysis
    /// (seconds per fragment). A person may strike them again; in real
    /// time the analyses are adopted as they finish.
    pub(super) fn for_trial(
        &self,
        device: &str,
        seed: u64,
        lockstep: bool,
        trial: TrialSettings,
    ) -> Self {
        Self {
            device: device.into(),
            seed,
            lockstep,
            trial: Some(trial),
            own_bases: !lockstep,
            ..self.clone()
        }
    }
}

/// How a session is run beyond its configuration.
struct RunOptions {
    record: Option<PathBuf>,
    realtime: bool,
    haptic_cpu: CpuPin,
    wait_for_device: bool,
    /// Keep the proxy's path (replays compare it).
    trace: bool,
    quiet: bool,
    /// The viewer, if one is wanted.
    ui: Option<ViewerOptions>,
    /// Pace (times real time) of a lockstep session.
    speed: Option<f64>,
    /// Keep the viewer open after the session until a restart or a stop.
    hold: bool,
    /// Start paused.
    paused: bool,
    /// The simulated hand's recorded path (a study trial's replay), in
    /// place of the hand script.
    hand_path: Option<HandTrajectory>,
}

pub fn serve_cmd(args: &ServeArgs, cli: &Cli, stop: &Stop) -> anyhow::Result<ExitCode> {
    serve_session(args, "serve", cli, stop)
}

/// Gathers the session's inputs once from `args` and runs it.
fn serve_session(
    args: &ServeArgs,
    command: &str,
    cli: &Cli,
    stop: &Stop,
) -> anyhow::Result<ExitCode> {
    args.ui.check_device(&args.device)?;
    let mut config = SessionConfig::gather(args, command, cli)?;
    config.lockstep |= args.ui.needs_lockstep();
    let summary = run_session(
        &config,
        &RunOptions {
            record: args.record.clone(),
            realtime: !args.no_realtime,
            haptic_cpu: args.haptic_cpu,
            wait_for_device: args.wait_for_device,
            trace: false,
            quiet: args.json,
            ui: args.ui.options(),
            speed: args.ui.speed,
            hold: args.ui.hold,
            paused: args.ui.paused,
            hand_path: None,
        },
        stop,
    )?;
    print_summary(&summary, args.json)?;
    Ok(session_exit(&summary, stop))
}

pub fn demo(args: &DemoArgs, cli: &Cli, stop: &Stop) -> anyhow::Result<ExitCode> {
    let serve_args = ServeArgs {
        scene: DEMO_SCENE.into(),
        device: "sim".into(),
        wait_for_device: false,
        deadman: None,
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
        ui: args.ui.clone(),
    };
    if !args.json {
        println!(
            "tessera demo: a simulated hand strikes the ceramic tile through the haptic arm, harder each time"
        );
    }
    serve_session(&serve_args, "demo", cli, stop)
}

/// 128 + the signal for an interrupted session, [`EXIT_DEGRADED`] for one
/// the device failed in, success otherwise.
fn session_exit(summary: &Summary, stop: &Stop) -> ExitCode {
    if summary.interrupted {
        ExitCode::from(stop.exit_status())
    } else if summary.degraded {
        ExitCode::from(EXIT_DEGRADED)
    } else {
        ExitCode::SUCCESS
    }
}

/// The viewer of a session and where it reads and writes.
struct Watch {
    viewer: Viewer,
    feed: Arc<ViewFeed>,
}

/// Runs a session from its configuration, with its viewer if asked for;
/// runs it again each time the viewer restarts it (or seeks back), and
/// with `hold` waits after it for that or a stop.
fn run_session(config: &SessionConfig, run: &RunOptions, stop: &Stop) -> anyhow::Result<Summary> {
    let controls = Arc::new(SessionControls::new(run.speed)?);
    if run.paused {
        controls.pause();
    }
    let watch = match &run.ui {
        Some(options) => {
            let feed = ViewFeed::new();
            let viewer = Viewer::start(options, Arc::clone(&feed), Some(Arc::clone(&controls)))?;
            eprintln!("viewer: {}", viewer.url());
            Some(Watch { viewer, feed })
        }
        None => None,
    };
    loop {
        let mut summary = run_once(config, run, stop, watch.as_ref(), &controls)?;
        let mut restart = controls.take_restart();
        if !restart && run.hold && watch.is_some() && !stop.requested() {
            if !run.quiet {
                eprintln!("session finished; the viewer stays open (seek or restart there, Ctrl-C to quit)");
            }
            while !stop.requested() && !controls.restart_requested() {
                std::thread::sleep(Duration::from_millis(50));
            }
            restart = controls.take_restart();
        }
        if restart && !stop.requested() {
            continue;
        }
        summary.ui_url = watch.as_ref().map(|w| w.viewer.url().to_string());
        summary.ui = watch.as_ref().map(|w| w.viewer.stats());
        return Ok(summary);
    }
}

/// Builds and runs one session from its configuration; records it if asked.
fn run_once(
    config: &SessionConfig,
    run: &RunOptions,
    stop: &Stop,
    watch: Option<&Watch>,
    controls: &Arc<SessionControls>,
) -> anyhow::Result<Summary> {
    let mut scene = Scene::parse(&config.scene.text, Path::new(&config.scene.path))?;
    let mut library =
        MaterialLibrary::parse(&config.materials.text, Path::new(&config.materials.path))?;
    if let Some(trial) = &config.trial {
        trial.set_materials(&mut scene, &mut library)?;
    }
    // Mesh files from the configuration (as the session log holds them),
    // from disk for a file it does not hold (a replay's --scene).
    let read = |path: &Path| match config
        .mesh_files
        .iter()
        .find(|f| Path::new(&f.path) == path)
    {
        Some(file) => Ok(file.bytes.clone()),
        None => std::fs::read(path),
    };
    let (threads, _) = tessera::haptics::simulation_threads(false)?;
    let (scene, assets) = prepare_scene(scene, config.count, &library, &threads, &read, None)?;
    let Some(mut haptic) = scene.haptic.clone() else {
        bail!(
            "{}: the scene has no [haptic] table (which body is the proxy)",
            scene.path.display()
        );
    };
    if let Some(trial) = &config.trial {
        trial.set_haptic(&mut haptic);
    }
    let mut world = super::build_world(&scene, &assets, config.seed, &threads)?;
    if config.own_bases {
        enable_own_bases(&mut world, None)?;
    }
    let opened = open_device(config, run, stop)?;
    let hand = match (&run.hand_path, &config.hand_script) {
        (Some(path), _) => Some(path.clone()),
        (None, Some(text)) => Some(HandScript::parse(text, "hand script")?.trajectory()),
        (None, None) => None,
    };
    let seconds = config
        .seconds
        .unwrap_or_else(|| hand.as_ref().map_or(60.0, |h| h.duration_s() + 1.0));
    let recorder = match &run.record {
        Some(path) => Some(Recorder::create(path, serde_json::to_value(config)?)?),
        None => None,
    };
    let spec = opened.device.spec().clone();
    let safety = SafetySettings {
        deadman_button: config.deadman_button.or(opened.deadman_button),
        force_output: config.trial.as_ref().is_none_or(|t| t.force_feedback),
        ..SafetySettings::for_spec(&spec)
    };
    let quiet = run.quiet;
    let session = ServeInputs {
        world,
        threads,
        haptic,
        scene_name: scene.path.display().to_string(),
        device: opened.device,
        device_name: opened.name,
        hand,
        recorder: recorder.as_ref().map(Recorder::handle),
        options: ServerOptions {
            seconds,
            lockstep: config.lockstep,
            realtime: run.realtime,
            haptic_cpu: run.haptic_cpu,
            direct: config.direct,
            sync_ratio: config.sync_ratio,
            trace: run.trace,
            safety: Some(safety),
            ..ServerOptions::default()
        },
        stop: Some(stop.flag()),
        on_notice: Some(Box::new(move |notice| {
            if !quiet {
                print_notice(notice);
            }
        })),
        view: watch.map(|w| Arc::clone(&w.feed)),
        controls: Some(Arc::clone(controls)),
        watch: None,
    };
    let mut summary = serve(session)?;
    if let Some(recorder) = recorder {
        recorder.handle().event(Event::Outcome {
            time_s: summary.seconds,
            state_hash: summary.outcome.state_hash,
            proxy_path_hash: summary.outcome.proxy_path_hash,
            bodies: summary.outcome.bodies,
        });
        summary.log = Some(recorder.path().display().to_string());
        recorder.finish()?;
    }
    Ok(summary)
}

/// Tells the terminal what the haptic thread noticed.
pub(super) fn print_notice(notice: Notice) {
    match notice {
        Notice::DeviceLost { time_s } => eprintln!(
            "device lost at {time_s:.3} s: forces set to zero; waiting for it to answer again"
        ),
        Notice::DeviceRestored { time_s, lost_for_s } => {
            eprintln!("device back at {time_s:.3} s after {lost_for_s:.3} s; forces ramp in again")
        }
    }
}

/// The device of a session and what its profile says beyond the spec.
pub(super) struct OpenedDevice {
    pub device: Box<dyn Device>,
    /// The profile's name (selects per-device scaling factors).
    pub name: String,
    pub deadman_button: Option<u8>,
}

fn open_device(
    config: &SessionConfig,
    run: &RunOptions,
    stop: &Stop,
) -> anyhow::Result<OpenedDevice> {
    if config.device == "sim" {
        let hand = match &run.hand_path {
            Some(path) => path.clone(),
            None => {
                let text = config.hand_script.as_deref().unwrap_or(STILL_HAND);
                HandScript::parse(text, "hand script")?.trajectory()
            }
        };
        let arm = SimulatedArm::new(sim_arm_spec(), ArmModel::default(), hand);
        return Ok(OpenedDevice {
            device: Box::new(arm),
            name: "sim-arm".into(),
            deadman_button: None,
        });
    }
    let Some(source) = &config.device_profile else {
        bail!("--device {}: no device profile", config.device);
    };
    open_hid(
        Path::new(&source.path),
        &source.text,
        run.wait_for_device,
        stop,
    )
}

/// Opens the HID device of the profile at `path` (whose text is `text`);
/// with `wait`, waits until it can be opened or `stop` is requested.
pub(super) fn open_hid(
    path: &Path,
    text: &str,
    wait: bool,
    stop: &Stop,
) -> anyhow::Result<OpenedDevice> {
    let profile = DeviceProfile::parse(text, path)?;
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
    let what = format!(
        "device {} ({:04x}:{:04x}, profile {})",
        profile.spec.name,
        profile.vendor_id,
        profile.product_id,
        path.display()
    );
    if let Err(why) = driver.wait_connected(DEVICE_OPEN_WAIT) {
        if !wait {
            bail!(
                "{what} cannot be opened: {why}. Check that it is plugged in and powered and that \
                 you may open its /dev/hidraw node (`tessera devices` lists what is present and \
                 what to check); --wait-for-device waits for it"
            );
        }
        eprintln!("waiting for {what}: {why} (Ctrl-C to give up)");
        loop {
            if stop.requested() {
                bail!("gave up waiting for {what}");
            }
            if driver.wait_connected(Duration::from_millis(200)).is_ok() {
                break;
            }
        }
        eprintln!("{what} is open");
    }
    Ok(OpenedDevice {
        device: Box::new(driver),
        name,
        deadman_button: profile.safety.deadman_button,
    })
}

fn read_hand(path: &Path) -> anyhow::Result<String> {
    assets::read_text(path).with_context(|| format!("hand script {}", path.display()))
}

/// A profile file, or the name of a shipped profile (`tessera-arm`).
pub(super) fn profile_path(profile: &str) -> anyhow::Result<PathBuf> {
    let given = PathBuf::from(profile);
    if given.is_file() {
        return Ok(given);
    }
    assets::shipped_path(assets::DEVICES_DIR, profile).with_context(|| {
        format!(
            "no device profile file `{profile}` (shipped profiles: {})",
            assets::shipped_names(assets::DEVICES_DIR).join(", ")
        )
    })
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
    if summary.interrupted {
        println!(
            "interrupted at {:.3} s: device zeroed and released, log finished",
            summary.seconds
        );
    }
    if summary.degraded {
        println!(
            "DEGRADED: the device was lost {} time(s) ({} back) and failed {} read(s) or command(s); forces were zero meanwhile",
            summary.device_losses, summary.device_restorations, summary.device_errors
        );
    }
    let r = &summary.realtime;
    println!(
        "real-time: requested {}, obtained {} (priority {}), memory locked {}, heap reserved {} MiB, CPU {}{}",
        r.requested,
        r.policy,
        r.priority,
        r.memory_locked,
        r.heap_reserved_bytes >> 20,
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
        "tick compute: p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs (tick {}: {:.0} µs on the CPU, {} waits, {} preemptions); sub-world {:.1} bodies on average, {} at most",
        h.compute_us.p50,
        h.compute_us.p99,
        h.compute_us.max,
        h.slowest_tick.tick,
        h.slowest_tick.on_cpu_us,
        h.slowest_tick.waits,
        h.slowest_tick.preemptions,
        summary.sub_world_mean_bodies,
        h.max_sub_world_bodies
    );
    println!(
        "syncs: {} ({} late); global step {:.2} ms mean, {:.2} ms max; impacts checked beside the steps: {} exchanged as rigid, {} kept the solver's impulses, {} never checked",
        summary.syncs.total,
        summary.syncs.late,
        summary.syncs.global_step_ms_mean,
        summary.syncs.global_step_ms_max,
        summary.syncs.rigid_exchanges,
        summary.syncs.solver_exchanges,
        summary.syncs.unchecked_impacts
    );
    println!(
        "coupling: k {:.0} N/m, c {:.1} N·s/m (simulation units); peak coupling force on the device {:.1} N",
        summary.coupling.stiffness_n_m, summary.coupling.damping_n_s_m, summary.peak_coupling_force_n,
    );
    println!(
        "sent to the device after the safety layer: peak force {:.1} N, peak goal speed {:.2} m/s; safety trips {}; device errors {}",
        summary.commanded.peak_force_n,
        summary.commanded.peak_goal_speed_m_s,
        summary.safety_trips,
        summary.device_errors
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
    if let Some(feel) = &summary.fracture_to_feel {
        println!(
            "from a strike to its fragments in the sub-world: {:.1} ms mean, {:.1} ms max ({} event(s))",
            feel.mean_ms, feel.max_ms, feel.events
        );
    }
    if let Some(world) = &summary.fracture_to_world {
        println!(
            "from an impact to its fractures in the world (every body): {:.1} ms mean, {:.1} ms max ({} event(s))",
            world.mean_ms, world.max_ms, world.events
        );
    }
    if summary.own_bases_adopted > 0 {
        println!(
            "fragments given a modal basis of their own: {}",
            summary.own_bases_adopted
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
    /// Why the log ends early, if it is truncated or damaged.
    truncated: Option<String>,
    /// Inputs given on the command line that differ from the recorded ones.
    overrides: Vec<String>,
    recorded_version: String,
    #[serde(flatten)]
    comparison: Comparison,
}

pub fn replay(args: &ReplayArgs, cli: &Cli, stop: &Stop) -> anyhow::Result<ExitCode> {
    let log = SessionReader::open(&args.file)?;
    let name = args.file.display().to_string();
    let mut config: SessionConfig = log
        .events()
        .find_map(|e| match e {
            Event::Configuration { config, .. } => Some(config.clone()),
            _ => None,
        })
        .with_context(|| format!("{name}: no configuration event"))
        .and_then(|c| {
            serde_json::from_value(c).with_context(|| {
                format!("{name}: not a haptic session's configuration (or from an older tessera)")
            })
        })?;
    if config.device != "sim" {
        bail!(
            "{name}: recorded with device `{}`; a replay drives the simulated arm with the recorded hand, which only simulated sessions record",
            config.device
        );
    }
    let mut overrides = Vec::new();
    if let Some(path) = &args.scene {
        let text = assets::read_text(path).with_context(|| format!("scene {}", path.display()))?;
        if let Some(d) = first_difference(&config.scene.text, &text) {
            overrides.push(format!(
                "scene {} differs from the recorded one: {d}",
                path.display()
            ));
        }
        config.scene = Source {
            path: path.display().to_string(),
            text,
        };
    }
    if cli.materials.is_some() {
        let (path, text) = material_source(cli)?;
        if let Some(d) = first_difference(&config.materials.text, &text) {
            overrides.push(format!(
                "materials {} differ from the recorded ones: {d}",
                path.display()
            ));
        }
        config.materials = Source {
            path: path.display().to_string(),
            text,
        };
    }
    // A study trial's hand decided each strike from what it felt: the
    // log holds the path it followed.
    let mut hand_path = None;
    if config.trial.is_some() && args.hand.is_none() {
        let points = log
            .events()
            .find_map(|e| match e {
                Event::HandPath { points, .. } => Some(points),
                _ => None,
            })
            .with_context(|| {
                format!("{name}: a study trial's log without its hand's path (a trial cut short); give --hand to replay it with a script")
            })?;
        hand_path = Some(HandTrajectory::from_samples(
            points
                .iter()
                .map(|&[t, x, y, z]| (t, nalgebra::Vector3::new(x, y, z))),
        ));
    }
    if let Some(path) = &args.hand {
        let text = read_hand(path)?;
        if let Some(d) = first_difference(config.hand_script.as_deref().unwrap_or(""), &text) {
            overrides.push(format!(
                "hand script {} differs from the recorded one: {d}",
                path.display()
            ));
        }
        config.hand_script = Some(text);
    }
    // An interrupted session ran for its outcome's time, not its plan; a
    // truncated log is replayed as far as it goes.
    let outcome_s = log.events().find_map(|e| match e {
        Event::Outcome { time_s, .. } => Some(*time_s),
        _ => None,
    });
    if log.truncated.is_some() {
        let ticks = log.ticks().count().max(1);
        config.seconds = Some(ticks as f64 / tessera::haptics::HAPTIC_RATE_HZ);
    } else if let Some(ran_s) = outcome_s {
        config.seconds = Some(ran_s);
    }
    // Watched in the viewer, a replay runs on the virtual clock paced at
    // real speed, so that its timeline can pause, slow down and seek;
    // `--lockstep` runs it unpaced and `--no-ui` in real time.
    let speed = match args.ui.speed {
        None if args.ui.options().is_some() && !args.lockstep => Some(1.0),
        given => given,
    };
    config.lockstep = args.lockstep || args.ui.needs_lockstep() || speed.is_some();
    if !args.json {
        if config.version != env!("CARGO_PKG_VERSION") {
            eprintln!(
                "note: recorded with tessera {}, replayed with {}",
                config.version,
                env!("CARGO_PKG_VERSION")
            );
        }
        for o in &overrides {
            eprintln!("override: {o}");
        }
    }
    let summary = run_session(
        &config,
        &RunOptions {
            record: None,
            realtime: true,
            haptic_cpu: CpuPin::Auto,
            wait_for_device: false,
            trace: true,
            quiet: args.json,
            ui: args.ui.options(),
            speed,
            hold: args.ui.hold,
            paused: args.ui.paused,
            hand_path,
        },
        stop,
    )?;
    let replayed_fractures: Vec<(String, usize)> = summary
        .fractures
        .iter()
        .map(|f| (f.body.clone(), f.fragments))
        .collect();
    let comparison = compare(
        &log,
        &Replayed {
            proxy_trace: &summary.proxy_trace,
            fractures: &replayed_fractures,
            state_hash: summary.outcome.state_hash,
        },
    );
    let report = ReplayReport {
        file: name,
        mode: summary.mode,
        truncated: log.truncated.clone(),
        overrides,
        recorded_version: config.version.clone(),
        comparison,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "replay of {} ({}): {}",
            report.file,
            report.mode,
            if report.comparison.matches {
                "matches the recording"
            } else if report.truncated.is_some() {
                "the log is truncated"
            } else {
                "differs from the recording"
            }
        );
        if let Some(why) = &report.truncated {
            println!(
                "the log ends early after {} ticks ({why}); compared up to there",
                report.comparison.recorded.ticks
            );
        }
        match report.comparison.first_divergence {
            Some(tick) => println!("first divergence at tick {tick}"),
            None => println!(
                "no divergence in {} ticks",
                report.comparison.recorded.ticks
            ),
        }
        println!(
            "fractures recorded {:?}, replayed {:?}",
            report.comparison.recorded.fractures, report.comparison.replayed.fractures
        );
    }
    if summary.interrupted {
        return Ok(ExitCode::from(stop.exit_status()));
    }
    Ok(if report.comparison.matches {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_DIFFERS)
    })
}
