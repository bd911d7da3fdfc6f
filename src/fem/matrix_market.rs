//! Matrix Market coordinate export (`%%MatrixMarket matrix coordinate real
//! symmetric`, lower triangle, 1-based), readable by `scipy.io.mmread`.

use super::SparseMatrix;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Writes the lower triangle of a symmetric sparse matrix.
pub fn write_matrix_market(path: &Path, matrix: &SparseMatrix) -> std::io::Result<()> {
    let m = matrix.as_ref();
    let n = m.ncols();
    let mut entries = 0usize;
    for j in 0..n {
        entries += m.row_idx_of_col_raw(j).iter().filter(|&&i| i >= j).count();
    }
    let mut w = BufWriter::new(std::fs::File::create(path)?);
    writeln!(w, "%%MatrixMarket matrix coordinate real symmetric")?;
    writeln!(w, "% written by tessera")?;
    writeln!(w, "{} {} {}", m.nrows(), n, entries)?;
    for j in 0..n {
        let rows = m.row_idx_of_col_raw(j);
        let values = m.val_of_col(j);
        for (&i, v) in rows.iter().zip(values) {
            if i >= j {
                writeln!(w, "{} {} {:.17e}", i + 1, j + 1, v)?;
            }
        }
    }
    w.flush()
}

/// Writes a diagonal matrix (e.g. a lumped mass) in the same format.
pub fn write_diagonal_matrix_market(path: &Path, diagonal: &[f64]) -> std::io::Result<()> {
    let mut w = BufWriter::new(std::fs::File::create(path)?);
    writeln!(w, "%%MatrixMarket matrix coordinate real symmetric")?;
    writeln!(w, "% written by tessera (diagonal)")?;
    let n = diagonal.len();
    writeln!(w, "{n} {n} {n}")?;
    for (i, v) in diagonal.iter().enumerate() {
        writeln!(w, "{} {} {:.17e}", i + 1, i + 1, v)?;
    }
    w.flush()
}
