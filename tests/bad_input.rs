//! Bad and extreme input, as a user types it: each case gets a clear error
//! naming what is wrong, before anything large is allocated, and never a
//! panic. One test per row of the safety audit (issue "Safe with a real
//! arm, bounded on any input").

mod common;

use common::tessera_in;
use std::path::Path;

/// Runs `args`, expects failure with status 1 or 2 (clap's usage errors)
/// and `want` in the error, and no panic.
fn refused(dir: &Path, args: &[&str], want: &str) -> String {
    let out = tessera_in(dir, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        matches!(out.status.code(), Some(1 | 2)),
        "{args:?}: status {:?}, stderr {stderr}",
        out.status
    );
    assert!(stderr.contains(want), "{args:?}: `{stderr}` lacks `{want}`");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    stderr
}

/// The built-in library with one field of `porcelain` replaced.
fn materials_with(dir: &Path, field: &str, value: &str) -> String {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/materials.toml"
    ))
    .unwrap();
    let start = text.find("[porcelain]").expect("porcelain entry");
    let at = start + text[start..].find(&format!("{field} =")).expect("field");
    let end = at + text[at..].find('\n').unwrap();
    let edited = format!("{}{field} = {value}{}", &text[..at], &text[end..]);
    let path = dir.join(format!("materials-{field}.toml"));
    std::fs::write(&path, edited).unwrap();
    path.to_str().unwrap().to_owned()
}

const TILE: &str = "tile:0.15,0.006:12,2";

#[test]
fn row_4_mesh_sizes_are_checked_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    refused(
        d,
        &["mesh", "--mesh", "box:1,1,1:18446744073709551615,1,1"],
        "nodes",
    );
    refused(d, &["mesh", "--mesh", "box:1,1,1:1000,1000,1000"], "tets");
    // The plate's node count is 1 + 3R(R + 1) per layer, not (R + 1)².
    refused(
        d,
        &[
            "--max-memory",
            "4",
            "mesh",
            "--mesh",
            "plate:0.1,0.01:4000,2",
        ],
        "--max-memory",
    );
    let err = refused(
        d,
        &[
            "--max-memory",
            "1",
            "mesh",
            "--mesh",
            "box:1,1,1:300,300,300",
        ],
        "needs about",
    );
    assert!(err.contains("GB of memory"), "{err}");
}

/// The Cholesky factor of a modal analysis is its largest allocation (39 M
/// nonzeros for this 45k-DOF quadratic slab, where the Krylov basis of 10
/// modes needs 44 MB): its size is checked once its structure is known,
/// before its values are allocated.
#[test]
fn a_modal_analysis_whose_factor_would_not_fit_is_refused_before_factorising() {
    let dir = tempfile::tempdir().unwrap();
    let err = refused(
        dir.path(),
        &[
            "--max-memory",
            "0.1",
            "modes",
            "--mesh",
            "box:0.1,0.1,0.01:20,20,4",
            "--material",
            "glondu-slab",
            "--modes",
            "10",
            "--no-cache",
        ],
        "the Cholesky factor of K − σM",
    );
    assert!(
        err.contains("45387 DOFs") && err.contains("--max-memory"),
        "{err}"
    );
}

#[test]
fn rows_5_8_9_materials_out_of_physical_range_are_refused_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (field, value) in [
        ("weak_point_density_per_m3", "1e12"),
        ("weak_point_density_per_m3", "1e30"),
        ("youngs_modulus_pa", "1e-300"),
        ("density_kg_m3", "1e300"),
        ("crack_noise_frequency_per_m", "1e300"),
    ] {
        let materials = materials_with(d, field, value);
        let err = refused(
            d,
            &[
                "--materials",
                &materials,
                "fracture",
                "--mesh",
                TILE,
                "--material",
                "porcelain",
                "--impact",
                "0,0,0.006:0,0,-1:1",
            ],
            field,
        );
        assert!(err.contains("[porcelain]"), "{err}");
        assert!(err.contains("outside the range"), "{err}");
    }
}

#[test]
fn row_6_body_counts_are_checked_against_memory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    refused(
        d,
        &[
            "run",
            "--scene",
            "cube-basin",
            "--count",
            "100000000",
            "--seconds",
            "0.01",
        ],
        "array.count",
    );
    let scene = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/scenes/cube-basin.toml"
    ))
    .unwrap();
    let edited = scene.replace("count = 500,", "count = 100000000,");
    assert_ne!(edited, scene);
    std::fs::write(d.join("huge.toml"), edited).unwrap();
    let err = refused(
        d,
        &["run", "--scene", "huge.toml", "--seconds", "0.01"],
        "huge.toml",
    );
    assert!(err.contains("needs about"), "{err}");
    assert!(err.contains("[cube] array.count"), "names the body: {err}");
}

#[test]
fn row_10_durations_and_time_steps_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scene = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/scenes/cube-pile.toml"
    ))
    .unwrap();
    std::fs::write(
        d.join("tiny-step.toml"),
        format!(
            "{}\n",
            scene.replace("[world]", "[world]\ntime_step_s = 1e-12")
        ),
    )
    .unwrap();
    refused(
        d,
        &["run", "--scene", "tiny-step.toml", "--seconds", "0.2"],
        "time_step_s",
    );
    refused(
        d,
        &["run", "--scene", "cube-pile", "--seconds", "1e12"],
        "simulated steps",
    );
    refused(d, &["drop", "--height", "1e300"], "simulated steps");
    std::fs::write(
        d.join("long.toml"),
        "start_m = [0.0, 0.0, 0.1]\n[[steps]]\ntype = \"hold\"\nseconds = 1e300\n",
    )
    .unwrap();
    refused(
        d,
        &["serve", "--lockstep", "--hand", "long.toml"],
        "one week",
    );
    refused(d, &["serve", "--lockstep", "--seconds", "1e12"], "one week");
    refused(d, &["serve", "--seconds", "-1"], "outside (0,");
}

#[test]
fn row_12_the_sync_ratio_flag_has_the_scene_range() {
    let dir = tempfile::tempdir().unwrap();
    for ratio in ["0", "4000000000"] {
        refused(
            dir.path(),
            &[
                "serve",
                "--lockstep",
                "--seconds",
                "0.1",
                "--sync-ratio",
                ratio,
            ],
            "--sync-ratio",
        );
    }
}

#[test]
fn rows_2_7_unsafe_or_malformed_profiles_are_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let profile = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/devices/tessera-arm.toml"
    ))
    .unwrap();
    let workspace = profile
        .lines()
        .find(|l| l.starts_with("workspace"))
        .expect("a workspace line");
    for (name, edited, want) in [
        (
            "sphere-negative",
            profile.replace(
                workspace,
                "workspace = { shape = \"sphere\", radius_m = -1 }",
            ),
            "workspace.radius_m",
        ),
        (
            "sphere-nan",
            profile.replace(
                workspace,
                "workspace = { shape = \"sphere\", radius_m = nan }",
            ),
            "workspace.radius_m",
        ),
        (
            "box-negative",
            profile.replace(
                workspace,
                "workspace = { shape = \"box\", half_extents_m = [-0.2, 0.2, 0.2] }",
            ),
            "workspace.half_extents_m",
        ),
        (
            "box-nan",
            profile.replace(
                workspace,
                "workspace = { shape = \"box\", half_extents_m = [nan, 0.2, 0.2] }",
            ),
            "workspace.half_extents_m",
        ),
        (
            "unknown-key",
            profile.replace("max_force_n =", "max_forse_n = 1.0\nmax_force_n ="),
            "max_forse_n",
        ),
        (
            "angular",
            profile.replace(
                "max_angular_damping_n_m_s_rad = ",
                "max_angular_damping_n_m_s_rad = -",
            ),
            "max_angular_damping_n_m_s_rad",
        ),
        (
            "deadman",
            profile.replacen("[spec]", "[safety]\ndeadman_button = 40\n\n[spec]", 1),
            "deadman_button",
        ),
        (
            "offset",
            profile.replacen("offset = 1,", "offset = 18446744073709551615,", 1),
            "offset",
        ),
    ] {
        assert_ne!(edited, profile, "{name}: the edit applies");
        let path = d.join(format!("{name}.toml"));
        std::fs::write(&path, edited).unwrap();
        let device = format!("hid:{}", path.display());
        refused(d, &["serve", "--device", &device, "--seconds", "1"], want);
    }
}

#[test]
fn row_1_a_device_that_cannot_be_opened_fails_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let err = refused(
        dir.path(),
        &["serve", "--device", "hid:tessera-arm", "--seconds", "3"],
        "cannot be opened",
    );
    assert!(err.contains("tessera devices"), "{err}");
    assert!(err.contains("--wait-for-device"), "{err}");
}

#[test]
fn messages_do_not_repeat_and_name_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let err = refused(
        d,
        &["modes", "--mesh", "missing.node", "--material", "porcelain"],
        "missing.node",
    );
    assert_eq!(err.matches("No such file").count(), 1, "{err}");
    refused(
        d,
        &[
            "modes",
            "--mesh",
            TILE,
            "--material",
            "porcelain",
            "--modes",
            "0",
        ],
        "at least 1",
    );
    refused(
        d,
        &[
            "fracture",
            "--mesh",
            TILE,
            "--material",
            "porcelain",
            "--impact",
            "0,0,0.006:0,0,-1:1",
            "--impactor-restitution",
            "1.5",
        ],
        "--impactor-restitution 1.5 must be in [0, 1]",
    );
    let scene = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/scenes/tile-on-supports.toml"
    ))
    .unwrap();
    std::fs::write(
        d.join("unknown.toml"),
        scene.replacen("material = \"", "material = \"unobtainium-", 1),
    )
    .unwrap();
    let err = refused(
        d,
        &["drop", "--scene", "unknown.toml", "--height", "0.1"],
        "unknown.toml",
    );
    assert!(err.contains("body `"), "{err}");
    assert!(err.contains("no material named `unobtainium-"), "{err}");
}

#[test]
fn msh_errors_give_the_line_and_the_version_only_when_it_is_not_4_1() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/cube.msh"
    ))
    .unwrap();
    // Break a node line well inside the file.
    let mut lines: Vec<&str> = good.lines().collect();
    let nodes = lines.iter().position(|l| *l == "$Nodes").unwrap();
    let bad_line = nodes + 4;
    lines[bad_line] = "x y z";
    std::fs::write(d.join("bad.msh"), lines.join("\n")).unwrap();
    let err = refused(
        d,
        &["mesh", "--mesh", "bad.msh"],
        &format!("bad.msh:{}", bad_line + 1),
    );
    assert!(!err.contains("only MSH 4.1"), "a 4.1 file: {err}");
    std::fs::write(d.join("old.msh"), good.replacen("4.1 0 8", "2.2 0 8", 1)).unwrap();
    refused(d, &["mesh", "--mesh", "old.msh"], "MSH 2.2");
}

#[test]
fn pattern_files_and_weights_that_are_not_patterns_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = r#"{"thickness_m": 0.006, "area_m2": 0.0177, "fragments": 2, "gap_fragments": 0,
        "fragment_areas": [0.6, 0.4], "crack_lengths": [1.1], "junction_degrees": [],
        "junction_angles_deg": []}"#;
    std::fs::write(d.join("good.json"), good).unwrap();
    std::fs::write(d.join("words.json"), "a tile, broken").unwrap();
    std::fs::write(
        d.join("negative.json"),
        good.replace("0.6, 0.4", "0.6, -0.4"),
    )
    .unwrap();
    refused(
        d,
        &["pattern", "good.json", "words.json"],
        "pattern file words.json: not a pattern",
    );
    refused(
        d,
        &["pattern", "negative.json", "good.json"],
        "pattern file negative.json: -0.4",
    );
    refused(d, &["pattern", "good.json", "missing.json"], "missing.json");
    refused(
        d,
        &["pattern", "good.json", "good.json", "--weights", "3,1"],
        "--weights `3,1`",
    );
    refused(
        d,
        &["pattern", "good.json", "good.json", "--weights", "3,-1,1"],
        "non-negative",
    );
    let out = tessera_in(d, &["pattern", "good.json", "good.json", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["distance"]["total"], 0.0, "{json}");
}
