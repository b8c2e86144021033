//! Password file (`--basic-auth-file`): Kubernetes' `passwordfile_test.go` vectors, bad files,
//! duplicate users, empty passwords, Basic auth end to end, reload and secrecy.

use kube_authn::authenticator::{Context, PasswordAuthenticator, RequestAuthenticator};
use kube_authn::password::file::PasswordFile;
use kube_authn::request::Basic;
use proptest::prelude::*;

fn who(file: &PasswordFile, user: &str, password: &str) -> Option<(String, String, Vec<String>)> {
    let ctx = Context::default();
    let fut = file.authenticate_password(user, password, &ctx);
    assert!(fut.is_ready(), "password file futures must be ready");
    let u = fut
        .into_ready()
        .unwrap()
        .expect("password file never errors")?
        .user;
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
password1,user1,uid1
password2,user2,uid2
password3,user3,uid3,\"group1,group2\"
password4,user4,uid4,\"group2\"
password5,user5,uid5,group5
password6,user6,uid6,group5,otherdata
password7,user7,uid7,\"group1,group2\",otherdata
";

#[test]
fn k8s_passwordfile_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("basic.csv");
    std::fs::write(&path, K8S_FILE).unwrap();
    let file = PasswordFile::open(&path).unwrap();
    let cases = [
        (("user1", "password1"), user("user1", "uid1", &[])),
        (("user2", "password2"), user("user2", "uid2", &[])),
        (("user1", "password2"), None),
        (("user2", "password1"), None),
        (
            ("user3", "password3"),
            user("user3", "uid3", &["group1", "group2"]),
        ),
        (("user4", "password4"), user("user4", "uid4", &["group2"])),
        (("user5", "password5"), user("user5", "uid5", &["group5"])),
        (("user6", "password6"), user("user6", "uid6", &["group5"])),
        (
            ("user7", "password7"),
            user("user7", "uid7", &["group1", "group2"]),
        ),
        (("user7", "passwordbad"), None),
        (("userbad", "password7"), None),
        (("user8", "password8"), None),
    ];
    for ((name, password), want) in cases {
        assert_eq!(who(&file, name, password), want, "({name}, {password})");
    }
    assert_eq!(file.len(), 7);
}

#[test]
fn k8s_bad_password_file() {
    let err = PasswordFile::from_csv(
        b"password1,user1,uid1\npassword2,user2,uid2\npassword3,user3\npassword4\n",
        "bad",
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "password file 'bad' must have at least 3 columns (password, user name, user uid), found 2"
    );
}

#[test]
fn k8s_insufficient_columns_password_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.csv");
    std::fs::write(&path, "password4\n").unwrap();
    let err = PasswordFile::open(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "password file '{}' must have at least 3 columns (password, user name, user uid), found 1",
            path.display()
        )
    );
}

#[test]
fn duplicate_user_last_wins_with_warning() {
    let file = PasswordFile::from_csv(b"old,bob,1\nnew,bob,2,admins\n", "f").unwrap();
    assert_eq!(who(&file, "bob", "old"), None);
    assert_eq!(who(&file, "bob", "new"), user("bob", "2", &["admins"]));
    assert_eq!(
        file.warnings(),
        ["duplicate username 'bob' has been found in password file 'f', record number '2'"]
    );
}

/// A password that is not valid UTF-8 loads (as in Kubernetes) but can never be sent through
/// `Authorization: Basic`, so it is warned about, without the password.
#[test]
fn non_utf8_password_is_warned_about() {
    let cases: [(&str, &[u8], &[&str]); 4] = [
        ("ascii", b"pw,a,1\n", &[]),
        ("utf-8 outside ascii", "p\u{e9}w,a,1\n".as_bytes(), &[]),
        (
            "not utf-8",
            b"p\xffw,a,1\n",
            &[
                "password in password file 'f', record number '1' is not valid UTF-8 and can never be sent in an Authorization header",
            ],
        ),
        (
            "not utf-8 and a duplicate user",
            b"x,a,1\n\xc3,a,2\n",
            &[
                "duplicate username 'a' has been found in password file 'f', record number '2'",
                "password in password file 'f', record number '2' is not valid UTF-8 and can never be sent in an Authorization header",
            ],
        ),
    ];
    for (name, content, want) in cases {
        let file = PasswordFile::from_csv(content, "f").unwrap();
        assert_eq!(file.warnings(), want, "case {name}");
        assert_eq!(file.len(), 1, "case {name}: the user still loads");
    }
}

#[test]
fn empty_password_is_not_skipped() {
    let file = PasswordFile::from_csv(b",nopw,1\n", "f").unwrap();
    assert_eq!(who(&file, "nopw", ""), user("nopw", "1", &[]));
    assert_eq!(who(&file, "nopw", " "), None);
    assert!(file.warnings().is_empty());
}

#[test]
fn passwords_are_compared_whole() {
    let file = PasswordFile::from_csv(b"abc,u,1\n\"a,b\nc\",v,2\n", "f").unwrap();
    for wrong in ["ab", "abcd", "ABC", "abc ", "", "\u{0}abc"] {
        assert_eq!(who(&file, "u", wrong), None, "{wrong:?}");
    }
    assert_eq!(who(&file, "v", "a,b\nc"), user("v", "2", &[]));
    // User names are matched exactly too.
    assert_eq!(who(&file, "U", "abc"), None);
    assert_eq!(who(&file, "u ", "abc"), None);
}

#[test]
fn bad_csv_and_empty_file() {
    assert!(PasswordFile::from_csv(b"", "f").unwrap().is_empty());
    let err = PasswordFile::from_csv(b"pw\"x,u,1\n", "f").unwrap_err();
    assert_eq!(
        err.to_string(),
        "parse error on line 1, column 3: bare \" in non-quoted-field"
    );
    let err = PasswordFile::from_csv(b"#comment\n", "f").unwrap_err();
    assert!(err.to_string().ends_with("found 1"));
    let err = PasswordFile::from_csv(b"   \n", "f").unwrap_err();
    assert!(err.to_string().ends_with("found 1"));
}

#[tokio::test]
async fn basic_auth_end_to_end() {
    let file = PasswordFile::from_csv(K8S_FILE.as_bytes(), "f").unwrap();
    let basic = Basic::new(file);
    let ctx = Context::default();
    let req = |v: &str| {
        http::Request::get("/")
            .header("authorization", v)
            .body(())
            .unwrap()
            .into_parts()
            .0
    };
    // base64("user3:password3"), base64("user3:wrong"), base64("nobody:password3")
    let ok = basic
        .authenticate_request(&req("Basic dXNlcjM6cGFzc3dvcmQz"), &ctx)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ok.user.name(), "user3");
    for header in ["Basic dXNlcjM6d3Jvbmc=", "Basic bm9ib2R5OnBhc3N3b3JkMw=="] {
        let err = basic
            .authenticate_request(&req(header), &ctx)
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "invalid username/password combination");
    }
}

#[test]
fn broken_reload_keeps_previous_users() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.csv");
    std::fs::write(&path, "pw1,alice,1\n").unwrap();
    let file = PasswordFile::open(&path).unwrap();
    std::fs::write(&path, "pw1,alice\n").unwrap();
    assert!(file.reload_now().is_err());
    assert_eq!(who(&file, "alice", "pw1"), user("alice", "1", &[]));
    std::fs::write(&path, "pw2,alice,1\n").unwrap();
    file.reload_now().unwrap();
    assert_eq!(who(&file, "alice", "pw1"), None);
    assert_eq!(who(&file, "alice", "pw2"), user("alice", "1", &[]));
}

#[test]
fn debug_and_errors_never_show_passwords() {
    const SECRET: &str = "hunter2-PASSWORD";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.csv");
    std::fs::write(&path, format!("{SECRET},alice,1\n{SECRET},alice,1\n")).unwrap();
    let file = PasswordFile::open(&path).unwrap();
    let mut texts = vec![format!("{file:?}"), format!("{file:#?}")];
    texts.extend(file.warnings());
    for input in [
        format!("{SECRET}\n"),
        format!("{SECRET}\"x,a,1\n"),
        format!("\"{SECRET}\"x,a,1\n"),
        format!("\"{SECRET}"),
    ] {
        let e = PasswordFile::from_csv(input.as_bytes(), "bad").unwrap_err();
        texts.push(format!("{e} {e:?}"));
    }
    std::fs::write(&path, format!("{SECRET}\n")).unwrap();
    let e = file.reload_now().unwrap_err();
    texts.push(format!("{e} {e:?} {file:?}"));
    for t in texts {
        assert!(!t.contains("hunter2"), "secret leaked in {t:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = PasswordFile::from_csv(&bytes, "fuzz").map(|f| f.len());
    }

    /// Any password written with Go-style quoting authenticates exactly its user.
    #[test]
    fn any_password_round_trips(password in "[ -~\n]{0,40}", name in "[a-z]{1,12}") {
        let quoted = format!("\"{}\"", password.replace('"', "\"\""));
        let file = PasswordFile::from_csv(format!("{quoted},{name},1\n").as_bytes(), "p").unwrap();
        prop_assert_eq!(who(&file, &name, &password).map(|u| u.0), Some(name.clone()));
        let other = format!("{password}x");
        prop_assert_eq!(who(&file, &name, &other), None);
    }
}
