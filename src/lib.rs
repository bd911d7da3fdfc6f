//! tessera: a haptic interaction server for brittle fracture.
//!
//! A person holds a force-feedback arm, moves a proxy body and breaks
//! virtual tiles and plates, at 1 kHz (Glondu 2012, chapters 3–4). This
//! crate is the library behind the `tessera` command. Its layers, lowest
//! first; no module imports one above it (`ARCHITECTURE.md` in the
//! repository draws the data path and the threads):
//!
//! * [`mesh`]: tetrahedral meshes, their validation, generators, readers
//!   and writers.
//! * [`fem`]: linear tetrahedral elasticity, assembly of `K` and `M`.
//! * [`modal`]: the eigenproblem `K x = λ M x`, the modal basis with its
//!   damped dynamics and modal stress tables, and their on-disk cache.
//! * [`fracture`]: breakable bodies: impact and static fracture, crack
//!   propagation with the energy stop, fragments.
//! * [`world`]: the rigid-body world (rapier3d) with breakable bodies,
//!   scenes, and the haptic sub-world.
//! * [`haptics`]: the 1 kHz haptic loop, the simulation thread, virtual
//!   coupling, the scaling interface and [`haptics::serve`].
//! * [`device`]: the device interface, the safety layer, the HID driver and
//!   the simulated arm.
//! * [`session`]: session logs (MCAP), written and read.
//!
//! Shared leaves: [`config`] (validated TOML schemas), [`limits`] (memory
//! and count limits for what input asks for) and [`assets`] (the shipped
//! configuration files).
//!
//! The methods are documented in `docs/` in the repository, with the
//! equations they implement.

// Items are public only where the crate exports them (one path per item).
#![warn(unreachable_pub)]

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
