//! The `tessera` command end to end: JSON output, exports, errors.

use std::process::Command;

fn tessera(args: &[&str], cache: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .env("TESSERA_CACHE_DIR", cache)
        .env_remove("RUST_LOG")
        .output()
        .expect("run tessera")
}

/// A JSON array of numbers as a vector.
/// The JSON a run printed, after checking it succeeded (its stderr if not).
fn json_of(out: std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn numbers(array: &serde_json::Value) -> Vec<f64> {
    let array = array.as_array().expect("an array");
    array
        .iter()
        .map(|v| v.as_f64().expect("a number"))
        .collect()
}

#[test]
fn modes_json_reports_frequencies_counts_and_phases() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "modes",
        "--mesh",
        "box:0.2,0.1,0.01:10,5,1",
        "--material",
        "porcelain",
        "--modes",
        "12",
        "--json",
    ];
    let out = tessera(&args, dir.path());
    let json = json_of(out);
    let frequencies = numbers(&json["frequencies_hz"]);
    assert_eq!(frequencies.len(), 12);
    assert!(frequencies.windows(2).all(|w| w[0] <= w[1]) && frequencies[0] > 100.0);
    assert_eq!(json["tets"], 300);
    assert_eq!(json["nodes"], 11 * 6 * 2);
    assert!(json["seconds"]["factorization"].is_number() && json["seconds"]["total"].is_number());
    assert_eq!(json["from_cache"], false);
    // Second run: from the cache, same frequencies.
    let again = tessera(&args, dir.path());
    let json2: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(json2["from_cache"], true);
    assert_eq!(json2["frequencies_hz"], json["frequencies_hz"]);
    assert_eq!(json["ordering"], "nested-dissection");
    // The other ordering, solved again: the same modes from another factor.
    let mut minimum_degree = args.to_vec();
    minimum_degree.extend(["--ordering", "minimum-degree", "--no-cache"]);
    let json3: serde_json::Value =
        serde_json::from_slice(&tessera(&minimum_degree, dir.path()).stdout).unwrap();
    assert_eq!(json3["ordering"], "minimum-degree");
    assert_ne!(json3["solver"]["factor_nnz"], json["solver"]["factor_nnz"]);
    for (a, b) in numbers(&json3["frequencies_hz"])
        .into_iter()
        .zip(frequencies)
    {
        assert!((a - b).abs() <= 1e-9 * b, "{a} against {b} Hz");
    }
}

#[test]
fn export_mtx_writes_the_eigenproblem() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("mtx");
    let out = tessera(
        &[
            "modes",
            "--mesh",
            "box:0.1,0.1,0.1:2,2,2",
            "--material",
            "concrete",
            "--modes",
            "5",
            "--no-cache",
            "--export-mtx",
            export.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let k = std::fs::read_to_string(export.join("K.mtx")).unwrap();
    assert!(k.starts_with("%%MatrixMarket matrix coordinate real symmetric"));
    let header: Vec<usize> = k
        .lines()
        .find(|l| !l.starts_with('%'))
        .unwrap()
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    // 125 nodes: the 27 corners and the midpoints of the 98 edges.
    assert_eq!(header[0], 375);
    assert_eq!(
        k.lines().filter(|l| !l.starts_with('%')).count() - 1,
        header[2]
    );
    let m = std::fs::read_to_string(export.join("M.mtx")).unwrap();
    assert_eq!(m.lines().filter(|l| !l.starts_with('%')).count(), 376);
    let problem: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(export.join("eigenproblem.json")).unwrap())
            .unwrap();
    assert_eq!(problem["modes"], 5);
    assert!(problem["shift"].as_f64().unwrap() < 0.0);
}

#[test]
fn errors_are_clear_and_exit_nonzero() {
    let dir = tempfile::tempdir().unwrap();
    for (args, want) in [
        (
            vec![
                "modes",
                "--mesh",
                "box:1,1:2,2,2",
                "--material",
                "porcelain",
            ],
            "expected 3 numbers",
        ),
        (
            vec![
                "modes",
                "--mesh",
                "box:0.1,0.1,0.1:2,2,2",
                "--material",
                "unobtainium",
            ],
            "no material named `unobtainium`",
        ),
        (
            vec!["modes", "--mesh", "missing.node", "--material", "porcelain"],
            "missing.node",
        ),
        (
            vec![
                "modes",
                "--mesh",
                "box:0.1,0.1,0.1:2,2,2",
                "--material",
                "porcelain",
                "--ordering",
                "random",
            ],
            "unknown ordering `random`",
        ),
        (
            vec![
                "modes",
                "--mesh",
                "box:0.1,0.1,0.1:1,1,1",
                "--material",
                "porcelain",
                "--modes",
                "80",
            ],
            "only 81 DOFs",
        ),
        (
            vec![
                "--materials",
                "/nonexistent.toml",
                "modes",
                "--mesh",
                "box:1,1,1:1,1,1",
                "--material",
                "x",
            ],
            "/nonexistent.toml",
        ),
        (
            vec!["mesh", "--mesh", "box:1,1,1:1,1,1", "--out", "x.stl"],
            "expected a .obj",
        ),
        (
            vec!["demo", "--speed", "1000", "--no-ui"],
            "outside 0.01..=100",
        ),
        (
            vec![
                "serve",
                "--device",
                "hid:tessera-arm",
                "--speed",
                "1",
                "--no-ui",
            ],
            "need the simulated arm",
        ),
        (vec!["demo", "--hold", "--no-ui"], "cannot be used with"),
        // A bare --ui is the viewer at its default address.
        (vec!["demo", "--ui", "--no-ui"], "cannot be used with"),
        (vec!["demo", "--ui", "somewhere"], "invalid socket address"),
    ] {
        let out = tessera(&args, dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(want), "{args:?}: `{stderr}` lacks `{want}`");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn mesh_command_converts_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let vtu = dir.path().join("plate.vtu");
    let out = tessera(
        &[
            "mesh",
            "--mesh",
            "plate:0.1,0.005:6,1",
            "--out",
            vtu.to_str().unwrap(),
            "--json",
        ],
        dir.path(),
    );
    let json = json_of(out);
    assert_eq!(json["tets"], 3 * 6 * 36);
    assert!(std::fs::read_to_string(vtu)
        .unwrap()
        .contains("UnstructuredGrid"));
}

#[test]
fn fracture_json_reports_fragments_cracks_and_phases() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("frags");
    let mut args = small_tile_fracture();
    args.extend_from_slice(&[
        "--impact",
        "0,0,0.006:0,0,-1:2.0",
        "--json",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let out = tessera(&args, dir.path());
    let json = json_of(out);
    let fragments = json["fragments"].as_array().unwrap();
    assert!(fragments.len() > 1);
    let volume: f64 = fragments
        .iter()
        .map(|f| f["volume_m3"].as_f64().unwrap())
        .sum();
    assert!((volume - 0.15 * 0.15 * 0.006).abs() < 1e-9 * volume);
    assert!(fragments
        .iter()
        .all(|f| f["mass_kg"].as_f64().unwrap() > 0.0 && f["triangles"].as_u64().unwrap() >= 4));
    assert!(json["crack_area_m2"].as_f64().unwrap() > 0.0);
    let stops: Vec<&str> = json["cracks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["stop"].as_str().unwrap())
        .collect();
    assert!(stops
        .iter()
        .all(|s| ["energy", "boundary", "collision"].contains(s)));
    for phase in ["initiation", "propagation", "meshing", "total"] {
        assert!(json["milliseconds"][phase].is_number(), "{phase}");
    }
    // One passing contact: its static-correction residual is one direct
    // solve, no kept shapes.
    assert_eq!(
        json["residual_loads"],
        serde_json::json!({ "solved": 1, "from_unit_shapes": 0 })
    );
    // Glondu's Alg. 3: at most one crack per time sample by default.
    let samples = json["events"][0]["steps"].as_u64().unwrap();
    assert!(stops.len() as u64 <= samples, "{} cracks", stops.len());
    // One contact, elastic by default: it exchanges the whole computed
    // impulse.
    let exchanged = json["events"][0]["contact_impulses_n_s"]
        .as_array()
        .unwrap();
    let striking = json["events"][0]["contact"]["striking_impulse_n_s"]
        .as_f64()
        .unwrap();
    assert_eq!(exchanged.len(), 1);
    assert!((exchanged[0].as_f64().unwrap() - striking).abs() <= 1e-12 * striking);
    // The peak stress is read within the contact, and its first phase
    // presses no harder than the whole event.
    let event = &json["events"][0];
    let peak_s = event["peak_stress_time_s"].as_f64().unwrap();
    assert!(peak_s > 0.0 && peak_s <= event["contact_duration_s"].as_f64().unwrap());
    let first = event["contact"]["first_phase_peak_force_n"]
        .as_f64()
        .unwrap();
    assert!(first > 0.0 && first <= event["contact"]["peak_force_n"].as_f64().unwrap());
    assert!(out_dir.join("fracture.vtu").exists());
    assert_eq!(
        std::fs::read_dir(&out_dir)
            .unwrap()
            .filter(|e| e
                .as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "obj"))
            .count(),
        fragments.len()
    );

    let refused = |extra: &[&str], message: &str| {
        let out = tessera(&[&args[..9], extra].concat(), dir.path());
        assert!(!out.status.success(), "{extra:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{extra:?}: {stderr}");
    };
    refused(&["--impact", "0,0:0,0,-1:1"], "the point needs 3 numbers");
    refused(
        &["--cracks-per-sample", "0"],
        "invalid value '0' for '--cracks-per-sample",
    );
    // γ is millimetres; a value in another unit is refused.
    refused(&["--energy-length", "5"], "5 m is outside (0, 1] m");
    // The continuum of the modes left out is part of the static correction.
    refused(
        &["--residual-tail", "--no-static-correction"],
        "cannot be used with",
    );
    // Modes set to rest must exist, and need a time.
    refused(
        &["--rest-modes-above", "30", "--rest-at", "1e-4"],
        "--rest-modes-above 30: the basis has 30 modes, none above mode 30",
    );
    refused(&["--rest-modes-above", "10"], "--rest-at <SECONDS>");
}

/// `tessera fracture` on the 12×2 tile in 30 modes, the rest to follow.
fn small_tile_fracture() -> Vec<&'static str> {
    vec![
        "fracture",
        "--mesh",
        "tile:0.15,0.006:12,2",
        "--material",
        "ceramic-tile",
        "--modes",
        "30",
    ]
}

/// Two strikes at once, one at negative coordinates (a leading minus is a
/// value, not a flag), in `fracture`'s exact-peak mode and in the world's
/// (`--no-exact-peak`): the same cracks and pieces, and the world's peak
/// at most the exact one.
#[test]
fn fracture_takes_negative_coordinates_and_the_worlds_mode() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| -> serde_json::Value {
        let mut args = small_tile_fracture();
        args.extend_from_slice(&[
            "--impact",
            "0.03,0,0.006:0,0,-1:1:8",
            "--impact",
            "-0.03,-0.02,0.006:0,0,-1:1:8",
            "--json",
        ]);
        args.extend_from_slice(extra);
        let out = tessera(&args, dir.path());
        json_of(out)
    };
    let exact = run(&[]);
    let world = run(&["--no-exact-peak"]);
    let contacts = |j: &serde_json::Value| {
        j["events"][0]["contact_impulses_n_s"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(contacts(&exact), 2);
    assert_eq!(contacts(&world), 2);
    assert!(!exact["cracks"].as_array().unwrap().is_empty());
    assert_eq!(exact["cracks"], world["cracks"]);
    assert_eq!(exact["fragments"], world["fragments"]);
    let peak = |j: &serde_json::Value| j["events"][0]["peak_stress_pa"].as_f64().unwrap();
    assert!(peak(&world) <= peak(&exact));
}

/// `--repeat` runs the same event again on copies of the body (cache-cold
/// here) and gets the same cracks and pieces; `--strike-fragment` then
/// strikes the largest piece in its own basis, on its surface.
#[test]
fn fracture_repeats_the_event_and_strikes_its_largest_fragment() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut args = small_tile_fracture();
        args.extend_from_slice(&["--impact", "0,0,0.006:0,0,-1:2.0", "--json"]);
        args.extend_from_slice(extra);
        tessera(&args, dir.path())
    };
    let out = run(&[
        "--repeat",
        "2",
        "--cache-cold",
        "--strike-fragment",
        "0,0,-1:1:9",
    ]);
    let json = json_of(out);
    let cracks = json["cracks"].as_array().unwrap().len();
    let fragments = json["fragments"].as_array().unwrap();
    let repeats = json["repeats"].as_array().unwrap();
    assert_eq!(repeats.len(), 2);
    for r in repeats {
        assert_eq!(r["cracks"].as_u64().unwrap() as usize, cracks);
        assert_eq!(r["fragments"].as_u64().unwrap() as usize, fragments.len());
        assert!(r["milliseconds"]["total"].as_f64().unwrap() > 0.0);
    }
    let largest = fragments
        .iter()
        .max_by(|a, b| {
            let volume = |f: &serde_json::Value| f["volume_m3"].as_f64().unwrap();
            volume(a).total_cmp(&volume(b))
        })
        .unwrap();
    let piece = &json["fragment_event"];
    // The piece is the intact part of the largest fragment, and is struck
    // on the tile's top face within the tile.
    assert_eq!(piece["fragment"], largest["id"]);
    let piece_tets = piece["tets"].as_u64().unwrap();
    assert!(piece_tets > 0 && piece_tets <= largest["tets"].as_u64().unwrap());
    let point = numbers(&piece["point_m"]);
    assert!((point[2] - 0.006).abs() < 1e-12, "{point:?}");
    assert!(point[0].abs() <= 0.075 && point[1].abs() <= 0.075);
    assert!(
        piece["events"][0]["contact"]["peak_force_n"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(piece["bytes"]["modal"]["shapes"].as_u64().unwrap() > 0);
    let piece_repeats = piece["repeats"].as_array().unwrap();
    assert_eq!(piece_repeats.len(), 2);
    for r in piece_repeats {
        assert_eq!(r["cracks"], piece["cracks"].as_array().unwrap().len());
        assert_eq!(r["fragments"], piece["fragments"]);
    }

    let refused = |extra: &[&str], message: &str| {
        let out = run(extra);
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{stderr}");
    };
    refused(
        &["--strike-fragment", "0,0,-1"],
        "--strike-fragment `0,0,-1`: expected NX,NY,NZ:IMPULSE[:SPEED]",
    );
    refused(&["--cache-cold"], "--repeat");
}

#[test]
fn log_device_writes_a_log_that_log_info_reads() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.mcap");
    let file = file.to_str().unwrap();
    let out = tessera(&["log", "device", file, "--seconds", "0.5"], dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = tessera(&["log", "info", file, "--json"], dir.path());
    let info = json_of(out);
    assert_eq!(info["ticks"], 500);
    assert_eq!(info["complete"], true);
    assert_eq!(info["events"]["configuration"], 1);
    let out = tessera(&["log", "info", "/nonexistent.mcap"], dir.path());
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent.mcap"));
}

#[test]
fn devices_lists_the_shipped_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let out = tessera(&["devices", "--json"], dir.path());
    let json = json_of(out);
    let names: Vec<&str> = json["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"tessera open arm") && names.contains(&"tessera simulated arm"));
}

#[test]
fn drop_json_reports_each_height_and_writes_frames() {
    let dir = tempfile::tempdir().unwrap();
    let frames = dir.path().join("frames");
    let patterns = dir.path().join("patterns");
    let out = tessera(
        &[
            "drop",
            "--heights",
            "0:4:4",
            "--seed",
            "1",
            "--json",
            "--frames",
            frames.to_str().unwrap(),
            "--pattern",
            patterns.to_str().unwrap(),
        ],
        dir.path(),
    );
    let json = json_of(out);
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["height_m"], 0.0);
    assert_eq!(runs[0]["broke"], false);
    assert_eq!(runs[0]["fragments"], 1);
    assert_eq!(runs[0]["crack_area_m2"], 0.0);
    assert_eq!(runs[1]["height_m"], 4.0);
    assert_eq!(runs[1]["broke"], true);
    assert!(runs[1]["fragments"].as_u64().unwrap() >= 2);
    assert!(runs[1]["crack_area_m2"].as_f64().unwrap() > 0.0);
    assert!(runs[1]["peak_contact_impulse_n_s"].as_f64().unwrap() > 0.5);
    let written = std::fs::read_dir(frames.join("h4.000")).unwrap().count();
    assert!(written > 50, "{written} frames for a ~1.1 s run at 10 ms");
    let first = std::fs::read_to_string(frames.join("h4.000/frame_00000.obj")).unwrap();
    assert!(first.lines().any(|l| l.starts_with("f ")));
    // The landing's pattern: in the report, and as a file for `pattern`
    // (none for the height that did not break).
    assert!(runs[0]["pattern"].is_null());
    let split = &runs[1]["pattern"];
    assert!(split["fragments"].as_u64().unwrap() >= 2, "{split}");
    assert!(!patterns.join("h0.000.json").exists());
    let file = patterns.join("h4.000.json");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(&written, split);
    let file = file.to_str().unwrap();
    let same = tessera(&["pattern", file, file, "--json"], dir.path());
    assert!(same.status.success());
    let distance: serde_json::Value = serde_json::from_slice(&same.stdout).unwrap();
    assert_eq!(distance["distance"]["total"], 0.0);

    let bad = tessera(&["drop", "--heights", "1:0:0.5"], dir.path());
    assert!(!bad.status.success());
    let message = String::from_utf8_lossy(&bad.stderr);
    assert!(message.contains("--heights `1:0:0.5`"), "{message}");
    let no_drop = tessera(
        &["drop", "--scene", "cube-pile", "--height", "1"],
        dir.path(),
    );
    let message = String::from_utf8_lossy(&no_drop.stderr);
    assert!(
        message.contains("cube-pile.toml") && message.contains("[drop]"),
        "{message}"
    );
    let unknown = tessera(&["drop", "--scene", "nowhere", "--height", "1"], dir.path());
    let message = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        message.contains("nowhere") && message.contains("tile-on-supports"),
        "{message}"
    );
}

#[test]
fn analyses_refused_their_share_of_memory_run_again_alone() {
    // Two tiles of one mesh in two materials: two analyses, which a scene
    // runs at once, each within half the memory budget.
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("two-tiles.toml");
    let tile = |name: &str, material: &str, x: f64| {
        format!(
            "[[body]]\nname = \"{name}\"\nkind = \"dynamic\"\n\
             shape = {{ type = \"tet-mesh\", mesh = \"tile:0.15,0.006:24,2\" }}\n\
             material = \"{material}\"\nposition_m = [{x}, 0.0, 0.01]\n"
        )
    };
    std::fs::write(
        &scene,
        format!(
            "[world]\nmodes = 30\n\n{}\n{}",
            tile("a", "ceramic-tile", 0.3),
            tile("b", "porcelain", -0.3)
        ),
    )
    .unwrap();
    let run = |max_memory_gib: &str| {
        tessera(
            &[
                "--max-memory",
                max_memory_gib,
                "run",
                "--scene",
                scene.to_str().unwrap(),
                "--seconds",
                "0.01",
            ],
            dir.path(),
        )
    };
    // One tile's factor (about 162 MB) does not fit 0.1 GiB: the error
    // names the whole budget, not a share of it.
    let refused = run("0.1");
    assert!(!refused.status.success());
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(
        message.contains("body `a`") && message.contains("over the limit of 107.4 MB"),
        "{message}"
    );
    // It fits 0.2 GiB alone but not half of it: run again alone, each
    // analysis passes.
    let alone = run("0.2");
    assert!(
        alone.status.success(),
        "{}",
        String::from_utf8_lossy(&alone.stderr)
    );
}

#[test]
fn run_json_reports_step_statistics_and_events() {
    let dir = tempfile::tempdir().unwrap();
    let out = tessera(
        &[
            "run",
            "--scene",
            "cube-basin",
            "--count",
            "40",
            "--seconds",
            "0.5",
            "--json",
        ],
        dir.path(),
    );
    let json = json_of(out);
    assert_eq!(json["bodies_start"], 45);
    assert_eq!(json["step_ms"]["steps"], 50);
    let s = &json["step_ms"];
    assert!(s["mean"].as_f64().unwrap() <= s["max"].as_f64().unwrap());
    assert!(s["p99"].as_f64().unwrap() <= s["max"].as_f64().unwrap());
    assert_eq!(json["fracture_events"].as_array().unwrap().len(), 0);
}

#[test]
fn run_realtime_reports_what_the_threads_obtained_and_changes_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let run = |realtime: bool| {
        let mut args = vec!["run", "--scene", "bricks", "--seconds", "0.3", "--json"];
        if realtime {
            args.push("--realtime");
        }
        let out = tessera(&args, dir.path());
        json_of(out)
    };
    let (plain, realtime) = (run(false), run(true));
    assert!(plain.get("realtime").is_none());
    let r = &realtime["realtime"];
    let workers = r["worker_policies"].as_array().unwrap();
    assert!(!workers.is_empty());
    if r["errors"].as_array().unwrap().is_empty() {
        // Granted (root or CAP_SYS_NICE): every thread says so.
        assert_eq!(r["policy"], "SCHED_FIFO/40");
        assert!(workers.iter().all(|w| w == "SCHED_FIFO/40"), "{workers:?}");
    } else {
        assert!(!r["policy"].as_str().unwrap().starts_with("SCHED_FIFO"));
    }
    // Scheduling changes timing, never the simulation.
    assert_eq!(plain["state_hash"], realtime["state_hash"]);
}

#[test]
fn a_realtime_session_reserves_heap_for_the_world_and_the_haptic_thread() {
    let dir = tempfile::tempdir().unwrap();
    let serve = |extra: &[&str]| {
        let mut args = vec![
            "serve",
            "--scene",
            "cube-push",
            "--count",
            "50",
            "--seconds",
            "0.3",
            "--no-ui",
            "--json",
        ];
        args.extend_from_slice(extra);
        let out = tessera(&args, dir.path());
        json_of(out)["realtime"].clone()
    };
    let (realtime, plain) = (serve(&[]), serve(&["--no-realtime"]));
    // The calling thread's arena and the simulation thread's, and the
    // haptic thread's.
    let reserved = 2 * tessera::haptics::SIMULATION_HEAP_RESERVE_BYTES
        + tessera::haptics::HAPTIC_HEAP_RESERVE_BYTES;
    if cfg!(all(target_os = "linux", target_env = "gnu")) {
        assert_eq!(realtime["heap_reserved_bytes"], reserved, "{realtime}");
    } else {
        assert_eq!(realtime["heap_reserved_bytes"], 0);
        let errors = realtime["errors"].to_string();
        assert!(errors.contains("heap reserve"), "{errors}");
    }
    assert_eq!(plain["heap_reserved_bytes"], 0);
    assert_eq!(plain["errors"].as_array().unwrap().len(), 0, "{plain}");
}

#[test]
fn demo_records_a_lockstep_session_that_replays_identically() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("demo.mcap");
    let log_arg = log.to_str().unwrap();
    let out = tessera(
        &[
            "demo",
            "--lockstep",
            "--seconds",
            "4.5",
            "--record",
            log_arg,
            "--json",
        ],
        dir.path(),
    );
    let summary = json_of(out);
    assert_eq!(summary["haptic"]["ticks"], 4500);
    for key in ["p50", "p99", "max"] {
        assert!(
            summary["haptic"]["period_error_us"][key].is_number(),
            "{key}"
        );
    }
    assert!(summary["haptic"]["late_over_1ms"].is_number());
    assert_eq!(
        summary["haptic"]["clock_lag_ms"], 0.0,
        "a virtual clock never falls behind"
    );
    assert_eq!(summary["syncs"]["total"], 450);
    assert_eq!(summary["syncs"]["late"], 0, "lockstep waits for every sync");
    // The main job's point: the strikes break the tile (the first, at
    // 2 m/s, splits it at about 2 s; the next ones break the pieces).
    let fractures = summary["fractures"].as_array().expect("fractures");
    let first = fractures.first().expect("the tile cracks");
    assert_eq!(first["body"], "tile", "{first}");
    assert!(first["crack_area_m2"].as_f64().unwrap() > 0.0, "{first}");
    assert!(
        fractures
            .iter()
            .any(|f| f["body"] == "tile" && f["fragments"].as_u64().unwrap() >= 2),
        "{fractures:?}"
    );
    // Its large pieces swap to their own modes at the next sync; the
    // replay below matches only if that swap is deterministic.
    assert!(
        summary["own_bases_adopted"].as_u64().unwrap() >= 1,
        "{summary}"
    );
    assert_eq!(summary["log"], log_arg);
    // The simulated arm is an admittance device: goals, within its spec.
    let goal_speed = summary["commanded"]["peak_goal_speed_m_s"]
        .as_f64()
        .unwrap();
    assert!(goal_speed > 0.0 && goal_speed <= 5.0, "{goal_speed} m/s");
    assert_eq!(summary["degraded"], false);
    assert_eq!(summary["interrupted"], false);

    let out = tessera(&["replay", log_arg, "--lockstep", "--json"], dir.path());
    let replay = json_of(out);
    assert_eq!(replay["matches"], true, "{replay}");
    assert!(replay["first_divergence"].is_null());
}

#[test]
fn serve_and_replay_errors_name_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let out = tessera(
        &["serve", "--scene", "cube-pile", "--seconds", "0.1"],
        dir.path(),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cube-pile.toml") && err.contains("[haptic]"),
        "{err}"
    );

    let out = tessera(
        &["serve", "--device", "usb", "--seconds", "0.1"],
        dir.path(),
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--device `usb`"));

    let missing = dir.path().join("none.mcap");
    let out = tessera(&["replay", missing.to_str().unwrap()], dir.path());
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("none.mcap"));
}

#[test]
fn strength_reports_the_tests_against_their_closed_forms_and_refuses_bad_geometry() {
    let dir = tempfile::tempdir().unwrap();
    // Coarse meshes: the figures' agreement is tests/strength.rs's.
    let args = [
        "strength",
        "--disc-mesh",
        "4,2",
        "--bar-mesh",
        "16,4",
        "--json",
    ];
    let out = tessera(&args, dir.path());
    let json = json_of(out);
    assert_eq!(json["material"], "float-glass");
    let ror = &json["ring_on_ring"];
    let (simulated, closed) = (
        ror["simulated_centre_stress_pa"].as_f64().unwrap(),
        ror["astm_c1499_stress_pa"].as_f64().unwrap(),
    );
    assert!(
        (simulated - closed).abs() < 0.01 * closed,
        "{simulated} against {closed}"
    );
    let sizes = &json["effective_sizes"];
    assert_eq!(sizes["modulus"], 7.0);
    assert_eq!(sizes["flaws"], "surface");
    let disc = sizes["ring_on_ring"]["strength_pa"].as_f64().unwrap();
    let bar = sizes["three_point"]["strength_pa"].as_f64().unwrap();
    assert!(disc < bar, "the disc tests more area: {disc} against {bar}");
    let rates = json["rate"].as_array().unwrap();
    assert!(rates
        .windows(2)
        .all(|w| w[0]["strength_pa"].as_f64() < w[1]["strength_pa"].as_f64()));

    for (bad, says) in [
        (["--disc", "0.05,0.01,0.02,0.002"], "support_diameter_m"),
        (["--disc", "0.05,0.04,0.03,0.002"], "not a whole number"),
        (["--bar-mesh", "15,4"], "overhang_m"),
        (["--bar-mesh", "16,0"], "--bar-mesh"),
        (["--material", "unobtainium"], "float-glass"),
    ] {
        let mut args = vec!["strength"];
        args.extend(bad);
        let out = tessera(&args, dir.path());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(says),
            "{bad:?}: {err}"
        );
    }
}
