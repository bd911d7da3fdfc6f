//! A world from a scene: rapier bodies for the scene's bodies, modal bases
//! for the breakable ones (one analysis per distinct mesh and material).

use super::shapes::{contact_radius_m, fragment_shape, primitive, primitive_surface, Surface};
use super::speculative;
use super::units::glam;
use super::{Breakable, World, WorldBody};
use crate::config::{BodyKind, ConfigError, Material, MaterialLibrary, Scene, ShapeSpec};
use crate::fracture::BreakableBody;
use crate::limits::LimitError;
use crate::mesh::{MeshError, TetMesh};
use crate::modal::{solve_modes, EigenError, EigenSettings, ModalBasis, ModalCache, ModalError};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use rapier3d::dynamics::MassProperties;
use rapier3d::dynamics::RigidBodyBuilder;
use rapier3d::geometry::ColliderBuilder;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Why a scene could not become a world.
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    /// A scene or material file is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A body's mesh cannot be built.
    #[error("{path}: body `{body}`: shape.mesh: {source}")]
    Mesh {
        /// The scene file.
        path: PathBuf,
        /// The body.
        body: String,
        /// Why.
        #[source]
        source: MeshError,
    },
    /// A body's modal analysis failed.
    #[error("{path}: body `{body}`: modal analysis: {source}")]
    Modal {
        /// The scene file.
        path: PathBuf,
        /// The body.
        body: String,
        /// Why.
        #[source]
        source: ModalError,
    },
    /// An OBJ frame could not be written.
    #[error("writing frame {path}: {source}")]
    Frames {
        /// The frame's file.
        path: PathBuf,
        /// Why.
        #[source]
        source: MeshError,
    },
    /// A body names a material the library does not have.
    #[error("{path}: body `{body}`: material: {source}")]
    Material {
        /// The scene file.
        path: PathBuf,
        /// The body.
        body: String,
        /// Why.
        source: Box<ConfigError>,
    },
    /// A body would need more memory than allowed.
    #[error("{path}: body `{body}`: {source}")]
    Limit {
        /// The scene file.
        path: PathBuf,
        /// The body.
        body: String,
        /// Why.
        source: crate::limits::LimitError,
    },
    /// A body's shape is invalid (e.g. a convex hull of flat points).
    #[error("{path}: body `{body}`: {message}")]
    Shape {
        /// The scene file.
        path: PathBuf,
        /// The body.
        body: String,
        /// What is wrong.
        message: String,
    },
}

/// What a scene's bodies need beyond the scene file: materials, and the
/// mesh and modal basis of each distinct (mesh, material) of its breakable
/// bodies. Built once, it serves any number of worlds of the scene.
#[derive(Clone)]
pub struct SceneAssets {
    materials: BTreeMap<String, Arc<Material>>,
    bases: BTreeMap<(String, String), (Arc<TetMesh>, Arc<ModalBasis>)>,
    /// The analyses' mode count and element.
    analysis: (usize, crate::fem::ElementOrder),
}

/// A scene's modal analysis starting or ending ([`SceneAssets::load`]).
#[derive(Debug, Clone, Copy)]
pub struct AnalysisProgress<'a> {
    /// The first body (in the scene's order) of the analysed mesh and
    /// material.
    pub body: &'a str,
    /// Whether its analysis ended (it starts otherwise).
    pub ended: bool,
    /// Analyses finished so far (this one included when it ends).
    pub finished: usize,
    /// Analyses the scene needs.
    pub total: usize,
}

/// A distinct (mesh, material) of a scene's breakable bodies to analyse.
struct PendingAnalysis {
    key: (String, String),
    body: String,
    tets: TetMesh,
    material: Arc<Material>,
}

impl SceneAssets {
    /// Resolves the scene's materials and runs (or loads from `cache`) the
    /// modal analyses on `threads`, all at once (each within its share of
    /// the memory budget; one refused for memory runs again alone after
    /// the others); `on_analysis` is told as each starts and ends.
    pub fn load(
        scene: &Scene,
        library: &MaterialLibrary,
        cache: Option<&ModalCache>,
        threads: &rayon::ThreadPool,
        on_analysis: &(dyn Fn(AnalysisProgress<'_>) + Sync),
    ) -> Result<Self, WorldError> {
        Self::load_with(
            scene,
            library,
            cache,
            threads,
            on_analysis,
            &|path| std::fs::read(path),
            None,
        )
    }

    /// As [`SceneAssets::load`], reading mesh files through `read` (a
    /// file's bytes by its resolved path) instead of from disk, and taking
    /// from `previous` (assets of a scene with the same world settings)
    /// the mesh and basis of every body whose mesh and elastic constants
    /// are the same there: a study's trials change the plates' strength,
    /// not their modes, and a basis kept keeps its static correction's
    /// factor.
    pub fn load_with(
        scene: &Scene,
        library: &MaterialLibrary,
        cache: Option<&ModalCache>,
        threads: &rayon::ThreadPool,
        on_analysis: &(dyn Fn(AnalysisProgress<'_>) + Sync),
        read: &dyn Fn(&std::path::Path) -> std::io::Result<Vec<u8>>,
        previous: Option<&SceneAssets>,
    ) -> Result<Self, WorldError> {
        let mut assets = Self {
            materials: BTreeMap::new(),
            bases: BTreeMap::new(),
            analysis: (scene.world.modes, scene.world.element),
        };
        let previous = previous.filter(|p| p.analysis == assets.analysis);
        let mut pending: Vec<PendingAnalysis> = Vec::new();
        for spec in &scene.bodies {
            let material = Arc::new(
                library
                    .get(&spec.material)
                    .map_err(|source| WorldError::Material {
                        path: scene.path.clone(),
                        body: spec.name.clone(),
                        source: Box::new(source),
                    })?
                    .clone(),
            );
            assets
                .materials
                .insert(spec.material.clone(), Arc::clone(&material));
            let ShapeSpec::TetMesh { mesh } = &spec.shape else {
                continue;
            };
            let key = (mesh.clone(), spec.material.clone());
            if assets.bases.contains_key(&key) || pending.iter().any(|p| p.key == key) {
                continue;
            }
            let kept = previous.and_then(|p| {
                p.bases.iter().find_map(|((m, name), entry)| {
                    (m == mesh && p.materials[name].elastic_hash() == material.elastic_hash())
                        .then(|| entry.clone())
                })
            });
            if let Some(entry) = kept {
                assets.bases.insert(key, entry);
                continue;
            }
            let mesh_error = |source| WorldError::Mesh {
                path: scene.path.clone(),
                body: spec.name.clone(),
                source,
            };
            let tets = scene
                .resolve_mesh(mesh)
                .and_then(|m| m.load_with(read))
                .map_err(mesh_error)?;
            pending.push(PendingAnalysis {
                key,
                body: spec.name.clone(),
                tets,
                material,
            });
        }
        let mut settings = EigenSettings::new(scene.world.modes);
        settings.element = scene.world.element;
        let done = AtomicUsize::new(0);
        let total = pending.len();
        let progress = |p: &PendingAnalysis, ended: bool| {
            let finished = if ended {
                done.fetch_add(1, Ordering::AcqRel) + 1
            } else {
                done.load(Ordering::Acquire)
            };
            on_analysis(AnalysisProgress {
                body: &p.body,
                ended,
                finished,
                total,
            });
        };
        // Bodies of one mesh whose materials differ only in strength or
        // damping share one eigenproblem (the cache's key): it is solved
        // once, for the first of them, and each builds its tables (which
        // hold its damping) from those modes and their factor.
        let same_problem = |a: &PendingAnalysis, b: &PendingAnalysis| {
            a.key.0 == b.key.0 && a.material.elastic_hash() == b.material.elastic_hash()
        };
        let mut problems: Vec<Vec<usize>> = Vec::new();
        for i in 0..pending.len() {
            match problems
                .iter_mut()
                .find(|members| same_problem(&pending[members[0]], &pending[i]))
            {
                Some(members) => members.push(i),
                None => problems.push(vec![i]),
            }
        }
        // The bases of a problem's members, or why its solve failed.
        let analyse_problem = |members: &[usize]| -> Result<Vec<ModalBasis>, ModalError> {
            let leader = &pending[members[0]];
            progress(leader, false);
            let solved = solve_modes(
                &leader.tets,
                &leader.material,
                &settings,
                cache,
                threads,
                &|_| {},
            );
            let (modes, _) = match solved {
                Ok(solved) => solved,
                Err(e) => {
                    progress(leader, true);
                    return Err(e);
                }
            };
            Ok(members
                .iter()
                .enumerate()
                .map(|(n, &i)| {
                    let p = &pending[i];
                    if n > 0 {
                        progress(p, false);
                    }
                    let basis = threads
                        .install(|| ModalBasis::from_modes(&p.tets, &p.material, modes.clone()));
                    progress(p, true);
                    basis
                })
                .collect())
        };
        let all_at_once = {
            let _share = crate::limits::share_memory(problems.len());
            threads.install(|| {
                problems
                    .par_iter()
                    .map(|members| analyse_problem(members))
                    .collect::<Vec<_>>()
            })
        };
        let mut bases: Vec<Option<ModalBasis>> = (0..pending.len()).map(|_| None).collect();
        for (members, result) in problems.iter().zip(all_at_once) {
            let memory_refused = matches!(
                &result,
                Err(ModalError::Eigen(EigenError::Limit(
                    LimitError::Memory { .. }
                )))
            );
            let result = if memory_refused && problems.len() > 1 {
                done.fetch_sub(1, Ordering::AcqRel);
                analyse_problem(members)
            } else {
                result
            };
            let solved = result.map_err(|source| WorldError::Modal {
                path: scene.path.clone(),
                body: pending[members[0]].body.clone(),
                source,
            })?;
            for (&i, basis) in members.iter().zip(solved) {
                bases[i] = Some(basis);
            }
        }
        for (p, basis) in pending.into_iter().zip(bases) {
            let basis = basis.expect("every problem's members have a basis");
            assets
                .bases
                .insert(p.key, (Arc::new(p.tets), Arc::new(basis)));
        }
        Ok(assets)
    }
}

impl World {
    /// Builds the world of `scene`; `assets` must come from
    /// [`SceneAssets::load`] of the same scene. `seed` seeds the weak points
    /// and crack noise (each breakable body gets its own stream from it).
    /// Intact bodies' fragments are measured on `threads`. The scene's
    /// [`settle_s`](crate::config::WorldSettings::settle_s) is run before
    /// it returns.
    pub fn from_scene(
        scene: &Scene,
        assets: &SceneAssets,
        seed: u64,
        threads: &rayon::ThreadPool,
    ) -> Result<World, WorldError> {
        Self::from_scene_with(scene, assets, seed, threads, &|_, _| {})
    }

    /// [`Self::from_scene`], calling `on_settle(steps_done, steps)` after
    /// each settling step (a large pile takes seconds).
    pub fn from_scene_with(
        scene: &Scene,
        assets: &SceneAssets,
        seed: u64,
        threads: &rayon::ThreadPool,
        on_settle: &dyn Fn(usize, usize),
    ) -> Result<World, WorldError> {
        let mut world = World::new(scene.world.clone(), seed);
        let mut breakable_index = 0u64;
        for spec in &scene.bodies {
            let material = Arc::clone(&assets.materials[&spec.material]);
            let shape_error = |message: String| WorldError::Shape {
                path: scene.path.clone(),
                body: spec.name.clone(),
                message,
            };
            let limit_error = |source| WorldError::Limit {
                path: scene.path.clone(),
                body: spec.name.clone(),
                source,
            };
            let rotation = UnitQuaternion::from_euler_angles(
                spec.rotation_deg[0].to_radians(),
                spec.rotation_deg[1].to_radians(),
                spec.rotation_deg[2].to_radians(),
            );
            // The intact body as one fragment: exact mass properties and
            // hull for tet meshes; primitives get theirs from rapier.
            let mesh_part = match &spec.shape {
                ShapeSpec::TetMesh { mesh } => {
                    let (tets, basis) = &assets.bases[&(mesh.clone(), spec.material.clone())];
                    let template = BreakableBody::new(
                        Arc::clone(tets),
                        (*material).clone(),
                        Arc::clone(basis),
                        0,
                    )
                    .map_err(limit_error)?;
                    let whole = template
                        .fragments(threads)
                        .into_iter()
                        .next()
                        .ok_or_else(|| shape_error("the mesh has no volume".into()))?;
                    let shape = fragment_shape(&whole, &world.units)
                        .ok_or_else(|| shape_error("the mesh surface is flat".into()))?;
                    Some((tets.clone(), basis.clone(), whole, shape))
                }
                _ => None,
            };
            let primitive_shape = primitive(&spec.shape, &world.units);
            for (copy, position) in spec.positions_m().into_iter().enumerate() {
                let name = if spec.array.is_some() {
                    format!("{}#{copy}", spec.name)
                } else {
                    spec.name.clone()
                };
                let pose =
                    Isometry3::from_parts(Translation3::from(Vector3::from(position)), rotation);
                let builder = match spec.kind {
                    BodyKind::Static => RigidBodyBuilder::fixed(),
                    BodyKind::Dynamic => speculative::dynamic_body()
                        .linvel(world.units.to_sim(&Vector3::from(spec.velocity_m_s)))
                        .angvel(glam(&Vector3::from(spec.angular_velocity_rad_s))),
                }
                .pose(world.units.pose_to_sim(&pose))
                .ccd_enabled(spec.ccd);
                let (collider, mass_kg, volume_m3, surface, breakable) =
                    match (&mesh_part, &primitive_shape) {
                        (Some((tets, basis, whole, shape)), _) => {
                            let seed = seed ^ breakable_index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                            breakable_index += 1;
                            let mut body = BreakableBody::new(
                                Arc::clone(tets),
                                (*material).clone(),
                                Arc::clone(basis),
                                seed,
                            )
                            .map_err(limit_error)?;
                            body.set_held(spec.kind == BodyKind::Static);
                            let mass = MassProperties::with_inertia_matrix(
                                world.units.point_to_sim(&whole.centroid_m),
                                whole.mass_kg as f32,
                                world.units.inertia_to_sim(&whole.inertia_kg_m2),
                            );
                            (
                                ColliderBuilder::new(shape.clone()).mass_properties(mass),
                                Some(whole.mass_kg),
                                whole.volume_m3,
                                Surface {
                                    points: whole.points.clone(),
                                    triangles: whole.triangles.clone(),
                                    crack_triangles: Vec::new(),
                                },
                                Some(Breakable {
                                    body,
                                    last_static_check_s: f64::NEG_INFINITY,
                                    last_static_force_n: 0.0,
                                    checking: false,
                                }),
                            )
                        }
                        (None, Some(shape)) => {
                            let volume_sim = f64::from(shape.mass_properties(1.0).mass());
                            let volume_m3 = world.units.volume_to_si(volume_sim);
                            let mass_kg =
                                spec.mass_kg.unwrap_or(volume_m3 * material.density_kg_m3);
                            let density_sim = mass_kg / volume_sim;
                            let mass = (spec.kind == BodyKind::Dynamic).then_some(mass_kg);
                            (
                                ColliderBuilder::new(shape.clone()).density(density_sim as f32),
                                mass,
                                volume_m3,
                                primitive_surface(shape, &world.units),
                                None,
                            )
                        }
                        (None, None) => {
                            return Err(shape_error(
                                "the convex hull of shape.points_m is flat".into(),
                            ))
                        }
                    };
                let shape_for_radius = mesh_part
                    .as_ref()
                    .map(|(_, _, _, s)| s)
                    .or(primitive_shape.as_ref())
                    .expect("one of the two shapes exists");
                let collider = collider
                    .friction(spec.friction as f32)
                    .restitution(spec.restitution as f32);
                let (handle, _) = world.physics.insert(builder, collider);
                world.push_body(WorldBody {
                    name,
                    handle,
                    material: Arc::clone(&material),
                    mass_kg: if spec.kind == BodyKind::Dynamic {
                        mass_kg
                    } else {
                        None
                    },
                    volume_m3,
                    contact_radius_m: contact_radius_m(shape_for_radius, &world.units),
                    friction: spec.friction,
                    restitution: spec.restitution,
                    surface: Arc::new(surface),
                    breakable,
                    parent: None,
                });
            }
        }
        world.settle(on_settle);
        Ok(world)
    }

    /// Runs rapier alone for the scene's [`settle_s`](crate::config::WorldSettings::settle_s):
    /// the bodies fall and come to rest before time 0 (the world's time and
    /// step count stay 0), with no fracture checks, so that a pile built
    /// with gaps does not settle in the first steps of a real-time session,
    /// every body awake, while the haptic thread waits on them.
    fn settle(&mut self, on_settle: &dyn Fn(usize, usize)) {
        let steps = self.settings.settle_steps();
        for done in 1..=steps {
            self.physics.step();
            on_settle(done, steps);
        }
    }
}
