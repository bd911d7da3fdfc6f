//! A trial's answer and where it comes from: the model participant, the
//! keys of the study file's `[answers]` table (terminal or viewer), or
//! device buttons read on the haptic thread.

use crate::config::Answers;
use crate::device::{Device, DeviceCommand, DeviceError, DeviceSpec, DeviceState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What a participant said about a trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Response {
    /// This side (0 left, 1 right) is the weaker.
    Chose(usize),
    /// Abort the trial; it is run again.
    Abort,
}

/// A trial's answer, given once (the first answer wins) by whichever
/// thread sees it; lock-free, so the haptic thread may give it.
#[derive(Debug, Default)]
pub struct AnswerSlot {
    /// The session time of the answer in µs, shifted left by two, or'ed
    /// with the response: 0 none yet, 1 left, 2 right, 3 aborted.
    packed: AtomicU64,
}

impl AnswerSlot {
    /// Gives `response` at session time `time_s`, unless an answer was
    /// given already; returns whether this one was kept.
    pub fn give(&self, response: Response, time_s: f64) -> bool {
        let code = match response {
            Response::Chose(side) => side.min(1) as u64 + 1,
            Response::Abort => 3,
        };
        // Two bits for the code leave 2^62 µs, some 146 000 years.
        let time_us = ((time_s.max(0.0) * 1e6).round() as u64).min(u64::MAX >> 2);
        self.packed
            .compare_exchange(0, time_us << 2 | code, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// The response and its session time (s), once given.
    pub fn get(&self) -> Option<(Response, f64)> {
        let packed = self.packed.load(Ordering::Acquire);
        let response = match packed & 3 {
            0 => return None,
            3 => Response::Abort,
            s => Response::Chose(s as usize - 1),
        };
        Some((response, (packed >> 2) as f64 * 1e-6))
    }
}

/// The study file's answer keys: a key names a response, whatever its
/// case (`f` and `F` both mean left by default).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyMap {
    keys: [(char, Response); 3],
}

impl KeyMap {
    /// The keys of `answers`.
    pub fn new(answers: &Answers) -> Self {
        Self {
            keys: [
                (answers.left_key, Response::Chose(0)),
                (answers.right_key, Response::Chose(1)),
                (answers.abort_key, Response::Abort),
            ],
        }
    }

    /// What a key means: a viewer's `KeyboardEvent.key` or a line typed
    /// in the terminal (surrounding blanks ignored); `None` for any other.
    pub fn response(&self, key: &str) -> Option<Response> {
        let mut chars = key.trim().chars();
        let (Some(c), None) = (chars.next(), chars.next()) else {
            return None;
        };
        self.keys
            .iter()
            .find(|(k, _)| k.to_lowercase().eq(c.to_lowercase()))
            .map(|&(_, r)| r)
    }

    /// "F for the left plate, J for the right, X to abort".
    pub fn describe(&self) -> String {
        let [l, r, a] = self.keys.map(|(k, _)| k.to_uppercase().to_string());
        format!("{l} for the left plate, {r} for the right plate, {a} to abort the trial")
    }
}

/// A device whose buttons answer: a press (a release-to-press edge) of
/// `buttons[0]` chooses left, of `buttons[1]` right. It reads the device
/// for the haptic thread and only adds a compare and an atomic store.
#[derive(Debug)]
pub struct AnswerButtons<D> {
    inner: D,
    buttons: [Option<u8>; 2],
    slot: Arc<AnswerSlot>,
    /// Buttons held at the last read.
    held: u32,
}

impl<D: Device> AnswerButtons<D> {
    /// `inner`, answering into `slot` with `buttons` (left, right; 0–31).
    /// Buttons held when the trial starts answer only once released and
    /// pressed again.
    pub fn new(inner: D, buttons: [Option<u8>; 2], slot: Arc<AnswerSlot>) -> Self {
        Self {
            inner,
            buttons,
            slot,
            held: u32::MAX,
        }
    }
}

impl<D: Device> Device for AnswerButtons<D> {
    fn spec(&self) -> &DeviceSpec {
        self.inner.spec()
    }

    fn read(&mut self, now_s: f64) -> Result<DeviceState, DeviceError> {
        let state = self.inner.read(now_s)?;
        let pressed = state.buttons & !self.held;
        self.held = state.buttons;
        for (side, button) in self.buttons.iter().enumerate() {
            if let Some(b) = button.filter(|&b| b < 32) {
                if pressed & (1 << b) != 0 {
                    self.slot.give(Response::Chose(side), now_s);
                }
            }
        }
        Ok(state)
    }

    fn command(&mut self, command: &DeviceCommand, now_s: f64) -> Result<(), DeviceError> {
        self.inner.command(command, now_s)
    }

    fn release(&mut self, now_s: f64) -> Result<(), DeviceError> {
        self.inner.release(now_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device whose buttons follow a list, one state per read.
    struct Buttons {
        spec: DeviceSpec,
        states: std::vec::IntoIter<u32>,
    }

    impl Device for Buttons {
        fn spec(&self) -> &DeviceSpec {
            &self.spec
        }
        fn read(&mut self, _now_s: f64) -> Result<DeviceState, DeviceError> {
            Ok(DeviceState {
                buttons: self.states.next().unwrap_or(0),
                ..DeviceState::default()
            })
        }
        fn command(&mut self, _: &DeviceCommand, _: f64) -> Result<(), DeviceError> {
            Ok(())
        }
    }

    /// Reads `states` one per millisecond with buttons 3 (left) and 5
    /// (right); the answer given, if any.
    fn press(states: Vec<u32>) -> Option<(Response, f64)> {
        let slot = Arc::new(AnswerSlot::default());
        let n = states.len();
        let device = Buttons {
            spec: crate::device::sim_arm_spec(),
            states: states.into_iter(),
        };
        let mut device = AnswerButtons::new(device, [Some(3), Some(5)], Arc::clone(&slot));
        for i in 0..n {
            device.read(i as f64 * 1e-3).unwrap();
        }
        slot.get()
    }

    #[test]
    fn a_button_press_answers_once() {
        assert_eq!(
            press(vec![0, 0, 1 << 5, 1 << 5, 0]),
            Some((Response::Chose(1), 0.002))
        );
        assert_eq!(
            press(vec![0, 1 << 3, 0, 1 << 5]),
            Some((Response::Chose(0), 0.001))
        );
        // Other buttons (the deadman's, say) do not answer.
        assert_eq!(press(vec![0, 1, 1 << 4, 1 << 31]), None);
        // Held from the start: only a new press counts.
        assert_eq!(press(vec![1 << 3, 1 << 3]), None);
        assert_eq!(
            press(vec![1 << 3, 0, 1 << 3]),
            Some((Response::Chose(0), 0.002))
        );
    }

    #[test]
    fn the_first_answer_wins() {
        let slot = AnswerSlot::default();
        assert_eq!(slot.get(), None);
        assert!(slot.give(Response::Chose(1), 2.5));
        assert!(!slot.give(Response::Chose(0), 3.0));
        assert!(!slot.give(Response::Abort, 3.0));
        assert_eq!(slot.get(), Some((Response::Chose(1), 2.5)));
        let aborted = AnswerSlot::default();
        assert!(aborted.give(Response::Abort, 1.0));
        assert_eq!(aborted.get(), Some((Response::Abort, 1.0)));
    }

    #[test]
    fn keys_are_single_characters_of_either_case() {
        let keys = KeyMap::new(&Answers::default());
        assert_eq!(keys.response("f"), Some(Response::Chose(0)));
        assert_eq!(keys.response(" J \n"), Some(Response::Chose(1)));
        assert_eq!(keys.response("X"), Some(Response::Abort));
        for other in ["", "ff", "left", "ArrowLeft", "k"] {
            assert_eq!(keys.response(other), None, "{other:?}");
        }
        assert_eq!(
            keys.describe(),
            "F for the left plate, J for the right plate, X to abort the trial"
        );
    }
}
