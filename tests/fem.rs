//! Tetrahedral FEM, linear and quadratic: element properties, assembly,
//! closed-form checks.

mod common;

use common::{material, rel};
use faer::linalg::solvers::Solve;
use faer::sparse::{SparseColMat, Triplet};
use faer::{Mat, Side};
use nalgebra::{Matrix3, Point3, SMatrix, Vector3};
use rand::{Rng, SeedableRng};
use tessera::fem::*;
use tessera::mesh::{box_mesh, Jitter, TetMesh};

fn random_tet(rng: &mut impl Rng) -> [Point3<f64>; 4] {
    loop {
        let p: [Point3<f64>; 4] = std::array::from_fn(|_| {
            Point3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            )
        });
        if let Some(e) = TetElement::new(&p) {
            if e.volume > 0.05 {
                return p;
            }
        }
    }
}

fn dense_element_stiffness(element: &TetElement, lambda: f64, mu: f64) -> SMatrix<f64, 12, 12> {
    let blocks = element_stiffness(element, lambda, mu);
    SMatrix::<f64, 12, 12>::from_fn(|i, j| blocks[i / 3][j / 3][(i % 3, j % 3)])
}

#[test]
fn element_stiffness_is_symmetric_psd_with_six_zero_modes_and_equals_btcb() {
    let glass = material("soda-lime-glass");
    let (lambda, mu) = glass.lame();
    let c = constitutive_matrix(&glass);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    for _ in 0..50 {
        let element = TetElement::new(&random_tet(&mut rng)).unwrap();
        let k = dense_element_stiffness(&element, lambda, mu);
        let b = element.b_matrix();
        let btcb = element.volume * b.transpose() * c * b;
        let scale = k.norm();
        assert!(
            (k - btcb).norm() <= 1e-12 * scale,
            "block formula differs from V·BᵀCB"
        );
        assert!((k - k.transpose()).norm() <= 1e-14 * scale);
        let eig = k.symmetric_eigen();
        let zeros = eig
            .eigenvalues
            .iter()
            .filter(|&&l| l.abs() <= 1e-10 * scale)
            .count();
        assert_eq!(zeros, 6, "eigenvalues {:?}", eig.eigenvalues);
        assert!(eig.eigenvalues.iter().all(|&l| l > -1e-10 * scale));
    }
}

/// The six rigid motions of `nodes` as node-major vectors.
fn rigid_motions(nodes: &[Point3<f64>]) -> Vec<Vec<f64>> {
    let mut motions = Vec::new();
    for axis in 0..3 {
        let e = Vector3::ith(axis, 1.0);
        motions.push(nodes.iter().flat_map(|_| [e.x, e.y, e.z]).collect());
        motions.push(
            nodes
                .iter()
                .flat_map(|p| {
                    let r = e.cross(&p.coords);
                    [r.x, r.y, r.z]
                })
                .collect(),
        );
    }
    motions
}

fn matvec(m: &SparseMatrix, x: &[f64]) -> Vec<f64> {
    let xm = Mat::from_fn(x.len(), 1, |i, _| x[i]);
    let y = m * &xm;
    (0..x.len()).map(|i| y[(i, 0)]).collect()
}

fn jittered_box() -> TetMesh {
    box_mesh(
        [0.1, 0.07, 0.05],
        [5, 4, 3],
        Some(Jitter {
            fraction: 0.25,
            seed: 11,
        }),
    )
    .unwrap()
}

const ORDERS: [ElementOrder; 2] = [ElementOrder::Linear, ElementOrder::Quadratic];

/// Whether each node of `elastic` lies on the boundary of `mesh`: a corner
/// of a boundary face, or the node of one of its edges.
fn boundary_nodes(mesh: &TetMesh, elastic: &ElasticMesh) -> Vec<bool> {
    let mut boundary = vec![false; elastic.node_count()];
    let topology = mesh.topology();
    for face in &topology.boundary_faces {
        for (i, &a) in face.nodes.iter().enumerate() {
            boundary[a as usize] = true;
            if elastic.order() == ElementOrder::Quadratic {
                let b = face.nodes[(i + 1) % 3];
                let edge = topology.edge_index(a, b).unwrap();
                boundary[mesh.node_count() + edge] = true;
            }
        }
    }
    boundary
}

#[test]
fn quadratic_element_stiffness_is_symmetric_psd_with_six_zero_modes() {
    let glass = material("soda-lime-glass");
    let (lambda, mu) = glass.lame();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
    for _ in 0..20 {
        let element = TetElement::new(&random_tet(&mut rng)).unwrap();
        let blocks = quadratic_element_stiffness(&element, lambda, mu);
        let k = SMatrix::<f64, 30, 30>::from_fn(|i, j| blocks[i / 3][j / 3][(i % 3, j % 3)]);
        let scale = k.norm();
        assert!((k - k.transpose()).norm() <= 1e-13 * scale);
        let eig = k.symmetric_eigen();
        let zeros = eig
            .eigenvalues
            .iter()
            .filter(|&&l| l.abs() <= 1e-10 * scale)
            .count();
        assert_eq!(zeros, 6, "eigenvalues {:?}", eig.eigenvalues);
        assert!(eig.eigenvalues.iter().all(|&l| l > -1e-10 * scale));
    }
}

#[test]
fn assembled_stiffness_annihilates_rigid_motions_and_mass_sums_to_rho_v() {
    let mesh = jittered_box();
    let porcelain = material("porcelain");
    for order in ORDERS {
        let elastic = ElasticMesh::new(&mesh, order);
        let k = elastic.stiffness(&porcelain);
        assert_eq!(k.nrows(), 3 * order.node_count(&mesh));
        let k_scale = k.val().iter().fold(0.0f64, |a, v| a.max(v.abs()));
        for motion in rigid_motions(elastic.nodes()) {
            let f = matvec(&k, &motion);
            let worst = f.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            assert!(
                worst <= 1e-12 * k_scale,
                "{order:?}: rigid motion produces force {worst}"
            );
        }
        let expected = porcelain.density_kg_m3 * mesh.volume();
        let lumped = elastic.lumped_mass(porcelain.density_kg_m3);
        assert!(lumped.iter().all(|&m| m > 0.0));
        for axis in 0..3 {
            let total: f64 = lumped.iter().skip(axis).step_by(3).sum();
            assert!(rel(total, expected) < 1e-13);
        }
    }
}

/// The patch test (Zienkiewicz, Taylor & Zhu §9.3): a displacement field
/// the element can represent exactly is reproduced, strain included, and
/// the interior nodes carry no force. Affine fields for both elements; for
/// the quadratic element also a quadratic field, whose strain (linear) it
/// must give exactly everywhere in every element.
#[test]
fn patch_test_affine_displacement_gives_exact_strain_and_no_interior_force() {
    let mesh = jittered_box();
    let tile = material("ceramic-tile");
    let g = Matrix3::new(1e-3, 2e-4, -3e-4, 5e-4, -2e-3, 1e-4, 0.0, 7e-4, 4e-4);
    let c = Vector3::new(1e-3, -2e-3, 5e-4);
    let affine = |p: &Point3<f64>| g * p.coords + c;
    let voigt = |grad: &Matrix3<f64>| {
        Voigt::from([
            grad[(0, 0)],
            grad[(1, 1)],
            grad[(2, 2)],
            grad[(1, 2)] + grad[(2, 1)],
            grad[(0, 2)] + grad[(2, 0)],
            grad[(0, 1)] + grad[(1, 0)],
        ])
    };
    let expected_strain = voigt(&g);
    for order in ORDERS {
        let elastic = ElasticMesh::new(&mesh, order);
        let u: Vec<Vector3<f64>> = elastic.nodes().iter().map(affine).collect();
        for t in 0..mesh.tet_count() {
            let element = elastic.element(t);
            let nodes = elastic.element_nodes(t);
            let strain = match order {
                ElementOrder::Linear => {
                    element.strain(&std::array::from_fn(|a| u[nodes[a] as usize]))
                }
                ElementOrder::Quadratic => quadratic_strain(
                    &element,
                    &[0.1, 0.2, 0.3, 0.4],
                    &std::array::from_fn(|a| u[nodes[a] as usize]),
                ),
            };
            assert!(
                (strain - expected_strain).norm() <= 1e-12 * expected_strain.norm(),
                "{order:?}: tet {t}"
            );
        }
        let k = elastic.stiffness(&tile);
        let flat: Vec<f64> = u.iter().flat_map(|v| [v.x, v.y, v.z]).collect();
        let f = matvec(&k, &flat);
        let boundary = boundary_nodes(&mesh, &elastic);
        let scale = f.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let mut interior = 0;
        for n in (0..elastic.node_count()).filter(|&n| !boundary[n]) {
            interior += 1;
            for axis in 0..3 {
                assert!(
                    f[3 * n + axis].abs() <= 1e-10 * scale,
                    "{order:?}: interior node {n} force {}",
                    f[3 * n + axis]
                );
            }
        }
        assert!(interior > 0);
    }
    // u = g x + (x·a) h x: quadratic, strain linear.
    let a = Vector3::new(2e-2, -1e-2, 3e-2);
    let h = Matrix3::new(1.0, -2.0, 0.5, 0.3, 1.5, -1.0, 2.0, 0.0, -0.7) * 1e-2;
    let quadratic = |p: &Point3<f64>| affine(p) + p.coords.dot(&a) * (h * p.coords);
    // ∇u = g + h x aᵀ + (x·a) h.
    let gradient = |p: &Point3<f64>| g + (h * p.coords) * a.transpose() + p.coords.dot(&a) * h;
    let elastic = ElasticMesh::new(&mesh, ElementOrder::Quadratic);
    let u: Vec<Vector3<f64>> = elastic.nodes().iter().map(quadratic).collect();
    for t in 0..mesh.tet_count() {
        let element = elastic.element(t);
        let nodes = elastic.element_nodes(t);
        let ue = std::array::from_fn(|i| u[nodes[i] as usize]);
        let corners = mesh.tet_points(t);
        for l in [[0.1, 0.2, 0.3, 0.4], [1.0, 0.0, 0.0, 0.0], [0.25; 4]] {
            let p = Point3::from(
                (0..4)
                    .map(|i| corners[i].coords * l[i])
                    .sum::<Vector3<f64>>(),
            );
            let exact = voigt(&gradient(&p));
            let strain = quadratic_strain(&element, &l, &ue);
            assert!(
                (strain - exact).norm() <= 1e-10 * exact.norm(),
                "tet {t} at {l:?}: {strain:?} vs {exact:?}"
            );
        }
        // The corner B matrices give the same strain.
        let b = quadratic_corner_b_matrices(&element);
        let flat = nalgebra::SVector::<f64, 30>::from_fn(|r, _| ue[r / 3][r % 3]);
        for (corner, b) in b.iter().enumerate() {
            let mut l = [0.0; 4];
            l[corner] = 1.0;
            let expected = quadratic_strain(&element, &l, &ue);
            assert!((b * flat - expected).norm() <= 1e-12 * expected.norm());
        }
    }
}

#[test]
fn bar_in_uniaxial_tension_has_sigma_f_over_a() {
    for order in ORDERS {
        bar_in_uniaxial_tension(order);
    }
}

fn bar_in_uniaxial_tension(order: ElementOrder) {
    let (length, side) = (0.2, 0.02);
    let mesh = box_mesh(
        [length, side, side],
        [10, 3, 3],
        Some(Jitter {
            fraction: 0.2,
            seed: 5,
        }),
    )
    .unwrap();
    let glass = material("soda-lime-glass");
    let elastic = ElasticMesh::new(&mesh, order);
    let k = elastic.stiffness(&glass);
    let n = elastic.dofs();
    let force_n = 1000.0;
    let area = side * side;
    // Consistent nodal loads of the traction F/A on the face x = L: a third
    // of each triangle's share at its corners (linear), or at its edges'
    // nodes (quadratic: the corners' shape functions integrate to zero on
    // a triangle).
    let mut f = vec![0.0; n];
    let topology = mesh.topology();
    for face in &topology.boundary_faces {
        let p = face.nodes.map(|i| mesh.nodes()[i as usize]);
        if p.iter().all(|q| (q.x - length).abs() < 1e-12) {
            let share = force_n / area * 0.5 * (p[1] - p[0]).cross(&(p[2] - p[0])).norm() / 3.0;
            for (i, &node) in face.nodes.iter().enumerate() {
                let target = match order {
                    ElementOrder::Linear => node as usize,
                    ElementOrder::Quadratic => {
                        let next = face.nodes[(i + 1) % 3];
                        mesh.node_count() + topology.edge_index(node, next).unwrap()
                    }
                };
                f[3 * target] += share;
            }
        }
    }
    // Rollers: u_x = 0 on x = 0; u_y = u_z = 0 at the origin; u_z = 0 at (0, side, 0).
    let at = |x: f64, y: f64, z: f64| {
        mesh.nodes()
            .iter()
            .position(|p| (p - Point3::new(x, y, z)).norm() < 1e-12)
            .unwrap()
    };
    let mut fixed = vec![false; n];
    for (i, p) in elastic.nodes().iter().enumerate() {
        if p.x.abs() < 1e-12 {
            fixed[3 * i] = true;
        }
    }
    let origin = at(0.0, 0.0, 0.0);
    fixed[3 * origin + 1] = true;
    fixed[3 * origin + 2] = true;
    fixed[3 * at(0.0, side, 0.0) + 2] = true;
    let flat = solve_constrained(&k, &f, &fixed);
    let u: Vec<Vector3<f64>> = flat
        .chunks_exact(3)
        .map(|c| Vector3::new(c[0], c[1], c[2]))
        .collect();
    let c = constitutive_matrix(&glass);
    let expected = force_n / area;
    for t in 0..mesh.tet_count() {
        let element = elastic.element(t);
        let nodes = elastic.element_nodes(t);
        let strain = match order {
            ElementOrder::Linear => element.strain(&std::array::from_fn(|a| u[nodes[a] as usize])),
            ElementOrder::Quadratic => quadratic_strain(
                &element,
                &[0.7, 0.1, 0.1, 0.1],
                &std::array::from_fn(|a| u[nodes[a] as usize]),
            ),
        };
        let stress = c * strain;
        assert!(
            rel(stress[0], expected) < 1e-8,
            "{order:?}, tet {t}: σxx = {} vs {expected}",
            stress[0]
        );
        for k in 1..6 {
            assert!(
                stress[k].abs() < 1e-8 * expected,
                "{order:?}, tet {t}: component {k} = {}",
                stress[k]
            );
        }
        let (principal, directions) = principal_stresses(&stress);
        assert!(rel(principal[0], expected) < 1e-8);
        assert!(
            directions.column(0).x.abs() > 1.0 - 1e-9,
            "largest principal stress along the bar axis"
        );
    }
}

/// Solves `K u = f` with the DOFs marked in `fixed` held at zero.
fn solve_constrained(k: &SparseMatrix, f: &[f64], fixed: &[bool]) -> Vec<f64> {
    let n = f.len();
    let free: Vec<usize> = (0..n).filter(|&i| !fixed[i]).collect();
    let mut index = vec![usize::MAX; n];
    for (r, &i) in free.iter().enumerate() {
        index[i] = r;
    }
    let mut triplets = Vec::new();
    let kr = k.as_ref();
    for j in 0..n {
        for (&i, &v) in kr.row_idx_of_col_raw(j).iter().zip(kr.val_of_col(j)) {
            if index[i] != usize::MAX && index[j] != usize::MAX {
                triplets.push(Triplet::new(index[i], index[j], v));
            }
        }
    }
    let reduced =
        SparseColMat::<usize, f64>::try_new_from_triplets(free.len(), free.len(), &triplets)
            .unwrap();
    let llt = reduced.sp_cholesky(Side::Lower).unwrap();
    let mut rhs = Mat::from_fn(free.len(), 1, |r, _| f[free[r]]);
    llt.solve_in_place(rhs.as_mut());
    let mut u = vec![0.0; n];
    for (r, &i) in free.iter().enumerate() {
        u[i] = rhs[(r, 0)];
    }
    u
}

/// A simply supported square plate under a load spread over a small
/// central circle (Roark's *Formulas for Stress and Strain*, 7th ed.,
/// Table 11.4 case 1d, a/b = 1, ν = 0.3; Timoshenko & Woinowsky-Krieger
/// §35 for the deflection): centre deflection `α W b²/(E t³)` with
/// α = 0.1267, and bottom-face stress under the load
/// `3W/(2πt²)·((1 + ν) ln(2b/(π r₀)) + β)` with β = 0.435 (r₀ ≥ t/2, so no
/// thick-plate radius). Quadratic tets, two layers (measured: w 3.5 %
/// above, σ 0.8 % off); the linear ones lock and miss both by far (41 %
/// and 62 % low).
#[test]
fn quadratic_simply_supported_plate_under_a_central_patch() {
    let mut plate = material("soda-lime-glass");
    plate.poisson_ratio = 0.3;
    let (side, t, radius, load_n) = (0.2f64, 0.01f64, 0.01f64, 1000.0f64);
    let mesh = box_mesh([side, side, t], [40, 40, 2], None).unwrap();
    let centre = Point3::new(side / 2.0, side / 2.0, 0.0);
    let alpha = 0.1267;
    let expected_w = alpha * load_n * side * side / (plate.youngs_modulus_pa * t.powi(3));
    let expected_sigma = 3.0 * load_n / (2.0 * std::f64::consts::PI * t * t)
        * (1.3 * (2.0 * side / (std::f64::consts::PI * radius)).ln() + 0.435);
    let mut errors = Vec::new();
    for order in ORDERS {
        let elastic = ElasticMesh::new(&mesh, order);
        let k = elastic.stiffness(&plate);
        let n = elastic.dofs();
        // The load: the top faces whose centroid is in the circle, each
        // carrying its share of W (consistent loads as in the bar test).
        let topology = mesh.topology();
        let top: Vec<_> = topology
            .boundary_faces
            .iter()
            .map(|face| face.nodes.map(|i| (i, mesh.nodes()[i as usize])))
            .filter(|p| p.iter().all(|(_, q)| (q.z - t).abs() < 1e-12))
            .filter(|p| {
                let c = (p[0].1.coords + p[1].1.coords + p[2].1.coords) / 3.0;
                (c.xy() - centre.coords.xy()).norm() < radius
            })
            .collect();
        let area =
            |p: &[(u32, Point3<f64>); 3]| 0.5 * (p[1].1 - p[0].1).cross(&(p[2].1 - p[0].1)).norm();
        let total_area: f64 = top.iter().map(area).sum();
        let mut f = vec![0.0; n];
        for p in &top {
            let share = -load_n * area(p) / total_area / 3.0;
            for i in 0..3 {
                let target = match order {
                    ElementOrder::Linear => p[i].0 as usize,
                    ElementOrder::Quadratic => {
                        mesh.node_count() + topology.edge_index(p[i].0, p[(i + 1) % 3].0).unwrap()
                    }
                };
                f[3 * target + 2] += share;
            }
        }
        // Supports: w = 0 along the bottom edges; in-plane, a corner held
        // and its neighbour along x held sideways.
        let mut fixed = vec![false; n];
        for (i, p) in elastic.nodes().iter().enumerate() {
            let on_edge = [p.x, p.y]
                .iter()
                .any(|&c| c.abs() < 1e-12 || (c - side).abs() < 1e-12);
            if p.z.abs() < 1e-12 && on_edge {
                fixed[3 * i + 2] = true;
            }
            if (p - Point3::origin()).norm() < 1e-12 {
                fixed[3 * i] = true;
                fixed[3 * i + 1] = true;
            }
            if (p - Point3::new(side, 0.0, 0.0)).norm() < 1e-12 {
                fixed[3 * i + 1] = true;
            }
        }
        let u = solve_constrained(&k, &f, &fixed);
        let bottom_centre = mesh
            .nodes()
            .iter()
            .position(|p| (p - centre).norm() < 1e-12)
            .unwrap();
        let w = -u[3 * bottom_centre + 2];
        // The bottom centre's stress, recovered as the modal tables do: the
        // volume-weighted mean over the elements there.
        let c = constitutive_matrix(&plate);
        let (mut sum, mut weight) = (Voigt::zeros(), 0.0);
        for t in 0..mesh.tet_count() {
            let Some(corner) = mesh.tets()[t]
                .iter()
                .position(|&v| v as usize == bottom_centre)
            else {
                continue;
            };
            let element = elastic.element(t);
            let nodes = elastic.element_nodes(t);
            let at = |a: usize| {
                let i = 3 * nodes[a] as usize;
                Vector3::new(u[i], u[i + 1], u[i + 2])
            };
            let strain = match order {
                ElementOrder::Linear => element.strain(&std::array::from_fn(at)),
                ElementOrder::Quadratic => {
                    let mut l = [0.0; 4];
                    l[corner] = 1.0;
                    quadratic_strain(&element, &l, &std::array::from_fn(at))
                }
            };
            sum += element.volume * (c * strain);
            weight += element.volume;
        }
        let sigma = sum[0] / weight;
        errors.push((
            order,
            rel(w, expected_w),
            rel(sigma, expected_sigma),
            w,
            sigma,
        ));
    }
    let (_, w_error, sigma_error, w, sigma) = errors[1];
    // Above Kirchhoff's deflection by the shear deflection it leaves out:
    // P/(2πκGt)·ln(a/2r₀) ≈ 2 % here (Mindlin), and a little indentation.
    assert!(
        w > expected_w && w_error < 0.05,
        "quadratic: w = {w:e} m vs {expected_w:e} m ({errors:?})"
    );
    assert!(
        sigma_error < 0.05,
        "quadratic: σ = {sigma:e} Pa vs {expected_sigma:e} Pa ({errors:?})"
    );
    assert!(
        errors[0].1 > 2.0 * w_error && errors[0].2 > 2.0 * sigma_error,
        "{errors:?}"
    );
}

#[test]
fn principal_stresses_and_energy_density() {
    // diag(3, 1, 2) MPa rotated by 30° about z.
    let (s, co) = (0.5f64, 3f64.sqrt() / 2.0);
    let r = Matrix3::new(co, -s, 0.0, s, co, 0.0, 0.0, 0.0, 1.0);
    let d = Matrix3::from_diagonal(&Vector3::new(3e6, 1e6, 2e6));
    let t = r * d * r.transpose();
    let voigt = voigt_of(&t);
    let (values, directions) = principal_stresses(&voigt);
    assert!((values - Vector3::new(3e6, 2e6, 1e6)).norm() < 1e-6);
    assert!(directions.column(0).dot(&r.column(0)).abs() > 1.0 - 1e-12);
    assert!((stress_tensor(&voigt) - t).norm() < 1e-6);

    let glass = material("soda-lime-glass");
    let c = constitutive_matrix(&glass);
    let strain = Voigt::from([1e-4, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let stress = c * strain;
    assert!(rel(strain_energy_density(&strain, &c), 0.5 * stress[0] * 1e-4) < 1e-14);
}

/// The stress a crack releases is the traction on its plane: all of a
/// uniaxial tension normal to it or a shear along it, none of a tension
/// along it or a compression across it; its energy density is
/// `σ_nn²/2E + τ²/2G`, against `(1 − ν) σ²/E` for the whole of an
/// equibiaxial tension of which it releases one component.
#[test]
fn a_crack_releases_the_traction_on_its_plane() {
    let glass = material("soda-lime-glass");
    let c = constitutive_matrix(&glass);
    let compliance = c.try_inverse().unwrap();
    let energy = |s: &Voigt| 0.5 * s.dot(&(compliance * s));
    let (e, nu) = (glass.youngs_modulus_pa, glass.poisson_ratio);
    let g = e / (2.0 * (1.0 + nu));
    let z = Vector3::z();
    let sigma = 5e7;
    let tension_across = Voigt::from([0.0, 0.0, sigma, 0.0, 0.0, 0.0]);
    assert_eq!(crack_plane_stress(&tension_across, &z), tension_across);
    let tension_along = Voigt::from([sigma, sigma, 0.0, 0.0, 0.0, sigma]);
    assert_eq!(crack_plane_stress(&tension_along, &z), Voigt::zeros());
    let compression_across = Voigt::from([0.0, 0.0, -sigma, 0.0, 0.0, 0.0]);
    assert_eq!(crack_plane_stress(&compression_across, &z), Voigt::zeros());
    let shear = Voigt::from([0.0, 0.0, 0.0, sigma, 0.0, 0.0]);
    assert_eq!(crack_plane_stress(&shear, &z), shear);
    assert!(rel(energy(&shear), sigma * sigma / (2.0 * g)) < 1e-12);

    // A general stress and a tilted plane: the traction on the plane is
    // kept (its normal part being tensile), the stress within it is gone.
    let s = Voigt::from([3e7, -1e7, 2e7, 4e6, -6e6, 8e6]);
    let n = Vector3::new(1.0, 2.0, 2.0).normalize();
    let released = crack_plane_stress(&s, &n);
    let traction = stress_tensor(&s) * n;
    assert!(traction.dot(&n) > 0.0);
    assert!((stress_tensor(&released) * n - traction).norm() < 1e-6);
    let u = n.cross(&Vector3::x()).normalize();
    let w = n.cross(&u);
    for (a, b) in [(u, u), (u, w), (w, w)] {
        assert!((a.dot(&(stress_tensor(&released) * b))).abs() < 1e-6);
    }
    let (normal, shear) = (traction.dot(&n), (traction - traction.dot(&n) * n).norm());
    let expected = normal * normal / (2.0 * e) + shear * shear / (2.0 * g);
    assert!(rel(energy(&released), expected) < 1e-12);

    // Equibiaxial tension: a crack across one axis releases 1/(2(1 − ν))
    // of the whole density.
    let biaxial = Voigt::from([sigma, sigma, 0.0, 0.0, 0.0, 0.0]);
    let whole = energy(&biaxial);
    assert!(rel(whole, (1.0 - nu) * sigma * sigma / e) < 1e-12);
    let across_x = energy(&crack_plane_stress(&biaxial, &Vector3::x()));
    assert!(rel(across_x / whole, 1.0 / (2.0 * (1.0 - nu))) < 1e-12);
}
