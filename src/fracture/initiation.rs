//! The Rankine test over the modal states of one contact (Glondu 2012
//! Alg. 3, lines 10–11), evaluated exactly only where it can succeed.
//!
//! The test is made at the stress points of [`ModalStress`] (an element's
//! single stress, or a quadratic element's four corners, where its largest
//! principal stress is); "element" below means stress point.
//!
//! Every element's stress at every time sample is `σ_e(t) = Σ_j σ_e,j z_j(t)`
//! (with the static correction, plus `Σ_c σ_r,c F_c(t)` from a second table
//! of the same layout: each [`StressPart`] is bounded as below, and the
//! bounds are summed).
//! Rather than forming all of them (a pass over the whole modal stress table
//! per event, memory bound: 97 MB at 40k tets and 100 modes), each group of
//! [`GROUP_POINTS`](crate::modal::GROUP_POINTS) elements gets the bound
//! `Σ_j max_e‖σ_e,j‖ · max_t|z_j(t)|` of its stresses over the contact. Only
//! groups whose bound exceeds the Rankine threshold are evaluated for the
//! test; then, for the exact peak stress, further groups in decreasing bound
//! order until the bound falls below the peak found (branch and bound). A
//! group taken is first bounded per sample around its centre stress
//! ([`centre_bounds`], a sixteenth of the work) and its stresses are formed
//! only at the samples that bound leaves open. The result is the same as
//! evaluating everything.
//!
//! Without `exact_peak` only the Rankine candidates are evaluated, and in
//! them only the elements whose bounds on σ₁ exceed the threshold: the
//! hot elements, and the peak whenever it is above the threshold, are the
//! same; a peak below it is then a lower bound. A world checking every
//! contact of every step wants only whether and where a crack starts.
//!
//! Crack starts take the hottest few elements of each sample, so the hot
//! lists are ordered lazily ([`HotSample`]): an element enters with an upper
//! bound of σ₁ and its closed form is computed only when it reaches the top.
//! The order taken is the exact order (σ₁ descending, then element index).

use super::stress::max_principal_stress;
use crate::modal::ModalStress;
use rayon::prelude::*;
use std::cmp::Ordering as Order;
use std::collections::binary_heap::PeekMut;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Groups evaluated together once the Rankine candidates are done.
const PEAK_BATCH: usize = 64;

/// Element groups evaluated by one parallel task, their centre bounds
/// formed in one product.
const EVALUATE_TASK_GROUPS: usize = 32;

/// Elements in tension above the threshold, per time sample.
#[derive(Debug, Clone, Default)]
pub(crate) struct Screening {
    /// `hot[k]`: the elements above the threshold at sample k.
    pub hot: Vec<HotSample>,
    /// Voigt stresses of the hot elements entered with a bound.
    pub stresses: Vec<[f32; 6]>,
    /// Largest σ₁ over all elements and samples, or 0 if none is in tension.
    pub peak_stress_pa: f64,
    /// The sample of the peak (the first, at equal peaks).
    pub peak_sample: usize,
    /// Whether the peak is exact whatever its value (else only above the
    /// threshold screened against).
    pub exact: bool,
    /// Element groups whose stresses were formed (at one sample or more).
    pub groups_evaluated: usize,
}

/// One linear part of the stress field of a contact:
/// `σ_e(t_k) = Σ_j σ_e,j · coordinates[k·n + j]` with `n` the table's
/// columns. An impact's field is its modal part (modal coordinates) plus,
/// with the static correction, its residual part (the contact forces).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StressPart<'a> {
    /// Stress per unit coordinate, per element and column.
    pub table: &'a ModalStress,
    /// Coordinates, sample-major.
    pub coordinates: &'a [f32],
}

impl StressPart<'_> {
    fn samples(&self) -> usize {
        self.coordinates
            .len()
            .checked_div(self.table.mode_count())
            .unwrap_or(0)
    }
}

/// The stress (Voigt, Pa) at stress point `point` at sample `k` of the
/// field `parts`.
pub(crate) fn point_stress(parts: &[StressPart], point: usize, k: usize) -> [f64; 6] {
    let mut voigt = [0.0; 6];
    for part in parts {
        let n = part.table.mode_count();
        let s = part
            .table
            .point_stress(point, &part.coordinates[k * n..(k + 1) * n]);
        for (total, v) in voigt.iter_mut().zip(s) {
            *total += f64::from(v);
        }
    }
    voigt
}

/// The stress (Voigt, Pa) of `element` at sample `k` of the field `parts`:
/// at its stress point of largest σ₁ (the one the Rankine test sees).
pub(crate) fn element_stress(parts: &[StressPart], element: usize, k: usize) -> [f64; 6] {
    let Some(first) = parts.first() else {
        return [0.0; 6];
    };
    first
        .table
        .element_points(element)
        .iter()
        .map(|&p| point_stress(parts, p as usize, k))
        .max_by(|a, b| max_principal_stress(a).total_cmp(&max_principal_stress(b)))
        .unwrap_or([0.0; 6])
}

/// Screens the stress field `parts` (all with the same samples and
/// elements) against the Rankine threshold `threshold_pa`; the peak stress
/// is exact if `exact_peak` or if it exceeds the threshold.
pub(crate) fn screen(parts: &[StressPart], threshold_pa: f64, exact_peak: bool) -> Screening {
    let parts: Vec<StressPart> = parts
        .iter()
        .filter(|p| p.table.mode_count() > 0)
        .copied()
        .collect();
    let steps = parts.first().map_or(0, StressPart::samples);
    debug_assert!(parts.iter().all(|p| p.samples() == steps));
    let mut screening = Screening {
        hot: vec![HotSample::default(); steps],
        exact: exact_peak,
        ..Screening::default()
    };
    if steps == 0 {
        return screening;
    }
    let stress = parts[0].table;
    let states: Vec<PartStates> = parts
        .iter()
        .map(|part| {
            let m = part.table.mode_count();
            let magnitudes: Vec<f32> = part.coordinates.iter().map(|v| v.abs()).collect();
            let amplitude: Vec<f32> = (0..m)
                .map(|j| {
                    (0..steps)
                        .map(|k| magnitudes[k * m + j])
                        .fold(0.0, f32::max)
                })
                .collect();
            PartStates {
                table: part.table,
                z: part.coordinates,
                magnitudes,
                amplitude,
            }
        })
        .collect();
    let mut order: Vec<(f32, u32)> = (0..stress.group_count())
        .into_par_iter()
        .with_min_len(512)
        .map(|g| {
            let bound: f32 = states
                .iter()
                .map(|p| p.table.group_bound(g, &p.amplitude))
                .sum();
            (bound, g as u32)
        })
        .filter(|&(bound, _)| bound > 0.0)
        .collect();
    order.par_sort_unstable_by(|a, b| b.0.total_cmp(&a.0));

    // The largest σ₁ found so far by any group: an element whose bound is
    // below it (and below the threshold) can change neither the peak nor
    // the hot lists, whichever group finds it. Results do not depend on the
    // order in which groups run.
    let known_peak = AtomicU64::new(0.0f64.to_bits());
    let states = States {
        parts: states,
        steps,
    };
    let evaluate = |groups: &[(f32, u32)]| -> Vec<GroupResult> {
        // A few microseconds per group: tasks of fewer groups cost more
        // than they save, and a small body (checked inside the world's
        // parallel phase) is best screened on one thread.
        groups
            .par_chunks(EVALUATE_TASK_GROUPS)
            .flat_map_iter(|chunk| {
                let bounds = centre_bounds(chunk, &states);
                let known_peak = exact_peak.then_some(&known_peak);
                let states = &states;
                chunk.iter().zip(bounds).map(move |(&(_, g), bounds)| {
                    evaluate_group(g as usize, &bounds, states, threshold_pa, known_peak)
                })
            })
            .collect()
    };
    let mut gathered: Vec<Vec<HotElement>> = vec![Vec::new(); steps];
    let mut record = |results: Vec<GroupResult>, screening: &mut Screening| {
        for result in results {
            screening.groups_evaluated += usize::from(result.formed);
            screening.raise_peak(result.peak_pa, result.peak_sample);
            let offset = screening.stresses.len() as u32;
            screening.stresses.extend(result.stresses);
            for (k, mut element) in result.hot {
                element.stress += offset;
                gathered[k as usize].push(element);
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
    for (hot, elements) in screening.hot.iter_mut().zip(gathered) {
        // Heapify in linear time.
        hot.heap = BinaryHeap::from(elements);
    }
    // Without the exact peak, each sample's hottest element is brought to
    // the top: its σ₁ (resolved in f64) is the peak when above the
    // threshold. With it, the groups already found the peak.
    for k in 0..steps {
        let hot = &mut screening.hot[k];
        hot.peek_hottest(threshold_pa, &screening.stresses);
        let peak_pa = hot.resolved_peak_pa;
        screening.raise_peak(peak_pa, k);
    }
    screening
}

impl Screening {
    /// When the peak was read (s from the contact's start), for samples
    /// every `sample_interval_s` from the first at one interval; `None`
    /// for a held load.
    pub(super) fn peak_time_s(&self, sample_interval_s: Option<f64>) -> Option<f64> {
        sample_interval_s.map(|dt| dt * (self.peak_sample + 1) as f64)
    }

    /// Takes `peak_pa` at `sample` as the peak if it is higher, or as high
    /// and earlier (so the peak's sample does not depend on the order in
    /// which groups are recorded).
    fn raise_peak(&mut self, peak_pa: f64, sample: usize) {
        if peak_pa > self.peak_stress_pa
            || (peak_pa == self.peak_stress_pa && peak_pa > 0.0 && sample < self.peak_sample)
        {
            self.peak_stress_pa = peak_pa;
            self.peak_sample = sample;
        }
    }
}

/// An element of a hot list: its σ₁ (exact) or an upper bound of it, as
/// f32 (rounding is monotone, so a bound stays above its σ₁); its stress,
/// for the closed form and for crack shielding, is
/// `Screening::stresses[stress]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HotElement {
    key: f32,
    exact: bool,
    /// The stress point.
    point: u32,
    stress: u32,
    /// The number of cracks an exact key's σ₁ is relieved by, once
    /// [`HotSample::pop_hottest_relieved`] has computed it against its
    /// threshold; [`NOT_RELIEVED`] before (the screening's exact keys
    /// passed a lower threshold, the lowest the event can have).
    relieved_by: u32,
    /// Where [`HotSample::relieved`] keeps the stress relieved by those
    /// cracks, or [`NOT_RELIEVED`].
    relieved_at: u32,
}

/// [`HotElement::relieved_by`] and [`HotElement::relieved_at`] of a key
/// not yet relieved.
const NOT_RELIEVED: u32 = u32::MAX;

impl HotElement {
    /// Heap order: larger key first; at equal keys bounds first (their σ₁
    /// may still tie the exact one), then the lower element index.
    fn rank(&self, other: &Self) -> Order {
        self.key
            .total_cmp(&other.key)
            .then(other.exact.cmp(&self.exact))
            .then(other.point.cmp(&self.point))
    }
}

impl PartialEq for HotElement {
    fn eq(&self, other: &Self) -> bool {
        self.rank(other) == Order::Equal
    }
}
impl Eq for HotElement {}
impl PartialOrd for HotElement {
    fn partial_cmp(&self, other: &Self) -> Option<Order> {
        Some(self.cmp(other))
    }
}
impl Ord for HotElement {
    fn cmp(&self, other: &Self) -> Order {
        self.rank(other)
    }
}

/// The elements of one time sample that may exceed the threshold, taken
/// hottest first; closed forms are computed as elements reach the top.
#[derive(Debug, Clone, Default)]
pub(crate) struct HotSample {
    heap: BinaryHeap<HotElement>,
    /// Largest σ₁ the screening computed here, kept or not (Pa).
    resolved_peak_pa: f64,
    /// The relieved stresses of the elements relieved so far
    /// ([`HotElement::relieved_at`]): a point that reaches the top again
    /// is relieved by the cracks since, not by all of them again.
    relieved: Vec<[f64; 6]>,
}

impl HotSample {
    /// Brings an exact element above the threshold to the top, dropping
    /// those whose σ₁ turns out at or below it; returns its σ₁.
    /// `stresses` are [`Screening::stresses`].
    fn peek_hottest(&mut self, threshold_pa: f64, stresses: &[[f32; 6]]) -> Option<f32> {
        while let Some(mut top) = self.heap.peek_mut() {
            if top.exact {
                return Some(top.key);
            }
            let sigma1 = max_principal_stress(&stresses[top.stress as usize].map(f64::from));
            self.resolved_peak_pa = self.resolved_peak_pa.max(sigma1);
            if sigma1 > threshold_pa {
                top.key = sigma1 as f32;
                top.exact = true;
            } else {
                PeekMut::pop(top);
            }
        }
        None
    }

    /// The hottest remaining stress point above the threshold once
    /// relieved: (relieved σ₁, point). `relieve(point, stress, from)`
    /// relieves the point's stress, already relieved by the first `from`
    /// cracks, by the others of the `shields` so far
    /// ([`super::CrackShield::relieve`], in crack order, so the bits are
    /// those of relieving by all of them at once), and returns its σ₁.
    /// A crack never raises σ₁, so a key relieved by fewer cracks is an
    /// upper bound on the point's σ₁ now: points are relieved again only
    /// as they reach the top (a lazily updated priority queue), and a top
    /// relieved by all `shields` cracks is the hottest. Points relieved
    /// to the threshold or below are dropped, as more cracks only relieve
    /// them more.
    ///
    /// The stale points at the top are relieved on the rayon pool in
    /// batches that double, from one per thread: a batch can take points
    /// the one-by-one order would have left, but no more than the batches
    /// before it relieved, so the work stays within about twice what
    /// that order needs (in a sample that starts no crack, every point
    /// above the threshold is relieved either way).
    pub(crate) fn pop_hottest_relieved(
        &mut self,
        threshold_pa: f64,
        stresses: &[[f32; 6]],
        shields: u32,
        relieve: impl Fn(u32, &mut [f64; 6], u32) -> f64 + Sync,
    ) -> Option<(f64, u32)> {
        let current = |e: &HotElement| e.exact && e.relieved_by == shields;
        let mut batch: Vec<(HotElement, [f64; 6])> = Vec::new();
        let mut batch_size = rayon::current_num_threads();
        loop {
            let top = *self.heap.peek()?;
            if current(&top) {
                self.heap.pop();
                // Relieved by every crack so far (`relieved_by` is never
                // `shields` before a batch has relieved it).
                let mut stress = self.relieved[top.relieved_at as usize];
                return Some((relieve(top.point, &mut stress, shields), top.point));
            }
            while batch.len() < batch_size {
                match self.heap.peek_mut() {
                    Some(top) if !current(&top) => {
                        let e = PeekMut::pop(top);
                        let stress = match e.relieved_at {
                            NOT_RELIEVED => stresses[e.stress as usize].map(f64::from),
                            at => self.relieved[at as usize],
                        };
                        batch.push((e, stress));
                    }
                    _ => break,
                }
            }
            batch.par_iter_mut().for_each(|(e, stress)| {
                let sigma1 = if !e.exact && max_principal_stress(stress) <= threshold_pa {
                    threshold_pa
                } else {
                    let from = if e.relieved_by == NOT_RELIEVED {
                        0
                    } else {
                        e.relieved_by
                    };
                    relieve(e.point, stress, from)
                };
                // A dropped point is marked by a key of −∞.
                e.key = if sigma1 > threshold_pa {
                    f32_at_least(sigma1)
                } else {
                    f32::NEG_INFINITY
                };
                e.exact = true;
                e.relieved_by = shields;
            });
            for (mut e, stress) in batch.drain(..) {
                if e.key == f32::NEG_INFINITY {
                    continue;
                }
                if e.relieved_at == NOT_RELIEVED {
                    e.relieved_at = self.relieved.len() as u32;
                    self.relieved.push(stress);
                } else {
                    self.relieved[e.relieved_at as usize] = stress;
                }
                self.heap.push(e);
            }
            batch_size = batch_size.saturating_mul(2);
        }
    }
}

/// The least f32 at or above `x`, so that a key rounded from a relieved
/// σ₁ stays an upper bound on it.
fn f32_at_least(x: f64) -> f32 {
    let rounded = x as f32;
    if f64::from(rounded) >= x || x.is_nan() {
        return rounded;
    }
    // The next f32 up (`f32::next_up`, newer than the crate's MSRV):
    // `rounded` is finite here, as `x as f32` saturates to ±∞.
    if rounded == 0.0 {
        f32::from_bits(1)
    } else if rounded > 0.0 {
        f32::from_bits(rounded.to_bits() + 1)
    } else {
        f32::from_bits(rounded.to_bits() - 1)
    }
}

struct GroupResult {
    /// Whether the group's stresses were formed (else its centre bound
    /// showed that none is wanted).
    formed: bool,
    peak_pa: f64,
    /// The sample of `peak_pa`.
    peak_sample: usize,
    /// (sample, element) that may be above the threshold.
    hot: Vec<(u32, HotElement)>,
    /// Stresses of the elements entered with a bound.
    stresses: Vec<[f32; 6]>,
}

/// The parts of the stress field of one contact with their coordinates'
/// magnitudes.
struct States<'a> {
    parts: Vec<PartStates<'a>>,
    steps: usize,
}

/// One [`StressPart`]: coordinates sample-major (`z[k·n + j]`), their
/// magnitudes |z|, and each column's largest magnitude over the samples.
struct PartStates<'a> {
    table: &'a ModalStress,
    z: &'a [f32],
    magnitudes: Vec<f32>,
    amplitude: Vec<f32>,
}

/// Forms the stresses of group `group` at the samples where its centre
/// bounds `bounds` ([`centre_bounds`]) allow σ₁ above what is wanted, and returns
/// its elements above the threshold. With `known_peak` (f64 bits of the
/// largest σ₁ found by any group, raised here), also the group's exact
/// peak; else the peak only counts elements above the threshold.
fn evaluate_group(
    group: usize,
    bounds: &[CentreBound],
    states: &States,
    threshold_pa: f64,
    known_peak: Option<&AtomicU64>,
) -> GroupResult {
    let mut result = GroupResult {
        formed: false,
        peak_pa: 0.0,
        peak_sample: 0,
        hot: Vec::new(),
        stresses: Vec::new(),
    };
    let shared_peak = || known_peak.map_or(0.0, |p| f64::from_bits(p.load(Ordering::Relaxed)));
    // Elements with σ₁ at or below `wanted` change nothing: below the
    // threshold they start no crack, and a wanted peak is already higher.
    let mut wanted = match known_peak {
        Some(_) => threshold_pa.min(shared_peak()),
        None => threshold_pa,
    };
    let Some(first_sample) = bounds.iter().position(|b| b.exceeds(wanted)) else {
        return result;
    };
    result.formed = true;
    let last_sample = bounds
        .iter()
        .rposition(|b| b.exceeds(wanted))
        .unwrap_or(first_sample);
    let elements = states.parts[0].table.group_points(group);
    let first = elements.start;
    let rows = 6 * elements.len();
    let samples = last_sample + 1 - first_sample;
    // One product per group and part: (6·16 × m)·(m × samples), with
    // faer's SIMD.
    let mut sigma = faer::Mat::<f32>::zeros(rows, samples);
    for part in &states.parts {
        let m = part.table.mode_count();
        let block = part.table.rows(elements.clone());
        let z = &part.z[first_sample * m..(last_sample + 1) * m];
        let z = faer::MatRef::from_column_major_slice(z, m, samples);
        faer::linalg::matmul::matmul(
            sigma.as_mut(),
            faer::Accum::Add,
            block,
            z,
            1.0,
            faer::Par::Seq,
        );
    }
    for (k, bound) in bounds
        .iter()
        .enumerate()
        .take(last_sample + 1)
        .skip(first_sample)
    {
        if !bound.exceeds(wanted) {
            continue;
        }
        let column = sigma.col_as_slice(k - first_sample);
        for (local, voigt) in column.chunks_exact(6).enumerate() {
            let s: [f64; 6] = std::array::from_fn(|c| f64::from(voigt[c]));
            // Two cheap upper bounds of σ₁ skip most elements.
            let gershgorin = gershgorin_bound(&s);
            if gershgorin <= wanted {
                continue;
            }
            let bound = gershgorin.min(deviatoric_bound(&s));
            if bound <= wanted {
                continue;
            }
            let point = (first + local) as u32;
            if known_peak.is_none() {
                // Only the Rankine test is wanted: the closed form waits
                // until the element is among the hottest of its sample.
                result.hot.push((
                    k as u32,
                    HotElement {
                        key: bound as f32,
                        exact: false,
                        point,
                        stress: result.stresses.len() as u32,
                        relieved_by: NOT_RELIEVED,
                        relieved_at: NOT_RELIEVED,
                    },
                ));
                result.stresses.push(std::array::from_fn(|c| voigt[c]));
                continue;
            }
            let sigma1 = max_principal_stress(&s);
            if sigma1 > result.peak_pa {
                result.peak_pa = sigma1;
                result.peak_sample = k;
                wanted = threshold_pa.min(sigma1.max(shared_peak()));
            }
            if sigma1 > threshold_pa {
                result.hot.push((
                    k as u32,
                    HotElement {
                        key: sigma1 as f32,
                        exact: true,
                        point,
                        stress: result.stresses.len() as u32,
                        relieved_by: NOT_RELIEVED,
                        relieved_at: NOT_RELIEVED,
                    },
                ));
                result.stresses.push(std::array::from_fn(|c| voigt[c]));
            }
        }
    }
    if let Some(peak) = known_peak {
        // Non-negative f64s order as their bits do.
        peak.fetch_max(result.peak_pa.to_bits(), Ordering::Relaxed);
    }
    result
}

/// For each group of `groups` (index and bound over the contact,
/// [`ModalStress::group_bound`]) and each sample k, an upper bound of σ₁ of
/// every element of the group at state z_k: an element's stress is the
/// group's centre stress c(z_k) plus a tensor of Frobenius norm at most
/// Σ_j spread_j·|z_kj| ([`ModalStress::group_spread_bounds`]), so by Weyl's
/// inequality σ₁ ≤ λ_max(c(z_k)) + Σ_j spread_j·|z_kj|. The centre costs
/// a sixteenth of the group's stresses; far from the contact it shows
/// that no element can reach the threshold where [`ModalStress::group_bound`]
/// (a bound on the norm over the whole contact) cannot.
fn centre_bounds(groups: &[(f32, u32)], states: &States) -> Vec<Vec<CentreBound>> {
    let indices: Vec<u32> = groups.iter().map(|&(_, g)| g).collect();
    let mut centres = faer::Mat::<f32>::zeros(6 * indices.len(), states.steps);
    let mut spreads = faer::Mat::<f32>::zeros(indices.len(), states.steps);
    let mut m = 0;
    for part in &states.parts {
        let n = part.table.mode_count();
        m += n;
        let z = faer::MatRef::from_column_major_slice(part.z, n, states.steps);
        let magnitudes = faer::MatRef::from_column_major_slice(&part.magnitudes, n, states.steps);
        centres += part.table.group_centre_stresses(&indices, z);
        spreads += part.table.group_spread_bounds(&indices, magnitudes);
    }
    groups
        .iter()
        .enumerate()
        .map(|(i, &(group_bound, _))| {
            // Rounding: the f32 sums over m modes (the elements' stresses,
            // the centre's) each err by at most ~m·6e-8 of the sum of
            // magnitudes, which `group_bound` bounds; 1e-5·m covers them
            // with room.
            let rounding = 1e-5 * m as f64 * f64::from(group_bound);
            (0..states.steps)
                .map(|k| {
                    let centre: [f32; 6] = std::array::from_fn(|r| centres[(6 * i + r, k)]);
                    let gershgorin = gershgorin_bound(&centre.map(f64::from));
                    let spread_pa = f64::from(spreads[(i, k)]);
                    CentreBound {
                        loose: gershgorin + spread_pa + rounding,
                        gershgorin,
                        spread_pa,
                        rounding,
                        centre,
                    }
                })
                .collect()
        })
        .collect()
}

/// The centre bound of one group at one sample ([`centre_bounds`]):
/// min(Gershgorin, deviatoric) of the centre, plus spread and rounding.
#[derive(Debug, Clone, Copy)]
struct CentreBound {
    /// The bound with Gershgorin's term alone: never below the bound, as
    /// rounding is monotone and min(g, d) ≤ g.
    loose: f64,
    gershgorin: f64,
    spread_pa: f64,
    rounding: f64,
    centre: [f32; 6],
}

impl CentreBound {
    /// Whether the bound exceeds `level`. The deviatoric term (a square
    /// root) is formed only when the loose bound does not already say no,
    /// which far from the contact it mostly does.
    fn exceeds(&self, level: f64) -> bool {
        self.loose > level && {
            let deviatoric = deviatoric_bound(&self.centre.map(f64::from));
            self.gershgorin.min(deviatoric) + self.spread_pa + self.rounding > level
        }
    }
}

/// σ₁ ≤ q + √(2/3 · ‖S − qI‖²), q the mean stress: the closed form of
/// [`max_principal_stress`] with its cosine at 1.
fn deviatoric_bound(s: &[f64; 6]) -> f64 {
    let [xx, yy, zz, yz, xz, xy] = *s;
    let q = (xx + yy + zz) / 3.0;
    let deviator = (xx - q).powi(2)
        + (yy - q).powi(2)
        + (zz - q).powi(2)
        + 2.0 * (xy * xy + xz * xz + yz * yz);
    // Rounding margin: the closed form computes the same terms.
    q + (2.0 / 3.0 * deviator).sqrt() * (1.0 + 1e-9) + 1e-9 * q.abs()
}

/// An upper bound of the largest eigenvalue of the symmetric tensor with
/// Voigt components [xx, yy, zz, yz, xz, xy] (Gershgorin's circles).
fn gershgorin_bound(s: &[f64; 6]) -> f64 {
    let [xx, yy, zz, yz, xz, xy] = *s;
    let bound = (xx + xy.abs() + xz.abs())
        .max(yy + xy.abs() + yz.abs())
        .max(zz + xz.abs() + yz.abs());
    // Rounding margin against the closed form's own rounding: a bound
    // must not fall below the σ₁ it bounds.
    bound + 1e-9 * (xx.abs() + yy.abs() + zz.abs() + xy.abs() + xz.abs() + yz.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_up_to_the_next_f32() {
        for x in [
            1.0e8 + 1.0,
            -1.0e8 + 1.0,
            1e-50,
            -1e-50,
            3.0,
            0.1,
            -0.1,
            0.0,
            1e300,
        ] {
            let key = f32_at_least(x);
            assert!(f64::from(key) >= x, "{x}: {key}");
            // The least such f32: the one below is below x.
            let below = f32::from_bits(if key > 0.0 {
                key.to_bits() - 1
            } else if key == 0.0 {
                (-f32::from_bits(1)).to_bits()
            } else {
                key.to_bits() + 1
            });
            assert!(f64::from(below) < x || key == f32::INFINITY, "{x}: {key}");
        }
    }

    /// Points relieved lazily come out in the order of their relieved σ₁,
    /// as relieving every point after every crack would give them.
    #[test]
    fn lazily_relieved_points_come_out_hottest_first() {
        // Uniaxial stresses (σ₁ = σ_xx) at points on a line, entered with
        // bounds half as high again; each crack, at a popped point, halves
        // σ₁ within 3 points of it, again where cracks overlap.
        let count = 200u32;
        let sigma_pa = |p: u32| 1.0e6 * f64::from(1 + (p * 7919) % 101);
        let stresses: Vec<[f32; 6]> = (0..count)
            .map(|p| [sigma_pa(p) as f32, 0.0, 0.0, 0.0, 0.0, 0.0])
            .collect();
        let threshold_pa = 20.0e6;
        let mut hot = HotSample {
            heap: (0..count)
                .map(|p| HotElement {
                    key: (1.5 * sigma_pa(p)) as f32,
                    exact: false,
                    point: p,
                    stress: p,
                    relieved_by: NOT_RELIEVED,
                    relieved_at: NOT_RELIEVED,
                })
                .collect(),
            resolved_peak_pa: 0.0,
            relieved: Vec::new(),
        };
        let relief = |p: u32, cracks: &[u32]| {
            cracks
                .iter()
                .filter(|&&c| c.abs_diff(p) <= 3)
                .fold(1.0, |f, _| f * 0.5)
        };
        let mut cracks: Vec<u32> = Vec::new();
        let mut left: Vec<u32> = (0..count).collect();
        loop {
            // Halving is exact: relieving by the later cracks gives the
            // bits of relieving by all.
            let relieve = |p: u32, s: &mut [f64; 6], from: u32| {
                s[0] *= relief(p, &cracks[from as usize..]);
                s[0]
            };
            // The hottest, the lower point first at equal σ₁.
            let expected = left
                .iter()
                .map(|&p| (sigma_pa(p) as f32 as f64 * relief(p, &cracks), p))
                .filter(|&(s, _)| s > threshold_pa)
                .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
            let popped =
                hot.pop_hottest_relieved(threshold_pa, &stresses, cracks.len() as u32, relieve);
            assert_eq!(popped, expected, "after cracks at {cracks:?}");
            let Some((_, p)) = popped else { break };
            left.retain(|&q| q != p);
            cracks.push(p);
        }
        assert!(cracks.len() > 20, "{} cracks", cracks.len());
        // The screening's exact keys passed a lower threshold than the
        // one popped against: those at or below it never come out.
        let mut screened = HotSample {
            heap: (0..count)
                .map(|p| HotElement {
                    key: sigma_pa(p) as f32,
                    exact: true,
                    point: p,
                    stress: p,
                    relieved_by: NOT_RELIEVED,
                    relieved_at: NOT_RELIEVED,
                })
                .collect(),
            resolved_peak_pa: 0.0,
            relieved: Vec::new(),
        };
        let plain = |_: u32, s: &mut [f64; 6], _: u32| s[0];
        let highest_pa = (0..count).map(sigma_pa).fold(0.0, f64::max);
        assert_eq!(
            screened.pop_hottest_relieved(highest_pa, &stresses, 0, plain),
            None
        );
    }
}
