//! The multirate haptic server (Glondu 2012 §4.3.2–4.3.3, DESIGN.md
//! Threads): a 1 kHz haptic thread that steps a small sub-world around the
//! proxy, a simulation thread that steps the global world every r_sim
//! ticks, the scaling interface between simulation and device, and the
//! virtual coupling between device and proxy.

pub mod coupling;
pub mod deadlines;
mod haptic_loop;
pub mod realtime;
pub mod scaling;
mod server;
mod simulation;
pub mod stats;
mod sync;

pub use coupling::{CouplingGains, Integration, ProxyState, VirtualCoupling};
pub use deadlines::Deadlines;
pub use haptic_loop::{LoopError, Notice};
pub use realtime::{CpuPin, HostSteal, RealtimeReport, SimulationRealtime};
pub use scaling::{Motion, Scaling, Wrench};
pub use server::{
    serve, Commanded, FractureSummary, Outcome, ServeInputs, ServerError, ServerOptions, Summary,
    HAPTIC_RATE_HZ,
};
pub use stats::{Distribution, LoopStats, SyncStats};
