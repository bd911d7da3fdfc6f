//! Helpers shared by the integration tests.
#![allow(dead_code)]

use tessera::config::{Material, MaterialLibrary};

pub fn material(name: &str) -> Material {
    MaterialLibrary::builtin()
        .get(name)
        .expect("built-in material")
        .clone()
}

/// Relative difference |a − b| / max(|a|, |b|).
pub fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs()).max(f64::MIN_POSITIVE)
}
