//! The one place where rapier's types and units meet the crate's: glam f32
//! vectors in simulation length units (one unit is `z_fact` metres, Glondu
//! §4.3.2.1) on one side, nalgebra f64 SI values on the other.
//!
//! Masses stay in kg and angles in radians; lengths divide by `z_fact`, so
//! velocities, accelerations and impulses do too, and inertia divides by
//! `z_fact²`.

use nalgebra::{Isometry3, Matrix3, Point3, Quaternion, Translation3, UnitQuaternion, Vector3};
use rapier3d::glamx::{Pose3, Quat, Vec3};

/// Converts between SI (metres) and the simulation's length unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Units {
    /// Metres per simulation length unit.
    pub z_fact: f64,
}

impl Units {
    /// A point or a length-carrying vector (position, velocity, impulse) in
    /// SI, into simulation units.
    pub(super) fn to_sim(self, v: &Vector3<f64>) -> Vec3 {
        let s = 1.0 / self.z_fact;
        Vec3::new((v.x * s) as f32, (v.y * s) as f32, (v.z * s) as f32)
    }

    /// The inverse of [`Self::to_sim`].
    pub(super) fn to_si(self, v: Vec3) -> Vector3<f64> {
        vector(v) * self.z_fact
    }

    pub(super) fn point_to_sim(&self, p: &Point3<f64>) -> Vec3 {
        self.to_sim(&p.coords)
    }

    pub(super) fn point_to_si(&self, v: Vec3) -> Point3<f64> {
        Point3::from(self.to_si(v))
    }

    /// A length in simulation units (m → unit).
    pub(super) fn length_to_sim(&self, length_m: f64) -> f32 {
        (length_m / self.z_fact) as f32
    }

    /// A length in simulation units to metres.
    pub(super) fn length_to_si(&self, length: f32) -> f64 {
        f64::from(length) * self.z_fact
    }

    /// A volume in simulation units (unit³) to m³.
    pub(super) fn volume_to_si(&self, volume: f64) -> f64 {
        volume * self.z_fact.powi(3)
    }

    /// A normal impulse magnitude (kg·unit/s) to N·s.
    pub(super) fn impulse_to_si(&self, impulse: f32) -> f64 {
        self.length_to_si(impulse)
    }

    /// A torque (N·m = kg·m²/s²) into simulation units (kg·unit²/s²).
    pub(super) fn torque_to_sim(&self, torque_n_m: &Vector3<f64>) -> Vec3 {
        glam(&(torque_n_m / (self.z_fact * self.z_fact)))
    }

    /// An energy (kg·unit²/s², e.g. rapier's kinetic energy) to joules.
    pub(super) fn energy_to_si(&self, energy: f32) -> f64 {
        f64::from(energy) * self.z_fact * self.z_fact
    }

    /// An inverse inertia tensor (1/(kg·unit²)) to 1/(kg·m²).
    pub(super) fn inverse_inertia_to_si(
        &self,
        inverse: &rapier3d::parry::utils::SdpMatrix3<f32>,
    ) -> Matrix3<f64> {
        let i = inverse;
        Matrix3::new(
            i.m11, i.m12, i.m13, i.m12, i.m22, i.m23, i.m13, i.m23, i.m33,
        )
        .cast::<f64>()
            / (self.z_fact * self.z_fact)
    }

    /// Inertia (kg·m² → kg·unit²).
    pub(super) fn inertia_to_sim(&self, inertia: &Matrix3<f64>) -> rapier3d::glamx::Mat3 {
        let s = 1.0 / (self.z_fact * self.z_fact);
        let c = |j: usize| {
            Vec3::new(
                (inertia[(0, j)] * s) as f32,
                (inertia[(1, j)] * s) as f32,
                (inertia[(2, j)] * s) as f32,
            )
        };
        rapier3d::glamx::Mat3::from_cols(c(0), c(1), c(2))
    }

    /// A rigid pose with its translation in metres, into simulation units.
    pub(super) fn pose_to_sim(&self, pose: &Isometry3<f64>) -> Pose3 {
        let q = pose.rotation.quaternion();
        Pose3::from_parts(
            self.to_sim(&pose.translation.vector),
            Quat::from_xyzw(q.i as f32, q.j as f32, q.k as f32, q.w as f32),
        )
    }

    /// The inverse of [`Self::pose_to_sim`].
    pub(super) fn pose_to_si(&self, pose: &Pose3) -> Isometry3<f64> {
        let q = pose.rotation;
        Isometry3::from_parts(
            Translation3::from(self.to_si(pose.translation)),
            UnitQuaternion::new_normalize(Quaternion::new(
                f64::from(q.w),
                f64::from(q.x),
                f64::from(q.y),
                f64::from(q.z),
            )),
        )
    }
}

/// A unit-free vector (angular velocity, direction) to f64.
pub(super) fn vector(v: Vec3) -> Vector3<f64> {
    Vector3::new(f64::from(v.x), f64::from(v.y), f64::from(v.z))
}

/// A unit-free vector to glam f32.
pub(super) fn glam(v: &Vector3<f64>) -> Vec3 {
    Vec3::new(v.x as f32, v.y as f32, v.z as f32)
}
