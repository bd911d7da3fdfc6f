//! The rows a study writes (`trials.csv`, `questionnaire.csv`): tidy CSV,
//! one observation per row, that pandas (`read_csv`) and R (`read.csv`)
//! read as they are.

use serde::{Deserialize, Serialize};

/// One answered trial (a row of `trials.csv`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// The participant's ID.
    pub participant: String,
    /// The session's index in the study, from 1.
    pub session: u32,
    /// The session's condition.
    pub condition: String,
    /// The trial's index in its session, from 1.
    pub trial: u32,
    /// The left plate's level as its index in the study file (1, 2, 3 …),
    /// empty for an adaptive trial.
    pub left_level: Option<u32>,
    /// The right plate's level, as `left_level`.
    pub right_level: Option<u32>,
    /// `left` or `right`; `none` when the time limit passed.
    pub chosen_side: String,
    /// The chosen plate's level, as `left_level`.
    pub chosen_level: Option<u32>,
    /// 1 if the chosen plate is the weaker one, else 0.
    pub correct: u8,
    /// From the trial's start to the answer (s, session time).
    pub response_time_s: f64,
    /// The left plate's stimulus value (a factor or a value, as the study
    /// file's `unit`).
    pub left_value: f64,
    /// The right plate's stimulus value.
    pub right_value: f64,
    /// The procedure that chose the trial: `constant-stimuli`,
    /// `staircase-K` or `quest-K` (K from 1).
    pub procedure: String,
    /// The stronger minus the weaker plate's value (an adaptive
    /// procedure's Δ).
    pub difference: f64,
    /// Strikes on the left plate (contacts of the proxy that started an
    /// impact).
    pub strikes_left: u32,
    /// Strikes on the right plate.
    pub strikes_right: u32,
    /// When the left plate broke (s from the trial's start), if it did.
    pub break_left_s: Option<f64>,
    /// When the right plate broke.
    pub break_right_s: Option<f64>,
    /// The model participant's remembered effort of the strike that broke
    /// the left plate: peak felt force (N) with force feedback, strike
    /// speed (m/s) without; empty for a person or a plate that did not
    /// break.
    #[serde(default)]
    pub model_effort_left: Option<f64>,
    /// The same for the right plate.
    #[serde(default)]
    pub model_effort_right: Option<f64>,
    /// Attempts of this trial the participant aborted before this one
    /// (their logs are kept as `…-abortedN.mcap`).
    #[serde(default)]
    pub aborted: u32,
    /// The trial's session log, relative to the participant's directory.
    pub log: String,
}

/// A session's questionnaire (Glondu 2012 §5.2.2), a row of
/// `questionnaire.csv`; empty fields were skipped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionnaireRecord {
    /// The participant's ID.
    pub participant: String,
    /// The session's index.
    pub session: u32,
    /// The session's condition.
    pub condition: String,
    /// How many different weaknesses were perceived (0–5).
    pub perceived_weaknesses: Option<u8>,
    /// Confidence in the answers (0–7).
    pub confidence: Option<u8>,
    /// The strategy, in the participant's words.
    pub strategy: String,
    /// Anything else.
    pub remarks: String,
}
