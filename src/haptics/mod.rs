//! The multirate haptic server (Glondu 2012 §4.3.2–4.3.3, DESIGN.md
//! Threads): a 1 kHz haptic thread that steps a small sub-world around the
//! proxy, a simulation thread that steps the global world every r_sim
//! ticks, the scaling interface between simulation and device, and the
//! virtual coupling between device and proxy.

mod controls;
mod coupling;
mod deadlines;
mod haptic_loop;
mod keeper;
mod log_scene;
mod realtime;
mod scaling;
mod server;
mod simulation;
mod stats;
mod sync;
mod view;
mod watch;

// The priority of the threads that work beside a session, beside the
// real-time scheduling of its own (`realtime`).
pub use crate::worker::{background_pool, BACKGROUND_NICE};
pub use controls::{Answer, ControlError, SessionControls, SPEED_RANGE};
pub use coupling::{CouplingGains, Integration, ProxyState, VirtualCoupling};
pub use deadlines::Deadlines;
pub use haptic_loop::{LoopError, Notice};
pub use keeper::{CommandGaps, DeviceKeeper, KeeperError, KeeperTicks, KeptDevice};
pub use realtime::{
    private_arenas, reserve_heap, simulation_threads, CpuPin, HeapReserveError, HostSteal,
    ParseCpuPinError, PinError, RealtimeReport, SimulationRealtime, HAPTIC_HEAP_RESERVE_BYTES,
    KEEPER_PRIORITY, SIMULATION_HEAP_RESERVE_BYTES, SIMULATION_PRIORITY,
};
pub use scaling::{Motion, Scaling, Wrench};
pub use server::{
    serve, Commanded, FractureSummary, FractureToFeel, Outcome, ServeInputs, ServerError,
    ServerOptions, Summary, HAPTIC_RATE_HZ,
};
pub use stats::{Distribution, LoopStats, SlowestTick, SyncStats};
pub use view::{
    BodyPose, BodyView, ContactView, FractureView, SignalSample, ViewFeed, ViewFrame, ViewSession,
    ViewStats, SIGNAL_EVERY_TICKS,
};
pub use watch::{BodyWatch, STRIKE_SPEED_M_S};
