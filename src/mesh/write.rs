//! Writers: triangle surfaces as OBJ or PLY, tet meshes with fields as VTK
//! (legacy `.vtk` or XML `.vtu`, both ASCII) for ParaView.

use super::{MeshError, TetMesh};
use nalgebra::Point3;
use std::io::{BufWriter, Write};
use std::path::Path;

/// A per-tet field: `components` values per tet (1 for scalars, 3 for vectors, 6/9 for tensors).
#[derive(Debug, Clone)]
pub struct CellField<'a> {
    /// The field's name in the file.
    pub name: &'a str,
    /// Values per tet.
    pub components: usize,
    /// The values, tet-major.
    pub values: &'a [f64],
}

/// A per-node field: `components` values per node.
#[derive(Debug, Clone)]
pub struct NodeField<'a> {
    /// The field's name in the file.
    pub name: &'a str,
    /// Values per node.
    pub components: usize,
    /// The values, node-major.
    pub values: &'a [f64],
}

impl TetMesh {
    /// The boundary as an indexed triangle surface (only boundary nodes,
    /// renumbered), outward oriented.
    pub fn boundary_surface(&self) -> (Vec<Point3<f64>>, Vec<[u32; 3]>) {
        let mut index = vec![u32::MAX; self.node_count()];
        let mut points = Vec::new();
        let triangles = self
            .topology()
            .boundary_faces
            .iter()
            .map(|f| {
                f.nodes.map(|n| {
                    if index[n as usize] == u32::MAX {
                        index[n as usize] = points.len() as u32;
                        points.push(self.nodes()[n as usize]);
                    }
                    index[n as usize]
                })
            })
            .collect();
        (points, triangles)
    }
}

fn create(path: &Path) -> Result<BufWriter<std::fs::File>, MeshError> {
    let file = std::fs::File::create(path).map_err(|e| MeshError::io(path, e))?;
    Ok(BufWriter::new(file))
}

fn finish(path: &Path, result: std::io::Result<BufWriter<std::fs::File>>) -> Result<(), MeshError> {
    result
        .and_then(|mut w| w.flush())
        .map_err(|e| MeshError::io(path, e))
}

/// Writes a triangle surface as Wavefront OBJ.
pub fn write_obj(
    path: &Path,
    points: &[Point3<f64>],
    triangles: &[[u32; 3]],
) -> Result<(), MeshError> {
    let mut w = create(path)?;
    let result = (|| {
        writeln!(
            w,
            "# tessera surface: {} vertices, {} triangles",
            points.len(),
            triangles.len()
        )?;
        for p in points {
            writeln!(w, "v {} {} {}", p.x, p.y, p.z)?;
        }
        for t in triangles {
            writeln!(w, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1)?;
        }
        Ok(w)
    })();
    finish(path, result)
}

/// Writes a triangle surface as ASCII PLY.
pub fn write_ply(
    path: &Path,
    points: &[Point3<f64>],
    triangles: &[[u32; 3]],
) -> Result<(), MeshError> {
    let mut w = create(path)?;
    let result = (|| {
        writeln!(w, "ply\nformat ascii 1.0\ncomment tessera surface")?;
        writeln!(
            w,
            "element vertex {}\nproperty double x\nproperty double y\nproperty double z",
            points.len()
        )?;
        writeln!(
            w,
            "element face {}\nproperty list uchar uint vertex_indices\nend_header",
            triangles.len()
        )?;
        for p in points {
            writeln!(w, "{} {} {}", p.x, p.y, p.z)?;
        }
        for t in triangles {
            writeln!(w, "3 {} {} {}", t[0], t[1], t[2])?;
        }
        Ok(w)
    })();
    finish(path, result)
}

/// Writes the tet mesh with fields: XML `.vtu` when `path` ends in `.vtu`,
/// legacy `.vtk` otherwise. Field lengths are checked against the mesh.
pub fn write_vtk(
    path: &Path,
    mesh: &TetMesh,
    cell_fields: &[CellField],
    node_fields: &[NodeField],
) -> Result<(), MeshError> {
    for f in cell_fields {
        check_field(path, f.name, f.components, f.values.len(), mesh.tet_count())?;
    }
    for f in node_fields {
        check_field(
            path,
            f.name,
            f.components,
            f.values.len(),
            mesh.node_count(),
        )?;
    }
    let mut w = create(path)?;
    let xml = path.extension().is_some_and(|e| e == "vtu");
    let result = if xml {
        write_vtu_body(&mut w, mesh, cell_fields, node_fields).map(|_| w)
    } else {
        write_legacy_body(&mut w, mesh, cell_fields, node_fields).map(|_| w)
    };
    finish(path, result)
}

fn check_field(
    path: &Path,
    name: &str,
    components: usize,
    len: usize,
    count: usize,
) -> Result<(), MeshError> {
    if components == 0 || len != components * count || name.contains(char::is_whitespace) {
        return Err(MeshError::Format {
            path: path.to_path_buf(),
            message: format!(
                "field `{name}` has {len} values; expected {components} per entry × {count} entries and a name without spaces"
            ),
        });
    }
    Ok(())
}

const VTK_TETRA: u8 = 10;

fn write_legacy_body(
    w: &mut impl Write,
    mesh: &TetMesh,
    cell_fields: &[CellField],
    node_fields: &[NodeField],
) -> std::io::Result<()> {
    writeln!(
        w,
        "# vtk DataFile Version 3.0\ntessera tet mesh\nASCII\nDATASET UNSTRUCTURED_GRID"
    )?;
    writeln!(w, "POINTS {} double", mesh.node_count())?;
    for p in mesh.nodes() {
        writeln!(w, "{} {} {}", p.x, p.y, p.z)?;
    }
    writeln!(w, "CELLS {} {}", mesh.tet_count(), mesh.tet_count() * 5)?;
    for t in mesh.tets() {
        writeln!(w, "4 {} {} {} {}", t[0], t[1], t[2], t[3])?;
    }
    writeln!(w, "CELL_TYPES {}", mesh.tet_count())?;
    for _ in 0..mesh.tet_count() {
        writeln!(w, "{VTK_TETRA}")?;
    }
    let mut write_fields =
        |header: &str, fields: Vec<(&str, usize, &[f64])>| -> std::io::Result<()> {
            if fields.is_empty() {
                return Ok(());
            }
            writeln!(w, "{header}")?;
            for (name, components, values) in fields {
                writeln!(
                    w,
                    "SCALARS {name} double {components}\nLOOKUP_TABLE default"
                )?;
                for chunk in values.chunks(components) {
                    let line: Vec<String> = chunk.iter().map(|v| v.to_string()).collect();
                    writeln!(w, "{}", line.join(" "))?;
                }
            }
            Ok(())
        };
    write_fields(
        &format!("CELL_DATA {}", mesh.tet_count()),
        cell_fields
            .iter()
            .map(|f| (f.name, f.components, f.values))
            .collect(),
    )?;
    write_fields(
        &format!("POINT_DATA {}", mesh.node_count()),
        node_fields
            .iter()
            .map(|f| (f.name, f.components, f.values))
            .collect(),
    )
}

fn write_vtu_body(
    w: &mut impl Write,
    mesh: &TetMesh,
    cell_fields: &[CellField],
    node_fields: &[NodeField],
) -> std::io::Result<()> {
    writeln!(w, r#"<?xml version="1.0"?>"#)?;
    writeln!(
        w,
        r#"<VTKFile type="UnstructuredGrid" version="0.1" byte_order="LittleEndian">"#
    )?;
    writeln!(w, "<UnstructuredGrid>")?;
    writeln!(
        w,
        r#"<Piece NumberOfPoints="{}" NumberOfCells="{}">"#,
        mesh.node_count(),
        mesh.tet_count()
    )?;
    let data_array = |w: &mut dyn Write,
                      name: &str,
                      components: usize,
                      values: &[f64]|
     -> std::io::Result<()> {
        writeln!(
            w,
            r#"<DataArray type="Float64" Name="{name}" NumberOfComponents="{components}" format="ascii">"#
        )?;
        for chunk in values.chunks(components.max(1) * 4) {
            let line: Vec<String> = chunk.iter().map(|v| v.to_string()).collect();
            writeln!(w, "{}", line.join(" "))?;
        }
        writeln!(w, "</DataArray>")
    };
    writeln!(w, "<PointData>")?;
    for f in node_fields {
        data_array(w, f.name, f.components, f.values)?;
    }
    writeln!(w, "</PointData>\n<CellData>")?;
    for f in cell_fields {
        data_array(w, f.name, f.components, f.values)?;
    }
    writeln!(w, "</CellData>\n<Points>")?;
    let coords: Vec<f64> = mesh.nodes().iter().flat_map(|p| [p.x, p.y, p.z]).collect();
    data_array(w, "Points", 3, &coords)?;
    writeln!(w, "</Points>\n<Cells>")?;
    writeln!(
        w,
        r#"<DataArray type="Int64" Name="connectivity" format="ascii">"#
    )?;
    for t in mesh.tets() {
        writeln!(w, "{} {} {} {}", t[0], t[1], t[2], t[3])?;
    }
    writeln!(w, "</DataArray>")?;
    writeln!(
        w,
        r#"<DataArray type="Int64" Name="offsets" format="ascii">"#
    )?;
    for i in 1..=mesh.tet_count() {
        writeln!(w, "{}", 4 * i)?;
    }
    writeln!(w, "</DataArray>")?;
    writeln!(w, r#"<DataArray type="UInt8" Name="types" format="ascii">"#)?;
    for _ in 0..mesh.tet_count() {
        writeln!(w, "{VTK_TETRA}")?;
    }
    writeln!(
        w,
        "</DataArray>\n</Cells>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>"
    )
}
