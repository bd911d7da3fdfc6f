//! Fracture state, crack propagation and fragments.

mod common;

use common::rel;
use nalgebra::{Point3, Vector3};
use tessera::fracture::*;
use tessera::mesh::{box_mesh, Jitter, TetMesh};

const DENSITY: f64 = 2000.0;
const NEVER_STOPS: EnergyBalance = EnergyBalance {
    toughness_j_m2: 1.0,
    energy_length_m: 1.0,
};

fn assert_closed_outward(fragment: &Fragment) {
    let what = format!("fragment {} (gap: {})", fragment.id, fragment.is_gap);
    common::assert_closed_outward(
        &fragment.points,
        &fragment.triangles,
        fragment.volume_m3,
        1e-9,
        &what,
    );
}

/// Whether `surface` crosses tet `t` (nodes on both sides).
fn crosses(mesh: &TetMesh, surface: &CrackSurface, t: usize) -> bool {
    let v = mesh.tet_points(t).map(|p| surface.value(&p));
    v.iter().any(|&x| x < 0.0) && v.iter().any(|&x| x >= 0.0)
}

fn cut(
    mesh: &TetMesh,
    state: &mut FractureState,
    origin: Point3<f64>,
    normal: Vector3<f64>,
    noise_m: f64,
    seed: u32,
) -> (Crack, Vec<u32>) {
    let surface = CrackSurface::new(origin, normal, noise_m, 40.0, seed);
    let start = (0..mesh.tet_count())
        .filter(|&t| crosses(mesh, &surface, t) && !state.is_damaged(t))
        .min_by(|&a, &b| {
            (mesh.tet_centroid(a) - origin)
                .norm()
                .total_cmp(&(mesh.tet_centroid(b) - origin).norm())
        })
        .expect("the surface crosses the mesh");
    propagate_fresh(mesh, state, &surface, start, &NEVER_STOPS, &mut |_| 1e9)
}

/// One crack from `start` on fresh working memory (Alg. 2), and the
/// fragment identifiers it created (Alg. 1).
fn propagate_fresh(
    mesh: &TetMesh,
    state: &mut FractureState,
    surface: &CrackSurface,
    start: usize,
    balance: &EnergyBalance,
    energy_density: &mut dyn FnMut(usize) -> f64,
) -> (Crack, Vec<u32>) {
    let mut scratch = CrackScratch::new(mesh);
    let crack = propagate(
        &mut scratch,
        mesh,
        state,
        surface,
        start,
        balance,
        energy_density,
    );
    (crack, scratch.update_fragments(mesh, state))
}

#[test]
fn plane_cut_of_a_box_gives_exact_halves() {
    let (lx, ly, lz) = (0.2, 0.1, 0.05);
    let mesh = box_mesh([lx, ly, lz], [8, 4, 2], None).unwrap();
    let mut state = FractureState::new(&mesh);
    let x0 = 0.0737;
    let (crack, created) = cut(
        &mesh,
        &mut state,
        Point3::new(x0, 0.05, 0.025),
        Vector3::x(),
        0.0,
        1,
    );
    assert_eq!(crack.stop, CrackStop::Boundary);
    assert_eq!(created.len(), 1);
    assert!(
        rel(crack.area_m2, ly * lz) < 1e-12,
        "area {}",
        crack.area_m2
    );
    let pieces = fragments(&mesh, &state, DENSITY);
    assert_eq!(pieces.len(), 2);
    for piece in &pieces {
        assert_closed_outward(piece);
        let left = piece.centroid_m.x < x0;
        let length = if left { x0 } else { lx - x0 };
        let start = if left { 0.0 } else { x0 };
        assert!(rel(piece.volume_m3, length * ly * lz) < 1e-12);
        assert!(
            (piece.centroid_m - Point3::new(start + length / 2.0, ly / 2.0, lz / 2.0)).norm()
                < 1e-12
        );
        // Box inertia about its centre: m/12 (b² + c²) etc.
        let m = DENSITY * length * ly * lz;
        let expected = Vector3::new(
            ly * ly + lz * lz,
            length * length + lz * lz,
            length * length + ly * ly,
        ) * m
            / 12.0;
        assert!((piece.inertia_kg_m2.diagonal() - expected).norm() < 1e-12 * expected.norm());
        assert!(piece.inertia_kg_m2[(0, 1)].abs() < 1e-14 * expected.norm());
    }
}

#[test]
fn noisy_and_crossing_cracks_conserve_volume_and_close_every_fragment() {
    // 1 800 tets, and 9 216: more than one chunk of the meshing pass.
    for cells in [[10, 10, 3], [16, 16, 6]] {
        noisy_and_crossing_cracks_on(cells);
    }
}

fn noisy_and_crossing_cracks_on(cells: [usize; 3]) {
    let mesh = box_mesh(
        [0.12, 0.12, 0.03],
        cells,
        Some(Jitter {
            fraction: 0.25,
            seed: 4,
        }),
    )
    .unwrap();
    let mut state = FractureState::new(&mesh);
    let centre = Point3::new(0.06, 0.06, 0.015);
    let normals = [
        Vector3::new(1.0, 0.2, 0.0),
        Vector3::new(-0.3, 1.0, 0.1),
        Vector3::new(1.0, 1.0, 0.0),
        Vector3::new(1.0, -1.0, 0.2),
    ];
    let mut stops = Vec::new();
    for (k, normal) in normals.iter().enumerate() {
        let (crack, _) = cut(
            &mesh,
            &mut state,
            centre + Vector3::new(0.004 * k as f64, -0.003 * k as f64, 0.0),
            *normal,
            2e-3,
            k as u32,
        );
        stops.push(crack.stop);
    }
    assert!(
        stops[1..].contains(&CrackStop::Collision),
        "later cracks meet earlier ones: {stops:?}"
    );
    let pieces = fragments(&mesh, &state, DENSITY);
    // A crack does not enter elements another crack damaged (collision), so
    // each later crack splits only the fragment it starts in.
    assert!(pieces.len() >= 4, "{} fragments", pieces.len());
    let total: f64 = pieces.iter().map(|f| f.volume_m3).sum();
    assert!(
        rel(total, mesh.volume()) < 1e-9,
        "volumes sum to {total}, body {}",
        mesh.volume()
    );
    let mass: f64 = pieces.iter().map(|f| f.mass_kg).sum();
    assert!(rel(mass, DENSITY * mesh.volume()) < 1e-9);
    for piece in &pieces {
        assert_closed_outward(piece);
        assert!(piece.volume_m3 > 0.0);
        let eig = piece.inertia_kg_m2.symmetric_eigenvalues();
        assert!(
            eig.iter().all(|&l| l > 0.0),
            "inertia of fragment {} not positive definite",
            piece.id
        );
    }
    // First moments add up to the body's: Σ mᵢ cᵢ = M c.
    let moment: Vector3<f64> = pieces
        .iter()
        .map(|f| f.volume_m3 * f.centroid_m.coords)
        .sum();
    let body: Vector3<f64> = (0..mesh.tet_count())
        .map(|t| mesh.tet_volume(t) * mesh.tet_centroid(t).coords)
        .sum();
    assert!((moment - body).norm() < 1e-9 * body.norm());
}

#[test]
fn incremental_flood_fill_matches_a_full_one() {
    let mesh = box_mesh(
        [0.1, 0.1, 0.02],
        [8, 8, 2],
        Some(Jitter {
            fraction: 0.2,
            seed: 9,
        }),
    )
    .unwrap();
    let mut state = FractureState::new(&mesh);
    // Two parallel through-cracks and a third across them (which collides).
    let cracks = [
        (0.03, 0.045, Vector3::x()),
        (0.07, 0.045, Vector3::x()),
        (0.05, 0.06, Vector3::new(0.2, 1.0, 0.0)),
    ];
    for (k, (x, y, normal)) in cracks.iter().enumerate() {
        cut(
            &mesh,
            &mut state,
            Point3::new(*x, *y, 0.01),
            *normal,
            1e-3,
            3 + k as u32,
        );
    }
    // Components of the graph of uncut edges, from scratch.
    let topo = mesh.topology();
    let mut label = vec![u32::MAX; mesh.node_count()];
    let mut next = 0;
    for seed in 0..mesh.node_count() {
        if label[seed] != u32::MAX {
            continue;
        }
        let mut stack = vec![seed];
        label[seed] = next;
        while let Some(n) = stack.pop() {
            for &m in topo.neighbours_of(n) {
                let edge = topo.edge_index(n as u32, m).unwrap();
                if label[m as usize] == u32::MAX && state.cut_position(edge).is_none() {
                    label[m as usize] = next;
                    stack.push(m as usize);
                }
            }
        }
        next += 1;
    }
    // Same partition: a bijection between the two labellings.
    let mut map = std::collections::HashMap::new();
    for (n, &incremental) in state.node_fragments().iter().enumerate() {
        assert_eq!(
            *map.entry(incremental).or_insert(label[n]),
            label[n],
            "node {n}"
        );
    }
    assert_eq!(map.len() as u32, next);
    assert!(next >= 3);
}

#[test]
fn energy_stops_a_crack_inside_the_body() {
    let mesh = box_mesh([0.2, 0.2, 0.02], [16, 16, 2], None).unwrap();
    let mut state = FractureState::new(&mesh);
    let surface = CrackSurface::new(Point3::new(0.1, 0.1, 0.01), Vector3::x(), 0.0, 1.0, 0);
    let start = (0..mesh.tet_count())
        .find(|&t| crosses(&mesh, &surface, t) && (mesh.tet_centroid(t).y - 0.1).abs() < 0.01)
        .unwrap();
    // Strain energy concentrated near the start: it runs out on the way.
    let centre = Point3::new(0.1, 0.1, 0.01);
    let balance = EnergyBalance {
        toughness_j_m2: 10.0,
        energy_length_m: 1e-3,
    };
    let (crack, created) =
        propagate_fresh(&mesh, &mut state, &surface, start, &balance, &mut |t| {
            4e4 * (-(mesh.tet_centroid(t) - centre).norm() / 0.02).exp()
        });
    assert_eq!(crack.stop, CrackStop::Energy);
    assert!(crack.fracture_energy_j >= crack.available_energy_j * 0.5);
    assert!(
        crack.elements > 1 && crack.area_m2 < 0.2 * 0.02 * 0.9,
        "a partial crack: {} m²",
        crack.area_m2
    );
    assert!(created.is_empty(), "a partial crack separates nothing");
    let pieces = fragments(&mesh, &state, DENSITY);
    assert_eq!(pieces.len(), 1);
    assert_closed_outward(&pieces[0]);
    assert!(rel(pieces[0].volume_m3, mesh.volume()) < 1e-12);
}

/// A crack with energy to spare asks for η only to get started; it
/// crosses the same elements and reports the same E_s, to the bit, as
/// when every η is asked as it enters.
#[test]
fn a_crack_with_energy_to_spare_asks_for_few_densities() {
    let mesh = box_mesh([0.2, 0.2, 0.02], [16, 16, 2], None).unwrap();
    let surface = CrackSurface::new(Point3::new(0.1, 0.1, 0.01), Vector3::x(), 0.0, 1.0, 0);
    let start = (0..mesh.tet_count())
        .find(|&t| crosses(&mesh, &surface, t))
        .unwrap();
    let eta = |t: usize| 1e3 * (1.0 + mesh.tet_centroid(t).y);
    let balance = EnergyBalance {
        toughness_j_m2: 1.0,
        energy_length_m: 0.1,
    };
    let mut state = FractureState::new(&mesh);
    let mut scratch = CrackScratch::new(&mesh);
    let mut asked = Vec::new();
    let mut ledger = EnergyLedger::default();
    let deferred = propagate_deferred(
        &mut scratch,
        &mesh,
        &mut state,
        &surface,
        start,
        &balance,
        &mut |t| {
            asked.push(t);
            eta(t)
        },
        &mut ledger,
    );
    assert_eq!(deferred.stop, CrackStop::Boundary);
    assert!(deferred.elements > 100, "{} elements", deferred.elements);
    assert_eq!(asked, [start], "only the start element's η is needed");
    assert!(ledger.total_j().is_none());
    // The eager sum: every η, in the order entered.
    let entered: Vec<usize> = ledger.pending().collect();
    assert_eq!(entered.len() + 1, deferred.elements);
    let mut densities = entered.iter().map(|&t| eta(t));
    ledger.fill(&mut densities);
    let (eager, _) = propagate_fresh(
        &mesh,
        &mut FractureState::new(&mesh),
        &surface,
        start,
        &balance,
        &mut |t| eta(t),
    );
    assert_eq!(eager.elements, deferred.elements);
    assert_eq!(
        eager.available_energy_j.to_bits(),
        ledger.total_j().unwrap().to_bits()
    );
    assert!(deferred.available_energy_j <= eager.available_energy_j);
}

#[test]
fn same_input_gives_identical_fragments() {
    let run = || {
        let mesh = box_mesh(
            [0.1, 0.1, 0.02],
            [6, 6, 2],
            Some(Jitter {
                fraction: 0.2,
                seed: 1,
            }),
        )
        .unwrap();
        let mut state = FractureState::new(&mesh);
        cut(
            &mesh,
            &mut state,
            Point3::new(0.05, 0.05, 0.01),
            Vector3::new(1.0, 0.4, 0.1),
            3e-3,
            77,
        );
        fragments(&mesh, &state, DENSITY)
            .into_iter()
            .map(|f| {
                (
                    f.volume_m3.to_bits(),
                    f.triangles.len(),
                    f.points
                        .iter()
                        .fold(0u64, |h, p| h.rotate_left(5) ^ p.x.to_bits()),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
}

#[test]
fn centre_gaps_become_fragments_and_close() {
    // Two tets sharing a face, every edge cut: five corner pieces and a gap
    // in each tet.
    let nodes = vec![
        Point3::new(0.0, 0.0, 0.0),
        Point3::new(1.0, 0.0, 0.0),
        Point3::new(0.0, 1.0, 0.0),
        Point3::new(0.0, 0.0, 1.0),
        Point3::new(0.8, 0.9, 0.7),
    ];
    let mesh = TetMesh::new(nodes, vec![[0, 1, 2, 3], [1, 2, 3, 4]]).unwrap();
    let mut state = FractureState::new(&mesh);
    let cuts: Vec<(usize, f64)> = (0..mesh.topology().edges.len())
        .map(|e| (e, 0.3 + 0.05 * e as f64))
        .collect();
    let created = state.cut_edges(&mesh, &cuts);
    assert_eq!(created.len(), 4);
    let pieces = fragments(&mesh, &state, DENSITY);
    let gaps: Vec<&Fragment> = pieces.iter().filter(|f| f.is_gap).collect();
    assert_eq!(pieces.len(), 7, "five corners and two gaps");
    assert_eq!(gaps.len(), 2);
    assert_eq!(
        (gaps[0].tets.clone(), gaps[1].tets.clone()),
        (vec![0], vec![1])
    );
    let total: f64 = pieces.iter().map(|f| f.volume_m3).sum();
    assert!(rel(total, mesh.volume()) < 1e-12);
    for piece in &pieces {
        assert_closed_outward(piece);
    }
}

/// Connected components of the uncut-edge graph, by plain union-find: the
/// reference for the incremental flood fill.
fn components_over_uncut_edges(mesh: &TetMesh, state: &FractureState) -> Vec<usize> {
    fn root(parent: &mut [usize], mut n: usize) -> usize {
        while parent[n] != n {
            parent[n] = parent[parent[n]];
            n = parent[n];
        }
        n
    }
    let mut parent: Vec<usize> = (0..mesh.node_count()).collect();
    for (e, &[a, b]) in mesh.topology().edges.iter().enumerate() {
        if state.cut_position(e).is_none() {
            let (ra, rb) = (root(&mut parent, a as usize), root(&mut parent, b as usize));
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    (0..mesh.node_count())
        .map(|n| root(&mut parent, n))
        .collect()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// However edges are cut, in however many batches, the fragment
    /// identifiers are exactly the connected components over uncut edges,
    /// and each batch reports the identifiers it created. On the finer
    /// mesh, batches of few cuts are searched and batches of many swept.
    #[test]
    fn fragments_are_the_components_of_the_uncut_edges(
        batches in proptest::collection::vec(
            proptest::collection::vec((0usize..10_000, 0.0f64..1.0), 1..120),
            1..5,
        ),
        fine in proptest::bool::ANY,
    ) {
        let cells = if fine { [12, 12, 4] } else { [4, 4, 2] };
        let mesh = box_mesh([0.1, 0.1, 0.05], cells, None).unwrap();
        let edge_count = mesh.topology().edges.len();
        let mut state = FractureState::new(&mesh);
        for batch in batches {
            let before = state.fragment_id_bound();
            let cuts: Vec<(usize, f64)> = batch.iter().map(|&(e, t)| (e % edge_count, t)).collect();
            let created = state.cut_edges(&mesh, &cuts);
            let expected: Vec<u32> = (before..state.fragment_id_bound()).collect();
            proptest::prop_assert_eq!(created, expected);
            let reference = components_over_uncut_edges(&mesh, &state);
            let ids = state.node_fragments();
            let mut id_of_component = std::collections::HashMap::new();
            let mut component_of_id = std::collections::HashMap::new();
            for n in 0..mesh.node_count() {
                let id = *id_of_component.entry(reference[n]).or_insert(ids[n]);
                proptest::prop_assert_eq!(id, ids[n], "node {} split from its component", n);
                let component = *component_of_id.entry(ids[n]).or_insert(reference[n]);
                proptest::prop_assert_eq!(component, reference[n], "id {} spans two components", ids[n]);
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// The grid's nearest usable weak point is the brute-force one (ties:
    /// the earlier sampled), for clouds flat or round, with most or few
    /// points usable, queried inside and far outside the cloud.
    #[test]
    fn the_nearest_weak_point_is_the_brute_force_one(
        points in proptest::collection::vec(
            ((0.0f64..1.0, 0.0f64..1.0, 0.0f64..0.05), 0u32..50),
            0..400,
        ),
        queries in proptest::collection::vec((-2.0f64..3.0, -2.0f64..3.0, -1.0f64..1.0), 1..20),
        unusable_below in 0u32..50,
    ) {
        let points: Vec<(Point3<f64>, u32)> = points
            .into_iter()
            .map(|((x, y, z), tet)| (Point3::new(x, y, z), tet))
            .collect();
        let weak = WeakPoints::new(points.clone());
        let usable = |tet: u32| tet >= unusable_below;
        for (x, y, z) in queries {
            let q = Point3::new(x, y, z);
            let expected = points
                .iter()
                .filter(|(_, tet)| usable(*tet))
                .min_by(|a, b| (a.0 - q).norm_squared().total_cmp(&(b.0 - q).norm_squared()))
                .map(|&(_, tet)| tet);
            proptest::prop_assert_eq!(weak.nearest(&q, usable), expected);
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Beyond the noise amplitude the side of the mean plane decides the
    /// side of the surface: `value_or_side` classifies every point as
    /// `value` does (s < 0 or not), and agrees with it where it says exact.
    #[test]
    fn the_side_beyond_the_noise_amplitude_is_the_surface_side(
        origin in proptest::array::uniform3(-0.1f64..0.1),
        direction in proptest::array::uniform3(-1.0f64..1.0),
        amplitude_m in proptest::prop_oneof![proptest::strategy::Just(0.0), 1e-4f64..5e-3],
        frequency_per_m in 1.0f64..200.0,
        seed in proptest::prelude::any::<u32>(),
        octaves in 1..=MAX_NOISE_OCTAVES,
        points in proptest::collection::vec(proptest::array::uniform3(-0.1f64..0.1), 1..64),
    ) {
        let direction = Vector3::from(direction);
        proptest::prop_assume!(direction.norm() > 0.1);
        let surface = CrackSurface::new(
            Point3::from(origin),
            direction,
            amplitude_m,
            frequency_per_m,
            seed,
        )
        .with_noise_octaves(octaves);
        for p in points {
            let p = Point3::from(p);
            let value = surface.value(&p);
            let (side, exact) = surface.value_or_side(&p);
            proptest::prop_assert_eq!(side < 0.0, value < 0.0, "side of {:?}", p);
            if exact {
                proptest::prop_assert_eq!(side, value);
            }
        }
        // Points just beyond the amplitude along the normal, both sides.
        let normal = surface.normal();
        for offset in [1.0 + 1e-6, 1.5, -1.0 - 1e-6, -1.5] {
            let p = Point3::from(origin) + normal * (offset * amplitude_m.max(1e-9));
            let (side, _) = surface.value_or_side(&p);
            proptest::prop_assert_eq!(side < 0.0, surface.value(&p) < 0.0);
        }
    }
}

/// The crack noise keeps the octaves whose wavelength is at least twice the
/// node spacing (an `Fbm` octave has `2π/3` times the frequency of the one
/// before), at least one and at most all six.
#[test]
fn the_crack_noise_keeps_the_octaves_the_mesh_resolves() {
    let lacunarity = 2.0 * std::f64::consts::PI / 3.0;
    for spacing_m in [1e-5, 1e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 0.1] {
        let frequency_per_m = 50.0;
        let octaves = resolved_octaves(frequency_per_m, spacing_m);
        assert!((1..=MAX_NOISE_OCTAVES).contains(&octaves), "{spacing_m}");
        let wavelength_m = |octave: usize| 1.0 / (frequency_per_m * lacunarity.powi(octave as i32));
        if octaves > 1 {
            assert!(
                wavelength_m(octaves - 1) >= 2.0 * spacing_m,
                "{spacing_m}: finest kept"
            );
        }
        if octaves < MAX_NOISE_OCTAVES {
            assert!(
                wavelength_m(octaves) < 2.0 * spacing_m,
                "{spacing_m}: first dropped"
            );
        }
    }
    assert_eq!(resolved_octaves(50.0, 1e-3), 4);
    assert_eq!(resolved_octaves(50.0, 5e-3), 1, "the 175k slab's spacing");
    assert_eq!(resolved_octaves(50.0, 1e-6), MAX_NOISE_OCTAVES);
    assert_eq!(resolved_octaves(50.0, f64::NAN), 1);
    assert_eq!(resolved_octaves(50.0, -1.0), 1);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// The ledger answers every energy test as the eager in-order sum
    /// would, asks for η in the order entered and no further than the
    /// answer needs, and its total is the eager sum to the bit.
    #[test]
    fn the_energy_ledger_decides_as_the_exact_sum_would(
        steps in proptest::collection::vec(
            (0.0f64..1e-3, 0.0f64..1e8, proptest::bool::weighted(0.2), 0.0f64..1.2),
            1..60,
        )
    ) {
        let mut ledger = EnergyLedger::default();
        let densities: Vec<f64> = steps.iter().map(|s| s.1).collect();
        let mut eager = 0.0;
        let mut asked_up_to = 0;
        for (element, &(weight, eta, known, query)) in steps.iter().enumerate() {
            ledger.enter(element, weight, known.then_some(eta));
            eager += weight * eta;
            // Queries around the eager sum, both sides of it.
            let needed = query * eager;
            let mut asked = Vec::new();
            let exceeds = ledger.exceeds(needed, &mut |e| {
                asked.push(e);
                densities[e]
            });
            proptest::prop_assert_eq!(exceeds, needed < eager);
            proptest::prop_assert!(ledger.known_j() <= eager);
            for &e in &asked {
                proptest::prop_assert!(e >= asked_up_to, "η of {} asked out of order", e);
                asked_up_to = e + 1;
            }
        }
        let mut rest = ledger.pending().map(|e| densities[e]).collect::<Vec<_>>().into_iter();
        ledger.fill(&mut rest);
        proptest::prop_assert_eq!(ledger.total_j().unwrap().to_bits(), eager.to_bits());
    }
}

/// A plane `axis = at`; where `only_beyond` is `(axis2, from)`, only the
/// half of it where `axis2 > from`.
struct Plane {
    axis: usize,
    at: f64,
    only_beyond: Option<(usize, f64)>,
}

fn plane(axis: usize, at: f64) -> Plane {
    Plane {
        axis,
        at,
        only_beyond: None,
    }
}

/// Cuts every edge that crosses one of `planes` where it crosses the first
/// of them.
fn cut_along_planes(mesh: &TetMesh, state: &mut FractureState, planes: &[Plane]) {
    let nodes = mesh.nodes();
    let cuts: Vec<(usize, f64)> = mesh
        .topology()
        .edges
        .iter()
        .enumerate()
        .filter_map(|(e, &[a, b])| {
            let (pa, pb) = (nodes[a as usize], nodes[b as usize]);
            planes.iter().find_map(|plane| {
                let beyond = plane
                    .only_beyond
                    .is_none_or(|(axis, from)| pa[axis] > from && pb[axis] > from);
                let (sa, sb) = (pa[plane.axis] - plane.at, pb[plane.axis] - plane.at);
                (beyond && sa * sb < 0.0).then(|| (e, sa / (sa - sb)))
            })
        })
        .collect();
    state.cut_edges(mesh, &cuts);
}

#[test]
fn a_plate_cut_in_two_has_two_fragments_and_one_crack_across_it() {
    let mesh = box_mesh([0.2, 0.2, 0.01], [20, 20, 2], None).unwrap();
    let (lo, _) = mesh.bounds();
    let mut state = FractureState::new(&mesh);
    // Off the nodes (spaced 1 cm): every cut is a real one.
    cut_along_planes(&mesh, &mut state, &[plane(0, lo.x + 0.0923)]);
    let pieces = fragments(&mesh, &state, DENSITY);
    let pattern = Pattern::of(&mesh, &state, &pieces);
    assert!(rel(pattern.thickness_m, 0.01) < 1e-12, "{pattern:?}");
    assert!(rel(pattern.area_m2, 0.04) < 1e-12, "{pattern:?}");
    assert_eq!((pattern.fragments, pattern.gap_fragments), (2, 0));
    let left = 0.0923 / 0.2;
    assert!(rel(pattern.fragment_areas[0], 1.0 - left) < 1e-12);
    assert!(rel(pattern.fragment_areas[1], left) < 1e-12);
    // Across the whole width: 0.2 m, over √(0.04 m²).
    assert_eq!(pattern.crack_lengths.len(), 1);
    assert!(rel(pattern.crack_lengths[0], 1.0) < 1e-12, "{pattern:?}");
    assert!(pattern.junction_degrees.is_empty());
    assert!(pattern.junction_angles_deg.is_empty());
}

#[test]
fn a_plate_cut_in_quarters_has_four_cracks_meeting_at_one_junction() {
    let mesh = box_mesh([0.2, 0.2, 0.01], [20, 20, 2], None).unwrap();
    let (lo, _) = mesh.bounds();
    let (a, b) = (0.0923, 0.1137);
    let mut state = FractureState::new(&mesh);
    cut_along_planes(&mesh, &mut state, &[plane(0, lo.x + a), plane(1, lo.y + b)]);
    let pieces = fragments(&mesh, &state, DENSITY);
    let pattern = Pattern::of(&mesh, &state, &pieces);
    assert_eq!(pattern.fragments, 4, "{pattern:?}");
    assert_eq!(pattern.junction_degrees, vec![4], "{pattern:?}");
    assert_eq!(pattern.junction_angles_deg.len(), 4, "{pattern:?}");
    for angle in &pattern.junction_angles_deg {
        assert!((angle - 90.0).abs() < 1e-6, "{pattern:?}");
    }
    // The gaps at the junction hold a few tets' worth of volume (one tet is
    // 2·10⁻⁴ of the plate).
    let (x, y) = (a / 0.2, b / 0.2);
    let mut areas = [x * y, x * (1.0 - y), (1.0 - x) * y, (1.0 - x) * (1.0 - y)];
    areas.sort_by(|p, q| q.total_cmp(p));
    for (got, want) in pattern.fragment_areas.iter().zip(areas) {
        assert!((got - want).abs() < 2e-3, "{got} against {want}");
    }
    let gaps: f64 = pieces
        .iter()
        .filter(|f| f.is_gap)
        .map(|f| f.volume_m3)
        .sum();
    let total: f64 = pattern.fragment_areas.iter().sum::<f64>() + gaps / mesh.volume();
    assert!(rel(total, 1.0) < 1e-12, "{total}");
    // Each crack runs from the junction to the plate's edge; the tets at
    // the junction (within an element's diagonal of it) are left out.
    let mut lengths = [b, 0.2 - b, a, 0.2 - a].map(|l| l / 0.2);
    lengths.sort_by(|p, q| q.total_cmp(p));
    let element_diagonal = 0.01 * 2f64.sqrt() / 0.2;
    assert_eq!(pattern.crack_lengths.len(), 4, "{pattern:?}");
    for (got, want) in pattern.crack_lengths.iter().zip(lengths) {
        assert!(
            *got <= want + 1e-12 && *got >= want - element_diagonal,
            "{got} against {want}"
        );
    }
    // Eq. (5.1): zero from itself, and the halves' distance term by term.
    let weights = PatternWeights::default();
    assert_eq!(pattern.distance(&pattern, &weights).total, 0.0);
    let mut halves = FractureState::new(&mesh);
    cut_along_planes(&mesh, &mut halves, &[plane(0, lo.x + a)]);
    let halves = Pattern::of(&mesh, &halves, &fragments(&mesh, &halves, DENSITY));
    let d = pattern.distance(&halves, &weights);
    assert_eq!(d, halves.distance(&pattern, &weights), "symmetric");
    assert!(
        rel(
            d.fragments,
            emd_1d(&pattern.fragment_areas, &halves.fragment_areas)
        ) < 1e-15
    );
    assert_eq!(d.junctions, 1.0);
    assert!(rel(d.total, 3.0 * d.fragments + d.cracks + 1.0) < 1e-15);
}

#[test]
fn a_crack_ending_on_another_makes_a_t_junction_of_180_90_and_90_degrees() {
    let mesh = box_mesh([0.2, 0.2, 0.01], [20, 20, 2], None).unwrap();
    let (lo, _) = mesh.bounds();
    let (a, b) = (lo.x + 0.0923, lo.y + 0.1137);
    let mut state = FractureState::new(&mesh);
    let half = Plane {
        axis: 1,
        at: b,
        only_beyond: Some((0, a)),
    };
    cut_along_planes(&mesh, &mut state, &[plane(0, a), half]);
    let pieces = fragments(&mesh, &state, DENSITY);
    let pattern = Pattern::of(&mesh, &state, &pieces);
    assert_eq!(pattern.fragments, 3, "{pattern:?}");
    assert_eq!(pattern.crack_lengths.len(), 3, "{pattern:?}");
    assert_eq!(pattern.junction_degrees, vec![3], "{pattern:?}");
    let angles = &pattern.junction_angles_deg;
    assert_eq!(angles.len(), 3, "{pattern:?}");
    for (got, want) in angles.iter().zip([90.0, 90.0, 180.0]) {
        assert!((got - want).abs() < 1e-6, "{angles:?}");
    }
}
