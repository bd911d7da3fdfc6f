//! The global world: scenes, breakable bodies under contact, fragments.

use nalgebra::Vector3;
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use tessera::config::{MaterialLibrary, Scene};
use tessera::fracture::{BasisWorker, BreakableBody, StaticLoad};
use tessera::modal::{analyse, EigenSettings};
use tessera::world::{
    drop_run, place_above, Adoption, BodyContact, BodyId, Counters, FractureEvent, FractureWorker,
    SceneAssets, StepInputs, World, MAX_WAITING_IMPACTS,
};

mod common;
use common::threads;

fn scene_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("configs/scenes/{name}.toml"))
}

/// The scene's assets with the built-in materials, analyses not cached.
fn assets_of(scene: &Scene) -> Result<SceneAssets, tessera::world::WorldError> {
    SceneAssets::load(scene, &MaterialLibrary::builtin(), None, threads(), &|_| {})
}

/// Mass of the shipped scenes' 15 cm, 6 mm ceramic tile (1738 kg/m³).
const TILE_KG: f64 = 1738.0 * 0.15 * 0.15 * 0.006;

/// The text of `tile-flat-drop` with a coarser tile than the shipped one
/// (20×2 cells), for the tests' time.
fn coarse_flat_drop_text() -> String {
    let text = std::fs::read_to_string(scene_path("tile-flat-drop")).unwrap();
    text.replace("tile:0.15,0.006:58,2", "tile:0.15,0.006:20,2")
}

/// [`coarse_flat_drop_text`]'s scene and its assets.
fn coarse_flat_drop() -> (Scene, SceneAssets) {
    let scene = Scene::parse(&coarse_flat_drop_text(), &scene_path("tile-flat-drop")).unwrap();
    let assets = assets_of(&scene).unwrap();
    (scene, assets)
}

fn load(name: &str) -> (Scene, SceneAssets) {
    let scene = Scene::load(&scene_path(name)).expect("shipped scene is valid");
    let assets = assets_of(&scene).expect("shipped scene builds");
    (scene, assets)
}

fn parse(text: &str) -> Result<Scene, String> {
    Scene::parse(text, Path::new("scenes/test.toml")).map_err(|e| e.to_string())
}

const BALL_ON_BOX: &str = r#"
[[body]]
name = "ground"
kind = "static"
shape = { type = "box", size_m = [1.0, 1.0, 0.1] }
material = "concrete"

[[body]]
name = "ball"
kind = "dynamic"
shape = { type = "sphere", radius_m = 0.01 }
material = "steel"
position_m = [0.0, 0.0, 0.2]
"#;

#[test]
fn distinct_bodies_are_analysed_at_once_as_each_would_be_alone() {
    let scene = parse(&format!(
        "{BALL_ON_BOX}
[world]
modes = 12

[[body]]
name = \"bar\"
kind = \"dynamic\"
shape = {{ type = \"tet-mesh\", mesh = \"box:0.1,0.04,0.02:5,2,1\" }}
material = \"ceramic-tile\"
position_m = [0.3, 0.0, 0.2]

[[body]]
name = \"disc\"
kind = \"dynamic\"
shape = {{ type = \"tet-mesh\", mesh = \"plate:0.05,0.005:3,1\" }}
material = \"porcelain\"
position_m = [-0.3, 0.0, 0.2]

[[body]]
name = \"second bar\"
kind = \"dynamic\"
shape = {{ type = \"tet-mesh\", mesh = \"box:0.1,0.04,0.02:5,2,1\" }}
material = \"ceramic-tile\"
position_m = [0.3, 0.3, 0.2]

[[body]]
name = \"weak bar\"
kind = \"dynamic\"
shape = {{ type = \"tet-mesh\", mesh = \"box:0.1,0.04,0.02:5,2,1\" }}
material = \"weak-tile\"
position_m = [0.3, -0.3, 0.2]
"
    ))
    .unwrap();
    // A material that differs from the bar's in strength only: the same
    // eigenproblem, which the cache stores once.
    let mut library = MaterialLibrary::builtin();
    let mut weak = library.get("ceramic-tile").unwrap().clone();
    weak.rankine_threshold_pa *= 0.5;
    library.insert("weak-tile", weak).unwrap();
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = tessera::modal::ModalCache::new(cache_dir.path().to_path_buf());
    let events = std::sync::Mutex::new(Vec::new());
    let assets = SceneAssets::load(&scene, &library, Some(&cache), threads(), &|p| {
        events
            .lock()
            .unwrap()
            .push((p.body.to_string(), p.ended, p.finished, p.total))
    })
    .unwrap();
    let mut stored: Vec<String> = std::fs::read_dir(cache_dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    stored.sort();
    assert_eq!(stored.len(), 2, "one entry per eigenproblem: {stored:?}");
    assert!(
        stored.iter().all(|name| name.ends_with(".modes")),
        "{stored:?}"
    );
    // One analysis per distinct mesh and material, each told as it starts
    // and ends, whatever their order.
    let events = events.into_inner().unwrap();
    assert_eq!(events.len(), 6, "{events:?}");
    assert!(events.iter().all(|e| e.3 == 3), "{events:?}");
    for body in ["bar", "disc", "weak bar"] {
        assert_eq!(
            events.iter().filter(|e| e.0 == body && !e.1).count(),
            1,
            "{events:?}"
        );
    }
    let ends: Vec<usize> = events.iter().filter(|e| e.1).map(|e| e.2).collect();
    assert_eq!(ends, [1, 2, 3], "{events:?}");
    // Run beside another, an analysis gives the bits it gives alone.
    let world = World::from_scene(&scene, &assets, 0, threads()).unwrap();
    for name in ["bar", "disc", "second bar", "weak bar"] {
        let id = world.find(name).unwrap();
        let (_, body) = world.bodies().find(|(b, _)| *b == id).unwrap();
        let breakable = &body.breakable.as_ref().unwrap().body;
        let mut settings = EigenSettings::new(12);
        settings.element = scene.world.element;
        let (alone, _) = analyse(
            breakable.mesh(),
            breakable.material(),
            &settings,
            None,
            threads(),
            &|_| {},
        )
        .unwrap();
        assert_eq!(breakable.basis().eigenvalues, alone.eigenvalues, "{name}");
    }
}

#[test]
fn every_shipped_scene_parses() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/scenes");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        Scene::load(&path).unwrap_or_else(|e| panic!("{e}"));
        names.push(path.file_stem().unwrap().to_string_lossy().into_owned());
    }
    names.sort();
    assert_eq!(
        names,
        [
            "bricks",
            "cube-basin",
            "cube-pile",
            "cube-push",
            "plates-on-shelf",
            "plates-study",
            "tile-flat-drop",
            "tile-on-supports",
            "tile-strike"
        ]
    );
}

#[test]
fn scene_errors_name_file_body_and_field() {
    let unknown_key = parse(&BALL_ON_BOX.replace(
        "position_m = [0.0, 0.0, 0.2]",
        "positon_m = [0.0, 0.0, 0.2]",
    ))
    .unwrap_err();
    assert!(unknown_key.contains("scenes/test.toml"), "{unknown_key}");
    assert!(unknown_key.contains("positon_m"), "{unknown_key}");
    assert!(unknown_key.contains("line"), "{unknown_key}");

    let negative = parse(&BALL_ON_BOX.replace("radius_m = 0.01", "radius_m = -0.01")).unwrap_err();
    assert!(
        negative.contains("body `ball`") && negative.contains("shape.radius_m"),
        "{negative}"
    );

    let shape = parse(&BALL_ON_BOX.replace("type = \"sphere\"", "type = \"cone\"")).unwrap_err();
    assert!(shape.contains("cone"), "{shape}");

    let twice = parse(&BALL_ON_BOX.replace("name = \"ball\"", "name = \"ground\"")).unwrap_err();
    assert!(
        twice.contains("name") && twice.contains("earlier"),
        "{twice}"
    );

    let restitution = parse(&format!("{BALL_ON_BOX}restitution = 1.5\n")).unwrap_err();
    assert!(restitution.contains("restitution"), "{restitution}");

    let drop = parse(&format!(
        "{BALL_ON_BOX}\n[drop]\nbody = \"ball\"\ntarget = \"tile\"\n"
    ))
    .unwrap_err();
    assert!(drop.contains("[drop]") && drop.contains("`tile`"), "{drop}");

    let breakable_static = parse(&BALL_ON_BOX.replace(
        "shape = { type = \"box\", size_m = [1.0, 1.0, 0.1] }",
        "shape = { type = \"tet-mesh\", mesh = \"box:1,1,0.1:2,2,1\" }",
    ))
    .unwrap_err();
    assert!(
        breakable_static.contains("body `ground`") && breakable_static.contains("kind"),
        "{breakable_static}"
    );

    let scene = parse(&BALL_ON_BOX.replace("\"steel\"", "\"unobtainium\"")).unwrap();
    let material = assets_of(&scene)
        .err()
        .expect("unknown material")
        .to_string();
    assert!(
        material.contains("unobtainium") && material.contains("steel"),
        "{material}"
    );
}

#[test]
fn array_fills_rows_then_layers_and_takes_a_count() {
    let mut scene = Scene::load(&scene_path("cube-basin")).unwrap();
    scene.set_array_count(300).unwrap();
    let cube = scene.body("cube").unwrap();
    let positions = cube.positions_m();
    assert_eq!(positions.len(), 300);
    let [x0, y0, z0] = cube.position_m;
    let d = cube.array.as_ref().unwrap().spacing_m;
    // 12 × 12 per layer: copy 145 is the second of the second row of layer 1.
    let p = positions[145];
    for (got, want) in p.iter().zip([x0 + d[0], y0, z0 + d[2]]) {
        assert!((got - want).abs() < 1e-12, "{p:?}");
    }
    let mut pile = Scene::load(&scene_path("tile-on-supports")).unwrap();
    assert!(
        pile.set_array_count(3).is_ok(),
        "the supports are the one array"
    );
    let mut two = Scene::load(&scene_path("plates-on-shelf")).unwrap();
    assert!(two.set_array_count(3).is_err());
}

#[test]
fn a_falling_ball_lands_and_momentum_follows_gravity() {
    let scene = parse(BALL_ON_BOX).unwrap();
    let assets = assets_of(&scene).unwrap();
    let mut world = World::from_scene(&scene, &assets, 0, threads()).unwrap();
    let ball = world.find("ball").unwrap();
    let mass = world.motion(ball).unwrap().mass_kg;
    let expected = 7850.0 * 4.0 / 3.0 * std::f64::consts::PI * 0.01f64.powi(3);
    assert!(
        (mass - expected).abs() < 1e-4 * expected,
        "{mass} vs {expected}"
    );
    for _ in 0..100 {
        world.step(&StepInputs::default(), threads(), &mut Counters::default());
    }
    // Free fall for 0.1 s: p = m g t.
    let p = world.motion(ball).unwrap().momentum_n_s;
    assert!(
        (p[2] + mass * 9.81 * 0.1).abs() < 1e-3 * mass * 9.81 * 0.1,
        "{p:?}"
    );
    for _ in 0..900 {
        world.step(&StepInputs::default(), threads(), &mut Counters::default());
    }
    let at_rest = world.pose(ball).unwrap().translation.z;
    // The ground's top is at z = 0.05 (a 10 cm box centred at the origin).
    assert!((at_rest - 0.06).abs() < 2e-3, "ball centre at {at_rest}");
}

#[test]
fn a_scene_settles_before_time_zero() {
    // The ball of BALL_ON_BOX falls 0.14 m (0.17 s) and rests on the box.
    let scene = parse(&format!("{BALL_ON_BOX}\n[world]\nsettle_s = 1.0\n")).unwrap();
    let assets = assets_of(&scene).unwrap();
    let reported = std::sync::Mutex::new(Vec::new());
    let world = World::from_scene_with(&scene, &assets, 0, threads(), &|done, steps| {
        reported.lock().unwrap().push((done, steps));
    })
    .unwrap();
    let reported = reported.into_inner().unwrap();
    // 1 s of 1 ms steps, each reported once, in order.
    assert_eq!(reported.len(), 1000);
    assert!(reported
        .iter()
        .enumerate()
        .all(|(i, &r)| r == (i + 1, 1000)));
    assert_eq!((world.time_s(), world.steps()), (0.0, 0));
    let ball = world.find("ball").unwrap();
    let z = world.pose(ball).unwrap().translation.z;
    assert!((z - 0.06).abs() < 2e-3, "ball centre at {z}");
    let p = world.motion(ball).unwrap().momentum_n_s;
    assert!(Vector3::from(p).norm() < 1e-4, "{p:?}");

    // The coarse tile lands flat from 17 mm while it settles and lies on
    // its face at time 0.
    let text = coarse_flat_drop_text()
        .replace("time_step_s = 0.001", "time_step_s = 0.001\nsettle_s = 0.5");
    let scene = Scene::parse(&text, &scene_path("tile-flat-drop")).unwrap();
    let assets = assets_of(&scene).unwrap();
    let world = World::from_scene(&scene, &assets, 0, threads()).unwrap();
    assert!(world.events().is_empty());
    let tile = world.find("tile").unwrap();
    let z = world.motion(tile).unwrap().com_m[2];
    assert!((z - 0.003).abs() < 1e-3, "tile centre of mass at {z}");

    for (settle, message) in [
        ("11.0", "outside 0 to 10 s"),
        ("-1.0", "outside 0 to 10 s"),
        ("nan", "outside 0 to 10 s"),
    ] {
        let error = parse(&format!("{BALL_ON_BOX}\n[world]\nsettle_s = {settle}\n")).unwrap_err();
        assert!(
            error.contains("scenes/test.toml")
                && error.contains("settle_s")
                && error.contains(message),
            "{error}"
        );
    }
    let steps = parse(&format!(
        "{BALL_ON_BOX}\n[world]\ntime_step_s = 1e-5\nsettle_s = 1.0\n"
    ))
    .unwrap_err();
    assert!(
        steps.contains("settle_s") && steps.contains("100000 steps"),
        "{steps}"
    );
}

/// `tessera drop` of a breakable body onto a static one (the tile dropped
/// flat on the floor) reports the dropped body: its landing's computed
/// contact and its pieces, as it does the target's when the target breaks.
#[test]
fn a_dropped_breakable_body_is_the_one_reported() {
    let (scene, assets) = coarse_flat_drop();
    let run = drop_run(
        &scene,
        &assets,
        0.02,
        1,
        None,
        threads(),
        &mut Counters::default(),
    )
    .unwrap();
    let landing = run.first_impact.as_ref().expect("the landing is checked");
    // It lands at (2 g h)^½ (its first point to touch, to the rotation the
    // solver's contacts on the way give it) and exchanges at most twice
    // its momentum in one step (bouncing back elastically).
    let tile_kg = TILE_KG;
    let speed_m_s = (2.0 * 9.81 * 0.02f64).sqrt();
    assert!(
        (landing.approach_speed_m_s - speed_m_s).abs() < 0.2 * speed_m_s,
        "{landing:?}"
    );
    assert!(
        run.peak_contact_impulse_n_s > 0.0
            && run.peak_contact_impulse_n_s <= 2.0 * tile_kg * speed_m_s,
        "{run:?}"
    );
    assert!(landing.contact.peak_force_n > 0.0, "{landing:?}");
    assert!(!run.broke && run.fragments == 1, "{run:?}");
}

/// A tile dropped flat lands on its whole face in one impact, not on the
/// one corner the rigid solver finds first: the other corners close
/// within the strike's contact time and take part in the same computed
/// contact. Landing on its face, the tile exchanges its whole momentum,
/// `(1 + e) m v` with the pair's restitution `e` (Poisson's hypothesis,
/// the elastic contact giving back what it took); on one corner it would
/// exchange `(1 + e) m_c v`, `m_c` the corner's effective mass, a
/// fraction of `m`, and spin. Tilted by 3° (its far edge 7.8 mm higher,
/// some 30 contact durations of fall away) it lands on its near edge
/// alone, and exchanges that much less.
#[test]
fn a_tile_dropped_flat_lands_on_its_face_in_one_impact() {
    let text = coarse_flat_drop_text();
    let tilted = text.replace(
        "position_m = [0.0, 0.0, 0.02]",
        "position_m = [0.0, 0.0, 0.02]\nrotation_deg = [3.0, 0.0, 0.0]",
    );
    assert_ne!(tilted, text);
    let first_landing = |text: &str, height_m: f64| {
        let scene = Scene::parse(text, &scene_path("tile-flat-drop")).unwrap();
        let assets = assets_of(&scene).unwrap();
        let run = drop_run(
            &scene,
            &assets,
            height_m,
            1,
            None,
            threads(),
            &mut Counters::default(),
        )
        .unwrap();
        run.first_impact.expect("the landing is checked")
    };
    let scene = Scene::parse(&text, &scene_path("tile-flat-drop")).unwrap();
    let restitution = scene.bodies.iter().map(|b| b.restitution).sum::<f64>() / 2.0;
    let tile_kg = TILE_KG;
    let on_edge = first_landing(&tilted, 0.14);
    let whole_n_s = (1.0 + restitution) * tile_kg * on_edge.approach_speed_m_s;
    assert!(
        on_edge.exchanged_impulse_n_s < 0.5 * whole_n_s,
        "tilted: {} N·s exchanged, {whole_n_s} N·s for the whole face: {on_edge:?}",
        on_edge.exchanged_impulse_n_s
    );
    for height_m in [0.14, 0.3] {
        let landing = first_landing(&text, height_m);
        let speed_m_s = (2.0 * 9.81 * height_m).sqrt();
        assert!(
            (landing.approach_speed_m_s / speed_m_s - 1.0).abs() < 0.05,
            "{height_m} m: {landing:?}"
        );
        let whole_n_s = (1.0 + restitution) * tile_kg * landing.approach_speed_m_s;
        assert!(
            (landing.exchanged_impulse_n_s / whole_n_s - 1.0).abs() < 0.03,
            "{height_m} m: {} N·s exchanged, {whole_n_s} N·s for the whole face: {landing:?}",
            landing.exchanged_impulse_n_s
        );
    }
}

/// A world that defers its checks lands the flat tile on its face in the
/// landing's step: its contacts exchange there the impulse computed on the
/// tile as rigid at every corner that closes during the impact (the check
/// itself comes back later), `(1 + e) m v` with the pair's restitution
/// `e`, and the tile bounces back level. The solver's one step on the
/// first corner alone would give it a fraction of that, and a spin.
#[test]
fn a_deferring_world_lands_the_flat_tile_on_its_face_in_the_step() {
    let (scene, assets) = coarse_flat_drop();
    let restitution = scene.bodies.iter().map(|b| b.restitution).sum::<f64>() / 2.0;
    let mut world = World::from_scene(&scene, &assets, 1, threads()).unwrap();
    let (tile, ground) = (world.find("tile").unwrap(), world.find("ground").unwrap());
    place_above(&mut world, tile, ground, 0.14);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    world.defer_fractures(FractureWorker::spawn(pool).unwrap());
    let gravity_dv_m_s = 9.81 * scene.world.time_step_s;
    let mut before = world.motion(tile).unwrap();
    for _ in 0..1000 {
        world.step(&StepInputs::default(), threads(), &mut Counters::default());
        let after = world.motion(tile).unwrap();
        if after.momentum_n_s[2] <= 0.0 {
            before = after;
            continue;
        }
        assert_eq!(world.deferred_checks(), 1, "the landing's check is out");
        let mass_kg = after.mass_kg;
        let landing_m_s = -before.momentum_n_s[2] / mass_kg;
        let rebound_m_s = after.momentum_n_s[2] / mass_kg + gravity_dv_m_s;
        assert!(
            (rebound_m_s - restitution * landing_m_s).abs()
                < 0.03 * (1.0 + restitution) * landing_m_s,
            "landed at {landing_m_s} m/s, rebounds at {rebound_m_s} m/s (e = {restitution})"
        );
        let translation_j = Vector3::from(after.momentum_n_s).norm_squared() / (2.0 * mass_kg);
        let rotation_j = after.kinetic_energy_j - translation_j;
        assert!(
            rotation_j < 1e-3 * translation_j,
            "{rotation_j} J of spin against {translation_j} J of translation"
        );
        return;
    }
    panic!("the tile never bounced");
}

/// The haptic sub-world's contacts get the corners that close during
/// their impact too: its solver, rapier's, reports a tile landing flat on
/// one corner, as the global world's does. The tile, a member of the
/// sub-world, lands flat with that one corner reported, and its check's
/// contact takes the whole tile's momentum, `(1 + e) m v` with the
/// contact's restitution `e`, as the global world's landing does
/// (`a_tile_dropped_flat_lands_on_its_face_in_one_impact`); the corner
/// alone would press a seventh of the mass and turn the tile about it.
/// (The sub-world, not the check, moves its members: the check's impulse
/// is what the tile's stresses come from.)
#[test]
fn a_sub_world_tile_landing_flat_on_one_reported_corner_lands_on_its_face() {
    let (scene, assets) = coarse_flat_drop();
    let mut world = World::from_scene(&scene, &assets, 1, threads()).unwrap();
    let (tile, ground) = (world.find("tile").unwrap(), world.find("ground").unwrap());
    let gap_m = 1e-4;
    place_above(&mut world, tile, ground, gap_m);
    let speed_m_s = (2.0 * 9.81 * 0.14f64).sqrt();
    let pose = world.pose(tile).unwrap();
    world.set_state(
        tile,
        &pose,
        &Vector3::new(0.0, 0.0, -speed_m_s),
        &Vector3::zeros(),
    );
    let (_, points, _) = world
        .world_surfaces()
        .find(|(id, _, _)| *id == tile)
        .unwrap();
    let corner = *points
        .iter()
        .min_by(|a, b| (a.x + a.y + a.z).total_cmp(&(b.x + b.y + b.z)))
        .unwrap();
    let reported = [BodyContact {
        body: tile,
        other: Some(ground),
        point_m: corner,
        normal: Vector3::new(0.0, 0.0, 1.0),
        impulse_n_s: 0.05,
        approach_speed_m_s: speed_m_s,
        gap_m,
    }];
    let inputs = StepInputs {
        external_contacts: &reported,
        sub_world_members: &[tile],
    };
    world.step(&inputs, threads(), &mut Counters::default());
    let landing = world
        .last_impacts()
        .iter()
        .find(|i| i.body == tile)
        .expect("the landing is checked");
    let contact = landing.contact;
    let tile_kg = TILE_KG;
    let whole_n_s = (1.0 + contact.restitution) * tile_kg * speed_m_s;
    assert!(
        (contact.impulse_n_s / whole_n_s - 1.0).abs() < 0.03,
        "{} N·s, {whole_n_s} N·s for the whole tile: {landing:?}",
        contact.impulse_n_s
    );
}

/// A deferring world's impact exchanges, once its check is back, the
/// impulses of the elastic contact inline would: a steel ball dropped
/// 0.2 m on the tile on its supports leaves most of its energy in the
/// tile's vibration, which the contact on the body as rigid (applied in
/// the step) does not.
#[test]
fn a_deferring_world_exchanges_the_elastic_impulse_once_the_check_is_back() {
    deferred_ball_drop_exchanges_as_inline(None);
}

/// The same where the world exchanges the solver's impulses in the
/// impact's step (a rigid exchange past the world's budget): the check's
/// elastic impulses replace them when it is back.
#[test]
fn a_deferring_world_corrects_the_solvers_impulses_once_the_check_is_back() {
    deferred_ball_drop_exchanges_as_inline(Some(0));
}

/// The ball dropped on the tile on its supports, inline and deferring
/// (with the rigid exchange's budget `budget`, if given): the exchanged
/// impulse is the same, and a step after the check is back the ball has,
/// in flight, the momentum it has inline.
fn deferred_ball_drop_exchanges_as_inline(budget: Option<usize>) {
    let (scene, assets) = load("tile-on-supports");
    let dropped = || {
        let mut world = World::from_scene(&scene, &assets, 1, threads()).unwrap();
        let (ball, tile) = (world.find("ball").unwrap(), world.find("tile").unwrap());
        place_above(&mut world, ball, tile, 0.2);
        (world, ball, tile)
    };
    let steps = 400;
    let (mut inline, ball, tile) = dropped();
    let mut inline_momentum = Vec::new();
    let mut inline_impact = None;
    for _ in 0..steps {
        inline.step(&StepInputs::default(), threads(), &mut Counters::default());
        inline_momentum.push(inline.motion(ball).unwrap().momentum_n_s[2]);
        if inline_impact.is_none() {
            inline_impact = inline
                .last_impacts()
                .iter()
                .find(|i| i.body == tile)
                .copied();
            if let Some(impact) = inline_impact {
                assert!(impact.contact.restitution < 0.5, "{impact:?}");
            }
        }
    }
    let inline_impact = inline_impact.expect("the ball strikes the tile");

    let (mut world, _, _) = dropped();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    world.defer_fractures(FractureWorker::spawn(pool).unwrap());
    if let Some(budget) = budget {
        world.limit_rigid_exchanges(budget);
    }
    let mut impact = None;
    let mut counters = Counters::default();
    for (step, &expected) in inline_momentum.iter().enumerate() {
        world.step(&StepInputs::default(), threads(), &mut counters);
        if let Some(i) = world.last_impacts().iter().find(|i| i.body == tile) {
            impact = Some((*i, step));
        }
        if world.deferred_checks() > 0 {
            // Gives the check time to run (the world steps far faster).
            std::thread::sleep(std::time::Duration::from_millis(20));
            continue;
        }
        let Some((impact, back)) = impact else {
            continue;
        };
        assert!(
            (impact.exchanged_impulse_n_s / inline_impact.exchanged_impulse_n_s - 1.0).abs() < 1e-9,
            "{impact:?} against inline {inline_impact:?}"
        );
        // The ball's strike, exchanged as rigid or as the solver has it.
        let exchanged = (counters.rigid_exchanges, counters.solver_exchanges);
        let expected_exchanges = if budget == Some(0) { (0, 1) } else { (1, 0) };
        assert_eq!(exchanged, expected_exchanges, "rigid, solver");
        // A step later, in flight, the ball has the momentum it has inline.
        if step > back {
            let momentum = world.motion(ball).unwrap().momentum_n_s[2];
            assert!(expected > 0.0, "the ball is rising");
            assert!(
                (momentum - expected).abs() < 0.02 * inline_impact.exchanged_impulse_n_s,
                "{momentum} N·s against {expected} inline"
            );
            return;
        }
    }
    panic!("the deferred check never came back");
}

#[test]
fn a_resting_ball_does_not_break_the_tile_and_a_high_drop_does() {
    let (scene, assets) = load("tile-on-supports");
    let rest = drop_run(
        &scene,
        &assets,
        0.0,
        1,
        None,
        threads(),
        &mut Counters::default(),
    )
    .unwrap();
    assert!(
        !rest.broke && rest.fragments == 1 && rest.crack_area_m2 == 0.0,
        "{rest:?}"
    );

    let mut world = World::from_scene(&scene, &assets, 1, threads()).unwrap();
    let (ball, tile) = (world.find("ball").unwrap(), world.find("tile").unwrap());
    let tile_mass = world.motion(tile).unwrap().mass_kg;
    assert!((tile_mass - TILE_KG).abs() < 1e-9 * tile_mass);
    place_above(&mut world, ball, tile, 4.0);
    let mut event = None;
    for _ in 0..1200 {
        world.step(&StepInputs::default(), threads(), &mut Counters::default());
        if let Some(e) = world.events().iter().find(|e| !e.fragments.is_empty()) {
            event = Some(e.clone());
            break;
        }
    }
    let event = event.expect("a 4 m drop breaks the tile");
    assert_eq!(event.body, tile);
    assert!(event.fragments.len() >= 2, "{event:?}");
    assert!(world.body(tile).is_none(), "the broken tile is replaced");
    // Mass: the pieces (and any debris) are the tile.
    let pieces: f64 = event
        .fragments
        .iter()
        .map(|&f| world.motion(f).unwrap().mass_kg)
        .sum();
    assert!(
        (pieces + event.debris_mass_kg - tile_mass).abs() < 1e-9 * tile_mass,
        "{pieces} + {} vs {tile_mass}",
        event.debris_mass_kg
    );
    // Momentum: the pieces carry the parent's momentum after the step, which
    // is its momentum before plus the step's contact impulses and gravity.
    assert_fragments_carry_the_momentum_after(&world, &event);
    let after = Vector3::from(event.momentum_after_n_s);
    let impulse = Vector3::from(event.contact_impulse_n_s);
    let gravity = Vector3::new(0.0, 0.0, -9.81) * tile_mass * scene.world.time_step_s;
    let predicted = Vector3::from(event.momentum_before_n_s) + impulse + gravity;
    assert!(
        (after - predicted).norm() < 0.02 * impulse.norm(),
        "after {after}, before + impulses {predicted}"
    );
    assert!(impulse.z < -0.3, "the ball pushes the tile down: {impulse}");
}

/// The scene's `energy_length_m` and `crack_plane_energy` reach the
/// engine of every check. γ scales the strain energy a crack's elements
/// pay with (Glondu eq. 3.8): at 1 µm the ball's 1.5 m drop, which splits
/// the tile, still starts cracks (initiation does not depend on γ) but
/// each stops at its first elements, too little to split it. Paid by the
/// traction on its plane instead of the whole density, the same drop cuts
/// another crack area.
#[test]
fn the_scenes_energy_settings_decide_how_far_cracks_run() {
    let (scene, assets) = load("tile-on-supports");
    let drop = |scene: &Scene| {
        drop_run(
            scene,
            &assets,
            1.5,
            1,
            None,
            threads(),
            &mut Counters::default(),
        )
        .unwrap()
    };
    let whole = drop(&scene);
    assert!(
        whole.fragments >= 2 && whole.crack_area_m2 > 0.0,
        "{whole:?}"
    );

    let mut short = scene.clone();
    short.world.energy_length_m = 1e-6;
    let short = drop(&short);
    assert!(
        short.fracture_events > 0
            && short.fragments == 1
            && short.crack_area_m2 > 0.0
            && short.crack_area_m2 < whole.crack_area_m2,
        "{short:?}\nagainst {whole:?}"
    );

    let mut plane = scene.clone();
    plane.world.crack_plane_energy = true;
    let plane = drop(&plane);
    assert!(
        plane.crack_area_m2 > 0.0 && plane.crack_area_m2 != whole.crack_area_m2,
        "{plane:?}\nagainst {whole:?}"
    );

    for (value, message) in [("0.0", "outside (0, 1] m"), ("5.0", "outside (0, 1] m")] {
        let error = parse(&format!(
            "{BALL_ON_BOX}\n[world]\nenergy_length_m = {value}\n"
        ))
        .unwrap_err();
        assert!(
            error.contains("scenes/test.toml")
                && error.contains("energy_length_m")
                && error.contains(message),
            "{error}"
        );
    }
}

/// The ball's landing on the tile exchanges the impulse the fracture
/// engine computed (issue 26 §3), not the solver's one-step impulse: the
/// ball's momentum changes by it, and it is a smooth function of the drop
/// height (the solver's had jumped from 1.33 m·v to 1.02 m·v between 1.0
/// and 1.25 m).
#[test]
fn the_landing_exchanges_the_computed_impulse_smoothly_in_height() {
    let (scene, assets) = load("tile-on-supports");
    let mut ratios = Vec::new();
    for height_m in [0.2, 0.5, 0.8] {
        let mut world = World::from_scene(&scene, &assets, 1, threads()).unwrap();
        let (ball, tile) = (world.find("ball").unwrap(), world.find("tile").unwrap());
        let mass_kg = world.motion(ball).unwrap().mass_kg;
        place_above(&mut world, ball, tile, height_m);
        let mut landing = None;
        for _ in 0..1000 {
            let before = Vector3::from(world.motion(ball).unwrap().momentum_n_s);
            world.step(&StepInputs::default(), threads(), &mut Counters::default());
            if let Some(impact) = world.last_impacts().iter().find(|i| i.body == tile) {
                let after = Vector3::from(world.motion(ball).unwrap().momentum_n_s);
                landing = Some((*impact, before, after));
                break;
            }
        }
        let (impact, before, after) = landing.expect("the ball lands");
        let computed_n_s = impact.exchanged_impulse_n_s;
        // The pair's restitution (0.5) returns less than the elastic
        // contact, which returns less than it took.
        let elastic_n_s = impact.contact.striking_impulse_n_s;
        assert!(computed_n_s < elastic_n_s, "{impact:?}");
        let gravity_n_s = -9.81 * mass_kg * scene.world.time_step_s;
        // The ball's vertical momentum: down before, up after, by J.
        let exchanged_n_s = after.z - before.z - gravity_n_s;
        assert!(
            (exchanged_n_s - computed_n_s).abs() < 1e-3 * computed_n_s,
            "{height_m} m: the ball received {exchanged_n_s} N·s, the engine computed {computed_n_s}"
        );
        let applied: f64 = world
            .last_contacts()
            .iter()
            .filter(|c| c.body == tile && c.other == Some(ball))
            .map(|c| c.impulse_n_s)
            .sum();
        assert!((applied - computed_n_s).abs() < 1e-9 * computed_n_s);
        // Between a perfectly plastic (1) and elastic (2) exchange of a
        // light ball with a plate on supports.
        let ratio = computed_n_s / (mass_kg * impact.approach_speed_m_s);
        assert!((1.0..2.0).contains(&ratio), "{height_m} m: J/mv = {ratio}");
        ratios.push(ratio);
    }
    // Smooth: J/mv stays within 5 % over 0.2–0.8 m (the solver's moved
    // by 30 % within 0.25 m).
    let (low, high) = ratios
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(l, h), &r| (l.min(r), h.max(r)));
    assert!(high < 1.05 * low, "J/mv at 0.2, 0.5, 0.8 m: {ratios:?}");
}

/// A landing's impact check pushes the tile (it exchanges its computed
/// impulse in place of the solver's), and the tile's supports took part
/// in that check. So at the next step the supports the push closes in on
/// do not strike the tile again: a contact is an impact only if the two
/// bodies also moved together over the step before. Counted as impacts,
/// such pushes had kept a fragment resting across a support and the
/// ground struck at every step.
#[test]
fn a_push_from_an_impact_check_is_not_an_impact_at_the_next_step() {
    let (scene, assets) = load("tile-on-supports");
    let impact_speed_m_s = scene.world.impact_speed_m_s;
    let mut world = World::from_scene(&scene, &assets, 1, threads()).unwrap();
    let (ball, tile) = (world.find("ball").unwrap(), world.find("tile").unwrap());
    place_above(&mut world, ball, tile, 0.2);
    let mut landed = false;
    for _ in 0..1000 {
        world.step(&StepInputs::default(), threads(), &mut Counters::default());
        if world.last_impacts().iter().any(|i| i.body == tile) {
            landed = true;
            break;
        }
    }
    assert!(landed, "the ball lands");
    assert!(world.body(tile).is_some(), "0.2 m does not split the tile");
    // The push: the tile's velocity now closes its supports' contacts
    // faster than an impact, though it rested on them.
    let tile_velocity = Vector3::from(world.motion(tile).unwrap().momentum_n_s)
        / world.motion(tile).unwrap().mass_kg;
    assert!(
        tile_velocity.z < -impact_speed_m_s,
        "the landing pushed the tile down: {tile_velocity}"
    );
    world.step(&StepInputs::default(), threads(), &mut Counters::default());
    let supports: Vec<_> = world
        .last_contacts()
        .iter()
        .filter(|c| c.body == tile && c.other != Some(ball))
        .collect();
    assert!(!supports.is_empty(), "the tile rests on its supports");
    assert!(
        supports
            .iter()
            .all(|c| c.approach_speed_m_s <= impact_speed_m_s),
        "{supports:?}"
    );
    assert!(
        !world.last_impacts().iter().any(|i| i.body == tile),
        "{:?}",
        world.last_impacts()
    );
}

/// A world that defers its checks (real-time sessions) steps on while
/// the tile's check runs: the tile stays whole until the check is back,
/// and the event is the inline check's (same step, cracks, peak stress and
/// pieces), its fragments carrying the tile's momentum when they replace
/// it.
#[test]
fn a_deferred_check_breaks_the_tile_as_inline_while_the_world_steps_on() {
    let (scene, assets) = load("tile-on-supports");
    let split = |world: &World| {
        world
            .events()
            .iter()
            .find(|e| !e.fragments.is_empty())
            .cloned()
    };
    let dropped = || {
        let mut world = World::from_scene(&scene, &assets, 1, threads()).unwrap();
        let (ball, tile) = (world.find("ball").unwrap(), world.find("tile").unwrap());
        place_above(&mut world, ball, tile, 2.0);
        (world, tile)
    };
    let (mut inline, tile) = dropped();
    let mut inline_event = None;
    for _ in 0..1200 {
        inline.step(&StepInputs::default(), threads(), &mut Counters::default());
        inline_event = split(&inline);
        if inline_event.is_some() {
            break;
        }
    }
    let inline_event = inline_event.expect("a 2 m drop breaks the tile");

    let (mut world, _) = dropped();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads().current_num_threads())
        .build()
        .unwrap();
    // The worker's threads wait until the world has stepped `HELD_STEPS`
    // times with a check out, so that it does whatever the host's load:
    // a check that came back within its own step would be adopted in it,
    // as inline. They wait 10 s at most, so that a world that waited for
    // its checks would fail the test rather than hang it.
    const HELD_STEPS: usize = 5;
    let gate = std::sync::Arc::new((std::sync::Mutex::new(true), std::sync::Condvar::new()));
    let held = std::sync::Arc::clone(&gate);
    pool.spawn_broadcast(move |_| {
        let (holding, released) = &*held;
        let holding = holding.lock().unwrap();
        let timeout = std::time::Duration::from_secs(10);
        drop(released.wait_timeout_while(holding, timeout, |h| *h));
    });
    let release = || {
        *gate.0.lock().unwrap() = false;
        gate.1.notify_all();
    };
    world.defer_fractures(FractureWorker::spawn(pool).unwrap());
    let mut event = None;
    let mut whole_while_out = 0;
    for _ in 0..20_000 {
        world.step(&StepInputs::default(), threads(), &mut Counters::default());
        event = split(&world);
        if event.is_some() {
            break;
        }
        if world.deferred_checks() > 0 {
            assert!(world.body(tile).is_some());
            whole_while_out += 1;
            if whole_while_out == HELD_STEPS {
                release();
            }
            // Gives the check time to run (the world steps far faster).
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    let event = event.expect("the deferred check comes back and splits the tile");
    assert!(
        whole_while_out >= HELD_STEPS,
        "the world stepped while the check was out"
    );
    assert_eq!(
        (
            event.step,
            event.cracks,
            event.fragments.len(),
            event.debris
        ),
        (
            inline_event.step,
            inline_event.cracks,
            inline_event.fragments.len(),
            inline_event.debris
        )
    );
    assert_eq!(event.peak_stress_pa, inline_event.peak_stress_pa);
    assert_eq!(event.crack_area_m2, inline_event.crack_area_m2);
    assert!(world.body(tile).is_none(), "the broken tile is replaced");
    assert_fragments_carry_the_momentum_after(&world, &event);
}

/// The fragments and debris of `event`, just inserted, carry the broken
/// body's momentum after the event's step.
fn assert_fragments_carry_the_momentum_after(world: &World, event: &FractureEvent) {
    let fragments: Vector3<f64> = event
        .fragments
        .iter()
        .map(|&f| Vector3::from(world.motion(f).unwrap().momentum_n_s))
        .sum();
    let after = Vector3::from(event.momentum_after_n_s);
    let debris = Vector3::from(event.debris_momentum_n_s);
    assert!(
        (fragments + debris - after).norm() < 1e-5 * after.norm(),
        "{fragments} + {debris} vs {after}"
    );
}

/// An impact on a body whose deferred check is out waits for that check
/// and then goes out with the body it left: the ball strikes the resting
/// tile, and again at the next step, and both impact checks come back, one
/// after the other, never two out at once.
#[test]
fn an_impact_on_a_body_whose_check_is_out_waits_for_it() {
    let (scene, assets) = load("tile-on-supports");
    let mut world = World::from_scene(&scene, &assets, 1, threads()).unwrap();
    let (ball, tile) = (world.find("ball").unwrap(), world.find("tile").unwrap());
    let step = |world: &mut World| {
        world.step(&StepInputs::default(), threads(), &mut Counters::default());
        world
            .last_impacts()
            .iter()
            .filter(|i| i.body == tile)
            .count()
    };
    // The tile settles on its supports, checked inline.
    place_above(&mut world, ball, tile, 1.0);
    for _ in 0..50 {
        step(&mut world);
    }
    // The first check is still out at the next step whatever the
    // machine's load.
    let release = defer_to_held_worker(&mut world, false);
    // A strike at 3 m/s (a 0.46 m drop, which does not break the tile).
    let strike = |world: &mut World| {
        place_above(world, ball, tile, 0.001);
        let pose = world.pose(ball).unwrap();
        let down = Vector3::new(0.0, 0.0, -3.0);
        world.set_state(ball, &pose, &down, &Vector3::zeros());
    };
    strike(&mut world);
    assert_eq!(step(&mut world), 0);
    assert_eq!(
        world.deferred_checks(),
        1,
        "the first strike's check is out"
    );
    strike(&mut world);
    let mut checked = step(&mut world);
    assert_eq!(
        world.deferred_checks(),
        1,
        "the second strike's check waits"
    );
    release.send(()).unwrap();
    for _ in 0..10_000 {
        if checked >= 2 && world.deferred_checks() == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
        checked += step(&mut world);
        assert!(world.deferred_checks() <= 1);
    }
    // The ball's rebounds, which depend on when the checks came back,
    // may strike the tile again.
    assert!(checked >= 2, "both strikes were checked: {checked}");
    assert!(world.events().iter().all(|e| e.fragments.is_empty()));
    assert!(world.body(tile).is_some());
}

/// Impacts on a body whose check is out wait for it, the one the person
/// holding the device feels first, then the strongest, as many as
/// `MAX_WAITING_IMPACTS`; the others are never checked, and counted. A
/// tile floating without gravity, held at rest before each strike, is
/// struck by the ball at 2 m/s and, while that check is held, at four
/// other speeds (the ball taken away after each) and once through the
/// haptic sub-world, weakest of all.
#[test]
fn impacts_waiting_for_a_check_go_out_felt_then_strongest_first() {
    let scene = parse(
        r#"
[world]
z_fact = 0.1
time_step_s = 0.001
modes = 20
gravity_m_s2 = [0.0, 0.0, 0.0]

[[body]]
name = "tile"
kind = "dynamic"
shape = { type = "tet-mesh", mesh = "tile:0.15,0.006:12,1" }
material = "ceramic-tile"

[[body]]
name = "ball"
kind = "dynamic"
shape = { type = "sphere", radius_m = 0.0125 }
material = "steel"
mass_kg = 0.110
position_m = [0.5, 0.0, 0.0]
restitution = 0.5
ccd = true
"#,
    )
    .unwrap();
    let assets = assets_of(&scene).unwrap();
    let mut world = World::from_scene(&scene, &assets, 1, threads()).unwrap();
    let (ball, tile) = (world.find("ball").unwrap(), world.find("tile").unwrap());
    let release = defer_to_held_worker(&mut world, false);
    let mut counters = Counters::default();
    // The approach speeds of the tile's impact checks, as they come back.
    let mut back: Vec<f64> = Vec::new();
    let step =
        |world: &mut World, inputs: &StepInputs, counters: &mut Counters, back: &mut Vec<f64>| {
            world.step(inputs, threads(), counters);
            back.extend(
                world
                    .last_impacts()
                    .iter()
                    .filter(|i| i.body == tile)
                    .map(|i| i.approach_speed_m_s),
            );
        };
    // The felt strike: 0.5 m/s and a tenth of `strike_on`'s impulse, the
    // weakest of all.
    const FELT_M_S: f64 = 0.5;
    let speeds = [2.0, 1.6, FELT_M_S, 0.6, 1.3, 1.0];
    for (strike, speed) in speeds.into_iter().enumerate() {
        let tile_pose = world.pose(tile).unwrap();
        world.set_state(tile, &tile_pose, &Vector3::zeros(), &Vector3::zeros());
        if speed == FELT_M_S {
            let felt = BodyContact {
                approach_speed_m_s: FELT_M_S,
                impulse_n_s: 0.03,
                ..strike_on(&world, tile, ball)
            };
            let inputs = StepInputs {
                external_contacts: &[felt],
                sub_world_members: &[tile],
            };
            step(&mut world, &inputs, &mut counters, &mut back);
        } else {
            place_above(&mut world, ball, tile, 0.0002);
            let ball_pose = world.pose(ball).unwrap();
            let down = Vector3::new(0.0, 0.0, -speed);
            world.set_state(ball, &ball_pose, &down, &Vector3::zeros());
            step(&mut world, &StepInputs::default(), &mut counters, &mut back);
            let mut away = world.pose(tile).unwrap();
            away.translation.vector.x += 0.5;
            world.set_state(ball, &away, &Vector3::zeros(), &Vector3::zeros());
        }
        assert_eq!(world.deferred_checks(), 1, "strike {strike}: one check out");
        let waited = strike.saturating_sub(MAX_WAITING_IMPACTS) as u64;
        assert_eq!(counters.unchecked_impacts, waited, "strike {strike}");
    }
    assert!(back.is_empty(), "{back:?}");
    release.send(()).unwrap();
    for _ in 0..20_000 {
        if world.deferred_checks() == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
        step(&mut world, &StepInputs::default(), &mut counters, &mut back);
        assert!(world.deferred_checks() <= 1, "one check out at a time");
    }
    assert_eq!(world.deferred_checks(), 0, "every check came back");
    // The first strike, then the felt one, then the others, strongest first.
    let mut expected = vec![speeds[0], FELT_M_S];
    let mut others: Vec<f64> = speeds[1..]
        .iter()
        .copied()
        .filter(|&s| s != FELT_M_S)
        .collect();
    others.sort_by(|a, b| b.total_cmp(a));
    expected.extend(others);
    expected.truncate(1 + MAX_WAITING_IMPACTS);
    assert_eq!(back.len(), expected.len(), "{back:?} against {expected:?}");
    for (speed, expected) in back.iter().zip(&expected) {
        assert!(
            (speed - expected).abs() < 0.05,
            "{back:?} against {expected:?}"
        );
    }
    let unchecked = speeds.len() - 1 - MAX_WAITING_IMPACTS;
    assert_eq!(counters.unchecked_impacts, unchecked as u64);
    assert!(world.events().iter().all(|e| e.fragments.is_empty()));
}

/// The tile of `tile-on-supports` struck by its ball from 2 m, stepped
/// until it splits; the world with own bases for fragments of at least
/// `min_tets` intact tets if given. The split's fragments.
fn broken_tile(own_bases_min_tets: Option<usize>) -> (World, Vec<BodyId>) {
    let (scene, assets) = load("tile-on-supports");
    let mut world = World::from_scene(&scene, &assets, 1, threads()).unwrap();
    if let Some(min_tets) = own_bases_min_tets {
        let pool = rayon::ThreadPoolBuilder::new().build().unwrap();
        world.enable_own_bases(BasisWorker::spawn(None, pool).unwrap(), min_tets);
    }
    let (ball, tile) = (world.find("ball").unwrap(), world.find("tile").unwrap());
    place_above(&mut world, ball, tile, 2.0);
    for _ in 0..1200 {
        world.step(&StepInputs::default(), threads(), &mut Counters::default());
        if let Some(e) = world.events().iter().find(|e| !e.fragments.is_empty()) {
            let fragments = e.fragments.clone();
            return (world, fragments);
        }
    }
    panic!("a 2 m drop breaks the tile");
}

/// The peak stress of `body`'s static response to 1 N pressing on its
/// node `node`, without cracking it.
fn static_peak_stress_pa(body: &BreakableBody, node: usize) -> f64 {
    let mut body = body.clone();
    let load = StaticLoad {
        point_m: body.mesh().nodes()[node],
        force_n: -Vector3::z(),
        face: None,
    };
    let outcome = body.static_load(
        &[load],
        &tessera::fracture::FractureSettings::default(),
        threads(),
        &mut tessera::fracture::Counters::default(),
    );
    assert!(outcome.cracks.is_empty(), "1 N cracked it");
    outcome.peak_stress_pa
}

#[test]
fn a_large_fragment_swaps_to_its_own_basis_whose_stresses_equal_a_direct_analysis() {
    let (mut world, fragments) = broken_tile(Some(500));
    let (reference, _) = broken_tile(None);
    // Identical until a swap: queuing analyses does not touch the physics.
    assert_eq!(world.state_hash(), reference.state_hash());
    let queued = world.pending_own_bases();
    assert!(queued >= 1, "no fragment of the tile has 500 intact tets");
    // The breakable fragments (debris and small pieces are rigid).
    let fracture_body = |world: &World, id: BodyId| {
        let body = world.body(id).unwrap();
        body.breakable.as_ref().map(|b| b.body.clone())
    };
    let before: Vec<(BodyId, BreakableBody)> = fragments
        .iter()
        .filter_map(|&id| Some((id, fracture_body(&world, id)?)))
        .collect();
    let tile_tets = before[0].1.mesh().tet_count();

    assert_eq!(world.adopt_own_bases(Adoption::AllQueued), queued);
    assert_eq!(
        (world.pending_own_bases(), world.adopted_own_bases()),
        (0, queued as u64)
    );
    // Those that swapped hold their intact part, of 500 tets or more.
    let swapped: Vec<&(BodyId, BreakableBody)> = before
        .iter()
        .filter(|(id, _)| fracture_body(&world, *id).unwrap().mesh().tet_count() != tile_tets)
        .collect();
    assert_eq!(swapped.len(), queued);
    let (fragment, before) = (swapped[0].0, &swapped[0].1);
    let own = fracture_body(&world, fragment).unwrap();
    assert!(own.mesh().tet_count() >= 500 && own.mesh().tet_count() < tile_tets);
    // Its own mesh is its intact part, in the same (the tile's) frame.
    assert!(own.mesh().volume() <= world.body(fragment).unwrap().volume_m3 * (1.0 + 1e-12));
    // Its weak points are the fragment's, those in the kept tets.
    assert!(own.weak_points().len() <= before.weak_points().len());
    for &(point, tet) in own.weak_points() {
        let &(_, parent_tet) = before
            .weak_points()
            .iter()
            .find(|&&(p, _)| p == point)
            .expect("a weak point of the fragment");
        let corners = own.mesh().tet_points(tet as usize);
        assert_eq!(corners, before.mesh().tet_points(parent_tet as usize));
    }

    // Stresses after the swap equal those of a direct analysis of the
    // fragment's mesh with as many modes.
    let material = own.material().clone();
    let modes = EigenSettings::new(own.basis().mode_count());
    let (basis, _) = analyse(own.mesh(), &material, &modes, None, threads(), &|_| {}).unwrap();
    let direct = BreakableBody::new(own.mesh().clone(), material, basis, 0).unwrap();
    for node in [0, own.mesh().node_count() / 2, own.mesh().node_count() - 1] {
        let (swapped, direct) = (
            static_peak_stress_pa(&own, node),
            static_peak_stress_pa(&direct, node),
        );
        assert!(
            (swapped - direct).abs() <= 1e-6 * direct,
            "node {node}: {swapped} vs {direct}"
        );
        // The parent's modes carry the siblings: the stresses were not
        // the fragment's own before the swap.
        let point = own.mesh().nodes()[node];
        let parent_node = (0..before.mesh().node_count())
            .find(|&n| before.mesh().nodes()[n] == point)
            .expect("the fragment's nodes are the tile's");
        let parent = static_peak_stress_pa(before, parent_node);
        assert!(
            (parent - swapped).abs() > 0.01 * swapped,
            "node {node}: {parent} vs {swapped}"
        );
    }
}

/// A fragment's own basis that is ready while the fragment's deferred
/// check is out is held, and adopted once the check is back (the check's
/// return replaces the fracture body, which would undo a swap made
/// meanwhile).
#[test]
fn an_own_basis_ready_while_the_fragments_check_is_out_is_adopted_after_it() {
    let (mut world, fragments) = broken_tile(Some(500));
    let queued = world.pending_own_bases();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    world.defer_fractures(FractureWorker::spawn(pool).unwrap());
    // The largest fragment has 500 intact tets or more: its analysis is
    // queued. The ball strikes it at 1 m/s, which does not crack it.
    let largest = *fragments
        .iter()
        .filter(|&&f| world.body(f).unwrap().breakable.is_some())
        .max_by(|&&a, &&b| {
            let mass = |id| world.motion(id).unwrap().mass_kg;
            mass(a).total_cmp(&mass(b))
        })
        .unwrap();
    let ball = world.find("ball").unwrap();
    place_above(&mut world, ball, largest, 0.0005);
    let pose = world.pose(ball).unwrap();
    world.set_state(
        ball,
        &pose,
        &Vector3::new(0.0, 0.0, -1.0),
        &Vector3::zeros(),
    );
    world.step(&StepInputs::default(), threads(), &mut Counters::default());
    assert!(
        world.is_checking(largest),
        "the strike's check of the largest fragment is out"
    );
    // Every analysis is ready; the struck fragment's is held (and those
    // of fragments whose held-load checks went out with it).
    let parent_tets = |world: &World| {
        let fragment = world.body(largest).unwrap().breakable.as_ref().unwrap();
        fragment.body.mesh().tet_count()
    };
    let tile_tets = parent_tets(&world);
    let adopted = world.adopt_own_bases(Adoption::AllQueued);
    assert!(adopted < queued && world.pending_own_bases() == queued - adopted);
    assert_eq!(parent_tets(&world), tile_tets, "no swap while checked");
    for _ in 0..10_000 {
        if world.deferred_checks() == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
        world.step(&StepInputs::default(), threads(), &mut Counters::default());
    }
    assert_eq!(world.deferred_checks(), 0);
    assert!(
        world.events().iter().all(|e| e.body != largest),
        "the strike cracked the fragment"
    );
    assert_eq!(world.adopt_own_bases(Adoption::Finished), queued - adopted);
    assert_eq!(
        (world.pending_own_bases(), world.adopted_own_bases()),
        (0, queued as u64)
    );
    assert!(
        parent_tets(&world) < tile_tets,
        "its own basis after the check"
    );
}

/// A study's next trial changes a plate's strength, not its modes: its
/// assets take the last trial's bases (`SceneAssets::load_with` with
/// `previous`), analyse nothing again, and give the world that fresh
/// assets give, at the new strength. A changed elastic constant is
/// analysed again.
#[test]
fn bases_kept_from_the_last_trial_give_the_world_fresh_ones_give() {
    let scene = Scene::load(&scene_path("tile-on-supports")).unwrap();
    let builtin = MaterialLibrary::builtin();
    let first = assets_of(&scene).unwrap();
    let with_tile = |change: &dyn Fn(&mut tessera::config::Material)| {
        let mut tile = builtin.get("ceramic-tile").unwrap().clone();
        change(&mut tile);
        let mut library = builtin.clone();
        library.insert("ceramic-tile", tile).unwrap();
        library
    };
    let analysed = std::sync::atomic::AtomicUsize::new(0);
    let load_after_first = |library: &MaterialLibrary| {
        analysed.store(0, std::sync::atomic::Ordering::SeqCst);
        let assets = SceneAssets::load_with(
            &scene,
            library,
            None,
            threads(),
            &|progress| {
                if !progress.ended {
                    analysed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            },
            &|path| std::fs::read(path),
            Some(&first),
        )
        .unwrap();
        (assets, analysed.load(std::sync::atomic::Ordering::SeqCst))
    };
    let weaker = with_tile(&|tile| tile.rankine_threshold_pa *= 0.5);
    let (kept, analyses) = load_after_first(&weaker);
    assert_eq!(analyses, 0, "only the strength changed");
    let fresh = SceneAssets::load(&scene, &weaker, None, threads(), &|_| {}).unwrap();
    let drop = |assets: &SceneAssets| {
        let run = drop_run(
            &scene,
            assets,
            0.3,
            1,
            None,
            threads(),
            &mut Counters::default(),
        );
        format!("{:?}", run.unwrap())
    };
    let at_first_strength = drop(&first);
    assert_eq!(drop(&kept), drop(&fresh));
    assert_ne!(
        drop(&kept),
        at_first_strength,
        "the kept bases carry the new strength"
    );
    let stiffer = with_tile(&|tile| tile.youngs_modulus_pa *= 1.2);
    assert_eq!(load_after_first(&stiffer).1, 1, "a new modulus: new modes");
}

#[test]
fn same_scene_and_seed_give_identical_states() {
    let (scene, assets) = load("bricks");
    let run = |seed| {
        let mut world = World::from_scene(&scene, &assets, seed, threads()).unwrap();
        for _ in 0..40 {
            world.step(&StepInputs::default(), threads(), &mut Counters::default());
        }
        (world.state_hash(), world.body_count(), world.events().len())
    };
    let first = run(3);
    assert!(first.2 > 0, "the bricks break within 0.4 s");
    assert_eq!(first, run(3));
}

#[test]
fn fragments_break_again_and_whole_body_splits_carry_their_patterns() {
    let (scene, assets) = load("bricks");
    let mut world = World::from_scene(&scene, &assets, 0, threads()).unwrap();
    world.record_split_patterns(true);
    for _ in 0..150 {
        world.step(&StepInputs::default(), threads(), &mut Counters::default());
    }
    let again = world
        .events()
        .iter()
        .filter(|e| e.name.contains('/'))
        .count();
    assert!(again > 0, "some fragment cracked again");
    for event in world.events().iter().filter(|e| !e.fragments.is_empty()) {
        // Pieces and debris hold the parent's mass, at a fragment's later
        // splits too (its pieces are carved from its own part of each tet).
        let total = event.fragments_mass_kg + event.debris_mass_kg;
        let tolerance_kg = 1e-9 * event.parent_mass_kg;
        assert!(
            (total - event.parent_mass_kg).abs() < tolerance_kg,
            "{event:?}"
        );
        if event.name.contains('/') {
            assert!(
                event.pattern.is_none(),
                "{}: a fragment's split",
                event.name
            );
            continue;
        }
        let pattern = event.pattern.as_ref().expect("a whole body's split");
        // One piece of the pattern per piece of the split, bodies or debris.
        assert_eq!(
            pattern.fragments + pattern.gap_fragments,
            event.fragments.len() + event.debris,
            "{}",
            event.name
        );
        // The pieces' areas tile the body but for its gap slivers.
        let covered: f64 = pattern.fragment_areas.iter().sum();
        assert!(covered <= 1.0 + 1e-9 && covered > 0.9, "{covered}");
        assert!(!pattern.crack_lengths.is_empty());
    }
}

#[test]
fn a_pile_of_fifty_cubes_stands_for_ten_seconds() {
    let (scene, assets) = load("cube-pile");
    let mut world = World::from_scene(&scene, &assets, 0, threads()).unwrap();
    let start: Vec<_> = world
        .bodies()
        .filter(|(_, b)| b.name.starts_with("cube#"))
        .map(|(id, _)| (id, world.pose(id).unwrap().translation.vector))
        .collect();
    assert_eq!(start.len(), 50);
    assert_eq!(scene.world.time_step_s, 1e-3);
    for _ in 0..10_000 {
        world.step(&StepInputs::default(), threads(), &mut Counters::default());
    }
    for (id, p0) in start {
        let p = world.pose(id).unwrap();
        let moved = (p.translation.vector - p0).norm();
        assert!(moved < 5e-3, "cube {id:?} moved {moved} m");
        let tilt = p.rotation.angle();
        assert!(tilt < 0.02, "cube {id:?} tilted {tilt} rad");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// Arbitrary edits of a valid scene never panic the parser.
    #[test]
    fn scene_parser_never_panics(cut in 0usize..400, insert in "[ -~\n]{0,12}") {
        let mut text = BALL_ON_BOX.to_string();
        let at = cut.min(text.len());
        text.insert_str(at, &insert);
        let _ = parse(&text);
    }
}

#[test]
fn haptic_table_errors_name_the_field() {
    let with = |haptic: &str| parse(&format!("{BALL_ON_BOX}\n[haptic]\n{haptic}"));
    assert!(with("proxy = \"ball\"").is_ok());
    let err = with("proxy = \"nothing\"").unwrap_err();
    assert!(
        err.contains("[haptic] proxy") && err.contains("nothing"),
        "{err}"
    );
    let err = with("proxy = \"ground\"").unwrap_err();
    assert!(
        err.contains("[haptic] proxy") && err.contains("dynamic"),
        "{err}"
    );
    let err = with("proxy = \"ball\"\nf_fact = -1.0").unwrap_err();
    assert!(err.contains("[haptic] f_fact"), "{err}");
    let err = with("proxy = \"ball\"\nsync_ratio = 0").unwrap_err();
    assert!(err.contains("[haptic] sync_ratio"), "{err}");
    let err = with("proxy = \"ball\"\n[haptic.device.sim-arm]\ns_fact = 0.0").unwrap_err();
    assert!(err.contains("s_fact") && err.contains("sim-arm"), "{err}");
    let err = with("proxy = \"ball\"\nspeed = 1").unwrap_err();
    assert!(err.contains("speed"), "{err}");
}

/// Three small porcelain plates on a shelf, a ball beside them.
const THREE_PLATES: &str = r#"
[world]
z_fact = 0.1
time_step_s = 0.001
modes = 20

[[body]]
name = "shelf"
kind = "static"
shape = { type = "box", size_m = [1.0, 0.3, 0.02] }
material = "wood"
position_m = [0.0, 0.0, 0.99]

[[body]]
name = "plate"
kind = "dynamic"
shape = { type = "tet-mesh", mesh = "plate:0.1,0.005:8,2" }
material = "porcelain"
position_m = [-0.25, 0.0, 1.0]
array = { count = 3, columns = [3, 1], spacing_m = [0.25, 0.0, 0.0] }

[[body]]
name = "ball"
kind = "dynamic"
shape = { type = "sphere", radius_m = 0.0125 }
material = "steel"
mass_kg = 0.110
position_m = [0.0, 0.25, 1.1]
"#;

/// The three plates of [`THREE_PLATES`] settled on their shelf (checked
/// inline), then a world deferring its checks to a worker whose only
/// thread waits for the returned sender before it takes the first; the
/// plates and the ball.
fn three_plates_deferring() -> (World, [BodyId; 3], BodyId, std::sync::mpsc::Sender<()>) {
    three_plates_deferring_with(false)
}

/// A plate's check queued on the first lane behind the check in hand,
/// which the hand's strike on that plate then waits for, is taken by the
/// lane of felt checks at once (it has become felt), and so is the
/// strike's own check after it; the held check stays out meanwhile.
#[test]
fn a_queued_check_the_hand_comes_to_wait_for_runs_on_the_felt_lane() {
    let (mut world, [held, queued, _], ball, release) = three_plates_deferring_with(true);
    // Struck outside the sub-world: the first check is in hand on the
    // held first lane, the second queued behind it.
    for plate in [held, queued] {
        let strike = [strike_on(&world, plate, ball)];
        let inputs = StepInputs {
            external_contacts: &strike,
            sub_world_members: &[],
        };
        world.step(&inputs, threads(), &mut Counters::default());
    }
    assert_eq!(world.deferred_checks(), 2, "checks out");
    // The hand strikes the second plate: its impact waits for the check
    // out, which the person now waits to feel.
    let strike = [strike_on(&world, queued, ball)];
    let inputs = StepInputs {
        external_contacts: &strike,
        sub_world_members: &[queued],
    };
    world.step(&inputs, threads(), &mut Counters::default());
    let mut back = Vec::new();
    step_until_back(&mut world, &mut back, |_, back| {
        back.iter().filter(|&&b| b == queued).count() == 2
    });
    assert_eq!(
        back,
        vec![queued, queued],
        "back while the first lane is held"
    );
    assert!(world.is_checking(held));
    release.send(()).unwrap();
}

/// [`three_plates_deferring`], the worker with a lane of felt checks of
/// its own (one thread, not held) if `felt_lane`.
fn three_plates_deferring_with(
    felt_lane: bool,
) -> (World, [BodyId; 3], BodyId, std::sync::mpsc::Sender<()>) {
    let scene = parse(THREE_PLATES).unwrap();
    let assets = assets_of(&scene).unwrap();
    let mut world = World::from_scene(&scene, &assets, 1, threads()).unwrap();
    let plates = ["plate#0", "plate#1", "plate#2"].map(|name| world.find(name).unwrap());
    let ball = world.find("ball").unwrap();
    for _ in 0..50 {
        world.step(&StepInputs::default(), threads(), &mut Counters::default());
    }
    let release = defer_to_held_worker(&mut world, felt_lane);
    (world, plates, ball, release)
}

/// Makes `world` defer its checks to a worker whose only thread waits for
/// the returned sender before it takes the first; with a lane of felt
/// checks (one thread, not held) if `felt_lane`.
fn defer_to_held_worker(world: &mut World, felt_lane: bool) -> std::sync::mpsc::Sender<()> {
    let one_thread = || {
        rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
    };
    let pool = one_thread();
    let (release, held) = std::sync::mpsc::channel::<()>();
    pool.spawn(move || {
        let _ = held.recv();
    });
    let mut worker = FractureWorker::spawn(pool).unwrap();
    if felt_lane {
        worker = worker.with_felt_lane(one_thread()).unwrap();
    }
    world.defer_fractures(worker);
    release
}

/// A strike of the ball at 2 m/s on the top of `plate`'s centre, as the
/// haptic sub-world reports its contacts.
fn strike_on(world: &World, plate: BodyId, ball: BodyId) -> BodyContact {
    let centre = world.pose(plate).unwrap().translation.vector;
    BodyContact {
        body: plate,
        other: Some(ball),
        point_m: (centre + Vector3::new(0.0, 0.0, 0.005)).into(),
        normal: Vector3::new(0.0, 0.0, -1.0),
        impulse_n_s: 0.3,
        approach_speed_m_s: 2.0,
        gap_m: 0.0,
    }
}

/// Steps `world`, sleeping 1 ms after each step to give its checks time
/// to run, until `done` holds of it and of the bodies of the impact checks
/// back so far (appended to `back` in the order they came back), or for
/// 20 000 steps.
fn step_until_back(
    world: &mut World,
    back: &mut Vec<BodyId>,
    done: impl Fn(&World, &[BodyId]) -> bool,
) {
    for _ in 0..20_000 {
        world.step(&StepInputs::default(), threads(), &mut Counters::default());
        back.extend(world.last_impacts().iter().map(|i| i.body));
        if done(world, back) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Steps `world` (the worker released) until its checks are back; the
/// bodies of the impact checks in the order they came back, each once.
fn impacts_in_order(world: &mut World) -> Vec<BodyId> {
    let first_of_each = |back: &[BodyId]| -> Vec<BodyId> {
        let mut order = Vec::new();
        for &body in back {
            if !order.contains(&body) {
                order.push(body);
            }
        }
        order
    };
    let mut back = Vec::new();
    step_until_back(world, &mut back, |world, back| {
        world.deferred_checks() == 0 && first_of_each(back).len() == 3
    });
    first_of_each(&back)
}

/// One step per strike of `strikes` (the plate, and the sub-world's
/// members at that step), then the worker released; whether each plate of
/// `before` (earlier, later) came back before the other.
fn strikes_come_back_in_order(
    strikes: impl Fn([BodyId; 3]) -> Vec<(BodyId, Vec<BodyId>)>,
    out: usize,
    before: impl Fn([BodyId; 3]) -> Vec<(BodyId, BodyId)>,
) {
    let (mut world, plates, ball, release) = three_plates_deferring();
    for (plate, members) in strikes(plates) {
        let strike = [strike_on(&world, plate, ball)];
        let inputs = StepInputs {
            external_contacts: &strike,
            sub_world_members: &members,
        };
        world.step(&inputs, threads(), &mut Counters::default());
    }
    assert_eq!(world.deferred_checks(), out, "checks out");
    release.send(()).unwrap();
    let order = impacts_in_order(&mut world);
    let at = |plate| order.iter().position(|&b| b == plate).unwrap();
    for (earlier, later) in before(plates) {
        assert!(at(earlier) < at(later), "{order:?}");
    }
}

#[test]
fn a_check_of_a_body_in_the_sub_world_goes_before_those_queued_ahead_of_it() {
    // The first may be in hand before the others are queued, or not.
    strikes_come_back_in_order(
        |[first, queued, felt]| vec![(first, vec![]), (queued, vec![]), (felt, vec![felt])],
        3,
        |[first, queued, felt]| vec![(felt, queued), (first, queued)],
    );
}

#[test]
fn an_impact_felt_while_its_body_is_queued_takes_its_body_check_first() {
    // The person strikes the last plate, whose check is queued: the strike
    // waits for that check, which goes first.
    strikes_come_back_in_order(
        |[first, queued, waited_for]| {
            vec![
                (first, vec![]),
                (queued, vec![]),
                (waited_for, vec![]),
                (waited_for, vec![waited_for]),
            ]
        },
        3,
        |[first, queued, waited_for]| vec![(waited_for, queued), (first, queued)],
    );
}

#[test]
fn a_felt_check_on_its_own_lane_does_not_wait_for_the_check_in_hand() {
    // The first lane's only pool thread is held: the plate struck outside
    // the sub-world stays out; the one struck in it comes back on the
    // lane of felt checks meanwhile.
    let (mut world, [elsewhere, _, felt], ball, release) = three_plates_deferring_with(true);
    for (plate, members) in [(elsewhere, vec![]), (felt, vec![felt])] {
        let strike = [strike_on(&world, plate, ball)];
        let inputs = StepInputs {
            external_contacts: &strike,
            sub_world_members: &members,
        };
        world.step(&inputs, threads(), &mut Counters::default());
    }
    assert_eq!(world.deferred_checks(), 2, "checks out");
    let mut back = Vec::new();
    step_until_back(&mut world, &mut back, |world, _| {
        world.deferred_checks() == 1
    });
    assert_eq!(back, vec![felt], "back while the first lane is held");
    assert!(world.is_checking(elsewhere));
    release.send(()).unwrap();
    step_until_back(&mut world, &mut back, |world, _| {
        world.deferred_checks() == 0
    });
    // Then the held one (and the plates' later bounces, checked in turn).
    assert_eq!(back[..2], [felt, elsewhere], "{back:?}");
}
