//! The scaling interface between the simulation and the device (Glondu
//! 2012 §4.3.2.1, eqs. 4.4–4.7): every value that crosses it goes through
//! [`Scaling::to_device`] / [`Scaling::to_simulation`] (motions) or
//! [`Scaling::wrench_to_device`] / [`Scaling::wrench_to_simulation`].
//!
//! The interface is a change of units (lengths by `s_fact`, masses by
//! `f_fact`, inertias by `tau_fact·s_fact²`), plus a translation that puts
//! the device's origin where the scene wants it. It neither creates nor
//! dissipates energy: a power `P` on the device side is `f_fact·s_fact²·P`
//! (forces) and `tau_fact·s_fact²·P` (torques) on the simulation side.
//!
//! Eq. 4.7 prints `I_simu = I_hapt / (tau_fact·s_fact²)`; with eq. 4.7's
//! torque scaling and eq. 4.5's unscaled angular velocity, `τ = I·α` on
//! both sides needs `I_hapt = I_simu / (tau_fact·s_fact²)`, the inverse.

use crate::config::ScalingFactors;
use nalgebra::{UnitQuaternion, Vector3};

/// A rigid motion: pose and velocities.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Motion {
    /// Position (m).
    pub position_m: Vector3<f64>,
    /// Orientation.
    pub orientation: UnitQuaternion<f64>,
    /// Velocity (m/s).
    pub velocity_m_s: Vector3<f64>,
    /// Angular velocity (rad/s).
    pub angular_velocity_rad_s: Vector3<f64>,
}

impl Default for Motion {
    fn default() -> Self {
        Self {
            position_m: Vector3::zeros(),
            orientation: UnitQuaternion::identity(),
            velocity_m_s: Vector3::zeros(),
            angular_velocity_rad_s: Vector3::zeros(),
        }
    }
}

/// A force and a torque.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Wrench {
    /// Force (N).
    pub force_n: Vector3<f64>,
    /// Torque (N·m).
    pub torque_n_m: Vector3<f64>,
}

impl Wrench {
    /// Power of this wrench on a body moving with `motion` (W).
    pub fn power_w(&self, motion: &Motion) -> f64 {
        self.force_n.dot(&motion.velocity_m_s) + self.torque_n_m.dot(&motion.angular_velocity_rad_s)
    }
}

/// The scaling interface of one scene and device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scaling {
    /// Space, force and torque factors.
    pub factors: ScalingFactors,
    /// The simulation position of the device's origin (m).
    pub origin_m: Vector3<f64>,
}

impl Scaling {
    /// The scaling with these factors, the device's origin at `origin_m` in the scene.
    pub fn new(factors: ScalingFactors, origin_m: Vector3<f64>) -> Self {
        Self { factors, origin_m }
    }

    /// Simulation → device: eqs. 4.4 (lengths, velocities) and 4.5
    /// (orientations and angular velocities unchanged).
    pub fn to_device(&self, m: &Motion) -> Motion {
        let s = self.factors.s_fact;
        Motion {
            position_m: (m.position_m - self.origin_m) / s,
            orientation: m.orientation,
            velocity_m_s: m.velocity_m_s / s,
            angular_velocity_rad_s: m.angular_velocity_rad_s,
        }
    }

    /// Device → simulation: the inverse of [`Scaling::to_device`].
    pub fn to_simulation(&self, m: &Motion) -> Motion {
        let s = self.factors.s_fact;
        Motion {
            position_m: m.position_m * s + self.origin_m,
            orientation: m.orientation,
            velocity_m_s: m.velocity_m_s * s,
            angular_velocity_rad_s: m.angular_velocity_rad_s,
        }
    }

    /// Device → simulation: `f_simu = f_hapt·f_fact·s_fact` (eq. 4.6),
    /// `τ_simu = τ_hapt·tau_fact·s_fact²` (eq. 4.7).
    pub fn wrench_to_simulation(&self, w: &Wrench) -> Wrench {
        Wrench {
            force_n: w.force_n * self.force_factor(),
            torque_n_m: w.torque_n_m * self.torque_factor(),
        }
    }

    /// Simulation → device: the inverse of [`Scaling::wrench_to_simulation`].
    pub fn wrench_to_device(&self, w: &Wrench) -> Wrench {
        Wrench {
            force_n: w.force_n / self.force_factor(),
            torque_n_m: w.torque_n_m / self.torque_factor(),
        }
    }

    /// Simulation newtons per device newton.
    pub fn force_factor(&self) -> f64 {
        self.factors.f_fact * self.factors.s_fact
    }

    /// Simulation N·m per device N·m.
    pub fn torque_factor(&self) -> f64 {
        self.factors.tau_fact * self.factors.s_fact.powi(2)
    }

    /// Simulation N/m per device N/m (a force over a length).
    pub fn stiffness_factor(&self) -> f64 {
        self.factors.f_fact
    }

    /// Simulation N·m/rad per device N·m/rad (a torque over an angle).
    pub fn angular_stiffness_factor(&self) -> f64 {
        self.torque_factor()
    }

    /// Device mass of a simulation mass (eq. 4.6).
    pub fn mass_to_device(&self, mass_kg: f64) -> f64 {
        mass_kg / self.factors.f_fact
    }

    /// Device inertia of a simulation inertia (eq. 4.7, corrected).
    pub fn inertia_to_device(&self, inertia_kg_m2: f64) -> f64 {
        inertia_kg_m2 / self.torque_factor()
    }
}
