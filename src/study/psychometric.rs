//! Psychometric functions of a 2-AFC task and their maximum-likelihood fit
//! with parametric-bootstrap confidence intervals, the approach of
//! Palamedes (Prins & Kingdom 2018: `PAL_PFML_Fit` searches a grid, then
//! refines with a Nelder–Mead simplex; `PAL_PFML_BootstrapParametric`
//! refits data simulated from the fit).
//!
//! ψ(x) = γ + (1 − γ − λ) F(x; α, β), with γ the guess rate (1/2 in
//! 2-AFC), λ the lapse rate (free in [0, λ_max], Wichmann & Hill 2001) and
//! F a logistic 1 / (1 + e^{−β(x − α)}) or a Weibull 1 − e^{−(x/α)^β}.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The sigmoid F.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    /// 1 / (1 + e^{−β(x − α)}), any real stimulus.
    Logistic,
    /// 1 − e^{−(x/α)^β}, positive stimuli only.
    Weibull,
}

/// One stimulus level's answers (psignifit's `[stimulus, n_correct,
/// n_total]` row).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Block {
    /// The stimulus value.
    pub stimulus: f64,
    /// Correct answers at it.
    pub correct: u64,
    /// Trials at it.
    pub total: u64,
}

/// The parameters of ψ.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Parameters {
    /// α: location (the logistic's midpoint, the Weibull's scale).
    pub threshold: f64,
    /// β: slope.
    pub slope: f64,
    /// γ: the guess rate (fixed).
    pub guess_rate: f64,
    /// λ: the lapse rate.
    pub lapse_rate: f64,
}

impl Parameters {
    /// ψ(x).
    pub fn psi(&self, shape: Shape, x: f64) -> f64 {
        let f = sigmoid(shape, x, self.threshold, self.slope);
        self.guess_rate + (1.0 - self.guess_rate - self.lapse_rate) * f
    }

    /// The stimulus at which ψ = `p`, if ψ reaches it.
    pub fn stimulus_at(&self, shape: Shape, p: f64) -> Option<f64> {
        let f = (p - self.guess_rate) / (1.0 - self.guess_rate - self.lapse_rate);
        if !(f > 0.0 && f < 1.0) {
            return None;
        }
        Some(match shape {
            Shape::Logistic => self.threshold - ((1.0 - f) / f).ln() / self.slope,
            Shape::Weibull => self.threshold * (-(1.0 - f).ln()).powf(1.0 / self.slope),
        })
    }
}

fn sigmoid(shape: Shape, x: f64, alpha: f64, beta: f64) -> f64 {
    match shape {
        Shape::Logistic => 1.0 / (1.0 + (-beta * (x - alpha)).exp()),
        Shape::Weibull if x <= 0.0 => 0.0,
        Shape::Weibull => 1.0 - (-(x / alpha).powf(beta)).exp(),
    }
}

/// How to fit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FitOptions {
    /// The sigmoid.
    pub shape: Shape,
    /// γ (1/2 in 2-AFC).
    pub guess_rate: f64,
    /// λ's upper bound (0 fixes λ at 0).
    pub lapse_max: f64,
    /// Simulated data sets for the confidence intervals (0: none).
    pub bootstrap_samples: usize,
    /// Seed of the simulated data sets.
    pub seed: u64,
}

impl Default for FitOptions {
    fn default() -> Self {
        Self {
            shape: Shape::Logistic,
            guess_rate: 0.5,
            lapse_max: 0.06,
            bootstrap_samples: 1000,
            seed: 0,
        }
    }
}

/// A central 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// 2.5th percentile.
    pub low: f64,
    /// 97.5th percentile.
    pub high: f64,
}

/// A fitted psychometric function.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    /// The sigmoid.
    pub shape: Shape,
    /// The maximum-likelihood parameters.
    pub parameters: Parameters,
    /// The log-likelihood there (binomial coefficients left out).
    pub log_likelihood: f64,
    /// Parametric-bootstrap 95 % interval of α.
    pub threshold_ci: Option<Interval>,
    /// Of β.
    pub slope_ci: Option<Interval>,
    /// Simulated data sets whose fit failed (left out of the intervals).
    pub bootstrap_failures: usize,
}

/// Why data cannot be fitted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    /// Fewer than two stimulus levels, no trials, or stimuli the shape
    /// does not accept.
    #[error("psychometric fit: {0}")]
    Data(String),
}

/// The log-likelihood of `blocks` under ψ (without the binomial
/// coefficients, which do not depend on the parameters).
pub fn log_likelihood(shape: Shape, p: &Parameters, blocks: &[Block]) -> f64 {
    blocks
        .iter()
        .map(|b| {
            let psi = p.psi(shape, b.stimulus).clamp(1e-12, 1.0 - 1e-12);
            let (k, n) = (b.correct as f64, b.total as f64);
            k * psi.ln() + (n - k) * (1.0 - psi).ln()
        })
        .sum()
}

/// Maximum-likelihood fit of ψ to `blocks`, with bootstrap intervals.
pub fn fit(blocks: &[Block], options: &FitOptions) -> Result<Fit, FitError> {
    check(blocks, options)?;
    let parameters = fit_parameters(blocks, options);
    let log_likelihood = log_likelihood(options.shape, &parameters, blocks);
    let (mut threshold_ci, mut slope_ci, mut failures) = (None, None, 0);
    if options.bootstrap_samples > 0 {
        let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
        let mut alphas = Vec::with_capacity(options.bootstrap_samples);
        let mut betas = Vec::with_capacity(options.bootstrap_samples);
        for _ in 0..options.bootstrap_samples {
            let simulated: Vec<Block> = blocks
                .iter()
                .map(|b| {
                    let psi = parameters.psi(options.shape, b.stimulus);
                    let correct = (0..b.total).filter(|_| rng.random::<f64>() < psi).count() as u64;
                    Block { correct, ..*b }
                })
                .collect();
            let p = fit_parameters(&simulated, options);
            if p.threshold.is_finite() && p.slope.is_finite() {
                alphas.push(p.threshold);
                betas.push(p.slope);
            } else {
                failures += 1;
            }
        }
        threshold_ci = percentile_interval(&mut alphas);
        slope_ci = percentile_interval(&mut betas);
    }
    Ok(Fit {
        shape: options.shape,
        parameters,
        log_likelihood,
        threshold_ci,
        slope_ci,
        bootstrap_failures: failures,
    })
}

fn check(blocks: &[Block], options: &FitOptions) -> Result<(), FitError> {
    let used: Vec<&Block> = blocks.iter().filter(|b| b.total > 0).collect();
    let mut levels: Vec<f64> = used.iter().map(|b| b.stimulus).collect();
    levels.sort_by(f64::total_cmp);
    levels.dedup();
    if levels.len() < 2 {
        return Err(FitError::Data(format!(
            "{} stimulus level(s) with trials; a slope needs two",
            levels.len()
        )));
    }
    if let Some(b) = blocks
        .iter()
        .find(|b| !b.stimulus.is_finite() || b.correct > b.total)
    {
        return Err(FitError::Data(format!(
            "stimulus {} has {} correct of {}",
            b.stimulus, b.correct, b.total
        )));
    }
    if options.shape == Shape::Weibull && levels[0] <= 0.0 {
        return Err(FitError::Data(format!(
            "a Weibull needs positive stimuli; {} is not",
            levels[0]
        )));
    }
    if !(0.0..1.0).contains(&options.guess_rate)
        || !(0.0..1.0 - options.guess_rate).contains(&options.lapse_max)
    {
        return Err(FitError::Data(format!(
            "guess rate {} and lapse bound {} leave no range for ψ",
            options.guess_rate, options.lapse_max
        )));
    }
    Ok(())
}

/// Grid search, then Nelder–Mead from the grid's best point
/// (`PAL_PFML_Fit`), over (α or ln α, ln β, λ).
fn fit_parameters(blocks: &[Block], options: &FitOptions) -> Parameters {
    let shape = options.shape;
    let (lo, hi) = blocks
        .iter()
        .filter(|b| b.total > 0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), b| {
            (lo.min(b.stimulus), hi.max(b.stimulus))
        });
    let span = (hi - lo).max(f64::EPSILON * hi.abs().max(1.0));
    let to_params = |v: &[f64; 3]| Parameters {
        threshold: match shape {
            Shape::Logistic => v[0],
            Shape::Weibull => v[0].exp(),
        },
        slope: v[1].exp(),
        guess_rate: options.guess_rate,
        lapse_rate: v[2].clamp(0.0, options.lapse_max),
    };
    let objective = |v: &[f64; 3]| {
        let lapse_excess = (v[2] - v[2].clamp(0.0, options.lapse_max)).abs();
        -log_likelihood(shape, &to_params(v), blocks) + 1e3 * lapse_excess
    };
    // The grid: α over the stimuli widened by half their span, β from a
    // hundredth to a hundred times the "one span" slope.
    let mut best = ([0.0; 3], f64::INFINITY);
    let slope_unit = match shape {
        Shape::Logistic => 1.0 / span,
        Shape::Weibull => 1.0,
    };
    for i in 0..=24 {
        let alpha = lo - 0.5 * span + 2.0 * span * i as f64 / 24.0;
        let first = match shape {
            Shape::Logistic => alpha,
            Shape::Weibull if alpha > 0.0 => alpha.ln(),
            Shape::Weibull => continue,
        };
        for j in 0..=24 {
            let log_beta = (slope_unit * 10f64.powf(-2.0 + 4.0 * j as f64 / 24.0)).ln();
            for lapse in [0.0, 0.5 * options.lapse_max, options.lapse_max] {
                let v = [first, log_beta, lapse];
                let f = objective(&v);
                if f < best.1 {
                    best = (v, f);
                }
            }
        }
    }
    let steps = [
        0.1 * match shape {
            Shape::Logistic => span,
            Shape::Weibull => 0.1,
        },
        0.3,
        0.25 * options.lapse_max.max(1e-3),
    ];
    let mut v = nelder_mead(&objective, best.0, steps);
    // Restarts from the answer, with fresh simplices, until one no longer
    // improves it: a simplex can collapse short of the optimum.
    let mut f = objective(&v);
    for _ in 0..10 {
        let w = nelder_mead(&objective, v, steps.map(|s| s * 0.1));
        let g = objective(&w);
        let improved = g < f - 1e-13 * f.abs().max(1.0);
        if g <= f {
            (v, f) = (w, g);
        }
        if !improved {
            break;
        }
    }
    to_params(&v)
}

/// Nelder–Mead simplex minimisation (reflection 1, expansion 2,
/// contraction ½, shrink ½) from `start` with initial steps `steps`.
fn nelder_mead(f: &impl Fn(&[f64; 3]) -> f64, start: [f64; 3], steps: [f64; 3]) -> [f64; 3] {
    let mut simplex: Vec<([f64; 3], f64)> = (0..4)
        .map(|i| {
            let mut v = start;
            if i > 0 {
                v[i - 1] += steps[i - 1];
            }
            (v, f(&v))
        })
        .collect();
    let combine = |a: &[f64; 3], b: &[f64; 3], t: f64| -> [f64; 3] {
        std::array::from_fn(|k| a[k] + t * (b[k] - a[k]))
    };
    for _ in 0..5000 {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        let spread = simplex[3].1 - simplex[0].1;
        if spread.abs() <= 1e-12 * (1.0 + simplex[0].1.abs()) {
            let size: f64 = (1..4)
                .map(|i| {
                    (0..3)
                        .map(|k| (simplex[i].0[k] - simplex[0].0[k]).abs())
                        .fold(0.0, f64::max)
                })
                .fold(0.0, f64::max);
            if size < 1e-10 {
                break;
            }
        }
        let centroid: [f64; 3] =
            std::array::from_fn(|k| (0..3).map(|i| simplex[i].0[k]).sum::<f64>() / 3.0);
        let worst = simplex[3];
        let reflected = combine(&centroid, &worst.0, -1.0);
        let fr = f(&reflected);
        if fr < simplex[0].1 {
            let expanded = combine(&centroid, &worst.0, -2.0);
            let fe = f(&expanded);
            simplex[3] = if fe < fr {
                (expanded, fe)
            } else {
                (reflected, fr)
            };
        } else if fr < simplex[2].1 {
            simplex[3] = (reflected, fr);
        } else {
            let contracted = if fr < worst.1 {
                combine(&centroid, &reflected, 0.5)
            } else {
                combine(&centroid, &worst.0, 0.5)
            };
            let fc = f(&contracted);
            if fc < worst.1.min(fr) {
                simplex[3] = (contracted, fc);
            } else {
                let best = simplex[0].0;
                for vertex in simplex.iter_mut().skip(1) {
                    vertex.0 = combine(&best, &vertex.0, 0.5);
                    vertex.1 = f(&vertex.0);
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    simplex[0].0
}

/// The 2.5th and 97.5th percentiles (linear interpolation between order
/// statistics, numpy's default).
fn percentile_interval(values: &mut [f64]) -> Option<Interval> {
    if values.len() < 2 {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let pos = q * (values.len() - 1) as f64;
        let i = pos.floor() as usize;
        let frac = pos - i as f64;
        let next = values[(i + 1).min(values.len() - 1)];
        values[i] + frac * (next - values[i])
    };
    Some(Interval {
        low: at(0.025),
        high: at(0.975),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stimulus_at_a_level_inverts_psi() {
        let p = Parameters {
            threshold: 2.0,
            slope: 3.0,
            guess_rate: 0.5,
            lapse_rate: 0.02,
        };
        for shape in [Shape::Logistic, Shape::Weibull] {
            for q in [0.6, 0.707, 0.75, 0.9] {
                let x = p.stimulus_at(shape, q).unwrap();
                assert!((p.psi(shape, x) - q).abs() < 1e-12);
            }
            assert_eq!(p.stimulus_at(shape, 0.99), None);
        }
    }

    #[test]
    fn noiseless_data_give_back_their_parameters() {
        // Expected counts of a known function, scaled up: the ML fit of
        // exact proportions is the function itself.
        let truth = Parameters {
            threshold: 1.5,
            slope: 4.0,
            guess_rate: 0.5,
            lapse_rate: 0.03,
        };
        let blocks: Vec<Block> = (0..9)
            .map(|i| {
                let x = 0.5 + 0.25 * i as f64;
                let n = 1_000_000;
                Block {
                    stimulus: x,
                    correct: (truth.psi(Shape::Logistic, x) * n as f64).round() as u64,
                    total: n,
                }
            })
            .collect();
        let options = FitOptions {
            bootstrap_samples: 0,
            ..FitOptions::default()
        };
        let fit = fit(&blocks, &options).unwrap();
        let p = fit.parameters;
        assert!((p.threshold - 1.5).abs() < 1e-3, "{p:?}");
        assert!((p.slope - 4.0).abs() < 1e-2, "{p:?}");
        assert!((p.lapse_rate - 0.03).abs() < 1e-3, "{p:?}");
    }

    #[test]
    fn one_level_is_refused() {
        let blocks = [Block {
            stimulus: 1.0,
            correct: 3,
            total: 4,
        }];
        assert!(fit(&blocks, &FitOptions::default()).is_err());
    }
}
