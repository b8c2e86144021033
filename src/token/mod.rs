//! Token authenticators: the things a bearer token (from `Authorization: Bearer` or the
//! WebSocket subprotocol, see [`crate::request`]) is checked against.
//!
//! Each authenticator implements [`TokenAuthenticator`](crate::TokenAuthenticator) and is combined
//! with others through [`crate::chain::union::TokenUnion`], in kube-apiserver's order (token file,
//! service-account tokens, JWT/OIDC, webhook; bootstrap tokens are not implemented), optionally
//! behind a cache.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use kube_authn::authenticator::{Context, TokenAuthenticator};
//! use kube_authn::chain::union::TokenUnion;
//! use kube_authn::token::cache::CachedTokenAuthenticator;
//! use kube_authn::token::file::TokenFile;
//!
//! // --token-auth-file rows: token,user,uid,"groups"
//! let file = TokenFile::from_csv(b"t0k3n,alice,1000,\"admins,dev\"\n", "tokens.csv").unwrap();
//! let tokens = TokenUnion::new(vec![Arc::new(file)]);
//! // kube-apiserver caches the whole token chain's successes for 10 s.
//! let cached = CachedTokenAuthenticator::builder(tokens)
//!     .success_ttl(Duration::from_secs(10))
//!     .build();
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let ctx = Context::default();
//! let alice = cached.authenticate_token("t0k3n", &ctx).await.unwrap().unwrap().user;
//! assert_eq!((alice.name(), alice.uid()), ("alice", "1000"));
//! assert_eq!(alice.groups().collect::<Vec<_>>(), ["admins", "dev"]);
//! assert!(cached.authenticate_token("unknown", &ctx).await.unwrap().is_none());
//! # });
//! ```

pub mod anytoken;
pub mod cache;
pub mod file;
pub mod oidc;
pub mod service_account;
#[cfg(feature = "remote")]
pub mod service_account_rest;
#[cfg(feature = "remote")]
pub mod webhook;
