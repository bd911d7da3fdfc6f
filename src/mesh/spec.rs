//! Mesh specifications as given on the command line and in scenes: a file
//! path or a generator call.

use super::{
    box_mesh, plate_mesh, read_gmsh_bytes, read_tetgen_strs, tile_mesh, Jitter, MeshError, TetMesh,
};
use std::path::{Path, PathBuf};

/// Where a mesh comes from.
///
/// Text form (see [`MeshSpec::parse`]):
/// * `box:LX,LY,LZ:NX,NY,NZ` — [`box_mesh`] spanning `[0, LX] × [0, LY] × [0, LZ]` m;
/// * `tile:SIDE,THICKNESS:N,NZ` — [`tile_mesh`];
/// * `plate:RADIUS,THICKNESS:RINGS,LAYERS` — [`plate_mesh`];
/// * any generator may end with `:JITTER,SEED` (e.g. `:0.2,7`);
/// * otherwise a file: TetGen `.node` (its `.ele` beside it) or `.ele`, Gmsh `.msh`.
#[derive(Debug, Clone, PartialEq)]
pub enum MeshSpec {
    /// `box:…`: [`box_mesh`].
    Box {
        /// Edge lengths (m).
        size_m: [f64; 3],
        /// Cells along x, y, z.
        cells: [usize; 3],
        /// Node displacement, if asked for.
        jitter: Option<Jitter>,
    },
    /// `tile:…`: [`tile_mesh`].
    Tile {
        /// Edge length (m).
        side_m: f64,
        /// Thickness (m).
        thickness_m: f64,
        /// Cells along each side.
        cells: usize,
        /// Cells through the thickness.
        cells_z: usize,
        /// Node displacement, if asked for.
        jitter: Option<Jitter>,
    },
    /// `plate:…`: [`plate_mesh`].
    Plate {
        /// Radius (m).
        radius_m: f64,
        /// Thickness (m).
        thickness_m: f64,
        /// Rings of cells from the centre out.
        rings: usize,
        /// Cell layers through the thickness.
        layers: usize,
        /// Node displacement, if asked for.
        jitter: Option<Jitter>,
    },
    /// A mesh file (TetGen or Gmsh).
    File(PathBuf),
}

impl MeshSpec {
    /// Parses the text form; errors quote the spec and say which part is wrong.
    pub fn parse(spec: &str) -> Result<Self, MeshError> {
        let err = |message: String| MeshError::Spec {
            spec: spec.to_string(),
            message,
        };
        let Some((kind, rest)) = spec.split_once(':') else {
            return Ok(Self::File(spec.into()));
        };
        if !matches!(kind, "box" | "tile" | "plate") {
            return Ok(Self::File(spec.into()));
        }
        let parts: Vec<&str> = rest.split(':').collect();
        if !(2..=3).contains(&parts.len()) {
            return Err(err(format!(
                "expected `{kind}:SIZES:CELLS[:JITTER,SEED]`, got {} part(s) after `{kind}:`",
                parts.len()
            )));
        }
        let floats = |part: &str, what: &str, n: usize| -> Result<Vec<f64>, MeshError> {
            let values: Result<Vec<f64>, _> =
                part.split(',').map(|s| s.trim().parse::<f64>()).collect();
            match values {
                Ok(v) if v.len() == n => Ok(v),
                Ok(v) => Err(err(format!(
                    "{what}: expected {n} numbers, got {}",
                    v.len()
                ))),
                Err(e) => Err(err(format!("{what} `{part}`: {e}"))),
            }
        };
        let counts = |part: &str, what: &str, n: usize| -> Result<Vec<usize>, MeshError> {
            let values: Result<Vec<usize>, _> =
                part.split(',').map(|s| s.trim().parse::<usize>()).collect();
            match values {
                Ok(v) if v.len() == n => Ok(v),
                Ok(v) => Err(err(format!(
                    "{what}: expected {n} whole numbers, got {}",
                    v.len()
                ))),
                Err(e) => Err(err(format!("{what} `{part}`: {e}"))),
            }
        };
        let jitter = match parts.get(2) {
            None => None,
            Some(part) => {
                let (fraction, seed) = part
                    .split_once(',')
                    .ok_or_else(|| err(format!("jitter `{part}`: expected JITTER,SEED")))?;
                Some(Jitter {
                    fraction: fraction
                        .trim()
                        .parse()
                        .map_err(|e| err(format!("jitter fraction `{fraction}`: {e}")))?,
                    seed: seed
                        .trim()
                        .parse()
                        .map_err(|e| err(format!("jitter seed `{seed}`: {e}")))?,
                })
            }
        };
        Ok(match kind {
            "box" => {
                let s = floats(parts[0], "sizes LX,LY,LZ", 3)?;
                let c = counts(parts[1], "cells NX,NY,NZ", 3)?;
                Self::Box {
                    size_m: [s[0], s[1], s[2]],
                    cells: [c[0], c[1], c[2]],
                    jitter,
                }
            }
            "tile" => {
                let s = floats(parts[0], "sizes SIDE,THICKNESS", 2)?;
                let c = counts(parts[1], "cells N,NZ", 2)?;
                Self::Tile {
                    side_m: s[0],
                    thickness_m: s[1],
                    cells: c[0],
                    cells_z: c[1],
                    jitter,
                }
            }
            _ => {
                let s = floats(parts[0], "sizes RADIUS,THICKNESS", 2)?;
                let c = counts(parts[1], "cells RINGS,LAYERS", 2)?;
                Self::Plate {
                    radius_m: s[0],
                    thickness_m: s[1],
                    rings: c[0],
                    layers: c[1],
                    jitter,
                }
            }
        })
    }

    /// Builds or reads the mesh.
    pub fn load(&self) -> Result<TetMesh, MeshError> {
        self.load_with(&|path| std::fs::read(path))
    }

    /// The files a file spec reads (a TetGen mesh's `.node` and `.ele`, a
    /// Gmsh `.msh`); none for a generator.
    pub fn files(&self) -> Vec<PathBuf> {
        match self {
            Self::File(path) => match path.extension().and_then(|e| e.to_str()) {
                Some("node") | Some("ele") => {
                    vec![path.with_extension("node"), path.with_extension("ele")]
                }
                _ => vec![path.clone()],
            },
            _ => Vec::new(),
        }
    }

    /// Builds the mesh, reading its files through `read` (a file's bytes
    /// by path): from disk in [`MeshSpec::load`], from a session log's
    /// copies in a replay.
    pub fn load_with(
        &self,
        read: &dyn Fn(&Path) -> std::io::Result<Vec<u8>>,
    ) -> Result<TetMesh, MeshError> {
        let text = |path: &Path| -> Result<String, MeshError> {
            let bytes = read(path).map_err(|e| MeshError::io(path, e))?;
            String::from_utf8(bytes).map_err(|_| MeshError::Format {
                path: path.to_path_buf(),
                message: "not UTF-8 text".into(),
            })
        };
        match self {
            Self::Box {
                size_m,
                cells,
                jitter,
            } => box_mesh(*size_m, *cells, *jitter),
            Self::Tile {
                side_m,
                thickness_m,
                cells,
                cells_z,
                jitter,
            } => tile_mesh(*side_m, *thickness_m, *cells, *cells_z, *jitter),
            Self::Plate {
                radius_m,
                thickness_m,
                rings,
                layers,
                jitter,
            } => plate_mesh(*radius_m, *thickness_m, *rings, *layers, *jitter),
            Self::File(path) => match path.extension().and_then(|e| e.to_str()) {
                Some("node") | Some("ele") => {
                    let (node, ele) = (path.with_extension("node"), path.with_extension("ele"));
                    read_tetgen_strs(&text(&node)?, &node, &text(&ele)?, &ele)
                }
                Some("msh") => {
                    read_gmsh_bytes(&read(path).map_err(|e| MeshError::io(path, e))?, path)
                }
                _ => Err(MeshError::Format {
                    path: path.clone(),
                    message: "unknown mesh format: expected .node/.ele (TetGen), .msh (Gmsh 4.1), \
                              or a generator such as box:0.2,0.1,0.01:20,10,2"
                        .into(),
                }),
            },
        }
    }
}

impl std::str::FromStr for MeshSpec {
    type Err = MeshError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}
