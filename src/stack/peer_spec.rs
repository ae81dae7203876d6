//! `[output.threedice]` as the stack file writes it (the serde schema);
//! `peer_outputs` checks it against the stack's layers, probes and blocks.

use serde::Deserialize;

/// `[output.threedice]` as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerOutputsSpec {
    /// 3D-ICE's time slot, s: a transient writes `slot` instructions at its
    /// multiples.
    pub slot: Option<f64>,
    #[serde(default)]
    pub files: Vec<PeerFileSpec>,
}

/// One output instruction as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerFileSpec {
    pub kind: PeerKind,
    /// Relative to the run's output folder.
    pub file: String,
    /// The 3D-ICE stack element, as its file headers name it.
    pub element: String,
    /// The cuth layer read (all kinds but `T` and `T3d`).
    pub layer: Option<String>,
    /// The `[[probes]]` entry read (`T`).
    pub probe: Option<String>,
    /// `Tflp`, `Tflpel`.
    pub quantity: Option<Quantity>,
    #[serde(default)]
    pub when: When,
    /// `Tflp` (all of the floorplan's elements, in its order) and `Tflpel`
    /// (one): each element's name and the blocks that make it up.
    #[serde(default)]
    pub elements: Vec<PeerElementSpec>,
}

/// A floorplan element: its name and the blocks that make it (the import
/// writes one, of all its rectangles; statistics are taken over the union
/// of the blocks listed).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PeerElementSpec {
    pub name: String,
    pub blocks: Vec<String>,
}

/// 3D-ICE's output instructions that cuth writes.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
pub enum PeerKind {
    /// A cell's temperature over time.
    T,
    /// Every floorplan element's temperature over time.
    Tflp,
    /// One floorplan element's temperature over time.
    Tflpel,
    /// A layer's temperature map.
    Tmap,
    /// A layer's power map.
    Pmap,
    /// The whole field, legacy VTK.
    T3d,
    /// A cavity's outlet temperature over time (its `layer`).
    Tcoolant,
}

/// What `Tflp` and `Tflpel` report over an element.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Quantity {
    Maximum,
    Minimum,
    Average,
}

/// When an instruction is written: at the end, at every slot's end, or
/// after every step (a steady run writes `final` ones only, as 3D-ICE).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum When {
    #[default]
    Final,
    Slot,
    Step,
}
