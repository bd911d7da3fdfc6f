//! The Rankine test over the modal states of one contact (Glondu 2012
//! Alg. 3, lines 10–11), evaluated exactly only where it can succeed.
//!
//! Every element's stress at every time sample is `σ_e(t) = Σ_j σ_e,j z_j(t)`.
//! Rather than forming all of them (a pass over the whole modal stress table
//! per event, memory bound: 97 MB at 40k tets and 100 modes), each group of
//! [`GROUP_ELEMENTS`](crate::modal::GROUP_ELEMENTS) elements gets the bound
//! `Σ_j max_e‖σ_e,j‖ · max_t|z_j(t)|` of its stresses over the contact. Only
//! groups whose bound exceeds the Rankine threshold are evaluated for the
//! test; then, for the exact peak stress, further groups in decreasing bound
//! order until the bound falls below the peak found (branch and bound). The
//! result is the same as evaluating everything.
//!
//! Without `exact_peak` only the Rankine candidates are evaluated, and in
//! them only the elements whose Gershgorin bound exceeds the threshold: the
//! hot elements, and the peak whenever it is above the threshold, are the
//! same; a peak below it is then a lower bound. A world checking every
//! contact of every step wants only whether and where a crack starts.

use super::stress::max_principal_stress;
use crate::modal::ModalStress;
use rayon::prelude::*;

/// Groups evaluated together once the Rankine candidates are done.
const PEAK_BATCH: usize = 64;

/// Elements in tension above the threshold, per time sample.
#[derive(Debug, Clone, Default)]
pub(crate) struct Screening {
    /// `hot[k]`: (σ₁ in Pa, element) above the threshold at sample k,
    /// hottest first.
    pub hot: Vec<Vec<(f32, u32)>>,
    /// Largest σ₁ over all elements and samples, or 0 if none is in tension.
    pub peak_stress_pa: f64,
    /// Element groups whose stresses were formed.
    pub groups_evaluated: usize,
}

/// Screens the modal states `z` (sample-major: `z[k·m + j]`) against the
/// Rankine threshold `threshold_pa`; the peak stress is exact if
/// `exact_peak` or if it exceeds the threshold.
pub(crate) fn screen(
    stress: &ModalStress,
    z: &[f32],
    threshold_pa: f64,
    exact_peak: bool,
) -> Screening {
    let m = stress.mode_count();
    let steps = if m == 0 { 0 } else { z.len() / m };
    let mut screening = Screening {
        hot: vec![Vec::new(); steps],
        ..Screening::default()
    };
    if steps == 0 {
        return screening;
    }
    let amplitude: Vec<f32> = (0..m)
        .map(|j| (0..steps).map(|k| z[k * m + j].abs()).fold(0.0, f32::max))
        .collect();
    let mut order: Vec<(f32, u32)> = (0..stress.group_count())
        .into_par_iter()
        .with_min_len(512)
        .map(|g| (stress.group_bound(g, &amplitude), g as u32))
        .filter(|&(bound, _)| bound > 0.0)
        .collect();
    order.par_sort_unstable_by(|a, b| b.0.total_cmp(&a.0));

    let evaluate = |groups: &[(f32, u32)]| -> Vec<GroupResult> {
        groups
            .par_iter()
            .map(|&(_, g)| evaluate_group(stress, g as usize, z, steps, threshold_pa, exact_peak))
            .collect()
    };
    let record = |results: Vec<GroupResult>, screening: &mut Screening| {
        for result in results {
            screening.peak_stress_pa = screening.peak_stress_pa.max(result.peak_pa);
            for (k, sigma, e) in result.hot {
                screening.hot[k as usize].push((sigma, e));
            }
        }
    };
    let candidates = order.partition_point(|&(bound, _)| f64::from(bound) > threshold_pa);
    record(evaluate(&order[..candidates]), &mut screening);
    let mut next = candidates;
    while exact_peak && next < order.len() && f64::from(order[next].0) > screening.peak_stress_pa {
        let end = (next + PEAK_BATCH).min(order.len());
        record(evaluate(&order[next..end]), &mut screening);
        next = end;
    }
    screening.groups_evaluated = next;
    for hot in &mut screening.hot {
        hot.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    }
    screening
}

struct GroupResult {
    peak_pa: f64,
    /// (sample, σ₁, element) above the threshold.
    hot: Vec<(u32, f32, u32)>,
}

fn evaluate_group(
    stress: &ModalStress,
    group: usize,
    z: &[f32],
    steps: usize,
    threshold_pa: f64,
    exact_peak: bool,
) -> GroupResult {
    let m = stress.mode_count();
    let elements = stress.group_elements(group);
    let rows = 6 * elements.len();
    // One product per group: (6·16 × m)·(m × steps), with faer's SIMD.
    let block = stress.rows(elements.clone());
    let states = faer::MatRef::from_column_major_slice(z, m, steps);
    let mut sigma = faer::Mat::<f32>::zeros(rows, steps);
    faer::linalg::matmul::matmul(
        sigma.as_mut(),
        faer::Accum::Replace,
        block,
        states,
        1.0,
        faer::Par::Seq,
    );
    let mut result = GroupResult {
        peak_pa: 0.0,
        hot: Vec::new(),
    };
    for (local, e) in elements.enumerate() {
        for k in 0..steps {
            let s: [f64; 6] = std::array::from_fn(|c| f64::from(sigma[(6 * local + c, k)]));
            // Gershgorin's bound on σ₁ skips the closed form for elements
            // that can neither start a crack nor raise a wanted peak.
            let wanted = if exact_peak {
                threshold_pa.min(result.peak_pa)
            } else {
                threshold_pa
            };
            if gershgorin_bound(&s) <= wanted {
                continue;
            }
            let sigma1 = max_principal_stress(&s);
            result.peak_pa = result.peak_pa.max(sigma1);
            if sigma1 > threshold_pa {
                result.hot.push((k as u32, sigma1 as f32, e as u32));
            }
        }
    }
    result
}

/// An upper bound of the largest eigenvalue of the symmetric tensor with
/// Voigt components [xx, yy, zz, yz, xz, xy] (Gershgorin's circles).
fn gershgorin_bound(s: &[f64; 6]) -> f64 {
    let [xx, yy, zz, yz, xz, xy] = *s;
    (xx + xy.abs() + xz.abs())
        .max(yy + xy.abs() + yz.abs())
        .max(zz + xz.abs() + yz.abs())
}
