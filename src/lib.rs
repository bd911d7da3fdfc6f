//! tessera: a haptic interaction server for brittle fracture.
//!
//! Layers, lowest first (no module imports one above it): [`mesh`] →
//! [`fem`] → [`modal`]; [`config`] holds the validated TOML schemas they
//! read. See `DESIGN.md` in the shared folder for the whole architecture.

pub mod assets;
pub mod config;
pub mod device;
pub mod fem;
pub mod fracture;
pub mod haptics;
pub mod limits;
pub mod mesh;
pub mod modal;
pub mod session;
pub mod world;
