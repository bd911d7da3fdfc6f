//! The viewer's model of the scene, rebuilt from the feed's frames: what a
//! newly connected client is sent first and what `GET /api/state` returns.

use crate::fracture::ImpactStress;
use crate::haptics::{BodyPose, BodyView, FractureView, SignalSample, ViewFeed, ViewFrame};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

/// Shortest time between two `stress` messages of one body.
const STRESS_INTERVAL: Duration = Duration::from_secs(1);

/// Most stress maps evaluated in one pump round (a 10 800-tet tile's, 36
/// samples of 60 modes, takes tens of milliseconds).
const STRESS_MAPS_PER_ROUND: usize = 2;

/// Signal samples kept for clients that join late: 10 s at 100 Hz.
const SIGNAL_HISTORY: usize = 1000;

/// Bodies, poses and fractures as of the last frame applied.
#[derive(Debug, Default)]
pub(super) struct Model {
    bodies: BTreeMap<u32, BodyView>,
    /// σ₁/R_c of each breakable body's last impact sent, at its surface
    /// points.
    stress: BTreeMap<u32, Vec<f32>>,
    /// Impacts not evaluated yet, the newest per struck body.
    impacts: BTreeMap<u32, PendingStress>,
    /// The last impact evaluated per body, for its fragments to inherit.
    evaluated: BTreeMap<u32, ImpactStress>,
    /// When each body's last `stress` message was made.
    stress_sent_at: BTreeMap<u32, Instant>,
    poses: BTreeMap<u32, BodyPose>,
    fractures: Vec<FractureView>,
    time_s: f64,
    tick: u64,
    /// The newest signal samples, up to [`SIGNAL_HISTORY`].
    signals: VecDeque<SignalSample>,
}

/// An impact to evaluate and the bodies to paint with it: the struck body,
/// or, once it has broken, its fragments (they keep its frame, so its
/// stress field holds at their points).
#[derive(Debug)]
struct PendingStress {
    impact: ImpactStress,
    bodies: Vec<u32>,
}

/// A body in `GET /api/state`.
#[derive(Serialize)]
struct BodyState<'a> {
    id: u32,
    name: &'a str,
    kind: &'static str,
    parent: Option<u32>,
    pose: Option<&'a BodyPose>,
}

/// A body in the `scene` message: its surface and pose.
#[derive(Serialize)]
struct SceneBody<'a> {
    #[serde(flatten)]
    body: &'a BodyView,
    pose: Option<&'a BodyPose>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stress_ratio: Option<&'a Vec<f32>>,
}

/// One signal sample of the `signals` message.
#[derive(Serialize)]
struct Signal {
    tick: u64,
    time_s: f64,
    device_position_m: [f64; 3],
    goal_position_m: [f64; 3],
    proxy_position_m: [f64; 3],
    coupling_force_n: [f64; 3],
    period_us: f32,
    compute_us: f32,
    late_syncs: u64,
}

impl Model {
    /// Applies `frame`. Returns its `frame` message, or for the first
    /// frame of a (re)started run nothing: the caller sends every client a
    /// new `scene`.
    pub(super) fn apply(&mut self, frame: ViewFrame) -> Option<Value> {
        if frame.reset {
            *self = Model::default();
        }
        // Added before removed: a merged frame can hold a fragment that
        // appeared and broke again since the last one (ids are not reused).
        for body in &frame.added {
            self.bodies.insert(body.id, body.clone());
        }
        for (id, impact) in &frame.impacts {
            if self.bodies.contains_key(id) {
                let bodies = vec![*id];
                let impact = impact.clone();
                self.impacts.insert(*id, PendingStress { impact, bodies });
            }
        }
        // A broken body's last impact, usually the one that broke it,
        // passes to its fragments: the map shows where it broke.
        let mut inherited = Vec::new();
        for &id in &frame.removed {
            self.bodies.remove(&id);
            self.poses.remove(&id);
            self.stress.remove(&id);
            self.stress_sent_at.remove(&id);
            let impact = match (self.impacts.remove(&id), self.evaluated.remove(&id)) {
                (Some(pending), _) => Some(pending.impact),
                (None, Some(evaluated)) => Some(evaluated),
                // A fragment that broke again before its parent's map was
                // evaluated.
                (None, None) => self
                    .impacts
                    .values()
                    .find(|p| p.bodies.contains(&id))
                    .map(|p| p.impact.clone()),
            };
            if let Some(impact) = impact {
                inherited.push((id, impact));
            }
        }
        for (id, impact) in inherited {
            // Its fragments, and theirs when they broke again since the
            // last frame, that are still there.
            let mut family = vec![id];
            for body in &frame.added {
                if body.parent.is_some_and(|p| family.contains(&p)) {
                    family.push(body.id);
                }
            }
            family.retain(|b| self.bodies.contains_key(b));
            if !family.is_empty() {
                let bodies = family;
                self.impacts.insert(id, PendingStress { impact, bodies });
            }
        }
        self.poses = frame.poses.iter().map(|p| (p.id, *p)).collect();
        self.fractures.extend(frame.fractures.iter().cloned());
        self.time_s = frame.time_s;
        self.tick = frame.tick;
        (!frame.reset).then(|| {
            let mut message = serde_json::to_value(&frame).unwrap_or(Value::Null);
            message["type"] = json!("frame");
            if let Some(fields) = message.as_object_mut() {
                fields.remove("reset");
            }
            message
        })
    }

    /// `stress` messages for bodies struck since their last one and for
    /// the fragments of broken bodies: at most one impact per body per
    /// [`STRESS_INTERVAL`] and [`STRESS_MAPS_PER_ROUND`] impacts per call,
    /// the others wait. A body in contact is struck at every sync, and
    /// each impact costs the viewer's thread an evaluation of every element
    /// of the body at every sample of the impact.
    pub(super) fn stresses(&mut self, now: Instant) -> Vec<Value> {
        let due: Vec<u32> = self
            .impacts
            .keys()
            .copied()
            .filter(|id| {
                self.stress_sent_at
                    .get(id)
                    .is_none_or(|&at| now.duration_since(at) >= STRESS_INTERVAL)
            })
            .take(STRESS_MAPS_PER_ROUND)
            .collect();
        let mut messages = Vec::new();
        for id in due {
            let Some(PendingStress { impact, bodies }) = self.impacts.remove(&id) else {
                continue;
            };
            let bodies: Vec<&BodyView> = bodies.iter().filter_map(|b| self.bodies.get(b)).collect();
            // One evaluation for all the bodies' points.
            let points: Vec<[f32; 3]> = bodies
                .iter()
                .flat_map(|b| b.points_m.iter().copied())
                .collect();
            let bodies: Vec<(u32, usize)> =
                bodies.iter().map(|b| (b.id, b.points_m.len())).collect();
            let mut ratios = impact.ratios_at(&points).into_iter();
            for (body, points) in bodies {
                // Three decimals: the colour map shows no more.
                let ratio: Vec<f32> = ratios
                    .by_ref()
                    .take(points)
                    .map(|r| (r * 1000.0).round() / 1000.0)
                    .collect();
                messages.push(json!({
                    "type": "stress",
                    "id": body,
                    "time_s": self.time_s,
                    "impact": impact.serial,
                    "max_ratio": ratio.iter().copied().fold(0.0f32, f32::max),
                    "ratio": &ratio,
                }));
                self.stress.insert(body, ratio);
                self.evaluated.insert(body, impact.clone());
            }
            if self.bodies.contains_key(&id) {
                self.stress_sent_at.insert(id, now);
            }
        }
        messages
    }

    /// Keeps the newest samples for clients that join later.
    pub(super) fn keep_signals(&mut self, samples: &[SignalSample]) {
        for sample in samples {
            if self.signals.len() == SIGNAL_HISTORY {
                self.signals.pop_front();
            }
            self.signals.push_back(*sample);
        }
    }

    /// The samples kept, oldest first.
    pub(super) fn signal_history(&self) -> impl Iterator<Item = &SignalSample> {
        self.signals.iter()
    }

    /// The `scene` message: every live body with its surface and pose,
    /// the fractures so far and the status.
    pub(super) fn scene(&self, status: &Value) -> Value {
        let bodies: Vec<SceneBody> = self
            .bodies
            .values()
            .map(|body| SceneBody {
                body,
                pose: self.poses.get(&body.id),
                stress_ratio: self.stress.get(&body.id),
            })
            .collect();
        json!({
            "type": "scene",
            "time_s": self.time_s,
            "tick": self.tick,
            "bodies": bodies,
            "fractures": self.fractures,
            "status": status,
        })
    }

    /// `GET /api/state`: bodies without surfaces, fractures, status.
    pub(super) fn state(&self, status: &Value) -> Value {
        let bodies: Vec<BodyState> = self
            .bodies
            .values()
            .map(|b| BodyState {
                id: b.id,
                name: &b.name,
                kind: b.kind,
                parent: b.parent,
                pose: self.poses.get(&b.id),
            })
            .collect();
        json!({
            "time_s": self.time_s,
            "tick": self.tick,
            "bodies": bodies,
            "fractures": self.fractures,
            "status": status,
        })
    }
}

/// The `status` object: the session's facts and counts, whether it ended,
/// and the controls' state.
pub(super) fn status(
    feed: &ViewFeed,
    controls: Option<&crate::haptics::SessionControls>,
    finished: bool,
    clients: usize,
) -> Value {
    let session = feed.session();
    let controls = controls.filter(|_| session.controls);
    let realtime = feed.realtime();
    json!({
        "mode": session.mode,
        "scene": session.scene,
        "device": session.device,
        "proxy": session.proxy,
        "seconds": session.seconds,
        "ticks": feed.ticks(),
        "finished": finished,
        "clients": clients,
        "realtime": (!realtime.is_empty()).then_some(realtime),
        "late_syncs": feed.late_syncs(),
        "safety_trips": feed.safety_trips(),
        "controls": controls.is_some(),
        "paused": controls.is_some_and(|c| c.paused()),
        "speed": controls.and_then(|c| c.speed()),
    })
}

/// The `signals` message for these samples.
pub(super) fn signals<'a>(samples: impl Iterator<Item = &'a SignalSample>) -> Value {
    let samples: Vec<Signal> = samples
        .map(|s| Signal {
            tick: s.record.tick,
            time_s: s.record.time_s,
            device_position_m: s.record.device_position_m,
            goal_position_m: s.goal_position_m,
            proxy_position_m: s.record.proxy_position_m,
            coupling_force_n: s.record.coupling_force_n,
            period_us: s.record.period_us,
            compute_us: s.record.compute_us,
            late_syncs: s.late_syncs,
        })
        .collect();
    json!({ "type": "signals", "samples": samples })
}
