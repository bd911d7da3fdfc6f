//! Adaptive procedures run side by side: each trial draws one of the
//! unfinished staircases or QUEST runs at random from a seed (PsychoPy's
//! MultiStairHandler, `random`), so a participant cannot follow one track.

use super::quest::Quest;
use super::staircase::Staircase;
use rand::seq::IndexedRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// One adaptive track.
#[derive(Debug, Clone, PartialEq)]
pub enum Procedure {
    /// A transformed up-down staircase.
    Staircase(Staircase),
    /// A QUEST run.
    Quest(Quest),
}

impl Procedure {
    /// The next stimulus value, or `None` when finished.
    pub fn next_value(&self) -> Option<f64> {
        match self {
            Procedure::Staircase(s) => s.next_value(),
            Procedure::Quest(q) => q.next_value(),
        }
    }

    /// Records the answer to `value`.
    pub fn record(&mut self, value: f64, correct: bool) {
        match self {
            Procedure::Staircase(s) => s.record(correct),
            Procedure::Quest(q) => q.record(value, correct),
        }
    }

    /// The current threshold estimate.
    pub fn threshold(&self) -> Option<f64> {
        match self {
            Procedure::Staircase(s) => s.threshold(),
            Procedure::Quest(q) => Some(q.threshold()),
        }
    }

    /// `staircase` or `quest`.
    pub fn kind(&self) -> &'static str {
        match self {
            Procedure::Staircase(_) => "staircase",
            Procedure::Quest(_) => "quest",
        }
    }
}

/// Procedures interleaved in a seeded random order.
#[derive(Debug, Clone)]
pub struct Interleaved {
    procedures: Vec<Procedure>,
    rng: ChaCha8Rng,
}

impl Interleaved {
    /// The procedures, drawn from with `seed`.
    pub fn new(procedures: Vec<Procedure>, seed: u64) -> Self {
        Self {
            procedures,
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// The next trial's procedure (index) and value, or `None` when all
    /// are done. Each call draws from the seed: call it once per trial.
    pub fn draw(&mut self) -> Option<(usize, f64)> {
        let open: Vec<usize> = (0..self.procedures.len())
            .filter(|&i| self.procedures[i].next_value().is_some())
            .collect();
        let &i = open.choose(&mut self.rng)?;
        Some((i, self.procedures[i].next_value()?))
    }

    /// Records the answer of a trial of procedure `index` at `value`.
    pub fn record(&mut self, index: usize, value: f64, correct: bool) {
        self.procedures[index].record(value, correct);
    }

    /// The procedures.
    pub fn procedures(&self) -> &[Procedure] {
        &self.procedures
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{StaircaseRules, StepType, StopWhen};

    fn stair() -> Procedure {
        Procedure::Staircase(Staircase::new(StaircaseRules {
            start: 0.5,
            n_up: 1,
            n_down: 2,
            steps: vec![0.1],
            up_steps: None,
            step_type: StepType::Lin,
            levels: None,
            min: Some(0.0),
            max: None,
            max_trials: Some(20),
            max_reversals: None,
            stop_when: StopWhen::Any,
            threshold_reversals: 2,
        }))
    }

    #[test]
    fn interleaving_is_seeded_and_runs_every_procedure_to_its_end() {
        let make = || Interleaved::new(vec![stair(), stair()], 7);
        let (mut a, mut b) = (make(), make());
        let mut seen = [0; 2];
        while let Some((i, v)) = a.draw() {
            assert_eq!(b.draw(), Some((i, v)));
            seen[i] += 1;
            a.record(i, v, true);
            b.record(i, v, true);
        }
        assert_eq!(seen, [20, 20]);
    }
}
