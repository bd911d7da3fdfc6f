//! Device profiles (`devices/*.toml`): what the device is (USB ids, its
//! [`DeviceSpec`]) and the byte layout of its HID reports, field by field.

use super::DeviceSpec;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A value's encoding in a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 16-bit integer, little-endian.
    I16le,
    /// Signed 16-bit integer, big-endian.
    I16be,
    /// Unsigned 16-bit integer, little-endian.
    U16le,
    /// Unsigned 16-bit integer, big-endian.
    U16be,
    /// Signed 32-bit integer, little-endian.
    I32le,
    /// Signed 32-bit integer, big-endian.
    I32be,
    /// Unsigned 32-bit integer, little-endian.
    U32le,
    /// Unsigned 32-bit integer, big-endian.
    U32be,
    /// IEEE 754 single, little-endian.
    F32le,
    /// IEEE 754 single, big-endian.
    F32be,
}

impl FieldType {
    /// Bytes the encoding takes.
    pub fn size(self) -> usize {
        match self {
            FieldType::U8 => 1,
            FieldType::I16le | FieldType::I16be | FieldType::U16le | FieldType::U16be => 2,
            _ => 4,
        }
    }
}

/// What an input field carries. Vectors are per axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputQuantity {
    /// Handle position along x (m).
    PositionX,
    /// Handle position along y (m).
    PositionY,
    /// Handle position along z (m).
    PositionZ,
    /// Handle orientation quaternion, w component.
    OrientationW,
    /// Handle orientation quaternion, x component.
    OrientationX,
    /// Handle orientation quaternion, y component.
    OrientationY,
    /// Handle orientation quaternion, z component.
    OrientationZ,
    /// Handle velocity along x (m/s).
    VelocityX,
    /// Handle velocity along y (m/s).
    VelocityY,
    /// Handle velocity along z (m/s).
    VelocityZ,
    /// Handle angular velocity about x (rad/s).
    AngularVelocityX,
    /// Handle angular velocity about y (rad/s).
    AngularVelocityY,
    /// Handle angular velocity about z (rad/s).
    AngularVelocityZ,
    /// The user's force on the handle along x (N).
    ForceX,
    /// The user's force on the handle along y (N).
    ForceY,
    /// The user's force on the handle along z (N).
    ForceZ,
    /// The user's torque on the handle about x (N·m).
    TorqueX,
    /// The user's torque on the handle about y (N·m).
    TorqueY,
    /// The user's torque on the handle about z (N·m).
    TorqueZ,
    /// Button states, one bit per button.
    Buttons,
    /// Non-zero: the device reports a fault with this code.
    Status,
    /// Report counter, to detect lost reports.
    Sequence,
    /// Device clock, in units of `scale` seconds.
    Timestamp,
}

/// What an output field carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputQuantity {
    /// Goal position along x (m).
    GoalPositionX,
    /// Goal position along y (m).
    GoalPositionY,
    /// Goal position along z (m).
    GoalPositionZ,
    /// Goal orientation quaternion, w component.
    GoalOrientationW,
    /// Goal orientation quaternion, x component.
    GoalOrientationX,
    /// Goal orientation quaternion, y component.
    GoalOrientationY,
    /// Goal orientation quaternion, z component.
    GoalOrientationZ,
    /// Goal velocity along x (m/s).
    GoalVelocityX,
    /// Goal velocity along y (m/s).
    GoalVelocityY,
    /// Goal velocity along z (m/s).
    GoalVelocityZ,
    /// Goal angular velocity about x (rad/s).
    GoalAngularVelocityX,
    /// Goal angular velocity about y (rad/s).
    GoalAngularVelocityY,
    /// Goal angular velocity about z (rad/s).
    GoalAngularVelocityZ,
    /// Force to render along x (N).
    ForceX,
    /// Force to render along y (N).
    ForceY,
    /// Force to render along z (N).
    ForceZ,
    /// Torque to render about x (N·m).
    TorqueX,
    /// Torque to render about y (N·m).
    TorqueY,
    /// Torque to render about z (N·m).
    TorqueZ,
    /// 1 while the actuators may be powered.
    Enable,
    /// Report counter the device may check.
    Sequence,
}

/// One field of a report: `value = raw · scale` (in `unit`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field<Q> {
    /// What the field carries.
    pub quantity: Q,
    /// Byte offset in the report, the report id byte included.
    pub offset: usize,
    /// The encoding (`type` in the file).
    #[serde(rename = "type")]
    pub kind: FieldType,
    /// SI value per raw unit.
    #[serde(default = "one")]
    pub scale: f64,
    /// For people reading the profile; values are SI after `scale`.
    #[serde(default)]
    pub unit: String,
}

fn one() -> f64 {
    1.0
}

/// The layout of one report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportLayout<Q> {
    /// First byte of every report (HID report id).
    pub report_id: u8,
    /// Bytes, the report id included.
    pub length: usize,
    /// The fields, in any order.
    pub fields: Vec<Field<Q>>,
}

/// A device profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceProfile {
    /// USB vendor id.
    pub vendor_id: u16,
    /// USB product id.
    pub product_id: u16,
    /// HID usage page of the interface (vendor-defined: 0xFF00–0xFFFF).
    #[serde(default)]
    pub usage_page: Option<u16>,
    /// What the device is and its limits.
    pub spec: DeviceSpec,
    /// Safety options of this device (the limits themselves are `spec`).
    #[serde(default)]
    pub safety: ProfileSafety,
    /// The input report's layout (device to host).
    pub input: ReportLayout<InputQuantity>,
    /// The output report's layout (host to device).
    pub output: ReportLayout<OutputQuantity>,
}

/// The `[safety]` table of a profile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileSafety {
    /// Forces are output only while this button (0–31) is held.
    #[serde(default)]
    pub deadman_button: Option<u8>,
}

/// A profile that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file cannot be read.
    #[error("device profile {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// TOML syntax, unknown or missing keys.
    #[error("device profile {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A report field is out of the report or has the wrong type.
    #[error("device profile {path}: {report} field {index} ({quantity}): {message}")]
    Field {
        /// The file.
        path: PathBuf,
        /// `input` or `output`.
        report: &'static str,
        /// The field's index in the report's list.
        index: usize,
        /// Its quantity.
        quantity: String,
        /// What is wrong.
        message: String,
    },
    /// The spec or the layouts as a whole are invalid.
    #[error("device profile {path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl DeviceProfile {
    /// Reads and validates a profile file.
    pub fn load(path: &Path) -> Result<Self, ProfileError> {
        let text = crate::assets::read_text(path).map_err(|source| ProfileError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses and validates profile text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ProfileError> {
        let profile: DeviceProfile = toml::from_str(text).map_err(|e| ProfileError::Parse {
            path: path.to_owned(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        profile.validate(path)?;
        Ok(profile)
    }

    /// The shipped profiles (`devices/*.toml`), by path.
    pub fn shipped() -> Result<Vec<(PathBuf, Self)>, ProfileError> {
        crate::assets::shipped_names(crate::assets::DEVICES_DIR)
            .into_iter()
            .filter_map(|name| crate::assets::shipped_path(crate::assets::DEVICES_DIR, name))
            .map(|p| Self::load(&p).map(|profile| (p, profile)))
            .collect()
    }

    /// The profiles of a folder (`*.toml`), sorted by file name; the
    /// folder's other files are ignored.
    pub fn load_dir(dir: &Path) -> Result<Vec<(PathBuf, Self)>, ProfileError> {
        let entries = std::fs::read_dir(dir).map_err(|source| ProfileError::Read {
            path: dir.to_owned(),
            source,
        })?;
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        paths.sort();
        paths
            .into_iter()
            .map(|p| Self::load(&p).map(|profile| (p, profile)))
            .collect()
    }

    fn validate(&self, path: &Path) -> Result<(), ProfileError> {
        let invalid = |message: String| ProfileError::Invalid {
            path: path.to_owned(),
            message,
        };
        self.spec.validate().map_err(|e| invalid(e.to_string()))?;
        if let Some(button) = self.safety.deadman_button {
            if button >= 32 {
                return Err(invalid(format!(
                    "safety.deadman_button = {button}: buttons are numbered 0 to 31"
                )));
            }
        }
        validate_layout(&self.input, "input", path)?;
        validate_layout(&self.output, "output", path)?;
        Ok(())
    }
}

fn validate_layout<Q: std::fmt::Debug + PartialEq>(
    layout: &ReportLayout<Q>,
    report: &'static str,
    path: &Path,
) -> Result<(), ProfileError> {
    if !(2..=1024).contains(&layout.length) {
        return Err(ProfileError::Invalid {
            path: path.to_owned(),
            message: format!("{report}.length = {} must be in 2..=1024", layout.length),
        });
    }
    let mut used = vec![false; layout.length];
    used[0] = true;
    for (index, field) in layout.fields.iter().enumerate() {
        let error = |message: String| ProfileError::Field {
            path: path.to_owned(),
            report,
            index,
            quantity: format!("{:?}", field.quantity),
            message,
        };
        if !(field.scale.is_finite() && field.scale != 0.0) {
            return Err(error(format!(
                "scale {} must be finite and non-zero",
                field.scale
            )));
        }
        let end = field.offset.saturating_add(field.kind.size());
        if field.offset == 0 || end > layout.length {
            return Err(error(format!(
                "bytes {}..{end} outside 1..{} (byte 0 is the report id)",
                field.offset, layout.length
            )));
        }
        if used[field.offset..end].iter().any(|&u| u) {
            return Err(error(format!(
                "bytes {}..{end} overlap another field",
                field.offset
            )));
        }
        used[field.offset..end].iter_mut().for_each(|u| *u = true);
        if layout.fields[..index]
            .iter()
            .any(|f| f.quantity == field.quantity)
        {
            return Err(error("appears twice".into()));
        }
    }
    Ok(())
}
