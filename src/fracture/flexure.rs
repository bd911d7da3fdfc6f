//! The flexure tests that measure a brittle material's strength, simulated
//! statically: ring-on-ring (ASTM C1499) and three-point bending
//! (ASTM C1161). Each builds the specimen's mesh, loads it with its rings or
//! lines as uniform line loads, solves the static response and gives the
//! stress field, to check against the tests' closed forms and to compute
//! their Weibull effective sizes ([`effective_size`]).
//!
//! The loads are self-equilibrated (the supports' reactions are applied as
//! line loads too), so the free body's static response with its rigid
//! motions removed ([`StaticCorrection`] with no modes retained: the
//! inertia relief of a balanced load is nil) is the supported specimen's.
//! A support's line reaction is taken as uniform, as the closed forms
//! take it.

use super::batdorf::NormalStressAverage;
use super::strength::{effective_size, FlawPopulation};
use super::stress::max_principal_stress;
use crate::config::{Material, WeibullCriterion};
use crate::fem::{ElasticMesh, ElementOrder};
use crate::mesh::{box_mesh, plate_mesh, MeshError, TetMesh};
use crate::modal::{EigenError, EigenSettings, ModalStress, StaticCorrection};
use faer::Mat;
use nalgebra::Point3;
use std::f64::consts::PI;

/// Why a test could not be simulated.
#[derive(Debug, thiserror::Error)]
pub enum FlexureError {
    /// The geometry is not a valid test (named field).
    #[error("{field}: {message}")]
    Geometry {
        /// The field at fault.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The specimen's mesh could not be built.
    #[error(transparent)]
    Mesh(#[from] MeshError),
    /// The static solve failed (or would exceed the memory budget).
    #[error(transparent)]
    Solve(#[from] EigenError),
}

/// A ring-on-ring (coaxial double ring) test of a disc, ASTM C1499.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RingOnRing {
    /// The disc's diameter D (m).
    pub specimen_diameter_m: f64,
    /// The support ring's diameter D_S (m), under the disc.
    pub support_diameter_m: f64,
    /// The load ring's diameter D_L (m), on top.
    pub load_diameter_m: f64,
    /// The disc's thickness h (m).
    pub thickness_m: f64,
}

impl Default for RingOnRing {
    /// A 50 mm disc, 2 mm thick, on rings of 40 and 20 mm (D_L/D_S = 0.5,
    /// within ASTM C1499's 0.2 to 0.5).
    fn default() -> Self {
        Self {
            specimen_diameter_m: 0.05,
            support_diameter_m: 0.04,
            load_diameter_m: 0.02,
            thickness_m: 0.002,
        }
    }
}

impl RingOnRing {
    /// The equibiaxial stress inside the load ring under the force
    /// `force_n` (ASTM C1499 eq. 1, thin-plate theory):
    /// `σ = 3F/(2πh²) [(1 − ν)(D_S² − D_L²)/(2D²) + (1 + ν) ln(D_S/D_L)]`.
    pub fn closed_form_stress_pa(&self, force_n: f64, poisson_ratio: f64) -> f64 {
        let (d, ds, dl, h) = (
            self.specimen_diameter_m,
            self.support_diameter_m,
            self.load_diameter_m,
            self.thickness_m,
        );
        let nu = poisson_ratio;
        3.0 * force_n / (2.0 * PI * h * h)
            * ((1.0 - nu) * (ds * ds - dl * dl) / (2.0 * d * d) + (1.0 + nu) * (ds / dl).ln())
    }

    /// Thin-plate theory's radial and hoop stresses (Pa) on the tensile
    /// face at radius `r_m` under the force `force_n` (Timoshenko &
    /// Woinowsky-Krieger, *Theory of Plates and Shells*, ch. 3): the
    /// axisymmetric slope `φ = w′` is `C₁r` inside the load ring,
    /// `P r ln r/(4πD) + C₂r + C₃/r` between the rings (the shear of the
    /// load), `C₄r + C₅/r` on the overhang; slope and radial moment are
    /// continuous at both rings and the moment vanishes at the edge. Inside
    /// the load ring this is [`Self::closed_form_stress_pa`]. NaN for rings
    /// that do not nest (load < support ≤ specimen diameter).
    pub fn plate_theory_stresses_pa(&self, force_n: f64, poisson_ratio: f64, r_m: f64) -> [f64; 2] {
        let nu = poisson_ratio;
        let (b, a, edge) = (
            self.load_diameter_m / 2.0,
            self.support_diameter_m / 2.0,
            self.specimen_diameter_m / 2.0,
        );
        // With D = 1: moments M = −(φ′ + νφ/r), −(φ/r + νφ′); the
        // unknowns are C₁…C₅, `p` the particular solution's coefficient.
        let p = force_n / (4.0 * PI);
        // (φ, M_r) at r of each term of the slope per unit coefficient:
        // C·r, C/r, and the particular p·r ln r.
        let linear = |r: f64| [r, -(1.0 + nu)];
        let inverse = |r: f64| [1.0 / r, (1.0 - nu) / (r * r)];
        let log = |r: f64| [r * r.ln(), -((r.ln() + 1.0) + nu * r.ln())];
        let mut system = nalgebra::Matrix5::<f64>::zeros();
        let mut rhs = nalgebra::Vector5::<f64>::zeros();
        for quantity in 0..2 {
            // At b: inner C₁r against C₂r + C₃/r + p r ln r.
            let row = quantity;
            system[(row, 0)] = linear(b)[quantity];
            system[(row, 1)] = -linear(b)[quantity];
            system[(row, 2)] = -inverse(b)[quantity];
            rhs[row] = p * log(b)[quantity];
            // At a: C₂r + C₃/r + p r ln r against the overhang's C₄r + C₅/r.
            let row = 2 + quantity;
            system[(row, 1)] = linear(a)[quantity];
            system[(row, 2)] = inverse(a)[quantity];
            system[(row, 3)] = -linear(a)[quantity];
            system[(row, 4)] = -inverse(a)[quantity];
            rhs[row] = -p * log(a)[quantity];
        }
        system[(4, 3)] = linear(edge)[1];
        system[(4, 4)] = inverse(edge)[1];
        let c = system
            .lu()
            .solve(&rhs)
            .unwrap_or_else(|| nalgebra::Vector5::repeat(f64::NAN));
        // φ and φ′ at r.
        let (phi, dphi) = if r_m <= b {
            (c[0] * r_m, c[0])
        } else if r_m <= a {
            (
                p * r_m * r_m.ln() + c[1] * r_m + c[2] / r_m,
                p * (r_m.ln() + 1.0) + c[1] - c[2] / (r_m * r_m),
            )
        } else {
            (c[3] * r_m + c[4] / r_m, c[3] - c[4] / (r_m * r_m))
        };
        let over_r = if r_m > 0.0 { phi / r_m } else { dphi };
        // σ = 6M/h² on the tensile face (M = −D(…), D cancels: the
        // particular term carried P/(4π) for D = 1).
        let to_stress = 6.0 / (self.thickness_m * self.thickness_m);
        [
            -(dphi + nu * over_r) * to_stress,
            -(over_r + nu * dphi) * to_stress,
        ]
    }

    /// Thin-plate theory's effective area (m²) for Weibull modulus
    /// `modulus` under `criterion` ([`Strength`](super::Strength)): the
    /// tensile face's `∫ (σ₁/σ_max)^m 2πr dr` with σ₁ = max(σ_r, σ_θ), or
    /// `∫ ((σ_r/σ_max)^m + (σ_θ/σ_max)^m) 2πr dr` over their tensile
    /// values under independent action, or Batdorf's orientation mean of
    /// (σ_r, σ_θ) (`fracture::batdorf`), plus the rim's tensile half (where
    /// σ_r = 0), by a 20 000-interval midpoint rule on the closed-form
    /// field [`Self::plate_theory_stresses_pa`].
    pub fn plate_theory_effective_area_m2(
        &self,
        poisson_ratio: f64,
        modulus: f64,
        criterion: WeibullCriterion,
    ) -> f64 {
        let edge = self.specimen_diameter_m / 2.0;
        let peak = self.closed_form_stress_pa(1.0, poisson_ratio);
        let weight = |sigma: f64| (sigma.max(0.0) / peak).powf(modulus);
        let batdorf = (criterion == WeibullCriterion::BatdorfNormalStress)
            .then(|| NormalStressAverage::new(FlawPopulation::Surface, modulus));
        let integrand = |r: f64| {
            let [radial, hoop] = self.plate_theory_stresses_pa(1.0, poisson_ratio, r);
            match criterion {
                WeibullCriterion::MaximumPrincipal => weight(radial.max(hoop)),
                WeibullCriterion::IndependentAction => weight(radial) + weight(hoop),
                WeibullCriterion::BatdorfNormalStress => batdorf
                    .as_ref()
                    .expect("built for this criterion")
                    .weight(&[radial.max(hoop), radial.min(hoop)], peak),
            }
        };
        let intervals = 20_000;
        let dr = edge / intervals as f64;
        let face: f64 = (0..intervals)
            .map(|i| {
                let r = (i as f64 + 0.5) * dr;
                integrand(r) * 2.0 * PI * r * dr
            })
            .sum();
        // The rim: hoop stress linear through the thickness, tensile half.
        let [_, rim_hoop] = self.plate_theory_stresses_pa(1.0, poisson_ratio, edge);
        let rim = 2.0 * PI * edge * self.thickness_m / 2.0 / (modulus + 1.0)
            * (rim_hoop.max(0.0) / peak).powf(modulus);
        face + rim
    }

    fn check(&self) -> Result<(), FlexureError> {
        positive_lengths(&[
            ("specimen_diameter_m", self.specimen_diameter_m),
            ("support_diameter_m", self.support_diameter_m),
            ("load_diameter_m", self.load_diameter_m),
            ("thickness_m", self.thickness_m),
        ])?;
        if !(self.load_diameter_m < self.support_diameter_m
            && self.support_diameter_m <= self.specimen_diameter_m)
        {
            return Err(FlexureError::Geometry {
                field: "support_diameter_m",
                message: "the rings must nest: load < support ≤ specimen diameter".into(),
            });
        }
        Ok(())
    }

    /// The static stress field of the test under `force_n` on a round
    /// plate mesh ([`plate_mesh`]) of `rings_in_load_radius` rings inside
    /// the load ring (the spacing must also divide the support and
    /// specimen radii) and `layers` layers, of `order` elements.
    pub fn simulate(
        &self,
        material: &Material,
        force_n: f64,
        rings_in_load_radius: usize,
        layers: usize,
        order: ElementOrder,
    ) -> Result<FlexureField, FlexureError> {
        self.check()?;
        let radius = self.specimen_diameter_m / 2.0;
        let spacing = self.load_diameter_m / 2.0 / rings_in_load_radius.max(1) as f64;
        let rings_at = |diameter: f64, field| {
            let rings = diameter / 2.0 / spacing;
            if (rings - rings.round()).abs() > 1e-6 {
                return Err(FlexureError::Geometry {
                    field,
                    message: format!(
                        "{diameter} m is not a whole number of the mesh's ring spacing \
                         {spacing} m; choose rings_in_load_radius so that it is"
                    ),
                });
            }
            Ok(rings.round() as usize)
        };
        let rings = rings_at(self.specimen_diameter_m, "specimen_diameter_m")?;
        rings_at(self.support_diameter_m, "support_diameter_m")?;
        let mesh = plate_mesh(radius, self.thickness_m, rings, layers, None)?;
        let on_ring = |diameter: f64, z: f64| -> Vec<u32> {
            let tolerance = spacing * 1e-6;
            nodes_along(&mesh, |p| {
                ((p.z - z).abs() < tolerance
                    && (p.coords.xy().norm() - diameter / 2.0).abs() < tolerance)
                    .then(|| p.y.atan2(p.x))
            })
        };
        let elastic = ElasticMesh::new(&mesh, order);
        let mut loads = Vec::new();
        line_load(
            &mesh,
            &elastic,
            &on_ring(self.load_diameter_m, self.thickness_m),
            true,
            -force_n,
            &mut loads,
        )?;
        line_load(
            &mesh,
            &elastic,
            &on_ring(self.support_diameter_m, 0.0),
            true,
            force_n,
            &mut loads,
        )?;
        FlexureField::solve(mesh, &elastic, material, &loads)
    }
}

/// A three-point bending test of a rectangular beam, ASTM C1161: supports
/// under the beam `span_m` apart, the load on top midway.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThreePointBending {
    /// The support span L (m).
    pub span_m: f64,
    /// The beam's length beyond each support (m).
    pub overhang_m: f64,
    /// The beam's width b (m).
    pub width_m: f64,
    /// The beam's depth h (m).
    pub depth_m: f64,
}

impl Default for ThreePointBending {
    /// ASTM C1161's configuration B: a 3 × 4 mm bar on a 40 mm span.
    fn default() -> Self {
        Self {
            span_m: 0.04,
            overhang_m: 0.0025,
            width_m: 0.004,
            depth_m: 0.003,
        }
    }
}

impl ThreePointBending {
    /// The largest stress, at the middle of the tensile face, under the
    /// force `force_n` (ASTM C1161 eq. 1, beam theory): `σ = 3FL/(2bh²)`.
    pub fn closed_form_stress_pa(&self, force_n: f64) -> f64 {
        3.0 * force_n * self.span_m / (2.0 * self.width_m * self.depth_m * self.depth_m)
    }

    /// The effective area of beam theory's field (ASTM C1683 eq. 7): the
    /// tensile face `L b/(m+1)` and the two sides' tensile halves
    /// `L h/(m+1)²`.
    pub fn closed_form_effective_area_m2(&self, modulus: f64) -> f64 {
        let m1 = modulus + 1.0;
        self.span_m / m1 * (self.width_m + self.depth_m / m1)
    }

    /// The effective volume of beam theory's field (ASTM C1683 eq. 6):
    /// `L b h / (2(m+1)²)`.
    pub fn closed_form_effective_volume_m3(&self, modulus: f64) -> f64 {
        self.span_m * self.width_m * self.depth_m / (2.0 * (modulus + 1.0).powi(2))
    }

    /// The static stress field of the test under `force_n` on a box mesh
    /// of `cells_in_span` cells along the span (even, so a node line lies
    /// midway; the overhang must be whole cells), `cells_across` across
    /// the width and `cells_deep` through the depth, of `order` elements.
    pub fn simulate(
        &self,
        material: &Material,
        force_n: f64,
        cells_in_span: usize,
        cells_across: usize,
        cells_deep: usize,
        order: ElementOrder,
    ) -> Result<FlexureField, FlexureError> {
        positive_lengths(&[
            ("span_m", self.span_m),
            ("width_m", self.width_m),
            ("depth_m", self.depth_m),
        ])?;
        let cell = self.span_m / cells_in_span.max(2) as f64;
        let overhang_cells = self.overhang_m / cell;
        if cells_in_span % 2 != 0
            || !(self.overhang_m >= 0.0 && (overhang_cells - overhang_cells.round()).abs() < 1e-6)
        {
            return Err(FlexureError::Geometry {
                field: "overhang_m",
                message: format!(
                    "{} m with {cells_in_span} cells in the span: the span's cells must be \
                     even and the overhang whole cells of {cell} m",
                    self.overhang_m
                ),
            });
        }
        let overhang_cells = overhang_cells.round() as usize;
        let length = self.span_m + 2.0 * self.overhang_m;
        let mesh = box_mesh(
            [length, self.width_m, self.depth_m],
            [cells_in_span + 2 * overhang_cells, cells_across, cells_deep],
            None,
        )?;
        let on_line = |x: f64, z: f64| -> Vec<u32> {
            let tolerance = cell * 1e-6;
            nodes_along(&mesh, |p| {
                ((p.x - x).abs() < tolerance && (p.z - z).abs() < tolerance).then_some(p.y)
            })
        };
        let elastic = ElasticMesh::new(&mesh, order);
        let mut loads = Vec::new();
        let (first, last) = (self.overhang_m, self.overhang_m + self.span_m);
        line_load(
            &mesh,
            &elastic,
            &on_line(length / 2.0, self.depth_m),
            false,
            -force_n,
            &mut loads,
        )?;
        for x in [first, last] {
            line_load(
                &mesh,
                &elastic,
                &on_line(x, 0.0),
                false,
                force_n / 2.0,
                &mut loads,
            )?;
        }
        FlexureField::solve(mesh, &elastic, material, &loads)
    }
}

/// An error naming the first of `fields` that is not a positive length.
fn positive_lengths(fields: &[(&'static str, f64)]) -> Result<(), FlexureError> {
    match fields.iter().find(|(_, v)| !(v.is_finite() && *v > 0.0)) {
        Some(&(field, _)) => Err(FlexureError::Geometry {
            field,
            message: "must be a positive length".into(),
        }),
        None => Ok(()),
    }
}

/// The nodes of `mesh` for which `key` gives a value, in order of it.
fn nodes_along(mesh: &TetMesh, key: impl Fn(&Point3<f64>) -> Option<f64>) -> Vec<u32> {
    let mut nodes: Vec<(f64, u32)> = mesh
        .nodes()
        .iter()
        .enumerate()
        .filter_map(|(i, p)| key(p).map(|k| (k, i as u32)))
        .collect();
    nodes.sort_by(|a, b| a.0.total_cmp(&b.0));
    nodes.into_iter().map(|(_, i)| i).collect()
}

/// Spreads `force_n` (along z) uniformly over the polyline `nodes` (closed:
/// back to the first), adding (DOF, N) pairs to `loads`: each segment's
/// share goes to its ends (linear elements) or 1/6, 2/3, 1/6 to its ends
/// and middle node (quadratic: the consistent load of a uniform line load).
fn line_load(
    mesh: &TetMesh,
    elastic: &ElasticMesh,
    nodes: &[u32],
    closed: bool,
    force_n: f64,
    loads: &mut Vec<(usize, f64)>,
) -> Result<(), FlexureError> {
    let segments: Vec<[u32; 2]> = nodes
        .windows(2)
        .map(|w| [w[0], w[1]])
        .chain((closed && nodes.len() > 2).then(|| [nodes[nodes.len() - 1], nodes[0]]))
        .collect();
    let point = |n: u32| mesh.nodes()[n as usize];
    let length = |[a, b]: [u32; 2]| (point(a) - point(b)).norm();
    let total: f64 = segments.iter().map(|&s| length(s)).sum();
    if segments.is_empty() || total <= 0.0 {
        return Err(FlexureError::Geometry {
            field: "mesh",
            message: "a load or support line has no mesh edge on it".into(),
        });
    }
    let z = |node: u32| 3 * node as usize + 2;
    for [a, b] in segments {
        let share = force_n * length([a, b]) / total;
        match elastic.order() {
            ElementOrder::Linear => {
                loads.push((z(a), share / 2.0));
                loads.push((z(b), share / 2.0));
            }
            ElementOrder::Quadratic => {
                let edge =
                    mesh.topology()
                        .edge_index(a, b)
                        .ok_or_else(|| FlexureError::Geometry {
                            field: "mesh",
                            message: format!(
                                "nodes {a} and {b} of a load line are not joined by an edge"
                            ),
                        })?;
                let middle = (elastic.corner_count() + edge) as u32;
                loads.push((z(a), share / 6.0));
                loads.push((z(middle), share * 2.0 / 3.0));
                loads.push((z(b), share / 6.0));
            }
        }
    }
    Ok(())
}

/// The static stress field of a simulated test.
#[derive(Debug)]
pub struct FlexureField {
    /// The specimen.
    pub mesh: TetMesh,
    /// Stress at each stress point, as a one-column table.
    pub stress: ModalStress,
}

impl FlexureField {
    fn solve(
        mesh: TetMesh,
        elastic: &ElasticMesh,
        material: &Material,
        loads: &[(usize, f64)],
    ) -> Result<Self, FlexureError> {
        let correction =
            StaticCorrection::new(elastic, material, EigenSettings::new(1).shift, None)?;
        let dofs = elastic.dofs();
        let mut load = Mat::<f64>::zeros(dofs, 1);
        for &(dof, force) in loads {
            load[(dof, 0)] += force;
        }
        // No modes retained: the residual shape is the whole static
        // response, less rigid motions the balanced load does not excite.
        let no_modes = Mat::<f64>::zeros(dofs, 0);
        let displacement = correction.residual_shapes(load.as_ref(), no_modes.as_ref(), &[]);
        let stress = ModalStress::new(elastic, material, &displacement);
        Ok(Self { mesh, stress })
    }

    /// The stress (Voigt, Pa) at stress point `point`.
    pub fn point_stress(&self, point: usize) -> [f64; 6] {
        self.stress.point_stress(point, &[1.0]).map(f64::from)
    }

    /// σ₁ at every stress point (Pa).
    pub fn principal_pa(&self) -> Vec<f64> {
        (0..self.stress.point_count())
            .map(|p| max_principal_stress(&self.point_stress(p)))
            .collect()
    }

    /// Where stress point `point` is: its element's centroid (linear) or
    /// its node (quadratic).
    pub fn point_position(&self, point: usize) -> Point3<f64> {
        if self.stress.points_per_element() == 1 {
            self.mesh.tet_centroid(point)
        } else {
            self.mesh.nodes()[point]
        }
    }

    /// The field's effective size for `flaws`, Weibull modulus `modulus`
    /// and `criterion` ([`effective_size`]).
    pub fn effective_size(
        &self,
        flaws: FlawPopulation,
        modulus: f64,
        criterion: WeibullCriterion,
    ) -> f64 {
        let voigt: Vec<[f64; 6]> = (0..self.stress.point_count())
            .map(|p| self.point_stress(p))
            .collect();
        effective_size(
            &self.mesh,
            &self.stress,
            &voigt,
            None,
            flaws,
            modulus,
            criterion,
        )
    }
}
