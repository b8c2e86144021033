//! Password authenticators, reached through `Authorization: Basic` ([`crate::request::Basic`]).
//!
//! Kubernetes removed basic authentication in 1.19; these reproduce the last behaviour it had
//! (`--basic-auth-file`). Timing does not reveal the password file's secrets, though nothing
//! here is a constant-time comparison: no raw password is ever compared; a check digests user
//! name and password together under a per-process random key and looks that digest up (see
//! [`file`](mod@file#secrets-and-timing)).
//!
//! ```
//! use kube_authn::authenticator::{Context, RequestAuthenticator};
//! use kube_authn::password::file::PasswordFile;
//! use kube_authn::request::Basic;
//!
//! let passwords = PasswordFile::from_csv(b"s3cret,alice,1000,\"admins,dev\"\n", "inline").unwrap();
//! let basic = Basic::new(passwords);
//! let ask = |credentials: &str| {
//!     let value = format!("Basic {credentials}");
//!     let (req, _) = http::Request::get("/").header("authorization", value).body(()).unwrap().into_parts();
//!     basic.authenticate_request(&req, &Context::default()).into_ready().unwrap()
//! };
//! // alice:s3cret
//! let alice = ask("YWxpY2U6czNjcmV0").unwrap().unwrap().user;
//! assert_eq!(alice.groups().collect::<Vec<_>>(), ["admins", "dev"]);
//! // alice:guess
//! let err = ask("YWxpY2U6Z3Vlc3M=").unwrap_err();
//! assert_eq!(err.to_string(), "invalid username/password combination");
//! ```

pub mod file;
#[cfg(feature = "remote")]
pub mod keystone;
