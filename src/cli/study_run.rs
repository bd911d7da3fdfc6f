//! `tessera study run`: runs a perception study for one participant.
//!
//! Each condition is a session; each trial builds the study's scene with
//! the two plates set to the trial's levels, runs the haptic server until
//! the participant answers, and appends one row to `DIR/ID/trials.csv`
//! (flushed and synced at once, so `kill -9` loses at most the trial in
//! progress); `--resume` replays the rows written into the design and goes
//! on from the next trial of the same seeded order.
//!
//! This version runs the model participant (`--model scripted[:PARAMS]`)
//! with the simulated arm in lockstep.

use super::scene_cmd::{prepare_scene, scene_path};
use super::{material_library, Cli, Stop};
use anyhow::{bail, Context};
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tessera::assets;
use tessera::config::{Design, MaterialLibrary, Scene, Study};
use tessera::device::{sim_arm_spec, ArmModel, SafetySettings, SimulatedArm};
use tessera::fracture::BasisWorker;
use tessera::haptics::{serve, BodyWatch, ServeInputs, ServerOptions, HAPTIC_RATE_HZ};
use tessera::session::Recorder;
use tessera::study::{
    constant_stimuli, session_seed, test_side, Interleaved, ModelAnswer, ModelHand, ModelParams,
    Procedure, Quest, Side, Staircase, TrialRecord,
};
use tessera::world::{World, OWN_BASIS_MIN_TETS};

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// A study file, or the name of a shipped study (`plate-weakness`).
    study: String,
    /// The participant's ID (letters, digits, `-` and `_`); results go to
    /// DIR/ID/.
    #[arg(long)]
    participant: String,
    /// Where results go.
    #[arg(long, value_name = "DIR", default_value = "results")]
    out: PathBuf,
    /// The device: `sim`, the simulated arm.
    #[arg(long, default_value = "sim")]
    device: String,
    /// The model participant: `scripted` or `scripted:KEY=VALUE,...`
    /// (weber, lapse, start_speed, step, max_speed, lift, reaction).
    #[arg(long, value_name = "NAME[:PARAMS]")]
    model: Option<String>,
    /// Seed of the trial order, sides and weak points (default: the
    /// study file's).
    #[arg(long)]
    seed: Option<u64>,
    /// Continue an interrupted run from its next trial.
    #[arg(long)]
    resume: bool,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
}

/// A trial without an answer ends after this long (s) if the study sets no
/// limit: the model answers within a minute of session time.
const DEFAULT_TRIAL_LIMIT_S: f64 = 600.0;

/// What a run was started with (`DIR/ID/run.json`); `--resume` checks it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct RunRecord {
    study: String,
    study_file: String,
    /// xxh3 of the study file's text.
    study_hash: String,
    participant: String,
    seed: u64,
    model: Option<String>,
    device: String,
    tessera: String,
}

/// The JSON summary (`DIR/ID/summary.json`, and `--json`).
#[derive(Debug, Clone, Serialize)]
struct RunSummary {
    study: String,
    participant: String,
    seed: u64,
    finished: bool,
    sessions: Vec<SessionSummary>,
    /// Wall time of this invocation (s).
    wall_s: f64,
    /// Simulated time of this invocation's trials (s).
    simulated_s: f64,
}

#[derive(Debug, Clone, Serialize)]
struct SessionSummary {
    session: u32,
    condition: String,
    trials: u32,
    correct: u32,
    percent_correct: f64,
}

fn valid_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A study file or a shipped study's name: its path and text.
fn study_text(study: &str) -> anyhow::Result<(PathBuf, String)> {
    let given = Path::new(study);
    let path = if given.is_file() {
        given.to_path_buf()
    } else if let Some(path) = assets::shipped_path(assets::STUDIES_DIR, study) {
        path
    } else {
        bail!(
            "no study file `{study}` (shipped studies: {})",
            assets::shipped_names(assets::STUDIES_DIR).join(", ")
        )
    };
    let text = assets::read_text(&path).with_context(|| format!("study {}", path.display()))?;
    Ok((path, text))
}

/// The trial a design asks for next.
struct Planned {
    /// Left and right stimulus values.
    values: [f64; 2],
    /// 1-based level indices, for constant stimuli.
    levels: Option<[u32; 2]>,
    /// The weaker side.
    weaker: Side,
    procedure: String,
    /// The adaptive procedure's index and value.
    adaptive: Option<(usize, f64)>,
}

/// A session's design in progress.
enum Plan {
    Constant(Vec<tessera::study::PairTrial>),
    Adaptive {
        interleaved: Box<Interleaved>,
        seed: u64,
    },
}

impl Plan {
    fn new(study: &Study, seed: u64) -> Self {
        match &study.design {
            Design::ConstantStimuli { repetitions } => Plan::Constant(constant_stimuli(
                study.stimulus.levels.len(),
                *repetitions as usize,
                seed,
            )),
            Design::Staircase { staircase } => Plan::Adaptive {
                interleaved: Box::new(Interleaved::new(
                    staircase
                        .iter()
                        .map(|r| Procedure::Staircase(Staircase::new(r.clone())))
                        .collect(),
                    seed,
                )),
                seed,
            },
            Design::Quest { quest } => Plan::Adaptive {
                interleaved: Box::new(Interleaved::new(
                    quest
                        .iter()
                        .map(|r| Procedure::Quest(Quest::new(r.clone())))
                        .collect(),
                    seed,
                )),
                seed,
            },
        }
    }

    /// Trial `k` (from 0), or `None` when the session is complete.
    fn next(&mut self, study: &Study, k: usize) -> Option<Planned> {
        let levels = &study.stimulus.levels;
        match self {
            Plan::Constant(trials) => {
                let t = trials.get(k)?;
                Some(Planned {
                    values: [levels[t.left], levels[t.right]],
                    levels: Some([t.left as u32 + 1, t.right as u32 + 1]),
                    weaker: if t.left < t.right {
                        Side::Left
                    } else {
                        Side::Right
                    },
                    procedure: "constant-stimuli".into(),
                    adaptive: None,
                })
            }
            Plan::Adaptive { interleaved, seed } => {
                let (index, delta) = interleaved.draw()?;
                let reference = study.stimulus.reference.unwrap_or(1.0);
                let weaker = test_side(*seed, k);
                let test = reference - delta;
                let values = match weaker {
                    Side::Left => [test, reference],
                    Side::Right => [reference, test],
                };
                let kind = interleaved.procedures()[index].kind();
                Some(Planned {
                    values,
                    levels: None,
                    weaker,
                    procedure: format!("{kind}-{}", index + 1),
                    adaptive: Some((index, delta)),
                })
            }
        }
    }

    fn record(&mut self, planned: &Planned, correct: bool) {
        if let (Plan::Adaptive { interleaved, .. }, Some((index, value))) = (self, planned.adaptive)
        {
            interleaved.record(index, value, correct);
        }
    }

    fn total(&self) -> Option<usize> {
        match self {
            Plan::Constant(t) => Some(t.len()),
            Plan::Adaptive { .. } => None,
        }
    }
}

/// Appends rows to a CSV file, header first if the file is new; each row
/// is flushed and synced to disk before the next trial starts.
struct CsvAppender {
    file: std::fs::File,
    path: PathBuf,
}

impl CsvAppender {
    fn open(path: &Path) -> anyhow::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("{}", path.display()))?;
        Ok(Self {
            file,
            path: path.to_path_buf(),
        })
    }

    fn append<T: Serialize>(&mut self, row: &T) -> anyhow::Result<()> {
        let header = self.file.metadata()?.len() == 0;
        let mut writer = csv::WriterBuilder::new()
            .has_headers(header)
            .from_writer(Vec::new());
        writer.serialize(row)?;
        let bytes = writer.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
        self.file
            .write_all(&bytes)
            .and_then(|()| self.file.sync_data())
            .with_context(|| format!("writing {}", self.path.display()))
    }
}

/// Reads a CSV file's rows, or none if it does not exist; a damaged last
/// line (a write cut by a crash) is dropped with a warning, any other bad
/// row is an error naming its line.
fn read_rows<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<Vec<T>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    let complete = text.ends_with('\n');
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let mut rows = Vec::new();
    let records: Vec<_> = reader.deserialize::<T>().collect();
    let count = records.len();
    for (i, row) in records.into_iter().enumerate() {
        match row {
            Ok(r) => rows.push(r),
            Err(e) if i + 1 == count && !complete => {
                eprintln!(
                    "warning: {}: the last row was cut off mid-write and is dropped ({e})",
                    path.display()
                );
            }
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line());
                bail!("{}:{line}: {e}", path.display());
            }
        }
    }
    if !complete && !text.is_empty() {
        // Cut the partial line so the next append starts on a fresh one.
        let keep = text.rfind('\n').map_or(0, |i| i + 1);
        let file = std::fs::OpenOptions::new().write(true).open(path)?;
        file.set_len(keep as u64)?;
    }
    Ok(rows)
}

/// Writes `value` as JSON to `path` through a temporary file and a rename.
fn write_json_atomically<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(value)?)
        .with_context(|| format!("{}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("{}", path.display()))?;
    Ok(())
}

pub fn run(args: &RunArgs, cli: &Cli, stop: &Stop) -> anyhow::Result<()> {
    let started = Instant::now();
    if !valid_id(&args.participant) {
        bail!(
            "--participant `{}`: use 1–64 letters, digits, `-` or `_` (it names a directory)",
            args.participant
        );
    }
    if args.device != "sim" {
        bail!(
            "--device {}: this version runs studies with the simulated arm and the model participant only",
            args.device
        );
    }
    let Some(model_text) = &args.model else {
        bail!("give --model scripted[:PARAMS]: this version runs the model participant only");
    };
    let model =
        ModelParams::parse(model_text).map_err(|e| anyhow::anyhow!("--model {model_text}: {e}"))?;
    let (study_path, study_text) = study_text(&args.study)?;
    let study = Study::parse(&study_text, &study_path)?;
    let library = material_library(cli)?;
    let scene_file = study.scene_path(&study_path);
    let scene = Scene::load(&scene_path(&scene_file.to_string_lossy())?)?;
    let Some(haptic) = scene.haptic.clone() else {
        bail!(
            "{}: the study's scene has no [haptic] table",
            scene.path.display()
        );
    };
    let mut bases = Vec::new();
    for (side, name) in study.stimulus.alternatives.iter().enumerate() {
        let Some(body) = scene.body(name) else {
            bail!(
                "{}: stimulus.alternatives[{side}] names `{name}`, which the scene {} does not have",
                study_path.display(),
                scene.path.display()
            );
        };
        bases.push(library.get(&body.material)?.clone());
    }
    // Every level must make a valid material before the first trial runs.
    let check_levels: Vec<f64> = match &study.design {
        Design::ConstantStimuli { .. } => study.stimulus.levels.clone(),
        _ => vec![study.stimulus.reference.unwrap_or(1.0)],
    };
    for (i, level) in check_levels.iter().enumerate() {
        for base in &bases {
            study.material_at(base, *level, &format!("w{}", i + 1), &study_path)?;
        }
    }

    let dir = args.out.join(&args.participant);
    let trials_path = dir.join("trials.csv");
    let run_path = dir.join("run.json");
    let record = RunRecord {
        study: study.name.clone(),
        study_file: study_path.display().to_string(),
        study_hash: format!("{:016x}", xxhash_rust::xxh3::xxh3_64(study_text.as_bytes())),
        participant: args.participant.clone(),
        seed: args.seed.unwrap_or(study.seed),
        model: args.model.clone(),
        device: args.device.clone(),
        tessera: env!("CARGO_PKG_VERSION").into(),
    };
    if args.resume {
        let text = std::fs::read_to_string(&run_path).with_context(|| {
            format!("--resume: {} (nothing to resume there)", run_path.display())
        })?;
        let before: RunRecord =
            serde_json::from_str(&text).with_context(|| format!("{}", run_path.display()))?;
        if args.seed.is_some_and(|s| s != before.seed) {
            bail!(
                "--resume: the run used seed {}; --seed {} differs",
                before.seed,
                args.seed.unwrap_or(0)
            );
        }
        if before.study_hash != record.study_hash {
            bail!(
                "--resume: the study file {} changed since the run started; a resumed run must follow the same design",
                study_path.display()
            );
        }
    } else if trials_path.exists() {
        bail!(
            "{} exists: --resume continues that run; choose another --participant or --out for a new one",
            trials_path.display()
        );
    }
    let seed = if args.resume {
        let before: RunRecord = serde_json::from_str(&std::fs::read_to_string(&run_path)?)?;
        before.seed
    } else {
        record.seed
    };
    std::fs::create_dir_all(dir.join("logs")).with_context(|| format!("{}", dir.display()))?;
    if !args.resume {
        write_json_atomically(
            &run_path,
            &RunRecord {
                seed,
                ..record.clone()
            },
        )?;
    }
    let done: Vec<TrialRecord> = read_rows(&trials_path)?;
    let mut csv = CsvAppender::open(&trials_path)?;
    let (threads, _) = tessera::haptics::simulation_threads(false)?;
    let mut summary = RunSummary {
        study: study.name.clone(),
        participant: args.participant.clone(),
        seed,
        finished: false,
        sessions: Vec::new(),
        wall_s: 0.0,
        simulated_s: 0.0,
    };
    for (s, condition) in study.conditions.iter().enumerate() {
        let session = s as u32 + 1;
        let mut plan = Plan::new(&study, session_seed(seed, s));
        let total = plan.total();
        let mut answered = 0u32;
        let mut correct = 0u32;
        let mut k = 0usize;
        while let Some(planned) = plan.next(&study, k) {
            // A trial already on disk: replayed into the design, not run.
            let trial_no = k as u32 + 1;
            let row = match done
                .iter()
                .find(|r| r.session == session && r.trial == trial_no)
            {
                Some(row) => row.clone(),
                None => {
                    if stop.requested() {
                        bail!("interrupted; `--resume` continues from session {session}, trial {trial_no}");
                    }
                    let trial_seed = session_seed(session_seed(seed, s), k + 1_000_000);
                    let ran = run_trial(
                        &TrialInputs {
                            study: &study,
                            scene: &scene,
                            library: &library,
                            haptic: &haptic,
                            condition,
                            planned: &planned,
                            model,
                            seed: trial_seed,
                            log: dir
                                .join("logs")
                                .join(format!("session{session}-trial{trial_no}.mcap")),
                        },
                        &threads,
                        stop,
                    )?;
                    summary.simulated_s += ran.simulated_s;
                    let row = trial_row(
                        &args.participant,
                        session,
                        condition,
                        trial_no,
                        &planned,
                        &ran,
                    );
                    csv.append(&row)?;
                    row
                }
            };
            answered += 1;
            correct += u32::from(row.correct);
            plan.record(&planned, row.correct == 1);
            if !args.json {
                let of = total.map_or(String::new(), |n| format!(" of {n}"));
                eprintln!(
                    "session {session} ({}), trial {trial_no}{of}: {} chose {}, {}; {:.0} % correct so far",
                    condition.name,
                    args.participant,
                    row.chosen_side,
                    if row.correct == 1 { "right" } else { "wrong" },
                    100.0 * f64::from(correct) / f64::from(answered)
                );
            }
            k += 1;
        }
        summary.sessions.push(SessionSummary {
            session,
            condition: condition.name.clone(),
            trials: answered,
            correct,
            percent_correct: 100.0 * f64::from(correct) / f64::from(answered.max(1)),
        });
        summary.wall_s = started.elapsed().as_secs_f64();
        write_json_atomically(&dir.join("summary.json"), &summary)?;
    }
    summary.finished = true;
    summary.wall_s = started.elapsed().as_secs_f64();
    write_json_atomically(&dir.join("summary.json"), &summary)?;
    if args.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        eprintln!(
            "{}: results in {} ({:.1} s of sessions simulated in {:.1} s)",
            args.participant,
            dir.display(),
            summary.simulated_s,
            summary.wall_s
        );
    }
    Ok(())
}

struct TrialInputs<'a> {
    study: &'a Study,
    scene: &'a Scene,
    library: &'a MaterialLibrary,
    haptic: &'a tessera::config::HapticSpec,
    condition: &'a tessera::config::Condition,
    planned: &'a Planned,
    model: ModelParams,
    seed: u64,
    log: PathBuf,
}

/// What one trial gave.
struct TrialRun {
    /// The chosen side and the answer's session time (s).
    answer: Option<(usize, f64)>,
    strikes: [u32; 2],
    breaks_s: [Option<f64>; 2],
    simulated_s: f64,
}

fn trial_row(
    participant: &str,
    session: u32,
    condition: &tessera::config::Condition,
    trial: u32,
    planned: &Planned,
    ran: &TrialRun,
) -> TrialRecord {
    let chosen = ran.answer.map(|(side, _)| side);
    let weaker = match planned.weaker {
        Side::Left => 0,
        Side::Right => 1,
    };
    let values = planned.values;
    TrialRecord {
        participant: participant.to_owned(),
        session,
        condition: condition.name.clone(),
        trial,
        left_level: planned.levels.map(|l| l[0]),
        right_level: planned.levels.map(|l| l[1]),
        chosen_side: match chosen {
            Some(0) => "left".into(),
            Some(_) => "right".into(),
            None => "none".into(),
        },
        chosen_level: chosen.and_then(|c| planned.levels.map(|l| l[c])),
        correct: u8::from(chosen == Some(weaker)),
        response_time_s: ran.answer.map_or(ran.simulated_s, |(_, t)| t),
        left_value: values[0],
        right_value: values[1],
        procedure: planned.procedure.clone(),
        difference: (values[0] - values[1]).abs(),
        strikes_left: ran.strikes[0],
        strikes_right: ran.strikes[1],
        break_left_s: ran.breaks_s[0],
        break_right_s: ran.breaks_s[1],
        log: format!("logs/session{session}-trial{trial}.mcap"),
    }
}

/// Runs one trial: the scene with the plates at their levels, the model
/// participant on the simulated arm, in lockstep until it answers.
fn run_trial(
    inputs: &TrialInputs,
    threads: &rayon::ThreadPool,
    stop: &Stop,
) -> anyhow::Result<TrialRun> {
    let study = inputs.study;
    let mut scene = inputs.scene.clone();
    let mut library = inputs.library.clone();
    for (side, name) in study.stimulus.alternatives.iter().enumerate() {
        let body = scene
            .bodies
            .iter_mut()
            .find(|b| &b.name == name)
            .expect("checked before the first trial");
        let base = inputs.library.get(&body.material)?;
        let level = inputs.planned.values[side];
        let material =
            study.material_at(base, level, &format!("{level}"), Path::new(&study.name))?;
        let name = format!("{}@{}", body.material, ["left", "right"][side]);
        library.insert(&name, material)?;
        body.material = name;
    }
    let (scene, assets) = prepare_scene(scene, None, &library, threads, &|p| std::fs::read(p))?;
    let mut world = World::from_scene(&scene, &assets, inputs.seed, threads)?;
    let modal_threads = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .thread_name(|i| format!("tessera-modal-{i}"))
        .build()?;
    world.enable_own_bases(BasisWorker::spawn(None, modal_threads)?, OWN_BASIS_MIN_TETS);
    let mut haptic = inputs.haptic.clone();
    let h = &inputs.condition.haptic;
    if h.s_fact.is_some() || h.f_fact.is_some() {
        haptic.device.clear();
    }
    haptic.s_fact = h.s_fact.unwrap_or(haptic.s_fact);
    haptic.f_fact = h.f_fact.unwrap_or(haptic.f_fact);
    if let Some(r) = h.sync_ratio {
        haptic.sync_ratio = r;
    }
    let targets = strike_targets(&world, &haptic, &study.stimulus.alternatives)?;
    tracing::debug!("strike targets (device frame, m): {targets:?}");
    let names: Vec<&str> = study
        .stimulus
        .alternatives
        .iter()
        .map(String::as_str)
        .collect();
    let watch = Arc::new(BodyWatch::new(&names));
    let answer = Arc::new(ModelAnswer::default());
    let trial_stop = Arc::new(AtomicBool::new(false));
    let tick_s = 1.0 / HAPTIC_RATE_HZ;
    let hand = ModelHand::new(
        inputs.model,
        inputs.condition.force_feedback,
        Vector3::zeros(),
        targets,
        Arc::clone(&watch),
        tick_s,
        inputs.seed,
        Arc::clone(&answer),
        Arc::clone(&trial_stop),
    );
    let spec = sim_arm_spec();
    let arm = SimulatedArm::new(spec.clone(), ArmModel::default(), hand);
    let recorder = Recorder::create(
        &inputs.log,
        serde_json::json!({
            "study": study.name,
            "condition": inputs.condition.name,
            "values": inputs.planned.values,
            "procedure": inputs.planned.procedure,
            "seed": inputs.seed,
            "scene": scene.path.display().to_string(),
        }),
    )?;
    let seconds = study.trial_time_limit_s.unwrap_or(DEFAULT_TRIAL_LIMIT_S);
    let session = ServeInputs {
        world,
        threads: rayon::ThreadPoolBuilder::new().num_threads(2).build()?,
        haptic,
        scene_name: scene.path.display().to_string(),
        device: Box::new(arm),
        device_name: "sim-arm".into(),
        hand: None,
        recorder: Some(recorder.handle()),
        options: ServerOptions {
            seconds,
            lockstep: true,
            realtime: false,
            safety: Some(SafetySettings {
                force_output: inputs.condition.force_feedback,
                ..SafetySettings::for_spec(&spec)
            }),
            ..ServerOptions::default()
        },
        stop: Some(Arc::clone(&trial_stop)),
        on_notice: None,
        view: None,
        controls: None,
        watch: Some(Arc::clone(&watch)),
    };
    // A signal ends the trial too (and then the run, before the next one).
    let summary = std::thread::scope(|scope| {
        let forward = scope.spawn(|| {
            while !trial_stop.load(Ordering::Acquire) {
                if stop.requested() {
                    trial_stop.store(true, Ordering::Release);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let summary = serve(session);
        trial_stop.store(true, Ordering::Release);
        let _ = forward.join();
        summary
    })?;
    recorder.finish()?;
    if stop.requested() {
        bail!("interrupted in a trial; `--resume` runs it again");
    }
    let broken = |i: usize| watch.broken_at_tick(i).map(|t| t as f64 * tick_s);
    Ok(TrialRun {
        answer: answer.get(),
        strikes: [watch.strikes(0), watch.strikes(1)],
        breaks_s: [broken(0), broken(1)],
        simulated_s: summary.seconds,
    })
}

/// Where the proxy touches the top of each alternative's centre, in the
/// device's frame: the body's top surface point above its centre, raised
/// by the proxy's half height.
fn strike_targets(
    world: &World,
    haptic: &tessera::config::HapticSpec,
    alternatives: &[String; 2],
) -> anyhow::Result<[Vector3<f64>; 2]> {
    let proxy = world
        .find(&haptic.proxy)
        .with_context(|| format!("no proxy body `{}`", haptic.proxy))?;
    let bounds = |id| {
        world
            .world_surfaces()
            .find(|(b, _, _)| *b == id)
            .map(|(_, points, _)| {
                points.iter().fold(
                    (
                        Vector3::repeat(f64::INFINITY),
                        Vector3::repeat(f64::NEG_INFINITY),
                    ),
                    |(lo, hi), p| (lo.inf(&p.coords), hi.sup(&p.coords)),
                )
            })
    };
    let (proxy_lo, proxy_hi) = bounds(proxy).context("the proxy has no surface")?;
    let proxy_centre = 0.5 * (proxy_lo + proxy_hi);
    let half_height = 0.5 * (proxy_hi.z - proxy_lo.z);
    let origin = haptic.origin_m.map(Vector3::from).unwrap_or(proxy_centre);
    let s = haptic.scaling_for("sim-arm").s_fact;
    let mut out = [Vector3::zeros(); 2];
    for (i, name) in alternatives.iter().enumerate() {
        let id = world
            .find(name)
            .with_context(|| format!("no body `{name}`"))?;
        let (lo, hi) = bounds(id).with_context(|| format!("`{name}` has no surface"))?;
        let centre = 0.5 * (lo + hi);
        let touch = Vector3::new(centre.x, centre.y, hi.z + half_height);
        out[i] = (touch - origin) / s;
    }
    Ok(out)
}
