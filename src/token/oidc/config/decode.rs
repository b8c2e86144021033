//! The `--authentication-config` file decoded as kube-apiserver decodes it: `sigs.k8s.io/yaml`
//! (YAML 1.1 scalars for unquoted values, the first document only, merge keys) turned into
//! JSON, then Kubernetes' strict, typed JSON decoding (unknown, miscased and repeated fields
//! refused; `null` leaves a field unset), with Go's error texts.

use std::cell::RefCell;
use std::fmt;

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};

use super::{FileAnonymous, FileConfig, FileIssuer, FileJwt, FilePrefixed, FileRule};
use super::{FileExtra, FileUid, FileUserRule};
use crate::error::ConfigError;
use crate::jwt::go_quote;

/// A value as `sigs.k8s.io/yaml` hands it to `encoding/json` (also the kubeconfig decoder's,
/// `crate::outbound::kubeconfig`).
#[derive(Debug, Clone)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    /// A number, and its text as a mapping key (Go's formatting of the value).
    Number(String),
    /// `.nan`, `.inf`, `-.inf` (`NaN`, `+Inf`, `-Inf`): the JSON encoding fails on them.
    NonFinite(&'static str),
    Str(String),
    Seq(Vec<Node>),
    /// Members in the order `encoding/json` reads them: sorted by name for YAML (each name
    /// once), as written for JSON (repeats kept).
    Map(Vec<Member>),
    /// A plain `<<` mapping key (YAML merge); a plain `<<` value is the string.
    Merge,
}

#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub(crate) key: String,
    pub(crate) value: Node,
    /// The 1-based line of the value (YAML; go-yaml names it in repeated-key errors).
    line: usize,
}

impl Node {
    /// The JSON kind `encoding/json` names in its type errors.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "bool",
            Node::Number(_) | Node::NonFinite(_) => "number",
            Node::Str(_) | Node::Merge => "string",
            Node::Seq(_) => "array",
            Node::Map(_) => "object",
        }
    }
}

/// `utilyaml.IsJSONBuffer`: the first byte after Unicode white space is `{`.
pub(super) fn is_json(data: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&data[..data.len().min(4096)]);
    text.trim_start_matches(char::is_whitespace)
        .starts_with('{')
}

// -----------------------------------------------------------------------------------------
// YAML

/// The first YAML document as a [`Node`], with go-yaml's strict repeated-key findings
/// (`line N: key "k" already set in map`), or the error kube-apiserver reports first.
pub(super) fn yaml_tree(data: &[u8]) -> Result<(Node, Vec<String>), ConfigError> {
    yaml_document(data, "failed to decode authentication configuration")
}

/// [`yaml_tree`] for any file: `what` leads the text of an error that is neither libyaml's
/// nor go-yaml's (`<what>: <serde_yaml_ng's text>`).
pub(crate) fn yaml_document(data: &[u8], what: &str) -> Result<(Node, Vec<String>), ConfigError> {
    // libyaml skips a UTF-8 byte order mark; serde_yaml_ng's reading of the events after
    // one is not reliable (it ends the document early), so it never sees it.
    let data = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
    // go-yaml stops at a `%YAML` directive libyaml takes.
    if let Some(e) = yaml_directive_error(data, what) {
        return Err(ConfigError::new(e));
    }
    // go-yaml's scanner refuses flow nesting past its limit as it reaches it; libyaml's
    // scanner (serde_yaml_ng's) would take minutes to get there.
    if let Some(e) = flow_depth_error(data) {
        return Err(ConfigError::new(e));
    }
    let state = RefCell::new(Yaml {
        data,
        newlines: memchr::memchr_iter(b'\n', data).collect(),
        positions: Vec::new(),
        repeated: Vec::new(),
        yaml_error: None,
        key_error: None,
        aliasing: Aliasing::new(data.len()),
        fatal: None,
    });
    let first = serde_yaml_ng::Deserializer::from_slice(data).next();
    let root = match first {
        None => Ok(Node::Null),
        Some(doc) => NodeSeed {
            state: &state,
            key: false,
        }
        .deserialize(doc),
    };
    let state = state.into_inner();
    if let Some(e) = state.fatal {
        return Err(ConfigError::new(e));
    }
    let root = root.map_err(|e| ConfigError::new(yaml_error(&e, data, what)))?;
    // go-yaml's own failures, then sigs.k8s.io/yaml's key conversion, then encoding/json's
    // refusal of NaN and infinities (first in the sorted order it encodes).
    if let Some(e) = state.yaml_error.or(state.key_error) {
        return Err(ConfigError::new(e));
    }
    if let Some(v) = first_non_finite(&root) {
        return Err(ConfigError::new(format!("json: unsupported value: {v}")));
    }
    Ok((root, state.repeated))
}

/// go-yaml's refusal of a document whose aliases make too much of it.
const EXCESSIVE_ALIASING: &str = "yaml: document contains excessive aliasing";

/// The nodes go-yaml v2 decodes (`decodeCount`) and those it decodes through an alias
/// (`aliasCount`), as far as they can be told from serde_yaml_ng, which replays an alias's
/// events without saying so.
///
/// A scalar read twice is an alias's (its text, in the input or in its event, is the same);
/// a collection whose scalars were all read before, with the same first and last scalars and
/// size as one read before, is an alias's, with everything in it. The
/// alias itself is one more decoded node, as in go-yaml. Nodes no scalar identifies (numbers,
/// booleans, nulls, empty collections) are counted as decoded; those beyond what the text
/// could hold without aliases (two nodes a byte) are counted as an alias's.
struct Aliasing {
    /// Nodes read, replays included.
    visited: usize,
    /// Aliases met (one decoded node each).
    aliases: usize,
    /// Nodes known to come from an alias.
    aliased: usize,
    /// Nodes read that go-yaml does not decode: a merge's `<<` key, a merge's sequence.
    uncounted: usize,
    /// Scalars read with an identity, and those of them read before.
    identified: usize,
    replayed: usize,
    /// The furthest in-place scalar read, and the scalars not in place already read.
    watermark: Option<usize>,
    owned: std::collections::HashSet<usize>,
    /// The collections being read.
    open: Vec<Frame>,
    /// The collections read that were not an alias's: first and last scalars, node count.
    written: std::collections::HashSet<(Scalar, Scalar, usize)>,
    /// The most nodes the text holds without aliases.
    capacity: usize,
}

/// A scalar's identity: its address, and whether that is in the input.
type Scalar = (usize, bool);

/// What [`Aliasing`] knew when a collection started, and the first and last scalars with an
/// identity in it so far.
struct Frame {
    visited: usize,
    aliases: usize,
    aliased: usize,
    identified: usize,
    replayed: usize,
    first: Option<Scalar>,
    last: Option<Scalar>,
}

impl Aliasing {
    fn new(len: usize) -> Self {
        Aliasing {
            visited: 0,
            aliases: 0,
            aliased: 0,
            uncounted: 0,
            identified: 0,
            replayed: 0,
            watermark: None,
            owned: Default::default(),
            open: Vec::new(),
            written: Default::default(),
            capacity: len.saturating_mul(2).saturating_add(2),
        }
    }

    /// A scalar read at `addr` (in the input when `in_place`): true if it was read before.
    fn scalar(&mut self, addr: usize, in_place: bool) -> bool {
        self.visited += 1;
        self.identified += 1;
        let again = if in_place {
            let again = self.watermark.is_some_and(|w| addr <= w);
            if !again {
                self.watermark = Some(addr);
            }
            again
        } else {
            !self.owned.insert(addr)
        };
        if again {
            // One alias (a decoded node), and its scalar.
            self.replayed += 1;
            self.aliased += 1;
            self.aliases += 1;
        }
        if let Some(top) = self.open.last_mut() {
            top.first.get_or_insert((addr, in_place));
            top.last = Some((addr, in_place));
        }
        again
    }

    /// A node with no identity (a number, boolean or null serde_yaml_ng resolved).
    fn anonymous(&mut self) {
        self.visited += 1;
    }

    fn open(&mut self) {
        self.open.push(Frame {
            visited: self.visited,
            aliases: self.aliases,
            aliased: self.aliased,
            identified: self.identified,
            replayed: self.replayed,
            first: None,
            last: None,
        });
        self.visited += 1;
    }

    /// A collection ends: it is an alias's if all its scalars were read before and a
    /// collection read before had the same first and last scalars and as many nodes (not
    /// one written with aliases only, as `[*a, *a]`).
    fn close(&mut self) {
        let Some(f) = self.open.pop() else { return };
        let identified = self.identified - f.identified;
        let nodes = self.visited - f.visited;
        if let (Some(first), Some(last)) = (f.first, f.last) {
            let signature = (first, last, nodes);
            if identified == self.replayed - f.replayed && self.written.contains(&signature) {
                self.aliased = f.aliased + nodes;
                self.aliases = f.aliases + 1;
            } else {
                self.written.insert(signature);
            }
        }
        if let Some(parent) = self.open.last_mut() {
            if parent.first.is_none() {
                parent.first = f.first;
            }
            parent.last = f.last.or(parent.last);
        }
    }

    /// go-yaml's test (`allowedAliasRatio`), on the counts as known.
    fn excessive(&self) -> bool {
        // The document node, the nodes read and the aliases.
        let decoded = (1 + self.visited + self.aliases).saturating_sub(self.uncounted);
        let aliased = self.aliased.max(decoded.saturating_sub(self.capacity));
        aliased > 100
            && decoded > 1000
            && aliased as f64 / decoded as f64 > allowed_alias_ratio(decoded)
    }
}

/// go-yaml v2's `allowedAliasRatio`: 99% of the decoded nodes may come from aliases up to
/// 400,000 nodes, falling to 10% at 4,000,000.
fn allowed_alias_ratio(decoded: usize) -> f64 {
    const LOW: usize = 400_000;
    const HIGH: usize = 4_000_000;
    if decoded <= LOW {
        0.99
    } else if decoded >= HIGH {
        0.10
    } else {
        0.99 - 0.89 * ((decoded - LOW) as f64 / (HIGH - LOW) as f64)
    }
}

/// go-yaml v2's refusal of the stream's first `%YAML` directive where libyaml accepts it:
/// `%YAML 1.2` (go-yaml takes 1.1 only: `found incompatible YAML document`, a parser error at
/// the directive's 0-based line), and a version number of more than two digits (`1.001`:
/// `found extremely long version number`, a scanner error, its line one higher; libyaml allows
/// nine). Only a directive that comes before anything but blank lines, comments and other
/// directives is looked at, and only when libyaml reads its line as a well-formed `%YAML`
/// directive; any other case is left to libyaml, whose answer is Go's.
///
/// What go-yaml reports first is still an error before the directive's line, or an invalid
/// byte or control character in the 512-byte blocks its reader has decoded when it reaches
/// the end of that line: the text up to there is decoded by libyaml, and such an error of its
/// is the answer.
fn yaml_directive_error(data: &[u8], what: &str) -> Option<String> {
    let (start, end, line) = first_yaml_directive(data)?;
    let problem = yaml_directive_problem(&data[start + b"%YAML".len()..end])?;
    // The bytes go-yaml's reader has decoded by then (whole characters).
    const BLOCK: usize = 512;
    let mut read = (end + 1)
        .div_ceil(BLOCK)
        .saturating_mul(BLOCK)
        .min(data.len());
    while read < data.len() && data[read] & 0xc0 == 0x80 {
        read += 1;
    }
    let seen = &data[..read];
    if let Some(Err(e)) = serde_yaml_ng::Deserializer::from_slice(seen)
        .next()
        .map(<serde::de::IgnoredAny as serde::Deserialize>::deserialize)
    {
        let text = yaml_error(&e, seen, what);
        let reader = READER_PROBLEMS
            .iter()
            .any(|p| text.strip_prefix("yaml: ") == Some(p));
        let before = e.location().is_some_and(|l| l.line() <= line);
        if reader || before {
            return Some(text);
        }
    }
    Some(match (problem, line) {
        (DirectiveProblem::Incompatible, 0) => "yaml: found incompatible YAML document".into(),
        (DirectiveProblem::Incompatible, l) => {
            format!("yaml: line {l}: found incompatible YAML document")
        }
        (DirectiveProblem::LongVersion, 0) => "yaml: found extremely long version number".into(),
        (DirectiveProblem::LongVersion, l) => {
            format!("yaml: line {}: found extremely long version number", l + 1)
        }
    })
}

/// Why go-yaml refuses a `%YAML` directive that libyaml accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
enum DirectiveProblem {
    /// A version other than 1.1 (libyaml also takes 1.2).
    Incompatible,
    /// A number of more than two digits (libyaml takes up to nine).
    LongVersion,
}

/// The first `%YAML` line of the stream as (start, end, 0-based line), if only blank lines,
/// comments and other directives come before it. Lines end at any of libyaml's breaks (CR,
/// LF, CRLF, NEL, LS, PS).
fn first_yaml_directive(data: &[u8]) -> Option<(usize, usize, usize)> {
    let mut start = 0;
    let mut line = 0;
    while start < data.len() {
        let (end, next) = line_end(data, start);
        let text = &data[start..end];
        if text.first() == Some(&b'%') {
            if text.starts_with(b"%YAML") && matches!(text.get(5), Some(b' ' | b'\t')) {
                return Some((start, end, line));
            }
        } else {
            let content = text.iter().position(|&b| b != b' ');
            if content.is_some_and(|i| text[i] != b'#') {
                return None;
            }
        }
        start = next;
        line += 1;
    }
    None
}

/// The end of the line starting at `start` (its break's offset) and the next line's start.
fn line_end(data: &[u8], start: usize) -> (usize, usize) {
    let mut i = start;
    while i < data.len() {
        let rest = &data[i..];
        let len = match rest {
            [b'\r', b'\n', ..] => 2,
            [b'\n' | b'\r', ..] => 1,
            [0xc2, 0x85, ..] => 2,
            [0xe2, 0x80, 0xa8 | 0xa9, ..] => 3,
            _ => 0,
        };
        if len > 0 {
            return (i, i + len);
        }
        i += 1;
    }
    (data.len(), data.len())
}

/// go-yaml's refusal of a `%YAML` directive's value (`rest`: the line after `%YAML`) that
/// libyaml's scanner and parser accept; `None` when both accept it or both refuse it alike.
fn yaml_directive_problem(rest: &[u8]) -> Option<DirectiveProblem> {
    let blank = |b: &u8| matches!(b, b' ' | b'\t');
    let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
    let number = |s: &[u8]| s.iter().fold(0u32, |n, d| n * 10 + u32::from(d - b'0'));
    let rest = &rest[rest.iter().take_while(|b| blank(b)).count()..];
    let major_len = digits(rest);
    // go-yaml refuses a third digit; libyaml a tenth, with the same text.
    if major_len > 2 {
        return Some(DirectiveProblem::LongVersion);
    }
    let major = number(&rest[..major_len]);
    let rest = rest[major_len..]
        .strip_prefix(b".")
        .filter(|_| major_len > 0)?;
    let minor_len = digits(rest);
    if minor_len > 2 {
        return Some(DirectiveProblem::LongVersion);
    }
    let minor = number(&rest[..minor_len]);
    // Then blanks, and a comment or the end of the line.
    let tail = &rest[minor_len..];
    let tail = &tail[tail.iter().take_while(|b| blank(b)).count()..];
    let well_formed = minor_len > 0 && (tail.is_empty() || tail[0] == b'#');
    (well_formed && major == 1 && minor == 2).then_some(DirectiveProblem::Incompatible)
}

/// go-yaml's scanner limit on flow nesting (`max_flow_level`).
const MAX_FLOW_LEVEL: usize = 10_000;

/// go-yaml's error for the first document's flow collections nested deeper than
/// [`MAX_FLOW_LEVEL`] (`yaml: line N: exceeded max depth of 10000`, N the 1-based line of the
/// opening bracket, none on the first line), found by a scan that skips a leading UTF-8 byte
/// order mark, directives, comments, quoted scalars, block scalars and brackets inside plain
/// scalars. What it cannot tell apart is left to libyaml (serde_yaml_ng's nesting limit of 128
/// applies there).
pub(crate) fn flow_depth_error(data: &[u8]) -> Option<String> {
    // Cheap way out: not enough brackets to get there.
    if memchr::memchr2_iter(b'[', b'{', data).count() <= MAX_FLOW_LEVEL {
        return None;
    }
    // libyaml and go-yaml skip a byte order mark.
    let data = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
    let mut depth = 0usize;
    let mut line = 0usize;
    let mut i = 0usize;
    // The last byte that was not a space or tab (b'\n' at a line's start), and whether
    // the line so far held anything but indentation (for a document marker).
    let mut prev = b'\n';
    let mut content = false;
    while i < data.len() {
        let c = data[i];
        let blank_before = i == 0 || matches!(data[i - 1], b' ' | b'\t' | b'\n' | b'\r');
        match c {
            b'\n' | b'\r' => {
                if c == b'\r' && data.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                line += 1;
                i += 1;
                prev = b'\n';
                // A line starting a new document ends the first one (at depth 0).
                if depth == 0
                    && content
                    && (data[i..].starts_with(b"---") || data[i..].starts_with(b"..."))
                    && data
                        .get(i + 3)
                        .is_none_or(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                {
                    return None;
                }
                continue;
            }
            b' ' | b'\t' => {
                i += 1;
                continue;
            }
            b'#' if blank_before => {
                while i < data.len() && !matches!(data[i], b'\n' | b'\r') {
                    i += 1;
                }
                continue;
            }
            // A directive (`%YAML`, `%TAG`) before the first document is not its content:
            // the `---` that follows starts that document.
            b'%' if !content
                && prev == b'\n'
                && (i == 0 || matches!(data[i - 1], b'\n' | b'\r')) =>
            {
                while i < data.len() && !matches!(data[i], b'\n' | b'\r') {
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        content = true;
        // Where a token may start: after blanks at depth 0 only after an indicator.
        let token_start = if depth > 0 {
            blank_before || matches!(prev, b'[' | b'{' | b',' | b':')
        } else {
            matches!(prev, b'\n' | b':' | b'-' | b'?') && blank_before
        };
        match c {
            b'\'' | b'"' if token_start => {
                i += 1;
                while i < data.len() {
                    match data[i] {
                        // An escape; an escaped line break is still a line.
                        b'\\' if c == b'"' => {
                            i += 1;
                            match data.get(i) {
                                Some(b'\r') if data.get(i + 1) == Some(&b'\n') => {
                                    i += 1;
                                    line += 1;
                                }
                                Some(b'\n' | b'\r') => line += 1,
                                _ => {}
                            }
                        }
                        b'\'' if c == b'\'' && data.get(i + 1) == Some(&b'\'') => i += 1,
                        q if q == c => break,
                        b'\n' => line += 1,
                        b'\r' if data.get(i + 1) != Some(&b'\n') => line += 1,
                        _ => {}
                    }
                    i += 1;
                }
                prev = c;
                i += 1;
                continue;
            }
            b'|' | b'>' if depth == 0 && token_start => {
                // A block scalar: its lines are those indented deeper than this one.
                let line_start = data[..i]
                    .iter()
                    .rposition(|b| matches!(b, b'\n' | b'\r'))
                    .map_or(0, |p| p + 1);
                let indent = data[line_start..]
                    .iter()
                    .take_while(|b| **b == b' ')
                    .count();
                while i < data.len() && !matches!(data[i], b'\n' | b'\r') {
                    i += 1;
                }
                loop {
                    let mut j = i;
                    if j < data.len() && data[j] == b'\r' {
                        j += 1;
                    }
                    if j < data.len() && data[j] == b'\n' {
                        j += 1;
                    }
                    if j == i {
                        break;
                    }
                    let spaces = data[j..].iter().take_while(|b| **b == b' ').count();
                    let rest = &data[j + spaces..];
                    let blank_line = rest.first().is_none_or(|b| matches!(b, b'\n' | b'\r'));
                    if !blank_line && spaces <= indent {
                        break;
                    }
                    line += 1;
                    i = j + spaces;
                    while i < data.len() && !matches!(data[i], b'\n' | b'\r') {
                        i += 1;
                    }
                }
                prev = b'|';
                continue;
            }
            b'[' | b'{' if token_start || depth > 0 => {
                depth += 1;
                if depth > MAX_FLOW_LEVEL {
                    return Some(if line == 0 {
                        format!("yaml: exceeded max depth of {MAX_FLOW_LEVEL}")
                    } else {
                        format!(
                            "yaml: line {}: exceeded max depth of {MAX_FLOW_LEVEL}",
                            line + 1
                        )
                    });
                }
            }
            b']' | b'}' if depth > 0 => depth -= 1,
            b'&' | b'!' if token_start => {
                // An anchor or a tag: what follows it may start a token.
                while i < data.len() && !matches!(data[i], b' ' | b'\t' | b'\n' | b'\r') {
                    if depth > 0 && matches!(data[i], b',' | b'[' | b']' | b'{' | b'}') {
                        break;
                    }
                    i += 1;
                }
                prev = if depth > 0 { b',' } else { b'\n' };
                continue;
            }
            _ => {}
        }
        prev = c;
        i += 1;
    }
    None
}

struct Yaml<'d> {
    data: &'d [u8],
    /// Offsets of the input's line feeds.
    newlines: Vec<usize>,
    /// Offsets of the scalars read in place, in document order.
    positions: Vec<usize>,
    repeated: Vec<String>,
    yaml_error: Option<String>,
    key_error: Option<String>,
    aliasing: Aliasing,
    /// go-yaml's error that ends the decoding (excessive aliasing, or the go-yaml failure
    /// met before it).
    fatal: Option<String>,
}

impl Yaml<'_> {
    /// After a node: go-yaml's refusal of excessive aliasing, if it applies now.
    fn check<E: serde::de::Error>(&mut self) -> Result<(), E> {
        if self.fatal.is_none() && self.aliasing.excessive() {
            self.fatal = Some(
                self.yaml_error
                    .clone()
                    .unwrap_or_else(|| EXCESSIVE_ALIASING.to_owned()),
            );
        }
        match self.fatal {
            Some(_) => Err(E::custom(EXCESSIVE_ALIASING)),
            None => Ok(()),
        }
    }

    fn line(&self, offset: usize) -> usize {
        1 + self.newlines.partition_point(|&nl| nl < offset)
    }

    /// A scalar serde_yaml_ng hands over in place (`s` points into the input): quoted
    /// (the bytes around it are its quotes; a plain scalar never ends before a quote,
    /// which it would include) or plain, resolved as go-yaml v2 resolves it.
    fn scalar(&mut self, s: &str) -> Node {
        let data = self.data;
        let start = (s.as_ptr() as usize).wrapping_sub(data.as_ptr() as usize);
        if start > data.len() || data.len() - start < s.len() {
            self.aliasing.scalar(s.as_ptr() as usize, false);
            return Node::Str(s.to_owned());
        }
        self.aliasing.scalar(start, true);
        self.positions.push(start);
        let end = start + s.len();
        let quoted =
            matches!(data.get(end), Some(q @ (b'"' | b'\'')) if start > 0 && data[start - 1] == *q);
        if quoted {
            return Node::Str(s.to_owned());
        }
        if let Some(tag) = tag_before(data, start)
            && (tag == "!!str" || tag == "!<tag:yaml.org,2002:str>")
        {
            return Node::Str(s.to_owned());
        }
        resolve_plain(s)
    }
}

/// The tag written before the scalar at `start` (`!!str x`, `&a !!str x`), if any: the
/// words before it back to the first that is neither an anchor nor a tag, each ending at
/// blanks or a flow indicator (so the look-back stops at the `,` or `[` before a flow item),
/// comments skipped (`x: # !!str` then `yes` on the next line is a boolean to go-yaml).
fn tag_before(data: &[u8], start: usize) -> Option<String> {
    let blank = |b: u8| matches!(b, b' ' | b'\t');
    let word = |b: u8| !blank(b) && !matches!(b, b'\n' | b'\r' | b',' | b'[' | b']' | b'{' | b'}');
    let mut end = start;
    loop {
        loop {
            while end > 0 && blank(data[end - 1]) {
                end -= 1;
            }
            if end == 0 || !matches!(data[end - 1], b'\n' | b'\r') {
                break;
            }
            // The line before: up to its comment, if it has one (on the scalar's own line,
            // a comment before the scalar would hold the scalar too).
            let line_end = end - 1;
            let line_start = data[..line_end]
                .iter()
                .rposition(|b| matches!(b, b'\n' | b'\r'))
                .map_or(0, |p| p + 1);
            let line = &data[line_start..line_end];
            end = line_start
                + line
                    .iter()
                    .enumerate()
                    .position(|(i, &b)| b == b'#' && (i == 0 || blank(line[i - 1])))
                    .unwrap_or(line.len());
        }
        let mut begin = end;
        while begin > 0 && word(data[begin - 1]) {
            begin -= 1;
        }
        match data.get(begin) {
            Some(b'&') if begin < end => end = begin,
            Some(b'!') if begin < end => {
                return Some(String::from_utf8_lossy(&data[begin..end]).into_owned());
            }
            _ => return None,
        }
    }
}

/// go-yaml v2's `resolve` for an untagged plain scalar (the YAML 1.1 subset it keeps:
/// no base-60 numbers; timestamps stay strings when decoded into `interface{}`).
fn resolve_plain(s: &str) -> Node {
    match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Node::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Node::Bool(false);
        }
        "" | "~" | "null" | "Null" | "NULL" => return Node::Null,
        ".nan" | ".NaN" | ".NAN" => return Node::NonFinite("NaN"),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Node::NonFinite("+Inf");
        }
        "-.inf" | "-.Inf" | "-.INF" => return Node::NonFinite("-Inf"),
        "<<" => return Node::Merge,
        _ => {}
    }
    match s.as_bytes()[0] {
        b'.' => match go_float(s) {
            Some(f) => Node::Number(go_float_key(f)),
            None => Node::Str(s.to_owned()),
        },
        b'0'..=b'9' | b'+' | b'-' => {
            let plain = s.replace('_', "");
            if let Some(i) = go_parse_int(&plain) {
                return Node::Number(i.to_string());
            }
            if is_yaml_float(&plain)
                && let Some(f) = go_float(&plain)
            {
                return Node::Number(go_float_key(f));
            }
            Node::Str(s.to_owned())
        }
        _ => Node::Str(s.to_owned()),
    }
}

/// `strconv.ParseInt(s, 0, 64)`, then `ParseUint(s, 0, 64)`: a sign, then `0x`, `0o`,
/// `0b` or a leading `0` (octal) or decimal digits.
fn go_parse_int(s: &str) -> Option<i128> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let b = body.as_bytes();
    let (radix, digits) = match b {
        [b'0', p, _, ..] if p.eq_ignore_ascii_case(&b'x') => (16, &body[2..]),
        [b'0', p, _, ..] if p.eq_ignore_ascii_case(&b'o') => (8, &body[2..]),
        [b'0', p, _, ..] if p.eq_ignore_ascii_case(&b'b') => (2, &body[2..]),
        [b'0', ..] => (8, &body[1..]),
        [] => return None,
        _ => (10, body),
    };
    if digits.bytes().any(|c| !(c as char).is_digit(radix)) {
        return None;
    }
    let magnitude = if digits.is_empty() {
        0
    } else {
        u64::from_str_radix(digits, radix).ok()?
    };
    let v = if neg {
        -i128::from(magnitude)
    } else {
        i128::from(magnitude)
    };
    // ParseInt's int64 range, then ParseUint's (which takes no sign).
    let fits = i64::try_from(v).is_ok() || (!neg && !s.starts_with('+'));
    fits.then_some(v)
}

/// go-yaml's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    let digits = |i: &mut usize| {
        let from = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - from
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// `strconv.ParseFloat(s, 64)` for the decimal forms go-yaml passes it: out of range is an
/// error (the scalar stays a string).
fn go_float(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// `strconv.FormatFloat(f, 'g', -1, 32)`, as `sigs.k8s.io/yaml` writes a float key.
fn go_float_key(f: f64) -> String {
    let f = f as f32; // a finite f64 beyond f32's range becomes an infinity, as in Go
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    let e = format!("{f:e}"); // shortest float32 digits: "-1.2345e6"
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{rest}e{esign}{:02}", exp.abs());
    }
    if exp < 0 {
        let zeros = "0".repeat((-exp - 1) as usize);
        return format!("{sign}0.{zeros}{digits}");
    }
    let point = exp as usize + 1;
    if digits.len() <= point {
        format!("{sign}{digits}{}", "0".repeat(point - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..point], &digits[point..])
    }
}

/// The first `NaN`/`±Inf` in the order `json.Marshal` meets them.
fn first_non_finite(n: &Node) -> Option<&'static str> {
    match n {
        Node::NonFinite(v) => Some(v),
        Node::Seq(items) => items.iter().find_map(first_non_finite),
        Node::Map(members) => members.iter().find_map(|m| first_non_finite(&m.value)),
        _ => None,
    }
}

/// Go's `%#v` of a decoded YAML value (the texts of go-yaml's and `sigs.k8s.io/yaml`'s key
/// errors).
fn go_sharp_v(n: &Node, nested: bool) -> String {
    match n {
        Node::Null if nested => "interface {}(nil)".into(),
        Node::Null => "<nil>".into(),
        Node::Bool(b) => b.to_string(),
        Node::Number(k) => k.clone(),
        Node::NonFinite(v) => (*v).into(),
        Node::Str(s) => go_quote(s),
        Node::Merge => go_quote("<<"),
        Node::Seq(items) => format!(
            "[]interface {{}}{{{}}}",
            items
                .iter()
                .map(|i| go_sharp_v(i, true))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Node::Map(members) => format!(
            "map[interface {{}}]interface {{}}{{{}}}",
            members
                .iter()
                .map(|m| format!("{}:{}", go_quote(&m.key), go_sharp_v(&m.value, true)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A YAML value (`key`: in a mapping key's place, where a plain `<<` is a merge).
#[derive(Clone, Copy)]
struct NodeSeed<'a, 'd> {
    state: &'a RefCell<Yaml<'d>>,
    key: bool,
}

impl<'de> DeserializeSeed<'de> for NodeSeed<'_, '_> {
    type Value = Node;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NodeSeed<'_, '_> {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Node, E> {
        self.anonymous(Node::Null)
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Node, E> {
        self.anonymous(Node::Null)
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Node, E> {
        self.anonymous(Node::Bool(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Node, E> {
        self.anonymous(Node::Number(v.to_string()))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Node, E> {
        self.anonymous(Node::Number(v.to_string()))
    }
    fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<Node, E> {
        self.anonymous(Node::Number(v.to_string()))
    }
    fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Node, E> {
        self.anonymous(Node::Number(v.to_string()))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Node, E> {
        self.anonymous(if v.is_nan() {
            Node::NonFinite("NaN")
        } else if v.is_infinite() {
            Node::NonFinite(if v > 0.0 { "+Inf" } else { "-Inf" })
        } else {
            Node::Number(go_float_key(v))
        })
    }
    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Node, E> {
        let mut s = self.state.borrow_mut();
        let node = s.scalar(v);
        s.check()?;
        Ok(match node {
            Node::Merge if !self.key => Node::Str("<<".into()),
            n => n,
        })
    }
    // Not in place: an escape, a block scalar or a folded line, never plain text that
    // go-yaml would resolve to anything but a string.
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Node, E> {
        let mut s = self.state.borrow_mut();
        // The text is the event's own: the same address each time an alias replays it.
        s.aliasing.scalar(v.as_ptr() as usize, false);
        s.check()?;
        Ok(Node::Str(v.to_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        self.open()?;
        let seed = NodeSeed { key: false, ..self };
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(seed)? {
            items.push(item);
        }
        self.close()?;
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        self.open()?;
        let mut members = Members::default();
        while let Some(key) = map.next_key_seed(NodeSeed { key: true, ..self })? {
            let (before, fallback) = {
                let s = self.state.borrow();
                (s.positions.len(), s.positions.last().copied().unwrap_or(0))
            };
            let value = map.next_value_seed(NodeSeed { key: false, ..self })?;
            let mut s = self.state.borrow_mut();
            let line = s.line(s.positions.get(before).copied().unwrap_or(fallback));
            match key {
                Node::Merge => {
                    // go-yaml decodes neither the `<<` nor a sequence of maps to merge.
                    s.aliasing.uncounted += 1 + usize::from(matches!(value, Node::Seq(_)));
                    merge(&mut s, &mut members, value)
                }
                key => match key_text(&key, &value) {
                    Ok(k) => insert(
                        &mut s,
                        &mut members,
                        Member {
                            key: k,
                            value,
                            line,
                        },
                        &key,
                    ),
                    Err(KeyError::Yaml(e)) => {
                        s.yaml_error.get_or_insert(e);
                    }
                    Err(KeyError::Convert(e)) => {
                        s.key_error.get_or_insert(e);
                    }
                },
            }
        }
        self.close()?;
        Ok(Node::Map(members.0.into_values().collect()))
    }
}

impl NodeSeed<'_, '_> {
    /// A scalar without identity, counted.
    fn anonymous<E: serde::de::Error>(self, node: Node) -> Result<Node, E> {
        let mut s = self.state.borrow_mut();
        s.aliasing.anonymous();
        s.check()?;
        Ok(node)
    }

    fn open<E: serde::de::Error>(self) -> Result<(), E> {
        let mut s = self.state.borrow_mut();
        s.aliasing.open();
        s.check()
    }

    fn close<E: serde::de::Error>(self) -> Result<(), E> {
        let mut s = self.state.borrow_mut();
        s.aliasing.close();
        s.check()
    }
}

enum KeyError {
    /// go-yaml's (while decoding).
    Yaml(String),
    /// `sigs.k8s.io/yaml`'s (while converting to JSON).
    Convert(String),
}

/// The JSON name `sigs.k8s.io/yaml` makes of a mapping key.
fn key_text(key: &Node, value: &Node) -> Result<String, KeyError> {
    match key {
        Node::Str(s) => Ok(s.clone()),
        Node::Bool(b) => Ok(b.to_string()),
        Node::Number(k) => Ok(k.clone()),
        Node::NonFinite(v) => Ok(match *v {
            "NaN" => ".nan",
            "+Inf" => ".inf",
            _ => "-.inf",
        }
        .into()),
        Node::Merge => Ok("<<".into()),
        Node::Null => Err(KeyError::Convert(format!(
            "unsupported map key of type: %!s(<nil>), key: <nil>, value: {}",
            go_sharp_v(value, false)
        ))),
        Node::Seq(_) | Node::Map(_) => Err(KeyError::Yaml(format!(
            "yaml: invalid map key: {}",
            go_sharp_v(key, false)
        ))),
    }
}

/// A mapping's members while it is read, by name (so in the order `encoding/json` reads a
/// YAML mapping's: sorted, each name once).
#[derive(Default)]
struct Members(std::collections::BTreeMap<String, Member>);

/// Sets a member; a name already set is go-yaml's strict `already set` finding (the value
/// kept is the last, as the non-strict conversion that feeds the JSON decoding keeps it).
fn insert(s: &mut Yaml<'_>, members: &mut Members, m: Member, key: &Node) {
    match members.0.get_mut(&m.key) {
        Some(slot) => {
            s.repeated.push(format!(
                "line {}: key {} already set in map",
                m.line,
                go_sharp_v(key, false)
            ));
            *slot = m;
        }
        None => {
            members.0.insert(m.key.clone(), m);
        }
    }
}

/// go-yaml's merge (`<<: map` or `<<: [map, …]`, earlier maps taking precedence); a name
/// already present is reported as repeated, as go-yaml's strict decoding does.
fn merge(s: &mut Yaml<'_>, members: &mut Members, value: Node) {
    let maps = match value {
        Node::Map(m) => vec![m],
        Node::Seq(items) => {
            let mut maps = Vec::new();
            for item in items.into_iter().rev() {
                match item {
                    Node::Map(m) => maps.push(m),
                    _ => {
                        s.yaml_error.get_or_insert(MERGE_ERROR.into());
                        return;
                    }
                }
            }
            maps
        }
        _ => {
            s.yaml_error.get_or_insert(MERGE_ERROR.into());
            return;
        }
    };
    for m in maps.into_iter().flatten() {
        let key = Node::Str(m.key.clone());
        insert(s, members, m, &key);
    }
}

const MERGE_ERROR: &str = "yaml: map merge requires map or sequence of maps as the value";

/// go-yaml's text for a YAML syntax error: `yaml: line N: <problem>`, N being libyaml's
/// 0-based line of the problem (1-based for the scanner's problems), or of its context when
/// that is 0; no line when both are 0.
fn yaml_error(e: &serde_yaml_ng::Error, data: &[u8], what: &str) -> String {
    let text = e.to_string();
    let loc = e.location();
    if text.starts_with("unknown anchor")
        && let Some(l) = &loc
    {
        let rest = data.get(l.index()..).unwrap_or_default();
        let rest = rest.strip_prefix(b"*").unwrap_or(rest);
        let len = rest
            .iter()
            .position(|b| b" \t\r\n,[]{}".contains(b))
            .unwrap_or(rest.len());
        return format!(
            "yaml: unknown anchor '{}' referenced",
            String::from_utf8_lossy(&rest[..len])
        );
    }
    // libyaml's text is `<problem> at line L column C, <context> …`; a problem at the file's
    // first byte has no position, so its context follows it directly.
    let problem = text
        .split(" at line ")
        .next()
        .unwrap_or_default()
        .split(" at position ")
        .next()
        .unwrap_or_default()
        .split(", while ")
        .next()
        .unwrap_or_default();
    let scanner = SCANNER_PROBLEMS.contains(&problem);
    let parser = PARSER_PROBLEMS.contains(&problem);
    if READER_PROBLEMS.contains(&problem) {
        return format!("yaml: {problem}");
    }
    if !scanner && !parser {
        return format!("{what}: {text}");
    }
    let problem = go_yaml_spelling(problem);
    // serde_yaml_ng writes 1-based lines: the problem's mark, then the context's.
    let problem_line = loc.as_ref().map_or(0, |l| l.line().saturating_sub(1));
    let context_line = text
        .split(", ")
        .nth(1)
        .and_then(|c| c.split(" at line ").nth(1))
        .and_then(|l| l.split(' ').next())
        .and_then(|l| l.parse::<usize>().ok())
        .map_or(0, |l| l.saturating_sub(1));
    let line = if problem_line != 0 {
        problem_line + usize::from(scanner)
    } else {
        context_line
    };
    if line == 0 {
        format!("yaml: {problem}")
    } else {
        format!("yaml: line {line}: {problem}")
    }
}

/// A libyaml problem as go-yaml v2 words it: the same texts but one, misspelled in go-yaml's
/// scanner (`did not find expected hexdecimal number`).
fn go_yaml_spelling(problem: &str) -> &str {
    match problem {
        "did not find expected hexadecimal number" => "did not find expected hexdecimal number",
        other => other,
    }
}

/// libyaml's scanner problems (go-yaml reports their line one higher than the parser's).
const SCANNER_PROBLEMS: &[&str] = &[
    "block sequence entries are not allowed in this context",
    "could not find expected ':'",
    "could not find expected directive name",
    "did not find URI escaped octet",
    "did not find expected '!'",
    "did not find expected alphabetic or numeric character",
    "did not find expected comment or line break",
    "did not find expected digit or '.' character",
    "did not find expected hexadecimal number",
    "did not find expected tag URI",
    "did not find expected version number",
    "did not find expected whitespace or line break",
    "did not find expected whitespace",
    "did not find the expected '>'",
    "found a tab character that violates indentation",
    "found a tab character where an indentation space is expected",
    "found an incorrect leading UTF-8 octet",
    "found an incorrect trailing UTF-8 octet",
    "found an indentation indicator equal to 0",
    "found character that cannot start any token",
    "found extremely long version number",
    "found invalid Unicode character escape code",
    "found unexpected ':'",
    "found unexpected document indicator",
    "found unexpected end of stream",
    "found unexpected non-alphabetical character",
    "found unknown directive name",
    "found unknown escape character",
    "mapping keys are not allowed in this context",
    "mapping values are not allowed in this context",
];

/// libyaml's parser problems.
const PARSER_PROBLEMS: &[&str] = &[
    "did not find expected ',' or ']'",
    "did not find expected ',' or '}'",
    "did not find expected '-' indicator",
    "did not find expected <document start>",
    "did not find expected <stream-start>",
    "did not find expected key",
    "did not find expected node content",
    "found duplicate %TAG directive",
    "found duplicate %YAML directive",
    "found incompatible YAML document",
    "found undefined tag handle",
];

/// libyaml's reader problems (no position in go-yaml's text).
const READER_PROBLEMS: &[&str] = &[
    "control characters are not allowed",
    "incomplete UTF-8 octet sequence",
    "invalid leading UTF-8 octet",
    "invalid length of a UTF-8 sequence",
    "invalid trailing UTF-8 octet",
    "invalid Unicode character",
    "input is too long",
];

// -----------------------------------------------------------------------------------------
// JSON

/// A JSON file as a [`Node`] (members as written, repeats kept); a syntax error is
/// `meta.Interpret`'s (`couldn't get version/kind; json parse error: …`, serde_json's
/// description of it).
pub(super) fn json_tree(data: &[u8]) -> Result<Node, ConfigError> {
    // `encoding/json` reads each byte of invalid UTF-8 in a string as U+FFFD, where serde_json
    // refuses the file; outside a string, U+FFFD is a syntax error for both.
    let lossy;
    let data = match std::str::from_utf8(data) {
        Ok(_) => data,
        Err(_) => {
            lossy = crate::api::go_utf8_lossy(data);
            lossy.as_bytes()
        }
    };
    let mut de = serde_json::Deserializer::from_slice(data);
    let root = JsonSeed
        .deserialize(&mut de)
        .and_then(|n| de.end().map(|()| n))
        .map_err(|e| {
            ConfigError::new(format!("couldn't get version/kind; json parse error: {e}"))
        })?;
    Ok(root)
}

#[derive(Clone, Copy)]
struct JsonSeed;

impl<'de> DeserializeSeed<'de> for JsonSeed {
    type Value = Node;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for JsonSeed {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Number(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Number(v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Number(v.to_string()))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(JsonSeed)? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut members = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(JsonSeed)?;
            members.push(Member {
                key,
                value,
                line: 0,
            });
        }
        Ok(Node::Map(members))
    }
}

// -----------------------------------------------------------------------------------------
// apiVersion and kind

/// `apiVersion` and `kind` as `meta.Interpret` reads them from a decoded document (each `""`
/// when absent or `null`): the names matched as Go's encoding/json matches field names (any
/// ASCII case, `ſ` for `s`, the Kelvin sign for `k`), the last match winning, and the first
/// value of another type than a string refused with encoding/json's text.
pub(crate) fn interpret_type_meta(root: &Node) -> Result<(String, String), ConfigError> {
    let members: &[Member] = match root {
        Node::Null => &[],
        Node::Map(m) => m,
        other => {
            return Err(ConfigError::new(format!(
                "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
                other.kind()
            )));
        }
    };
    let (mut api_version, mut kind) = (String::new(), String::new());
    let mut error = None;
    for m in members {
        let (field, name) = if crate::jwt::json::go_field_name_eq(&m.key, "apiVersion") {
            (&mut api_version, "apiVersion")
        } else if crate::jwt::json::go_field_name_eq(&m.key, "kind") {
            (&mut kind, "kind")
        } else {
            continue;
        };
        match &m.value {
            Node::Str(s) => s.clone_into(field),
            // encoding/json leaves a string as it was for a null.
            Node::Null => {}
            other => {
                error.get_or_insert(format!(
                    "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go struct field .{name} of type string",
                    other.kind()
                ));
            }
        }
    }
    match error {
        Some(e) => Err(ConfigError::new(e)),
        None => Ok((api_version, kind)),
    }
}

/// `schema.ParseGroupVersion`: `""` and `"/"` are the empty group and version, `v` the core
/// group's version, `g/v` a group's; more than one `/` is refused with Go's text.
pub(crate) fn parse_group_version(gv: &str) -> Result<(&str, &str), ConfigError> {
    match gv.matches('/').count() {
        _ if gv.is_empty() || gv == "/" => Ok(("", "")),
        0 => Ok(("", gv)),
        1 => Ok(gv.split_once('/').unwrap_or_default()),
        _ => Err(ConfigError::new(format!(
            "unexpected GroupVersion string: {gv}"
        ))),
    }
}

/// `meta.Interpret` (`apiVersion` and `kind` matched case-insensitively, as
/// `encoding/json` matches names, the last match winning), then the registered-kind check:
/// the `apiserver.config.k8s.io` version of an `AuthenticationConfiguration`.
pub(super) fn type_meta(root: &Node, data: &[u8]) -> Result<&'static str, ConfigError> {
    let (api_version, kind) = interpret_type_meta(root)?;
    let (group, version) = parse_group_version(&api_version)?;
    let whole = String::from_utf8_lossy(data);
    if kind.is_empty() {
        return Err(ConfigError::new(format!(
            "Object 'Kind' is missing in '{whole}'"
        )));
    }
    if version.is_empty() {
        return Err(ConfigError::new(format!(
            "Object 'apiVersion' is missing in '{whole}'"
        )));
    }
    const GROUP: &str = "apiserver.config.k8s.io";
    let known = match version {
        "v1" => "v1",
        "v1beta1" => "v1beta1",
        "v1alpha1" => "v1alpha1",
        _ => "",
    };
    if group == GROUP && !known.is_empty() {
        if kind == "AuthenticationConfiguration" {
            return Ok(known);
        }
        // Another configuration kind of the group decodes as that kind (its own fields are
        // not checked here).
        let other = matches!(
            (known, kind.as_str()),
            ("v1", "AdmissionConfiguration" | "EncryptionConfiguration")
                | (_, "AuthorizationConfiguration" | "TracingConfiguration")
        );
        if other {
            return Err(ConfigError::new(format!(
                "expected AuthenticationConfiguration, got *apiserver.{kind}"
            )));
        }
    }
    let gv = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    Err(ConfigError::new(format!(
        "no kind {} is registered for version {} in scheme \"pkg/runtime/scheme.go:111\"",
        go_quote(&kind),
        go_quote(&gv)
    )))
}

// -----------------------------------------------------------------------------------------
// The typed decoding

/// `encoding/json` into the `v1` types with `sigs.k8s.io/json`'s strict findings.
pub(super) struct Typed {
    version: &'static str,
    json: bool,
    type_error: Option<String>,
    strict: Vec<String>,
}

impl Typed {
    pub(super) fn new(version: &'static str, json: bool) -> Self {
        Self {
            version,
            json,
            type_error: None,
            strict: Vec::new(),
        }
    }

    /// The error kube-apiserver reports, if any: the first type error; else the strict
    /// findings (go-yaml's repeated keys first).
    pub(super) fn finish(self, repeated: Vec<String>) -> Result<(), ConfigError> {
        if let Some(e) = self.type_error {
            return Err(ConfigError::new(e));
        }
        let mut strict = Vec::new();
        if !repeated.is_empty() {
            strict.push(format!(
                "yaml: unmarshal errors:\n  {}",
                repeated.join("\n  ")
            ));
        }
        strict.extend(self.strict);
        if strict.is_empty() {
            Ok(())
        } else {
            Err(ConfigError::new(format!(
                "strict decoding error: {}",
                strict.join(", ")
            )))
        }
    }

    /// `json: cannot unmarshal <kind> into Go struct field <Owner>.<path> of type <type>`
    /// (the first one only).
    fn mismatch(&mut self, got: &Node, owner: &str, path: &str, ty: &str) {
        if self.type_error.is_none() {
            self.type_error = Some(format!(
                "json: cannot unmarshal {} into Go struct field {owner}.{path} of type {ty}",
                got.kind()
            ));
        }
    }

    /// A named type of the API version (`v1.Issuer`).
    fn ty(&self, name: &str) -> String {
        format!("{}.{name}", self.version)
    }

    /// Each member of a struct value: known names (exactly as spelled) to `f`, the others
    /// (and, in JSON, repeats) as strict findings; `at` is the struct's path (`jwt[0].`).
    fn fields<'n>(
        &mut self,
        members: &'n [Member],
        at: &str,
        known: &[&'static str],
        mut f: impl FnMut(&mut Self, &'static str, &'n Node),
    ) {
        let mut seen: Vec<&str> = Vec::new();
        for m in members {
            match known.iter().find(|k| **k == m.key) {
                Some(k) => {
                    if self.json && seen.contains(k) {
                        self.strict
                            .push(format!("duplicate field {}", go_quote(&format!("{at}{k}"))));
                    }
                    seen.push(k);
                    f(self, k, &m.value);
                }
                None => self.strict.push(format!(
                    "unknown field {}",
                    go_quote(&format!("{at}{}", m.key))
                )),
            }
        }
    }

    /// A struct-typed value: its members; `null` leaves the struct as it is.
    fn object<'n>(
        &mut self,
        v: &'n Node,
        owner: &str,
        path: &str,
        ty: &str,
    ) -> Option<&'n [Member]> {
        match v {
            Node::Map(m) => Some(m),
            Node::Null => None,
            other => {
                let ty = self.ty(ty);
                self.mismatch(other, owner, path, &ty);
                None
            }
        }
    }

    /// A list: `null` is nil (`None`); each element through `f`.
    fn list<'n, T>(
        &mut self,
        v: &'n Node,
        owner: &str,
        path: &str,
        elem: &str,
        mut f: impl FnMut(&mut Self, usize, &'n Node) -> T,
    ) -> Option<Vec<T>> {
        match v {
            Node::Seq(items) => Some(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| f(self, i, item))
                    .collect(),
            ),
            Node::Null => None,
            other => {
                self.mismatch(other, owner, path, &format!("[]{elem}"));
                None
            }
        }
    }

    /// A string (or a named string type `ty`): `null` leaves it as it is.
    fn string(&mut self, v: &Node, owner: &str, path: &str, ty: &str, out: &mut String) {
        match v {
            Node::Str(s) => s.clone_into(out),
            Node::Merge => "<<".clone_into(out),
            Node::Null => {}
            other => self.mismatch(other, owner, path, ty),
        }
    }

    /// A `*string`: `null` is nil.
    fn opt_string(&mut self, v: &Node, owner: &str, path: &str, out: &mut Option<String>) {
        match v {
            Node::Null => *out = None,
            Node::Str(s) => *out = Some(s.clone()),
            Node::Merge => *out = Some("<<".into()),
            other => self.mismatch(other, owner, path, "string"),
        }
    }

    pub(super) fn config(&mut self, root: &Node) -> FileConfig {
        let mut c = FileConfig::default();
        let Node::Map(members) = root else {
            return c;
        };
        const OWNER: &str = "AuthenticationConfiguration";
        self.fields(
            members,
            "",
            &["apiVersion", "kind", "jwt", "anonymous"],
            |d, k, v| match k {
                "jwt" => {
                    let elem = d.ty("JWTAuthenticator");
                    c.jwt = d
                        .list(v, OWNER, "jwt", &elem, |d, i, e| {
                            match d.object(e, OWNER, "jwt", "JWTAuthenticator") {
                                Some(m) => d.jwt(m, &format!("jwt[{i}].")),
                                None => FileJwt::default(),
                            }
                        })
                        .unwrap_or_default();
                }
                "anonymous" => match v {
                    Node::Null => c.anonymous = None,
                    _ => {
                        if let Some(m) = d.object(v, OWNER, "anonymous", "AnonymousAuthConfig") {
                            c.anonymous = Some(d.anonymous(m));
                        }
                    }
                },
                // Read by `type_meta`.
                _ => {}
            },
        );
        c
    }

    fn anonymous(&mut self, members: &[Member]) -> FileAnonymous {
        const OWNER: &str = "AnonymousAuthConfig";
        let mut a = FileAnonymous::default();
        self.fields(
            members,
            "anonymous.",
            &["enabled", "conditions"],
            |d, k, v| match k {
                "enabled" => match v {
                    Node::Bool(b) => a.enabled = *b,
                    Node::Null => {}
                    other => d.mismatch(other, OWNER, "anonymous.enabled", "bool"),
                },
                _ => {
                    let elem = d.ty("AnonymousAuthCondition");
                    a.conditions = d.list(v, OWNER, "anonymous.conditions", &elem, |d, i, e| {
                        let mut path = String::new();
                        if let Some(m) =
                            d.object(e, OWNER, "anonymous.conditions", "AnonymousAuthCondition")
                        {
                            d.fields(
                                m,
                                &format!("anonymous.conditions[{i}]."),
                                &["path"],
                                |d, _, v| {
                                    d.string(
                                        v,
                                        "AnonymousAuthCondition",
                                        "anonymous.conditions.path",
                                        "string",
                                        &mut path,
                                    )
                                },
                            );
                        }
                        path
                    });
                }
            },
        );
        a
    }

    fn jwt(&mut self, members: &[Member], at: &str) -> FileJwt {
        const OWNER: &str = "JWTAuthenticator";
        let mut j = FileJwt::default();
        let known = [
            "issuer",
            "claimValidationRules",
            "claimMappings",
            "userValidationRules",
        ];
        self.fields(members, at, &known, |d, k, v| match k {
            "issuer" => {
                if let Some(m) = d.object(v, OWNER, "jwt.issuer", "Issuer") {
                    d.issuer(m, &format!("{at}issuer."), &mut j.issuer);
                }
            }
            "claimValidationRules" => {
                let elem = d.ty("ClaimValidationRule");
                j.claim_validation_rules = d
                    .list(v, OWNER, "jwt.claimValidationRules", &elem, |d, i, e| {
                        let mut r = FileRule::default();
                        if let Some(m) =
                            d.object(e, OWNER, "jwt.claimValidationRules", "ClaimValidationRule")
                        {
                            d.rule(m, &format!("{at}claimValidationRules[{i}]."), &mut r);
                        }
                        r
                    })
                    .unwrap_or_default();
            }
            "claimMappings" => {
                if let Some(m) = d.object(v, OWNER, "jwt.claimMappings", "ClaimMappings") {
                    d.mappings(m, &format!("{at}claimMappings."), &mut j);
                }
            }
            _ => {
                let elem = d.ty("UserValidationRule");
                j.user_validation_rules = d
                    .list(v, OWNER, "jwt.userValidationRules", &elem, |d, i, e| {
                        let mut r = FileUserRule::default();
                        if let Some(m) =
                            d.object(e, OWNER, "jwt.userValidationRules", "UserValidationRule")
                        {
                            let mut message = String::new();
                            d.fields(
                                m,
                                &format!("{at}userValidationRules[{i}]."),
                                &["expression", "message"],
                                |d, k, v| {
                                    let out = if k == "expression" {
                                        &mut r.expression
                                    } else {
                                        &mut message
                                    };
                                    let path = format!("jwt.userValidationRules.{k}");
                                    d.string(v, "UserValidationRule", &path, "string", out);
                                },
                            );
                        }
                        r
                    })
                    .unwrap_or_default();
            }
        });
        j
    }

    fn issuer(&mut self, members: &[Member], at: &str, i: &mut FileIssuer) {
        const OWNER: &str = "Issuer";
        let known = [
            "url",
            "discoveryURL",
            "certificateAuthority",
            "audiences",
            "audienceMatchPolicy",
            "egressSelectorType",
        ];
        self.fields(members, at, &known, |d, k, v| {
            let path = format!("jwt.issuer.{k}");
            match k {
                "url" => d.string(v, OWNER, &path, "string", &mut i.url),
                "discoveryURL" => d.opt_string(v, OWNER, &path, &mut i.discovery_url),
                "certificateAuthority" => {
                    d.string(v, OWNER, &path, "string", &mut i.certificate_authority)
                }
                "audiences" => {
                    i.audiences = d
                        .list(v, OWNER, &path, "string", |d, _, e| {
                            let mut a = String::new();
                            d.string(e, OWNER, &path, "string", &mut a);
                            a
                        })
                        .unwrap_or_default();
                }
                "audienceMatchPolicy" => {
                    let ty = d.ty("AudienceMatchPolicyType");
                    d.string(v, OWNER, &path, &ty, &mut i.audience_match_policy);
                }
                _ => {
                    let ty = d.ty("EgressSelectorType");
                    d.string(v, OWNER, &path, &ty, &mut i.egress_selector_type);
                }
            }
        });
    }

    fn rule(&mut self, members: &[Member], at: &str, r: &mut FileRule) {
        let known = ["claim", "requiredValue", "expression", "message"];
        self.fields(members, at, &known, |d, k, v| {
            let out = match k {
                "claim" => &mut r.claim,
                "requiredValue" => &mut r.required_value,
                "expression" => &mut r.expression,
                _ => &mut r.message,
            };
            let path = format!("jwt.claimValidationRules.{k}");
            d.string(v, "ClaimValidationRule", &path, "string", out);
        });
    }

    fn mappings(&mut self, members: &[Member], at: &str, j: &mut FileJwt) {
        const OWNER: &str = "ClaimMappings";
        let m = &mut j.claim_mappings;
        self.fields(
            members,
            at,
            &["username", "groups", "uid", "extra"],
            |d, k, v| match k {
                "username" | "groups" => {
                    let path = format!("jwt.claimMappings.{k}");
                    let out = if k == "username" {
                        &mut m.username
                    } else {
                        &mut m.groups
                    };
                    if let Some(members) = d.object(v, OWNER, &path, "PrefixedClaimOrExpression") {
                        d.prefixed(members, &format!("{at}{k}."), &path, out);
                    }
                }
                "uid" => {
                    let path = "jwt.claimMappings.uid";
                    if let Some(members) = d.object(v, OWNER, path, "ClaimOrExpression") {
                        d.uid(members, &format!("{at}uid."), &mut m.uid);
                    }
                }
                _ => {
                    let elem = d.ty("ExtraMapping");
                    let path = "jwt.claimMappings.extra";
                    m.extra = d
                        .list(v, OWNER, path, &elem, |d, i, e| {
                            let mut x = FileExtra::default();
                            if let Some(members) = d.object(e, OWNER, path, "ExtraMapping") {
                                d.fields(
                                    members,
                                    &format!("{at}extra[{i}]."),
                                    &["key", "valueExpression"],
                                    |d, k, v| {
                                        let path = format!("jwt.claimMappings.extra.{k}");
                                        let out = if k == "key" {
                                            &mut x.key
                                        } else {
                                            &mut x.value_expression
                                        };
                                        d.string(v, "ExtraMapping", &path, "string", out);
                                    },
                                );
                            }
                            x
                        })
                        .unwrap_or_default();
                }
            },
        );
    }

    fn prefixed(&mut self, members: &[Member], at: &str, path: &str, p: &mut FilePrefixed) {
        const OWNER: &str = "PrefixedClaimOrExpression";
        self.fields(
            members,
            at,
            &["claim", "prefix", "expression"],
            |d, k, v| {
                let path = format!("{path}.{k}");
                match k {
                    "claim" => d.string(v, OWNER, &path, "string", &mut p.claim),
                    "prefix" => d.opt_string(v, OWNER, &path, &mut p.prefix),
                    _ => d.string(v, OWNER, &path, "string", &mut p.expression),
                }
            },
        );
    }

    fn uid(&mut self, members: &[Member], at: &str, u: &mut FileUid) {
        self.fields(members, at, &["claim", "expression"], |d, k, v| {
            let path = format!("jwt.claimMappings.uid.{k}");
            let out = if k == "claim" {
                &mut u.claim
            } else {
                &mut u.expression
            };
            d.string(v, "ClaimOrExpression", &path, "string", out);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JSON file with invalid UTF-8 inside a string decodes as Go's `encoding/json` decodes
    /// it (each bad byte one U+FFFD; Go printed `"x\ufffd"` for `"x\xff"`); outside a string
    /// it stays a syntax error.
    #[test]
    fn json_strings_with_invalid_utf8_decode_as_go() {
        let cases: &[(&str, &[u8], Result<&str, ()>)] = &[
            ("one bad byte", b"{\"a\":\"x\xff\"}", Ok("x\u{fffd}")),
            // A cut-short sequence is two errors to Go, one to `from_utf8_lossy`.
            (
                "a cut-short sequence",
                b"{\"a\":\"\xe2\x82y\"}",
                Ok("\u{fffd}\u{fffd}y"),
            ),
            (
                "valid text",
                "{\"a\":\"caf\u{e9}\"}".as_bytes(),
                Ok("caf\u{e9}"),
            ),
            ("outside a string", b"{\"a\":\xff}", Err(())),
        ];
        for (name, data, want) in cases {
            let got = json_tree(data).map(|root| match root {
                Node::Map(m) => match &m[0].value {
                    Node::Str(s) => s.clone(),
                    other => panic!("{name}: {}", other.kind()),
                },
                _ => panic!("{name}: not a map"),
            });
            match want {
                Ok(want) => assert_eq!(got.as_deref().ok(), Some(*want), "{name}"),
                Err(()) => assert!(got.is_err(), "{name}"),
            }
        }
    }

    /// go-yaml v2's resolution of plain scalars (`resolve`), as the Go oracle decoded them
    /// into a string field: `Str` accepted, the others refused as bool or number.
    #[test]
    fn plain_scalars_resolve_as_go_yaml_v2() {
        let cases: &[(&str, &str)] = &[
            ("yes", "bool"),
            ("Y", "bool"),
            ("n", "bool"),
            ("NO", "bool"),
            ("Off", "bool"),
            ("yEs", "string"),
            ("oN", "string"),
            ("O", "string"),
            ("o", "string"),
            ("nULL", "string"),
            ("Null", "null"),
            ("~", "null"),
            ("012", "number"),
            ("08", "number"),
            ("0o12", "number"),
            ("+12", "number"),
            ("1e3", "number"),
            ("1.", "number"),
            ("0.", "number"),
            (".5", "number"),
            ("-.5", "number"),
            ("+.5e+3", "number"),
            ("1_000.5", "number"),
            ("1__0", "number"),
            ("0_", "number"),
            ("_1", "string"),
            ("0b101", "number"),
            ("-0b101", "number"),
            ("0x1F", "number"),
            ("-0x1f", "number"),
            ("99999999999999999999", "number"),
            ("0xffffffffffffffffffff", "string"),
            ("1e400", "string"),
            ("1e-400", "number"),
            ("+", "string"),
            (".", "string"),
            ("=", "string"),
            ("NaN", "string"),
            ("inf", "string"),
            (".iNf", "string"),
            ("1:20", "string"),
            ("2001-12-14", "string"),
        ];
        for &(s, want) in cases {
            let got = match resolve_plain(s) {
                Node::NonFinite(_) => "number",
                n => n.kind(),
            };
            assert_eq!(got, want, "{s:?}");
        }
        assert!(matches!(resolve_plain(".NaN"), Node::NonFinite("NaN")));
        assert!(matches!(resolve_plain("-.inf"), Node::NonFinite("-Inf")));
    }

    /// `strconv.FormatFloat(f, 'g', -1, 32)` (Go's output for each).
    #[test]
    fn float_keys_format_as_go() {
        let cases: &[(f64, &str)] = &[
            (1.5, "1.5"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (1234567.0, "1.234567e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1e21, "1e+21"),
            (1e20, "1e+20"),
            (-2.5, "-2.5"),
            (100.0, "100"),
            (std::f64::consts::PI, "3.1415927"),
            // Beyond float32's range (checked with Go's strconv.FormatFloat(f, 'g', -1, 32)).
            (1e39, "+Inf"),
            (-1e39, "-Inf"),
            (1e-50, "0"),
            (3.4e38, "3.4e+38"),
        ];
        for &(f, want) in cases {
            assert_eq!(go_float_key(f), want, "{f}");
        }
    }

    /// `yaml_document` on `data`, in a thread that must finish within `secs` (a regression
    /// to quadratic decoding fails instead of hanging the suite).
    fn decode_within(data: Vec<u8>, secs: u64) -> Result<Node, String> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(
                yaml_document(&data, "kubeconfig")
                    .map(|(root, _)| root)
                    .map_err(|e| e.to_string()),
            );
        });
        rx.recv_timeout(std::time::Duration::from_secs(secs))
            .expect("decoding took too long")
    }

    fn member<'n>(root: &'n Node, name: &str) -> &'n Node {
        match root {
            Node::Map(m) => &m.iter().find(|m| m.key == name).expect(name).value,
            _ => panic!("not a map"),
        }
    }

    const HEAD: &str = "apiVersion: v1\nkind: Config\n";

    /// `x: &a [x × k]` then `z: [*a × m]`.
    fn aliases(item: &str, k: usize, m: usize) -> String {
        format!(
            "{HEAD}x: &a [{}]\nz: [{}]\n",
            vec![item; k].join(","),
            vec!["*a"; m].join(",")
        )
    }

    /// go-yaml v2's `allowedAliasRatio` refusal, with Go's text, where `sigs.k8s.io/yaml`
    /// v1.6.0 (go.yaml.in/yaml/v2 v2.4.4) refused (each answer checked with YAMLToJSON);
    /// the documents it decodes still decode. Before, a 15 KB bomb took a minute and a GB.
    #[test]
    fn excessive_aliasing_is_refused_as_go_yaml_refuses_it() {
        let laughs = {
            let mut t = format!("{HEAD}a: &a [{}]\n", ["\"lol\""; 9].join(","));
            for (n, p) in "bcdefghi".chars().zip("abcdefgh".chars()) {
                t += &format!("{n}: &{n} [{}]\n", vec![format!("*{p}"); 9].join(","));
            }
            t
        };
        let merges: String = (0..2000)
            .map(|i| format!("- {{<<: [*b, *b], c: {i}}}\n"))
            .collect();
        let cases: &[(&str, String, bool)] = &[
            ("3000 x 3000 bomb", aliases("x", 3000, 3000), false),
            ("billion laughs", laughs, false),
            (
                "300 x 151 (Go's last accepted)",
                aliases("x", 300, 151),
                true,
            ),
            (
                "300 x 152 (Go's first refused)",
                aliases("x", 300, 152),
                false,
            ),
            ("quoted items, 300 x 152", aliases("'x'", 300, 152), false),
            (
                "escaped items, 300 x 152",
                aliases("\"\\t\"", 300, 152),
                false,
            ),
            (
                "escaped items, 300 x 151",
                aliases("\"\\t\"", 300, 151),
                true,
            ),
            ("maps, 100 x 100", aliases("{k: v}", 100, 100), true),
            ("1000 x 3", aliases("x", 1000, 3), true),
            ("ints, 200 x 3000", aliases("1", 200, 3000), false),
            ("empty lists, 200 x 3000", aliases("[]", 200, 3000), false),
            ("ints, 100 x 100", aliases("1", 100, 100), true),
            (
                "a scalar 29000 times",
                format!("{HEAD}a: &a x\nz: [{}]\n", vec!["*a"; 29000].join(",")),
                true,
            ),
            (
                "merged maps",
                format!("{HEAD}base: &b {{a: 1, b: 2}}\nitems:\n{merges}"),
                true,
            ),
        ];
        for (name, text, accepted) in cases {
            let got = decode_within(text.clone().into_bytes(), 10);
            match accepted {
                true => assert!(got.is_ok(), "{name}: {got:?}"),
                false => assert_eq!(
                    got.err().as_deref(),
                    Some("yaml: document contains excessive aliasing"),
                    "{name}"
                ),
            }
        }
    }

    /// A str tag is looked for only just before the scalar (a flow list without spaces was
    /// quadratic: a 1 MiB kubeconfig took minutes), and never in a comment (Go's answers).
    #[test]
    fn str_tags_are_found_as_go_yaml_finds_them() {
        let cases: &[(&str, &str, &str)] = &[
            ("a comment is no tag", "enabled: # !!str\n  yes\n", "true"),
            (
                "a tag on the line before",
                "enabled: !!str\n  yes\n",
                "\"yes\"",
            ),
            (
                "a tag then a comment",
                "enabled: !!str # c\n  yes\n",
                "\"yes\"",
            ),
            (
                "tags in a flow list",
                "enabled: [!!str yes,!!str 1, &a !!str on, *a,on]\n",
                "[\"yes\", \"1\", \"on\", \"on\", true]",
            ),
            ("an anchor alone", "enabled: &a yes\n", "true"),
        ];
        for (name, text, want) in cases {
            let root = decode_within(format!("{HEAD}{text}").into_bytes(), 5).unwrap();
            let got = match member(&root, "enabled") {
                Node::Seq(items) => format!(
                    "[{}]",
                    items
                        .iter()
                        .map(|i| go_sharp_v(i, false))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                n => go_sharp_v(n, false),
            };
            assert_eq!(got, *want, "{name}");
        }
        let flat = format!("{HEAD}x: [{}]\n", vec!["a"; 300_000].join(","));
        let root = decode_within(flat.into_bytes(), 10).unwrap();
        assert!(matches!(member(&root, "x"), Node::Seq(items) if items.len() == 300_000));
    }

    /// go-yaml v2 takes only `%YAML 1.1` and version numbers of two digits; libyaml also takes
    /// 1.2 and up to nine digits. The stream's first `%YAML` directive is refused with Go's
    /// text, after what go-yaml reports before it: an error on an earlier line, an invalid
    /// byte or control character in the 512-byte blocks it has read (each answer Go's, from
    /// `runtime.Decode` with kube-apiserver's strict codec).
    #[test]
    fn yaml_directives_are_refused_as_go_yaml_refuses_them() {
        const R: &str =
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n";
        let long_comment = "#".repeat(700);
        let cases: &[(&str, String, Result<(), &str>)] = &[
            (
                "1.2",
                format!("%YAML 1.2\n---\n{R}"),
                Err("yaml: found incompatible YAML document"),
            ),
            (
                "1.2 after comments, line 3",
                format!("# c\n\n  # d\n%YAML 1.2\n---\n{R}"),
                Err("yaml: line 3: found incompatible YAML document"),
            ),
            (
                "1.02",
                format!("%YAML 1.02\n---\n{R}"),
                Err("yaml: found incompatible YAML document"),
            ),
            (
                "01.2",
                format!("%YAML 01.2\n---\n{R}"),
                Err("yaml: found incompatible YAML document"),
            ),
            (
                "blanks and a comment",
                format!("%YAML \t 1.2 # c\n---\n{R}"),
                Err("yaml: found incompatible YAML document"),
            ),
            (
                "a tab, CRLF",
                format!("%YAML\t1.2\r\n---\r\n{R}"),
                Err("yaml: found incompatible YAML document"),
            ),
            (
                "CR lines",
                format!("%YAML 1.2\r---\r{R}"),
                Err("yaml: found incompatible YAML document"),
            ),
            (
                "a comment right after",
                format!("%YAML 1.2#x\n---\n{R}"),
                Err("yaml: found incompatible YAML document"),
            ),
            (
                "alone",
                "%YAML 1.2".into(),
                Err("yaml: found incompatible YAML document"),
            ),
            (
                "no document start",
                format!("%YAML 1.2\n{R}"),
                Err("yaml: found incompatible YAML document"),
            ),
            (
                "after a %TAG",
                format!("%TAG ! !x\n%YAML 1.2\n---\n{R}"),
                Err("yaml: line 1: found incompatible YAML document"),
            ),
            (
                "after a line separator in a comment",
                format!("# a\u{2028}%YAML 1.2\n---\n{R}"),
                Err("yaml: line 1: found incompatible YAML document"),
            ),
            (
                "then 1.1",
                format!("%YAML 1.2\n%YAML 1.1\n---\n{R}"),
                Err("yaml: found incompatible YAML document"),
            ),
            (
                "a syntax error later",
                "# c\n%YAML 1.2\n--- [\n".to_owned(),
                Err("yaml: line 1: found incompatible YAML document"),
            ),
            (
                "deep nesting later",
                format!("%YAML 1.2\n--- {}\n", "[".repeat(20_000)),
                Err("yaml: found incompatible YAML document"),
            ),
            (
                "a control character in the first block",
                format!("%YAML 1.2\n---\n{R}x: \"\u{1}\"\n"),
                Err("yaml: control characters are not allowed"),
            ),
            (
                "a control character past the first block",
                format!("%YAML 1.2\n---\n{R}{long_comment}\n\u{1}"),
                Err("yaml: found incompatible YAML document"),
            ),
            (
                "a duplicate %TAG before",
                format!("%TAG ! !x\n%TAG ! !y\n%YAML 1.2\n---\n{R}"),
                Err("yaml: line 1: found duplicate %TAG directive"),
            ),
            (
                "a tab line before",
                format!("# c\n\t\n%YAML 1.2\n---\n{R}"),
                Err("yaml: line 2: found character that cannot start any token"),
            ),
            (
                "an unknown directive before",
                format!("%FOO\n%YAML 1.2\n---\n{R}"),
                Err("yaml: found unknown directive name"),
            ),
            (
                "indented",
                format!(" %YAML 1.2\n---\n{R}"),
                Err("yaml: found character that cannot start any token"),
            ),
            (
                "1.001",
                format!("%YAML 1.001\n---\n{R}"),
                Err("yaml: found extremely long version number"),
            ),
            (
                "001.1",
                format!("%YAML 001.1\n---\n{R}"),
                Err("yaml: found extremely long version number"),
            ),
            (
                "1.123 on line 2",
                format!("# a\n%YAML 1.123\n---\n{R}"),
                Err("yaml: line 2: found extremely long version number"),
            ),
            (
                "ten digits",
                format!("%YAML 1.0000000000\n---\n{R}"),
                Err("yaml: found extremely long version number"),
            ),
            (
                "1.2 then text",
                format!("%YAML 1.2 x\n---\n{R}"),
                Err("yaml: did not find expected comment or line break"),
            ),
            (
                "no minor",
                format!("%YAML 1.\n---\n{R}"),
                Err("yaml: did not find expected version number"),
            ),
            (
                "2.0",
                format!("%YAML 2.0\n---\n{R}"),
                Err("yaml: found incompatible YAML document"),
            ),
            (
                "1.1 then 1.2",
                format!("%YAML 1.1\n%YAML 1.2\n---\n{R}"),
                Err("yaml: line 1: found duplicate %YAML directive"),
            ),
            ("1.1", format!("# c\n%YAML 1.1\n---\n{R}"), Ok(())),
            ("1.01", format!("%YAML 1.01\n---\n{R}"), Ok(())),
            (
                "1.2 in a later document",
                format!("{R}...\n%YAML 1.2\n---\nx: 1\n"),
                Ok(()),
            ),
            (
                "1.2 in a block scalar",
                format!("{R}x: |\n  %YAML 1.2\n"),
                Ok(()),
            ),
        ];
        for (name, text, want) in cases {
            let got = yaml_tree(text.as_bytes())
                .map(|_| ())
                .map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(str::to_owned), "{name}");
        }
    }

    /// Flow nesting past go-yaml's 10000 levels is Go's scanner error (its line: that of
    /// the bracket past the limit, none on the first line), found before libyaml's scanner
    /// spends minutes on it; brackets in comments, quoted, block and plain scalars are text,
    /// as they are to Go (Go's answers for each).
    #[test]
    fn flow_nesting_past_go_yamls_limit_is_refused_with_its_text() {
        let deep = |n: usize| "[".repeat(n);
        let cases: &[(&str, String, Result<(), &str>)] = &[
            (
                "100k brackets on line 3",
                format!("{HEAD}x: {}", deep(100_000)),
                Err("yaml: line 3: exceeded max depth of 10000"),
            ),
            (
                "1 MiB of brackets on line 1",
                deep(1 << 20),
                Err("yaml: exceeded max depth of 10000"),
            ),
            (
                "10001 closed",
                format!("{HEAD}x: {}{}\n", deep(10_001), "]".repeat(10_001)),
                Err("yaml: line 3: exceeded max depth of 10000"),
            ),
            (
                "maps and lists, line 4",
                format!("{HEAD}x:\n{}\n", "  {a: [".repeat(6000)),
                Err("yaml: line 4: exceeded max depth of 10000"),
            ),
            (
                "CRLF lines",
                format!(
                    "{}\r\n\r\nx: {}",
                    HEAD.replace('\n', "\r\n"),
                    "{".repeat(10_001)
                ),
                Err("yaml: line 5: exceeded max depth of 10000"),
            ),
            (
                "CR lines",
                format!("a: 1\rb: 2\rx: {}", "{".repeat(10_001)),
                Err("yaml: line 3: exceeded max depth of 10000"),
            ),
            ("quoted", format!("{HEAD}x: \"{}\"\n", deep(20_000)), Ok(())),
            (
                "single-quoted",
                format!("{HEAD}x: '{}'\n", deep(20_000)),
                Ok(()),
            ),
            (
                "a comment",
                format!("{HEAD}# {}\nx: 1\n", deep(20_000)),
                Ok(()),
            ),
            (
                "a plain scalar",
                format!("{HEAD}x: a{}\n", deep(20_000)),
                Ok(()),
            ),
            (
                "a plain scalar with a quote",
                format!("{HEAD}x: it's {}\n", deep(20_000)),
                Ok(()),
            ),
            (
                "a block scalar",
                format!("{HEAD}x: |\n  {}\n\n  b\nz: 1\n", deep(20_000)),
                Ok(()),
            ),
            (
                "a later document",
                format!("{HEAD}---\nx: {}", deep(20_000)),
                Ok(()),
            ),
            (
                "after a directive",
                format!("%YAML 1.1\n--- {}", deep(10_001)),
                Err("yaml: line 2: exceeded max depth of 10000"),
            ),
            (
                "after a comment and directives",
                format!(
                    "# c\n%YAML 1.1\n%TAG ! tag:x,2000:\n---\nx: {}",
                    deep(10_001)
                ),
                Err("yaml: line 5: exceeded max depth of 10000"),
            ),
            (
                "an escaped line feed in a double-quoted scalar",
                format!("a: 1\nx: \"a\\\nb\"\ny: {}", deep(10_001)),
                Err("yaml: line 4: exceeded max depth of 10000"),
            ),
            (
                "an escaped CRLF in a double-quoted scalar",
                format!("a: 1\r\nx: \"a\\\r\nb\"\r\ny: {}", deep(10_001)),
                Err("yaml: line 4: exceeded max depth of 10000"),
            ),
            (
                "an escaped CR in a double-quoted scalar",
                format!("a: 1\rx: \"a\\\rb\"\ry: {}", deep(10_001)),
                Err("yaml: line 4: exceeded max depth of 10000"),
            ),
        ];
        for (name, text, want) in cases {
            let got = decode_within(text.clone().into_bytes(), 10);
            match want {
                Ok(()) => assert!(got.is_ok(), "{name}: {got:?}"),
                Err(e) => assert_eq!(got.err().as_deref(), Some(*e), "{name}"),
            }
        }
        // A UTF-8 byte order mark is skipped by the scan itself (the ConfigMap reader hands it
        // the bytes as they are).
        for (name, text, want) in [
            (
                "a BOM",
                format!("\u{feff}x: {}", deep(10_001)),
                "yaml: exceeded max depth of 10000",
            ),
            (
                "a BOM, line 3",
                format!("\u{feff}a: 1\nb: 2\nx: {}", deep(10_001)),
                "yaml: line 3: exceeded max depth of 10000",
            ),
        ] {
            let got = flow_depth_error(text.as_bytes());
            assert_eq!(got.as_deref(), Some(want), "{name}");
        }
        // Within Go's limit, serde_yaml_ng's nesting limit of 128 still applies.
        let got = decode_within(
            format!("{HEAD}x: {}{}\n", deep(200), "]".repeat(200)).into_bytes(),
            10,
        );
        assert!(got.unwrap_err().contains("recursion limit exceeded"));
    }
}
