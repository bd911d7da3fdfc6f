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

/// The built-in materials with porcelain's weak points left out: the
/// plates then differ by their level alone.
fn without_weak_points(dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/materials.toml"),
    )
    .unwrap();
    let (head, porcelain) = text.split_once("[porcelain]").unwrap();
    let (body, rest) = porcelain.split_once("\n[").unwrap();
    let body = body
        .lines()
        .map(|l| {
            if l.starts_with("weak_point_density_per_m3") {
                "weak_point_density_per_m3 = 0.0"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let path = dir.join("materials.toml");
    std::fs::write(&path, format!("{head}[porcelain]{body}\n\n[{rest}")).unwrap();
    path
}

#[test]
fn the_same_seed_gives_the_same_csv_and_analyze_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let study = small_study(dir.path(), 1);
    let study = study.to_str().unwrap();
    let materials = without_weak_points(dir.path());
    let model = "scripted:weber=0,lapse=0";
    for id in ["a", "b"] {
        ok(&tessera(
            &[
                "study",
                "run",
                study,
                "--materials",
                materials.to_str().unwrap(),
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
    // The model answers the questionnaire after each session, as it
    // remembered the efforts (its rows' `model_effort_*`).
    let answers = rows(&dir.path().join("results/a/questionnaire.csv"));
    assert_eq!(answers.len(), 2, "{answers:?}");
    for row in &answers {
        let perceived: u8 = row[3].parse().unwrap();
        let confidence: u8 = row[4].parse().unwrap();
        assert!(perceived <= 5 && confidence <= 7, "{row:?}");
    }
    let header = a.lines().next().unwrap();
    assert!(header.starts_with(
        "participant,session,condition,trial,left_level,right_level,chosen_side,chosen_level,correct,response_time_s"
    ), "{header}");
    for row in rows(&dir.path().join("results/a/trials.csv")) {
        // With no noise, no lapses and plates that differ by their level
        // alone, the model is always right, with force feedback and
        // without.
        assert_eq!(row[8], "1", "{row:?}");
        assert!(
            dir.path()
                .join("results/a")
                .join(&row[row.len() - 1])
                .is_file(),
            "{row:?}"
        );
    }
    // A trial's log replays it in a fresh process, the model's closed-loop
    // hand included, in each condition (force feedback off changes what
    // the arm does): the run's first trial, and its last, whose plates
    // took their modal bases and the bases' kept unit shapes warm from the
    // trials before.
    for log in ["session1-trial1.mcap", "session2-trial6.mcap"] {
        let path = dir.path().join("results/a/logs").join(log);
        let out = tessera(
            &[
                "replay",
                path.to_str().unwrap(),
                "--lockstep",
                "--json",
                "--no-ui",
            ],
            dir.path(),
        );
        ok(&out);
        let replay: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(replay["matches"], true, "{log}: {replay}");
        assert!(
            replay["replayed"]["ticks"].as_u64().unwrap() > 1000,
            "{log}: {replay}"
        );
    }
    // Analysis of both: JSON with the documented fields, and figures.
    let out = tessera(
        &[
            "study",
            "analyze",
            "results",
            "--json",
            "--bootstrap",
            "50",
            "--plots",
            "figures",
        ],
        dir.path(),
    );
    ok(&out);
    let figures = dir.path().join("figures");
    let pairs = std::fs::read_to_string(figures.join("pairs.svg")).unwrap();
    assert!(pairs.starts_with("<svg"), "{pairs}");
    for label in [
        "w1 vs w2",
        "w1 vs w3",
        "w2 vs w3",
        "force-feedback",
        "no-force-feedback",
    ] {
        assert!(pairs.contains(label), "pairs.svg names {label}");
    }
    for condition in ["force-feedback", "no-force-feedback"] {
        let curve =
            std::fs::read_to_string(figures.join(format!("psychometric-{condition}.svg"))).unwrap();
        // One circle per difference shown (0.2 and 0.4), and the legend's.
        assert_eq!(curve.matches("<circle").count(), 3, "{condition}");
    }
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

/// The whole shipped study (both conditions, 30 trials each) with the
/// default model, whose noise is fitted to §5.2's answers: it finishes,
/// and, as §5.2's participants were (Table 5.3), the model is right more
/// often on w1 vs w3 than on either adjacent pair.
#[test]
fn the_whole_study_finishes_and_the_widest_pair_is_told_apart_most_often() {
    let dir = tempfile::tempdir().unwrap();
    ok(&tessera(
        &[
            "study",
            "run",
            "plate-weakness",
            "--participant",
            "m",
            "--model",
            "scripted",
        ],
        dir.path(),
    ));
    let rows = csv_rows(&dir.path().join("results/m/trials.csv"));
    assert_eq!(rows.len(), 60);
    for condition in ["force-feedback", "no-force-feedback"] {
        let trials = rows.iter().filter(|r| r["condition"] == condition);
        assert_eq!(trials.count(), 30, "{condition}");
    }
    // Correct answers and trials per pair, both conditions together.
    let share = |pair: [&str; 2]| {
        let trials: Vec<_> = rows
            .iter()
            .filter(|r| {
                let mut levels = [r["left_level"].as_str(), r["right_level"].as_str()];
                levels.sort_unstable();
                levels == pair
            })
            .collect();
        let correct = trials.iter().filter(|r| r["correct"] == "1").count();
        (correct, trials.len())
    };
    let widest = share(["1", "3"]);
    for adjacent in [share(["1", "2"]), share(["2", "3"])] {
        assert_eq!((widest.1, adjacent.1), (20, 20));
        assert!(
            widest.0 > adjacent.0,
            "w1 vs w3 {widest:?}, an adjacent pair {adjacent:?}"
        );
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
    // The model's questionnaire reads the rows on disk, resumed or not.
    let questionnaire = |d: &Path| std::fs::read_to_string(d.join("p1/questionnaire.csv")).unwrap();
    assert_eq!(
        questionnaire(&out_dir),
        questionnaire(&dir.path().join("results"))
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
    // A person's run needs its device before the first trial.
    let out = tessera(
        &[
            "study",
            "run",
            "plate-weakness",
            "--participant",
            "x",
            "--device",
            "hid:tessera-arm",
        ],
        dir.path(),
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be opened"));
    for (device, extra, expected) in [
        ("hid:tessera-arm", "--model", "drives the simulated arm"),
        ("hid:tessera-arm", "--hand", "scripts the simulated arm"),
        ("usb", "--no-ui", "expected `sim` or `hid:PROFILE`"),
    ] {
        let mut args = vec![
            "study",
            "run",
            "plate-weakness",
            "--participant",
            "x",
            "--device",
            device,
            extra,
        ];
        match extra {
            "--model" => args.push("scripted"),
            "--hand" => args.push("configs/hands/plates-strikes.toml"),
            _ => {}
        }
        let out = tessera(&args, dir.path());
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    let out = tessera(&["study", "analyze", "nowhere"], dir.path());
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nowhere"));
}

/// A study for a person's run: levels w1 and w3, one repetition (two
/// trials), force feedback only, a break after every trial.
fn person_study(dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(small_study(dir, 1))
        .unwrap()
        .replace("levels = [0.6, 0.8, 1.0]", "levels = [0.6, 1.0]")
        .replace(
            "[[conditions]]\nname = \"no-force-feedback\"\nforce_feedback = false\n",
            "",
        )
        .replace(
            "name = \"plate-weakness\"",
            "name = \"plate-weakness\"\nbreak_every = 1",
        );
    assert!(text.contains("break_every = 1") && !text.contains("no-force-feedback"));
    let path = dir.join("person.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Spawns `tessera` with piped stdin and stderr, killed after ten minutes
/// if it hangs.
fn spawn_person_run(dir: &Path, args: &[&str], stdin: std::process::Stdio) -> std::process::Child {
    let child = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .current_dir(dir)
        .env("TESSERA_CACHE_DIR", dir.join("cache"))
        .stdin(stdin)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(600));
        let _ = Command::new("kill").args(["-9", &pid]).status();
    });
    child
}

fn csv_rows(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            header
                .iter()
                .map(|h| (*h).to_owned())
                .zip(l.split(',').map(str::to_owned))
                .collect()
        })
        .collect()
}

#[test]
fn a_person_answers_aborts_takes_breaks_and_fills_the_questionnaire_in_the_terminal() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let study = person_study(dir.path());
    let args = [
        "study",
        "run",
        study.to_str().unwrap(),
        "--participant",
        "h1",
        "--no-ui",
    ];
    let mut child = spawn_person_run(dir.path(), &args, std::process::Stdio::piped());
    let mut stdin = child.stdin.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    // Abort the first trial, then left, then right; in the questionnaire
    // a mark out of range (asked again), then 2, 5, a strategy, and Enter.
    let mut keys = ["x", "f", "J"].into_iter();
    let mut questionnaire = ["7", "2", "5", "struck each harder, compared", ""].into_iter();
    let mut in_questionnaire = false;
    let mut seen = Vec::new();
    let mut byte = [0u8];
    while stderr.read(&mut byte).unwrap() == 1 {
        seen.push(byte[0]);
        let text = String::from_utf8_lossy(&seen);
        let reply = if text.ends_with("to begin.\n") || text.ends_with("to go on.\n") {
            Some("")
        } else if text.ends_with("abort the trial.\n") {
            keys.next()
        } else if text.ends_with("Enter skips a question.\n") {
            in_questionnaire = true;
            None
        } else if in_questionnaire && text.ends_with("? ") {
            questionnaire.next()
        } else {
            None
        };
        if let Some(line) = reply {
            writeln!(stdin, "{line}").unwrap();
        }
    }
    let status = child.wait().unwrap();
    let seen = String::from_utf8_lossy(&seen);
    assert!(status.success(), "{seen}");
    assert_eq!(
        seen.matches("Break.").count(),
        1,
        "after trial 1 of 2: {seen}"
    );
    assert!(seen.contains("type a whole number from 0 to 5"), "{seen}");
    let results = dir.path().join("results/h1");
    let trials = csv_rows(&results.join("trials.csv"));
    assert_eq!(trials.len(), 2, "{seen}");
    for (row, (side, aborted)) in trials.iter().zip([("left", "1"), ("right", "0")]) {
        assert_eq!(row["chosen_side"], side);
        assert_eq!(row["aborted"], aborted);
        // Right when the chosen plate has the lower level (is weaker).
        let (left, right): (u32, u32) = (
            row["left_level"].parse().unwrap(),
            row["right_level"].parse().unwrap(),
        );
        let weaker = if left < right { "left" } else { "right" };
        assert_eq!(row["correct"], if side == weaker { "1" } else { "0" });
    }
    assert!(results.join("logs/session1-trial1-aborted1.mcap").is_file());
    assert!(results.join("logs/session1-trial1.mcap").is_file());
    let answers = std::fs::read_to_string(results.join("questionnaire.csv")).unwrap();
    assert_eq!(
        answers.lines().nth(1),
        Some("h1,1,force-feedback,2,5,\"struck each harder, compared\","),
        "{answers}"
    );
}

#[test]
fn a_participant_answers_in_the_viewer_and_sees_the_prompts() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let study = person_study(dir.path());
    let text = std::fs::read_to_string(&study)
        .unwrap()
        .replace("break_every = 1", "break_every = 0");
    std::fs::write(&study, text).unwrap();
    let args = [
        "study",
        "run",
        study.to_str().unwrap(),
        "--participant",
        "v1",
        "--ui",
        "127.0.0.1:0",
    ];
    // No terminal input: the viewer is the only way to answer.
    let mut child = spawn_person_run(dir.path(), &args, std::process::Stdio::null());
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let addr = loop {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "no viewer URL");
        if let Some(url) = line.trim().strip_prefix("viewer: http://") {
            break url.trim_end_matches('/').to_owned();
        }
    };
    let printed = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut rest);
        rest
    });
    let (mut socket, _) = tungstenite::connect(format!("ws://{addr}/ws")).unwrap();
    let mut prompts = Vec::new();
    let mut echoed = 0;
    loop {
        let message = match socket.read() {
            Ok(tungstenite::Message::Text(text)) => text,
            Ok(_) => continue,
            Err(_) => break,
        };
        let message: serde_json::Value = serde_json::from_str(&message).unwrap();
        match message["type"].as_str() {
            Some("prompt") => {
                let text = message["text"].as_str().unwrap().to_owned();
                let key = if text.contains("to begin") {
                    Some(" ")
                } else if text.starts_with("Trial") {
                    Some("j")
                } else {
                    None
                };
                prompts.push(text.clone());
                if let Some(key) = key {
                    let answer = serde_json::json!({"type": "answer", "key": key});
                    socket
                        .send(tungstenite::Message::text(answer.to_string()))
                        .unwrap();
                }
                if text.contains("The study is over") {
                    break;
                }
            }
            Some("answer") => echoed += 1,
            _ => {}
        }
    }
    drop(socket);
    let status = child.wait().unwrap();
    let printed = printed.join().unwrap();
    assert!(status.success(), "{printed}");
    assert!(
        prompts[0].contains("Two plates lie before you"),
        "{prompts:?}"
    );
    assert!(
        prompts.iter().any(|p| p.starts_with("Trial 2 of 2")),
        "{prompts:?}"
    );
    assert_eq!(echoed, 3, "the start and two answers were taken");
    let trials = csv_rows(&dir.path().join("results/v1/trials.csv"));
    assert_eq!(trials.len(), 2);
    assert!(trials.iter().all(|r| r["chosen_side"] == "right"));
    assert!(
        printed.contains("questionnaire of session 1 skipped"),
        "{printed}"
    );
}

#[test]
fn a_person_left_with_no_way_to_answer_stops_with_a_reason() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let study = person_study(dir.path());
    let args = [
        "study",
        "run",
        study.to_str().unwrap(),
        "--participant",
        "gone",
        "--no-ui",
    ];
    // Enter starts the session, then the terminal's input closes.
    let mut child = spawn_person_run(dir.path(), &args, std::process::Stdio::piped());
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin).unwrap();
    drop(stdin);
    let mut printed = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut printed)
        .unwrap();
    assert!(!child.wait().unwrap().success(), "{printed}");
    assert!(printed.contains("nothing can answer"), "{printed}");
    let trials = dir.path().join("results/gone/trials.csv");
    assert_eq!(
        std::fs::read_to_string(trials)
            .unwrap_or_default()
            .lines()
            .count(),
        0,
        "no trial recorded"
    );
}
