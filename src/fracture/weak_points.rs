//! Material flaws (Glondu 2012 §3.3.5): cracks start at the weak point
//! nearest the most stressed element. A body holds hundreds to thousands of
//! them and an impact can start dozens of cracks, so they are kept in a
//! uniform grid and each query visits the cells around the element only.

use nalgebra::Point3;

/// Weak points (position, tet holding it) in a grid of cubic cells.
#[derive(Debug, Clone, Default)]
pub struct WeakPoints {
    /// In sampling order; a point's index breaks distance ties.
    points: Vec<(Point3<f64>, u32)>,
    lower: Point3<f64>,
    cell_m: f64,
    dims: [usize; 3],
    /// Point indices by cell: cell c holds `by_cell[starts[c]..starts[c + 1]]`.
    starts: Vec<u32>,
    by_cell: Vec<u32>,
}

/// About this many points per cell.
const POINTS_PER_CELL: f64 = 2.0;
/// Rings of cells searched around a query before all points are.
const NEAR_RINGS: usize = 3;
/// Most cells along an axis.
const MAX_CELLS_PER_AXIS: usize = 64;

impl WeakPoints {
    /// Bytes held: the points and the grid over them.
    pub fn bytes(&self) -> usize {
        self.points.len() * std::mem::size_of::<(Point3<f64>, u32)>()
            + (self.starts.len() + self.by_cell.len()) * std::mem::size_of::<u32>()
    }

    /// Weak points with their tets, indexed on a grid for neighbourhood queries.
    pub fn new(points: Vec<(Point3<f64>, u32)>) -> Self {
        let Some(first) = points.first() else {
            return Self::default();
        };
        let (mut lower, mut upper) = (first.0, first.0);
        for (p, _) in &points {
            lower = lower.inf(p);
            upper = upper.sup(p);
        }
        let extent = upper - lower;
        // Cells sized for a few points each over the bounding box (a flat
        // or thin box counts its largest extent once per missing axis).
        let span = extent.max().max(f64::MIN_POSITIVE);
        let volume: f64 = extent.iter().map(|&e| e.max(span * 1e-3)).product();
        let cell_m = (volume * POINTS_PER_CELL / points.len() as f64)
            .cbrt()
            .max(span / MAX_CELLS_PER_AXIS as f64);
        let dims =
            [0, 1, 2].map(|a| ((extent[a] / cell_m).floor() as usize + 1).min(MAX_CELLS_PER_AXIS));
        let mut grid = Self {
            points,
            lower,
            cell_m,
            dims,
            starts: vec![0; dims[0] * dims[1] * dims[2] + 1],
            by_cell: Vec::new(),
        };
        let cells: Vec<usize> = grid
            .points
            .iter()
            .map(|(p, _)| grid.cell_index(grid.cell_of(p)))
            .collect();
        for &c in &cells {
            grid.starts[c + 1] += 1;
        }
        for c in 0..grid.starts.len() - 1 {
            grid.starts[c + 1] += grid.starts[c];
        }
        let mut cursor = grid.starts.clone();
        grid.by_cell = vec![0; grid.points.len()];
        for (i, &c) in cells.iter().enumerate() {
            grid.by_cell[cursor[c] as usize] = i as u32;
            cursor[c] += 1;
        }
        grid
    }

    /// In sampling order.
    pub fn points(&self) -> &[(Point3<f64>, u32)] {
        &self.points
    }

    /// The tet of the weak point nearest `p` among those whose tet is
    /// `usable` (ties: the earlier sampled), or `None` if none is.
    pub fn nearest(&self, p: &Point3<f64>, usable: impl Fn(u32) -> bool) -> Option<u32> {
        if self.points.is_empty() {
            return None;
        }
        let centre = self.cell_of(p);
        let mut best: Option<(f64, u32)> = None;
        let consider = |i: u32, best: &mut Option<(f64, u32)>| {
            let (q, tet) = self.points[i as usize];
            if !usable(tet) {
                return;
            }
            let d = (q - p).norm_squared();
            if best.is_none_or(|(bd, bi)| d < bd || (d == bd && i < bi)) {
                *best = Some((d, i));
            }
        };
        for ring in 0..=NEAR_RINGS {
            self.visit_ring(centre, ring, |i| consider(i, &mut best));
            // Cells of the next ring are at least `ring` cells away.
            let reach = ring as f64 * self.cell_m;
            if best.is_some_and(|(d, _)| d < reach * reach) {
                return best.map(|(_, i)| self.points[i as usize].1);
            }
        }
        // Nothing usable near (a much damaged body): every point.
        for i in 0..self.points.len() as u32 {
            consider(i, &mut best);
        }
        best.map(|(_, i)| self.points[i as usize].1)
    }

    /// Calls `visit` with every point index in the cells at Chebyshev
    /// distance exactly `ring` from `centre`.
    fn visit_ring(&self, centre: [usize; 3], ring: usize, mut visit: impl FnMut(u32)) {
        let range =
            |a: usize| centre[a].saturating_sub(ring)..=(centre[a] + ring).min(self.dims[a] - 1);
        for x in range(0) {
            for y in range(1) {
                for z in range(2) {
                    let on_ring = x.abs_diff(centre[0]) == ring
                        || y.abs_diff(centre[1]) == ring
                        || z.abs_diff(centre[2]) == ring;
                    if !on_ring {
                        continue;
                    }
                    let c = self.cell_index([x, y, z]);
                    for &i in &self.by_cell[self.starts[c] as usize..self.starts[c + 1] as usize] {
                        visit(i);
                    }
                }
            }
        }
    }

    /// The cell holding `p`, clamped to the grid.
    fn cell_of(&self, p: &Point3<f64>) -> [usize; 3] {
        [0, 1, 2].map(|a| {
            let x = ((p[a] - self.lower[a]) / self.cell_m).floor();
            if x.is_nan() || x < 0.0 {
                0
            } else {
                (x as usize).min(self.dims[a] - 1)
            }
        })
    }

    fn cell_index(&self, [x, y, z]: [usize; 3]) -> usize {
        (x * self.dims[1] + y) * self.dims[2] + z
    }
}
