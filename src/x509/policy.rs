//! Go `crypto/x509`'s checks on a built candidate chain that webpki does not make: certificate
//! policy validation (`policiesValid`, RFC 5280 section 6.1 as updated by RFC 9618) and the
//! extended key usage check on every certificate of the chain (`checkChainForKeyUsage`).
//!
//! webpki ignores the non-critical policy extensions (certificatePolicies, policyMappings,
//! policyConstraints, inhibitAnyPolicy); Go refuses a chain whose policies are invalid. This is
//! a port of Go 1.26's `policiesValid` with what kube-apiserver passes: no user-supplied
//! policies (the initial policy set is anyPolicy), and none of the initial
//! requireExplicitPolicy / inhibitPolicyMapping / inhibitAnyPolicy flags.

use std::collections::{BTreeMap, BTreeSet};

use super::der::{items, read_tlv};

/// anyPolicy, 2.5.29.32.0 (OID content bytes).
const ANY_POLICY: &[u8] = &[0x55, 0x1d, 0x20, 0x00];
/// anyExtendedKeyUsage, 2.5.29.37.0.
const ANY_EKU: &[u8] = &[0x55, 0x1d, 0x25, 0x00];

/// What Go's parser records of one certificate for these checks. OIDs are their DER content
/// bytes, compared as bytes (Go's `OID.Equal`).
#[derive(Debug, Default)]
pub(crate) struct ChainCert<'a> {
    /// `bytes.Equal(RawIssuer, RawSubject)`.
    self_issued: bool,
    /// `Policies` (certificatePolicies' identifiers; empty when absent).
    policies: Vec<&'a [u8]>,
    /// `PolicyMappings`: (issuerDomainPolicy, subjectDomainPolicy).
    mappings: Vec<(&'a [u8], &'a [u8])>,
    /// policyConstraints' requireExplicitPolicy.
    require_explicit: Option<i64>,
    /// policyConstraints' inhibitPolicyMapping.
    inhibit_mapping: Option<i64>,
    /// inhibitAnyPolicy's SkipCerts.
    inhibit_any: Option<i64>,
    /// extendedKeyUsage's purposes (empty when absent).
    eku: Vec<&'a [u8]>,
    /// What the name constraint check reads (`super::names`).
    pub(crate) names: super::names::ChainNames<'a>,
}

/// Go's `ReadASN1Int64WithTag` / `ReadASN1Integer` value: two's complement, at most 8 bytes.
fn int64(content: &[u8]) -> Option<i64> {
    if content.is_empty() || content.len() > 8 {
        return None;
    }
    let mut v: i64 = if content[0] & 0x80 != 0 { -1 } else { 0 };
    for &b in content {
        v = (v << 8) | i64::from(b);
    }
    Some(v)
}

/// policyConstraints' (requireExplicitPolicy, inhibitPolicyMapping) as Go's parser reads them:
/// an optional `[0]` first, then an optional `[1]`; anything after (a `[0]` after the `[1]`, a
/// repeat) is not read. `None` when a read field is no int64.
fn policy_constraints(value: &[u8]) -> Option<(Option<i64>, Option<i64>)> {
    let (seq, _) = read_tlv(value)?;
    if seq.tag != 0x30 {
        return None;
    }
    let mut fields = items(seq.content).peekable();
    let mut field = |tag: u8| match fields.next_if(|f| matches!(f, Some(f) if f.tag == tag)) {
        Some(Some(f)) => int64(f.content).map(Some),
        _ => Some(None),
    };
    let require_explicit = field(0x80)?;
    let inhibit_mapping = field(0x81)?;
    Some((require_explicit, inhibit_mapping))
}

/// The OIDs of a `SEQUENCE OF` whose elements are `SEQUENCE { OID, ... }` (`inner`) or OIDs.
fn oid_list(value: &[u8], inner: bool) -> Option<Vec<&[u8]>> {
    let (seq, _) = read_tlv(value)?;
    if seq.tag != 0x30 {
        return None;
    }
    let mut out = Vec::new();
    for item in items(seq.content) {
        let mut item = item?;
        if inner {
            if item.tag != 0x30 {
                return None;
            }
            item = read_tlv(item.content)?.0;
        }
        if item.tag != 0x06 {
            return None;
        }
        out.push(item.content);
    }
    Some(out)
}

impl<'a> ChainCert<'a> {
    /// Reads `cert` (DER). `None` when it is not readable; every certificate reaching this has
    /// passed Go's parse checks (`go_parse`), so the caller refuses the chain then.
    pub(crate) fn read(cert: &'a [u8]) -> Option<Self> {
        let (cert, _) = read_tlv(cert)?;
        let (tbs, _) = read_tlv(cert.content)?;
        if cert.tag != 0x30 || tbs.tag != 0x30 {
            return None;
        }
        let mut it = items(tbs.content);
        let mut next = it.next()??;
        if next.tag == 0xa0 {
            next = it.next()??; // version, then the serial
        }
        let _serial = next;
        let _signature = it.next()??;
        let issuer = it.next()??;
        let _validity = it.next()??;
        let subject = it.next()??;
        let _spki = it.next()??;
        let mut out = ChainCert {
            self_issued: issuer.content == subject.content,
            ..ChainCert::default()
        };
        for item in it {
            let item = item?;
            if item.tag != 0xa3 {
                continue;
            }
            let (list, _) = read_tlv(item.content)?;
            for ext in items(list.content) {
                let mut parts = items(ext?.content);
                let oid = parts.next()??;
                let mut value = parts.next()??;
                if value.tag == 0x01 {
                    value = parts.next()??;
                }
                let value = value.content;
                match oid.content {
                    // certificatePolicies
                    [0x55, 0x1d, 0x20] => out.policies = oid_list(value, true)?,
                    // policyMappings
                    [0x55, 0x1d, 0x21] => {
                        let (seq, _) = read_tlv(value)?;
                        for m in items(seq.content) {
                            let mut m = items(m?.content);
                            let issuer = m.next()??;
                            let subject = m.next()??;
                            out.mappings.push((issuer.content, subject.content));
                        }
                    }
                    // policyConstraints
                    [0x55, 0x1d, 0x24] => {
                        (out.require_explicit, out.inhibit_mapping) = policy_constraints(value)?;
                    }
                    // inhibitAnyPolicy
                    [0x55, 0x1d, 0x36] => {
                        let (n, _) = read_tlv(value)?;
                        out.inhibit_any = Some(int64(n.content)?);
                    }
                    // extendedKeyUsage
                    [0x55, 0x1d, 0x25] => out.eku = oid_list(value, false)?,
                    // subjectAltName
                    [0x55, 0x1d, 0x11] => out.names.san = Some(value),
                    // nameConstraints
                    [0x55, 0x1d, 0x1e] => out.names.name_constraints = true,
                    _ => {}
                }
            }
        }
        Some(out)
    }

    /// Go's `checkChainForKeyUsage` for one certificate and one wanted usage: no extended key
    /// usage, `anyExtendedKeyUsage`, or the usage.
    pub(crate) fn allows_usage(&self, usage: &[u8]) -> bool {
        self.eku.is_empty() || self.eku.iter().any(|&id| id == ANY_EKU || id == usage)
    }
}

/// `policyGraphNode`.
struct Node<'a> {
    valid: &'a [u8],
    expected: Vec<&'a [u8]>,
    parents: BTreeSet<usize>,
    children: BTreeSet<usize>,
}

/// `policyGraph`: nodes in an arena, strata of node indices keyed by valid policy.
struct Graph<'a> {
    nodes: Vec<Node<'a>>,
    strata: Vec<BTreeMap<&'a [u8], usize>>,
    /// OID -> nodes at `strata[depth - 1]` with the OID in their expected policy set.
    parent_index: BTreeMap<&'a [u8], Vec<usize>>,
    depth: usize,
}

impl<'a> Graph<'a> {
    fn new() -> Self {
        let root = Node {
            valid: ANY_POLICY,
            expected: vec![ANY_POLICY],
            parents: BTreeSet::new(),
            children: BTreeSet::new(),
        };
        Graph {
            nodes: vec![root],
            strata: vec![BTreeMap::from([(ANY_POLICY, 0)])],
            parent_index: BTreeMap::new(),
            depth: 0,
        }
    }

    /// `newPolicyGraphNode` then `insert`: returns the new node.
    fn insert(&mut self, valid: &'a [u8], parents: &[usize]) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Node {
            valid,
            expected: vec![valid],
            parents: parents.iter().copied().collect(),
            children: BTreeSet::new(),
        });
        for &p in parents {
            self.nodes[p].children.insert(id);
        }
        self.strata[self.depth].insert(valid, id);
        id
    }

    fn parents_with_expected(&self, expected: &[u8]) -> Vec<usize> {
        if self.depth == 0 {
            return Vec::new();
        }
        self.parent_index.get(expected).cloned().unwrap_or_default()
    }

    fn parent_with_any_policy(&self) -> Option<usize> {
        if self.depth == 0 {
            return None;
        }
        self.strata[self.depth - 1].get(ANY_POLICY).copied()
    }

    fn leaf_with_policy(&self, policy: &[u8]) -> Option<usize> {
        self.strata[self.depth].get(policy).copied()
    }

    fn delete_leaf(&mut self, policy: &[u8]) {
        let Some(id) = self.strata[self.depth].remove(policy) else {
            return;
        };
        for p in std::mem::take(&mut self.nodes[id].parents) {
            self.nodes[p].children.remove(&id);
        }
        for c in std::mem::take(&mut self.nodes[id].children) {
            self.nodes[c].parents.remove(&id);
        }
    }

    fn valid_policy_nodes(&self) -> Vec<usize> {
        let mut out = Vec::new();
        for stratum in self.strata.iter().rev() {
            for &id in stratum.values() {
                let n = &self.nodes[id];
                if n.valid == ANY_POLICY {
                    continue;
                }
                if n.parents.len() == 1
                    && n.parents.iter().all(|&p| self.nodes[p].valid == ANY_POLICY)
                {
                    out.push(id);
                }
            }
        }
        out
    }

    fn prune(&mut self) {
        for i in (1..self.depth).rev() {
            let childless: Vec<(&'a [u8], usize)> = self.strata[i]
                .iter()
                .filter(|(_, id)| self.nodes[**id].children.is_empty())
                .map(|(k, id)| (*k, *id))
                .collect();
            for (key, id) in childless {
                for p in self.nodes[id].parents.clone() {
                    self.nodes[p].children.remove(&id);
                }
                self.strata[i].remove(key);
            }
        }
    }

    fn incr_depth(&mut self) {
        self.parent_index.clear();
        for &id in self.strata[self.depth].values() {
            for &e in &self.nodes[id].expected {
                self.parent_index.entry(e).or_default().push(id);
            }
        }
        self.depth += 1;
        self.strata.push(BTreeMap::new());
    }
}

/// Go's `policiesValid` for a chain of `certs` (leaf first, trust anchor excluded: Go never
/// looks at the root's policy extensions), with no user-supplied policies.
pub(crate) fn policies_valid(certs: &[ChainCert<'_>]) -> bool {
    // Go's chain includes the root: n is the length of the chain minus the trust anchor.
    let n = certs.len() as i64;
    if n == 0 {
        return true;
    }
    let mut pg = Some(Graph::new());
    let mut inhibit_any_policy = n + 1;
    let mut explicit_policy = n + 1;
    let mut policy_mapping = n + 1;

    for (i, cert) in certs.iter().enumerate().rev() {
        // 6.1.3 (e)
        if cert.policies.is_empty() {
            pg = None;
        }
        // 6.1.3 (f)
        if explicit_policy == 0 && pg.is_none() {
            return false;
        }
        if let Some(g) = pg.as_mut() {
            g.incr_depth();
            // 6.1.3 (d) (1)
            for &policy in &cert.policies {
                if policy == ANY_POLICY {
                    continue;
                }
                let mut parents = g.parents_with_expected(policy);
                if parents.is_empty()
                    && let Some(any) = g.parent_with_any_policy()
                {
                    parents = vec![any];
                }
                if !parents.is_empty() {
                    g.insert(policy, &parents);
                }
            }
            // 6.1.3 (d) (2); Go's "n-i < n" is i > 0 with the leaf at 0.
            if cert.policies.contains(&ANY_POLICY)
                && (inhibit_any_policy > 0 || (i > 0 && cert.self_issued))
            {
                let mut missing: BTreeMap<&[u8], Vec<usize>> = BTreeMap::new();
                for &p in g.strata[g.depth - 1].values() {
                    for &e in &g.nodes[p].expected {
                        if !g.strata[g.depth].contains_key(e) {
                            missing.entry(e).or_default().push(p);
                        }
                    }
                }
                for (oid, parents) in missing {
                    g.insert(oid, &parents);
                }
            }
            // 6.1.3 (d) (3)
            g.prune();

            if i != 0 && !cert.mappings.is_empty() {
                // 6.1.4 (b)
                let mut mappings: BTreeMap<&[u8], Vec<&[u8]>> = BTreeMap::new();
                for &(issuer, subject) in &cert.mappings {
                    if policy_mapping > 0 {
                        if issuer == ANY_POLICY || subject == ANY_POLICY {
                            return false;
                        }
                        mappings.entry(issuer).or_default().push(subject);
                    } else {
                        // 6.1.4 (b) (3) (i)
                        g.delete_leaf(issuer);
                    }
                }
                // 6.1.4 (b) (3) (ii)
                g.prune();
                for (issuer, subjects) in mappings {
                    if let Some(matching) = g.leaf_with_policy(issuer) {
                        // 6.1.4 (b) (1)
                        g.nodes[matching].expected = subjects;
                    } else if let Some(any) = g.leaf_with_policy(ANY_POLICY) {
                        // 6.1.4 (b) (2)
                        let id = g.insert(issuer, &[any]);
                        g.nodes[id].expected = subjects;
                    }
                }
            }
        }

        if i != 0 {
            // 6.1.4 (h)
            if !cert.self_issued {
                explicit_policy = (explicit_policy - 1).max(0);
                policy_mapping = (policy_mapping - 1).max(0);
                inhibit_any_policy = (inhibit_any_policy - 1).max(0);
            }
            // 6.1.4 (i): Go's `(v > 0 || vZero) && v < counter`, that is a present v >= 0.
            if let Some(v) = cert
                .require_explicit
                .filter(|&v| v >= 0 && v < explicit_policy)
            {
                explicit_policy = v;
            }
            if let Some(v) = cert
                .inhibit_mapping
                .filter(|&v| v >= 0 && v < policy_mapping)
            {
                policy_mapping = v;
            }
            // 6.1.4 (j)
            if let Some(v) = cert
                .inhibit_any
                .filter(|&v| v >= 0 && v < inhibit_any_policy)
            {
                inhibit_any_policy = v;
            }
        }
    }

    // 6.1.5 (a)
    explicit_policy = (explicit_policy - 1).max(0);
    // 6.1.5 (b)
    if certs[0].require_explicit == Some(0) {
        explicit_policy = 0;
    }
    // 6.1.5 (g): with anyPolicy as the initial user policy set, the user-constrained set is
    // the authority-constrained one: the valid policy nodes and the anyPolicy leaf.
    let any_valid = pg.as_ref().is_some_and(|g| {
        !g.valid_policy_nodes().is_empty() || g.leaf_with_policy(ANY_POLICY).is_some()
    });
    explicit_policy != 0 || any_valid
}

#[cfg(test)]
mod tests {
    use super::*;

    const P1: &[u8] = &[0x2a, 0x03, 0x04];
    const P2: &[u8] = &[0x2a, 0x03, 0x05];

    fn cert(f: impl FnOnce(&mut ChainCert<'static>)) -> ChainCert<'static> {
        let mut c = ChainCert::default();
        f(&mut c);
        c
    }

    #[test]
    fn integers_are_twos_complement() {
        assert_eq!(int64(&[0x00]), Some(0));
        assert_eq!(int64(&[0x7f]), Some(127));
        assert_eq!(int64(&[0xff]), Some(-1));
        assert_eq!(int64(&[0x00, 0x80]), Some(128));
        assert_eq!(int64(&[]), None);
        assert_eq!(int64(&[1; 9]), None);
    }

    /// The graph cases of Go's `policiesValid` that the openssl-built chains of
    /// `tests/x509.rs` do not reach; outcomes worked through Go 1.26's code.
    #[test]
    fn policy_constraints_are_read_as_go_reads_them() {
        // (case, extension value, (requireExplicitPolicy, inhibitPolicyMapping)); Go 1.26's
        // parser (parser.go, the policyConstraints case) reads [0] only first, then [1].
        let nine = [
            0x30, 0x0e, 0x81, 0x01, 0x00, 0x80, 0x09, 1, 2, 3, 4, 5, 6, 7, 8, 9,
        ];
        type Read = Option<(Option<i64>, Option<i64>)>;
        let cases: [(&str, &[u8], Read); 7] = [
            (
                "both",
                &[0x30, 0x06, 0x80, 0x01, 0x00, 0x81, 0x01, 0x02],
                Some((Some(0), Some(2))),
            ),
            (
                "[0] only",
                &[0x30, 0x03, 0x80, 0x01, 0x03],
                Some((Some(3), None)),
            ),
            (
                "[1] only",
                &[0x30, 0x03, 0x81, 0x01, 0x00],
                Some((None, Some(0))),
            ),
            (
                "[0] after [1] is not read",
                &[0x30, 0x06, 0x81, 0x01, 0x00, 0x80, 0x01, 0x00],
                Some((None, Some(0))),
            ),
            (
                "a second [0] is not read",
                &[0x30, 0x06, 0x80, 0x01, 0x00, 0x80, 0x01, 0x05],
                Some((Some(0), None)),
            ),
            (
                "an unread field need not be an int64",
                &nine,
                Some((None, Some(0))),
            ),
            (
                "a read field must be",
                &[0x30, 0x0b, 0x80, 0x09, 1, 2, 3, 4, 5, 6, 7, 8, 9],
                None,
            ),
        ];
        for (name, value, want) in cases {
            assert_eq!(policy_constraints(value), want, "{name}");
        }
    }

    #[test]
    fn policy_graph_follows_go() {
        let leaf_p1 = || cert(|c| c.policies = vec![P1]);
        let cases: Vec<(&str, Vec<ChainCert<'static>>, bool)> = vec![
            ("a bare leaf", vec![ChainCert::default()], true),
            (
                "a bare leaf requiring an explicit policy",
                vec![cert(|c| c.require_explicit = Some(0))],
                false,
            ),
            (
                "a negative requireExplicitPolicy is ignored",
                vec![
                    ChainCert::default(),
                    cert(|c| c.require_explicit = Some(-1)),
                ],
                true,
            ),
            (
                "a self-issued intermediate does not count down",
                vec![
                    ChainCert::default(),
                    cert(|c| c.self_issued = true),
                    cert(|c| c.require_explicit = Some(2)),
                ],
                true,
            ),
            (
                "the same, not self-issued",
                vec![
                    ChainCert::default(),
                    ChainCert::default(),
                    cert(|c| c.require_explicit = Some(2)),
                ],
                false,
            ),
            (
                "an anyPolicy mapping under inhibited mapping is a deletion, not a refusal",
                vec![
                    leaf_p1(),
                    cert(|c| {
                        c.policies = vec![P1];
                        c.mappings = vec![(ANY_POLICY, P2)];
                    }),
                    cert(|c| {
                        c.policies = vec![P1];
                        c.inhibit_mapping = Some(0);
                    }),
                ],
                true,
            ),
            (
                "a mapping from anyPolicy",
                vec![
                    leaf_p1(),
                    cert(|c| {
                        c.policies = vec![P1];
                        c.mappings = vec![(ANY_POLICY, P1)];
                    }),
                ],
                false,
            ),
            (
                "a mapping on the leaf is not applied",
                vec![
                    cert(|c| {
                        c.policies = vec![P1];
                        c.mappings = vec![(P1, ANY_POLICY)];
                        c.require_explicit = Some(0);
                    }),
                    cert(|c| c.policies = vec![P1]),
                ],
                true,
            ),
        ];
        for (name, chain, want) in cases {
            assert_eq!(policies_valid(&chain), want, "{name}");
        }
    }
}
