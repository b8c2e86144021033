//! Combinators that build a chain out of authenticators, and the chain kube-apiserver builds.
//!
//! * [`union`]: first success wins, errors aggregated; and the fail-on-error variant.
//! * [`group`]: the authenticated-group adder and the fixed group adder.
//! * [`anonymous`]: `system:anonymous`, optionally only for some paths.
//! * [`audiences`]: the audience-agnostic wrapper.
//! * [`ChainBuilder`]: assembles these the way kube-apiserver does.

pub mod anonymous;
pub mod audiences;
pub mod group;
pub mod union;

mod builder;

pub use builder::{Chain, ChainBuilder};
