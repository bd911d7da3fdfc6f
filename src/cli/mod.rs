//! Command-line interface: argument parsing, logging set-up, and one module
//! per subcommand. Library errors are wrapped with `anyhow` context here.

mod devices_cmd;
mod fracture_cmd;
mod haptic_cmd;
mod log_cmd;
mod mesh_cmd;
mod modes;
mod pattern_cmd;
mod scene_cmd;
mod strength_cmd;
mod study_cmd;
mod study_person;
mod study_run;

use anyhow::Context;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use tessera::config::{MaterialLibrary, BUILTIN_MATERIALS_PATH};
use tessera::world::World;
use tracing_subscriber::EnvFilter;

/// tessera: a haptic interaction server for brittle fracture.
#[derive(Debug, Parser)]
#[command(version, about, long_about = None)]
struct Cli {
    /// More log output (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Material library (default: the built-in configs/materials.toml).
    #[arg(long, global = true, value_name = "FILE")]
    materials: Option<PathBuf>,
    /// Largest memory a request may need, in GiB (default: ¾ of this
    /// machine's memory). Requests estimated above it are refused before
    /// anything is allocated.
    #[arg(long, global = true, value_name = "GIB", value_parser = max_memory_gib)]
    max_memory: Option<f64>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The main job: a simulated hand strikes the ceramic tile through the
    /// haptic arm, harder each time, until it breaks (~15 s).
    Demo(haptic_cmd::DemoArgs),
    /// Runs the haptic server on a scene with a device.
    Serve(haptic_cmd::ServeArgs),
    /// Replays a session log's hand against the simulated arm and compares.
    Replay(haptic_cmd::ReplayArgs),
    /// Lowest elastic modes of a body (K x = λ M x).
    Modes(modes::Args),
    /// Reads or generates a mesh, reports it, and optionally writes it out.
    Mesh(mesh_cmd::Args),
    /// Applies impacts or held loads to a breakable body; reports cracks and fragments.
    Fracture(fracture_cmd::Args),
    /// Compares two fracture patterns (`fracture --pattern`) by Glondu's
    /// distance (eq. 5.1).
    Pattern(pattern_cmd::Args),
    /// A material's strength in the ring-on-ring and three-point bending
    /// tests, simulated against their closed forms, and its size and rate
    /// scaling.
    Strength(strength_cmd::Args),
    /// Lists HID devices present and the device profiles that match them.
    Devices(devices_cmd::Args),
    /// Session logs (MCAP).
    Log(log_cmd::Args),
    /// Drops a body onto another in a scene (default: the ball onto the tile).
    Drop(scene_cmd::DropArgs),
    /// Runs any scene headless; step-time statistics and fracture events.
    Run(scene_cmd::RunArgs),
    /// Perception studies: run one for a participant, analyse results.
    Study(study_cmd::Args),
}

pub fn main() -> ExitCode {
    // Output piped into a reader that stops early (`| head`) ends the
    // process quietly, as other command-line tools do, instead of a panic
    // in `println!` (Rust ignores SIGPIPE by default).
    #[cfg(unix)]
    // SAFETY: restores the default action of one signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let default_level = match cli.verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    if let Some(gib) = cli.max_memory {
        tessera::limits::set_memory_budget_bytes((gib * (1u64 << 30) as f64) as u64);
    }
    let done = |r: anyhow::Result<()>| r.map(|()| ExitCode::SUCCESS);
    let result = match &cli.command {
        Command::Demo(args) => Stop::install().and_then(|s| haptic_cmd::demo(args, &cli, &s)),
        Command::Serve(args) => Stop::install().and_then(|s| haptic_cmd::serve_cmd(args, &cli, &s)),
        Command::Replay(args) => Stop::install().and_then(|s| haptic_cmd::replay(args, &cli, &s)),
        Command::Modes(args) => done(modes::run(args, &cli)),
        Command::Mesh(args) => done(mesh_cmd::run(args)),
        Command::Fracture(args) => done(fracture_cmd::run(args, &cli)),
        Command::Pattern(args) => done(pattern_cmd::run(args)),
        Command::Strength(args) => done(strength_cmd::run(args, &cli)),
        Command::Devices(args) => done(devices_cmd::run(args)),
        Command::Log(args) => done(log_cmd::run(args)),
        Command::Drop(args) => done(scene_cmd::drop(args, &cli)),
        Command::Run(args) => done(scene_cmd::run(args, &cli)),
        Command::Study(args) => done(study_cmd::run(args, &cli)),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {}", error_chain(&error));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes, `: `-separated, each cause left out when the
/// text so far already ends with it (library errors often print their
/// source in their own message).
fn error_chain(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let cause = cause.to_string();
        if text.ends_with(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    text
}

/// SIGINT and SIGTERM end a session cleanly: the first sets the stop flag
/// the haptic thread reads each tick; a second exits at once.
pub struct Stop {
    flag: Arc<AtomicBool>,
    /// 128 + the signal that set the flag.
    status: Arc<AtomicUsize>,
}

impl Stop {
    fn install() -> anyhow::Result<Self> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        use signal_hook::flag;
        let stop = Self {
            flag: Arc::new(AtomicBool::new(false)),
            status: Arc::new(AtomicUsize::new(0)),
        };
        for signal in [SIGINT, SIGTERM] {
            let status = 128 + signal;
            // Registered first, so it sees the flag as the previous signal
            // left it: set means this is the second.
            flag::register_conditional_shutdown(signal, status, Arc::clone(&stop.flag))
                .and_then(|_| {
                    flag::register_usize(signal, Arc::clone(&stop.status), status as usize)
                })
                .and_then(|_| flag::register(signal, Arc::clone(&stop.flag)))
                .context("installing the SIGINT and SIGTERM handlers")?;
        }
        Ok(stop)
    }

    /// The flag a session polls.
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.flag)
    }

    pub fn requested(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// 128 + the signal received (130 for SIGINT).
    pub fn exit_status(&self) -> u8 {
        u8::try_from(self.status.load(Ordering::Relaxed)).unwrap_or(130)
    }
}

/// `--seconds` of a session: a number in (0, one week].
fn session_seconds(text: &str) -> Result<f64, String> {
    seconds_within_a_week(text, false)
}

/// γ of Glondu eq. 3.8 (m), within (0, [`tessera::limits::MAX_ENERGY_LENGTH_M`]].
fn energy_length(text: &str) -> Result<f64, String> {
    let value: f64 = text.parse().map_err(|e| format!("`{text}`: {e}"))?;
    tessera::limits::energy_length_m(value)
}

/// A time of zero or more seconds, up to a week (`fracture --rest-at`).
fn non_negative_seconds(text: &str) -> Result<f64, String> {
    seconds_within_a_week(text, true)
}

/// Seconds up to a week, above zero or from it (`zero_allowed`).
fn seconds_within_a_week(text: &str, zero_allowed: bool) -> Result<f64, String> {
    let value: f64 = text.parse().map_err(|e| format!("`{text}`: {e}"))?;
    let max = tessera::limits::MAX_SESSION_S;
    let above_lowest = value > 0.0 || (zero_allowed && value == 0.0);
    if above_lowest && value <= max {
        Ok(value)
    } else {
        let open = if zero_allowed { '[' } else { '(' };
        Err(format!("{value} is outside {open}0, {max}] s (one week)"))
    }
}

/// A count of at least 1 (`--modes`).
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("`{text}`: {e}")),
    }
}

/// `--max-memory`: a positive number of GiB.
fn max_memory_gib(text: &str) -> Result<f64, String> {
    let value: f64 = text.parse().map_err(|e| format!("`{text}`: {e}"))?;
    if value.is_finite() && value > 0.0 && value < 1e9 {
        Ok(value)
    } else {
        Err(format!("{value} GiB must be positive"))
    }
}

/// The body a command works on: its mesh and material.
#[derive(Debug, Clone, clap::Args)]
pub struct BodyArgs {
    /// Mesh file (.node, .ele, .msh) or generator (box:LX,LY,LZ:NX,NY,NZ,
    /// tile:SIDE,T:N,NZ, plate:R,T:RINGS,LAYERS; see the README).
    #[arg(long)]
    pub mesh: String,
    /// Material name from the library.
    #[arg(long)]
    pub material: String,
    /// The element of the elasticity: `quadratic` (10-node tets, accurate
    /// in bending) or `linear` (4-node, faster, too stiff in bending).
    #[arg(long, default_value = "quadratic")]
    pub element: tessera::fem::ElementOrder,
}

/// What a real-time request could not obtain, as a text suffix (` (a; b)`,
/// empty when it obtained everything).
fn errors_suffix(errors: &[String]) -> String {
    if errors.is_empty() {
        String::new()
    } else {
        format!(" ({})", errors.join("; "))
    }
}

fn material_library(cli: &Cli) -> anyhow::Result<MaterialLibrary> {
    Ok(match &cli.materials {
        Some(path) => MaterialLibrary::load(path)?,
        None => MaterialLibrary::builtin(),
    })
}

/// The material library's path and text: `--materials`, or the built-in.
fn material_source(cli: &Cli) -> anyhow::Result<(PathBuf, String)> {
    let path = cli
        .materials
        .clone()
        .unwrap_or_else(|| PathBuf::from(BUILTIN_MATERIALS_PATH));
    let text = tessera::assets::read_text(&path)
        .with_context(|| format!("material library {}", path.display()))?;
    Ok((path, text))
}

/// [`World::from_scene`] with a bar on stderr while the scene settles
/// (hidden when stderr is not a terminal).
fn build_world(
    scene: &tessera::config::Scene,
    assets: &tessera::world::SceneAssets,
    seed: u64,
    threads: &rayon::ThreadPool,
) -> Result<World, tessera::world::WorldError> {
    let bar = indicatif::ProgressBar::new(0).with_style(
        indicatif::ProgressStyle::with_template("settling the scene {pos}/{len} steps")
            .expect("a valid template"),
    );
    let world = World::from_scene_with(scene, assets, seed, threads, &|done, steps| {
        bar.set_length(steps as u64);
        bar.set_position(done as u64);
    });
    bar.finish_and_clear();
    world
}

/// A spinner on stderr counting operator applications; hidden when stderr is
/// not a terminal or when JSON goes to stdout quietly.
fn solve_progress(label: &'static str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} {pos} solves ({elapsed})")
            .expect("valid template"),
    );
    bar.set_message(label);
    bar
}
