//! The tests a 2-AFC study reports (Glondu 2012 §5.2.3): the exact
//! two-sided binomial test per pair of levels with Bonferroni correction,
//! the Wilcoxon signed-rank test between conditions, and the Friedman test
//! on the questionnaire's confidence marks.
//!
//! Each follows `scipy.stats` (1.14) exactly, down to its choice of method,
//! so that a p-value here is the one a reader recomputes there;
//! `tests/fixtures/study_stats.json` (made by `tools/study_fixtures.py`)
//! holds scipy's answers and `tests/study.rs` compares at 1e-9 relative.

use puruspe::{erfc, gammq};

/// Why a test has no answer for these data.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    /// Too few observations for the test.
    #[error("{test}: {message}")]
    Degenerate {
        /// The test's name.
        test: &'static str,
        /// What is missing.
        message: String,
    },
}

/// ln P(X = x) for every x in 0..=n, X ~ Binomial(n, p), from the
/// recurrence P(x+1) / P(x) = (n − x) p / ((x + 1)(1 − p)) summed in logs
/// (exact to a few ulps per term, where log-gamma would lose digits).
pub fn binomial_log_pmfs(n: u64, p: f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(n as usize + 1);
    if p <= 0.0 || p >= 1.0 {
        let at = if p <= 0.0 { 0 } else { n };
        out.extend((0..=n).map(|x| if x == at { 0.0 } else { f64::NEG_INFINITY }));
        return out;
    }
    let odds = (p / (1.0 - p)).ln();
    let mut log_pmf = n as f64 * (-p).ln_1p();
    out.push(log_pmf);
    for x in 0..n {
        log_pmf += ((n - x) as f64 / (x + 1) as f64).ln() + odds;
        out.push(log_pmf);
    }
    out
}

/// The exact two-sided binomial test of `k` successes in `n` trials
/// against success probability `p`: the probability of every outcome no
/// more likely than the one observed (with scipy's relative tolerance of
/// 1e-7 on "no more likely", `scipy.stats.binomtest`).
pub fn binomial_test_two_sided(k: u64, n: u64, p: f64) -> f64 {
    if n == 0 || k > n || k as f64 == p * n as f64 {
        return 1.0;
    }
    let log_pmfs = binomial_log_pmfs(n, p);
    let observed = log_pmfs[k as usize] + (1e-7_f64).ln_1p();
    let total: f64 = log_pmfs
        .iter()
        .filter(|&&l| l <= observed)
        .map(|l| l.exp())
        .sum();
    total.min(1.0)
}

/// Bonferroni's correction of one of `tests` p-values.
pub fn bonferroni(p_value: f64, tests: usize) -> f64 {
    (p_value * tests as f64).min(1.0)
}

/// Ranks of `values` from 1, ties sharing their average rank
/// (`scipy.stats.rankdata(method="average")`), and the sizes of the ties.
pub fn average_ranks(values: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut ties = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        // Positions start..end hold ranks start+1 ..= end.
        let rank = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = rank;
        }
        if end - start > 1 {
            ties.push(end - start);
        }
        start = end;
    }
    (ranks, ties)
}

/// Which null distribution a signed-rank p-value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WilcoxonMethod {
    /// The exact distribution of the rank sum (at most 50 pairs, none
    /// equal).
    Exact,
    /// The normal approximation with the tie correction of the variance.
    Approx,
}

/// A Wilcoxon signed-rank test's result.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SignedRank {
    /// min(R+, R−).
    pub statistic: f64,
    /// Two-sided.
    pub p_value: f64,
    /// Which distribution `p_value` is from.
    pub method: WilcoxonMethod,
    /// Pairs that differ (the test drops equal pairs, Wilcoxon's rule).
    pub pairs_used: usize,
}

/// The two-sided Wilcoxon signed-rank test of paired samples `x`, `y`,
/// as `scipy.stats.wilcoxon(x, y)` with its defaults: equal pairs dropped
/// (`zero_method="wilcox"`), the exact distribution when there are at most
/// 50 pairs and none equal (ties among the differences round the statistic
/// outwards, scipy gh-19872), else the normal approximation without
/// continuity correction.
pub fn wilcoxon_signed_rank(x: &[f64], y: &[f64]) -> Result<SignedRank, StatsError> {
    let degenerate = |message: String| StatsError::Degenerate {
        test: "Wilcoxon signed-rank",
        message,
    };
    if x.len() != y.len() {
        return Err(degenerate(format!(
            "{} and {} observations are not paired",
            x.len(),
            y.len()
        )));
    }
    let all: Vec<f64> = x.iter().zip(y).map(|(a, b)| a - b).collect();
    let zeros = all.iter().filter(|d| **d == 0.0).count();
    let d: Vec<f64> = all.iter().copied().filter(|d| *d != 0.0).collect();
    if d.is_empty() {
        return Err(degenerate("every pair is equal".into()));
    }
    let n = d.len();
    let magnitudes: Vec<f64> = d.iter().map(|v| v.abs()).collect();
    let (ranks, ties) = average_ranks(&magnitudes);
    let r_plus: f64 = d
        .iter()
        .zip(&ranks)
        .filter(|(v, _)| **v > 0.0)
        .map(|(_, r)| r)
        .sum();
    let r_minus: f64 = d
        .iter()
        .zip(&ranks)
        .filter(|(v, _)| **v < 0.0)
        .map(|(_, r)| r)
        .sum();
    let nf = n as f64;
    let method = if all.len() <= 50 && zeros == 0 {
        WilcoxonMethod::Exact
    } else {
        WilcoxonMethod::Approx
    };
    let p_value = match method {
        WilcoxonMethod::Exact => {
            let pmf = signed_rank_distribution(n);
            let at_least = |k: f64| -> f64 {
                let k = k.max(0.0) as usize;
                pmf.iter().skip(k).sum()
            };
            let at_most = |k: f64| -> f64 {
                let k = k.max(0.0) as usize;
                pmf.iter().take(k + 1).sum()
            };
            (2.0 * at_least(r_plus.floor()).min(at_most(r_plus.ceil()))).clamp(0.0, 1.0)
        }
        WilcoxonMethod::Approx => {
            let mean = nf * (nf + 1.0) / 4.0;
            let tie_sum: f64 = ties.iter().map(|&t| (t * t * t - t) as f64).sum();
            let se = ((nf * (nf + 1.0) * (2.0 * nf + 1.0) - tie_sum / 2.0) / 24.0).sqrt();
            let z = (r_plus - mean) / se;
            // 2·Φ(−|z|) = erfc(|z|/√2).
            erfc(z.abs() / std::f64::consts::SQRT_2).min(1.0)
        }
    };
    Ok(SignedRank {
        // + 0.0: an empty sum is −0.0, which prints as "-0".
        statistic: r_plus.min(r_minus) + 0.0,
        p_value,
        method,
        pairs_used: n,
    })
}

/// The null distribution of R+ for `n` differences: the number of subsets
/// of {1, …, n} with each sum, over 2ⁿ (exact in f64 for n ≤ 50).
fn signed_rank_distribution(n: usize) -> Vec<f64> {
    let max = n * (n + 1) / 2;
    let mut counts = vec![0.0_f64; max + 1];
    counts[0] = 1.0;
    for rank in 1..=n {
        for s in (rank..=max).rev() {
            counts[s] += counts[s - rank];
        }
    }
    let total = 2f64.powi(n as i32);
    counts.iter().map(|c| c / total).collect()
}

/// A Friedman test's result.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Friedman {
    /// The tie-corrected chi-square statistic.
    pub statistic: f64,
    /// Its upper tail with (treatments − 1) degrees of freedom.
    pub p_value: f64,
}

/// The Friedman test of `treatments` (each one value per block, blocks
/// in the same order), as `scipy.stats.friedmanchisquare` with its tie
/// correction. scipy asks for three treatments; the statistic is defined
/// for two (Glondu §5.2.3 applies it to two conditions) and computed the
/// same way here.
pub fn friedman(treatments: &[&[f64]]) -> Result<Friedman, StatsError> {
    let degenerate = |message: String| StatsError::Degenerate {
        test: "Friedman",
        message,
    };
    let k = treatments.len();
    if k < 2 {
        return Err(degenerate(format!(
            "{k} treatments; it compares two or more"
        )));
    }
    let n = treatments[0].len();
    if n == 0 || treatments.iter().any(|t| t.len() != n) {
        return Err(degenerate(
            "every treatment needs the same number of blocks, at least one".into(),
        ));
    }
    let mut rank_sums = vec![0.0; k];
    let mut tie_sum = 0.0;
    for block in 0..n {
        let row: Vec<f64> = treatments.iter().map(|t| t[block]).collect();
        let (ranks, ties) = average_ranks(&row);
        for (sum, r) in rank_sums.iter_mut().zip(ranks) {
            *sum += r;
        }
        tie_sum += ties.iter().map(|&t| (t * (t * t - 1)) as f64).sum::<f64>();
    }
    let (kf, nf) = (k as f64, n as f64);
    let correction = 1.0 - tie_sum / (kf * (kf * kf - 1.0) * nf);
    if correction <= 0.0 {
        return Err(degenerate(
            "every block gives every treatment the same value".into(),
        ));
    }
    let ss: f64 = rank_sums.iter().map(|r| r * r).sum();
    let statistic = (12.0 / (kf * nf * (kf + 1.0)) * ss - 3.0 * nf * (kf + 1.0)) / correction;
    Ok(Friedman {
        statistic,
        p_value: chi_square_upper_tail(statistic, kf - 1.0),
    })
}

/// P(χ²_ν > x): the regularised upper incomplete gamma Q(ν/2, x/2).
pub fn chi_square_upper_tail(x: f64, dof: f64) -> f64 {
    if x <= 0.0 {
        1.0
    } else {
        gammq(dof / 2.0, x / 2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn average_ranks_share_ties() {
        let (r, ties) = average_ranks(&[3.0, 1.0, 3.0, 2.0]);
        assert_eq!(r, vec![3.5, 1.0, 3.5, 2.0]);
        assert_eq!(ties, vec![2]);
    }

    #[test]
    fn the_signed_rank_distribution_sums_to_one_and_is_symmetric() {
        let pmf = signed_rank_distribution(10);
        assert!((pmf.iter().sum::<f64>() - 1.0).abs() < 1e-15);
        let m = pmf.len() - 1;
        for s in 0..=m {
            assert_eq!(pmf[s], pmf[m - s]);
        }
    }

    #[test]
    fn a_fair_binomial_outcome_at_its_mean_has_p_one() {
        assert_eq!(binomial_test_two_sided(5, 10, 0.5), 1.0);
        // Hand-worked: 10 of 10 at p = 1/2: 2 · 2⁻¹⁰.
        let p = binomial_test_two_sided(10, 10, 0.5);
        assert!((p - 2.0 / 1024.0).abs() < 1e-15, "{p}");
    }
}
