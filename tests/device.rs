//! Devices: safety layer, report profiles and codec, HID driver through an
//! in-memory transport, simulated arm, hand scripts.

use nalgebra::{UnitQuaternion, Vector3};
use proptest::prelude::*;
use std::path::Path;
use std::time::{Duration, Instant};
use tessera::device::MemoryDevice;
use tessera::device::SafetyFilter;
use tessera::device::*;
use tessera::device::{sim_arm_spec, ArmModel};
use tessera::device::{HidDriver, HidTiming};

fn profile() -> DeviceProfile {
    DeviceProfile::load(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/devices/tessera-arm.toml"
    )))
    .unwrap()
}

fn impedance_spec() -> DeviceSpec {
    DeviceSpec {
        control: ControlMode::Impedance,
        ..sim_arm_spec()
    }
}

fn force_of(c: &DeviceCommand) -> Vector3<f64> {
    match c {
        DeviceCommand::Wrench { force_n, .. } => *force_n,
        DeviceCommand::Goal { .. } => panic!("expected a wrench"),
    }
}

fn state_with(user_force: f64, speed: f64) -> DeviceState {
    DeviceState {
        user_force_n: Vector3::new(user_force, 0.0, 0.0),
        velocity_m_s: Vector3::new(speed, 0.0, 0.0),
        ..DeviceState::default()
    }
}

fn finite_or_wild() -> impl Strategy<Value = f64> {
    prop_oneof![
        8 => -1e3f64..1e3,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => -1e12f64..1e12,
    ]
}

proptest! {
    #[test]
    fn safety_output_stays_within_spec_slew_and_finite(
        steps in prop::collection::vec(
            (finite_or_wild(), finite_or_wild(), finite_or_wild(), -50.0f64..50.0, 0.0f64..8.0, 0.0f64..0.01),
            1..200,
        )
    ) {
        let spec = impedance_spec();
        let settings = SafetySettings { ramp_s: 0.05, ..SafetySettings::for_spec(&spec) };
        let mut filter = SafetyFilter::new(spec.clone(), settings).unwrap();
        let mut now = 0.0;
        let mut previous = Vector3::zeros();
        for (fx, fy, fz, user, speed, dt) in steps {
            now += dt;
            let out = filter.filter(
                &DeviceCommand::Wrench { force_n: Vector3::new(fx, fy, fz), torque_n_m: Vector3::new(fz, fx, fy) },
                &state_with(user, speed),
                now,
            );
            let DeviceCommand::Wrench { force_n, torque_n_m } = out else { panic!("kind changed") };
            prop_assert!(force_n.iter().chain(torque_n_m.iter()).all(|v| v.is_finite()));
            prop_assert!(force_n.norm() <= spec.max_force_n * (1.0 + 1e-12));
            prop_assert!(torque_n_m.norm() <= spec.max_torque_n_m * (1.0 + 1e-12));
            prop_assert!((force_n - previous).norm() <= settings.force_slew_n_per_s * dt * (1.0 + 1e-9) + 1e-12);
            previous = force_n;
        }
    }

    #[test]
    fn decoding_any_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..130)) {
        let codec = ReportCodec::new(&profile());
        let _ = codec.decode(&bytes);
        let _ = codec.decode_command(&bytes);
    }

    #[test]
    fn garbled_valid_length_reports_decode_or_fail_cleanly(mut bytes in prop::collection::vec(any::<u8>(), 64)) {
        bytes[0] = 1;
        let codec = ReportCodec::new(&profile());
        if let Ok(decoded) = codec.decode(&bytes) {
            prop_assert!(decoded.state.position_m.iter().all(|v| v.is_finite()));
            prop_assert!((decoded.state.orientation.norm() - 1.0).abs() < 1e-9);
        }
    }

    #[test]
    fn state_round_trips_through_reports_within_the_quantum(
        p in prop::array::uniform3(-0.2f64..0.2),
        f in prop::array::uniform3(-300.0f64..300.0),
        seq in any::<u32>(),
        buttons in 0u32..65536,
    ) {
        let codec = ReportCodec::new(&profile());
        let state = DeviceState {
            position_m: Vector3::from(p),
            user_force_n: Vector3::from(f),
            orientation: UnitQuaternion::from_euler_angles(0.3, -0.2, 1.0),
            sequence: seq,
            buttons,
            ..DeviceState::default()
        };
        let mut report = Vec::new();
        codec.encode_state(&state, 0, &mut report);
        prop_assert_eq!(report.len(), 64);
        let back = codec.decode(&report).unwrap().state;
        prop_assert!((back.position_m - state.position_m).amax() <= 0.5e-6 + 1e-12);
        prop_assert!((back.user_force_n - state.user_force_n).amax() <= 0.005 + 1e-9);
        prop_assert_eq!(back.sequence, seq);
        prop_assert_eq!(back.buttons, buttons);
        prop_assert!(back.orientation.angle_to(&state.orientation) < 1e-3);
    }
}

#[test]
fn soft_start_ramps_in_only_once_the_user_lets_go() {
    let spec = impedance_spec();
    let settings = SafetySettings {
        force_slew_n_per_s: 1e9,
        ..SafetySettings::for_spec(&spec)
    };
    let mut filter = SafetyFilter::new(spec, settings).unwrap();
    let push = DeviceCommand::Wrench {
        force_n: Vector3::new(20.0, 0.0, 0.0),
        torque_n_m: Vector3::zeros(),
    };
    // Pushing hard: nothing engages.
    for k in 0..100 {
        let out = filter.filter(&push, &state_with(30.0, 0.0), k as f64 * 1e-3);
        assert_eq!(force_of(&out), Vector3::zeros());
    }
    // Released at t = 0.1 s: half the force half a ramp later, all after it.
    filter.filter(&push, &state_with(0.0, 0.0), 0.1);
    let half = filter.filter(&push, &state_with(0.0, 0.0), 0.6);
    assert!((force_of(&half).x - 10.0).abs() < 1e-9, "{half:?}");
    let full = filter.filter(&push, &state_with(0.0, 0.0), 1.2);
    assert!((force_of(&full).x - 20.0).abs() < 1e-9);
}

#[test]
fn overspeed_and_non_finite_trip_and_latch_until_reset() {
    let spec = impedance_spec();
    let settings = SafetySettings {
        ramp_s: 0.0,
        force_slew_n_per_s: 1e9,
        ..SafetySettings::for_spec(&spec)
    };
    let mut filter = SafetyFilter::new(spec.clone(), settings).unwrap();
    let push = DeviceCommand::Wrench {
        force_n: Vector3::new(5.0, 0.0, 0.0),
        torque_n_m: Vector3::zeros(),
    };
    filter.filter(&push, &state_with(0.0, 0.0), 0.0);
    assert_eq!(
        force_of(&filter.filter(&push, &state_with(0.0, 0.0), 0.001)).x,
        5.0
    );
    let fast = filter.filter(&push, &state_with(0.0, spec.max_velocity_m_s * 1.5), 0.002);
    assert_eq!(force_of(&fast), Vector3::zeros());
    assert_eq!(filter.fault(), Some(TripCause::Overspeed));
    // Slow again, still latched.
    assert_eq!(
        force_of(&filter.filter(&push, &state_with(0.0, 0.0), 0.003)),
        Vector3::zeros()
    );
    filter.reset();
    filter.filter(&push, &state_with(0.0, 0.0), 0.004);
    assert_eq!(
        force_of(&filter.filter(&push, &state_with(0.0, 0.0), 0.005)).x,
        5.0
    );
    let nan = DeviceCommand::Wrench {
        force_n: Vector3::new(f64::NAN, 0.0, 0.0),
        torque_n_m: Vector3::zeros(),
    };
    assert_eq!(
        force_of(&filter.filter(&nan, &state_with(0.0, 0.0), 0.006)),
        Vector3::zeros()
    );
    assert_eq!(filter.fault(), Some(TripCause::NonFinite));
    let mut causes = Vec::new();
    filter.drain_events(|e| causes.push(e.cause));
    assert_eq!(causes, vec![TripCause::Overspeed, TripCause::NonFinite]);
}

#[test]
fn watchdog_zeroes_the_device_when_commands_stop() {
    let spec = impedance_spec();
    let hand = HandScript::parse("start_m = [0.0, 0.0, 0.0]", "inline").unwrap();
    let arm = SimulatedArm::new(spec.clone(), ArmModel::default(), hand.trajectory());
    let mut safe = Safety::new(arm, SafetySettings::for_spec(&spec)).unwrap();
    safe.read(0.0).unwrap();
    safe.command(&DeviceCommand::zero_wrench(), 0.0).unwrap();
    safe.read(0.005).unwrap();
    safe.read(0.1).unwrap(); // 100 ms without a command
    let mut causes = Vec::new();
    safe.drain_events(|e| causes.push(e.cause));
    assert_eq!(causes, vec![TripCause::Watchdog]);
}

#[test]
fn golden_report_bytes_of_the_open_arm_protocol() {
    let codec = ReportCodec::new(&profile());
    let state = DeviceState {
        position_m: Vector3::new(0.001, -0.002, 0.1),
        user_force_n: Vector3::new(1.5, 0.0, -2.25),
        sequence: 0x01020304,
        device_time_us: 1000,
        buttons: 0b101,
        ..DeviceState::default()
    };
    let mut report = Vec::new();
    codec.encode_state(&state, 7, &mut report);
    assert_eq!(report[0], 1);
    assert_eq!(&report[1..5], &[4, 3, 2, 1]);
    assert_eq!(&report[5..9], &1000u32.to_le_bytes());
    assert_eq!(&report[9..13], &1000i32.to_le_bytes());
    assert_eq!(&report[13..17], &(-2000i32).to_le_bytes());
    assert_eq!(&report[17..21], &100_000i32.to_le_bytes());
    assert_eq!(&report[21..23], &32767i16.to_le_bytes());
    assert_eq!(&report[41..43], &150i16.to_le_bytes());
    assert_eq!(&report[45..47], &(-225i16).to_le_bytes());
    assert_eq!(&report[53..55], &5u16.to_le_bytes());
    assert_eq!(&report[55..57], &7u16.to_le_bytes());
    let decoded = codec.decode(&report).unwrap();
    assert_eq!(decoded.status, 7);
    assert_eq!(decoded.state.device_time_us, 1000);

    let goal = DeviceCommand::Goal {
        position_m: Vector3::new(0.01, 0.0, -0.05),
        orientation: UnitQuaternion::identity(),
        velocity_m_s: Vector3::new(0.0, 0.25, 0.0),
        angular_velocity_rad_s: Vector3::zeros(),
    };
    codec.encode(&goal, true, 9, &mut report);
    assert_eq!(report[0], 2);
    assert_eq!(&report[1..5], &9u32.to_le_bytes());
    assert_eq!(report[5], 1);
    assert_eq!(&report[6..10], &10_000i32.to_le_bytes());
    assert_eq!(&report[14..18], &(-50_000i32).to_le_bytes());
    assert_eq!(&report[30..34], &250_000i32.to_le_bytes());
    let (back, enable, seq) = codec.decode_command(&report).unwrap();
    assert!(enable);
    assert_eq!(seq, 9);
    let DeviceCommand::Goal {
        position_m,
        velocity_m_s,
        ..
    } = back
    else {
        panic!("a goal came back as {back:?}")
    };
    assert!((position_m - Vector3::new(0.01, 0.0, -0.05)).amax() < 1e-12);
    assert!((velocity_m_s - Vector3::new(0.0, 0.25, 0.0)).amax() < 1e-12);
}

#[test]
fn short_oversized_and_foreign_reports_are_errors() {
    let codec = ReportCodec::new(&profile());
    let mut report = Vec::new();
    codec.encode_state(&DeviceState::default(), 0, &mut report);
    assert_eq!(
        codec.decode(&report[..10]).unwrap_err(),
        CodecError::Length {
            got: 10,
            expected: 64
        }
    );
    let mut long = report.clone();
    long.push(0);
    assert!(matches!(
        codec.decode(&long),
        Err(CodecError::Length { got: 65, .. })
    ));
    report[0] = 9;
    assert_eq!(
        codec.decode(&report).unwrap_err(),
        CodecError::ReportId {
            got: 9,
            expected: 1
        }
    );
}

#[test]
fn profile_errors_name_the_file_and_field() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/devices/tessera-arm.toml"
    ))
    .unwrap();
    let overlapping = text.replacen("offset = 13,", "offset = 11,", 1);
    let e = DeviceProfile::parse(&overlapping, Path::new("arm.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("arm.toml") && e.contains("input field 3") && e.contains("overlap"),
        "{e}"
    );
    let outside = text.replacen("offset = 61,", "offset = 63,", 1);
    let e = DeviceProfile::parse(&outside, Path::new("arm.toml"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("outside"), "{e}");
    let unknown = text.replacen("quantity = \"buttons\"", "quantity = \"knob\"", 1);
    let e = DeviceProfile::parse(&unknown, Path::new("arm.toml"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("arm.toml") && e.contains("knob"), "{e}");
    let e = DeviceProfile::load(Path::new("/nonexistent/x.toml"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("/nonexistent/x.toml"), "{e}");
}

fn wait_for(mut condition: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

fn device_report(codec: &ReportCodec, sequence: u32, x: f64) -> Vec<u8> {
    let mut report = Vec::new();
    let state = DeviceState {
        position_m: Vector3::new(x, 0.0, 0.0),
        sequence,
        ..DeviceState::default()
    };
    codec.encode_state(&state, 0, &mut report);
    report
}

/// A driver on an in-memory device; reports stay fresh for 5 s so slow
/// test machines do not see timeouts.
fn memory_driver() -> (ReportCodec, MemoryDevice, HidDriver) {
    let profile = profile();
    let device = MemoryDevice::new();
    let timing = HidTiming {
        stale_after: Duration::from_secs(5),
        ..HidTiming::default()
    };
    let driver = HidDriver::spawn(&profile, device.connector(), timing).unwrap();
    (ReportCodec::new(&profile), device, driver)
}

#[test]
fn hid_driver_keeps_the_newest_report_and_counts_gaps_and_stale_ones() {
    let (codec, device, mut driver) = memory_driver();
    assert!(wait_for(|| driver.is_connected()));
    for (seq, x) in [(1, 0.01), (2, 0.02), (5, 0.05)] {
        device.send(&device_report(&codec, seq, x));
    }
    assert!(wait_for(|| driver.read(0.0).is_ok_and(|s| s.sequence == 5)));
    let state = driver.read(0.0).unwrap();
    assert!((state.position_m.x - 0.05).abs() < 1e-9);
    let counters = driver.counters();
    assert_eq!(counters.lost, 2, "{counters:?}");
    assert!(counters.reports >= 3);

    driver.command(&DeviceCommand::zero_wrench(), 0.0).unwrap();
    assert!(wait_for(|| !device.received().is_empty()));

    device.send(&device_report(&codec, 6, 0.06)[..20]);
    assert!(wait_for(|| matches!(
        driver.read(0.0),
        Err(DeviceError::Protocol(_))
    )));
}

#[test]
fn hid_driver_reports_disconnects_and_reopens() {
    let (codec, device, mut driver) = memory_driver();
    device.send(&device_report(&codec, 1, 0.01));
    assert!(wait_for(|| driver.read(0.0).is_ok()));
    device.set_connected(false);
    assert!(wait_for(|| matches!(
        driver.read(0.0),
        Err(DeviceError::Disconnected)
    )));
    device.set_connected(true);
    assert!(wait_for(|| driver.is_connected()));
    device.send(&device_report(&codec, 2, 0.02));
    assert!(wait_for(|| driver.read(0.0).is_ok_and(|s| s.sequence == 2)));
    assert_eq!(device.opens(), 2);
}

#[test]
fn a_stalled_write_is_reported_not_waited_for() {
    let profile = profile();
    let device = MemoryDevice::new();
    let mut driver = HidDriver::spawn(&profile, device.connector(), HidTiming::default()).unwrap();
    assert!(wait_for(|| driver.is_connected()));
    device.stall_writes(Duration::from_millis(300));
    driver.command(&DeviceCommand::zero_wrench(), 0.0).unwrap();
    assert!(wait_for(|| matches!(
        driver.command(&DeviceCommand::zero_wrench(), 0.0),
        Err(DeviceError::StalledWrite(_))
    )));
    device.stall_writes(Duration::ZERO);
    // Counters are taken at each read.
    assert!(wait_for(|| {
        let _ = driver.read(0.0);
        driver.counters().stalled_writes >= 1
    }));
}

#[test]
fn simulated_arm_follows_its_goal_and_reports_the_hand_force() {
    let script = HandScript::parse(
        "start_m = [0.0, 0.0, 0.05]\n[[steps]]\ntype = \"hold\"\nseconds = 2.0\n",
        "inline",
    )
    .unwrap();
    let mut arm = SimulatedArm::new(sim_arm_spec(), ArmModel::default(), script.trajectory());
    let goal = DeviceCommand::Goal {
        position_m: Vector3::new(0.0, 0.0, 0.03),
        orientation: UnitQuaternion::identity(),
        velocity_m_s: Vector3::zeros(),
        angular_velocity_rad_s: Vector3::zeros(),
    };
    let mut state = arm.read(0.0).unwrap();
    for k in 1..=1000 {
        arm.command(&goal, k as f64 * 1e-3).unwrap();
        state = arm.read(k as f64 * 1e-3).unwrap();
    }
    // At rest the controller balances the hand: k_c (goal − p) = −k_h (hand − p).
    let m = ArmModel::default();
    let expected = (m.controller_stiffness_n_m * 0.03 + m.hand_stiffness_n_m * 0.05)
        / (m.controller_stiffness_n_m + m.hand_stiffness_n_m);
    assert!(
        (state.position_m.z - expected).abs() < 1e-4,
        "{}",
        state.position_m.z
    );
    let hand_force = m.hand_stiffness_n_m * (0.05 - state.position_m.z);
    assert!(
        (state.user_force_n.z - hand_force).abs() < 1e-2,
        "{:?}",
        state.user_force_n
    );
    // Never outside the workspace.
    let far = DeviceCommand::Goal {
        position_m: Vector3::new(5.0, 0.0, 0.0),
        orientation: UnitQuaternion::identity(),
        velocity_m_s: Vector3::zeros(),
        angular_velocity_rad_s: Vector3::zeros(),
    };
    for k in 1001..=2000 {
        arm.command(&far, k as f64 * 1e-3).unwrap();
        state = arm.read(k as f64 * 1e-3).unwrap();
        assert!(state.position_m.x <= 0.2 + 1e-12);
    }
}

#[test]
fn hand_strikes_get_faster_and_scripts_report_bad_steps() {
    let script = HandScript::parse(
        r#"
start_m = [0.0, 0.0, 0.05]
[[steps]]
type = "strikes"
target_m = [0.0, 0.0, 0.0]
lift_m = 0.04
from_speed_m_s = 0.5
to_speed_m_s = 2.0
count = 4
"#,
        "inline",
    )
    .unwrap();
    let path = script.trajectory();
    let mut peak_speeds = Vec::new();
    let mut peak: f64 = 0.0;
    let mut t = 0.0;
    let mut was_down = false;
    while t < path.duration_s() {
        let (_, v) = path.at(t);
        let down = v.z < -0.3;
        if down {
            peak = peak.max(-v.z);
        } else if was_down {
            peak_speeds.push(peak);
            peak = 0.0;
        }
        was_down = down;
        t += 1e-3;
    }
    assert_eq!(peak_speeds.len(), 4, "{peak_speeds:?}");
    assert!(peak_speeds.windows(2).all(|w| w[1] > w[0]));
    assert!((peak_speeds[3] - 2.0).abs() < 1e-9);
    let e = HandScript::parse(
        "start_m = [0.0, 0.0, 0.0]\n[[steps]]\ntype = \"strike\"\ntarget_m = [0.0, 0.0, 0.0]\nlift_m = -1.0\nspeed_m_s = 1.0\n",
        "hand.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("hand.toml") && e.contains("steps[0]"), "{e}");
}

#[test]
fn releasing_a_hid_device_writes_a_disabled_report() {
    let (codec, device, mut driver) = memory_driver();
    assert!(wait_for(|| driver.is_connected()));
    let push = DeviceCommand::Wrench {
        force_n: Vector3::new(3.0, 0.0, 0.0),
        torque_n_m: Vector3::zeros(),
    };
    driver.command(&push, 0.0).unwrap();
    let mut written = Vec::new();
    assert!(wait_for(|| {
        written.extend(device.received());
        !written.is_empty()
    }));
    let (_, enabled, _) = codec.decode_command(&written[0]).unwrap();
    assert!(enabled, "commands enable the actuators");
    driver.release(0.0).unwrap();
    written.extend(device.received());
    let last = written.last().cloned().unwrap();
    let (_, enabled, _) = codec.decode_command(&last).unwrap();
    assert!(!enabled, "the last report disables the actuators");
}

#[test]
fn a_hid_device_that_never_opens_says_why() {
    let device = MemoryDevice::new();
    device.set_connected(false);
    let driver = HidDriver::spawn(&profile(), device.connector(), HidTiming::default()).unwrap();
    let why = driver
        .wait_connected(Duration::from_millis(100))
        .unwrap_err();
    assert!(!why.to_string().is_empty());
    device.set_connected(true);
    assert!(driver.wait_connected(Duration::from_secs(5)).is_ok());
}

#[test]
fn safety_refuses_specs_and_settings_that_would_disable_a_limit() {
    let bad_specs = [
        DeviceSpec {
            workspace: Workspace::Sphere { radius_m: -1.0 },
            ..sim_arm_spec()
        },
        DeviceSpec {
            workspace: Workspace::Box {
                half_extents_m: [f64::NAN, 0.2, 0.2],
            },
            ..sim_arm_spec()
        },
        DeviceSpec {
            max_force_n: f64::INFINITY,
            ..sim_arm_spec()
        },
        DeviceSpec {
            max_velocity_m_s: 0.0,
            ..sim_arm_spec()
        },
    ];
    for spec in bad_specs {
        let settings = SafetySettings::for_spec(&sim_arm_spec());
        assert!(SafetyFilter::new(spec, settings).is_err());
    }
    let spec = sim_arm_spec();
    for settings in [
        SafetySettings {
            watchdog_s: f64::INFINITY,
            ..SafetySettings::for_spec(&spec)
        },
        SafetySettings {
            force_slew_n_per_s: -1.0,
            ..SafetySettings::for_spec(&spec)
        },
        SafetySettings {
            deadman_button: Some(40),
            ..SafetySettings::for_spec(&spec)
        },
    ] {
        assert!(SafetyFilter::new(spec.clone(), settings).is_err());
    }
}

fn any_limit() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => 1e-3f64..1e3,
        1 => -1e3f64..0.0,
        1 => Just(0.0),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
    ]
}

proptest! {
    /// For any profile the safety layer accepts and any input, what it
    /// sends stays within the profile's spec; profiles it refuses never
    /// reach a device.
    #[test]
    fn any_accepted_spec_bounds_every_output(
        limits in prop::array::uniform9(any_limit()),
        sphere in any::<bool>(),
        impedance in any::<bool>(),
        steps in prop::collection::vec(
            (prop::array::uniform3(finite_or_wild()), prop::array::uniform3(finite_or_wild()), 0.0f64..8.0, 0.0f64..0.01),
            1..100,
        ),
    ) {
        let spec = DeviceSpec {
            control: if impedance { ControlMode::Impedance } else { ControlMode::Admittance },
            workspace: if sphere {
                Workspace::Sphere { radius_m: limits[0] }
            } else {
                Workspace::Box { half_extents_m: [limits[0], limits[1], limits[0]] }
            },
            max_force_n: limits[2],
            max_torque_n_m: limits[3],
            max_stiffness_n_m: limits[4],
            max_damping_n_s_m: limits[5],
            max_angular_stiffness_n_m_rad: limits[6],
            max_angular_damping_n_m_s_rad: limits[7],
            max_velocity_m_s: limits[8],
            ..sim_arm_spec()
        };
        let accepted = spec.validate().is_ok();
        let settings = SafetySettings { ramp_s: 0.01, ..SafetySettings::for_spec(&spec) };
        let filter = SafetyFilter::new(spec.clone(), settings);
        prop_assert_eq!(filter.is_ok(), accepted && settings.validate().is_ok());
        let Ok(mut filter) = filter else { return Ok(()) };
        let mut now = 0.0;
        for (a, b, speed, dt) in steps {
            now += dt;
            let (a, b) = (Vector3::from(a), Vector3::from(b));
            let requested = if impedance {
                DeviceCommand::Wrench { force_n: a, torque_n_m: b }
            } else {
                DeviceCommand::Goal {
                    position_m: a,
                    orientation: UnitQuaternion::identity(),
                    velocity_m_s: b,
                    angular_velocity_rad_s: Vector3::zeros(),
                }
            };
            let state = DeviceState {
                position_m: b * 1e-3,
                velocity_m_s: Vector3::new(speed, 0.0, 0.0),
                ..DeviceState::default()
            };
            match filter.filter(&requested, &state, now) {
                DeviceCommand::Wrench { force_n, torque_n_m } => {
                    prop_assert!(force_n.iter().chain(torque_n_m.iter()).all(|v| v.is_finite()));
                    prop_assert!(force_n.norm() <= spec.max_force_n * (1.0 + 1e-12));
                    prop_assert!(torque_n_m.norm() <= spec.max_torque_n_m * (1.0 + 1e-12));
                }
                DeviceCommand::Goal { position_m, velocity_m_s, .. } => {
                    prop_assert!(position_m.iter().chain(velocity_m_s.iter()).all(|v| v.is_finite()));
                    prop_assert!(velocity_m_s.norm() <= spec.max_velocity_m_s * (1.0 + 1e-12));
                    let inside = spec.workspace.clamp(&position_m);
                    prop_assert!((inside - position_m).norm() <= 1e-12);
                }
            }
        }
    }
}
