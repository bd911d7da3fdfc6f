//! Modal analysis: eigensolver against dense LAPACK-style reference and beam
//! theory, analytic modal response against numerical integration, cache.

mod common;

use common::{material, rel, threads};
use nalgebra::DMatrix;
use tessera::config::Material;
use tessera::fem::{
    constitutive_matrix, crack_plane_stress, ElasticMesh, ElementOrder, TetElement,
};
use tessera::fracture::{EnergyLedger, EnergyTables, StrainEnergy};
use tessera::mesh::{box_mesh, TetMesh};
use tessera::modal::*;

fn solve(mesh: &TetMesh, material: &Material, modes: usize, order: ElementOrder) -> EigenSolution {
    let elastic = ElasticMesh::new(mesh, order);
    let k = elastic.stiffness(material);
    let m = elastic.lumped_mass(material.density_kg_m3);
    lowest_modes(&k, &m, elastic.nodes(), &EigenSettings::new(modes), &|_| {}).unwrap()
}

/// All eigenvalues of (K, diag m) by a dense symmetric eigensolve of M^-½ K M^-½.
/// A 10 × 5 × 1 cm ceramic tile on `cells` and its basis of `modes` modes,
/// analysed afresh (no cache).
fn tile_basis(
    cells: [usize; 3],
    modes: usize,
    order: ElementOrder,
) -> (TetMesh, Material, ModalBasis, ModalReport) {
    let mesh = box_mesh([0.1, 0.05, 0.01], cells, None).unwrap();
    let tile = material("ceramic-tile");
    let mut settings = EigenSettings::new(modes);
    settings.element = order;
    let (basis, report) = analyse(&mesh, &tile, &settings, None, threads(), &|_| {}).unwrap();
    (mesh, tile, basis, report)
}

fn dense_eigenvalues(mesh: &TetMesh, material: &Material, order: ElementOrder) -> Vec<f64> {
    let elastic = ElasticMesh::new(mesh, order);
    let k = elastic.stiffness(material);
    let m = elastic.lumped_mass(material.density_kg_m3);
    let n = m.len();
    let mut dense = DMatrix::<f64>::zeros(n, n);
    let kr = k.as_ref();
    for j in 0..n {
        for (&i, &v) in kr.row_idx_of_col_raw(j).iter().zip(kr.val_of_col(j)) {
            dense[(i, j)] = v / (m[i] * m[j]).sqrt();
        }
    }
    let mut values: Vec<f64> = dense
        .symmetric_eigen()
        .eigenvalues
        .iter()
        .copied()
        .collect();
    values.sort_by(f64::total_cmp);
    values
}

#[test]
fn symmetric_cube_matches_dense_solver_including_repeated_eigenvalues() {
    // A cube with equal cell counts: the Kuhn split is invariant under axis
    // permutations, so the spectrum has exactly repeated eigenvalues.
    for (order, cells) in [(ElementOrder::Linear, 4), (ElementOrder::Quadratic, 2)] {
        cube_against_dense_solver(order, cells);
    }
}

fn cube_against_dense_solver(order: ElementOrder, cells: usize) {
    let mesh = box_mesh([0.05, 0.05, 0.05], [cells; 3], None).unwrap();
    let glass = material("soda-lime-glass");
    let reference = dense_eigenvalues(&mesh, &glass, order);
    let scale = reference.last().copied().unwrap();
    assert!(
        reference[..6].iter().all(|l| l.abs() < 1e-9 * scale),
        "six rigid modes"
    );
    let wanted = 40;
    let elastic = &reference[6..6 + wanted];
    let repeated = elastic
        .windows(2)
        .filter(|w| rel(w[0], w[1]) < 1e-9)
        .count();
    assert!(
        repeated >= 5,
        "the test needs repeated eigenvalues; found {repeated}"
    );

    let solution = solve(&mesh, &glass, wanted, order);
    for (i, (ours, theirs)) in solution.eigenvalues.iter().zip(elastic).enumerate() {
        assert!(
            rel(*ours, *theirs) < 1e-9,
            "{order:?}, mode {i}: {ours} vs {theirs}"
        );
    }
    assert!(solution.residuals.iter().all(|&r| r <= 1e-8));
}

/// On a body of a single cube (24 DOFs linear, 81 quadratic) the Lanczos
/// basis would outgrow the space orthogonal to the rigid modes: any mode
/// count the solver accepts, up to all it allows, gives the dense
/// solver's modes.
#[test]
fn a_one_cell_body_gives_every_mode_count_it_accepts() {
    let mesh = box_mesh([0.1, 0.1, 0.1], [1, 1, 1], None).unwrap();
    let slab = material("glondu-slab");
    for (order, counts) in [
        (ElementOrder::Linear, &[1, 5, 12, 16][..]),
        (ElementOrder::Quadratic, &[1, 5, 20, 40, 60, 73][..]),
    ] {
        let reference = dense_eigenvalues(&mesh, &slab, order);
        for &wanted in counts {
            let solution = solve(&mesh, &slab, wanted, order);
            for (i, (ours, theirs)) in solution.eigenvalues.iter().zip(&reference[6..]).enumerate()
            {
                assert!(
                    rel(*ours, *theirs) < 1e-9,
                    "{order:?}, {wanted} modes, mode {i}: {ours} vs {theirs}"
                );
            }
        }
    }
}

#[test]
fn modes_are_mass_orthonormal_and_free_of_rigid_motion() {
    let mesh = box_mesh(
        [0.2, 0.1, 0.02],
        [10, 5, 2],
        Some(tessera::mesh::Jitter {
            fraction: 0.2,
            seed: 2,
        }),
    )
    .unwrap();
    let tile = material("ceramic-tile");
    let solution = solve(&mesh, &tile, 20, ElementOrder::Quadratic);
    let m = ElasticMesh::new(&mesh, ElementOrder::Quadratic).lumped_mass(tile.density_kg_m3);
    let x = &solution.shapes;
    for a in 0..x.ncols() {
        for b in 0..x.ncols() {
            let dot: f64 = (0..m.len()).map(|i| x[(i, a)] * m[i] * x[(i, b)]).sum();
            let expected = if a == b { 1.0 } else { 0.0 };
            assert!((dot - expected).abs() < 1e-10, "xᵀMx[{a},{b}] = {dot}");
        }
        // Zero linear momentum: Σ m_i x_i = 0 per axis.
        for axis in 0..3 {
            let momentum: f64 = (axis..m.len()).step_by(3).map(|i| m[i] * x[(i, a)]).sum();
            assert!(
                momentum.abs() < 1e-10,
                "mode {a} carries momentum {momentum}"
            );
        }
    }
    assert!(solution.eigenvalues.windows(2).all(|w| w[0] <= w[1]));
}

/// The beam of the issue "Stresses you can trust": 60 × 3 × 2 cm glass,
/// bending about its width. Quadratic tets give f₁ within 1 % of
/// Euler–Bernoulli with one or two layers through the thickness (the
/// linear tet is 54 % and 28 % too stiff there), converging as the mesh
/// is refined (to ~0.4 % below, the shear and rotary inertia
/// Euler–Bernoulli leaves out at L/h = 30).
#[test]
fn quadratic_free_free_beam_is_within_one_percent_of_euler_bernoulli() {
    let glass = material("soda-lime-glass");
    let (length, width, height) = (0.6f64, 0.03f64, 0.02f64);
    let analytic = 4.7300f64.powi(2)
        * (glass.youngs_modulus_pa * height * height / 12.0 / glass.density_kg_m3).sqrt()
        / (std::f64::consts::TAU * length * length);
    let mut first = Vec::new();
    for layers in [1, 2, 4] {
        let mesh = box_mesh([length, width, height], [60, 3, layers], None).unwrap();
        let solution = solve(&mesh, &glass, 4, ElementOrder::Quadratic);
        let f1 = bending_frequencies(&mesh, &solution)[0];
        assert!(
            rel(f1, analytic) < 0.01,
            "{layers} layers: f₁ = {f1:.2} Hz vs Euler–Bernoulli {analytic:.2} Hz"
        );
        first.push(f1);
    }
    assert!(
        (first[2] - first[1]).abs() < (first[1] - first[0]).abs(),
        "f₁ does not converge: {first:?}"
    );
}

/// The completely free square plate (Leissa 1969, *Vibration of Plates*,
/// NASA SP-160, §4.4; ν = 0.3): ω a² √(ρh/D) = 13.468, 19.596, 24.270,
/// 34.801, 34.801 for its first five modes. A 20 × 20 × 0.2 cm plate
/// (a/h = 100, where Kirchhoff's theory holds) of quadratic tets one
/// layer thick.
#[test]
fn quadratic_free_square_plate_has_leissas_frequencies() {
    let mut plate = material("soda-lime-glass");
    plate.poisson_ratio = 0.3;
    let (side, thickness) = (0.2f64, 0.002f64);
    let mesh = box_mesh([side, side, thickness], [16, 16, 1], None).unwrap();
    let solution = solve(&mesh, &plate, 5, ElementOrder::Quadratic);
    let rigidity = plate.youngs_modulus_pa * thickness.powi(3) / (12.0 * (1.0 - 0.09));
    let scale = side * side * (plate.density_kg_m3 * thickness / rigidity).sqrt();
    for (j, leissa) in [13.468, 19.596, 24.270, 34.801, 34.801].iter().enumerate() {
        let parameter = solution.eigenvalues[j].sqrt() * scale;
        assert!(
            rel(parameter, *leissa) < 0.015,
            "mode {j}: {parameter:.3} vs Leissa {leissa}"
        );
    }
}

#[test]
fn free_free_beam_converges_to_euler_bernoulli() {
    // A square 2 × 2 cm glass bar 50 cm long: bending frequencies
    // f_n = (β_n L)² √(EI / ρAL⁴) / 2π with β_n L = 4.7300, 7.8532, 10.9956,
    // each appearing twice (two bending planes).
    let glass = material("soda-lime-glass");
    let (length, side) = (0.5f64, 0.02f64);
    let inertia = side.powi(4) / 12.0;
    let area = side * side;
    let analytic: Vec<f64> = [4.7300f64, 7.8532, 10.9956]
        .iter()
        .map(|b| {
            b * b
                * (glass.youngs_modulus_pa * inertia
                    / (glass.density_kg_m3 * area * length.powi(4)))
                .sqrt()
                / std::f64::consts::TAU
        })
        .collect();
    let mut errors = Vec::new();
    for cells in [[50, 2, 2], [100, 4, 4], [200, 8, 8]] {
        let mesh = box_mesh([length, side, side], cells, None).unwrap();
        let solution = solve(&mesh, &glass, 8, ElementOrder::Linear);
        let bending = bending_frequencies(&mesh, &solution);
        assert!(bending.len() >= 6, "found {} bending modes", bending.len());
        let worst = (0..6)
            .map(|i| rel(bending[i], analytic[i / 2]))
            .fold(0.0, f64::max);
        errors.push(worst);
    }
    assert!(
        errors[0] > errors[1] && errors[1] > errors[2],
        "errors do not decrease: {errors:?}"
    );
    assert!(
        errors[2] < 0.05,
        "finest mesh error {:.3} above 5 %",
        errors[2]
    );
}

/// Frequencies (Hz) of the modes whose displacement is a cross-section
/// translation (bending), not a twist or an axial stretch.
fn bending_frequencies(mesh: &TetMesh, solution: &EigenSolution) -> Vec<f64> {
    let mut stations: Vec<i64> = mesh
        .nodes()
        .iter()
        .map(|p| (p.x * 1e6).round() as i64)
        .collect();
    stations.sort();
    stations.dedup();
    let mut out = Vec::new();
    for (j, &lambda) in solution.eigenvalues.iter().enumerate() {
        let mut sums = std::collections::HashMap::<i64, (f64, f64, usize)>::new();
        let (mut transverse, mut axial) = (0.0, 0.0);
        for (n, p) in mesh.nodes().iter().enumerate() {
            let (ux, uy, uz) = (
                solution.shapes[(3 * n, j)],
                solution.shapes[(3 * n + 1, j)],
                solution.shapes[(3 * n + 2, j)],
            );
            let e = sums.entry((p.x * 1e6).round() as i64).or_default();
            e.0 += uy;
            e.1 += uz;
            e.2 += 1;
            transverse += uy * uy + uz * uz;
            axial += ux * ux;
        }
        let coherent: f64 = sums
            .values()
            .map(|(y, z, c)| (y * y + z * z) / *c as f64)
            .sum();
        if coherent > 0.9 * transverse && transverse > axial {
            out.push(lambda.sqrt() / std::f64::consts::TAU);
        }
    }
    out
}

/// Fine RK4 integration of z̈ + c ż + λ z = g.
fn rk4(
    dynamics: &ModeDynamics,
    state: ModalState,
    force: f64,
    duration: f64,
    steps: usize,
) -> ModalState {
    let h = duration / steps as f64;
    let f = |z: f64, v: f64| (v, force - dynamics.damping * v - dynamics.eigenvalue * z);
    let (z, z_dot) = (0..steps).fold((state.z, state.z_dot), |zv, _| common::rk4_step(f, zv, h));
    ModalState { z, z_dot }
}

#[test]
fn analytic_response_matches_numerical_integration() {
    let omega = std::f64::consts::TAU * 800.0;
    let lambda = omega * omega;
    for zeta in [0.0, 0.02, 0.7, 1.0 - 1e-10, 1.0, 1.0 + 1e-10, 1.5, 20.0] {
        let dynamics = ModeDynamics {
            eigenvalue: lambda,
            damping: 2.0 * zeta * omega,
        };
        let mut exact = ModalState {
            z: 1e-6,
            z_dot: -3e-3,
        };
        let mut numeric = exact;
        // Piecewise-constant force over several intervals of different lengths.
        for (force, duration) in [(50.0, 2e-4), (-20.0, 7e-4), (0.0, 1.3e-3), (5.0, 1e-5)] {
            exact = dynamics.step(exact, force, duration);
            numeric = rk4(&dynamics, numeric, force, duration, 20_000);
            let z_scale = 1e-6f64.max(force.abs() / lambda);
            assert!(
                (exact.z - numeric.z).abs() < 1e-7 * z_scale,
                "ζ = {zeta}: z {} vs {}",
                exact.z,
                numeric.z
            );
            assert!(
                (exact.z_dot - numeric.z_dot).abs() < 1e-7 * z_scale * omega,
                "ζ = {zeta}: ż {} vs {}",
                exact.z_dot,
                numeric.z_dot
            );
        }
    }
}

#[test]
fn impulse_response_has_no_factor_two() {
    // Glondu eq. 2.83 prints c = 2Δt·g/(ω⁺ − ω⁻); the response to an impulse
    // I = g·Δt from rest is I (e^{ω⁺t} − e^{ω⁻t}) / (ω⁺ − ω⁻), half of that.
    let omega = std::f64::consts::TAU * 300.0;
    let dynamics = ModeDynamics {
        eigenvalue: omega * omega,
        damping: 2.0 * 0.05 * omega,
    };
    let impulse = 1e-3;
    // Short against the period (ω·pulse = 2e-4), long enough that the
    // step's equilibrium offset does not swamp the response in rounding.
    let pulse = 1e-7;
    let after_pulse = dynamics.step(ModalState::default(), impulse / pulse, pulse);
    let t = 1.7e-3;
    let response = dynamics.step(after_pulse, 0.0, t);
    let [(a, w), _] = dynamics.roots();
    // (e^{ω⁺t} − e^{ω⁻t}) / (ω⁺ − ω⁻) = e^{at} sin(wt)/w for ω± = a ± iw,
    // timed from the middle of the pulse.
    let since = t + pulse / 2.0;
    let expected = impulse * (a * since).exp() * (w * since).sin() / w;
    assert!(
        rel(response.z, expected) < 1e-6,
        "{} vs {expected}",
        response.z
    );
}

#[test]
fn modal_stress_matches_fem_stress_of_the_mode_superposition() {
    let (mesh, tile, basis, report) = tile_basis([6, 3, 1], 10, ElementOrder::Linear);
    assert!(!report.from_cache);
    // Per element 6 rows; per group of elements its largest norms, centre
    // (6 rows) and spreads: m floats each; and the element–point incidence
    // (one index per element each way, and the offsets).
    let tets = mesh.tet_count();
    assert_eq!(
        basis.stress().bytes(),
        (tets * 6 + tets.div_ceil(GROUP_POINTS) * 8) * 10 * 4 + (3 * tets + 1) * 4
    );
    let z: Vec<f64> = (0..10).map(|j| 1e-3 / (1.0 + j as f64)).collect();
    let c = constitutive_matrix(&tile);
    for t in [0, mesh.tet_count() / 2, mesh.tet_count() - 1] {
        let element = TetElement::new(&mesh.tet_points(t)).unwrap();
        let u = mesh.tets()[t].map(|n| {
            nalgebra::Vector3::from_fn(|axis, _| {
                (0..10)
                    .map(|j| basis.shapes[(3 * n as usize + axis, j)] * z[j])
                    .sum()
            })
        });
        let direct = c * element.strain(&u);
        let modal = basis.point_stress(t, &z);
        for k in 0..6 {
            assert!(
                (modal[k] - direct[k]).abs() <= 1e-6 * direct.norm(),
                "tet {t} component {k}"
            );
        }
    }
    let dynamics_frequencies = basis.frequencies_hz();
    assert!(dynamics_frequencies
        .iter()
        .zip(&basis.eigenvalues)
        .all(|(f, l)| rel(*f, l.sqrt() / std::f64::consts::TAU) < 1e-15));
}

/// A quadratic basis's stress points are the mesh's nodes, holding the
/// stress of the mode superposition recovered there: the volume-weighted
/// mean of the corner stresses of the elements at the node.
#[test]
fn quadratic_modal_stress_is_the_recovered_nodal_stress() {
    let m = 10;
    let (mesh, tile, basis, _) = tile_basis([6, 3, 1], m, ElementOrder::Quadratic);
    let stress = basis.stress();
    assert_eq!(stress.points_per_element(), 4);
    assert_eq!(stress.point_count(), mesh.node_count());
    let elastic = basis.elastic_mesh(&mesh);
    let z: Vec<f64> = (0..m).map(|j| 1e-3 / (1.0 + j as f64)).collect();
    let c = constitutive_matrix(&tile);
    let displacement = |n: u32| {
        nalgebra::Vector3::from_fn(|axis, _| {
            (0..m)
                .map(|j| basis.shapes[(3 * n as usize + axis, j)] * z[j])
                .sum::<f64>()
        })
    };
    let node = mesh.tets()[mesh.tet_count() / 2][2];
    let (mut sum, mut weight) = (nalgebra::Vector6::zeros(), 0.0);
    let mut elements = Vec::new();
    for t in 0..mesh.tet_count() {
        let Some(corner) = mesh.tets()[t].iter().position(|&n| n == node) else {
            continue;
        };
        let element = elastic.element(t);
        let nodes = elastic.element_nodes(t);
        let u = std::array::from_fn(|a| displacement(nodes[a]));
        let mut l = [0.0; 4];
        l[corner] = 1.0;
        sum += element.volume * (c * tessera::fem::quadratic_strain(&element, &l, &u));
        weight += element.volume;
        elements.push(t as u32);
        assert!(stress.element_points(t).contains(&node));
    }
    assert!(elements.len() > 1);
    assert_eq!(stress.point_elements(node as usize), &elements[..]);
    let recovered = sum / weight;
    let modal = basis.point_stress(node as usize, &z);
    for k in 0..6 {
        assert!(
            (modal[k] - recovered[k]).abs() <= 1e-5 * recovered.norm(),
            "component {k}: {} vs {}",
            modal[k],
            recovered[k]
        );
    }
}

#[test]
fn strain_energy_from_node_displacements_matches_the_modal_stresses() {
    let m = 10;
    let (mesh, tile, basis, _) = tile_basis([6, 3, 1], m, ElementOrder::Linear);
    assert_eq!(basis.displacement().bytes(), mesh.node_count() * 3 * m * 4);
    let n = mesh.node_count() / 3;
    let z = [1e-3f32; 10];
    let u = basis.displacement().node_displacement(n, &z);
    for (axis, &value) in u.iter().enumerate() {
        let direct: f64 = (0..m).map(|j| basis.shapes[(3 * n + axis, j)] * 1e-3).sum();
        assert!(
            (f64::from(value) - direct).abs() <= 1e-5 * direct.abs().max(1e-12),
            "{axis}"
        );
    }
    // η = ½ εᵀCε from the nodes against ½ σᵀC⁻¹σ from the element's own
    // modal stresses, at two states visited in turn: a node displacement
    // kept from the other state would show.
    let c = constitutive_matrix(&tile);
    let compliance = c.try_inverse().unwrap();
    let states: [Vec<f32>; 2] = [
        (0..m).map(|j| 1e-3 / (1.0 + j as f32)).collect(),
        (0..m)
            .map(|j| if j % 2 == 0 { -2e-3 } else { 5e-4 })
            .collect(),
    ];
    let tables = EnergyTables::Displacement {
        modes: basis.displacement(),
        residual: None,
    };
    let mut energy = StrainEnergy::new(&mesh, tables, &c);
    let normal = nalgebra::Vector3::new(0.3, -0.4, 0.866).normalize();
    for round in 0..2 {
        for z in &states {
            energy.set_state(z, &[]);
            for t in (round..mesh.tet_count()).step_by(7) {
                let s = nalgebra::Vector6::from(basis.stress().point_stress(t, z).map(f64::from));
                let expected = 0.5 * s.dot(&(compliance * s));
                let whole = energy.density(t);
                assert!(
                    rel(whole, expected) < 1e-4,
                    "tet {t}: {whole} vs {expected}"
                );
                // The part a crack of this normal releases: the density of
                // the traction on its plane.
                let released = crack_plane_stress(&s, &normal);
                let expected = 0.5 * released.dot(&(compliance * released));
                let eta = energy.density_for(t, Some(&normal));
                assert!(
                    (eta - expected).abs() <= 3e-4 * whole,
                    "tet {t}: {eta} vs {expected} of {whole}"
                );
            }
        }
    }
}

/// A quadratic body's η is the mean over the element of ½ σᵀC⁻¹σ, σ its
/// nodes' recovered stresses interpolated linearly: the 4-point rule is
/// exact for that quadratic integrand.
#[test]
fn quadratic_strain_energy_is_the_mean_of_the_recovered_field() {
    let m = 10;
    let (mesh, tile, basis, _) = tile_basis([6, 3, 1], m, ElementOrder::Quadratic);
    let c = constitutive_matrix(&tile);
    let compliance = c.try_inverse().unwrap();
    let z: Vec<f32> = (0..m).map(|j| 1e-3 / (1.0 + j as f32)).collect();
    let tables = EnergyTables::NodeStress {
        modes: basis.stress(),
        residual: None,
    };
    let mut energy = StrainEnergy::new(&mesh, tables, &c);
    energy.set_state(&z, &[]);
    let (a, b) = (0.585_410_196_624_968_5, 0.138_196_601_125_010_5);
    for t in (0..mesh.tet_count()).step_by(5) {
        let sigma = mesh.tets()[t].map(|n| {
            nalgebra::Vector6::from(basis.stress().point_stress(n as usize, &z).map(f64::from))
        });
        let mean: f64 = (0..4)
            .map(|q| {
                let s: nalgebra::Vector6<f64> =
                    (0..4).map(|i| sigma[i] * if i == q { a } else { b }).sum();
                0.5 * s.dot(&(compliance * s)) / 4.0
            })
            .sum();
        let eta = energy.density(t);
        assert!(rel(eta, mean) < 1e-9, "tet {t}: {eta} vs {mean}");
    }
}

/// Densities evaluated on the pool, in tasks and states interleaved, are
/// the ones a single [`StrainEnergy`] gives in turn: ledger totals agree
/// to the bit.
#[test]
fn pending_densities_on_the_pool_equal_the_serial_ones() {
    let m = 8;
    let (mesh, tile, basis, _) = tile_basis([12, 6, 2], m, ElementOrder::Quadratic);
    let c = constitutive_matrix(&tile);
    let states: Vec<Vec<f32>> = (0..3)
        .map(|s| (0..m).map(|j| 1e-3 * ((s * m + j) as f32).sin()).collect())
        .collect();
    // Ledgers long enough for several tasks, over shared elements and states.
    let ledgers_of = |count: usize| -> Vec<(usize, EnergyLedger)> {
        (0..count)
            .map(|l| {
                let mut ledger = EnergyLedger::default();
                for k in 0..700 {
                    let t = (l * 131 + k * 17) % mesh.tet_count();
                    ledger.enter(t, 1e-4 * (1.0 + (k % 5) as f64), None);
                }
                (l % states.len(), ledger)
            })
            .collect()
    };
    let tables = EnergyTables::NodeStress {
        modes: basis.stress(),
        residual: None,
    };
    // The whole densities, and those a crack of a tilted normal releases.
    let tilted = nalgebra::Vector3::new(0.6, 0.0, 0.8);
    for normal in [None, Some(tilted)] {
        let mut serial = ledgers_of(5);
        let mut energy = StrainEnergy::new(&mesh, tables, &c);
        let serial_totals: Vec<u64> = serial
            .iter_mut()
            .map(|(s, ledger)| {
                energy.set_state(&states[*s], &[]);
                ledger
                    .complete(&mut |t| energy.density_for(t, normal.as_ref()))
                    .to_bits()
            })
            .collect();
        let parallel = ledgers_of(5);
        let pending = energy.pending_densities();
        rayon::scope(|scope| {
            for (index, (s, ledger)) in parallel.iter().enumerate() {
                pending.spawn(scope, index, &states[*s], &[], normal, ledger);
            }
        });
        let mut ledgers: Vec<EnergyLedger> = parallel.into_iter().map(|(_, l)| l).collect();
        pending.fill(&mut ledgers);
        let totals: Vec<u64> = ledgers
            .iter()
            .map(|l| l.total_j().unwrap().to_bits())
            .collect();
        assert_eq!(totals, serial_totals, "{normal:?}");
    }
}

#[test]
fn cache_round_trip_and_damaged_entries() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ModalCache::new(dir.path());
    let mesh = box_mesh([0.1, 0.05, 0.01], [6, 3, 1], None).unwrap();
    let tile = material("ceramic-tile");
    let settings = EigenSettings::new(12);
    let (first, report) =
        solve_modes(&mesh, &tile, &settings, Some(&cache), threads(), &|_| {}).unwrap();
    assert!(!report.from_cache);
    let (second, report) =
        solve_modes(&mesh, &tile, &settings, Some(&cache), threads(), &|_| {}).unwrap();
    assert!(report.from_cache);
    assert_eq!(first.eigenvalues, second.eigenvalues);
    assert_eq!(first.shapes, second.shapes);
    // The eigensolver factor's ordering comes back with the modes, for the
    // static correction of the loaded basis.
    let ordering = first
        .static_correction
        .as_ref()
        .and_then(|c| c.ordering())
        .map(<[usize]>::to_vec);
    assert!(ordering.is_some());
    assert_eq!(second.factor_ordering, ordering);
    // Damping does not change the modes; density does.
    let mut damped = tile.clone();
    damped.damping_mass_per_s *= 3.0;
    assert!(
        solve_modes(&mesh, &damped, &settings, Some(&cache), threads(), &|_| {})
            .unwrap()
            .1
            .from_cache
    );
    let mut denser = tile.clone();
    denser.density_kg_m3 *= 2.0;
    let (heavy, report) =
        solve_modes(&mesh, &denser, &settings, Some(&cache), threads(), &|_| {}).unwrap();
    assert!(!report.from_cache);
    assert!(
        rel(heavy.eigenvalues[0], first.eigenvalues[0] / 2.0) < 1e-9,
        "λ ∝ 1/ρ"
    );
    // A damaged entry is ignored and rewritten.
    let path = cache.path_for(&mesh, &tile, &settings);
    std::fs::write(&path, b"not a cache entry").unwrap();
    let (third, report) =
        solve_modes(&mesh, &tile, &settings, Some(&cache), threads(), &|_| {}).unwrap();
    assert!(!report.from_cache);
    assert!(rel(third.eigenvalues[0], first.eigenvalues[0]) < 1e-12);
    assert!(
        solve_modes(&mesh, &tile, &settings, Some(&cache), threads(), &|_| {})
            .unwrap()
            .1
            .from_cache
    );
}

#[test]
fn bad_requests_are_errors() {
    let mesh = box_mesh([0.1, 0.1, 0.1], [1, 1, 1], None).unwrap();
    let glass = material("soda-lime-glass");
    let elastic = ElasticMesh::new(&mesh, ElementOrder::Linear);
    let k = elastic.stiffness(&glass);
    let m = elastic.lumped_mass(glass.density_kg_m3);
    let err = lowest_modes(&k, &m, mesh.nodes(), &EigenSettings::new(100), &|_| {}).unwrap_err();
    assert!(
        matches!(
            err,
            EigenError::TooManyModes {
                wanted: 100,
                dofs: 24,
                available: 16
            }
        ),
        "{err}"
    );
    // As many modes as the solver can find, on a body of 81 DOFs: the
    // Krylov space fills the whole elastic space, the guard band is cut
    // and the blocks are single vectors.
    let quadratic = ElasticMesh::new(&mesh, ElementOrder::Quadratic);
    let (kq, mq) = (
        quadratic.stiffness(&glass),
        quadratic.lumped_mass(glass.density_kg_m3),
    );
    let all = lowest_modes(
        &kq,
        &mq,
        quadratic.nodes(),
        &EigenSettings::new(73),
        &|_| {},
    )
    .unwrap();
    assert_eq!(all.eigenvalues.len(), 73);
    assert!(all.residuals.iter().all(|&r| r <= 1e-8));
    let mut settings = EigenSettings::new(3);
    settings.shift = 1.0;
    assert!(matches!(
        lowest_modes(&k, &m, mesh.nodes(), &settings, &|_| {}).unwrap_err(),
        EigenError::BadShift(_)
    ));
    let mut bad_mass = m.clone();
    bad_mass[4] = 0.0;
    assert!(matches!(
        lowest_modes(&k, &bad_mass, mesh.nodes(), &EigenSettings::new(3), &|_| {}).unwrap_err(),
        EigenError::BadMass(4)
    ));
}

#[test]
fn group_stress_bound_holds_for_every_element_and_state() {
    use rand::{Rng, SeedableRng};
    let (_, _, basis, _) = tile_basis([6, 3, 1], 12, ElementOrder::Quadratic);
    let stress = basis.stress();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    for _ in 0..20 {
        let amplitude: Vec<f32> = (0..12).map(|_| rng.random::<f32>() * 1e-4).collect();
        let z: Vec<f32> = amplitude
            .iter()
            .map(|a| a * (2.0 * rng.random::<f32>() - 1.0))
            .collect();
        for g in 0..stress.group_count() {
            let bound = stress.group_bound(g, &amplitude);
            for e in stress.group_points(g) {
                let s = stress.point_stress(e, &z).map(f64::from);
                let norm = (s[0] * s[0]
                    + s[1] * s[1]
                    + s[2] * s[2]
                    + 2.0 * (s[3] * s[3] + s[4] * s[4] + s[5] * s[5]))
                    .sqrt();
                assert!(norm <= f64::from(bound), "point {e}: {norm} > {bound}");
            }
        }
    }
}

#[test]
fn a_basis_reports_its_tables_by_their_shapes_and_its_factor_once_built() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ModalCache::new(dir.path());
    let mesh = box_mesh([0.1, 0.05, 0.01], [6, 3, 1], None).unwrap();
    let tile = material("ceramic-tile");
    let settings = EigenSettings::new(12);
    let (solved, _) = analyse(&mesh, &tile, &settings, Some(&cache), threads(), &|_| {}).unwrap();
    let (cached, report) =
        analyse(&mesh, &tile, &settings, Some(&cache), threads(), &|_| {}).unwrap();
    assert!(report.from_cache);
    // Quadratic elements: a node per mesh node and per edge, 3 DOFs each.
    let dofs = 3 * (mesh.node_count() + mesh.topology().edges.len());
    for basis in [&solved, &cached] {
        let bytes = basis.table_bytes();
        assert_eq!(bytes.shapes, dofs * 12 * 8);
        // f32 displacements of the mesh nodes.
        assert_eq!(bytes.displacement, 3 * mesh.node_count() * 12 * 4);
        assert!(bytes.stress > 0);
    }
    // The eigensolver's factor is the static correction's; a basis from the
    // cache factorises at its first use.
    let factor = solved.table_bytes().static_correction.expect("built");
    assert_eq!(cached.table_bytes().static_correction, None);
    cached.static_correction(&mesh, &tile).expect("factorises");
    assert_eq!(cached.table_bytes().static_correction, Some(factor));
    let bytes = cached.table_bytes();
    assert_eq!(
        bytes.total(),
        bytes.shapes + bytes.stress + bytes.displacement + factor
    );
}
