//! The stress of a cut body, for issue 27 §2 ("re-solving with the cut"):
//! the static stress of the 1 mm float-glass disc of
//! `tools/star_cracks.sh` (radius 50 mm), pressed at its centre (1 N over
//! its top nodes within 2 mm) and held on a ring of radius 45 mm under it,
//! cut by 0 to 3 straight cracks through its centre at equal angles (0 to 6
//! radial arms), each crack the tets its vertical plane crosses within
//! `ARM_MM` of the centre, removed. Prints the hoop and radial stress on
//! the lower face (MPa per newton) at a few radii and at angles from the
//! first crack: where the cut body carries hoop tension is where the next
//! radial crack starts. The shielding of `fracture/shielding.rs` relieves
//! the intact body's stress instead (docs/fracture.md item 6).
//!
//!   cargo run --release --example cut_disc -- [RINGS] [LAYERS] [ARM_MM]
//!
//! RINGS (default 30) must make 45 mm a whole number of rings (30, 40,
//! 50); LAYERS default 2, ARM_MM 25. Quadratic elements.

use faer::Mat;
use nalgebra::Point3;
use std::f64::consts::PI;
use tessera::config::MaterialLibrary;
use tessera::fem::{ElasticMesh, ElementOrder};
use tessera::mesh::{plate_mesh, TetMesh};
use tessera::modal::{EigenSettings, ModalStress, StaticCorrection};

const RADIUS_M: f64 = 0.05;
const THICKNESS_M: f64 = 0.001;
const SUPPORT_M: f64 = 0.045;
const LOAD_RADIUS_M: f64 = 0.002;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let rings: usize = args.get(1).map_or(Ok(30), |a| a.parse())?;
    let layers: usize = args.get(2).map_or(Ok(2), |a| a.parse())?;
    let arm_m: f64 = args.get(3).map_or(Ok(25.0), |a| a.parse::<f64>())? * 1e-3;
    let library = MaterialLibrary::builtin();
    let glass = library.get("float-glass")?.clone();
    let disc = plate_mesh(RADIUS_M, THICKNESS_M, rings, layers, None)?;
    let spacing = RADIUS_M / rings as f64;
    println!(
        "disc R {} mm, h {} mm, {rings} rings × {layers} layers, arms {} mm; \
         stresses for 1 N at the centre (MPa)",
        RADIUS_M * 1e3,
        THICKNESS_M * 1e3,
        arm_m * 1e3
    );
    for cracks in [0usize, 1, 2, 3] {
        // Crack k runs through the centre along angle k·180°/cracks.
        let angles: Vec<f64> = (0..cracks).map(|k| k as f64 * PI / cracks as f64).collect();
        let mesh = cut(&disc, &angles, arm_m)?;
        let elastic = ElasticMesh::new(&mesh, ElementOrder::Quadratic);
        let dofs = elastic.dofs();
        let mut load = Mat::<f64>::zeros(dofs, 1);
        let nodes = mesh.nodes();
        let on = |p: &Point3<f64>, z: f64| (p.z - z).abs() < 1e-9;
        let top: Vec<usize> = (0..mesh.node_count())
            .filter(|&n| on(&nodes[n], THICKNESS_M) && nodes[n].coords.xy().norm() <= LOAD_RADIUS_M)
            .collect();
        let support: Vec<usize> = (0..mesh.node_count())
            .filter(|&n| {
                on(&nodes[n], 0.0)
                    && (nodes[n].coords.xy().norm() - SUPPORT_M).abs() < 0.3 * spacing
            })
            .collect();
        anyhow::ensure!(
            !top.is_empty() && !support.is_empty(),
            "no load nodes within {LOAD_RADIUS_M} m of the centre, or no support nodes \
             at {SUPPORT_M} m (RINGS must make it a whole number of rings)"
        );
        for &n in &top {
            load[(3 * n + 2, 0)] -= 1.0 / top.len() as f64;
        }
        for &n in &support {
            load[(3 * n + 2, 0)] += 1.0 / support.len() as f64;
        }
        let correction =
            StaticCorrection::new(&elastic, &glass, EigenSettings::new(1).shift, None)?;
        let no_modes = Mat::<f64>::zeros(dofs, 0);
        let shape = correction.residual_shapes(load.as_ref(), no_modes.as_ref(), &[]);
        let stress = ModalStress::new(&elastic, &glass, &shape);
        println!(
            "\n{cracks} crack(s) at {:?}°: {} of {} tets kept; lower face, σ_hoop / σ_radial",
            angles
                .iter()
                .map(|a| (a * 180.0 / PI).round())
                .collect::<Vec<_>>(),
            mesh.tet_count(),
            disc.tet_count()
        );
        print!("{:>8}", "r_mm");
        let bins: Vec<f64> = (0..=12).map(|k| k as f64 * 7.5).collect();
        for b in &bins {
            print!("{:>14}", format!("{b:.1}°"));
        }
        println!();
        for radius_mm in [4.0, 8.0, 12.0, 16.0, 20.0, 30.0] {
            let radius = radius_mm * 1e-3;
            print!("{radius_mm:>8.0}");
            for &b in &bins {
                // The lower-face node nearest the point at this radius and angle.
                let want = Point3::new(
                    radius * (b * PI / 180.0).cos(),
                    radius * (b * PI / 180.0).sin(),
                    0.0,
                );
                let nearest = (0..mesh.node_count())
                    .filter(|&n| on(&nodes[n], 0.0))
                    .min_by(|&a, &c| {
                        (nodes[a] - want)
                            .norm()
                            .total_cmp(&(nodes[c] - want).norm())
                    })
                    .expect("a lower face");
                if (nodes[nearest] - want).norm() > 0.75 * spacing {
                    print!("{:>14}", "cut");
                    continue;
                }
                let s = stress.point_stress(nearest, &[1.0]).map(f64::from);
                let p = nodes[nearest];
                let phi = p.y.atan2(p.x);
                let (c, si) = (phi.cos(), phi.sin());
                // [xx, yy, zz, yz, xz, xy]
                let radial = s[0] * c * c + s[1] * si * si + 2.0 * s[5] * c * si;
                let hoop = s[0] * si * si + s[1] * c * c - 2.0 * s[5] * c * si;
                print!("{:>14}", format!("{:.2}/{:.2}", hoop * 1e-6, radial * 1e-6));
            }
            println!();
        }
    }
    Ok(())
}

/// `mesh` without the tets each crack's plane crosses within `arm_m` of
/// the centre (the planes are vertical, through the centre, at `angles`),
/// its nodes renumbered.
fn cut(mesh: &TetMesh, angles: &[f64], arm_m: f64) -> anyhow::Result<TetMesh> {
    let nodes = mesh.nodes();
    let kept: Vec<[u32; 4]> = mesh
        .tets()
        .iter()
        .copied()
        .filter(|tet| {
            !angles.iter().any(|&a| {
                let (d, n) = ([a.cos(), a.sin()], [-a.sin(), a.cos()]);
                let side = tet.map(|v| {
                    let p = nodes[v as usize];
                    p.x * n[0] + p.y * n[1]
                });
                let crossed = side.iter().any(|&s| s < 0.0) && side.iter().any(|&s| s >= 0.0);
                let along = tet.map(|v| {
                    let p = nodes[v as usize];
                    (p.x * d[0] + p.y * d[1]).abs()
                });
                crossed && along.iter().copied().fold(f64::INFINITY, f64::min) < arm_m
            })
        })
        .collect();
    let mut index = vec![u32::MAX; nodes.len()];
    let mut new_nodes = Vec::new();
    let tets = kept
        .iter()
        .map(|tet| {
            tet.map(|v| {
                if index[v as usize] == u32::MAX {
                    index[v as usize] = new_nodes.len() as u32;
                    new_nodes.push(nodes[v as usize]);
                }
                index[v as usize]
            })
        })
        .collect();
    Ok(TetMesh::new(new_nodes, tets)?)
}
