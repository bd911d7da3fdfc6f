//! Strength as materials scientists state it (issue 27 §1): the flexure
//! tests that measure it, simulated against their closed forms, and the
//! Weibull size and slow-crack-growth rate scaling of an event's threshold.

mod common;

use common::{material, rel, threads};
use nalgebra::{Point3, Vector3};
use tessera::config::{Material, WeibullCriterion};
use tessera::fem::ElementOrder;
use tessera::fracture::*;
use tessera::mesh::{tile_mesh, TetMesh};
use tessera::modal::{analyse, EigenSettings};

/// The ring-on-ring test's field under 1 kN.
fn ring_on_ring(glass: &Material, rings_in_load_radius: usize, layers: usize) -> FlexureField {
    RingOnRing::default()
        .simulate(
            glass,
            1000.0,
            rings_in_load_radius,
            layers,
            ElementOrder::Quadratic,
        )
        .unwrap()
}

/// The three-point bending test's field under 100 N.
fn three_point_bending(glass: &Material, cells_in_span: usize, cells: usize) -> FlexureField {
    ThreePointBending::default()
        .simulate(
            glass,
            100.0,
            cells_in_span,
            cells,
            cells,
            ElementOrder::Quadratic,
        )
        .unwrap()
}

fn peak(field: &FlexureField) -> f64 {
    field.principal_pa().into_iter().fold(0.0, f64::max)
}

#[test]
fn a_ring_on_ring_simulation_reproduces_astm_c1499() {
    let glass = material("soda-lime-glass");
    let nu = glass.poisson_ratio;
    let test = RingOnRing::default();
    let closed = test.closed_form_stress_pa(1000.0, nu);
    // Plate theory's field is C1499's equibiaxial stress inside the load
    // ring (the closed forms agree with each other).
    for r in [0.0, 0.004, 0.0099] {
        let [radial, hoop] = test.plate_theory_stresses_pa(1000.0, nu, r);
        assert!(rel(radial, closed) < 1e-9 && rel(hoop, closed) < 1e-9);
    }
    for (rings, layers, tolerance) in [(4, 2, 0.01), (8, 4, 0.005)] {
        let field = ring_on_ring(&glass, rings, layers);
        // Node 0 is the disc's centre on its tensile face.
        assert!(field.point_position(0).coords.norm() < 1e-12);
        let centre = field.point_stress(0);
        assert!(
            rel(centre[0], closed) < tolerance && rel(centre[1], closed) < tolerance,
            "{rings} rings: centre {:.4e}, {:.4e} Pa against C1499's {closed:.4e}",
            centre[0],
            centre[1]
        );
        // Equibiaxial and uniform across the inner disc (away from the
        // load ring, where the 3D field departs from thin plates).
        let principal = field.principal_pa();
        for (p, &sigma1) in principal.iter().enumerate() {
            let at = field.point_position(p);
            if at.z.abs() < 1e-12 && at.coords.xy().norm() < 0.6 * 0.01 {
                assert!(
                    rel(sigma1, closed) < 2.0 * tolerance,
                    "{rings} rings: σ₁ {sigma1:.4e} at {at}"
                );
            }
        }
    }
}

#[test]
fn a_three_point_bending_simulation_reproduces_beam_theory() {
    let glass = material("soda-lime-glass");
    let test = ThreePointBending::default();
    let closed = test.closed_form_stress_pa(100.0);
    for (cells_in_span, cells) in [(16, 4), (32, 6)] {
        let field = three_point_bending(&glass, cells_in_span, cells);
        let principal = field.principal_pa();
        let (at, &largest) = principal
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap();
        // Beam theory's peak, lowered a little by the load's wedging
        // (the 3D field under a line load; ASTM C1161 §X1).
        assert!(
            largest < closed && rel(largest, closed) < 0.02,
            "{cells_in_span} cells: peak {largest:.4e} against 3FL/(2bh²) = {closed:.4e}"
        );
        // At mid-span on the tensile face.
        let position = field.point_position(at);
        assert!(position.z.abs() < 1e-12);
        assert!((position.x - 0.0225).abs() < 1e-9, "{position}");
    }
}

/// The Weibull integral `∫σ₁^m dS = S_eff σ_max^m` of a simulated field
/// against the closed form's: equal when the simulation reproduces the
/// field (its S_eff and σ_max each differ by the 3D field's departures
/// from the thin-plate and beam fields near the loads, not their product).
/// Under both criteria: the bar's field is uniaxial, so independent action
/// has the same closed forms there; the disc's is biaxial inside the load
/// ring, where it counts both stresses.
#[test]
fn simulated_effective_sizes_reproduce_the_closed_forms() {
    let glass = material("soda-lime-glass");
    let nu = glass.poisson_ratio;
    let (ror, tpb) = (RingOnRing::default(), ThreePointBending::default());
    let ror_field = ring_on_ring(&glass, 8, 4);
    let tpb_field = three_point_bending(&glass, 32, 6);
    let ror_ratio = peak(&ror_field) / ror.closed_form_stress_pa(1000.0, nu);
    let tpb_ratio = peak(&tpb_field) / tpb.closed_form_stress_pa(100.0);
    for criterion in [
        WeibullCriterion::MaximumPrincipal,
        WeibullCriterion::IndependentAction,
        WeibullCriterion::BatdorfNormalStress,
    ] {
        for m in [5.0, 10.0, 20.0] {
            let size = |field: &FlexureField, flaws| field.effective_size(flaws, m, criterion);
            let cases = [
                (
                    "ring-on-ring area",
                    size(&ror_field, FlawPopulation::Surface) * ror_ratio.powf(m),
                    ror.plate_theory_effective_area_m2(nu, m, criterion),
                ),
                (
                    "three-point area",
                    size(&tpb_field, FlawPopulation::Surface) * tpb_ratio.powf(m),
                    tpb.closed_form_effective_area_m2(m),
                ),
                (
                    "three-point volume",
                    size(&tpb_field, FlawPopulation::Volume) * tpb_ratio.powf(m),
                    tpb.closed_form_effective_volume_m3(m),
                ),
            ];
            for (what, simulated, closed) in cases {
                assert!(
                    rel(simulated, closed) < 0.06,
                    "{criterion:?}, m = {m}, {what}: {simulated:.4e} against {closed:.4e}"
                );
            }
        }
    }
    // Inside the load ring σ_r = σ_θ: independent action counts that
    // area twice, so the disc's size grows by at least the load ring's
    // area and at most doubles.
    let m = 10.0;
    let [maximum, independent] = [
        WeibullCriterion::MaximumPrincipal,
        WeibullCriterion::IndependentAction,
    ]
    .map(|c| ror.plate_theory_effective_area_m2(nu, m, c));
    let load_ring_area = std::f64::consts::PI * (ror.load_diameter_m / 2.0).powi(2);
    assert!(
        independent >= maximum + 0.99 * load_ring_area && independent <= 2.0 * maximum,
        "{independent:.4e} against {maximum:.4e} (load ring {load_ring_area:.4e})"
    );
    // Batdorf's flaws count an equibiaxial area (2m)!!/(2m−1)!! times.
    let batdorf = ror.plate_theory_effective_area_m2(nu, m, WeibullCriterion::BatdorfNormalStress);
    let factor: f64 = (1..=10)
        .map(|k| (2 * k) as f64 / (2 * k - 1) as f64)
        .product();
    assert!(
        batdorf >= maximum + 0.99 * (factor - 1.0) * load_ring_area && batdorf <= factor * maximum,
        "{batdorf:.4e} against {maximum:.4e} (load ring {load_ring_area:.4e}, factor {factor:.3})"
    );
}

/// One material in both tests: the strength each reports (its closed-form
/// stress at the load that reaches the simulated field's Weibull threshold)
/// differs by the closed forms' area ratio, `(A_3pt / A_ror)^(1/m)`.
#[test]
fn ring_on_ring_and_three_point_strengths_differ_by_the_weibull_area_ratio() {
    let mut glass = material("soda-lime-glass");
    let nu = glass.poisson_ratio;
    let m = 10.0;
    glass.weibull_modulus = Some(m);
    glass.weibull_reference_area_m2 = Some(1e-4);
    let (ror, tpb) = (RingOnRing::default(), ThreePointBending::default());
    let (disc, bar) = (
        ring_on_ring(&glass, 8, 4),
        three_point_bending(&glass, 32, 6),
    );
    for criterion in [
        WeibullCriterion::MaximumPrincipal,
        WeibullCriterion::IndependentAction,
        WeibullCriterion::BatdorfNormalStress,
    ] {
        glass.weibull_criterion = Some(criterion);
        let strength = Strength::of(&glass);
        let reported = |field: &FlexureField, closed_per_n: f64| {
            let area = field.effective_size(FlawPopulation::Surface, m, criterion);
            let failure_n = strength.threshold_pa(area, None) / (peak(field) / 1.0);
            failure_n * closed_per_n
        };
        let ror_strength = reported(&disc, ror.closed_form_stress_pa(1.0, nu) * 1000.0);
        let tpb_strength = reported(&bar, tpb.closed_form_stress_pa(1.0) * 100.0);
        let expected = (tpb.closed_form_effective_area_m2(m)
            / ror.plate_theory_effective_area_m2(nu, m, criterion))
        .powf(1.0 / m);
        // The biaxial disc tests far more area than the bar: a fifth
        // weaker.
        assert!(expected < 0.8);
        let ratio = ror_strength / tpb_strength;
        assert!(
            rel(ratio, expected) < 0.01,
            "{criterion:?}: ring-on-ring / three-point strength {ratio:.4} \
             against the area ratio's {expected:.4}"
        );
    }
}

fn tile() -> TetMesh {
    tile_mesh(0.15, 0.006, 20, 2, None).unwrap()
}

/// `material` struck at the tile's centre by the steel ball with `impulse`.
fn strike(mesh: &TetMesh, material: &Material, impulse: f64) -> ImpactOutcome {
    strike_body(mesh, material, impulse, true).0
}

/// As [`strike`], with the body struck, with or without the exact peak
/// stress (the world's checks go without).
fn strike_body(
    mesh: &TetMesh,
    material: &Material,
    impulse: f64,
    exact_peak_stress: bool,
) -> (ImpactOutcome, BreakableBody) {
    let (basis, _) = analyse(
        mesh,
        material,
        &EigenSettings::new(40),
        None,
        threads(),
        &|_| {},
    )
    .unwrap();
    let mut body = BreakableBody::new(mesh.clone(), material.clone(), basis, 1).unwrap();
    let contact = [ContactPoint {
        point_m: Point3::new(0.0, 0.0, 0.006),
        normal: -Vector3::z(),
        impulse_n_s: impulse,
        relative_speed_m_s: impulse / 0.11,
        impactor: Impactor::steel_ball(),
        face: None,
        gap_m: 0.0,
    }];
    let settings = FractureSettings {
        exact_peak_stress,
        ..FractureSettings::default()
    };
    let outcome = body.impact(&contact, &settings, threads(), &mut Counters::default());
    (outcome, body)
}

/// The tile's material, with R_c the strength of a test of 4 cm² at
/// 2 MPa/s.
fn weibull_tile() -> Material {
    let mut tile = material("ceramic-tile");
    tile.weibull_modulus = Some(10.0);
    tile.weibull_reference_area_m2 = Some(4e-4);
    tile
}

#[test]
fn a_contact_peak_on_a_small_area_is_held_to_a_higher_threshold() {
    let mesh = tile();
    let plain = material("ceramic-tile");
    let weibull = weibull_tile();
    let r_c = plain.rankine_threshold_pa;
    // Beyond R_c point-wise: the plain material cracks.
    let point_wise = strike(&mesh, &plain, 0.3);
    assert!(point_wise.peak_stress_pa > 1.05 * r_c);
    assert!(!point_wise.cracks.is_empty());
    assert_eq!(point_wise.strength.threshold_pa, r_c);
    // The same field loads a small area, far below the reference test's:
    // its threshold is above the peak and nothing breaks.
    let (scaled, body) = strike_body(&mesh, &weibull, 0.3, true);
    let s = scaled.strength;
    // The viewer's stress view reads the stress over this event's threshold.
    let largest_ratio = body
        .last_impact_stress()
        .unwrap()
        .element_ratios()
        .into_iter()
        .flatten()
        .fold(0.0f32, f32::max);
    assert!(
        rel(
            f64::from(largest_ratio),
            scaled.peak_stress_pa / s.threshold_pa
        ) < 1e-5
    );
    assert!(s.effective_size > 0.0 && s.effective_size < 1e-4);
    let expected = r_c * (4e-4 / s.effective_size).powf(0.1);
    assert!(rel(s.threshold_pa, expected) < 1e-12);
    assert!(s.threshold_pa > scaled.peak_stress_pa);
    assert!(scaled.cracks.is_empty());
    assert_eq!(s.stress_rate_pa_s, 0.0, "no rate effect without n");
}

#[test]
fn a_faster_load_gives_a_higher_strength_by_slow_crack_growth() {
    let mesh = tile();
    let mut glassy = material("ceramic-tile");
    glassy.slow_crack_growth_exponent = Some(20.0);
    glassy.reference_stress_rate_pa_s = Some(2e6);
    let r_c = glassy.rankine_threshold_pa;
    let slow = strike(&mesh, &glassy, 0.2).strength;
    let fast = strike(&mesh, &glassy, 2.0).strength;
    assert!(fast.stress_rate_pa_s > 5.0 * slow.stress_rate_pa_s);
    for s in [slow, fast] {
        // Impacts load far faster than a strength test: stronger.
        assert!(s.stress_rate_pa_s > 1e9);
        let expected = r_c * (s.stress_rate_pa_s / 2e6).powf(1.0 / 21.0);
        assert!(rel(s.threshold_pa, expected) < 1e-12);
        assert_eq!(s.effective_size, 0.0, "no size effect without m");
    }
    assert!(fast.threshold_pa > slow.threshold_pa);
    let ratio = fast.threshold_pa / slow.threshold_pa;
    let law = (fast.stress_rate_pa_s / slow.stress_rate_pa_s).powf(1.0 / 21.0);
    assert!(rel(ratio, law) < 1e-12);
}

/// The world screens without the exact peak: against the lowest threshold
/// the event could have, then its own. The same threshold and cracks.
#[test]
fn the_scaled_threshold_does_not_need_the_exact_peak() {
    let mesh = tile();
    let mut tile = weibull_tile();
    tile.slow_crack_growth_exponent = Some(20.0);
    tile.reference_stress_rate_pa_s = Some(2e6);
    for impulse in [0.3, 2.0] {
        let (exact, exact_body) = strike_body(&mesh, &tile, impulse, true);
        let (world, world_body) = strike_body(&mesh, &tile, impulse, false);
        assert_eq!(exact.cracks.len(), world.cracks.len(), "{impulse} N·s");
        let volumes = |b: &BreakableBody| {
            b.fragments(threads())
                .iter()
                .map(|f| f.volume_m3.to_bits())
                .collect::<Vec<_>>()
        };
        assert_eq!(volumes(&exact_body), volumes(&world_body));
        if exact.cracks.is_empty() {
            // Nothing broke: without the exact peak the threshold reported
            // is at most the event's.
            assert!(world.strength.threshold_pa <= exact.strength.threshold_pa);
        } else {
            assert_eq!(world.strength, exact.strength);
            assert_eq!(world.peak_stress_pa, exact.peak_stress_pa);
        }
    }
}
