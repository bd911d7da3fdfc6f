//! Transformed up-down staircases (Levitt 1971): after `n_down` correct
//! answers in a row the stimulus steps down (harder), after `n_up` wrong
//! answers in a row it steps up; the step size advances through a list at
//! each reversal; up and down steps may differ (Kaernbach 1991's weighted
//! up-down: S_up / S_down = p / (1 − p) targets p correct); steps are
//! linear, in log10 units or in decibels (20·log10), or indices into a
//! predefined list of levels; values stay within bounds; the staircase
//! stops after a number of trials *or* of reversals, or when both are
//! reached, as its configuration says. Several staircases interleave in a
//! seeded random order ([`super::adaptive::Interleaved`]).
//!
//! A 1-up-n-down rule converges on the stimulus where p(correct)ⁿ = ½:
//! 70.7 % for 1-up-2-down, 79.4 % for 1-up-3-down (Levitt 1971, Table I).

use crate::config::{StaircaseRules, StepType, StopWhen};
use serde::{Deserialize, Serialize};

/// One trial of a staircase: the value shown and the answer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StairTrial {
    /// The stimulus value.
    pub value: f64,
    /// Whether the answer was correct.
    pub correct: bool,
    /// Whether this trial's step reversed the direction.
    pub reversal: bool,
}

/// A transformed up-down staircase in progress.
#[derive(Debug, Clone, PartialEq)]
pub struct Staircase {
    rules: StaircaseRules,
    /// In the step domain: the value, its log10, its dB, or a level index.
    position: f64,
    correct_run: u32,
    wrong_run: u32,
    /// +1 up, −1 down, 0 before the first step.
    direction: i8,
    trials: Vec<StairTrial>,
    reversals: Vec<f64>,
}

impl Staircase {
    /// A staircase at its start. `rules` must have no [problems](StaircaseRules::problems).
    pub fn new(rules: StaircaseRules) -> Self {
        let position = match rules.step_type {
            StepType::Lin => rules.start,
            StepType::Log => rules.start.log10(),
            StepType::Db => 20.0 * rules.start.log10(),
        };
        Self {
            rules,
            position,
            correct_run: 0,
            wrong_run: 0,
            direction: 0,
            trials: Vec::new(),
            reversals: Vec::new(),
        }
    }

    /// The stimulus value of the next trial, or `None` when finished.
    pub fn next_value(&self) -> Option<f64> {
        (!self.finished()).then(|| self.value())
    }

    fn value(&self) -> f64 {
        match (&self.rules.levels, self.rules.step_type) {
            (Some(levels), _) => levels[self.position as usize],
            (None, StepType::Lin) => self.position,
            (None, StepType::Log) => 10f64.powf(self.position),
            (None, StepType::Db) => 10f64.powf(self.position / 20.0),
        }
    }

    /// Whether a stop rule is met.
    pub fn finished(&self) -> bool {
        let trials = self
            .rules
            .max_trials
            .map(|n| self.trials.len() >= n as usize);
        let reversals = self
            .rules
            .max_reversals
            .map(|n| self.reversals.len() >= n as usize);
        let limits = [trials, reversals];
        match self.rules.stop_when {
            StopWhen::Any => limits.contains(&Some(true)),
            StopWhen::All => limits.iter().flatten().all(|l| *l),
        }
    }

    /// Records the answer to the trial at [`next_value`](Self::next_value)
    /// and moves.
    pub fn record(&mut self, correct: bool) {
        let value = self.value();
        let mut step = 0i8;
        if correct {
            self.correct_run += 1;
            self.wrong_run = 0;
            if self.correct_run >= self.rules.n_down {
                step = -1;
                self.correct_run = 0;
            }
        } else {
            self.wrong_run += 1;
            self.correct_run = 0;
            if self.wrong_run >= self.rules.n_up {
                step = 1;
                self.wrong_run = 0;
            }
        }
        let reversal = step != 0 && self.direction != 0 && step != self.direction;
        if reversal {
            self.reversals.push(value);
        }
        if step != 0 {
            self.direction = step;
            let index = self.reversals.len();
            let pick = |sizes: &[f64]| sizes[index.min(sizes.len() - 1)];
            let size = if step > 0 {
                pick(self.rules.up_steps.as_deref().unwrap_or(&self.rules.steps))
            } else {
                pick(&self.rules.steps)
            };
            self.position += f64::from(step) * size;
            self.clamp();
        }
        self.trials.push(StairTrial {
            value,
            correct,
            reversal,
        });
    }

    fn clamp(&mut self) {
        let to_position = |v: f64| match self.rules.step_type {
            StepType::Lin => v,
            StepType::Log => v.log10(),
            StepType::Db => 20.0 * v.log10(),
        };
        if let Some(levels) = &self.rules.levels {
            let mut i = self.position.clamp(0.0, (levels.len() - 1) as f64);
            while self.rules.min.is_some_and(|m| levels[i as usize] < m)
                && i < (levels.len() - 1) as f64
            {
                i += 1.0;
            }
            while self.rules.max.is_some_and(|m| levels[i as usize] > m) && i > 0.0 {
                i -= 1.0;
            }
            self.position = i;
            return;
        }
        if let Some(lo) = self.rules.min {
            if self.rules.step_type == StepType::Lin || lo > 0.0 {
                self.position = self.position.max(to_position(lo));
            }
        }
        if let Some(hi) = self.rules.max {
            if self.rules.step_type == StepType::Lin || hi > 0.0 {
                self.position = self.position.min(to_position(hi));
            }
        }
    }

    /// The trials so far.
    pub fn trials(&self) -> &[StairTrial] {
        &self.trials
    }

    /// The values at the reversals so far.
    pub fn reversals(&self) -> &[f64] {
        &self.reversals
    }

    /// The mean of the last `threshold_reversals` reversal values (fewer
    /// if there are fewer), or `None` before the first reversal.
    pub fn threshold(&self) -> Option<f64> {
        let k = (self.rules.threshold_reversals as usize).min(self.reversals.len());
        (k > 0).then(|| {
            self.reversals[self.reversals.len() - k..]
                .iter()
                .sum::<f64>()
                / k as f64
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> StaircaseRules {
        StaircaseRules {
            start: 10.0,
            n_up: 1,
            n_down: 2,
            steps: vec![4.0, 2.0, 1.0],
            up_steps: None,
            step_type: StepType::Lin,
            levels: None,
            min: Some(0.0),
            max: None,
            max_trials: Some(100),
            max_reversals: None,
            stop_when: StopWhen::Any,
            threshold_reversals: 2,
        }
    }

    fn run(rules: StaircaseRules, answers: &[bool]) -> Staircase {
        let mut s = Staircase::new(rules);
        for &a in answers {
            s.record(a);
        }
        s
    }

    #[test]
    fn one_up_two_down_by_hand() {
        // As PsychoPy's StairHandler: the step size advances at a
        // reversal and the reversing step already uses the new size.
        // 10 C, 10 C → down 4 → 6 W → up 2 (reversal at 6) → 8 C, 8 C →
        // down 1 (reversal at 8) → 7 W → up 1 (reversal at 7) → 8.
        let s = run(rules(), &[true, true, false, true, true, false]);
        let values: Vec<f64> = s.trials().iter().map(|t| t.value).collect();
        assert_eq!(values, vec![10.0, 10.0, 6.0, 8.0, 8.0, 7.0]);
        assert_eq!(s.reversals(), &[6.0, 8.0, 7.0]);
        assert_eq!(s.next_value(), Some(8.0));
        assert_eq!(s.threshold(), Some(7.5));
    }

    #[test]
    fn weighted_steps_bounds_and_either_or_stop() {
        let mut r = rules();
        r.steps = vec![1.0];
        r.up_steps = Some(vec![3.0]);
        r.max_trials = Some(50);
        r.max_reversals = Some(2);
        // Down 1 after two correct, up 3 after one wrong.
        let s = run(r.clone(), &[true, true, false, true, true]);
        let values: Vec<f64> = s.trials().iter().map(|t| t.value).collect();
        assert_eq!(values, vec![10.0, 10.0, 9.0, 12.0, 12.0]);
        assert_eq!(s.reversals(), &[9.0, 12.0]);
        assert!(s.finished(), "two reversals end it under `any`");
        r.stop_when = StopWhen::All;
        let s = run(r, &[true, true, false, true, true]);
        assert!(!s.finished(), "under `all` it also needs 50 trials");
        // The floor: nine correct pairs from 10 by 4 go no lower than 0.
        let s = run(rules(), &[true; 18]);
        assert_eq!(s.next_value(), Some(0.0));
    }

    #[test]
    fn decibel_and_level_list_steps() {
        let mut r = rules();
        r.step_type = StepType::Db;
        r.start = 1.0;
        r.steps = vec![20.0];
        r.min = None;
        let s = run(r, &[true, true]);
        assert!(
            (s.next_value().unwrap() - 0.1).abs() < 1e-12,
            "−20 dB is ÷10"
        );
        let mut r = rules();
        r.levels = Some(vec![0.1, 0.2, 0.4, 0.8]);
        r.start = 3.0;
        r.steps = vec![1.0];
        r.min = None;
        let s = run(r.clone(), &[true, true, true, true, true, true, true, true]);
        assert_eq!(s.next_value(), Some(0.1), "the list's end holds");
        assert!(r.problems().is_empty());
        r.steps = vec![0.5];
        assert!(
            !r.problems().is_empty(),
            "fractional index steps are refused"
        );
    }
}
