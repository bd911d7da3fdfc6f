use std::path::PathBuf;

/// A configuration file that cannot be used, and why.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why it cannot be read.
        #[source]
        source: std::io::Error,
    },
    /// Syntax errors and unknown or missing keys, with line and column.
    #[error("{path}: {message}")]
    Toml {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A value is out of its range or inconsistent with another.
    #[error("{path}: [{entry}] {field}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The entry holding the value (a body's name, a material's, a table).
        entry: String,
        /// The field.
        field: &'static str,
        /// What is wrong with the value.
        message: String,
    },
    /// A value is out of its range, with the line that holds it.
    #[error("{path}:{line}: {field}: {message}")]
    Field {
        /// The file.
        path: PathBuf,
        /// The line of the value (1-based), or of its table.
        line: usize,
        /// The field's dotted path (`design.staircase[0].steps`).
        field: String,
        /// What is wrong with the value.
        message: String,
    },
    /// A name that refers to nothing the file or library defines.
    #[error("{path}: no {kind} named `{name}` (known: {known})")]
    Unknown {
        /// The file.
        path: PathBuf,
        /// What kind of thing was named (material, body, …).
        kind: &'static str,
        /// The name given.
        name: String,
        /// The names that exist, comma-separated.
        known: String,
    },
}
