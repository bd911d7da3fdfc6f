//! The viewer's model of the scene, rebuilt from the feed's frames: what a
//! newly connected client is sent first and what `GET /api/state` returns.

use super::stress::{Stress, StressJob, StressMap};
use crate::fracture::StressField;
use crate::haptics::{BodyPose, BodyView, FractureView, SignalSample, ViewFeed, ViewFrame};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Shortest time between two `stress` messages of one body.
const STRESS_INTERVAL: Duration = Duration::from_secs(1);

/// Most stress maps being evaluated or queued for evaluation at once (a
/// 10 800-tet tile's, 36 samples of 60 modes, takes tens of milliseconds).
pub(super) const MAX_STRESS_JOBS: usize = 2;

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
    /// Impacts handed to the stress worker, by the same key.
    in_flight: BTreeMap<u32, PendingStress>,
    /// Which run of the session this is (a reset starts the next): maps of
    /// an earlier run are dropped.
    run: u64,
    /// The field of the last impact evaluated per body, for its fragments
    /// to inherit.
    evaluated: BTreeMap<u32, Arc<StressField>>,
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
    stress: Stress,
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
            *self = Model {
                run: self.run + 1,
                ..Model::default()
            };
        }
        // Added before removed: a merged frame can hold a fragment that
        // appeared and broke again since the last one (ids are not reused).
        for body in &frame.added {
            self.bodies.insert(body.id, body.clone());
        }
        for (id, impact) in &frame.impacts {
            if self.bodies.contains_key(id) {
                let bodies = vec![*id];
                let stress = Stress::Impact(impact.clone());
                self.impacts.insert(*id, PendingStress { stress, bodies });
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
            // The newest: its own impact not evaluated yet, then one being
            // evaluated, then the last evaluated, then (a fragment that
            // broke again before its parent's map was made) its parent's.
            let containing = |map: &BTreeMap<u32, PendingStress>| {
                map.values()
                    .find(|p| p.bodies.contains(&id))
                    .map(|p| p.stress.clone())
            };
            let evaluated = self.evaluated.remove(&id).map(Stress::Field);
            let stress = self
                .impacts
                .remove(&id)
                .map(|p| p.stress)
                .or_else(|| containing(&self.in_flight))
                .or(evaluated)
                .or_else(|| containing(&self.impacts));
            if let Some(stress) = stress {
                inherited.push((id, stress));
            }
        }
        for (id, stress) in inherited {
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
                self.impacts.insert(id, PendingStress { stress, bodies });
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

    /// Stress maps to evaluate for bodies struck since their last one and
    /// for the fragments of broken bodies: at most one impact per body per
    /// [`STRESS_INTERVAL`] and [`MAX_STRESS_JOBS`] at once, the others
    /// wait. A body in contact is struck at every sync, and each map costs
    /// an evaluation of every element of the body at every sample of the
    /// impact.
    pub(super) fn stress_jobs(&mut self, now: Instant) -> Vec<StressJob> {
        let room = MAX_STRESS_JOBS.saturating_sub(self.in_flight.len());
        let due: Vec<u32> = self
            .impacts
            .keys()
            .copied()
            .filter(|id| {
                !self.in_flight.contains_key(id)
                    && self
                        .stress_sent_at
                        .get(id)
                        .is_none_or(|&at| now.duration_since(at) >= STRESS_INTERVAL)
            })
            .take(room)
            .collect();
        let mut jobs = Vec::new();
        for key in due {
            let Some(pending) = self.impacts.remove(&key) else {
                continue;
            };
            let bodies: Vec<&BodyView> = pending
                .bodies
                .iter()
                .filter_map(|b| self.bodies.get(b))
                .collect();
            jobs.push(StressJob {
                run: self.run,
                key,
                stress: pending.stress.clone(),
                points_m: bodies
                    .iter()
                    .flat_map(|b| b.points_m.iter().copied())
                    .collect(),
                bodies: bodies.iter().map(|b| (b.id, b.points_m.len())).collect(),
            });
            if self.bodies.contains_key(&key) {
                self.stress_sent_at.insert(key, now);
            }
            self.in_flight.insert(key, pending);
        }
        jobs
    }

    /// The `stress` messages of a finished map, for its bodies that are
    /// still there; nothing for a map of an earlier run.
    pub(super) fn stress_done(&mut self, map: StressMap) -> Vec<Value> {
        if map.run != self.run {
            return Vec::new();
        }
        self.in_flight.remove(&map.key);
        let mut messages = Vec::new();
        for (body, ratio) in map.bodies {
            // A body that broke while its map was made: its fragments
            // inherited the impact.
            if !self.bodies.contains_key(&body) {
                continue;
            }
            messages.push(json!({
                "type": "stress",
                "id": body,
                "time_s": self.time_s,
                "impact": map.field.serial,
                "max_ratio": ratio.iter().copied().fold(0.0f32, f32::max),
                "ratio": &ratio,
            }));
            self.stress.insert(body, ratio);
            self.evaluated.insert(body, Arc::clone(&map.field));
        }
        messages
    }

    /// Forgets the maps being evaluated: the worker has ended.
    pub(super) fn stress_jobs_lost(&mut self) {
        self.in_flight.clear();
    }

    /// Whether maps are being evaluated.
    pub(super) fn evaluating(&self) -> bool {
        !self.in_flight.is_empty()
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
        "analysing": feed.analysing(),
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

#[cfg(test)]
mod tests {
    use super::super::stress::evaluate;
    use super::*;
    use crate::config::MaterialLibrary;
    use crate::fracture::{BreakableBody, ContactPoint, Counters, FractureSettings, Impactor};
    use crate::mesh::box_mesh;
    use crate::modal::{analyse, EigenSettings};
    use nalgebra::{Point3, Vector3};

    /// A gentle strike's load on a small plate, 2 cm by 2 cm by 2 mm.
    fn strike() -> crate::fracture::ImpactStress {
        let material = MaterialLibrary::builtin()
            .get("ceramic-tile")
            .expect("built-in material")
            .clone();
        let mesh = box_mesh([0.02, 0.02, 0.002], [4, 4, 1], None).unwrap();
        let threads = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let settings = EigenSettings::new(8);
        let (basis, _) = analyse(&mesh, &material, &settings, None, &threads, &|_| {}).unwrap();
        let mut body = BreakableBody::new(mesh, material, basis, 1).unwrap();
        let contact = ContactPoint {
            point_m: Point3::new(0.0, 0.0, 0.001),
            normal: -Vector3::z(),
            impulse_n_s: 0.001,
            relative_speed_m_s: 0.01,
            impactor: Impactor::steel_ball(),
            face: None,
            gap_m: 0.0,
        };
        let settings = FractureSettings::default();
        body.impact(&[contact], &settings, &threads, &mut Counters::default());
        body.last_impact_stress().expect("the strike is kept")
    }

    fn view(id: u32, parent: Option<u32>, points: usize) -> BodyView {
        BodyView {
            id,
            name: format!("body {id}"),
            kind: "breakable",
            parent,
            volume_m3: 1e-7,
            points_m: (0..points)
                .map(|i| [0.002 * i as f32, 0.0, 0.001])
                .collect(),
            triangles: Vec::new(),
            crack_triangles: Vec::new(),
        }
    }

    fn ids(job: &StressJob) -> Vec<u32> {
        job.bodies.iter().map(|b| b.0).collect()
    }

    #[test]
    fn maps_made_while_bodies_break_or_the_run_restarts_go_where_they_belong() {
        let impact = strike();
        let now = Instant::now();
        let mut model = Model::default();
        model.apply(ViewFrame {
            added: vec![view(1, None, 3)],
            impacts: vec![(1, impact.clone())],
            ..ViewFrame::default()
        });
        let mut jobs = model.stress_jobs(now);
        assert_eq!(jobs.iter().map(ids).collect::<Vec<_>>(), [[1]]);
        assert!(model.evaluating());
        assert!(
            model.stress_jobs(now).is_empty(),
            "one map per body at once"
        );

        // The body breaks while its map is made: the map has no body left
        // to paint, and its impact passes to the fragments.
        model.apply(ViewFrame {
            added: vec![view(2, Some(1), 4), view(3, Some(1), 5)],
            removed: vec![1],
            ..ViewFrame::default()
        });
        assert!(model.stress_done(evaluate(jobs.remove(0))).is_empty());
        let mut jobs = model.stress_jobs(now);
        assert_eq!(jobs.iter().map(ids).collect::<Vec<_>>(), [[2, 3]]);
        let messages = model.stress_done(evaluate(jobs.remove(0)));
        let painted: Vec<(u64, usize, u64)> = messages
            .iter()
            .map(|m| {
                let ratio = m["ratio"].as_array().unwrap().len();
                (
                    m["id"].as_u64().unwrap(),
                    ratio,
                    m["impact"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(painted, [(2, 4, 1), (3, 5, 1)]);
        assert!(!model.evaluating());

        // A fragment breaks again: its evaluated field (not the impact)
        // paints its own fragment, alike at alike points.
        model.apply(ViewFrame {
            added: vec![view(4, Some(2), 4)],
            removed: vec![2],
            ..ViewFrame::default()
        });
        let mut jobs = model.stress_jobs(now);
        assert!(matches!(jobs[0].stress, Stress::Field(_)));
        let again = model.stress_done(evaluate(jobs.remove(0)));
        assert_eq!(again.len(), 1);
        assert_eq!(again[0]["id"], 4);
        assert_eq!(again[0]["ratio"], messages[0]["ratio"]);

        // A map of the run before a restart is dropped.
        model.apply(ViewFrame {
            impacts: vec![(3, impact.clone())],
            ..ViewFrame::default()
        });
        let mut jobs = model.stress_jobs(now + STRESS_INTERVAL);
        assert_eq!(jobs.iter().map(ids).collect::<Vec<_>>(), [[3]]);
        model.apply(ViewFrame {
            added: vec![view(3, None, 5)],
            reset: true,
            ..ViewFrame::default()
        });
        assert!(!model.evaluating());
        assert!(model.stress_done(evaluate(jobs.remove(0))).is_empty());
        assert!(model.stress.is_empty());
    }
}
