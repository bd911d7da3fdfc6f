//! The stress field of a body's last impact, kept so that a viewer can
//! show where the body came closest to breaking: the largest maximum
//! principal stress over the impact's time samples (§3.3.3) in each
//! element, over the Rankine threshold R_c (the colour map of Glondu
//! Fig. 5.24). Evaluated off the simulation thread, on demand.

use super::initiation::{element_stress, StressPart};
use super::stress::max_principal_stress;
use crate::config::Material;
use crate::fem::ElasticMesh;
use crate::mesh::TetMesh;
use crate::modal::{ModalBasis, ModalDisplacement, ModalStress};
use nalgebra::Point3;
use std::sync::Arc;

/// Most cells of the nearest-element grid along one axis.
const MAX_GRID_CELLS: usize = 64;

/// The static correction of one impact's field: per contact, the
/// stresses and node displacements of its residual shape per newton
/// (the `modal` module's `StaticCorrection`), the contact's force being
/// its coordinate; with the second-order term, then per contact those of
/// its second-order shape, with coordinate −F̈.
#[derive(Debug)]
pub(crate) struct ResidualField {
    pub(super) stress: ModalStress,
    pub(super) displacement: ModalDisplacement,
}

impl ResidualField {
    /// From the residual shapes (DOFs × contacts on `elastic`).
    pub(super) fn new(elastic: &ElasticMesh, material: &Material, shapes: &faer::Mat<f64>) -> Self {
        Self {
            stress: ModalStress::new(elastic, material, shapes),
            displacement: ModalDisplacement::new(shapes, elastic.corner_count()),
        }
    }

    /// Number of shapes (columns).
    pub(super) fn contacts(&self) -> usize {
        self.stress.mode_count()
    }
}

/// A body's last impact: shared handles to its mesh and modal basis and the
/// modal states of the impact's samples; cheap to clone and to send to
/// another thread.
#[derive(Debug, Clone)]
pub struct ImpactStress {
    pub(super) mesh: Arc<TetMesh>,
    pub(super) basis: Arc<ModalBasis>,
    /// The body's elements (a fragment's part of a shared mesh); `None`:
    /// all of them.
    pub(super) tets: Option<Arc<[bool]>>,
    /// Modal states, sample-major (one per mode per sample).
    pub(super) states: Arc<[f32]>,
    /// The static correction and its contact forces, sample-major.
    pub(super) residual: Option<(Arc<ResidualField>, Arc<[f32]>)>,
    pub(super) threshold_pa: f64,
    /// Which impact of the body this is, counting from 1.
    pub serial: u64,
}

impl ImpactStress {
    /// The largest σ₁ over the impact's samples, over the impact's Rankine
    /// threshold (R_c, or R_c scaled to the event), per element of the
    /// body (0 where it stays in compression); elements outside the body
    /// are `None`.
    pub fn element_ratios(&self) -> Vec<Option<f32>> {
        let stress = self.basis.stress();
        let m = stress.mode_count();
        let samples = self.states.len().checked_div(m).unwrap_or(0);
        let mut parts = vec![StressPart {
            table: stress,
            coordinates: &self.states,
        }];
        if let Some((field, forces)) = &self.residual {
            parts.push(StressPart {
                table: &field.stress,
                coordinates: forces,
            });
        }
        (0..stress.element_count())
            .map(|e| {
                if self
                    .tets
                    .as_ref()
                    .is_some_and(|t| !t.get(e).copied().unwrap_or(false))
                {
                    return None;
                }
                let peak_pa = (0..samples)
                    .map(|k| max_principal_stress(&element_stress(&parts, e, k)))
                    .fold(0.0, f64::max);
                Some((peak_pa / self.threshold_pa) as f32)
            })
            .collect()
    }

    /// [`Self::element_ratios`] at the body's element centroids, ready
    /// for lookups: all a map of the impact needs once evaluated, without
    /// the body's mesh or basis.
    pub fn field(&self) -> StressField {
        let elements: Vec<(Point3<f64>, f32)> = self
            .element_ratios()
            .iter()
            .enumerate()
            .filter_map(|(e, r)| r.map(|r| (self.mesh.tet_centroid(e), r)))
            .collect();
        StressField {
            serial: self.serial,
            grid: Grid::new(&elements),
            elements,
        }
    }

    /// [`Self::element_ratios`] at `points` (in the body's frame, m): the
    /// ratio of the body's element whose centroid is nearest to each.
    pub fn ratios_at(&self, points: &[[f32; 3]]) -> Vec<f32> {
        self.field().ratios_at(points)
    }
}

/// An impact's σ₁/R_c per element ([`ImpactStress::element_ratios`]) at
/// the elements' centroids, with a grid for nearest-centroid lookups.
#[derive(Debug)]
pub struct StressField {
    /// Which impact of the body this is, counting from 1.
    pub serial: u64,
    elements: Vec<(Point3<f64>, f32)>,
    grid: Grid,
}

impl StressField {
    /// The ratio of the element whose centroid is nearest to each of
    /// `points` (in the body's frame, m); 0 for a body with no element.
    pub fn ratios_at(&self, points: &[[f32; 3]]) -> Vec<f32> {
        points
            .iter()
            .map(|p| {
                let p = Point3::new(f64::from(p[0]), f64::from(p[1]), f64::from(p[2]));
                self.grid
                    .nearest(&self.elements, &p)
                    .map_or(0.0, |e| self.elements[e].1)
            })
            .collect()
    }
}

/// A uniform grid of element centroids for nearest-centroid queries.
#[derive(Debug)]
struct Grid {
    origin: Point3<f64>,
    cell_m: f64,
    dims: [usize; 3],
    cells: Vec<Vec<u32>>,
}

impl Grid {
    fn new(elements: &[(Point3<f64>, f32)]) -> Self {
        let (mut lo, mut hi) = (Point3::from([f64::MAX; 3]), Point3::from([f64::MIN; 3]));
        for (c, _) in elements {
            lo = lo.inf(c);
            hi = hi.sup(c);
        }
        if elements.is_empty() {
            (lo, hi) = (Point3::origin(), Point3::origin());
        }
        let extent = hi - lo;
        // About one element per cell.
        let volume = extent.x.max(1e-9) * extent.y.max(1e-9) * extent.z.max(1e-9);
        let cell_m = (volume / elements.len().max(1) as f64)
            .cbrt()
            .max(extent.max() / MAX_GRID_CELLS as f64)
            .max(1e-9);
        let dims = [0, 1, 2].map(|i| ((extent[i] / cell_m) as usize + 1).min(MAX_GRID_CELLS));
        let mut grid = Self {
            origin: lo,
            cell_m,
            dims,
            cells: vec![Vec::new(); dims[0] * dims[1] * dims[2]],
        };
        for (e, (c, _)) in elements.iter().enumerate() {
            let index = grid.index(&grid.cell_of(c));
            grid.cells[index].push(e as u32);
        }
        grid
    }

    fn cell_of(&self, p: &Point3<f64>) -> [usize; 3] {
        [0, 1, 2].map(|i| {
            let k = ((p[i] - self.origin[i]) / self.cell_m).floor();
            (k.max(0.0) as usize).min(self.dims[i] - 1)
        })
    }

    fn index(&self, c: &[usize; 3]) -> usize {
        (c[2] * self.dims[1] + c[1]) * self.dims[0] + c[0]
    }

    /// The element nearest to `p`: rings of cells around its cell, until
    /// the ring is farther than the best found.
    fn nearest(&self, elements: &[(Point3<f64>, f32)], p: &Point3<f64>) -> Option<usize> {
        let centre = self.cell_of(p);
        let mut best: Option<(f64, usize)> = None;
        let largest = self.dims.into_iter().max().unwrap_or(1);
        for ring in 0..=largest {
            // Every point of a cell `ring` away is at least this far.
            let reach_m = (ring as f64 - 1.0).max(0.0) * self.cell_m;
            if best.is_some_and(|(d2, _)| d2 < reach_m * reach_m) {
                break;
            }
            let range = |i: usize| {
                centre[i].saturating_sub(ring)..=(centre[i] + ring).min(self.dims[i] - 1)
            };
            for z in range(2) {
                for y in range(1) {
                    for x in range(0) {
                        let on_ring = [x, y, z]
                            .iter()
                            .zip(centre)
                            .any(|(&a, c)| a.abs_diff(c) == ring);
                        if !on_ring {
                            continue;
                        }
                        for &e in &self.cells[self.index(&[x, y, z])] {
                            let d2 = (elements[e as usize].0 - p).norm_squared();
                            if best.is_none_or(|(b, _)| d2 < b) {
                                best = Some((d2, e as usize));
                            }
                        }
                    }
                }
            }
        }
        best.map(|(_, e)| e)
    }
}
