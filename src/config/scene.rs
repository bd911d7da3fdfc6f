//! Scenes (`configs/scenes/*.toml`): world settings and bodies.
//!
//! All lengths are in metres here; the world converts them to its length
//! unit (`z_fact` metres per unit) when it builds the rapier bodies.

use super::ConfigError;
use crate::mesh::MeshSpec;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Memory of one primitive body in a world (its rapier body and collider,
/// broad-phase and contact-graph entries, the world's record), measured
/// with `tools/mesh_memory.sh`.
const BYTES_PER_BODY: f64 = 16384.0;

/// A scene as read from a TOML file, validated.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scene {
    /// The `[world]` table.
    #[serde(default)]
    pub world: WorldSettings,
    /// The bodies, in insertion order (which fixes the simulation's order).
    #[serde(rename = "body", default)]
    pub bodies: Vec<BodySpec>,
    /// What `tessera drop` drops onto what.
    #[serde(default)]
    pub drop: Option<DropSpec>,
    /// How the scene is felt through a device (`tessera serve`, `demo`).
    #[serde(default)]
    pub haptic: Option<super::HapticSpec>,
    /// The file the scene was read from (set by [`Scene::parse`]).
    #[serde(skip)]
    pub path: PathBuf,
}

/// Simulation settings of a scene.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorldSettings {
    /// Gravity (m/s²).
    pub gravity_m_s2: [f64; 3],
    /// One simulation length unit is `z_fact` metres (Glondu §4.3.2.1).
    pub z_fact: f64,
    /// The global world's time step (s).
    pub time_step_s: f64,
    /// Elastic modes of the modal basis of every breakable body.
    pub modes: usize,
    /// The element of every breakable body's elasticity: `"quadratic"`
    /// (default) or `"linear"`.
    pub element: crate::fem::ElementOrder,
    /// Fragments smaller than this are removed as debris (their mass is
    /// counted in the fracture event).
    pub debris_volume_m3: f64,
    /// Fragments with fewer intact tets than this become plain rigid bodies.
    pub breakable_min_tets: usize,
    /// A contact whose normal approach speed before the step exceeds this is
    /// an impact; slower ones are resting contacts.
    pub impact_speed_m_s: f64,
    /// Least simulated time between two quasi-static checks of one body.
    pub static_check_interval_s: f64,
    /// Rapier solver iterations per step.
    pub solver_iterations: usize,
    /// Simulated time the rigid bodies fall and come to rest before time 0
    /// (s): a pile built with gaps settles while the scene loads, not in
    /// the session's first steps. Nothing breaks while it settles.
    pub settle_s: f64,
    /// γ of Glondu eq. 3.8 (m): a crack runs on while the strain energy
    /// of its elements, each element's crack area times γ times its
    /// energy density, pays for its area times G_c (docs/fracture.md,
    /// "One fracture event", item 8).
    pub energy_length_m: f64,
    /// Pays each crack by the energy its opening releases (the traction
    /// on its plane) instead of the element's whole strain-energy density
    /// (docs/fracture.md, "One fracture event", item 8).
    pub crack_plane_energy: bool,
}

/// The most settling a scene may ask for, in time and in steps: a
/// scene's loading stays bounded whatever its time step.
pub(crate) const MAX_SETTLE_S: f64 = 10.0;
/// See [`MAX_SETTLE_S`].
pub(crate) const MAX_SETTLE_STEPS: usize = 20_000;

impl WorldSettings {
    /// The steps of `time_step_s` that `settle_s` takes (rounded); a
    /// validated scene has at most 20 000.
    pub fn settle_steps(&self) -> usize {
        (self.settle_s / self.time_step_s).round() as usize
    }
}

impl Default for WorldSettings {
    fn default() -> Self {
        Self {
            gravity_m_s2: [0.0, 0.0, -9.81],
            z_fact: 1.0,
            time_step_s: 1e-3,
            modes: 60,
            element: crate::fem::ElementOrder::Quadratic,
            debris_volume_m3: 1e-8,
            breakable_min_tets: 12,
            impact_speed_m_s: 0.1,
            static_check_interval_s: 0.02,
            solver_iterations: 4,
            settle_s: 0.0,
            energy_length_m: crate::fracture::FractureSettings::default().energy_length_m,
            crack_plane_energy: false,
        }
    }
}

/// Static bodies never move; dynamic bodies follow the dynamics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BodyKind {
    /// Never moves.
    Static,
    /// Moves under gravity and contacts.
    Dynamic,
}

/// The shape of a body, in its own frame (metres).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ShapeSpec {
    /// Centred on the body's origin.
    Box {
        /// Edge lengths along x, y, z (m).
        size_m: [f64; 3],
    },
    /// Centred on the body's origin.
    Sphere {
        /// Radius (m).
        radius_m: f64,
    },
    /// Axis along the body's z; `length_m` between the two sphere centres.
    Capsule {
        /// Radius (m).
        radius_m: f64,
        /// Distance between the two sphere centres (m).
        length_m: f64,
    },
    /// The convex hull of these points.
    Convex {
        /// The points, in the body's frame (m).
        points_m: Vec<[f64; 3]>,
    },
    /// A tet mesh ([`MeshSpec`] text: generator or file); breakable. The
    /// body's frame is the mesh's frame.
    TetMesh {
        /// The mesh spec: a generator (`box:…`, `tile:…`, `plate:…`) or a file path.
        mesh: String,
    },
}

/// Copies of one body on a grid, filled row by row, then layer by layer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArraySpec {
    /// How many copies.
    pub count: usize,
    /// Bodies per row (x) and rows per layer (y).
    pub columns: [usize; 2],
    /// Distance between neighbouring copies along x, y (within a row and between rows) and z (between layers) (m).
    pub spacing_m: [f64; 3],
}

/// One body entry (`[[body]]`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    /// Unique name; copies of an array get `#N` suffixes.
    pub name: String,
    /// Static or dynamic.
    pub kind: BodyKind,
    /// The collision shape (and mesh, for a breakable body).
    pub shape: ShapeSpec,
    /// Name in the material library.
    pub material: String,
    /// Position of the body's frame (m).
    #[serde(default)]
    pub position_m: [f64; 3],
    /// Rotations about x, then y, then z (degrees).
    #[serde(default)]
    pub rotation_deg: [f64; 3],
    /// Initial linear velocity (m/s).
    #[serde(default)]
    pub velocity_m_s: [f64; 3],
    /// Initial angular velocity (rad/s).
    #[serde(default)]
    pub angular_velocity_rad_s: [f64; 3],
    /// Coulomb friction coefficient.
    #[serde(default = "default_friction")]
    pub friction: f64,
    /// Restitution coefficient (0: no bounce).
    #[serde(default)]
    pub restitution: f64,
    /// Mass of a primitive body (kg); default: its volume times the
    /// material's density. Tet-mesh bodies always take the density.
    #[serde(default)]
    pub mass_kg: Option<f64>,
    /// Continuous collision detection, for small fast bodies (a dropped ball).
    #[serde(default)]
    pub ccd: bool,
    /// Copies of this body on a grid.
    #[serde(default)]
    pub array: Option<ArraySpec>,
}

fn default_friction() -> f64 {
    0.5
}

/// The drop experiment of a scene: `body` is released above `target`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DropSpec {
    /// The body released (by name).
    pub body: String,
    /// The body it is released above (by name).
    pub target: String,
    /// Simulated time after the body would reach the target in free fall.
    #[serde(default = "default_settle")]
    pub settle_s: f64,
}

fn default_settle() -> f64 {
    0.25
}

impl Scene {
    /// Reads and validates a scene file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        Self::parse(&super::read_text(path)?, path)
    }

    /// Parses and validates scene text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let mut scene: Scene = toml::from_str(text).map_err(|e| ConfigError::Toml {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        scene.path = path.to_path_buf();
        scene.validate()?;
        Ok(scene)
    }

    /// The body entry named `name`.
    pub fn body(&self, name: &str) -> Option<&BodySpec> {
        self.bodies.iter().find(|b| b.name == name)
    }

    /// Sets the count of the scene's arrayed body (for `cube-basin`); an
    /// error if the scene has none or several.
    pub fn set_array_count(&mut self, count: usize) -> Result<(), ConfigError> {
        let mut arrays = self.bodies.iter_mut().filter_map(|b| b.array.as_mut());
        match (arrays.next(), arrays.next()) {
            (Some(array), None) => {
                array.count = count;
                self.check_body_count()
            }
            _ => Err(ConfigError::Invalid {
                path: self.path.clone(),
                entry: "body".into(),
                field: "array",
                message: "a count can only be set on a scene with exactly one arrayed body".into(),
            }),
        }
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |entry: &str, field: &'static str, message: String| ConfigError::Invalid {
            path: self.path.clone(),
            entry: entry.to_string(),
            field,
            message,
        };
        let w = &self.world;
        let positive: [(&'static str, f64); 3] = [
            ("z_fact", w.z_fact),
            ("time_step_s", w.time_step_s),
            ("static_check_interval_s", w.static_check_interval_s),
        ];
        for (field, value) in positive {
            if !(value.is_finite() && value > 0.0) {
                return Err(invalid("world", field, format!("{value} must be > 0")));
            }
        }
        // A rigid-body step from 1 µs (stiff contacts) to 0.1 s.
        if !(1e-6..=0.1).contains(&w.time_step_s) {
            return Err(invalid(
                "world",
                "time_step_s",
                format!(
                    "{} s is outside 1e-6 to 0.1 s",
                    crate::limits::readable(w.time_step_s)
                ),
            ));
        }
        for (field, value) in [
            ("debris_volume_m3", w.debris_volume_m3),
            ("impact_speed_m_s", w.impact_speed_m_s),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(invalid("world", field, format!("{value} must be ≥ 0")));
            }
        }
        if !(0.0..=MAX_SETTLE_S).contains(&w.settle_s) {
            return Err(invalid(
                "world",
                "settle_s",
                format!("{} s is outside 0 to {MAX_SETTLE_S} s", w.settle_s),
            ));
        }
        if w.settle_steps() > MAX_SETTLE_STEPS {
            return Err(invalid(
                "world",
                "settle_s",
                format!(
                    "{} s is {} steps of {} s, more than {MAX_SETTLE_STEPS}",
                    w.settle_s,
                    w.settle_steps(),
                    crate::limits::readable(w.time_step_s)
                ),
            ));
        }
        if let Err(why) = crate::limits::energy_length_m(w.energy_length_m) {
            return Err(invalid("world", "energy_length_m", why));
        }
        if w.gravity_m_s2.iter().any(|g| !g.is_finite()) {
            return Err(invalid("world", "gravity_m_s2", "must be finite".into()));
        }
        if w.modes == 0 {
            return Err(invalid("world", "modes", "must be ≥ 1".into()));
        }
        if w.solver_iterations == 0 {
            return Err(invalid("world", "solver_iterations", "must be ≥ 1".into()));
        }
        if self.bodies.is_empty() {
            return Err(invalid("body", "body", "the scene has no [[body]]".into()));
        }
        for (i, body) in self.bodies.iter().enumerate() {
            let entry = format!("body `{}`", body.name);
            if body.name.is_empty() {
                return Err(invalid(
                    &format!("body #{}", i + 1),
                    "name",
                    "is empty".into(),
                ));
            }
            if self.bodies[..i].iter().any(|b| b.name == body.name) {
                return Err(invalid(&entry, "name", "is used by an earlier body".into()));
            }
            let vectors: [(&'static str, [f64; 3]); 4] = [
                ("position_m", body.position_m),
                ("rotation_deg", body.rotation_deg),
                ("velocity_m_s", body.velocity_m_s),
                ("angular_velocity_rad_s", body.angular_velocity_rad_s),
            ];
            for (field, v) in vectors {
                if v.iter().any(|x| !x.is_finite()) {
                    return Err(invalid(&entry, field, "must be finite".into()));
                }
            }
            if !(body.friction.is_finite() && body.friction >= 0.0) {
                return Err(invalid(
                    &entry,
                    "friction",
                    format!("{} must be ≥ 0", body.friction),
                ));
            }
            if !(0.0..=1.0).contains(&body.restitution) {
                return Err(invalid(
                    &entry,
                    "restitution",
                    format!("{} must be in [0, 1]", body.restitution),
                ));
            }
            self.validate_shape(&entry, body)?;
            if let Some(mass) = body.mass_kg {
                if !(mass.is_finite() && mass > 0.0) {
                    return Err(invalid(&entry, "mass_kg", format!("{mass} must be > 0")));
                }
                if matches!(body.shape, ShapeSpec::TetMesh { .. }) {
                    return Err(invalid(
                        &entry,
                        "mass_kg",
                        "a tet mesh body's mass comes from its material's density".into(),
                    ));
                }
            }
            if let Some(array) = &body.array {
                if array.columns.contains(&0) {
                    return Err(invalid(&entry, "array.columns", "must be ≥ 1".into()));
                }
                if array.spacing_m.iter().any(|s| !s.is_finite()) {
                    return Err(invalid(&entry, "array.spacing_m", "must be finite".into()));
                }
            }
        }
        self.check_body_count()?;
        if let Some(drop) = &self.drop {
            for (field, name) in [("body", &drop.body), ("target", &drop.target)] {
                let Some(body) = self.body(name) else {
                    return Err(invalid("drop", field, format!("no body named `{name}`")));
                };
                if body.array.is_some() {
                    return Err(invalid("drop", field, format!("`{name}` is an array")));
                }
            }
            if self.body(&drop.body).map(|b| b.kind) != Some(BodyKind::Dynamic) {
                return Err(invalid("drop", "body", "must be a dynamic body".into()));
            }
            if !(drop.settle_s.is_finite() && drop.settle_s >= 0.0) {
                return Err(invalid("drop", "settle_s", "must be ≥ 0".into()));
            }
        }
        if let Some(haptic) = &self.haptic {
            haptic.validate(&self.path)?;
            let Some(proxy) = self.body(&haptic.proxy) else {
                return Err(invalid(
                    "haptic",
                    "proxy",
                    format!("no body named `{}`", haptic.proxy),
                ));
            };
            if proxy.kind != BodyKind::Dynamic
                || proxy.array.is_some()
                || matches!(proxy.shape, ShapeSpec::TetMesh { .. })
            {
                return Err(invalid(
                    "haptic",
                    "proxy",
                    "must be a single dynamic body of primitive shape (it never breaks)".into(),
                ));
            }
        }
        Ok(())
    }

    /// Refuses a scene whose bodies (arrays counted) would not fit the
    /// memory budget, before any is made.
    fn check_body_count(&self) -> Result<(), ConfigError> {
        let bodies: f64 = self
            .bodies
            .iter()
            .map(|b| b.array.as_ref().map_or(1.0, |a| a.count as f64))
            .sum();
        crate::limits::check_memory(
            || format!("{} bodies", crate::limits::readable(bodies)),
            bodies * BYTES_PER_BODY,
        )
        .map_err(|e| {
            // The body whose array asks for the most is the one to name.
            let largest = self
                .bodies
                .iter()
                .filter_map(|b| b.array.as_ref().map(|a| (a.count, b.name.as_str())))
                .max()
                .map_or("body", |(_, name)| name);
            ConfigError::Invalid {
                path: self.path.clone(),
                entry: largest.to_string(),
                field: "array.count",
                message: e.to_string(),
            }
        })
    }

    fn validate_shape(&self, entry: &str, body: &BodySpec) -> Result<(), ConfigError> {
        let invalid = |field: &'static str, message: String| ConfigError::Invalid {
            path: self.path.clone(),
            entry: entry.to_string(),
            field,
            message,
        };
        let positive = |field: &'static str, value: f64| {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                Err(invalid(field, format!("{value} must be > 0")))
            }
        };
        match &body.shape {
            ShapeSpec::Box { size_m } => {
                for s in size_m {
                    positive("shape.size_m", *s)?;
                }
            }
            ShapeSpec::Sphere { radius_m } => positive("shape.radius_m", *radius_m)?,
            ShapeSpec::Capsule { radius_m, length_m } => {
                positive("shape.radius_m", *radius_m)?;
                positive("shape.length_m", *length_m)?;
            }
            ShapeSpec::Convex { points_m } => {
                if points_m.len() < 4 {
                    return Err(invalid("shape.points_m", "needs at least 4 points".into()));
                }
                if points_m.iter().flatten().any(|x| !x.is_finite()) {
                    return Err(invalid("shape.points_m", "must be finite".into()));
                }
            }
            ShapeSpec::TetMesh { mesh } => {
                MeshSpec::parse(mesh).map_err(|e| invalid("shape.mesh", e.to_string()))?;
                if body.kind == BodyKind::Static {
                    return Err(invalid(
                        "kind",
                        "a tet mesh body breaks, so it must be dynamic".into(),
                    ));
                }
            }
        }
        Ok(())
    }

    /// A mesh file named relative to the scene file resolves against the
    /// scene's directory; generators and absolute paths pass through.
    pub fn resolve_mesh(&self, spec: &str) -> Result<MeshSpec, crate::mesh::MeshError> {
        Ok(match MeshSpec::parse(spec)? {
            MeshSpec::File(file) if file.is_relative() => {
                let base = self.path.parent().unwrap_or(Path::new("."));
                MeshSpec::File(base.join(file))
            }
            other => other,
        })
    }
}

impl BodySpec {
    /// Positions of the copies (one for a body without `array`).
    pub fn positions_m(&self) -> Vec<[f64; 3]> {
        let Some(array) = &self.array else {
            return vec![self.position_m];
        };
        let [nx, ny] = array.columns;
        (0..array.count)
            .map(|i| {
                let (ix, iy, iz) = (i % nx, (i / nx) % ny, i / (nx * ny));
                [
                    self.position_m[0] + ix as f64 * array.spacing_m[0],
                    self.position_m[1] + iy as f64 * array.spacing_m[1],
                    self.position_m[2] + iz as f64 * array.spacing_m[2],
                ]
            })
            .collect()
    }
}
