//! The request- and token-level combinators on their own, each through its public API, around
//! a trivial delegate so the figures are the combinator's own cost: the WebSocket bearer-token
//! subprotocol (`WebSocketProtocol`, its successful path and the non-WebSocket request every
//! chain member sees), the group adders (`AuthenticatedGroupAdder`, `GroupAdder`), the
//! insecure any-token authenticator (`AnyToken`), `Anonymous` (all paths and path
//! conditions), `AudienceAgnostic` (request and token level) and the request-level `Union`
//! (benches/union.rs has the token-level union behind `Bearer`).
//!
//! The delegate is a `SyncTokenFn` (or `SyncRequestFn`) that compares the token with one
//! fixed 43-character token (plain `==`: this is a bench, not a credential store) and answers
//! a stored `Arc<UserInfo>`, as a token file does; the "fresh user" rows build the user per
//! call instead, as a JWT or a certificate does, with the delegate alone as the baseline.
//! Each row's outcome (user name, groups, audiences, "not mine" or the error text) is
//! asserted once before it is timed, so no row can silently time an error path.
//!
//! Run: `cargo bench --bench combinators -- --warm-up-time 1 --measurement-time 3`
//!
//! Counting mode: `COMBINATORS_COUNT=<row id> COMBINATORS_ITERS=<n>` (row ids as criterion
//! prints them, e.g. `websocket/token_subprotocol`) runs one row `n` times and exits, for
//! `valgrind --tool=callgrind`; with `COMBINATORS_ONCPU=1` it prints the on-CPU time per call.

#[path = "count_support/mod.rs"]
#[allow(dead_code)] // `paired_overhead` is for the JWT and OIDC benches
mod count_support;

use std::hint::black_box;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use criterion::{Criterion, criterion_group, criterion_main};
use http::request::Parts;
use kube_authn::authenticator::{
    Audiences, AuthResult, Context, RequestAuthenticator, Response, SyncRequestFn, SyncTokenFn,
    TokenAuthenticator,
};
use kube_authn::chain::anonymous::Anonymous;
use kube_authn::chain::audiences::AudienceAgnostic;
use kube_authn::chain::group::{AuthenticatedGroupAdder, GroupAdder};
use kube_authn::chain::union::Union;
use kube_authn::error::Error;
use kube_authn::request::{Bearer, PROTOCOL_PREFIX, WebSocketProtocol};
use kube_authn::token::anytoken::AnyToken;
use kube_authn::user::UserInfo;

/// 43 characters, like base64url of 32 random bytes.
const TOKEN: &str = "q8Jz3vW0mYc1Rr7TtX5bK2nLp9sHd4fGe6aUiOwEy0M";

/// What a row must give, checked once before timing.
#[derive(Clone, Copy, Debug)]
enum Want {
    /// Authenticated as this user name with exactly these groups and audiences.
    User(
        &'static str,
        &'static [&'static str],
        &'static [&'static str],
    ),
    /// "Not mine".
    NotMine,
    /// This error text.
    Err(&'static str),
}

fn check(id: &str, got: AuthResult, want: Want) {
    match (want, got) {
        (Want::User(name, groups, auds), Ok(Some(r))) => {
            assert_eq!(r.user.name(), name, "{id}: user name");
            assert_eq!(r.user.groups().collect::<Vec<_>>(), groups, "{id}: groups");
            assert_eq!(
                r.audiences.iter().collect::<Vec<_>>(),
                auds,
                "{id}: audiences"
            );
        }
        (Want::NotMine, Ok(None)) => {}
        (Want::Err(text), Err(e)) => assert_eq!(e.to_string(), text, "{id}: error"),
        (want, got) => panic!("{id}: want {want:?}, got {got:?}"),
    }
}

/// Runs rows: asserts each row's outcome, then times it with criterion, or (counting mode)
/// runs the one row named by `COMBINATORS_COUNT` and exits.
struct Rows<'c> {
    c: &'c mut Criterion,
    count: Option<(String, usize)>,
}

impl Rows<'_> {
    fn row(&mut self, id: &str, want: Want, f: impl Fn() -> AuthResult) {
        check(id, f(), want);
        match &self.count {
            Some((wanted, iters)) if wanted == id => {
                count_support::run_and_exit("COMBINATORS", id, *iters, &|| {
                    black_box(f().is_ok());
                })
            }
            Some(_) => {}
            None => {
                self.c.bench_function(id, |b| b.iter(|| black_box(f())));
            }
        }
    }
}

fn request(headers: &[(&str, &str)], path: &str) -> Parts {
    let mut b = http::Request::get(path);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(()).unwrap().into_parts().0
}

/// A sync request answer as the future would give it (every combinator here is synchronous
/// around a synchronous delegate, so the future must be ready: no allocation, no runtime).
fn ready_req(a: &impl RequestAuthenticator, req: &Parts, ctx: &Context) -> AuthResult {
    a.authenticate_request(black_box(req), ctx)
        .into_ready()
        .expect("a synchronous chain answers at once")
}

fn ready_token(a: &impl TokenAuthenticator, token: &str, ctx: &Context) -> AuthResult {
    a.authenticate_token(black_box(token), ctx)
        .into_ready()
        .expect("a synchronous chain answers at once")
}

/// The delegate: [`TOKEN`] is `jane` in `dev`, the same stored `Arc` every time.
fn stored_tokens() -> SyncTokenFn<impl Fn(&str, &Context) -> AuthResult + Send + Sync> {
    let jane = Arc::new(UserInfo::builder("jane").group("dev").build());
    SyncTokenFn::new(move |t: &str, _: &Context| {
        Ok((t == TOKEN).then(|| Response::new(jane.clone())))
    })
}

/// The delegate that builds the user per call (as a JWT or certificate authenticator does).
fn fresh_tokens() -> SyncTokenFn<impl Fn(&str, &Context) -> AuthResult + Send + Sync> {
    SyncTokenFn::new(|t: &str, _: &Context| {
        Ok((t == TOKEN)
            .then(|| Response::new(Arc::new(UserInfo::builder("jane").group("dev").build()))))
    })
}

fn websocket(rows: &mut Rows<'_>) {
    let ctx = Context::default();
    let ws = WebSocketProtocol::new(stored_tokens());
    let bearer = Bearer::new(stored_tokens());
    let protocol = format!(
        "{PROTOCOL_PREFIX}{}, v4.channel.k8s.io",
        URL_SAFE_NO_PAD.encode(TOKEN)
    );
    let upgrade = [("connection", "Upgrade"), ("upgrade", "websocket")];
    let with = |protocol: &str| {
        let mut h = upgrade.to_vec();
        h.push(("sec-websocket-protocol", protocol));
        request(&h, "/api/v1/namespaces/default/pods/p/exec")
    };
    let ok = with(&protocol);
    let unknown = with(&format!(
        "{PROTOCOL_PREFIX}{}, v4.channel.k8s.io",
        URL_SAFE_NO_PAD.encode("not-a-known-token-000000000000000000000000")
    ));
    let plain = request(&[("authorization", &format!("Bearer {TOKEN}"))], "/api");
    let jane = Want::User("jane", &["dev"], &[]);
    rows.row("websocket/token_subprotocol", jane, || {
        ready_req(&ws, &ok, &ctx)
    });
    // Same delegate, the token in `Authorization` instead: what the subprotocol adds (the
    // upgrade check, the protocol list walk, base64url decoding into an owned token).
    rows.row("websocket/bearer_same_token_for_comparison", jane, || {
        ready_req(&bearer, &plain, &ctx)
    });
    rows.row(
        "websocket/unknown_token",
        Want::Err("invalid bearer token"),
        || ready_req(&ws, &unknown, &ctx),
    );
    // Every non-WebSocket request pays this in a chain that has the WebSocket authenticator.
    rows.row("websocket/not_websocket_request", Want::NotMine, || {
        ready_req(&ws, &plain, &ctx)
    });
}

fn group_adders(rows: &mut Rows<'_>) {
    let ctx = Context::default();
    let inner = stored_tokens();
    let authed = AuthenticatedGroupAdder::new(stored_tokens());
    let fresh_inner = fresh_tokens();
    let fresh = AuthenticatedGroupAdder::new(fresh_tokens());
    let adder = GroupAdder::new(stored_tokens(), ["tenant-a", "tenant-b"]);
    let anon = AuthenticatedGroupAdder::new(SyncTokenFn::new(|_: &str, _: &Context| {
        Ok(Some(Response::new(UserInfo::anonymous())))
    }));
    let jane = Want::User("jane", &["dev"], &[]);
    let jane_authed = Want::User("jane", &["dev", "system:authenticated"], &[]);
    rows.row("group_adder/delegate_alone_stored_user", jane, || {
        ready_token(&inner, TOKEN, &ctx)
    });
    // A stored user: the appended user is built once and cached on it.
    rows.row("group_adder/authenticated_stored_user", jane_authed, || {
        ready_token(&authed, TOKEN, &ctx)
    });
    rows.row("group_adder/delegate_alone_fresh_user", jane, || {
        ready_token(&fresh_inner, TOKEN, &ctx)
    });
    // A user built per request: the appended user is built per request too.
    rows.row("group_adder/authenticated_fresh_user", jane_authed, || {
        ready_token(&fresh, TOKEN, &ctx)
    });
    rows.row(
        "group_adder/authenticated_anonymous_unchanged",
        Want::User("system:anonymous", &["system:unauthenticated"], &[]),
        || ready_token(&anon, TOKEN, &ctx),
    );
    rows.row(
        "group_adder/fixed_groups_2",
        Want::User("jane", &["dev", "tenant-a", "tenant-b"], &[]),
        || ready_token(&adder, TOKEN, &ctx),
    );
    rows.row("group_adder/not_mine_passes_through", Want::NotMine, || {
        ready_token(&authed, "unknown", &ctx)
    });
}

fn anytoken(rows: &mut Rows<'_>) {
    let ctx = Context::default();
    let any = AnyToken::insecure_allow_any_token();
    let bearer = Bearer::new(AnyToken::insecure_allow_any_token());
    let req = request(&[("authorization", "Bearer joe/group1,group2")], "/api");
    rows.row("anytoken/name", Want::User("joe", &[], &[]), || {
        ready_token(&any, "joe", &ctx)
    });
    rows.row(
        "anytoken/name_and_2_groups",
        Want::User("joe", &["group1", "group2"], &[]),
        || ready_token(&any, "joe/group1,group2", &ctx),
    );
    rows.row(
        "anytoken/bearer_name_and_2_groups",
        Want::User("joe", &["group1", "group2"], &[]),
        || ready_req(&bearer, &req, &ctx),
    );
}

fn anonymous(rows: &mut Rows<'_>) {
    let ctx = Context::default();
    let any_path = Anonymous::new();
    let paths = Anonymous::with_paths(["/healthz", "/readyz", "/livez"]);
    let api = request(&[], "/api/v1/pods");
    let healthz = request(&[], "/healthz");
    let encoded = request(&[], "/heal%74hz");
    let anon = Want::User("system:anonymous", &["system:unauthenticated"], &[]);
    rows.row("anonymous/any_path", anon, || {
        ready_req(&any_path, &api, &ctx)
    });
    let with_auds = Context::with_audiences(Audiences::from(["api"]));
    rows.row(
        "anonymous/any_path_with_audiences",
        Want::User("system:anonymous", &["system:unauthenticated"], &["api"]),
        || ready_req(&any_path, &api, &with_auds),
    );
    rows.row("anonymous/allowed_path", anon, || {
        ready_req(&paths, &healthz, &ctx)
    });
    rows.row("anonymous/allowed_path_percent_encoded", anon, || {
        ready_req(&paths, &encoded, &ctx)
    });
    rows.row("anonymous/other_path_not_mine", Want::NotMine, || {
        ready_req(&paths, &api, &ctx)
    });
}

fn audience_agnostic(rows: &mut Rows<'_>) {
    let jane = Arc::new(UserInfo::builder("jane").group("dev").build());
    let req_inner =
        SyncRequestFn::new(move |_: &Parts, _: &Context| Ok(Some(Response::new(jane.clone()))));
    let wrapped = AudienceAgnostic::new(Audiences::from(["api", "other"]), req_inner);
    let token_wrapped = AudienceAgnostic::new(Audiences::from(["api", "other"]), stored_tokens());
    let req = request(&[], "/api");
    let none = Context::default();
    let api = Context::with_audiences(Audiences::from(["api"]));
    let elsewhere = Context::with_audiences(Audiences::from(["someone-else"]));
    rows.row(
        "audience_agnostic/no_audiences_requested",
        Want::User("jane", &["dev"], &[]),
        || ready_req(&wrapped, &req, &none),
    );
    rows.row(
        "audience_agnostic/intersecting",
        Want::User("jane", &["dev"], &["api"]),
        || ready_req(&wrapped, &req, &api),
    );
    rows.row("audience_agnostic/disjoint_not_mine", Want::NotMine, || {
        ready_req(&wrapped, &req, &elsewhere)
    });
    rows.row(
        "audience_agnostic/token_intersecting",
        Want::User("jane", &["dev"], &["api"]),
        || ready_token(&token_wrapped, TOKEN, &api),
    );
}

/// Four request authenticators, each claiming the request when `x-who` names it and failing
/// it with its own error when `x-who` is `bad` (as a member that owns a malformed credential).
fn members() -> Vec<Arc<dyn RequestAuthenticator>> {
    const ERRORS: [&str; 4] = ["m0 failed", "m1 failed", "m2 failed", "m3 failed"];
    (0..4)
        .map(|i| {
            let me = format!("member-{i}");
            let user = Arc::new(UserInfo::builder(me.clone()).group("team").build());
            Arc::new(SyncRequestFn::new(
                move |req: &Parts, _: &Context| match req.headers.get("x-who").map(|v| v.as_bytes())
                {
                    Some(b"bad") => Err(Error::msg(ERRORS[i])),
                    Some(v) if v == me.as_bytes() => Ok(Some(Response::new(user.clone()))),
                    _ => Ok(None),
                },
            )) as Arc<dyn RequestAuthenticator>
        })
        .collect()
}

fn union(rows: &mut Rows<'_>) {
    let ctx = Context::default();
    let union = Union::new(members());
    let strict = Union::fail_on_error(members());
    let who = |w: &str| request(&[("x-who", w)], "/api");
    let (last, first, nobody, bad) = (who("member-3"), who("member-0"), who("x"), who("bad"));
    rows.row(
        "union4/last_matches",
        Want::User("member-3", &["team"], &[]),
        || ready_req(&union, &last, &ctx),
    );
    rows.row(
        "union4/first_matches",
        Want::User("member-0", &["team"], &[]),
        || ready_req(&union, &first, &ctx),
    );
    rows.row("union4/none_matches", Want::NotMine, || {
        ready_req(&union, &nobody, &ctx)
    });
    rows.row(
        "union4/all_fail_aggregated",
        Want::Err("[m0 failed, m1 failed, m2 failed, m3 failed]"),
        || ready_req(&union, &bad, &ctx),
    );
    rows.row(
        "union4/fail_on_error_first_fails",
        Want::Err("m0 failed"),
        || ready_req(&strict, &bad, &ctx),
    );
}

fn bench(c: &mut Criterion) {
    let count = std::env::var("COMBINATORS_COUNT").ok().map(|id| {
        let iters = std::env::var("COMBINATORS_ITERS").map_or(1_000_000, |v| {
            v.parse().expect("COMBINATORS_ITERS is a number")
        });
        (id, iters)
    });
    let counting = count.clone();
    let mut rows = Rows { c, count };
    websocket(&mut rows);
    group_adders(&mut rows);
    anytoken(&mut rows);
    anonymous(&mut rows);
    audience_agnostic(&mut rows);
    union(&mut rows);
    if let Some((id, _)) = counting {
        panic!("COMBINATORS_COUNT={id} names no row");
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
