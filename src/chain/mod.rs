//! Combinators that build a chain out of authenticators, and the chain kube-apiserver builds.
//!
//! * [`union`]: first success wins, errors aggregated; and the fail-on-error variant.
//! * [`group`]: the authenticated-group adder and the fixed group adder.
//! * [`anonymous`]: `system:anonymous`, optionally only for some paths.
//! * [`audiences`]: the audience-agnostic wrapper.
//! * [`ChainBuilder`]: assembles these the way kube-apiserver does.
//!
//! The combinators compose by hand too; this is the core of what [`ChainBuilder`] builds for
//! one token authenticator and anonymous access:
//!
//! ```
//! use std::sync::Arc;
//! use aws_lc_rs::constant_time::verify_slices_are_equal;
//! use kube_authn::authenticator::{Context, RequestAuthenticator, Response, SyncTokenFn};
//! use kube_authn::chain::{anonymous::Anonymous, group::AuthenticatedGroupAdder, union::Union};
//! use kube_authn::request::Bearer;
//! use kube_authn::user::UserInfo;
//!
//! let tokens = SyncTokenFn::new(|t: &str, _: &Context| {
//!     // Constant time: `==` stops at the first differing byte.
//!     let known = verify_slices_are_equal(t.as_bytes(), b"s3cret").is_ok();
//!     Ok(known.then(|| Response::new(UserInfo::new("jane").into())))
//! });
//! let chain = Union::fail_on_error(vec![
//!     Arc::new(AuthenticatedGroupAdder::new(Bearer::new(tokens))),
//!     Arc::new(Anonymous::new()),
//! ]);
//! let head = |auth: &str| {
//!     let mut req = http::Request::get("/api");
//!     if !auth.is_empty() {
//!         req = req.header("authorization", auth);
//!     }
//!     req.body(()).unwrap().into_parts().0
//! };
//! let ctx = Context::default();
//! let run = |auth| chain.authenticate_request(&head(auth), &ctx).into_ready().unwrap();
//!
//! let jane = run("Bearer s3cret").unwrap().unwrap().user;
//! assert_eq!(jane.groups().collect::<Vec<_>>(), ["system:authenticated"]);
//! assert_eq!(run("").unwrap().unwrap().user.name(), "system:anonymous");
//! // A bad credential stops the fail-on-error union: a 401, never anonymous.
//! assert_eq!(run("Bearer wrong").unwrap_err().to_string(), "invalid bearer token");
//! ```

pub mod anonymous;
pub mod audiences;
pub mod group;
pub mod union;

mod builder;

pub use builder::{Chain, ChainBuilder};
