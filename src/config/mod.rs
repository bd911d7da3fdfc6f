//! TOML configuration: schemas with validation. Every error names the file,
//! the entry and the field.

mod error;
mod material;
mod scene;

pub use error::ConfigError;
pub use material::{Material, MaterialLibrary, BUILTIN_MATERIALS_PATH};
pub use scene::{
    ArraySpec, BodyKind, BodySpec, DropSpec, Scene, ShapeSpec, WorldSettings, SCENES_DIR,
};
