//! What a session shows a viewer: the simulation thread's frames (body
//! poses, bodies added and removed with their surfaces, fractures) and the
//! haptic thread's decimated tick records, handed over without ever making
//! either thread wait (ARCHITECTURE.md, Threads).
//!
//! The simulation thread merges its frames into one pending frame under a
//! `try_lock`: when the reader holds the lock, the frame waits in the
//! publisher and is merged at the next sync, so no body or fracture is
//! lost and the thread never blocks. The haptic thread pushes every
//! [`SIGNAL_EVERY_TICKS`]th tick record into a bounded lock-free queue;
//! when it is full the record is dropped. The session log's 3D channels
//! are written from the same body differences (`log_scene.rs`).

use crate::session::TickRecord;
use crate::world::{BodyId, World};
use crossbeam_queue::ArrayQueue;
use serde::Serialize;
use std::collections::BTreeSet;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, TryLockError};
use std::time::{Duration, Instant};

/// Haptic ticks per signal sample (100 Hz at 1 kHz).
pub const SIGNAL_EVERY_TICKS: u64 = 10;

/// Signal samples the queue holds: 10 s at 100 Hz.
const SIGNAL_QUEUE: usize = 1000;

/// Shortest wall time between two published frames (60 per second).
const FRAME_INTERVAL: Duration = Duration::from_micros(16_667);

/// A body as a viewer first sees it: its surface in its own frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BodyView {
    /// Stable id ([`BodyId`]).
    pub id: u32,
    /// Name from the scene (fragments: the parent's name and `/N`).
    pub name: String,
    /// `static`, `dynamic` or `breakable`.
    pub kind: &'static str,
    /// The body it is a fragment of.
    pub parent: Option<u32>,
    /// Volume (m³).
    pub volume_m3: f64,
    /// Surface points in the body's frame (m).
    pub points_m: Vec<[f32; 3]>,
    /// Triangles of `points_m`, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
    /// Indices of the triangles on crack surfaces (a fragment's).
    pub crack_triangles: Vec<u32>,
}

/// A body's pose: translation (m) and unit quaternion (w, x, y, z).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BodyPose {
    /// The body.
    pub id: u32,
    /// Translation of its frame (m).
    pub position_m: [f64; 3],
    /// Rotation of its frame, (w, x, y, z).
    pub orientation_wxyz: [f64; 4],
}

/// A fracture as a viewer lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FractureView {
    /// Session time (s).
    pub time_s: f64,
    /// The body that broke.
    pub body: String,
    /// Its id.
    pub id: u32,
    /// Bodies that replaced it.
    pub fragments: Vec<u32>,
    /// Crack area (m²).
    pub crack_area_m2: f64,
    /// Largest principal stress found (Pa).
    pub peak_stress_pa: f64,
    /// The broken body's mass (kg).
    pub parent_mass_kg: f64,
    /// Mass of the pieces removed as debris (kg).
    pub debris_mass_kg: f64,
}

/// A contact of the last global step on a breakable body.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ContactView {
    /// On the body's surface, in the scene (m).
    pub point_m: [f64; 3],
    /// Unit normal into the body.
    pub normal: [f64; 3],
    /// Normal impulse of the step (N·s).
    pub impulse_n_s: f64,
}

/// Most contacts a frame carries (the largest impulses).
const MAX_FRAME_CONTACTS: usize = 256;

/// A haptic tick as a viewer plots it: the tick's record, where the device
/// puts the proxy's goal in the scene, and the running count of late syncs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignalSample {
    /// The tick's record.
    pub record: TickRecord,
    /// The device's pose mapped into the scene: where the coupling pulls
    /// the proxy (m).
    pub goal_position_m: [f64; 3],
    /// Synchronisations so far whose answer came late.
    pub late_syncs: u64,
}

/// What changed in the world since the previous frame a reader took.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ViewFrame {
    /// Session time of the newest merged frame (s).
    pub time_s: f64,
    /// Haptic tick of the newest merged frame.
    pub tick: u64,
    /// Bodies that appeared, in order.
    pub added: Vec<BodyView>,
    /// Bodies that went away (broken or removed), in order.
    pub removed: Vec<u32>,
    /// The pose of every live body.
    pub poses: Vec<BodyPose>,
    /// Fractures, in order.
    pub fractures: Vec<FractureView>,
    /// Contacts of the newest merged frame's global step.
    pub contacts: Vec<ContactView>,
    /// Breakable bodies' last impacts since the previous frame (the newest
    /// per body; for a body that split, the load it split under), for the
    /// stress view; evaluated by the reader.
    #[serde(skip)]
    pub impacts: Vec<(u32, crate::fracture::ImpactStress)>,
    /// This frame starts a new run of the session (a restart): a reader
    /// forgets every body it knew, and `added` holds them all.
    pub reset: bool,
    /// When the newest merged frame was handed over (for the viewer's
    /// latency figures).
    #[serde(skip)]
    pub handed_over_at: Option<Instant>,
}

/// What a viewer did over a session (`--json` reports it as `ui`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ViewStats {
    /// Clients that connected.
    pub clients: u64,
    /// Clients dropped because they did not keep up.
    pub dropped_clients: u64,
    /// Frames sent, summed over clients.
    pub frames_sent: u64,
    /// From the simulation thread's hand-over of a frame to the end of its
    /// WebSocket send, median and 99th percentile (µs).
    pub frame_latency_us_p50: f64,
    /// See `frame_latency_us_p50`.
    pub frame_latency_us_p99: f64,
}

impl ViewFrame {
    /// Appends `newer` to this frame: its bodies, removals and fractures
    /// after these, its poses and time instead of these.
    fn merge(&mut self, newer: ViewFrame) {
        if newer.reset {
            *self = newer;
            return;
        }
        self.time_s = newer.time_s;
        self.tick = newer.tick;
        self.handed_over_at = newer.handed_over_at;
        self.added.extend(newer.added);
        self.removed.extend(newer.removed);
        self.poses = newer.poses;
        self.contacts = newer.contacts;
        self.impacts.extend(newer.impacts);
        self.fractures.extend(newer.fractures);
    }
}

/// Facts of a session fixed at its start.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ViewSession {
    /// `real-time` or `lockstep` (or `replay`).
    pub mode: &'static str,
    /// The scene's path or name.
    pub scene: String,
    /// The device's name.
    pub device: String,
    /// The proxy's body id.
    pub proxy: u32,
    /// Planned session length (s).
    pub seconds: f64,
    /// Whether a viewer may pause, step, pace, seek and restart it: a
    /// lockstep session whose hand is scripted (no one holds the arm).
    pub controls: bool,
}

/// The hand-over between a session's threads and its viewer.
#[derive(Debug)]
pub struct ViewFeed {
    session: Mutex<ViewSession>,
    pending: Mutex<Option<ViewFrame>>,
    signals: ArrayQueue<SignalSample>,
    ticks: AtomicU64,
    finished: AtomicBool,
    late_syncs: AtomicU64,
    safety_trips: AtomicU32,
    /// Fragments' own modal bases queued and not yet adopted.
    analysing: AtomicU32,
    /// The scheduling the haptic thread obtained, as the status shows it.
    realtime: Mutex<String>,
    /// Called after each frame is handed over: wakes the reader
    /// ([`ViewFeed::on_hand_over`]).
    hand_over_hook: OnceLock<Hook>,
}

/// What [`ViewFeed::on_hand_over`] calls.
struct Hook(Box<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hook")
    }
}

impl Default for ViewFeed {
    fn default() -> Self {
        Self {
            session: Mutex::default(),
            pending: Mutex::default(),
            signals: ArrayQueue::new(SIGNAL_QUEUE),
            ticks: AtomicU64::new(0),
            finished: AtomicBool::new(false),
            late_syncs: AtomicU64::new(0),
            safety_trips: AtomicU32::new(0),
            analysing: AtomicU32::new(0),
            realtime: Mutex::default(),
            hand_over_hook: OnceLock::new(),
        }
    }
}

impl ViewFeed {
    /// An empty feed, shared between a session and its viewer.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The session's fixed facts.
    pub fn session(&self) -> ViewSession {
        self.session.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Has the simulation thread call `hook` after it hands a frame over,
    /// so that the reader takes the frame at once instead of at its next
    /// round. One hook per feed: `false` (and `hook` dropped) if one is
    /// set already. The hook runs on the simulation thread, so it must
    /// neither block nor wait (a `try_send` on a bounded channel).
    pub fn on_hand_over(&self, hook: Box<dyn Fn() + Send + Sync>) -> bool {
        self.hand_over_hook.set(Hook(hook)).is_ok()
    }

    /// Everything merged since the last call, if anything was.
    pub fn take_frame(&self) -> Option<ViewFrame> {
        self.pending.lock().ok()?.take()
    }

    /// The signal samples queued since the last call, oldest first.
    pub fn take_signals(&self, into: &mut Vec<SignalSample>) {
        while let Some(record) = self.signals.pop() {
            into.push(record);
        }
    }

    /// Ticks the haptic loop has run.
    pub fn ticks(&self) -> u64 {
        self.ticks.load(Ordering::Relaxed)
    }

    /// Whether the session has ended.
    pub fn finished(&self) -> bool {
        self.finished.load(Ordering::Relaxed)
    }

    /// Synchronisations whose answer came late, so far.
    pub fn late_syncs(&self) -> u64 {
        self.late_syncs.load(Ordering::Relaxed)
    }

    /// Times the safety layer tripped, so far.
    pub fn safety_trips(&self) -> u32 {
        self.safety_trips.load(Ordering::Relaxed)
    }

    /// Fragments whose own modal basis is being analysed, as of the last
    /// sync ([`crate::world::World::pending_own_bases`]). A lockstep
    /// session waits for them at its next sync, so its clock stands still
    /// meanwhile; a real-time one goes on.
    pub fn analysing(&self) -> u32 {
        self.analysing.load(Ordering::Relaxed)
    }

    /// The scheduling the haptic thread obtained (empty before it starts).
    pub fn realtime(&self) -> String {
        self.realtime.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// A new run of the session starts (also after a restart).
    pub(super) fn set_session(&self, session: ViewSession) {
        if let Ok(mut s) = self.session.lock() {
            *s = session;
        }
        self.ticks.store(0, Ordering::Relaxed);
        self.late_syncs.store(0, Ordering::Relaxed);
        self.safety_trips.store(0, Ordering::Relaxed);
        self.analysing.store(0, Ordering::Relaxed);
        self.finished.store(false, Ordering::Relaxed);
        while self.signals.pop().is_some() {}
    }

    /// Haptic thread, before its loop: what the scheduler gave it. Never
    /// waits: with the viewer reading it, the status keeps the old text.
    pub(super) fn set_realtime(&self, text: String) {
        if let Ok(mut r) = self.realtime.try_lock() {
            *r = text;
        }
    }

    /// Haptic thread: the tick's sample, every [`SIGNAL_EVERY_TICKS`]th
    /// tick, and the running counts; never blocks, never allocates.
    pub(super) fn tick(&self, sample: &SignalSample, safety_trips: u64) {
        let tick = sample.record.tick;
        self.ticks.store(tick + 1, Ordering::Relaxed);
        self.late_syncs.store(sample.late_syncs, Ordering::Relaxed);
        self.safety_trips.store(
            safety_trips.min(u64::from(u32::MAX)) as u32,
            Ordering::Relaxed,
        );
        if tick % SIGNAL_EVERY_TICKS == 0 {
            let _ = self.signals.push(*sample);
        }
    }

    pub(super) fn finish(&self) {
        self.finished.store(true, Ordering::Relaxed);
    }
}

/// The simulation thread's side of a [`ViewFeed`]: which bodies the viewer
/// has been told of, and what is not handed over yet.
pub(super) struct ViewPublisher {
    feed: Arc<ViewFeed>,
    bodies: BodyDiff,
    unsent: ViewFrame,
    last_publish: Option<Instant>,
    /// Session time and tick of a sync whose state is not handed over yet.
    stale: Option<(f64, u64)>,
    /// The tick of the last frame handed over.
    handed_tick: Option<u64>,
    /// The serial of each breakable body's last impact handed over.
    impacts_seen: std::collections::BTreeMap<BodyId, u64>,
}

impl ViewPublisher {
    pub(super) fn new(feed: Arc<ViewFeed>) -> Self {
        Self {
            feed,
            bodies: BodyDiff::default(),
            // A run's first frame replaces whatever a reader knew.
            unsent: ViewFrame {
                reset: true,
                ..ViewFrame::default()
            },
            last_publish: None,
            stale: None,
            handed_tick: None,
            impacts_seen: std::collections::BTreeMap::new(),
        }
    }

    /// The feed it publishes to.
    pub(super) fn feed(&self) -> Arc<ViewFeed> {
        Arc::clone(&self.feed)
    }

    /// After a global step: records the world's new and removed bodies and
    /// `new_fractures`, and hands a frame over if the last one is at least
    /// [`FRAME_INTERVAL`] old (wall time). Never blocks.
    pub(super) fn publish(
        &mut self,
        world: &World,
        time_s: f64,
        tick: u64,
        new_fractures: &[crate::world::FractureEvent],
    ) {
        self.bodies
            .update(world, &mut self.unsent.added, &mut self.unsent.removed);
        self.note_impacts(world);
        self.unsent
            .fractures
            .extend(new_fractures.iter().map(|e| FractureView {
                time_s,
                body: e.name.clone(),
                id: e.body.0,
                fragments: e.fragments.iter().map(|f| f.0).collect(),
                crack_area_m2: e.crack_area_m2,
                peak_stress_pa: e.peak_stress_pa,
                parent_mass_kg: e.parent_mass_kg,
                debris_mass_kg: e.debris_mass_kg,
            }));
        if self.due() {
            self.hand_over(world, time_s, tick, false);
        } else {
            self.stale = Some((time_s, tick));
        }
    }

    /// Notes the breakable bodies struck since the last sync, and the
    /// last loads of those that split (shared handles only: the reader
    /// evaluates the stresses).
    fn note_impacts(&mut self, world: &World) {
        for (id, load) in world.last_split_loads() {
            if self.impacts_seen.get(id) != Some(&load.serial) {
                self.unsent.impacts.retain(|(other, _)| *other != id.0);
                self.unsent.impacts.push((id.0, load.clone()));
            }
        }
        self.impacts_seen.retain(|id, _| world.body(*id).is_some());
        for (id, body) in world.bodies() {
            let Some(impact) = body
                .breakable
                .as_ref()
                .and_then(|b| b.body.last_impact_stress())
            else {
                continue;
            };
            if self.impacts_seen.insert(id, impact.serial) != Some(impact.serial) {
                self.unsent.impacts.retain(|(other, _)| *other != id.0);
                self.unsent.impacts.push((id.0, impact));
            }
        }
    }

    /// Simulation thread, after a sync's step: the fragments' analyses
    /// queued and not yet adopted.
    pub(super) fn set_analysing(&self, world: &World) {
        let analysing = u32::try_from(world.pending_own_bases()).unwrap_or(u32::MAX);
        self.feed.analysing.store(analysing, Ordering::Relaxed);
    }

    fn due(&self) -> bool {
        self.last_publish
            .is_none_or(|t| t.elapsed() >= FRAME_INTERVAL)
    }

    /// Between syncs: hands the last sync's state over if the frame rate
    /// held it back, so a paused session shows where it stopped.
    pub(super) fn flush(&mut self, world: &World) {
        if let Some((time_s, tick)) = self.stale {
            if self.due() {
                self.hand_over(world, time_s, tick, false);
            }
        }
    }

    /// Hands what is not handed over yet to the feed, with the world's
    /// poses, waiting for the reader's lock only if `wait` (at the end of a
    /// session, so that the viewer gets the last frame).
    fn hand_over(&mut self, world: &World, time_s: f64, tick: u64, wait: bool) {
        self.unsent.time_s = time_s;
        self.unsent.tick = tick;
        self.unsent.poses = poses(world);
        self.unsent.contacts = contacts(world);
        let locked = if wait {
            self.feed.pending.lock().map_err(TryLockError::from)
        } else {
            self.feed.pending.try_lock()
        };
        let mut pending = match locked {
            Ok(pending) => pending,
            // The reader holds it: merged at the next sync or flush.
            Err(TryLockError::WouldBlock) => {
                self.stale = Some((time_s, tick));
                return;
            }
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
        };
        let mut frame = std::mem::take(&mut self.unsent);
        frame.handed_over_at = Some(Instant::now());
        match pending.as_mut() {
            Some(older) => older.merge(frame),
            None => *pending = Some(frame),
        }
        drop(pending);
        self.last_publish = Some(Instant::now());
        self.stale = None;
        self.handed_tick = Some(tick);
        if let Some(Hook(hook)) = self.feed.hand_over_hook.get() {
            hook();
        }
    }

    /// At the session's end: hands the state at `tick` over, waiting for
    /// the reader's lock, unless the last frame already showed it (a
    /// reader sees each tick once).
    pub(super) fn finish(&mut self, world: &World, time_s: f64, tick: u64) {
        if self.stale.is_none() && self.handed_tick == Some(tick) {
            return;
        }
        self.hand_over(world, time_s, tick, true);
    }
}

/// Which bodies a reader has been told of.
#[derive(Default)]
pub(super) struct BodyDiff {
    known: BTreeSet<BodyId>,
}

impl BodyDiff {
    /// Appends the world's bodies not told of yet to `added` and those
    /// gone since to `removed`.
    pub(super) fn update(
        &mut self,
        world: &World,
        added: &mut Vec<BodyView>,
        removed: &mut Vec<u32>,
    ) {
        let live: BTreeSet<BodyId> = world.bodies().map(|(id, _)| id).collect();
        let gone: Vec<BodyId> = self.known.difference(&live).copied().collect();
        for id in gone {
            self.known.remove(&id);
            removed.push(id.0);
        }
        for (id, body) in world.bodies() {
            if self.known.insert(id) {
                added.push(body_view(id, body));
            }
        }
    }
}

/// Every live body's pose.
pub(super) fn poses(world: &World) -> Vec<BodyPose> {
    world
        .bodies()
        .filter_map(|(id, _)| {
            let pose = world.pose(id)?;
            let q = pose.rotation.quaternion();
            Some(BodyPose {
                id: id.0,
                position_m: pose.translation.vector.into(),
                orientation_wxyz: [q.w, q.i, q.j, q.k],
            })
        })
        .collect()
}

/// The last global step's contacts on breakable bodies, the largest
/// impulses first, at most [`MAX_FRAME_CONTACTS`].
fn contacts(world: &World) -> Vec<ContactView> {
    let mut contacts: Vec<ContactView> = world
        .last_contacts()
        .iter()
        .filter(|c| c.impulse_n_s > 0.0)
        .map(|c| ContactView {
            point_m: c.point_m.coords.into(),
            normal: c.normal.into(),
            impulse_n_s: c.impulse_n_s,
        })
        .collect();
    contacts.sort_by(|a, b| b.impulse_n_s.total_cmp(&a.impulse_n_s));
    contacts.truncate(MAX_FRAME_CONTACTS);
    contacts
}

fn body_view(id: BodyId, body: &crate::world::WorldBody) -> BodyView {
    BodyView {
        id: id.0,
        name: body.name.clone(),
        kind: match (body.breakable.is_some(), body.mass_kg.is_some()) {
            (true, _) => "breakable",
            (false, true) => "dynamic",
            (false, false) => "static",
        },
        parent: body.parent.map(|p| p.0),
        volume_m3: body.volume_m3,
        points_m: body
            .surface
            .points
            .iter()
            .map(|p| [p.x as f32, p.y as f32, p.z as f32])
            .collect(),
        triangles: body.surface.triangles.clone(),
        crack_triangles: body.surface.crack_triangles.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::WorldSettings;
    use std::sync::atomic::AtomicUsize;

    /// The feed's hook runs once per frame handed over, after the frame is
    /// in the feed, and not when the frame rate holds a frame back; a feed
    /// takes one hook.
    #[test]
    fn the_hook_runs_once_per_frame_handed_over() {
        let feed = ViewFeed::new();
        let calls = Arc::new(AtomicUsize::new(0));
        let seen_frames = Arc::new(AtomicUsize::new(0));
        let hook_feed = Arc::downgrade(&feed);
        let (hook_calls, hook_frames) = (Arc::clone(&calls), Arc::clone(&seen_frames));
        assert!(feed.on_hand_over(Box::new(move || {
            hook_calls.fetch_add(1, Ordering::SeqCst);
            // The frame is there to take when the hook runs.
            if let Some(feed) = hook_feed.upgrade() {
                if feed.pending.try_lock().is_ok_and(|p| p.is_some()) {
                    hook_frames.fetch_add(1, Ordering::SeqCst);
                }
            }
        })));
        assert!(!feed.on_hand_over(Box::new(|| {})), "one hook per feed");

        let world = World::new(WorldSettings::default(), 0);
        let mut publisher = ViewPublisher::new(Arc::clone(&feed));
        publisher.publish(&world, 0.01, 10, &[]);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(seen_frames.load(Ordering::SeqCst), 1);
        assert!(feed.take_frame().is_some());
        // Within the frame interval the frame is held back (unless this
        // thread was descheduled for that long): a call per frame.
        publisher.publish(&world, 0.02, 20, &[]);
        let second = feed.take_frame();
        assert_eq!(
            calls.load(Ordering::SeqCst),
            1 + usize::from(second.is_some())
        );
        // The session's end hands a held-back frame over whatever the rate.
        publisher.finish(&world, 0.02, 20);
        let last = second.or_else(|| feed.take_frame());
        assert_eq!(last.map(|f| f.tick), Some(20));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(seen_frames.load(Ordering::SeqCst), 2);
        assert!(feed.take_frame().is_none());
    }
}
