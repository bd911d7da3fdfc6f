//! `tessera study run` with the model participant in lockstep, and
//! `tessera study analyze` on what it wrote.

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn tessera(args: &[&str], dir: &Path) -> Output {
    common::tessera_in(dir, args)
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The shipped study with one repetition of each ordered pair (6 trials a
/// session) and the model's noise as given.
fn small_study(dir: &Path, repetitions: u32) -> std::path::PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/studies/plate-weakness.toml"),
    )
    .unwrap()
    .replace("repetitions = 5", &format!("repetitions = {repetitions}"));
    let path = dir.join("small.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn rows(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_owned).collect())
        .collect()
}

#[test]
fn the_same_seed_gives_the_same_csv_and_analyze_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let study = small_study(dir.path(), 1);
    let study = study.to_str().unwrap();
    let model = "scripted:weber=0,lapse=0";
    for id in ["a", "b"] {
        ok(&tessera(
            &[
                "study",
                "run",
                study,
                "--participant",
                id,
                "--model",
                model,
                "--seed",
                "5",
            ],
            dir.path(),
        ));
    }
    let a = std::fs::read_to_string(dir.path().join("results/a/trials.csv")).unwrap();
    let b = std::fs::read_to_string(dir.path().join("results/b/trials.csv")).unwrap();
    assert_eq!(a.lines().count(), 13, "a header and 2 sessions × 6 trials");
    let strip = |t: &str| -> Vec<String> {
        t.lines()
            .skip(1)
            .map(|l| l.split_once(',').unwrap().1.to_owned())
            .collect()
    };
    assert_eq!(strip(&a), strip(&b), "same seed, same trials and answers");
    let header = a.lines().next().unwrap();
    assert!(header.starts_with(
        "participant,session,condition,trial,left_level,right_level,chosen_side,chosen_level,correct,response_time_s"
    ), "{header}");
    for row in rows(&dir.path().join("results/a/trials.csv")) {
        assert!(row[8] == "0" || row[8] == "1", "{row:?}");
        assert!(
            dir.path()
                .join("results/a")
                .join(&row[row.len() - 1])
                .is_file(),
            "{row:?}"
        );
    }
    // Analysis of both: JSON with the documented fields.
    let out = tessera(
        &["study", "analyze", "results", "--json", "--bootstrap", "50"],
        dir.path(),
    );
    ok(&out);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let conditions = json["conditions"].as_array().unwrap();
    assert_eq!(conditions.len(), 2);
    for c in conditions {
        let pairs = c["pairs"].as_array().unwrap();
        assert_eq!(pairs.len(), 3);
        for p in pairs {
            assert_eq!(p["trials"], 4, "two participants × both orders");
            let correct = p["correct"].as_u64().unwrap();
            assert_eq!(p["percent_correct"], 25.0 * correct as f64);
            let (pv, pb) = (
                p["p_value"].as_f64().unwrap(),
                p["p_bonferroni"].as_f64().unwrap(),
            );
            assert!(pv > 0.0 && pv <= pb && pb <= 1.0, "{p}");
        }
    }
}

#[test]
fn a_killed_study_resumes_with_no_trial_lost_or_repeated() {
    let dir = tempfile::tempdir().unwrap();
    let study = small_study(dir.path(), 1);
    let study = study.to_str().unwrap();
    let args = [
        "study",
        "run",
        study,
        "--participant",
        "p1",
        "--model",
        "scripted",
        "--seed",
        "9",
    ];
    // The reference: the whole run at once.
    ok(&tessera(&args, dir.path()));
    let whole = std::fs::read_to_string(dir.path().join("results/p1/trials.csv")).unwrap();
    // Again, killed with SIGKILL once three trials are on disk.
    let out_dir = dir.path().join("killed");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .args(["--out", out_dir.to_str().unwrap()])
        .current_dir(dir.path())
        .env("TESSERA_CACHE_DIR", dir.path().join("cache"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let trials = out_dir.join("p1/trials.csv");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    loop {
        let lines = std::fs::read_to_string(&trials).map_or(0, |t| t.lines().count());
        if lines >= 4 || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let partial = std::fs::read_to_string(&trials).unwrap();
    assert!(
        partial.lines().count() < whole.lines().count(),
        "killed before the end"
    );
    // Without --resume the run refuses to overwrite.
    let again = tessera(
        &[&args[..], &["--out", out_dir.to_str().unwrap()]].concat(),
        dir.path(),
    );
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("--resume"));
    ok(&tessera(
        &[&args[..], &["--out", out_dir.to_str().unwrap(), "--resume"]].concat(),
        dir.path(),
    ));
    let resumed = std::fs::read_to_string(&trials).unwrap();
    assert_eq!(
        resumed, whole,
        "the resumed run wrote exactly the uninterrupted run's rows"
    );
}

#[test]
fn bad_runs_are_refused_with_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let out = tessera(
        &[
            "study",
            "run",
            "plate-weakness",
            "--participant",
            "../x",
            "--model",
            "scripted",
        ],
        dir.path(),
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--participant"));
    let out = tessera(
        &[
            "study",
            "run",
            "plate-weakness",
            "--participant",
            "x",
            "--model",
            "scripted:lapse=3",
        ],
        dir.path(),
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("lapse"));
    let out = tessera(
        &[
            "study",
            "run",
            "no-such-study",
            "--participant",
            "x",
            "--model",
            "scripted",
        ],
        dir.path(),
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("plate-weakness"),
        "lists the shipped studies"
    );
    let out = tessera(&["study", "analyze", "nowhere"], dir.path());
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nowhere"));
}
