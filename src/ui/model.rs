//! The viewer's model of the scene, rebuilt from the feed's frames: what a
//! newly connected client is sent first and what `GET /api/state` returns.

use crate::haptics::{BodyPose, BodyView, FractureView, ViewFrame, ViewSession};
use crate::session::TickRecord;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Bodies, poses and fractures as of the last frame applied.
#[derive(Debug, Default)]
pub(super) struct Model {
    bodies: BTreeMap<u32, BodyView>,
    poses: BTreeMap<u32, BodyPose>,
    fractures: Vec<FractureView>,
    time_s: f64,
    tick: u64,
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
}

/// One signal sample of the `signals` message.
#[derive(Serialize)]
struct Signal {
    tick: u64,
    time_s: f64,
    device_position_m: [f64; 3],
    proxy_position_m: [f64; 3],
    coupling_force_n: [f64; 3],
    period_us: f32,
    compute_us: f32,
}

impl Model {
    /// Applies `frame`; returns its `frame` message.
    pub(super) fn apply(&mut self, frame: ViewFrame) -> Value {
        // Added before removed: a merged frame can hold a fragment that
        // appeared and broke again since the last one (ids are not reused).
        for body in &frame.added {
            self.bodies.insert(body.id, body.clone());
        }
        for &id in &frame.removed {
            self.bodies.remove(&id);
            self.poses.remove(&id);
        }
        self.poses = frame.poses.iter().map(|p| (p.id, *p)).collect();
        self.fractures.extend(frame.fractures.iter().cloned());
        self.time_s = frame.time_s;
        self.tick = frame.tick;
        let mut message = serde_json::to_value(&frame).unwrap_or(Value::Null);
        message["type"] = json!("frame");
        message
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

/// The `status` object: the session's facts, ticks run, whether it ended.
pub(super) fn status(session: &ViewSession, ticks: u64, finished: bool, clients: usize) -> Value {
    json!({
        "mode": session.mode,
        "scene": session.scene,
        "device": session.device,
        "proxy": session.proxy,
        "seconds": session.seconds,
        "ticks": ticks,
        "finished": finished,
        "clients": clients,
    })
}

/// The `signals` message for these tick records.
pub(super) fn signals(records: &[TickRecord]) -> Value {
    let samples: Vec<Signal> = records
        .iter()
        .map(|r| Signal {
            tick: r.tick,
            time_s: r.time_s,
            device_position_m: r.device_position_m,
            proxy_position_m: r.proxy_position_m,
            coupling_force_n: r.coupling_force_n,
            period_us: r.period_us,
            compute_us: r.compute_us,
        })
        .collect();
    json!({ "type": "signals", "samples": samples })
}
