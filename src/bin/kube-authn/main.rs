//! `kube-authn serve`: kube-apiserver's authentication, as a standalone HTTPS server that answers
//! SelfSubjectReview (`kubectl auth whoami`) and TokenReview (so it can be a cluster's
//! authentication webhook), configured with kube-apiserver's own flags and files.

mod app;
mod certs;
mod create_options;
mod dev;
mod dev_token;
mod discovery;
mod request_deadline;
mod request_uri;
mod serve;

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::parser::ValueSource;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "kube-authn",
    version,
    about = "Kubernetes request authentication, outside the apiserver"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve SelfSubjectReview and TokenReview over HTTPS.
    Serve(Box<ServeArgs>),
    /// Mint a service-account token (the layout kube-apiserver's TokenRequest mints) with a
    /// private key, e.g. the one `serve --dev` writes.
    DevToken(DevTokenArgs),
}

/// `kube-authn dev-token` flags.
#[derive(Args, Debug, Clone)]
pub struct DevTokenArgs {
    /// PEM private key (EC P-256/P-384/P-521 or RSA; PKCS#8, SEC1 or PKCS#1) that signs.
    #[arg(long = "key-file", value_name = "FILE")]
    pub key_file: PathBuf,
    /// The token's issuer (`iss`); must be one of the server's --service-account-issuer.
    #[arg(long, value_name = "STRING", default_value = "https://kube-authn.dev")]
    pub issuer: String,
    /// Audiences (`aud`, repeatable); default: the issuer (kube-apiserver's default
    /// --api-audiences).
    #[arg(long, value_name = "STRING")]
    pub audience: Vec<String>,
    /// The service account's namespace.
    #[arg(long, value_name = "STRING", default_value = "default")]
    pub namespace: String,
    /// The service account's name.
    #[arg(long, value_name = "STRING")]
    pub name: String,
    /// The service account's UID (default: a random UUID).
    #[arg(long, value_name = "STRING")]
    pub uid: Option<String>,
    /// Lifetime (Go duration).
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = go_duration)]
    pub expiration: std::time::Duration,
}

/// One element of component-base's `MapStringString` with `NoSplit` (what kube-apiserver
/// uses for `--oidc-required-claim`): `key=value` split at the first `=`, both sides trimmed
/// (Rust's `trim` and Go's `strings.TrimSpace` strip the same Unicode white space).
fn key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) => Ok((k.trim().to_owned(), v.trim().to_owned())),
        None => Err("malformed pair, expect string=string".to_owned()),
    }
}

/// Go `strconv.ParseBool`, as pflag parses boolean flags.
fn go_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err(format!(
            "strconv.ParseBool: parsing {}: invalid syntax",
            kube_authn::jwt::go_quote(s)
        )),
    }
}

/// Go `strconv.ParseInt(s, 0, 64)`, as pflag parses int flags: an optional sign, then
/// decimal, `0x`/`0o`/`0b` (any case) or a leading `0` for octal (`06443` is 3363), with `_`
/// between digits; Go's error texts.
fn go_int(s: &str) -> Result<i64, String> {
    let err = |what: &str| {
        format!(
            "strconv.ParseInt: parsing {}: {what}",
            kube_authn::jwt::go_quote(s)
        )
    };
    let (negative, body) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let b = body.as_bytes();
    let (base, digits, prefixed) = match b {
        [b'0', p, _, ..] if matches!(p.to_ascii_lowercase(), b'x' | b'o' | b'b') => {
            let base = match p.to_ascii_lowercase() {
                b'x' => 16,
                b'o' => 8,
                _ => 2,
            };
            (base, &b[2..], true)
        }
        [b'0', rest @ ..] => (8, rest, false),
        _ => (10, b, false),
    };
    if b.is_empty() {
        return Err(err("invalid syntax"));
    }
    // Go's `ParseUint`: an invalid digit is a syntax error and an overflow a range error at
    // once; the underscores are checked after the digits (`underscoreOK`: each between two
    // digits, a base prefix or a leading octal `0` counting as one).
    let limit = if negative {
        1u64 << 63
    } else {
        (1u64 << 63) - 1
    };
    let mut magnitude: u64 = 0;
    let mut underscores = false;
    for &c in digits {
        if c == b'_' {
            underscores = true;
            continue;
        }
        let d = match (c as char).to_digit(16) {
            Some(d) if d < base => u64::from(d),
            _ => return Err(err("invalid syntax")),
        };
        match magnitude
            .checked_mul(u64::from(base))
            .and_then(|m| m.checked_add(d))
        {
            Some(m) if m <= limit => magnitude = m,
            _ => return Err(err("value out of range")),
        }
    }
    if underscores {
        let mut last = if prefixed || base == 8 { b'0' } else { b'^' };
        for &c in digits {
            match c {
                b'_' if last != b'0' => return Err(err("invalid syntax")),
                b'_' => last = b'_',
                _ => last = b'0',
            }
        }
        if last == b'_' {
            return Err(err("invalid syntax"));
        }
    }
    Ok(if negative {
        0i64.wrapping_sub_unsigned(magnitude)
    } else {
        magnitude as i64
    })
}

/// One `--bind-address` occurrence as pflag's `IPVar` takes it: an empty value changes
/// nothing (`None`: the previous occurrence, or the default, stays), white space around the
/// address is trimmed, and anything else that is not an IP address is `failed to parse IP:
/// "…"`. An IPv4-mapped IPv6 address is its IPv4 address, as Go's `net.ParseIP(…).String()`
/// (what kube-apiserver listens on) gives it: `::ffff:0.0.0.0` is the IPv4 wildcard.
fn go_ip(s: &str) -> Result<Option<IpAddr>, String> {
    if s.is_empty() {
        return Ok(None);
    }
    s.trim()
        .parse()
        .map(|ip: IpAddr| Some(ip.to_canonical()))
        .map_err(|_| format!("failed to parse IP: {}", kube_authn::jwt::go_quote(s)))
}

/// A file flag's value as pflag's `StringVar` takes it: any bytes (UTF-8 or not), the empty
/// value included (clap's own path parser refuses `""`). [`ServeArgs::with_pflag_lists`] then
/// reads an empty value as the flag not set, as kube-apiserver's `len(file) > 0` checks do;
/// but an empty `--service-account-key-file` (a `StringArray`) stays in the list, and opening
/// it fails at startup, as kube-apiserver's `open : no such file or directory` does.
fn go_path() -> impl clap::builder::TypedValueParser<Value = PathBuf> {
    clap::builder::TypedValueParser::map(clap::builder::OsStringValueParser::new(), PathBuf::from)
}

/// One occurrence of a pflag `StringSlice` flag: the fields of the first CSV record of its
/// value (see [`kube_authn::config::pflag_string_slice`]).
#[derive(Debug, Clone, PartialEq, Eq)]
struct CsvRecord(Vec<String>);

/// A list flag's occurrence as pflag's `StringSlice.Set` reads it, when pflag reads it: a
/// malformed record stops the parse at that argument, before the flags after it are looked
/// at and before any `Validate()` check.
fn go_csv(s: &str) -> Result<CsvRecord, String> {
    kube_authn::config::pflag_csv_record(s).map(CsvRecord)
}

/// Every occurrence's fields, in order (pflag: the first occurrence replaces the default,
/// the later ones append; clap drops the default once the flag is given).
fn flatten(records: &[CsvRecord]) -> Vec<String> {
    records.iter().flat_map(|r| r.0.iter().cloned()).collect()
}

/// A Go duration flag value (`2m`, `10s`, `1h30m`), as pflag parses it.
fn go_duration(s: &str) -> Result<std::time::Duration, String> {
    kube_authn::config::parse_go_duration(s).map_err(|e| e.to_string())
}

/// A duration as pflag reads it (`time.ParseDuration`), negative ones included, in nanoseconds.
fn go_duration_nanos(s: &str) -> Result<i64, String> {
    kube_authn::config::go_parse_duration(s.as_bytes()).map_err(|e| e.to_string())
}

/// Flags, spelled and defaulted as kube-apiserver spells and defaults them. As with pflag, a
/// flag given twice keeps its last value (list flags append), and a value may start with `-`
/// (`--oidc-groups-prefix -grp:`).
#[derive(Args, Debug, Clone)]
#[command(args_override_self = true, allow_hyphen_values = true)]
pub struct ServeArgs {
    /// If set, the file that will be used to secure the secure port of the API server via
    /// token authentication.
    #[arg(long = "token-auth-file", value_name = "FILE", value_parser = go_path())]
    pub token_auth_file: Option<PathBuf>,

    /// If set, any request presenting a client certificate signed by one of the authorities in
    /// the client-ca-file is authenticated with an identity corresponding to the CommonName of
    /// the client certificate.
    #[arg(long = "client-ca-file", value_name = "FILE", value_parser = go_path())]
    pub client_ca_file: Option<PathBuf>,

    /// If set, the file that will be used to admit requests to the secure port of the API
    /// server via http basic authentication (removed from kube-apiserver in 1.19).
    #[arg(long = "basic-auth-file", value_name = "FILE", value_parser = go_path())]
    pub basic_auth_file: Option<PathBuf>,

    /// If passed, activates the keystone authentication plugin: Basic credentials are checked
    /// against this OpenStack Identity v3 endpoint (https only; removed from kube-apiserver in
    /// 1.11).
    #[arg(long = "experimental-keystone-url", value_name = "URL")]
    pub experimental_keystone_url: Option<String>,

    /// If set, the Keystone server's certificate will be verified by one of the authorities
    /// in the experimental-keystone-ca-file, otherwise the host's root CA set will be used.
    #[arg(long = "experimental-keystone-ca-file", value_name = "FILE", value_parser = go_path())]
    pub experimental_keystone_ca_file: Option<PathBuf>,

    /// Root certificate bundle to use to verify client certificates on incoming requests
    /// before trusting usernames in headers specified by --requestheader-username-headers.
    /// WARNING: generally do not depend on authorization being already done for incoming
    /// requests.
    #[arg(long = "requestheader-client-ca-file", value_name = "FILE", value_parser = go_path())]
    pub requestheader_client_ca_file: Option<PathBuf>,

    /// List of client certificate common names to allow to provide usernames in headers
    /// specified by --requestheader-username-headers. If empty, any client certificate
    /// validated by the authorities in --requestheader-client-ca-file is allowed.
    #[arg(long = "requestheader-allowed-names", value_name = "STRINGS", value_parser = go_csv)]
    requestheader_allowed_names_flag: Vec<CsvRecord>,

    /// `--requestheader-allowed-names`: every occurrence's fields (set by [`ServeArgs::with_pflag_lists`]).
    #[arg(skip)]
    pub requestheader_allowed_names: Vec<String>,

    /// List of request headers to inspect for usernames. X-Remote-User is common.
    #[arg(long = "requestheader-username-headers", value_name = "STRINGS", value_parser = go_csv)]
    requestheader_username_headers_flag: Vec<CsvRecord>,

    /// `--requestheader-username-headers`: every occurrence's fields (set by [`ServeArgs::with_pflag_lists`]).
    #[arg(skip)]
    pub requestheader_username_headers: Vec<String>,

    /// List of request headers to inspect for UIDs. X-Remote-Uid is suggested.
    #[arg(long = "requestheader-uid-headers", value_name = "STRINGS", value_parser = go_csv)]
    requestheader_uid_headers_flag: Vec<CsvRecord>,

    /// `--requestheader-uid-headers`: every occurrence's fields (set by [`ServeArgs::with_pflag_lists`]).
    #[arg(skip)]
    pub requestheader_uid_headers: Vec<String>,

    /// List of request headers to inspect for groups. X-Remote-Group is suggested.
    #[arg(long = "requestheader-group-headers", value_name = "STRINGS", value_parser = go_csv)]
    requestheader_group_headers_flag: Vec<CsvRecord>,

    /// `--requestheader-group-headers`: every occurrence's fields (set by [`ServeArgs::with_pflag_lists`]).
    #[arg(skip)]
    pub requestheader_group_headers: Vec<String>,

    /// List of request header prefixes to inspect. X-Remote-Extra- is suggested.
    #[arg(long = "requestheader-extra-headers-prefix", value_name = "STRINGS", value_parser = go_csv)]
    requestheader_extra_headers_prefix_flag: Vec<CsvRecord>,

    /// `--requestheader-extra-headers-prefix`: every occurrence's fields (set by [`ServeArgs::with_pflag_lists`]).
    #[arg(skip)]
    pub requestheader_extra_headers_prefix: Vec<String>,

    /// Enables anonymous requests to the secure port of the API server. Requests that are not
    /// rejected by another authentication method are treated as anonymous requests. Anonymous
    /// requests have a username of system:anonymous, and a group name of system:unauthenticated.
    /// (default true; not with an anonymous section in --authentication-config)
    #[arg(long = "anonymous-auth", value_name = "BOOL",
          num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = go_bool)]
    pub anonymous_auth: Option<bool>,

    /// Identifiers of the API. The service account token authenticator will validate that
    /// tokens used against the API are bound to at least one of these audiences. If the
    /// --service-account-issuer flag is configured and this flag is not, this field defaults
    /// to a single element list containing the issuer URL.
    #[arg(long = "api-audiences", value_name = "STRINGS", value_parser = go_csv)]
    api_audiences_flag: Vec<CsvRecord>,

    /// `--api-audiences`: every occurrence's fields (set by [`ServeArgs::with_pflag_lists`]).
    #[arg(skip)]
    pub api_audiences: Vec<String>,

    /// (kube-authn only) Groups whose members may create TokenReviews. kube-apiserver leaves
    /// this to RBAC, where only system:masters and the subjects bound to the
    /// system:auth-delegator cluster role (kube-apiserver's webhook client, extension API
    /// servers) may; kube-authn has no authorizer, so it asks for the groups here. Any other
    /// caller gets kube-apiserver's 403.
    #[arg(
        long = "token-review-groups",
        value_name = "STRINGS",
        default_value = "system:masters",
        value_parser = go_csv
    )]
    token_review_groups_flag: Vec<CsvRecord>,

    /// `--token-review-groups`: every occurrence's fields (set by
    /// [`ServeArgs::with_pflag_lists`]).
    #[arg(skip)]
    pub token_review_groups: Vec<String>,

    /// File containing PEM-encoded x509 RSA or ECDSA private or public keys, used to verify
    /// ServiceAccount tokens. The specified file can contain multiple keys, and the flag can
    /// be specified multiple times with different files. (Unlike kube-apiserver,
    /// --tls-private-key-file is not used when this is unspecified.)
    #[arg(long = "service-account-key-file", value_name = "FILE", action = clap::ArgAction::Append,
          value_parser = go_path())]
    pub service_account_key_files: Vec<PathBuf>,

    /// Identifier of the service account token issuer. The issuer will assert this identifier
    /// in "iss" claim of issued tokens. This value is a string or URI. When this flag is
    /// specified multiple times, the first is used to generate tokens and all are used to
    /// determine which issuers are accepted.
    #[arg(long = "service-account-issuer", value_name = "STRING", action = clap::ArgAction::Append)]
    pub service_account_issuers: Vec<String>,

    /// If true, validate ServiceAccount tokens exist in etcd as part of authentication.
    /// kube-authn asks the API server named by --service-account-lookup-kubeconfig (or, in a
    /// pod, the in-cluster API server); without either, set this to false when using
    /// --service-account-key-file. As in kube-apiserver, false affects legacy tokens only:
    /// bound tokens are still looked up through --service-account-lookup-kubeconfig when it
    /// is set (without it they are trusted until they expire).
    #[arg(long = "service-account-lookup", value_name = "BOOL", default_value = "true",
          num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = go_bool)]
    pub service_account_lookup: bool,

    /// (kube-authn only) Kubeconfig of the API server that --service-account-lookup asks for
    /// service accounts, secrets, pods and nodes (the credential needs `get` on them); bound
    /// tokens are looked up through it even with --service-account-lookup=false.
    #[arg(long = "service-account-lookup-kubeconfig", value_name = "FILE", value_parser = go_path())]
    pub service_account_lookup_kubeconfig: Option<PathBuf>,

    /// The URL of the OpenID issuer, only HTTPS scheme will be accepted. If set, it will be
    /// used to verify the OIDC JSON Web Token (JWT).
    #[arg(long = "oidc-issuer-url", value_name = "STRING", default_value = "")]
    pub oidc_issuer_url: String,

    /// The client ID for the OpenID Connect client, must be set if oidc-issuer-url is set.
    #[arg(long = "oidc-client-id", value_name = "STRING", default_value = "")]
    pub oidc_client_id: String,

    /// If set, the OpenID server's certificate will be verified by one of the authorities in
    /// the oidc-ca-file, otherwise the host's root CA set will be used.
    #[arg(long = "oidc-ca-file", value_name = "FILE", value_parser = go_path())]
    pub oidc_ca_file: Option<PathBuf>,

    /// The OpenID claim to use as the user name. Note that claims other than the default
    /// ('sub') is not guaranteed to be unique and immutable.
    #[arg(
        long = "oidc-username-claim",
        value_name = "STRING",
        default_value = "sub"
    )]
    pub oidc_username_claim: String,

    /// If provided, all usernames will be prefixed with this value. If not provided, username
    /// claims other than 'email' are prefixed by the issuer URL to avoid clashes. To skip any
    /// prefixing, provide the value '-'.
    #[arg(long = "oidc-username-prefix", value_name = "STRING")]
    pub oidc_username_prefix: Option<String>,

    /// If provided, the name of a custom OpenID Connect claim for specifying user groups. The
    /// claim value is expected to be a string or array of strings.
    #[arg(long = "oidc-groups-claim", value_name = "STRING")]
    pub oidc_groups_claim: Option<String>,

    /// If provided, all groups will be prefixed with this value to prevent conflicts with
    /// other authentication strategies.
    #[arg(long = "oidc-groups-prefix", value_name = "STRING", default_value = "")]
    pub oidc_groups_prefix: String,

    /// A key=value pair that describes a required claim in the ID Token. If set, the claim is
    /// verified to be present in the ID Token with a matching value. Repeat this flag to
    /// specify multiple claims.
    // One pair per occurrence, never split on commas; the last duplicate key wins: read it
    // through `ServeArgs::oidc_required_claims`.
    #[arg(long = "oidc-required-claim", value_name = "KEY=VALUE", action = clap::ArgAction::Append,
          value_parser = key_value)]
    oidc_required_claims: Vec<(String, String)>,

    /// Comma-separated list of allowed JOSE asymmetric signing algorithms. JWTs with a
    /// supported 'alg' header values are: RS256, RS384, RS512, ES256, ES384, ES512, PS256,
    /// PS384, PS512.
    #[arg(
        long = "oidc-signing-algs",
        value_name = "STRINGS",
        default_value = "RS256",
        value_parser = go_csv
    )]
    oidc_signing_algs_flag: Vec<CsvRecord>,

    /// `--oidc-signing-algs`: every occurrence's fields (set by
    /// [`ServeArgs::with_pflag_lists`]).
    #[arg(skip)]
    pub oidc_signing_algs: Vec<String>,

    /// File with Authentication Configuration to configure the JWT Token authenticator or the
    /// anonymous authenticator. This flag is mutually exclusive with the --oidc-* flags if the
    /// file configures the JWT Token authenticator. This flag is mutually exclusive with
    /// --anonymous-auth if the file configures the Anonymous authenticator.
    /// (apiserver.config.k8s.io/v1 AuthenticationConfiguration.)
    #[arg(long = "authentication-config", value_name = "FILE", value_parser = go_path())]
    pub authentication_config: Option<PathBuf>,

    /// Whether some `--oidc-*` flag was on the command line, whatever its value (pflag's
    /// `Changed`, kube-apiserver's test for "set"); filled in by [`parse_cli`].
    #[arg(skip)]
    pub oidc_flags_given: bool,

    /// File with webhook configuration for token authentication in kubeconfig format. The API
    /// server will query the remote service to determine authentication for bearer tokens.
    #[arg(long = "authentication-token-webhook-config-file", value_name = "FILE", value_parser = go_path())]
    pub authentication_token_webhook_config_file: Option<PathBuf>,

    /// The API version of the authentication.k8s.io TokenReview to send to and expect from the
    /// webhook.
    #[arg(
        long = "authentication-token-webhook-version",
        value_name = "STRING",
        default_value = "v1beta1"
    )]
    pub authentication_token_webhook_version: String,

    /// The duration to cache responses from the webhook token authenticator.
    #[arg(long = "authentication-token-webhook-cache-ttl", value_name = "DURATION",
          default_value = "2m0s", value_parser = go_duration)]
    pub authentication_token_webhook_cache_ttl: std::time::Duration,

    /// An optional field indicating the duration a handler must keep a request open before
    /// timing it out. (kube-authn applies it to reading a review's request body; a body that
    /// does not arrive in time gets kube-apiserver's 504. As in kube-apiserver, it is also how
    /// long open connections may take to finish after a shutdown signal.)
    #[arg(long = "request-timeout", value_name = "DURATION",
          default_value = "1m0s", value_parser = go_duration_nanos)]
    request_timeout_flag: i64,

    /// `--request-timeout`, checked by [`ServeArgs::with_pflag_lists`] (pflag takes a negative
    /// duration; `Validate()` refuses it).
    #[arg(skip)]
    pub request_timeout: std::time::Duration,

    /// This flag limits the maximum number of mutating requests in flight, or a zero value
    /// disables the limit completely. (kube-authn: SelfSubjectReviews and TokenReviews, which
    /// kube-apiserver counts as mutating. Beyond it: 429 with Retry-After: 1, except for
    /// members of system:masters, who are still served, as in kube-apiserver.)
    #[arg(
        long = "max-mutating-requests-inflight",
        value_name = "INT",
        default_value = "200",
        value_parser = go_int
    )]
    max_mutating_requests_inflight_flag: i64,

    /// `--max-mutating-requests-inflight`, checked by [`ServeArgs::with_pflag_lists`].
    #[arg(skip)]
    pub max_mutating_requests_inflight: usize,

    /// The port on which to serve HTTPS with authentication and authorization.
    #[arg(
        long = "secure-port",
        value_name = "INT",
        default_value = "6443",
        value_parser = go_int
    )]
    secure_port_flag: i64,

    /// `--secure-port`, checked by [`ServeArgs::with_pflag_lists`] (0: the OS picks a port;
    /// see docs/compatibility.md).
    #[arg(skip)]
    pub secure_port: u16,

    /// The IP address on which to listen for the --secure-port port (default 0.0.0.0: all
    /// interfaces).
    #[arg(long = "bind-address", value_name = "IP", action = clap::ArgAction::Append, value_parser = go_ip)]
    bind_address_flag: Vec<Option<IpAddr>>,

    /// `--bind-address`: the last non-empty occurrence, else 0.0.0.0 (set by
    /// [`ServeArgs::with_pflag_lists`]).
    #[arg(skip = IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED))]
    pub bind_address: IpAddr,

    /// File containing the default x509 Certificate for HTTPS. (CA cert, if any, concatenated
    /// after server cert). If HTTPS serving is enabled, and --tls-cert-file and
    /// --tls-private-key-file are not provided, a self-signed certificate and key are generated
    /// for the public address and saved to the directory specified by --cert-dir.
    #[arg(long = "tls-cert-file", value_name = "FILE", value_parser = go_path())]
    pub tls_cert_file: Option<PathBuf>,

    /// File containing the default x509 private key matching --tls-cert-file.
    #[arg(long = "tls-private-key-file", value_name = "FILE", value_parser = go_path())]
    pub tls_private_key_file: Option<PathBuf>,

    /// Comma-separated list of cipher suites for the server (Go's names). If omitted, the
    /// default suites are used (kube-authn: rustls' ECDHE AEAD suites). kube-authn offers
    /// the AEAD ECDHE suites named; names Go knows that rustls does not implement (CBC, RSA key
    /// exchange, RC4, 3DES) are not offered, with a warning; TLS 1.3 suites are not
    /// configurable, as in Go.
    #[arg(long = "tls-cipher-suites", value_name = "STRINGS", value_parser = go_csv)]
    tls_cipher_suites_flag: Vec<CsvRecord>,

    /// `--tls-cipher-suites`: every occurrence's fields (set by
    /// [`ServeArgs::with_pflag_lists`]).
    #[arg(skip)]
    pub tls_cipher_suites: Vec<String>,

    /// Minimum TLS version supported. Possible values: VersionTLS10, VersionTLS11,
    /// VersionTLS12, VersionTLS13 (kube-authn: rustls has no TLS 1.0 or 1.1, so the first two
    /// mean TLS 1.2).
    #[arg(long = "tls-min-version", value_name = "STRING", default_value = "")]
    pub tls_min_version: String,

    /// The directory where the TLS certs are located. If --tls-cert-file and
    /// --tls-private-key-file are provided, this flag will be ignored.
    #[arg(
        long = "cert-dir",
        value_name = "DIR",
        default_value = "/var/run/kubernetes"
    )]
    pub cert_dir: PathBuf,

    /// Development mode: listen on 127.0.0.1, generate a self-signed certificate, demo token
    /// and password files, a client CA and a front-proxy CA with a client certificate each, a
    /// service-account signing key (lookup off), and print ready-to-paste commands. Flags given
    /// explicitly are kept, except a --bind-address that is a wildcard (0.0.0.0, the default,
    /// or ::) and a --cert-dir equal to its default (/var/run/kubernetes), which dev mode
    /// replaces as if they were not given. Demo commands are printed only for credentials the
    /// server has (none for the demo tokens with your own --token-auth-file).
    #[arg(long = "dev", value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", default_value = "false", value_parser = go_bool)]
    pub dev: bool,

    /// INSECURE: accept ANY bearer token as the user and groups it names, `user/group1,group2`
    /// (kube-apiserver's --insecure-allow-any-token, removed in 1.8). Anyone can then claim to
    /// be anyone, system:masters included. Only for throw-away local experiments; a warning is
    /// logged at startup.
    #[arg(long = "insecure-allow-any-token", value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", default_value = "false", value_parser = go_bool)]
    pub insecure_allow_any_token: bool,
}

impl ServeArgs {
    /// Completes the flags after pflag's parse: kube-apiserver's `Validate()` checks on the
    /// int and duration flags, in its order (`--max-mutating-requests-inflight … can not be
    /// negative value`, `--request-timeout …`, then `--secure-port 70000 must be between 1 and
    /// 65535, …`; the first one is reported), then the list flags' fields (each occurrence was
    /// read as one CSV record while parsing, as pflag's `StringSlice` reads it: `a,b`, or
    /// `"a,b",c` for a value holding a comma; an empty occurrence adds nothing; later
    /// occurrences append, `--api-audiences=a --api-audiences=` is `["a"]`). A file or URL
    /// flag given an empty value (`--client-ca-file=`, as templated manifests write them) is
    /// not set: kube-apiserver guards each with `len(value) > 0`.
    pub fn with_pflag_lists(mut self) -> Result<Self, String> {
        self.bind_address = self
            .bind_address_flag
            .iter()
            .rev()
            .find_map(|ip| *ip)
            .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED));
        // kube-apiserver's `Validate()` texts and order (`GenericServerRunOptions`, then
        // `SecureServing`), after pflag has parsed the values.
        self.max_mutating_requests_inflight =
            usize::try_from(self.max_mutating_requests_inflight_flag).map_err(|_| {
                "--max-mutating-requests-inflight can not be negative value".to_owned()
            })?;
        self.request_timeout = u64::try_from(self.request_timeout_flag)
            .map(std::time::Duration::from_nanos)
            .map_err(|_| "--request-timeout can not be negative value".to_owned())?;
        self.secure_port = u16::try_from(self.secure_port_flag).map_err(|_| {
            format!(
                "--secure-port {} must be between 1 and 65535, inclusive. It cannot be turned off with 0",
                self.secure_port_flag
            )
        })?;
        for path in [
            &mut self.token_auth_file,
            &mut self.client_ca_file,
            &mut self.basic_auth_file,
            &mut self.experimental_keystone_ca_file,
            &mut self.requestheader_client_ca_file,
            &mut self.service_account_lookup_kubeconfig,
            &mut self.oidc_ca_file,
            &mut self.authentication_config,
            &mut self.authentication_token_webhook_config_file,
            &mut self.tls_cert_file,
            &mut self.tls_private_key_file,
        ] {
            if path.as_ref().is_some_and(|p| p.as_os_str().is_empty()) {
                *path = None;
            }
        }
        if self.experimental_keystone_url.as_deref() == Some("") {
            self.experimental_keystone_url = None;
        }
        self.requestheader_allowed_names = flatten(&self.requestheader_allowed_names_flag);
        self.requestheader_username_headers = flatten(&self.requestheader_username_headers_flag);
        self.requestheader_uid_headers = flatten(&self.requestheader_uid_headers_flag);
        self.requestheader_group_headers = flatten(&self.requestheader_group_headers_flag);
        self.requestheader_extra_headers_prefix =
            flatten(&self.requestheader_extra_headers_prefix_flag);
        self.api_audiences = flatten(&self.api_audiences_flag);
        self.token_review_groups = flatten(&self.token_review_groups_flag);
        self.oidc_signing_algs = flatten(&self.oidc_signing_algs_flag);
        self.tls_cipher_suites = flatten(&self.tls_cipher_suites_flag);
        Ok(self)
    }

    /// The `--oidc-required-claim` pairs as kube-apiserver's map holds them: one per key, the
    /// last occurrence's value, in order of each key's first occurrence.
    pub fn oidc_required_claims(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::with_capacity(self.oidc_required_claims.len());
        for (k, v) in &self.oidc_required_claims {
            match out.iter_mut().find(|(have, _)| have == k) {
                Some(slot) => slot.1.clone_from(v),
                None => out.push((k.clone(), v.clone())),
            }
        }
        out
    }
}

/// The command line as clap is to parse it, and what pflag and cobra decide outside clap.
#[derive(Debug)]
struct Normalized {
    /// The arguments for clap: flag names normalized, without the help flags and positional
    /// arguments, and ending before the argument pflag stopped at ([`Normalized::stopped`]).
    argv: Vec<std::ffi::OsString>,
    /// The subcommand given, whose command path (`kube-authn serve`) the positional-argument
    /// error names.
    subcommand: Option<String>,
    /// cobra's `-h, --help` after every argument (the last occurrence wins).
    help: bool,
    /// The positional arguments (pflag's `Args()`), for cobra's `Args` check.
    positional: Vec<String>,
    /// pflag's error at an argument clap does not see (a bad `--help` value, an unknown
    /// shorthand, a bad flag syntax); arguments before it may still fail first.
    stopped: Option<String>,
}

/// kube-apiserver's flag-name normalization (component-base `WordSepNormalizeFunc`): a `_` in
/// a subcommand flag's name is a `-` (`--anonymous_auth=false` is `--anonymous-auth=false`).
/// Only names that then exist are rewritten, and the value that follows a flag given as
/// `--flag value` is left as it is, whatever it looks like.
///
/// What clap would decide otherwise is taken out, as pflag parses it, in its place:
/// - cobra's `-h, --help` is a pflag boolean (`--help=false`, any `ParseBool` spelling, is no
///   help; a bad value is pflag's `invalid argument "x" for "-h, --help" flag: …`), acted on
///   only after every argument has parsed;
/// - a shorthand group (`-hh`, `-hx`, `-h=1`) is read byte by byte as pflag reads it
///   (`unknown shorthand flag: 'x' in -x`; one starting `test.` is skipped);
/// - `---x` and `--=x` are pflag's `bad flag syntax`;
/// - positional arguments (also `-` and everything after `--`) are collected for cobra's
///   `Args` check, which comes after help.
fn normalize_flag_names(argv: Vec<std::ffi::OsString>, command: &clap::Command) -> Normalized {
    let mut out = Normalized {
        argv: Vec::with_capacity(argv.len()),
        subcommand: None,
        help: false,
        positional: Vec::new(),
        stopped: None,
    };
    let mut args = argv.into_iter();
    // The program name, then everything up to the subcommand.
    out.argv.extend(args.next());
    let mut subcommand = None;
    for a in args.by_ref() {
        subcommand = a
            .to_str()
            .and_then(|name| command.find_subcommand(name))
            .cloned();
        out.argv.push(a);
        if subcommand.is_some() {
            break;
        }
    }
    let Some(sub) = subcommand else {
        return out;
    };
    out.subcommand = Some(sub.get_name().to_owned());
    while let Some(a) = args.next() {
        // Not UTF-8: clap's (a file flag's value is taken before this, with its flag).
        let Some(text) = a.to_str() else {
            out.argv.push(a);
            continue;
        };
        if text == "--" {
            out.positional
                .extend(args.by_ref().map(|a| a.to_string_lossy().into_owned()));
            break;
        }
        if !text.starts_with('-') || text.len() == 1 {
            out.positional.push(text.to_owned());
            continue;
        }
        let Some(long) = text.strip_prefix("--") else {
            if let Err(e) = shorthand_group(&text[1..], &mut out.help) {
                out.stopped = Some(e);
                break;
            }
            continue;
        };
        if long.starts_with(['-', '=']) {
            out.stopped = Some(format!("bad flag syntax: {text}"));
            break;
        }
        let (name, value) = match long.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (long, None),
        };
        if name == "help" {
            match value.map_or(Ok(true), help_value) {
                Ok(help) => out.help = help,
                Err(e) => {
                    out.stopped = Some(e);
                    break;
                }
            }
            continue;
        }
        let normalized = name.replace('_', "-");
        let Some(arg) = sub
            .get_arguments()
            .find(|arg| arg.get_long() == Some(normalized.as_str()))
        else {
            out.argv.push(a);
            continue;
        };
        let takes_next =
            value.is_none() && arg.get_action().takes_values() && !arg.is_require_equals_set();
        out.argv.push(match value {
            Some(v) => format!("--{normalized}={v}").into(),
            None => format!("--{normalized}").into(),
        });
        if takes_next && let Some(v) = args.next() {
            out.argv.push(v);
        }
    }
    out
}

/// cobra's help flag given the value `v`: `ParseBool`'s answer or pflag's error naming `-h,
/// --help`.
fn help_value(v: &str) -> Result<bool, String> {
    go_bool(v).map_err(|why| {
        format!(
            "invalid argument {} for \"-h, --help\" flag: {why}",
            kube_authn::jwt::go_quote(v)
        )
    })
}

/// One shorthand group (`-hh`, without its dash), as pflag's `parseShortArg` reads it: byte by
/// byte; `h` (help, a boolean) alone or as `h=<value>`, which ends the group; any other byte
/// is `unknown shorthand flag: '<byte>' in -<the rest>`; the rest is skipped when it starts
/// `test.`.
fn shorthand_group(mut rest: &str, help: &mut bool) -> Result<(), String> {
    while let Some(&c) = rest.as_bytes().first() {
        if rest.starts_with("test.") {
            break;
        }
        if c != b'h' {
            return Err(format!(
                "unknown shorthand flag: {} in -{rest}",
                go_quote_byte(c)
            ));
        }
        if rest.len() > 2 && rest.as_bytes()[1] == b'=' {
            *help = help_value(&rest[2..])?;
            break;
        }
        *help = true;
        rest = &rest[1..];
    }
    Ok(())
}

/// A byte as Go's `%q` prints it as a rune (`strconv.QuoteRune`), which is how pflag names a
/// shorthand: `'x'`, `'Ã'` for the byte 0xC3, `'\x01'`, `'\u0085'`.
fn go_quote_byte(b: u8) -> String {
    let body = match b {
        b'\'' => "\\'".to_owned(),
        b'\\' => "\\\\".to_owned(),
        0x07 => "\\a".to_owned(),
        0x08 => "\\b".to_owned(),
        0x0c => "\\f".to_owned(),
        b'\n' => "\\n".to_owned(),
        b'\r' => "\\r".to_owned(),
        b'\t' => "\\t".to_owned(),
        0x0b => "\\v".to_owned(),
        0x20..=0x7e => char::from(b).to_string(),
        0x00..=0x1f | 0x7f => format!("\\x{b:02x}"),
        // C1 controls, no-break space and soft hyphen are not `unicode.IsPrint`.
        0x80..=0xa0 | 0xad => format!("\\u{b:04x}"),
        _ => char::from(b).to_string(),
    };
    format!("'{body}'")
}

/// Why the command line was not taken.
#[derive(Debug)]
enum CliError {
    /// Help or version asked for (or no subcommand given): clap prints it.
    Clap(clap::Error),
    /// A command-line error, worded as pflag and cobra word kube-apiserver's; printed as
    /// `Error: <text>` with exit code 1.
    Text(String),
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Clap(e) => write!(f, "{e}"),
            CliError::Text(text) => f.write_str(text),
        }
    }
}

/// Parses the command line, recording whether some `--oidc-*` flag was given (clap's value
/// source: a default value is not "given", a typed one is, even when equal to the default);
/// kube-apiserver's `AreLegacyFlagsSet` asks pflag the same of each `--oidc-*` flag.
fn parse_cli<I, T>(argv: I) -> Result<Cli, CliError>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let command = Cli::command();
    let normalized = normalize_flag_names(argv.into_iter().map(Into::into).collect(), &command);
    let command_path = match &normalized.subcommand {
        Some(sub) => format!("{} {sub}", command.get_name()),
        None => command.get_name().to_owned(),
    };
    let fail = |e: clap::Error| match pflag_error(&e, &command_path) {
        Some(text) => CliError::Text(text),
        None => CliError::Clap(e),
    };
    // cobra's order: pflag's parse (clap's errors come in argument order, then the argument
    // pflag stopped at), help, the positional arguments, then the required flags.
    let program = normalized.argv.first().cloned();
    let parsed = match command.clone().try_get_matches_from(normalized.argv) {
        Err(e) if e.kind() != clap::error::ErrorKind::MissingRequiredArgument => {
            return Err(fail(e));
        }
        parsed => parsed,
    };
    if let Some(text) = normalized.stopped {
        return Err(CliError::Text(text));
    }
    if let (true, Some(sub)) = (normalized.help, &normalized.subcommand) {
        let help = [program.unwrap_or_default(), sub.into(), "--help".into()];
        return Err(match command.clone().try_get_matches_from(help) {
            Err(e) => CliError::Clap(e),
            Ok(_) => CliError::Text(format!("{command_path}: help unavailable")),
        });
    }
    // kube-apiserver's `Args`: any argument that is not empty.
    if normalized.positional.iter().any(|a| !a.is_empty()) {
        let got: Vec<String> = normalized
            .positional
            .iter()
            .map(|a| kube_authn::jwt::go_quote(a))
            .collect();
        return Err(CliError::Text(format!(
            "\"{command_path}\" does not take any arguments, got [{}]",
            got.join(" ")
        )));
    }
    let matches = parsed.map_err(fail)?;
    let mut cli = Cli::from_arg_matches(&matches).map_err(fail)?;
    if let (Command::Serve(args), Some(("serve", m)), Some(serve)) = (
        &mut cli.command,
        matches.subcommand(),
        command.find_subcommand("serve"),
    ) {
        args.oidc_flags_given = serve.get_arguments().any(|arg| {
            arg.get_long().is_some_and(|l| l.starts_with("oidc-"))
                && m.value_source(arg.get_id().as_str()) == Some(ValueSource::CommandLine)
        });
    }
    Ok(cli)
}

/// A command-line error as pflag words it (kube-apiserver's `unknown flag: --x`, `flag needs
/// an argument: --x`, `invalid argument "v" for "--x" flag: <cause>`, cobra's `"<command
/// path>" does not take any arguments, got ["a"]`); clap's own sentence for the errors pflag
/// has no counterpart of (a missing required flag, an unknown subcommand, a value that is
/// not UTF-8 in a flag that is not a file); `None` for help, version and a missing
/// subcommand, which clap prints.
fn pflag_error(e: &clap::Error, command_path: &str) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.as_str()),
        _ => None,
    };
    // clap names an argument `--name <VALUE>` or `--name[=<BOOL>]`: the flag is the first word.
    let flag = || {
        context(ContextKind::InvalidArg)
            .map(|a| a.split([' ', '=', '[']).next().unwrap_or(a).to_owned())
    };
    let pflag = match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => return None,
        ErrorKind::UnknownArgument => flag().map(|arg| {
            if arg.starts_with("--") {
                format!("unknown flag: {arg}")
            } else if let Some(short) = arg.strip_prefix('-').and_then(|a| a.chars().next()) {
                format!("unknown shorthand flag: '{short}' in {arg}")
            } else {
                // cobra's `Args` check, naming the command as cobra's `CommandPath()` does.
                format!(
                    "\"{command_path}\" does not take any arguments, got [{}]",
                    kube_authn::jwt::go_quote(&arg)
                )
            }
        }),
        ErrorKind::NoEquals => flag().map(|f| format!("flag needs an argument: {f}")),
        // A flag given last with no value (`--token-auth-file`).
        ErrorKind::InvalidValue if context(ContextKind::InvalidValue) == Some("") => {
            flag().map(|f| format!("flag needs an argument: {f}"))
        }
        // Every value parser here is ours (no clap-side lists of values), so a bad value is a
        // validation error whose source is the Go-worded cause.
        ErrorKind::ValueValidation => {
            let value = context(ContextKind::InvalidValue).unwrap_or_default();
            match (std::error::Error::source(e), flag()) {
                (Some(cause), Some(f)) => Some(format!(
                    "invalid argument {} for \"{f}\" flag: {cause}",
                    kube_authn::jwt::go_quote(value)
                )),
                _ => None,
            }
        }
        _ => None,
    };
    // Otherwise clap's sentence, without its `error: ` prefix, usage and tips, on one line.
    Some(pflag.unwrap_or_else(|| {
        let rendered = e.to_string();
        let first = rendered.split("\n\n").next().unwrap_or_default();
        let first = first.strip_prefix("error: ").unwrap_or(first);
        first.split_whitespace().collect::<Vec<_>>().join(" ")
    }))
}

/// Raises the soft open-file limit (`RLIMIT_NOFILE`) to the hard limit, as Go's runtime does
/// for every Go program at startup (`syscall/rlimit.go`), so kube-authn can hold as many
/// connections as kube-apiserver on the same host; the default connection cap
/// (`kube_authn::tls::default_max_connections`) is derived from the raised limit. A failure is
/// a warning: serving goes on with the limit as it was.
fn raise_open_file_limit() {
    #[cfg(unix)]
    let before = rlimit::getrlimit(rlimit::Resource::NOFILE).ok();
    #[cfg(not(unix))]
    let before: Option<(u64, u64)> = None;
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(soft) => tracing::debug!(
            before = ?before.map(|(soft, _)| soft),
            hard = ?before.map(|(_, hard)| hard),
            soft,
            "open-file limit raised to the hard limit"
        ),
        Err(e) => tracing::warn!(
            error = %e,
            soft = ?before.map(|(soft, _)| soft),
            "cannot raise the open-file limit"
        ),
    }
}

fn main() -> ExitCode {
    let cli = match parse_cli(std::env::args_os()) {
        Ok(cli) => cli,
        // kube-apiserver (cobra, component-base `cli.Run`): `Error: ` and exit code 1.
        Err(CliError::Text(text)) => {
            eprintln!("Error: {text}");
            return ExitCode::FAILURE;
        }
        // No subcommand: the help, on standard error, and exit code 1.
        Err(CliError::Clap(e))
            if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            let _ = e.print();
            return ExitCode::FAILURE;
        }
        Err(CliError::Clap(e)) => e.exit(),
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    raise_open_file_limit();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match cli.command {
        Command::Serve(args) => args
            .with_pflag_lists()
            .and_then(|args| runtime.block_on(serve::run(args))),
        Command::DevToken(args) => dev_token::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // As kube-apiserver reports a startup error (cobra: `Error: `, exit code 1).
            eprintln!("Error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<ServeArgs, String> {
        let mut argv = vec!["kube-authn", "serve"];
        argv.extend_from_slice(args);
        parse_cli(argv)
            .map_err(|e| e.to_string())
            .and_then(|c| match c.command {
                Command::Serve(a) => a.with_pflag_lists(),
                Command::DevToken(_) => unreachable!("parsed serve"),
            })
    }

    /// pflag v1.0.10's `IntVar` on each input, printed by Go (2026-11-28): the value, or the
    /// error after pflag's `invalid argument "…" for "--secure-port" flag: ` prefix.
    #[test]
    fn go_int_is_strconv_parse_int() {
        let syntax = |s: &str| Err(format!("strconv.ParseInt: parsing {s:?}: invalid syntax"));
        let cases: Vec<(&str, Result<i64, String>)> = vec![
            ("6443", Ok(6443)),
            ("06443", Ok(3363)),
            ("0x1A0B", Ok(6667)),
            ("6_443", Ok(6443)),
            ("0o17", Ok(15)),
            ("0b101", Ok(5)),
            ("+5", Ok(5)),
            ("-1", Ok(-1)),
            ("08", syntax("08")),
            ("0x", syntax("0x")),
            ("0_17", Ok(15)),
            ("6__443", syntax("6__443")),
            ("_6", syntax("_6")),
            ("6_", syntax("6_")),
            ("0x_1F", Ok(31)),
            (
                "99999999999999999999",
                Err(
                    r#"strconv.ParseInt: parsing "99999999999999999999": value out of range"#
                        .into(),
                ),
            ),
            ("", syntax("")),
            (" 1", syntax(" 1")),
            ("1e3", syntax("1e3")),
            ("0", Ok(0)),
            ("-0x10", Ok(-16)),
            ("0B11", Ok(3)),
            ("0X1f", Ok(31)),
            ("017_", syntax("017_")),
            // An overflow is reported before what follows it (Go's ParseUint returns at once).
            (
                "99999999999999999999x",
                Err(
                    r#"strconv.ParseInt: parsing "99999999999999999999x": value out of range"#
                        .into(),
                ),
            ),
            (
                "1__99999999999999999999",
                Err(
                    r#"strconv.ParseInt: parsing "1__99999999999999999999": value out of range"#
                        .into(),
                ),
            ),
            ("-9223372036854775808", Ok(i64::MIN)),
            ("9223372036854775807", Ok(i64::MAX)),
            (
                "9223372036854775808",
                Err(
                    r#"strconv.ParseInt: parsing "9223372036854775808": value out of range"#.into(),
                ),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(go_int(input), want, "{input:?}");
        }
        // Through the flags: kube-apiserver's checks and texts after the syntax.
        assert_eq!(parse(&["--secure-port=06443"]).unwrap().secure_port, 3363);
        assert_eq!(parse(&["--secure-port=0x1A0B"]).unwrap().secure_port, 6667);
        let e = parse(&["--secure-port=70000"]).unwrap_err();
        assert!(
            e.contains("--secure-port 70000 must be between 1 and 65535, inclusive. It cannot be turned off with 0"),
            "{e}"
        );
        assert_eq!(
            parse(&["--max-mutating-requests-inflight=0x10"])
                .unwrap()
                .max_mutating_requests_inflight,
            16
        );
        let e = parse(&["--max-mutating-requests-inflight=-1"]).unwrap_err();
        assert!(
            e.contains("--max-mutating-requests-inflight can not be negative value"),
            "{e}"
        );
        // kube-apiserver's flag-name normalization: `_` is `-` in a flag's name, not in values.
        let n = parse(&[
            "--anonymous_auth=false",
            "--token_auth_file",
            "/x_y.csv",
            "--oidc_groups_prefix",
            "--x_y",
        ])
        .unwrap();
        assert_eq!(n.anonymous_auth, Some(false));
        assert_eq!(n.token_auth_file, Some(PathBuf::from("/x_y.csv")));
        assert_eq!(n.oidc_groups_prefix, "--x_y");
        let e = parse(&["--no_such_flag"]).unwrap_err();
        assert!(e.contains("--no_such_flag"), "{e}");
        // pflag's IPVar.
        for (arg, want) in [
            ("--bind-address=", Ok("0.0.0.0")),
            ("--bind-address=10.0.0.1 --bind-address=", Ok("10.0.0.1")),
            (
                "--bind-address=10.0.0.1 --bind-address=10.0.0.2",
                Ok("10.0.0.2"),
            ),
            ("--bind-address=\t10.0.0.1\n", Ok("10.0.0.1")),
            ("--bind-address=::1", Ok("::1")),
            // Go's `net.ParseIP(…).String()`: an IPv4-mapped address is the IPv4 address, so
            // this one is the IPv4 wildcard (`--dev` replaces it like 0.0.0.0).
            ("--bind-address=::ffff:0.0.0.0", Ok("0.0.0.0")),
            ("--bind-address=::ffff:10.0.0.1", Ok("10.0.0.1")),
            ("--bind-address=::ffff:a00:1", Ok("10.0.0.1")),
            ("--bind-address=::a00:1", Ok("::a00:1")),
            ("--bind-address=x", Err(r#"failed to parse IP: "x""#)),
        ] {
            let args: Vec<&str> = arg.split(' ').collect();
            let got = parse(&args).map(|a| a.bind_address.to_string());
            match (got, want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{arg}"),
                (Err(e), Err(want)) => assert!(e.contains(want), "{arg}: {e}"),
                (got, want) => panic!("{arg}: got {got:?}, want {want:?}"),
            }
        }
        // A boolean flag, as pflag's BoolVar: bare, `=true`, `=false`, any ParseBool spelling.
        for (args, want) in [
            (&[][..], false),
            (&["--insecure-allow-any-token"][..], true),
            (&["--insecure-allow-any-token=false"][..], false),
            (&["--insecure-allow-any-token=t"][..], true),
        ] {
            assert_eq!(
                parse(args).unwrap().insecure_allow_any_token,
                want,
                "{args:?}"
            );
        }
    }

    /// A bad boolean is quoted as Go's `strconv.ParseBool` quotes it (`strconv.Quote`), not
    /// with Rust's `{:?}` (pflag v1.0.10's texts, printed by Go).
    #[test]
    fn go_bool_quotes_the_value_as_strconv_does() {
        let cases = [
            (
                "\x01",
                r#"strconv.ParseBool: parsing "\x01": invalid syntax"#,
            ),
            (
                "maybe",
                r#"strconv.ParseBool: parsing "maybe": invalid syntax"#,
            ),
            (
                "a\"b",
                r#"strconv.ParseBool: parsing "a\"b": invalid syntax"#,
            ),
            (
                "\u{378}",
                r#"strconv.ParseBool: parsing "\u0378": invalid syntax"#,
            ),
            ("é\t", r#"strconv.ParseBool: parsing "é\t": invalid syntax"#),
            ("", r#"strconv.ParseBool: parsing "": invalid syntax"#),
        ];
        for (input, want) in cases {
            assert_eq!(go_bool(input), Err(want.to_owned()), "{input:?}");
        }
        assert_eq!(
            parse(&["--anonymous-auth=\x01"]).unwrap_err(),
            r#"invalid argument "\x01" for "--anonymous-auth" flag: strconv.ParseBool: parsing "\x01": invalid syntax"#
        );
    }

    /// pflag stops at the first argument it cannot take, in argument order, before any of
    /// kube-apiserver's `Validate()` checks; those then come in `Validate()`'s order
    /// (`--max-mutating-requests-inflight` and `--request-timeout`, then `--secure-port`).
    /// Texts from pflag v1.0.10 and cobra v1.10.2, printed by Go.
    #[test]
    fn command_line_errors_come_in_pflags_order() {
        const CSV: &str = r#"invalid argument "a\"b" for "--api-audiences" flag: parse error on line 1, column 2: bare " in non-quoted-field"#;
        const HELP_X: &str = r#"invalid argument "x" for "-h, --help" flag: strconv.ParseBool: parsing "x": invalid syntax"#;
        const BOOL_X: &str = r#"invalid argument "x" for "--anonymous-auth" flag: strconv.ParseBool: parsing "x": invalid syntax"#;
        let cases: [(&str, &[&str], &str); 31] = [
            (
                "a list error before a range error",
                &["--secure-port=70000", "--api-audiences=a\"b"],
                CSV,
            ),
            (
                "a list error before a later unknown flag",
                &["--api-audiences=a\"b", "--nope"],
                CSV,
            ),
            (
                "an unknown flag before a later list error",
                &["--nope", "--api-audiences=a\"b"],
                "unknown flag: --nope",
            ),
            (
                "a list error before a later bad bool",
                &["--api-audiences=a\"b", "--anonymous-auth=x"],
                CSV,
            ),
            (
                "a bad bool before a later list error",
                &["--anonymous-auth=x", "--api-audiences=a\"b"],
                r#"invalid argument "x" for "--anonymous-auth" flag: strconv.ParseBool: parsing "x": invalid syntax"#,
            ),
            (
                "a list error given as the next argument",
                &["--token-review-groups", "a\"b", "--secure-port=x"],
                r#"invalid argument "a\"b" for "--token-review-groups" flag: parse error on line 1, column 2: bare " in non-quoted-field"#,
            ),
            (
                "a list error in a later occurrence",
                &[
                    "--oidc-signing-algs=RS256",
                    "--oidc-signing-algs=\"x",
                    "--nope",
                ],
                r#"invalid argument "\"x" for "--oidc-signing-algs" flag: parse error on line 1, column 3: extraneous or missing " in quoted-field"#,
            ),
            (
                "GenericServerRunOptions before SecureServing",
                &["--secure-port=70000", "--max-mutating-requests-inflight=-1"],
                "--max-mutating-requests-inflight can not be negative value",
            ),
            (
                "request timeout before the port",
                &["--secure-port=0", "--request-timeout=-1s"],
                "--request-timeout can not be negative value",
            ),
            (
                "max-mutating before the request timeout",
                &[
                    "--request-timeout=-1s",
                    "--max-mutating-requests-inflight=-1",
                ],
                "--max-mutating-requests-inflight can not be negative value",
            ),
            // `-h, --help` is one more bool flag, parsed in its place; help is acted on only
            // once every argument has parsed.
            (
                "an unknown flag before a bad help value",
                &["--unknown", "--help=x"],
                "unknown flag: --unknown",
            ),
            (
                "a bad bool before a bad help value",
                &["--anonymous-auth=x", "--help=y"],
                BOOL_X,
            ),
            (
                "a bad help value before a bad bool",
                &["--help=x", "--anonymous_auth=y"],
                HELP_X,
            ),
            (
                "an unknown flag after --help",
                &["--help", "--unknown"],
                "unknown flag: --unknown",
            ),
            (
                "an unknown flag after -h",
                &["-h", "--nope=1"],
                "unknown flag: --nope",
            ),
            ("a bad bool after -h", &["-h", "--anonymous-auth=x"], BOOL_X),
            (
                "a list error after --help",
                &["--help", "--api-audiences=a\"b"],
                CSV,
            ),
            (
                "a missing value after --help",
                &["--help", "--token-auth-file"],
                "flag needs an argument: --token-auth-file",
            ),
            (
                "an unknown flag after --help=false",
                &["--help=false", "--unknown"],
                "unknown flag: --unknown",
            ),
            (
                "an unknown shorthand after h in one argument",
                &["-hx"],
                "unknown shorthand flag: 'x' in -x",
            ),
            (
                "an unknown shorthand before h in one argument",
                &["-xh"],
                "unknown shorthand flag: 'x' in -xh",
            ),
            ("a bad help value after h", &["-hh=x"], HELP_X),
            (
                "a shorthand value that is not h's",
                &["-hfalse"],
                "unknown shorthand flag: 'f' in -false",
            ),
            (
                "an empty shorthand value",
                &["-h="],
                "unknown shorthand flag: '=' in -=",
            ),
            (
                "pflag names the first byte of a shorthand",
                &["-h\u{e9}"],
                "unknown shorthand flag: '\u{c3}' in -\u{e9}",
            ),
            (
                "a long name given with one dash",
                &["-anonymous-auth=false"],
                "unknown shorthand flag: 'a' in -anonymous-auth=false",
            ),
            (
                "an unknown flag after a positional argument",
                &["extra", "--unknown"],
                "unknown flag: --unknown",
            ),
            (
                "a bad help value after a positional argument",
                &["extra", "--help=x"],
                HELP_X,
            ),
            (
                "every positional argument, after the flags",
                &["a", "--help=false", "", "-", "--", "--help"],
                r#""kube-authn serve" does not take any arguments, got ["a" "" "-" "--help"]"#,
            ),
            (
                "a positional argument before a range error",
                &["--secure-port=70000", "a"],
                r#""kube-authn serve" does not take any arguments, got ["a"]"#,
            ),
            (
                "a bad help value is no help",
                &["--help", "--help=x"],
                HELP_X,
            ),
        ];
        for (name, args, want) in cases {
            let got = parse(args).map(|_| ()).unwrap_err();
            assert_eq!(got, want, "{name}");
        }
    }

    /// `--dev` and cobra's `--help`/`-h` are Go booleans: `=true`, `=false`, any `ParseBool`
    /// spelling, or pflag's error (`"-h, --help"` names the shorthand too, as pflag does).
    #[test]
    fn dev_and_help_are_go_bools() {
        let dev = |args: &[&str]| parse(args).map(|a| a.dev);
        assert_eq!(dev(&[]), Ok(false));
        assert_eq!(dev(&["--dev"]), Ok(true));
        assert_eq!(dev(&["--dev=true"]), Ok(true));
        assert_eq!(dev(&["--dev=false"]), Ok(false));
        assert_eq!(dev(&["--dev", "--dev=0"]), Ok(false));
        assert_eq!(
            dev(&["--dev=maybe"]),
            Err(r#"invalid argument "maybe" for "--dev" flag: strconv.ParseBool: parsing "maybe": invalid syntax"#.to_owned())
        );
        for args in [
            &["--help=false"][..],
            &["--help=0"],
            &["-h=false"],
            &["--help=F", "--anonymous-auth=false"],
        ] {
            assert!(parse(args).is_ok(), "{args:?}");
        }
        for args in [&["--help=x"][..], &["-h=x"]] {
            assert_eq!(
                parse(args).map(|_| ()).unwrap_err(),
                r#"invalid argument "x" for "-h, --help" flag: strconv.ParseBool: parsing "x": invalid syntax"#,
                "{args:?}"
            );
        }
        // cobra's help is asked once pflag has parsed every argument, the last value winning,
        // before cobra's positional-argument check and kube-apiserver's `Validate()`.
        for args in [
            &["--help=true", "--help=false"][..],
            &["-h", "-h=0"],
            &["--token-auth-file", "--help"],
            &["", "--help=false"],
            // pflag skips a shorthand group that starts `test.` (Go's test flags).
            &["-test.v"],
        ] {
            assert!(parse(args).is_ok(), "{args:?}");
        }
        for args in [
            &["--help"][..],
            &["--help=true"],
            &["-h=1"],
            &["-h"],
            &["-hh"],
            &["--help=false", "-h"],
            &["--help", "--secure-port=70000"],
            &["--secure-port=70000", "-h"],
            &["--help", "--max-mutating-requests-inflight=-1"],
            &["--help", "extra"],
            &["extra", "--help"],
            &["-", "--help"],
            &["--help", "--", "extra"],
            &["--help", "--anonymous-auth"],
            &["-htest.v"],
        ] {
            match parse_cli(["kube-authn", "serve"].iter().chain(args)) {
                Err(CliError::Clap(e)) => {
                    assert_eq!(e.kind(), clap::error::ErrorKind::DisplayHelp, "{args:?}")
                }
                other => panic!("{args:?}: {other:?}"),
            }
        }
    }

    /// pflag names an unknown shorthand by its first byte, as Go's `%q` prints that byte as a
    /// rune; texts printed by Go 1.26's `fmt.Sprintf("%q", rune(b))` for every byte (all 256
    /// compared once; these are one per branch).
    #[test]
    fn shorthand_is_named_as_go_quotes_a_rune() {
        let cases: [(u8, &str); 14] = [
            (0x00, r"'\x00'"),
            (0x07, r"'\a'"),
            (0x09, r"'\t'"),
            (0x0b, r"'\v'"),
            (0x1f, r"'\x1f'"),
            (b' ', "' '"),
            (b'\'', r"'\''"),
            (b'\\', r"'\\'"),
            (b'"', "'\"'"),
            (0x7f, r"'\x7f'"),
            (0x85, r"'\u0085'"),
            (0xa0, r"'\u00a0'"),
            (0xad, r"'\u00ad'"),
            (0xc3, "'\u{c3}'"),
        ];
        for (b, want) in cases {
            assert_eq!(go_quote_byte(b), want, "{b:#x}");
        }
    }

    /// cobra's order for a subcommand whose flags clap requires: pflag's parse (a bad help
    /// value), help, the positional arguments, then the required flags.
    #[test]
    fn required_flags_come_after_help_and_arguments() {
        let dev_token =
            |args: &[&str]| parse_cli(["kube-authn", "dev-token"].iter().chain(args)).map(|_| ());
        match dev_token(&["--help"]) {
            Err(CliError::Clap(e)) => assert_eq!(e.kind(), clap::error::ErrorKind::DisplayHelp),
            other => panic!("{other:?}"),
        }
        let cases: [(&[&str], &str); 3] = [
            (
                &["--help=x"],
                r#"invalid argument "x" for "-h, --help" flag: strconv.ParseBool: parsing "x": invalid syntax"#,
            ),
            (
                &["extra"],
                r#""kube-authn dev-token" does not take any arguments, got ["extra"]"#,
            ),
            (
                &["--key-file=k"],
                "the following required arguments were not provided: --name <STRING>",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(dev_token(args).unwrap_err().to_string(), want, "{args:?}");
        }
    }

    /// Go's flags take any bytes; a file flag's value that is not UTF-8 is a path like any
    /// other.
    #[cfg(unix)]
    #[test]
    fn file_flags_take_values_that_are_not_utf8() {
        use std::ffi::OsString;
        use std::os::unix::ffi::OsStringExt;
        let bytes = |b: &[u8]| OsString::from_vec(b.to_vec());
        let cli = parse_cli([
            bytes(b"kube-authn"),
            bytes(b"serve"),
            bytes(b"--token-auth-file=/tmp/\xff.csv"),
            bytes(b"--client-ca-file"),
            bytes(b"/tmp/\xfe.crt"),
            bytes(b"--service-account-key-file=/k\xff"),
            bytes(b"--cert-dir=/d\xff"),
        ])
        .map_err(|e| e.to_string())
        .unwrap();
        let Command::Serve(args) = cli.command else {
            panic!("parsed serve")
        };
        let args = args.with_pflag_lists().unwrap();
        assert_eq!(
            args.token_auth_file,
            Some(PathBuf::from(bytes(b"/tmp/\xff.csv")))
        );
        assert_eq!(
            args.client_ca_file,
            Some(PathBuf::from(bytes(b"/tmp/\xfe.crt")))
        );
        assert_eq!(
            args.service_account_key_files,
            [PathBuf::from(bytes(b"/k\xff"))]
        );
        assert_eq!(args.cert_dir, PathBuf::from(bytes(b"/d\xff")));
    }

    /// kube-apiserver 1.37's help sentences for the flags whose defaults and exclusions
    /// depend on other flags (`pkg/kubeapiserver/options/authentication.go`).
    #[test]
    fn help_keeps_kube_apiservers_sentences() {
        let command = Cli::command();
        let serve = command.find_subcommand("serve").unwrap();
        let help = |long: &str| {
            let arg = serve
                .get_arguments()
                .find(|a| a.get_long() == Some(long))
                .unwrap();
            let text = arg
                .get_long_help()
                .or(arg.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            text.split_whitespace().collect::<Vec<_>>().join(" ")
        };
        let cases = [
            (
                "api-audiences",
                "Identifiers of the API. The service account token authenticator will validate that tokens used against the API are bound to at least one of these audiences. If the --service-account-issuer flag is configured and this flag is not, this field defaults to a single element list containing the issuer URL.",
            ),
            (
                "authentication-config",
                "File with Authentication Configuration to configure the JWT Token authenticator or the anonymous authenticator. This flag is mutually exclusive with the --oidc-* flags if the file configures the JWT Token authenticator. This flag is mutually exclusive with --anonymous-auth if the file configures the Anonymous authenticator.",
            ),
            (
                "anonymous-auth",
                "Enables anonymous requests to the secure port of the API server. Requests that are not rejected by another authentication method are treated as anonymous requests. Anonymous requests have a username of system:anonymous, and a group name of system:unauthenticated.",
            ),
        ];
        for (flag, go) in cases {
            let got = help(flag);
            // clap drops the period that ends a one-paragraph help.
            assert!(got.starts_with(go.trim_end_matches('.')), "--{flag}: {got}");
        }
    }

    /// pflag's `Changed`: a typed `--oidc-*` flag counts as given even with its default value;
    /// defaults and other flags do not.
    #[test]
    fn oidc_flags_given_is_what_was_typed() {
        let cases: &[(&str, &[&str], bool)] = &[
            ("nothing", &[], false),
            (
                "other flags only",
                &["--anonymous-auth=false", "--api-audiences=a"],
                false,
            ),
            (
                "a default value typed",
                &["--oidc-username-claim=sub"],
                true,
            ),
            (
                "empty groups prefix typed",
                &["--oidc-groups-prefix="],
                true,
            ),
            (
                "signing algs typed",
                &["--oidc-signing-algs", "RS256"],
                true,
            ),
            ("required claim", &["--oidc-required-claim=a=b"], true),
            ("issuer", &["--oidc-issuer-url=https://i"], true),
        ];
        for (name, args, want) in cases {
            let got = parse(args).unwrap().oidc_flags_given;
            assert_eq!(got, *want, "{name}");
        }
    }

    #[test]
    fn flags_match_kube_apiserver_defaults_and_syntax() {
        let d = parse(&[]).unwrap();
        assert_eq!(d.anonymous_auth, None); // not set: true, unless the config file says

        assert_eq!(d.secure_port, 6443);
        assert_eq!(d.bind_address.to_string(), "0.0.0.0");
        assert_eq!(d.cert_dir, PathBuf::from("/var/run/kubernetes"));
        assert!(d.api_audiences.is_empty());
        assert_eq!(d.token_review_groups, ["system:masters"]);
        assert_eq!(d.request_timeout, std::time::Duration::from_secs(60));
        assert_eq!(d.max_mutating_requests_inflight, 200);
        let t = parse(&["--request-timeout=2s"]).unwrap();
        assert_eq!(t.request_timeout, std::time::Duration::from_secs(2));
        // pflag takes a negative duration; kube-apiserver's `Validate()` refuses it.
        assert_eq!(
            parse(&["--request-timeout=-1s"]).unwrap_err(),
            "--request-timeout can not be negative value"
        );
        assert_eq!(
            parse(&["--request-timeout=0s"]).unwrap().request_timeout,
            std::time::Duration::ZERO
        );
        let g = parse(&["--token-review-groups=a,b", "--token-review-groups", "c"]).unwrap();
        assert_eq!(g.token_review_groups, ["a", "b", "c"]);

        let cases: [(&[&str], bool); 6] = [
            (&["--anonymous-auth=false"], false),
            (&["--anonymous-auth=0"], false),
            (&["--anonymous-auth=F"], false),
            (&["--anonymous-auth"], true),
            (&["--anonymous-auth=True"], true),
            (&["--anonymous-auth=t"], true),
        ];
        for (args, want) in cases {
            assert_eq!(parse(args).unwrap().anonymous_auth, Some(want), "{args:?}");
        }
        assert!(parse(&["--anonymous-auth=maybe"]).is_err());

        let a = parse(&["--api-audiences=a,b", "--api-audiences", "c"]).unwrap();
        assert_eq!(a.api_audiences, ["a", "b", "c"]);
        // pflag: a single-value flag given twice keeps the last value; lists append.
        let twice = parse(&[
            "--anonymous-auth=true",
            "--anonymous-auth=false",
            "--token-auth-file=/a",
            "--token-auth-file=/b",
            "--api-audiences=x",
            "--api-audiences=y",
        ])
        .unwrap();
        assert_eq!(twice.anonymous_auth, Some(false));
        assert_eq!(twice.token_auth_file, Some(PathBuf::from("/b")));
        assert_eq!(twice.api_audiences, ["x", "y"]);
        let hyphen = parse(&[
            "--oidc-groups-prefix",
            "-grp:",
            "--oidc-username-prefix",
            "-",
        ])
        .unwrap();
        assert_eq!(
            (
                hyphen.oidc_groups_prefix.as_str(),
                hyphen.oidc_username_prefix.as_deref()
            ),
            ("-grp:", Some("-"))
        );
        // A file or URL flag with an empty value is not set (`len(value) > 0` in
        // kube-apiserver), and a later non-empty value still wins.
        let empty = parse(&[
            "--token-auth-file=",
            "--client-ca-file=",
            "--basic-auth-file=",
            "--experimental-keystone-url=",
            "--experimental-keystone-ca-file=",
            "--requestheader-client-ca-file=",
            "--service-account-lookup-kubeconfig=",
            "--oidc-ca-file=",
            "--authentication-config=",
            "--authentication-token-webhook-config-file=",
            "--tls-cert-file=",
            "--tls-private-key-file=",
        ])
        .unwrap();
        for (flag, value) in [
            ("token-auth-file", &empty.token_auth_file),
            ("client-ca-file", &empty.client_ca_file),
            ("basic-auth-file", &empty.basic_auth_file),
            (
                "experimental-keystone-ca-file",
                &empty.experimental_keystone_ca_file,
            ),
            (
                "requestheader-client-ca-file",
                &empty.requestheader_client_ca_file,
            ),
            (
                "service-account-lookup-kubeconfig",
                &empty.service_account_lookup_kubeconfig,
            ),
            ("oidc-ca-file", &empty.oidc_ca_file),
            ("authentication-config", &empty.authentication_config),
            (
                "authentication-token-webhook-config-file",
                &empty.authentication_token_webhook_config_file,
            ),
            ("tls-cert-file", &empty.tls_cert_file),
            ("tls-private-key-file", &empty.tls_private_key_file),
        ] {
            assert_eq!(value, &None, "--{flag}=");
        }
        assert_eq!(empty.experimental_keystone_url, None);
        let later = parse(&["--client-ca-file=", "--client-ca-file=/ca.crt"]).unwrap();
        assert_eq!(later.client_ca_file, Some(PathBuf::from("/ca.crt")));
        // pflag's StringSlice: an empty value is an empty list (kube-apiserver then uses the
        // default: RS256 for --oidc-signing-algs, the issuers for --api-audiences).
        let e = parse(&["--api-audiences=", "--oidc-signing-algs="]).unwrap();
        assert!(e.api_audiences.is_empty() && e.oidc_signing_algs.is_empty());
        // Each occurrence is one CSV record, as pflag reads it.
        /// Arguments, then the list or the error text.
        type ListCase<'a> = (&'a [&'a str], Result<&'a [&'a str], &'a str>);
        let lists: [ListCase<'_>; 23] = [
            (&["--api-audiences=,"], Ok(&["", ""])),
            // The first record only, as Go's `csv.Reader.Read` returns it (checked with pflag
            // v1.0.10).
            (&["--api-audiences=a\nb"], Ok(&["a"])),
            (&["--api-audiences=\na"], Ok(&["a"])),
            (&["--api-audiences=\"x\ny\",z"], Ok(&["x\ny", "z"])),
            (&["--api-audiences=a\r\nb"], Ok(&["a"])),
            (&["--api-audiences=a\rb"], Ok(&["a\rb"])),
            (&["--api-audiences=a,b\n\"c"], Ok(&["a", "b"])),
            (&["--api-audiences=a\n"], Ok(&["a"])),
            (&["--api-audiences=\"a\"\nb"], Ok(&["a"])),
            (&["--api-audiences=\"a\r\nb\",c"], Ok(&["a\nb", "c"])),
            (
                &["--api-audiences=\n\n"],
                Err("\"\\n\\n\" for \"--api-audiences\" flag: EOF"),
            ),
            (&["--api-audiences=a", "--api-audiences="], Ok(&["a"])),
            (
                &["--api-audiences=", "--api-audiences=a,b"],
                Ok(&["a", "b"]),
            ),
            (&["--api-audiences=a,"], Ok(&["a", ""])),
            (&[r#"--api-audiences="a,b",c"#], Ok(&["a,b", "c"])),
            (
                &[r#"--api-audiences="say ""hi""",x"#],
                Ok(&[r#"say "hi""#, "x"]),
            ),
            (
                &[r#"--api-audiences=a"b"#],
                Err(
                    r#"invalid argument "a\"b" for "--api-audiences" flag: parse error on line 1, column 2: bare " in non-quoted-field"#,
                ),
            ),
            // The rest: pflag v1.0.10's outputs, printed by Go (2026-11-28).
            (
                &[r#"--api-audiences="a"b"#],
                Err(
                    r#"invalid argument "\"a\"b" for "--api-audiences" flag: parse error on line 1, column 3: extraneous or missing " in quoted-field"#,
                ),
            ),
            (&["--api-audiences=a\r"], Ok(&["a"])),
            (&["--api-audiences=\"a\"\r"], Ok(&["a"])),
            (
                &["--api-audiences=\r"],
                Err(r#"invalid argument "\r" for "--api-audiences" flag: EOF"#),
            ),
            (
                &["--api-audiences=\na\"b"],
                Err(
                    r#"invalid argument "\na\"b" for "--api-audiences" flag: parse error on line 2, column 2: bare " in non-quoted-field"#,
                ),
            ),
            (
                &["--api-audiences=\"a\nb\"c"],
                Err(
                    r#"invalid argument "\"a\nb\"c" for "--api-audiences" flag: record on line 1; parse error on line 2, column 2: extraneous or missing " in quoted-field"#,
                ),
            ),
        ];
        for (args, want) in lists {
            match (parse(args), want) {
                (Ok(got), Ok(want)) => assert_eq!(got.api_audiences, want, "{args:?}"),
                (Err(e), Err(text)) if text.starts_with("invalid argument") => {
                    assert_eq!(e, text, "{args:?}")
                }
                (Err(e), Err(text)) => assert!(
                    e.contains(text) && e.contains(r#"for "--api-audiences" flag"#),
                    "{args:?}: {e}"
                ),
                (got, want) => panic!("{args:?}: got {got:?}, want {want:?}"),
            }
        }

        // Request-header flags: kube-apiserver's defaults are empty (kubeadm sets X-Remote-*).
        assert_eq!(d.requestheader_client_ca_file, None);
        assert!(d.requestheader_allowed_names.is_empty());
        assert!(d.requestheader_username_headers.is_empty());
        assert!(d.requestheader_uid_headers.is_empty());
        assert!(d.requestheader_group_headers.is_empty());
        assert!(d.requestheader_extra_headers_prefix.is_empty());
        let r = parse(&[
            "--requestheader-username-headers=X-Remote-User,X-Proxy-User",
            "--requestheader-group-headers",
            "X-Remote-Group",
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-allowed-names=aggregator",
        ])
        .unwrap();
        assert_eq!(
            r.requestheader_username_headers,
            ["X-Remote-User", "X-Proxy-User"]
        );
        assert_eq!(r.requestheader_group_headers, ["X-Remote-Group"]);
        assert_eq!(
            r.requestheader_allowed_names,
            ["front-proxy-client", "aggregator"]
        );

        // Service-account flags: repeatable, never split on commas; lookup defaults to true.
        assert!(d.service_account_lookup);
        assert!(d.service_account_key_files.is_empty());
        let sa = parse(&[
            "--service-account-key-file=a.pem",
            "--service-account-key-file",
            "b,c.pem",
            "--service-account-issuer=https://a",
            "--service-account-issuer=https://b,c",
            "--service-account-lookup=false",
        ])
        .unwrap();
        assert_eq!(
            sa.service_account_key_files,
            [PathBuf::from("a.pem"), PathBuf::from("b,c.pem")]
        );
        assert_eq!(sa.service_account_issuers, ["https://a", "https://b,c"]);
        assert!(!sa.service_account_lookup);

        // Webhook flags: kube-apiserver's defaults, Go duration syntax.
        assert_eq!(d.authentication_token_webhook_config_file, None);
        assert_eq!(d.authentication_token_webhook_version, "v1beta1");
        assert_eq!(
            d.authentication_token_webhook_cache_ttl,
            std::time::Duration::from_secs(120)
        );
        let ttl = |v: &str| {
            parse(&[&format!("--authentication-token-webhook-cache-ttl={v}")])
                .map(|a| a.authentication_token_webhook_cache_ttl)
        };
        assert_eq!(ttl("10s").unwrap(), std::time::Duration::from_secs(10));
        assert_eq!(ttl("1h30m").unwrap(), std::time::Duration::from_secs(5400));
        assert_eq!(ttl("0").unwrap(), std::time::Duration::ZERO);
        let err = ttl("10").unwrap_err();
        assert!(err.contains("time: missing unit in duration"), "{err}");
    }

    /// `--oidc-required-claim` is kube-apiserver's `NewMapStringStringNoSplit`: one pair per
    /// occurrence (commas are part of the value), key and value trimmed, the last duplicate
    /// wins, and a value without `=` is refused.
    #[test]
    fn oidc_required_claim_is_one_trimmed_pair_per_flag_last_wins() {
        type Want = Result<&'static [(&'static str, &'static str)], &'static str>;
        let cases: [(&str, &[&str], Want); 9] = [
            ("none", &[], Ok(&[])),
            ("one", &["--oidc-required-claim=hd=x"], Ok(&[("hd", "x")])),
            (
                "comma stays in the value",
                &["--oidc-required-claim=hd=a,b"],
                Ok(&[("hd", "a,b")]),
            ),
            (
                "key and value trimmed",
                &["--oidc-required-claim", "hd = x "],
                Ok(&[("hd", "x")]),
            ),
            (
                "second = is part of the value",
                &["--oidc-required-claim=a=b=c"],
                Ok(&[("a", "b=c")]),
            ),
            (
                "last duplicate wins",
                &["--oidc-required-claim=hd=a", "--oidc-required-claim=hd=b"],
                Ok(&[("hd", "b")]),
            ),
            (
                "distinct keys kept in order",
                &[
                    "--oidc-required-claim=hd=a",
                    "--oidc-required-claim=org=o",
                    "--oidc-required-claim= hd=c",
                ],
                Ok(&[("hd", "c"), ("org", "o")]),
            ),
            (
                "no =",
                &["--oidc-required-claim=hd"],
                Err("malformed pair, expect string=string"),
            ),
            (
                "empty",
                &["--oidc-required-claim="],
                Err("malformed pair, expect string=string"),
            ),
        ];
        for (name, args, want) in cases {
            let got = parse(args).map(|a| a.oidc_required_claims());
            match (got, want) {
                (Ok(got), Ok(want)) => {
                    let want: Vec<(String, String)> = want
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect();
                    assert_eq!(got, want, "{name}");
                }
                (Err(e), Err(want)) => assert!(e.contains(want), "{name}: {e}"),
                (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
            }
        }
    }
}
