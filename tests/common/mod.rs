//! Helpers shared by the integration tests.
#![allow(dead_code)]

use tessera::config::{Material, MaterialLibrary};

/// Runs the `tessera` binary in `dir` with its modal cache there.
pub fn tessera_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .current_dir(dir)
        .env("TESSERA_CACHE_DIR", dir.join("cache"))
        .env_remove("RUST_LOG")
        .output()
        .expect("run tessera")
}

pub fn material(name: &str) -> Material {
    MaterialLibrary::builtin()
        .get(name)
        .expect("built-in material")
        .clone()
}

/// One classical Runge–Kutta step of `(x, v)' = rate(x, v)` over `h`.
pub fn rk4_step(rate: impl Fn(f64, f64) -> (f64, f64), (x, v): (f64, f64), h: f64) -> (f64, f64) {
    let k1 = rate(x, v);
    let k2 = rate(x + 0.5 * h * k1.0, v + 0.5 * h * k1.1);
    let k3 = rate(x + 0.5 * h * k2.0, v + 0.5 * h * k2.1);
    let k4 = rate(x + h * k3.0, v + h * k3.1);
    (
        x + h / 6.0 * (k1.0 + 2.0 * k2.0 + 2.0 * k3.0 + k4.0),
        v + h / 6.0 * (k1.1 + 2.0 * k2.1 + 2.0 * k3.1 + k4.1),
    )
}

/// Relative difference |a − b| / max(|a|, |b|).
pub fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs()).max(f64::MIN_POSITIVE)
}

/// Every edge used once in each direction (closed, consistently oriented),
/// and the enclosed volume (divergence theorem) within `tolerance` of `volume`.
pub fn assert_closed_outward(
    points: &[nalgebra::Point3<f64>],
    triangles: &[[u32; 3]],
    volume: f64,
    tolerance: f64,
    what: &str,
) {
    let mut directed = std::collections::HashMap::new();
    for t in triangles {
        for k in 0..3 {
            *directed.entry((t[k], t[(k + 1) % 3])).or_insert(0) += 1;
        }
    }
    for (&(a, b), &count) in &directed {
        assert_eq!(
            count, 1,
            "{what}: edge {a}→{b} used {count} times in one direction"
        );
        assert_eq!(
            directed.get(&(b, a)),
            Some(&1),
            "{what}: edge {a}→{b} has no opposite"
        );
    }
    let enclosed: f64 = triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| points[i as usize].coords);
            a.dot(&b.cross(&c)) / 6.0
        })
        .sum();
    assert!(
        rel(enclosed, volume) < tolerance,
        "{what}: encloses {enclosed}, volume {volume}"
    );
}

/// The worker threads the tests' fracture checks and worlds run on.
pub fn threads() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .build()
            .expect("worker threads start")
    })
}
