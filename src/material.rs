//! Constant thermal properties, as a stack file's material table and a
//! floorplan's optional columns both give them. Below the stack and the
//! readers, so that a floorplan unit can carry its material as plain data.

/// No material (`fill = "none"`): k = 0 and c = 0; assembly gives such
/// cells an identity row (contract with the device assembly).
pub const ABSENT: Material = Material {
    k: [0.0; 3],
    heat_capacity: 0.0,
};

/// Thermal properties of a material or of one floorplan block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Material {
    /// W/(m·K) in x, y, z.
    pub k: [f64; 3],
    /// J/(m³·K).
    pub heat_capacity: f64,
}

impl Material {
    /// Whether this is no material ([`ABSENT`]).
    pub fn is_absent(&self) -> bool {
        self.k == [0.0; 3]
    }
}
