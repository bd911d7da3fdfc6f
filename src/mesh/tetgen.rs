//! TetGen `.node` / `.ele` reader (0- or 1-based, as TetGen writes them).
//!
//! Format: <https://wias-berlin.de/software/tetgen/fformats.html>. Comments
//! start with `#`; the numbering base is taken from the first node.

use super::{MeshError, TetMesh};
use nalgebra::Point3;
use std::path::{Path, PathBuf};

/// Reads `X.node` and `X.ele` given either path.
pub fn read_tetgen(path: &Path) -> Result<TetMesh, MeshError> {
    let node_path = path.with_extension("node");
    let ele_path = path.with_extension("ele");
    let node_text =
        std::fs::read_to_string(&node_path).map_err(|e| MeshError::io(&node_path, e))?;
    let ele_text = std::fs::read_to_string(&ele_path).map_err(|e| MeshError::io(&ele_path, e))?;
    read_tetgen_strs(&node_text, &node_path, &ele_text, &ele_path)
}

/// Parses the contents of a `.node` and an `.ele` file; the paths only name
/// the files in errors.
pub fn read_tetgen_strs(
    node_text: &str,
    node_path: &Path,
    ele_text: &str,
    ele_path: &Path,
) -> Result<TetMesh, MeshError> {
    let mut node_lines = DataLines::new(node_text, node_path);
    let (line, header) =
        node_lines.next_required("the header `<points> 3 <attributes> <markers>`")?;
    let count = node_lines.parse_usize(line, header.first(), "point count")?;
    let dimension = node_lines.parse_usize(line, header.get(1), "dimension")?;
    if dimension != 3 {
        return Err(node_lines.error(
            line,
            format!("dimension is {dimension}; only 3 is supported"),
        ));
    }
    let attributes = node_lines.parse_optional_usize(line, header.get(2), "attribute count")?;
    let markers = node_lines.parse_optional_usize(line, header.get(3), "boundary marker count")?;
    if count == 0 {
        return Err(node_lines.error(line, "the file declares 0 points".into()));
    }
    let mut nodes = Vec::with_capacity(count.min(1 << 20));
    let mut base = 0usize;
    for i in 0..count {
        let (line, fields) = node_lines.next_required(&format!("point {} of {count}", i + 1))?;
        // Counts come from the file: saturate rather than overflow.
        let expected = 4usize
            .saturating_add(attributes)
            .saturating_add(markers.min(1));
        if fields.len() < 4 || fields.len() > expected {
            return Err(node_lines.error(
                line,
                format!("expected `<index> <x> <y> <z>` and {attributes} attribute(s), {markers} marker(s); got {} fields", fields.len()),
            ));
        }
        let index = node_lines.parse_usize(line, fields.first(), "point index")?;
        if i == 0 {
            if index > 1 {
                return Err(node_lines.error(
                    line,
                    format!("first point index is {index}; must be 0 or 1"),
                ));
            }
            base = index;
        } else if index != base + i {
            return Err(
                node_lines.error(line, format!("point index {index}; expected {}", base + i))
            );
        }
        let mut xyz = [0.0; 3];
        for (axis, c) in xyz.iter_mut().enumerate() {
            *c = node_lines.parse_f64(line, fields.get(1 + axis), ["x", "y", "z"][axis])?;
        }
        nodes.push(Point3::from(xyz));
    }
    node_lines.expect_end()?;

    let mut ele_lines = DataLines::new(ele_text, ele_path);
    let (line, header) =
        ele_lines.next_required("the header `<tets> <nodes per tet> <attributes>`")?;
    let count = ele_lines.parse_usize(line, header.first(), "tet count")?;
    let per_tet = ele_lines.parse_usize(line, header.get(1), "nodes per tet")?;
    if per_tet != 4 && per_tet != 10 {
        return Err(ele_lines.error(line, format!("{per_tet} nodes per tet; expected 4 or 10")));
    }
    let attributes = ele_lines.parse_optional_usize(line, header.get(2), "attribute count")?;
    let mut tets = Vec::with_capacity(count.min(1 << 20));
    let mut tet_lines = Vec::with_capacity(count.min(1 << 20));
    for i in 0..count {
        let (line, fields) = ele_lines.next_required(&format!("tet {} of {count}", i + 1))?;
        if fields.len() < 1 + per_tet || fields.len() > (1 + per_tet).saturating_add(attributes) {
            return Err(ele_lines.error(
                line,
                format!("expected `<index>`, {per_tet} nodes and {attributes} attribute(s); got {} fields", fields.len()),
            ));
        }
        let index = ele_lines.parse_usize(line, fields.first(), "tet index")?;
        if index != base + i {
            return Err(ele_lines.error(line, format!("tet index {index}; expected {}", base + i)));
        }
        let mut tet = [0u32; 4];
        for (k, slot) in tet.iter_mut().enumerate() {
            let n = ele_lines.parse_usize(line, fields.get(1 + k), "node index")?;
            if n < base || n - base >= nodes.len() {
                return Err(ele_lines.error(
                    line,
                    format!(
                        "node {n} is not in {} (indices {}..={})",
                        node_path.display(),
                        base,
                        base + nodes.len() - 1
                    ),
                ));
            }
            *slot = (n - base) as u32;
        }
        tets.push(tet);
        tet_lines.push(line);
    }
    ele_lines.expect_end()?;
    TetMesh::new(nodes, tets).map_err(|e| match e {
        // Point at the line of the offending tet where we know it.
        MeshError::DegenerateTet { tet, .. } | MeshError::DuplicateTet { tet, .. } => {
            MeshError::Parse {
                path: ele_path.to_path_buf(),
                line: tet_lines[tet],
                message: e.to_string(),
            }
        }
        other => MeshError::invalid(ele_path, other),
    })
}

/// Non-empty, comment-stripped lines with their 1-based line numbers.
struct DataLines<'a> {
    lines: std::iter::Enumerate<std::str::Lines<'a>>,
    path: PathBuf,
}

impl<'a> DataLines<'a> {
    fn new(text: &'a str, path: &Path) -> Self {
        Self {
            lines: text.lines().enumerate(),
            path: path.to_path_buf(),
        }
    }

    fn next_data(&mut self) -> Option<(usize, Vec<&'a str>)> {
        for (i, raw) in self.lines.by_ref() {
            let data = raw.split('#').next().unwrap_or("");
            let fields: Vec<&str> = data.split_whitespace().collect();
            if !fields.is_empty() {
                return Some((i + 1, fields));
            }
        }
        None
    }

    fn next_required(&mut self, what: &str) -> Result<(usize, Vec<&'a str>), MeshError> {
        self.next_data().ok_or_else(|| MeshError::Format {
            path: self.path.clone(),
            message: format!("file ends before {what}"),
        })
    }

    fn expect_end(&mut self) -> Result<(), MeshError> {
        match self.next_data() {
            None => Ok(()),
            Some((line, _)) => {
                Err(self.error(line, "data after the declared number of entries".into()))
            }
        }
    }

    fn error(&self, line: usize, message: String) -> MeshError {
        MeshError::Parse {
            path: self.path.clone(),
            line,
            message,
        }
    }

    fn parse_usize(
        &self,
        line: usize,
        field: Option<&&str>,
        what: &str,
    ) -> Result<usize, MeshError> {
        let field = field.ok_or_else(|| self.error(line, format!("missing {what}")))?;
        field.parse().map_err(|_| {
            self.error(
                line,
                format!("{what} `{field}` is not a non-negative integer"),
            )
        })
    }

    fn parse_optional_usize(
        &self,
        line: usize,
        field: Option<&&str>,
        what: &str,
    ) -> Result<usize, MeshError> {
        match field {
            None => Ok(0),
            Some(_) => self.parse_usize(line, field, what),
        }
    }

    fn parse_f64(&self, line: usize, field: Option<&&str>, what: &str) -> Result<f64, MeshError> {
        let field = field.ok_or_else(|| self.error(line, format!("missing {what}")))?;
        match field.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.error(line, format!("{what} `{field}` is not a finite number"))),
        }
    }
}
