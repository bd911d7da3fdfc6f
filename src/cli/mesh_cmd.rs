//! `tessera mesh`: read or generate a mesh, report it, write it out.

use anyhow::Context;
use std::path::PathBuf;
use tessera::mesh::{write_obj, write_ply, write_vtk, CellField, MeshSpec};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Mesh file (.node, .ele, .msh) or generator (box:…, tile:…, plate:…).
    #[arg(long)]
    pub mesh: String,
    /// Write the mesh: boundary surface as .obj or .ply, tet mesh as .vtk or .vtu.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let mesh = MeshSpec::parse(&args.mesh)?.load()?;
    let (lo, hi) = mesh.bounds();
    let topo = mesh.topology();
    if let Some(out) = &args.out {
        let (points, triangles) = mesh.boundary_surface();
        match out.extension().and_then(|e| e.to_str()) {
            Some("obj") => write_obj(out, &points, &triangles)?,
            Some("ply") => write_ply(out, &points, &triangles)?,
            Some("vtk") | Some("vtu") => {
                let volumes: Vec<f64> = (0..mesh.tet_count()).map(|t| mesh.tet_volume(t)).collect();
                let cells = [CellField {
                    name: "volume_m3",
                    components: 1,
                    values: &volumes,
                }];
                write_vtk(out, &mesh, &cells, &[])?
            }
            _ => anyhow::bail!(
                "--out {}: expected a .obj, .ply, .vtk or .vtu file name",
                out.display()
            ),
        }
    }
    let summary = serde_json::json!({
        "mesh": args.mesh,
        "nodes": mesh.node_count(),
        "tets": mesh.tet_count(),
        "edges": topo.edges.len(),
        "boundary_faces": topo.boundary_faces.len(),
        "volume_m3": mesh.volume(),
        "bounds_m": [[lo.x, lo.y, lo.z], [hi.x, hi.y, hi.z]],
        "written": args.out,
    });
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&summary).context("serialising the summary")?
        );
    } else {
        println!(
            "{}: {} nodes, {} tets, {} edges, {} boundary faces, volume {:.6e} m³, bounds [{:.4}, {:.4}, {:.4}]–[{:.4}, {:.4}, {:.4}] m",
            args.mesh,
            mesh.node_count(),
            mesh.tet_count(),
            topo.edges.len(),
            topo.boundary_faces.len(),
            mesh.volume(),
            lo.x, lo.y, lo.z, hi.x, hi.y, hi.z
        );
        if let Some(out) = &args.out {
            println!("wrote {}", out.display());
        }
    }
    Ok(())
}
