//! The virtual coupling: a 6-DOF spring–damper between the device (scaled
//! into the simulation) and the proxy, in simulation units.
//!
//! Integrated implicitly (backward Euler on the proxy's velocity, as in
//! implicit virtual coupling): the force of the tick is the one that the
//! spring and damper exert at the *end* of the tick, which makes the
//! coupling dissipative for every stiffness. The explicit variant (force
//! from the state at the start of the tick) exists to show what fails: it
//! is unstable, and gives energy back to the hand, above `k·h²/m ≈ 4`.

use super::scaling::{Motion, Scaling, Wrench};
use crate::device::DeviceSpec;
use nalgebra::{Matrix3, Vector3};

/// Spring and damper constants, simulation units.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CouplingGains {
    /// Spring stiffness (force per length, simulation units).
    pub stiffness_n_m: f64,
    /// Damper (force per speed, simulation units).
    pub damping_n_s_m: f64,
    /// Angular spring stiffness (torque per radian).
    pub angular_stiffness_n_m_rad: f64,
    /// Angular damper (torque per angular speed).
    pub angular_damping_n_m_s_rad: f64,
}

impl CouplingGains {
    /// Critically damped gains for a proxy of this mass and (smallest
    /// principal) inertia, as stiff as the device allows at 1 kHz: the
    /// stiffness is the device's maximum unless critical damping,
    /// `c = 2·√(k·m)`, would exceed the device's maximum damping, in which
    /// case the stiffness is lowered to `c_max² / (4·m)`. The device's
    /// limits cross the scaling interface first.
    pub fn auto_tuned(
        spec: &DeviceSpec,
        scaling: &Scaling,
        mass_kg: f64,
        inertia_kg_m2: f64,
    ) -> Self {
        let critical = |k_max: f64, c_max: f64, inertia: f64| {
            let k = k_max.min(c_max * c_max / (4.0 * inertia));
            (k, 2.0 * (k * inertia).sqrt())
        };
        let (k, c) = critical(
            spec.max_stiffness_n_m * scaling.stiffness_factor(),
            spec.max_damping_n_s_m * scaling.stiffness_factor(),
            mass_kg,
        );
        let (k_r, c_r) = critical(
            spec.max_angular_stiffness_n_m_rad * scaling.angular_stiffness_factor(),
            spec.max_angular_damping_n_m_s_rad * scaling.angular_stiffness_factor(),
            inertia_kg_m2,
        );
        Self {
            stiffness_n_m: k,
            damping_n_s_m: c,
            angular_stiffness_n_m_rad: k_r,
            angular_damping_n_m_s_rad: c_r,
        }
    }
}

/// How the coupling force is integrated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Integration {
    /// Backward Euler: passive at any stiffness.
    Implicit,
    /// Forward: for comparison only.
    Explicit,
}

/// The proxy as the coupling sees it, simulation units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProxyState {
    /// Pose and velocities.
    pub motion: Motion,
    /// Mass (simulation units).
    pub mass_kg: f64,
    /// World-frame inertia tensor about the centre of mass.
    pub inertia_kg_m2: Matrix3<f64>,
    /// Other known forces on the proxy over the tick (gravity).
    pub external_force_n: Vector3<f64>,
}

/// The spring–damper and its integration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VirtualCoupling {
    /// Spring and damper constants.
    pub gains: CouplingGains,
    /// How the proxy is integrated with the spring (explicit or implicit).
    pub integration: Integration,
}

impl VirtualCoupling {
    /// The wrench on the proxy for a tick of `dt_s` (the device gets its
    /// opposite). Implicit: with `v⁺ = v + h/m·(F_ext + k(x_d − x − h v⁺)
    /// + c(v_d − v⁺))`, solved for `v⁺`, the force is `k(x_d − x − h v⁺)
    /// + c(v_d − v⁺)`; likewise for the rotation with the inertia tensor.
    pub fn wrench(&self, device: &Motion, proxy: &ProxyState, dt_s: f64) -> Wrench {
        let g = &self.gains;
        let h = dt_s;
        let p = &proxy.motion;
        let offset = device.position_m - p.position_m;
        // Rotation vector taking the proxy's orientation to the device's.
        let angle = (device.orientation * p.orientation.inverse()).scaled_axis();
        match self.integration {
            Integration::Explicit => Wrench {
                force_n: offset * g.stiffness_n_m
                    + (device.velocity_m_s - p.velocity_m_s) * g.damping_n_s_m,
                torque_n_m: angle * g.angular_stiffness_n_m_rad
                    + (device.angular_velocity_rad_s - p.angular_velocity_rad_s)
                        * g.angular_damping_n_m_s_rad,
            },
            Integration::Implicit => {
                let (k, c, m) = (g.stiffness_n_m, g.damping_n_s_m, proxy.mass_kg);
                let v_next = (p.velocity_m_s * m
                    + (proxy.external_force_n + offset * k + device.velocity_m_s * c) * h)
                    / (m + h * c + h * h * k);
                let force_n = (offset - v_next * h) * k + (device.velocity_m_s - v_next) * c;
                let (k_r, c_r) = (g.angular_stiffness_n_m_rad, g.angular_damping_n_m_s_rad);
                let inertia = &proxy.inertia_kg_m2;
                let lhs = inertia + Matrix3::identity() * (h * c_r + h * h * k_r);
                let rhs = inertia * p.angular_velocity_rad_s
                    + (angle * k_r + device.angular_velocity_rad_s * c_r) * h;
                let w_next = lhs
                    .try_inverse()
                    .map_or(p.angular_velocity_rad_s, |inv| inv * rhs);
                let torque_n_m =
                    (angle - w_next * h) * k_r + (device.angular_velocity_rad_s - w_next) * c_r;
                Wrench {
                    force_n,
                    torque_n_m,
                }
            }
        }
    }
}
