//! Sessions as processes: a clean stop on SIGINT and SIGTERM, logs that
//! carry everything a replay needs (from any directory, with a copied
//! binary), and replays that say what differs.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn command(binary: &Path, dir: &Path, cache: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(binary);
    command
        .args(args)
        .current_dir(dir)
        .env("TESSERA_CACHE_DIR", cache)
        .env_remove("RUST_LOG");
    command
}

fn tessera() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tessera"))
}

fn output(dir: &Path, cache: &Path, args: &[&str]) -> Output {
    command(&tessera(), dir, cache, args)
        .output()
        .expect("run tessera")
}

/// A long lockstep demo recording `log`, started in `dir`.
fn long_demo(dir: &Path, cache: &Path, log: &Path) -> Child {
    command(
        &tessera(),
        dir,
        cache,
        &[
            "demo",
            "--lockstep",
            "--seconds",
            "3000",
            "--json",
            "--record",
            log.to_str().unwrap(),
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawn tessera")
}

/// Waits until `log` holds some ticks (the session runs), at most 120 s.
fn wait_until_running(log: &Path, child: &mut Child) {
    let start = Instant::now();
    while std::fs::metadata(log).map_or(0, |m| m.len()) < 200_000 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the session ended early"
        );
        assert!(start.elapsed() < Duration::from_secs(120), "never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, signal: i32) {
    // SAFETY: sends a signal to our own child process.
    let sent = unsafe { libc::kill(child.id() as i32, signal) };
    assert_eq!(sent, 0);
}

#[test]
fn sigint_and_sigterm_stop_a_session_cleanly_and_its_log_replays_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    for (sig, status) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let log = dir.path().join(format!("stopped-{sig}.mcap"));
        let mut child = long_demo(dir.path(), &cache, &log);
        wait_until_running(&log, &mut child);
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(status),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let summary: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("the summary is printed");
        assert_eq!(summary["interrupted"], true);
        let ticks = summary["haptic"]["ticks"].as_u64().unwrap();
        assert!(ticks > 0 && ticks < 3_000_000, "{ticks}");

        let info = output(
            dir.path(),
            &cache,
            &["log", "info", "--json", log.to_str().unwrap()],
        );
        let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
        assert_eq!(info["complete"], true, "summary and footer written: {info}");
        assert!(info["truncated"].is_null(), "{info}");
        assert_eq!(info["ticks"].as_u64(), Some(ticks), "no tick lost");
        assert_eq!(info["events"]["interrupted"], 1);

        // Another directory, with nothing of the source tree beside it.
        let elsewhere = tempfile::tempdir().unwrap();
        let out = output(
            elsewhere.path(),
            &cache,
            &["replay", log.to_str().unwrap(), "--lockstep", "--json"],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let replay: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(replay["matches"], true, "{replay}");
        assert_eq!(replay["replayed"]["ticks"].as_u64(), Some(ticks));
    }
}

#[test]
fn a_second_sigint_ends_the_process_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let log = dir.path().join("twice.mcap");
    let mut child = long_demo(dir.path(), &cache, &log);
    wait_until_running(&log, &mut child);
    signal(&child, libc::SIGINT);
    signal(&child, libc::SIGINT);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
}

/// A short lockstep demo log in `dir`.
fn short_log(dir: &Path, cache: &Path) -> PathBuf {
    let log = dir.join("short.mcap");
    let out = output(
        dir,
        cache,
        &[
            "demo",
            "--lockstep",
            "--seconds",
            "2",
            "--json",
            "--record",
            log.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    log
}

#[test]
fn replays_name_truncated_damaged_and_overridden_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cache = d.join("cache");
    let log = short_log(d, &cache);
    let bytes = std::fs::read(&log).unwrap();

    // Truncated: reported as such, compared as far as it goes, non-zero.
    let truncated = d.join("truncated.mcap");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let out = output(
        d,
        &cache,
        &[
            "replay",
            truncated.to_str().unwrap(),
            "--lockstep",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(3));
    let replay: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(replay["truncated"].is_string(), "{replay}");
    assert_eq!(replay["matches"], false);
    assert!(
        replay["first_divergence"].is_null(),
        "a prefix of the same run: {replay}"
    );

    // Edited after it was written (the session length made absurd): the
    // chunk's CRC no longer matches, nothing is replayed.
    let at = bytes
        .windows(12)
        .position(|w| w == b"\"seconds\":2.")
        .expect("the configuration's length");
    let mut edited = bytes.clone();
    edited[at + 10..at + 12].copy_from_slice(b"9e");
    let damaged = d.join("edited.mcap");
    std::fs::write(&damaged, edited).unwrap();
    let out = output(
        d,
        &cache,
        &["replay", damaged.to_str().unwrap(), "--lockstep"],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("edited.mcap") && err.contains("CRC"), "{err}");

    // An edited scene given on the command line: said, and the replay
    // differs.
    let scene = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/scenes/tile-strike.toml"
    ))
    .unwrap();
    let line = scene
        .lines()
        .position(|l| l.starts_with("friction"))
        .expect("a friction line");
    let edited: Vec<String> = scene
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == line {
                "friction = 0.05".into()
            } else {
                l.to_owned()
            }
        })
        .collect();
    let scene_file = d.join("edited-scene.toml");
    std::fs::write(&scene_file, edited.join("\n") + "\n").unwrap();
    let out = output(
        d,
        &cache,
        &[
            "replay",
            log.to_str().unwrap(),
            "--lockstep",
            "--scene",
            scene_file.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("line {}", line + 1)) && err.contains("friction = 0.05"),
        "{err}"
    );
}

#[test]
fn a_binary_copied_away_from_the_source_tree_runs_the_demo() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("tessera");
    std::fs::copy(tessera(), &binary).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = command(
        &binary,
        &work,
        &dir.path().join("cache"),
        &["demo", "--lockstep", "--seconds", "0.5", "--json"],
    )
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(work.join("tessera-demo.mcap").is_file());
    let out = command(&binary, &work, &dir.path().join("cache"), &["devices"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("tessera-arm"));
}

#[test]
fn waiting_for_a_device_says_so_and_ctrl_c_gives_up() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let mut child = command(
        &tessera(),
        dir.path(),
        &dir.path().join("cache"),
        &[
            "serve",
            "--device",
            "hid:tessera-arm",
            "--wait-for-device",
            "--seconds",
            "1",
        ],
    )
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains("waiting for") {
        let n = stderr.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "ended without waiting: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    signal(&child, libc::SIGINT);
    stderr.read_to_end(&mut seen).unwrap();
    let status = child.wait().unwrap();
    let text = String::from_utf8_lossy(&seen);
    assert_eq!(status.code(), Some(1), "{text}");
    assert!(text.contains("gave up waiting"), "{text}");
}

#[test]
fn a_log_holds_the_mesh_files_its_scene_reads() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cache = d.join("cache");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/cube.msh"),
        d.join("cube.msh"),
    )
    .unwrap();
    let scene = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/scenes/tile-strike.toml"
    ))
    .unwrap()
    .replace("mesh = \"tile:0.15,0.006:24,2\"", "mesh = \"cube.msh\"")
    .replace("hand = \"../hands/", "hand = \"hands/");
    std::fs::create_dir(d.join("hands")).unwrap();
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/configs/hands/tile-strikes.toml"
        ),
        d.join("hands/tile-strikes.toml"),
    )
    .unwrap();
    std::fs::write(d.join("cube-strike.toml"), scene).unwrap();
    let log = d.join("cube.mcap");
    let out = output(
        d,
        &cache,
        &[
            "serve",
            "--scene",
            "cube-strike.toml",
            "--lockstep",
            "--seconds",
            "1",
            "--record",
            log.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The scene, its mesh and its hand are gone: the log has them.
    for file in ["cube.msh", "cube-strike.toml", "hands/tile-strikes.toml"] {
        std::fs::remove_file(d.join(file)).unwrap();
    }
    let elsewhere = tempfile::tempdir().unwrap();
    let out = output(
        elsewhere.path(),
        &cache,
        &["replay", log.to_str().unwrap(), "--lockstep", "--json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let replay: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(replay["matches"], true, "{replay}");
}
