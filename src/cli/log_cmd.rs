//! `tessera log info FILE`: what a session log holds.

use std::path::PathBuf;
use tessera::session::SessionReader;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Duration, ticks, drops and events of a session log.
    Info {
        file: PathBuf,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Records a device-only session: the simulated arm, driven by a hand
    /// script, in free motion (the goal follows the handle), on a virtual
    /// 1 kHz clock. A check of the device layer and of the log format.
    Device {
        file: PathBuf,
        /// Seconds of session.
        #[arg(long, default_value_t = 2.0)]
        seconds: f64,
        /// Hand script (TOML; default: a few strikes at the origin).
        #[arg(long)]
        hand: Option<PathBuf>,
    },
}

const DEFAULT_HAND: &str = r#"
start_m = [0.0, 0.0, 0.05]
[[steps]]
type = "strikes"
target_m = [0.0, 0.0, 0.0]
lift_m = 0.04
from_speed_m_s = 0.5
to_speed_m_s = 1.5
count = 3
"#;

fn record_device(
    file: &std::path::Path,
    seconds: f64,
    hand: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    use tessera::device::{sim_arm_spec, ArmModel};
    use tessera::device::{
        Device, DeviceCommand, HandScript, Safety, SafetySettings, SimulatedArm,
    };
    use tessera::session::{Event, Recorder, TickRecord};
    anyhow::ensure!(
        seconds.is_finite() && seconds > 0.0 && seconds <= 3600.0,
        "--seconds must be in (0, 3600]"
    );
    let script = match hand {
        Some(path) => HandScript::load(path)?,
        None => HandScript::parse(DEFAULT_HAND, "built-in hand")?,
    };
    let spec = sim_arm_spec();
    let arm = SimulatedArm::new(spec.clone(), ArmModel::default(), script.trajectory());
    let mut device = Safety::new(arm, SafetySettings::for_spec(&spec))?;
    let recorder = Recorder::create(
        file,
        serde_json::json!({"command": "log device", "seconds": seconds, "device": spec.name}),
    )?;
    let log = recorder.handle();
    let ticks = (seconds * 1000.0).round() as u64;
    for tick in 0..ticks {
        let now = tick as f64 * 1e-3;
        let state = device.read(now)?;
        let command = DeviceCommand::Goal {
            position_m: state.position_m,
            orientation: state.orientation,
            velocity_m_s: state.velocity_m_s,
            angular_velocity_rad_s: nalgebra::Vector3::zeros(),
        };
        device.command(&command, now)?;
        device.drain_events(|e| {
            log.event(Event::SafetyTrip {
                time_s: e.time_s,
                cause: e.cause.name().to_owned(),
                latched: e.latched,
            });
        });
        log.tick(TickRecord {
            command: state.position_m.into(),
            command_is_force: false,
            hand_position_m: device.device().hand_target(now).into(),
            proxy_position_m: state.position_m.into(),
            proxy_orientation_wxyz: [1.0, 0.0, 0.0, 0.0],
            coupling_force_n: [0.0; 3],
            period_us: 1000.0,
            compute_us: 0.0,
            ..TickRecord::of_device(tick, now, &state)
        });
        // A virtual clock: pace the producer to the writer, never drop.
        if tick % 500 == 499 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    let stats = recorder.finish()?;
    println!(
        "{}: {} ticks, {} events, {} dropped",
        file.display(),
        stats.ticks,
        stats.events,
        stats.dropped_ticks + stats.dropped_events
    );
    Ok(())
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    match &args.action {
        Action::Info { file, json } => {
            let log = SessionReader::open(file)?;
            let summary = log.summary();
            if *json {
                println!("{}", serde_json::to_string_pretty(&summary)?);
                return Ok(());
            }
            println!("{}", file.display());
            println!("  duration   {:.3} s", summary.duration_s);
            println!("  ticks      {}", summary.ticks);
            println!(
                "  dropped    {} tick(s), {} event(s)",
                summary.dropped_ticks, summary.dropped_events
            );
            for (kind, count) in &summary.events {
                println!("  event      {kind}: {count}");
            }
            if !summary.complete {
                println!("  incomplete: no end-of-session record (the run was cut short)");
            }
            if let Some(reason) = &summary.truncated {
                println!("  truncated: read up to the last complete chunk ({reason})");
            }
            Ok(())
        }
        Action::Device {
            file,
            seconds,
            hand,
        } => record_device(file, *seconds, hand.as_deref()),
    }
}
