//! TOML configuration: schemas with validation. Every error names the file,
//! the entry and the field.

mod error;
mod material;

pub use error::ConfigError;
pub use material::{Material, MaterialLibrary, BUILTIN_MATERIALS_PATH};
