use std::path::PathBuf;

/// Everything that can be wrong with a mesh or the file it came from.
#[derive(Debug, thiserror::Error)]
pub enum MeshError {
    /// No tetrahedra.
    #[error("the mesh has no tetrahedra")]
    Empty,
    /// More nodes than a `u32` index can number.
    #[error("the mesh has {nodes} nodes; at most 2^32 - 2 are supported")]
    TooLarge {
        /// Nodes in the mesh.
        nodes: usize,
    },
    /// A node's coordinate is NaN or infinite.
    #[error("node {node} has a non-finite coordinate")]
    NonFiniteCoordinate {
        /// The node.
        node: usize,
    },
    /// A tet refers to a node that does not exist.
    #[error("tet {tet} refers to node {index}, but the mesh has {nodes} nodes")]
    NodeIndexOutOfRange {
        /// The tet.
        tet: usize,
        /// The node index it holds.
        index: usize,
        /// Nodes in the mesh.
        nodes: usize,
    },
    /// Two tets have the same four nodes.
    #[error("tet {tet} repeats tet {first} (same four nodes)")]
    DuplicateTet {
        /// The later tet.
        tet: usize,
        /// The first one.
        first: usize,
    },
    /// A tet has (nearly) no volume or a repeated node.
    #[error("tet {tet} is degenerate (volume {volume:e} m³, or a repeated node)")]
    DegenerateTet {
        /// The tet.
        tet: usize,
        /// Its signed volume (m³).
        volume: f64,
    },
    /// A face is shared by more than two tets.
    #[error("face {nodes:?} is shared by more than two tets ({tets:?})")]
    NonManifoldFace {
        /// The face's nodes.
        nodes: [u32; 3],
        /// The tets sharing it.
        tets: Vec<usize>,
    },
    /// A line of a mesh file cannot be parsed.
    #[error("{path}:{line}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line (from 1).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A mesh file is not in a format this reader takes.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A mesh file parses but its mesh is invalid.
    #[error("{path}: invalid mesh: {source}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with the mesh.
        #[source]
        source: Box<MeshError>,
    },
    /// A file cannot be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A mesh spec cannot be parsed or asks for out-of-range values.
    #[error("mesh spec `{spec}`: {message}")]
    Spec {
        /// The spec as given.
        spec: String,
        /// What is wrong.
        message: String,
    },
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
