//! A study's figures as SVG files (plotters): per condition the fitted
//! psychometric function with its data, the percentage correct per pair
//! of levels with the participants' standard deviation (Glondu 2012
//! Table 5.4 as bars), and each adaptive run's track.

use super::analysis::{Analysis, ConditionAnalysis};
use super::record::TrialRecord;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A figure that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct PlotError {
    /// The figure's file.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

/// Figure size (px).
const SIZE: (u32, u32) = (720, 480);

/// Writes every figure the analysis has data for into `dir` (which must
/// exist) and returns their paths: `pairs.svg`,
/// `psychometric-CONDITION.svg`, `track-PARTICIPANT-CONDITION.svg`.
pub fn write_figures(
    analysis: &Analysis,
    trials: &[TrialRecord],
    dir: &Path,
) -> Result<Vec<PathBuf>, PlotError> {
    let mut written = Vec::new();
    if analysis.conditions.iter().any(|c| !c.pairs.is_empty()) {
        let path = dir.join("pairs.svg");
        pairs(&analysis.conditions, &path).map_err(|message| PlotError {
            path: path.clone(),
            message,
        })?;
        written.push(path);
    }
    for condition in &analysis.conditions {
        if condition.psignifit.is_empty() {
            continue;
        }
        let path = dir.join(format!("psychometric-{}.svg", file_part(&condition.name)));
        psychometric(condition, &path).map_err(|message| PlotError {
            path: path.clone(),
            message,
        })?;
        written.push(path);
    }
    // Adaptive runs: per participant and condition, one track per run.
    let mut runs: BTreeMap<(&str, &str), BTreeMap<&str, Vec<&TrialRecord>>> = BTreeMap::new();
    for t in trials.iter().filter(|t| t.procedure != "constant-stimuli") {
        runs.entry((&t.participant, &t.condition))
            .or_default()
            .entry(&t.procedure)
            .or_default()
            .push(t);
    }
    for ((participant, condition), procedures) in &runs {
        let path = dir.join(format!(
            "track-{}-{}.svg",
            file_part(participant),
            file_part(condition)
        ));
        track(participant, condition, procedures, &path).map_err(|message| PlotError {
            path: path.clone(),
            message,
        })?;
        written.push(path);
    }
    Ok(written)
}

/// `name` as part of a file name: letters, digits, `-` and `_` kept,
/// anything else `_`.
fn file_part(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn text<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

/// Bars of percentage correct per pair of levels, one colour per
/// condition, with ± one standard deviation across participants.
fn pairs(conditions: &[ConditionAnalysis], path: &Path) -> Result<(), String> {
    let keys: Vec<[u32; 2]> = {
        let mut keys: Vec<[u32; 2]> = conditions
            .iter()
            .flat_map(|c| c.pairs.iter().map(|p| p.levels))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    };
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(text)?;
    let n = keys.len() as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption("Percentage correct per pair of levels", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        // Headroom above 100 % for the legend.
        .build_cartesian_2d(-0.5..n - 0.5, 0.0..125.0)
        .map_err(text)?;
    let label = |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < keys.len() {
            let [a, b] = keys[i as usize];
            format!("w{a} vs w{b}")
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(keys.len().max(1) * 2 + 1)
        .x_label_formatter(&label)
        .y_label_formatter(&|y| {
            if *y <= 100.0 {
                format!("{y:.0}")
            } else {
                String::new()
            }
        })
        .y_desc("% correct")
        .draw()
        .map_err(text)?;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(-0.5, 50.0), (n - 0.5, 50.0)],
            BLACK.mix(0.5).stroke_width(1),
        )))
        .map_err(text)?
        .label("chance")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.5)));
    let width = 0.8 / conditions.len().max(1) as f64;
    for (c, condition) in conditions.iter().enumerate() {
        let colour = Palette99::pick(c).mix(0.9);
        let mut bars = Vec::new();
        let mut whiskers = Vec::new();
        for pair in &condition.pairs {
            let Some(i) = keys.iter().position(|k| *k == pair.levels) else {
                continue;
            };
            let x0 = i as f64 - 0.4 + c as f64 * width;
            let pc = pair.percent_correct;
            bars.push(Rectangle::new(
                [(x0, 0.0), (x0 + width, pc)],
                colour.filled(),
            ));
            if let Some(sd) = pair.sd_percent_correct {
                let x = x0 + 0.5 * width;
                whiskers.push(PathElement::new(
                    vec![(x, (pc - sd).max(0.0)), (x, (pc + sd).min(100.0))],
                    BLACK.stroke_width(1),
                ));
            }
        }
        chart
            .draw_series(bars)
            .map_err(text)?
            .label(condition.name.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], colour.filled()));
        chart.draw_series(whiskers).map_err(text)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(text)?;
    root.present().map_err(text)
}

/// Proportion correct against the plates' difference: the data (a
/// circle's area grows with its trials) and the fitted function.
fn psychometric(condition: &ConditionAnalysis, path: &Path) -> Result<(), String> {
    let data = &condition.psignifit;
    let x_max = data.iter().map(|r| r[0]).fold(0.0, f64::max).max(1e-12) * 1.1;
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(text)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("Psychometric function: {}", condition.name),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..x_max, 0.0..1.0)
        .map_err(text)?;
    chart
        .configure_mesh()
        .x_desc("difference between the plates")
        .y_desc("proportion correct")
        .draw()
        .map_err(text)?;
    let most = data.iter().map(|r| r[2]).fold(1.0, f64::max);
    chart
        .draw_series(data.iter().map(|r| {
            let radius = (3.0 + 7.0 * (r[2] / most).sqrt()).round() as i32;
            Circle::new((r[0], r[1] / r[2].max(1.0)), radius, BLUE.mix(0.6).filled())
        }))
        .map_err(text)?
        .label("data")
        .legend(|(x, y)| Circle::new((x + 10, y), 4, BLUE.mix(0.6).filled()));
    if let Some(fit) = &condition.fit {
        let curve = (0..=200).map(|i| {
            let x = x_max * f64::from(i) / 200.0;
            (x, fit.parameters.psi(fit.shape, x))
        });
        chart
            .draw_series(LineSeries::new(curve, RED.stroke_width(2)))
            .map_err(text)?
            .label(format!("{:?} fit", fit.shape).to_lowercase())
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(text)?;
    root.present().map_err(text)
}

/// Each adaptive run's difference trial by trial: filled where the
/// answer was right, open where wrong.
fn track(
    participant: &str,
    condition: &str,
    runs: &BTreeMap<&str, Vec<&TrialRecord>>,
    path: &Path,
) -> Result<(), String> {
    let trials = runs.values().map(Vec::len).max().unwrap_or(1) as f64;
    let y_max = runs
        .values()
        .flatten()
        .map(|t| t.difference)
        .fold(0.0, f64::max)
        .max(1e-12)
        * 1.1;
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(text)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("Adaptive runs: {participant}, {condition}"),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(0.5..trials + 0.5, 0.0..y_max)
        .map_err(text)?;
    chart
        .configure_mesh()
        .x_label_formatter(&|x| format!("{x:.0}"))
        .x_desc("trial of the run")
        .y_desc("difference between the plates")
        .draw()
        .map_err(text)?;
    for (i, (procedure, rows)) in runs.iter().enumerate() {
        let colour = Palette99::pick(i).mix(1.0);
        let points: Vec<(f64, f64, bool)> = rows
            .iter()
            .enumerate()
            .map(|(k, t)| (k as f64 + 1.0, t.difference, t.correct == 1))
            .collect();
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|&(x, y, _)| (x, y)),
                colour.stroke_width(1),
            ))
            .map_err(text)?
            .label(*procedure)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour));
        chart
            .draw_series(points.iter().map(|&(x, y, right)| {
                let style = if right {
                    colour.filled()
                } else {
                    colour.stroke_width(1)
                };
                Circle::new((x, y), 4, style)
            }))
            .map_err(text)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(text)?;
    root.present().map_err(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::analysis::analyse;
    use crate::study::psychometric::FitOptions;

    fn staircase_trial(procedure: &str, trial: u32, difference: f64, correct: u8) -> TrialRecord {
        TrialRecord {
            participant: "p/1".into(),
            session: 1,
            condition: "force feedback".into(),
            trial,
            left_level: None,
            right_level: None,
            chosen_side: if correct == 1 { "left" } else { "right" }.into(),
            chosen_level: None,
            correct,
            response_time_s: 1.0,
            left_value: 1.0 - difference,
            right_value: 1.0,
            procedure: procedure.into(),
            difference,
            strikes_left: 0,
            strikes_right: 0,
            break_left_s: None,
            break_right_s: None,
            model_effort_left: None,
            model_effort_right: None,
            aborted: 0,
            log: String::new(),
        }
    }

    #[test]
    fn adaptive_runs_get_a_track_with_a_point_per_trial() {
        let mut trials = Vec::new();
        for k in 0..10 {
            let d = 0.4 - 0.03 * f64::from(k);
            trials.push(staircase_trial(
                "staircase-1",
                2 * k + 1,
                d,
                (k % 3 != 2) as u8,
            ));
            trials.push(staircase_trial("staircase-2", 2 * k + 2, d + 0.1, 1));
        }
        let options = FitOptions {
            bootstrap_samples: 0,
            ..FitOptions::default()
        };
        let analysis = analyse(&trials, &[], &options);
        let dir = tempfile::tempdir().unwrap();
        let written = write_figures(&analysis, &trials, dir.path()).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        // No pairs of levels; names made safe for a file system.
        assert_eq!(
            names,
            [
                "psychometric-force_feedback.svg",
                "track-p_1-force_feedback.svg"
            ]
        );
        let track = std::fs::read_to_string(&written[1]).unwrap();
        assert_eq!(track.matches("<circle").count(), 20, "one point per trial");
        assert!(track.contains("staircase-1") && track.contains("staircase-2"));
    }
}
