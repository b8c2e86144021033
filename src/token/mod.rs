//! Token authenticators: the things a bearer token (from `Authorization: Bearer` or the
//! WebSocket subprotocol, see [`crate::request`]) is checked against.
//!
//! Each authenticator implements [`TokenAuthenticator`](crate::TokenAuthenticator) and is combined
//! with others through [`crate::chain::union::TokenUnion`], in kube-apiserver's order (token file,
//! service-account tokens, JWT/OIDC, webhook; bootstrap tokens are not implemented), optionally
//! behind a cache.

pub mod anytoken;
pub mod cache;
pub mod file;
pub mod oidc;
pub mod service_account;
#[cfg(feature = "remote")]
pub mod service_account_rest;
#[cfg(feature = "remote")]
pub mod webhook;
