//! Per-element modal stresses (Glondu 2012 §3.3.4, "σ_e = C ε_e" with
//! ε_e = B_e x restricted to the element's nodes) and the bounds that let
//! the Rankine test skip elements that cannot reach a threshold.

use crate::config::Material;
use crate::fem::{constitutive_matrix, TetElement};
use crate::mesh::TetMesh;
use faer::Mat;
use rayon::prelude::*;
use std::ops::Range;

/// Consecutive elements that share one stress bound. Mesh generators and
/// TetGen number neighbouring tets together, so a group is spatially
/// compact and its bound close to its elements' own.
pub const GROUP_ELEMENTS: usize = 16;

/// The stress of every element in every mode, at unit modal coordinate.
///
/// Stored in `f32`, element-major: the 6·m values of one element are
/// contiguous, so one element (a crack crossing it) or one group of
/// elements (the Rankine test) reads one contiguous block. The table is the
/// largest of the fracture engine (175k tets × 100 modes is 420 MB in f32,
/// 840 MB in f64), and the Rankine test compares stresses with a threshold
/// known to a few percent, far above f32's 1e-7 relative precision. Sums
/// over modes are accumulated in f32 too (relative error ~m·1e-7). Per
/// group of [`GROUP_ELEMENTS`] elements it also keeps the bounds of the
/// Rankine screening: the largest norm per mode, the mean (centre) stress
/// and the largest distance to it per mode (8·m floats per group, 1/12 of
/// the elements' own).
#[derive(Debug, Clone)]
pub struct ModalStress {
    modes: usize,
    elements: usize,
    /// `values[(6e + c)·m + j]`: Voigt component c of mode j's stress in
    /// element e (Pa per unit modal coordinate).
    values: Vec<f32>,
    /// `group_norms[g·m + j]`: the largest Frobenius norm of mode j's stress
    /// tensor over the elements of group g.
    group_norms: Vec<f32>,
    /// `group_centres[(6g + c)·m + j]`: component c of mode j's stress
    /// averaged over the elements of group g.
    group_centres: Vec<f32>,
    /// `group_spreads[g·m + j]`: the largest Frobenius norm of mode j's
    /// stress minus the group's centre, over the elements of group g.
    group_spreads: Vec<f32>,
}

impl ModalStress {
    /// σ_e,j = C B_e x_j for every element e and mode j (`shapes` is DOFs × m).
    pub fn new(mesh: &TetMesh, material: &Material, shapes: &Mat<f64>) -> Self {
        let m = shapes.ncols();
        let elements = mesh.tet_count();
        let c = constitutive_matrix(material);
        let mut values = vec![0.0f32; 6 * m * elements];
        if m > 0 {
            values
                .par_chunks_mut(6 * m)
                .enumerate()
                .for_each(|(t, block)| {
                    let cb = c * TetElement::new(&mesh.tet_points(t))
                        .expect("validated mesh")
                        .b_matrix();
                    let nodes = mesh.tets()[t];
                    for j in 0..m {
                        let u = nalgebra::SVector::<f64, 12>::from_fn(|r, _| {
                            shapes[(3 * nodes[r / 3] as usize + r % 3, j)]
                        });
                        let s = cb * u;
                        for comp in 0..6 {
                            block[comp * m + j] = s[comp] as f32;
                        }
                    }
                });
        }
        let groups = elements.div_ceil(GROUP_ELEMENTS);
        let mut group_norms = vec![0.0f32; groups * m];
        let mut group_centres = vec![0.0f32; groups * 6 * m];
        let mut group_spreads = vec![0.0f32; groups * m];
        if m > 0 {
            group_norms
                .par_chunks_mut(m)
                .zip(group_centres.par_chunks_mut(6 * m))
                .zip(group_spreads.par_chunks_mut(m))
                .enumerate()
                .for_each(|(g, ((norms, centre), spreads))| {
                    let members = group_range(g, elements);
                    let block = |e: usize| &values[6 * m * e..6 * m * (e + 1)];
                    let mut sum = vec![0.0f64; 6 * m];
                    for e in members.clone() {
                        for (total, &v) in sum.iter_mut().zip(block(e)) {
                            *total += f64::from(v);
                        }
                    }
                    for (c, total) in centre.iter_mut().zip(&sum) {
                        *c = (total / members.len() as f64) as f32;
                    }
                    for e in members {
                        let block = block(e);
                        for j in 0..m {
                            let s: [f32; 6] = std::array::from_fn(|comp| block[comp * m + j]);
                            let d: [f32; 6] =
                                std::array::from_fn(|comp| s[comp] - centre[comp * m + j]);
                            norms[j] = norms[j].max(tensor_norm(&s));
                            spreads[j] = spreads[j].max(tensor_norm(&d));
                        }
                    }
                });
        }
        Self {
            modes: m,
            elements,
            values,
            group_norms,
            group_centres,
            group_spreads,
        }
    }

    /// Number of modes.
    pub fn mode_count(&self) -> usize {
        self.modes
    }

    /// Number of elements (tets).
    pub fn element_count(&self) -> usize {
        self.elements
    }

    /// Number of element groups of the screening bounds.
    pub fn group_count(&self) -> usize {
        self.elements.div_ceil(GROUP_ELEMENTS)
    }

    /// The elements of group `g`.
    pub fn group_elements(&self, g: usize) -> Range<usize> {
        group_range(g, self.elements)
    }

    /// Bytes held by the table and its bounds.
    pub fn bytes(&self) -> usize {
        let floats = self.values.len()
            + self.group_norms.len()
            + self.group_centres.len()
            + self.group_spreads.len();
        floats * std::mem::size_of::<f32>()
    }

    /// The rows of `elements` as a (6·elements × m) matrix: row 6i + c is
    /// Voigt component c of the i-th element, per unit modal coordinate.
    pub fn rows(&self, elements: Range<usize>) -> faer::MatRef<'_, f32> {
        let m = self.modes;
        let values = &self.values[6 * m * elements.start..6 * m * elements.end];
        faer::MatRef::from_row_major_slice(values, 6 * elements.len(), m)
    }

    /// Stress (Voigt, Pa) of `element` at modal coordinates `z` (length m).
    pub fn element_stress(&self, element: usize, z: &[f32]) -> [f32; 6] {
        let m = self.modes;
        let block = &self.values[6 * m * element..6 * m * (element + 1)];
        std::array::from_fn(|comp| dot(&block[comp * m..(comp + 1) * m], z))
    }

    /// The centre stresses of `groups` at the modal states `z` (m × samples,
    /// a column per state): rows 6i..6i + 6 are Voigt components of the
    /// mean stress of group `groups[i]`, a column per state. One product for
    /// all of them: a (6 × m)·(m × samples) product per group costs more in
    /// setting up than in arithmetic.
    pub fn group_centre_stresses(&self, groups: &[u32], z: faer::MatRef<'_, f32>) -> Mat<f32> {
        gathered_product(&self.group_centres, 6, self.modes, groups, z)
    }

    /// Upper bounds of ‖σ_e − centre‖ (Frobenius) over the elements e of
    /// each group of `groups` (a row each), for the modal states whose
    /// magnitudes |z_j| are the columns of `magnitudes` (m × samples):
    /// Σ_j max_e‖σ_e,j − centre_j‖·|z_j|, rounding included.
    pub fn group_spread_bounds(
        &self,
        groups: &[u32],
        magnitudes: faer::MatRef<'_, f32>,
    ) -> Mat<f32> {
        let mut bounds = gathered_product(&self.group_spreads, 1, self.modes, groups, magnitudes);
        bounds *= faer::Scale(sum_rounding_margin(self.modes));
        bounds
    }

    /// An upper bound of |σ₁| (indeed of the stress tensor's Frobenius norm)
    /// over the elements of group `g`, for every modal state whose
    /// coordinates satisfy |z_j| ≤ `amplitude[j]`:
    /// ‖Σ_j σ_e,j z_j‖ ≤ Σ_j ‖σ_e,j‖ |z_j| by the triangle inequality.
    pub fn group_bound(&self, g: usize, amplitude: &[f32]) -> f32 {
        let m = self.modes;
        dot(&self.group_norms[g * m..(g + 1) * m], amplitude) * sum_rounding_margin(m)
    }
}

/// Factor that keeps a bound computed as an f32 sum of m non-negative
/// terms (relative rounding 6e-8 each) above the exact sum.
fn sum_rounding_margin(m: usize) -> f32 {
    1.0 + 1e-4 * m as f32
}

/// The rows of `groups` in a per-group table of `rows_per_group` rows of m
/// (row-major, group after group), stacked, times `b` (m × n), on the
/// calling thread (the callers are parallel tasks already).
fn gathered_product(
    table: &[f32],
    rows_per_group: usize,
    m: usize,
    groups: &[u32],
    b: faer::MatRef<'_, f32>,
) -> Mat<f32> {
    let block = rows_per_group * m;
    // Block copies: a flattening iterator copies value by value.
    let mut rows = Vec::with_capacity(block * groups.len());
    for &g in groups {
        rows.extend_from_slice(&table[block * g as usize..block * (g as usize + 1)]);
    }
    let a = faer::MatRef::from_row_major_slice(&rows, rows_per_group * groups.len(), m);
    let mut out = Mat::zeros(a.nrows(), b.ncols());
    faer::linalg::matmul::matmul(
        out.as_mut(),
        faer::Accum::Replace,
        a,
        b,
        1.0,
        faer::Par::Seq,
    );
    out
}

fn group_range(g: usize, elements: usize) -> Range<usize> {
    g * GROUP_ELEMENTS..((g + 1) * GROUP_ELEMENTS).min(elements)
}

/// Frobenius norm of the symmetric tensor with Voigt components
/// [xx, yy, zz, yz, xz, xy]; it bounds every eigenvalue's magnitude.
fn tensor_norm(s: &[f32; 6]) -> f32 {
    (s[0] * s[0] + s[1] * s[1] + s[2] * s[2] + 2.0 * (s[3] * s[3] + s[4] * s[4] + s[5] * s[5]))
        .sqrt()
}

/// Dot product in eight independent lanes, so it vectorises.
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut lanes = [0.0f32; 8];
    let (a_chunks, b_chunks) = (a.chunks_exact(8), b.chunks_exact(8));
    let (a_rest, b_rest) = (a_chunks.remainder(), b_chunks.remainder());
    for (x, y) in a_chunks.zip(b_chunks) {
        for l in 0..8 {
            lanes[l] += x[l] * y[l];
        }
    }
    let tail: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    lanes.iter().sum::<f32>() + tail
}
