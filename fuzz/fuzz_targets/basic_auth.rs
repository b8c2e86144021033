//! Arbitrary `Authorization` bytes through `Basic`.
//!
//! Properties: no panic; the password authenticator is called only for `Basic` headers, with
//! a user name containing no `:`, and `user:password` equals the base64 decoding of the
//! credential (split at the first colon); the answer is ready without an executor beyond one
//! poll.

#![no_main]

use std::future::Future;
use std::pin::pin;
use std::sync::Mutex;
use std::task::{Context as TaskContext, Poll, Waker};

use base64::Engine;
use http::header::AUTHORIZATION;
use http::HeaderValue;
use kube_authn::authenticator::{Context, RequestAuthenticator, Response, SyncPasswordFn};
use kube_authn::request::Basic;
use kube_authn::user::UserInfo;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // A leading 0 byte: raw header; otherwise "Basic " + the bytes (to reach the decoder).
    let value: Vec<u8> = match data.split_first() {
        Some((0, rest)) => rest.to_vec(),
        _ => [b"Basic ".as_slice(), data].concat(),
    };
    let Ok(header) = HeaderValue::from_bytes(&value) else {
        return;
    };
    let (parts, _) = http::Request::get("/")
        .header(AUTHORIZATION, header)
        .body(())
        .unwrap()
        .into_parts();

    let seen = Mutex::new(None::<(String, String)>);
    let passwords = SyncPasswordFn::new(|u: &str, p: &str, _: &Context| {
        assert!(!u.contains(':'), "user split after the first colon");
        *seen.lock().unwrap() = Some((u.to_owned(), p.to_owned()));
        Ok((u == "admin" && p == "pw").then(|| Response::new(UserInfo::new(u).into())))
    });
    let basic = Basic::new(passwords);
    let ctx = Context::default();
    let fut = pin!(basic.authenticate_request(&parts, &ctx));
    let Poll::Ready(result) = fut.poll(&mut TaskContext::from_waker(Waker::noop())) else {
        panic!("a sync password authenticator must finish in one poll");
    };
    let seen = seen.lock().unwrap().clone();
    if let Some((user, password)) = &seen {
        let text = std::str::from_utf8(&value).expect("called only for ASCII headers");
        let encoded = text.trim_matches([' ', '\t']).split_once(' ').unwrap().1;
        let strict = base64::engine::general_purpose::STANDARD.decode(encoded);
        if let Ok(decoded) = strict {
            assert_eq!(decoded, format!("{user}:{password}").as_bytes());
        }
    }
    if let Ok(Some(r)) = &result {
        assert_eq!(r.user.name(), "admin");
        assert_eq!(seen.as_ref().map(|(u, p)| (u.as_str(), p.as_str())), Some(("admin", "pw")));
    }
    // A rejected password gives a fixed text (never the credential).
    if let (Err(e), Some(_)) = (&result, &seen) {
        assert_eq!(e.to_string(), "invalid username/password combination");
    }
});
