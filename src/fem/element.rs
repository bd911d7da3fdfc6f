//! One linear tetrahedron: shape-function gradients, B matrix, stiffness,
//! stress. (Müller & Gross 2004 §4 give the same element in corotated form;
//! here it is the plain linear one.)

use crate::config::Material;
use nalgebra::{Matrix3, Point3, SMatrix, SVector, SymmetricEigen, Vector3};

/// A strain or stress in Voigt order `[xx, yy, zz, yz, xz, xy]`.
pub type Voigt = SVector<f64, 6>;

/// Geometry of one tet: volume and the (constant) gradients of its four
/// linear shape functions.
#[derive(Debug, Clone, Copy)]
pub struct TetElement {
    /// Volume (m³).
    pub volume: f64,
    /// Gradient of each corner's shape function (1/m).
    pub gradients: [Vector3<f64>; 4],
}

impl TetElement {
    /// `None` for a degenerate tet (which [`crate::mesh::TetMesh`] never holds).
    pub fn new(p: &[Point3<f64>; 4]) -> Option<Self> {
        // Columns of D are the edge vectors from node 0; the rows of D⁻¹ are
        // ∇N₁..₃ and ∇N₀ = −Σ ∇Nᵢ (partition of unity).
        let d = Matrix3::from_columns(&[p[1] - p[0], p[2] - p[0], p[3] - p[0]]);
        let volume = d.determinant() / 6.0;
        let inv = d.try_inverse()?;
        let g1 = inv.row(0).transpose();
        let g2 = inv.row(1).transpose();
        let g3 = inv.row(2).transpose();
        Some(Self {
            volume,
            gradients: [-(g1 + g2 + g3), g1, g2, g3],
        })
    }

    /// The 6×12 strain-displacement matrix: ε = B u_e.
    pub fn b_matrix(&self) -> SMatrix<f64, 6, 12> {
        b_matrix_of(&self.gradients)
    }

    /// Strain (Voigt, engineering shear) from the 12 nodal displacements.
    pub fn strain(&self, u: &[Vector3<f64>; 4]) -> Voigt {
        // ∇u = Σ u_a ⊗ ∇N_a; ε = sym(∇u).
        let grad_u: Matrix3<f64> = (0..4).map(|a| u[a] * self.gradients[a].transpose()).sum();
        symmetric_strain(&grad_u)
    }
}

/// The 6×D strain-displacement matrix of shape-function gradients `g`
/// (D = 3·g.len()): ε = B u for the nodes' displacements, node-major.
pub(super) fn b_matrix_of<const D: usize>(g: &[Vector3<f64>]) -> SMatrix<f64, 6, D> {
    debug_assert_eq!(3 * g.len(), D);
    let mut b = SMatrix::<f64, 6, D>::zeros();
    for (a, g) in g.iter().enumerate() {
        let c = 3 * a;
        b[(0, c)] = g.x;
        b[(1, c + 1)] = g.y;
        b[(2, c + 2)] = g.z;
        b[(3, c + 1)] = g.z;
        b[(3, c + 2)] = g.y;
        b[(4, c)] = g.z;
        b[(4, c + 2)] = g.x;
        b[(5, c)] = g.y;
        b[(5, c + 1)] = g.x;
    }
    b
}

/// The strain (Voigt, engineering shear) of a displacement gradient.
pub fn symmetric_strain(grad_u: &Matrix3<f64>) -> Voigt {
    Voigt::from([
        grad_u[(0, 0)],
        grad_u[(1, 1)],
        grad_u[(2, 2)],
        grad_u[(1, 2)] + grad_u[(2, 1)],
        grad_u[(0, 2)] + grad_u[(2, 0)],
        grad_u[(0, 1)] + grad_u[(1, 0)],
    ])
}

/// The isotropic constitutive matrix C (σ = C ε, engineering shear strains).
pub fn constitutive_matrix(material: &Material) -> SMatrix<f64, 6, 6> {
    let (lambda, mu) = material.lame();
    let mut c = SMatrix::<f64, 6, 6>::zeros();
    for i in 0..3 {
        for j in 0..3 {
            c[(i, j)] = lambda;
        }
        c[(i, i)] = lambda + 2.0 * mu;
        c[(i + 3, i + 3)] = mu;
    }
    c
}

/// The 12×12 element stiffness `V·BᵀCB`, computed block-wise:
/// `K_ab = V(λ g_a g_bᵀ + μ g_b g_aᵀ + μ (g_a·g_b) I)`, which equals `V·BᵀCB`
/// for isotropic C (checked by a test) at a fraction of the cost.
pub fn element_stiffness(element: &TetElement, lambda: f64, mu: f64) -> [[Matrix3<f64>; 4]; 4] {
    let mut k = [[Matrix3::zeros(); 4]; 4];
    add_gradient_stiffness(&mut k, &element.gradients, element.volume, lambda, mu);
    k
}

/// Adds `weight · (λ g_a g_bᵀ + μ g_b g_aᵀ + μ (g_a·g_b) I)` to each block
/// `k[a][b]`: one quadrature point of an isotropic element's stiffness
/// with shape-function gradients `g`.
pub(super) fn add_gradient_stiffness<const N: usize>(
    k: &mut [[Matrix3<f64>; N]; N],
    g: &[Vector3<f64>; N],
    weight: f64,
    lambda: f64,
    mu: f64,
) {
    for a in 0..N {
        for b in 0..N {
            k[a][b] += weight
                * (lambda * g[a] * g[b].transpose()
                    + mu * g[b] * g[a].transpose()
                    + Matrix3::from_diagonal_element(mu * g[a].dot(&g[b])));
        }
    }
}

/// Stress as a symmetric 3×3 tensor.
pub fn stress_tensor(s: &Voigt) -> Matrix3<f64> {
    Matrix3::new(s[0], s[5], s[4], s[5], s[1], s[3], s[4], s[3], s[2])
}

/// A symmetric 3×3 tensor in Voigt order (xx, yy, zz, yz, xz, xy), the
/// inverse of [`stress_tensor`]; the lower triangle is not read.
pub fn voigt_of(m: &Matrix3<f64>) -> Voigt {
    Voigt::from([
        m[(0, 0)],
        m[(1, 1)],
        m[(2, 2)],
        m[(1, 2)],
        m[(0, 2)],
        m[(0, 1)],
    ])
}

/// The part of stress `s` that a crack of unit normal `n` releases: the
/// traction `t = σ n` on its plane, less a compressive normal traction
/// (closed faces still carry it), as the stress `n tᵀ + t nᵀ − (n·t) n nᵀ`
/// whose traction on the plane is `t` and whose components in the plane
/// are zero. The stress along the plane does not load a crack (Irwin: the
/// energy release rate `G = (K_I² + K_II²)/E' + K_III²/2μ` takes the
/// stress intensities of the traction on the crack's plane only).
pub fn crack_plane_stress(s: &Voigt, n: &Vector3<f64>) -> Voigt {
    let mut t = stress_tensor(s) * n;
    let normal = n.dot(&t);
    if normal < 0.0 {
        t -= normal * n;
    }
    let tn = t.dot(n);
    voigt_of(&(n * t.transpose() + t * n.transpose() - tn * n * n.transpose()))
}

/// Principal stresses, descending, with their unit directions (columns).
pub fn principal_stresses(s: &Voigt) -> (Vector3<f64>, Matrix3<f64>) {
    let eig = SymmetricEigen::new(stress_tensor(s));
    let mut order = [0usize, 1, 2];
    order.sort_by(|&i, &j| eig.eigenvalues[j].total_cmp(&eig.eigenvalues[i]));
    let values = Vector3::new(
        eig.eigenvalues[order[0]],
        eig.eigenvalues[order[1]],
        eig.eigenvalues[order[2]],
    );
    let directions = Matrix3::from_columns(&[
        eig.eigenvectors.column(order[0]).into_owned(),
        eig.eigenvectors.column(order[1]).into_owned(),
        eig.eigenvectors.column(order[2]).into_owned(),
    ]);
    (values, directions)
}

/// Strain-energy density ½ εᵀ C ε (J/m³).
pub fn strain_energy_density(strain: &Voigt, c: &SMatrix<f64, 6, 6>) -> f64 {
    0.5 * strain.dot(&(c * strain))
}
