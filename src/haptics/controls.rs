//! What a viewer may ask of a session that has no hand in the loop (a
//! lockstep session with the simulated arm, or a replay): pause, resume,
//! single steps, a pace, seeking, restarting; and the answers a study
//! participant gives with key presses.
//!
//! The viewer's thread writes these atomics; the haptic thread reads them
//! at each synchronisation of a lockstep session ([`Pacer`]), and sleeps
//! in bounded slices while paused or ahead of its pace. A real-time
//! session never reads them: its clock is the hand's.

use crossbeam_queue::ArrayQueue;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Slowest and fastest pace (times real time).
pub const SPEED_RANGE: std::ops::RangeInclusive<f64> = 0.01..=100.0;

/// Answers kept until the study runner takes them.
const ANSWER_QUEUE: usize = 256;

/// Longest sleep of the haptic thread between two looks at the controls.
const LOOK_EVERY: Duration = Duration::from_millis(2);

/// No seek under way.
const NO_SEEK: u64 = u64::MAX;

/// A key a participant pressed in the viewer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The key (`KeyboardEvent.key`), at most [`Answer::MAX_KEY_BYTES`].
    pub key: String,
    /// Session time when the viewer received it (s).
    pub time_s: f64,
}

impl Answer {
    /// Longest key name kept.
    pub const MAX_KEY_BYTES: usize = 32;
}

/// Why a control cannot be taken.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ControlError {
    /// A pace outside [`SPEED_RANGE`] (or not finite).
    #[error("speed must be a factor in 0.01..=100 times real time, or null for as fast as possible (got {0})")]
    Speed(f64),
    /// A seek before the start or after the planned end.
    #[error("seek time must be in 0..={seconds} s (got {time_s})")]
    Seek {
        /// The time asked for (s).
        time_s: f64,
        /// The session's planned length (s).
        seconds: f64,
    },
    /// Steps outside 1..=1000.
    #[error("step takes 1..=1000 synchronisations (got {0})")]
    Steps(u64),
    /// The answer queue is full (the study runner is not reading).
    #[error("answer not kept: {ANSWER_QUEUE} answers are waiting to be read")]
    AnswersFull,
}

/// Shared between a session's haptic thread and its viewer.
#[derive(Debug)]
pub struct SessionControls {
    paused: AtomicBool,
    /// Pace as f64 bits; 0: as fast as possible.
    speed_bits: AtomicU64,
    /// Synchronisations to run while paused.
    steps: AtomicU64,
    /// Run unpaced up to this tick, then keep the pause and pace.
    seek_tick: AtomicU64,
    restart: AtomicBool,
    /// Bumped by every change, so the pacer re-anchors its clock.
    generation: AtomicU64,
    answers: ArrayQueue<Answer>,
    /// What a participant's view shows (the study runner's instructions
    /// and questions), and a count of its changes. The haptic thread never
    /// touches it.
    prompt: Mutex<(u64, String)>,
}

impl SessionControls {
    /// Controls that start running at `speed` times real time (`None`: as
    /// fast as possible).
    pub fn new(speed: Option<f64>) -> Result<Self, ControlError> {
        let controls = Self {
            paused: AtomicBool::new(false),
            speed_bits: AtomicU64::new(0),
            steps: AtomicU64::new(0),
            seek_tick: AtomicU64::new(NO_SEEK),
            restart: AtomicBool::new(false),
            generation: AtomicU64::new(0),
            answers: ArrayQueue::new(ANSWER_QUEUE),
            prompt: Mutex::default(),
        };
        controls.set_speed(speed)?;
        Ok(controls)
    }

    fn changed(&self) {
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// Holds the session at its next synchronisation.
    pub fn pause(&self) {
        self.paused.store(true, Ordering::Release);
        self.changed();
    }

    /// Lets a paused session run on.
    pub fn resume(&self) {
        self.paused.store(false, Ordering::Release);
        self.changed();
    }

    /// While paused, runs `syncs` more synchronisations (1..=1000).
    pub fn step(&self, syncs: u64) -> Result<(), ControlError> {
        if !(1..=1000).contains(&syncs) {
            return Err(ControlError::Steps(syncs));
        }
        self.paused.store(true, Ordering::Release);
        self.steps.fetch_add(syncs, Ordering::AcqRel);
        self.changed();
        Ok(())
    }

    /// Paces the session at `speed` times real time (`None`: as fast as
    /// possible).
    pub fn set_speed(&self, speed: Option<f64>) -> Result<(), ControlError> {
        let bits = match speed {
            None => 0,
            Some(s) if SPEED_RANGE.contains(&s) => s.to_bits(),
            Some(s) => return Err(ControlError::Speed(s)),
        };
        self.speed_bits.store(bits, Ordering::Release);
        self.changed();
        Ok(())
    }

    /// Goes to `time_s` of a session `seconds` long that is at `now_tick`:
    /// forward by running unpaced, backward by restarting and running
    /// unpaced to it. Pause and pace are kept.
    pub fn seek(
        &self,
        time_s: f64,
        seconds: f64,
        tick_s: f64,
        now_tick: u64,
    ) -> Result<(), ControlError> {
        if !(time_s >= 0.0 && time_s <= seconds) {
            return Err(ControlError::Seek { time_s, seconds });
        }
        let tick = (time_s / tick_s).round() as u64;
        self.seek_tick.store(tick, Ordering::Release);
        if tick < now_tick {
            self.restart.store(true, Ordering::Release);
        }
        self.changed();
        Ok(())
    }

    /// Ends this run of the session; its caller runs it again from the
    /// start, playing.
    pub fn restart(&self) {
        self.seek_tick.store(NO_SEEK, Ordering::Release);
        self.paused.store(false, Ordering::Release);
        self.restart.store(true, Ordering::Release);
        self.changed();
    }

    /// As [`Self::restart`], but paused at the start.
    pub fn reset(&self) {
        self.seek_tick.store(NO_SEEK, Ordering::Release);
        self.paused.store(true, Ordering::Release);
        self.restart.store(true, Ordering::Release);
        self.changed();
    }

    /// Whether a restart was asked for; clears it.
    pub fn take_restart(&self) -> bool {
        self.restart.swap(false, Ordering::AcqRel)
    }

    /// Whether a restart is waiting (for a caller idling after a session).
    pub fn restart_requested(&self) -> bool {
        self.restart.load(Ordering::Acquire)
    }

    /// Whether the session is held.
    pub fn paused(&self) -> bool {
        self.paused.load(Ordering::Acquire)
    }

    /// The pace (times real time); `None`: as fast as possible.
    pub fn speed(&self) -> Option<f64> {
        match self.speed_bits.load(Ordering::Acquire) {
            0 => None,
            bits => Some(f64::from_bits(bits)),
        }
    }

    /// Keeps a participant's answer for the study runner.
    pub fn answer(&self, answer: Answer) -> Result<(), ControlError> {
        self.answers
            .push(answer)
            .map_err(|_| ControlError::AnswersFull)
    }

    /// The oldest answer not taken yet.
    pub fn take_answer(&self) -> Option<Answer> {
        self.answers.pop()
    }

    /// Shows `text` to the participant (empty: nothing).
    pub fn set_prompt(&self, text: &str) {
        if let Ok(mut prompt) = self.prompt.lock() {
            prompt.0 += 1;
            text.clone_into(&mut prompt.1);
        }
    }

    /// The prompt and the count of its changes.
    pub fn prompt(&self) -> (u64, String) {
        self.prompt.lock().map(|p| p.clone()).unwrap_or_default()
    }
}

/// What the haptic thread does after looking at the controls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Gate {
    /// Run the next synchronisation period.
    Run,
    /// End this run: the session is restarted.
    Restart,
}

/// The haptic thread's side: holds a lockstep session at its
/// synchronisations as the controls say.
pub(super) struct Pacer {
    /// The tick and instant the pace is measured from.
    anchor: Option<(u64, Instant)>,
    generation: u64,
}

impl Pacer {
    pub(super) fn new() -> Self {
        Self {
            anchor: None,
            generation: u64::MAX,
        }
    }

    /// At tick `tick` (a synchronisation): waits while paused or ahead of
    /// the pace, in slices of at most [`LOOK_EVERY`], until the session may
    /// run on, is restarted, or `stopped` says it ends. Allocates nothing.
    pub(super) fn gate(
        &mut self,
        controls: &SessionControls,
        tick: u64,
        tick_s: f64,
        stopped: &dyn Fn() -> bool,
    ) -> Gate {
        loop {
            if controls.restart_requested() {
                return Gate::Restart;
            }
            if stopped() {
                return Gate::Run;
            }
            let generation = controls.generation.load(Ordering::Acquire);
            if generation != self.generation {
                self.generation = generation;
                self.anchor = None;
            }
            let seek = controls.seek_tick.load(Ordering::Acquire);
            if seek != NO_SEEK {
                if tick < seek {
                    return Gate::Run;
                }
                controls.seek_tick.store(NO_SEEK, Ordering::Release);
                self.anchor = None;
            }
            if controls.paused() {
                let steps = controls.steps.load(Ordering::Acquire);
                if steps > 0
                    && controls
                        .steps
                        .compare_exchange(steps, steps - 1, Ordering::AcqRel, Ordering::Acquire)
                        .is_ok()
                {
                    self.anchor = None;
                    return Gate::Run;
                }
                std::thread::sleep(LOOK_EVERY);
                continue;
            }
            let Some(speed) = controls.speed() else {
                return Gate::Run;
            };
            let (anchor_tick, anchor_at) = *self.anchor.get_or_insert((tick, Instant::now()));
            let due =
                anchor_at + Duration::from_secs_f64((tick - anchor_tick) as f64 * tick_s / speed);
            let now = Instant::now();
            if now >= due {
                return Gate::Run;
            }
            std::thread::sleep((due - now).min(LOOK_EVERY));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never() -> bool {
        false
    }

    #[test]
    fn out_of_range_controls_are_refused_and_change_nothing() {
        let controls = SessionControls::new(None).unwrap();
        assert_eq!(
            controls.set_speed(Some(0.001)),
            Err(ControlError::Speed(0.001))
        );
        assert!(controls.set_speed(Some(f64::NAN)).is_err());
        assert_eq!(controls.speed(), None);
        assert!(controls.seek(-1.0, 10.0, 1e-3, 0).is_err());
        assert!(controls.seek(11.0, 10.0, 1e-3, 0).is_err());
        assert!(!controls.restart_requested());
        assert_eq!(controls.step(0), Err(ControlError::Steps(0)));
        assert!(!controls.paused());
    }

    #[test]
    fn a_paused_session_runs_exactly_its_steps() {
        let controls = SessionControls::new(None).unwrap();
        let mut pacer = Pacer::new();
        controls.step(2).unwrap();
        assert!(controls.paused());
        assert_eq!(pacer.gate(&controls, 10, 1e-3, &never), Gate::Run);
        assert_eq!(pacer.gate(&controls, 20, 1e-3, &never), Gate::Run);
        // No step left: it waits until stopped.
        let calls = std::cell::Cell::new(0);
        let stop_after_a_few = || {
            calls.set(calls.get() + 1);
            calls.get() > 3
        };
        assert_eq!(
            pacer.gate(&controls, 30, 1e-3, &stop_after_a_few),
            Gate::Run
        );
        assert!(calls.get() > 3);
    }

    #[test]
    fn seeking_back_restarts_and_runs_unpaced_to_the_target() {
        let controls = SessionControls::new(Some(0.01)).unwrap();
        controls.seek(0.5, 10.0, 1e-3, 2000).unwrap();
        assert!(controls.take_restart());
        let mut pacer = Pacer::new();
        // The gate looks at `stopped` once per pass: one pass means it did
        // not wait.
        let looks = std::cell::Cell::new(0);
        let count = || {
            looks.set(looks.get() + 1);
            false
        };
        // Before the target: no pacing at 1 % (which would wait 1 s per 10 ms).
        for tick in (0..500).step_by(10) {
            assert_eq!(pacer.gate(&controls, tick, 1e-3, &count), Gate::Run);
        }
        assert_eq!(looks.get(), 50);
        // At the target the seek ends and the pace applies again.
        assert_eq!(pacer.gate(&controls, 500, 1e-3, &count), Gate::Run);
        looks.set(0);
        let paced = Instant::now();
        assert_eq!(pacer.gate(&controls, 501, 1e-3, &count), Gate::Run);
        assert!(looks.get() > 1);
        assert!(paced.elapsed() >= Duration::from_millis(100));
    }

    #[test]
    fn a_restart_ends_a_paused_wait() {
        let controls = SessionControls::new(None).unwrap();
        controls.pause();
        let mut pacer = Pacer::new();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(20));
                controls.reset();
            });
            assert_eq!(pacer.gate(&controls, 0, 1e-3, &never), Gate::Restart);
        });
        assert!(controls.take_restart());
        assert!(
            controls.paused(),
            "reset keeps the session paused at the start"
        );
    }

    #[test]
    fn answers_are_bounded() {
        let controls = SessionControls::new(None).unwrap();
        for _ in 0..ANSWER_QUEUE {
            controls
                .answer(Answer {
                    key: "ArrowLeft".into(),
                    time_s: 1.0,
                })
                .unwrap();
        }
        assert_eq!(
            controls.answer(Answer {
                key: "x".into(),
                time_s: 1.0
            }),
            Err(ControlError::AnswersFull)
        );
        assert_eq!(controls.take_answer().unwrap().key, "ArrowLeft");
    }
}
