//! Brittle fracture (Glondu 2012 §3.1–3.3): the fracture state of a body,
//! crack surfaces and their propagation, fragments. This module knows nothing
//! of the rigid-body world: its inputs are contact events and held loads,
//! its outputs are cracks and fragments.

mod background;
mod batdorf;
mod body;
mod contact;
mod energy;
mod flexure;
mod fragments;
mod hertz;
mod impact;
mod impact_stress;
mod initiation;
mod pattern;
mod propagate;
mod residual_tail;
mod shielding;
mod state;
mod strength;
mod stress;
mod surface;
mod weak_points;
mod worker_local;

pub use background::{BasisJob, BasisResult, BasisWorker};
pub use body::{BodyBytes, BreakableBody};
pub use energy::{EnergyLedger, EnergyTables, PendingDensities, StrainEnergy};
pub use flexure::{FlexureError, FlexureField, RingOnRing, ThreePointBending};
pub use fragments::{fragments, Fragment};
pub use hertz::{
    rigid_gains, ContactEnd, ContactHistory, ContactModel, HertzContact, ModesAtRest, PhaseImpulses,
};
pub use impact::{ContactPoint, Counters, FractureSettings, ImpactOutcome, Impactor, StaticLoad};
pub use impact_stress::{ImpactStress, StressField};
pub use pattern::{emd_1d, Pattern, PatternDistance, PatternWeights};
pub use propagate::{propagate, propagate_deferred, Crack, CrackScratch, CrackStop, EnergyBalance};
pub use shielding::{CrackShield, TractionFactors};
pub use state::FractureState;
pub use strength::{
    effective_size, whole_size, EventStrength, FlawPopulation, RateScaling, SimplexRule, Strength,
    WeibullScaling,
};
pub use stress::{max_principal_stress, principal_direction};
pub use surface::{resolved_octaves, CrackSurface, MAX_NOISE_OCTAVES};
pub use weak_points::WeakPoints;
