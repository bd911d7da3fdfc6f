//! Brittle materials (`configs/materials.toml`).

use super::ConfigError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the built-in library comes from (it is compiled into the binary).
pub const BUILTIN_MATERIALS_PATH: &str = "configs/materials.toml";
const BUILTIN_MATERIALS: &str = include_str!("../../configs/materials.toml");

/// A brittle material: elasticity, Rayleigh damping, fracture parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Material {
    /// One line about the material and where its values come from.
    #[serde(default)]
    pub description: String,
    /// Density ρ (kg/m³).
    pub density_kg_m3: f64,
    /// Young's modulus E (Pa).
    pub youngs_modulus_pa: f64,
    /// Poisson's ratio ν.
    pub poisson_ratio: f64,
    /// Rayleigh coefficient on K (Glondu's α; seconds): D = this·K + `damping_mass_per_s`·M.
    pub damping_stiffness_s: f64,
    /// Rayleigh coefficient on M (Glondu's β; 1/s).
    pub damping_mass_per_s: f64,
    /// G_c, energy per crack area (J/m²).
    pub fracture_toughness_j_m2: f64,
    /// R_c, the Rankine threshold on the maximum principal stress (Pa).
    pub rankine_threshold_pa: f64,
    /// Weak points per unit volume (Glondu §3.3.5; 1/m³).
    pub weak_point_density_per_m3: f64,
    /// Amplitude of the crack-surface noise (m).
    pub crack_noise_amplitude_m: f64,
    /// Spatial frequency of the crack-surface noise's first octave (1/m).
    pub crack_noise_frequency_per_m: f64,
    /// The Weibull modulus m of the strength's distribution (ASTM C1239).
    /// With it, `rankine_threshold_pa` is the characteristic strength of
    /// the reference test whose effective area
    /// (`weibull_reference_area_m2`, surface flaws) or volume
    /// (`weibull_reference_volume_m3`, volume flaws) is given, and each
    /// event's threshold is scaled to its own effective size
    /// ([`crate::fracture::Strength`]). Without it, one threshold for all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weibull_modulus: Option<f64>,
    /// Effective area of the test that measured R_c (m²), for surface flaws.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weibull_reference_area_m2: Option<f64>,
    /// Effective volume of the test that measured R_c (m³), for volume flaws.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weibull_reference_volume_m3: Option<f64>,
    /// How a multiaxial stress loads the flaws in the Weibull integral
    /// (default `maximum-principal`). The reference size must be the
    /// reference test's under the same criterion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weibull_criterion: Option<WeibullCriterion>,
    /// The slow-crack-growth exponent n (crack speed ∝ K_I^n; glass and
    /// ceramics in air, ASTM C1368). With it, the threshold grows with the
    /// event's stress rate as `(σ̇ / reference_stress_rate_pa_s)^(1/(n+1))`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_crack_growth_exponent: Option<f64>,
    /// The stress rate of the test that measured R_c (Pa/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_stress_rate_pa_s: Option<f64>,
}

/// How a multiaxial stress loads a material's flaws in its weakest-link
/// (Weibull) integral.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WeibullCriterion {
    /// Only the largest principal stress σ₁ loads the flaws: the
    /// integrand is `(σ₁/σ_max)^m`, Rankine's criterion in weakest-link
    /// form.
    #[default]
    MaximumPrincipal,
    /// The principle of independent action (Barnett et al. 1967;
    /// Freudenthal 1968), the multiaxial form ASTM C1683 gives its
    /// ring-on-ring sizes in: each tensile principal stress loads the
    /// flaws on its own, the integrand is `Σ (σ_i/σ_max)^m` over
    /// the principal stresses σ_i > 0 (of the surface's plane for surface
    /// flaws). An equibiaxial field loads its area twice.
    IndependentAction,
    /// Batdorf's randomly oriented flaws under the normal-stress criterion
    /// (Batdorf & Crose 1974), normalised to Weibull's uniaxial risk: the
    /// integrand is the mean of `(σ_n/σ_max)^m` over flaw orientations
    /// where the normal stress σ_n on the flaw is tensile, divided by its
    /// uniaxial value (`fracture::batdorf`). An equibiaxial field loads
    /// its area `(2m)!!/(2m−1)!!` times (5.7 at m = 10).
    BatdorfNormalStress,
}

impl WeibullCriterion {
    /// Its name in material files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::MaximumPrincipal => "maximum-principal",
            Self::IndependentAction => "independent-action",
            Self::BatdorfNormalStress => "batdorf-normal-stress",
        }
    }
}

impl std::str::FromStr for WeibullCriterion {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        [
            Self::MaximumPrincipal,
            Self::IndependentAction,
            Self::BatdorfNormalStress,
        ]
        .into_iter()
        .find(|c| c.name() == name)
        .ok_or_else(|| {
            format!(
                "unknown Weibull criterion `{name}` \
                     (expected `maximum-principal`, `independent-action` \
                     or `batdorf-normal-stress`)"
            )
        })
    }
}

impl Material {
    /// Checks the physical ranges; `entry` and `path` name the material in errors.
    pub fn validate(&self, path: &Path, entry: &str) -> Result<(), ConfigError> {
        let invalid = |field: &'static str, message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            entry: entry.to_string(),
            field,
            message,
        };
        // Ranges wide enough for any solid (aerogels to osmium, elastomers
        // to diamond), narrow enough that the modal analysis and the crack
        // noise stay within f64: a value outside is a typo or a unit slip.
        let fields: [(&'static str, f64, f64, f64); 9] = [
            ("density_kg_m3", self.density_kg_m3, 1.0, 1e5),
            ("youngs_modulus_pa", self.youngs_modulus_pa, 1e3, 1e13),
            ("damping_stiffness_s", self.damping_stiffness_s, 0.0, 1.0),
            ("damping_mass_per_s", self.damping_mass_per_s, 0.0, 1e6),
            (
                "fracture_toughness_j_m2",
                self.fracture_toughness_j_m2,
                1e-6,
                1e7,
            ),
            ("rankine_threshold_pa", self.rankine_threshold_pa, 1.0, 1e11),
            // One weak point per mm³ at most: finer than any mesh here
            // resolves, and within memory for bodies of a litre.
            (
                "weak_point_density_per_m3",
                self.weak_point_density_per_m3,
                0.0,
                1e9,
            ),
            (
                "crack_noise_amplitude_m",
                self.crack_noise_amplitude_m,
                0.0,
                1.0,
            ),
            // Wavelengths down to 1 µm; the body keeps only the octaves its
            // mesh resolves.
            (
                "crack_noise_frequency_per_m",
                self.crack_noise_frequency_per_m,
                0.0,
                1e6,
            ),
        ];
        for (field, value, low, high) in fields {
            let value_text = crate::limits::readable(value);
            if !value.is_finite() {
                return Err(invalid(
                    field,
                    format!("{value_text} is not a finite number"),
                ));
            }
            if !(low..=high).contains(&value) {
                return Err(invalid(
                    field,
                    format!(
                        "{value_text} is outside the range {} to {}",
                        crate::limits::readable(low),
                        crate::limits::readable(high)
                    ),
                ));
            }
        }
        self.validate_strength_scaling(&invalid)?;
        if !(0.0..0.5).contains(&self.poisson_ratio) {
            return Err(invalid(
                "poisson_ratio",
                format!("{} must be in [0, 0.5)", self.poisson_ratio),
            ));
        }
        Ok(())
    }

    /// The Weibull and slow-crack-growth fields: each in its range, and
    /// each given with the reference conditions it needs.
    fn validate_strength_scaling(
        &self,
        invalid: &dyn Fn(&'static str, String) -> ConfigError,
    ) -> Result<(), ConfigError> {
        // Moduli of brittle solids are 2 (chalk, concrete) to 50 (fibres);
        // n is 10 to 200 (glass 16-20, alumina 30-50); a bound far outside
        // is a typo, and keeps the scaling's powers within f64.
        let fields: [(&'static str, Option<f64>, f64, f64); 5] = [
            ("weibull_modulus", self.weibull_modulus, 1.0, 100.0),
            (
                "weibull_reference_area_m2",
                self.weibull_reference_area_m2,
                1e-12,
                1e4,
            ),
            (
                "weibull_reference_volume_m3",
                self.weibull_reference_volume_m3,
                1e-18,
                1e3,
            ),
            (
                "slow_crack_growth_exponent",
                self.slow_crack_growth_exponent,
                1.0,
                1000.0,
            ),
            (
                "reference_stress_rate_pa_s",
                self.reference_stress_rate_pa_s,
                1e-6,
                1e18,
            ),
        ];
        for (field, value, low, high) in fields {
            let Some(value) = value else { continue };
            if !(value.is_finite() && (low..=high).contains(&value)) {
                return Err(invalid(
                    field,
                    format!(
                        "{} is outside the range {} to {}",
                        crate::limits::readable(value),
                        crate::limits::readable(low),
                        crate::limits::readable(high)
                    ),
                ));
            }
        }
        let references = [
            self.weibull_reference_area_m2,
            self.weibull_reference_volume_m3,
        ];
        let given = references.iter().flatten().count();
        match (self.weibull_modulus, given) {
            (Some(_), 1) | (None, 0) => {}
            (Some(_), 0) => {
                return Err(invalid(
                    "weibull_modulus",
                    "needs the reference test's effective size: \
                     weibull_reference_area_m2 (surface flaws) or \
                     weibull_reference_volume_m3 (volume flaws)"
                        .into(),
                ))
            }
            (Some(_), _) => {
                return Err(invalid(
                    "weibull_reference_volume_m3",
                    "give weibull_reference_area_m2 (surface flaws) or \
                     weibull_reference_volume_m3 (volume flaws), not both"
                        .into(),
                ))
            }
            (None, _) => {
                let field = if self.weibull_reference_area_m2.is_some() {
                    "weibull_reference_area_m2"
                } else {
                    "weibull_reference_volume_m3"
                };
                return Err(invalid(field, "is used only with weibull_modulus".into()));
            }
        }
        if self.weibull_criterion.is_some() && self.weibull_modulus.is_none() {
            return Err(invalid(
                "weibull_criterion",
                "is used only with weibull_modulus".into(),
            ));
        }
        match (
            self.slow_crack_growth_exponent,
            self.reference_stress_rate_pa_s,
        ) {
            (Some(_), Some(_)) | (None, None) => Ok(()),
            (Some(_), None) => Err(invalid(
                "slow_crack_growth_exponent",
                "needs reference_stress_rate_pa_s, the stress rate of the test that measured R_c"
                    .into(),
            )),
            (None, Some(_)) => Err(invalid(
                "reference_stress_rate_pa_s",
                "is used only with slow_crack_growth_exponent".into(),
            )),
        }
    }

    /// Lamé parameters (λ, μ) in Pa.
    pub fn lame(&self) -> (f64, f64) {
        let (e, nu) = (self.youngs_modulus_pa, self.poisson_ratio);
        (
            e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)),
            e / (2.0 * (1.0 + nu)),
        )
    }

    /// A stable hash of every parameter that changes K, M or damping, for caches.
    pub fn elastic_hash(&self) -> u64 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        for v in [
            self.density_kg_m3,
            self.youngs_modulus_pa,
            self.poisson_ratio,
        ] {
            h.update(&v.to_le_bytes());
        }
        h.digest()
    }
}

/// Materials by name, as read from one TOML file.
#[derive(Debug, Clone)]
pub struct MaterialLibrary {
    path: PathBuf,
    materials: BTreeMap<String, Material>,
}

impl MaterialLibrary {
    /// Reads and validates a library file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        Self::parse(&super::read_text(path)?, path)
    }

    /// The library shipped in `configs/materials.toml`, compiled in.
    pub fn builtin() -> Self {
        Self::parse(BUILTIN_MATERIALS, Path::new(BUILTIN_MATERIALS_PATH))
            .expect("the built-in material library is valid (checked by tests)")
    }

    /// Parses library text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let materials: BTreeMap<String, Material> =
            toml::from_str(text).map_err(|e| ConfigError::Toml {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        for (name, material) in &materials {
            material.validate(path, name)?;
        }
        Ok(Self {
            path: path.to_path_buf(),
            materials,
        })
    }

    /// The material named `name`; an error naming the library and its materials if there is none.
    pub fn get(&self, name: &str) -> Result<&Material, ConfigError> {
        self.materials
            .get(name)
            .ok_or_else(|| ConfigError::Unknown {
                path: self.path.clone(),
                kind: "material",
                name: name.to_string(),
                known: self.names().collect::<Vec<_>>().join(", "),
            })
    }

    /// Adds or replaces the material `name` (a study's level of a scene
    /// material); it must be valid.
    pub fn insert(&mut self, name: &str, material: Material) -> Result<(), ConfigError> {
        material.validate(&self.path, name)?;
        self.materials.insert(name.to_owned(), material);
        Ok(())
    }

    /// The materials' names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.materials.keys().map(String::as_str)
    }

    /// The file the library was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
