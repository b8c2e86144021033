//! Password authenticators, reached through `Authorization: Basic` ([`crate::request::Basic`]).
//!
//! Kubernetes removed basic authentication in 1.19; these reproduce the last behaviour it had
//! (`--basic-auth-file`), with constant-time comparisons.

pub mod file;
#[cfg(feature = "remote")]
pub mod keystone;
