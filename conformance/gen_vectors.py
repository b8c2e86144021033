#!/usr/bin/env python3
"""Generates conformance/vectors/*.json: the shared cases that both kube-authn
(tests/conformance.rs) and k8s.io/apiserver (conformance/go) run.

The vectors are data; this script is only how the tables were written down. Many
expectations here are written out by hand from the reference notes
(/work/shared/reference/k8s-request-authn.md, k8s-token-authn.md); the table-generated
ones (union, audiences) compute the k8s-specified result from the algorithm stated in
those notes. Either way they are *checked* against k8s.io/apiserver itself by
conformance/run.sh, and against kube-authn by `cargo test --test conformance`.

Run from the repository root:  python3 conformance/gen_vectors.py [--out DIR]
The output is deterministic (sorted keys, fixed order), so `git diff` shows real changes.
"""

import base64
import itertools
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors")

# Error texts kube-authn uses where it fails closed (src/request/mod.rs).
E_MALFORMED_BEARER = 'malformed bearer token: expected "Bearer <token>" with a single space'
E_MULTIPLE = "multiple Authorization headers"
E_NOT_ASCII = "Authorization header contains bytes outside visible ASCII"
E_TOO_LONG = "credential exceeds the maximum length"
E_MALFORMED_BASIC = "malformed basic credentials"
E_WS_NOT_TEXT = "Sec-WebSocket-Protocol header contains bytes outside visible ASCII"
E_WS_EMPTY = "empty base64.bearer.authorization token"
E_INVALID_BEARER = "invalid bearer token"
E_INVALID_PASSWORD = "invalid username/password combination"

# Reasons, shared by many vectors (each names where kube-authn documents the difference).
R_FAIL_CLOSED = ("kube-authn fails closed on a present but malformed Authorization header "
                 "(src/request/mod.rs table; docs/compatibility.md): Kubernetes ignores it, so "
                 "with anonymous enabled the request would become anonymous")
R_MULTIPLE = ("kube-authn rejects several Authorization headers; Kubernetes silently uses the "
              "first one (src/request/mod.rs)")
R_NOT_ASCII = ("kube-authn rejects Authorization bytes outside visible ASCII; Kubernetes passes "
               "them on (src/request/mod.rs)")
R_TOO_LONG = ("kube-authn bounds credentials at MAX_TOKEN_LEN (64 KiB) before any authenticator "
              "sees them; Kubernetes passes any length on (src/request/mod.rs)")
R_UNICODE_SPACE = ("Go's strings.TrimSpace also trims Unicode spaces (U+00A0, U+0085, U+2028); "
                   "kube-authn rejects any non-ASCII byte in Authorization instead "
                   "(src/request/mod.rs)")
R_BASIC_FAIL_CLOSED = ("kube-authn fails closed on Basic credentials that Go's Request.BasicAuth "
                       "cannot parse (bad base64, no colon, non-UTF-8); Kubernetes ignored them "
                       "(src/request/mod.rs)")
R_BASIC_TRIM = ("kube-authn trims spaces and tabs around the Authorization value for every "
                "scheme; Go's Request.BasicAuth does not trim, so a leading space hides the "
                "credential there (harmless: the credential is still checked)")
R_EMPTY_CHAIN = ("with no authenticator and anonymous disabled kube-apiserver turns "
                 "authentication off (every request passes, no user); kube-authn's ChainBuilder "
                 "rejects every request instead (src/chain/builder.rs)")
R_NO_TOKEN_AUTHN = ("in a chain without token authenticators nothing reads Authorization in "
                    "Kubernetes, so a malformed header becomes an anonymous request; kube-authn's "
                    "ChainBuilder ends such a chain with the bearer and WebSocket syntax checks, "
                    "so it is a 401 as in every other chain (src/chain/builder.rs)")
R_WS_EMPTY = ("kube-authn fails closed on an empty token subprotocol, a presented but empty "
              "credential, as it does on 'Bearer ' (src/request/websocket.rs); Kubernetes has "
              "no opinion, so with anonymous enabled the request would become anonymous")
R_WS_UNICODE = ("Go's strings.EqualFold folds Unicode (U+212A KELVIN SIGN equals 'k'), so "
                "Kubernetes treats 'websoc\u212aet' as a WebSocket upgrade; kube-authn compares "
                "ASCII only and treats the request as not a WebSocket (not mine)")
R_WS_NOT_TEXT = ("kube-authn rejects a Sec-WebSocket-Protocol value that is not visible ASCII; "
                 "Go trims Unicode spaces around each protocol and goes on")


def user(name, uid="", groups=(), extra=None):
    return {"name": name, "uid": uid, "groups": list(groups), "extra": extra or {}}


def ok(u, audiences=(), calls=None):
    out = {"result": "authenticated", "user": u, "audiences": list(audiences)}
    if calls is not None:
        out["calls"] = calls
    return out


def not_mine(calls=None):
    out = {"result": "not_mine"}
    if calls is not None:
        out["calls"] = calls
    return out


def error(text=None, calls=None):
    out = {"result": "error"}
    if text is not None:
        out["error"] = text
    if calls is not None:
        out["calls"] = calls
    return out


def config_error(contains):
    return {"result": "config_error", "error_contains": contains}


def scripted(id_, outcome, tokens=None):
    node = {"kind": "scripted", "id": id_, "outcome": outcome}
    if tokens:
        node["tokens"] = tokens
    return node


# Scripted outcomes (what a scripted handler answers).
def s_user(u, audiences=()):
    out = {"user": u}
    if audiences:
        out["audiences"] = list(audiences)
    return out


S_NONE = "not_mine"


def s_err(text):
    return {"error": text}


def case(name, setup, input_, expect=None, k8s=None, kube_authn=None, reason=None,
         authenticator=None, source=None):
    c = {"name": name, "setup": setup, "input": input_}
    if authenticator:
        c["authenticator"] = authenticator
    if source:
        c["source"] = source
    if expect is not None:
        assert k8s is None and kube_authn is None and reason is None, name
        c["expect"] = expect
    else:
        assert k8s is not None and kube_authn is not None and reason, name
        c["k8s"] = k8s
        c["kube_authn"] = kube_authn
        c["reason"] = reason
    return c


def req(headers=(), path="/", audiences=None):
    i = {"path": path, "headers": [list(h) for h in headers]}
    if audiences is not None:
        i["audiences"] = list(audiences)
    return i


def write(suite, description, source, cases):
    names = [c["name"] for c in cases]
    dupes = {n for n in names if names.count(n) > 1}
    assert not dupes, f"duplicate names in {suite}: {sorted(dupes)}"
    doc = {"suite": suite, "description": description, "source": source, "cases": cases}
    path = os.path.join(OUT, f"{suite}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False, sort_keys=True)
        f.write("\n")
    return len(cases)


MYUSER = user("myuser", "myuid", ["g1"], {"example.org/k": ["v"]})


# ---------------------------------------------------------------------------------------------
# bearer: Authorization: Bearer parsing (k8s request/bearertoken)
# ---------------------------------------------------------------------------------------------
def bearer_cases():
    setup = {"request": {"kind": "bearer", "token": scripted("t", s_user(MYUSER))}}
    cases = []
    seen = lambda *toks: {"t": [[t] for t in toks]}
    schemes = ["Bearer", "bearer", "BEARER", "bEaReR"]
    names = ["Authorization", "authorization", "AUTHORIZATION"]
    for scheme, hname in itertools.product(schemes, names):
        tag = f"{hname} {scheme}"
        agree = [
            ("token", f"{scheme} token", "token"),
            ("value after token", f"{scheme} token a", "token"),
            ("several values after token", f"{scheme} token a b c", "token"),
            ("spaces after token", f"{scheme} token   a", "token"),
            ("surrounding spaces", f"  {scheme} token  ", "token"),
            ("surrounding tabs", f"\t{scheme} token\t", "token"),
            ("jwt-shaped token", f"{scheme} eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl", "eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl"),
            ("token with punctuation", f"{scheme} a-b_c.d~e+f/g=", "a-b_c.d~e+f/g="),
            ("token with comma", f"{scheme} tok,en", "tok,en"),
        ]
        for label, value, token in agree:
            cases.append(case(f"{tag}: {label}", setup, req([(hname, value)]),
                              expect=ok(MYUSER, calls=seen(token))))
        not_ours = [
            ("colon after scheme", f"{scheme}: token"),
            ("no separator", f"{scheme}token"),
        ]
        for label, value in not_ours:
            cases.append(case(f"{tag}: {label}", setup, req([(hname, value)]),
                              expect=not_mine(calls=seen())))
        fail_closed = [
            ("two spaces", f"{scheme}  token"),
            ("tab separator", f"{scheme}\ttoken"),
            ("scheme alone", f"{scheme}"),
            ("scheme and space", f"{scheme} "),
            ("scheme and spaces", f"{scheme}    "),
        ]
        for label, value in fail_closed:
            cases.append(case(f"{tag}: {label}", setup, req([(hname, value)]),
                              k8s=not_mine(calls=seen()),
                              kube_authn=error(E_MALFORMED_BEARER, calls=seen()),
                              reason=R_FAIL_CLOSED))
        cases.append(case(f"{tag}: tab inside token", setup, req([(hname, f"{scheme} tok\ten")]),
                          k8s=ok(MYUSER, calls=seen("tok\ten")),
                          kube_authn=error(E_MALFORMED_BEARER, calls=seen()),
                          reason=R_FAIL_CLOSED))

    # Other schemes and empty values: nobody's credential.
    # A Basic credential Go cannot parse is refused by the bearer authenticator too.
    cases.append(case("other scheme: basic, bad base64", setup, req([("Authorization", "Basic 123")]),
                      k8s=not_mine(calls=seen()),
                      kube_authn=error(E_MALFORMED_BASIC, calls=seen()),
                      reason=R_BASIC_FAIL_CLOSED))
    for label, value in [("empty value", ""), ("blank value", "   "),
                         ("basic creds", "Basic dXNlcjpwYXNz"), ("digest", "Digest username=x"),
                         ("bear", "bear token"), ("token scheme", "Token abc"),
                         ("negotiate", "Negotiate YIIB"), ("bearerx", "Bearerx y"),
                         ("quoted scheme", '"Bearer" token'), ("only a token", "token")]:
        cases.append(case(f"other scheme: {label}", setup, req([("Authorization", value)]),
                          expect=not_mine(calls=seen())))
    cases.append(case("no header", setup, req([]), expect=not_mine(calls=seen())))
    cases.append(case("unrelated headers only", setup,
                      req([("X-Auth", "Bearer token"), ("Proxy-Authorization", "Bearer token")]),
                      expect=not_mine(calls=seen())))

    # What the token authenticator answers.
    for label, outcome, expect in [
        ("token accepted", s_user(MYUSER), ok(MYUSER, calls=seen("token"))),
        ("token rejected is invalid bearer token", S_NONE, error(E_INVALID_BEARER, calls=seen("token"))),
        ("custom error passed through", s_err("custom error"), error("custom error", calls=seen("token"))),
        ("response audiences passed through", s_user(MYUSER, ["api", "x"]),
         ok(MYUSER, ["api", "x"], calls=seen("token"))),
    ]:
        s = {"request": {"kind": "bearer", "token": scripted("t", outcome)}}
        cases.append(case(f"answer: {label}", s, req([("Authorization", "Bearer token")]), expect=expect))
        cases.append(case(f"answer with audiences in context: {label}", s,
                          req([("Authorization", "Bearer token")], audiences=["api"]), expect=expect))

    # Several Authorization headers.
    for label, values, k8s_out in [
        ("two bearer", ["Bearer a", "Bearer b"], ok(MYUSER, calls=seen("a"))),
        ("empty then bearer", ["", "Bearer b"], not_mine(calls=seen())),
        ("basic then bearer", ["Basic x", "Bearer b"], not_mine(calls=seen())),
        ("bearer then basic", ["Bearer a", "Basic eDp5"], ok(MYUSER, calls=seen("a"))),
        ("same bearer twice", ["Bearer a", "Bearer a"], ok(MYUSER, calls=seen("a"))),
        ("three headers", ["Bearer a", "Bearer b", "Bearer c"], ok(MYUSER, calls=seen("a"))),
    ]:
        cases.append(case(f"multiple headers: {label}", setup,
                          req([("Authorization", v) for v in values]),
                          k8s=k8s_out, kube_authn=error(E_MULTIPLE, calls=seen()), reason=R_MULTIPLE))

    # Bytes outside visible ASCII.
    for label, value, token in [
        ("utf-8 token", "Bearer tökén", "tökén"),
        ("emoji token", "Bearer tok\U0001F600", "tok\U0001F600"),
        ("latin-1 byte", {"hex": "42656172657220746f6bff656e"}, {"hex": "746f6bff656e"}),
    ]:
        cases.append(case(f"non-ascii: {label}", setup, req([("Authorization", value)]),
                          k8s=ok(MYUSER, calls={"t": [[token]]}),
                          kube_authn=error(E_NOT_ASCII, calls=seen()), reason=R_NOT_ASCII))
    for label, value in [("trailing no-break space", "Bearer token\u00a0"),
                         ("leading no-break space", "\u00a0Bearer token"),
                         ("trailing next line", "Bearer token\u0085"),
                         ("trailing line separator", "Bearer token\u2028")]:
        cases.append(case(f"unicode space: {label}", setup, req([("Authorization", value)]),
                          k8s=ok(MYUSER, calls=seen("token")),
                          kube_authn=error(E_NOT_ASCII, calls=seen()), reason=R_UNICODE_SPACE))

    # Length bound.
    at_limit = "a" * 65536
    over = "a" * 65537
    cases.append(case("length: token at 64 KiB", setup, req([("Authorization", "Bearer " + at_limit)]),
                      expect=ok(MYUSER, calls=seen(at_limit))))
    cases.append(case("length: token over 64 KiB", setup, req([("Authorization", "Bearer " + over)]),
                      k8s=ok(MYUSER, calls=seen(over)),
                      kube_authn=error(E_TOO_LONG, calls=seen()), reason=R_TOO_LONG))

    # Scripted token map: only the right token is accepted.
    mapped = {"request": {"kind": "bearer", "token": scripted("t", S_NONE, tokens={"good": s_user(MYUSER)})}}
    cases.append(case("token map: good token", mapped, req([("Authorization", "Bearer good")]),
                      expect=ok(MYUSER, calls=seen("good"))))
    cases.append(case("token map: token is case-sensitive", mapped, req([("Authorization", "Bearer GOOD")]),
                      expect=error(E_INVALID_BEARER, calls=seen("GOOD"))))
    cases.append(case("token map: prefix of good token", mapped, req([("Authorization", "Bearer goo")]),
                      expect=error(E_INVALID_BEARER, calls=seen("goo"))))
    return cases


# ---------------------------------------------------------------------------------------------
# websocket: base64url.bearer.authorization.k8s.io. subprotocol (k8s request/websocket)
# ---------------------------------------------------------------------------------------------
P = "base64url.bearer.authorization.k8s.io."


def b64u(s):
    raw = s if isinstance(s, bytes) else s.encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def websocket_cases():
    setup = {"request": {"kind": "websocket", "token": scripted("t", s_user(MYUSER))}}
    seen = lambda *toks: {"t": [[t] for t in toks]}
    ws = [("Connection", "Upgrade"), ("Upgrade", "websocket")]
    tok = P + b64u("token")
    cases = []

    # The WebSocket gate.
    proto = [("Sec-WebSocket-Protocol", tok + ",dummy")]
    for label, gate, is_ws in [
        ("connection upgrade", [("Connection", "upgrade"), ("Upgrade", "websocket")], True),
        ("capitalised", [("Connection", "Upgrade"), ("Upgrade", "WebSocket")], True),
        ("upper-case", [("Connection", "UPGRADE"), ("Upgrade", "WEBSOCKET")], True),
        ("connection list", [("Connection", "keep-alive, Upgrade"), ("Upgrade", "websocket")], True),
        ("two connection headers", [("Connection", "not"), ("Connection", "upgrade"), ("Upgrade", "websocket")], True),
        ("connection contains upgrade", [("Connection", "xupgradex"), ("Upgrade", "websocket")], True),
        ("connection keep-alive only", [("Connection", "keep-alive"), ("Upgrade", "websocket")], False),
        ("no connection", [("Upgrade", "websocket")], False),
        ("no upgrade", [("Connection", "upgrade")], False),
        ("upgrade h2c", [("Connection", "upgrade"), ("Upgrade", "h2c")], False),
        ("upgrade websocket2", [("Connection", "upgrade"), ("Upgrade", "websocket2")], False),
        ("first upgrade value is used", [("Connection", "upgrade"), ("Upgrade", "h2c"), ("Upgrade", "websocket")], False),
        ("first upgrade value websocket", [("Connection", "upgrade"), ("Upgrade", "websocket"), ("Upgrade", "h2c")], True),
        ("upgrade list", [("Connection", "upgrade"), ("Upgrade", "websocket, h2c")], False),
    ]:
        expect = ok(MYUSER, calls=seen("token")) if is_ws else not_mine(calls=seen())
        cases.append(case(f"gate: {label}", setup, req(gate + proto), expect=expect))
    cases.append(case("gate: unicode case folding", setup,
                      req([("Connection", "upgrade"), ("Upgrade", "websoc\u212aet")] + proto),
                      k8s=ok(MYUSER, calls=seen("token")), kube_authn=not_mine(calls=seen()),
                      reason=R_WS_UNICODE))
    cases.append(case("gate: no websocket headers, no token", setup, req([]), expect=not_mine(calls=seen())))

    # Protocol header shapes.
    agree = [
        ("token then dummy", [tok + ",dummy"], ok(MYUSER, calls=seen("token"))),
        ("dummy then token", ["dummy," + tok], ok(MYUSER, calls=seen("token"))),
        ("spaces around entries", ["  dummy ,  " + tok + "  "], ok(MYUSER, calls=seen("token"))),
        ("tabs around entries", ["dummy,\t" + tok + "\t"], ok(MYUSER, calls=seen("token"))),
        ("two header lines", [tok, "dummy, dummy2"], ok(MYUSER, calls=seen("token"))),
        ("token in second line", ["dummy", tok], ok(MYUSER, calls=seen("token"))),
        ("empty entry counts as another protocol", [tok + ","], ok(MYUSER, calls=seen("token"))),
        ("empty entries kept", ["a,," + tok + ", b"], ok(MYUSER, calls=seen("token"))),
        ("empty second header line", [tok, ""], ok(MYUSER, calls=seen("token"))),
        ("non-canonical trailing bits", [P + "dG9rZW5,x"], ok(MYUSER, calls=seen("token"))),
        ("token with every url-safe byte", [P + b64u(b"a-b_c~d") + ",x"], ok(MYUSER, calls=seen("a-b_c~d"))),
        ("utf-8 token", [P + b64u("tökén") + ",x"], ok(MYUSER, calls=seen("tökén"))),
        ("token of spaces", [P + b64u("   ") + ",x"], ok(MYUSER, calls=seen("   "))),
        ("no protocol header", [], not_mine(calls=seen())),
        ("empty header", [""], not_mine(calls=seen())),
        ("other protocol", ["other-protocol"], not_mine(calls=seen())),
        ("several other protocols", ["a, b", "c"], not_mine(calls=seen())),
        ("prefix in upper case is another protocol", [P.upper() + b64u("token") + ",x"], not_mine(calls=seen())),
        ("prefix without dot is another protocol", [P[:-1] + ",x"], not_mine(calls=seen())),
        ("token alone", [tok], error("missing additional subprotocol", calls=seen())),
        ("token and spaces only", [tok + " "], error("missing additional subprotocol", calls=seen())),
        ("two tokens", [tok + "," + tok + ",x"], error("multiple base64.bearer.authorization tokens specified", calls=seen())),
        ("two tokens in two lines", [tok + ",x", tok], error("multiple base64.bearer.authorization tokens specified", calls=seen())),
        ("empty token then token", [P + "," + tok + ",x"], error("multiple base64.bearer.authorization tokens specified", calls=seen())),
        ("token then bad token", [tok + "," + P + "!!,x"], error("multiple base64.bearer.authorization tokens specified", calls=seen())),
        ("padded", [tok + "=,x"], error("invalid base64.bearer.authorization token encoding", calls=seen())),
        ("padded twice", [P + "dG9rZQ==,x"], error("invalid base64.bearer.authorization token encoding", calls=seen())),
        ("standard alphabet", [P + "a+b/,x"], error("invalid base64.bearer.authorization token encoding", calls=seen())),
        ("one base64 character", [P + "a,x"], error("invalid base64.bearer.authorization token encoding", calls=seen())),
        ("space inside token", [P + "dG9r ZW4,x"], error("invalid base64.bearer.authorization token encoding", calls=seen())),
        ("not utf-8", [P + b64u(b"\xff\xfe") + ",x"], error("invalid base64.bearer.authorization token", calls=seen())),
        ("bad token before empty token", [P + "!,x," + P], error("invalid base64.bearer.authorization token encoding", calls=seen())),
    ]
    for label, values, expect in agree:
        cases.append(case(f"protocol: {label}", setup,
                          req(ws + [("Sec-WebSocket-Protocol", v) for v in values]), expect=expect))
    for label, values in [("empty token", [P]), ("empty token and other protocol", [P + ",x"])]:
        cases.append(case(f"protocol: {label}", setup,
                          req(ws + [("Sec-WebSocket-Protocol", v) for v in values]),
                          k8s=not_mine(calls=seen()),
                          kube_authn=error(E_WS_EMPTY, calls=seen()), reason=R_WS_EMPTY))
    cases.append(case("protocol: no-break space around token", setup,
                      req(ws + [("Sec-WebSocket-Protocol", "x,\u00a0" + tok)]),
                      k8s=ok(MYUSER, calls=seen("token")),
                      kube_authn=error(E_WS_NOT_TEXT, calls=seen()), reason=R_WS_NOT_TEXT))

    # What the token authenticator answers.
    for label, outcome, expect in [
        ("accepted", s_user(MYUSER), ok(MYUSER, calls=seen("token"))),
        ("rejected is invalid bearer token", S_NONE, error(E_INVALID_BEARER, calls=seen("token"))),
        ("custom error passed through", s_err("custom"), error("custom", calls=seen("token"))),
        ("audiences passed through", s_user(MYUSER, ["api"]), ok(MYUSER, ["api"], calls=seen("token"))),
    ]:
        s = {"request": {"kind": "websocket", "token": scripted("t", outcome)}}
        cases.append(case(f"answer: {label}", s,
                          req(ws + [("Sec-WebSocket-Protocol", tok + ",dummy")]), expect=expect))
    # An Authorization header is not the WebSocket authenticator's business.
    cases.append(case("authorization header ignored", setup,
                      req(ws + [("Authorization", "Bearer token")]), expect=not_mine(calls=seen())))
    return cases


# ---------------------------------------------------------------------------------------------
# basic: Authorization: Basic (the removed k8s request/basicauth; oracle: k8s.io/apiserver v0.18)
# ---------------------------------------------------------------------------------------------
def b64(s):
    raw = s if isinstance(s, bytes) else s.encode()
    return base64.b64encode(raw).decode()


def basic_cases():
    setup = {"request": {"kind": "basic", "password": scripted("p", s_user(MYUSER))}}
    seen = lambda *pairs: {"p": [list(p) for p in pairs]}
    cases = []
    for scheme in ["Basic", "basic", "BASIC", "bAsIc"]:
        for label, cred, pair in [
            ("user and password", "myuser:mypw", ("myuser", "mypw")),
            ("colon in password", "myuser:mypassword:withcolon", ("myuser", "mypassword:withcolon")),
            ("empty password", "user_with_empty_password:", ("user_with_empty_password", "")),
            ("empty user", ":pw", ("", "pw")),
            ("both empty", ":", ("", "")),
            ("spaces kept", " u : p ", (" u ", " p ")),
            ("utf-8", "üser:pässword", ("üser", "pässword")),
        ]:
            cases.append(case(f"{scheme}: {label}", setup,
                              req([("Authorization", f"{scheme} {b64(cred)}")]),
                              expect=ok(MYUSER, calls=seen(pair))))
        cases.append(case(f"{scheme}: scheme alone", setup, req([("Authorization", scheme)]),
                          k8s=not_mine(calls=seen()), kube_authn=error(E_MALFORMED_BASIC, calls=seen()),
                          reason=R_BASIC_FAIL_CLOSED))
    for label, value in [
        ("bad base64", "Basic !!!!"),
        ("missing padding", "Basic dXNlcjpwYXNzeA"),
        ("url-safe alphabet", "Basic _-__"),
        ("no colon", "Basic " + b64("nocolon")),
        ("two spaces", "Basic  " + b64("u:p")),
        ("space inside", "Basic dXNl cjpwYXNz"),
        ("tab separator", "Basic\t" + b64("u:p")),
        ("scheme and space", "Basic "),
    ]:
        cases.append(case(f"malformed: {label}", setup, req([("Authorization", value)]),
                          k8s=not_mine(calls=seen()), kube_authn=error(E_MALFORMED_BASIC, calls=seen()),
                          reason=R_BASIC_FAIL_CLOSED))
    cases.append(case("malformed: not utf-8", setup, req([("Authorization", "Basic " + b64(b"u:\xff"))]),
                      k8s=ok(MYUSER, calls={"p": [["u", {"hex": "ff"}]]}),
                      kube_authn=error(E_MALFORMED_BASIC, calls=seen()), reason=R_BASIC_FAIL_CLOSED))
    cases.append(case("non-canonical trailing bits accepted", setup,
                      req([("Authorization", "Basic dTpx")]), expect=ok(MYUSER, calls=seen(("u", "q")))))
    cases.append(case("leading space", setup, req([("Authorization", "  Basic " + b64("u:p"))]),
                      k8s=not_mine(calls=seen()), kube_authn=ok(MYUSER, calls=seen(("u", "p"))),
                      reason=R_BASIC_TRIM))
    cases.append(case("trailing space", setup, req([("Authorization", "Basic " + b64("u:p") + " ")]),
                      k8s=not_mine(calls=seen()), kube_authn=ok(MYUSER, calls=seen(("u", "p"))),
                      reason=R_BASIC_TRIM))
    for label, values, k8s_out in [
        ("two basic", ["Basic " + b64("a:1"), "Basic " + b64("b:2")], ok(MYUSER, calls=seen(("a", "1")))),
        ("bearer then basic", ["Bearer x", "Basic " + b64("b:2")], not_mine(calls=seen())),
    ]:
        cases.append(case(f"multiple headers: {label}", setup,
                          req([("Authorization", v) for v in values]),
                          k8s=k8s_out, kube_authn=error(E_MULTIPLE, calls=seen()), reason=R_MULTIPLE))
    for label, value in [("no header", None), ("bearer", "Bearer token"), ("digest", "Digest x"),
                         ("empty", ""), ("basicx", "Basicx " + b64("u:p"))]:
        headers = [] if value is None else [("Authorization", value)]
        cases.append(case(f"not basic: {label}", setup, req(headers), expect=not_mine(calls=seen())))
    for label, outcome, expect in [
        ("accepted", s_user(MYUSER), ok(MYUSER, calls=seen(("myuser", "mypw")))),
        ("rejected", S_NONE, error(E_INVALID_PASSWORD, calls=seen(("myuser", "mypw")))),
        ("custom error", s_err("auth error"), error("auth error", calls=seen(("myuser", "mypw")))),
    ]:
        s = {"request": {"kind": "basic", "password": scripted("p", outcome)}}
        cases.append(case(f"answer: {label}", s, req([("Authorization", "Basic " + b64("myuser:mypw"))]),
                          expect=expect))
    return cases


# ---------------------------------------------------------------------------------------------
# union: request and token unions, plain and fail-on-error (k8s request/union, token/union)
# ---------------------------------------------------------------------------------------------
def union_expect(outcomes, fail_on_error):
    """The k8s algorithm from k8s-request-authn.md §2.1, used to fill in the table."""
    errs, calls = [], []
    for i, o in enumerate(outcomes):
        calls.append(i)
        kind, payload = o
        if kind == "err":
            if fail_on_error:
                return ("err", payload), calls
            errs.append(payload)
        elif kind == "ok":
            return ("ok", payload), calls
    if not errs:
        return ("none", None), calls
    uniq = []
    for e in errs:
        if e not in uniq:
            uniq.append(e)
    if len(errs) == 1 or len(uniq) == 1:
        return ("err", uniq[0]), calls
    return ("err", "[" + ", ".join(uniq) + "]"), calls


def union_cases():
    cases = []
    users = [user("fresh_ferret", "alfa"), user("elegant_sheep", "bravo"), user("calm_otter", "charlie", ["g"])]
    errors = ["first", "second", "third"]
    for level in ["request", "token"]:
        for fail_on_error in [False, True]:
            for n in range(0, 4):
                for combo in itertools.product(["ok", "none", "err"], repeat=n):
                    outcomes = []
                    for i, k in enumerate(combo):
                        outcomes.append((k, users[i] if k == "ok" else errors[i] if k == "err" else None))
                    handlers = [scripted(f"h{i}", s_user(p) if k == "ok" else s_err(p) if k == "err" else S_NONE)
                                for i, (k, p) in enumerate(outcomes)]
                    (kind, payload), called = union_expect(outcomes, fail_on_error)
                    arg = ["tok"] if level == "token" else ["/api"]
                    calls = {f"h{i}": ([arg] if i in called else []) for i in range(n)}
                    expect = (ok(payload, calls=calls) if kind == "ok" else
                              error(payload, calls=calls) if kind == "err" else not_mine(calls=calls))
                    node = {"kind": "union", "fail_on_error": fail_on_error, "handlers": handlers}
                    setup = {level: node}
                    inp = {"token": "tok"} if level == "token" else req([], path="/api")
                    label = ",".join(combo) or "empty"
                    mode = "fail-on-error" if fail_on_error else "plain"
                    cases.append(case(f"{level} {mode}: [{label}]", setup, inp, expect=expect))
    # Error text: de-duplication and nested aggregates (apimachinery NewAggregate).
    for level in ["request", "token"]:
        arg = ["tok"] if level == "token" else ["/api"]
        inp = {"token": "tok"} if level == "token" else req([], path="/api")
        u = lambda hs, f=False: {"kind": "union", "fail_on_error": f, "handlers": hs}
        e = lambda i, t: scripted(i, s_err(t))
        for label, node, text in [
            ("duplicate errors collapse", u([e("a", "same"), e("b", "same")]), "same"),
            ("duplicates among three", u([e("a", "x"), e("b", "y"), e("c", "x")]), "[x, y]"),
            ("duplicate after not mine", u([e("a", "same"), scripted("b", S_NONE), e("c", "same")]), "same"),
            ("nested aggregate flattened", u([u([e("a", "a1"), e("b", "b1")]), e("c", "c1")]), "[a1, b1, c1]"),
            ("nested duplicate collapses", u([u([e("a", "a1"), e("b", "b1")]), e("c", "a1")]), "[a1, b1]"),
            ("nested aggregate of one text", u([u([e("a", "x"), e("b", "x")]), e("c", "x")]), "x"),
            ("error inside nested fail-on-error", u([u([e("a", "a1"), e("b", "b1")], True), e("c", "c1")]), "[a1, c1]"),
            ("invalid bearer token texts collapse", u([e("a", E_INVALID_BEARER), u([e("b", E_INVALID_BEARER), e("c", E_INVALID_BEARER)])]), E_INVALID_BEARER),
        ]:
            cases.append(case(f"{level} error text: {label}", {level: node}, inp, expect=error(text)))
        # A union of one handler is that handler; first success silences earlier errors in nests.
        only = u([scripted("a", s_user(users[0], ["x"]))])
        cases.append(case(f"{level} single handler: response unchanged", {level: only}, inp,
                          expect=ok(users[0], ["x"], calls={"a": [arg]})))
        nested_ok = u([u([e("a", "a1"), scripted("b", s_user(users[1]))]), e("c", "c1")])
        cases.append(case(f"{level} nested: inner success wins", {level: nested_ok}, inp,
                          expect=ok(users[1], calls={"a": [arg], "b": [arg], "c": []})))
    return cases


# ---------------------------------------------------------------------------------------------
# group: authenticated-group adder and group adder (k8s pkg/authentication/group)
# ---------------------------------------------------------------------------------------------
def group_cases():
    cases = []
    extra = {"example.org/k": ["v1", "v2"]}
    shapes = [
        ("plain user", user("user", "uid", ["some-group"], extra), True),
        ("no groups", user("user", "uid"), True),
        ("already authenticated", user("user", "", ["system:authenticated", "some-group"]), False),
        ("authenticated last", user("user", "", ["some-group", "system:authenticated"]), False),
        ("unauthenticated group", user("user", "", ["system:unauthenticated", "some-group"]), False),
        ("anonymous name", user("system:anonymous", "", ["some-group"]), False),
        ("anonymous name no groups", user("system:anonymous"), False),
        ("empty name", user("", "", ["g"]), True),
        ("masters", user("admin", "", ["system:masters"]), True),
        ("case differs", user("user", "", ["System:Authenticated"]), True),
        ("anonymous-like name", user("system:anonymous2"), True),
        ("duplicate groups kept", user("user", "", ["g", "g"]), True),
        ("extra and uid kept", user("u", "u-1", [], {"a": ["1"], "b": []}), True),
    ]
    for level in ["request", "token"]:
        inp = {"token": "tok"} if level == "token" else req([])
        for label, u, adds in shapes:
            want = dict(u, groups=u["groups"] + (["system:authenticated"] if adds else []))
            node = {"kind": "authenticated_group_adder", "inner": scripted("h", s_user(u, ["api"]))}
            cases.append(case(f"{level} authenticated adder: {label}", {level: node}, inp,
                              expect=ok(want, ["api"])))
        for label, outcome, expect in [("not mine", S_NONE, not_mine()), ("error", s_err("boom"), error("boom"))]:
            node = {"kind": "authenticated_group_adder", "inner": scripted("h", outcome)}
            cases.append(case(f"{level} authenticated adder: {label} passes through", {level: node}, inp, expect=expect))
        for label, base, added in [
            ("append one", ["original"], ["added"]),
            ("append two", ["original"], ["a", "b"]),
            ("no de-duplication", ["g"], ["g"]),
            ("to no groups", [], ["added"]),
            ("append nothing", ["original"], []),
            ("append authenticated again", ["system:authenticated"], ["system:authenticated"]),
            ("to anonymous", ["system:unauthenticated"], ["added"]),
        ]:
            u = user("system:anonymous" if "anonymous" in label else "user", "uid", base, extra)
            node = {"kind": "group_adder", "groups": added, "inner": scripted("h", s_user(u))}
            cases.append(case(f"{level} group adder: {label}", {level: node}, inp,
                              expect=ok(dict(u, groups=base + added))))
        for label, outcome, expect in [("not mine", S_NONE, not_mine()), ("error", s_err("boom"), error("boom"))]:
            node = {"kind": "group_adder", "groups": ["x"], "inner": scripted("h", outcome)}
            cases.append(case(f"{level} group adder: {label} passes through", {level: node}, inp, expect=expect))
        # Composition: a group adder outside the authenticated adder and the other way round.
        u = user("user", "", ["g"])
        node = {"kind": "group_adder", "groups": ["outer"],
                "inner": {"kind": "authenticated_group_adder", "inner": scripted("h", s_user(u))}}
        cases.append(case(f"{level} composed: group adder over authenticated adder", {level: node}, inp,
                          expect=ok(dict(u, groups=["g", "system:authenticated", "outer"]))))
        node = {"kind": "authenticated_group_adder",
                "inner": {"kind": "group_adder", "groups": ["system:unauthenticated"], "inner": scripted("h", s_user(u))}}
        cases.append(case(f"{level} composed: adder sees groups added inside", {level: node}, inp,
                          expect=ok(dict(u, groups=["g", "system:unauthenticated"]))))
    return cases


# ---------------------------------------------------------------------------------------------
# anonymous: system:anonymous with KEP-4633 path conditions (k8s request/anonymous)
# ---------------------------------------------------------------------------------------------
ANON = user("system:anonymous", "", ["system:unauthenticated"])


def anonymous_cases():
    cases = []
    probes = ["/", "/api", "/healthz", "/healthz/", "/HEALTHZ", "/healthz?verbose=1", "/heal%74hz",
              "/%68ealthz", "//healthz", "/healthz/../api", "/api/../healthz", "/./healthz",
              "/healthz%2F", "/healthz%2f", "/healthz%00", "/healthz;x", "/livez+", "/readyz",
              "/livez", "/livez/ping", "/%FF", "/healthz#frag", "/healthz%3Fx", "/healthz%20",
              "/ healthz", "/readyz?exclude=etcd", "/heal%2574hz", "/api/v1/namespaces"]
    # Paths Go's HTTP server refuses before any handler runs (invalid percent-escapes).
    bad_escapes = ["/healthz%zz", "/healthz%", "/healthz%2"]
    allowed_sets = [
        ("unrestricted", None),
        ("health endpoints", ["/healthz", "/readyz", "/livez"]),
        ("root only", ["/"]),
        ("trailing slash entry", ["/healthz/"]),
        ("encoded entry is literal", ["/heal%74hz"]),
    ]
    def decoded(p):
        path = p.split("?", 1)[0].split("#", 1)[0]
        out = bytearray()
        i = 0
        raw = path.encode()
        while i < len(raw):
            if raw[i] == ord("%"):
                out.append(int(raw[i + 1:i + 3], 16))
                i += 3
            else:
                out.append(raw[i])
                i += 1
        try:
            return out.decode()
        except UnicodeDecodeError:
            return None
    for set_label, paths in allowed_sets:
        node = {"kind": "anonymous"}
        if paths is not None:
            node["paths"] = paths
        for p in probes:
            if p == "/ healthz" or p == "/healthz#frag":
                continue  # not valid request targets for either HTTP stack
            d = decoded(p)
            allowed = paths is None or (d is not None and d in paths)
            expect = ok(ANON) if allowed else not_mine()
            cases.append(case(f"{set_label}: {p}", {"request": node}, req([], path=p), expect=expect))
        for p in bad_escapes:
            allowed = paths is None
            cases.append(case(f"{set_label}: {p}", {"request": node}, req([], path=p),
                              k8s={"result": "bad_request"},
                              kube_authn=ok(ANON) if allowed else not_mine(),
                              reason=("Go's HTTP server answers 400 to a request target with an invalid "
                                      "percent-escape before authentication runs; kube-authn's anonymous "
                                      "authenticator sees the request and treats the path as matching nothing "
                                      "(so a restricted anonymous is not mine)")))
    for label, auds in [("echoes audiences", ["api", "other"]), ("echoes empty audiences", [])]:
        cases.append(case(f"audiences: {label}", {"request": {"kind": "anonymous"}}, req([], audiences=auds),
                          expect=ok(ANON, auds)))
    cases.append(case("audiences: restricted echoes audiences",
                      {"request": {"kind": "anonymous", "paths": ["/livez"]}}, req([], path="/livez", audiences=["api"]),
                      expect=ok(ANON, ["api"])))
    cases.append(case("credentials are ignored", {"request": {"kind": "anonymous"}},
                      req([("Authorization", "Bearer token")]), expect=ok(ANON)))
    return cases


# ---------------------------------------------------------------------------------------------
# audiences: audience-agnostic wrappers (k8s authenticator/audagnostic.go)
# ---------------------------------------------------------------------------------------------
def audiences_cases():
    cases = []
    u = user("test_user")
    implicits = [[], ["api"], ["api", "other"], ["api", "other_api"], ["other", "api"]]
    contexts = [None, [], ["api"], ["api", "other"], ["other_api"], ["api", "other_other"],
                ["other", "api"], ["api", "api"], ["API"]]
    delegates = [("ok", s_user(u)), ("ok with audiences", s_user(u, ["x", "y"])),
                 ("not mine", S_NONE), ("error", s_err("uhoh"))]
    for level in ["request", "token"]:
        arg = ["tok"] if level == "token" else ["/"]
        for implicit, ctx, (dlabel, outcome) in itertools.product(implicits, contexts, delegates):
            inp = {"token": "tok"} if level == "token" else req([])
            if ctx is not None:
                inp["audiences"] = ctx
            node = {"kind": "audience_agnostic", "implicit": implicit, "inner": scripted("d", outcome)}
            if ctx is None:
                # No audiences on the context: the delegate's answer, unchanged.
                calls = {"d": [arg]}
                if dlabel == "ok":
                    expect = ok(u, calls=calls)
                elif dlabel == "ok with audiences":
                    expect = ok(u, ["x", "y"], calls=calls)
                elif dlabel == "not mine":
                    expect = not_mine(calls=calls)
                else:
                    expect = error("uhoh", calls=calls)
            else:
                auds = [a for a in ctx if a in implicit]
                if not auds:
                    expect = not_mine(calls={"d": []})
                else:
                    calls = {"d": [arg]}
                    if dlabel == "ok":
                        expect = ok(u, auds, calls=calls)
                    elif dlabel == "ok with audiences":
                        expect = error('audience agnostic authenticator wrapped an authenticator that returned audiences: ["x" "y"]', calls=calls)
                    elif dlabel == "not mine":
                        expect = not_mine(calls=calls)
                    else:
                        expect = error("uhoh", calls=calls)
            ctx_label = "none" if ctx is None else json.dumps(ctx)
            cases.append(case(f"{level}: implicit {json.dumps(implicit)} ctx {ctx_label} delegate {dlabel}",
                              {level: node}, inp, expect=expect))
    return cases


# ---------------------------------------------------------------------------------------------
# chain: kube-apiserver's assembly (pkg/kubeapiserver/authenticator/config.go; ChainBuilder)
# ---------------------------------------------------------------------------------------------
def chain_cases():
    cases = []
    alice = user("alice", "a1", ["dev"])
    bob = user("bob", "b1", ["system:authenticated"])
    proxy = user("front-proxy-user", "", [], {"scopes": ["x"]})
    tok_a = scripted("ta", S_NONE, tokens={"alice-token": s_user(alice)})
    tok_b = scripted("tb", S_NONE, tokens={"bob-token": s_user(bob), "broken": s_err("backend down")})
    ws = [("Connection", "Upgrade"), ("Upgrade", "websocket")]
    wsp = lambda t: ("Sec-WebSocket-Protocol", P + b64u(t) + ",v4.channel.k8s.io")
    def chain(tokens=(), request=(), anonymous=False, paths=None):
        node = {"kind": "chain", "tokens": list(tokens), "request": list(request)}
        if anonymous:
            node["anonymous"] = {"paths": paths} if paths is not None else {}
        return {"request": node}
    full = chain([tok_a, tok_b], anonymous=True)
    alice_auth = dict(alice, groups=["dev", "system:authenticated"])
    for label, headers, path, expect in [
        ("bearer first token authenticator", [("Authorization", "Bearer alice-token")], "/api", ok(alice_auth)),
        ("bearer second token authenticator", [("Authorization", "Bearer bob-token")], "/api", ok(bob)),
        ("unknown bearer is 401 not anonymous", [("Authorization", "Bearer nope")], "/api", error(E_INVALID_BEARER)),
        ("token error aggregated", [("Authorization", "Bearer broken")], "/api", error("backend down")),
        ("no credentials is anonymous", [], "/api", ok(ANON)),
        ("other scheme is anonymous", [("Authorization", "Digest x")], "/api", ok(ANON)),
        ("websocket token", ws + [wsp("alice-token")], "/api", ok(alice_auth)),
        ("websocket unknown token is 401", ws + [wsp("nope")], "/api", error(E_INVALID_BEARER)),
        ("websocket malformed token is 401", ws + [("Sec-WebSocket-Protocol", P + "a+b,x")], "/api",
         error("invalid base64.bearer.authorization token encoding")),
        ("websocket token alone is 401", ws + [("Sec-WebSocket-Protocol", P + b64u("alice-token"))], "/api",
         error("missing additional subprotocol")),
        ("bearer and bad websocket: bearer wins", ws + [("Authorization", "Bearer alice-token"), ("Sec-WebSocket-Protocol", P + "!,x")], "/api", ok(alice_auth)),
        ("bad bearer and good websocket: websocket wins", ws + [("Authorization", "Bearer nope"), wsp("alice-token")], "/api", ok(alice_auth)),
        ("bad bearer and bad websocket: errors aggregated", ws + [("Authorization", "Bearer nope"), ("Sec-WebSocket-Protocol", P + "!,x")], "/api",
         error("[invalid bearer token, invalid base64.bearer.authorization token encoding]")),
    ]:
        cases.append(case(f"tokens + anonymous: {label}", full, req(headers, path=path), expect=expect))
    cases.append(case("tokens + anonymous: two spaces", full, req([("Authorization", "Bearer  alice-token")], path="/api"),
                      k8s=ok(ANON), kube_authn=error(E_MALFORMED_BEARER), reason=R_FAIL_CLOSED))
    cases.append(case("tokens + anonymous: Bearer alone", full, req([("Authorization", "Bearer")], path="/api"),
                      k8s=ok(ANON), kube_authn=error(E_MALFORMED_BEARER), reason=R_FAIL_CLOSED))
    cases.append(case("tokens + anonymous: two Authorization headers", full,
                      req([("Authorization", "Bearer alice-token"), ("Authorization", "Bearer bob-token")], path="/api"),
                      k8s=ok(alice_auth), kube_authn=error(E_MULTIPLE), reason=R_MULTIPLE))
    cases.append(case("tokens + anonymous: empty then bearer", full,
                      req([("Authorization", ""), ("Authorization", "Bearer alice-token")], path="/api"),
                      k8s=ok(ANON), kube_authn=error(E_MULTIPLE), reason=R_MULTIPLE))
    cases.append(case("tokens + anonymous: non-ascii token", full,
                      req([("Authorization", "Bearer ålice")], path="/api"),
                      k8s=error(E_INVALID_BEARER), kube_authn=error(E_NOT_ASCII), reason=R_NOT_ASCII))

    restricted = chain([tok_a], anonymous=True, paths=["/healthz", "/livez"])
    for label, headers, path, expect in [
        ("allowed path is anonymous", [], "/healthz", ok(ANON)),
        ("other path is not mine", [], "/api", not_mine()),
        ("token still works anywhere", [("Authorization", "Bearer alice-token")], "/api", ok(alice_auth)),
        ("bad token on allowed path is 401", [("Authorization", "Bearer nope")], "/healthz", error(E_INVALID_BEARER)),
    ]:
        cases.append(case(f"restricted anonymous: {label}", restricted, req(headers, path=path), expect=expect))

    no_anon = chain([tok_a])
    for label, headers, expect in [
        ("token", [("Authorization", "Bearer alice-token")], ok(alice_auth)),
        ("no credentials is not mine", [], not_mine()),
        ("bad token", [("Authorization", "Bearer nope")], error(E_INVALID_BEARER)),
    ]:
        cases.append(case(f"no anonymous: {label}", no_anon, req(headers), expect=expect))

    # Request authenticators first (front proxy, client certificate), then tokens.
    front = scripted("proxy", S_NONE)
    with_req = chain([tok_a], request=[scripted("proxy", s_user(proxy))], anonymous=True)
    cases.append(case("request authenticator wins over bearer", with_req,
                      req([("Authorization", "Bearer alice-token")]),
                      expect=ok(dict(proxy, groups=["system:authenticated"]), calls={"proxy": [["/"]], "ta": []})))
    failing_req = chain([tok_a], request=[scripted("cert", s_err("x509: certificate signed by unknown authority"))], anonymous=True)
    cases.append(case("request error silenced by later bearer success", failing_req,
                      req([("Authorization", "Bearer alice-token")]), expect=ok(alice_auth)))
    cases.append(case("request error without other credential is 401", failing_req, req([]),
                      expect=error("x509: certificate signed by unknown authority")))
    cases.append(case("request error and bad token aggregated", failing_req,
                      req([("Authorization", "Bearer nope")]),
                      expect=error("[x509: certificate signed by unknown authority, invalid bearer token]")))
    only_req = chain(request=[front], anonymous=True)
    cases.append(case("request authenticator only, nothing presented", only_req, req([]), expect=ok(ANON)))
    anon_user_token = chain([scripted("t", s_user(user("system:anonymous", "", ["x"])))], anonymous=True)
    cases.append(case("token user named system:anonymous gets no authenticated group", anon_user_token,
                      req([("Authorization", "Bearer t")]), expect=ok(user("system:anonymous", "", ["x"]))))
    cases.append(case("anonymous echoes audiences", full, req([], audiences=["api"]), expect=ok(ANON, ["api"])))
    cases.append(case("token response audiences kept", chain([scripted("t", s_user(alice, ["api"]))]),
                      req([("Authorization", "Bearer t")], audiences=["api"]), expect=ok(alice_auth, ["api"])))

    # kube-apiserver with --token-auth-file and --api-audiences: the token file is wrapped
    # audience-agnostic; anonymous echoes the request's audiences.
    tf = {"kind": "audience_agnostic", "implicit": ["https://kubernetes.default.svc", "api"],
          "inner": {"kind": "token_file", "csv": TOKENFILE_TEST}}
    apiserver = chain([tf, tok_b], anonymous=True, paths=["/healthz", "/readyz", "/livez"])
    u3 = user("user3", "uid3", ["group1", "group2", "system:authenticated"])
    for label, headers, path, auds, expect in [
        ("token file, no audiences", [("Authorization", "Bearer token3")], "/api", None, ok(u3)),
        ("token file, API audience", [("Authorization", "Bearer token3")], "/api", ["api"], ok(u3, ["api"])),
        ("token file, both API audiences in request order", [("Authorization", "Bearer token3")], "/api",
         ["api", "https://kubernetes.default.svc"], ok(u3, ["api", "https://kubernetes.default.svc"])),
        ("token file, foreign audience is 401", [("Authorization", "Bearer token3")], "/api", ["vault"], error(E_INVALID_BEARER)),
        ("second token authenticator still reached", [("Authorization", "Bearer bob-token")], "/api", ["api"], ok(bob)),
        ("token file miss and backend error aggregated", [("Authorization", "Bearer broken")], "/api", ["api"], error("backend down")),
        ("health endpoint is anonymous", [], "/healthz", ["api"], ok(ANON, ["api"])),
        ("API without credentials is not mine", [], "/api", ["api"], not_mine()),
        ("bad token on a health endpoint is 401", [("Authorization", "Bearer nope")], "/livez", ["api"], error(E_INVALID_BEARER)),
    ]:
        cases.append(case(f"kube-apiserver token file + audiences: {label}", apiserver,
                          req(headers, path=path, audiences=auds), expect=expect))

    cases.append(case("only anonymous", chain(anonymous=True), req([("Authorization", "Bearer x")]), expect=ok(ANON)))
    cases.append(case("request authenticator only, well-formed bearer token is not mine", only_req,
                      req([("Authorization", "Bearer x")]), expect=ok(ANON)))
    for label, setup in [("only anonymous", chain(anonymous=True)),
                         ("request authenticator only", only_req)]:
        cases.append(case(f"{label}, malformed bearer header", setup,
                          req([("Authorization", "Bearer  x")]),
                          k8s=ok(ANON), kube_authn=error(E_MALFORMED_BEARER), reason=R_NO_TOKEN_AUTHN))
    cases.append(case("only restricted anonymous, other path", chain(anonymous=True, paths=["/livez"]),
                      req([], path="/api"), expect=not_mine()))
    cases.append(case("empty chain", chain(), req([("Authorization", "Bearer anything")]),
                      k8s={"result": "disabled"}, kube_authn=not_mine(), reason=R_EMPTY_CHAIN))
    cases.append(case("empty chain, no credentials", chain(), req([]),
                      k8s={"result": "disabled"}, kube_authn=not_mine(), reason=R_EMPTY_CHAIN))
    return cases


# ---------------------------------------------------------------------------------------------
# token_file: --token-auth-file CSV rules (k8s token/tokenfile)
# ---------------------------------------------------------------------------------------------
TOKENFILE_TEST = ("\n"
                  "token1,user1,uid1\n"
                  "token2,user2,uid2\n"
                  'token3,user3,uid3,"group1,group2"\n'
                  'token4,user4,uid4,"group2"\n'
                  "token5,user5,uid5,group5\n"
                  "token6,user6,uid6,group5,otherdata\n"
                  'token7,user7,uid7,"group1,group2",otherdata\n')


def token_file_cases():
    cases = []
    tf = lambda csv: {"token": {"kind": "token_file", "csv": csv}}
    base = tf(TOKENFILE_TEST)
    for tok, want in [
        ("token1", user("user1", "uid1")), ("token2", user("user2", "uid2")),
        ("token3", user("user3", "uid3", ["group1", "group2"])), ("token4", user("user4", "uid4", ["group2"])),
        ("token5", user("user5", "uid5", ["group5"])), ("token6", user("user6", "uid6", ["group5"])),
        ("token7", user("user7", "uid7", ["group1", "group2"])),
    ]:
        cases.append(case(f"TestTokenFile: {tok}", base, {"token": tok}, expect=ok(want)))
    for tok in ["token8", "", "TOKEN1", "token1 ", " token1", "token", "user1", "token1,user1,uid1"]:
        cases.append(case(f"TestTokenFile: miss {json.dumps(tok)}", base, {"token": tok}, expect=not_mine()))
    rules = [
        ("empty groups column is one empty group", "t,u,id,\n", "t", ok(user("u", "id", [""]))),
        ("empty entries in groups kept", 't,u,id,"a,,b"\n', "t", ok(user("u", "id", ["a", "", "b"]))),
        ("groups not trimmed", 't,u,id," a , b "\n', "t", ok(user("u", "id", [" a ", " b "]))),
        ("leading space kept in name", "t, u,id\n", "t", ok(user(" u", "id"))),
        ("trailing space kept in token", "t ,u,id\n", "t ", ok(user("u", "id"))),
        ("trailing space token miss", "t ,u,id\n", "t", not_mine()),
        ("hash line is a token", "#t,u,id\n", "#t", ok(user("u", "id"))),
        ("empty user and uid allowed", "t,,\n", "t", ok(user("", ""))),
        ("quoted token with comma", '"a,b",u,id\n', "a,b", ok(user("u", "id"))),
        ("quoted field with escaped quote", '"a""b",u,id\n', 'a"b', ok(user("u", "id"))),
        ("quoted field with newline", '"a\nb",u,id\n', "a\nb", ok(user("u", "id"))),
        ("crlf line endings", "t1,u1,id1\r\nt2,u2,id2\r\n", "t2", ok(user("u2", "id2"))),
        ("crlf does not leak into uid", "t1,u1,id1\r\n", "t1", ok(user("u1", "id1"))),
        ("blank lines skipped", "\n\nt,u,id\n\n", "t", ok(user("u", "id"))),
        ("no final newline", "t,u,id", "t", ok(user("u", "id"))),
        ("duplicate token: last wins", "t,first,1\nt,second,2\n", "t", ok(user("second", "2"))),
        ("empty token row skipped", ",u,id\nt,v,id2\n", "t", ok(user("v", "id2"))),
        ("empty token never matches", ",u,id\n", "", not_mine()),
        ("bom is part of the first token", "\ufefft,u,id\n", "\ufefft", ok(user("u", "id"))),
        ("bom token miss without bom", "\ufefft,u,id\n", "t", not_mine()),
        ("extra columns ignored", "t,u,id,g,x,y,z\n", "t", ok(user("u", "id", ["g"]))),
        ("utf-8 fields", "tökén,üser,ïd,grüppe\n", "tökén", ok(user("üser", "ïd", ["grüppe"]))),
        ("varying column counts", "a,u1,1\nb,u2,2,g\n", "b", ok(user("u2", "2", ["g"]))),
        ("empty file has no tokens", "", "t", not_mine()),
        ("only empty token rows", ",user5,uid5\n", "", not_mine()),
        ("quoted empty token skipped", '"",u,id\n', "", not_mine()),
        ("token with spaces inside", "a b,u,id\n", "a b", ok(user("u", "id"))),
    ]
    for label, csv, tok, expect in rules:
        cases.append(case(f"rule: {label}", tf(csv), {"token": tok}, expect=expect))
    bad = [
        ("TestBadTokenFile", "token1,user1,uid1\ntoken2,user2,uid2\ntoken3,user3\ntoken4\n", "must have at least 3 columns (token, user name, user uid), found 2"),
        ("TestInsufficientColumnsTokenFile", "token4\n", "must have at least 3 columns (token, user name, user uid), found 1"),
        ("two columns", "t,u\n", "found 2"),
        ("hash comment line", "# tokens\nt,u,id\n", "found 1"),
        ("line of spaces", "t,u,id\n   \n", "found 1"),
        ("bare quote", 't,u"x,id\n', 'bare " in non-quoted-field'),
        ("unterminated quote", 't,"u,id\n', 'extraneous or missing " in quoted-field'),
        ("text after closing quote", 't,"u"x,id\n', 'extraneous or missing " in quoted-field'),
    ]
    for label, csv, contains in bad:
        cases.append(case(f"bad file: {label}", tf(csv), {"token": "t"}, expect=config_error(contains)))
    # Through bearer, with kube-apiserver's audience-agnostic wrapping.
    wrapped = {"request": {"kind": "bearer", "token": {"kind": "audience_agnostic", "implicit": ["api"],
                                                       "inner": {"kind": "token_file", "csv": TOKENFILE_TEST}}}}
    for label, tok, auds, expect in [
        ("hit, no audiences", "token3", None, ok(user("user3", "uid3", ["group1", "group2"]))),
        ("hit, api audience", "token3", ["api"], ok(user("user3", "uid3", ["group1", "group2"]), ["api"])),
        ("hit, other audience is 401", "token3", ["other"], error(E_INVALID_BEARER)),
        ("miss", "token9", ["api"], error(E_INVALID_BEARER)),
    ]:
        cases.append(case(f"via bearer: {label}", wrapped, req([("Authorization", f"Bearer {tok}")], audiences=auds),
                          expect=expect))
    return cases


# ---------------------------------------------------------------------------------------------
# password_file: --basic-auth-file CSV rules (removed k8s passwordfile; oracle: apiserver v0.18)
# ---------------------------------------------------------------------------------------------
PASSWORDFILE_TEST = TOKENFILE_TEST.replace("token", "password")


def password_file_cases():
    cases = []
    pf = lambda csv: {"password": {"kind": "password_file", "csv": csv}}
    base = pf(PASSWORDFILE_TEST)
    for u, p, want in [
        ("user1", "password1", user("user1", "uid1")), ("user2", "password2", user("user2", "uid2")),
        ("user1", "password2", None), ("user2", "password1", None),
        ("user3", "password3", user("user3", "uid3", ["group1", "group2"])),
        ("user4", "password4", user("user4", "uid4", ["group2"])),
        ("user5", "password5", user("user5", "uid5", ["group5"])),
        ("user6", "password6", user("user6", "uid6", ["group5"])),
        ("user7", "password7", user("user7", "uid7", ["group1", "group2"])),
        ("user7", "passwordbad", None), ("userbad", "password7", None), ("user8", "password8", None),
        ("user1", "", None), ("", "password1", None), ("USER1", "password1", None),
        ("user1", "password1 ", None), ("user1", "password", None), ("user1", "password11", None),
    ]:
        cases.append(case(f"TestPasswordFile: ({u}, {p})", base, {"user": u, "password": p},
                          expect=ok(want) if want else not_mine()))
    rules = [
        ("empty password is a password", "p,u,id\n,e,id2\n", ("e", ""), ok(user("e", "id2"))),
        ("empty password wrong guess", ",e,id\n", ("e", "x"), not_mine()),
        ("duplicate user: last wins", "p1,u,1\np2,u,2\n", ("u", "p2"), ok(user("u", "2"))),
        ("duplicate user: first password no longer works", "p1,u,1\np2,u,2\n", ("u", "p1"), not_mine()),
        ("groups parsed like the token file", 'p,u,id,"a,,b"\n', ("u", "p"), ok(user("u", "id", ["a", "", "b"]))),
        ("empty groups column", "p,u,id,\n", ("u", "p"), ok(user("u", "id", [""]))),
        ("password with comma quoted", '"p,q",u,id\n', ("u", "p,q"), ok(user("u", "id"))),
        ("password with colon", "p:q,u,id\n", ("u", "p:q"), ok(user("u", "id"))),
        ("leading space kept in user", "p, u,id\n", (" u", "p"), ok(user(" u", "id"))),
        ("user name is case-sensitive", "p,u,id\n", ("U", "p"), not_mine()),
        ("empty user name", "p,,id\n", ("", "p"), ok(user("", "id"))),
        ("utf-8 password", "pässwörd,u,id\n", ("u", "pässwörd"), ok(user("u", "id"))),
        ("crlf", "p,u,id\r\n", ("u", "p"), ok(user("u", "id"))),
        ("prefix of password", "secret,u,id\n", ("u", "secre"), not_mine()),
        ("longer password", "secret,u,id\n", ("u", "secrets"), not_mine()),
    ]
    for label, csv, (u, p), expect in rules:
        cases.append(case(f"rule: {label}", pf(csv), {"user": u, "password": p}, expect=expect))
    for label, csv, contains in [
        ("TestBadPasswordFile", "password1,user1,uid1\npassword2,user2,uid2\npassword3,user3\npassword4\n",
         "must have at least 3 columns (password, user name, user uid), found 2"),
        ("TestInsufficientColumnsPasswordFile", "password4\n", "must have at least 3 columns (password, user name, user uid), found 1"),
        ("bare quote", 'p,u"x,id\n', 'bare " in non-quoted-field'),
    ]:
        cases.append(case(f"bad file: {label}", pf(csv), {"user": "u", "password": "p"}, expect=config_error(contains)))
    via = {"request": {"kind": "basic", "password": {"kind": "password_file", "csv": PASSWORDFILE_TEST}}}
    for label, cred, expect in [
        ("right password", "user3:password3", ok(user("user3", "uid3", ["group1", "group2"]))),
        ("wrong password", "user3:password1", error(E_INVALID_PASSWORD)),
        ("unknown user", "nobody:password1", error(E_INVALID_PASSWORD)),
    ]:
        cases.append(case(f"via basic: {label}", via, req([("Authorization", "Basic " + b64(cred))]), expect=expect))
    return cases


# ---------------------------------------------------------------------------------------------
# anytoken: --insecure-allow-any-token (removed in 1.8; lived in k8s.io/kubernetes, not
# importable from a module proxy release that builds today): expectations from the reference
# notes (k8s-request-authn.md §5.3, anytoken_test.go), marked "oracle": "reference".
# ---------------------------------------------------------------------------------------------
REF_ANYTOKEN = ("k8s-request-authn.md §5.3: kubernetes plugin/pkg/auth/authenticator/token/anytoken "
                "(removed in 1.8 by kubernetes#49045); no importable Go module, so no Go oracle")


def anytoken_cases():
    cases = []
    any_ = {"token": {"kind": "anytoken"}}
    for tok, want in [
        ("joe", user("joe")),
        ("scheme/joe/", user("scheme/joe")),
        ("joe/group1,group2", user("joe", "", ["group1", "group2"])),
        ("scheme/joe/group1,group2", user("scheme/joe", "", ["group1", "group2"])),
        ("a/b/c", user("a/b", "", ["c"])),
        ("/", user("")),
        ("/g", user("", "", ["g"])),
        ("joe/,", user("joe", "", ["", ""])),
        ("joe/g1,,g2", user("joe", "", ["g1", "", "g2"])),
        ("joe/ g1 , g2 ", user("joe", "", [" g1 ", " g2 "])),
        ("system:masters", user("system:masters")),
        ("mallory/system:masters", user("mallory", "", ["system:masters"])),
        ("joe,x", user("joe,x")),
    ]:
        c = case(f"TestAnyToken: {json.dumps(tok)}", any_, {"token": tok}, expect=ok(want))
        c["oracle"] = "reference"
        c["reference"] = REF_ANYTOKEN
        cases.append(c)
    table = scripted("table", S_NONE, tokens={"alice-token": s_user(user("alice", "a1", ["dev"]))})
    chain = {"request": {"kind": "chain", "tokens": [table, {"kind": "anytoken"}], "anonymous": {}}}
    for label, headers, expect in [
        ("real token first", [("Authorization", "Bearer alice-token")],
         ok(user("alice", "a1", ["dev", "system:authenticated"]), calls={"table": [["alice-token"]]})),
        ("any other token is believed", [("Authorization", "Bearer mallory/system:masters")],
         ok(user("mallory", "", ["system:masters", "system:authenticated"]), calls={"table": [["mallory/system:masters"]]})),
        ("no token is anonymous", [], ok(ANON, calls={"table": []})),
    ]:
        c = case(f"last in the chain: {label}", chain, req(headers), expect=expect)
        c["oracle"] = "reference"
        c["reference"] = REF_ANYTOKEN
        cases.append(c)
    return cases


# ---------------------------------------------------------------------------------------------
# filter: the whole WithAuthentication filter (k8s endpoints/filters/authentication.go) and
# kube-authn's AuthenticationLayer: who reaches the handler, which headers it still sees, and
# the 401 response.
# ---------------------------------------------------------------------------------------------
COMPACT_401 = ('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
               '"message":"Unauthorized","reason":"Unauthorized","code":401}\n')
PRETTY_401 = ('{\n  "kind": "Status",\n  "apiVersion": "v1",\n  "metadata": {},\n  "status": "Failure",\n'
              '  "message": "Unauthorized",\n  "reason": "Unauthorized",\n  "code": 401\n}')


def handler(u, headers=None):
    out = {"result": "handler", "user": u}
    if headers is not None:
        out["headers"] = headers
    return out


# The 401 Status in Kubernetes' protobuf envelope (`k8s\0` + runtime.Unknown{v1 Status}), as
# k8s.io/apiserver writes it for `Accept: application/vnd.kubernetes.protobuf`.
PROTOBUF_401 = {"hex": "6b3873000a0c0a027631120653746174757312300a060a0012001a0012074661696c7572651a0c556e617574686f72697a6564220c556e617574686f72697a65643091031a002200"}
YAML_401 = "apiVersion: v1\ncode: 401\nkind: Status\nmessage: Unauthorized\nmetadata: {}\nreason: Unauthorized\nstatus: Failure\n"


def rejected(body=COMPACT_401, content_type="application/json"):
    return {"result": "rejected", "status": 401, "content_type": content_type, "body": body}


def filter_cases():
    cases = []
    alice = user("alice", "a1", ["dev"])
    alice_auth = dict(alice, groups=["dev", "system:authenticated"])
    table = scripted("table", S_NONE, tokens={
        "alice-token": s_user(alice),
        "aud-api": s_user(alice, ["api"]),
        "aud-other": s_user(alice, ["other"]),
    })
    def filt(anonymous=True, auds=None, tokens=None):
        chain = {"kind": "chain", "tokens": [table] if tokens is None else tokens, "request": []}
        if anonymous:
            chain["anonymous"] = {}
        node = {"chain": chain}
        if auds is not None:
            node["api_audiences"] = auds
        return {"filter": node}
    std = ["authorization", "x-remote-user", "x-remote-uid", "x-remote-group", "x-remote-extra-scopes",
           "x-remote-extra-acme.com%2fproject", "x-remote-group-1", "x-group-remote", "x-remote-userx"]
    identity = [("X-Remote-User", "eve"), ("X-Remote-Uid", "666"), ("X-Remote-Group", "system:masters"),
                ("X-Remote-Extra-Scopes", "all"), ("X-Remote-Extra-Acme.com%2Fproject", "x"),
                ("X-Remote-Group-1", "kept"), ("X-Group-Remote", "kept"), ("X-Remote-Userx", "kept")]
    kept = {"x-remote-group-1": ["kept"], "x-group-remote": ["kept"], "x-remote-userx": ["kept"]}
    cleared = {h: kept.get(h, []) for h in std}
    f = filt()
    for label, headers, expect in [
        ("valid bearer reaches the handler without Authorization", [("Authorization", "Bearer alice-token")],
         handler(alice_auth, {"authorization": []})),
        ("identity headers stripped after bearer success", [("Authorization", "Bearer alice-token")] + identity,
         handler(alice_auth, cleared)),
        ("anonymous request", [], handler(ANON, {"authorization": []})),
        ("identity headers stripped from anonymous requests", identity, handler(ANON, cleared)),
        ("unconfigured Basic stripped from an anonymous request", [("Authorization", "Basic " + b64("u:p"))],
         handler(ANON, {"authorization": []})),
        ("other scheme stripped from an anonymous request", [("Authorization", "Digest x")],
         handler(ANON, {"authorization": []})),
        ("unknown token is a 401", [("Authorization", "Bearer nope")], rejected()),
        ("unknown token, curl gets pretty JSON", [("Authorization", "Bearer nope"), ("User-Agent", "curl/8.5.0")],
         rejected(PRETTY_401)),
        ("unknown token, Wget gets pretty JSON", [("Authorization", "Bearer nope"), ("User-Agent", "Wget/1.21")],
         rejected(PRETTY_401)),
        ("unknown token, browser gets pretty JSON", [("Authorization", "Bearer nope"), ("User-Agent", "Mozilla/5.0 (X11)")],
         rejected(PRETTY_401)),
        ("unknown token, kubectl gets compact JSON", [("Authorization", "Bearer nope"), ("User-Agent", "kubectl/v1.31.0 (linux/amd64)")],
         rejected()),
        ("websocket token protocol removed", [("Connection", "Upgrade"), ("Upgrade", "websocket"),
                                             ("Sec-WebSocket-Protocol", P + b64u("alice-token") + ", v4.channel.k8s.io")],
         handler(alice_auth, {"sec-websocket-protocol": ["v4.channel.k8s.io"]})),
        ("websocket protocols rejoined without spaces", [("Connection", "Upgrade"), ("Upgrade", "websocket"),
                                                         ("Sec-WebSocket-Protocol", P + b64u("alice-token")),
                                                         ("Sec-WebSocket-Protocol", "a, b")],
         handler(alice_auth, {"sec-websocket-protocol": ["a,b"]})),
    ]:
        cases.append(case(f"tokens + anonymous: {label}", f, req(headers, path="/api/v1/namespaces"), expect=expect))
    for label, path, headers, expect in [
        ("pretty=true", "/api/v1/namespaces?pretty=true", [("Authorization", "Bearer nope")], rejected(PRETTY_401)),
        ("pretty=1", "/api/v1/namespaces?pretty=1", [("Authorization", "Bearer nope")], rejected(PRETTY_401)),
        ("pretty=false beats curl", "/api/v1/namespaces?pretty=false", [("Authorization", "Bearer nope"), ("User-Agent", "curl/8.5.0")], rejected()),
        ("Accept: application/json", "/api/v1/namespaces", [("Authorization", "Bearer nope"), ("Accept", "application/json")], rejected()),
        ("Accept: *", "/api/v1/namespaces", [("Authorization", "Bearer nope"), ("Accept", "*")], rejected()),
        ("Accept: application/*", "/api/v1/namespaces", [("Authorization", "Bearer nope"), ("Accept", "application/*")], rejected()),
        ("Accept with no type the server writes gets WriteRawJSON's indented form", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "text/plain")], rejected(PRETTY_401)),
        ("Accept types are case-sensitive", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "Application/JSON")], rejected(PRETTY_401)),
        ("Accept asking for a Table conversion is not acceptable", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")], rejected(PRETTY_401)),
        ("Accept: a conversion, then plain JSON", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io, application/json")], rejected()),
        ("Accept with pretty=1", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/json;pretty=1")], rejected(PRETTY_401)),
        ("Accept with pretty=true (only 1 counts)", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/json;pretty=true")], rejected()),
        ("Accept: the higher q decides", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/json;q=0.5, application/json;pretty=1;q=0.9")], rejected(PRETTY_401)),
        ("Accept: a specific type sorts before */* whatever its q (goautoneg's Less)", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "*/*;pretty=1, application/json;q=0.5")], rejected()),
        ("Accept: text/ (no subtype) is skipped, the wildcard after it serves", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "text/, */*;pretty=1")], rejected(PRETTY_401)),
        ("Accept: a/b/ is the type a/b", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/json/;pretty=1")], rejected(PRETTY_401)),
        ("Accept: a q that does not parse is 0", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/json;q= 0.9;pretty=1, application/json;q=0.1")], rejected()),
        ("Accept: prometheus' list ends in */*", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")], rejected()),
        ("Accept: application/yaml", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/yaml")], rejected(YAML_401, "application/yaml")),
        ("Accept: application/yaml;pretty=1 (YAML has no pretty form)", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/yaml;pretty=1")], rejected(YAML_401, "application/yaml")),
        ("Accept: yaml preferred over json by q", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/json;q=0.5, application/yaml")], rejected(YAML_401, "application/yaml")),
        ("Accept: protobuf", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/vnd.kubernetes.protobuf")],
         rejected(PROTOBUF_401, "application/vnd.kubernetes.protobuf")),
        ("Accept: protobuf, then JSON", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/vnd.kubernetes.protobuf, application/json")],
         rejected(PROTOBUF_401, "application/vnd.kubernetes.protobuf")),
        ("Accept: protobuf watch stream (protobuf has a stream serializer)", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/vnd.kubernetes.protobuf;stream=watch")],
         rejected(PROTOBUF_401, "application/vnd.kubernetes.protobuf")),
        ("Accept: yaml watch stream is not acceptable (no stream serializer)", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/yaml;stream=watch")], rejected(PRETTY_401)),
        ("Accept: a server version is not acceptable", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/json;sv=v1")], rejected(PRETTY_401)),
        ("Accept: an empty server version is", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/json;sv=")], rejected()),
        # goautoneg drops `k=` (nothing after the first `=`) and keeps `k=v=` as `v`.
        ("Accept: an empty q is dropped, not 0", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/yaml;q=, application/json;q=0.5")], rejected(YAML_401, "application/yaml")),
        ("Accept: an empty as= is dropped, not a conversion", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/yaml;as=")], rejected(YAML_401, "application/yaml")),
        ("Accept: an empty g= is dropped, yaml still first", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/yaml;g=, application/json")], rejected(YAML_401, "application/yaml")),
        ("Accept: q=0.5= is q=0.5", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/json;q=0.5=, application/yaml;q=0.9")], rejected(YAML_401, "application/yaml")),
        ("Accept: q=0.5= is q=0.5, json first", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/yaml;q=0.5=,application/json;q=0.9")], rejected()),
        ("Accept: pretty=1= is pretty=1", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/json;pretty=1=")], rejected(PRETTY_401)),
        ("Accept: q=0.5=1 is skipped (q stays 1)", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/yaml;q=0.5=1, application/json;q=0.9")], rejected(YAML_401, "application/yaml")),
        ("Accept: yaml from a curl User-Agent is not indented", "/api/v1/namespaces",
         [("Authorization", "Bearer nope"), ("Accept", "application/yaml"), ("User-Agent", "curl/8.5.0")],
         rejected(YAML_401, "application/yaml")),
        ("401 on a non-resource path", "/healthz", [("Authorization", "Bearer nope")], rejected()),
        ("401 on an API group path", "/apis/apps/v1/deployments", [("Authorization", "Bearer nope")], rejected()),
    ]:
        cases.append(case(f"401 body: {label}", f, req(headers, path=path), expect=expect))
    na = filt(anonymous=False)
    cases.append(case("no anonymous: no credentials is a 401", na, req([], path="/api"), expect=rejected()))
    cases.append(case("no anonymous: valid token", na, req([("Authorization", "Bearer alice-token")], path="/api"),
                      expect=handler(alice_auth, {"authorization": []})))
    aud = filt(auds=["api"])
    for label, tok, expect in [
        ("token validated for the API audience", "aud-api", handler(alice_auth)),
        ("token for another audience is a 401", "aud-other", rejected()),
        ("audience-unaware token accepted", "alice-token", handler(alice_auth)),
    ]:
        cases.append(case(f"api audiences: {label}", aud, req([("Authorization", f"Bearer {tok}")], path="/api"), expect=expect))
    cases.append(case("api audiences: anonymous accepted", aud, req([], path="/api"), expect=handler(ANON)))
    cases.append(case("malformed bearer with anonymous", f, req([("Authorization", "Bearer  alice-token")], path="/api"),
                      k8s=handler(ANON, {"authorization": []}), kube_authn=rejected(), reason=R_FAIL_CLOSED))
    cases.append(case("two Authorization headers with anonymous", f,
                      req([("Authorization", "Bearer alice-token"), ("Authorization", "Bearer x")], path="/api"),
                      k8s=handler(alice_auth, {"authorization": []}), kube_authn=rejected(), reason=R_MULTIPLE))
    empty = filt(anonymous=False, tokens=[])
    cases.append(case("empty chain", empty, req([("Authorization", "Bearer x")], path="/api"),
                      k8s=handler(None, {"authorization": ["Bearer x"]}), kube_authn=rejected(), reason=R_EMPTY_CHAIN))
    return cases


# ---------------------------------------------------------------------------------------------
# x509: --client-ca-file (k8s request/x509 with CommonNameUserConversion). Certificates come
# from conformance/pki.py: fixed keys, serials and dates, deterministic signatures.
# ---------------------------------------------------------------------------------------------
CRED_ID = "authentication.kubernetes.io/credential-id"
R_X509_CONTROL = ("kube-authn refuses control characters (NUL, CR, LF, ...) in a certificate's CN, O "
                  "or UID: they would reach audit logs and RBAC names verbatim; Go copies them "
                  "(src/x509/mod.rs; docs/compatibility.md)")
R_X509_CA_LEAF = ("kube-authn refuses a client certificate with basicConstraints cA=TRUE unless it is "
                  "itself in the CA bundle (webpki's CaUsedAsEndEntity); Go accepts a CA certificate "
                  "as the leaf (src/x509/mod.rs; docs/compatibility.md)")
R_X509_BAD_SIGNATURE_TEXT = ("same outcome (an error, so a 401), different text: webpki reports the candidate "
                             "issuer's bad signature; Go reports an unknown authority with the signature failure "
                             "as a hint. The text only reaches logs (docs/compatibility.md)")
R_X509_RSA_SMALL = ("kube-authn refuses RSA keys below 2048 bits anywhere in the chain; Go accepts "
                    "1024 (src/x509/verify.rs; docs/compatibility.md)")


def peer(*certs):
    """A request over TLS presenting `certs` (leaf first); no certs = TLS without a client
    certificate."""
    i = req([])
    i["peer_chain"] = [c.pem for c in certs]
    return i


def x509_user(leaf, name, groups=(), uid=""):
    return user(name, uid, groups, {CRED_ID: [leaf.credential_id()]})


def x509_cases():
    import pki
    from cryptography.x509.name import _ASN1Type
    cases = []
    root = pki.ca("conformance-root")
    other = pki.ca("conformance-other-root")
    # Same subject as root, another key: a forged issuer.
    impostor = pki.ca("conformance-root", key_label="conformance-root-impostor")
    setup = {"request": {"kind": "x509", "ca": root.pem}}
    serial = iter(range(1000, 100000))

    def leaf(*attrs, issuer=root, **kw):
        return pki.issue(pki.name(*attrs), next(serial), f"leaf-{attrs}-{kw.get('alg', '')}",
                         issuer=issuer, **kw)

    def fail(c, reason):
        return error(f"verifying certificate {c.identifier()} failed: {reason}")

    def fail_contains(c, reason):
        return {"result": "error", "error_contains": f"verifying certificate {c.identifier()} failed: {reason}"}

    def cannot_sign(cn):
        return x509_cannot_sign(cn)

    # Subject mapping.
    for label, attrs, nm, groups, uid in [
        ("CN only", [("CN", "alice")], "alice", [], ""),
        ("CN and one O", [("CN", "alice"), ("O", "dev")], "alice", ["dev"], ""),
        ("O in subject order", [("O", "b"), ("CN", "alice"), ("O", "a"), ("O", "c")], "alice", ["b", "a", "c"], ""),
        ("system:masters", [("CN", "kubernetes-admin"), ("O", "system:masters")], "kubernetes-admin", ["system:masters"], ""),
        ("node identity", [("CN", "system:node:worker-1"), ("O", "system:nodes")], "system:node:worker-1", ["system:nodes"], ""),
        ("duplicate O kept", [("CN", "alice"), ("O", "g"), ("O", "g")], "alice", ["g", "g"], ""),
        ("empty O kept", [("CN", "alice"), ("O", "")], "alice", [""], ""),
        ("O with comma", [("CN", "alice"), ("O", "a,b")], "alice", ["a,b"], ""),
        ("two CNs: the last wins", [("CN", "first"), ("CN", "second")], "second", [], ""),
        ("three CNs: the last wins", [("CN", "a"), ("O", "g"), ("CN", "b"), ("CN", "c")], "c", ["g"], ""),
        ("empty CN after a CN", [("CN", "first"), ("CN", "")], None, None, None),
        ("multi-valued RDN", [[("CN", "alice"), ("O", "dev")]], "alice", ["dev"], ""),
        ("OU, C, L and email ignored", [("C", "DE"), ("L", "Berlin"), ("OU", "ops"), ("CN", "alice"), ("EMAIL", "a@example.org")], "alice", [], ""),
        ("serialNumber attribute ignored", [("CN", "alice"), ("SERIAL", "42")], "alice", [], ""),
        ("X.500 userid (0.9.2342.19200300.100.1.1) is not the UID", [("CN", "alice"), ("X500UID", "u-1")], "alice", [], ""),
        ("CN with spaces kept", [("CN", " alice smith ")], " alice smith ", [], ""),
        ("utf-8 CN", [("CN", "jürgen"), ("O", "entwickler")], "jürgen", ["entwickler"], ""),
        ("CN with slash and colon", [("CN", "system:serviceaccount:ns/x")], "system:serviceaccount:ns/x", [], ""),
        ("printable string CN", [("CN", ("alice", _ASN1Type.PrintableString)), ("O", ("dev", _ASN1Type.PrintableString))], "alice", ["dev"], ""),
        ("IA5 string O", [("CN", "alice"), ("O", ("dev", _ASN1Type.IA5String))], "alice", ["dev"], ""),
        ("BMP string CN", [("CN", ("alice", _ASN1Type.BMPString))], "alice", [], ""),
        ("UID attribute", [("CN", "alice"), ("UID", "alice-uid-1")], "alice", [], "alice-uid-1"),
        ("UID before CN", [("UID", "u-1"), ("CN", "alice"), ("O", "g")], "alice", ["g"], "u-1"),
        ("UID with spaces", [("CN", "alice"), ("UID", " u 1 ")], "alice", [], " u 1 "),
        ("UID as printable string", [("CN", "alice"), ("UID", ("u-1", _ASN1Type.PrintableString))], "alice", [], "u-1"),
        ("no CN", [("O", "dev")], None, None, None),
        ("empty CN", [("CN", ""), ("O", "dev")], None, None, None),
        ("empty CN with UID", [("CN", ""), ("UID", "u-1")], None, None, None),
        ("no subject at all", [], None, None, None),
    ]:
        c = leaf(*attrs)
        expect = not_mine() if nm is None else ok(x509_user(c, nm, groups, uid))
        cases.append(case(f"subject: {label}", setup, peer(c), expect=expect))
    for label, attrs, text in [
        ("two UIDs", [("CN", "alice"), ("UID", "a"), ("UID", "b")], "expected 1 UID, but found multiple: [a b]"),
        ("three UIDs", [("CN", "alice"), ("UID", "a"), ("UID", "b"), ("UID", "c")], "expected 1 UID, but found multiple: [a b c]"),
        ("two equal UIDs", [("CN", "alice"), ("UID", "a"), ("UID", "a")], "expected 1 UID, but found multiple: [a a]"),
        ("empty UID", [("CN", "alice"), ("UID", "")], "UID cannot be an empty string"),
    ]:
        cases.append(case(f"subject: {label}", setup, peer(leaf(*attrs)), expect=error(text)))
    for label, attrs in [
        ("newline in CN", [("CN", "alice\nadmin")]),
        ("NUL in O", [("CN", "alice"), ("O", "dev\x00")]),
        ("carriage return in UID", [("CN", "alice"), ("UID", "u\r1")]),
    ]:
        c = leaf(*attrs)
        d = dict(attrs)
        cases.append(case(f"subject: {label}", setup, peer(c),
                          k8s=ok(x509_user(c, d["CN"], [v for a, v in attrs if a == "O"], d.get("UID", ""))),
                          kube_authn=error("x509: subject attribute contains a control character"),
                          reason=R_X509_CONTROL))

    # Key algorithms: each signs its own CA and leaf.
    for alg in ["ed25519", "p256", "rsa2048", "rsa3072"]:
        r = pki.ca(f"root-{alg}", alg=alg)
        c = leaf(("CN", f"user-{alg}"), ("O", "g"), issuer=r, alg=alg)
        s = {"request": {"kind": "x509", "ca": r.pem}}
        cases.append(case(f"algorithm: {alg} root and leaf", s, peer(c), expect=ok(x509_user(c, f"user-{alg}", ["g"]))))
        cases.append(case(f"algorithm: {alg} leaf, other root", setup, peer(c),
                          expect=fail(c, "x509: certificate signed by unknown authority")))
    # Mixed: P-256 leaf under an RSA root.
    r = pki.ca("root-rsa2048", alg="rsa2048")
    c = leaf(("CN", "mixed"), issuer=r, alg="p256")
    cases.append(case("algorithm: p256 leaf under rsa2048 root", {"request": {"kind": "x509", "ca": r.pem}},
                      peer(c), expect=ok(x509_user(c, "mixed"))))
    r = pki.ca("root-rsa1024", alg="rsa1024")
    c = leaf(("CN", "small"), issuer=r, alg="p256")
    cases.append(case("algorithm: rsa1024 root", {"request": {"kind": "x509", "ca": r.pem}}, peer(c),
                      k8s=ok(x509_user(c, "small")),
                      kube_authn=fail(c, "x509: certificate signature is invalid, or the issuer's key is not accepted (RSA keys must be 2048 to 8192 bits)"),
                      reason=R_X509_RSA_SMALL))

    # Presence.
    alice = leaf(("CN", "alice"), ("O", "dev"))
    cases.append(case("presence: no TLS", setup, req([]), expect=not_mine()))
    cases.append(case("presence: TLS without a client certificate", setup, peer(), expect=not_mine()))
    cases.append(case("presence: Authorization header is not a certificate", setup,
                      req([("Authorization", "Bearer token")]), expect=not_mine()))

    # Trust.
    cases.append(case("trust: signed by the CA", setup, peer(alice), expect=ok(x509_user(alice, "alice", ["dev"]))))
    untrusted = leaf(("CN", "alice"), ("O", "dev"), issuer=other)
    cases.append(case("trust: signed by another CA", setup, peer(untrusted),
                      expect=fail(untrusted, "x509: certificate signed by unknown authority")))
    cases.append(case("trust: another CA presented in the chain", setup, peer(untrusted, other),
                      expect=fail(untrusted, "x509: certificate signed by unknown authority")))
    forged = leaf(("CN", "alice"), issuer=impostor)
    cases.append(case("trust: issuer with the CA's name but another key", setup, peer(forged),
                      k8s=fail(forged, "x509: certificate signed by unknown authority (possibly because of "
                                       "\"x509: Ed25519 verification failure\" while trying to verify candidate "
                                       "authority certificate \"conformance-root\")"),
                      kube_authn=fail(forged, "x509: certificate signature is invalid, or the issuer's key is not "
                                              "accepted (RSA keys must be 2048 to 8192 bits)"),
                      reason=R_X509_BAD_SIGNATURE_TEXT))
    selfsigned = pki.issue(pki.name(("CN", "alice")), 7, "self-signed-alice")
    cases.append(case("trust: self-signed leaf", setup, peer(selfsigned),
                      expect=fail(selfsigned, "x509: certificate signed by unknown authority")))
    both = {"request": {"kind": "x509", "ca": other.pem + root.pem}}
    cases.append(case("trust: bundle of two, signed by the second", both, peer(alice),
                      expect=ok(x509_user(alice, "alice", ["dev"]))))
    cases.append(case("trust: bundle of two, signed by the first", both, peer(untrusted),
                      expect=ok(x509_user(untrusted, "alice", ["dev"]))))
    cases.append(case("trust: the CA itself as the client certificate", setup, peer(root),
                      expect=ok(x509_user(root, "conformance-root"))))
    cases.append(case("trust: extra unrelated certificates after the leaf", setup, peer(alice, other, untrusted),
                      expect=ok(x509_user(alice, "alice", ["dev"]))))
    cases.append(case("trust: the leaf twice", setup, peer(alice, alice),
                      expect=ok(x509_user(alice, "alice", ["dev"]))))

    # Intermediates from the presented chain.
    inter = pki.ca("conformance-intermediate", issuer=root, serial=2)
    inter2 = pki.ca("conformance-intermediate-2", issuer=inter, serial=3)
    bob = leaf(("CN", "bob"), ("O", "ops"), issuer=inter)
    carol = leaf(("CN", "carol"), issuer=inter2)
    cases.append(case("intermediate: presented after the leaf", setup, peer(bob, inter),
                      expect=ok(x509_user(bob, "bob", ["ops"]))))
    cases.append(case("intermediate: missing", setup, peer(bob),
                      expect=fail(bob, "x509: certificate signed by unknown authority")))
    cases.append(case("intermediate: two levels", setup, peer(carol, inter2, inter),
                      expect=ok(x509_user(carol, "carol"))))
    cases.append(case("intermediate: two levels, presented out of order", setup, peer(carol, inter, inter2),
                      expect=ok(x509_user(carol, "carol"))))
    cases.append(case("intermediate: two levels, one missing", setup, peer(carol, inter2),
                      expect=fail(carol, "x509: certificate signed by unknown authority")))
    cases.append(case("intermediate: the root presented too", setup, peer(bob, inter, root),
                      expect=ok(x509_user(bob, "bob", ["ops"]))))
    cases.append(case("intermediate: in the bundle, not presented", {"request": {"kind": "x509", "ca": inter.pem}},
                      peer(bob), expect=ok(x509_user(bob, "bob", ["ops"]))))
    cases.append(case("intermediate: a presented intermediate is not a trust anchor", {"request": {"kind": "x509", "ca": other.pem}},
                      peer(bob, inter), expect=fail(bob, "x509: certificate signed by unknown authority")))
    cases.append(case("intermediate: the intermediate as the client certificate", setup, peer(inter),
                      k8s=ok(x509_user(inter, "conformance-intermediate")),
                      kube_authn=fail(inter, "x509: a CA certificate (basicConstraints cA=TRUE) cannot be used as a client certificate"),
                      reason=R_X509_CA_LEAF))
    notca = pki.issue(pki.name(("CN", "not-a-ca")), 4, "not-a-ca", issuer=root, eku=None)
    dave = leaf(("CN", "dave"), issuer=notca)
    cases.append(case("intermediate: not a CA", setup, peer(dave, notca),
                      expect=fail(dave, cannot_sign("not-a-ca"))))
    plen0 = pki.ca("conformance-pathlen0", path_len=0, serial=5)
    inter_p = pki.ca("conformance-intermediate-p", issuer=plen0, serial=6)
    erin = leaf(("CN", "erin"), issuer=inter_p)
    direct = leaf(("CN", "frank"), issuer=plen0)
    s0 = {"request": {"kind": "x509", "ca": plen0.pem}}
    cases.append(case("intermediate: root pathlen 0, direct leaf", s0, peer(direct), expect=ok(x509_user(direct, "frank"))))
    cases.append(case("intermediate: root pathlen 0, one intermediate", s0, peer(erin, inter_p),
                      expect=fail(erin, "x509: too many intermediates for path length constraint")))
    server_inter = pki.ca("conformance-server-intermediate", issuer=root, serial=8, eku=("server",))
    gina = leaf(("CN", "gina"), issuer=server_inter)
    cases.append(case("intermediate: EKU serverAuth only", setup, peer(gina, server_inter),
                      expect=fail(gina, "x509: certificate specifies an incompatible key usage")))
    client_inter = pki.ca("conformance-client-intermediate", issuer=root, serial=9, eku=("client",))
    hank = leaf(("CN", "hank"), issuer=client_inter)
    cases.append(case("intermediate: EKU clientAuth", setup, peer(hank, client_inter), expect=ok(x509_user(hank, "hank"))))
    expired_inter = pki.ca("conformance-expired-intermediate", issuer=root, serial=10, validity=pki.EXPIRED)
    ivan = leaf(("CN", "ivan"), issuer=expired_inter)
    cases.append(case("intermediate: expired", setup, peer(ivan, expired_inter),
                      expect=fail_contains(ivan, "x509: certificate has expired or is not yet valid: current time ")))

    # Validity.
    for label, validity, word in [("expired", pki.EXPIRED, "after 2010-01-01T00:00:00Z"),
                                  ("not yet valid", pki.NOT_YET, "before 2100-01-01T00:00:00Z")]:
        c = leaf(("CN", "alice"), ("O", "dev"), validity=validity)
        cases.append(case(f"validity: leaf {label}", setup, peer(c),
                          expect=fail_contains(c, "x509: certificate has expired or is not yet valid: current time ")))
    old_root = pki.ca("conformance-expired-root", validity=pki.EXPIRED)
    c = leaf(("CN", "judy"), issuer=old_root)
    cases.append(case("validity: root expired", {"request": {"kind": "x509", "ca": old_root.pem}}, peer(c),
                      expect=fail_contains(c, "x509: certificate has expired or is not yet valid: current time ")))

    # Extended key usage of the leaf.
    for label, eku, good in [
        ("clientAuth", ("client",), True),
        ("no EKU extension", None, True),
        ("anyExtendedKeyUsage", ("any",), True),
        ("clientAuth and serverAuth", ("server", "client"), True),
        ("serverAuth only", ("server",), False),
        ("codeSigning only", ("code",), False),
    ]:
        c = leaf(("CN", "alice"), ("O", "dev"), eku=eku)
        expect = ok(x509_user(c, "alice", ["dev"])) if good else fail(c, "x509: certificate specifies an incompatible key usage")
        cases.append(case(f"eku: {label}", setup, peer(c), expect=expect))
    # Key usage of the leaf is not checked (Go ignores it for client certificates).
    c = leaf(("CN", "alice"), key_usage="certsign-only")
    cases.append(case("key usage: keyCertSign only on the leaf", setup, peer(c), expect=ok(x509_user(c, "alice"))))
    c = leaf(("CN", "alice"), key_usage="none")
    cases.append(case("key usage: no keyUsage extension", setup, peer(c), expect=ok(x509_user(c, "alice"))))
    c = leaf(("CN", "x"), skid=False, issuer=other)
    cases.append(case("identifier: untrusted leaf without SKID", setup, peer(c),
                      expect=fail(c, "x509: certificate signed by unknown authority")))
    c = leaf(("CN", "alice"), skid=False)
    cases.append(case("identifier: trusted leaf without SKID", setup, peer(c), expect=ok(x509_user(c, "alice"))))

    # Issuers: Go's buildChains calls CheckSignatureFrom(parent) for every candidate, root or
    # intermediate; a v3 parent without basicConstraints, with cA=FALSE, or whose keyUsage
    # lacks keyCertSign cannot sign. A leaf that is itself in the roots is a chain of one.
    for label, slug, serials, kw in [("keyUsage without keyCertSign", "noks", (20, 21), dict(key_usage="signature-only")),
                                     ("no basicConstraints (v3)", "nobc", (22, 23), dict(basic_constraints=False))]:
        r = pki.ca(f"conformance-root-{slug}", serial=serials[0], **kw)
        s = {"request": {"kind": "x509", "ca": r.pem}}
        c = leaf(("CN", "carol"), issuer=r)
        cases.append(case(f"issuer: root with {label}", s, peer(c), expect=fail(c, cannot_sign(f"conformance-root-{slug}"))))
        cases.append(case(f"issuer: root with {label}, itself as the client certificate", s, peer(r),
                          expect=ok(x509_user(r, f"conformance-root-{slug}"))))
        i = pki.ca(f"conformance-intermediate-{slug}", issuer=root, serial=serials[1], **kw)
        c = leaf(("CN", "erin"), issuer=i)
        cases.append(case(f"issuer: intermediate with {label}", setup, peer(c, i),
                          expect=fail(c, cannot_sign(f"conformance-intermediate-{slug}"))))
    good_inter = pki.ca("conformance-intermediate-good", issuer=root, serial=24)
    noks_inter = pki.ca("conformance-intermediate-noks-2", issuer=good_inter, serial=25, key_usage="signature-only")
    c = leaf(("CN", "fred"), issuer=noks_inter)
    cases.append(case("issuer: second intermediate with keyUsage without keyCertSign", setup,
                      peer(c, noks_inter, good_inter), expect=fail(c, cannot_sign("conformance-intermediate-noks-2"))))
    pinned = pki.issue(pki.name(("CN", "pinned-client"), ("O", "dev")), 26, "pinned-client")
    s = {"request": {"kind": "x509", "ca": pinned.pem}}
    cases.append(case("issuer: a pinned client certificate (cA=FALSE) as the only root, itself presented", s,
                      peer(pinned), expect=ok(x509_user(pinned, "pinned-client", ["dev"]))))
    c = leaf(("CN", "mallory"), ("O", "system:masters"), issuer=pinned)
    cases.append(case("issuer: a pinned client certificate (cA=FALSE) signs nothing", s, peer(c),
                      expect=fail(c, cannot_sign("pinned-client"))))
    r = pki.issue(pki.name(("O", "org-only-root"), ("O", "second")), 27, "org-only-root", ca=True, eku=None,
                  key_usage="signature-only")
    c = leaf(("CN", "olga"), issuer=r)
    cases.append(case("issuer: a refused root without a CN is named by its first O", {"request": {"kind": "x509", "ca": r.pem}},
                      peer(c), expect=fail(c, cannot_sign("org-only-root"))))
    r = pki.ca("conformance-root-no-key-usage", serial=28, key_usage="none")
    c = leaf(("CN", "nina"), issuer=r)
    cases.append(case("issuer: root without keyUsage", {"request": {"kind": "x509", "ca": r.pem}}, peer(c),
                      expect=ok(x509_user(c, "nina"))))

    # Roots with critical extensions: Go's isValid refuses one its parser does not handle.
    from cryptography import x509 as cx509
    unknown = cx509.UnrecognizedExtension(cx509.ObjectIdentifier("1.2.3.4"), b"\x0c\x01x")
    policies = cx509.CertificatePolicies([cx509.PolicyInformation(cx509.ObjectIdentifier("1.2.3.5"), None)])
    for label, slug, sn, ext, critical, good in [
        ("an unknown critical extension", "unknown-critical", 30, unknown, True, False),
        ("an unknown non-critical extension", "unknown", 31, unknown, False, True),
        ("critical certificatePolicies (Go handles them)", "policies-critical", 32, policies, True, True),
    ]:
        r = pki.ca(f"conformance-root-{slug}", serial=sn, extensions=[(ext, critical)])
        c = leaf(("CN", "ulla"), issuer=r)
        s = {"request": {"kind": "x509", "ca": r.pem}}
        expect = ok(x509_user(c, "ulla")) if good else fail(c, "x509: unhandled critical extension")
        cases.append(case(f"issuer: root with {label}", s, peer(c), expect=expect))
    return cases


def x509_cannot_sign(cn):
    """Go's error when every candidate issuer failed CheckSignatureFrom's constraint check."""
    return ("x509: certificate signed by unknown authority (possibly because of \"x509: invalid signature: parent "
            "certificate cannot sign this kind of certificate\" while trying to verify candidate authority "
            f"certificate \"{cn}\")")


# ---------------------------------------------------------------------------------------------
# request_header: --requestheader-* front proxy (k8s headerrequest.NewDynamicVerifyOptionsSecure:
# the proxy's client certificate must verify against the request-header CA and carry an allowed
# CN; then X-Remote-User / -Uid / -Group / -Extra-* are believed).
# ---------------------------------------------------------------------------------------------
R_RH_CONTROL = ("kube-authn refuses control characters (TAB, LF, ...) in identity header values and in "
                "decoded extra keys: they would reach audit logs and RBAC names verbatim; Go copies "
                "them (src/request/front_proxy.rs; docs/compatibility.md)")


def request_header_cases():
    import pki
    cases = []
    fp_ca = pki.ca("front-proxy-ca")
    client_ca = pki.ca("kubernetes-client-ca")
    serial = iter(range(2000, 100000))

    def cert(cn, issuer=fp_ca, **kw):
        return pki.issue(pki.name(("CN", cn)), next(serial), f"proxy-{cn}-{issuer.cert.subject.rfc4514_string()}-{kw}",
                         issuer=issuer, **kw)

    proxy = cert("front-proxy-client")

    def node(allowed=(), users=("X-Remote-User",), uids=("X-Remote-Uid",), groups=("X-Remote-Group",),
             extras=("X-Remote-Extra-",), ca_pem=None):
        return {"request": {"kind": "request_header", "ca": ca_pem or fp_ca.pem, "allowed_names": list(allowed),
                            "username_headers": list(users), "uid_headers": list(uids),
                            "group_headers": list(groups), "extra_headers_prefix": list(extras)}}

    def via(headers, *chain):
        i = req(headers)
        i["peer_chain"] = [c.pem for c in (chain or (proxy,))]
        return i

    alice_h = [("X-Remote-User", "alice")]
    alice = user("alice")
    std = node()
    named = node(allowed=["front-proxy-client"])

    # The proxy's certificate.
    cases.append(case("proxy: no TLS, headers ignored", std, req(alice_h), expect=not_mine()))
    cases.append(case("proxy: TLS without a client certificate", std, via(alice_h, *[]) | {"peer_chain": []},
                      expect=not_mine()))
    cases.append(case("proxy: any CN allowed when the list is empty", std, via(alice_h), expect=ok(alice)))
    cases.append(case("proxy: CN in the allowed list", named, via(alice_h), expect=ok(alice)))
    cases.append(case("proxy: CN second in the allowed list", node(allowed=["aggregator", "front-proxy-client"]),
                      via(alice_h), expect=ok(alice)))
    for label, allowed in [("CN not in the allowed list", ["aggregator"]),
                           ("allowed names are case-sensitive", ["Front-Proxy-Client"]),
                           ("allowed names are not prefixes", ["front-proxy"])]:
        cases.append(case(f"proxy: {label}", node(allowed=allowed), via(alice_h),
                          expect=error("x509: subject with cn=front-proxy-client is not in the allowed list")))
    cases.append(case("proxy: allowed-names check also without identity headers", node(allowed=["aggregator"]),
                      via([]), expect=error("x509: subject with cn=front-proxy-client is not in the allowed list")))
    signed_by_client_ca = cert("front-proxy-client", issuer=client_ca)
    cases.append(case("proxy: certificate from the client CA, not the request-header CA", named,
                      via(alice_h, signed_by_client_ca),
                      expect=error("x509: certificate signed by unknown authority")))
    cases.append(case("proxy: untrusted certificate and no identity headers is still an error", std,
                      via([], signed_by_client_ca), expect=error("x509: certificate signed by unknown authority")))
    cases.append(case("proxy: bundle holding both CAs", node(ca_pem=client_ca.pem + fp_ca.pem),
                      via(alice_h, signed_by_client_ca), expect=ok(alice)))
    expired = cert("front-proxy-client", validity=pki.EXPIRED)
    cases.append(case("proxy: expired certificate", named, via(alice_h, expired),
                      expect={"result": "error", "error_contains": "x509: certificate has expired or is not yet valid: current time "}))
    future = cert("front-proxy-client", validity=pki.NOT_YET)
    cases.append(case("proxy: not yet valid certificate", named, via(alice_h, future),
                      expect={"result": "error", "error_contains": "x509: certificate has expired or is not yet valid: current time "}))
    server_only = cert("front-proxy-client", eku=("server",))
    cases.append(case("proxy: serverAuth-only certificate", named, via(alice_h, server_only),
                      expect=error("x509: certificate specifies an incompatible key usage")))
    no_eku = cert("front-proxy-client", eku=None)
    cases.append(case("proxy: certificate without EKU", named, via(alice_h, no_eku), expect=ok(alice)))
    inter = pki.ca("front-proxy-intermediate", issuer=fp_ca, serial=3)
    behind = cert("front-proxy-client", issuer=inter)
    cases.append(case("proxy: intermediate presented", named, via(alice_h, behind, inter), expect=ok(alice)))
    cases.append(case("proxy: intermediate missing", named, via(alice_h, behind),
                      expect=error("x509: certificate signed by unknown authority")))
    other_cn = cert("someone-else")
    cases.append(case("proxy: trusted certificate with another CN, empty allowed list", std,
                      via(alice_h, other_cn), expect=ok(alice)))

    # Identity headers, behind a verified proxy.
    for label, headers, expect in [
        ("user only", alice_h, ok(alice)),
        ("no user header", [("X-Remote-Group", "g")], not_mine()),
        ("empty user", [("X-Remote-User", ""), ("X-Remote-Group", "g")], not_mine()),
        ("first user value is used", [("X-Remote-User", "alice"), ("X-Remote-User", "bob")], ok(alice)),
        ("empty first user value hides the second", [("X-Remote-User", ""), ("X-Remote-User", "bob")], not_mine()),
        ("lower-case header names", [("x-remote-user", "alice"), ("x-remote-group", "g")], ok(user("alice", "", ["g"]))),
        ("user and uid", alice_h + [("X-Remote-Uid", "alice-uid")], ok(user("alice", "alice-uid"))),
        ("empty uid", alice_h + [("X-Remote-Uid", "")], ok(alice)),
        ("first uid value", alice_h + [("X-Remote-Uid", "1"), ("X-Remote-Uid", "2")], ok(user("alice", "1"))),
        ("groups in order", alice_h + [("X-Remote-Group", "b"), ("X-Remote-Group", "a")], ok(user("alice", "", ["b", "a"]))),
        ("group values are never split", alice_h + [("X-Remote-Group", "a,b"), ("X-Remote-Group", "c, d")],
         ok(user("alice", "", ["a,b", "c, d"]))),
        ("empty group values skipped", alice_h + [("X-Remote-Group", ""), ("X-Remote-Group", "g"), ("X-Remote-Group", "")],
         ok(user("alice", "", ["g"]))),
        ("duplicate groups kept", alice_h + [("X-Remote-Group", "g"), ("X-Remote-Group", "g")], ok(user("alice", "", ["g", "g"]))),
        ("system:masters is believed", alice_h + [("X-Remote-Group", "system:masters")], ok(user("alice", "", ["system:masters"]))),
        ("spaces kept in the name", [("X-Remote-User", " alice ")], ok(user(" alice "))),
        ("utf-8 name", [("X-Remote-User", "jürgen"), ("X-Remote-Group", "entwickler")], ok(user("jürgen", "", ["entwickler"]))),
        ("extra", alice_h + [("X-Remote-Extra-Scopes", "openid")], ok(user("alice", "", [], {"scopes": ["openid"]}))),
        ("extra values accumulate", alice_h + [("X-Remote-Extra-Scopes", "a"), ("X-Remote-Extra-Scopes", "b")],
         ok(user("alice", "", [], {"scopes": ["a", "b"]}))),
        ("extra values are never split", alice_h + [("X-Remote-Extra-Scopes", "a,b")], ok(user("alice", "", [], {"scopes": ["a,b"]}))),
        ("empty extra value kept", alice_h + [("X-Remote-Extra-Scopes", "")], ok(user("alice", "", [], {"scopes": [""]}))),
        ("extra key lower-cased", alice_h + [("X-Remote-Extra-Project-ID", "p")], ok(user("alice", "", [], {"project-id": ["p"]}))),
        ("extra key percent-decoded", alice_h + [("X-Remote-Extra-Acme.com%2Fproject", "p")],
         ok(user("alice", "", [], {"acme.com/project": ["p"]}))),
        ("extra key decoded once", alice_h + [("X-Remote-Extra-Example.com%2fpercent%2520encoded", "v")],
         ok(user("alice", "", [], {"example.com/percent%20encoded": ["v"]}))),
        ("extra key with an invalid escape kept raw", alice_h + [("X-Remote-Extra-Almost%zzpercent", "v")],
         ok(user("alice", "", [], {"almost%zzpercent": ["v"]}))),
        ("extra key with a truncated escape kept raw", alice_h + [("X-Remote-Extra-Trail%2", "v")],
         ok(user("alice", "", [], {"trail%2": ["v"]}))),
        ("upper-case escape decoded", alice_h + [("X-Remote-Extra-A%3Ab", "v")], ok(user("alice", "", [], {"a:b": ["v"]}))),
        ("several extra keys", alice_h + [("X-Remote-Extra-A", "1"), ("X-Remote-Extra-B", "2"), ("X-Remote-Extra-A", "3")],
         ok(user("alice", "", [], {"a": ["1", "3"], "b": ["2"]}))),
        ("extra without user", [("X-Remote-Extra-Scopes", "a")], not_mine()),
        ("prefix look-alike is not extra", alice_h + [("X-Remote-Extras", "x"), ("X-Remote-ExtraFoo", "y")], ok(alice)),
        ("other headers ignored", alice_h + [("X-Remote-Groups", "x"), ("X-Remote-User-Name", "bob"), ("Authorization", "Bearer t")], ok(alice)),
        ("everything", [("X-Remote-User", "system:admin"), ("X-Remote-Uid", "u-1"), ("X-Remote-Group", "system:masters"),
                        ("X-Remote-Group", "dev"), ("X-Remote-Extra-Scopes", "openid"), ("X-Remote-Extra-Scopes", "profile"),
                        ("X-Remote-Extra-Reason", "support ticket 42")],
         ok(user("system:admin", "u-1", ["system:masters", "dev"], {"scopes": ["openid", "profile"], "reason": ["support ticket 42"]}))),
    ]:
        cases.append(case(f"headers: {label}", named, via(headers), expect=expect))

    # Configured header lists: first non-empty header wins; groups from every listed header.
    multi = node(users=["X-Remote-User", "X-Forwarded-User"], uids=["X-Remote-Uid", "X-Forwarded-Uid"],
                 groups=["X-Remote-Group", "X-Forwarded-Groups"], extras=["X-Remote-Extra-", "X-Forwarded-Extra-"])
    for label, headers, expect in [
        ("second user header when the first is absent", [("X-Forwarded-User", "bob")], ok(user("bob"))),
        ("second user header when the first is empty", [("X-Remote-User", ""), ("X-Forwarded-User", "bob")], ok(user("bob"))),
        ("first user header wins", [("X-Forwarded-User", "bob"), ("X-Remote-User", "alice")], ok(alice)),
        ("uid from the second header", alice_h + [("X-Forwarded-Uid", "u-2")], ok(user("alice", "u-2"))),
        ("groups from every header, in configured order", alice_h + [("X-Forwarded-Groups", "f1"), ("X-Remote-Group", "r1"),
                                                                   ("X-Forwarded-Groups", "f2")],
         ok(user("alice", "", ["r1", "f1", "f2"]))),
        ("extras from both prefixes", alice_h + [("X-Remote-Extra-A", "1"), ("X-Forwarded-Extra-B", "2")],
         ok(user("alice", "", [], {"a": ["1"], "b": ["2"]}))),
        ("extras of one key from both prefixes, in prefix order", alice_h + [("X-Forwarded-Extra-K", "f"), ("X-Remote-Extra-K", "r")],
         ok(user("alice", "", [], {"k": ["r", "f"]}))),
    ]:
        cases.append(case(f"configured headers: {label}", multi, via(headers), expect=expect))

    # Fail closed on control characters.
    for label, headers, k8s_user, text in [
        ("tab in the user name", [("X-Remote-User", "ali\tce")], user("ali\tce"),
         "request header: identity header value contains a control character"),
        ("tab in a group", alice_h + [("X-Remote-Group", "g\t1")], user("alice", "", ["g\t1"]),
         "request header: identity header value contains a control character"),
        ("newline in a decoded extra key", alice_h + [("X-Remote-Extra-A%0Ab", "v")], user("alice", "", [], {"a\nb": ["v"]}),
         "request header: decoded extra key contains a control character"),
    ]:
        cases.append(case(f"control characters: {label}", named, via(headers),
                          k8s=ok(k8s_user), kube_authn=error(text), reason=R_RH_CONTROL))

    # In kube-apiserver's chain and filter: the front proxy comes first, the identity headers
    # never reach the handler, and without a proxy certificate they are stripped and ignored.
    table = scripted("table", S_NONE, tokens={"alice-token": s_user(user("token-alice", "t1"))})
    rh = named["request"]
    chain = {"kind": "chain", "request": [rh], "tokens": [table], "anonymous": {}}
    filt = {"filter": {"chain": chain}}
    ident = [("X-Remote-User", "alice"), ("X-Remote-Uid", "u-1"), ("X-Remote-Group", "dev"), ("X-Remote-Extra-Scopes", "s")]
    stripped = {"x-remote-user": [], "x-remote-uid": [], "x-remote-group": [], "x-remote-extra-scopes": []}
    for label, inp, expect in [
        ("proxied request", via(ident),
         handler(user("alice", "u-1", ["dev", "system:authenticated"], {"scopes": ["s"]}), stripped)),
        ("proxied request wins over a bearer token", via(ident + [("Authorization", "Bearer alice-token")]),
         handler(user("alice", "u-1", ["dev", "system:authenticated"], {"scopes": ["s"]}), dict(stripped, authorization=[]))),
        ("no proxy certificate: headers stripped, anonymous", req(ident), handler(ANON, stripped)),
        ("no proxy certificate: bearer token used, headers stripped", req(ident + [("Authorization", "Bearer alice-token")]),
         handler(user("token-alice", "t1", ["system:authenticated"]), stripped)),
        ("proxy certificate without identity: bearer token used", via([("Authorization", "Bearer alice-token")]),
         handler(user("token-alice", "t1", ["system:authenticated"]), {"authorization": []})),
        ("untrusted proxy certificate is a 401", via(ident, signed_by_client_ca), rejected()),
    ]:
        cases.append(case(f"filter: {label}", filt, inp, expect=expect))

    # Request-header CAs that sign no proxy certificate: Go's CheckSignatureFrom refuses a
    # parent whose keyUsage lacks keyCertSign, a v3 one without basicConstraints and one with
    # cA=FALSE (the proxy's own certificate pinned as the CA, which verifies only itself);
    # Go's isValid refuses a root with an unknown critical extension.
    from cryptography import x509 as cx509
    unknown = cx509.UnrecognizedExtension(cx509.ObjectIdentifier("1.2.3.4"), b"\x0c\x01x")
    for label, slug, sn, kw, text in [
        ("keyUsage without keyCertSign", "noks", 20, dict(key_usage="signature-only"), x509_cannot_sign("front-proxy-ca-noks")),
        ("no basicConstraints (v3)", "nobc", 21, dict(basic_constraints=False), x509_cannot_sign("front-proxy-ca-nobc")),
        ("an unknown critical extension", "unknown-critical", 22, dict(extensions=[(unknown, True)]),
         "x509: unhandled critical extension"),
    ]:
        ca = pki.ca(f"front-proxy-ca-{slug}", serial=sn, **kw)
        cases.append(case(f"proxy: request-header CA with {label}", node(allowed=["front-proxy-client"], ca_pem=ca.pem),
                          via(alice_h, cert("front-proxy-client", issuer=ca)), expect=error(text)))
    pinned = pki.issue(pki.name(("CN", "front-proxy-client")), 23, "pinned-front-proxy-client")
    pinned_node = node(allowed=["front-proxy-client"], ca_pem=pinned.pem)
    cases.append(case("proxy: the proxy certificate pinned as the request-header CA, itself presented", pinned_node,
                      via(alice_h, pinned), expect=ok(alice)))
    cases.append(case("proxy: the proxy certificate pinned as the request-header CA signs nothing", pinned_node,
                      via(alice_h, cert("front-proxy-client", issuer=pinned)),
                      expect=error(x509_cannot_sign("front-proxy-client"))))
    return cases


# ---------------------------------------------------------------------------------------------
# token_cache: k8s pkg/authentication/token/cache (keyFunc and the TTL rules, on a fake clock).
# The Go oracle reaches the unexported newWithClock and keyFunc with go:linkname
# (conformance/go/internal/tokencache); kube-authn's CachedTokenAuthenticator gets a ManualClock
# and a fixed HMAC key.
# ---------------------------------------------------------------------------------------------
# cached_token_authenticator_test.go jwtToken (a legacy service-account JWT; data, not a secret).
K8S_CACHE_JWT = "eyJhbGciOiJSUzI1NiIsImtpZCI6IiJ9.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50Iiwia3ViZXJuZXRlcy5pby9zZXJ2aWNlYWNjb3VudC9uYW1lc3BhY2UiOiJvcGVuc2hpZnQtc2RuIiwia3ViZXJuZXRlcy5pby9zZXJ2aWNlYWNjb3VudC9zZWNyZXQubmFtZSI6InNkbi10b2tlbi1nNndtYyIsImt1YmVybmV0ZXMuaW8vc2VydmljZWFjY291bnQvc2VydmljZS1hY2NvdW50Lm5hbWUiOiJzZG4iLCJrdWJlcm5ldGVzLmlvL3NlcnZpY2VhY2NvdW50L3NlcnZpY2UtYWNjb3VudC51aWQiOiIzYzM5YzNhYS1kM2Q5LTExZTktYTVkMC0wMmI3YjllODg1OWUiLCJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6b3BlbnNoaWZ0LXNkbjpzZG4ifQ.PIs0rsUTekj5AX8yJeLDyW4vQB17YS4IOgO026yjEvsCY7Wv_2TD0lwyZWqyQh639q3jPh2_3LTQq2Cp0cReBP1PYOIGgprNm3C-3OFZRnkls-GH09kvPYE8J_-a1YwjxucOwytzJvEM5QTC9iXfEJNSTBfLge-HMYT1y0AGKs8DWTSC4rtd_2PedK3OYiAyDg_xHA8qNpG9pRNM8vfjV9VsmqJtlbnTVlTngqC0t5vyMaWrmLNRxN0rTbN2W9L3diXRnYqI8BUfgPQb7uhYcPuXGeypaFrN4d3yNN4NbgVxnkgdd2IXQ8elSJuQn6ynrvLgG0JPMmThOHnwvsZDeA"
K8S_CACHE_HMAC = "098c9e46-b7f4-4358-bb3c-35cb7495b836"
K8S_CACHE_AUDS = ["7daf30b7-a85c-429b-8b21-e666aecbb235", "c22aa267-bdde-4acb-8505-998be7818400",
                  "44f9b4f3-7125-4333-b04c-1446a16c6113"]


def cache_key(secret, token, auds):
    """k8s-token-authn.md §5.2: HMAC-SHA256(secret, u32be(len(token)) token u32be(len(auds))
    (u32be(len(aud)) aud)*). Checked against k8s' keyFunc by the oracle."""
    import hashlib
    import hmac
    import struct
    msg = struct.pack(">I", len(token.encode())) + token.encode() + struct.pack(">I", len(auds or []))
    for a in auds or []:
        msg += struct.pack(">I", len(a.encode())) + a.encode()
    return hmac.new(secret.encode(), msg, hashlib.sha256).hexdigest()


def steps_input(steps):
    out = []
    for s in steps:
        advance, token = s[0], s[1]
        st = {"advance_ms": advance, "token": token}
        if len(s) > 2 and s[2] is not None:
            st["audiences"] = list(s[2])
        out.append(st)
    return {"steps": out}


def sequence(outcomes, calls=None):
    out = {"result": "sequence", "outcomes": outcomes}
    if calls is not None:
        out["calls"] = calls
    return out


def token_cache_cases():
    cases = []
    # Key layout: k8s TestKeyFunc, then the same layout on more shapes.
    key_setup = {"cache_key": {"secret": K8S_CACHE_HMAC}}
    for label, token, auds, want in [
        ("TestKeyFunc: has audiences", K8S_CACHE_JWT, K8S_CACHE_AUDS,
         "22f7accd12f5836ca93b400aa133613b0a641fde6c4cd1e1218ada68d99bbbf0"),
        ("TestKeyFunc: nil audiences", K8S_CACHE_JWT, None,
         "05346120a58eeab23f8c88b92c650a35e7c8b53efd4b0e932b02cbbf26f9381e"),
    ]:
        assert cache_key(K8S_CACHE_HMAC, token, auds) == want, label
        i = {"token": token}
        if auds is not None:
            i["audiences"] = auds
        cases.append(case(f"key: {label}", key_setup, i, expect={"result": "key", "key": want}))
    for label, token, auds in [
        ("empty audience list equals none", K8S_CACHE_JWT, []),
        ("audiences reversed", K8S_CACHE_JWT, list(reversed(K8S_CACHE_AUDS))),
        ("one audience", "token", ["api"]),
        ("one empty audience", "token", [""]),
        ("two empty audiences", "token", ["", ""]),
        ("empty token", "", None),
        ("empty token, one audience", "", ["api"]),
        ("length prefix: xy + z", "xy", ["z"]),
        ("length prefix: x + yz", "x", ["yz"]),
        ("length prefix: token xyz", "xyz", None),
        ("utf-8 token and audience", "tökén", ["äpi"]),
        ("1.2 KB token", "a" * 1200, ["https://kubernetes.default.svc"]),
        ("100 audiences", "token", [f"aud-{i}" for i in range(100)]),
        ("other secret", "token", ["api"]),
    ]:
        secret = "another-secret" if label == "other secret" else K8S_CACHE_HMAC
        i = {"token": token}
        if auds is not None:
            i["audiences"] = auds
        cases.append(case(f"key: {label}", {"cache_key": {"secret": secret}}, i,
                          expect={"result": "key", "key": cache_key(secret, token, auds)}))

    # TTL behaviour on a fake clock.
    alice = user("alice", "a1", ["dev"])
    answers = {"ok": s_user(alice), "deny": S_NONE, "err": s_err("backend down")}
    results = {"ok": ok(alice), "deny": not_mine(), "err": error("backend down")}
    configs = [
        ("kube-apiserver outer cache (errors cached, success 10s, failure 0)", True, 10_000, 0),
        ("webhook cache (errors not cached, 2m both)", False, 120_000, 120_000),
        ("errors cached, success 60s, failure 30s", True, 60_000, 30_000),
        ("errors not cached, success 60s, failure 30s", False, 60_000, 30_000),
        ("TTLs zero", True, 0, 0),
    ]

    def cached_for(kind, cache_errs, s_ttl, f_ttl):
        if kind == "ok":
            return s_ttl
        if kind == "err" and not cache_errs:
            return 0
        return f_ttl

    for clabel, cache_errs, s_ttl, f_ttl in configs:
        for kind in ["ok", "deny", "err"]:
            ttl = cached_for(kind, cache_errs, s_ttl, f_ttl)
            node = {"kind": "token_cache", "cache_errors": cache_errs, "success_ttl_ms": s_ttl,
                    "failure_ttl_ms": f_ttl, "inner": scripted("backend", S_NONE, tokens={"t": answers[kind]})}
            deltas = sorted({0, 1, 5_000, ttl - 1, ttl, ttl + 1} - {-1}) if ttl else [0, 1]
            for d in deltas:
                hit = ttl > 0 and d < ttl
                calls = {"backend": [["t"]] if hit else [["t"], ["t"]]}
                cases.append(case(f"ttl: {clabel}: {kind}, again after {d} ms", {"token": node},
                                  steps_input([(0, "t"), (d, "t")]),
                                  expect=sequence([results[kind], results[kind]], calls=calls)))
    # The cached answer outlives a changed backend; the new answer appears after the TTL.
    seq = {"kind": "token_cache", "cache_errors": True, "success_ttl_ms": 60_000, "failure_ttl_ms": 0,
           "inner": scripted("backend", S_NONE, tokens={"t": [s_user(alice), s_err("backend down"), S_NONE]})}
    cases.append(case("ttl: TestCachedTokenAuthenticator: backend fails, cached user still served", {"token": seq},
                      steps_input([(0, "t"), (1_000, "t"), (30_000, "t")]),
                      expect=sequence([ok(alice)] * 3, calls={"backend": [["t"]]})))
    cases.append(case("ttl: TestCachedTokenAuthenticator: after the TTL the backend is asked again (failure TTL 0: nothing else cached)", {"token": seq},
                      steps_input([(0, "t"), (120_000, "t"), (0, "t")]),
                      expect=sequence([ok(alice), error("backend down"), not_mine()],
                                      calls={"backend": [["t"], ["t"], ["t"]]})))
    nocache_err = dict(seq, cache_errors=False, failure_ttl_ms=60_000,
                       inner=scripted("backend", S_NONE, tokens={"t": [s_err("backend down"), s_user(alice)]}))
    cases.append(case("ttl: error not cached, next call succeeds and is cached", {"token": nocache_err},
                      steps_input([(0, "t"), (0, "t"), (0, "t")]),
                      expect=sequence([error("backend down"), ok(alice), ok(alice)],
                                      calls={"backend": [["t"], ["t"]]})))
    cache_err = dict(nocache_err, cache_errors=True)
    cases.append(case("ttl: error cached under the failure TTL", {"token": cache_err},
                      steps_input([(0, "t"), (59_999, "t"), (1, "t"), (0, "t")]),
                      expect=sequence([error("backend down"), error("backend down"), ok(alice), ok(alice)],
                                      calls={"backend": [["t"], ["t"]]})))
    # Several tokens are independent.
    multi = {"kind": "token_cache", "cache_errors": True, "success_ttl_ms": 10_000, "failure_ttl_ms": 0,
             "inner": scripted("backend", S_NONE, tokens={
                 "usertoken1": s_user(user("user1")), "usertoken2": s_user(user("user2")),
                 "bad1": S_NONE})}
    cases.append(case("ttl: TestCachedTokenAuthenticator: bad tokens asked twice, good ones once", {"token": multi},
                      steps_input([(0, "bad1"), (0, "usertoken1"), (0, "usertoken2"), (0, "bad1"),
                                   (0, "usertoken1"), (0, "usertoken2")]),
                      expect=sequence([not_mine(), ok(user("user1")), ok(user("user2")), not_mine(),
                                       ok(user("user1")), ok(user("user2"))],
                                      calls={"backend": [["bad1"], ["usertoken1"], ["usertoken2"], ["bad1"]]})))
    cases.append(case("ttl: a token's prefix is another token", {"token": multi},
                      steps_input([(0, "usertoken1"), (0, "usertoken"), (0, "usertoken1")]),
                      expect=sequence([ok(user("user1")), not_mine(), ok(user("user1"))],
                                      calls={"backend": [["usertoken1"], ["usertoken"]]})))
    # Audiences are part of the key.
    aud_node = {"kind": "token_cache", "cache_errors": True, "success_ttl_ms": 10_000, "failure_ttl_ms": 0,
                "inner": scripted("backend", S_NONE, tokens={"t": s_user(alice, ["audA"])})}
    for label, steps, ncalls in [
        ("TestCachedTokenAuthenticatorWithAudiences: audA then audB", [(0, "t", ["audA"]), (0, "t", ["audB"])], 2),
        ("same audiences hit", [(0, "t", ["audA"]), (0, "t", ["audA"])], 1),
        ("audience order matters", [(0, "t", ["audA", "audB"]), (0, "t", ["audB", "audA"])], 2),
        ("no audiences and an empty list share a key", [(0, "t", None), (0, "t", [])], 1),
        ("no audiences and one audience differ", [(0, "t", None), (0, "t", ["audA"])], 2),
        ("an extra audience differs", [(0, "t", ["audA"]), (0, "t", ["audA", "audA"])], 2),
    ]:
        calls = {"backend": [["t"]] * ncalls}
        cases.append(case(f"audiences: {label}", {"token": aud_node}, steps_input(steps),
                          expect=sequence([ok(alice, ["audA"])] * len(steps), calls=calls)))
    return cases


# ---------------------------------------------------------------------------------------------
# webhook: TokenReview responses (k8s plugin/pkg/authenticator/token/webhook), each runner
# serving the scripted responses from a local HTTP server on 127.0.0.1. Retries use a 1 ms
# backoff so the retry policy is checked by counting requests, not by waiting.
# ---------------------------------------------------------------------------------------------
def token_review(version, status):
    return json.dumps({"apiVersion": f"authentication.k8s.io/{version}", "kind": "TokenReview",
                       "status": status}, sort_keys=True)


WH_TOKEN = "webhook-token-1"
R_WH_SCRUB = ("kube-authn removes the token from any text a webhook answers before it becomes an error "
              "(errors reach logs); Go passes the backend's text through (src/token/webhook.rs; "
              "docs/compatibility.md)")


def webhook_cases():
    cases = []
    alice_status = {"authenticated": True, "user": {"username": "alice", "uid": "a1", "groups": ["dev", "ops"],
                                                     "extra": {"scopes": ["openid", "email"]}}}
    alice = user("alice", "a1", ["dev", "ops"], {"scopes": ["openid", "email"]})

    def wh(responses, version="v1", implicit=(), steps=1):
        return {"token": {"kind": "webhook", "version": version, "implicit_audiences": list(implicit),
                          "retry_steps": steps, "responses": responses}}

    def r200(version, status):
        return {"status": 200, "content_type": "application/json", "body": token_review(version, status)}

    def seen(n=1, auds=""):
        return {"webhook": [[WH_TOKEN, auds]] * n}

    for version in ["v1", "v1beta1"]:
        v = version
        for label, status, expect in [
            ("authenticated", alice_status, ok(alice, calls=seen())),
            ("authenticated, name only", {"authenticated": True, "user": {"username": "bob"}}, ok(user("bob"), calls=seen())),
            ("authenticated, empty user name", {"authenticated": True, "user": {}}, ok(user(""), calls=seen())),
            ("authenticated, empty extra list", {"authenticated": True, "user": {"username": "bob", "extra": {"k": []}}},
             ok(user("bob", "", [], {"k": []}), calls=seen())),
            ("authenticated, system:masters believed", {"authenticated": True, "user": {"username": "x", "groups": ["system:masters"]}},
             ok(user("x", "", ["system:masters"]), calls=seen())),
            ("authenticated with an error text too", dict(alice_status, error="ignored"), ok(alice, calls=seen())),
            ("not authenticated", {"authenticated": False}, not_mine(calls=seen())),
            ("not authenticated, user ignored", {"authenticated": False, "user": {"username": "alice"}}, not_mine(calls=seen())),
            ("not authenticated with an error", {"authenticated": False, "error": "token expired"},
             error("token expired", calls=seen())),
            ("empty status", {}, not_mine(calls=seen())),
            ("authenticated with audiences, none requested", dict(alice_status, audiences=["other"]), ok(alice, calls=seen())),
        ]:
            cases.append(case(f"{v}: {label}", wh([r200(v, status)], v), {"token": WH_TOKEN}, expect=expect))

        # Audiences: the request's audiences travel in spec.audiences; the answer must intersect.
        for label, implicit, req_auds, status, expect in [
            ("status audiences intersect", [], ["api", "x"], dict(alice_status, audiences=["x", "y"]),
             ok(alice, ["x"], calls=seen(auds="api,x"))),
            ("status audiences disjoint: not mine", [], ["api"], dict(alice_status, audiences=["other"]),
             not_mine(calls=seen(auds="api"))),
            ("no status audiences, implicit intersect", ["api"], ["api"], alice_status,
             ok(alice, ["api"], calls=seen(auds="api"))),
            ("no status audiences, no implicit: not mine", [], ["api"], alice_status, not_mine(calls=seen(auds="api"))),
            ("no status audiences, implicit disjoint: not mine", ["other"], ["api"], alice_status,
             not_mine(calls=seen(auds="api"))),
            ("status audiences win over implicit", ["api"], ["api"], dict(alice_status, audiences=["other"]),
             not_mine(calls=seen(auds="api"))),
            ("audience mismatch beats the error", [], ["api"], {"authenticated": False, "error": "bad", "audiences": ["other"]},
             not_mine(calls=seen(auds="api"))),
            ("audiences match, then the error", [], ["api"], {"authenticated": False, "error": "bad", "audiences": ["api"]},
             error("bad", calls=seen(auds="api"))),
            ("audiences match, not authenticated", [], ["api"], {"authenticated": False, "audiences": ["api"]},
             not_mine(calls=seen(auds="api"))),
            ("intersection in the answer's order", [], ["c", "b", "a"], dict(alice_status, audiences=["a", "b"]),
             ok(alice, ["a", "b"], calls=seen(auds="c,b,a"))),
            ("empty request audiences: nothing can intersect", ["api"], [], alice_status, not_mine(calls=seen())),
        ]:
            cases.append(case(f"{v}: audiences: {label}", wh([r200(v, status)], v, implicit), {"token": WH_TOKEN, "audiences": req_auds},
                              expect=expect))

    # HTTP failures (v1). steps=2: which ones are retried shows in the request count.
    v = "v1"
    for label, resp, retried, text in [
        ("500 text", {"status": 500, "content_type": "text/plain", "body": "boom"}, True, 'an error on the server ("boom") has prevented the request from succeeding'),
        ("500 Status", {"status": 500, "content_type": "application/json",
                        "body": json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                            "message": "webhook broke", "reason": "InternalError", "code": 500})},
         True, "webhook broke"),
        ("500 Status without metadata", {"status": 500, "content_type": "application/json",
                                         "body": json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "webhook broke", "code": 500})},
         True, "webhook broke"),
        ("502", {"status": 502, "content_type": "text/plain", "body": "bad gateway"}, True, 'an error on the server ("bad gateway") has prevented the request from succeeding'),
        ("503 without Retry-After", {"status": 503, "content_type": "text/plain", "body": "unavailable"}, False, "the server is currently unable to handle the request"),
        ("504", {"status": 504, "content_type": "text/plain", "body": ""}, True, "the server was unable to return a response in the time allotted, but may still be processing the request"),
        ("429", {"status": 429, "content_type": "text/plain", "body": "slow down"}, True, "the server has received too many requests and has asked us to try again later"),
        ("401", {"status": 401, "content_type": "text/plain", "body": "who are you"}, False, "the server has asked for the client to provide credentials"),
        ("403", {"status": 403, "content_type": "text/plain", "body": "no"}, False, "no"),
        ("404", {"status": 404, "content_type": "text/plain", "body": "not here"}, False, "the server could not find the requested resource"),
        ("400", {"status": 400, "content_type": "text/plain", "body": "bad"}, False, "the server rejected our request for an unknown reason"),
    ]:
        n = 2 if retried else 1
        cases.append(case(f"http: {label}", wh([resp], v, steps=2), {"token": WH_TOKEN}, expect=error(text, calls=seen(n))))
    # A Status body decides (client-go's Result.Error / errors.FromObject): its own reason,
    # code and details, not the HTTP status, say whether DefaultShouldRetry retries, and its
    # message (even an empty one) is the error. A body that is not a Status (no kind) is the
    # generic error of the HTTP status.
    def status_body(**fields):
        return json.dumps(dict({"status": "Failure"}, **fields), sort_keys=True)
    for label, resp, retried, text in [
        ("500 with a Status saying Forbidden", {"status": 500, "content_type": "application/json",
                                                "body": status_body(kind="Status", apiVersion="v1", message="nope", reason="Forbidden", code=403)},
         False, "nope"),
        ("503 with a Status saying InternalError", {"status": 503, "content_type": "application/json",
                                                    "body": status_body(kind="Status", apiVersion="v1", message="broke", reason="InternalError", code=500)},
         True, "broke"),
        ("503 with a Status asking for a delay", {"status": 503, "content_type": "application/json",
                                                  "body": status_body(kind="Status", apiVersion="v1", message="later", reason="ServiceUnavailable",
                                                                      code=503, details={"retryAfterSeconds": 1})},
         True, "later"),
        ("504 with a ServerTimeout Status", {"status": 504, "content_type": "application/json",
                                             "body": status_body(kind="Status", apiVersion="v1", message="slow", reason="ServerTimeout", code=504, details={})},
         True, "slow"),
        ("400 with a Status saying TooManyRequests", {"status": 400, "content_type": "application/json",
                                                      "body": status_body(kind="Status", apiVersion="v1", message="busy", reason="TooManyRequests", code=429)},
         True, "busy"),
        ("500 with a Status of unknown reason and code 500", {"status": 500, "content_type": "application/json",
                                                              "body": status_body(kind="Status", apiVersion="v1", message="odd", reason="Odd", code=500)},
         True, "odd"),
        ("500 with a Status of unknown reason and code 400", {"status": 500, "content_type": "application/json",
                                                              "body": status_body(kind="Status", apiVersion="v1", message="odd", reason="Odd", code=400)},
         False, "odd"),
        ("500 with a Status without a message", {"status": 500, "content_type": "application/json",
                                                 "body": status_body(kind="Status", apiVersion="v1", reason="InternalError", code=500)},
         True, ""),
        ("500 with a Status without kind", {"status": 500, "content_type": "application/json",
                                            "body": status_body(apiVersion="v1", message="kindless", reason="Forbidden", code=403)},
         True, 'an error on the server ("unknown") has prevented the request from succeeding'),
        ("500 with a Status without apiVersion", {"status": 500, "content_type": "application/json",
                                                  "body": status_body(kind="Status", message="versionless", reason="Forbidden", code=403)},
         False, "versionless"),
        ("500 with a Success Status", {"status": 500, "content_type": "application/json",
                                       "body": json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Success", "message": "fine", "code": 200})},
         True, 'an error on the server ("unknown") has prevented the request from succeeding'),
        ("401 with a Status", {"status": 401, "content_type": "application/json",
                               "body": status_body(kind="Status", apiVersion="v1", message="Unauthorized", reason="Unauthorized", code=401)},
         False, "Unauthorized"),
        # A 401 is judged like any other status: a Status body saying InternalError or
        # TooManyRequests is retried (DefaultShouldRetry looks at the decoded error only).
        ("401 with a Status saying InternalError", {"status": 401, "content_type": "application/json",
                                                    "body": status_body(kind="Status", apiVersion="v1", message="m", reason="InternalError", code=500)},
         True, "m"),
        ("401 with a Status saying TooManyRequests", {"status": 401, "content_type": "application/json",
                                                      "body": status_body(kind="Status", apiVersion="v1", message="busy", reason="TooManyRequests", code=429)},
         True, "busy"),
        ("406 without a body", {"status": 406, "content_type": "text/plain", "body": ""},
         False, "the server was unable to respond with a content type that the client supports"),
        ("406 with a text body", {"status": 406, "content_type": "text/plain", "body": "only yaml"}, False, "only yaml"),
        ("415 with a text body", {"status": 415, "content_type": "text/plain", "body": "only protobuf"}, False, "only protobuf"),
        ("415 with a JSON body", {"status": 415, "content_type": "application/json", "body": "{}"}, False, "unknown"),
        # A Status in a 2xx is decoded as the answer, which it cannot be converted to.
        ("200 with a failed Status", {"status": 200, "content_type": "application/json",
                                      "body": status_body(kind="Status", apiVersion="v1", message="refused", reason="Forbidden", code=403)},
         False, "converting (v1.Status) to (v1.TokenReview): unknown conversion"),
        ("200 with a failed InternalError Status", {"status": 200, "content_type": "application/json",
                                                    "body": status_body(kind="Status", apiVersion="v1", message="broke", reason="InternalError", code=500)},
         False, "converting (v1.Status) to (v1.TokenReview): unknown conversion"),
        ("200 empty, no content type", {"status": 200, "content_type": "", "body": ""},
         False, "0-length response with status code: 200 and content type: application/json"),
    ]:
        n = 2 if retried else 1
        cases.append(case(f"http: {label}", wh([resp], v, steps=2), {"token": WH_TOKEN}, expect=error(text, calls=seen(n))))
    for version in ["v1", "v1beta1"]:
        cases.append(case(f"http: {version}: 200 with a Success Status",
                          wh([{"status": 200, "content_type": "application/json",
                               "body": json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Success", "code": 200})}], version, steps=2),
                          {"token": WH_TOKEN},
                          expect=error(f"converting (v1.Status) to ({version}.TokenReview): unknown conversion", calls=seen(1))))
    cases.append(case("http: 500 then 200 succeeds on the retry",
                      wh([{"status": 500, "content_type": "text/plain", "body": "boom"}, r200(v, alice_status)], v, steps=2),
                      {"token": WH_TOKEN}, expect=ok(alice, calls=seen(2))))
    cases.append(case("http: 429 then denial", wh([{"status": 429, "content_type": "text/plain", "body": ""},
                                                   r200(v, {"authenticated": False})], v, steps=2),
                      {"token": WH_TOKEN}, expect=not_mine(calls=seen(2))))
    cases.append(case("http: 500 with one attempt allowed", wh([{"status": 500, "content_type": "text/plain", "body": "boom"},
                                                               r200(v, alice_status)], v, steps=1),
                      {"token": WH_TOKEN}, expect=error('an error on the server ("boom") has prevented the request from succeeding', calls=seen(1))))
    for label, resp in [
        ("body not JSON", {"status": 200, "content_type": "application/json", "body": "not json"}),
        ("empty body", {"status": 200, "content_type": "application/json", "body": ""}),
        ("JSON array", {"status": 200, "content_type": "application/json", "body": "[]"}),
        ("authenticated is a string", {"status": 200, "content_type": "application/json",
                                       "body": '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","status":{"authenticated":"true"}}'}),
        ("groups is a string", {"status": 200, "content_type": "application/json",
                                "body": '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","status":{"authenticated":true,"user":{"username":"a","groups":"g"}}}'}),
    ]:
        cases.append(case(f"malformed: {label}", wh([resp], v, steps=2), {"token": WH_TOKEN}, expect=error(calls=seen(1))))
    # The backend echoes the token into its error text.
    echo = {"authenticated": False, "error": f"token {WH_TOKEN} has expired"}
    cases.append(case("secrets: error text echoing the token", wh([r200(v, echo)], v), {"token": WH_TOKEN},
                      k8s=error(f"token {WH_TOKEN} has expired", calls=seen()),
                      kube_authn=error("token <redacted> has expired", calls=seen()), reason=R_WH_SCRUB))
    return cases


# ---------------------------------------------------------------------------------------------
# service_account: --service-account-key-file / --service-account-issuer (kubernetes
# pkg/serviceaccount, v1.37.2). The Go oracle imports k8s.io/kubernetes (its staging modules
# replaced by the published v0.37.2 ones in conformance/go/go.mod) and builds the legacy and bound
# authenticators as kube-apiserver does, with pkg/serviceaccount's clock bound to the vector's
# "now" and the bound validator's lookups answered from the vector's objects. Expectations were
# first written from k8s-token-authn.md §2 (jwt_test.go TestTokenGenerateAndValidate,
# claims_test.go TestValidatePrivateClaims, util_test.go). Tokens are minted here (RS256, and
# RFC 6979 ES256) with conformance/pki.py keys.
# ---------------------------------------------------------------------------------------------
SA_NOW = 1514764800  # claims_test.go's fixed now
SA_ISS = "https://kubernetes.default.svc"


def sa_cases():
    import hashlib
    import pki
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, padding
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    rsa_key = pki.key("sa-rsa", "rsa2048")
    ec_key = pki.key("sa-ec", "p256")
    other_key = pki.key("sa-other", "rsa2048")

    def pub_pem(k):
        return k.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()

    def kid(k):
        der = k.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        return b64u(hashlib.sha256(der).digest())

    def mint(claims, k=rsa_key, with_kid=True, header=None):
        alg = "ES256" if isinstance(k, ec.EllipticCurvePrivateKey) else "RS256"
        h = {"alg": alg}
        if with_kid:
            h["kid"] = kid(k)
        h.update(header or {})
        signing_input = (b64u(json.dumps(h, separators=(",", ":"), sort_keys=True)) + "." +
                         b64u(json.dumps(claims, separators=(",", ":"), sort_keys=True)))
        if alg == "RS256":
            sig = k.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        else:
            r, s = decode_dss_signature(k.sign(signing_input.encode(),
                                               ec.ECDSA(hashes.SHA256(), deterministic_signing=True)))
            sig = r.to_bytes(32, "big") + s.to_bytes(32, "big")
        return signing_input + "." + b64u(sig)

    def ref(c):
        return c

    cases = []
    # Legacy (secret-based) tokens, --service-account-lookup=false.
    legacy_claims = {"iss": "kubernetes/serviceaccount", "sub": "system:serviceaccount:test:my-service-account",
                     "kubernetes.io/serviceaccount/namespace": "test",
                     "kubernetes.io/serviceaccount/secret.name": "my-secret",
                     "kubernetes.io/serviceaccount/service-account.name": "my-service-account",
                     "kubernetes.io/serviceaccount/service-account.uid": "12345"}
    sa_user = user("system:serviceaccount:test:my-service-account", "12345",
                   ["system:serviceaccounts", "system:serviceaccounts:test"])

    def legacy(keys, issuers=None):
        n = {"kind": "service_account", "mode": "legacy", "keys": "".join(pub_pem(k) for k in keys),
             "implicit_audiences": ["api"], "now": SA_NOW}
        if issuers:
            n["issuers"] = issuers
        return {"token": n}

    rsa_tok = mint(legacy_claims)
    ec_tok = mint(legacy_claims, ec_key)
    for label, setup, tok, expect in [
        ("valid key (rsa)", legacy([rsa_key]), rsa_tok, ok(sa_user, ["api"])),
        ("valid key (ecdsa)", legacy([ec_key]), ec_tok, ok(sa_user, ["api"])),
        ("rotated keys (rsa)", legacy([other_key, ec_key, rsa_key]), rsa_tok, ok(sa_user, ["api"])),
        ("rotated keys (ecdsa)", legacy([other_key, rsa_key, ec_key]), ec_tok, ok(sa_user, ["api"])),
        ("invalid keys (rsa)", legacy([other_key, ec_key]), rsa_tok, error("invalid signature, no keys found")),
        ("invalid keys (ecdsa)", legacy([other_key, rsa_key]), ec_tok, error("invalid signature, no keys found")),
        ("no kid: every key tried", legacy([other_key, rsa_key]), mint(legacy_claims, with_kid=False), ok(sa_user, ["api"])),
        ("no kid, no key verifies", legacy([other_key]), mint(legacy_claims, with_kid=False),
         error("go-jose/go-jose: error in cryptographic primitive")),
        ("tampered signature", legacy([rsa_key]), rsa_tok[:-4] + ("AAAA" if not rsa_tok.endswith("AAAA") else "BBBB"),
         error("go-jose/go-jose: error in cryptographic primitive")),
        ("non-JWT token", legacy([rsa_key]), "invalid token", not_mine()),
        ("JWS JSON serialisation is not ours", legacy([rsa_key]), '{"payload":"' + rsa_tok.split(".")[1] + '"}', not_mine()),
        ("two parts", legacy([rsa_key]), ".".join(rsa_tok.split(".")[:2]), not_mine()),
        ("invalid issuer", legacy([rsa_key]), mint(dict(legacy_claims, iss="foo")), not_mine()),
        ("bound issuer is not the legacy one", legacy([rsa_key]), mint(dict(legacy_claims, iss=SA_ISS)), not_mine()),
        ("legacy tokens are not time-checked", legacy([rsa_key]), mint(dict(legacy_claims, exp=SA_NOW - 10_000_000)),
         ok(sa_user, ["api"])),
        ("sub claim missing", legacy([rsa_key]), mint({k: v for k, v in legacy_claims.items() if k != "sub"}),
         error("sub claim is missing")),
        ("namespace claim missing", legacy([rsa_key]),
         mint({k: v for k, v in legacy_claims.items() if k != "kubernetes.io/serviceaccount/namespace"}),
         error("namespace claim is missing")),
        ("secret name claim missing", legacy([rsa_key]),
         mint({k: v for k, v in legacy_claims.items() if k != "kubernetes.io/serviceaccount/secret.name"}),
         error("secretName claim is missing")),
        ("service account uid claim missing", legacy([rsa_key]),
         mint({k: v for k, v in legacy_claims.items() if k != "kubernetes.io/serviceaccount/service-account.uid"}),
         error("serviceAccountUID claim is missing")),
        ("sub does not match the claims", legacy([rsa_key]),
         mint(dict(legacy_claims, sub="system:serviceaccount:test:other")), error("sub claim is invalid")),
        ("sub is not a service account name", legacy([rsa_key]), mint(dict(legacy_claims, sub="alice")),
         error("sub claim is invalid")),
    ]:
        cases.append(ref(case(f"legacy: {label}", setup, {"token": tok}, expect=expect)))
    cases.append(ref(case("legacy: requested audience outside the implicit ones", legacy([rsa_key]),
                          {"token": rsa_tok, "audiences": ["other"]},
                          expect=error('token audiences ["api"] is invalid for the target audiences ["other"]'))))
    cases.append(ref(case("legacy: requested audience among the implicit ones", legacy([rsa_key]),
                          {"token": rsa_tok, "audiences": ["x", "api"]}, expect=ok(sa_user, ["api"]))))
    # A requested list that is present but empty is not "none requested": the intersection is
    # empty (apiserver AudiencesFrom's ok is true; pkg/serviceaccount/jwt.go).
    cases.append(ref(case("legacy: an empty requested audience list is not the implicit one", legacy([rsa_key]),
                          {"token": rsa_tok, "audiences": []},
                          expect=error('token audiences ["api"] is invalid for the target audiences []'))))

    # Legacy tokens with --service-account-lookup (the default): the secret must exist, not be
    # deleting, hold this very token, not carry the invalid-since label; the service account
    # must exist, not be deleting, and have the claimed uid.
    def legacy_lookup(secret=None, sa=None, secrets=True, sas=True):
        s = {"namespace": "test", "name": "my-secret", "uid": "secretuid", "token": rsa_tok}
        a = {"namespace": "test", "name": "my-service-account", "uid": "12345", "secrets": ["my-secret"]}
        s.update(secret or {})
        a.update(sa or {})
        setup = legacy([rsa_key])
        setup["token"]["lookup"] = {"secrets": [s] if secrets else [], "service_accounts": [a] if sas else []}
        return setup

    invalid_text = ("the token in secret test/my-secret for service account test/my-service-account has been "
                    "marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, "
                    "or remove the 'kubernetes.io/legacy-token-invalid-since' label from the secret to temporarily "
                    "allow use of this token")
    for label, setup, expect in [
        ("the secret holds this token", legacy_lookup(), ok(sa_user, ["api"])),
        ("a manually created secret (not listed by the service account)", legacy_lookup(sa={"secrets": []}),
         ok(sa_user, ["api"])),
        ("secret missing", legacy_lookup(secrets=False), error("Token has been invalidated")),
        ("secret being deleted", legacy_lookup(secret={"deletion_timestamp": SA_NOW + 3600}), error("Token has been invalidated")),
        ("secret holds another token", legacy_lookup(secret={"token": rsa_tok[:-4] + "AAAA"}),
         error("Token does not match server's copy")),
        ("secret without data", legacy_lookup(secret={"token": None}), error("Token does not match server's copy")),
        ("service account missing", legacy_lookup(sas=False), error('serviceaccounts "my-service-account" not found')),
        ("service account being deleted", legacy_lookup(sa={"deletion_timestamp": SA_NOW + 3600}),
         error("ServiceAccount test/my-service-account has been deleted")),
        ("service account uid differs", legacy_lookup(sa={"uid": "other"}),
         error("ServiceAccount UID (other) does not match claim (12345)")),
        ("secret marked invalid", legacy_lookup(secret={"invalid_since": "2023-01-01"}), error(invalid_text)),
        ("empty invalid-since label", legacy_lookup(secret={"invalid_since": ""}), ok(sa_user, ["api"])),
    ]:
        cases.append(ref(case(f"legacy lookup: {label}", setup, {"token": rsa_tok}, expect=expect)))

    # Bound (TokenRequest) tokens, with lookups of the service account and bound objects.
    lookup = {"service_accounts": [{"namespace": "ns", "name": "saname", "uid": "sauid"}],
              "secrets": [{"namespace": "ns", "name": "secretname", "uid": "secretuid"}],
              "pods": [{"namespace": "ns", "name": "podname", "uid": "poduid"}],
              "nodes": [{"name": "nodename", "uid": "nodeuid"}]}

    def bound(lk=None, implicit=(SA_ISS,)):
        return {"token": {"kind": "service_account", "mode": "bound", "issuers": [SA_ISS, "https://other.example"],
                          "keys": pub_pem(rsa_key) + pub_pem(ec_key), "implicit_audiences": list(implicit),
                          "now": SA_NOW, "lookup": lk or lookup}}

    def claims(**kw):
        k8s = {"namespace": "ns", "serviceaccount": {"name": "saname", "uid": "sauid"}}
        for ref_ in ["pod", "secret", "node"]:
            if ref_ in kw:
                k8s[ref_] = kw.pop(ref_)
        c = {"iss": SA_ISS, "sub": "system:serviceaccount:ns:saname", "aud": [SA_ISS], "exp": SA_NOW + 3600,
             "iat": SA_NOW, "nbf": SA_NOW, "kubernetes.io": k8s}
        c.update(kw)
        return {k: v for k, v in c.items() if v is not None}

    groups = ["system:serviceaccounts", "system:serviceaccounts:ns"]
    bu = lambda extra=None: user("system:serviceaccount:ns:saname", "sauid", groups, extra)
    pod = {"name": "podname", "uid": "poduid"}
    node = {"name": "nodename", "uid": "nodeuid"}
    secret = {"name": "secretname", "uid": "secretuid"}
    H = 3600
    deleted = lambda what, when: {**lookup, what: [dict(lookup[what][0], deletion_timestamp=when)]}
    for label, setup, c, expect in [
        ("good", bound(), claims(), ok(bu(), [SA_ISS])),
        ("signed with the ecdsa key", bound(), claims(), ok(bu(), [SA_ISS])),
        ("second accepted issuer", bound(), claims(iss="https://other.example"), ok(bu(), [SA_ISS])),
        ("unknown issuer", bound(), claims(iss="https://unknown.example"), not_mine()),
        ("jti becomes the credential id", bound(), claims(jti="fixed"),
         ok(bu({"authentication.kubernetes.io/credential-id": ["JTI=fixed"]}), [SA_ISS])),
        ("pod ref", bound(), claims(pod=pod),
         ok(bu({"authentication.kubernetes.io/pod-name": ["podname"], "authentication.kubernetes.io/pod-uid": ["poduid"]}), [SA_ISS])),
        ("pod and node refs: node from the claims", bound(), claims(pod=pod, node={"name": "n2", "uid": "n2uid"}),
         ok(bu({"authentication.kubernetes.io/pod-name": ["podname"], "authentication.kubernetes.io/pod-uid": ["poduid"],
                "authentication.kubernetes.io/node-name": ["n2"], "authentication.kubernetes.io/node-uid": ["n2uid"]}), [SA_ISS])),
        ("node ref", bound(), claims(node=node),
         ok(bu({"authentication.kubernetes.io/node-name": ["nodename"], "authentication.kubernetes.io/node-uid": ["nodeuid"]}), [SA_ISS])),
        ("secret ref", bound(), claims(secret=secret), ok(bu(), [SA_ISS])),
        ("expired", bound(), claims(exp=SA_NOW - 1000 * H), error("service account token has expired")),
        ("expired 60 s ago: leeway", bound(), claims(exp=SA_NOW - 60), ok(bu(), [SA_ISS])),
        ("expired 61 s ago", bound(), claims(exp=SA_NOW - 61), error("service account token has expired")),
        ("not yet valid", bound(), claims(nbf=SA_NOW + 1000 * H), error("service account token is not valid yet")),
        ("valid in 60 s: leeway", bound(), claims(nbf=SA_NOW + 60), ok(bu(), [SA_ISS])),
        ("issued in the future", bound(), claims(iat=SA_NOW + 1000 * H), error("service account token is issued in the future")),
        ("no exp passes", bound(), claims(exp=None), ok(bu(), [SA_ISS])),
        ("exp is a string", bound(), claims(exp=str(SA_NOW)),
         error("go-jose/go-jose/jwt: expected number value to unmarshal NumericDate")),
        ("missing serviceaccount", bound({**lookup, "service_accounts": []}), claims(),
         error('serviceaccounts "saname" not found')),
        ("different uid serviceaccount", bound(), claims(**{"kubernetes.io": None}) | {"kubernetes.io": {"namespace": "ns", "serviceaccount": {"name": "saname", "uid": "sauidold"}}},
         error("service account UID (sauid) does not match claim (sauidold)")),
        ("missing pod", bound({**lookup, "pods": []}), claims(pod=pod), error("service account token has been invalidated")),
        ("different uid pod", bound(), claims(pod={"name": "podname", "uid": "poduidold"}),
         error("pod UID (poduid) does not match service account pod ref claim (poduidold)")),
        ("missing secret", bound({**lookup, "secrets": []}), claims(secret=secret), error("service account token has been invalidated")),
        ("different uid secret", bound(), claims(secret={"name": "secretname", "uid": "secretuidold"}),
         error("secret UID (secretuid) does not match service account secret ref claim (secretuidold)")),
        ("missing node", bound({**lookup, "nodes": []}), claims(node=node), error("service account token has been invalidated")),
        ("different uid node", bound(), claims(node={"name": "nodename", "uid": "nodeuidold"}),
         error("node UID (nodeuid) does not match service account node ref claim (nodeuidold)")),
        ("serviceaccount deleted 60 s ago", bound(deleted("service_accounts", SA_NOW - 60)), claims(), ok(bu(), [SA_ISS])),
        ("serviceaccount deleted 61 s ago", bound(deleted("service_accounts", SA_NOW - 61)), claims(),
         error("service account ns/saname has been deleted")),
        ("pod deleted 61 s ago", bound(deleted("pods", SA_NOW - 61)), claims(pod=pod), error("service account token has been invalidated")),
        ("pod deleting in the future", bound(deleted("pods", SA_NOW + 1)), claims(pod=pod),
         ok(bu({"authentication.kubernetes.io/pod-name": ["podname"], "authentication.kubernetes.io/pod-uid": ["poduid"]}), [SA_ISS])),
        ("audience mismatch", bound(), claims(aud=["other"]),
         error(f'token audiences ["other"] is invalid for the target audiences ["{SA_ISS}"]')),
        ("aud as a string", bound(), claims(aud=SA_ISS), ok(bu(), [SA_ISS])),
        ("no aud: the implicit audiences", bound(), claims(aud=None), ok(bu(), [SA_ISS])),
        ("no implicit audiences: no audience check", bound(implicit=()), claims(aud=["other"]), ok(bu())),
    ]:
        k = ec_key if "ecdsa" in label else rsa_key
        cases.append(ref(case(f"bound: {label}", setup, {"token": mint(c, k)}, expect=expect)))
    cases.append(ref(case("bound: requested audiences intersect", bound(), {"token": mint(claims(aud=["a", SA_ISS, "b"])), "audiences": ["b", "a"]},
                          expect=ok(bu(), ["b", "a"]))))
    cases.append(ref(case("bound: an empty requested audience list is not the implicit one", bound(implicit=("api",)),
                          {"token": mint(claims(aud=["api"])), "audiences": []},
                          expect=error('token audiences ["api"] is invalid for the target audiences []'))))
    # go-jose reads exp as a float64 turned into an int64, and time.Unix(exp, 0) overflows past
    # MaxInt64 - 62135596800 s (values rounding to 2^63 become MinInt64 on amd64): such a time
    # lies in the far past, so the token has expired. The float rounding (steps of 1024 up
    # there) places the edge between ...179008 (valid) and ...179519 (expired).
    for exp, expect in [
        (9223372036854775807, error("service account token has expired")),
        (9223372036854775296, error("service account token has expired")),
        (9223371974719190000, error("service account token has expired")),
        (9223371974719179519, error("service account token has expired")),
        (9223371974719179008, ok(bu(), [SA_ISS])),
        (9223371974719170000, ok(bu(), [SA_ISS])),
    ]:
        cases.append(ref(case(f"bound: exp {exp}", bound(), {"token": mint(claims(exp=exp))}, expect=expect)))

    # Claim shapes and JOSE headers: what kube-apiserver routes, refuses, or lets through, and
    # with which text (each outcome observed from k8s.io/kubernetes v1.37.2 by the oracle).
    def mint_raw(header, payload, k=rsa_key):
        signing_input = b64u(header) + "." + b64u(payload)
        sig = k.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return signing_input + "." + b64u(sig)

    def k8s_claims(**kw):
        c = claims()
        c["kubernetes.io"] = dict(c["kubernetes.io"], **kw)
        return c

    hdr = json.dumps({"alg": "RS256", "kid": kid(rsa_key)}, separators=(",", ":"))
    rsa_pub = rsa_key.public_key().public_numbers()
    rsa_jwk = {"kty": "RSA", "n": b64u(rsa_pub.n.to_bytes(256, "big")), "e": b64u(rsa_pub.e.to_bytes(3, "big"))}
    good = json.dumps(claims(), separators=(",", ":"), sort_keys=True)
    ok_ = ok(bu(), [SA_ISS])
    crypto = error("go-jose/go-jose: error in cryptographic primitive")
    webhook_bound = error('feature gate "APIServerWebhookAuthenticationToken" is disabled, but token is webhook bound')
    unmarshal = lambda kind, go: error(f"json: cannot unmarshal {kind} into Go value of type {go}")
    numeric_date = error("go-jose/go-jose/jwt: expected number value to unmarshal NumericDate")
    audience = error("go-jose/go-jose/jwt: expected string or array value to unmarshal to Audience")
    R_UNREAD = ("kube-authn never reads jwk/x5c (keys come only from configuration): the token is judged by its "
                "signature; go-jose parses them and fails ParseSigned on one it cannot decode, which "
                "Kubernetes answers with not mine")
    R_DUP_DEPTH = ("duplicate member names are refused at any depth (one JSON dialect for router and verifier); "
                   "go-jose checks only the objects it decodes into Go values")
    R_HEADER = ("a token naming our issuer whose JOSE header does not parse is an error (fail closed), not a "
                "token passed on down the chain")
    probes = [
        ("validating webhook ref", mint(k8s_claims(validatingwebhookconfiguration={"name": "vwc", "uid": "vwcuid"})), webhook_bound),
        ("mutating webhook ref", mint(k8s_claims(mutatingwebhookconfiguration={"name": "mwc", "uid": "mwcuid"})), webhook_bound),
        ("webhook ref null", mint(k8s_claims(validatingwebhookconfiguration=None)), ok_),
        ("webhook ref empty object", mint(k8s_claims(mutatingwebhookconfiguration={})), webhook_bound),
        ("kubernetes.io is a string", mint(dict(claims(), **{"kubernetes.io": "x"})), unmarshal("string", "serviceaccount.kubernetes")),
        ("kubernetes.io is null", mint(dict(claims(), **{"kubernetes.io": None})), error("resource name may not be empty")),
        ("no kubernetes.io", mint({k: v for k, v in claims().items() if k != "kubernetes.io"}), error("resource name may not be empty")),
        ("pod ref is an array", mint(k8s_claims(pod=["podname"])), unmarshal("array", "serviceaccount.ref")),
        ("pod name is a number", mint(k8s_claims(pod={"name": 1, "uid": "poduid"})), unmarshal("number", "string")),
        ("namespace is a number", mint(k8s_claims(namespace=5)), unmarshal("number", "string")),
        ("no namespace", mint({**claims(), "kubernetes.io": {"serviceaccount": {"name": "saname", "uid": "sauid"}}}),
         error("the server could not find the requested resource")),
        ("no serviceaccount", mint({**claims(), "kubernetes.io": {"namespace": "ns"}}), error("resource name may not be empty")),
        ("pod ref without a name", mint(k8s_claims(pod={"uid": "poduid"})), error("service account token has been invalidated")),
        ("webhook ref, pod missing: the lookup fails first", mint(k8s_claims(pod={"name": "gone", "uid": "x"},
                                                                      validatingwebhookconfiguration={"name": "v", "uid": "u"})),
         error("service account token has been invalidated")),
        ("webhook ref, service account missing: the lookup fails first",
         mint({**claims(), "kubernetes.io": {"namespace": "ns", "serviceaccount": {"name": "nobody", "uid": "u"},
                                             "mutatingwebhookconfiguration": {"name": "m", "uid": "u"}}}),
         error('serviceaccounts "nobody" not found')),
        ("warnafter is a string", mint(k8s_claims(warnafter="x")), numeric_date),
        ("attestations is a number", mint(k8s_claims(attestations=5)),
         unmarshal("number", "map[string]authentication.AttestationValue")),
        ("attestation is a string", mint(k8s_claims(attestations={"a": "b"})), unmarshal("string", "authentication.AttestationValue")),
        ("attestations of the right shape", mint(k8s_claims(attestations={"a": ["b"]})), ok_),
        ("attestations with null values", mint(k8s_claims(attestations={"a": None, "b": ["x", None]})), ok_),
        ("aud is []", mint(claims(aud=[])), ok_),
        ("aud is null", mint_raw(hdr, good.replace('"aud":["https://kubernetes.default.svc"]', '"aud":null')), audience),
        ("aud is a number", mint(claims(aud=5)), audience),
        ("aud holds a number", mint(claims(aud=[SA_ISS, 5])), audience),
        ("iss is a number", mint(claims(iss=5)), not_mine()),
        ("sub is a number", mint(claims(sub=5)), unmarshal("number", "string")),
        ("jti is a number", mint(claims(jti=5)), unmarshal("number", "string")),
        ("nbf is a string", mint(claims(nbf="x")), numeric_date),
        ("iat is a boolean", mint(claims(iat=True)), numeric_date),
        ("exp null", mint_raw(hdr, good.replace('"exp":%d' % (SA_NOW + 3600), '"exp":null')), ok_),
        ("exp with a fraction", mint(claims(exp=SA_NOW + 3600.5)), ok_),
        ("exp in exponent form", mint_raw(hdr, good.replace('"exp":%d' % (SA_NOW + 3600), '"exp":1.5147684e9')), ok_),
        ("duplicate iss", mint_raw(hdr, good.replace('{', '{"iss":"https://kubernetes.default.svc",', 1)),
         error("json: duplicate key 'iss' in object")),
        ("duplicate iss, another issuer last", mint_raw(hdr, good.replace('{', '{"iss":"https://kubernetes.default.svc",', 1)
                                                      .replace('"iss":"https://kubernetes.default.svc"}', '"iss":"https://elsewhere.example"}')
                                                      .replace(',"iss":"https://kubernetes.default.svc",', ',"iss":"https://elsewhere.example",')),
         not_mine()),
        ("duplicate iss, the last one null", mint_raw(hdr, good.replace('{', '{"iss":null,', 1).replace('"iss":"https://kubernetes.default.svc"', '"iss":null,"iss":"https://kubernetes.default.svc","iss":null', 1)),
         error("json: duplicate key 'iss' in object")),
        ("duplicate iss, one of them a number", mint_raw(hdr, good.replace('{', '{"iss":5,', 1)), not_mine()),
        ("duplicate namespace", mint_raw(hdr, good.replace('"namespace":"ns"', '"namespace":"ns","namespace":"ns"')),
         error("json: duplicate key 'namespace' in object")),
        ("duplicate unknown top-level member", mint_raw(hdr, good.replace('{', '{"x":1,"x":2,', 1)),
         error("json: duplicate key 'x' in object")),
        ("duplicate iss, signature not ours", mint_raw(hdr, good.replace('{', '{"iss":"https://kubernetes.default.svc",', 1), other_key),
         crypto),
        ("escaped member name", mint_raw(hdr, good.replace('"namespace":"ns"', '"n\\u0061mespace":"ns"')), ok_),
        # A lone surrogate escape is U+FFFD (go-jose's fork of encoding/json, and the issuer
        # peek's encoding/json): a valid payload; names equal once decoded are a repeat.
        ("a lone surrogate in an unknown claim", mint_raw(hdr, good.replace('{', '{"x":"a\\ud800\\u0041",', 1)), ok_),
        ("names equal once lone surrogates are U+FFFD", mint_raw(hdr, good.replace('{', '{"x\\ud800":1,"x\\udc00":2,', 1)),
         error("json: duplicate key 'x\ufffd' in object")),
        ("alg none", b64u('{"alg":"none"}') + "." + b64u(good) + ".", crypto),
        ("alg HS256", b64u('{"alg":"HS256"}') + "." + b64u(good) + "." + b64u(b"x" * 32), crypto),
        ("header alg lower case", mint_raw(json.dumps({"alg": "rs256", "kid": kid(rsa_key)}), good), crypto),
        ("header jwk, a public RSA key", mint_raw(json.dumps({"alg": "RS256", "kid": kid(rsa_key), "jwk": rsa_jwk}), good), ok_),
        ("header jku", mint_raw(json.dumps({"alg": "RS256", "kid": kid(rsa_key), "jku": "https://127.0.0.1:1/jwks"}), good), ok_),
        ("header x5u", mint_raw(json.dumps({"alg": "RS256", "kid": kid(rsa_key), "x5u": "https://127.0.0.1:1/x5u"}), good), ok_),
        ("header typ", mint_raw(json.dumps({"alg": "RS256", "kid": kid(rsa_key), "typ": "JWT"}), good), ok_),
        ("crit header", mint_raw(json.dumps({"alg": "RS256", "kid": kid(rsa_key), "crit": ["x"], "x": 1}), good), crypto),
        ("unknown kid", mint_raw(json.dumps({"alg": "RS256", "kid": "nope"}), good), error("invalid signature, no keys found")),
        ("RS256 token, alg header ES256", mint_raw(json.dumps({"alg": "ES256", "kid": kid(rsa_key)}), good), crypto),
        ("RS256 token, alg header PS256", mint_raw(json.dumps({"alg": "PS256", "kid": kid(rsa_key)}), good), crypto),
        ("payload not JSON", mint_raw(hdr, "not json"), not_mine()),
        ("payload a JSON array", mint_raw(hdr, "[1]"), not_mine()),
    ]
    for label, tok, expect in probes:
        cases.append(ref(case(f"bound: {label}", bound(), {"token": tok}, expect=expect)))
    # Every algorithm kube-apiserver's service-account keys can verify (RSA and ECDSA key files;
    # go-jose takes any `alg` the key fits), and mismatches between `alg` and key.
    p384_key = pki.key("sa-p384", "p384")
    p521_key = pki.key("sa-p521", "p521")

    def sign_alg(alg, k, payload, header_alg=None):
        h = json.dumps({"alg": header_alg or alg, "kid": kid(k)}, separators=(",", ":"))
        si = (b64u(h) + "." + b64u(payload)).encode()
        hash_ = {"256": hashes.SHA256(), "384": hashes.SHA384(), "512": hashes.SHA512()}[alg[2:]]
        if alg.startswith("RS"):
            sig = k.sign(si, padding.PKCS1v15(), hash_)
        elif alg.startswith("PS"):
            sig = pss_deterministic(k, si, alg[2:])
        else:
            size = (k.curve.key_size + 7) // 8
            r, s_ = decode_dss_signature(k.sign(si, ec.ECDSA(hash_, deterministic_signing=True)))
            sig = r.to_bytes(size, "big") + s_.to_bytes(size, "big")
        return si.decode() + "." + b64u(sig)

    def pss_deterministic(k, msg, bits):
        # RSASSA-PSS (RFC 8017 §9.1.1, MGF1, salt length = hash length) with a salt derived from
        # the message, so that regenerating the vectors gives the same bytes (cryptography's
        # PSS salt is random).
        h = {"256": hashlib.sha256, "384": hashlib.sha384, "512": hashlib.sha512}[bits]
        pub = k.public_key().public_numbers()
        mod_bits = pub.n.bit_length()
        em_len = (mod_bits - 1 + 7) // 8
        m_hash = h(msg).digest()
        h_len = len(m_hash)
        salt = h(b"salt" + msg).digest()
        digest = h(b"\0" * 8 + m_hash + salt).digest()
        db = b"\0" * (em_len - 2 * h_len - 2) + b"\x01" + salt
        mask, counter = b"", 0
        while len(mask) < len(db):
            mask += h(digest + counter.to_bytes(4, "big")).digest()
            counter += 1
        masked = bytearray(x ^ y for x, y in zip(db, mask))
        masked[0] &= 0xFF >> (8 * em_len - (mod_bits - 1))
        em = bytes(masked) + digest + b"\xbc"
        d = k.private_numbers().d
        return pow(int.from_bytes(em, "big"), d, pub.n).to_bytes((mod_bits + 7) // 8, "big")

    all_keys = bound()
    all_keys["token"]["keys"] = "".join(pub_pem(k) for k in [rsa_key, ec_key, p384_key, p521_key])
    for alg, k in [("RS384", rsa_key), ("RS512", rsa_key), ("PS256", rsa_key), ("PS384", rsa_key), ("PS512", rsa_key),
                   ("ES384", p384_key), ("ES512", p521_key)]:
        cases.append(ref(case(f"bound: {alg}", all_keys, {"token": sign_alg(alg, k, good)}, expect=ok_)))
    for label, tok in [
        ("ES256 header on a P-384 signature", sign_alg("ES384", p384_key, good, header_alg="ES256")),
        ("ES512 header on a P-384 signature", sign_alg("ES384", p384_key, good, header_alg="ES512")),
        ("PS256 header on a PKCS #1 v1.5 signature", sign_alg("RS256", rsa_key, good, header_alg="PS256")),
        ("RS256 header on a PSS signature", sign_alg("PS256", rsa_key, good, header_alg="RS256")),
        ("ES384 header with an RSA key id", sign_alg("RS384", rsa_key, good, header_alg="ES384")),
    ]:
        cases.append(ref(case(f"bound: {label}", all_keys, {"token": tok}, expect=crypto)))

    for label, tok, k8s_out, ours, reason in [
        ("duplicate member of an unknown nested object", mint_raw(hdr, good.replace('{', '{"x":{"a":1,"a":2},', 1)),
         ok_, error("json: duplicate key 'a' in object"), R_DUP_DEPTH),
        ("header jwk go-jose cannot decode", mint_raw(json.dumps({"alg": "RS256", "kid": kid(rsa_key), "jwk": {"kty": "oct", "k": "AA"}}), good),
         not_mine(), ok_, R_UNREAD),
        ("header x5c that is no certificate", mint_raw(json.dumps({"alg": "RS256", "kid": kid(rsa_key), "x5c": ["AAAA"]}), good),
         not_mine(), ok_, R_UNREAD),
        ("kid is a number", mint_raw(json.dumps({"alg": "RS256", "kid": 5}), good), not_mine(), error("malformed JWS header"), R_HEADER),
        ("padded signature", mint(claims()) + "==", not_mine(), error("malformed JWS signature"), R_HEADER),
    ]:
        cases.append(ref(case(f"bound: {label}", bound(), {"token": tok}, k8s=k8s_out, kube_authn=ours, reason=reason)))
    return cases


# ---------------------------------------------------------------------------------------------
# oidc: JWT authenticator with claim mappings (k8s plugin/pkg/authenticator/token/oidc). The Go
# oracle builds oidc.New with a go-oidc RemoteKeySet reading the vector's JWKS from a local
# server on 127.0.0.1; kube-authn gets the same JWKS through OidcAuthenticator::set_keys.
# Tokens: exp 2120, iat 2020 (real clocks on both sides); expired ones ended in 2010.
# ---------------------------------------------------------------------------------------------
OIDC_ISS = "https://issuer.example"
OIDC_UNMARSHAL = "oidc: verify token: oidc: failed to unmarshal claims: "
OIDC_EXP, OIDC_IAT = 4733510400, 1577836800  # 2120-01-01, 2020-01-01


R_OIDC_FOLD = (
    "go-oidc decodes its idToken with encoding/json, which matches member names to fields in any "
    "case (and \u017f as s); kube-authn reads exact names and refuses a member Go would fold onto an "
    "idToken field (iss, sub, aud, exp, iat, nbf, nonce, at_hash, _claim_names, _claim_sources) with "
    "an error naming it (src/token/oidc/mod.rs folded_id_token_field)")

# Deliberate differences: texts (both sides refuse the token; the texts only reach logs), and
# a member folded onto an idToken field, refused where Go may accept (fail closed).
OIDC_DIFFERENCES = {
    "EXP after exp": (
        error(OIDC_UNMARSHAL + 'claim "EXP" matches idToken.exp only by case folding'),
        R_OIDC_FOLD),
    "AUD after aud": (
        error(OIDC_UNMARSHAL + 'claim "AUD" matches idToken.aud only by case folding'),
        R_OIDC_FOLD),
    "Sub a number after sub": (
        error(OIDC_UNMARSHAL + 'claim "Sub" matches idToken.sub only by case folding'),
        R_OIDC_FOLD),
    "IAT true": (
        error(OIDC_UNMARSHAL + 'claim "IAT" matches idToken.iat only by case folding'),
        R_OIDC_FOLD),
    "_Claim_Names naming a missing source": (
        error(OIDC_UNMARSHAL + 'claim "_Claim_Names" matches idToken._claim_names only by case folding'),
        R_OIDC_FOLD),
    "NONCE, which nothing checks": (
        error(OIDC_UNMARSHAL + 'claim "NONCE" matches idToken.nonce only by case folding'),
        R_OIDC_FOLD),
    "ISS null": (
        error(OIDC_UNMARSHAL + 'claim "ISS" matches idToken.iss only by case folding'),
        R_OIDC_FOLD),
    "a repeated claim name (the last value is what go-oidc reads)": (
        error("oidc: verify token: oidc: failed to unmarshal claims: json: duplicate key 'sub' in object"),
        "go-oidc decodes the claims with encoding/json, where the last of repeated names wins; kube-authn "
        "refuses a payload that repeats a name (one JSON dialect for router and verifier, security.md "
        "§2.5), with an error from the issuer's authenticator rather than not mine"),
    "alg none": (
        error('oidc: verify token: oidc: id token signed with unsupported algorithm, expected ["RS256"] got "unsupported"'),
        "kube-authn does not copy an algorithm name it does not support from the attacker's header into "
        "errors and logs; the outcome is the same error (src/jwt/compact.rs)"),
    "exp as a quoted number": (
        error("oidc: verify token: oidc: failed to unmarshal claims: json: cannot unmarshal string into Go struct field idToken.exp of type json.Number"),
        "go-oidc reads exp/iat/nbf through json.Number, which also takes a quoted number; kube-authn "
        "requires a JSON number (a NumericDate of another JSON type is refused: the type-confusion "
        "class of CVE-2026-25537, src/token/oidc/mod.rs)"),
    "nbf as a quoted number": (
        error("oidc: verify token: oidc: failed to unmarshal claims: json: cannot unmarshal string into Go struct field idToken.nbf of type json.Number"),
        "go-oidc reads exp/iat/nbf through json.Number, which also takes a quoted number; kube-authn "
        "requires a JSON number (a NumericDate of another JSON type is refused: the type-confusion "
        "class of CVE-2026-25537, src/token/oidc/mod.rs)"),
}


def oidc_cases():
    import hashlib
    import pki
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, padding
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    rsa_key = pki.key("oidc-rsa", "rsa2048")
    ec_key = pki.key("oidc-ec", "p256")
    stranger = pki.key("oidc-stranger", "rsa2048")

    def jwk(k, kid):
        pub = k.public_key().public_numbers()
        if isinstance(k, ec.EllipticCurvePrivateKey):
            return {"kty": "EC", "crv": "P-256", "kid": kid, "use": "sig",
                    "x": b64u(pub.x.to_bytes(32, "big")), "y": b64u(pub.y.to_bytes(32, "big"))}
        n = pub.n.to_bytes((pub.n.bit_length() + 7) // 8, "big")
        return {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": b64u(n), "e": b64u(pub.e.to_bytes(3, "big"))}

    jwks = json.dumps({"keys": [jwk(rsa_key, "rsa-1"), jwk(ec_key, "ec-1")]}, sort_keys=True)

    def mint(claims, k=rsa_key, kid="rsa-1", alg=None, raw=None):
        alg = alg or ("ES256" if isinstance(k, ec.EllipticCurvePrivateKey) else "RS256")
        h = {"alg": alg, "typ": "JWT"}
        if kid:
            h["kid"] = kid
        payload = json.dumps(claims, separators=(",", ":"), sort_keys=True)
        if raw:
            payload = raw(payload)
        si = (b64u(json.dumps(h, separators=(",", ":"), sort_keys=True)) + "." + b64u(payload))
        if alg.startswith("RS"):
            sig = k.sign(si.encode(), padding.PKCS1v15(), hashes.SHA256())
        else:
            r, s = decode_dss_signature(k.sign(si.encode(), ec.ECDSA(hashes.SHA256(), deterministic_signing=True)))
            sig = r.to_bytes(32, "big") + s.to_bytes(32, "big")
        return si + "." + b64u(sig)

    def node(username=("sub", OIDC_ISS + "#"), groups=("groups", "oidc:"), uid=None, required=(), algs=("RS256",),
             audiences=("kube",)):
        n = {"kind": "oidc", "issuer": OIDC_ISS, "audiences": list(audiences), "jwks": jwks,
             "username_claim": username[0], "username_prefix": username[1], "signing_algs": list(algs),
             "required_claims": [list(r) for r in required]}
        if groups:
            n["groups_claim"], n["groups_prefix"] = groups
        if uid:
            n["uid_claim"] = uid
        return {"token": n}

    def claims(**kw):
        c = {"iss": OIDC_ISS, "aud": "kube", "sub": "alice", "exp": OIDC_EXP, "iat": OIDC_IAT, "groups": ["dev", "ops"]}
        c.update(kw)
        return {k: v for k, v in c.items() if v is not None}

    P = OIDC_ISS + "#"
    alice = user(P + "alice", "", ["oidc:dev", "oidc:ops"])
    std = node()
    cases = []
    for label, setup, tok, expect in [
        ("valid RS256 token", std, mint(claims()), ok(alice)),
        ("aud as a list", std, mint(claims(aud=["other", "kube"])), ok(alice)),
        ("groups as a string", std, mint(claims(groups="dev")), ok(user(P + "alice", "", ["oidc:dev"]))),
        ("no groups claim", std, mint(claims(groups=None)), ok(user(P + "alice"))),
        ("empty groups list", std, mint(claims(groups=[])), ok(user(P + "alice"))),
        ("groups claim not configured", node(groups=None), mint(claims()), ok(user(P + "alice"))),
        ("no username prefix", node(username=("sub", "")), mint(claims()), ok(user("alice", "", ["oidc:dev", "oidc:ops"]))),
        ("username from another claim", node(username=("preferred_username", "oidc:")),
         mint(claims(preferred_username="alice.smith")), ok(user("oidc:alice.smith", "", ["oidc:dev", "oidc:ops"]))),
        ("email claim, verified", node(username=("email", "")), mint(claims(email="alice@example.org", email_verified=True)),
         ok(user("alice@example.org", "", ["oidc:dev", "oidc:ops"]))),
        ("email claim, no email_verified", node(username=("email", "")), mint(claims(email="alice@example.org")),
         ok(user("alice@example.org", "", ["oidc:dev", "oidc:ops"]))),
        ("email claim, not verified", node(username=("email", "")),
         mint(claims(email="alice@example.org", email_verified=False)), error("oidc: email not verified")),
        ("uid claim", node(uid="oid"), mint(claims(oid="0000-1111")), ok(user(P + "alice", "0000-1111", ["oidc:dev", "oidc:ops"]))),
        ("jti becomes the credential id", std, mint(claims(jti="token-id-1")),
         ok(dict(alice, extra={"authentication.kubernetes.io/credential-id": ["JTI=token-id-1"]}))),
        ("an empty jti is no credential id", std, mint(claims(jti="")), ok(alice)),
        ("ES256 allowed", node(algs=("RS256", "ES256")), mint(claims(), ec_key, "ec-1"), ok(alice)),
        ("required claim present", node(required=[("hd", "example.org")]), mint(claims(hd="example.org")), ok(alice)),
        ("other issuer is not mine", std, mint(claims(iss="https://other.example")), not_mine()),
        ("not a JWT is not mine", std, "opaque-token", not_mine()),
        ("username claim missing", std, mint(claims(sub=None)), error("oidc: parse username claims \"sub\": claim not present")),
        ("required claim missing", node(required=[("hd", "example.org")]), mint(claims()),
         error("oidc: required claim hd not present in ID token")),
        ("required claim wrong", node(required=[("hd", "example.org")]), mint(claims(hd="evil.example")),
         error("oidc: required claim hd value does not match. Got = evil.example, want = example.org")),
        ("wrong audience", std, mint(claims(aud="other")), error('oidc: verify token: oidc: expected audience "kube" got ["other"]')),
        ("expired", std, mint(claims(exp=1262304000)), error("oidc: verify token: oidc: token is expired (Token Expiry: 2010-01-01 00:00:00 +0000 UTC)")),
        # go-oidc's time.Unix(exp, 0) overflows past MaxInt64 - 62135596800 s: a time in the far
        # past, printed as Go prints it (its calendar arithmetic wraps modulo 2^64 seconds).
        ("exp MaxInt64 has expired", std, mint(claims(exp=9223372036854775807)),
         error("oidc: verify token: oidc: token is expired (Token Expiry: 292277026596-12-04 15:30:07 +0000 UTC)")),
        ("exp MinInt64 has expired", std, mint(claims(exp=-9223372036854775808)),
         error("oidc: verify token: oidc: token is expired (Token Expiry: 292277026596-12-04 15:30:08 +0000 UTC)")),
        ("exp one past the last time Go represents has expired", std, mint(claims(exp=9223371974719179008)),
         error("oidc: verify token: oidc: token is expired (Token Expiry: 292277024627-12-06 15:30:08 +0000 UTC)")),
        ("exp at the last time Go represents", std, mint(claims(exp=9223371974719179007)), ok(alice)),
        ("ES256 not allowed", std, mint(claims(), ec_key, "ec-1"),
         error('oidc: verify token: oidc: id token signed with unsupported algorithm, expected ["RS256"] got "ES256"')),
        ("signed by an unknown key", std, mint(claims(), stranger, "rsa-1"),
         error("oidc: verify token: failed to verify signature: failed to verify id token signature")),
        ("not valid before 2100", std, mint(claims(nbf=4102444800)),
         {"result": "error", "error_contains": "oidc: verify token: oidc: current time "}),
        ("iat in the future is not checked", std, mint(claims(iat=4102444800)), ok(alice)),
        ("no kid: every key tried", std, mint(claims(), kid=None), ok(alice)),
        ("unknown kid", std, mint(claims(), kid="nope"),
         error("oidc: verify token: failed to verify signature: failed to verify id token signature")),
        ("alg none", std, b64u('{"alg":"none"}') + "." + b64u(json.dumps(claims(), sort_keys=True)) + ".",
         error('oidc: verify token: oidc: id token signed with unsupported algorithm, expected ["RS256"] got "none"')),
        ("no aud claim", std, mint(claims(aud=None)), error('oidc: verify token: oidc: expected audience "kube" got []')),
        ("issuer with a trailing slash is not mine", std, mint(claims(iss=OIDC_ISS + "/")), not_mine()),
        ("empty groups prefix", node(groups=("groups", "")), mint(claims()), ok(user(P + "alice", "", ["dev", "ops"]))),
        ("second of two configured audiences", node(audiences=("kube", "other")), mint(claims(aud="other")), ok(alice)),
        ("email_verified as a string", node(username=("email", "")), mint(claims(email="a@example.org", email_verified="true")),
         error("oidc: parse 'email_verified' claim: json: cannot unmarshal string into Go value of type bool")),
        ("sub is a number", std, mint(claims(sub=42)),
         error("oidc: verify token: oidc: failed to unmarshal claims: json: cannot unmarshal number into Go struct field idToken.sub of type string")),
        ("uid claim missing", node(uid="oid"), mint(claims()), error('oidc: parse uid claim "oid": claim not present')),
        ("required claim is not a string", node(required=[("hd", "example.org")]), mint(claims(hd=["example.org"])),
         error("oidc: parse claim hd: json: cannot unmarshal array into Go value of type string")),
        ("groups with an empty string", std, mint(claims(groups=["", "dev"])), ok(user(P + "alice", "", ["oidc:", "oidc:dev"]))),
        ("groups is a number", std, mint(claims(groups=7)), error('oidc: parse groups claim "groups": json: cannot unmarshal number into Go value of type string')),
        # go-oidc v2's idToken decoding: exp/iat/nbf through json.Number, aud as a string or
        # a []string, sub/nonce/at_hash strings, _claim_names/_claim_sources typed maps.
        ("exp as a quoted number", std, mint(claims(exp=str(OIDC_EXP))), ok(alice)),
        ("nbf as a quoted number", std, mint(claims(nbf=str(OIDC_IAT))), ok(alice)),
        ("exp as a float", std, mint(claims(exp=OIDC_EXP + 0.5)), ok(alice)),
        ("exp as a word", std, mint(claims(exp="soon")), error(OIDC_UNMARSHAL + 'json: invalid number literal, trying to unmarshal "\\"soon\\"" into Number')),
        ("exp is null", std, mint(dict(claims(), exp=None)), error(OIDC_UNMARSHAL + 'strconv.ParseFloat: parsing "": invalid syntax')),
        ("nbf is null (a pointer field: unset)", std, mint(dict(claims(), nbf=None)), ok(alice)),
        ("iat is true", std, mint(claims(iat=True)), error(OIDC_UNMARSHAL + "json: cannot unmarshal bool into Go struct field idToken.iat of type json.Number")),
        ("iat is null", std, mint(dict(claims(), iat=None)), error(OIDC_UNMARSHAL + 'strconv.ParseFloat: parsing "": invalid syntax')),
        ("iat as a word", std, mint(claims(iat="then")), error(OIDC_UNMARSHAL + 'json: invalid number literal, trying to unmarshal "\\"then\\"" into Number')),
        ("aud is a number", std, mint(claims(aud=42)), error(OIDC_UNMARSHAL + "json: cannot unmarshal number into Go struct field idToken.aud of type []string")),
        ("aud list with a null", std, mint(claims(aud=["kube", None])), ok(alice)),
        ("aud list with a number", std, mint(claims(aud=["kube", 5])), error(OIDC_UNMARSHAL + "json: cannot unmarshal number into Go struct field idToken.aud of type string")),
        ("nonce is a number", std, mint(claims(nonce=5)), error(OIDC_UNMARSHAL + "json: cannot unmarshal number into Go struct field idToken.nonce of type string")),
        ("at_hash is an object", std, mint(claims(at_hash={})), error(OIDC_UNMARSHAL + "json: cannot unmarshal object into Go struct field idToken.at_hash of type string")),
        ("sub is null", node(username=("email", "")), mint(dict(claims(email="a@example.org"), sub=None)),
         ok(user("a@example.org", "", ["oidc:dev", "oidc:ops"]))),
        ("sub is a number, username from email", node(username=("email", "")), mint(claims(sub=5, email="a@example.org")),
         error(OIDC_UNMARSHAL + "json: cannot unmarshal number into Go struct field idToken.sub of type string")),
        ("_claim_names value is a number", std, mint(claims(_claim_names={"x": 5})), error(OIDC_UNMARSHAL + "json: cannot unmarshal number into Go struct field idToken._claim_names of type string")),
        ("_claim_names is a string", std, mint(claims(_claim_names="groups")),
         error(OIDC_UNMARSHAL + "json: cannot unmarshal string into Go struct field idToken._claim_names of type map[string]string")),
        ("_claim_sources is a list", std, mint(claims(_claim_sources=[])),
         error(OIDC_UNMARSHAL + "json: cannot unmarshal array into Go struct field idToken._claim_sources of type map[string]oidc.claimSource")),
        ("_claim_names value is null", std, mint(claims(_claim_names={"groups": None})),
         error("oidc: verify token: oidc: failed to obtain source from claim name")),
        ("_claim_sources entry is a string", std, mint(claims(_claim_sources={"s": "x"})), error(OIDC_UNMARSHAL + "json: cannot unmarshal string into Go struct field idToken._claim_sources of type oidc.claimSource")),
        ("a type error before a time error: the time error wins", std, mint(claims(at_hash=5, iat=True)),
         error(OIDC_UNMARSHAL + "json: cannot unmarshal bool into Go struct field idToken.iat of type json.Number")),
        ("a repeated claim name (the last value is what go-oidc reads)", std,
         mint(claims(), raw=lambda p: p.replace('"sub":"alice"', '"sub":"mallory","sub":"alice"')), ok(alice)),
        ("two type errors: the first is reported", std, mint(claims(at_hash=5, nonce=5)),
         error(OIDC_UNMARSHAL + "json: cannot unmarshal number into Go struct field idToken.at_hash of type string")),
        # go-oidc v2.5.0's order: the algorithm, then the signature, then the claims.
        ("expired and signed by an unknown key: the signature is checked first", std,
         mint(claims(exp=1262304000), stranger, "rsa-1"),
         error("oidc: verify token: failed to verify signature: failed to verify id token signature")),
        ("a claim of the wrong type and signed by an unknown key: the signature first", std,
         mint(claims(sub=5), stranger, "rsa-1"),
         error("oidc: verify token: failed to verify signature: failed to verify id token signature")),
        ("wrong audience and an algorithm not allowed: the algorithm first", std,
         mint(claims(aud="other"), ec_key, "ec-1"),
         error('oidc: verify token: oidc: id token signed with unsupported algorithm, expected ["RS256"] got "ES256"')),
        # go-oidc's claimSource: endpoint and access_token are strings; names match as
        # encoding/json matches them (any case, Unicode simple folding).
        ("_claim_sources endpoint is a number", std, mint(claims(_claim_sources={"s": {"endpoint": 5}})),
         error(OIDC_UNMARSHAL + "json: cannot unmarshal number into Go struct field claimSource._claim_sources.endpoint of type string")),
        ("_claim_sources ENDPOINT is a bool", std, mint(claims(_claim_sources={"s": {"ENDPOINT": True}})),
         error(OIDC_UNMARSHAL + "json: cannot unmarshal bool into Go struct field claimSource._claim_sources.endpoint of type string")),
        ("_claim_sources access_token spelled with U+017F and U+212A is an object", std,
         mint(claims(_claim_sources={"s": {"acce\u017fs_to\u212aen": {}}})),
         error(OIDC_UNMARSHAL + "json: cannot unmarshal object into Go struct field claimSource._claim_sources.access_token of type string")),
        ("_claim_sources: the first type error in document order", std,
         mint(claims(_claim_sources={"a": {"endpoint": True}, "b": {"endpoint": 5}}),
              raw=lambda p: p.replace('"a":{', '"c":{')),
         error(OIDC_UNMARSHAL + "json: cannot unmarshal bool into Go struct field claimSource._claim_sources.endpoint of type string")),
        ("_claim_sources: a null entry and null fields are empty sources", std,
         mint(claims(_claim_sources={"s": None, "t": {"endpoint": None, "access_token": None, "x": 5}})), ok(alice)),
        # Kubernetes' claimResolver.expand, for a groups claim the token does not carry.
        ("distributed: _claim_names null and no _claim_sources", std,
         mint(dict(claims(groups=None), _claim_names=None)),
         error("oidc: could not expand distributed claims: oidc: no claim sources")),
        ("distributed: _claim_names and _claim_sources null", std,
         mint(dict(claims(groups=None), _claim_names=None, _claim_sources=None)), ok(user(P + "alice"))),
        ("distributed: a null source is an empty endpoint", std,
         mint(dict(claims(groups=None), _claim_names={"groups": "s"}, _claim_sources={"s": None})), ok(user(P + "alice"))),
        ("distributed: a null endpoint is empty", std,
         mint(dict(claims(groups=None), _claim_names={"groups": "s"}, _claim_sources={"s": {"endpoint": None}})),
         ok(user(P + "alice"))),
        ("distributed: a source whose JWT is a number", std,
         mint(dict(claims(groups=None), _claim_names={"groups": "s"}, _claim_sources={"s": {"JWT": 5}})),
         error("oidc: could not expand distributed claims: oidc: could not parse claim sources: json: cannot unmarshal number into Go struct field endpoint.JWT of type string")),
        ("distributed: a source whose jwt (any case) is a number, in another source", std,
         mint(dict(claims(groups=None), _claim_names={"groups": "s"}, _claim_sources={"s": {}, "t": {"jwt": 5}})),
         error("oidc: could not expand distributed claims: oidc: could not parse claim sources: json: cannot unmarshal number into Go struct field endpoint.JWT of type string")),
        # A null member leaves the field as it was (encoding/json): the endpoint is still fetched
        # (an unparsable URL, so neither side reaches a network; the texts after the prefix
        # differ only because the runner gives kube-authn no HTTP client for claims).
        ("distributed: a null ENDPOINT after the endpoint keeps it", std,
         mint(dict(claims(groups=None), _claim_names={"groups": "s"}, _claim_sources={"s": {"endpoint": "http://%zz/claims"}}),
              raw=lambda p: p.replace('"endpoint":"http://%zz/claims"', '"endpoint":"http://%zz/claims","ENDPOINT":null')),
         {"result": "error", "error_contains": 'oidc: could not expand distributed claims: while getting distributed claim "groups": '}),
        ("distributed: a null ACCESS_TOKEN after the access_token keeps it", std,
         mint(dict(claims(groups=None), _claim_names={"groups": "s"},
                   _claim_sources={"s": {"endpoint": "http://%zz/claims", "access_token": "tok"}}),
              raw=lambda p: p.replace('"access_token":"tok"', '"access_token":"tok","ACCESS_TOKEN":null')),
         {"result": "error", "error_contains": 'oidc: could not expand distributed claims: while getting distributed claim "groups": '}),
        # go-oidc matches idToken's member names in any case (encoding/json); kube-authn refuses
        # such a member (OIDC_DIFFERENCES). Appended after the exact ones: Go's last one wins.
        ("EXP after exp", std, mint(claims(), raw=lambda p: p[:-1] + ',"EXP":1}'),
         error("oidc: verify token: oidc: token is expired (Token Expiry: 1970-01-01 00:00:01 +0000 UTC)")),
        ("AUD after aud", std, mint(claims(), raw=lambda p: p[:-1] + ',"AUD":"other"}'),
         error('oidc: verify token: oidc: expected audience "kube" got ["other"]')),
        ("Sub a number after sub", std, mint(claims(), raw=lambda p: p[:-1] + ',"Sub":5}'),
         error(OIDC_UNMARSHAL + "json: cannot unmarshal number into Go struct field idToken.sub of type string")),
        ("IAT true", std, mint(claims(), raw=lambda p: p[:-1] + ',"IAT":true}'),
         error(OIDC_UNMARSHAL + "json: cannot unmarshal bool into Go struct field idToken.iat of type json.Number")),
        ("_Claim_Names naming a missing source", std, mint(claims(), raw=lambda p: p[:-1] + ',"_Claim_Names":{"groups":"s"}}'),
         error("oidc: verify token: oidc: source does not exist")),
        ("NONCE, which nothing checks", std, mint(claims(), raw=lambda p: p[:-1] + ',"NONCE":"n"}'), ok(alice)),
        ("ISS null", std, mint(claims(), raw=lambda p: p[:-1] + ',"ISS":null}'), ok(alice)),
        # A lone surrogate escape is U+FFFD (encoding/json's unquote), not a payload refused.
        ("a lone surrogate in sub", std, mint(claims(), raw=lambda p: p.replace('"sub":"alice"', '"sub":"a\\ud800b"')),
         ok(user(P + "a\ufffdb", "", ["oidc:dev", "oidc:ops"]))),
        ("lone and mismatched surrogates in groups", std,
         mint(claims(groups=["g1", "g2", "g3", "g4"]),
              raw=lambda p: p.replace("g1", "\\ud800\\ud800").replace("g2", "\\udc00").replace("g3", "\\ud800\\u0041")
              .replace("g4", "\\ud83d\\ude00\\ude00")),
         ok(user(P + "alice", "", ["oidc:\ufffd\ufffd", "oidc:\ufffd", "oidc:\ufffdA", "oidc:\U0001f600\ufffd"]))),
    ]:
        if label in OIDC_DIFFERENCES:
            theirs, reason = OIDC_DIFFERENCES[label]
            cases.append(case(label, setup, {"token": tok}, k8s=expect, kube_authn=theirs, reason=reason))
        else:
            cases.append(case(label, setup, {"token": tok}, expect=expect))
    return cases



# ---------------------------------------------------------------------------------------------
# keystone: --experimental-keystone-url (kubernetes plugin/pkg/auth/authenticator/password/keystone,
# removed in 1.11; lived only in k8s.io/kubernetes and needed gophercloud: no importable Go code),
# so every case is "oracle": "reference", with the outcome contract of k8s-request-authn.md §5.4
# and the seed's NewKeystoneAuthenticator / AuthenticatePassword.
#
# The node: {"kind": "keystone", "auth_url": …, "trust": "server" | "other", "replies": [REPLY…]}.
# "{server}" in auth_url is the base URL (https://127.0.0.1:port) of a test-only Identity v3
# server over TLS, "{closed}" a 127.0.0.1 port nobody listens on. REPLY is one answer per
# request, the last repeating: {"status", "headers": [[name, value]…], "body"}, {"close": true}
# (drop the connection) or {"hang": true} (never answer; the runner uses a paused clock so the
# client's 30 s timeout fires at once). The server records every request as a call of
# "keystone": [method, request target, content-type, body as canonical JSON (sorted keys,
# compact)].
# ---------------------------------------------------------------------------------------------
REF_KEYSTONE = ("k8s-request-authn.md §5.4; /work/shared/seeds/003 (kubernetes "
                "plugin/pkg/auth/authenticator/password/keystone/keystone.go, removed in 1.11: "
                "NewKeystoneAuthenticator, AuthenticatePassword). No importable Go code, so no Go "
                "oracle. The outcome is Kubernetes' contract (success: {Name: user} only; any "
                "failure: the error \"Failed to authenticate\"); the wire format in `calls` is "
                "kube-authn's Identity v3 request (Kubernetes went through gophercloud, see the "
                "\"gophercloud\" cases)")
E_KS_FAILED = "Failed to authenticate"
E_KS_EMPTY = "Auth URL is empty"
E_KS_HTTPS = "Auth URL should be secure and start with https"
KS_TOKEN_BODY = json.dumps({"token": {"methods": ["password"], "expires_at": "2099-01-01T00:00:00.000000Z",
                                      "user": {"id": "a1b2", "name": "alice",
                                               "domain": {"id": "default", "name": "Default"}}}})
KS_401_BODY = json.dumps({"error": {"code": 401, "title": "Unauthorized",
                                    "message": "The request you have made requires authentication."}})
R_KS_V3_DOMAIN = ("Kubernetes passed only Username and Password to gophercloud; against an Identity "
                  "v3 endpoint gophercloud refuses a user name without DomainID/DomainName "
                  "(ErrDomainIDOrDomainName) before sending anything, so every login failed and "
                  "the authenticator only worked with v2.0 endpoints (POST /v2.0/tokens, "
                  "passwordCredentials), which Keystone removed in Queens (2018). kube-authn "
                  "speaks v3 only and names the default domain (id \"default\") "
                  "(src/password/keystone.rs module docs)")
R_KS_EMPTY_USER = ("gophercloud refuses an empty user name (ErrUsernameOrUserID) before any request; "
                   "kube-authn sends it and Keystone refuses it: the outcome is the same error")
R_KS_EMPTY_URL = ("Kubernetes checks the https prefix before emptiness, so its \"Auth URL is empty\" "
                  "is unreachable and an empty URL gets the https message (kube-apiserver only "
                  "builds the authenticator for a non-empty flag); kube-authn reports the empty URL "
                  "as empty")
R_KS_SCHEME = ("Kubernetes only checks strings.HasPrefix(url, \"https\"), so \"httpsx://…\" starts "
               "and then every login fails; kube-authn parses the URL and requires the https "
               "scheme at startup")
R_KS_BASIC_UTF8 = ("kube-authn fails closed on Basic credentials that are not UTF-8 (src/request/mod.rs); "
                   "Go passes the bytes on and encoding/json sends them to Keystone as U+FFFD")


def ks_body(user_, password, domain="default"):
    body = {"auth": {"identity": {"methods": ["password"], "password": {
        "user": {"name": user_, "domain": {"id": domain}, "password": password}}}}}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


KS_TARGET = "/v3/auth/tokens?nocatalog"


def ks_call(user_, password, target=KS_TARGET):
    return ["POST", target, "application/json", ks_body(user_, password)]


def ks_reply(status, body="", headers=()):
    return {"status": status, "headers": [list(h) for h in headers], "body": body}


KS_201 = ks_reply(201, KS_TOKEN_BODY, [("X-Subject-Token", "gAAAAAB-issued-token"),
                                        ("Content-Type", "application/json")])
KS_401 = ks_reply(401, KS_401_BODY, [("Content-Type", "application/json"),
                                      ("WWW-Authenticate", 'Keystone uri="https://keystone"')])


def keystone_node(replies=(KS_201,), auth_url="{server}", trust="server"):
    return {"kind": "keystone", "auth_url": auth_url, "trust": trust, "replies": list(replies)}


def keystone_cases():
    cases = []
    ks = lambda *rows: {"keystone": [list(r) for r in rows]}
    alice = user("alice")

    def add(c):
        c["oracle"] = "reference"
        c["reference"] = REF_KEYSTONE
        cases.append(c)

    pw = lambda node: {"password": node}
    creds = {"user": "alice", "password": "wonderland"}

    # Construction (NewKeystoneAuthenticator).
    for label, url, want in [
        ("http scheme", "http://127.0.0.1:5000/v3", E_KS_HTTPS),
        ("no scheme", "keystone:5000", E_KS_HTTPS),
        ("upper-case HTTPS", "HTTPS://127.0.0.1:5000", E_KS_HTTPS),
        ("ftp scheme", "ftp://127.0.0.1:5000", E_KS_HTTPS),
    ]:
        add(case(f"construction: {label}", pw(keystone_node(auth_url=url)), creds,
                 expect=config_error(want)))
    add(case("construction: empty URL", pw(keystone_node(auth_url="")), creds,
             k8s=config_error(E_KS_HTTPS), kube_authn=config_error(E_KS_EMPTY), reason=R_KS_EMPTY_URL))
    add(case("construction: https prefix but another scheme", pw(keystone_node(auth_url="httpsx://127.0.0.1:5000")),
             creds, k8s=error(E_KS_FAILED, calls=ks()), kube_authn=config_error(E_KS_HTTPS), reason=R_KS_SCHEME))
    add(case("construction: leading space", pw(keystone_node(auth_url=" {server}")), creds,
             expect=config_error(E_KS_HTTPS)))

    # Where the request goes (the auth URL as given, with or without /v3).
    for label, url, target in [
        ("bare", "{server}", KS_TARGET),
        ("trailing slash", "{server}/", KS_TARGET),
        ("ends in /v3", "{server}/v3", KS_TARGET),
        ("ends in /v3/", "{server}/v3/", KS_TARGET),
        ("path prefix", "{server}/identity", "/identity" + KS_TARGET),
        ("path prefix and /v3", "{server}/identity/v3", "/identity" + KS_TARGET),
    ]:
        add(case(f"auth URL: {label}", pw(keystone_node(auth_url=url)), creds,
                 expect=ok(alice, calls=ks(ks_call("alice", "wonderland", target)))))

    # Keystone's answers.
    for label, replies in [
        ("201 with X-Subject-Token", [KS_201]),
        ("201 without X-Subject-Token", [ks_reply(201, KS_TOKEN_BODY, [("Content-Type", "application/json")])]),
    ]:
        add(case(f"answer: {label}", pw(keystone_node(replies)), creds,
                 expect=ok(alice, calls=ks(ks_call("alice", "wonderland")))))
    for label, replies in [
        ("401 wrong password", [KS_401]),
        ("400 bad request", [ks_reply(400, '{"error":{"code":400}}')]),
        ("403", [ks_reply(403, '{"error":{"code":403}}')]),
        ("404 not an identity endpoint", [ks_reply(404, "404 page not found", [("Content-Type", "text/plain")])]),
        ("500", [ks_reply(500, "")]),
        ("503", [ks_reply(503, "<html>down</html>", [("Content-Type", "text/html")])]),
        ("302 redirect not followed", [ks_reply(302, "", [("Location", "/elsewhere")])]),
        ("connection dropped", [{"close": True}]),
        ("no answer: timeout", [{"hang": True}]),
        ("401 whose body echoes the password", [ks_reply(401, "bad password wonderland")]),
    ]:
        add(case(f"answer: {label}", pw(keystone_node(replies)), creds,
                 expect=error(E_KS_FAILED, calls=ks(ks_call("alice", "wonderland")))))
    for label, replies in [
        ("201 with a body that is not JSON", [ks_reply(201, "\x00garbage{", [("X-Subject-Token", "t")])]),
        ("201 with an empty body", [ks_reply(201, "", [("X-Subject-Token", "t")])]),
    ]:
        add(case(f"answer: {label}", pw(keystone_node(replies)), creds,
                 expect=error(E_KS_FAILED, calls=ks(ks_call("alice", "wonderland")))))
    for status in [200, 202, 204]:
        add(case(f"answer: {status}", pw(keystone_node([ks_reply(status, KS_TOKEN_BODY if status != 204 else "")])),
                 creds, expect=error(E_KS_FAILED, calls=ks(ks_call("alice", "wonderland")))))
    for label, node in [
        ("untrusted server certificate", keystone_node(trust="other")),
        ("nobody listening", keystone_node(auth_url="{closed}")),
    ]:
        add(case(f"transport: {label}", pw(node), creds, expect=error(E_KS_FAILED, calls=ks())))

    # The request body Keystone receives (password method, user name, domain id, password).
    for label, u, p in [
        ("plain", "alice", "wonderland"),
        ("empty password", "alice", ""),
        ("colons in password", "alice", "a:b:c"),
        ("JSON specials", 'al"ice', 'p"a\\ss/wörd'),
        ("control character", "alice", "tab\there\x01"),
        ("unicode", "Ünïcødé", "пароль🔑"),
        ("spaces kept", " alice ", " pw "),
        ("user name with @ and domain-looking text", "alice@corp", "pw"),
    ]:
        add(case(f"request body: {label}", pw(keystone_node()), {"user": u, "password": p},
                 expect=ok(user(u), calls=ks(ks_call(u, p)))))
    add(case("gophercloud: v3 endpoint and a user name without domain", pw(keystone_node(auth_url="{server}/v3")),
             creds, k8s=error(E_KS_FAILED, calls=ks()),
             kube_authn=ok(alice, calls=ks(ks_call("alice", "wonderland"))), reason=R_KS_V3_DOMAIN))
    add(case("gophercloud: empty user name", pw(keystone_node([KS_401])), {"user": "", "password": "pw"},
             k8s=error(E_KS_FAILED, calls=ks()), kube_authn=error(E_KS_FAILED, calls=ks(ks_call("", "pw"))),
             reason=R_KS_EMPTY_USER))

    # Through the Basic request authenticator.
    basic_ks = lambda replies=(KS_201,): {"request": {"kind": "basic", "password": keystone_node(replies)}}
    auth = lambda cred, scheme="Basic": req([("Authorization", f"{scheme} {b64(cred)}")])
    for label, cred, u, p in [
        ("user and password", "alice:wonderland", "alice", "wonderland"),
        ("colons in password", "alice:won:der:land", "alice", "won:der:land"),
        ("empty password", "alice:", "alice", ""),
        ("utf-8", "ålice:pässwörd", "ålice", "pässwörd"),
    ]:
        add(case(f"basic: {label}", basic_ks(), auth(cred), expect=ok(user(u), calls=ks(ks_call(u, p)))))
    add(case("basic: lower-case scheme", basic_ks(), auth("alice:wonderland", "basic"),
             expect=ok(alice, calls=ks(ks_call("alice", "wonderland")))))
    add(case("basic: wrong password", basic_ks([KS_401]), auth("alice:nope"),
             expect=error(E_KS_FAILED, calls=ks(ks_call("alice", "nope")))))
    add(case("basic: empty user", basic_ks([KS_401]), auth(":pw"),
             k8s=error(E_KS_FAILED, calls=ks()), kube_authn=error(E_KS_FAILED, calls=ks(ks_call("", "pw"))),
             reason=R_KS_EMPTY_USER))
    for label, headers in [("no header", []), ("bearer", [("Authorization", "Bearer t")]),
                           ("digest", [("Authorization", "Digest x")])]:
        add(case(f"basic: not basic: {label}", basic_ks(), req(headers), expect=not_mine(calls=ks())))
    for label, value in [("no colon", "Basic " + b64("alice")), ("bad base64", "Basic !!!!"),
                         ("scheme alone", "Basic")]:
        add(case(f"basic: malformed: {label}", basic_ks(), req([("Authorization", value)]),
                 k8s=not_mine(calls=ks()), kube_authn=error(E_MALFORMED_BASIC, calls=ks()),
                 reason=R_BASIC_FAIL_CLOSED))
    add(case("basic: password not utf-8", basic_ks(), req([("Authorization", "Basic " + b64(b"alice:pw\xff"))]),
             k8s=ok(alice, calls=ks(ks_call("alice", "pw\ufffd"))),
             kube_authn=error(E_MALFORMED_BASIC, calls=ks()), reason=R_KS_BASIC_UTF8))

    # kube-apiserver's chain: Basic over Keystone, then anonymous.
    def chain_ks(replies=(KS_201,), auth_url="{server}"):
        return {"request": {"kind": "chain", "tokens": [], "anonymous": {},
                            "request": [{"kind": "basic", "password": keystone_node(replies, auth_url)}]}}
    alice_auth = user("alice", "", ["system:authenticated"])
    for label, setup, headers, expect in [
        ("good password", chain_ks(), [("Authorization", "Basic " + b64("alice:wonderland"))],
         ok(alice_auth, calls=ks(ks_call("alice", "wonderland")))),
        ("wrong password is 401, not anonymous", chain_ks([KS_401]), [("Authorization", "Basic " + b64("alice:x"))],
         error(E_KS_FAILED, calls=ks(ks_call("alice", "x")))),
        ("Keystone erroring is 401", chain_ks([ks_reply(500)]), [("Authorization", "Basic " + b64("alice:x"))],
         error(E_KS_FAILED, calls=ks(ks_call("alice", "x")))),
        ("Keystone unreachable is 401", chain_ks(auth_url="{closed}"), [("Authorization", "Basic " + b64("alice:x"))],
         error(E_KS_FAILED, calls=ks())),
        ("no credentials is anonymous", chain_ks(), [], ok(ANON, calls=ks())),
        ("bearer token is anonymous", chain_ks(), [("Authorization", "Bearer t")], ok(ANON, calls=ks())),
    ]:
        add(case(f"chain + anonymous: {label}", setup, req(headers, path="/api"), expect=expect))
    add(case("chain + anonymous: malformed basic", chain_ks(), req([("Authorization", "Basic !!!!")], path="/api"),
             k8s=ok(ANON, calls=ks()), kube_authn=error(E_MALFORMED_BASIC, calls=ks()), reason=R_FAIL_CLOSED))
    add(case("chain + anonymous: basic not utf-8", chain_ks([KS_401]),
             req([("Authorization", "Basic " + b64(b"alice:\xff"))], path="/api"),
             k8s=error(E_KS_FAILED, calls=ks(ks_call("alice", "\ufffd"))),
             kube_authn=error(E_MALFORMED_BASIC, calls=ks()), reason=R_KS_BASIC_UTF8))
    return cases

SUITES = [
    ("bearer", "Authorization: Bearer parsing and the token authenticator's answers",
     "k8s-request-authn.md §4.1; apiserver pkg/authentication/request/bearertoken", bearer_cases),
    ("websocket", "base64url.bearer.authorization.k8s.io. WebSocket subprotocol",
     "k8s-request-authn.md §4.2; apiserver pkg/authentication/request/websocket", websocket_cases),
    ("basic", "Authorization: Basic (removed from Kubernetes in 1.19; oracle is k8s.io/apiserver v0.18)",
     "k8s-request-authn.md §5.2; apiserver v0.18 plugin/pkg/authenticator/request/basicauth", basic_cases),
    ("union", "request and token unions, plain and fail-on-error, and aggregate error text",
     "k8s-request-authn.md §0.4, §2.1; apiserver pkg/authentication/{request,token}/union", union_cases),
    ("group", "authenticated-group adder and group adder",
     "k8s-request-authn.md §2.2, §2.3; apiserver pkg/authentication/group", group_cases),
    ("anonymous", "system:anonymous with path conditions",
     "k8s-request-authn.md §3; apiserver pkg/authentication/request/anonymous", anonymous_cases),
    ("audiences", "audience-agnostic request and token wrappers",
     "k8s-request-authn.md §1.3, §1.4; apiserver pkg/authentication/authenticator/audagnostic.go", audiences_cases),
    ("chain", "kube-apiserver's chain assembly (ChainBuilder)",
     "k8s-request-authn.md §8.5; kubernetes pkg/kubeapiserver/authenticator/config.go", chain_cases),
    ("filter", "the whole authentication filter: handler, stripped headers, 401 body",
     "k8s-request-authn.md §8.1-8.3; apiserver pkg/endpoints/filters/authentication.go", filter_cases),
    ("token_file", "--token-auth-file CSV rules",
     "k8s-request-authn.md §5.1; apiserver pkg/authentication/token/tokenfile", token_file_cases),
    ("anytoken", "--insecure-allow-any-token (removed in 1.8; reference expectations only)",
     "k8s-request-authn.md §5.3; kubernetes plugin/pkg/auth/authenticator/token/anytoken", anytoken_cases),
    ("password_file", "--basic-auth-file CSV rules (removed in 1.19; oracle is k8s.io/apiserver v0.18)",
     "k8s-request-authn.md §5.2; apiserver v0.18 plugin/pkg/authenticator/password/passwordfile", password_file_cases),
    ("x509", "--client-ca-file: client certificate verification and CommonNameUserConversion",
     "k8s-request-authn.md §6; apiserver pkg/authentication/request/x509", x509_cases),
    ("request_header", "--requestheader-* front proxy: proxy certificate, allowed names, identity headers",
     "k8s-request-authn.md §7; apiserver pkg/authentication/request/headerrequest", request_header_cases),
    ("token_cache", "token cache: key layout (TestKeyFunc) and TTL rules on a fake clock",
     "k8s-token-authn.md §5; apiserver pkg/authentication/token/cache", token_cache_cases),
    ("webhook", "TokenReview webhook responses, audiences and HTTP failures (local server on 127.0.0.1)",
     "k8s-token-authn.md §4; apiserver plugin/pkg/authenticator/token/webhook", webhook_cases),
    ("service_account", "service-account JWTs, legacy and bound (k8s.io/kubernetes v1.37.2 pkg/serviceaccount)",
     "k8s-token-authn.md §2; kubernetes pkg/serviceaccount", sa_cases),
    ("oidc", "OIDC JWT authenticator: verification and claim mappings (JWKS from a local server in the Go oracle)",
     "k8s-token-authn.md §3; apiserver plugin/pkg/authenticator/token/oidc", oidc_cases),
    ("keystone", "--experimental-keystone-url: Basic over OpenStack Identity v3 (removed in 1.11; reference "
     "expectations only; test-only Identity v3 server on 127.0.0.1 over TLS)",
     "k8s-request-authn.md §5.4; kubernetes plugin/pkg/auth/authenticator/password/keystone", keystone_cases),
]


def main():
    global OUT
    if len(sys.argv) == 3 and sys.argv[1] == "--out":
        OUT = sys.argv[2]
    os.makedirs(OUT, exist_ok=True)
    total = 0
    for suite, description, source, fn in SUITES:
        n = write(suite, description, source, fn())
        total += n
        print(f"{suite:14} {n:4}")
    print(f"{'total':14} {total:4}")


if __name__ == "__main__":
    sys.exit(main())
