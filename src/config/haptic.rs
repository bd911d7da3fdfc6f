//! The `[haptic]` section of a scene: which body is the proxy, the scaling
//! factors between simulation and device (Glondu 2012 §4.3.2.1), and the
//! sub-world's settings (§4.3.3).

use super::ConfigError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// How a scene is felt through a device.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HapticSpec {
    /// The dynamic body the device moves.
    pub proxy: String,
    /// Scaling factors for every device without its own entry in
    /// `device` (see [`ScalingFactors`]). Spelled out rather than a
    /// `#[serde(flatten)]` of [`ScalingFactors`]: serde cannot flatten into
    /// a struct that denies unknown fields, and a misspelt key must stay
    /// an error.
    #[serde(default = "one")]
    pub s_fact: f64,
    /// Force factor F_fact (Glondu §4.3.2.2): a device force is the scene force divided by it.
    #[serde(default = "one")]
    pub f_fact: f64,
    /// Torque factor τ_fact, as `f_fact` for torques.
    #[serde(default = "one")]
    pub tau_fact: f64,
    /// Where the device's origin sits in the scene (m); default: the
    /// proxy's initial position.
    #[serde(default)]
    pub origin_m: Option<[f64; 3]>,
    /// Haptic ticks per global step and synchronisation (r_sim).
    #[serde(default = "default_sync_ratio")]
    pub sync_ratio: u32,
    /// Most bodies the contact graph brings into the sub-world (the proxy
    /// and the bodies of the boundary cube are not counted).
    #[serde(default = "default_max_graph_bodies")]
    pub max_graph_bodies: usize,
    /// Most dynamic bodies in the sub-world besides the proxy, graph and
    /// boundary cube together; the nearest to the proxy are kept. Bounds
    /// the haptic step's cost when a break leaves dozens of fragments
    /// around the proxy.
    #[serde(default = "default_max_sub_world_bodies")]
    pub max_sub_world_bodies: usize,
    /// Most bodies one synchronisation brings into the sub-world, nearest
    /// first: a new body's first contacts are its dearest step.
    #[serde(default = "default_max_added_per_sync")]
    pub max_added_per_sync: usize,
    /// Side of the proxy's bounding cube (m); default: from its shape.
    #[serde(default)]
    pub proxy_cube_m: Option<f64>,
    /// The hand script the simulated arm follows, relative to the scene
    /// file (default: hold still at the device origin).
    #[serde(default)]
    pub hand: Option<String>,
    /// Per-device scaling, keyed by device profile name (`sim-arm`, ...).
    #[serde(default)]
    pub device: BTreeMap<String, ScalingFactors>,
}

/// The factors of Glondu's scaling interface (eqs. 4.4–4.7).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScalingFactors {
    /// Simulation metres per device metre (length, eq. 4.4).
    #[serde(default = "one")]
    pub s_fact: f64,
    /// Force factor (eq. 4.6): the device feels masses divided by it.
    #[serde(default = "one")]
    pub f_fact: f64,
    /// Torque factor (eq. 4.7).
    #[serde(default = "one")]
    pub tau_fact: f64,
}

impl Default for ScalingFactors {
    fn default() -> Self {
        Self {
            s_fact: 1.0,
            f_fact: 1.0,
            tau_fact: 1.0,
        }
    }
}

fn one() -> f64 {
    1.0
}
fn default_sync_ratio() -> u32 {
    10
}
fn default_max_graph_bodies() -> usize {
    30
}
fn default_max_sub_world_bodies() -> usize {
    24
}
fn default_max_added_per_sync() -> usize {
    6
}

impl HapticSpec {
    /// The factors for the device profile `device` (its own entry, or the
    /// scene's).
    pub fn scaling_for(&self, device: &str) -> ScalingFactors {
        self.device.get(device).copied().unwrap_or(ScalingFactors {
            s_fact: self.s_fact,
            f_fact: self.f_fact,
            tau_fact: self.tau_fact,
        })
    }

    pub(super) fn validate(&self, path: &Path) -> Result<(), ConfigError> {
        let invalid = |field: &'static str, message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            entry: "haptic".into(),
            field,
            message,
        };
        let scene = self.scaling_for("");
        let factors = std::iter::once(("", &scene))
            .chain(self.device.iter().map(|(name, f)| (name.as_str(), f)));
        for (device, f) in factors {
            for (field, value) in [
                ("s_fact", f.s_fact),
                ("f_fact", f.f_fact),
                ("tau_fact", f.tau_fact),
            ] {
                if !(value.is_finite() && value > 0.0) {
                    let at = if device.is_empty() {
                        String::new()
                    } else {
                        format!(" (device `{device}`)")
                    };
                    return Err(invalid(field, format!("{value} must be > 0{at}")));
                }
            }
        }
        if let Some(origin) = self.origin_m {
            if origin.iter().any(|x| !x.is_finite()) {
                return Err(invalid("origin_m", "must be finite".into()));
            }
        }
        if !(1..=1000).contains(&self.sync_ratio) {
            return Err(invalid(
                "sync_ratio",
                format!("{} must be in 1..=1000", self.sync_ratio),
            ));
        }
        for (field, value) in [
            ("max_graph_bodies", self.max_graph_bodies),
            ("max_sub_world_bodies", self.max_sub_world_bodies),
        ] {
            if value > 10_000 {
                return Err(invalid(field, format!("{value} must be ≤ 10000")));
            }
        }
        if !(1..=10_000).contains(&self.max_added_per_sync) {
            return Err(invalid(
                "max_added_per_sync",
                format!("{} must be in 1..=10000", self.max_added_per_sync),
            ));
        }
        if let Some(side) = self.proxy_cube_m {
            if !(side.is_finite() && side > 0.0) {
                return Err(invalid("proxy_cube_m", format!("{side} must be > 0")));
            }
        }
        Ok(())
    }
}
