//! Token file (`--token-auth-file`): Kubernetes' `tokenfile_test.go` vectors, every bad input of
//! security.md §2.2 with a defined outcome, reload behaviour, secrecy of Debug/errors, and a
//! no-panic property over arbitrary bytes.

use std::sync::Arc;

mod log_support;

use kube_authn::authenticator::{Context, RequestAuthenticator, TokenAuthenticator};
use kube_authn::password::file::PasswordFile;
use kube_authn::request::Bearer;
use kube_authn::token::file::{DEFAULT_MAX_FILE_BYTES, TokenFile};
use log_support::capture_logs;
use proptest::prelude::*;

/// `(name, uid, groups)` of the user a token maps to, or `None`.
fn who(file: &TokenFile, token: &str) -> Option<(String, String, Vec<String>)> {
    let ctx = Context::default();
    let fut = file.authenticate_token(token, &ctx);
    assert!(fut.is_ready(), "token file futures must be ready");
    let resp = fut
        .into_ready()
        .unwrap()
        .expect("token file never errors")?;
    assert!(resp.audiences.is_empty());
    let u = resp.user;
    Some((
        u.name().to_owned(),
        u.uid().to_owned(),
        u.groups().map(String::from).collect(),
    ))
}

fn user(name: &str, uid: &str, groups: &[&str]) -> Option<(String, String, Vec<String>)> {
    Some((
        name.into(),
        uid.into(),
        groups.iter().map(|g| g.to_string()).collect(),
    ))
}

const K8S_FILE: &str = "
token1,user1,uid1
token2,user2,uid2
token3,user3,uid3,\"group1,group2\"
token4,user4,uid4,\"group2\"
token5,user5,uid5,group5
token6,user6,uid6,group5,otherdata
token7,user7,uid7,\"group1,group2\",otherdata
";

#[test]
fn k8s_test_token_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.csv");
    std::fs::write(&path, K8S_FILE).unwrap();
    let file = TokenFile::open(&path).unwrap();
    let cases = [
        ("token1", user("user1", "uid1", &[])),
        ("token2", user("user2", "uid2", &[])),
        ("token3", user("user3", "uid3", &["group1", "group2"])),
        ("token4", user("user4", "uid4", &["group2"])),
        ("token5", user("user5", "uid5", &["group5"])),
        ("token6", user("user6", "uid6", &["group5"])),
        ("token7", user("user7", "uid7", &["group1", "group2"])),
        ("token8", None),
    ];
    for (token, want) in cases {
        assert_eq!(who(&file, token), want, "token {token}");
    }
    assert_eq!(file.len(), 7);
    assert!(file.warnings().is_empty());
}

#[test]
fn k8s_hits_share_one_user() {
    let file = TokenFile::from_csv(K8S_FILE.as_bytes(), "f").unwrap();
    let a = file.lookup("token3").unwrap();
    let b = file.lookup("token3").unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    // Identical group lists are stored once.
    let c = file.lookup("token7").unwrap();
    assert!(Arc::ptr_eq(a.shared_groups(), c.shared_groups()));
}

#[test]
fn k8s_test_bad_token_file() {
    let err = TokenFile::from_csv(
        b"token1,user1,uid1\ntoken2,user2,uid2\ntoken3,user3\ntoken4\n",
        "bad",
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "token file 'bad' must have at least 3 columns (token, user name, user uid), found 2"
    );
}

#[test]
fn k8s_test_insufficient_columns_token_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, "token4\n").unwrap();
    let err = TokenFile::open(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "token file '{}' must have at least 3 columns (token, user name, user uid), found 1",
            path.display()
        )
    );
}

#[test]
fn k8s_test_empty_token_token_file() {
    let file = TokenFile::from_csv(b",user5,uid5\n", "f").unwrap();
    assert_eq!(file.len(), 0);
    assert_eq!(
        file.warnings(),
        ["empty token has been found in token file 'f', record number '1'"]
    );
    assert_eq!(who(&file, ""), None);
}

/// A groups column is bounded (4,096 groups): each `,` costs a list entry, so an unbounded
/// column turns a file under the size cap into gigabytes. Kubernetes has no such limit.
#[test]
fn a_row_with_more_than_4096_groups_is_refused() {
    let row = |groups: usize| format!("t,u,1,\"{}\"\n", vec!["g"; groups].join(","));
    let ok = TokenFile::from_csv(row(4096).as_bytes(), "f").unwrap();
    assert_eq!(who(&ok, "t").unwrap().2.len(), 4096);
    let err = TokenFile::from_csv(row(4097).as_bytes(), "f").unwrap_err();
    assert_eq!(
        err.to_string(),
        "token file 'f', record number '1': more than 4096 groups"
    );
    let err = PasswordFile::from_csv(row(100_000).as_bytes(), "p").unwrap_err();
    assert_eq!(
        err.to_string(),
        "password file 'p', record number '1': more than 4096 groups"
    );
}

/// A read failure names the file, as Go's `read <path>: <cause>` does.
#[test]
fn a_read_error_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().display().to_string();
    let err = TokenFile::open(dir.path()).unwrap_err().to_string();
    assert!(err.starts_with(&format!("read {path}: ")), "{err}");
    let err = PasswordFile::open(dir.path()).unwrap_err().to_string();
    assert!(err.starts_with(&format!("read {path}: ")), "{err}");
}

#[test]
fn two_column_row_is_fatal() {
    let err = TokenFile::from_csv(b"a,alice,1\nb,bob\n", "f").unwrap_err();
    assert!(err.to_string().ends_with("found 2"), "{err}");
}

#[test]
fn duplicated_token_last_wins_with_warning() {
    let file = TokenFile::from_csv(b"t,first,1\n,skipped,0\nt,second,2\n", "f").unwrap();
    assert_eq!(who(&file, "t"), user("second", "2", &[]));
    assert_eq!(file.len(), 1);
    // Record numbers count the skipped empty-token row, as in Kubernetes.
    assert_eq!(
        file.warnings(),
        [
            "empty token has been found in token file 'f', record number '2'",
            "duplicate token has been found in token file 'f', record number '3'"
        ]
    );
}

#[test]
fn quoted_token_with_comma_and_newline() {
    let file = TokenFile::from_csv(
        b"\"to,ken\",alice,1\n\"multi\nline\",bob,2,\"g1,\"\"g2\"\"\"\n",
        "f",
    )
    .unwrap();
    assert_eq!(who(&file, "to,ken"), user("alice", "1", &[]));
    assert_eq!(
        who(&file, "multi\nline"),
        user("bob", "2", &["g1", "\"g2\""])
    );
    assert_eq!(who(&file, "to"), None);
}

#[test]
fn crlf_line_endings_are_normalised() {
    let file = TokenFile::from_csv(b"\r\ntok,alice,1\r\n\"a\r\nb\",bob,2\r\n", "f").unwrap();
    assert_eq!(who(&file, "tok"), user("alice", "1", &[]));
    assert_eq!(who(&file, "a\nb"), user("bob", "2", &[]));
    assert_eq!(who(&file, "a\r\nb"), None);
}

#[test]
fn utf8_bom_is_part_of_the_first_token() {
    let file = TokenFile::from_csv("\u{feff}tok,alice,1\n".as_bytes(), "f").unwrap();
    assert_eq!(who(&file, "tok"), None);
    assert_eq!(who(&file, "\u{feff}tok"), user("alice", "1", &[]));
}

#[test]
fn empty_file_is_valid_and_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, "").unwrap();
    let file = TokenFile::open(&path).unwrap();
    assert!(file.is_empty());
    assert_eq!(who(&file, "anything"), None);
    // Blank lines only: also empty.
    assert!(TokenFile::from_csv(b"\n\r\n\n", "f").unwrap().is_empty());
}

#[test]
fn bare_quote_is_a_parse_error_without_content() {
    let err = TokenFile::from_csv(b"sec\"ret,alice,1\n", "f").unwrap_err();
    assert_eq!(
        err.to_string(),
        "parse error on line 1, column 4: bare \" in non-quoted-field"
    );
    let err = TokenFile::from_csv(b"ok,a,1\n\"sec\nret\"x,alice,1\n", "f").unwrap_err();
    assert_eq!(
        err.to_string(),
        "record on line 2; parse error on line 3, column 4: extraneous or missing \" in quoted-field"
    );
}

#[test]
fn hash_line_is_not_a_comment() {
    let err = TokenFile::from_csv(b"#comment\ntok,alice,1\n", "f").unwrap_err();
    assert!(err.to_string().ends_with("found 1"), "{err}");
    let file = TokenFile::from_csv(b"#x,y,z\n", "f").unwrap();
    assert_eq!(who(&file, "#x"), user("y", "z", &[]));
}

#[test]
fn line_of_spaces_is_a_one_column_record() {
    let err = TokenFile::from_csv(b"tok,alice,1\n   \n", "f").unwrap_err();
    assert!(err.to_string().ends_with("found 1"), "{err}");
}

#[test]
fn fields_are_not_trimmed_and_groups_split_verbatim() {
    let file = TokenFile::from_csv(
        b"t1, alice , 1 \nt2,bob,2,\nt3,carol,3,\"a,,b\"\nt4,,,\" g \",extra,more\n",
        "f",
    )
    .unwrap();
    assert_eq!(who(&file, "t1"), user(" alice ", " 1 ", &[]));
    assert_eq!(who(&file, "t2"), user("bob", "2", &[""]));
    assert_eq!(who(&file, "t3"), user("carol", "3", &["a", "", "b"]));
    assert_eq!(who(&file, "t4"), user("", "", &[" g "]));
    assert_eq!(who(&file, " t1"), None);
}

#[test]
fn non_utf8_user_name_is_a_clear_error() {
    let err = TokenFile::from_csv(b"tok,\xff\xfe,1\n", "f").unwrap_err();
    assert_eq!(
        err.to_string(),
        "token file 'f', record number '1': the user name is not valid UTF-8"
    );
}

#[test]
fn file_over_the_cap_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, "tok,alice,1\n".repeat(10)).unwrap();
    let err = TokenFile::open_with_limit(&path, 64).unwrap_err();
    assert!(
        err.to_string()
            .contains("larger than the limit of 64 bytes"),
        "{err}"
    );
    assert_eq!(DEFAULT_MAX_FILE_BYTES, 256 << 20);
}

/// A 100 MB file (about 1.1 million rows) loads under the default cap. The memory bound is
/// measured by `benches/token_file_load.rs`; here we check it loads and answers.
#[test]
fn hundred_megabyte_file_loads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.csv");
    let mut content = String::with_capacity(101 << 20);
    let mut i = 0u64;
    while content.len() < 100 << 20 {
        use std::fmt::Write;
        writeln!(
            content,
            "tok{i:040},user-{i},0000-{i:032},\"system:authenticated,dev\""
        )
        .unwrap();
        i += 1;
    }
    std::fs::write(&path, &content).unwrap();
    drop(content);
    let file = TokenFile::open(&path).unwrap();
    assert_eq!(file.len() as u64, i);
    assert_eq!(
        who(&file, &format!("tok{:040}", i - 1)).map(|u| u.0),
        Some(format!("user-{}", i - 1))
    );
    // Over a smaller cap it is refused, not truncated.
    let err = TokenFile::open_with_limit(&path, 50 << 20).unwrap_err();
    assert!(err.to_string().contains("larger than the limit"), "{err}");
}

#[test]
fn broken_reload_keeps_previous_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.csv");
    std::fs::write(&path, "tok1,alice,1\n").unwrap();
    let file = TokenFile::open(&path).unwrap();
    assert_eq!(who(&file, "tok1"), user("alice", "1", &[]));

    /// (step, new content, reload succeeds, expected token → user name)
    type Step = (
        &'static str,
        &'static str,
        bool,
        &'static [(&'static str, Option<&'static str>)],
    );
    let steps: [Step; 4] = [
        (
            "valid edit",
            "tok1,alice,1\ntok2,bob,2\n",
            true,
            &[("tok1", Some("alice")), ("tok2", Some("bob"))],
        ),
        (
            "two columns keeps old",
            "tok3,carol\n",
            false,
            &[("tok2", Some("bob")), ("tok3", None)],
        ),
        (
            "bare quote keeps old",
            "to\"k4,dave,4\n",
            false,
            &[("tok1", Some("alice")), ("tok2", Some("bob"))],
        ),
        (
            "fixed",
            "tok5,eve,5\n",
            true,
            &[("tok1", None), ("tok5", Some("eve"))],
        ),
    ];
    let mut failures = 0;
    for (name, content, ok, checks) in steps {
        std::fs::write(&path, content).unwrap();
        let result = file.reload_now();
        assert_eq!(result.is_ok(), ok, "step {name}: {result:?}");
        if !ok {
            failures += 1;
        }
        assert_eq!(file.reload_failures(), failures, "step {name}");
        for (token, want) in checks {
            assert_eq!(
                who(&file, token).map(|u| u.0),
                want.map(String::from),
                "step {name}, token {token}"
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn watch_picks_up_edits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.csv");
    std::fs::write(&path, "tok1,alice,1\n").unwrap();
    let file = TokenFile::open(&path).unwrap();
    let _task = file.watch(std::time::Duration::from_secs(1)).unwrap();
    std::fs::write(&path, "tok2,bob,2,extra-long-to-change-size\n").unwrap();
    for _ in 0..50 {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        if file.lookup("tok2").is_some() {
            break;
        }
    }
    assert_eq!(file.lookup("tok2").unwrap().name(), "bob");
    assert!(file.lookup("tok1").is_none());
}

#[test]
fn from_tokens_builds_in_memory() {
    use kube_authn::user::UserInfo;
    let file = TokenFile::from_tokens([
        (
            "loopback",
            UserInfo::builder("system:apiserver")
                .uid("u")
                .group("system:masters")
                .build(),
        ),
        ("", UserInfo::new("nobody")),
    ]);
    assert_eq!(file.len(), 1);
    assert_eq!(
        who(&file, "loopback"),
        user("system:apiserver", "u", &["system:masters"])
    );
    assert_eq!(who(&file, ""), None);
    assert!(file.path().is_none());
}

#[tokio::test]
async fn through_the_bearer_request_authenticator() {
    let file = TokenFile::from_csv(K8S_FILE.as_bytes(), "f").unwrap();
    let bearer = Bearer::new(file);
    let ctx = Context::default();
    let req = |v: &str| {
        http::Request::get("/")
            .header("authorization", v)
            .body(())
            .unwrap()
            .into_parts()
            .0
    };
    let hit = req("Bearer token3");
    let r = bearer.authenticate_request(&hit, &ctx);
    assert!(r.is_ready());
    assert_eq!(r.await.unwrap().unwrap().user.name(), "user3");
    let err = bearer
        .authenticate_request(&req("Bearer token9"), &ctx)
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "invalid bearer token");
}

#[test]
fn debug_and_errors_never_show_tokens() {
    const SECRET: &str = "s3cr3t-T0KEN-value";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.csv");
    std::fs::write(&path, format!("{SECRET},alice,1\n{SECRET},bob,2\n")).unwrap();
    let file = TokenFile::open(&path).unwrap();
    let mut texts = vec![format!("{file:?}"), format!("{file:#?}")];
    texts.extend(file.warnings());
    let mem = TokenFile::from_csv(format!("{SECRET},a,1\n").as_bytes(), "m").unwrap();
    texts.push(format!("{mem:?}"));
    texts.push(format!("{:?}", file.lookup(SECRET).unwrap()));
    let bad_inputs = [
        format!("{SECRET}\n"),
        format!("{SECRET}\"x,a,1\n"),
        format!("\"{SECRET}\"x,a,1\n"),
        format!("\"{SECRET}\n"),
    ];
    for input in &bad_inputs {
        let e = TokenFile::from_csv(input.as_bytes(), "bad").unwrap_err();
        texts.push(e.to_string());
        texts.push(format!("{e:?}"));
    }
    let mut non_utf8 = SECRET.as_bytes().to_vec();
    non_utf8.extend_from_slice(b",\xff,1\n");
    let e = TokenFile::from_csv(&non_utf8, "bad").unwrap_err();
    texts.push(format!("{e} {e:?}"));
    std::fs::write(&path, format!("{SECRET},x\n")).unwrap();
    let e = file.reload_now().unwrap_err();
    texts.push(format!("{e} {e:?} {file:?}"));
    assert!(texts.len() >= 10);
    for t in texts {
        assert!(!t.contains("s3cr3t"), "secret leaked in {t:?}");
    }
}

/// What loading and reloading a token file logs names the file and the record, never a
/// token: duplicate and empty tokens, a non-ASCII token, and a reload that fails (a bare quote
/// right after the secret, a row of one column, a deleted file).
#[test]
fn logs_never_show_tokens() {
    const SECRET: &str = "s3cr3t-T0KEN-value";
    let (logs, _guard) = capture_logs();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.csv");
    let display = path.display().to_string();
    {
        std::fs::write(
            &path,
            format!("{SECRET},alice,1\n,empty,2\n{SECRET},bob,3\n{SECRET}\u{e9},carol,4\n"),
        )
        .unwrap();
        let file = TokenFile::open(&path).unwrap();
        assert_eq!(file.len(), 2);
        for broken in [format!("{SECRET}\"x,a,1\n"), format!("{SECRET}\n")] {
            std::fs::write(&path, broken).unwrap();
            file.reload_now().unwrap_err();
        }
        std::fs::remove_file(&path).unwrap();
        file.reload_now().unwrap_err();
        assert_eq!(file.reload_failures(), 3);
        assert_eq!(file.lookup(SECRET).unwrap().name(), "bob");
    }
    let text = logs.text();
    for want in [
        format!("empty token has been found in token file '{display}', record number '2'"),
        format!("duplicate token has been found in token file '{display}', record number '3'"),
        format!(
            "token in token file '{display}', record number '4' has bytes outside ASCII and can never be sent in an Authorization header"
        ),
        "parse error on line 1, column 19: bare \" in non-quoted-field".to_owned(),
        "must have at least 3 columns".to_owned(),
        "reload failed; keeping the previous content".to_owned(),
    ] {
        assert!(text.contains(&want), "{want:?} not logged in:\n{text}");
    }
    assert!(!text.contains("s3cr3t"), "a token was logged:\n{text}");
}

/// A token with a byte outside ASCII loads (as in Kubernetes) but can never be sent in an
/// `Authorization` header, so it is warned about, in file order with the other warnings (a
/// space or a control byte has its own warning: `token::file`'s unit tests).
#[test]
fn non_ascii_token_is_warned_about() {
    let cases: [(&str, &[u8], &[&str]); 4] = [
        ("ascii", b"tok,a,1\n", &[]),
        (
            "utf-8 outside ascii",
            "t\u{f6}k,a,1\n".as_bytes(),
            &[
                "token in token file 'f', record number '1' has bytes outside ASCII and can never be sent in an Authorization header",
            ],
        ),
        (
            "not utf-8, repeated, after an empty token",
            b",e,0\nt\xffk,a,1\nt\xffk,b,2\n",
            &[
                "empty token has been found in token file 'f', record number '1'",
                "token in token file 'f', record number '2' has bytes outside ASCII and can never be sent in an Authorization header",
                "duplicate token has been found in token file 'f', record number '3'",
                "token in token file 'f', record number '3' has bytes outside ASCII and can never be sent in an Authorization header",
            ],
        ),
        (
            "a space and a control byte: another warning",
            b"t k\x01,a,1\n",
            &[
                "token in token file 'f', record number '1' has a space, tab or control byte and can never be sent in an Authorization header",
            ],
        ),
    ];
    for (name, content, want) in cases {
        let file = TokenFile::from_csv(content, "f").unwrap();
        assert_eq!(file.warnings(), want, "case {name}");
        assert!(!file.is_empty(), "case {name}: the token still loads");
    }
}

/// A deleted file is a failed reload (the previous credentials stay); an empty file is valid
/// and revokes them all. Both file kinds.
#[test]
fn deleted_file_keeps_credentials_and_empty_file_revokes_them() {
    let dir = tempfile::tempdir().unwrap();
    let tokens_path = dir.path().join("tokens.csv");
    let passwords_path = dir.path().join("passwords.csv");
    std::fs::write(&tokens_path, "tok,alice,1\n").unwrap();
    std::fs::write(&passwords_path, "pw,alice,1\n").unwrap();
    let tokens = TokenFile::open(&tokens_path).unwrap();
    let passwords = PasswordFile::open(&passwords_path).unwrap();
    std::fs::remove_file(&tokens_path).unwrap();
    std::fs::remove_file(&passwords_path).unwrap();
    assert!(tokens.reload_now().is_err());
    assert!(passwords.reload_now().is_err());
    assert_eq!(
        (tokens.reload_failures(), passwords.reload_failures()),
        (1, 1)
    );
    assert!(tokens.lookup("tok").is_some());
    assert!(passwords.check("alice", "pw").is_some());
    std::fs::write(&tokens_path, "").unwrap();
    std::fs::write(&passwords_path, "").unwrap();
    tokens.reload_now().unwrap();
    passwords.reload_now().unwrap();
    assert!(tokens.is_empty() && tokens.lookup("tok").is_none());
    assert!(passwords.is_empty() && passwords.check("alice", "pw").is_none());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Arbitrary bytes never panic: the result is a table or a clear error.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = TokenFile::from_csv(&bytes, "fuzz").map(|f| f.len());
    }

    /// Bytes drawn from the characters that matter to CSV, to reach deeper states.
    #[test]
    fn csv_alphabet_never_panics(bytes in proptest::collection::vec(
        proptest::sample::select(vec![b'a', b',', b'"', b'\n', b'\r', b' ', b'#', 0xef, 0xbb, 0xbf, 0xff]),
        0..256,
    )) {
        let _ = TokenFile::from_csv(&bytes, "fuzz").map(|f| f.len());
    }
}
