//! Analytic response of one damped modal coordinate (Glondu 2012 eqs.
//! 2.81–2.83).
//!
//! With Rayleigh damping `D = αK + βM` (α on K, DESIGN.md), mode i obeys
//! `z̈ + c ż + λ z = g` with `c = αλ + β` (eq. 2.81). Its characteristic roots
//! are `ω± = a ± √(a² − λ)` with `a = −c/2` (complex when under-damped). For a
//! force g held constant over an interval the solution is exact:
//! `z = g/λ + e^{at}(u₀ C(t) + (v₀ − a u₀) S(t))`, `u₀ = z₀ − g/λ`, where
//! `C, S` are `cos, sin(ω_d t)/ω_d` (under-damped), `cosh, sinh(κt)/κ`
//! (over-damped) or `1, t` (critical). From rest, an impulse I gives
//! `z = I e^{at} S(t) = I (e^{ω⁺t} − e^{ω⁻t})/(ω⁺ − ω⁻)`: eq. 2.83 as printed
//! has a factor 2 too many (summing both conjugate terms), corrected here.

use serde::{Deserialize, Serialize};

/// The damped dynamics of one mode.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ModeDynamics {
    /// λ = ω₀² (rad²/s²).
    pub eigenvalue: f64,
    /// c = αλ + β (1/s).
    pub damping: f64,
}

/// A modal coordinate and its rate.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ModalState {
    /// Modal coordinate z.
    pub z: f64,
    /// Its rate ż (1/s).
    pub z_dot: f64,
}

impl ModeDynamics {
    /// Mode dynamics from λ and the Rayleigh coefficients (α on K in s, β on M in 1/s).
    pub fn new(eigenvalue: f64, damping_stiffness_s: f64, damping_mass_per_s: f64) -> Self {
        Self {
            eigenvalue,
            damping: damping_stiffness_s * eigenvalue + damping_mass_per_s,
        }
    }

    /// Undamped natural frequency √λ / 2π (Hz).
    pub fn natural_frequency_hz(&self) -> f64 {
        self.eigenvalue.sqrt() / std::f64::consts::TAU
    }

    /// Damping ratio ζ = c / (2√λ).
    pub fn damping_ratio(&self) -> f64 {
        self.damping / (2.0 * self.eigenvalue.sqrt())
    }

    /// `q = λ − c²/4`: the squared damped angular frequency when positive.
    fn discriminant(&self) -> f64 {
        self.eigenvalue - 0.25 * self.damping * self.damping
    }

    /// Whether the mode oscillates (ζ < 1). Glondu §3.3.2–3.3.3 only uses
    /// modes that are not critically damped.
    pub fn is_underdamped(&self) -> bool {
        self.discriminant() > 0.0
    }

    /// Damped angular frequency Im(ω±) = √(λ − c²/4), 0 when not oscillating.
    pub fn damped_angular_frequency(&self) -> f64 {
        self.discriminant().max(0.0).sqrt()
    }

    /// The characteristic roots ω± as (re, im) pairs.
    pub fn roots(&self) -> [(f64, f64); 2] {
        let a = -0.5 * self.damping;
        let q = self.discriminant();
        if q > 0.0 {
            [(a, q.sqrt()), (a, -q.sqrt())]
        } else {
            [(a + (-q).sqrt(), 0.0), (a - (-q).sqrt(), 0.0)]
        }
    }

    /// `(e^{at}C(t), e^{at}S(t))`, computed without overflow or cancellation.
    fn propagators(&self, t: f64) -> (f64, f64) {
        let a = -0.5 * self.damping;
        let q = self.discriminant();
        // Relative size of the discriminant below which the critical formula
        // (C = 1, S = t) is exact to rounding.
        if q.abs() * t * t < 1e-12 {
            let e = (a * t).exp();
            return (e, e * t);
        }
        if q > 0.0 {
            let w = q.sqrt();
            let e = (a * t).exp();
            (e * (w * t).cos(), e * (w * t).sin() / w)
        } else {
            let k = (-q).sqrt();
            let slow = ((a + k) * t).exp();
            let fast = ((a - k) * t).exp();
            // e^{at} sinh(kt)/k = e^{(a−k)t} (e^{2kt} − 1) / 2k
            (
                0.5 * (slow + fast),
                fast * (2.0 * k * t).exp_m1() / (2.0 * k),
            )
        }
    }

    /// State after `duration_s` under the modal force `force` (N·m-ish: g = Wᵀf)
    /// held constant, starting from `state`. Exact for any step length.
    pub fn step(&self, state: ModalState, force: f64, duration_s: f64) -> ModalState {
        let lambda = self.eigenvalue;
        let a = -0.5 * self.damping;
        let equilibrium = force / lambda;
        let u0 = state.z - equilibrium;
        let b = state.z_dot - a * u0;
        let (ec, es) = self.propagators(duration_s);
        let u = u0 * ec + b * es;
        let q = self.discriminant();
        ModalState {
            z: equilibrium + u,
            z_dot: a * u + (-q * u0 * es + b * ec),
        }
    }
}
