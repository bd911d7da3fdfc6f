//! The fill-reducing ordering of `K − σM` for its Cholesky factor: METIS's
//! nested dissection (Karypis & Kumar 1998, `METIS_NodeND`) of the mesh's
//! node graph, each node's three DOFs kept together.
//!
//! The factor is most of a body's memory, and every solve of the
//! eigensolver and of the static correction reads it once. Minimum degree
//! (faer's AMD) is local and greedy; a graph partitioner's separators cut a
//! 3D body along small surfaces, which bounds the fill: on a slab about
//! half the nonzeros of AMD, on a thin tile a tenth fewer
//! (`benches/README.md`). Ordering the node graph (a third of the
//! vertices, a ninth of the entries of the DOF graph) costs METIS less.

use faer::sparse::SymbolicSparseColMatRef;
use metis_sys::idx_t;
use serde::Serialize;

/// The fill-reducing ordering of the factor of `K − σM`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FactorOrdering {
    /// METIS's nested dissection of the node graph (module docs), minimum
    /// degree where it cannot be had.
    #[default]
    NestedDissection,
    /// faer's approximate minimum degree (AMD), for comparison.
    MinimumDegree,
}

impl FactorOrdering {
    /// The name the command line takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::NestedDissection => "nested-dissection",
            Self::MinimumDegree => "minimum-degree",
        }
    }
}

impl std::str::FromStr for FactorOrdering {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "nested-dissection" => Ok(Self::NestedDissection),
            "minimum-degree" => Ok(Self::MinimumDegree),
            other => Err(format!(
                "unknown ordering `{other}` (expected `nested-dissection` or `minimum-degree`)"
            )),
        }
    }
}

/// DOFs per node of the elasticity.
const NODE_DOFS: usize = 3;

/// Held while METIS runs: its random generator (GKlib's `random.c`) is a
/// global of the C library, seeded at the start of each `METIS_NodeND`, so
/// two calls at once would race on it (undefined behaviour, and orderings
/// that differ from run to run). Background analyses of fragments order
/// their factors on several threads.
static METIS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A fill-reducing permutation of `pattern`'s rows and columns (a
/// symmetric pattern, one triangle or both, 3 DOFs per node in order, a
/// pair of nodes coupling all their DOFs or none):
/// `(forward, inverse)` with `forward[k]` the original index placed at `k`.
/// `None` when the pattern is not of that form, its graph does not fit
/// METIS's 32-bit indices, or METIS fails; the caller then orders it
/// otherwise.
pub(super) fn nested_dissection(
    pattern: SymbolicSparseColMatRef<'_, usize>,
) -> Option<(Vec<usize>, Vec<usize>)> {
    let dofs = pattern.nrows();
    if dofs == 0 || dofs % NODE_DOFS != 0 || pattern.ncols() != dofs {
        return None;
    }
    let nodes = dofs / NODE_DOFS;
    // The node graph, both directions, without self-loops (METIS's CSR).
    // A pair of nodes couples all their DOFs, so the first DOF of each
    // stands for its node: reading the others would give each edge nine
    // times over, to be sorted away.
    let mut degree = vec![0usize; nodes];
    let mut edges: Vec<(u32, u32)> =
        Vec::with_capacity(2 * pattern.compute_nnz() / (NODE_DOFS * NODE_DOFS));
    for column in (0..dofs).step_by(NODE_DOFS) {
        let b = column / NODE_DOFS;
        for &row in pattern.row_idx_of_col_raw(column) {
            let a = row / NODE_DOFS;
            if a != b && row % NODE_DOFS == 0 {
                edges.push((a as u32, b as u32));
                edges.push((b as u32, a as u32));
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    for &(a, _) in &edges {
        degree[a as usize] += 1;
    }
    let mut xadj: Vec<idx_t> = Vec::with_capacity(nodes + 1);
    xadj.push(0);
    let mut total: usize = 0;
    for d in degree {
        total += d;
        xadj.push(idx_t::try_from(total).ok()?);
    }
    let mut adjncy: Vec<idx_t> = edges
        .iter()
        .map(|&(_, b)| idx_t::try_from(b).ok())
        .collect::<Option<_>>()?;
    let mut vertices = idx_t::try_from(nodes).ok()?;
    let mut permutation: Vec<idx_t> = vec![0; nodes];
    let mut inverse: Vec<idx_t> = vec![0; nodes];
    let mut options = [0 as idx_t; metis_sys::METIS_NOPTIONS as usize];
    // METIS cannot panic; a poisoned lock guards nothing broken.
    let _alone = METIS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // SAFETY: the arrays have the lengths METIS reads and writes (xadj:
    // nodes + 1, adjncy: xadj[nodes], perm and iperm: nodes, options:
    // METIS_NOPTIONS); vwgt may be null. No other METIS call runs (the
    // lock above), and the default options seed its generator with a
    // constant, so the ordering is the same on every run.
    let status = unsafe {
        metis_sys::METIS_SetDefaultOptions(options.as_mut_ptr());
        metis_sys::METIS_NodeND(
            &mut vertices,
            xadj.as_mut_ptr(),
            adjncy.as_mut_ptr(),
            std::ptr::null_mut(),
            options.as_mut_ptr(),
            permutation.as_mut_ptr(),
            inverse.as_mut_ptr(),
        )
    };
    if status != metis_sys::rstatus_et_METIS_OK {
        return None;
    }
    // METIS's perm: node k of the ordered graph is node perm[k].
    let forward: Vec<usize> = permutation
        .iter()
        .flat_map(|&node| (0..NODE_DOFS).map(move |axis| NODE_DOFS * node as usize + axis))
        .collect();
    let mut inverse = vec![usize::MAX; dofs];
    for (k, &dof) in forward.iter().enumerate() {
        *inverse.get_mut(dof)? = k;
    }
    inverse
        .iter()
        .all(|&k| k != usize::MAX)
        .then_some((forward, inverse))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MaterialLibrary;
    use crate::fem::{ElasticMesh, ElementOrder};
    use crate::mesh::box_mesh;
    use crate::modal::{lowest_modes, EigenSettings};
    use faer::sparse::linalg::cholesky::{factorize_symbolic_cholesky, SymmetricOrdering};
    use faer::Side;

    /// K of a box of `size` metres and `cells`, linear tets of glondu-slab.
    fn slab_stiffness(size: [f64; 3], cells: [usize; 3]) -> crate::fem::SparseMatrix {
        let mesh = box_mesh(size, cells, None).unwrap();
        let library = MaterialLibrary::builtin();
        let material = library.get("glondu-slab").unwrap();
        ElasticMesh::new(&mesh, ElementOrder::Linear).stiffness(material)
    }

    /// The ordering is a permutation keeping each node's DOFs together,
    /// the same on every call, and on a 3D body it leaves fewer nonzeros
    /// in the factor than minimum degree does.
    #[test]
    fn nested_dissection_orders_nodes_whole_and_fills_less_than_minimum_degree() {
        let stiffness = slab_stiffness([0.1, 0.1, 0.1], [8, 8, 8]);
        let pattern = stiffness.symbolic();
        let (forward, inverse) = nested_dissection(pattern).expect("an ordering");
        assert_eq!(
            Some((forward.clone(), inverse.clone())),
            nested_dissection(pattern)
        );
        let dofs = pattern.nrows();
        let mut seen = vec![false; dofs];
        for (k, &dof) in forward.iter().enumerate() {
            assert!(!seen[dof]);
            seen[dof] = true;
            assert_eq!(inverse[dof], k);
            assert_eq!(dof % 3, k % 3, "node DOFs in order");
            if k % 3 > 0 {
                assert_eq!(dof, forward[k - 1] + 1, "a node's DOFs together");
            }
        }
        let nonzeros = |ordering| {
            factorize_symbolic_cholesky(pattern, Side::Lower, ordering, Default::default())
                .unwrap()
                .len_val()
        };
        let permutation = faer::perm::PermRef::new_checked(&forward, &inverse, dofs);
        let dissected = nonzeros(SymmetricOrdering::Custom(permutation));
        let minimum_degree = nonzeros(SymmetricOrdering::Amd);
        assert!(
            dissected < minimum_degree,
            "{dissected} against {minimum_degree} nonzeros"
        );
    }

    /// Orderings computed at once on several threads are the one computed
    /// alone: METIS's random generator is a global of its C library.
    #[test]
    fn concurrent_orderings_are_the_serial_one() {
        let stiffness = slab_stiffness([0.1, 0.1, 0.05], [12, 12, 6]);
        let pattern = stiffness.symbolic();
        let serial = nested_dissection(pattern).expect("an ordering");
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..4)
                .map(|_| {
                    scope.spawn(|| {
                        (0..8)
                            .map(|_| nested_dissection(pattern).expect("an ordering"))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            for worker in workers {
                for ordering in worker.join().unwrap() {
                    assert!(ordering == serial, "a concurrent ordering differs");
                }
            }
        });
    }

    /// The ordering changes the factor, not the modes.
    #[test]
    fn both_orderings_give_the_same_modes() {
        let (elastic, _, stiffness, mass) =
            crate::modal::static_correction::tests::bar([10, 3, 2], ElementOrder::Quadratic);
        let solve = |ordering| {
            let settings = EigenSettings {
                ordering,
                ..EigenSettings::new(12)
            };
            lowest_modes(&stiffness, &mass, elastic.nodes(), &settings, &|_| {}).unwrap()
        };
        let dissected = solve(FactorOrdering::NestedDissection);
        let minimum_degree = solve(FactorOrdering::MinimumDegree);
        assert_ne!(
            dissected.stats.factor_nnz, minimum_degree.stats.factor_nnz,
            "two orderings"
        );
        for (a, b) in dissected
            .eigenvalues
            .iter()
            .zip(&minimum_degree.eigenvalues)
        {
            assert!((a - b).abs() <= 1e-9 * b, "{a} against {b}");
        }
    }

    #[test]
    fn a_pattern_not_of_whole_nodes_is_left_to_the_caller() {
        let pattern = faer::sparse::SymbolicSparseColMat::<usize>::new_checked(
            4,
            4,
            vec![0, 1, 2, 3, 4],
            None,
            vec![0, 1, 2, 3],
        );
        assert!(nested_dissection(pattern.as_ref()).is_none());
    }
}
