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
pub struct Units {
    /// Metres per simulation length unit.
    pub z_fact: f64,
}

impl Units {
    /// A point or a length-carrying vector (position, velocity, impulse) in
    /// SI, into simulation units.
    pub fn to_sim(&self, v: &Vector3<f64>) -> Vec3 {
        let s = 1.0 / self.z_fact;
        Vec3::new((v.x * s) as f32, (v.y * s) as f32, (v.z * s) as f32)
    }

    /// The inverse of [`Self::to_sim`].
    pub fn to_si(&self, v: Vec3) -> Vector3<f64> {
        vector(v) * self.z_fact
    }

    pub fn point_to_sim(&self, p: &Point3<f64>) -> Vec3 {
        self.to_sim(&p.coords)
    }

    pub fn point_to_si(&self, v: Vec3) -> Point3<f64> {
        Point3::from(self.to_si(v))
    }

    /// Inertia (kg·m² → kg·unit²).
    pub fn inertia_to_sim(&self, inertia: &Matrix3<f64>) -> rapier3d::glamx::Mat3 {
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
    pub fn pose_to_sim(&self, pose: &Isometry3<f64>) -> Pose3 {
        let q = pose.rotation.quaternion();
        Pose3::from_parts(
            self.to_sim(&pose.translation.vector),
            Quat::from_xyzw(q.i as f32, q.j as f32, q.k as f32, q.w as f32),
        )
    }

    /// The inverse of [`Self::pose_to_sim`].
    pub fn pose_to_si(&self, pose: &Pose3) -> Isometry3<f64> {
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
pub fn vector(v: Vec3) -> Vector3<f64> {
    Vector3::new(f64::from(v.x), f64::from(v.y), f64::from(v.z))
}

/// A unit-free vector to glam f32.
pub fn glam(v: &Vector3<f64>) -> Vec3 {
    Vec3::new(v.x as f32, v.y as f32, v.z as f32)
}
