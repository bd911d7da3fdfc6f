//! Meshes: validation, topology, generators, readers and writers.

mod common;

use nalgebra::Point3;
use proptest::prelude::*;
use std::path::Path;
use tessera::mesh::*;

fn assert_closed_outward(points: &[Point3<f64>], triangles: &[[u32; 3]], volume: f64) {
    common::assert_closed_outward(points, triangles, volume, 1e-12, "boundary");
}

#[test]
fn box_mesh_has_exact_volume_counts_and_closed_outward_boundary() {
    let mesh = box_mesh([0.3, 0.2, 0.1], [3, 4, 5], None).unwrap();
    assert_eq!(mesh.tet_count(), 6 * 3 * 4 * 5);
    assert_eq!(mesh.node_count(), 4 * 5 * 6);
    assert!((mesh.volume() - 0.006).abs() < 1e-15);
    let topo = mesh.topology();
    assert_eq!(topo.boundary_faces.len(), 2 * 2 * (3 * 4 + 4 * 5 + 3 * 5));
    let (points, triangles) = mesh.boundary_surface();
    assert_closed_outward(&points, &triangles, mesh.volume());
    // Euler characteristic of a solid ball: V − E + F − T = 1.
    let faces = (4 * mesh.tet_count() + topo.boundary_faces.len()) / 2;
    let euler =
        mesh.node_count() as i64 - topo.edges.len() as i64 + faces as i64 - mesh.tet_count() as i64;
    assert_eq!(euler, 1);
}

#[test]
fn face_neighbours_and_node_adjacency_are_symmetric() {
    let mesh = box_mesh(
        [1.0, 1.0, 1.0],
        [3, 3, 3],
        Some(Jitter {
            fraction: 0.2,
            seed: 3,
        }),
    )
    .unwrap();
    let topo = mesh.topology();
    for (t, neighbours) in topo.face_neighbours.iter().enumerate() {
        for (face, &u) in neighbours.iter().enumerate() {
            if u == NO_NEIGHBOUR {
                continue;
            }
            let back = topo.face_neighbours[u as usize]
                .iter()
                .filter(|&&v| v as usize == t)
                .count();
            assert_eq!(back, 1, "tet {t} face {face} → {u} is not mirrored");
            let mut shared: Vec<u32> = TET_FACES[face].iter().map(|&l| mesh.tets()[t][l]).collect();
            shared.sort();
            let other = mesh.tets()[u as usize];
            assert!(shared.iter().all(|n| other.contains(n)));
        }
    }
    for n in 0..mesh.node_count() {
        for &m in topo.neighbours_of(n) {
            assert!(topo.neighbours_of(m as usize).contains(&(n as u32)));
            assert!(topo.edge_index(n as u32, m).is_some());
        }
    }
    for (t, edges) in topo.tet_edges.iter().enumerate() {
        for (k, &[a, b]) in TET_EDGES.iter().enumerate() {
            let (na, nb) = (mesh.tets()[t][a], mesh.tets()[t][b]);
            assert_eq!(topo.edges[edges[k] as usize], [na.min(nb), na.max(nb)]);
        }
    }
}

#[test]
fn jitter_keeps_volume_and_is_seeded() {
    let jittered = |seed| {
        box_mesh(
            [0.2, 0.2, 0.05],
            [6, 6, 3],
            Some(Jitter {
                fraction: 0.25,
                seed,
            }),
        )
        .unwrap()
    };
    let plain = box_mesh([0.2, 0.2, 0.05], [6, 6, 3], None).unwrap();
    let (a, b, c) = (jittered(7), jittered(7), jittered(8));
    assert!((a.volume() - plain.volume()).abs() < 1e-15);
    assert_eq!(a.nodes(), b.nodes());
    assert_ne!(a.nodes(), c.nodes());
    assert_ne!(a.nodes(), plain.nodes());
    assert!(box_mesh(
        [1.0; 3],
        [2; 3],
        Some(Jitter {
            fraction: 0.5,
            seed: 1
        })
    )
    .is_err());
}

#[test]
fn tile_and_plate_generators() {
    let tile = tile_mesh(0.15, 0.006, 10, 2, None).unwrap();
    let (lo, hi) = tile.bounds();
    assert!((lo.x + 0.075).abs() < 1e-15 && (hi.y - 0.075).abs() < 1e-15 && lo.z == 0.0);
    assert!((tile.volume() - 0.15 * 0.15 * 0.006).abs() < 1e-16);

    let plate = plate_mesh(
        0.1,
        0.01,
        12,
        2,
        Some(Jitter {
            fraction: 0.2,
            seed: 1,
        }),
    )
    .unwrap();
    // The plan is a polygon inscribed in the circle: area 3·6r·R²·sin(2π/6r)/… converges to πR².
    let rings = 12.0;
    let polygon_area = 0.5 * 6.0 * rings * 0.01 * (std::f64::consts::TAU / (6.0 * rings)).sin();
    assert!(
        (plate.volume() - polygon_area * 0.01).abs() < 1e-12,
        "{} vs {}",
        plate.volume(),
        polygon_area * 0.01
    );
    assert!(plate.volume() < std::f64::consts::PI * 0.01 * 0.01);
    let (points, triangles) = plate.boundary_surface();
    assert_closed_outward(&points, &triangles, plate.volume());
}

#[test]
fn validation_rejects_bad_meshes_by_index_and_reorients() {
    let unit = || {
        vec![
            Point3::new(0.0, 0.0, 0.0),
            Point3::new(1.0, 0.0, 0.0),
            Point3::new(0.0, 1.0, 0.0),
            Point3::new(0.0, 0.0, 1.0),
            Point3::new(1.0, 1.0, 1.0),
        ]
    };
    // Negatively oriented tets are flipped, not rejected.
    let mesh = TetMesh::new(unit(), vec![[0, 2, 1, 3]]).unwrap();
    assert!(mesh.tet_volume(0) > 0.0);

    let err = TetMesh::new(unit(), vec![[0, 1, 2, 3], [0, 1, 2, 9]]).unwrap_err();
    assert!(
        matches!(
            err,
            MeshError::NodeIndexOutOfRange {
                tet: 1,
                index: 9,
                nodes: 5
            }
        ),
        "{err}"
    );
    let err = TetMesh::new(unit(), vec![[0, 1, 2, 3], [3, 2, 1, 0]]).unwrap_err();
    assert!(
        matches!(err, MeshError::DuplicateTet { tet: 1, first: 0 }),
        "{err}"
    );
    let mut flat = unit();
    flat[4] = Point3::new(0.5, 0.5, 0.0);
    let err = TetMesh::new(flat, vec![[0, 1, 2, 3], [0, 1, 2, 4]]).unwrap_err();
    assert!(
        matches!(err, MeshError::DegenerateTet { tet: 1, .. }),
        "{err}"
    );
    let err = TetMesh::new(unit(), vec![[0, 1, 1, 3]]).unwrap_err();
    assert!(matches!(err, MeshError::DegenerateTet { tet: 0, .. }));
    let mut nan = unit();
    nan[2].y = f64::NAN;
    assert!(matches!(
        TetMesh::new(nan, vec![[0, 1, 2, 3]]).unwrap_err(),
        MeshError::NonFiniteCoordinate { node: 2 }
    ));
    assert!(matches!(
        TetMesh::new(unit(), vec![]).unwrap_err(),
        MeshError::Empty
    ));
    // Three tets on one face.
    let mut fan = unit();
    fan.push(Point3::new(0.3, 0.3, -1.0));
    let err = TetMesh::new(fan, vec![[0, 1, 2, 3], [0, 1, 2, 5], [0, 1, 2, 4]]).unwrap_err();
    assert!(matches!(err, MeshError::NonManifoldFace { .. }), "{err}");
}

const NODE: &str = "# two tets sharing a face\n5 3 0 1\n1 0 0 0 1\n2 1 0 0 1\n3 0 1 0 1\n4 0 0 1 1  # apex\n5 1 1 1 1\n";
const ELE: &str = "2 4 1\n1 1 2 3 4 7\n\n2 2 3 4 5 7\n";

#[test]
fn tetgen_reader_reads_one_based_and_zero_based_files() {
    let mesh = read_tetgen_strs(NODE, Path::new("a.node"), ELE, Path::new("a.ele")).unwrap();
    assert_eq!((mesh.node_count(), mesh.tet_count()), (5, 2));
    assert_eq!(mesh.topology().boundary_faces.len(), 6);
    let zero_node = "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n";
    let zero_ele = "1 4 0\n0 0 1 2 3\n";
    let mesh =
        read_tetgen_strs(zero_node, Path::new("z.node"), zero_ele, Path::new("z.ele")).unwrap();
    assert!((mesh.volume() - 1.0 / 6.0).abs() < 1e-15);
    // Ten-node tets are read by their corners.
    let ele10 = "1 10 0\n0 0 1 2 3 0 0 0 0 0 0\n";
    assert_eq!(
        read_tetgen_strs(zero_node, Path::new("z.node"), ele10, Path::new("z.ele"))
            .unwrap()
            .tet_count(),
        1
    );
}

#[test]
fn tetgen_reader_errors_name_file_and_line() {
    let check = |node: &str, ele: &str, want: &str| {
        let err = read_tetgen_strs(node, Path::new("m.node"), ele, Path::new("m.ele"))
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "`{err}` does not contain `{want}`");
    };
    check(
        &NODE.replace("3 0 1 0 1", "3 0 x 0 1"),
        ELE,
        "m.node:5: y `x`",
    );
    check(
        NODE,
        &ELE.replace("2 2 3 4 5", "2 2 3 4 9"),
        "m.ele:4: node 9",
    );
    check(NODE, &ELE.replace("2 2 3 4 5 7", "2 2 3 4 1 7"), "m.ele:4:");
    check("5 2 0 0\n", ELE, "m.node:1: dimension is 2");
    check(
        &NODE.replace("5 1 1 1 1\n", ""),
        ELE,
        "m.node: file ends before point 5 of 5",
    );
    check(NODE, "2 4 0\n1 1 2 3 4\n2 1 2 3 4\n", "repeats tet 0");
    check(NODE, "1 4 0\n1 1 2 3 4\n1 1 2 3 5\n", "m.ele:3: data after");
}

#[test]
fn gmsh_reader_reads_the_fixture_and_reports_errors() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cube.msh");
    let mesh = read_gmsh(&path).unwrap();
    assert!(mesh.tet_count() > 10);
    assert!(
        (mesh.volume() - 1e-6).abs() < 1e-18,
        "1 cm cube volume {}",
        mesh.volume()
    );
    let (points, triangles) = mesh.boundary_surface();
    assert_closed_outward(&points, &triangles, mesh.volume());

    let bytes = std::fs::read(&path).unwrap();
    let truncated = &bytes[..bytes.len() * 2 / 3];
    let err = read_gmsh_bytes(truncated, Path::new("cut.msh"))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("cut.msh"), "{err}");
    let err = read_gmsh(Path::new("/nonexistent/x.msh"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("/nonexistent/x.msh"), "{err}");
}

#[test]
fn spec_parsing() {
    assert_eq!(
        MeshSpec::parse("box:1,2,3:4,5,6").unwrap(),
        MeshSpec::Box {
            size_m: [1.0, 2.0, 3.0],
            cells: [4, 5, 6],
            jitter: None
        }
    );
    assert!(matches!(
        MeshSpec::parse("tile:0.15,0.006:30,2:0.1,9").unwrap(),
        MeshSpec::Tile {
            cells: 30,
            jitter: Some(Jitter { seed: 9, .. }),
            ..
        }
    ));
    assert!(matches!(
        MeshSpec::parse("plate:0.1,0.01:8,2").unwrap(),
        MeshSpec::Plate { rings: 8, .. }
    ));
    assert_eq!(
        MeshSpec::parse("meshes/a.node").unwrap(),
        MeshSpec::File("meshes/a.node".into())
    );
    for (bad, want) in [
        ("box:1,2:3,4,5", "expected 3 numbers"),
        ("box:1,2,3:4,5", "expected 3 whole numbers"),
        ("box:1,a,3:4,5,6", "`1,a,3`"),
        ("box:1,2,3:4,5,6:0.1", "JITTER,SEED"),
        ("tile:1,2", "part(s)"),
    ] {
        let err = MeshSpec::parse(bad).unwrap_err().to_string();
        assert!(
            err.contains(want) && err.contains(bad),
            "`{err}` lacks `{want}`"
        );
    }
    let err = MeshSpec::parse("box:1,2,3:0,1,1")
        .unwrap()
        .load()
        .unwrap_err()
        .to_string();
    assert!(err.contains("at least 1"), "{err}");
    let err = MeshSpec::parse("mesh.stl")
        .unwrap()
        .load()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("mesh.stl") && err.contains("unknown mesh format"),
        "{err}"
    );
}

#[test]
fn writers_produce_readable_files() {
    let dir = tempfile::tempdir().unwrap();
    let mesh = box_mesh([1.0, 1.0, 1.0], [2, 2, 2], None).unwrap();
    let (points, triangles) = mesh.boundary_surface();
    write_obj(&dir.path().join("s.obj"), &points, &triangles).unwrap();
    let obj = std::fs::read_to_string(dir.path().join("s.obj")).unwrap();
    assert_eq!(
        obj.lines().filter(|l| l.starts_with("v ")).count(),
        points.len()
    );
    assert_eq!(
        obj.lines().filter(|l| l.starts_with("f ")).count(),
        triangles.len()
    );
    write_ply(&dir.path().join("s.ply"), &points, &triangles).unwrap();
    let ply = std::fs::read_to_string(dir.path().join("s.ply")).unwrap();
    assert!(ply.contains(&format!("element face {}", triangles.len())));

    let volumes: Vec<f64> = (0..mesh.tet_count()).map(|t| mesh.tet_volume(t)).collect();
    let displacement: Vec<f64> = mesh.nodes().iter().flat_map(|p| [p.x, 0.0, 0.0]).collect();
    let cells = [CellField {
        name: "volume",
        components: 1,
        values: &volumes,
    }];
    let nodes = [NodeField {
        name: "u",
        components: 3,
        values: &displacement,
    }];
    write_vtk(&dir.path().join("m.vtk"), &mesh, &cells, &nodes).unwrap();
    let vtk = std::fs::read_to_string(dir.path().join("m.vtk")).unwrap();
    assert!(vtk.contains(&format!(
        "CELLS {} {}",
        mesh.tet_count(),
        5 * mesh.tet_count()
    )));
    assert!(vtk.contains("SCALARS u double 3"));
    write_vtk(&dir.path().join("m.vtu"), &mesh, &cells, &nodes).unwrap();
    let vtu = std::fs::read_to_string(dir.path().join("m.vtu")).unwrap();
    assert_eq!(
        vtu.matches("<DataArray").count(),
        vtu.matches("</DataArray>").count()
    );
    assert!(vtu.contains(&format!(r#"NumberOfCells="{}""#, mesh.tet_count())));

    let short = [CellField {
        name: "bad",
        components: 1,
        values: &volumes[1..],
    }];
    let err = write_vtk(&dir.path().join("x.vtk"), &mesh, &short, &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("x.vtk") && err.contains("bad"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn tetgen_reader_never_panics_on_arbitrary_text(node in "[0-9 .#e\\-\\n]{0,200}", ele in "[0-9 #\\-\\n]{0,120}") {
        let _ = read_tetgen_strs(&node, Path::new("p.node"), &ele, Path::new("p.ele"));
    }

    #[test]
    fn tetgen_reader_never_panics_on_mutated_files(pos in 0usize..200, byte in any::<u8>(), which in any::<bool>()) {
        let (mut node, mut ele) = (NODE.as_bytes().to_vec(), ELE.as_bytes().to_vec());
        let target = if which { &mut node } else { &mut ele };
        let at = pos % target.len();
        target[at] = byte;
        let (node, ele) = (String::from_utf8_lossy(&node), String::from_utf8_lossy(&ele));
        let _ = read_tetgen_strs(&node, Path::new("p.node"), &ele, Path::new("p.ele"));
    }

    #[test]
    fn gmsh_reader_never_panics(cut in 0usize..4000, pos in 0usize..4000, byte in any::<u8>()) {
        let bytes = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cube.msh")).unwrap();
        let mut mutated = bytes[..cut.min(bytes.len())].to_vec();
        if !mutated.is_empty() {
            let at = pos % mutated.len();
            mutated[at] = byte;
        }
        let _ = read_gmsh_bytes(&mutated, Path::new("p.msh"));
    }

    #[test]
    fn spec_parser_never_panics(spec in "(box|tile|plate|x)?:?[0-9.,:a-z\\-]{0,30}") {
        let _ = MeshSpec::parse(&spec);
    }
}

/// Found by `tools/fuzz.sh` (target `tetgen`): attribute counts near
/// `usize::MAX` overflowed the expected field count.
#[test]
fn tetgen_attribute_counts_near_the_limit_are_errors_not_overflows() {
    use std::path::Path;
    let ele = "1 4 0\n1 1 2 3 4\n";
    let huge = "4 3 18446744073709551615 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n";
    let mesh = tessera::mesh::read_tetgen_strs(huge, Path::new("a.node"), ele, Path::new("a.ele"));
    assert!(
        mesh.is_ok(),
        "fewer fields than declared attributes are allowed: {mesh:?}"
    );
    let node = "4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n";
    let huge_ele = "1 4 18446744073709551615\n1 1 2 3 4\n";
    let mesh =
        tessera::mesh::read_tetgen_strs(node, Path::new("a.node"), huge_ele, Path::new("a.ele"));
    assert!(mesh.is_ok(), "{mesh:?}");
}

/// Found by `tools/fuzz.sh` (target `msh`): header counts that contradict
/// each other (no nodes, or a largest tag below the smallest) overflowed
/// inside mshio's parser, and an oversized data size panicked in it.
#[test]
fn msh_headers_whose_counts_contradict_each_other_are_errors() {
    use std::path::Path;
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cube.msh"),
    )
    .unwrap();
    let original = tessera::mesh::read_gmsh_bytes(text.as_bytes(), Path::new("cube.msh")).unwrap();
    for header in ["27 0 1 339", "27 339 339 1"] {
        let edited = text.replacen("$Nodes\n27 339 1 339\n", &format!("$Nodes\n{header}\n"), 1);
        assert_ne!(edited, text);
        // Refused naming the file, or (the counts being hints to the
        // parser) read as the same mesh; never a panic.
        match tessera::mesh::read_gmsh_bytes(edited.as_bytes(), Path::new("edited.msh")) {
            Err(e) => assert!(e.to_string().starts_with("edited.msh"), "{header}: {e}"),
            Ok(mesh) => assert_eq!(mesh.tets(), original.tets(), "{header}"),
        }
    }
    let edited = text.replacen("4.1 0 8", "4.1 0 99999999999", 1);
    assert_ne!(edited, text);
    let err = tessera::mesh::read_gmsh_bytes(edited.as_bytes(), Path::new("edited.msh"))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("edited.msh") && err.contains("MSH"),
        "{err}"
    );
}
