use std::path::PathBuf;

/// A configuration file that cannot be used, and why.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Syntax errors and unknown or missing keys, with line and column.
    #[error("{path}: {message}")]
    Toml { path: PathBuf, message: String },
    #[error("{path}: [{entry}] {field}: {message}")]
    Invalid {
        path: PathBuf,
        entry: String,
        field: &'static str,
        message: String,
    },
    #[error("{path}: no {kind} named `{name}` (known: {known})")]
    Unknown {
        path: PathBuf,
        kind: &'static str,
        name: String,
        known: String,
    },
}
