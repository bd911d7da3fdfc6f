use std::path::PathBuf;

/// Everything that can be wrong with a mesh or the file it came from.
#[derive(Debug, thiserror::Error)]
pub enum MeshError {
    #[error("the mesh has no tetrahedra")]
    Empty,
    #[error("the mesh has {nodes} nodes; at most 2^32 - 2 are supported")]
    TooLarge { nodes: usize },
    #[error("node {node} has a non-finite coordinate")]
    NonFiniteCoordinate { node: usize },
    #[error("tet {tet} refers to node {index}, but the mesh has {nodes} nodes")]
    NodeIndexOutOfRange {
        tet: usize,
        index: usize,
        nodes: usize,
    },
    #[error("tet {tet} repeats tet {first} (same four nodes)")]
    DuplicateTet { tet: usize, first: usize },
    #[error("tet {tet} is degenerate (volume {volume:e} m³, or a repeated node)")]
    DegenerateTet { tet: usize, volume: f64 },
    #[error("face {nodes:?} is shared by more than two tets ({tets:?})")]
    NonManifoldFace { nodes: [u32; 3], tets: Vec<usize> },
    #[error("{path}:{line}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Format { path: PathBuf, message: String },
    #[error("{path}: invalid mesh: {source}")]
    Invalid {
        path: PathBuf,
        #[source]
        source: Box<MeshError>,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("mesh spec `{spec}`: {message}")]
    Spec { spec: String, message: String },
}

impl MeshError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn invalid(path: &std::path::Path, source: MeshError) -> Self {
        Self::Invalid {
            path: path.to_path_buf(),
            source: Box::new(source),
        }
    }
}
