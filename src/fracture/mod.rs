//! Brittle fracture (Glondu 2012 §3.1–3.3): the fracture state of a body,
//! crack surfaces and their propagation, fragments. This module knows nothing
//! of the rigid-body world: its inputs are cracks (and, to come, contact
//! events), its outputs are fragments.

mod fragments;
mod propagate;
mod state;
mod surface;

pub use fragments::{fragments, Fragment, MassIntegrals};
pub use propagate::{propagate, Crack, CrackStop, EnergyBalance};
pub use state::FractureState;
pub use surface::CrackSurface;
