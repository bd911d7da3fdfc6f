//! On-disk cache of solved modes, keyed by a hash of the mesh, the elastic
//! material parameters and the eigensolver settings. Damping and fracture
//! parameters are not in the key: they do not change the mode shapes, and the
//! damped dynamics and modal stresses are rebuilt at load.

use super::basis::Modes;
use super::eigen::EigenSettings;
use super::ModalError;
use crate::config::Material;
use crate::mesh::TetMesh;
use faer::Mat;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Bumped whenever the stored layout or the solver's meaning changes.
const FORMAT_VERSION: u32 = 3;

/// A directory of cached modal bases.
#[derive(Debug, Clone)]
pub struct ModalCache {
    dir: PathBuf,
}

#[derive(Serialize, Deserialize)]
struct CachedModes {
    version: u32,
    key: [u8; 16],
    rows: u64,
    eigenvalues: Vec<f64>,
    residuals: Vec<f64>,
    /// Column-major, `rows × eigenvalues.len()`.
    shapes: Vec<f64>,
    /// The eigensolver factor's fill-reducing ordering (forward
    /// permutation of the DOFs), empty if it had none: a basis loaded
    /// from here factorises for its static correction without ordering
    /// again (the factor checks it is a permutation of its DOFs, else
    /// orders anew).
    ordering: Vec<u32>,
}

/// `$TESSERA_CACHE_DIR`, else `$XDG_CACHE_HOME/tessera/modal`, else
/// `~/.cache/tessera/modal`, else `.tessera-cache/modal`.
pub fn default_cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("TESSERA_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".tessera-cache"));
    base.join("tessera").join("modal")
}

impl ModalCache {
    /// A cache in `dir` (created when first written).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The cache's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn key(mesh: &TetMesh, material: &Material, settings: &EigenSettings) -> [u8; 16] {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(&FORMAT_VERSION.to_le_bytes());
        h.update(&mesh.content_hash().to_le_bytes());
        h.update(&material.elastic_hash().to_le_bytes());
        h.update(&(settings.modes as u64).to_le_bytes());
        h.update(&(settings.guard as u64).to_le_bytes());
        h.update(&settings.shift.to_le_bytes());
        h.update(settings.element.name().as_bytes());
        h.digest128().to_le_bytes()
    }

    /// Where the entry for these inputs lives.
    pub fn path_for(
        &self,
        mesh: &TetMesh,
        material: &Material,
        settings: &EigenSettings,
    ) -> PathBuf {
        let key = Self::key(mesh, material, settings);
        let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{hex}.modes"))
    }

    /// The cached modes, `None` on a miss. A damaged or stale entry is
    /// reported in the log and treated as a miss (it will be overwritten).
    pub fn load(
        &self,
        mesh: &TetMesh,
        material: &Material,
        settings: &EigenSettings,
    ) -> Result<Option<Modes>, ModalError> {
        let path = self.path_for(mesh, material, settings);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(ModalError::Cache {
                    path,
                    message: e.to_string(),
                })
            }
        };
        let key = Self::key(mesh, material, settings);
        let rows = 3 * settings.element.node_count(mesh);
        match postcard::from_bytes::<CachedModes>(&bytes) {
            Ok(c)
                if c.version == FORMAT_VERSION
                    && c.key == key
                    && c.rows as usize == rows
                    && c.eigenvalues.len() == settings.modes
                    && c.residuals.len() == settings.modes
                    && c.shapes.len() == rows * settings.modes =>
            {
                let shapes = Mat::from_fn(rows, settings.modes, |i, j| c.shapes[j * rows + i]);
                tracing::debug!(path = %path.display(), "modal cache hit");
                Ok(Some(Modes {
                    eigenvalues: c.eigenvalues,
                    shapes,
                    residuals: c.residuals,
                    element: settings.element,
                    static_correction: None,
                    factor_ordering: (!c.ordering.is_empty())
                        .then(|| c.ordering.iter().map(|&i| i as usize).collect()),
                }))
            }
            _ => {
                tracing::warn!(path = %path.display(), "ignoring a damaged or stale modal cache entry");
                Ok(None)
            }
        }
    }

    /// Stores modes atomically (write to a temporary file, then rename).
    pub fn store(
        &self,
        mesh: &TetMesh,
        material: &Material,
        settings: &EigenSettings,
        modes: &Modes,
    ) -> Result<(), ModalError> {
        let shapes = &modes.shapes;
        let path = self.path_for(mesh, material, settings);
        let error = |message: String| ModalError::Cache {
            path: path.clone(),
            message,
        };
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| error(format!("cannot create the directory: {e}")))?;
        let rows = shapes.nrows();
        let mut flat = Vec::with_capacity(rows * shapes.ncols());
        for j in 0..shapes.ncols() {
            flat.extend((0..rows).map(|i| shapes[(i, j)]));
        }
        let entry = CachedModes {
            version: FORMAT_VERSION,
            key: Self::key(mesh, material, settings),
            rows: rows as u64,
            eigenvalues: modes.eigenvalues.clone(),
            residuals: modes.residuals.clone(),
            shapes: flat,
            ordering: modes
                .static_correction
                .as_ref()
                .and_then(|c| c.ordering())
                .and_then(|forward| forward.iter().map(|&i| u32::try_from(i).ok()).collect())
                .unwrap_or_default(),
        };
        let bytes = postcard::to_stdvec(&entry).map_err(|e| error(e.to_string()))?;
        // Unique per store: two analyses of one problem may finish at once
        // (in this process or another).
        static STORES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let store = STORES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let temporary = path.with_extension(format!("tmp{}-{store}", std::process::id()));
        std::fs::write(&temporary, bytes).map_err(|e| error(e.to_string()))?;
        std::fs::rename(&temporary, &path).map_err(|e| error(e.to_string()))?;
        Ok(())
    }
}
