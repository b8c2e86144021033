//! Kubernetes request authentication — kube-apiserver's authenticators (k8s.io/apiserver) — as
//! a Rust library and Tower middleware.
//!
//! # The model on one page
//!
//! An authenticator answers one of three things ([`AuthResult`]): **authenticated**
//! (`Ok(Some(response))`), **not mine** (`Ok(None)`: the next authenticator is tried) or
//! **mine and bad** (`Err(error)`). There are three kinds, as in Kubernetes:
//! [`RequestAuthenticator`] (sees the request head: headers, path, TLS peer certificates),
//! [`TokenAuthenticator`] (a bearer token) and [`PasswordAuthenticator`] (Basic credentials).
//! Policy is composition, never flags inside authenticators:
//!
//! * [`chain::union`]: first success wins, errors aggregated (`[a, b]`); or fail on the first error;
//! * [`chain::group`]: add `system:authenticated` (never to anonymous, never mutating);
//! * [`chain::anonymous`]: `system:anonymous`, optionally only on some paths;
//! * [`chain::audiences`]: make an audience-unaware authenticator safe on a server with API
//!   audiences;
//! * [`request`]: take the credential out of `Authorization: Bearer`, the WebSocket subprotocol,
//!   or `Authorization: Basic` — failing closed on malformed headers;
//! * [`chain::ChainBuilder`]: all of the above in kube-apiserver's order.
//!
//! A malformed credential, or one an authenticator refuses, is always an error, so with
//! anonymous enabled it is a 401, never an anonymous request (a well-formed credential of a kind
//! no configured authenticator reads is "not mine", as in Kubernetes). Deliberate differences from kube-apiserver are listed in
//! `docs/compatibility.md`.
//!
//! ```
//! use aws_lc_rs::constant_time::verify_slices_are_equal;
//! use kube_authn::authenticator::{Context, Response, SyncTokenFn};
//! use kube_authn::chain::{anonymous::Anonymous, ChainBuilder};
//! use kube_authn::user::UserInfo;
//! use kube_authn::RequestAuthenticator;
//! use std::sync::Arc;
//!
//! let alice = Arc::new(UserInfo::builder("alice").group("developers").build());
//! let chain = ChainBuilder::new()
//!     .token(SyncTokenFn::new(move |token: &str, _: &Context| {
//!         // Secrets are compared in constant time (`==` stops at the first differing byte).
//!         let known = verify_slices_are_equal(token.as_bytes(), b"s3cr3t").is_ok();
//!         Ok(known.then(|| Response::new(alice.clone())))
//!     }))
//!     .anonymous(Anonymous::new())
//!     .build();
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let (req, _) = http::Request::get("/api")
//!     .header("authorization", "Bearer s3cr3t")
//!     .body(())
//!     .unwrap()
//!     .into_parts();
//! let response = chain.authenticate_request(&req, &Context::default()).await.unwrap().unwrap();
//! assert_eq!(response.user.name(), "alice");
//! assert_eq!(response.user.groups().collect::<Vec<_>>(), ["developers", "system:authenticated"]);
//! # });
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs, rust_2018_idioms, unreachable_pub)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod api;
pub mod authenticator;
pub mod chain;
pub mod config;
mod csv;
mod digest;
pub mod error;
mod go_url;
pub mod jwt;
pub mod metrics;
pub mod middleware;
#[cfg(feature = "remote")]
pub mod outbound;
pub mod password;
pub mod reload;
pub mod request;
pub mod tls;
pub mod token;
pub mod user;
pub mod x509;

pub use authenticator::{
    Audiences, AuthFuture, AuthResult, Context, PasswordAuthenticator, RequestAuthenticator,
    Response, TokenAuthenticator,
};
pub use error::{ConfigError, Error, ErrorKind};

/// The README's Rust quick start, compiled by `cargo test --doc` so that it stays true.
#[cfg(all(doctest, feature = "axum"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
