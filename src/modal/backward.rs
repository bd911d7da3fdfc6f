//! The backward solve `Lᵀ x = y` of a supernodal Cholesky factor on two
//! threads, split along the elimination tree.
//!
//! A supernode's row pattern holds only rows of its ancestors in the
//! elimination tree. Below the first node where the tree branches (the
//! top separator of a nested dissection), the subtrees under different
//! children write disjoint rows of `x` and read only their own and those
//! of the chain above them. So once the chain is solved, two groups of
//! subtrees are solved at once, one thread each. Every supernode does what
//! faer 0.24's `l_transpose_solve_with_conj` does, with the same kernels on
//! one thread, so the result has the bits of faer's sequential solve
//! whatever the threads.
//!
//! It serves the static correction's solves of a few columns (an impact's
//! contacts), which read the whole factor once and were bound by one
//! thread's memory bandwidth.

use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::solve_upper_triangular_in_place;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::sparse::linalg::cholesky::supernodal::SupernodalLltRef;
use faer::{Accum, Mat, MatMut, MatRef, Par};
use std::ops::Range;

/// Where the tree is split: the supernodes from `right.end` on (the chain
/// above the branching) are solved first, then `left` and `right` at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct BackwardSplit {
    left: Range<usize>,
    right: Range<usize>,
}

/// The smaller group must hold at least this share of the factor's values
/// for the split to be worth a second thread.
const SMALLEST_SHARE: f64 = 0.2;

impl BackwardSplit {
    /// The split of `factor`'s tree, or `None` when it has no branching
    /// whose two groups each hold a fair share of the values.
    pub(super) fn new(factor: SupernodalLltRef<'_, usize, f64>) -> Option<Self> {
        let count = factor.symbolic().n_supernodes();
        let rows = factor.symbolic().nrows();
        let mut owner = vec![usize::MAX; rows];
        for s in 0..count {
            let supernode = factor.supernode(s);
            let start = supernode.start();
            owner[start..start + supernode.val().ncols()].fill(s);
        }
        // A supernode's parent holds the first row of its pattern; `first`
        // is the lowest supernode of each subtree, `work` its values.
        let mut parent = vec![usize::MAX; count];
        let mut first: Vec<usize> = (0..count).collect();
        let mut work: Vec<usize> = (0..count)
            .map(|s| factor.supernode(s).val().nrows() * factor.supernode(s).val().ncols())
            .collect();
        let total: usize = work.iter().sum();
        for s in 0..count {
            if let Some(&row) = factor.supernode(s).pattern().first() {
                let p = owner[row];
                if p <= s {
                    return None;
                }
                parent[s] = p;
                first[p] = first[p].min(first[s]);
                work[p] += work[s];
            }
        }
        let children = |node: Option<usize>| -> Vec<usize> {
            (0..count)
                .filter(|&s| parent[s] == node.unwrap_or(usize::MAX))
                .collect()
        };
        // Down the chain from the root (None: above every root) to the
        // first branching.
        let mut node = None;
        let kids = loop {
            let kids = children(node);
            match kids.len() {
                0 => return None,
                1 => node = Some(kids[0]),
                _ => break kids,
            }
        };
        // The children's subtrees are consecutive ranges in postorder; the
        // groups are split where their values balance best.
        let under: usize = kids.iter().map(|&kid| work[kid]).sum();
        let mut before = 0;
        let (mut best, mut at) = (usize::MAX, 0);
        for (k, &kid) in kids.iter().enumerate().take(kids.len() - 1) {
            before += work[kid];
            let larger = before.max(under - before);
            if larger < best {
                (best, at) = (larger, k + 1);
            }
        }
        let left = first[kids[0]]..kids[at - 1] + 1;
        let right = kids[at - 1] + 1..kids[kids.len() - 1] + 1;
        let split = Self { left, right };
        let smaller = under - best;
        (split.is_valid(&parent) && smaller as f64 >= SMALLEST_SHARE * total as f64)
            .then_some(split)
    }

    /// Each group's supernodes have their parents in the group or above
    /// both, and the groups cover every supernode below the chain: what
    /// lets them run at once.
    fn is_valid(&self, parent: &[usize]) -> bool {
        let chain_start = self.right.end;
        let closed = |group: &Range<usize>| {
            group
                .clone()
                .all(|s| group.contains(&parent[s]) || (parent[s] >= chain_start))
        };
        self.left.start == 0
            && self.left.end == self.right.start
            && closed(&self.left)
            && closed(&self.right)
    }

    /// Solves `Lᵀ x = x` in place: the chain above the split on this
    /// thread, then the two groups at once on the current rayon pool.
    pub(super) fn solve(&self, factor: SupernodalLltRef<'_, usize, f64>, x: MatMut<'_, f64>) {
        let count = factor.symbolic().n_supernodes();
        let n = x.nrows();
        let longest = (0..count)
            .map(|s| factor.supernode(s).pattern().len())
            .max()
            .unwrap_or(0);
        let row_of = |s: usize| {
            if s < count {
                factor.supernode(s).start()
            } else {
                n
            }
        };
        let (chain_row, middle_row) = (row_of(self.right.end), row_of(self.right.start));
        let (mut below, mut chain) = x.split_at_row_mut(chain_row);
        let mut gathered = Mat::<f64>::zeros(longest, chain.ncols());
        let nothing = Mat::<f64>::zeros(0, chain.ncols());
        for s in (self.right.end..count).rev() {
            let above = Above {
                rows: nothing.as_ref(),
                offset: n,
            };
            solve_supernode(factor, s, chain.rb_mut(), chain_row, above, &mut gathered);
        }
        let above = Above {
            rows: chain.rb(),
            offset: chain_row,
        };
        let (left_rows, right_rows) = below.rb_mut().split_at_row_mut(middle_row);
        let group = |range: Range<usize>, mut rows: MatMut<'_, f64>, offset: usize| {
            let mut gathered = Mat::<f64>::zeros(longest, rows.ncols());
            for s in range.rev() {
                // A background check's solve makes way here for one the
                // person waits to feel (`crate::worker::YieldGate`).
                crate::worker::yield_to_urgent_work();
                solve_supernode(factor, s, rows.rb_mut(), offset, above, &mut gathered);
            }
        };
        rayon::join(
            || group(self.left.clone(), left_rows, 0),
            || group(self.right.clone(), right_rows, middle_row),
        );
    }
}

/// Rows of `x` above a group (already solved, read only), from row
/// `offset` on.
#[derive(Clone, Copy)]
struct Above<'a> {
    rows: MatRef<'a, f64>,
    offset: usize,
}

/// Supernode `s` of the backward solve: `x_s ← L_ssᵀ⁻¹ (x_s − L_psᵀ x_p)`
/// over its pattern p, as faer's `l_transpose_solve_with_conj`. `own`
/// holds rows from `own_offset` (those of `s` among them); pattern rows at
/// or past `above.offset` are read there.
fn solve_supernode(
    factor: SupernodalLltRef<'_, usize, f64>,
    s: usize,
    mut own: MatMut<'_, f64>,
    own_offset: usize,
    above: Above<'_>,
    gathered: &mut Mat<f64>,
) {
    let supernode = factor.supernode(s);
    let block = supernode.val();
    let size = block.ncols();
    let (diagonal, below) = block.split_at_row(size);
    let pattern = supernode.pattern();
    let mut values = gathered.as_mut().subrows_mut(0, pattern.len());
    for j in 0..own.ncols() {
        for (at, &i) in pattern.iter().enumerate() {
            values[(at, j)] = if i >= above.offset {
                above.rows[(i - above.offset, j)]
            } else {
                own[(i - own_offset, j)]
            };
        }
    }
    let mut top = own
        .rb_mut()
        .subrows_mut(supernode.start() - own_offset, size);
    matmul(
        top.rb_mut(),
        Accum::Add,
        below.transpose(),
        values.rb(),
        -1.0,
        Par::Seq,
    );
    solve_upper_triangular_in_place(diagonal.transpose(), top, Par::Seq);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fem::ElementOrder;
    use crate::modal::eigen::{shifted_matrix, CholeskyFactor};
    use crate::modal::static_correction::tests::bar;
    use crate::modal::EigenSettings;
    use faer::dyn_stack::{MemBuffer, MemStack};

    /// The split solve gives faer's sequential backward solve to the bit,
    /// on one thread or two, and splits a bar's tree into groups that
    /// each hold a fair share of the factor.
    #[test]
    fn the_split_backward_solve_is_faers_sequential_one() {
        let (_, _, stiffness, mass) = bar([20, 4, 2], ElementOrder::Quadratic);
        let shift = EigenSettings::new(10).shift;
        let shifted = shifted_matrix(&stiffness, &mass, shift);
        let factor =
            CholeskyFactor::new(&shifted, Par::Seq, shift, Default::default(), None).unwrap();
        let supernodes = factor.supernodes().expect("a supernodal factor");
        let split = factor.backward_split().expect("a split tree").clone();
        let n = mass.len();
        let rhs = Mat::<f64>::from_fn(n, 3, |i, j| ((i * 7 + j * 13) % 17) as f64 - 8.0);
        let mut expected = rhs.clone();
        let mut mem = MemBuffer::new(factor.solve_scratch(3, Par::Seq));
        supernodes.l_transpose_solve_with_conj(
            faer::Conj::No,
            expected.as_mut(),
            Par::Seq,
            MemStack::new(&mut mem),
        );
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut x = rhs.clone();
            pool.install(|| split.solve(supernodes, x.as_mut()));
            assert!(x == expected, "{threads} threads");
        }
        let share = |range: &Range<usize>| -> usize {
            range
                .clone()
                .map(|s| {
                    supernodes.supernode(s).val().nrows() * supernodes.supernode(s).val().ncols()
                })
                .sum()
        };
        let total = share(&(0..supernodes.symbolic().n_supernodes()));
        for group in [&split.left, &split.right] {
            assert!(share(group) as f64 >= SMALLEST_SHARE * total as f64);
        }
    }
}
