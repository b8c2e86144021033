//! Arbitrary `Sec-WebSocket-Protocol` header lines through `WebSocketProtocol`, then
//! `remove_token_protocol`.
//!
//! Properties: no panic; the token authenticator sees only non-empty tokens of at most
//! `MAX_TOKEN_LEN` bytes and at most once; after removal no protocol entry is a bearer token.

#![no_main]

use std::future::Future;
use std::pin::pin;
use std::sync::Mutex;
use std::task::{Context as TaskContext, Poll, Waker};

use http::header::{CONNECTION, SEC_WEBSOCKET_PROTOCOL, UPGRADE};
use http::HeaderValue;
use kube_authn::authenticator::{Context, RequestAuthenticator, Response, SyncTokenFn};
use kube_authn::request::{remove_token_protocol, WebSocketProtocol, MAX_TOKEN_LEN, PROTOCOL_PREFIX};
use kube_authn::user::UserInfo;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Header lines separated by 0xFF; a leading 0 byte drops the upgrade headers.
    let (upgrade, data) = match data.split_first() {
        Some((0, rest)) => (false, rest),
        _ => (true, data),
    };
    let mut req = http::Request::get("/");
    if upgrade {
        req = req.header(CONNECTION, "Upgrade").header(UPGRADE, "websocket");
    }
    for line in data.split(|b| *b == 0xFF).take(8) {
        match HeaderValue::from_bytes(line) {
            Ok(v) => req = req.header(SEC_WEBSOCKET_PROTOCOL, v),
            Err(_) => return,
        }
    }
    let (mut parts, _) = req.body(()).unwrap().into_parts();

    let calls = Mutex::new(0usize);
    let tokens = SyncTokenFn::new(|t: &str, _: &Context| {
        assert!(!t.is_empty());
        assert!(t.len() <= MAX_TOKEN_LEN);
        *calls.lock().unwrap() += 1;
        Ok((t == "good").then(|| Response::new(UserInfo::new("u").into())))
    });
    let ws = WebSocketProtocol::new(tokens);
    let ctx = Context::default();
    let result = {
        let fut = pin!(ws.authenticate_request(&parts, &ctx));
        let Poll::Ready(result) = fut.poll(&mut TaskContext::from_waker(Waker::noop())) else {
            panic!("a sync token authenticator must finish in one poll");
        };
        result.map(|r| r.is_some()).map_err(|_| ())
    };
    let calls = *calls.lock().unwrap();
    assert!(calls <= 1);
    if !upgrade {
        assert_eq!(result, Ok(false));
        assert_eq!(calls, 0);
    }
    if result == Ok(true) {
        assert_eq!(calls, 1);
    }

    remove_token_protocol(&mut parts.headers);
    for v in parts.headers.get_all(SEC_WEBSOCKET_PROTOCOL) {
        if let Ok(text) = v.to_str() {
            for p in text.split(',') {
                assert!(
                    !p.trim_matches(|c: char| c.is_ascii_whitespace()).starts_with(PROTOCOL_PREFIX),
                    "token protocol left behind"
                );
            }
        }
    }
});
