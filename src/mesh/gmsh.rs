//! Gmsh MSH 4.1 reader (ASCII or binary) through `mshio`. Only linear and
//! quadratic tets are read (quadratic ones by their corners); points, lines
//! and triangles in the file are skipped.

use super::{MeshError, TetMesh};
use mshio::mshfile::ElementType;
use nalgebra::Point3;
use std::collections::HashMap;
use std::path::Path;

/// Reads a Gmsh MSH 4.1 file.
pub fn read_gmsh(path: &Path) -> Result<TetMesh, MeshError> {
    let bytes = std::fs::read(path).map_err(|e| MeshError::io(path, e))?;
    read_gmsh_bytes(&bytes, path)
}

/// What an error should add about the file's MSH version: nothing for a
/// 4.1 file, that only 4.1 is read otherwise.
fn version_note(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(256)]);
    let version = text
        .split("$MeshFormat")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next());
    match version {
        Some("4.1") => String::new(),
        Some(v) => format!("; the file is MSH {v}, and only MSH 4.1 is read (Gmsh: -format msh41)"),
        None => "; no $MeshFormat header: only MSH 4.1 is read".into(),
    }
}

/// Parses MSH 4.1 bytes; `path` only names the file in errors.
pub fn read_gmsh_bytes(bytes: &[u8], path: &Path) -> Result<TetMesh, MeshError> {
    let format_error = |message: String| MeshError::Format {
        path: path.to_path_buf(),
        message,
    };
    let parsed = parse_contained(bytes).ok_or_else(|| {
        format_error(format!(
            "not a valid MSH file: a header's numbers are out of range or contradict each other{}",
            version_note(bytes)
        ))
    })?;
    let msh = parsed.map_err(|e| {
        let trace = e.filtered_backtrace();
        if trace.is_empty() {
            return format_error(format!("not a valid MSH file{}", version_note(bytes)));
        }
        // The innermost parser stopped farthest into the file: its line is
        // where the file is wrong.
        let (rest, kind) = trace
            .iter()
            .min_by_key(|(rest, _)| rest.len())
            .unwrap_or(&trace[0]);
        let offset = bytes.len().saturating_sub(rest.len());
        let line = 1 + bytes[..offset].iter().filter(|&&b| b == b'\n').count();
        let context: Vec<String> = trace
            .iter()
            .rev()
            .filter(|(r, _)| r.len() != rest.len())
            .map(|(_, k)| {
                k.context()
                    .map(str::to_string)
                    .unwrap_or_else(|| k.to_string())
            })
            .collect();
        MeshError::Parse {
            path: path.to_path_buf(),
            line,
            message: format!(
                "{kind}{}{}",
                if context.is_empty() {
                    String::new()
                } else {
                    format!(" (in {})", context.join(" › "))
                },
                version_note(bytes)
            ),
        }
    })?;
    let nodes_section = msh
        .data
        .nodes
        .ok_or_else(|| format_error("no $Nodes section".into()))?;
    let mut nodes = Vec::with_capacity(nodes_section.num_nodes.min(1 << 20) as usize);
    let mut index_of_tag: HashMap<u64, u32> = HashMap::new();
    let mut next_dense_tag = nodes_section.min_node_tag;
    for block in &nodes_section.node_blocks {
        let mut tags: Vec<(u64, usize)> = match &block.node_tags {
            Some(map) => map.iter().map(|(&t, &i)| (t, i)).collect(),
            None => (0..block.nodes.len())
                .map(|i| (next_dense_tag + i as u64, i))
                .collect(),
        };
        tags.sort_unstable_by_key(|&(_, i)| i);
        next_dense_tag += block.nodes.len() as u64;
        for (tag, i) in tags {
            let n = &block.nodes[i];
            if index_of_tag.insert(tag, nodes.len() as u32).is_some() {
                return Err(format_error(format!("node tag {tag} appears twice")));
            }
            nodes.push(Point3::new(n.x, n.y, n.z));
        }
    }
    let elements = msh
        .data
        .elements
        .ok_or_else(|| format_error("no $Elements section".into()))?;
    let mut tets = Vec::new();
    for block in &elements.element_blocks {
        if !matches!(block.element_type, ElementType::Tet4 | ElementType::Tet10) {
            continue;
        }
        for element in &block.elements {
            let mut tet = [0u32; 4];
            for (k, slot) in tet.iter_mut().enumerate() {
                let tag = element.nodes.get(k).copied().ok_or_else(|| {
                    format_error(format!(
                        "element {} has fewer than 4 nodes",
                        element.element_tag
                    ))
                })?;
                *slot = *index_of_tag.get(&tag).ok_or_else(|| {
                    format_error(format!(
                        "element {} refers to unknown node tag {tag}",
                        element.element_tag
                    ))
                })?;
            }
            tets.push(tet);
        }
    }
    if tets.is_empty() {
        return Err(format_error(
            "no tetrahedra (element type 4 or 11) in the file".into(),
        ));
    }
    // Nodes not used by any tet (geometry points, surface-only nodes) are dropped.
    let mut used = vec![u32::MAX; nodes.len()];
    let mut kept = Vec::new();
    for tet in tets.iter_mut() {
        for n in tet.iter_mut() {
            if used[*n as usize] == u32::MAX {
                used[*n as usize] = kept.len() as u32;
                kept.push(nodes[*n as usize]);
            }
            *n = used[*n as usize];
        }
    }
    TetMesh::new(kept, tets).map_err(|e| MeshError::invalid(path, e))
}

/// What `mshio::parse_msh_bytes` returns.
type MshParse<'a> = Result<mshio::MshFile<u64, i32, f64>, mshio::MshParserError<&'a [u8]>>;

/// `mshio::parse_msh_bytes`, with its panics turned into `None`. mshio 0.4.2
/// unwraps integer parses of the header and subtracts header counts
/// unchecked (`max_node_tag - min_node_tag`, `num_nodes - 1`), so a damaged
/// file can panic inside it (found by `fuzz/fuzz_targets/msh.rs`).
fn parse_contained(bytes: &[u8]) -> Option<MshParse<'_>> {
    crate::contained::contained(|| mshio::parse_msh_bytes(bytes))
}
