//! `tessera study`: perception studies. `run` is in `study_run.rs`;
//! `analyze` reads the results of
//! `study run` (`DIR/ID/trials.csv`, `questionnaire.csv`) and reports
//! Glondu 2012 §5.2.3's tables and tests.

use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use tessera::study::analysis::{self, Analysis};
use tessera::study::psychometric::{FitOptions, Shape};
use tessera::study::{QuestionnaireRecord, TrialRecord};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: StudyCommand,
}

#[derive(Debug, clap::Subcommand)]
enum StudyCommand {
    /// Runs a study for one participant: a person (real time; keys in the
    /// terminal or the viewer, device buttons) or the model participant
    /// (the simulated arm, in lockstep).
    Run(super::study_run::RunArgs),
    /// Tables and tests of a study's results: per condition the choice
    /// matrix, percentage correct per pair with binomial tests, between
    /// conditions signed-rank tests, the confidence marks' Friedman test,
    /// staircase thresholds and a psychometric fit; figures with --plots.
    Analyze(AnalyzeArgs),
}

#[derive(Debug, clap::Args)]
pub struct AnalyzeArgs {
    /// Results directories: a participant's (holding trials.csv) or one
    /// holding participants' directories.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    json: bool,
    /// The psychometric function fitted to percentage correct against
    /// the plates' difference.
    #[arg(long, value_enum, default_value = "logistic")]
    shape: ShapeArg,
    /// Parametric-bootstrap samples of the fit's confidence intervals.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    bootstrap: u32,
    /// Also write the figures (SVG) here: psychometric curves with their
    /// data, percentage correct per pair, adaptive runs' tracks.
    #[arg(long, value_name = "DIR")]
    plots: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ShapeArg {
    Logistic,
    Weibull,
}

pub fn run(args: &Args, cli: &super::Cli) -> anyhow::Result<()> {
    match &args.command {
        StudyCommand::Run(a) => {
            super::Stop::install().and_then(|stop| super::study_run::run(a, cli, &stop))
        }
        StudyCommand::Analyze(a) => analyze(a),
    }
}

/// The participants' directories under `dirs`.
fn participant_dirs(dirs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for dir in dirs {
        if dir.join("trials.csv").is_file() {
            out.push(dir.clone());
            continue;
        }
        let entries = std::fs::read_dir(dir).with_context(|| format!("{}", dir.display()))?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("trials.csv").is_file())
            .collect();
        if found.is_empty() {
            bail!(
                "{}: no trials.csv here or in its subdirectories (give `study run --out` directories)",
                dir.display()
            );
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

/// The rows of a CSV file; a bad row names the file and its line.
fn read_rows<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<Vec<T>> {
    let mut reader = csv::Reader::from_path(path).with_context(|| format!("{}", path.display()))?;
    let mut rows = Vec::new();
    for row in reader.deserialize() {
        let row: T = row.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            anyhow::anyhow!("{}:{line}: {e}", path.display())
        })?;
        rows.push(row);
    }
    Ok(rows)
}

fn analyze(args: &AnalyzeArgs) -> anyhow::Result<()> {
    let mut trials: Vec<TrialRecord> = Vec::new();
    let mut questionnaires: Vec<QuestionnaireRecord> = Vec::new();
    for dir in participant_dirs(&args.dirs)? {
        trials.extend(read_rows::<TrialRecord>(&dir.join("trials.csv"))?);
        let q = dir.join("questionnaire.csv");
        if q.is_file() {
            questionnaires.extend(read_rows::<QuestionnaireRecord>(&q)?);
        }
    }
    if trials.is_empty() {
        bail!(
            "no trials in {}",
            args.dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let options = FitOptions {
        shape: match args.shape {
            ShapeArg::Logistic => Shape::Logistic,
            ShapeArg::Weibull => Shape::Weibull,
        },
        bootstrap_samples: args.bootstrap as usize,
        ..FitOptions::default()
    };
    let analysis = analysis::analyse(&trials, &questionnaires, &options);
    if let Some(dir) = &args.plots {
        std::fs::create_dir_all(dir).with_context(|| format!("--plots {}", dir.display()))?;
        for path in tessera::study::plots::write_figures(&analysis, &trials, dir)? {
            eprintln!("wrote {}", path.display());
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&analysis)?);
    } else {
        print!("{}", report(&analysis));
    }
    Ok(())
}

/// The analysis as text tables.
fn report(a: &Analysis) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(out, "participants: {}", a.participants.join(", "));
    for c in &a.conditions {
        let _ = writeln!(
            out,
            "\ncondition {}: {} trials, {:.1} % correct",
            c.name, c.trials, c.percent_correct
        );
        if !c.weaker_counts.is_empty() {
            let _ = writeln!(out, "  times w_i judged weaker than w_j (Table 5.3):");
            let header: String = (1..=c.weaker_counts.len())
                .map(|j| format!("{:>6}", format!("w{j}")))
                .collect();
            let _ = writeln!(out, "        {header}");
            for (i, row) in c.weaker_counts.iter().enumerate() {
                let cells: String = row
                    .iter()
                    .enumerate()
                    .map(|(j, n)| {
                        if i == j {
                            format!("{:>6}", "")
                        } else {
                            format!("{n:>6}")
                        }
                    })
                    .collect();
                let _ = writeln!(out, "    w{:<3}{cells}", i + 1);
            }
        }
        for p in &c.pairs {
            let sd = p
                .sd_percent_correct
                .map_or("–".to_owned(), |s| format!("{s:.1}"));
            let _ = writeln!(
                out,
                "  w{} vs w{}: {:>3}/{:<3} {:5.1} % correct (sd {sd}), binomial p = {}, Bonferroni p = {}",
                p.levels[0], p.levels[1], p.correct, p.trials, p.percent_correct, p_text(p.p_value), p_text(p.p_bonferroni)
            );
        }
        for t in &c.adaptive {
            let threshold = t.threshold.map_or("none".to_owned(), |v| format!("{v:.4}"));
            let _ = writeln!(
                out,
                "  {} {}: {} trials, threshold {threshold} (last {} reversals)",
                t.participant, t.procedure, t.trials, t.reversals
            );
        }
        match (&c.fit, &c.fit_error) {
            (Some(f), _) => {
                let p = f.parameters;
                let ci = f
                    .threshold_ci
                    .map_or(String::new(), |i| format!(" [{:.4}, {:.4}]", i.low, i.high));
                let _ = writeln!(
                    out,
                    "  psychometric fit ({:?}): threshold {:.4}{ci}, slope {:.3}, lapse {:.3}",
                    f.shape, p.threshold, p.slope, p.lapse_rate
                );
            }
            (None, Some(e)) => {
                let _ = writeln!(out, "  no psychometric fit: {e}");
            }
            (None, None) => {}
        }
    }
    for b in &a.between_conditions {
        let _ = writeln!(
            out,
            "\n{} vs {} (Wilcoxon signed-rank on participants' % correct):",
            b.conditions[0], b.conditions[1]
        );
        for p in &b.pairs {
            match (&p.test, &p.error) {
                (Some(t), _) => {
                    let _ = writeln!(
                        out,
                        "  w{} vs w{}: {} participants, W = {}, p = {}",
                        p.levels[0],
                        p.levels[1],
                        p.participants,
                        t.statistic,
                        p_text(t.p_value)
                    );
                }
                (None, e) => {
                    let _ = writeln!(
                        out,
                        "  w{} vs w{}: no test ({})",
                        p.levels[0],
                        p.levels[1],
                        e.as_deref().unwrap_or("")
                    );
                }
            }
        }
    }
    if let Some(c) = &a.confidence {
        let _ = writeln!(out, "\nconfidence (0–7):");
        for (name, mean, sd) in &c.per_condition {
            let sd = sd.map_or("–".to_owned(), |s| format!("{s:.2}"));
            let _ = writeln!(out, "  {name}: mean {mean:.2}, sd {sd}");
        }
        match (&c.friedman, &c.error) {
            (Some(f), _) => {
                let _ = writeln!(
                    out,
                    "  Friedman χ² = {:.3}, p = {}",
                    f.statistic,
                    p_text(f.p_value)
                );
            }
            (None, Some(e)) => {
                let _ = writeln!(out, "  no Friedman test: {e}");
            }
            _ => {}
        }
    }
    out
}

/// A p-value to three significant digits.
fn p_text(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.3}")
    } else {
        format!("{p:.2e}")
    }
}
