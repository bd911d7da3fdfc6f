//! Modal stresses at the stress points of a body's elements (Glondu 2012
//! §3.3.4, "σ_e = C ε_e" with ε_e = B_e x restricted to the element's
//! nodes) and the bounds that let the Rankine test skip points that cannot
//! reach a threshold.
//!
//! A linear tet's stress is constant: its stress point is the element. A
//! quadratic tet's is linear, so the largest principal stress over the
//! element (a convex function of the stress) is largest at a corner: the
//! stress points are the mesh's nodes, each holding the corner stresses of
//! the elements there recovered at the node (their volume-weighted mean:
//! nodal averaging, the simplest of the recoveries of Zienkiewicz, Taylor
//! & Zhu §15.3), and an element's stress is its four nodes'. A node table
//! is also about a fifth of the size of an element table: a tet mesh has
//! five to six tets per node.

use crate::config::Material;
use crate::fem::{
    constitutive_matrix, quadratic_gradients, symmetric_strain, ElasticMesh, ElementOrder,
};
use faer::Mat;
use nalgebra::{Matrix3, Vector3};
use rayon::prelude::*;
use std::ops::Range;

/// Consecutive stress points that share one stress bound. Mesh
/// generators and TetGen number neighbouring tets and nodes together, so a
/// group is spatially compact and its bound close to its points' own.
pub const GROUP_POINTS: usize = 16;

/// The stress at every stress point in every mode, at unit modal
/// coordinate.
///
/// Stored in `f32`, point-major: the 6·m values of one point are
/// contiguous, so one point or one group of points (the Rankine test)
/// reads one contiguous block. The table is the largest of the fracture
/// engine (175k linear tets × 100 modes is 420 MB in f32, 840 MB in f64;
/// the quadratic elements' node table about a fifth of that), and the
/// Rankine test compares stresses with a threshold known to a few percent,
/// far above f32's 1e-7 relative precision. Sums over modes are
/// accumulated in f32 too (relative error ~m·1e-7). Per group of
/// [`GROUP_POINTS`] points it also keeps the bounds of the Rankine
/// screening: the largest norm per mode, the mean (centre) stress and the
/// largest distance to it per mode (8·m floats per group, 1/12 of the
/// points' own).
#[derive(Debug, Clone)]
pub struct ModalStress {
    modes: usize,
    points: usize,
    /// The stress points of each element, [`Self::points_per_element`]
    /// each: the element itself, or its four nodes.
    element_points: Vec<u32>,
    points_per_element: usize,
    /// The elements at each point, in compressed rows, ascending:
    /// `point_elements[point_offsets[p]..point_offsets[p + 1]]`.
    point_offsets: Vec<u32>,
    point_elements: Vec<u32>,
    /// `values[(6p + c)·m + j]`: Voigt component c of mode j's stress at
    /// point p (Pa per unit modal coordinate).
    values: Vec<f32>,
    /// `group_norms[g·m + j]`: the largest Frobenius norm of mode j's stress
    /// tensor over the points of group g.
    group_norms: Vec<f32>,
    /// `group_centres[(6g + c)·m + j]`: component c of mode j's stress
    /// averaged over the points of group g.
    group_centres: Vec<f32>,
    /// `group_spreads[g·m + j]`: the largest Frobenius norm of mode j's
    /// stress minus the group's centre, over the points of group g.
    group_spreads: Vec<f32>,
}

impl ModalStress {
    /// σ_p,j = C B_p x_j at every stress point p and mode j (`shapes` is
    /// DOFs × m on `elastic`).
    pub fn new(elastic: &ElasticMesh, material: &Material, shapes: &Mat<f64>) -> Self {
        let m = shapes.ncols();
        let elements = elastic.element_count();
        let c = constitutive_matrix(material);
        let (points, element_points): (usize, Vec<u32>) = match elastic.order() {
            ElementOrder::Linear => (elements, (0..elements as u32).collect()),
            ElementOrder::Quadratic => (
                elastic.corner_count(),
                (0..elements)
                    .flat_map(|t| elastic.element_nodes(t)[..4].iter().copied())
                    .collect(),
            ),
        };
        let points_per_element = element_points.len() / elements.max(1);
        let (point_offsets, point_elements) =
            incidence(&element_points, points_per_element, points);
        let mut values = vec![0.0f32; 6 * m * points];
        if m > 0 {
            match elastic.order() {
                ElementOrder::Linear => {
                    values
                        .par_chunks_mut(6 * m)
                        .enumerate()
                        .for_each(|(t, block)| {
                            let cb = c * elastic.element(t).b_matrix();
                            let mut s = vec![0.0; 6 * m];
                            add_point_stress(&mut s, 1.0, &cb, elastic.element_nodes(t), shapes);
                            for (v, s) in block.iter_mut().zip(s) {
                                *v = s as f32;
                            }
                        });
                }
                ElementOrder::Quadratic => {
                    // With many modes, the shapes DOF-major (each DOF's m
                    // values together): a node's stresses in every mode
                    // are then formed by loops over the modes that read
                    // memory in order and vectorise, where the modes'
                    // columns cost m strided reads per element node. With
                    // few (a contact's residual shapes), mode by mode.
                    let rows = (m >= MIN_LOOP_MODES).then(|| dof_major(shapes));
                    values
                        .par_chunks_mut(6 * m)
                        .enumerate()
                        .for_each(|(node, block)| {
                            let at = &point_elements
                                [point_offsets[node] as usize..point_offsets[node + 1] as usize];
                            let mut sum = vec![0.0; 6 * m];
                            let mut volume = 0.0;
                            for &t in at {
                                let t = t as usize;
                                let nodes = elastic.element_nodes(t);
                                let corner = nodes[..4]
                                    .iter()
                                    .position(|&n| n as usize == node)
                                    .expect("incidence lists the element's own nodes");
                                let element = elastic.element(t);
                                let mut l = [0.0; 4];
                                l[corner] = 1.0;
                                let gradients = quadratic_gradients(&element, &l);
                                if let Some(rows) = &rows {
                                    corner_stresses(
                                        rows,
                                        nodes,
                                        &gradients,
                                        &c,
                                        element.volume,
                                        &mut sum,
                                    );
                                } else {
                                    for j in 0..m {
                                        // ∇u = Σ_a u_a ⊗ ∇N_a at the corner.
                                        let grad_u: Matrix3<f64> = nodes
                                            .iter()
                                            .zip(&gradients)
                                            .map(|(&n, g)| {
                                                let n = 3 * n as usize;
                                                let u = Vector3::new(
                                                    shapes[(n, j)],
                                                    shapes[(n + 1, j)],
                                                    shapes[(n + 2, j)],
                                                );
                                                u * g.transpose()
                                            })
                                            .sum();
                                        let s = c * symmetric_strain(&grad_u);
                                        for comp in 0..6 {
                                            sum[comp * m + j] += element.volume * s[comp];
                                        }
                                    }
                                }
                                volume += element.volume;
                            }
                            for (v, s) in block.iter_mut().zip(sum) {
                                *v = (s / volume) as f32;
                            }
                        });
                }
            }
        }
        let groups = points.div_ceil(GROUP_POINTS);
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
                    let members = group_range(g, points);
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
            points,
            element_points,
            points_per_element,
            point_offsets,
            point_elements,
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
        self.element_points.len() / self.points_per_element.max(1)
    }

    /// Stress points per element: 1 (linear: the element) or 4 (quadratic:
    /// its nodes).
    pub fn points_per_element(&self) -> usize {
        self.points_per_element
    }

    /// Number of stress points.
    pub fn point_count(&self) -> usize {
        self.points
    }

    /// The stress points of `element`.
    pub fn element_points(&self, element: usize) -> &[u32] {
        let per = self.points_per_element;
        &self.element_points[per * element..per * (element + 1)]
    }

    /// The elements at stress point `point`, ascending.
    pub fn point_elements(&self, point: usize) -> &[u32] {
        &self.point_elements
            [self.point_offsets[point] as usize..self.point_offsets[point + 1] as usize]
    }

    /// Number of point groups of the screening bounds.
    pub fn group_count(&self) -> usize {
        self.points.div_ceil(GROUP_POINTS)
    }

    /// The points of group `g`.
    pub fn group_points(&self, g: usize) -> Range<usize> {
        group_range(g, self.points)
    }

    /// Bytes held by the table, its bounds and its incidence.
    pub fn bytes(&self) -> usize {
        let floats = self.values.len()
            + self.group_norms.len()
            + self.group_centres.len()
            + self.group_spreads.len();
        let indices =
            self.element_points.len() + self.point_offsets.len() + self.point_elements.len();
        (floats + indices) * std::mem::size_of::<f32>()
    }

    /// The rows of `points` as a (6·points × m) matrix: row 6i + c is
    /// Voigt component c of the i-th point, per unit modal coordinate.
    pub fn rows(&self, points: Range<usize>) -> faer::MatRef<'_, f32> {
        let m = self.modes;
        let values = &self.values[6 * m * points.start..6 * m * points.end];
        faer::MatRef::from_row_major_slice(values, 6 * points.len(), m)
    }

    /// Stress (Voigt, Pa) at `point` at modal coordinates `z` (length m).
    pub fn point_stress(&self, point: usize, z: &[f32]) -> [f32; 6] {
        let m = self.modes;
        let block = &self.values[6 * m * point..6 * m * (point + 1)];
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

    /// Upper bounds of ‖σ_p − centre‖ (Frobenius) over the points p of
    /// each group of `groups` (a row each), for the modal states whose
    /// magnitudes |z_j| are the columns of `magnitudes` (m × samples):
    /// Σ_j max_p‖σ_p,j − centre_j‖·|z_j|, rounding included.
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
    /// over the points of group `g`, for every modal state whose
    /// coordinates satisfy |z_j| ≤ `amplitude[j]`:
    /// ‖Σ_j σ_p,j z_j‖ ≤ Σ_j ‖σ_p,j‖ |z_j| by the triangle inequality.
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

fn group_range(g: usize, points: usize) -> Range<usize> {
    g * GROUP_POINTS..((g + 1) * GROUP_POINTS).min(points)
}

/// Adds `weight · cb · u_j` (the stress of mode j at one point, `cb` =
/// C·B of the point, 6 × 3·nodes) to `sum` (6·m values, component-major)
/// for every mode j of `shapes`.
fn add_point_stress<const D: usize>(
    sum: &mut [f64],
    weight: f64,
    cb: &nalgebra::SMatrix<f64, 6, D>,
    nodes: &[u32],
    shapes: &Mat<f64>,
) {
    let m = shapes.ncols();
    for j in 0..m {
        let u = nalgebra::SVector::<f64, D>::from_fn(|r, _| {
            shapes[(3 * nodes[r / 3] as usize + r % 3, j)]
        });
        let s = cb * u;
        for comp in 0..6 {
            sum[comp * m + j] += weight * s[comp];
        }
    }
}

/// DOFs per block of [`dof_major`]'s transposition (a block of 100 modes
/// is 200 KB, within a core's L2).
const TRANSPOSE_DOFS: usize = 256;

/// `shapes` (one column per mode) DOF-major: `rows[d·m + j]` is mode j's
/// value at DOF d.
fn dof_major(shapes: &Mat<f64>) -> Vec<f64> {
    let m = shapes.ncols();
    let mut rows = vec![0.0; shapes.nrows() * m];
    if m == 0 {
        return rows;
    }
    rows.par_chunks_mut(TRANSPOSE_DOFS * m)
        .enumerate()
        .for_each(|(chunk, block)| {
            let first = chunk * TRANSPOSE_DOFS;
            for j in 0..m {
                for (d, row) in block.chunks_exact_mut(m).enumerate() {
                    row[j] = shapes[(first + d, j)];
                }
            }
        });
    rows
}

/// Modes from which a quadratic body's table is formed by
/// [`corner_stresses`]. With one mode (a contact's residual shape) its
/// loops cost more than they save (benches/README.md); where between one
/// and a hundred modes they start to pay was not measured.
const MIN_LOOP_MODES: usize = 8;

/// Adds `volume · C ε` at one corner of a quadratic element, in every
/// mode, to `sum` (`sum[c·m + j]`, Voigt component c of mode j): `∇u =
/// Σ_a u_a ⊗ ∇N_a` over the element's `nodes` with their shape functions'
/// `gradients` at the corner, `u_a` from the DOF-major `rows`
/// ([`dof_major`]), each term a loop over the modes that vectorises. The
/// arithmetic is that of `C · symmetric_strain(∇u)` mode by mode, term by
/// term in the same order, so the table has the same bits as formed mode
/// by mode.
fn corner_stresses(
    rows: &[f64],
    nodes: &[u32],
    gradients: &[Vector3<f64>],
    c: &nalgebra::SMatrix<f64, 6, 6>,
    volume: f64,
    sum: &mut [f64],
) {
    let m = sum.len() / 6;
    // grad[(3r + col)·m + j] = ∂u_r/∂x_col of mode j.
    let mut grad = vec![0.0; 9 * m];
    for (&n, g) in nodes.iter().zip(gradients) {
        for r in 0..3 {
            let u = &rows[(3 * n as usize + r) * m..][..m];
            for col in 0..3 {
                let g_col = g[col];
                for (out, &u_j) in grad[(3 * r + col) * m..][..m].iter_mut().zip(u) {
                    *out += u_j * g_col;
                }
            }
        }
    }
    // Voigt, engineering shear strains (`symmetric_strain`).
    let mut strain = vec![0.0; 6 * m];
    for (k, (p, q)) in [(0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1)]
        .into_iter()
        .enumerate()
    {
        let (a, b) = ((3 * p + q) * m, (3 * q + p) * m);
        let out = &mut strain[k * m..][..m];
        if p == q {
            out.copy_from_slice(&grad[a..a + m]);
        } else {
            for (j, out) in out.iter_mut().enumerate() {
                *out = grad[a + j] + grad[b + j];
            }
        }
    }
    for i in 0..6 {
        let row: [f64; 6] = std::array::from_fn(|k| c[(i, k)]);
        for (j, out) in sum[i * m..][..m].iter_mut().enumerate() {
            let mut s = row[0] * strain[j];
            for (k, &c_ik) in row.iter().enumerate().skip(1) {
                s += c_ik * strain[k * m + j];
            }
            *out += volume * s;
        }
    }
}

/// The elements at each of `points` points, in compressed rows (offsets,
/// elements ascending), from each element's `per` points.
fn incidence(element_points: &[u32], per: usize, points: usize) -> (Vec<u32>, Vec<u32>) {
    let mut offsets = vec![0u32; points + 1];
    for &p in element_points {
        offsets[p as usize + 1] += 1;
    }
    for p in 0..points {
        offsets[p + 1] += offsets[p];
    }
    let mut cursor = offsets.clone();
    let mut elements = vec![0u32; element_points.len()];
    for (slot, &p) in element_points.iter().enumerate() {
        elements[cursor[p as usize] as usize] = (slot / per.max(1)) as u32;
        cursor[p as usize] += 1;
    }
    (offsets, elements)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MaterialLibrary;

    /// A quadratic body's table formed many modes at a time (the loops of
    /// `corner_stresses`) has the bits of the table formed mode by mode.
    #[test]
    fn many_modes_at_once_give_the_tables_of_one_mode_at_a_time() {
        let mesh = crate::mesh::box_mesh([0.2, 0.1, 0.05], [3, 2, 2], None).unwrap();
        let elastic = ElasticMesh::new(&mesh, ElementOrder::Quadratic);
        let material = MaterialLibrary::builtin()
            .get("soda-lime-glass")
            .unwrap()
            .clone();
        let m = MIN_LOOP_MODES + 3;
        // Smooth and rough displacement fields, none of them special.
        let shapes = Mat::<f64>::from_fn(elastic.dofs(), m, |dof, j| {
            let x = (dof * (j + 3)) as f64;
            1e-4 * (0.37 * x).sin() + 1e-5 * ((dof % 7) as f64 - 3.0) * (j as f64 + 1.0)
        });
        let together = ModalStress::new(&elastic, &material, &shapes);
        assert!(together.point_count() > 0);
        for j in 0..m {
            let column = Mat::<f64>::from_fn(elastic.dofs(), 1, |dof, _| shapes[(dof, j)]);
            let alone = ModalStress::new(&elastic, &material, &column);
            for point in 0..together.point_count() {
                for comp in 0..6 {
                    let (a, b) = (
                        together.rows(point..point + 1)[(comp, j)],
                        alone.rows(point..point + 1)[(comp, 0)],
                    );
                    assert_eq!(a.to_bits(), b.to_bits(), "point {point} mode {j}");
                }
            }
        }
    }
}
