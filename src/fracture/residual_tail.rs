//! The modes an analysis leaves out, responding at a contact as a
//! continuum of modes above the retained spectrum rather than at once.
//!
//! The static correction (`modal::StaticCorrection`) gives a contact the
//! deflection of the modes left out as `R F(t)`: each mode k above the
//! basis follows the force quasi-statically, `(g_k²/λ_k) F`. Over a short,
//! hard contact the modes just above the basis cannot: a mode responds to a
//! unit impulse as `g_k² sin(ω_k t)/ω_k`. Above the basis their driving-point
//! weights `g_k²` and frequencies form, on average, a spectral density
//! `G = Σ g_k² / Δω` that a thin plate's bending modes hold constant
//! (their modal density is `A/4π √(ρh/D)` at every frequency, and the mean
//! of `g_k²` over the plate is `1/M`: Skudrzyk's mean-value theorem, *J.
//! Acoust. Soc. Am.* 67, 1980). Summed as that continuum from the cut-off
//! `ω_c`, the modes left out answer a unit impulse with
//!
//! `h(t) = G ∫_{ω_c}^∞ sin(ωt)/ω dω = G (π/2 − Si(ω_c t))`,
//!
//! whose integral over time is `G/ω_c`: the residual compliance `R` itself,
//! so `G = R ω_c` and the static limit is kept exactly. Its Laplace
//! transform `(G/s) arctan(s/ω_c) = R − R s²/(3ω_c²) + …` is the static
//! correction and its second-order term for slow loads, but is bounded at
//! the onset of a Hertz contact (where `F̈ ∝ t^{-1/2}` makes the
//! second-order term singular): there the modes left out move as a
//! dashpot of mobility `G π/2`, which for a plate is the infinite plate's
//! driving-point mobility `1/(8√(Dρh))` (Cremer, Heckl & Petersson,
//! *Structure-Borne Sound*; the mobility of Zener's plate theory of
//! impact). Unlike
//! one pseudo-mode matching `R` and the second-order term, which rings at
//! its own frequency, the continuum's response decays (`cos(ω_c t)/(ω_c t)`),
//! as a dense set of modes dephases.
//!
//! The cut-off is where the next mode is expected, half the basis's mean
//! spacing above its highest mode (the midpoint rule turning the sum over
//! modes into the integral), so the model has no free number. It is the
//! limit of the modes left out where their spectrum at the contact is
//! flat (tested in `hertz.rs` against 4000 such modes); a real body's is
//! flat only on average (a tile struck at its centre drives one mode in
//! four), and how close it comes there is measured in docs/fracture.md.

use std::f64::consts::{FRAC_PI_2, PI};

/// `Si(x) = ∫₀ˣ sin t / t dt`'s complement `π/2 − Si(x)` for `x ≥ 0`:
/// the power series below 2, and above it `−Im E₁(ix)` from the continued
/// fraction `E₁(z) = e^{−z} / (z + 1 − 1²/(z + 3 − 2²/(z + 5 − …)))`
/// (the even part of Abramowitz & Stegun 5.1.22, evaluated by Lentz's
/// method), which keeps full precision where `Si` is near `π/2`.
pub(super) fn sine_integral_complement(x: f64) -> f64 {
    if x < 2.0 {
        // Si(x) = Σ (−1)^k x^{2k+1} / ((2k+1)(2k+1)!), terms falling fast.
        let (mut term, mut sum) = (x, x);
        for k in 1..30 {
            let (a, b) = ((2 * k) as f64, (2 * k + 1) as f64);
            term *= -x * x / (a * b);
            let next = term / b;
            sum += next;
            if next.abs() < 1e-17 * sum.abs() {
                break;
            }
        }
        return FRAC_PI_2 - sum;
    }
    // Lentz's method on E₁(ix) e^{ix} = 1/(b₁ + a₂/(b₂ + a₃/(b₃ + …))),
    // b_k = ix + 2k − 1, a_k = −(k − 1)², in complex pairs (re, im).
    let tiny = 1e-300;
    let div = |(a, b): (f64, f64), (c, d): (f64, f64)| {
        let n = c * c + d * d;
        ((a * c + b * d) / n, (b * c - a * d) / n)
    };
    let mul = |(a, b): (f64, f64), (c, d): (f64, f64)| (a * c - b * d, a * d + b * c);
    let mut b = (1.0, x);
    let mut c = (1.0 / tiny, 0.0);
    let mut d = div((1.0, 0.0), b);
    let mut h = d;
    for k in 2..200 {
        let a = -(((k - 1) * (k - 1)) as f64);
        b.0 += 2.0;
        let denominator = (a * d.0 + b.0, a * d.1 + b.1);
        d = div((1.0, 0.0), denominator);
        c = (b.0 + div((a, 0.0), c).0, b.1 + div((a, 0.0), c).1);
        let delta = mul(c, d);
        h = mul(h, delta);
        if (delta.0 - 1.0).abs() + delta.1.abs() < 1e-16 {
            break;
        }
    }
    // E₁(ix) = h e^{−ix}; π/2 − Si(x) = −Im E₁(ix).
    let e1 = mul(h, (x.cos(), -x.sin()));
    -e1.1
}

/// `U(x) = ∫₀ˣ (π/2 − Si(u)) du = x (π/2 − Si(x)) + 1 − cos x`: the
/// fraction of the static deflection the continuum has reached a time
/// `x/ω_c` after a constant unit force starts; 1 as `x → ∞`.
pub(super) fn step_response(x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    x * sine_integral_complement(x) + 1.0 - x.cos()
}

/// How far past a force the kernel is followed, in `ω_c t`, at least:
/// the history ends at the first multiple of π beyond, where the response
/// to a constant force has settled on its static value to `O(1/x²)` (`U(x)
/// − 1 ≈ sin x / x`) and the part left out has no first moment either
/// (`∫_x^∞ ĥ(s) s ds ≈ −sin x / ω_c`), so a force changing slowly is
/// neither scaled nor delayed by the cut.
const FOLLOWED_CUTOFF_RADIANS: f64 = 200.0;

/// Steps of history kept at most, whatever the step (the history then
/// ends at the last multiple of π within them).
const MAX_HISTORY_STEPS: usize = 8192;

/// The continuum's weights on a step grid: the deflection at the middle of
/// step n is `R (instant F_n + Σ_{i≥1} past[i−1] F_{n−i})` for forces held
/// constant over each step. The weights sum to one, so a constant force
/// deflects by `R F` exactly.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct TailWeights {
    /// The weight of the step's own force, `U(ω_c dt/2)`, and the kernel's
    /// weight beyond the history kept.
    pub(super) instant: f64,
    /// `U(ω_c (i+½)dt) − U(ω_c (i−½)dt)` for the force `i` steps before;
    /// the last ends where the history does.
    pub(super) past: Vec<f64>,
}

impl TailWeights {
    /// The weights of a continuum from `cutoff_rad_s` on a grid of
    /// `dt_s`; all on `instant` (the quasi-static correction) for a cut-off
    /// that is not positive and finite, or a step too long for the kernel
    /// to be followed over it.
    pub(super) fn new(cutoff_rad_s: f64, dt_s: f64) -> Self {
        let quasi_static = Self {
            instant: 1.0,
            past: Vec::new(),
        };
        let x = cutoff_rad_s * dt_s;
        if !(x > 0.0 && x.is_finite()) {
            return quasi_static;
        }
        // The history ends at ω_c t = kπ, within MAX_HISTORY_STEPS.
        let wanted = (FOLLOWED_CUTOFF_RADIANS / PI).ceil();
        let affordable = ((MAX_HISTORY_STEPS as f64 + 0.5) * x / PI).floor();
        let end = wanted.min(affordable) * PI;
        // Steps whose lag interval [(i−½)x, (i+½)x) reaches into [0, end).
        let steps = (end / x - 0.5).ceil().max(0.0) as usize;
        if end <= 0.0 || steps == 0 {
            return quasi_static;
        }
        let mut past = Vec::with_capacity(steps);
        let mut before = step_response(0.5 * x);
        for i in 1..=steps {
            let reached = step_response(((i as f64 + 0.5) * x).min(end));
            past.push(reached - before);
            before = reached;
        }
        Self {
            instant: step_response(0.5 * x) + (1.0 - before),
            past,
        }
    }

    /// The cut-off of the continuum above modes of angular frequencies
    /// `omega_rad_s` (ascending or not): half their mean spacing above the
    /// highest, `∞` (no continuum) with no modes.
    pub(super) fn cutoff_rad_s(omega_rad_s: impl Iterator<Item = f64>) -> f64 {
        let (mut count, mut lowest, mut highest) = (0usize, f64::INFINITY, 0.0f64);
        for omega in omega_rad_s.filter(|w| w.is_finite() && *w > 0.0) {
            count += 1;
            lowest = lowest.min(omega);
            highest = highest.max(omega);
        }
        match count {
            0 => f64::INFINITY,
            1 => 1.5 * highest,
            _ => highest + 0.5 * (highest - lowest) / (count - 1) as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sine_integral_matches_its_tabulated_values() {
        // Abramowitz & Stegun Table 5.1 and its asymptotic values.
        for (x, si) in [
            (0.5, 0.493_107_418_043_066_7),
            (1.0, 0.946_083_070_367_183),
            (2.0, 1.605_412_976_802_695),
            (std::f64::consts::PI, 1.851_937_051_982_466),
            (10.0, 1.658_347_594_218_874),
            (100.0, 1.562_225_466_889_056),
        ] {
            let got = FRAC_PI_2 - sine_integral_complement(x);
            assert!((got - si).abs() < 1e-13, "Si({x}) = {got}, not {si}");
        }
        // The series and the continued fraction meet at 2: Si′ = sin x / x.
        let below = sine_integral_complement(2.0 - 1e-7);
        let step = below - sine_integral_complement(2.0);
        assert!((step - 1e-7 * 2.0f64.sin() / 2.0).abs() < 1e-13, "{step}");
        // Far out, π/2 − Si(x) ≈ cos x / x: kept to its relative precision.
        let x = 1e4;
        let far = sine_integral_complement(x);
        let asymptotic = x.cos() / x + x.sin() / (x * x) - 2.0 * x.cos() / x.powi(3);
        assert!(
            (far - asymptotic).abs() < 1e-9 * x.recip(),
            "{far} vs {asymptotic}"
        );
    }

    #[test]
    fn the_step_response_settles_on_the_static_deflection() {
        // U′ = π/2 − Si: a central difference of U against the kernel.
        for x in [0.3, 1.7, 2.5, 9.0] {
            let h = 1e-5;
            let slope = (step_response(x + h) - step_response(x - h)) / (2.0 * h);
            assert!((slope - sine_integral_complement(x)).abs() < 1e-8, "{x}");
        }
        // U(x) − 1 ≈ sin x / x far out; U(0) = 0.
        assert_eq!(step_response(0.0), 0.0);
        for x in [50.0, 400.0, 3000.0] {
            let settled = step_response(x) - 1.0;
            assert!(
                (settled - x.sin() / x).abs() < 2.0 / (x * x),
                "{x}: {settled}"
            );
        }
    }

    #[test]
    fn the_weights_sum_to_one_and_start_as_a_dashpot() {
        for x in [1e-3, 0.03, 0.05, 0.7, 3.0, 11.0] {
            let w = TailWeights::new(x, 1.0);
            let total = w.instant + w.past.iter().sum::<f64>();
            assert!((total - 1.0).abs() < 1e-12, "{x}: {total}");
            // Over the first steps the continuum deflects as a dashpot of
            // mobility G π/2 = R ω_c π/2: U(x) ≈ π x / 2 for small x.
            if x < 0.1 {
                let first = w.past[0];
                assert!(
                    (first / (FRAC_PI_2 * x) - 1.0).abs() < 2.0 * x,
                    "{x}: {first}"
                );
            }
            // Cut at a multiple of π, the kept kernel delays a force that
            // changes slowly by next to nothing (its first moment, in 1/ω_c;
            // the continuum's own is zero: its transform has no s¹ term),
            // where the step resolves the kernel.
            if x < 0.1 && x * MAX_HISTORY_STEPS as f64 > FOLLOWED_CUTOFF_RADIANS + PI {
                let delay: f64 = w
                    .past
                    .iter()
                    .enumerate()
                    .map(|(i, k)| (i + 1) as f64 * x * k)
                    .sum();
                assert!(delay.abs() < 0.01, "{x}: delay {delay} / ω_c");
            }
        }
        let quasi_static = TailWeights::new(f64::INFINITY, 1e-6);
        assert_eq!((quasi_static.instant, quasi_static.past.len()), (1.0, 0));
    }

    #[test]
    fn the_cut_off_lies_half_a_spacing_above_the_highest_mode() {
        let omega = [100.0, 200.0, 300.0, 400.0];
        assert_eq!(TailWeights::cutoff_rad_s(omega.into_iter()), 450.0);
        assert_eq!(TailWeights::cutoff_rad_s([].into_iter()), f64::INFINITY);
    }
}
