//! Command-line interface: argument parsing, logging set-up, and one module
//! per subcommand. Library errors are wrapped with `anyhow` context here.

mod devices_cmd;
mod fracture_cmd;
mod haptic_cmd;
mod log_cmd;
mod mesh_cmd;
mod modes;
mod scene_cmd;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use tessera::config::MaterialLibrary;
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
    /// Lists HID devices present and the device profiles that match them.
    Devices(devices_cmd::Args),
    /// Session logs (MCAP).
    Log(log_cmd::Args),
    /// Drops a body onto another in a scene (default: the ball onto the tile).
    Drop(scene_cmd::DropArgs),
    /// Runs any scene headless; step-time statistics and fracture events.
    Run(scene_cmd::RunArgs),
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
    let result = match &cli.command {
        Command::Demo(args) => haptic_cmd::demo(args, &cli),
        Command::Serve(args) => haptic_cmd::serve_cmd(args, &cli),
        Command::Replay(args) => haptic_cmd::replay(args, &cli),
        Command::Modes(args) => modes::run(args, &cli),
        Command::Mesh(args) => mesh_cmd::run(args),
        Command::Fracture(args) => fracture_cmd::run(args, &cli),
        Command::Devices(args) => devices_cmd::run(args),
        Command::Log(args) => log_cmd::run(args),
        Command::Drop(args) => scene_cmd::drop(args, &cli),
        Command::Run(args) => scene_cmd::run(args, &cli),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
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
