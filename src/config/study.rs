//! Perception-study files (`configs/studies/*.toml`): the scene and its two
//! alternatives, the material parameter a stimulus level sets, the design
//! (constant stimuli, staircases, QUEST), the conditions (force feedback on
//! or off, haptic options), the answer keys and buttons, breaks and time
//! limits. Glondu 2012 §5.2.2 is the study the shipped files reproduce.
//!
//! Every error names the file, the line and the field.

use super::{read_text, ConfigError, Material, QuestRules, StaircaseRules};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A perception study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Study {
    /// The study's name (results and logs carry it).
    pub name: String,
    /// A shipped scene's name or a scene file, relative to the study file.
    pub scene: String,
    /// Shown to the participant before each session.
    #[serde(default)]
    pub instructions: String,
    /// Seeds trial order, left/right assignment and the plates' weak
    /// points; `study run --seed` overrides it.
    #[serde(default)]
    pub seed: u64,
    /// What varies between the alternatives.
    pub stimulus: Stimulus,
    /// How stimuli are chosen trial by trial.
    pub design: Design,
    /// Each condition is one session of the design.
    pub conditions: Vec<Condition>,
    /// How the participant answers.
    #[serde(default)]
    pub answers: Answers,
    /// A break after every this many trials (0: none).
    #[serde(default)]
    pub break_every: u32,
    /// A trial with no answer after this long ends unanswered (default:
    /// no limit, as in §5.2.2).
    #[serde(default)]
    pub trial_time_limit_s: Option<f64>,
    /// Ask §5.2.2's questionnaire after each session.
    #[serde(default = "yes")]
    pub questionnaire: bool,
}

fn yes() -> bool {
    true
}

/// Whether levels are material values or factors of the scene's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LevelUnit {
    /// The scene material's value times the level.
    #[default]
    Factor,
    /// The level is the value.
    Absolute,
}

/// The two alternatives and the material parameter the stimulus sets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stimulus {
    /// The scene's left and right bodies.
    pub alternatives: [String; 2],
    /// A numeric field of the material (`rankine_threshold_pa`).
    #[serde(default = "default_parameter")]
    pub parameter: String,
    /// Levels as factors of the scene's material (default) or values.
    #[serde(default)]
    pub unit: LevelUnit,
    /// Constant stimuli: the levels w1 < w2 < …; a lower level is the
    /// weaker plate.
    #[serde(default)]
    pub levels: Vec<f64>,
    /// Adaptive designs: the reference plate's level; the other plate is
    /// weaker by the procedure's difference (level = reference − Δ).
    #[serde(default)]
    pub reference: Option<f64>,
}

fn default_parameter() -> String {
    "rankine_threshold_pa".to_owned()
}

/// How stimuli are chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Design {
    /// Every ordered pair of distinct levels `repetitions` times, in a
    /// seeded random order (§5.2.2: 3 levels, 6 pairs × 5).
    ConstantStimuli {
        /// Times each ordered pair is shown.
        repetitions: u32,
    },
    /// Transformed up-down staircases on Δ, interleaved at random.
    Staircase {
        /// One entry per staircase.
        staircase: Vec<StaircaseRules>,
    },
    /// QUEST runs on Δ, interleaved at random.
    Quest {
        /// One entry per QUEST run.
        quest: Vec<QuestRules>,
    },
}

/// One session's condition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// Its name in results (`force-feedback`).
    pub name: String,
    /// Off: the device still moves the proxy but the safety layer sends
    /// zero force.
    #[serde(default = "yes")]
    pub force_feedback: bool,
    /// Overrides of the scene's `[haptic]` table.
    #[serde(default)]
    pub haptic: HapticOverrides,
}

/// Haptic options a condition may change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct HapticOverrides {
    /// Length factor S_fact.
    #[serde(default)]
    pub s_fact: Option<f64>,
    /// Force factor F_fact.
    #[serde(default)]
    pub f_fact: Option<f64>,
    /// Haptic ticks per synchronisation.
    #[serde(default)]
    pub sync_ratio: Option<u32>,
}

/// Answer keys (terminal and viewer) and device buttons.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answers {
    /// "The left plate is weaker".
    #[serde(default = "left_key")]
    pub left_key: char,
    /// "The right plate is weaker".
    #[serde(default = "right_key")]
    pub right_key: char,
    /// Abort the trial; it runs again at once, with a fresh world.
    #[serde(default = "abort_key")]
    pub abort_key: char,
    /// Device button meaning left.
    #[serde(default)]
    pub left_button: Option<u8>,
    /// Device button meaning right.
    #[serde(default)]
    pub right_button: Option<u8>,
}

fn left_key() -> char {
    'f'
}
fn right_key() -> char {
    'j'
}
fn abort_key() -> char {
    'x'
}

impl Default for Answers {
    fn default() -> Self {
        Self {
            left_key: left_key(),
            right_key: right_key(),
            abort_key: abort_key(),
            left_button: None,
            right_button: None,
        }
    }
}

/// Most trials one session may hold (a study file cannot ask for more).
pub const MAX_TRIALS_PER_SESSION: usize = 10_000;

impl Study {
    /// Reads and checks the study at `path`.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        Self::parse(&read_text(path)?, path)
    }

    /// Parses and checks a study; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let study: Study = toml::from_str(text).map_err(|e| ConfigError::Toml {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        if let Some((field, message)) = study.problems().into_iter().next() {
            return Err(ConfigError::Field {
                path: path.to_path_buf(),
                line: line_of(text, &field).unwrap_or(1),
                field,
                message,
            });
        }
        Ok(study)
    }

    /// The scene file this study names, relative to the study file (a
    /// name without a path is a shipped scene).
    pub fn scene_path(&self, study_path: &Path) -> PathBuf {
        let given = Path::new(&self.scene);
        if given.components().count() == 1 && given.extension().is_none() {
            return given.to_path_buf();
        }
        study_path
            .parent()
            .map_or_else(|| given.to_path_buf(), |dir| dir.join(given))
    }

    /// The trials a session of this design holds, if fixed in advance.
    pub fn trials_per_session(&self) -> Option<usize> {
        match &self.design {
            Design::ConstantStimuli { repetitions } => {
                let n = self.stimulus.levels.len();
                Some(n * n.saturating_sub(1) * *repetitions as usize)
            }
            Design::Staircase { .. } | Design::Quest { .. } => None,
        }
    }

    /// Every problem, as (dotted field, message); the parser reports the first.
    fn problems(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut push = |field: &str, message: String| out.push((field.to_owned(), message));
        if self.name.trim().is_empty() {
            push("name", "must not be empty".into());
        }
        let s = &self.stimulus;
        if s.alternatives[0] == s.alternatives[1] {
            push(
                "stimulus.alternatives",
                format!(
                    "names `{}` twice; give the left and the right body",
                    s.alternatives[0]
                ),
            );
        }
        if !material_fields().contains(&s.parameter.as_str()) {
            push(
                "stimulus.parameter",
                format!(
                    "`{}` is not a numeric material field (known: {})",
                    s.parameter,
                    material_fields().join(", ")
                ),
            );
        }
        let level_ok = |v: f64| v.is_finite() && (s.unit == LevelUnit::Absolute || v > 0.0);
        match &self.design {
            Design::ConstantStimuli { repetitions } => {
                if s.levels.len() < 2 {
                    push(
                        "stimulus.levels",
                        "a constant-stimuli design needs two levels or more".into(),
                    );
                } else if s.levels.windows(2).any(|w| w[0] >= w[1])
                    || !s.levels.iter().all(|v| level_ok(*v))
                {
                    push(
                        "stimulus.levels",
                        "levels must be finite, increasing (w1 < w2 < …) and, as factors, positive"
                            .into(),
                    );
                }
                if *repetitions == 0 {
                    push("design.repetitions", "must be at least 1".into());
                }
                if self
                    .trials_per_session()
                    .is_some_and(|n| n > MAX_TRIALS_PER_SESSION)
                {
                    push(
                        "design.repetitions",
                        format!("makes more than {MAX_TRIALS_PER_SESSION} trials a session"),
                    );
                }
                if s.reference.is_some() {
                    push(
                        "stimulus.reference",
                        "is for adaptive designs; constant stimuli use levels".into(),
                    );
                }
            }
            Design::Staircase { staircase } => {
                if staircase.is_empty() {
                    push(
                        "design.staircase",
                        "give at least one [[design.staircase]]".into(),
                    );
                }
                for (i, rules) in staircase.iter().enumerate() {
                    if let Some(problem) = rules.problems().into_iter().next() {
                        push(&format!("design.staircase[{i}]"), problem);
                    }
                }
                self.check_reference(&mut push);
            }
            Design::Quest { quest } => {
                if quest.is_empty() {
                    push("design.quest", "give at least one [[design.quest]]".into());
                }
                for (i, rules) in quest.iter().enumerate() {
                    if let Some(problem) = rules.problems().into_iter().next() {
                        push(&format!("design.quest[{i}]"), problem);
                    }
                }
                self.check_reference(&mut push);
            }
        }
        if self.conditions.is_empty() {
            push("conditions", "give at least one [[conditions]]".into());
        }
        for (i, c) in self.conditions.iter().enumerate() {
            if self.conditions[..i].iter().any(|d| d.name == c.name) {
                push(
                    &format!("conditions[{i}].name"),
                    format!("`{}` is used twice", c.name),
                );
            }
            if c.name.trim().is_empty() || c.name.contains([',', '"', '\n']) {
                push(
                    &format!("conditions[{i}].name"),
                    "must be a non-empty name without commas or quotes".into(),
                );
            }
            let h = &c.haptic;
            for (field, v) in [("s_fact", h.s_fact), ("f_fact", h.f_fact)] {
                if v.is_some_and(|v| !(v > 0.0 && v.is_finite())) {
                    push(
                        &format!("conditions[{i}].haptic.{field}"),
                        "must be positive".into(),
                    );
                }
            }
            if h.sync_ratio.is_some_and(|r| r == 0 || r > 100) {
                push(
                    &format!("conditions[{i}].haptic.sync_ratio"),
                    "must be in 1..=100".into(),
                );
            }
        }
        let a = &self.answers;
        let keys = [a.left_key, a.right_key, a.abort_key];
        if keys[0] == keys[1] || keys[0] == keys[2] || keys[1] == keys[2] {
            push(
                "answers",
                "left_key, right_key and abort_key must differ".into(),
            );
        }
        if keys.iter().any(|k| k.is_control() || k.is_whitespace()) {
            push(
                "answers",
                "keys must be printable characters (space is the pause key)".into(),
            );
        }
        for (field, b) in [
            ("left_button", a.left_button),
            ("right_button", a.right_button),
        ] {
            if b.is_some_and(|b| b >= 32) {
                push(
                    &format!("answers.{field}"),
                    "buttons are numbered 0–31".into(),
                );
            }
        }
        if a.left_button.is_some() && a.left_button == a.right_button {
            push("answers.right_button", "is the left button too".into());
        }
        if self
            .trial_time_limit_s
            .is_some_and(|t| !(t > 0.0 && t <= 3600.0))
        {
            push("trial_time_limit_s", "must be in (0, 3600] seconds".into());
        }
        out
    }

    fn check_reference(&self, push: &mut impl FnMut(&str, String)) {
        let s = &self.stimulus;
        match s.reference {
            None => push(
                "stimulus.reference",
                "an adaptive design needs the reference plate's level".into(),
            ),
            Some(r) if !(r.is_finite() && (s.unit == LevelUnit::Absolute || r > 0.0)) => {
                push("stimulus.reference", format!("{r} is not a usable level"))
            }
            Some(_) => {}
        }
        if !s.levels.is_empty() {
            push(
                "stimulus.levels",
                "adaptive designs take a reference, not levels".into(),
            );
        }
    }

    /// The material value of level `level` (a factor or a value, as the
    /// study says) for a body of material `base`, checked: a level that
    /// makes the material invalid is named.
    pub fn material_at(
        &self,
        base: &Material,
        level: f64,
        level_name: &str,
        path: &Path,
    ) -> Result<Material, ConfigError> {
        let s = &self.stimulus;
        let invalid = |message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            entry: format!("stimulus {level_name}"),
            field: "stimulus.parameter",
            message,
        };
        let mut value = serde_json::to_value(base).map_err(|e| invalid(e.to_string()))?;
        let Some(field) = value.get_mut(&s.parameter) else {
            return Err(invalid(format!("no material field `{}`", s.parameter)));
        };
        let current = field.as_f64().unwrap_or(f64::NAN);
        let set = match s.unit {
            LevelUnit::Factor => current * level,
            LevelUnit::Absolute => level,
        };
        *field = serde_json::Value::from(set);
        let material: Material =
            serde_json::from_value(value).map_err(|e| invalid(e.to_string()))?;
        material
            .validate(path, &format!("stimulus {level_name}"))
            .map_err(|e| {
                invalid(format!(
                    "{} = {set} makes the material invalid: {e}",
                    s.parameter
                ))
            })?;
        Ok(material)
    }
}

/// The material's numeric fields a stimulus may vary.
pub fn material_fields() -> &'static [&'static str] {
    &[
        "density_kg_m3",
        "youngs_modulus_pa",
        "poisson_ratio",
        "damping_stiffness_s",
        "damping_mass_per_s",
        "fracture_toughness_j_m2",
        "rankine_threshold_pa",
        "weak_point_density_per_m3",
        "crack_noise_amplitude_m",
        "crack_noise_frequency_per_m",
    ]
}

/// The line (1-based) of a dotted field (`design.staircase[0].steps`) in
/// a TOML text, or of the deepest table of it that exists.
pub(crate) fn line_of(text: &str, field: &str) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let root = DeTable::parse(text).ok()?;
    let mut span = None;
    let mut table: Option<&DeTable> = Some(root.get_ref());
    let mut value: Option<&DeValue> = None;
    for part in field.split('.') {
        let (key, index) = match part.split_once('[') {
            Some((k, rest)) => (k, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        let t = match (table, value) {
            (Some(t), _) => t,
            (None, Some(DeValue::Table(t))) => t,
            _ => break,
        };
        let Some((k, v)) = t.iter().find(|(k, _)| k.get_ref().as_ref() == key) else {
            break;
        };
        span = Some(k.span());
        let mut current = v;
        if let (Some(i), DeValue::Array(items)) = (index, v.get_ref()) {
            match items.get(i) {
                Some(item) => {
                    span = Some(item.span());
                    current = item;
                }
                None => break,
            }
        }
        table = None;
        value = Some(current.get_ref());
    }
    let at = span?.start;
    Some(text[..at.min(text.len())].matches('\n').count() + 1)
}
