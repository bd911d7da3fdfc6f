//! TOML configuration: schemas with validation. Every error names the file,
//! the entry and the field.

mod adaptive;
mod error;
mod haptic;
mod material;
mod scene;
mod study;

pub use adaptive::{Placement, QuestRules, StaircaseRules, StepType, StopWhen};
pub use error::ConfigError;
pub use haptic::{HapticSpec, ScalingFactors};
pub use material::{Material, MaterialLibrary, WeibullCriterion, BUILTIN_MATERIALS_PATH};
pub use scene::{ArraySpec, BodyKind, BodySpec, DropSpec, Scene, ShapeSpec, WorldSettings};
pub use study::{
    material_fields, Answers, Condition, Design, HapticOverrides, LevelUnit, Stimulus, Study,
    MAX_TRIALS_PER_SESSION,
};

/// The text of a configuration file; a read failure names the file.
fn read_text(path: &std::path::Path) -> Result<String, ConfigError> {
    crate::assets::read_text(path).map_err(|source| ConfigError::Io {
        path: path.to_path_buf(),
        source,
    })
}
