//! The adaptive procedures' settings in a study file: transformed up-down
//! staircases (`[[design.staircase]]`) and QUEST (`[[design.quest]]`).
//! The procedures themselves are in `crate::study`.

use serde::{Deserialize, Serialize};

/// How a step changes the stimulus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum StepType {
    /// value ± step.
    #[default]
    Lin,
    /// log10(value) ± step.
    Log,
    /// 20·log10(value) ± step.
    Db,
}

/// When a staircase ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum StopWhen {
    /// At the first of the limits reached.
    #[default]
    Any,
    /// When every limit given is reached.
    All,
}

/// A staircase's rules (the study file's `[design]` for `staircase`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StaircaseRules {
    /// The first stimulus value (with `levels`, an index into them).
    pub start: f64,
    /// Wrong answers in a row before a step up (easier).
    #[serde(default = "one")]
    pub n_up: u32,
    /// Correct answers in a row before a step down (harder).
    #[serde(default = "two")]
    pub n_down: u32,
    /// Down step sizes, advancing at each reversal (the last one stays).
    pub steps: Vec<f64>,
    /// Up step sizes (default: `steps`); Kaernbach's weighted up-down.
    #[serde(default)]
    pub up_steps: Option<Vec<f64>>,
    /// How steps apply.
    #[serde(default)]
    pub step_type: StepType,
    /// Predefined stimulus values; `start` and the steps are then indices
    /// and index steps into them.
    #[serde(default)]
    pub levels: Option<Vec<f64>>,
    /// Lowest stimulus value.
    #[serde(default)]
    pub min: Option<f64>,
    /// Highest stimulus value.
    #[serde(default)]
    pub max: Option<f64>,
    /// Stop after this many trials.
    #[serde(default)]
    pub max_trials: Option<u32>,
    /// Stop after this many reversals.
    #[serde(default)]
    pub max_reversals: Option<u32>,
    /// Whether the first or every limit ends the staircase.
    #[serde(default)]
    pub stop_when: StopWhen,
    /// The threshold is the mean of the last this many reversals.
    #[serde(default = "six")]
    pub threshold_reversals: u32,
}

fn one() -> u32 {
    1
}
fn two() -> u32 {
    2
}
fn six() -> u32 {
    6
}

impl StaircaseRules {
    /// What is wrong with these rules, by field name.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.n_up == 0 || self.n_down == 0 {
            out.push("n_up and n_down must be at least 1".to_owned());
        }
        let positive = |v: &[f64]| !v.is_empty() && v.iter().all(|s| *s > 0.0 && s.is_finite());
        if !positive(&self.steps) {
            out.push("steps must be a non-empty list of positive sizes".to_owned());
        }
        if let Some(up) = &self.up_steps {
            if !positive(up) {
                out.push("up_steps must be a non-empty list of positive sizes".to_owned());
            }
        }
        if self.max_trials.is_none() && self.max_reversals.is_none() {
            out.push("give max_trials, max_reversals or both: a staircase must end".to_owned());
        }
        if self.max_trials.is_some_and(|n| n == 0 || n > 100_000) {
            out.push("max_trials must be in 1..=100000".to_owned());
        }
        if self.max_reversals.is_some_and(|n| n == 0 || n > 10_000) {
            out.push("max_reversals must be in 1..=10000".to_owned());
        }
        if let Some(levels) = &self.levels {
            if levels.len() < 2 || levels.iter().any(|v| !v.is_finite()) {
                out.push("levels must list at least two finite values".to_owned());
            }
            let index_steps = |v: &[f64]| v.iter().all(|s| s.fract() == 0.0);
            if !index_steps(&self.steps) || !self.up_steps.as_deref().is_none_or(index_steps) {
                out.push("with levels, steps are whole numbers of levels".to_owned());
            }
            if self.start.fract() != 0.0 || self.start < 0.0 || self.start >= levels.len() as f64 {
                out.push(format!(
                    "with levels, start is an index in 0..{}",
                    levels.len()
                ));
            }
            if self.step_type != StepType::Lin {
                out.push("with levels, step_type must be lin (steps are indices)".to_owned());
            }
        } else {
            if !self.start.is_finite() {
                out.push("start must be finite".to_owned());
            }
            if self.step_type != StepType::Lin && self.start <= 0.0 {
                out.push("log and db steps need a positive start".to_owned());
            }
        }
        if let (Some(lo), Some(hi)) = (self.min, self.max) {
            if lo >= hi || lo.is_nan() || hi.is_nan() {
                out.push(format!("min {lo} must be below max {hi}"));
            }
        }
        if self.threshold_reversals == 0 {
            out.push("threshold_reversals must be at least 1".to_owned());
        }
        out
    }
}

/// Where the next trial goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// The posterior's median (Pelli 1987's recommendation).
    #[default]
    Quantile,
    /// The posterior mean (King-Smith et al. 1994).
    Mean,
    /// The posterior mode (Watson & Pelli's original).
    Mode,
}

/// QUEST's settings (the study file's `[design]` for `quest`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuestRules {
    /// Prior guess of the threshold, as a stimulus value (> 0).
    pub guess: f64,
    /// Prior standard deviation, in log10 units.
    #[serde(default = "default_guess_sd")]
    pub guess_sd_log10: f64,
    /// ψ at threshold.
    #[serde(default = "default_p_threshold")]
    pub p_threshold: f64,
    /// Weibull slope β.
    #[serde(default = "default_beta")]
    pub beta: f64,
    /// Lapse rate δ.
    #[serde(default = "default_delta")]
    pub delta: f64,
    /// Guess rate γ (½ in 2-AFC).
    #[serde(default = "default_gamma")]
    pub gamma: f64,
    /// Trials.
    pub max_trials: u32,
    /// Where trials go.
    #[serde(default)]
    pub placement: Placement,
    /// Lowest stimulus value shown (> 0).
    #[serde(default)]
    pub min: Option<f64>,
    /// Highest stimulus value shown.
    #[serde(default)]
    pub max: Option<f64>,
}

fn default_guess_sd() -> f64 {
    0.5
}
fn default_p_threshold() -> f64 {
    0.75
}
fn default_beta() -> f64 {
    3.5
}
fn default_delta() -> f64 {
    0.01
}
fn default_gamma() -> f64 {
    0.5
}

impl QuestRules {
    /// What is wrong with these settings, by field name.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !(self.guess > 0.0 && self.guess.is_finite()) {
            out.push("guess must be a positive stimulus value".to_owned());
        }
        if !(self.guess_sd_log10 > 0.0 && self.guess_sd_log10 <= 5.0) {
            out.push("guess_sd_log10 must be in (0, 5]".to_owned());
        }
        if !(self.gamma >= 0.0 && self.delta >= 0.0 && self.gamma + self.delta < 1.0) {
            out.push("gamma and delta must be ≥ 0 with gamma + delta < 1".to_owned());
        }
        let top = self.delta * self.gamma + (1.0 - self.delta);
        if !(self.p_threshold > self.gamma && self.p_threshold < top) {
            out.push(format!(
                "p_threshold must lie between gamma {} and {top:.3}",
                self.gamma
            ));
        }
        if !(self.beta > 0.0 && self.beta.is_finite()) {
            out.push("beta must be positive".to_owned());
        }
        if self.max_trials == 0 || self.max_trials > 100_000 {
            out.push("max_trials must be in 1..=100000".to_owned());
        }
        if self.min.is_some_and(|m| m <= 0.0 || m.is_nan()) {
            out.push("min must be positive (QUEST works in log units)".to_owned());
        }
        if let (Some(lo), Some(hi)) = (self.min, self.max) {
            if lo >= hi || lo.is_nan() || hi.is_nan() {
                out.push(format!("min {lo} must be below max {hi}"));
            }
        }
        out
    }
}
