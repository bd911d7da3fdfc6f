//! QUEST (Watson & Pelli 1983): a Bayesian adaptive method. The threshold
//! T, in log10 units of the stimulus, has a posterior on a grid; each
//! trial is placed at the posterior's quantile, mean or mode and its answer
//! multiplies the posterior by the Weibull psychometric function
//!
//! ψ(x; T) = δγ + (1 − δ)[1 − (1 − γ) exp(−10^{β(x − T + ε)})]
//!
//! (Watson & Pelli 1983, eq. 1, with ε placing ψ(T) at `p_threshold`, as
//! Psychtoolbox's `QuestCreate`). The estimate is the posterior mean and
//! its standard deviation (King-Smith et al. 1994).

use crate::config::{Placement, QuestRules};

/// Grid step of the posterior, log10 units.
const GRAIN_LOG10: f64 = 0.01;
/// Half-width of the grid around the guess, log10 units.
const HALF_RANGE_LOG10: f64 = 2.5;

/// A QUEST run in progress.
#[derive(Debug, Clone, PartialEq)]
pub struct Quest {
    rules: QuestRules,
    /// ε of eq. 1.
    epsilon: f64,
    /// Grid of T (log10).
    grid: Vec<f64>,
    /// Log posterior on the grid.
    log_posterior: Vec<f64>,
    trials: Vec<(f64, bool)>,
}

impl Quest {
    /// QUEST with its Gaussian prior. `rules` must have no
    /// [problems](QuestRules::problems).
    pub fn new(rules: QuestRules) -> Self {
        let (g, d, b) = (rules.gamma, rules.delta, rules.beta);
        // Solve ψ(T; T) = p for ε: 1 − (1−γ) e^{−10^{βε}} = (p − δγ)/(1 − δ).
        let f = (rules.p_threshold - d * g) / (1.0 - d);
        let epsilon = (-((1.0 - f) / (1.0 - g)).ln()).log10() / b;
        let centre = rules.guess.log10();
        let n = (2.0 * HALF_RANGE_LOG10 / GRAIN_LOG10).round() as usize + 1;
        let grid: Vec<f64> = (0..n)
            .map(|i| centre - HALF_RANGE_LOG10 + i as f64 * GRAIN_LOG10)
            .collect();
        let sd = rules.guess_sd_log10;
        let log_posterior = grid
            .iter()
            .map(|t| -0.5 * ((t - centre) / sd).powi(2))
            .collect();
        Self {
            rules,
            epsilon,
            grid,
            log_posterior,
            trials: Vec::new(),
        }
    }

    /// ψ of eq. 1 at stimulus `x_log10` for threshold `t_log10`.
    pub fn psi(&self, x_log10: f64, t_log10: f64) -> f64 {
        weibull_psi(&self.rules, self.epsilon, x_log10, t_log10)
    }

    fn posterior(&self) -> Vec<f64> {
        let top = self
            .log_posterior
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = self.log_posterior.iter().map(|l| (l - top).exp()).collect();
        let sum: f64 = w.iter().sum();
        w.into_iter().map(|x| x / sum).collect()
    }

    /// The posterior mean of T and its standard deviation (log10 units).
    pub fn estimate_log10(&self) -> (f64, f64) {
        let p = self.posterior();
        let mean: f64 = p.iter().zip(&self.grid).map(|(w, t)| w * t).sum();
        let var: f64 = p
            .iter()
            .zip(&self.grid)
            .map(|(w, t)| w * (t - mean).powi(2))
            .sum();
        (mean, var.sqrt())
    }

    /// The threshold estimate as a stimulus value (10^mean).
    pub fn threshold(&self) -> f64 {
        10f64.powf(self.estimate_log10().0)
    }

    /// The next trial's stimulus value, or `None` after `max_trials`.
    pub fn next_value(&self) -> Option<f64> {
        if self.trials.len() >= self.rules.max_trials as usize {
            return None;
        }
        let p = self.posterior();
        let x = match self.rules.placement {
            Placement::Mean => self.estimate_log10().0,
            Placement::Mode => {
                let i = (0..p.len())
                    .max_by(|&a, &b| p[a].total_cmp(&p[b]))
                    .unwrap_or(0);
                self.grid[i]
            }
            Placement::Quantile => {
                let mut acc = 0.0;
                let mut at = self.grid[self.grid.len() - 1];
                for (w, t) in p.iter().zip(&self.grid) {
                    acc += w;
                    if acc >= 0.5 {
                        at = *t;
                        break;
                    }
                }
                at
            }
        };
        let mut value = 10f64.powf(x);
        if let Some(lo) = self.rules.min {
            value = value.max(lo);
        }
        if let Some(hi) = self.rules.max {
            value = value.min(hi);
        }
        Some(value)
    }

    /// Records the answer at stimulus `value`.
    pub fn record(&mut self, value: f64, correct: bool) {
        let x = value.log10();
        for (l, t) in self.log_posterior.iter_mut().zip(&self.grid) {
            let psi = weibull_psi(&self.rules, self.epsilon, x, *t);
            *l += if correct { psi.ln() } else { (1.0 - psi).ln() };
        }
        self.trials.push((value, correct));
    }

    /// The trials so far: (value, correct).
    pub fn trials(&self) -> &[(f64, bool)] {
        &self.trials
    }
}

fn weibull_psi(rules: &QuestRules, epsilon: f64, x: f64, t: f64) -> f64 {
    let (g, d, b) = (rules.gamma, rules.delta, rules.beta);
    d * g + (1.0 - d) * (1.0 - (1.0 - g) * (-(10f64.powf(b * (x - t + epsilon)))).exp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn rules() -> QuestRules {
        QuestRules {
            guess: 0.3,
            guess_sd_log10: 0.5,
            p_threshold: 0.75,
            beta: 3.5,
            delta: 0.01,
            gamma: 0.5,
            max_trials: 80,
            placement: Placement::Quantile,
            min: None,
            max: None,
        }
    }

    #[test]
    fn psi_at_threshold_is_p_threshold() {
        let q = Quest::new(rules());
        assert!((q.psi(-1.0, -1.0) - 0.75).abs() < 1e-12);
    }

    #[test]
    fn quest_finds_a_simulated_observers_threshold() {
        // An observer following the model with T = 0.1 (log10 −1), started
        // from a guess three times too high.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut errors = Vec::new();
        for _ in 0..20 {
            let mut q = Quest::new(rules());
            while let Some(v) = q.next_value() {
                let p = q.psi(v.log10(), -1.0);
                q.record(v, rng.random::<f64>() < p);
            }
            errors.push(q.estimate_log10().0 + 1.0);
        }
        let mean = errors.iter().sum::<f64>() / errors.len() as f64;
        let rms = (errors.iter().map(|e| e * e).sum::<f64>() / errors.len() as f64).sqrt();
        assert!(
            mean.abs() < 0.05 && rms < 0.12,
            "bias {mean}, rms {rms} (log10)"
        );
    }
}
