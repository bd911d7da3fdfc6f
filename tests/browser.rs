//! The viewer page end to end in a real browser: `web/e2e/viewer.cjs`
//! drives Debian's Chromium with playwright-core (installed by build.rs's
//! `npm ci`) against a replay of a lockstep demo.
//!
//! Needs `/usr/bin/chromium` (`.ci/run` installs it). Without it the test
//! says so and passes, unless `TESSERA_BROWSER_TEST=required` (as in CI),
//! when it fails.
#![cfg(feature = "page")]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

const CHROMIUM: &str = "/usr/bin/chromium";

/// Ends the child with SIGINT (as Ctrl-C would) when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        // SAFETY: signalling a child process this test started.
        unsafe {
            libc::kill(self.0.id() as libc::pid_t, libc::SIGINT);
        }
        let _ = self.0.wait();
    }
}

#[test]
fn the_page_draws_the_tile_maps_stress_follows_the_break_and_seeks_back() {
    if !Path::new(CHROMIUM).exists() {
        let required = std::env::var("TESSERA_BROWSER_TEST").is_ok_and(|v| v == "required");
        assert!(
            !required,
            "{CHROMIUM} is missing (apt-get install chromium)"
        );
        eprintln!("skipped: {CHROMIUM} is missing (apt-get install chromium; .ci/run does)");
        return;
    }
    let tessera = env!("CARGO_BIN_EXE_tessera");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("demo.mcap");
    let recorded = Command::new(tessera)
        .args([
            "demo",
            "--lockstep",
            "--no-ui",
            "--seconds",
            "5",
            "--json",
            "--record",
        ])
        .arg(&log)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(recorded.success());
    // Paced at real time, waiting at its start and held open at its end, so
    // the page can pause, look and seek.
    let mut replay = Command::new(tessera)
        .arg("replay")
        .arg(&log)
        .args(["--paused", "--hold", "--speed", "1", "--ui", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = replay.stderr.take().unwrap();
    let replay = Running(replay);
    let mut lines = BufReader::new(stderr).lines();
    let url = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|line| line.strip_prefix("viewer: ").map(str::to_string))
        .expect("the viewer's URL");
    // Keep reading stderr so the replay never blocks on it.
    std::thread::spawn(move || lines.for_each(drop));
    let screenshot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("viewer-after-the-break.png");
    let output = Command::new("node")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("web/e2e/viewer.cjs"))
        .arg(&url)
        .arg(&screenshot)
        .env("NODE_PATH", env!("TESSERA_WEB_NODE_MODULES"))
        .output()
        .expect("node");
    drop(replay);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    for expected in [
        "the canvas draws the tile",
        "the stress toggle changes",
        "after the break",
        "seeking back to 1 s restores",
        "no page errors",
    ] {
        assert!(stdout.contains(&format!("ok: {expected}")), "{stdout}");
    }
    assert!(screenshot.exists());
    eprintln!("{stdout}screenshot: {}", screenshot.display());
}
