//! `tessera drop` and `tessera run`: headless runs of scenes.

use super::{material_library, Cli};
use anyhow::{bail, Context};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tessera::assets;
use tessera::config::{MaterialLibrary, Scene};
use tessera::haptics::SimulationRealtime;
use tessera::modal::{default_cache_dir, ModalCache};
use tessera::world::{
    drop_run, Counters, DropRun, EventTimes, FractureEvent, FrameOutput, SceneAssets, StepInputs,
};

/// A scene file, or the name of a shipped scene (`tile-on-supports`).
pub(super) fn scene_path(scene: &str) -> anyhow::Result<PathBuf> {
    let given = Path::new(scene);
    if given.is_file() {
        return Ok(given.to_path_buf());
    }
    if let Some(path) = assets::shipped_path(assets::SCENES_DIR, scene) {
        return Ok(path);
    }
    bail!(
        "no scene file `{scene}` (shipped scenes: {})",
        assets::shipped_names(assets::SCENES_DIR).join(", ")
    )
}

/// Loads a scene, optionally sets its array count, and prepares its assets
/// (modal analyses, cached on disk) with progress on stderr.
pub(super) fn load_scene(
    scene: &str,
    count: Option<usize>,
    cli: &Cli,
    threads: &rayon::ThreadPool,
) -> anyhow::Result<(Scene, SceneAssets)> {
    let scene = Scene::load(&scene_path(scene)?)?;
    prepare_scene(
        scene,
        count,
        &material_library(cli)?,
        threads,
        &|path| std::fs::read(path),
        None,
    )
}

/// A scene given by name or path: its path and text.
pub(super) fn scene_text(scene: &str) -> anyhow::Result<(PathBuf, String)> {
    let path = scene_path(scene)?;
    let text = assets::read_text(&path).with_context(|| format!("scene {}", path.display()))?;
    Ok((path, text))
}

/// Sets the array count of a parsed scene and prepares its assets on
/// `threads`, reading mesh files through `read` and reusing the bases of
/// `previous` that fit ([`SceneAssets::load_with`]).
pub(super) fn prepare_scene(
    mut scene: Scene,
    count: Option<usize>,
    library: &MaterialLibrary,
    threads: &rayon::ThreadPool,
    read: &dyn Fn(&Path) -> std::io::Result<Vec<u8>>,
    previous: Option<&SceneAssets>,
) -> anyhow::Result<(Scene, SceneAssets)> {
    if let Some(count) = count {
        scene.set_array_count(count)?;
    }
    let cache = ModalCache::new(default_cache_dir());
    let bar = indicatif::ProgressBar::new(0).with_style(
        indicatif::ProgressStyle::with_template("modal analyses {pos}/{len} {wide_msg}")
            .expect("a valid template"),
    );
    let assets = SceneAssets::load_with(
        &scene,
        library,
        Some(&cache),
        threads,
        &|progress| {
            bar.set_length(progress.total as u64);
            bar.set_position(progress.finished as u64);
            if !progress.ended {
                bar.set_message(format!("(`{}` …)", progress.body));
            }
        },
        read,
        previous,
    )?;
    bar.finish_and_clear();
    Ok((scene, assets))
}

#[derive(Debug, clap::Args)]
pub struct DropArgs {
    /// Scene file or shipped scene name; it needs a [drop] table.
    #[arg(long, default_value = "tile-on-supports")]
    pub scene: String,
    /// Release height (m) above the target's top.
    #[arg(long, conflicts_with = "heights", required_unless_present = "heights")]
    pub height: Option<f64>,
    /// Heights FROM:TO:STEP (m), inclusive.
    #[arg(long)]
    pub heights: Option<String>,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write an OBJ frame of the whole scene every 10 ms (one subdirectory
    /// per height) for ParaView.
    #[arg(long, value_name = "DIR")]
    pub frames: Option<PathBuf>,
    /// Write the fracture pattern of each height's first split of the
    /// tested body (the target, or the dropped body when only it is
    /// breakable; Glondu §5.1, the file `fracture --pattern` writes) to
    /// DIR/h<HEIGHT>.json, for `tessera pattern`.
    #[arg(long, value_name = "DIR")]
    pub pattern: Option<PathBuf>,
    /// Pay each crack by the energy its opening releases (the scene's
    /// `crack_plane_energy = true`).
    #[arg(long)]
    pub crack_plane_energy: bool,
    /// γ of Glondu eq. 3.8 (m), in place of the scene's `energy_length_m`.
    #[arg(long, value_name = "METRES", value_parser = super::energy_length)]
    pub energy_length: Option<f64>,
}

fn parse_heights(text: &str) -> anyhow::Result<Vec<f64>> {
    let parts: Vec<f64> = text
        .split(':')
        .map(|p| p.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .with_context(|| format!("--heights `{text}`: expected FROM:TO:STEP in metres"))?;
    let [from, to, step] = parts[..] else {
        bail!(
            "--heights `{text}`: expected FROM:TO:STEP, got {} part(s)",
            parts.len()
        );
    };
    if !(from.is_finite()
        && to.is_finite()
        && step.is_finite()
        && step > 0.0
        && from >= 0.0
        && to >= from)
    {
        bail!("--heights `{text}`: need 0 ≤ FROM ≤ TO and STEP > 0");
    }
    let count = ((to - from) / step + 1e-9).floor() as usize + 1;
    if count > 10_000 {
        bail!("--heights `{text}`: {count} runs is too many");
    }
    Ok((0..count).map(|i| from + i as f64 * step).collect())
}

#[derive(Serialize)]
struct DropReport<'a> {
    scene: String,
    seed: u64,
    runs: &'a [TimedDrop],
}

/// A drop and the wall time of its steps.
#[derive(Serialize)]
struct TimedDrop {
    #[serde(flatten)]
    run: DropRun,
    step_ms_mean: f64,
    step_ms_max: f64,
}

pub fn drop(args: &DropArgs, cli: &Cli) -> anyhow::Result<()> {
    let heights = match (&args.heights, args.height) {
        (Some(text), _) => parse_heights(text)?,
        (None, Some(h)) => vec![h],
        (None, None) => bail!("give --height or --heights"),
    };
    if let Some(dir) = &args.pattern {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("--pattern: creating {}", dir.display()))?;
    }
    let (threads, _) = tessera::haptics::simulation_threads(false)?;
    let (mut scene, assets) = load_scene(&args.scene, None, cli, &threads)?;
    scene.world.crack_plane_energy |= args.crack_plane_energy;
    if let Some(length_m) = args.energy_length {
        scene.world.energy_length_m = length_m;
    }
    let bar = indicatif::ProgressBar::new(heights.len() as u64);
    let mut runs = Vec::with_capacity(heights.len());
    for &height in &heights {
        bar.set_message(format!("drop from {height} m"));
        let dir = args
            .frames
            .as_ref()
            .map(|d| d.join(format!("h{height:.3}")));
        if let Some(dir) = &dir {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let frames = dir.as_deref().map(|dir| FrameOutput {
            dir,
            every_steps: (0.01 / scene.world.time_step_s).round().max(1.0) as u64,
        });
        let mut counters = Counters::default();
        let run = drop_run(
            &scene,
            &assets,
            height,
            args.seed,
            frames.as_ref(),
            &threads,
            &mut counters,
        )?;
        if let (Some(dir), Some(pattern)) = (&args.pattern, &run.pattern) {
            let path = dir.join(format!("h{height:.3}.json"));
            std::fs::write(&path, serde_json::to_string_pretty(pattern)?)
                .with_context(|| format!("writing the pattern to {}", path.display()))?;
        }
        runs.push(TimedDrop {
            run,
            step_ms_mean: counters.step_total_s * 1e3 / counters.steps.max(1) as f64,
            step_ms_max: counters.step_max_s * 1e3,
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    if args.json {
        let report = DropReport {
            scene: scene.path.display().to_string(),
            seed: args.seed,
            runs: &runs,
        };
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!("scene {} (seed {})", scene.path.display(), args.seed);
    println!(
        "height_m  broke  at_s     fragments  crack_area_m2  peak_impulse_N·s  \
         landing_m/s  exchanged_N·s  contact_peak_N  contact_us  restitution  \
         step_mean_ms  step_max_ms"
    );
    for TimedDrop {
        run: r,
        step_ms_mean,
        step_ms_max,
    } in &runs
    {
        let landing = r.first_impact.as_ref();
        let column = |value: Option<f64>, width: usize, precision: usize| {
            value.map_or(format!("{:>width$}", "-"), |v| {
                format!("{v:width$.precision$}")
            })
        };
        println!(
            "{:8.3}  {:5}  {:7}  {:9}  {:13.3e}  {:16.4}  {}  {}  {}  {}  {}  {:12.3}  {:11.3}",
            r.height_m,
            r.broke,
            r.break_time_s.map_or("-".into(), |t| format!("{t:.4}")),
            r.fragments,
            r.crack_area_m2,
            r.peak_contact_impulse_n_s,
            column(landing.map(|i| i.approach_speed_m_s), 11, 3),
            column(landing.map(|i| i.exchanged_impulse_n_s), 13, 4),
            column(landing.map(|i| i.contact.peak_force_n), 14, 1),
            column(landing.map(|i| i.contact.duration_s * 1e6), 10, 1),
            column(landing.map(|i| i.contact.restitution), 11, 3),
            step_ms_mean,
            step_ms_max,
        );
    }
    for r in &runs {
        if let Some(pattern) = &r.run.pattern {
            println!(
                "{:.3} m, first split: {}",
                r.run.height_m,
                super::pattern_cmd::summary(pattern)
            );
        }
    }
    Ok(())
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Scene file or shipped scene name.
    #[arg(long)]
    pub scene: String,
    /// Simulated time (s).
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
    /// Count of the scene's arrayed body (e.g. the cubes of `cube-basin`).
    #[arg(long)]
    pub count: Option<usize>,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Step the world and its fracture checks' worker threads under
    /// SCHED_FIFO (needs root or CAP_SYS_NICE; what was obtained is
    /// reported).
    #[arg(long)]
    pub realtime: bool,
}

/// Step-time statistics (ms).
#[derive(Debug, Serialize)]
pub struct StepStats {
    pub steps: usize,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl StepStats {
    pub fn from_ms(mut samples: Vec<f64>) -> Self {
        samples.sort_by(f64::total_cmp);
        let n = samples.len();
        let at = |q: f64| {
            if n == 0 {
                0.0
            } else {
                samples[((q * (n - 1) as f64).round() as usize).min(n - 1)]
            }
        };
        Self {
            steps: n,
            mean: samples.iter().sum::<f64>() / n.max(1) as f64,
            p50: at(0.5),
            p99: at(0.99),
            max: at(1.0),
        }
    }
}

#[derive(Serialize)]
struct RunReport<'a> {
    scene: String,
    seconds: f64,
    bodies_start: usize,
    bodies_end: usize,
    step_ms: StepStats,
    /// The slowest step (1-based) and where its time went.
    worst_step: WorstStep,
    /// Wall time of the whole run (s).
    wall_s: f64,
    fracture_events: &'a [FractureEvent],
    /// Wall time of each fracture event, in the same order.
    event_times: &'a [EventTimes],
    state_hash: String,
    /// With `--realtime`: what the threads obtained.
    #[serde(skip_serializing_if = "Option::is_none")]
    realtime: Option<SimulationRealtime>,
}

/// One step's wall time and its phases (ms).
#[derive(Serialize, Default)]
struct WorstStep {
    step: usize,
    physics_ms: f64,
    fracture_ms: f64,
    cracked: usize,
}

pub fn run(args: &RunArgs, cli: &Cli) -> anyhow::Result<()> {
    if !(args.seconds.is_finite() && args.seconds > 0.0) {
        bail!("--seconds must be positive, got {}", args.seconds);
    }
    let (threads, realtime) = tessera::haptics::simulation_threads(args.realtime)?;
    let (scene, assets) = load_scene(&args.scene, args.count, cli, &threads)?;
    let mut world = super::build_world(&scene, &assets, args.seed, &threads)?;
    let bodies_start = world.body_count();
    let steps = tessera::limits::simulated_steps(args.seconds, scene.world.time_step_s)
        .with_context(|| format!("--seconds {}", tessera::limits::readable(args.seconds)))?;
    tessera::limits::check_memory(
        || format!("step-time samples of {steps} steps"),
        steps as f64 * 8.0,
    )?;
    let steps = steps as usize;
    let bar = indicatif::ProgressBar::new(steps as u64);
    let mut samples = Vec::with_capacity(steps);
    let mut worst_step = WorstStep::default();
    let mut counters = Counters::default();
    let start = Instant::now();
    for step in 1..=steps {
        let physics_before_s = counters.physics_s;
        let cracked = world.step(&StepInputs::default(), &threads, &mut counters);
        let ms = counters.last_step_s * 1e3;
        if ms > worst_step.physics_ms + worst_step.fracture_ms {
            let physics_ms = (counters.physics_s - physics_before_s) * 1e3;
            worst_step = WorstStep {
                step,
                physics_ms,
                fracture_ms: ms - physics_ms,
                cracked,
            };
        }
        samples.push(ms);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let report = RunReport {
        scene: scene.path.display().to_string(),
        seconds: world.time_s(),
        bodies_start,
        bodies_end: world.body_count(),
        step_ms: StepStats::from_ms(samples),
        worst_step,
        wall_s: start.elapsed().as_secs_f64(),
        fracture_events: world.events(),
        event_times: &counters.events,
        state_hash: format!("{:016x}", world.state_hash()),
        realtime,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "scene {}: {:.3} s simulated in {:.2} s, bodies {} → {}",
        report.scene, report.seconds, report.wall_s, report.bodies_start, report.bodies_end
    );
    if let Some(r) = &report.realtime {
        println!(
            "scheduling: stepping thread {}, workers {}{}",
            r.policy,
            r.worker_policies.join(", "),
            super::errors_suffix(&r.errors)
        );
    }
    let s = &report.step_ms;
    println!(
        "step time (ms): mean {:.3}, p50 {:.3}, p99 {:.3}, max {:.3} over {} steps",
        s.mean, s.p50, s.p99, s.max, s.steps
    );
    let w = &report.worst_step;
    println!(
        "slowest step {}: physics {:.3} ms, fracture and insertion {:.3} ms, {} body(ies) cracked",
        w.step, w.physics_ms, w.fracture_ms, w.cracked
    );
    println!("fracture events: {}", report.fracture_events.len());
    for (e, times) in report.fracture_events.iter().zip(report.event_times) {
        println!(
            "  t = {:.4} s  {} ({:?}): {} crack(s), {:.3e} m², {} fragment(s), {} debris, {:.2} ms",
            e.time_s,
            e.name,
            e.kind,
            e.cracks,
            e.crack_area_m2,
            e.fragments.len(),
            e.debris,
            (times.check_s + times.insertion_s) * 1e3
        );
    }
    println!("state hash {}", report.state_hash);
    Ok(())
}
