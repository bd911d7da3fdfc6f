//! Brittle fracture (Glondu 2012 §3.1–3.3): the fracture state of a body,
//! crack surfaces and their propagation, fragments. This module knows nothing
//! of the rigid-body world: its inputs are contact events and held loads,
//! its outputs are cracks and fragments.

mod fragments;
mod impact;
mod propagate;
mod state;
mod stress;
mod surface;

pub use fragments::{fragments, Fragment, MassIntegrals};
pub use impact::{
    BreakableBody, ContactPoint, FractureSettings, ImpactOutcome, Impactor, PhaseTimes, StaticLoad,
};
pub use propagate::{propagate, Crack, CrackStop, EnergyBalance};
pub use state::FractureState;
pub use stress::{max_principal_stress, principal_direction};
pub use surface::CrackSurface;
