//! Perception studies: trial lists, staircases, QUEST, study files, and
//! the statistics against scipy (tests/fixtures/study_stats.json, made by
//! tools/study_fixtures.py).

use std::path::Path;
use tessera::config::{
    ConfigError, Design, MaterialLibrary, StaircaseRules, StepType, StopWhen, Study,
};
use tessera::study::psychometric::{self, Block, FitOptions, Shape};
use tessera::study::{constant_stimuli, session_seed, stats, test_side, Side, Staircase};

fn fixtures() -> serde_json::Value {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/study_stats.json"),
    )
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn assert_relative(got: f64, want: f64, tolerance: f64, what: &str) {
    let scale = want.abs().max(1e-300);
    assert!(
        (got - want).abs() <= tolerance * scale,
        "{what}: {got} against scipy's {want}"
    );
}

#[test]
fn binomial_tests_match_scipy() {
    for case in fixtures()["binomtest"].as_array().unwrap() {
        let (k, n, p) = (
            case["k"].as_u64().unwrap(),
            case["n"].as_u64().unwrap(),
            case["p"].as_f64().unwrap(),
        );
        let got = stats::binomial_test_two_sided(k, n, p);
        assert_relative(
            got,
            case["p_value"].as_f64().unwrap(),
            1e-9,
            &format!("binomtest({k}, {n}, {p})"),
        );
    }
}

#[test]
fn signed_rank_tests_match_scipy() {
    for case in fixtures()["wilcoxon"].as_array().unwrap() {
        let r = stats::wilcoxon_signed_rank(&floats(&case["x"]), &floats(&case["y"])).unwrap();
        let name = case["name"].as_str().unwrap();
        assert_relative(
            r.statistic,
            case["statistic"].as_f64().unwrap(),
            1e-12,
            name,
        );
        assert_relative(r.p_value, case["p_value"].as_f64().unwrap(), 1e-9, name);
    }
    let equal = stats::wilcoxon_signed_rank(&[1.0, 2.0], &[1.0, 2.0]);
    assert!(equal
        .unwrap_err()
        .to_string()
        .contains("every pair is equal"));
}

#[test]
fn friedman_tests_match_scipy() {
    for case in fixtures()["friedman"].as_array().unwrap() {
        let samples: Vec<Vec<f64>> = case["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(floats)
            .collect();
        let refs: Vec<&[f64]> = samples.iter().map(|s| s.as_slice()).collect();
        let r = stats::friedman(&refs).unwrap();
        let name = case["name"].as_str().unwrap();
        assert_relative(
            r.statistic,
            case["statistic"].as_f64().unwrap(),
            1e-12,
            name,
        );
        assert_relative(r.p_value, case["p_value"].as_f64().unwrap(), 1e-9, name);
    }
}

#[test]
fn friedman_with_two_conditions_is_the_sign_test_chi_square() {
    // k = 2: each block ranks its pair 1, 2; χ² = (n₊ − n₋)² / n, the
    // squared standardised sign statistic.
    let a = [5.0, 6.0, 7.0, 4.0, 6.0, 5.0];
    let b = [4.0, 7.0, 5.0, 3.0, 5.0, 4.0];
    let r = stats::friedman(&[&a, &b]).unwrap();
    let (plus, minus) = (5.0_f64, 1.0_f64);
    assert!((r.statistic - (plus - minus).powi(2) / 6.0).abs() < 1e-12);
}

#[test]
fn psychometric_fits_match_scipys_maximum_likelihood() {
    for case in fixtures()["fits"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let shape = match case["shape"].as_str().unwrap() {
            "logistic" => Shape::Logistic,
            _ => Shape::Weibull,
        };
        let blocks: Vec<Block> = floats(&case["stimulus"])
            .into_iter()
            .zip(floats(&case["correct"]))
            .zip(floats(&case["total"]))
            .map(|((stimulus, correct), total)| Block {
                stimulus,
                correct: correct as u64,
                total: total as u64,
            })
            .collect();
        let options = FitOptions {
            shape,
            bootstrap_samples: 200,
            seed: 1,
            ..FitOptions::default()
        };
        let fit = psychometric::fit(&blocks, &options).unwrap();
        // The maximum itself to 1e-9; the parameters of a flat maximum
        // less tightly (two optimisers stop at different points of it).
        let want = case["log_likelihood"].as_f64().unwrap();
        assert!(
            fit.log_likelihood >= want - 1e-9 * want.abs(),
            "{name}: log-likelihood {} below scipy's {want}",
            fit.log_likelihood
        );
        let p = fit.parameters;
        assert_relative(p.threshold, case["threshold"].as_f64().unwrap(), 1e-4, name);
        assert_relative(p.slope, case["slope"].as_f64().unwrap(), 1e-3, name);
        assert!(
            (p.lapse_rate - case["lapse_rate"].as_f64().unwrap()).abs() < 1e-4,
            "{name}"
        );
        let ci = fit.threshold_ci.unwrap();
        assert!(
            ci.low < p.threshold && p.threshold < ci.high,
            "{name}: {ci:?}"
        );
    }
}

#[test]
fn constant_stimuli_balance_pairs_and_sides_and_follow_the_seed() {
    let trials = constant_stimuli(3, 5, 42);
    assert_eq!(trials.len(), 30, "Glondu §5.2.2: 6 ordered pairs × 5");
    for left in 0..3 {
        for right in 0..3 {
            let n = trials
                .iter()
                .filter(|t| t.left == left && t.right == right)
                .count();
            assert_eq!(n, if left == right { 0 } else { 5 }, "({left}, {right})");
        }
    }
    let weaker_left = trials.iter().filter(|t| t.left < t.right).count();
    assert_eq!(
        weaker_left, 15,
        "the weaker plate is left in half the trials"
    );
    assert_eq!(constant_stimuli(3, 5, 42), trials);
    assert_ne!(constant_stimuli(3, 5, 43), trials);
    assert_ne!(session_seed(42, 0), session_seed(42, 1));
    let sides: Vec<Side> = (0..31).map(|k| test_side(9, k)).collect();
    let left = sides.iter().filter(|s| **s == Side::Left).count();
    assert!(left == 15 || left == 16, "{left} of 31");
    for block in sides.chunks_exact(2) {
        assert_ne!(block[0], block[1], "each block of two has both sides");
    }
    assert_ne!(sides, (0..31).map(|k| test_side(10, k)).collect::<Vec<_>>());
}

fn rules(n_down: u32) -> StaircaseRules {
    StaircaseRules {
        start: 0.5,
        n_up: 1,
        n_down,
        steps: vec![0.08, 0.04, 0.02],
        up_steps: None,
        step_type: StepType::Lin,
        levels: None,
        min: Some(0.0),
        max: Some(1.0),
        max_trials: Some(400),
        max_reversals: None,
        stop_when: StopWhen::Any,
        threshold_reversals: 20,
    }
}

#[test]
fn a_one_up_two_down_staircase_converges_near_the_707_percent_point() {
    use rand::{Rng, SeedableRng};
    // An observer with a known logistic psychometric function; its
    // 70.7 % point is where Levitt's 1-up-2-down rule settles.
    let observer = psychometric::Parameters {
        threshold: 0.2,
        slope: 20.0,
        guess_rate: 0.5,
        lapse_rate: 0.0,
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    // n-down converges where p(correct)ⁿ = ½ (Levitt 1971): 70.7 % for
    // 1-up-2-down, 79.4 % for 1-up-3-down. The spread of one run's
    // threshold is about 0.02; of the mean of a hundred, 0.002.
    for n_down in [2, 3] {
        let target = observer
            .stimulus_at(Shape::Logistic, 0.5_f64.powf(1.0 / f64::from(n_down)))
            .unwrap();
        let runs = 100;
        let mut mean = 0.0;
        for _ in 0..runs {
            let mut s = Staircase::new(rules(n_down));
            while let Some(v) = s.next_value() {
                s.record(rng.random::<f64>() < observer.psi(Shape::Logistic, v));
            }
            mean += s.threshold().unwrap() / runs as f64;
        }
        assert!(
            (mean - target).abs() < 0.01,
            "1-up-{n_down}-down: mean threshold {mean}, target {target}"
        );
    }
}

fn shipped(name: &str) -> (String, std::path::PathBuf) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("configs/studies")
        .join(name);
    (std::fs::read_to_string(&path).unwrap(), path)
}

#[test]
fn the_shipped_studies_parse() {
    let (text, path) = shipped("plate-weakness.toml");
    let study = Study::parse(&text, &path).unwrap();
    assert_eq!(study.trials_per_session(), Some(30));
    assert_eq!(study.conditions.len(), 2);
    let (text, path) = shipped("plate-weakness-staircase.toml");
    let study = Study::parse(&text, &path).unwrap();
    assert!(matches!(study.design, Design::Staircase { .. }));
}

#[test]
fn bad_study_files_name_the_file_line_and_field() {
    let (text, path) = shipped("plate-weakness-staircase.toml");
    let bad = text.replacen("n_down = 2", "n_down = 0", 1);
    let err = Study::parse(&bad, &path).unwrap_err();
    let line = bad
        .lines()
        .position(|l| l.contains("[[design.staircase]]"))
        .unwrap()
        + 1;
    let message = err.to_string();
    assert!(
        message.contains("plate-weakness-staircase.toml")
            && message.contains(&format!(":{line}:"))
            && message.contains("design.staircase[0]")
            && message.contains("n_down"),
        "{message}"
    );
    let (text, path) = shipped("plate-weakness.toml");
    let bad = text.replacen("levels = [", "levels = [2.0, ", 1);
    let err = Study::parse(&bad, &path).unwrap_err();
    let line = bad.lines().position(|l| l.starts_with("levels")).unwrap() + 1;
    assert!(
        matches!(&err, ConfigError::Field { line: l, field, .. } if *l == line && field == "stimulus.levels"),
        "{err}"
    );
    let bad = text.replacen("[stimulus]", "[stimulus]\ncolour = 3", 1);
    let err = Study::parse(&bad, &path).unwrap_err().to_string();
    assert!(err.contains("colour") && err.contains("line"), "{err}");
}

#[test]
fn a_level_that_makes_the_material_invalid_is_named() {
    let (text, path) = shipped("plate-weakness.toml");
    let study = Study::parse(&text, &path).unwrap();
    let library = MaterialLibrary::builtin();
    let porcelain = library.get("porcelain").unwrap();
    let weaker = study.material_at(porcelain, 0.5, "w1", &path).unwrap();
    assert_eq!(
        weaker.rankine_threshold_pa,
        porcelain.rankine_threshold_pa * 0.5
    );
    let err = study
        .material_at(porcelain, 1e-12, "w0", &path)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("w0")
            && err.contains("rankine_threshold_pa")
            && err.contains("outside the range"),
        "{err}"
    );
}
