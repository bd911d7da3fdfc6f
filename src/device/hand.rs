//! Where the simulated user's hand goes: scripted in TOML (moves, holds,
//! strikes, series of strikes of increasing speed) or sampled from a
//! session log. Compiled to a piecewise-linear path of the hand position.

use nalgebra::Vector3;
use serde::Deserialize;
use std::path::Path;

/// A hand script (TOML): a start point and steps.
///
/// ```toml
/// start_m = [0.0, 0.0, 0.05]
/// [[steps]]
/// type = "hold"
/// seconds = 0.5
/// [[steps]]
/// type = "strikes"        # lift above the target, then hit it, harder each time
/// target_m = [0.0, 0.0, 0.0]
/// lift_m = 0.05
/// from_speed_m_s = 0.5
/// to_speed_m_s = 3.0
/// count = 6
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandScript {
    /// Where the hand starts (m, device frame).
    pub start_m: [f64; 3],
    /// The moves, in order.
    #[serde(default)]
    pub steps: Vec<HandStep>,
}

/// One step of a [`HandScript`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum HandStep {
    /// Straight to `to_m` in `seconds`.
    Move {
        /// Where to (m).
        to_m: [f64; 3],
        /// How long the move takes (s).
        seconds: f64,
    },
    /// Stay where the hand is.
    Hold {
        /// How long (s).
        seconds: f64,
    },
    /// Lift `lift_m` above `target_m`, pause, then hit it moving down at
    /// `speed_m_s`; the hand aims `lift_m / 2` below the target (a person
    /// follows through) and comes back up.
    Strike {
        /// The point struck (m).
        target_m: [f64; 3],
        /// Height above the target the strike starts from (m).
        lift_m: f64,
        /// Speed at the target (m/s).
        speed_m_s: f64,
    },
    /// `count` strikes with speeds from `from_speed_m_s` to `to_speed_m_s`.
    Strikes {
        /// The point struck (m).
        target_m: [f64; 3],
        /// Height above the target each strike starts from (m).
        lift_m: f64,
        /// Speed of the first strike (m/s).
        from_speed_m_s: f64,
        /// Speed of the last strike (m/s).
        to_speed_m_s: f64,
        /// Number of strikes (speeds evenly spaced).
        count: usize,
    },
}

/// Why a hand script cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum HandError {
    /// The script cannot be read, parsed, or has out-of-range values.
    #[error("hand script {path}: {message}")]
    Invalid {
        /// The script's name or path.
        path: String,
        /// What is wrong with it.
        message: String,
    },
}

/// Speed of the hand between strikes (m/s).
const REPOSITION_SPEED_M_S: f64 = 0.2;
/// Pause above the target before a strike (s).
const AIM_PAUSE_S: f64 = 0.3;

impl HandScript {
    /// Reads and checks the script at `path`.
    pub fn load(path: &Path) -> Result<Self, HandError> {
        let text = std::fs::read_to_string(path).map_err(|e| HandError::Invalid {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses and checks a script; `name` appears in errors.
    pub fn parse(text: &str, name: &str) -> Result<Self, HandError> {
        let invalid = |message: String| HandError::Invalid {
            path: name.to_owned(),
            message,
        };
        let script: HandScript =
            toml::from_str(text).map_err(|e| invalid(e.to_string().trim_end().to_owned()))?;
        let finite = |v: &[f64; 3]| v.iter().all(|x| x.is_finite());
        let positive = |x: f64| x > 0.0 && x.is_finite();
        if !finite(&script.start_m) {
            return Err(invalid("start_m must be finite".into()));
        }
        for (i, step) in script.steps.iter().enumerate() {
            let bad = match step {
                HandStep::Move { to_m, seconds } => (!(finite(to_m) && positive(*seconds)))
                    .then_some("to_m must be finite and seconds positive"),
                HandStep::Hold { seconds } => {
                    (!(*seconds >= 0.0 && seconds.is_finite())).then_some("seconds must be ≥ 0")
                }
                HandStep::Strike {
                    target_m,
                    lift_m,
                    speed_m_s,
                } => (!(finite(target_m) && positive(*lift_m) && positive(*speed_m_s)))
                    .then_some("target_m finite, lift_m and speed_m_s positive"),
                HandStep::Strikes {
                    target_m,
                    lift_m,
                    from_speed_m_s,
                    to_speed_m_s,
                    count,
                } => (!(finite(target_m)
                    && positive(*lift_m)
                    && positive(*from_speed_m_s)
                    && positive(*to_speed_m_s)
                    && (1..=10_000).contains(count)))
                .then_some("target_m finite, lift_m and speeds positive, count in 1..=10000"),
            };
            if let Some(message) = bad {
                return Err(invalid(format!("steps[{i}]: {message}")));
            }
        }
        // Each strike adds four path points (32 bytes each).
        let points: f64 = script
            .steps
            .iter()
            .map(|s| match s {
                HandStep::Strikes { count, .. } => 4.0 * *count as f64,
                HandStep::Strike { .. } => 4.0,
                _ => 1.0,
            })
            .sum();
        crate::limits::check_memory(|| format!("a path of {points} points"), points * 32.0)
            .map_err(|e| invalid(e.to_string()))?;
        let duration_s = script.trajectory().duration_s();
        if duration_s.is_nan() || duration_s > crate::limits::MAX_SESSION_S {
            return Err(invalid(format!(
                "the script lasts {duration_s:e} s, more than the {} s (one week) a session may",
                crate::limits::MAX_SESSION_S
            )));
        }
        Ok(script)
    }

    /// The path of the hand.
    pub fn trajectory(&self) -> HandTrajectory {
        let mut path = PathBuilder {
            points: vec![(0.0, Vector3::from(self.start_m))],
        };
        for step in &self.steps {
            match step {
                HandStep::Move { to_m, seconds } => path.move_to(Vector3::from(*to_m), *seconds),
                HandStep::Hold { seconds } => path.hold(*seconds),
                HandStep::Strike {
                    target_m,
                    lift_m,
                    speed_m_s,
                } => {
                    path.strike(Vector3::from(*target_m), *lift_m, *speed_m_s);
                }
                HandStep::Strikes {
                    target_m,
                    lift_m,
                    from_speed_m_s,
                    to_speed_m_s,
                    count,
                } => {
                    for k in 0..*count {
                        let f = if *count == 1 {
                            0.0
                        } else {
                            k as f64 / (*count - 1) as f64
                        };
                        let speed = from_speed_m_s + f * (to_speed_m_s - from_speed_m_s);
                        path.strike(Vector3::from(*target_m), *lift_m, speed);
                    }
                }
            }
        }
        HandTrajectory {
            points: path.points,
        }
    }
}

struct PathBuilder {
    points: Vec<(f64, Vector3<f64>)>,
}

impl PathBuilder {
    fn last(&self) -> (f64, Vector3<f64>) {
        *self.points.last().expect("starts with one point")
    }
    fn move_to(&mut self, to: Vector3<f64>, seconds: f64) {
        let (t, _) = self.last();
        self.points.push((t + seconds.max(1e-6), to));
    }
    fn hold(&mut self, seconds: f64) {
        let (t, p) = self.last();
        self.points.push((t + seconds, p));
    }
    /// Appends a strike that follows through half its lift below the
    /// target; returns when the hand passes the target.
    fn strike(&mut self, target: Vector3<f64>, lift: f64, speed: f64) -> f64 {
        self.strike_through(target, lift, 0.5 * lift, speed, REPOSITION_SPEED_M_S)
    }
    /// Appends a strike from `lift` above the target to `through` below
    /// it and back up at `up_speed`; returns when the hand passes the
    /// target.
    fn strike_through(
        &mut self,
        target: Vector3<f64>,
        lift: f64,
        through: f64,
        speed: f64,
        up_speed: f64,
    ) -> f64 {
        let above = target + Vector3::z() * lift;
        let (_, p) = self.last();
        self.move_to(above, (above - p).norm() / REPOSITION_SPEED_M_S);
        self.hold(AIM_PAUSE_S);
        let (aimed_s, _) = self.last();
        let bottom = target - Vector3::z() * through;
        self.move_to(bottom, (lift + through) / speed);
        self.move_to(above, (lift + through) / up_speed);
        aimed_s + lift / speed
    }
}

/// Where a simulated user's hand wants the handle: a scripted path
/// ([`HandTrajectory`]) or a model that reacts to what it feels and sees
/// (the study's model participant).
pub trait Hand: Send {
    /// Position (m) and velocity (m/s) the hand aims for at `t` (s).
    fn at(&self, t: f64) -> (Vector3<f64>, Vector3<f64>);
    /// What the hand feels at `t`: the force the handle pushes it with
    /// (N). Called once per integration step of the arm, before
    /// [`at`](Self::at) for the same `t`.
    fn feel(&mut self, _t: f64, _force_on_hand_n: &Vector3<f64>) {}
}

impl Hand for HandTrajectory {
    fn at(&self, t: f64) -> (Vector3<f64>, Vector3<f64>) {
        HandTrajectory::at(self, t)
    }
}

/// A piecewise-linear hand path: position and velocity at any time.
#[derive(Debug, Clone, PartialEq)]
pub struct HandTrajectory {
    /// (time s, position m), times ascending.
    points: Vec<(f64, Vector3<f64>)>,
}

impl HandTrajectory {
    /// A path through recorded samples (e.g. a session log's hand
    /// positions); samples out of time order are dropped.
    pub fn from_samples(samples: impl IntoIterator<Item = (f64, Vector3<f64>)>) -> Self {
        let mut points: Vec<(f64, Vector3<f64>)> = Vec::new();
        for (t, p) in samples {
            if t.is_finite()
                && p.iter().all(|x| x.is_finite())
                && points.last().is_none_or(|&(last, _)| t > last)
            {
                points.push((t, p));
            }
        }
        if points.is_empty() {
            points.push((0.0, Vector3::zeros()));
        }
        Self { points }
    }

    /// Extends the path from its end (held until `from_s` if that is
    /// later) with one strike of `target` at `speed_m_s`, from `lift_m`
    /// above it to `through_m` below it and back up as fast (a script's
    /// `strike` step goes half its lift through and lifts the hand at the
    /// repositioning speed); returns when the strike reaches the target
    /// and when the path ends (s). Reserve room with
    /// [`reserve_strikes`](Self::reserve_strikes) to extend without
    /// allocating.
    pub fn append_strike(
        &mut self,
        from_s: f64,
        target: Vector3<f64>,
        lift_m: f64,
        through_m: f64,
        speed_m_s: f64,
    ) -> (f64, f64) {
        let mut path = PathBuilder {
            points: std::mem::take(&mut self.points),
        };
        let (end, _) = path.last();
        if from_s > end {
            path.hold(from_s - end);
        }
        let contact_s = path.strike_through(target, lift_m, through_m, speed_m_s, speed_m_s);
        self.points = path.points;
        (contact_s, self.duration_s())
    }

    /// Extends the path from its end (held until `from_s` if that is
    /// later) with a move to `to` at the scripts' repositioning speed and
    /// a hold of `hold_s`; returns when the path ends (s).
    pub fn append_move(&mut self, from_s: f64, to: Vector3<f64>, hold_s: f64) -> f64 {
        let mut path = PathBuilder {
            points: std::mem::take(&mut self.points),
        };
        let (end, p) = path.last();
        if from_s > end {
            path.hold(from_s - end);
        }
        path.move_to(to, (to - p).norm() / REPOSITION_SPEED_M_S);
        path.hold(hold_s);
        self.points = path.points;
        self.duration_s()
    }

    /// Room for `strikes` more strikes.
    pub fn reserve_strikes(&mut self, strikes: usize) {
        self.points.reserve(5 * strikes);
    }

    /// The path's corners: (time s, position m), times ascending.
    pub fn points(&self) -> &[(f64, Vector3<f64>)] {
        &self.points
    }

    /// When the path ends (s).
    pub fn duration_s(&self) -> f64 {
        self.points.last().map_or(0.0, |p| p.0)
    }

    /// Position (m) and velocity (m/s) at `t`; held at the ends.
    pub fn at(&self, t: f64) -> (Vector3<f64>, Vector3<f64>) {
        let i = self.points.partition_point(|p| p.0 <= t);
        if i == 0 {
            return (self.points[0].1, Vector3::zeros());
        }
        if i == self.points.len() {
            return (self.points[i - 1].1, Vector3::zeros());
        }
        let (t0, p0) = self.points[i - 1];
        let (t1, p1) = self.points[i];
        let velocity = (p1 - p0) / (t1 - t0);
        (p0 + velocity * (t - t0), velocity)
    }
}
