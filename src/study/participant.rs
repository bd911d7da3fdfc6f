//! The model participant (`study run --model scripted[:PARAMS]`): a
//! simulated person who uses the strategy Glondu 2012 §5.2.4 reports —
//! place the ball above the centre of one plate, strike it with a small
//! speed, strike harder and harder until it breaks, do the same with the
//! other plate, and answer the plate that broke with less effort.
//!
//! It is the [`Hand`] of the simulated arm, so it runs closed-loop inside
//! the session: it feels the force the handle pushes it with, sees a plate
//! break (a reaction time after the break), and decides its next strike
//! from that. The remembered effort of the breaking strike is its speed
//! without force feedback (the cue §5.2.2 says participants had then);
//! with it, the speed and the peak felt force, §5.2.2's "other haptic
//! cue", weighed equally in log space (Ernst & Banks 2002: two cues of
//! equal Weber fraction): √(speed · force). Memory is noisy: each remembered
//! cue is multiplied by 1 + σ·N(0, 1) with σ = weber / (√2 · z₀.₇₅), so
//! that two efforts a Weber fraction apart are told apart 75 % of the time
//! in 2-AFC; and with probability `lapse` the answer is a coin toss.
//!
//! The defaults, `weber = 0.265` and `lapse = 0`, are the maximum-likelihood
//! fit of this model to the answers of §5.2's participants (Table 5.3;
//! `tools/fit_model_noise.sh`, docs/studies.md). A Weber fraction of 26.5 %
//! is far above the just-noticeable difference of force magnitude (5–10 %,
//! Jones 1989; Pang, Tan & Durlach 1991): the fitted noise holds the
//! memory of an effort over a trial, not the discrimination of two forces
//! felt side by side. Strikes start at 0.4 m/s and grow by 5 %
//! (`step = 1.05`): a plate breaks at the first speed of the ladder above
//! its threshold, so the ladder's resolution is finer than the noise, and
//! the noise, not the steps, makes the errors.

use super::answer::{AnswerSlot, Response};
use crate::device::{Hand, HandTrajectory};
use crate::haptics::BodyWatch;
use nalgebra::Vector3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The model participant's parameters.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ModelParams {
    /// Weber fraction of the remembered effort.
    pub weber: f64,
    /// Probability of a random answer.
    pub lapse: f64,
    /// Speed of the first strike (m/s).
    pub start_speed_m_s: f64,
    /// Each strike is this many times faster than the last.
    pub step: f64,
    /// The fastest strike tried (m/s); a plate that does not break by then
    /// counts as the stronger.
    pub max_speed_m_s: f64,
    /// Height above the plate the first strike starts from (m); faster
    /// ones start higher ([`ModelParams::lift_for`]).
    pub lift_m: f64,
    /// From a break to the participant seeing it (s).
    pub reaction_s: f64,
}

impl Default for ModelParams {
    fn default() -> Self {
        Self {
            weber: 0.265,
            lapse: 0.0,
            start_speed_m_s: 0.4,
            step: 1.05,
            max_speed_m_s: 1.8,
            lift_m: 0.05,
            reaction_s: 0.2,
        }
    }
}

impl ModelParams {
    /// Parses `scripted` or `scripted:weber=0.1,lapse=0.05,...`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (name, rest) = text.split_once(':').unwrap_or((text, ""));
        if name != "scripted" {
            return Err(format!("unknown model `{name}` (known: scripted)"));
        }
        let mut p = Self::default();
        for item in rest.split(',').filter(|s| !s.is_empty()) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("`{item}`: give KEY=VALUE"))?;
            let value: f64 = value
                .parse()
                .map_err(|_| format!("{key}: `{value}` is not a number"))?;
            let (slot, range): (&mut f64, std::ops::RangeInclusive<f64>) = match key {
                "weber" => (&mut p.weber, 0.0..=2.0),
                "lapse" => (&mut p.lapse, 0.0..=1.0),
                "start_speed" => (&mut p.start_speed_m_s, 0.01..=2.0),
                "step" => (&mut p.step, 1.01..=3.0),
                "max_speed" => (&mut p.max_speed_m_s, 0.05..=2.0),
                "lift" => (&mut p.lift_m, 0.005..=0.2),
                "reaction" => (&mut p.reaction_s, 0.05..=2.0),
                _ => {
                    return Err(format!(
                        "unknown parameter `{key}` (known: weber, lapse, start_speed, step, max_speed, lift, reaction)"
                    ))
                }
            };
            if !range.contains(&value) {
                return Err(format!("{key} = {value} is outside {range:?}"));
            }
            *slot = value;
        }
        if p.start_speed_m_s > p.max_speed_m_s {
            return Err("start_speed must not exceed max_speed".into());
        }
        Ok(p)
    }

    /// The model's answers to the questionnaire of §5.2.2 after a
    /// session, from the efforts it remembered in the session's trials
    /// (`(left, right)`, `None` for a plate that did not break). Two
    /// efforts are told apart when they differ by more than the Weber
    /// fraction of the smaller (or one plate broke and the other did
    /// not). Confidence (0–7) is 7 times the share of trials whose plates
    /// it told apart; the perceived weaknesses (0–5) are the groups of
    /// its remembered efforts, sorted, that a gap it tells apart
    /// separates.
    pub fn questionnaire(&self, efforts: &[[Option<f64>; 2]]) -> (u8, u8) {
        let apart = |a: f64, b: f64| (a - b).abs() > self.weber * a.min(b);
        let told = efforts
            .iter()
            .filter(|e| match **e {
                [Some(a), Some(b)] => apart(a, b),
                [Some(_), None] | [None, Some(_)] => true,
                [None, None] => false,
            })
            .count();
        let confidence = if efforts.is_empty() {
            0.0
        } else {
            (7.0 * told as f64 / efforts.len() as f64).round()
        };
        let mut broke: Vec<f64> = efforts.iter().flatten().flatten().copied().collect();
        broke.sort_by(f64::total_cmp);
        let groups = if broke.is_empty() {
            0
        } else {
            1 + broke.windows(2).filter(|w| apart(w[0], w[1])).count()
        };
        (groups.min(5) as u8, confidence as u8)
    }

    /// The height a strike at `speed_m_s` starts from: `lift_m` for the
    /// first, and as many times higher as it is faster, so that every
    /// downswing lasts as long (§5.2.4: participants "increase the height
    /// of the ball and the velocity of impact"). The follow-through below
    /// the plate stays `lift_m / 2`.
    pub fn lift_for(&self, speed_m_s: f64) -> f64 {
        self.lift_m * speed_m_s / self.start_speed_m_s
    }

    /// Strikes a plate gets at most.
    pub fn max_strikes(&self) -> usize {
        ((self.max_speed_m_s / self.start_speed_m_s).ln() / self.step.ln()).floor() as usize + 1
    }
}

/// What the model is doing.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Striking plate `order[k]` at `speed`; the strike's path ends at
    /// `until_s`.
    Striking {
        k: usize,
        speed_m_s: f64,
        until_s: f64,
    },
    /// Answered.
    Done,
}

/// The model participant as the simulated arm's hand.
#[derive(Debug)]
pub struct ModelHand {
    params: ModelParams,
    force_feedback: bool,
    /// Where the hand starts, and goes back to between the plates
    /// (device frame, m).
    start: Vector3<f64>,
    /// Where the ball touches each plate's centre (device frame, m).
    targets: [Vector3<f64>; 2],
    /// The plates in the order struck.
    order: [usize; 2],
    watch: Arc<BodyWatch>,
    tick_s: f64,
    path: HandTrajectory,
    phase: Phase,
    /// Peak felt force of the current strike (N).
    peak_force_n: f64,
    /// Remembered effort per plate; `None` for one that never broke.
    effort: [Option<f64>; 2],
    rng: ChaCha8Rng,
    answer: Arc<AnswerSlot>,
    stop: Arc<AtomicBool>,
    /// Where the trial goes when the hand is dropped (see
    /// [`ModelHand::trial_slot`]).
    trial_out: Arc<Mutex<Option<ModelTrial>>>,
}

/// What the model did in a trial.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelTrial {
    /// The path its hand followed.
    pub path: HandTrajectory,
    /// The remembered effort of the strike that broke each plate (left,
    /// right): strike speed (m/s) without force feedback, √(speed · peak
    /// felt force) (√(m/s·N)) with it; `None` for a plate that did not
    /// break.
    pub efforts: [Option<f64>; 2],
}

/// Seconds the hand holds still at the start (the safety layer's ramp).
const SETTLE_S: f64 = 1.2;

/// Seconds the hand holds above the plates between one plate and the
/// other.
const BETWEEN_PLATES_S: f64 = 0.5;

impl ModelHand {
    /// A participant who starts at `start` (device frame), strikes
    /// `targets` (left, right), reads breaks from `watch` (ticks of
    /// `tick_s`), answers into `answer` and then sets `stop`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        params: ModelParams,
        force_feedback: bool,
        start: Vector3<f64>,
        targets: [Vector3<f64>; 2],
        watch: Arc<BodyWatch>,
        tick_s: f64,
        seed: u64,
        answer: Arc<AnswerSlot>,
        stop: Arc<AtomicBool>,
    ) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let order = if rng.random::<bool>() { [0, 1] } else { [1, 0] };
        let mut path = HandTrajectory::from_samples([(0.0, start), (SETTLE_S, start)]);
        // The move between the plates takes a strike's room.
        path.reserve_strikes(2 * params.max_strikes() + 3);
        let (_, until_s) = path.append_strike(
            SETTLE_S,
            targets[order[0]],
            params.lift_for(params.start_speed_m_s),
            0.5 * params.lift_m,
            params.start_speed_m_s,
        );
        Self {
            params,
            force_feedback,
            start,
            targets,
            order,
            watch,
            tick_s,
            path,
            phase: Phase::Striking {
                k: 0,
                speed_m_s: params.start_speed_m_s,
                until_s,
            },
            peak_force_n: 0.0,
            effort: [None; 2],
            rng,
            answer,
            stop,
            trial_out: Arc::default(),
        }
    }

    /// Where the trial ([`ModelTrial`]) is put when the hand is dropped
    /// (the session over): a closed-loop path is known only then, and a
    /// trial's log keeps it so that a replay can drive the arm along it.
    pub fn trial_slot(&self) -> Arc<Mutex<Option<ModelTrial>>> {
        Arc::clone(&self.trial_out)
    }

    fn broken_seen(&self, plate: usize, t: f64) -> bool {
        self.watch
            .broken_at_tick(plate)
            .is_some_and(|tick| tick as f64 * self.tick_s + self.params.reaction_s <= t)
    }

    /// A standard normal sample (Box–Muller).
    fn normal(&mut self) -> f64 {
        let u1: f64 = 1.0 - self.rng.random::<f64>();
        let u2: f64 = self.rng.random::<f64>();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    fn remember(&mut self, true_effort: f64) -> f64 {
        // z₀.₇₅ = 0.6745: a Weber-fraction difference is 75 % correct.
        let sigma = self.params.weber / (std::f64::consts::SQRT_2 * 0.674_489_750_196_081_7);
        true_effort * (1.0 + sigma * self.normal()).max(0.0)
    }

    fn decide(&mut self, t: f64) {
        let lapse = self.rng.random::<f64>() < self.params.lapse;
        let coin = self.rng.random::<bool>();
        let side = match (self.effort[0], self.effort[1]) {
            _ if lapse => usize::from(coin),
            (Some(l), Some(r)) if l < r => 0,
            (Some(l), Some(r)) if r < l => 1,
            (Some(_), None) => 0,
            (None, Some(_)) => 1,
            _ => usize::from(coin),
        };
        self.answer.give(Response::Chose(side), t);
        self.stop.store(true, Ordering::Release);
        self.phase = Phase::Done;
    }
}

impl Drop for ModelHand {
    fn drop(&mut self) {
        if let Ok(mut slot) = self.trial_out.lock() {
            *slot = Some(ModelTrial {
                path: std::mem::replace(&mut self.path, HandTrajectory::from_samples([])),
                efforts: self.effort,
            });
        }
    }
}

impl Hand for ModelHand {
    fn at(&self, t: f64) -> (Vector3<f64>, Vector3<f64>) {
        self.path.at(t)
    }

    fn feel(&mut self, t: f64, force_on_hand_n: &Vector3<f64>) {
        let Phase::Striking {
            k,
            speed_m_s,
            until_s,
        } = self.phase
        else {
            return;
        };
        self.peak_force_n = self.peak_force_n.max(force_on_hand_n.norm());
        if t < until_s {
            return;
        }
        let plate = self.order[k];
        let broke = self.broken_seen(plate, t);
        let faster = speed_m_s * self.params.step;
        if !broke && faster <= self.params.max_speed_m_s {
            let (_, until_s) = self.path.append_strike(
                t,
                self.targets[plate],
                self.params.lift_for(faster),
                0.5 * self.params.lift_m,
                faster,
            );
            self.phase = Phase::Striking {
                k,
                speed_m_s: faster,
                until_s,
            };
            self.peak_force_n = 0.0;
            return;
        }
        self.effort[plate] = if broke {
            let speed = self.remember(speed_m_s);
            Some(if self.force_feedback {
                // Two cues of one strike with the same Weber fraction:
                // weighted by their reliabilities (Ernst & Banks 2002),
                // equally, in log space.
                let force = self.remember(self.peak_force_n);
                (speed * force).sqrt()
            } else {
                speed
            })
        } else {
            None
        };
        if k == 0 {
            let next = self.order[1];
            let start = self.params.start_speed_m_s;
            // Back above the plates first: a ball caught among the broken
            // plate's pieces comes free before the hand swings over.
            let rested_s = self.path.append_move(t, self.start, BETWEEN_PLATES_S);
            let (_, until_s) = self.path.append_strike(
                rested_s,
                self.targets[next],
                self.params.lift_for(start),
                0.5 * self.params.lift_m,
                start,
            );
            self.phase = Phase::Striking {
                k: 1,
                speed_m_s: start,
                until_s,
            };
            self.peak_force_n = 0.0;
        } else {
            self.decide(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_questionnaire_counts_what_the_weber_fraction_tells_apart() {
        let p = ModelParams {
            weber: 0.1,
            ..ModelParams::default()
        };
        let efforts = [
            [Some(1.0), Some(1.05)], // within 10 %: not told apart
            [Some(1.0), Some(1.5)],
            [Some(2.0), None], // one broke
            [None, None],
        ];
        // Told apart 2 of 4: 7 × ½ rounds to 4. Sorted efforts 1.0, 1.0,
        // 1.05 | 1.5 | 2.0: three groups.
        assert_eq!(p.questionnaire(&efforts), (3, 4));
        assert_eq!(p.questionnaire(&[]), (0, 0));
        let many: Vec<[Option<f64>; 2]> = (0..10)
            .map(|i| [Some(1.5f64.powi(i)), Some(1.5f64.powi(i + 10))])
            .collect();
        assert_eq!(p.questionnaire(&many), (5, 7), "at most 5 weaknesses");
    }

    #[test]
    fn parameters_parse_and_are_checked() {
        let p = ModelParams::parse("scripted:weber=0,lapse=0").unwrap();
        assert_eq!((p.weber, p.lapse), (0.0, 0.0));
        assert!(ModelParams::parse("scripted:lapse=2")
            .unwrap_err()
            .contains("lapse"));
        assert!(ModelParams::parse("oracle")
            .unwrap_err()
            .contains("unknown model"));
        assert!(ModelParams::parse("scripted:speed=1")
            .unwrap_err()
            .contains("unknown parameter"));
        assert_eq!(ModelParams::default().max_strikes(), 31);
    }
}
