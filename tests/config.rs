//! Material library: shipped values and validation errors.

use std::path::Path;
use tessera::config::{ConfigError, MaterialLibrary};

const VALID: &str = r#"
[test-glass]
density_kg_m3 = 2500.0
youngs_modulus_pa = 70.0e9
poisson_ratio = 0.2
damping_stiffness_s = 1.0e-9
damping_mass_per_s = 5.0
fracture_toughness_j_m2 = 8.0
rankine_threshold_pa = 50.0e6
weak_point_density_per_m3 = 1.0e6
crack_noise_amplitude_m = 1.0e-3
crack_noise_frequency_per_m = 50.0
"#;

#[test]
fn shipped_library_has_the_required_materials() {
    let on_disk = MaterialLibrary::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/materials.toml"),
    )
    .unwrap();
    let builtin = MaterialLibrary::builtin();
    assert_eq!(
        on_disk.names().collect::<Vec<_>>(),
        builtin.names().collect::<Vec<_>>()
    );
    for name in [
        "soda-lime-glass",
        "porcelain",
        "ceramic-tile",
        "concrete",
        "glondu-glass",
        "glondu-piggy-bank",
        "glondu-slab",
    ] {
        assert!(builtin.get(name).is_ok(), "{name} missing");
    }
    let tile = builtin.get("ceramic-tile").unwrap();
    assert_eq!(
        (
            tile.density_kg_m3,
            tile.youngs_modulus_pa,
            tile.poisson_ratio,
            tile.rankine_threshold_pa
        ),
        (1738.0, 13.35e9, 0.123, 35.0e6)
    );
    let slab = builtin.get("glondu-slab").unwrap();
    assert_eq!(
        (
            slab.damping_stiffness_s,
            slab.damping_mass_per_s,
            slab.youngs_modulus_pa
        ),
        (1e-10, 5.0, 100e9)
    );
}

fn error_for(replace: &str, with: &str) -> String {
    let text = VALID.replace(replace, with);
    MaterialLibrary::parse(&text, Path::new("lib.toml"))
        .unwrap_err()
        .to_string()
}

#[test]
fn invalid_values_name_file_material_and_field() {
    for (replace, with, field) in [
        (
            "youngs_modulus_pa = 70.0e9",
            "youngs_modulus_pa = 0.0",
            "youngs_modulus_pa",
        ),
        (
            "poisson_ratio = 0.2",
            "poisson_ratio = 0.5",
            "poisson_ratio",
        ),
        (
            "poisson_ratio = 0.2",
            "poisson_ratio = -0.1",
            "poisson_ratio",
        ),
        (
            "density_kg_m3 = 2500.0",
            "density_kg_m3 = -1.0",
            "density_kg_m3",
        ),
        (
            "damping_mass_per_s = 5.0",
            "damping_mass_per_s = -5.0",
            "damping_mass_per_s",
        ),
        (
            "damping_stiffness_s = 1.0e-9",
            "damping_stiffness_s = nan",
            "damping_stiffness_s",
        ),
    ] {
        let err = error_for(replace, with);
        assert!(
            err.contains("lib.toml") && err.contains("[test-glass]") && err.contains(field),
            "{err}"
        );
    }
}

#[test]
fn unknown_and_missing_keys_are_rejected_by_name_with_line() {
    let err = error_for("poisson_ratio = 0.2", "poisson_ratio = 0.2\nposson = 3");
    assert!(
        err.contains("lib.toml") && err.contains("posson") && err.contains("line"),
        "{err}"
    );
    let err = error_for("rankine_threshold_pa = 50.0e6\n", "");
    assert!(err.contains("rankine_threshold_pa"), "{err}");
    let err = error_for("density_kg_m3 = 2500.0", "density_kg_m3 = \"heavy\"");
    assert!(
        err.contains("density_kg_m3") || err.contains("line 3"),
        "{err}"
    );
}

#[test]
fn unknown_material_lists_the_known_ones() {
    let library = MaterialLibrary::parse(VALID, Path::new("lib.toml")).unwrap();
    let err = library.get("glas").unwrap_err();
    assert!(matches!(err, ConfigError::Unknown { .. }));
    assert!(err.to_string().contains("test-glass"), "{err}");
    let missing = MaterialLibrary::load(Path::new("/nonexistent/materials.toml"))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("/nonexistent/materials.toml"), "{missing}");
}

#[test]
fn strength_scaling_fields_come_with_their_reference_conditions() {
    let end = "crack_noise_frequency_per_m = 50.0\n";
    let with = |extra: &str| error_for(end, &format!("{end}{extra}"));
    for (extra, field, says) in [
        ("weibull_modulus = 10.0\n", "weibull_modulus", "effective size"),
        (
            "weibull_modulus = 10.0\nweibull_reference_area_m2 = 1e-4\nweibull_reference_volume_m3 = 1e-8\n",
            "weibull_reference_volume_m3",
            "not both",
        ),
        (
            "weibull_reference_area_m2 = 1e-4\n",
            "weibull_reference_area_m2",
            "only with weibull_modulus",
        ),
        (
            "weibull_modulus = 0.5\nweibull_reference_area_m2 = 1e-4\n",
            "weibull_modulus",
            "outside the range",
        ),
        (
            "weibull_modulus = 10.0\nweibull_reference_area_m2 = -1e-4\n",
            "weibull_reference_area_m2",
            "outside the range",
        ),
        (
            "slow_crack_growth_exponent = 18.0\n",
            "slow_crack_growth_exponent",
            "reference_stress_rate_pa_s",
        ),
        (
            "reference_stress_rate_pa_s = 2e6\n",
            "reference_stress_rate_pa_s",
            "only with slow_crack_growth_exponent",
        ),
        (
            "slow_crack_growth_exponent = inf\nreference_stress_rate_pa_s = 2e6\n",
            "slow_crack_growth_exponent",
            "outside the range",
        ),
        (
            "weibull_criterion = \"independent-action\"\n",
            "weibull_criterion",
            "only with weibull_modulus",
        ),
    ] {
        let err = with(extra);
        assert!(
            err.contains("lib.toml")
                && err.contains("[test-glass]")
                && err.contains(field)
                && err.contains(says),
            "{extra}: {err}"
        );
    }
    // An unknown criterion: the parser names the file, line and value.
    let err = with(
        "weibull_modulus = 10.0\nweibull_reference_area_m2 = 1e-4\nweibull_criterion = \"pia\"\n",
    );
    assert!(
        err.contains("lib.toml")
            && err.contains("weibull_criterion = \"pia\"")
            && err.contains("line ")
            && err.contains(
                "expected one of `maximum-principal`, `independent-action`, \
                 `batdorf-normal-stress`"
            ),
        "{err}"
    );
    let complete = VALID.replace(
        end,
        &format!(
            "{end}weibull_modulus = 10.0\nweibull_reference_volume_m3 = 1e-8\n\
             slow_crack_growth_exponent = 18.0\nreference_stress_rate_pa_s = 2e6\n\
             weibull_criterion = \"batdorf-normal-stress\"\n"
        ),
    );
    let library = MaterialLibrary::parse(&complete, Path::new("lib.toml")).unwrap();
    let glass = library.get("test-glass").unwrap();
    assert_eq!(glass.weibull_modulus, Some(10.0));
    assert_eq!(
        glass.weibull_criterion,
        Some(tessera::config::WeibullCriterion::BatdorfNormalStress)
    );
    assert_eq!(glass.reference_stress_rate_pa_s, Some(2e6));
}
