//! `--authentication-config` decoding and validation, and the `--oidc-*` flags' validation,
//! compared with kube-apiserver 1.37. Every expected text was printed by Kubernetes' own code
//! (k8s.io/apiserver v0.37.2 under Go 1.26): the file decoded with
//! `runtime.Decode(serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDecoder(), data)`
//! (kube-apiserver's `loadAuthenticationConfigFromData`, its empty-file check included), then
//! `validation.ValidateAuthenticationConfiguration`; the flags as `ToAuthenticationConfig` maps
//! them (`cliflag.NewMapStringStringNoSplit` for `--oidc-required-claim`, `os.ReadFile` for
//! `--oidc-ca-file`), without kube-apiserver's `invalid authentication configuration: ` wrapper.

#[cfg(feature = "remote")]
mod log_support;

use kube_authn::token::oidc::config::{
    MAX_AUTHENTICATION_CONFIG_BYTES, OidcFlags, load_authentication_configuration,
    read_authentication_configuration,
};

/// (case, file, the error kube-apiserver reports or `None` when it accepts the file).
///
/// Covered: YAML 1.1 plain scalars (`yes`, `on`, `n`, `012`, `1_000`, `.inf` …) against quoted
/// ones and explicit `!!str`; `null` as "unset" for every kind of field; a type error for each
/// field (Go's owner, path and type names; the first one in the converted document's sorted
/// order); unknown, miscased and repeated fields (go-yaml's lines; sorted, and in JSON as
/// written); merge keys; only the first YAML document; `apiVersion`/`kind` as `meta.Interpret`
/// reads them; the validation texts (`audiences: ["", ""]`, JSON-printed values).
const CASES: &[(&str, &str, Option<&str>)] = &[
    (
        "ok",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        None,
    ),
    (
        "requiredValue true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: true}]\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "requiredValue 1",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: 1}]\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "requiredValue yes",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: yes}]\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "requiredValue 'yes'",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: 'yes'}]\n",
        None,
    ),
    (
        "requiredValue 1.5",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: 1.5}]\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "requiredValue 0x1f",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: 0x1f}]\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "requiredValue 012",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: 012}]\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "requiredValue 1_000",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: 1_000}]\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "requiredValue 1:20",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: '1:20'}]\n",
        None,
    ),
    (
        "requiredValue plain 1:20",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: 1:20\n",
        None,
    ),
    (
        "requiredValue .inf",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: .inf}]\n",
        Some("json: unsupported value: +Inf"),
    ),
    (
        "requiredValue 2001-12-14",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: 2001-12-14}]\n",
        None,
    ),
    (
        "requiredValue ~",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: ~}]\n",
        None,
    ),
    (
        "requiredValue []",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: []}]\n",
        Some(
            "json: cannot unmarshal array into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "requiredValue {}",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: {}}]\n",
        Some(
            "json: cannot unmarshal object into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "audiences [123]",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [123]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal number into Go struct field Issuer.jwt.issuer.audiences of type string",
        ),
    ),
    (
        "audiences [yes]",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [yes]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field Issuer.jwt.issuer.audiences of type string",
        ),
    ),
    (
        "audiences [null]",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [null]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some("jwt[0].issuer.audiences[0]: Required value"),
    ),
    (
        "audiences [a, null]",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a, null], audienceMatchPolicy: MatchAny}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some("jwt[0].issuer.audiences[1]: Required value"),
    ),
    (
        "audiences null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: null}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required",
        ),
    ),
    (
        "audiences a",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: a}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal string into Go struct field Issuer.jwt.issuer.audiences of type []string",
        ),
    ),
    (
        "audiences ['', '']",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: ['', ''], audienceMatchPolicy: MatchAny}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "[jwt[0].issuer.audiences[0]: Required value, jwt[0].issuer.audiences[1]: Required value, jwt[0].issuer.audiences[1]: Duplicate value: \"\"]",
        ),
    ),
    (
        "username claim null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: null, prefix: ''}}\n",
        Some("jwt[0].claimMappings.username: Required value: claim or expression is required"),
    ),
    (
        "username prefix null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: null}}\n",
        Some(
            "jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing",
        ),
    ),
    (
        "username null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: null}\n",
        Some("jwt[0].claimMappings.username: Required value: claim or expression is required"),
    ),
    (
        "claimMappings null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: null\n",
        Some("jwt[0].claimMappings.username: Required value: claim or expression is required"),
    ),
    (
        "groups null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}, groups: null}\n",
        None,
    ),
    (
        "uid null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}, uid: null}\n",
        None,
    ),
    (
        "extra null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}, extra: null}\n",
        None,
    ),
    (
        "policy null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], audienceMatchPolicy: null}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        None,
    ),
    (
        "policy a<b",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], audienceMatchPolicy: a<b}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "jwt[0].issuer.audienceMatchPolicy: Invalid value: \"a\\u003cb\": audienceMatchPolicy must be empty or MatchAny for single audience",
        ),
    ),
    (
        "message null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: x, message: null}]\n",
        None,
    ),
    (
        "expression null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: x, expression: null}]\n",
        None,
    ),
    (
        "rules null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: null\n",
        None,
    ),
    (
        "rule null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [null]\n",
        Some("jwt[0].claimValidationRules[0]: Required value: claim or expression is required"),
    ),
    (
        "userValidationRules null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  userValidationRules: null\n",
        None,
    ),
    (
        "jwt null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: null\n",
        None,
    ),
    (
        "jwt [null]",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: [null]\n",
        Some(
            "[jwt[0].issuer.url: Required value, jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required, jwt[0].claimMappings.username: Required value: claim or expression is required]",
        ),
    ),
    (
        "issuer null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: null\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "[jwt[0].issuer.url: Required value, jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required]",
        ),
    ),
    (
        "url null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: null, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some("jwt[0].issuer.url: Required value"),
    ),
    (
        "discoveryURL null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], discoveryURL: null}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        None,
    ),
    (
        "ca null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], certificateAuthority: null}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        None,
    ),
    (
        "egress null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], egressSelectorType: null}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        None,
    ),
    (
        "egress empty",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], egressSelectorType: ''}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        None,
    ),
    (
        "anonymous enabled yes",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: yes}\n",
        None,
    ),
    (
        "anonymous enabled on",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: on}\n",
        None,
    ),
    (
        "anonymous enabled Y",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: Y}\n",
        None,
    ),
    (
        "anonymous enabled 'true'",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: 'true'}\n",
        Some(
            "json: cannot unmarshal string into Go struct field AnonymousAuthConfig.anonymous.enabled of type bool",
        ),
    ),
    (
        "anonymous enabled 1",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: 1}\n",
        Some(
            "json: cannot unmarshal number into Go struct field AnonymousAuthConfig.anonymous.enabled of type bool",
        ),
    ),
    (
        "anonymous enabled null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: null}\n",
        None,
    ),
    (
        "anonymous null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: null\n",
        None,
    ),
    (
        "anonymous {}",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {}\n",
        None,
    ),
    (
        "anonymous conditions null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: true, conditions: null}\n",
        None,
    ),
    (
        "anonymous conditions [null]",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: true, conditions: [null]}\n",
        None,
    ),
    (
        "anonymous disabled conditions",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: false, conditions: [{path: /livez}, {path: 'a\"b'}]}\n",
        Some(
            "anonymous.conditions: Invalid value: [{\"Path\":\"/livez\"},{\"Path\":\"a\\\"b\"}]: enabled should be set to true when conditions are defined",
        ),
    ),
    (
        "anonymous conditions path 1",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: true, conditions: [{path: 1}]}\n",
        Some(
            "json: cannot unmarshal number into Go struct field AnonymousAuthCondition.anonymous.conditions.path of type string",
        ),
    ),
    (
        "second doc",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n---\nbogus: 1\n",
        None,
    ),
    (
        "second doc invalid yaml",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n---\n[: :\n",
        None,
    ),
    (
        "leading ---",
        "---\napiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n",
        None,
    ),
    (
        "leading --- empty",
        "---\n---\napiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n",
        Some(
            "Object 'Kind' is missing in '---\n---\napiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n'",
        ),
    ),
    (
        "unknown field",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], bogus: 1}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some("strict decoding error: unknown field \"jwt[0].issuer.bogus\""),
    ),
    (
        "case field",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, Audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some("strict decoding error: unknown field \"jwt[0].issuer.Audiences\""),
    ),
    (
        "dup key",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, url: https://j, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "strict decoding error: yaml: unmarshal errors:\n  line 4: key \"url\" already set in map",
        ),
    ),
    (
        "kind null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: null\n",
        Some("Object 'Kind' is missing in 'apiVersion: apiserver.config.k8s.io/v1\nkind: null\n'"),
    ),
    ("empty", "", Some("empty config data")),
    (
        "only comment",
        "# x\n",
        Some("Object 'Kind' is missing in '# x\n'"),
    ),
    (
        "not a mapping",
        "[1]\n",
        Some(
            "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }",
        ),
    ),
    (
        "key yes",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nyes: 1\n",
        Some("strict decoding error: unknown field \"true\""),
    ),
    (
        "apiVersion v1beta1",
        "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\n",
        None,
    ),
    (
        "json",
        "{\"apiVersion\": \"apiserver.config.k8s.io/v1\", \"kind\": \"AuthenticationConfiguration\", \"jwt\": null}",
        None,
    ),
    (
        "anchor",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: &u https://i, audiences: [*u]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        None,
    ),
    (
        "tag str",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: !!str true}]\n",
        None,
    ),
    (
        "tag int",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: c, requiredValue: !!int 1}]\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "block true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: |-\n      true\n",
        None,
    ),
    (
        "top jwt true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: true\n",
        Some(
            "json: cannot unmarshal bool into Go struct field AuthenticationConfiguration.jwt of type []v1.JWTAuthenticator",
        ),
    ),
    (
        "top anonymous true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: true\n",
        Some(
            "json: cannot unmarshal bool into Go struct field AuthenticationConfiguration.anonymous of type v1.AnonymousAuthConfig",
        ),
    ),
    (
        "jwt[0] true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: [true]\n",
        Some(
            "json: cannot unmarshal bool into Go struct field AuthenticationConfiguration.jwt of type v1.JWTAuthenticator",
        ),
    ),
    (
        "issuer true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: true\n",
        Some(
            "json: cannot unmarshal bool into Go struct field JWTAuthenticator.jwt.issuer of type v1.Issuer",
        ),
    ),
    (
        "issuer.url true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: true}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field Issuer.jwt.issuer.url of type string",
        ),
    ),
    (
        "issuer.discoveryURL true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], discoveryURL: true}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field Issuer.jwt.issuer.discoveryURL of type string",
        ),
    ),
    (
        "issuer.certificateAuthority true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], certificateAuthority: true}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field Issuer.jwt.issuer.certificateAuthority of type string",
        ),
    ),
    (
        "issuer.audiences true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {audiences: true}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field Issuer.jwt.issuer.audiences of type []string",
        ),
    ),
    (
        "issuer.audienceMatchPolicy true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], audienceMatchPolicy: true}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field Issuer.jwt.issuer.audienceMatchPolicy of type v1.AudienceMatchPolicyType",
        ),
    ),
    (
        "issuer.egressSelectorType true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], egressSelectorType: true}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field Issuer.jwt.issuer.egressSelectorType of type v1.EgressSelectorType",
        ),
    ),
    (
        "audiences[0] true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [true]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field Issuer.jwt.issuer.audiences of type string",
        ),
    ),
    (
        "rules true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: true\n",
        Some(
            "json: cannot unmarshal bool into Go struct field JWTAuthenticator.jwt.claimValidationRules of type []v1.ClaimValidationRule",
        ),
    ),
    (
        "rules[0] true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [true]\n",
        Some(
            "json: cannot unmarshal bool into Go struct field JWTAuthenticator.jwt.claimValidationRules of type v1.ClaimValidationRule",
        ),
    ),
    (
        "rule.claim true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: true}]\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ClaimValidationRule.jwt.claimValidationRules.claim of type string",
        ),
    ),
    (
        "rule.requiredValue true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{requiredValue: true}]\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rule.expression true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{expression: true}]\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ClaimValidationRule.jwt.claimValidationRules.expression of type string",
        ),
    ),
    (
        "rule.message true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{message: true}]\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ClaimValidationRule.jwt.claimValidationRules.message of type string",
        ),
    ),
    (
        "claimMappings true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: true\n",
        Some(
            "json: cannot unmarshal bool into Go struct field JWTAuthenticator.jwt.claimMappings of type v1.ClaimMappings",
        ),
    ),
    (
        "mapping username true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: true}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ClaimMappings.jwt.claimMappings.username of type v1.PrefixedClaimOrExpression",
        ),
    ),
    (
        "mapping groups true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {groups: true}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ClaimMappings.jwt.claimMappings.groups of type v1.PrefixedClaimOrExpression",
        ),
    ),
    (
        "mapping uid true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {uid: true}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ClaimMappings.jwt.claimMappings.uid of type v1.ClaimOrExpression",
        ),
    ),
    (
        "mapping extra true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {extra: true}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ClaimMappings.jwt.claimMappings.extra of type []v1.ExtraMapping",
        ),
    ),
    (
        "username.claim true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: true}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field PrefixedClaimOrExpression.jwt.claimMappings.username.claim of type string",
        ),
    ),
    (
        "groups.claim true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {groups: {claim: true}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field PrefixedClaimOrExpression.jwt.claimMappings.groups.claim of type string",
        ),
    ),
    (
        "username.prefix true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {prefix: true}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field PrefixedClaimOrExpression.jwt.claimMappings.username.prefix of type string",
        ),
    ),
    (
        "groups.prefix true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {groups: {prefix: true}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field PrefixedClaimOrExpression.jwt.claimMappings.groups.prefix of type string",
        ),
    ),
    (
        "username.expression true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {expression: true}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field PrefixedClaimOrExpression.jwt.claimMappings.username.expression of type string",
        ),
    ),
    (
        "groups.expression true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {groups: {expression: true}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field PrefixedClaimOrExpression.jwt.claimMappings.groups.expression of type string",
        ),
    ),
    (
        "uid.claim true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {uid: {claim: true}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ClaimOrExpression.jwt.claimMappings.uid.claim of type string",
        ),
    ),
    (
        "uid.expression true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {uid: {expression: true}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ClaimOrExpression.jwt.claimMappings.uid.expression of type string",
        ),
    ),
    (
        "extra[0] true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {extra: [true]}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ClaimMappings.jwt.claimMappings.extra of type v1.ExtraMapping",
        ),
    ),
    (
        "extra.key true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {extra: [{key: true}]}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ExtraMapping.jwt.claimMappings.extra.key of type string",
        ),
    ),
    (
        "extra.valueExpression true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {extra: [{valueExpression: true}]}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ExtraMapping.jwt.claimMappings.extra.valueExpression of type string",
        ),
    ),
    (
        "uvr true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  userValidationRules: true\n",
        Some(
            "json: cannot unmarshal bool into Go struct field JWTAuthenticator.jwt.userValidationRules of type []v1.UserValidationRule",
        ),
    ),
    (
        "uvr[0] true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  userValidationRules: [true]\n",
        Some(
            "json: cannot unmarshal bool into Go struct field JWTAuthenticator.jwt.userValidationRules of type v1.UserValidationRule",
        ),
    ),
    (
        "uvr.expression true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  userValidationRules: [{expression: true}]\n",
        Some(
            "json: cannot unmarshal bool into Go struct field UserValidationRule.jwt.userValidationRules.expression of type string",
        ),
    ),
    (
        "uvr.message true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  userValidationRules: [{message: true}]\n",
        Some(
            "json: cannot unmarshal bool into Go struct field UserValidationRule.jwt.userValidationRules.message of type string",
        ),
    ),
    (
        "anonymous.enabled true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: true}\n",
        None,
    ),
    (
        "anonymous.conditions true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {conditions: true}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field AnonymousAuthConfig.anonymous.conditions of type []v1.AnonymousAuthCondition",
        ),
    ),
    (
        "anonymous.conditions[0] true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {conditions: [true]}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field AnonymousAuthConfig.anonymous.conditions of type v1.AnonymousAuthCondition",
        ),
    ),
    (
        "anonymous.conditions.path true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {conditions: [{path: true}]}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field AnonymousAuthCondition.anonymous.conditions.path of type string",
        ),
    ),
    (
        "kind true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: true\n",
        Some(
            "couldn't get version/kind; json parse error: json: cannot unmarshal bool into Go struct field .kind of type string",
        ),
    ),
    (
        "apiVersion true",
        "apiVersion: true\nkind: AuthenticationConfiguration\n",
        Some(
            "couldn't get version/kind; json parse error: json: cannot unmarshal bool into Go struct field .apiVersion of type string",
        ),
    ),
    (
        "v1beta1 policy true",
        "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], audienceMatchPolicy: true}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field Issuer.jwt.issuer.audienceMatchPolicy of type v1beta1.AudienceMatchPolicyType",
        ),
    ),
    (
        "v1alpha1 policy true",
        "apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], audienceMatchPolicy: true}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field Issuer.jwt.issuer.audienceMatchPolicy of type v1alpha1.AudienceMatchPolicyType",
        ),
    ),
    (
        "top jwt 1",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: 1\n",
        Some(
            "json: cannot unmarshal number into Go struct field AuthenticationConfiguration.jwt of type []v1.JWTAuthenticator",
        ),
    ),
    (
        "top anonymous 1",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: 1\n",
        Some(
            "json: cannot unmarshal number into Go struct field AuthenticationConfiguration.anonymous of type v1.AnonymousAuthConfig",
        ),
    ),
    (
        "jwt[0] 1",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: [1]\n",
        Some(
            "json: cannot unmarshal number into Go struct field AuthenticationConfiguration.jwt of type v1.JWTAuthenticator",
        ),
    ),
    (
        "issuer.url 1",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: 1}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal number into Go struct field Issuer.jwt.issuer.url of type string",
        ),
    ),
    (
        "audiences[0] 1",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [1]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal number into Go struct field Issuer.jwt.issuer.audiences of type string",
        ),
    ),
    (
        "rules[0] 1",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [1]\n",
        Some(
            "json: cannot unmarshal number into Go struct field JWTAuthenticator.jwt.claimValidationRules of type v1.ClaimValidationRule",
        ),
    ),
    (
        "username.prefix 1",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {prefix: 1}}\n",
        Some(
            "json: cannot unmarshal number into Go struct field PrefixedClaimOrExpression.jwt.claimMappings.username.prefix of type string",
        ),
    ),
    (
        "anonymous.enabled 1",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: 1}\n",
        Some(
            "json: cannot unmarshal number into Go struct field AnonymousAuthConfig.anonymous.enabled of type bool",
        ),
    ),
    (
        "kind 1",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: 1\n",
        Some(
            "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string",
        ),
    ),
    (
        "apiVersion 1",
        "apiVersion: 1\nkind: AuthenticationConfiguration\n",
        Some(
            "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string",
        ),
    ),
    (
        "top jwt []",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: []\n",
        None,
    ),
    (
        "top anonymous []",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: []\n",
        Some(
            "json: cannot unmarshal array into Go struct field AuthenticationConfiguration.anonymous of type v1.AnonymousAuthConfig",
        ),
    ),
    (
        "jwt[0] []",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: [[]]\n",
        Some(
            "json: cannot unmarshal array into Go struct field AuthenticationConfiguration.jwt of type v1.JWTAuthenticator",
        ),
    ),
    (
        "issuer.url []",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: []}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal array into Go struct field Issuer.jwt.issuer.url of type string",
        ),
    ),
    (
        "issuer.audiences []",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {audiences: []}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "[jwt[0].issuer.url: Required value, jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required]",
        ),
    ),
    (
        "audiences[0] []",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [[]]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal array into Go struct field Issuer.jwt.issuer.audiences of type string",
        ),
    ),
    (
        "rules []",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: []\n",
        None,
    ),
    (
        "rules[0] []",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [[]]\n",
        Some(
            "json: cannot unmarshal array into Go struct field JWTAuthenticator.jwt.claimValidationRules of type v1.ClaimValidationRule",
        ),
    ),
    (
        "mapping extra []",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {extra: []}\n",
        Some("jwt[0].claimMappings.username: Required value: claim or expression is required"),
    ),
    (
        "username.prefix []",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {prefix: []}}\n",
        Some(
            "json: cannot unmarshal array into Go struct field PrefixedClaimOrExpression.jwt.claimMappings.username.prefix of type string",
        ),
    ),
    (
        "uvr []",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  userValidationRules: []\n",
        Some("jwt[0].claimMappings.username: Required value: claim or expression is required"),
    ),
    (
        "anonymous.enabled []",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: []}\n",
        Some(
            "json: cannot unmarshal array into Go struct field AnonymousAuthConfig.anonymous.enabled of type bool",
        ),
    ),
    (
        "anonymous.conditions []",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {conditions: []}\n",
        None,
    ),
    (
        "kind []",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: []\n",
        Some(
            "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go struct field .kind of type string",
        ),
    ),
    (
        "apiVersion []",
        "apiVersion: []\nkind: AuthenticationConfiguration\n",
        Some(
            "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go struct field .apiVersion of type string",
        ),
    ),
    (
        "top jwt {}",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: {}\n",
        Some(
            "json: cannot unmarshal object into Go struct field AuthenticationConfiguration.jwt of type []v1.JWTAuthenticator",
        ),
    ),
    (
        "top anonymous {}",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {}\n",
        None,
    ),
    (
        "jwt[0] {}",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: [{}]\n",
        Some(
            "[jwt[0].issuer.url: Required value, jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required, jwt[0].claimMappings.username: Required value: claim or expression is required]",
        ),
    ),
    (
        "issuer {}",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {}\n",
        Some(
            "[jwt[0].issuer.url: Required value, jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required, jwt[0].claimMappings.username: Required value: claim or expression is required]",
        ),
    ),
    (
        "issuer.url {}",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: {}}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal object into Go struct field Issuer.jwt.issuer.url of type string",
        ),
    ),
    (
        "audiences[0] {}",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [{}]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal object into Go struct field Issuer.jwt.issuer.audiences of type string",
        ),
    ),
    (
        "rules[0] {}",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{}]\n",
        Some("jwt[0].claimValidationRules[0]: Required value: claim or expression is required"),
    ),
    (
        "claimMappings {}",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {}\n",
        Some("jwt[0].claimMappings.username: Required value: claim or expression is required"),
    ),
    (
        "mapping username {}",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {}}\n",
        Some("jwt[0].claimMappings.username: Required value: claim or expression is required"),
    ),
    (
        "mapping groups {}",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {groups: {}}\n",
        Some("jwt[0].claimMappings.username: Required value: claim or expression is required"),
    ),
    (
        "mapping uid {}",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {uid: {}}\n",
        Some("jwt[0].claimMappings.username: Required value: claim or expression is required"),
    ),
    (
        "username.prefix {}",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {prefix: {}}}\n",
        Some(
            "json: cannot unmarshal object into Go struct field PrefixedClaimOrExpression.jwt.claimMappings.username.prefix of type string",
        ),
    ),
    (
        "anonymous.enabled {}",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: {}}\n",
        Some(
            "json: cannot unmarshal object into Go struct field AnonymousAuthConfig.anonymous.enabled of type bool",
        ),
    ),
    (
        "anonymous.conditions[0] {}",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {conditions: [{}]}\n",
        Some(
            "anonymous.conditions: Invalid value: [{\"Path\":\"\"}]: enabled should be set to true when conditions are defined",
        ),
    ),
    (
        "kind {}",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: {}\n",
        Some(
            "couldn't get version/kind; json parse error: json: cannot unmarshal object into Go struct field .kind of type string",
        ),
    ),
    (
        "apiVersion {}",
        "apiVersion: {}\nkind: AuthenticationConfiguration\n",
        Some(
            "couldn't get version/kind; json parse error: json: cannot unmarshal object into Go struct field .apiVersion of type string",
        ),
    ),
    (
        "top jwt x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: x\n",
        Some(
            "json: cannot unmarshal string into Go struct field AuthenticationConfiguration.jwt of type []v1.JWTAuthenticator",
        ),
    ),
    (
        "top anonymous x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: x\n",
        Some(
            "json: cannot unmarshal string into Go struct field AuthenticationConfiguration.anonymous of type v1.AnonymousAuthConfig",
        ),
    ),
    (
        "jwt[0] x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: [x]\n",
        Some(
            "json: cannot unmarshal string into Go struct field AuthenticationConfiguration.jwt of type v1.JWTAuthenticator",
        ),
    ),
    (
        "issuer.url x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: x}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "[jwt[0].issuer.url: Invalid value: \"x\": URL scheme must be https, jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required]",
        ),
    ),
    (
        "issuer.discoveryURL x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], discoveryURL: x}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some("jwt[0].issuer.discoveryURL: Invalid value: \"x\": URL scheme must be https"),
    ),
    (
        "issuer.certificateAuthority x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], certificateAuthority: x}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "jwt[0].issuer.certificateAuthority: Invalid value: \"<omitted>\": data does not contain any valid RSA or ECDSA certificates",
        ),
    ),
    (
        "issuer.audienceMatchPolicy x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], audienceMatchPolicy: x}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "jwt[0].issuer.audienceMatchPolicy: Invalid value: \"x\": audienceMatchPolicy must be empty or MatchAny for single audience",
        ),
    ),
    (
        "audiences[0] x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [x]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        None,
    ),
    (
        "rules[0] x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [x]\n",
        Some(
            "json: cannot unmarshal string into Go struct field JWTAuthenticator.jwt.claimValidationRules of type v1.ClaimValidationRule",
        ),
    ),
    (
        "rule.claim x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: x}]\n",
        None,
    ),
    (
        "rule.requiredValue x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{requiredValue: x}]\n",
        Some("jwt[0].claimValidationRules[0]: Required value: claim or expression is required"),
    ),
    (
        "rule.message x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{message: x}]\n",
        Some("jwt[0].claimValidationRules[0]: Required value: claim or expression is required"),
    ),
    (
        "username.claim x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: x}}\n",
        Some(
            "jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing",
        ),
    ),
    (
        "groups.claim x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {groups: {claim: x}}\n",
        Some(
            "[jwt[0].claimMappings.username: Required value: claim or expression is required, jwt[0].claimMappings.groups.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing]",
        ),
    ),
    (
        "username.prefix x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {prefix: x}}\n",
        Some("jwt[0].claimMappings.username: Required value: claim or expression is required"),
    ),
    (
        "groups.prefix x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {groups: {prefix: x}}\n",
        Some("jwt[0].claimMappings.username: Required value: claim or expression is required"),
    ),
    (
        "uid.claim x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {uid: {claim: x}}\n",
        Some("jwt[0].claimMappings.username: Required value: claim or expression is required"),
    ),
    (
        "anonymous.enabled x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: x}\n",
        Some(
            "json: cannot unmarshal string into Go struct field AnonymousAuthConfig.anonymous.enabled of type bool",
        ),
    ),
    (
        "anonymous.conditions.path x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {conditions: [{path: x}]}\n",
        Some(
            "anonymous.conditions: Invalid value: [{\"Path\":\"x\"}]: enabled should be set to true when conditions are defined",
        ),
    ),
    (
        "kind x",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: x\n",
        Some(
            "no kind \"x\" is registered for version \"apiserver.config.k8s.io/v1\" in scheme \"pkg/runtime/scheme.go:111\"",
        ),
    ),
    (
        "apiVersion x",
        "apiVersion: x\nkind: AuthenticationConfiguration\n",
        Some(
            "no kind \"AuthenticationConfiguration\" is registered for version \"x\" in scheme \"pkg/runtime/scheme.go:111\"",
        ),
    ),
    (
        "v1beta1 policy x",
        "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], audienceMatchPolicy: x}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "jwt[0].issuer.audienceMatchPolicy: Invalid value: \"x\": audienceMatchPolicy must be empty or MatchAny for single audience",
        ),
    ),
    (
        "v1alpha1 policy x",
        "apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a], audienceMatchPolicy: x}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "jwt[0].issuer.audienceMatchPolicy: Invalid value: \"x\": audienceMatchPolicy must be empty or MatchAny for single audience",
        ),
    ),
    (
        "rv 0o12",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: 0o12\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv +12",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: +12\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv 1e3",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: 1e3\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv 1.",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: 1.\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv .5",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: .5\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv 1_000.5",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: 1_000.5\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv 0b101",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: 0b101\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv -0b101",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: -0b101\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv 08",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: 08\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv 1e400",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: 1e400\n",
        None,
    ),
    (
        "rv 99999999999999999999",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: 99999999999999999999\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv -",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: -\n",
        Some("yaml: line 8: block sequence entries are not allowed in this context"),
    ),
    (
        "rv +",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: +\n",
        None,
    ),
    (
        "rv .",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: .\n",
        None,
    ),
    (
        "rv <<",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: <<\n",
        None,
    ),
    (
        "rv =",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: =\n",
        None,
    ),
    (
        "rv NaN",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: NaN\n",
        None,
    ),
    (
        "rv inf",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: inf\n",
        None,
    ),
    (
        "rv .iNf",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: .iNf\n",
        None,
    ),
    (
        "rv -.inf",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: -.inf\n",
        Some("json: unsupported value: -Inf"),
    ),
    (
        "rv .NaN",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: .NaN\n",
        Some("json: unsupported value: NaN"),
    ),
    (
        "rv Null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: Null\n",
        None,
    ),
    (
        "rv nULL",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: nULL\n",
        None,
    ),
    (
        "rv yEs",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: yEs\n",
        None,
    ),
    (
        "rv oN",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: oN\n",
        None,
    ),
    (
        "rv O",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: O\n",
        None,
    ),
    (
        "rv o",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: o\n",
        None,
    ),
    (
        "rv n",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: n\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv NO",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: NO\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv Off",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: Off\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv 0x1F",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: 0x1F\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv -0x1f",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: -0x1f\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv 1__0",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: 1__0\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv 0.",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: 0.\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv -.5",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: -.5\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv 1e-400",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: 1e-400\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv +.5e+3",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: +.5e+3\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv 0_",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: 0_\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv _1",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: _1\n",
        None,
    ),
    (
        "rv 2001-12-14 21:59:43.10",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: 2001-12-14 21:59:43.10\n",
        None,
    ),
    (
        "rv 2001-12-14t21:59:43.10-05:00",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: 2001-12-14t21:59:43.10-05:00\n",
        None,
    ),
    (
        "rv !!str true",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: !!str true\n",
        None,
    ),
    (
        "rv !!str 1",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: !!str 1\n",
        None,
    ),
    (
        "rv !!binary aGk=",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: !!binary aGk=\n",
        None,
    ),
    (
        "rv !!float 1",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: !!float 1\n",
        Some(
            "json: cannot unmarshal number into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv &x yes",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: &x yes\n",
        Some(
            "json: cannot unmarshal bool into Go struct field ClaimValidationRule.jwt.claimValidationRules.requiredValue of type string",
        ),
    ),
    (
        "rv !!str &x yes",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: !!str &x yes\n",
        None,
    ),
    (
        "rv &x !!str yes",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: &x !!str yes\n",
        None,
    ),
    (
        "rv \"\\x79es\"",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: \"\\x79es\"\n",
        None,
    ),
    (
        "rv |\n      yes",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: |\n      yes\n",
        None,
    ),
    (
        "rv 'a''b'",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: 'a''b'\n",
        None,
    ),
    (
        "rv \"a\\u003cb\"",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules:\n  - claim: c\n    requiredValue: \"a\\u003cb\"\n",
        None,
    ),
    (
        "two type errors",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: true, audiences: [1]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal number into Go struct field Issuer.jwt.issuer.audiences of type string",
        ),
    ),
    (
        "unknown then type",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {bogus: 1, url: true, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal bool into Go struct field Issuer.jwt.issuer.url of type string",
        ),
    ),
    (
        "two unknown",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {zz: 1, bogus: 2, url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\nfoo: 1\n",
        Some(
            "strict decoding error: unknown field \"foo\", unknown field \"jwt[0].issuer.bogus\", unknown field \"jwt[0].issuer.zz\"",
        ),
    ),
    (
        "dup and unknown",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, url: https://i, bogus: 1, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "strict decoding error: yaml: unmarshal errors:\n  line 4: key \"url\" already set in map, unknown field \"jwt[0].issuer.bogus\"",
        ),
    ),
    (
        "dup block",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: https://i\n    audiences: [a]\n    url: https://j\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "strict decoding error: yaml: unmarshal errors:\n  line 7: key \"url\" already set in map",
        ),
    ),
    (
        "dup top",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nkind: AuthenticationConfiguration\n",
        Some(
            "strict decoding error: yaml: unmarshal errors:\n  line 3: key \"kind\" already set in map",
        ),
    ),
    (
        "dup two",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nkind: AuthenticationConfiguration\njwt: []\njwt: []\n",
        Some(
            "strict decoding error: yaml: unmarshal errors:\n  line 3: key \"kind\" already set in map\n  line 5: key \"jwt\" already set in map",
        ),
    ),
    (
        "dup and type",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, url: https://i, audiences: [1]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        Some(
            "json: cannot unmarshal number into Go struct field Issuer.jwt.issuer.audiences of type string",
        ),
    ),
    (
        "Kind only",
        "apiVersion: apiserver.config.k8s.io/v1\nKind: AuthenticationConfiguration\n",
        Some("strict decoding error: unknown field \"Kind\""),
    ),
    (
        "no apiVersion",
        "kind: AuthenticationConfiguration\n",
        Some("Object 'apiVersion' is missing in 'kind: AuthenticationConfiguration\n'"),
    ),
    (
        "ApiVersion",
        "ApiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n",
        Some("strict decoding error: unknown field \"ApiVersion\""),
    ),
    (
        "key 1",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n1: x\n",
        Some("strict decoding error: unknown field \"1\""),
    ),
    (
        "key null",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nnull: x\n",
        Some("unsupported map key of type: %!s(<nil>), key: <nil>, value: \"x\""),
    ),
    (
        "key ~",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n~: x\n",
        Some("unsupported map key of type: %!s(<nil>), key: <nil>, value: \"x\""),
    ),
    (
        "key 1.5",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n1.5: x\n",
        Some("strict decoding error: unknown field \"1.5\""),
    ),
    (
        "key 0x10",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n0x10: x\n",
        Some("strict decoding error: unknown field \"16\""),
    ),
    (
        "nan in unknown",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nbogus: .nan\n",
        Some("json: unsupported value: NaN"),
    ),
    (
        "inf in unknown",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nbogus: [-.inf]\n",
        Some("json: unsupported value: -Inf"),
    ),
    (
        "merge",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {<<: {url: https://i}, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
        None,
    ),
    (
        "syntax 1",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: [\n",
        Some("yaml: line 3: did not find expected node content"),
    ),
    (
        "syntax 2",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n  - a\n b: c\n",
        Some("yaml: line 4: did not find expected key"),
    ),
    (
        "syntax 3",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\na: b: c\n",
        Some("yaml: line 3: mapping values are not allowed in this context"),
    ),
    (
        "syntax 4",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: \"abc\n",
        Some("yaml: line 4: found unexpected end of stream"),
    ),
    (
        "syntax 5",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n\tjwt: []\n",
        Some("yaml: line 3: found a tab character that violates indentation"),
    ),
    (
        "syntax 6",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: *nope\n",
        Some("yaml: unknown anchor 'nope' referenced"),
    ),
    (
        "syntax 7",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: [a, b}\n",
        Some("yaml: line 2: did not find expected ',' or ']'"),
    ),
    (
        "syntax 8",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n  jwt: []\n",
        Some("yaml: line 3: mapping values are not allowed in this context"),
    ),
    (
        "syntax first line",
        "a: b: c\n",
        Some("yaml: mapping values are not allowed in this context"),
    ),
    (
        "first byte a tab",
        "\tapiVersion: v1\n",
        Some("yaml: found character that cannot start any token"),
    ),
    (
        "only a tab",
        "\t",
        Some("yaml: found character that cannot start any token"),
    ),
    (
        "first byte @",
        "@a\n",
        Some("yaml: found character that cannot start any token"),
    ),
    (
        "first byte backquote",
        "`a\n",
        Some("yaml: found character that cannot start any token"),
    ),
    (
        "first byte ]",
        "]\n",
        Some("yaml: did not find expected node content"),
    ),
    (
        "first byte }",
        "}\n",
        Some("yaml: did not find expected node content"),
    ),
    (
        "first byte comma",
        ",a\n",
        Some("yaml: did not find expected node content"),
    ),
    (
        "first byte a colon",
        ": x\n",
        Some("yaml: did not find expected key"),
    ),
    (
        "a colon key, then a colon",
        ":x: y\n:\n",
        Some("yaml: line 1: did not find expected key"),
    ),
    (
        "escape \\x4",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: [\"\\x4\"]\n",
        Some("yaml: line 3: did not find expected hexdecimal number"),
    ),
    (
        "escape \\xZZ",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nx: \"\\xZZ\"\n",
        Some("yaml: line 3: did not find expected hexdecimal number"),
    ),
    (
        "escape \\u00, first line",
        "\"\\u00\"\n",
        Some("yaml: did not find expected hexdecimal number"),
    ),
    (
        "escape \\U0000004, first line",
        "\"\\U0000004\"\n",
        Some("yaml: did not find expected hexdecimal number"),
    ),
    (
        "tab value",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\t[]\n",
        None,
    ),
    (
        "json dup",
        "{\"apiVersion\": \"apiserver.config.k8s.io/v1\", \"kind\": \"AuthenticationConfiguration\", \"kind\": \"AuthenticationConfiguration\"}",
        Some("strict decoding error: duplicate field \"kind\""),
    ),
    (
        "bom",
        "\u{feff}apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n",
        None,
    ),
    (
        "mapping root",
        "{}",
        Some("Object 'Kind' is missing in '{}'"),
    ),
    (
        "string root",
        "x",
        Some(
            "couldn't get version/kind; json parse error: json: cannot unmarshal string into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }",
        ),
    ),
    (
        "number root",
        "1",
        Some(
            "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }",
        ),
    ),
    (
        "bool root",
        "yes",
        Some(
            "couldn't get version/kind; json parse error: json: cannot unmarshal bool into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }",
        ),
    ),
    (
        "null root",
        "null",
        Some("Object 'Kind' is missing in 'null'"),
    ),
    (
        "anonymous []",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: true, conditions: []}\n",
        None,
    ),
    (
        "kind padded",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: ' AuthenticationConfiguration'\n",
        Some(
            "no kind \" AuthenticationConfiguration\" is registered for version \"apiserver.config.k8s.io/v1\" in scheme \"pkg/runtime/scheme.go:111\"",
        ),
    ),
    (
        "apiVersion v2",
        "apiVersion: apiserver.config.k8s.io/v2\nkind: AuthenticationConfiguration\n",
        Some(
            "no kind \"AuthenticationConfiguration\" is registered for version \"apiserver.config.k8s.io/v2\" in scheme \"pkg/runtime/scheme.go:111\"",
        ),
    ),
    (
        "apiVersion other",
        "apiVersion: v1\nkind: AuthenticationConfiguration\n",
        Some(
            "no kind \"AuthenticationConfiguration\" is registered for version \"v1\" in scheme \"pkg/runtime/scheme.go:111\"",
        ),
    ),
    (
        "apiVersion group only",
        "apiVersion: apiserver.config.k8s.io\nkind: AuthenticationConfiguration\n",
        Some(
            "no kind \"AuthenticationConfiguration\" is registered for version \"apiserver.config.k8s.io\" in scheme \"pkg/runtime/scheme.go:111\"",
        ),
    ),
    (
        "kind empty",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: ''\n",
        Some("Object 'Kind' is missing in 'apiVersion: apiserver.config.k8s.io/v1\nkind: ''\n'"),
    ),
    (
        "apiVersion a/b/c",
        "apiVersion: a/b/c\nkind: AuthenticationConfiguration\n",
        Some("unexpected GroupVersion string: a/b/c"),
    ),
    (
        "json ws",
        "\n  \t{\"apiVersion\": \"apiserver.config.k8s.io/v1\", \"kind\": \"AuthenticationConfiguration\"}",
        None,
    ),
    (
        "json order",
        "{\"apiVersion\": \"apiserver.config.k8s.io/v1\", \"kind\": \"AuthenticationConfiguration\", \"jwt\": [{\"issuer\": {\"url\": true, \"audiences\": [1]}}]}",
        Some(
            "json: cannot unmarshal bool into Go struct field Issuer.jwt.issuer.url of type string",
        ),
    ),
    (
        "json unknown order",
        "{\"apiVersion\": \"apiserver.config.k8s.io/v1\", \"zz\": 1, \"kind\": \"AuthenticationConfiguration\", \"aa\": 2, \"jwt\": [{\"issuer\": {\"zz\": 1, \"url\": \"https://i\", \"bb\": 2, \"audiences\": [\"a\"]}}]}",
        Some(
            "strict decoding error: unknown field \"zz\", unknown field \"aa\", unknown field \"jwt[0].issuer.zz\", unknown field \"jwt[0].issuer.bb\"",
        ),
    ),
    (
        "json nested dup",
        "{\"apiVersion\": \"apiserver.config.k8s.io/v1\", \"kind\": \"AuthenticationConfiguration\", \"jwt\": [{\"issuer\": {\"url\": \"https://i\", \"url\": \"https://i\", \"audiences\": [\"a\"]}}]}",
        Some("strict decoding error: duplicate field \"jwt[0].issuer.url\""),
    ),
    (
        "json dup + unknown",
        "{\"apiVersion\": \"apiserver.config.k8s.io/v1\", \"kind\": \"AuthenticationConfiguration\", \"zz\": 1, \"kind\": \"AuthenticationConfiguration\"}",
        Some("strict decoding error: unknown field \"zz\", duplicate field \"kind\""),
    ),
    (
        "json Kind",
        "{\"apiVersion\": \"apiserver.config.k8s.io/v1\", \"Kind\": \"AuthenticationConfiguration\"}",
        Some("strict decoding error: unknown field \"Kind\""),
    ),
    (
        "json kind case both",
        "{\"apiVersion\": \"apiserver.config.k8s.io/v1\", \"kind\": \"AuthenticationConfiguration\", \"KIND\": \"x\"}",
        Some(
            "no kind \"x\" is registered for version \"apiserver.config.k8s.io/v1\" in scheme \"pkg/runtime/scheme.go:111\"",
        ),
    ),
    (
        "yaml kind case both",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nKIND: x\n",
        Some("strict decoding error: unknown field \"KIND\""),
    ),
    (
        "yaml KIND first",
        "apiVersion: apiserver.config.k8s.io/v1\nKIND: x\nkind: AuthenticationConfiguration\n",
        Some("strict decoding error: unknown field \"KIND\""),
    ),
    (
        "yaml Kind only AC",
        "apiVersion: apiserver.config.k8s.io/v1\nKind: AuthenticationConfiguration\n",
        Some("strict decoding error: unknown field \"Kind\""),
    ),
    (
        "other kind",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EgressSelectorConfiguration\n",
        Some(
            "no kind \"EgressSelectorConfiguration\" is registered for version \"apiserver.config.k8s.io/v1\" in scheme \"pkg/runtime/scheme.go:111\"",
        ),
    ),
    (
        "other kind 2",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n",
        Some("expected AuthenticationConfiguration, got *apiserver.AuthorizationConfiguration"),
    ),
    (
        "other kind bogus",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EgressSelectorConfiguration\nbogus: 1\n",
        Some(
            "no kind \"EgressSelectorConfiguration\" is registered for version \"apiserver.config.k8s.io/v1\" in scheme \"pkg/runtime/scheme.go:111\"",
        ),
    ),
    (
        "null value key order",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous:\n",
        None,
    ),
    (
        "dup null value",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous:\nanonymous: null\n",
        Some(
            "strict decoding error: yaml: unmarshal errors:\n  line 4: key \"anonymous\" already set in map",
        ),
    ),
    (
        "merge overlap",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {<<: {enabled: true}, enabled: true}\n",
        Some(
            "strict decoding error: yaml: unmarshal errors:\n  line 3: key \"enabled\" already set in map",
        ),
    ),
    (
        "merge seq",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {<<: [{enabled: true}, {conditions: []}]}\n",
        None,
    ),
    (
        "merge bad",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {<<: 1}\n",
        Some("yaml: map merge requires map or sequence of maps as the value"),
    ),
    (
        "merge quoted",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {\"<<\": {enabled: true}}\n",
        Some("strict decoding error: unknown field \"anonymous.<<\""),
    ),
    (
        "key seq",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n? [a]\n: 1\n",
        Some("yaml: invalid map key: []interface {}{\"a\"}"),
    ),
    (
        "long key",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: {enabled: true}\n",
        None,
    ),
    (
        "anchor dup",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous: &a {enabled: true}\njwt: *a\n",
        Some(
            "json: cannot unmarshal object into Go struct field AuthenticationConfiguration.jwt of type []v1.JWTAuthenticator",
        ),
    ),
    (
        "unknown null key value",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n~: [1, 2]\n",
        Some("unsupported map key of type: %!s(<nil>), key: <nil>, value: []interface {}{1, 2}"),
    ),
    (
        "unknown null key map",
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n~: {a: 1}\n",
        Some(
            "unsupported map key of type: %!s(<nil>), key: <nil>, value: map[interface {}]interface {}{\"a\":1}",
        ),
    ),
];

#[test]
fn authentication_configuration_is_decoded_and_validated_as_kube_apiserver_does() {
    let mut failures = Vec::new();
    for &(name, file, want) in CASES {
        let got = load_authentication_configuration(file.as_bytes(), &[])
            .map(drop)
            .map_err(|e| e.to_string());
        if got.as_ref().err().map(String::as_str) != want {
            failures.push(format!("{name}:\n   got {got:?}\n  want {want:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What Kubernetes checks beside CEL compilation, with its texts, order and field paths:
/// `claimMappings.extra[i].key` (`IsDomainPrefixedPath`: required, a host and a path, the
/// host an RFC 1123 subdomain of at most 253 characters, the path `httpPathFmt`; lowercase;
/// not k8s.io / kubernetes.io or their subdomains; a repeated key ends its entry's checks), a
/// required `valueExpression` and user-rule `expression`, repeated claim-rule and user-rule
/// expressions (`Duplicate value`, not compiled). Each row: the file's `jwt[0]` after its
/// issuer, Go's answer verbatim (`ValidateAuthenticationConfiguration` with the default CEL
/// compiler, k8s.io/apiserver v0.37.2), and our error list: Go's (`Go`) with the CEL
/// refusal (`Cel`) only where Kubernetes would compile a non-empty expression (it compiles
/// every one of these).
#[test]
fn extra_keys_required_and_repeated_expressions_are_validated_as_kube_apiserver_does() {
    enum Item {
        Go(&'static str),
        Cel(&'static str),
    }
    use Item::{Cel, Go};
    fn aggregate<'a>(errs: impl Iterator<Item = &'a str>) -> Option<String> {
        let errs: Vec<&str> = errs.collect();
        match errs.len() {
            0 => None,
            1 => Some(errs[0].to_owned()),
            _ => Some(format!("[{}]", errs.join(", "))),
        }
    }
    type Row = (
        &'static str,
        &'static str,
        Option<&'static str>,
        &'static [Item],
    );
    let rows: &[Row] = &[
        (
            "reviewer: an extra key that is no domain-prefixed path, uppercase, no valueExpression",
            r#"  claimMappings: {username: {claim: sub, prefix: ''}, extra: [{key: Foo}]}
"#,
            Some(
                r#"[jwt[0].claimMappings.extra[0].key: Invalid value: "Foo": must be a domain-prefixed path (such as "acme.io/foo"), jwt[0].claimMappings.extra[0].key: Invalid value: "Foo": must be lowercase, jwt[0].claimMappings.extra[0].valueExpression: Required value]"#,
            ),
            &[
                Go(
                    r#"jwt[0].claimMappings.extra[0].key: Invalid value: "Foo": must be a domain-prefixed path (such as "acme.io/foo")"#,
                ),
                Go(r#"jwt[0].claimMappings.extra[0].key: Invalid value: "Foo": must be lowercase"#),
                Go(r#"jwt[0].claimMappings.extra[0].valueExpression: Required value"#),
            ],
        ),
        (
            "reviewer: an empty user validation expression",
            r#"  claimMappings: {username: {claim: sub, prefix: ''}}
  userValidationRules: [{expression: ''}]
"#,
            Some(r#"jwt[0].userValidationRules[0].expression: Required value"#),
            &[Go(
                r#"jwt[0].userValidationRules[0].expression: Required value"#,
            )],
        ),
        (
            "an empty extra list",
            r#"  claimMappings: {username: {claim: sub, prefix: ''}, extra: []}
"#,
            None,
            &[],
        ),
        (
            "reviewer: a repeated claim validation expression",
            r#"  claimMappings: {username: {claim: sub, prefix: ''}}
  claimValidationRules: [{expression: 'true', requiredValue: x}, {expression: 'true'}]
"#,
            Some(
                r#"[jwt[0].claimValidationRules[0].requiredValue: Invalid value: "x": may not be specified when expression is set, jwt[0].claimValidationRules[1].expression: Duplicate value: "true"]"#,
            ),
            &[
                Go(
                    r#"jwt[0].claimValidationRules[0].requiredValue: Invalid value: "x": may not be specified when expression is set"#,
                ),
                Cel(
                    r#"jwt[0].claimValidationRules[0].expression: Invalid value: "true": CEL expressions are not supported yet"#,
                ),
                Go(r#"jwt[0].claimValidationRules[1].expression: Duplicate value: "true""#),
            ],
        ),
        (
            "a valid extra mapping: only its CEL is refused",
            r#"  claimMappings: {username: {claim: sub, prefix: ''}, extra: [{key: example.org/foo, valueExpression: claims.foo}]}
"#,
            None,
            &[Cel(
                r#"jwt[0].claimMappings.extra[0].valueExpression: Invalid value: "claims.foo": CEL expressions are not supported yet"#,
            )],
        ),
        (
            "reserved k8s.io and kubernetes.io keys",
            r#"  claimMappings: {username: {claim: sub, prefix: ''}, extra: [{key: k8s.io/foo, valueExpression: claims.foo}, {key: kubernetes.io/x, valueExpression: claims.x}, {key: a.b.k8s.io/y}, {key: xk8s.io/z, valueExpression: claims.z}]}
"#,
            Some(
                r#"[jwt[0].claimMappings.extra[0].key: Invalid value: "k8s.io/foo": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use, jwt[0].claimMappings.extra[1].key: Invalid value: "kubernetes.io/x": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use, jwt[0].claimMappings.extra[2].key: Invalid value: "a.b.k8s.io/y": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use, jwt[0].claimMappings.extra[2].valueExpression: Required value]"#,
            ),
            &[
                Go(
                    r#"jwt[0].claimMappings.extra[0].key: Invalid value: "k8s.io/foo": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use"#,
                ),
                Cel(
                    r#"jwt[0].claimMappings.extra[0].valueExpression: Invalid value: "claims.foo": CEL expressions are not supported yet"#,
                ),
                Go(
                    r#"jwt[0].claimMappings.extra[1].key: Invalid value: "kubernetes.io/x": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use"#,
                ),
                Cel(
                    r#"jwt[0].claimMappings.extra[1].valueExpression: Invalid value: "claims.x": CEL expressions are not supported yet"#,
                ),
                Go(
                    r#"jwt[0].claimMappings.extra[2].key: Invalid value: "a.b.k8s.io/y": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use"#,
                ),
                Go(r#"jwt[0].claimMappings.extra[2].valueExpression: Required value"#),
                Cel(
                    r#"jwt[0].claimMappings.extra[3].valueExpression: Invalid value: "claims.z": CEL expressions are not supported yet"#,
                ),
            ],
        ),
        (
            "repeated extra keys",
            r#"  claimMappings: {username: {claim: sub, prefix: ''}, extra: [{key: a.io/x, valueExpression: claims.a}, {key: a.io/x, valueExpression: claims.b}, {key: a.io/x}]}
"#,
            Some(
                r#"[jwt[0].claimMappings.extra[1].key: Duplicate value: "a.io/x", jwt[0].claimMappings.extra[2].key: Duplicate value: "a.io/x"]"#,
            ),
            &[
                Cel(
                    r#"jwt[0].claimMappings.extra[0].valueExpression: Invalid value: "claims.a": CEL expressions are not supported yet"#,
                ),
                Go(r#"jwt[0].claimMappings.extra[1].key: Duplicate value: "a.io/x""#),
                Go(r#"jwt[0].claimMappings.extra[2].key: Duplicate value: "a.io/x""#),
            ],
        ),
        (
            "empty and absent extra keys",
            r#"  claimMappings: {username: {claim: sub, prefix: ''}, extra: [{key: '', valueExpression: claims.a}, {valueExpression: claims.b}]}
"#,
            Some(
                r#"[jwt[0].claimMappings.extra[0].key: Required value, jwt[0].claimMappings.extra[1].key: Required value, jwt[0].claimMappings.extra[1].key: Duplicate value: ""]"#,
            ),
            &[
                Go(r#"jwt[0].claimMappings.extra[0].key: Required value"#),
                Cel(
                    r#"jwt[0].claimMappings.extra[0].valueExpression: Invalid value: "claims.a": CEL expressions are not supported yet"#,
                ),
                Go(r#"jwt[0].claimMappings.extra[1].key: Required value"#),
                Go(r#"jwt[0].claimMappings.extra[1].key: Duplicate value: """#),
            ],
        ),
        (
            "extra keys without a host or path, a path with a space, an uppercase path",
            r#"  claimMappings: {username: {claim: sub, prefix: ''}, extra: [{key: 'a.io/', valueExpression: claims.a}, {key: /foo, valueExpression: claims.b}, {key: noslash, valueExpression: claims.c}, {key: 'a.io/foo bar', valueExpression: claims.d}, {key: 'a.io/Foo', valueExpression: claims.e}]}
"#,
            Some(
                r#"[jwt[0].claimMappings.extra[0].key: Invalid value: "a.io/": must be a domain-prefixed path (such as "acme.io/foo"), jwt[0].claimMappings.extra[1].key: Invalid value: "/foo": must be a domain-prefixed path (such as "acme.io/foo"), jwt[0].claimMappings.extra[2].key: Invalid value: "noslash": must be a domain-prefixed path (such as "acme.io/foo"), jwt[0].claimMappings.extra[3].key: Invalid value: "foo bar": Invalid path (regex used for validation is '[A-Za-z0-9/\-._~%!$&'()*+,;=:]+'), jwt[0].claimMappings.extra[4].key: Invalid value: "a.io/Foo": must be lowercase]"#,
            ),
            &[
                Go(
                    r#"jwt[0].claimMappings.extra[0].key: Invalid value: "a.io/": must be a domain-prefixed path (such as "acme.io/foo")"#,
                ),
                Cel(
                    r#"jwt[0].claimMappings.extra[0].valueExpression: Invalid value: "claims.a": CEL expressions are not supported yet"#,
                ),
                Go(
                    r#"jwt[0].claimMappings.extra[1].key: Invalid value: "/foo": must be a domain-prefixed path (such as "acme.io/foo")"#,
                ),
                Cel(
                    r#"jwt[0].claimMappings.extra[1].valueExpression: Invalid value: "claims.b": CEL expressions are not supported yet"#,
                ),
                Go(
                    r#"jwt[0].claimMappings.extra[2].key: Invalid value: "noslash": must be a domain-prefixed path (such as "acme.io/foo")"#,
                ),
                Cel(
                    r#"jwt[0].claimMappings.extra[2].valueExpression: Invalid value: "claims.c": CEL expressions are not supported yet"#,
                ),
                Go(
                    r#"jwt[0].claimMappings.extra[3].key: Invalid value: "foo bar": Invalid path (regex used for validation is '[A-Za-z0-9/\-._~%!$&'()*+,;=:]+')"#,
                ),
                Cel(
                    r#"jwt[0].claimMappings.extra[3].valueExpression: Invalid value: "claims.d": CEL expressions are not supported yet"#,
                ),
                Go(
                    r#"jwt[0].claimMappings.extra[4].key: Invalid value: "a.io/Foo": must be lowercase"#,
                ),
                Cel(
                    r#"jwt[0].claimMappings.extra[4].valueExpression: Invalid value: "claims.e": CEL expressions are not supported yet"#,
                ),
            ],
        ),
        (
            "extra keys whose host is no RFC 1123 subdomain",
            r#"  claimMappings: {username: {claim: sub, prefix: ''}, extra: [{key: 'A_B.io/foo', valueExpression: claims.a}, {key: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.io/x', valueExpression: claims.b}, {key: '-a.io/x'}, {key: 'K8S.IO/x', valueExpression: claims.c}, {key: 'a..io/x/y', valueExpression: claims.d}]}
"#,
            Some(
                r#"[jwt[0].claimMappings.extra[0].key: Invalid value: "A_B.io": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), jwt[0].claimMappings.extra[0].key: Invalid value: "A_B.io/foo": must be lowercase, jwt[0].claimMappings.extra[2].key: Invalid value: "-a.io": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), jwt[0].claimMappings.extra[2].valueExpression: Required value, jwt[0].claimMappings.extra[3].key: Invalid value: "K8S.IO": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), jwt[0].claimMappings.extra[3].key: Invalid value: "K8S.IO/x": must be lowercase, jwt[0].claimMappings.extra[4].key: Invalid value: "a..io": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]"#,
            ),
            &[
                Go(
                    r#"jwt[0].claimMappings.extra[0].key: Invalid value: "A_B.io": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
                ),
                Go(
                    r#"jwt[0].claimMappings.extra[0].key: Invalid value: "A_B.io/foo": must be lowercase"#,
                ),
                Cel(
                    r#"jwt[0].claimMappings.extra[0].valueExpression: Invalid value: "claims.a": CEL expressions are not supported yet"#,
                ),
                Cel(
                    r#"jwt[0].claimMappings.extra[1].valueExpression: Invalid value: "claims.b": CEL expressions are not supported yet"#,
                ),
                Go(
                    r#"jwt[0].claimMappings.extra[2].key: Invalid value: "-a.io": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
                ),
                Go(r#"jwt[0].claimMappings.extra[2].valueExpression: Required value"#),
                Go(
                    r#"jwt[0].claimMappings.extra[3].key: Invalid value: "K8S.IO": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
                ),
                Go(
                    r#"jwt[0].claimMappings.extra[3].key: Invalid value: "K8S.IO/x": must be lowercase"#,
                ),
                Cel(
                    r#"jwt[0].claimMappings.extra[3].valueExpression: Invalid value: "claims.c": CEL expressions are not supported yet"#,
                ),
                Go(
                    r#"jwt[0].claimMappings.extra[4].key: Invalid value: "a..io": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
                ),
                Cel(
                    r#"jwt[0].claimMappings.extra[4].valueExpression: Invalid value: "claims.d": CEL expressions are not supported yet"#,
                ),
            ],
        ),
        (
            "repeated and empty user validation expressions",
            r#"  claimMappings: {username: {claim: sub, prefix: ''}}
  userValidationRules: [{expression: 'true'}, {expression: 'true'}, {expression: ''}, {expression: 'user.username != ""', message: m}]
"#,
            Some(
                r#"[jwt[0].userValidationRules[1].expression: Duplicate value: "true", jwt[0].userValidationRules[2].expression: Required value]"#,
            ),
            &[
                Cel(
                    r#"jwt[0].userValidationRules[0].expression: Invalid value: "true": CEL expressions are not supported yet"#,
                ),
                Go(r#"jwt[0].userValidationRules[1].expression: Duplicate value: "true""#),
                Go(r#"jwt[0].userValidationRules[2].expression: Required value"#),
                Cel(
                    r#"jwt[0].userValidationRules[3].expression: Invalid value: "user.username != \"\"": CEL expressions are not supported yet"#,
                ),
            ],
        ),
        (
            "a claim rule expression repeated twice",
            r#"  claimMappings: {username: {claim: sub, prefix: ''}}
  claimValidationRules: [{expression: 'claims.a == "b"'}, {claim: c, requiredValue: v}, {expression: 'claims.a == "b"', message: m}, {expression: 'claims.a == "b"', requiredValue: x}]
"#,
            Some(
                r#"[jwt[0].claimValidationRules[2].expression: Duplicate value: "claims.a == \"b\"", jwt[0].claimValidationRules[3].requiredValue: Invalid value: "x": may not be specified when expression is set, jwt[0].claimValidationRules[3].expression: Duplicate value: "claims.a == \"b\""]"#,
            ),
            &[
                Cel(
                    r#"jwt[0].claimValidationRules[0].expression: Invalid value: "claims.a == \"b\"": CEL expressions are not supported yet"#,
                ),
                Go(
                    r#"jwt[0].claimValidationRules[2].expression: Duplicate value: "claims.a == \"b\"""#,
                ),
                Go(
                    r#"jwt[0].claimValidationRules[3].requiredValue: Invalid value: "x": may not be specified when expression is set"#,
                ),
                Go(
                    r#"jwt[0].claimValidationRules[3].expression: Duplicate value: "claims.a == \"b\"""#,
                ),
            ],
        ),
        (
            "every section: Kubernetes order, CEL refused where it would compile",
            r#"  claimValidationRules: [{expression: 'true'}, {expression: 'true'}]
  claimMappings: {username: {claim: sub}, groups: {expression: claims.g}, uid: {expression: claims.u}, extra: [{key: Foo.io/x}, {key: a.io/x, valueExpression: claims.x}]}
  userValidationRules: [{expression: ''}, {expression: 'true'}, {expression: 'true'}]
"#,
            Some(
                r#"[jwt[0].claimValidationRules[1].expression: Duplicate value: "true", jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing, jwt[0].claimMappings.extra[0].key: Invalid value: "Foo.io": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), jwt[0].claimMappings.extra[0].key: Invalid value: "Foo.io/x": must be lowercase, jwt[0].claimMappings.extra[0].valueExpression: Required value, jwt[0].userValidationRules[0].expression: Required value, jwt[0].userValidationRules[2].expression: Duplicate value: "true"]"#,
            ),
            &[
                Cel(
                    r#"jwt[0].claimValidationRules[0].expression: Invalid value: "true": CEL expressions are not supported yet"#,
                ),
                Go(r#"jwt[0].claimValidationRules[1].expression: Duplicate value: "true""#),
                Go(
                    r#"jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing"#,
                ),
                Cel(
                    r#"jwt[0].claimMappings.groups.expression: Invalid value: "claims.g": CEL expressions are not supported yet"#,
                ),
                Cel(
                    r#"jwt[0].claimMappings.uid.expression: Invalid value: "claims.u": CEL expressions are not supported yet"#,
                ),
                Go(
                    r#"jwt[0].claimMappings.extra[0].key: Invalid value: "Foo.io": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
                ),
                Go(
                    r#"jwt[0].claimMappings.extra[0].key: Invalid value: "Foo.io/x": must be lowercase"#,
                ),
                Go(r#"jwt[0].claimMappings.extra[0].valueExpression: Required value"#),
                Cel(
                    r#"jwt[0].claimMappings.extra[1].valueExpression: Invalid value: "claims.x": CEL expressions are not supported yet"#,
                ),
                Go(r#"jwt[0].userValidationRules[0].expression: Required value"#),
                Cel(
                    r#"jwt[0].userValidationRules[1].expression: Invalid value: "true": CEL expressions are not supported yet"#,
                ),
                Go(r#"jwt[0].userValidationRules[2].expression: Duplicate value: "true""#),
            ],
        ),
        (
            "null key and valueExpression",
            r#"  claimMappings: {username: {claim: sub, prefix: ''}, extra: [{key: null, valueExpression: null}]}
"#,
            Some(
                r#"[jwt[0].claimMappings.extra[0].key: Required value, jwt[0].claimMappings.extra[0].valueExpression: Required value]"#,
            ),
            &[
                Go(r#"jwt[0].claimMappings.extra[0].key: Required value"#),
                Go(r#"jwt[0].claimMappings.extra[0].valueExpression: Required value"#),
            ],
        ),
    ];
    let head = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: 'https://i', audiences: [a]}\n";
    let mut failures = Vec::new();
    for (name, body, go, items) in rows {
        let go_items = aggregate(items.iter().filter_map(|i| match i {
            Go(e) => Some(*e),
            Cel(_) => None,
        }));
        assert_eq!(go_items.as_deref(), *go, "{name}: the table's Go items");
        let want = aggregate(items.iter().map(|i| match i {
            Go(e) | Cel(e) => *e,
        }));
        let got = load_authentication_configuration(format!("{head}{body}").as_bytes(), &[])
            .map(drop)
            .map_err(|e| e.to_string());
        if got.as_ref().err() != want.as_ref() {
            failures.push(format!("{name}:\n   got {got:?}\n  want {want:?}"));
        }
    }
    // Hosts longer than 253 characters: the length, then the shape, both reported; the path
    // and the case checked all the same (Go's answer, built here for its length).
    let (lower, upper) = ("a".repeat(251) + ".io", "A".repeat(251) + ".io");
    let file = format!(
        "{head}  claimMappings: {{username: {{claim: sub, prefix: ''}}, extra: [{{key: '{lower}/x', valueExpression: claims.a}}, {{key: '{upper}/x y', valueExpression: claims.b}}]}}\n"
    );
    let got = load_authentication_configuration(file.as_bytes(), &[])
        .unwrap_err()
        .to_string();
    let e = "jwt[0].claimMappings.extra";
    let dns = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    let path = "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')";
    let cel = "CEL expressions are not supported yet";
    let want = format!(
        "[{e}[0].key: Invalid value: \"{lower}\": must be no more than 253 characters, \
         {e}[0].valueExpression: Invalid value: \"claims.a\": {cel}, \
         {e}[1].key: Invalid value: \"{upper}\": must be no more than 253 characters, \
         {e}[1].key: Invalid value: \"{upper}\": {dns}, \
         {e}[1].key: Invalid value: \"x y\": {path}, \
         {e}[1].key: Invalid value: \"{upper}/x y\": must be lowercase, \
         {e}[1].valueExpression: Invalid value: \"claims.b\": {cel}]"
    );
    if got != want {
        failures.push(format!("long hosts:\n   got {got:?}\n  want {want:?}"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A `--authentication-config` file that cannot be read is refused with `os.ReadFile`'s text,
/// kube-apiserver's inside its `failed to load authentication configuration from file "<path>": `
/// wrapper (checked with Go: `open /nonexistent/x.yaml: no such file or directory`, `read
/// <dir>: is a directory`).
#[test]
fn an_unreadable_authentication_config_is_refused_with_os_readfile_text() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.yaml");
    let table = [
        (
            "missing",
            missing.clone(),
            format!("open {}: no such file or directory", missing.display()),
        ),
        (
            "a directory",
            dir.path().to_owned(),
            format!("read {}: is a directory", dir.path().display()),
        ),
    ];
    for (name, path, want) in table {
        let got = read_authentication_configuration(&path).map_err(|e| e.to_string());
        assert_eq!(got, Err(want), "{name}");
    }
}

/// kube-apiserver reads `--authentication-config` whole (`os.ReadFile`, no limit); here the
/// bound is 64 MiB, so a file of a few issuers with full CA bundles (over the former 1 MiB)
/// loads. Each row: the file's size (sparse files: nothing is written), and whether reading
/// it succeeds or its refusal, naming the path and the limit. A longer text handed to the
/// loader directly is refused the same way, without a path.
#[test]
fn authentication_config_size_limit_is_64_mib_and_its_refusal_names_the_file() {
    assert_eq!(MAX_AUTHENTICATION_CONFIG_BYTES, 64 << 20);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("authn-size-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let max = MAX_AUTHENTICATION_CONFIG_BYTES as u64;
    let table: &[(&str, u64, bool)] = &[
        ("just over the former 1 MiB", (1 << 20) + 1, true),
        ("one byte under the limit", max - 1, true),
        ("at the limit", max, true),
        ("one byte over the limit", max + 1, false),
        ("far over the limit", 4 * max, false),
    ];
    for (name, size, ok) in table {
        let path = dir.join(name.replace(' ', "-"));
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(*size).unwrap();
        drop(f);
        let got = read_authentication_configuration(&path).map(|d| d.len() as u64);
        let want = if *ok {
            Ok(*size)
        } else {
            Err(format!(
                "authentication configuration file {} too large: larger than 67108864 bytes",
                path.display()
            ))
        };
        assert_eq!(got.map_err(|e| e.to_string()), want, "{name}");
        std::fs::remove_file(&path).unwrap();
    }
    std::fs::remove_dir(&dir).unwrap();
    // A valid file just over the former 1 MiB limit (a CA-bundle-sized comment) loads.
    let mut big = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: https://i, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n".to_owned();
    while big.len() <= 1 << 20 {
        big.push_str(
            "# MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJRTESMBAGA1UE\n",
        );
    }
    assert_eq!(
        load_authentication_configuration(big.as_bytes(), &[])
            .unwrap()
            .len(),
        1
    );
    let over = vec![b'#'; MAX_AUTHENTICATION_CONFIG_BYTES + 1];
    assert_eq!(
        load_authentication_configuration(&over, &[])
            .unwrap_err()
            .to_string(),
        "authentication configuration file too large: larger than 67108864 bytes"
    );
}

/// Syntax errors of a file that starts with `{` (JSON to kube-apiserver, whose YAML flow
/// mappings it therefore refuses) are refused as `meta.Interpret`'s; the description of the
/// error is serde_json's, not `encoding/json`'s (docs/compatibility.md).
#[test]
fn a_file_starting_with_a_brace_is_json() {
    for file in [
        "{apiVersion: apiserver.config.k8s.io/v1, kind: AuthenticationConfiguration}",
        r#"{"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AuthenticationConfiguration",}"#,
        r#"{"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AuthenticationConfiguration"} x"#,
    ] {
        let err = load_authentication_configuration(file.as_bytes(), &[])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("couldn't get version/kind; json parse error: "),
            "{file}: {err}"
        );
    }
}

/// The `--oidc-*` flags are validated as kube-apiserver validates the `jwt[0]` it makes of
/// them; `--oidc-required-claim==x` (an empty key, which the flag parser accepts) is refused
/// at start-up instead of refusing every token.
#[test]
fn oidc_flags_are_validated_as_the_jwt_authenticator_kube_apiserver_builds() {
    let base = OidcFlags {
        issuer_url: "https://i".into(),
        client_id: "c".into(),
        ..Default::default()
    };
    let disallowed = ["https://sa".to_owned()];
    let cases: Vec<(&str, OidcFlags, Option<&str>)> = vec![
        (
            "--oidc-required-claim==x",
            OidcFlags {
                required_claims: vec![("".into(), "x".into())],
                ..base.clone()
            },
            Some("jwt[0].claimValidationRules[0]: Required value: claim or expression is required"),
        ),
        (
            "--oidc-required-claim=a=b",
            OidcFlags {
                required_claims: vec![("a".into(), "b".into())],
                ..base.clone()
            },
            None,
        ),
        (
            "--oidc-ca-file=/nonexistent/ca.pem",
            OidcFlags {
                ca_file: Some("/nonexistent/ca.pem".into()),
                ..base.clone()
            },
            Some("open /nonexistent/ca.pem: no such file or directory"),
        ),
        (
            "--oidc-ca-file=/tmp",
            OidcFlags {
                ca_file: Some("/tmp".into()),
                ..base.clone()
            },
            Some("read /tmp: is a directory"),
        ),
        (
            "--oidc-issuer-url=http://i",
            OidcFlags {
                issuer_url: "http://i".into(),
                ..base.clone()
            },
            Some(r#"jwt[0].issuer.url: Invalid value: "http://i": URL scheme must be https"#),
        ),
        (
            "--oidc-issuer-url=https://sa",
            OidcFlags {
                issuer_url: "https://sa".into(),
                ..base.clone()
            },
            Some(
                r#"jwt[0].issuer.url: Invalid value: "https://sa": URL must not overlap with disallowed issuers: [https://sa]"#,
            ),
        ),
        (
            "--oidc-issuer-url=https://a:1:2",
            OidcFlags {
                issuer_url: "https://a:1:2".into(),
                ..base.clone()
            },
            Some(
                r#"jwt[0].issuer.url: Invalid value: "https://a:1:2": parse "https://a:1:2": invalid port ":1:2" after host"#,
            ),
        ),
        (
            "--oidc-username-claim=",
            OidcFlags {
                username_claim: "".into(),
                ..base.clone()
            },
            Some("jwt[0].claimMappings.username: Required value: claim or expression is required"),
        ),
    ];
    for (name, flags, want) in cases {
        let got = flags
            .to_config(&disallowed)
            .map(drop)
            .map_err(|e| e.to_string());
        assert_eq!(got.as_ref().err().map(String::as_str), want, "{name}");
    }
}

/// `egressSelectorType` is not supported: a value is refused as kube-apiserver refuses it with
/// the `StructuredAuthenticationConfigurationEgressSelector` gate off (texts printed by
/// k8s.io/apiserver v0.37.2 with the gate set to false; the value printed as JSON); an empty
/// one is unset, as in Kubernetes (gate on or off).
#[test]
fn egress_selector_is_refused_as_with_its_feature_gate_off() {
    const GATE: &str = "egress selector is not supported when StructuredAuthenticationConfigurationEgressSelector feature gate is disabled";
    let file = |egress: &str| {
        format!(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {{url: https://i, audiences: [a], egressSelectorType: {egress}}}\n  claimMappings: {{username: {{claim: sub, prefix: ''}}}}\n"
        )
    };
    let cases = [
        ("''", None),
        ("null", None),
        (
            "cluster",
            Some(format!(
                r#"jwt[0].issuer.egressSelectorType: Invalid value: "cluster": {GATE}"#
            )),
        ),
        (
            "a<b",
            Some(format!(
                r#"[jwt[0].issuer.egressSelectorType: Invalid value: "a\u003cb": {GATE}, jwt[0].issuer.egressSelectorType: Invalid value: "a\u003cb": egress selector must be either controlplane or cluster]"#
            )),
        ),
    ];
    for (egress, want) in cases {
        let got = load_authentication_configuration(file(egress).as_bytes(), &[])
            .map(drop)
            .map_err(|e| e.to_string());
        assert_eq!(got.err(), want, "{egress}");
    }
}

/// kube-apiserver's reload of `--authentication-config` (`ApplyTo`'s file watch) logs a file
/// that does not decode as `failed to load authentication config`, and one that decodes but
/// does not validate, or whose `anonymous` section changed, as `failed to validate
/// authentication config` with every error in one list, the anonymous change last. Each row:
/// the new text, and the line logged (printed by k8s.io/apiserver v0.37.2's decoder and
/// `ValidateAuthenticationConfiguration`, with the reload's anonymous check, the server
/// started with `anonymous: {enabled: true}`, `https://kubernetes.default.svc` the
/// service-account issuer). Every failure is counted once and tracked; the last row applies.
#[cfg(feature = "remote")]
#[tokio::test]
async fn authentication_config_reload_failures_are_logged_as_kube_apiserver_logs_them() {
    use kube_authn::token::oidc::discovery::DiscoveryOptions;
    use kube_authn::token::oidc::metrics::ConfigControllerMetrics;
    use kube_authn::token::oidc::reload::{AuthenticationConfigReloader, ReloadOptions};
    use log_support::capture_logs;
    use std::time::Duration;
    static METRICS: ConfigControllerMetrics = ConfigControllerMetrics::new();
    const HEAD: &str =
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n";
    const HTTP_JWT: &str = "jwt:\n- issuer: {url: 'http://i', audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n";
    const HTTP_URL: &str =
        r#"jwt[0].issuer.url: Invalid value: "http://i": URL scheme must be https"#;
    const CHANGED: &str = "anonymous: Forbidden: changed from initial configuration file";
    let (logs, _guard) = capture_logs();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("authn.yaml");
    let initial = format!("{HEAD}anonymous:\n  enabled: true\n");
    std::fs::write(&path, &initial).unwrap();
    let _reloader = AuthenticationConfigReloader::start(
        path.clone(),
        initial.into_bytes(),
        None,
        vec!["https://kubernetes.default.svc".into()],
        DiscoveryOptions::default(),
        ReloadOptions::default()
            .with_timing(
                Duration::from_millis(10),
                Duration::from_secs(1),
                Duration::from_millis(100),
            )
            .with_metrics(&METRICS),
    )
    .unwrap();
    let mut many = format!("{HEAD}jwt:\n");
    for i in 0..65 {
        many += &format!(
            "- issuer: {{url: 'https://i{i}', audiences: [a]}}\n  claimMappings: {{username: {{claim: sub, prefix: ''}}}}\n"
        );
    }
    let rows: Vec<(&str, String, String)> = vec![
        (
            "empty",
            String::new(),
            "failed to load authentication config: empty config data".into(),
        ),
        (
            "another kind",
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n".into(),
            "failed to load authentication config: expected AuthenticationConfiguration, got *apiserver.AuthorizationConfiguration".into(),
        ),
        (
            "an unknown field, anonymous unchanged",
            format!("{HEAD}anonymous:\n  enabled: true\nfoo: 1\n"),
            r#"failed to load authentication config: strict decoding error: unknown field "foo""#
                .into(),
        ),
        (
            "an unknown field, anonymous changed: not decoded, so not compared",
            format!("{HEAD}foo: 1\n"),
            r#"failed to load authentication config: strict decoding error: unknown field "foo""#
                .into(),
        ),
        (
            "an invalid issuer",
            format!("{HEAD}anonymous:\n  enabled: true\n{HTTP_JWT}"),
            format!("failed to validate authentication config: {HTTP_URL}"),
        ),
        (
            "anonymous removed",
            HEAD.into(),
            format!("failed to validate authentication config: {CHANGED}"),
        ),
        (
            "anonymous removed and an invalid issuer",
            format!("{HEAD}{HTTP_JWT}"),
            format!("failed to validate authentication config: [{HTTP_URL}, {CHANGED}]"),
        ),
        (
            "invalid anonymous conditions, changed, and an invalid issuer",
            format!(
                "{HEAD}anonymous:\n  enabled: false\n  conditions: [{{path: /livez}}]\njwt:\n- issuer: {{url: 'https://kubernetes.default.svc', audiences: []}}\n  claimMappings: {{username: {{claim: sub, prefix: ''}}}}\n"
            ),
            format!(
                r#"failed to validate authentication config: [jwt[0].issuer.url: Invalid value: "https://kubernetes.default.svc": URL must not overlap with disallowed issuers: [https://kubernetes.default.svc], jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required, anonymous.conditions: Invalid value: [{{"Path":"/livez"}}]: enabled should be set to true when conditions are defined, {CHANGED}]"#
            ),
        ),
        (
            "too many issuers, anonymous changed",
            many,
            format!(
                "failed to validate authentication config: [jwt: Too many: 65: must have at most 64 items, {CHANGED}]"
            ),
        ),
    ];
    let mut seen = 0;
    for (name, text, want) in rows {
        let failed = METRICS.reloads(false);
        let tmp = dir.path().join("authn.yaml.tmp");
        std::fs::write(&tmp, &text).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        for _ in 0..1000 {
            if METRICS.reloads(false) > failed {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // Tracked: not tried again while the file stays as it is.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(METRICS.reloads(false), failed + 1, "{name}: one failure");
        let all = logs.text();
        let new = &all[seen..];
        seen = all.len();
        let lines: Vec<&str> = new
            .lines()
            .filter_map(|l| l.split_once("kube_authn::token::oidc::reload: "))
            .map(|(_, msg)| msg)
            .collect();
        assert_eq!(lines, [want.as_str()], "{name}");
    }
    // A valid text with the same anonymous section applies.
    let tmp = dir.path().join("authn.yaml.tmp");
    std::fs::write(
        &tmp,
        format!("{HEAD}anonymous:\n  enabled: true\njwt: []\n"),
    )
    .unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    for _ in 0..1000 {
        if METRICS.reloads(true) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(METRICS.reloads(true), 1);
    assert!(logs.text()[seen..].contains("reloaded authentication config\n"));
    // The file removed: `os.ReadFile`'s text; counted, not tracked (tried again).
    seen = logs.text().len();
    let failed = METRICS.reloads(false);
    std::fs::remove_file(&path).unwrap();
    for _ in 0..1000 {
        if METRICS.reloads(false) > failed {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(METRICS.reloads(false) > failed, "the removal is a failure");
    let all = logs.text();
    let first = all[seen..]
        .lines()
        .find_map(|l| l.split_once("kube_authn::token::oidc::reload: "))
        .map(|(_, msg)| msg.to_owned());
    let want = format!(
        "failed to read authentication config file: open {}: no such file or directory path={}",
        path.display(),
        path.display()
    );
    assert_eq!(first.as_deref(), Some(want.as_str()));
}
