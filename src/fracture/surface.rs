//! The implicit crack surface of Glondu 2012 §3.2.1:
//! `s(p) = bump(R⁻¹(p − p₀))` with `bump(q) = q_y − A·noise(f·q_x, f·q_z)`
//! (eqs. 3.3–3.4), opened at `p₀` normal to the direction `d` of maximum
//! principal stress, `R = (d⊥₁ d d⊥₂)` (eqs. 3.5–3.6).

use nalgebra::{Matrix3, Point3, Vector3};
use noise::{Fbm, MultiFractal, NoiseFn, Perlin};

/// One crack's surface; `s < 0` on one side, `s ≥ 0` on the other.
#[derive(Debug, Clone)]
pub struct CrackSurface {
    origin: Point3<f64>,
    /// Rows d⊥₁, d, d⊥₂: this is R⁻¹ = Rᵀ.
    to_local: Matrix3<f64>,
    amplitude_m: f64,
    frequency_per_m: f64,
    /// Where this crack reads the shared noise field (lattice units).
    noise_offset: [f64; 2],
    noise_octaves: usize,
}

/// Most octaves of the crack noise (the `noise` crate's default for `Fbm`).
pub const MAX_NOISE_OCTAVES: usize = 6;

/// One fractal Perlin field per octave count serves every crack; a crack's
/// seed picks its window into it. Building an `Fbm` shuffles a permutation
/// table per octave, which cost more than the rest of a small crack. The
/// first k octaves of every field are the same Perlin sources.
fn noise_field(octaves: usize) -> &'static Fbm<Perlin> {
    static FIELDS: [std::sync::OnceLock<Fbm<Perlin>>; MAX_NOISE_OCTAVES] =
        [const { std::sync::OnceLock::new() }; MAX_NOISE_OCTAVES];
    let octaves = octaves.clamp(1, MAX_NOISE_OCTAVES);
    FIELDS[octaves - 1].get_or_init(|| Fbm::new(0x07e5_5e7a).set_octaves(octaves))
}

/// The octaves of a crack noise of base frequency `frequency_per_m` that a
/// surface sampled every `node_spacing_m` can carry: those whose wavelength
/// is at least twice the spacing (Nyquist), at least one. The surface is
/// only ever evaluated at mesh nodes, and finer octaves would alias into
/// independent jitter of each node's cut position while costing a Perlin
/// evaluation each (an `Fbm` octave is `lacunarity` times the frequency of
/// the one before).
pub fn resolved_octaves(frequency_per_m: f64, node_spacing_m: f64) -> usize {
    let lacunarity = Fbm::<Perlin>::DEFAULT_LACUNARITY;
    let finest = 1.0 / (2.0 * node_spacing_m * frequency_per_m);
    if finest.is_nan() || finest < 1.0 {
        return 1;
    }
    let above_base = (finest.ln() / lacunarity.ln()).floor();
    (above_base as usize + 1).min(MAX_NOISE_OCTAVES)
}

/// The window of `seed` into the noise field: two coordinates in [0, 256)
/// (Perlin's lattice period) from a 64-bit mix of the seed.
fn noise_offset(seed: u32) -> [f64; 2] {
    let mut z = u64::from(seed).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    let unit = |bits: u64| (bits & 0xff_ffff) as f64 / f64::from(1u32 << 24);
    [256.0 * unit(z), 256.0 * unit(z >> 32)]
}

impl CrackSurface {
    /// A surface through `origin` with mean normal `opening_direction`
    /// (normalised here), noise amplitude (m) and spatial frequency (1/m),
    /// and a noise seed.
    pub fn new(
        origin: Point3<f64>,
        opening_direction: Vector3<f64>,
        amplitude_m: f64,
        frequency_per_m: f64,
        seed: u32,
    ) -> Self {
        let d = opening_direction.normalize();
        // Any unit vector not parallel to d: the axis d is least aligned with.
        let axis = Vector3::ith(d.iamin(), 1.0);
        let perp1 = d.cross(&axis).normalize();
        let perp2 = perp1.cross(&d);
        Self {
            origin,
            to_local: Matrix3::from_rows(&[perp1.transpose(), d.transpose(), perp2.transpose()]),
            amplitude_m,
            frequency_per_m,
            noise_offset: noise_offset(seed),
            noise_octaves: MAX_NOISE_OCTAVES,
        }
    }

    /// The same surface with only the noise's first `octaves` octaves (1 to
    /// [`MAX_NOISE_OCTAVES`], the default); see [`resolved_octaves`].
    pub fn with_noise_octaves(self, octaves: usize) -> Self {
        Self {
            noise_octaves: octaves.clamp(1, MAX_NOISE_OCTAVES),
            ..self
        }
    }

    /// The mean normal d.
    pub fn normal(&self) -> Vector3<f64> {
        self.to_local.row(1).transpose()
    }

    /// A point of the crack surface's mean plane (m).
    pub fn origin(&self) -> Point3<f64> {
        self.origin
    }

    /// `s(p)` (metres along d, less the noise offset).
    pub fn value(&self, p: &Point3<f64>) -> f64 {
        self.local_value(&(self.to_local * (p - self.origin)))
    }

    /// `s(p)` where it takes the noise to tell, else the side alone: the
    /// noise field lies in [−1, 1] (each Perlin octave is clamped to it and
    /// `Fbm` divides by the sum of the octaves' weights), so beyond the
    /// amplitude A from the mean plane, `s` has the sign of the distance to
    /// it. Returns `(value, exact)`; an inexact value has `s`'s sign (and
    /// the same `s < 0` test) but not its magnitude.
    pub fn value_or_side(&self, p: &Point3<f64>) -> (f64, bool) {
        let q = self.to_local * (p - self.origin);
        // Rounding of A·noise ≤ A(1 + 2⁻⁵²): a margin keeps the sign exact.
        if q.y.abs() > self.amplitude_m * (1.0 + 1e-9) {
            (q.y, self.amplitude_m == 0.0)
        } else {
            (self.local_value(&q), true)
        }
    }

    /// `s` at local coordinates `q = R⁻¹(p − p₀)` (eqs. 3.3–3.4).
    fn local_value(&self, q: &Vector3<f64>) -> f64 {
        if self.amplitude_m == 0.0 {
            return q.y;
        }
        let [u, v] = self.noise_offset;
        q.y - self.amplitude_m
            * noise_field(self.noise_octaves).get([
                u + self.frequency_per_m * q.x,
                v + self.frequency_per_m * q.z,
            ])
    }
}
