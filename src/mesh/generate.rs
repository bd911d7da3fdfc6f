//! Structured generators: boxes and tiles (6-tet Kuhn split per cell) and
//! round plates (concentric rings, prisms split in three).

use super::{MeshError, TetMesh};
use nalgebra::{Point3, Vector3};
use rand::{Rng, SeedableRng};

/// Seeded random displacement of interior nodes, for irregular meshes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Jitter {
    /// Largest displacement along each axis, as a fraction of the local cell
    /// size; at most 0.3 so no tet inverts.
    pub fraction: f64,
    /// Seeds the displacements.
    pub seed: u64,
}

/// A box spanning `[0, size.x] × [0, size.y] × [0, size.z]` metres with
/// `cells` cells along the axes, each split into 6 tets around its main
/// diagonal (Kuhn). The split is the same in every cell, which makes it
/// conforming without alternating cells.
pub fn box_mesh(
    size: [f64; 3],
    cells: [usize; 3],
    jitter: Option<Jitter>,
) -> Result<TetMesh, MeshError> {
    let spec = || format!("box {size:?} {cells:?}");
    check_extent(&spec, &size, &cells)?;
    let [nx, ny, nz] = cells;
    let cell_count = (nx as f64) * (ny as f64) * (nz as f64);
    check_size(
        &spec,
        (nx as f64 + 1.0) * (ny as f64 + 1.0) * (nz as f64 + 1.0),
        6.0 * cell_count,
    )?;
    let node_index = |i: usize, j: usize, k: usize| (i + (nx + 1) * (j + (ny + 1) * k)) as u32;
    let h = Vector3::new(
        size[0] / nx as f64,
        size[1] / ny as f64,
        size[2] / nz as f64,
    );
    let mut nodes = Vec::with_capacity((nx + 1) * (ny + 1) * (nz + 1));
    for k in 0..=nz {
        for j in 0..=ny {
            for i in 0..=nx {
                nodes.push(Point3::new(i as f64 * h.x, j as f64 * h.y, k as f64 * h.z));
            }
        }
    }
    // Kuhn tets of the unit cube: corner bit 0 = x, bit 1 = y, bit 2 = z; the
    // path 0 → e_a → e_a + e_b → 7 for every axis permutation (a, b, c).
    // Odd permutations are negatively oriented, hence the swapped last nodes.
    const KUHN: [[usize; 4]; 6] = [
        [0, 1, 3, 7],
        [0, 1, 7, 5],
        [0, 2, 7, 3],
        [0, 2, 6, 7],
        [0, 4, 5, 7],
        [0, 4, 7, 6],
    ];
    let mut tets = Vec::with_capacity(nx * ny * nz * 6);
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let corner =
                    |b: usize| node_index(i + (b & 1), j + ((b >> 1) & 1), k + ((b >> 2) & 1));
                for t in KUHN {
                    tets.push(t.map(corner));
                }
            }
        }
    }
    if let Some(jitter) = jitter {
        let interior =
            |i: usize, j: usize, k: usize| i > 0 && i < nx && j > 0 && j < ny && k > 0 && k < nz;
        let mut rng = jitter_rng(&spec, jitter)?;
        for k in 0..=nz {
            for j in 0..=ny {
                for i in 0..=nx {
                    if interior(i, j, k) {
                        let n = node_index(i, j, k) as usize;
                        for axis in 0..3 {
                            nodes[n][axis] +=
                                rng.random_range(-1.0..=1.0) * jitter.fraction * h[axis];
                        }
                    }
                }
            }
        }
    }
    TetMesh::new(nodes, tets)
}

/// A square tile `side × side × thickness` metres, centred on the z axis,
/// its bottom face at z = 0: the box generator, shifted.
pub fn tile_mesh(
    side: f64,
    thickness: f64,
    cells: usize,
    cells_z: usize,
    jitter: Option<Jitter>,
) -> Result<TetMesh, MeshError> {
    let mesh = box_mesh([side, side, thickness], [cells, cells, cells_z], jitter)?;
    let offset = Vector3::new(side / 2.0, side / 2.0, 0.0);
    let nodes = mesh.nodes().iter().map(|p| p - offset).collect();
    TetMesh::new(nodes, mesh.tets().to_vec())
}

/// A round plate of `radius` and `thickness` metres, centred on the z axis,
/// its bottom face at z = 0. In plan: `rings` concentric rings, ring `r`
/// carrying `6r` nodes, so triangles stay near-equilateral; across the
/// thickness, `layers` layers of prisms. Each prism is split in three tets
/// using, on each quad face, the diagonal through the face's lowest-numbered
/// node, a rule two neighbouring prisms always agree on (conforming).
pub fn plate_mesh(
    radius: f64,
    thickness: f64,
    rings: usize,
    layers: usize,
    jitter: Option<Jitter>,
) -> Result<TetMesh, MeshError> {
    let spec =
        || format!("plate radius {radius} thickness {thickness} rings {rings} layers {layers}");
    check_extent(&spec, &[radius, radius, thickness], &[rings, rings, layers])?;
    // Ring r holds 6r nodes: 1 + 3·R·(R + 1) per layer, 6R² triangles.
    let (r, l) = (rings as f64, layers as f64);
    check_size(
        &spec,
        (1.0 + 3.0 * r * (r + 1.0)) * (l + 1.0),
        18.0 * r * r * l,
    )?;
    // Plan view: ring r starts at index 1 + 3r(r − 1).
    let ring_start = |r: usize| if r == 0 { 0 } else { 1 + 3 * r * (r - 1) };
    let ring_node = |r: usize, i: usize| {
        if r == 0 {
            0
        } else {
            ring_start(r) + i % (6 * r)
        }
    };
    let mut plan = vec![[0.0f64; 2]];
    for r in 1..=rings {
        let radius_r = radius * r as f64 / rings as f64;
        for i in 0..6 * r {
            let angle = std::f64::consts::TAU * i as f64 / (6 * r) as f64;
            plan.push([radius_r * angle.cos(), radius_r * angle.sin()]);
        }
    }
    // Triangles between ring r − 1 and ring r: walk both rings by angle.
    let mut triangles: Vec<[usize; 3]> = Vec::new();
    for r in 1..=rings {
        let (inner_n, outer_n) = (6 * (r - 1), 6 * r);
        if r == 1 {
            for i in 0..6 {
                triangles.push([0, ring_node(1, i), ring_node(1, i + 1)]);
            }
            continue;
        }
        let (mut i, mut o) = (0usize, 0usize);
        while i < inner_n || o < outer_n {
            // Advance on the ring whose next node comes first in angle.
            let next_inner = (i + 1) as f64 / inner_n as f64;
            let next_outer = (o + 1) as f64 / outer_n as f64;
            if o < outer_n && (i >= inner_n || next_outer <= next_inner) {
                triangles.push([ring_node(r - 1, i), ring_node(r, o), ring_node(r, o + 1)]);
                o += 1;
            } else {
                triangles.push([
                    ring_node(r - 1, i),
                    ring_node(r, o),
                    ring_node(r - 1, i + 1),
                ]);
                i += 1;
            }
        }
    }
    let per_layer = plan.len();
    let mut nodes = Vec::with_capacity(per_layer * (layers + 1));
    for k in 0..=layers {
        let z = thickness * k as f64 / layers as f64;
        nodes.extend(plan.iter().map(|&[x, y]| Point3::new(x, y, z)));
    }
    let mut tets = Vec::with_capacity(triangles.len() * layers * 3);
    for k in 0..layers {
        for tri in &triangles {
            let mut bottom = tri.map(|n| (n + k * per_layer) as u32);
            bottom.sort_unstable();
            let [a, b, c] = bottom;
            let top = |n: u32| n + per_layer as u32;
            tets.push([a, b, c, top(c)]);
            tets.push([a, b, top(b), top(c)]);
            tets.push([a, top(a), top(b), top(c)]);
        }
    }
    if let Some(jitter) = jitter {
        let mut rng = jitter_rng(&spec, jitter)?;
        let h = Vector3::new(
            radius / rings as f64,
            radius / rings as f64,
            thickness / layers as f64,
        );
        for k in 1..layers {
            for r in 1..rings {
                for i in 0..6 * r {
                    let n = k * per_layer + ring_node(r, i);
                    for axis in 0..3 {
                        nodes[n][axis] += rng.random_range(-1.0..=1.0) * jitter.fraction * h[axis];
                    }
                }
            }
        }
    }
    TetMesh::new(nodes, tets)
}

fn check_extent(
    spec: &dyn Fn() -> String,
    size: &[f64; 3],
    cells: &[usize; 3],
) -> Result<(), MeshError> {
    if !size.iter().all(|s| s.is_finite() && *s > 0.0) {
        return Err(MeshError::Spec {
            spec: spec(),
            message: "sizes must be finite and positive".into(),
        });
    }
    if cells.contains(&0) {
        return Err(MeshError::Spec {
            spec: spec(),
            message: "cell counts must be at least 1".into(),
        });
    }
    Ok(())
}

/// Bytes per node and per tet of a mesh once built and validated (the node
/// and tet arrays, the edge and face topology, the duplicate-tet check),
/// measured with `tools/mesh_memory.sh`.
const MESH_BYTES_PER_NODE: f64 = 64.0;
const MESH_BYTES_PER_TET: f64 = 212.0;

/// Refuses a generated mesh whose node or tet count does not fit the node
/// index (u32) or whose memory does not fit the budget, before allocating.
fn check_size(spec: &dyn Fn() -> String, nodes: f64, tets: f64) -> Result<(), MeshError> {
    let limit = |e: crate::limits::LimitError| MeshError::Spec {
        spec: spec(),
        message: e.to_string(),
    };
    crate::limits::check_count(|| "nodes".into(), nodes, f64::from(u32::MAX - 1)).map_err(limit)?;
    crate::limits::check_count(|| "tets".into(), tets, f64::from(u32::MAX - 1)).map_err(limit)?;
    crate::limits::check_memory(
        || {
            format!(
                "{} nodes and {} tets",
                crate::limits::readable(nodes),
                crate::limits::readable(tets)
            )
        },
        nodes * MESH_BYTES_PER_NODE + tets * MESH_BYTES_PER_TET,
    )
    .map_err(limit)
}

fn jitter_rng(
    spec: &dyn Fn() -> String,
    jitter: Jitter,
) -> Result<rand_chacha::ChaCha8Rng, MeshError> {
    if !(0.0..=0.3).contains(&jitter.fraction) {
        return Err(MeshError::Spec {
            spec: spec(),
            message: format!("jitter {} is outside [0, 0.3]", jitter.fraction),
        });
    }
    Ok(rand_chacha::ChaCha8Rng::seed_from_u64(jitter.seed))
}
