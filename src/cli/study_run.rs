//! `tessera study run`: runs a perception study for one participant.
//!
//! Each condition is a session; each trial builds the study's scene with
//! the two plates set to the trial's levels, runs the haptic server until
//! the participant answers, and appends one row to `DIR/ID/trials.csv`
//! (flushed and synced at once, so `kill -9` loses at most the trial in
//! progress); `--resume` replays the rows written into the design and goes
//! on from the next trial of the same seeded order.
//!
//! The participant is the model (`--model scripted[:PARAMS]`, the
//! simulated arm in lockstep, as fast as it runs) or a person (real time,
//! with a HID device or the simulated arm and a hand script): a person
//! answers with keys in the terminal or the viewer's participant view, or
//! with device buttons, may abort a trial (it runs again), takes the
//! study's breaks and answers the questionnaire after each session.

use super::haptic_cmd::{
    open_hid, print_notice, profile_path, BodyMaterial, SessionConfig, Source, TrialSettings,
    STILL_HAND,
};
use super::scene_cmd::{prepare_scene, scene_text};
use super::study_person::Person;
use super::{material_source, Cli, Stop};
use anyhow::{bail, Context};
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tessera::assets;
use tessera::config::{Design, MaterialLibrary, Scene, Study};
use tessera::device::{
    sim_arm_spec, ArmModel, Device, HandScript, HandTrajectory, SafetySettings, SimulatedArm,
};
use tessera::haptics::{
    serve, BodyWatch, DeviceKeeper, ServeInputs, ServerOptions, SessionControls, ViewFeed,
    HAPTIC_RATE_HZ,
};
use tessera::session::Event;
use tessera::session::Recorder;
use tessera::study::{
    constant_stimuli, session_seed, test_side, AnswerButtons, AnswerSlot, Interleaved, KeyMap,
    ModelHand, ModelParams, ModelTrial, Procedure, Quest, QuestionnaireRecord, Response, Side,
    Staircase, TrialRecord,
};
use tessera::ui::{Viewer, ViewerOptions};
use tessera::world::{SceneAssets, World};

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
    /// The device: `sim`, the simulated arm, or `hid:PROFILE` (a device
    /// profile file or the name of a shipped one).
    #[arg(long, default_value = "sim")]
    device: String,
    /// With a HID device: wait until it can be opened instead of failing.
    #[arg(long)]
    wait_for_device: bool,
    /// The model participant: `scripted` or `scripted:KEY=VALUE,...`
    /// (weber, lapse, start_speed, step, max_speed, lift, reaction).
    /// Without it a person answers (keys in the terminal or the viewer,
    /// device buttons), in real time.
    #[arg(long, value_name = "NAME[:PARAMS]")]
    model: Option<String>,
    /// A person's run with `--device sim`: the simulated arm's hand script
    /// (a pilot at the desk; default: a hand that holds still).
    #[arg(long, value_name = "FILE", conflicts_with = "model")]
    hand: Option<PathBuf>,
    /// Serve the viewer at ADDR:PORT (default for a person; the
    /// participant opens its URL with `?view=participant`). Bare: the
    /// default address, 127.0.0.1:7878 or a free port.
    #[arg(long, value_name = "ADDR:PORT", num_args = 0..=1, conflicts_with = "no_ui")]
    ui: Option<Option<SocketAddr>>,
    /// Do not start the viewer.
    #[arg(long)]
    no_ui: bool,
    /// Allow --ui on an address other machines can reach; clients then
    /// need the access token printed with the URL.
    #[arg(long)]
    ui_public: bool,
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
    /// The haptic loop in this invocation's real-time trials of the
    /// session (a person's run); `None` in lockstep or if none ran.
    haptic: Option<SessionHaptics>,
}

/// The haptic loop over a session's real-time trials.
#[derive(Debug, Clone, Default, Serialize)]
struct SessionHaptics {
    /// Trials (aborted ones included) and their haptic ticks.
    trials: u32,
    ticks: u64,
    /// The largest of the trials' 99th percentiles of period error (µs).
    worst_p99_period_error_us: f64,
    /// The largest period error of any tick (µs).
    max_period_error_us: f64,
    /// Ticks that started over 1 ms late.
    late_over_1ms: u64,
    /// Wall time from a trial's start until its haptic session starts
    /// (s): the world is built with the trial's plates. No force is
    /// rendered meanwhile: a HID device's keeper sends it the zero command
    /// at the haptic rate, a simulated arm is built again.
    setup_s_mean: f64,
    setup_s_max: f64,
    /// The longest time the HID device went without a command over the
    /// session's trials and the resets before them (ms); `None` for the
    /// simulated arm.
    longest_device_gap_ms: Option<f64>,
    /// The same across the hand-overs between the keeper and the trials'
    /// sessions alone (ms).
    longest_handover_gap_ms: Option<f64>,
    /// The HID device keeper's own ticks during the resets, in the haptic
    /// loop's terms: how many, the largest of the resets' 99th
    /// percentiles of period error (µs), and how many started over 1 ms
    /// late; `None` for the simulated arm.
    keeper: Option<ResetTicks>,
}

/// The keeper's ticks over a session's resets.
#[derive(Debug, Clone, Copy, Default, Serialize)]
struct ResetTicks {
    ticks: u64,
    worst_p99_period_error_us: f64,
    max_period_error_us: f64,
    late_over_1ms: u64,
}

impl SessionHaptics {
    fn add(&mut self, ran: &TrialRun) {
        let h = &ran.haptic;
        self.setup_s_mean =
            (self.setup_s_mean * f64::from(self.trials) + ran.setup_s) / f64::from(self.trials + 1);
        self.trials += 1;
        self.ticks += h.ticks;
        self.worst_p99_period_error_us = self.worst_p99_period_error_us.max(h.period_error_us.p99);
        self.max_period_error_us = self.max_period_error_us.max(h.period_error_us.max);
        self.late_over_1ms += h.late_over_1ms;
        self.setup_s_max = self.setup_s_max.max(ran.setup_s);
        if let Some(gaps) = ran.device_gaps {
            let longest = |kept: Option<f64>, gap_s: f64| {
                Some(kept.map_or(gap_s * 1e3, |g| g.max(gap_s * 1e3)))
            };
            self.longest_device_gap_ms = longest(self.longest_device_gap_ms, gaps.longest_s);
            self.longest_handover_gap_ms = longest(self.longest_handover_gap_ms, gaps.handover_s);
        }
        if let Some(ticks) = ran.keeper_ticks {
            let kept = self.keeper.get_or_insert_with(ResetTicks::default);
            kept.ticks += ticks.ticks;
            kept.worst_p99_period_error_us = kept
                .worst_p99_period_error_us
                .max(ticks.period_error_us.p99);
            kept.max_period_error_us = kept.max_period_error_us.max(ticks.period_error_us.max);
            kept.late_over_1ms += ticks.late_over_1ms;
        }
    }
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
    let model = match &args.model {
        Some(text) => {
            Some(ModelParams::parse(text).map_err(|e| anyhow::anyhow!("--model {text}: {e}"))?)
        }
        None => None,
    };
    if model.is_some() && args.device != "sim" {
        bail!(
            "--device {}: the model participant drives the simulated arm (`--device sim`)",
            args.device
        );
    }
    // Who answers: the model, or a person with this device.
    let who = match model {
        Some(params) => Who::Model(params),
        None => Who::Person(person_device(args, stop)?),
    };
    let (study_path, study_text) = study_text(&args.study)?;
    let study = Study::parse(&study_text, &study_path)?;
    // Parsed from the texts each trial's log keeps, so that a replay
    // builds the same scene.
    let (materials_path, materials_text) = material_source(cli)?;
    let library = MaterialLibrary::parse(&materials_text, &materials_path)?;
    let (scene_file, scene_text) = scene_text(&study.scene_path(&study_path).to_string_lossy())?;
    let scene = Scene::parse(&scene_text, &scene_file)?;
    let study_config = SessionConfig::for_study(
        &scene,
        Source {
            path: scene_file.display().to_string(),
            text: scene_text,
        },
        Source {
            path: materials_path.display().to_string(),
            text: materials_text,
        },
    )?;
    let assets = Mutex::new(None);
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
    let questionnaire_path = dir.join("questionnaire.csv");
    let answered_questionnaires: Vec<QuestionnaireRecord> = read_rows(&questionnaire_path)?;
    let (threads, _) = tessera::haptics::simulation_threads(false)?;
    let controls = Arc::new(SessionControls::new(None)?);
    let display = if !args.no_ui && (args.ui.is_some() || matches!(who, Who::Person(_))) {
        let feed = ViewFeed::new();
        let options = ViewerOptions {
            addr: args.ui.flatten(),
            public: args.ui_public,
        };
        let viewer = Viewer::start(&options, Arc::clone(&feed), Some(Arc::clone(&controls)))?;
        let url = viewer.url();
        let join = if url.contains('?') { '&' } else { '?' };
        eprintln!("viewer: {url}\nthe participant's view: {url}{join}view=participant");
        Some(Display {
            _viewer: viewer,
            feed,
        })
    } else {
        None
    };
    let participant = match who {
        Who::Model(params) => Participant::Model(params),
        Who::Person(device) => Participant::Person {
            person: Person::new(
                KeyMap::new(&study.answers),
                Arc::clone(&controls),
                display.is_some(),
            ),
            device,
            buttons: [study.answers.left_button, study.answers.right_button],
        },
    };
    let person = match &participant {
        Participant::Person { person, .. } => Some(person),
        Participant::Model(_) => None,
    };
    let mut summary = RunSummary {
        study: study.name.clone(),
        participant: args.participant.clone(),
        seed,
        finished: false,
        sessions: Vec::new(),
        wall_s: 0.0,
        simulated_s: 0.0,
    };
    let sessions = study.conditions.len();
    for (s, condition) in study.conditions.iter().enumerate() {
        let session = s as u32 + 1;
        let mut plan = Plan::new(&study, session_seed(seed, s));
        let total = plan.total();
        let of = total.map_or(String::new(), |n| format!(" of {n}"));
        let mut answered = 0u32;
        let mut session_rows: Vec<TrialRecord> = Vec::new();
        let mut correct = 0u32;
        let mut introduced = false;
        let mut haptics = SessionHaptics::default();
        let mut k = 0usize;
        while let Some(planned) = plan.next(&study, k) {
            // A trial already on disk: replayed into the design, not run.
            let trial_no = k as u32 + 1;
            let on_disk = done
                .iter()
                .find(|r| r.session == session && r.trial == trial_no);
            let row = match on_disk {
                Some(row) => row.clone(),
                None => {
                    if let (Some(person), false) = (person, introduced) {
                        person.wait_to_go_on(
                            &format!(
                                "{}\n\nSession {session} of {sessions} ({}). Press Enter, or any key in the viewer, to begin.",
                                study.instructions.trim(),
                                condition.name
                            ),
                            stop,
                        )?;
                        introduced = true;
                    }
                    let mut aborted = 0u32;
                    let ran = loop {
                        if stop.requested() {
                            bail!("interrupted; `--resume` continues from session {session}, trial {trial_no}");
                        }
                        if let Some(person) = person {
                            person.discard_pending();
                            person.prompt(&format!(
                                "Trial {trial_no}{of}: which plate is weaker? {}.",
                                person.keys().describe()
                            ));
                        }
                        let log = dir
                            .join("logs")
                            .join(format!("session{session}-trial{trial_no}.mcap"));
                        let ran = run_trial(
                            &TrialInputs {
                                study: &study,
                                scene: &scene,
                                library: &library,
                                study_config: &study_config,
                                assets: &assets,
                                haptic: &haptic,
                                condition,
                                planned: &planned,
                                participant: &participant,
                                seed: session_seed(session_seed(seed, s), k + 1_000_000),
                                log: log.clone(),
                                display: display.as_ref(),
                                controls: &controls,
                            },
                            &threads,
                            stop,
                        )?;
                        summary.simulated_s += ran.simulated_s;
                        if person.is_some() {
                            haptics.add(&ran);
                        }
                        if !matches!(ran.answer, Some((Response::Abort, _))) {
                            break ran;
                        }
                        aborted += 1;
                        let kept = log.with_file_name(format!(
                            "session{session}-trial{trial_no}-aborted{aborted}.mcap"
                        ));
                        std::fs::rename(&log, &kept)
                            .with_context(|| format!("keeping {}", kept.display()))?;
                        eprintln!(
                            "trial {trial_no} aborted; it runs again (the aborted one's log: {})",
                            kept.display()
                        );
                    };
                    let row = trial_row(
                        &args.participant,
                        session,
                        condition,
                        trial_no,
                        &planned,
                        &ran,
                        aborted,
                    );
                    csv.append(&row)?;
                    row
                }
            };
            answered += 1;
            correct += u32::from(row.correct);
            session_rows.push(row.clone());
            plan.record(&planned, row.correct == 1);
            if !args.json {
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
            let more = total.is_none_or(|n| k < n);
            let every = study.break_every as usize;
            if let (Some(person), None) = (person, on_disk) {
                if every > 0 && k % every == 0 && more {
                    person.wait_to_go_on(
                        "Break. Press Enter, or any key in the viewer, when you are ready to go on.",
                        stop,
                    )?;
                }
            }
        }
        let asked = answered_questionnaires.iter().any(|q| q.session == session);
        if study.questionnaire && !asked {
            let answers = match (&participant, person) {
                (Participant::Model(params), _) => {
                    // From the rows on disk, so that a resumed run answers
                    // as an unbroken one.
                    let efforts: Vec<[Option<f64>; 2]> = session_rows
                        .iter()
                        .map(|r| [r.model_effort_left, r.model_effort_right])
                        .collect();
                    let (perceived, confidence) = params.questionnaire(&efforts);
                    Some(QuestionnaireRecord {
                        participant: args.participant.clone(),
                        session,
                        condition: condition.name.clone(),
                        perceived_weaknesses: Some(perceived),
                        confidence: Some(confidence),
                        strategy: MODEL_STRATEGY.into(),
                        remarks: format!(
                            "model participant ({})",
                            args.model.as_deref().unwrap_or("scripted")
                        ),
                    })
                }
                (_, Some(person)) => {
                    person.questionnaire(&args.participant, session, &condition.name, stop)?
                }
                _ => None,
            };
            if let Some(answers) = answers {
                CsvAppender::open(&questionnaire_path)?.append(&answers)?;
            }
        }
        if haptics.trials > 0 && !args.json {
            eprintln!(
                "session {session}: haptic loop over {} trials: p99 period error {:.0} µs (worst trial), max {:.0} µs, {} ticks over 1 ms late; trial set-up {:.2} s mean, {:.2} s max",
                haptics.trials,
                haptics.worst_p99_period_error_us,
                haptics.max_period_error_us,
                haptics.late_over_1ms,
                haptics.setup_s_mean,
                haptics.setup_s_max
            );
            if let (Some(gap_ms), Some(handover_ms)) = (
                haptics.longest_device_gap_ms,
                haptics.longest_handover_gap_ms,
            ) {
                eprintln!(
                    "session {session}: the device went at most {gap_ms:.1} ms without a command (trials and resets), {handover_ms:.1} ms across hand-overs"
                );
            }
            if let Some(kept) = haptics.keeper {
                eprintln!(
                    "session {session}: the keeper's {} ticks during the resets: p99 period error {:.0} µs (worst reset), max {:.0} µs, {} over 1 ms late",
                    kept.ticks,
                    kept.worst_p99_period_error_us,
                    kept.max_period_error_us,
                    kept.late_over_1ms
                );
            }
        }
        summary.sessions.push(SessionSummary {
            session,
            condition: condition.name.clone(),
            trials: answered,
            correct,
            percent_correct: 100.0 * f64::from(correct) / f64::from(answered.max(1)),
            haptic: (haptics.trials > 0).then_some(haptics),
        });
        summary.wall_s = started.elapsed().as_secs_f64();
        write_json_atomically(&dir.join("summary.json"), &summary)?;
    }
    if let Some(person) = person {
        person.prompt("The study is over. Thank you!");
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

/// The model participant's strategy, in the questionnaire's words
/// (Glondu 2012 §5.2.4).
const MODEL_STRATEGY: &str = "I struck each plate at its centre, harder and harder until it broke, and chose the one that broke with less effort.";

/// Who answers, before the run's viewer and terminal are set up.
enum Who {
    Model(ModelParams),
    Person(PersonDevice),
}

/// Who answers the trials.
enum Participant {
    /// The model participant on the simulated arm, in lockstep.
    Model(ModelParams),
    /// A person, in real time.
    Person {
        person: Person,
        device: PersonDevice,
        /// Device buttons meaning left and right.
        buttons: [Option<u8>; 2],
    },
}

/// A person's device.
enum PersonDevice {
    /// The simulated arm following a hand script (a pilot at the desk),
    /// built again for each trial: each trial's log replays its script
    /// from the start.
    Sim(HandTrajectory),
    /// A HID device, opened once for the run and commanded between trials
    /// by its keeper.
    Hid {
        keeper: Box<DeviceKeeper>,
        name: String,
        deadman_button: Option<u8>,
    },
}

/// The device a person's run uses, opened before the first trial, so that
/// a missing one stops the run before the participant starts.
fn person_device(args: &RunArgs, stop: &Stop) -> anyhow::Result<PersonDevice> {
    if args.device == "sim" {
        let (text, name) = match &args.hand {
            Some(path) => (
                assets::read_text(path)
                    .with_context(|| format!("hand script {}", path.display()))?,
                path.display().to_string(),
            ),
            None => (STILL_HAND.to_owned(), "still hand".to_owned()),
        };
        return Ok(PersonDevice::Sim(
            HandScript::parse(&text, &name)?.trajectory(),
        ));
    }
    let Some(profile) = args.device.strip_prefix("hid:") else {
        bail!(
            "--device `{}`: expected `sim` or `hid:PROFILE`",
            args.device
        );
    };
    if args.hand.is_some() {
        bail!(
            "--hand scripts the simulated arm; with --device {} the person moves the device",
            args.device
        );
    }
    let path = profile_path(profile)?;
    let text =
        assets::read_text(&path).with_context(|| format!("device profile {}", path.display()))?;
    let opened = open_hid(&path, &text, args.wait_for_device, stop)?;
    let keeper = DeviceKeeper::keep(opened.device, true)?;
    let realtime = keeper.realtime();
    let why = if realtime.errors.is_empty() {
        String::new()
    } else {
        format!(" ({})", realtime.errors.join("; "))
    };
    eprintln!(
        "device keeper: {}/{}{why}",
        realtime.policy, realtime.priority
    );
    Ok(PersonDevice::Hid {
        keeper: Box::new(keeper),
        name: opened.name,
        deadman_button: opened.deadman_button,
    })
}

/// The viewer of a run and the feed it shows.
struct Display {
    /// Kept running for the whole run.
    _viewer: Viewer,
    feed: Arc<ViewFeed>,
}

struct TrialInputs<'a> {
    study: &'a Study,
    scene: &'a Scene,
    library: &'a MaterialLibrary,
    /// The study's session configuration (the texts `scene` and
    /// `library` were parsed from), which each trial's log completes.
    study_config: &'a SessionConfig,
    /// The last trial's scene assets, whose modal bases the next trial
    /// reuses (its levels change the plates' strength, not their modes).
    assets: &'a Mutex<Option<SceneAssets>>,
    haptic: &'a tessera::config::HapticSpec,
    condition: &'a tessera::config::Condition,
    planned: &'a Planned,
    participant: &'a Participant,
    seed: u64,
    log: PathBuf,
    display: Option<&'a Display>,
    controls: &'a Arc<SessionControls>,
}

/// What one trial gave.
struct TrialRun {
    /// The answer and its session time (s).
    answer: Option<(Response, f64)>,
    strikes: [u32; 2],
    breaks_s: [Option<f64>; 2],
    simulated_s: f64,
    /// The model participant's remembered efforts (left, right).
    model_efforts: [Option<f64>; 2],
    /// Wall time from the trial's start to its session's start (s).
    setup_s: f64,
    /// The longest times a kept device went without a command since the
    /// last trial ended.
    device_gaps: Option<tessera::haptics::CommandGaps>,
    /// The keeper's ticks since the last trial ended.
    keeper_ticks: Option<tessera::haptics::KeeperTicks>,
    haptic: tessera::haptics::LoopStats,
}

fn trial_row(
    participant: &str,
    session: u32,
    condition: &tessera::config::Condition,
    trial: u32,
    planned: &Planned,
    ran: &TrialRun,
    aborted: u32,
) -> TrialRecord {
    let chosen = match ran.answer {
        Some((Response::Chose(side), _)) => Some(side),
        _ => None,
    };
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
        model_effort_left: ran.model_efforts[0],
        model_effort_right: ran.model_efforts[1],
        aborted,
        log: format!("logs/session{session}-trial{trial}.mcap"),
    }
}

/// Runs one trial: the scene with the plates at their levels, until the
/// participant answers (or aborts), the time limit or a stop. The model
/// runs in lockstep on the simulated arm; a person in real time.
fn run_trial(
    inputs: &TrialInputs,
    threads: &rayon::ThreadPool,
    stop: &Stop,
) -> anyhow::Result<TrialRun> {
    let started = Instant::now();
    let study = inputs.study;
    let mut scene = inputs.scene.clone();
    let mut library = inputs.library.clone();
    let mut materials = Vec::new();
    for (side, name) in study.stimulus.alternatives.iter().enumerate() {
        let body = inputs
            .scene
            .body(name)
            .expect("checked before the first trial");
        let base = inputs.library.get(&body.material)?;
        let level = inputs.planned.values[side];
        materials.push(BodyMaterial {
            body: name.clone(),
            name: format!("{}@{}", body.material, ["left", "right"][side]),
            material: study.material_at(
                base,
                level,
                &format!("{level}"),
                Path::new(&study.name),
            )?,
        });
    }
    let trial = TrialSettings {
        study: study.name.clone(),
        condition: inputs.condition.name.clone(),
        values: inputs.planned.values,
        procedure: inputs.planned.procedure.clone(),
        materials,
        haptic: inputs.condition.haptic.clone(),
        force_feedback: inputs.condition.force_feedback,
    };
    trial.set_materials(&mut scene, &mut library)?;
    let mut haptic = inputs.haptic.clone();
    trial.set_haptic(&mut haptic);
    let (scene, assets) = prepare_scene(
        scene,
        None,
        &library,
        threads,
        &|p| std::fs::read(p),
        inputs.assets.lock().ok().as_ref().and_then(|a| a.as_ref()),
    )?;
    if let Ok(mut kept) = inputs.assets.lock() {
        *kept = Some(assets.clone());
    }
    let mut world = World::from_scene(&scene, &assets, inputs.seed, threads)?;
    let names: Vec<&str> = study
        .stimulus
        .alternatives
        .iter()
        .map(String::as_str)
        .collect();
    let watch = Arc::new(BodyWatch::new(&names));
    let answer = Arc::new(AnswerSlot::default());
    let trial_stop = Arc::new(AtomicBool::new(false));
    let tick_s = 1.0 / HAPTIC_RATE_HZ;
    // The simulated hand's path, for the log: the model's is known only
    // when the session has ended and the arm dropped it.
    let mut hand_path: Option<HandTrajectory> = None;
    let mut model_trial: Option<Arc<Mutex<Option<ModelTrial>>>> = None;
    let (device, device_name, deadman_button, lockstep): (Box<dyn Device>, String, _, _) =
        match inputs.participant {
            Participant::Model(params) => {
                let targets = strike_targets(&world, &haptic, &study.stimulus.alternatives)?;
                tracing::debug!("strike targets (device frame, m): {targets:?}");
                let hand = ModelHand::new(
                    *params,
                    inputs.condition.force_feedback,
                    Vector3::zeros(),
                    targets,
                    Arc::clone(&watch),
                    tick_s,
                    inputs.seed,
                    Arc::clone(&answer),
                    Arc::clone(&trial_stop),
                );
                model_trial = Some(hand.trial_slot());
                let arm = SimulatedArm::new(sim_arm_spec(), ArmModel::default(), hand);
                (Box::new(arm), "sim-arm".into(), None, true)
            }
            Participant::Person {
                device, buttons, ..
            } => {
                let (inner, name, deadman): (Box<dyn Device>, String, _) = match device {
                    PersonDevice::Sim(hand) => {
                        hand_path = Some(hand.clone());
                        (
                            Box::new(SimulatedArm::new(
                                sim_arm_spec(),
                                ArmModel::default(),
                                hand.clone(),
                            )),
                            "sim-arm".into(),
                            None,
                        )
                    }
                    PersonDevice::Hid {
                        keeper,
                        name,
                        deadman_button,
                    } => (Box::new(keeper.lend()?), name.clone(), *deadman_button),
                };
                let device = AnswerButtons::new(inner, *buttons, Arc::clone(&answer));
                (Box::new(device), name, deadman, false)
            }
        };
    let spec = device.spec().clone();
    let config = inputs.study_config.for_trial(
        &if hand_path.is_some() || model_trial.is_some() {
            "sim".to_owned()
        } else {
            format!("hid:{device_name}")
        },
        inputs.seed,
        lockstep,
        trial,
    );
    if config.own_bases {
        super::haptic_cmd::enable_own_bases(&mut world, Some(1))?;
    }
    let recorder = Recorder::create(&inputs.log, serde_json::to_value(&config)?)?;
    let seconds = study.trial_time_limit_s.unwrap_or(if lockstep {
        DEFAULT_TRIAL_LIMIT_S
    } else {
        tessera::limits::MAX_SESSION_S
    });
    let session = ServeInputs {
        world,
        threads: rayon::ThreadPoolBuilder::new().num_threads(2).build()?,
        haptic,
        scene_name: scene.path.display().to_string(),
        device,
        device_name,
        hand: None,
        recorder: Some(recorder.handle()),
        options: ServerOptions {
            seconds,
            lockstep,
            realtime: !lockstep,
            safety: Some(SafetySettings {
                force_output: inputs.condition.force_feedback,
                deadman_button,
                ..SafetySettings::for_spec(&spec)
            }),
            ..ServerOptions::default()
        },
        stop: Some(Arc::clone(&trial_stop)),
        on_notice: Some(Box::new(print_notice)),
        view: inputs.display.map(|d| Arc::clone(&d.feed)),
        controls: inputs.display.map(|_| Arc::clone(inputs.controls)),
        watch: Some(Arc::clone(&watch)),
    };
    // The answer (a person's key), a signal or the model's answer ends the
    // trial; a signal then ends the run, before the next trial.
    let setup_s = started.elapsed().as_secs_f64();
    // A person with no way left to answer (the terminal's input closed, no
    // viewer, no answer buttons) ends the trial unanswered.
    let stranded = || match inputs.participant {
        Participant::Person {
            person, buttons, ..
        } => !person.can_answer() && buttons.iter().all(Option::is_none),
        Participant::Model(_) => false,
    };
    let summary = std::thread::scope(|scope| {
        let forward = scope.spawn(|| {
            while !trial_stop.load(Ordering::Acquire) {
                if let Participant::Person { person, .. } = inputs.participant {
                    // Dated by the last synchronisation (r_sim ms at most
                    // behind the haptic clock).
                    if let Some(response) = person.poll() {
                        answer.give(response, watch.tick() as f64 * tick_s);
                    }
                }
                if stop.requested() || answer.get().is_some() || stranded() {
                    trial_stop.store(true, Ordering::Release);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        let summary = serve(session);
        trial_stop.store(true, Ordering::Release);
        let _ = forward.join();
        summary
    })?;
    // What a replay needs beyond the configuration: the hand's path (a
    // closed-loop one is known only now) and the outcome it checks.
    let handle = recorder.handle();
    let model = model_trial.and_then(|slot| slot.lock().ok()?.take());
    if let Some(path) = model.as_ref().map(|m| &m.path).or(hand_path.as_ref()) {
        handle.event(Event::HandPath {
            time_s: summary.seconds,
            points: path
                .points()
                .iter()
                .map(|(t, p)| [*t, p.x, p.y, p.z])
                .collect(),
        });
    }
    handle.event(Event::Outcome {
        time_s: summary.seconds,
        state_hash: summary.outcome.state_hash,
        proxy_path_hash: summary.outcome.proxy_path_hash,
        bodies: summary.outcome.bodies,
    });
    recorder.finish()?;
    if stop.requested() {
        bail!("interrupted in a trial; `--resume` runs it again");
    }
    if answer.get().is_none() && stranded() {
        bail!(
            "the terminal's input closed and no viewer is open: nothing can answer; `--resume` runs this trial again"
        );
    }
    let broken = |i: usize| watch.broken_at_tick(i).map(|t| t as f64 * tick_s);
    let kept = match inputs.participant {
        Participant::Person {
            device: PersonDevice::Hid { keeper, .. },
            ..
        } => Some(keeper),
        _ => None,
    };
    Ok(TrialRun {
        answer: answer.get(),
        strikes: [watch.strikes(0), watch.strikes(1)],
        breaks_s: [broken(0), broken(1)],
        simulated_s: summary.seconds,
        model_efforts: model.map_or([None; 2], |m| m.efforts),
        setup_s,
        device_gaps: kept.map(|keeper| keeper.take_gaps()),
        keeper_ticks: kept.map(|keeper| keeper.take_ticks()),
        haptic: summary.haptic,
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
