//! The analysis of a 2-AFC study, as Glondu 2012 §5.2.3 reports it, per
//! condition: the choice matrix (Table 5.3: times w_i was judged weaker
//! than w_j), the percentage correct per pair of levels with its standard
//! deviation across participants (Table 5.4), the exact binomial test per
//! pair with Bonferroni's correction; between conditions, the Wilcoxon
//! signed-rank test per pair on the participants' percentages; the
//! Friedman test on the questionnaire's confidence; staircase thresholds
//! per participant; a psychometric function of the stimulus difference
//! fitted by maximum likelihood, and its data as psignifit's rows.

use super::psychometric::{self, Block, Fit, FitOptions};
use super::record::{QuestionnaireRecord, TrialRecord};
use super::stats::{self, Friedman, SignedRank};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Everything `study analyze --json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    /// Participants, sorted.
    pub participants: Vec<String>,
    /// One entry per condition, in the order of first appearance.
    pub conditions: Vec<ConditionAnalysis>,
    /// Per pair of conditions, the signed-rank test per pair of levels.
    pub between_conditions: Vec<Between>,
    /// The questionnaire's confidence marks.
    pub confidence: Option<Confidence>,
}

/// One condition's results.
#[derive(Debug, Clone, Serialize)]
pub struct ConditionAnalysis {
    /// The condition's name.
    pub name: String,
    /// Answered trials (timeouts included, counted wrong).
    pub trials: u64,
    /// Correct answers.
    pub correct: u64,
    /// 100 · correct / trials.
    pub percent_correct: f64,
    /// Table 5.3: `weaker_counts[i][j]` is how often level i+1 was judged
    /// weaker than level j+1 (constant stimuli only; empty otherwise).
    pub weaker_counts: Vec<Vec<u64>>,
    /// Per pair of levels (i < j, from 1).
    pub pairs: Vec<PairAnalysis>,
    /// Per participant and staircase or QUEST run: its threshold.
    pub adaptive: Vec<AdaptiveThreshold>,
    /// A psychometric function of the difference, if the data allow one.
    pub fit: Option<Fit>,
    /// Why there is no fit, if there is none.
    pub fit_error: Option<String>,
    /// psignifit's `[stimulus, n_correct, n_total]` rows (stimulus: the
    /// difference between the plates).
    pub psignifit: Vec<[f64; 3]>,
}

/// One pair of levels in one condition.
#[derive(Debug, Clone, Serialize)]
pub struct PairAnalysis {
    /// [i, j], i < j, from 1.
    pub levels: [u32; 2],
    /// Trials comparing them, both orders.
    pub trials: u64,
    /// Correct answers (w_i judged weaker).
    pub correct: u64,
    /// 100 · correct / trials.
    pub percent_correct: f64,
    /// Standard deviation of the participants' percentages (n − 1).
    pub sd_percent_correct: Option<f64>,
    /// Exact two-sided binomial test against chance (½).
    pub p_value: f64,
    /// Bonferroni-corrected over the condition's pairs.
    pub p_bonferroni: f64,
}

/// A threshold from one participant's adaptive run.
#[derive(Debug, Clone, Serialize)]
pub struct AdaptiveThreshold {
    /// The participant.
    pub participant: String,
    /// `staircase-K` or `quest-K`.
    pub procedure: String,
    /// Its trials.
    pub trials: usize,
    /// Staircases: the mean of the last `reversals` reversal differences;
    /// QUEST: the last difference shown (the estimate it converged on).
    pub threshold: Option<f64>,
    /// The reversals the threshold averages.
    pub reversals: usize,
}

/// Two conditions compared pair by pair.
#[derive(Debug, Clone, Serialize)]
pub struct Between {
    /// The two conditions.
    pub conditions: [String; 2],
    /// Per pair of levels.
    pub pairs: Vec<BetweenPair>,
}

/// One pair of levels compared between two conditions.
#[derive(Debug, Clone, Serialize)]
pub struct BetweenPair {
    /// [i, j].
    pub levels: [u32; 2],
    /// Participants with trials of this pair in both conditions.
    pub participants: usize,
    /// The signed-rank test on their percentages, if defined.
    pub test: Option<SignedRank>,
    /// Why there is no test.
    pub error: Option<String>,
}

/// The questionnaire's confidence marks.
#[derive(Debug, Clone, Serialize)]
pub struct Confidence {
    /// Per condition: name, mean and standard deviation.
    pub per_condition: Vec<(String, f64, Option<f64>)>,
    /// Friedman over the participants who answered in every condition.
    pub friedman: Option<Friedman>,
    /// Why there is no Friedman test.
    pub error: Option<String>,
}

/// How many reversals a staircase threshold averages.
pub const THRESHOLD_REVERSALS: usize = 6;

/// Analyses trials and questionnaires (any number of participants).
pub fn analyse(
    trials: &[TrialRecord],
    questionnaires: &[QuestionnaireRecord],
    fit_options: &FitOptions,
) -> Analysis {
    let participants: Vec<String> = trials
        .iter()
        .map(|t| t.participant.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut condition_names: Vec<String> = Vec::new();
    for t in trials {
        if !condition_names.contains(&t.condition) {
            condition_names.push(t.condition.clone());
        }
    }
    let conditions: Vec<ConditionAnalysis> = condition_names
        .iter()
        .map(|name| {
            let rows: Vec<&TrialRecord> = trials.iter().filter(|t| &t.condition == name).collect();
            condition(name, &rows, fit_options)
        })
        .collect();
    let mut between_conditions = Vec::new();
    for a in 0..condition_names.len() {
        for b in a + 1..condition_names.len() {
            between_conditions.push(between(trials, &condition_names[a], &condition_names[b]));
        }
    }
    Analysis {
        participants,
        confidence: confidence(questionnaires, &condition_names),
        conditions,
        between_conditions,
    }
}

/// The weaker level of a constant-stimuli trial's pair and whether the
/// answer picked it.
fn level_pair(t: &TrialRecord) -> Option<[u32; 2]> {
    let (l, r) = (t.left_level?, t.right_level?);
    Some([l.min(r), l.max(r)])
}

fn percent(correct: u64, trials: u64) -> f64 {
    if trials == 0 {
        0.0
    } else {
        100.0 * correct as f64 / trials as f64
    }
}

fn mean_sd(values: &[f64]) -> (f64, Option<f64>) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let sd = (values.len() > 1)
        .then(|| (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt());
    (mean, sd)
}

fn condition(name: &str, rows: &[&TrialRecord], fit_options: &FitOptions) -> ConditionAnalysis {
    let correct = rows.iter().filter(|t| t.correct == 1).count() as u64;
    let levels = rows
        .iter()
        .filter_map(|t| level_pair(t))
        .map(|p| p[1])
        .max()
        .unwrap_or(0) as usize;
    let mut weaker_counts = vec![vec![0u64; levels]; levels];
    for t in rows {
        if let (Some(l), Some(r)) = (t.left_level, t.right_level) {
            let (chosen, other) = match t.chosen_side.as_str() {
                "left" => (l, r),
                "right" => (r, l),
                _ => continue,
            };
            weaker_counts[chosen as usize - 1][other as usize - 1] += 1;
        }
    }
    let pair_keys: BTreeSet<[u32; 2]> = rows.iter().filter_map(|t| level_pair(t)).collect();
    let tests = pair_keys.len();
    let pairs = pair_keys
        .iter()
        .map(|key| {
            let of_pair: Vec<&&TrialRecord> = rows
                .iter()
                .filter(|t| level_pair(t) == Some(*key))
                .collect();
            let n = of_pair.len() as u64;
            let k = of_pair.iter().filter(|t| t.correct == 1).count() as u64;
            let mut per_participant: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
            for t in &of_pair {
                let e = per_participant.entry(&t.participant).or_default();
                e.0 += u64::from(t.correct);
                e.1 += 1;
            }
            let percents: Vec<f64> = per_participant
                .values()
                .map(|(k, n)| percent(*k, *n))
                .collect();
            let p_value = stats::binomial_test_two_sided(k, n, 0.5);
            PairAnalysis {
                levels: *key,
                trials: n,
                correct: k,
                percent_correct: percent(k, n),
                sd_percent_correct: mean_sd(&percents).1,
                p_value,
                p_bonferroni: stats::bonferroni(p_value, tests),
            }
        })
        .collect();
    // Psychometric data: proportion correct against the difference.
    let mut by_difference: BTreeMap<u64, (f64, u64, u64)> = BTreeMap::new();
    for t in rows {
        // Differences equal up to rounding in the CSV share a row.
        let key = (t.difference * 1e9).round() as u64;
        let e = by_difference.entry(key).or_insert((t.difference, 0, 0));
        e.1 += u64::from(t.correct);
        e.2 += 1;
    }
    let blocks: Vec<Block> = by_difference
        .values()
        .map(|&(stimulus, correct, total)| Block {
            stimulus,
            correct,
            total,
        })
        .collect();
    let (fit, fit_error) = match psychometric::fit(&blocks, fit_options) {
        Ok(f) => (Some(f), None),
        Err(e) => (None, Some(e.to_string())),
    };
    ConditionAnalysis {
        name: name.to_owned(),
        trials: rows.len() as u64,
        correct,
        percent_correct: percent(correct, rows.len() as u64),
        weaker_counts,
        pairs,
        adaptive: adaptive(rows),
        fit,
        fit_error,
        psignifit: blocks
            .iter()
            .map(|b| [b.stimulus, b.correct as f64, b.total as f64])
            .collect(),
    }
}

/// Staircase thresholds from the recorded trials: a reversal is a trial
/// whose difference moves the other way than the step before it.
fn adaptive(rows: &[&TrialRecord]) -> Vec<AdaptiveThreshold> {
    let mut runs: BTreeMap<(&str, u32, &str), Vec<&TrialRecord>> = BTreeMap::new();
    for t in rows.iter().filter(|t| t.procedure != "constant-stimuli") {
        runs.entry((&t.participant, t.session, &t.procedure))
            .or_default()
            .push(t);
    }
    runs.into_iter()
        .map(|((participant, _, procedure), mut trials)| {
            trials.sort_by_key(|t| t.trial);
            let values: Vec<f64> = trials.iter().map(|t| t.difference).collect();
            let (threshold, reversals) = if procedure.starts_with("staircase") {
                let mut reversal_values = Vec::new();
                let mut direction = 0.0_f64;
                for w in values.windows(2) {
                    let step = (w[1] - w[0]).signum();
                    if step != 0.0 {
                        if direction != 0.0 && step != direction {
                            reversal_values.push(w[0]);
                        }
                        direction = step;
                    }
                }
                let k = THRESHOLD_REVERSALS.min(reversal_values.len());
                let tail = &reversal_values[reversal_values.len() - k..];
                ((k > 0).then(|| tail.iter().sum::<f64>() / k as f64), k)
            } else {
                (values.last().copied(), 0)
            };
            AdaptiveThreshold {
                participant: participant.to_owned(),
                procedure: procedure.to_owned(),
                trials: trials.len(),
                threshold,
                reversals,
            }
        })
        .collect()
}

fn between(trials: &[TrialRecord], a: &str, b: &str) -> Between {
    let pct = |condition: &str| {
        let mut m: BTreeMap<([u32; 2], &str), (u64, u64)> = BTreeMap::new();
        for t in trials.iter().filter(|t| t.condition == condition) {
            if let Some(key) = level_pair(t) {
                let e = m.entry((key, t.participant.as_str())).or_default();
                e.0 += u64::from(t.correct);
                e.1 += 1;
            }
        }
        m
    };
    let (pa, pb) = (pct(a), pct(b));
    let keys: BTreeSet<[u32; 2]> = pa.keys().map(|(k, _)| *k).collect();
    let pairs = keys
        .into_iter()
        .map(|key| {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            for ((k, participant), (c, n)) in &pa {
                if *k != key {
                    continue;
                }
                if let Some((c2, n2)) = pb.get(&(key, participant)) {
                    x.push(percent(*c, *n));
                    y.push(percent(*c2, *n2));
                }
            }
            let result = stats::wilcoxon_signed_rank(&x, &y);
            BetweenPair {
                levels: key,
                participants: x.len(),
                error: result.as_ref().err().map(|e| e.to_string()),
                test: result.ok(),
            }
        })
        .collect();
    Between {
        conditions: [a.to_owned(), b.to_owned()],
        pairs,
    }
}

fn confidence(questionnaires: &[QuestionnaireRecord], conditions: &[String]) -> Option<Confidence> {
    let marks: Vec<(&str, &str, f64)> = questionnaires
        .iter()
        .filter_map(|q| {
            Some((
                q.participant.as_str(),
                q.condition.as_str(),
                f64::from(q.confidence?),
            ))
        })
        .collect();
    if marks.is_empty() {
        return None;
    }
    let per_condition = conditions
        .iter()
        .filter_map(|c| {
            let v: Vec<f64> = marks.iter().filter(|m| m.1 == c).map(|m| m.2).collect();
            (!v.is_empty()).then(|| {
                let (mean, sd) = mean_sd(&v);
                (c.clone(), mean, sd)
            })
        })
        .collect();
    // Blocks: participants with a mark in every condition (the last mark
    // of a condition counts).
    let participants: BTreeSet<&str> = marks.iter().map(|m| m.0).collect();
    let mut columns: Vec<Vec<f64>> = vec![Vec::new(); conditions.len()];
    for p in participants {
        let row: Option<Vec<f64>> = conditions
            .iter()
            .map(|c| {
                marks
                    .iter()
                    .rev()
                    .find(|m| m.0 == p && m.1 == c)
                    .map(|m| m.2)
            })
            .collect();
        if let Some(row) = row {
            for (col, v) in columns.iter_mut().zip(row) {
                col.push(v);
            }
        }
    }
    let refs: Vec<&[f64]> = columns.iter().map(|c| c.as_slice()).collect();
    let result = stats::friedman(&refs);
    Some(Confidence {
        per_condition,
        error: result.as_ref().err().map(|e| e.to_string()),
        friedman: result.ok(),
    })
}
