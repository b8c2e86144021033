#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs, rust_2018_idioms, unreachable_pub)]
#![cfg_attr(docsrs, feature(doc_auto_cfg))]

pub mod api;
pub mod authenticator;
pub mod chain;
pub mod error;
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
