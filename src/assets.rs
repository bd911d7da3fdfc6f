//! The files shipped with tessera (scenes, hand scripts, the material
//! library, device profiles), compiled into the binary so that a `tessera`
//! copied anywhere (or installed with `cargo install --path .`) finds them.
//!
//! A shipped file is named by its path in the source tree
//! (`configs/scenes/tile-strike.toml`). [`read_text`] reads a path from disk
//! when a file is there (a file on disk overrides a shipped one of the same
//! path) and from the shipped files otherwise, so a shipped scene's
//! relative references (`hand = "../hands/tile-strikes.toml"`) resolve the
//! same way in both.

use std::path::{Component, Path, PathBuf};

/// Where the shipped scenes, hand scripts and device profiles live.
pub const SCENES_DIR: &str = "configs/scenes";
/// Where the shipped hand scripts live.
pub const HANDS_DIR: &str = "configs/hands";
/// Where the shipped perception studies live.
pub const STUDIES_DIR: &str = "configs/studies";
/// Where the shipped device profiles live.
pub const DEVICES_DIR: &str = "devices";

macro_rules! shipped {
    ($($path:literal),* $(,)?) => {
        &[$(($path, include_str!(concat!("../", $path)))),*]
    };
}

/// Every shipped file: its source-tree path and its text.
const FILES: &[(&str, &str)] = shipped![
    "configs/materials.toml",
    "configs/hands/plates-strikes.toml",
    "configs/hands/push.toml",
    "configs/hands/tile-strikes.toml",
    "configs/scenes/bricks.toml",
    "configs/scenes/cube-basin.toml",
    "configs/scenes/cube-pile.toml",
    "configs/scenes/cube-push.toml",
    "configs/scenes/plates-on-shelf.toml",
    "configs/scenes/plates-study.toml",
    "configs/scenes/tile-flat-drop.toml",
    "configs/scenes/tile-on-supports.toml",
    "configs/scenes/tile-strike.toml",
    "configs/studies/plate-weakness-staircase.toml",
    "configs/studies/plate-weakness.toml",
    "devices/sim-arm.toml",
    "devices/tessera-arm.toml",
];

/// The text of the shipped file at `path` (a source-tree path; `.` and
/// `..` components are resolved first).
pub fn shipped(path: &Path) -> Option<&'static str> {
    let wanted = normalise(path)?;
    FILES
        .iter()
        .find(|(p, _)| Path::new(p) == wanted)
        .map(|(_, text)| *text)
}

/// The names (file stems) of the shipped files in `dir`, sorted.
pub fn shipped_names(dir: &str) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = FILES
        .iter()
        .filter_map(|(p, _)| {
            let path = Path::new(p);
            (path.parent() == Some(Path::new(dir)))
                .then(|| path.file_stem().and_then(|s| s.to_str()))
                .flatten()
        })
        .collect();
    names.sort_unstable();
    names
}

/// The text at `path`: the file on disk if there is one, else the shipped
/// file of that path. The error is the disk's.
pub fn read_text(path: &Path) -> std::io::Result<String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => match shipped(path) {
            Some(text) => Ok(text.to_owned()),
            None => Err(error),
        },
        Err(error) => Err(error),
    }
}

/// Whether `path` is a file on disk or a shipped file.
pub fn exists(path: &Path) -> bool {
    path.is_file() || shipped(path).is_some()
}

/// A shipped file's path for `name` in `dir` (`tile-strike` →
/// `configs/scenes/tile-strike.toml`), if shipped.
pub fn shipped_path(dir: &str, name: &str) -> Option<PathBuf> {
    let name = name.strip_suffix(".toml").unwrap_or(name);
    let path = Path::new(dir).join(format!("{name}.toml"));
    shipped(&path).map(|_| path)
}

/// `path` with `.` removed and `..` applied; `None` for absolute paths or
/// paths that climb above their start (no shipped file is there).
fn normalise(path: &Path) -> Option<PathBuf> {
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_file_is_the_source_tree_file() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        for (path, text) in FILES {
            let on_disk = std::fs::read_to_string(root.join(path)).unwrap();
            assert_eq!(&on_disk, text, "{path}");
        }
    }

    #[test]
    fn every_configuration_file_of_the_source_tree_is_shipped() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        for dir in ["configs", HANDS_DIR, SCENES_DIR, DEVICES_DIR] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "toml") {
                    let relative = path.strip_prefix(root).unwrap();
                    assert!(
                        shipped(relative).is_some(),
                        "{} is not shipped",
                        relative.display()
                    );
                }
            }
        }
    }

    #[test]
    fn relative_references_resolve_among_shipped_files() {
        let hand = Path::new("configs/scenes").join("../hands/tile-strikes.toml");
        assert!(shipped(&hand).is_some());
        assert!(shipped(Path::new("./configs/materials.toml")).is_some());
        assert!(shipped(Path::new("../configs/materials.toml")).is_none());
        assert_eq!(
            shipped_path(SCENES_DIR, "tile-strike"),
            Some(PathBuf::from("configs/scenes/tile-strike.toml"))
        );
        assert!(shipped_names(SCENES_DIR).contains(&"bricks"));
    }
}
