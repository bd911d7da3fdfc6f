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
//!
//! # Examples
//!
//! A mesh from a generator spec, its modal analysis, and an impact that
//! breaks it (Glondu 2012 §3.3):
//!
//! ```
//! use nalgebra::{Point3, Vector3};
//! use tessera::config::MaterialLibrary;
//! use tessera::fracture::{BreakableBody, ContactPoint, Counters, FractureSettings, Impactor};
//! use tessera::mesh::MeshSpec;
//! use tessera::modal::{analyse, EigenSettings};
//!
//! // Parallel work runs on the pool the caller passes.
//! let threads = rayon::ThreadPoolBuilder::new().build()?;
//! let mesh = MeshSpec::parse("tile:0.15,0.006:12,2")?.load()?;
//! let material = MaterialLibrary::builtin().get("ceramic-tile")?.clone();
//! let (basis, _report) = analyse(&mesh, &material, &EigenSettings::new(20), None, &threads, &|_| {})?;
//! let mut tile = BreakableBody::new(mesh, material, basis, 0)?;
//! // The 110 g steel ball at 10 m/s (a 5 m drop) on the tile's centre.
//! let strike = [ContactPoint {
//!     point_m: Point3::new(0.0, 0.0, 0.006),
//!     normal: -Vector3::z(),
//!     impulse_n_s: 1.1,
//!     relative_speed_m_s: 10.0,
//!     impactor: Impactor::steel_ball(),
//!     face: None,
//!     gap_m: 0.0,
//! }];
//! let mut counters = Counters::default();
//! let outcome = tile.impact(
//!     &strike,
//!     &FractureSettings::default(),
//!     &threads,
//!     &mut counters,
//! );
//! assert!(outcome.peak_stress_pa > tile.material().rankine_threshold_pa);
//! let pieces = tile.fragments(&threads);
//! assert!(pieces.len() >= 2);
//! // The pieces share out the tile's volume.
//! let volume_m3: f64 = pieces.iter().map(|p| p.volume_m3).sum();
//! assert!((volume_m3 - 0.15 * 0.15 * 0.006).abs() < 1e-12);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A scene loaded and its world stepped: a steel ball dropped onto the
//! ground comes to rest on it.
//!
//! ```
//! use std::path::Path;
//! use tessera::config::{MaterialLibrary, Scene};
//! use tessera::world::{Counters, SceneAssets, StepInputs, World};
//!
//! let scene = Scene::parse(
//!     r#"
//!     [world]
//!     time_step_s = 0.005
//!
//!     [[body]]
//!     name = "ground"
//!     kind = "static"
//!     shape = { type = "box", size_m = [1.0, 1.0, 0.1] }
//!     material = "concrete"
//!     position_m = [0.0, 0.0, -0.05]
//!
//!     [[body]]
//!     name = "ball"
//!     kind = "dynamic"
//!     shape = { type = "sphere", radius_m = 0.02 }
//!     material = "steel"
//!     position_m = [0.0, 0.0, 0.1]
//!     restitution = 0.0
//!     "#,
//!     Path::new("drop.toml"),
//! )?;
//! let threads = rayon::ThreadPoolBuilder::new().build()?;
//! let assets = SceneAssets::load(&scene, &MaterialLibrary::builtin(), None, &threads, &|_| {})?;
//! let mut world = World::from_scene(&scene, &assets, 0, &threads)?;
//! let ball = world.find("ball").expect("the scene's ball");
//! let mut counters = Counters::default();
//! for _ in 0..200 {
//!     world.step(&StepInputs::default(), &threads, &mut counters);
//! }
//! assert_eq!(counters.steps, 200);
//! // At rest on the ground's top face (z = 0), its centre one radius up.
//! let height_m = world.pose(ball).expect("live").translation.z;
//! assert!((height_m - 0.02).abs() < 1e-3, "{height_m}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// Items are public only where the crate exports them (one path per item).
#![warn(unreachable_pub, missing_docs)]

pub mod assets;
pub mod cache_eviction;
pub mod config;
mod contained;
pub mod device;
pub mod fem;
pub mod fracture;
pub mod haptics;
pub mod limits;
pub mod mesh;
pub mod modal;
pub mod session;
pub mod study;
pub mod ui;
mod worker;
pub mod world;
