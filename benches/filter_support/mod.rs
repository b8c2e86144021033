//! Deciding whether a bench's extra, non-criterion measurement (an on-CPU loop, a one-shot
//! load) should run: only under `cargo bench` (criterion gets `--bench`; `cargo test` runs the
//! bench targets without it, as a smoke test), and only when the command line's criterion
//! filter selects it, so that `cargo bench --all-features -- 'verify/'` runs no extra of
//! another bench.
//!
//! The filter is criterion's positional argument: the first argument that is neither a flag
//! nor the value of one of criterion 0.5's options that take a value. Criterion reads it as a
//! regular expression; without the `regex` crate this module understands the subset that
//! filters use in practice: literal text, `^` and `$` anchors, `.*` gaps, `\`-escaped
//! characters and top-level `|` alternatives (a lone `.` is read as itself). A filter with
//! other syntax (`[`, `(`, `+`, `?`, `{`) selects no extra; set `KUBE_AUTHN_BENCH_EXTRAS=1` to
//! run the extras whatever the filter (`KUBE_AUTHN_BENCH_EXTRAS=0` skips them).

/// Criterion 0.5 options whose value is the next argument (unless written `--opt=value`).
const TAKES_VALUE: &[&str] = &[
    "-c",
    "--color",
    "-s",
    "--save-baseline",
    "-b",
    "--baseline",
    "--baseline-lenient",
    "--format",
    "--profile-time",
    "--load-baseline",
    "--sample-size",
    "--warm-up-time",
    "--measurement-time",
    "--nresamples",
    "--noise-threshold",
    "--confidence-level",
    "--significance-level",
    "--plotting-backend",
    "--output-format",
];

/// Whether the extra measurement called `name` (for example `token_cache/hit_on_cpu`) runs,
/// given this process's arguments. Prints a line saying why when it does not, under
/// `cargo bench`.
pub fn extra_selected(name: &str) -> bool {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match std::env::var("KUBE_AUTHN_BENCH_EXTRAS").as_deref() {
        Ok("1") => return true,
        Ok("0") => {
            println!("{name}: skipped (KUBE_AUTHN_BENCH_EXTRAS=0)");
            return false;
        }
        _ => {}
    }
    if !args.iter().any(|a| a == "--bench") {
        return false;
    }
    if args.iter().any(|a| a == "--list" || a == "--test") {
        return false;
    }
    let exact = args.iter().any(|a| a == "--exact");
    let filter = filter(&args);
    let selected = match filter.as_deref() {
        None | Some("") => true,
        Some(f) if exact => f == name,
        Some(f) => matches(f, name).unwrap_or(false),
    };
    if !selected {
        println!(
            "{name}: skipped (filter {:?} does not select it; KUBE_AUTHN_BENCH_EXTRAS=1 runs it)",
            filter.unwrap_or_default()
        );
    }
    selected
}

/// Criterion's positional filter argument, if any.
fn filter(args: &[String]) -> Option<String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--" {
            return it.next().cloned();
        }
        if a.starts_with('-') && a.len() > 1 {
            if !a.contains('=') && TAKES_VALUE.contains(&a.as_str()) {
                it.next();
            }
            continue;
        }
        return Some(a.clone());
    }
    None
}

/// Whether `filter` (the subset of regular-expression syntax described above) matches
/// somewhere in `name`; `None` when it uses syntax outside that subset.
fn matches(filter: &str, name: &str) -> Option<bool> {
    let mut any = false;
    for alternative in split_top_level(filter)? {
        any |= matches_one(&alternative, name)?;
    }
    Some(any)
}

/// A pattern piece: literal text, or a `.*` gap.
#[derive(PartialEq)]
enum Piece {
    Lit(String),
    Gap,
}

fn split_top_level(filter: &str) -> Option<Vec<String>> {
    let mut out = vec![String::new()];
    let mut chars = filter.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let next = chars.next()?;
                let last = out.last_mut().unwrap();
                last.push('\\');
                last.push(next);
            }
            '|' => out.push(String::new()),
            '[' | ']' | '(' | ')' | '+' | '?' | '{' | '}' => return None,
            c => out.last_mut().unwrap().push(c),
        }
    }
    Some(out)
}

fn matches_one(pattern: &str, name: &str) -> Option<bool> {
    let mut p = pattern;
    let anchored_start = p.starts_with('^');
    if anchored_start {
        p = &p[1..];
    }
    let anchored_end = p.ends_with('$') && !p.ends_with("\\$");
    if anchored_end {
        p = &p[..p.len() - 1];
    }
    let mut pieces = vec![Piece::Lit(String::new())];
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let next = chars.next()?;
                if next.is_ascii_alphanumeric() {
                    return None; // \d, \w, \b, …
                }
                push_lit(&mut pieces, next);
            }
            '.' if chars.peek() == Some(&'*') => {
                chars.next();
                pieces.push(Piece::Gap);
                pieces.push(Piece::Lit(String::new()));
            }
            '^' | '$' | '*' => return None,
            c => push_lit(&mut pieces, c),
        }
    }
    let lits: Vec<&str> = pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Lit(s) => Some(s.as_str()),
            Piece::Gap => None,
        })
        .collect();
    // Literals separated by gaps: the first at the start when anchored, the last at the end
    // when anchored, the rest in order in between.
    let (first, rest) = lits.split_first().unwrap();
    let mut pos = if anchored_start {
        if !name.starts_with(first) {
            return Some(false);
        }
        first.len()
    } else {
        match name.find(first) {
            Some(i) => i + first.len(),
            None => return Some(false),
        }
    };
    if rest.is_empty() {
        let end_ok = if anchored_start {
            pos == name.len()
        } else {
            name.ends_with(first)
        };
        return Some(!anchored_end || end_ok);
    }
    let (last, middle) = rest.split_last().unwrap();
    for lit in middle {
        match name[pos..].find(lit) {
            Some(i) => pos += i + lit.len(),
            None => return Some(false),
        }
    }
    Some(if anchored_end {
        name.len() >= pos + last.len() && name.ends_with(last)
    } else {
        name[pos..].contains(last)
    })
}

fn push_lit(pieces: &mut [Piece], c: char) {
    if let Some(Piece::Lit(s)) = pieces.last_mut() {
        s.push(c);
    }
}
