//! How each kind of fact is written: numbers, sizes, dates and durations for people, names
//! framed, escaped and elided with a digest, paths joined outside the frames.

use std::fmt;

use super::escape::{escaped, invisible};
use super::name::{Link, PathName};

pub(super) fn write_bytes(f: &mut fmt::Formatter<'_>, n: u64) -> fmt::Result {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return write!(f, "{n} byte{}", if n == 1 { "" } else { "s" });
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    write!(f, "{value:.1} {}", UNITS[unit])
}

pub(super) fn write_duration(
    f: &mut fmt::Formatter<'_>,
    duration: std::time::Duration,
) -> fmt::Result {
    let secs = duration.as_secs();
    let pair = |f: &mut fmt::Formatter<'_>, big: u64, unit: &str, small: u64, small_unit: &str| {
        if small == 0 {
            write!(f, "{big} {unit}")
        } else {
            write!(f, "{big} {unit} {small} {small_unit}")
        }
    };
    match secs {
        0 => write!(f, "{} ms", duration.subsec_millis()),
        1..60 => write!(f, "{secs} s"),
        60..3600 => pair(f, secs / 60, "min", secs % 60, "s"),
        3600..86_400 => pair(f, secs / 3600, "h", (secs % 3600) / 60, "min"),
        _ => {
            let days = secs / 86_400;
            let unit = if days == 1 { "day" } else { "days" };
            pair(f, days, unit, (secs % 86_400) / 3600, "h")
        }
    }
}

/// Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

pub(super) fn write_date(f: &mut fmt::Formatter<'_>, seconds: i64) -> fmt::Result {
    let days = seconds.div_euclid(86_400);
    let secs_of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    write!(
        f,
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        secs_of_day / 3600,
        (secs_of_day % 3600) / 60
    )
}

/// The most characters of one name (or one path component) shown in full (an escape counts
/// as one); a longer one is shown as its first `NAME_HEAD` and last `NAME_TAIL` characters
/// around `<… N characters elided, digest D …>`.
const NAME_CAP: usize = 80;
const NAME_HEAD: usize = 56;
/// The end of a file's name is where its extension sits.
const NAME_TAIL: usize = 16;
/// The most components of a path shown in full; a deeper path is shown as its first
/// `PATH_HEAD` and last `PATH_TAIL` components around `<… N components elided, digest D …>`.
const PATH_CAP: usize = 12;
const PATH_HEAD: usize = 3;
const PATH_TAIL: usize = 6;

fn write_unit(f: &mut fmt::Formatter<'_>, c: char) -> fmt::Result {
    if escaped(c) {
        write!(f, "<U+{:04X}>", u32::from(c))
    } else {
        fmt::Write::write_char(f, c)
    }
}

/// `«text»`, escaped and elided.
pub(super) fn write_framed(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    f.write_str("«")?;
    let count = text.chars().count();
    if count <= NAME_CAP {
        for c in text.chars() {
            write_unit(f, c)?;
        }
    } else {
        for c in text.chars().take(NAME_HEAD) {
            write_unit(f, c)?;
        }
        write!(
            f,
            "<… {} characters elided, digest {} …>",
            count - NAME_HEAD - NAME_TAIL,
            Digest::of([text.as_bytes()])
        )?;
        for c in text.chars().skip(count - NAME_TAIL) {
            write_unit(f, c)?;
        }
    }
    f.write_str("»")
}

/// The first 64 bits of SHA-256 over the whole of what an elision hides a part of, in hex:
/// two names (or paths) that differ only where they are elided still render apart. Each part
/// is hashed after its length, so a path's components cannot be regrouped into another path
/// of the same digest.
pub(super) struct Digest([u8; 8]);

impl Digest {
    fn of<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> Self {
        use sha2::Digest as _;
        let mut hasher = sha2::Sha256::new();
        for part in parts {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part);
        }
        let mut short = [0; 8];
        short.copy_from_slice(&hasher.finalize()[..8]);
        Self(short)
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
    }
}

/// `«a»/«b»` (relative) or `/«a»/«b»` (absolute), each component framed; `.` alone for a
/// relative path of no components, `/` alone for the root.
pub(super) fn write_path(f: &mut fmt::Formatter<'_>, path: &PathName) -> fmt::Result {
    let components = path.components();
    match (path.is_absolute(), components.is_empty()) {
        (false, true) => return f.write_str("."),
        (true, true) => return f.write_str("/"),
        (true, false) => f.write_str("/")?,
        (false, false) => {}
    }
    let write_all = |f: &mut fmt::Formatter<'_>, parts: &[String], first: bool| {
        for (index, part) in parts.iter().enumerate() {
            if index > 0 || !first {
                f.write_str("/")?;
            }
            write_framed(f, part)?;
        }
        Ok(())
    };
    if components.len() <= PATH_CAP {
        return write_all(f, components, true);
    }
    write_all(f, &components[..PATH_HEAD], true)?;
    let kind: &[u8] = if path.is_absolute() { b"/" } else { b"" };
    write!(
        f,
        "/<… {} components elided, digest {} …>",
        components.len() - PATH_HEAD - PATH_TAIL,
        Digest::of(std::iter::once(kind).chain(components.iter().map(String::as_bytes)))
    )?;
    write_all(f, &components[components.len() - PATH_TAIL..], false)
}

/// An operator's value, unframed: only control, line-breaking and invisible characters are
/// escaped, so the question stays one readable line.
pub(super) fn write_configured(f: &mut fmt::Formatter<'_>, value: &str) -> fmt::Result {
    write_operator_text(f, value)?;
    f.write_str(" (server configuration)")
}

/// A link: its configured base escaped as [`write_configured`] does (without a `/` at its
/// end), then each segment after a `/`; a segment of dots only has every dot escaped, so it
/// cannot step outside the base.
pub(super) fn write_link(f: &mut fmt::Formatter<'_>, link: &Link) -> fmt::Result {
    write_operator_text(f, link.base().as_str().trim_end_matches('/'))?;
    for segment in link.segments() {
        f.write_str("/")?;
        let text = segment.as_str();
        if text.bytes().all(|b| b == b'.') {
            text.chars().try_for_each(|_| f.write_str("<U+002E>"))?;
        } else {
            f.write_str(text)?;
        }
    }
    Ok(())
}

/// An operator's text, unframed: control, line-breaking and invisible characters escaped.
fn write_operator_text(f: &mut fmt::Formatter<'_>, value: &str) -> fmt::Result {
    value.chars().try_for_each(|c| {
        if c.is_control() || (c.is_whitespace() && c != ' ') || invisible(u32::from(c)) {
            write!(f, "<U+{:04X}>", u32::from(c))
        } else {
            fmt::Write::write_char(f, c)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::question::{Fact, Name, PathName};

    fn name(text: &str) -> String {
        Fact::name(Name::new(text)).to_string()
    }

    #[test]
    fn sizes_and_dates_render_for_people() {
        assert_eq!(Fact::bytes(12).to_string(), "12 bytes");
        assert_eq!(Fact::bytes(1536).to_string(), "1.5 KiB");
        assert_eq!(Fact::bytes(1).to_string(), "1 byte");
        assert_eq!(Fact::bytes(0).to_string(), "0 bytes");
        assert_eq!(Fact::bytes(2).to_string(), "2 bytes");
        assert_eq!(Fact::bytes(5 * 1024 * 1024).to_string(), "5.0 MiB");
        assert_eq!(Fact::date_unix(0).to_string(), "1970-01-01 00:00 UTC");
        assert_eq!(
            Fact::date_unix(1_796_041_800).to_string(),
            "2026-11-30 12:30 UTC"
        );
        assert_eq!(
            Fact::date_unix(951_782_400).to_string(),
            "2000-02-29 00:00 UTC"
        );
    }

    #[test]
    fn timestamps_and_durations_render_for_people() {
        use std::time::{Duration, UNIX_EPOCH};
        let moment = UNIX_EPOCH + Duration::from_secs(1_796_041_800);
        assert_eq!(Fact::timestamp(moment).to_string(), "2026-11-30 12:30 UTC");
        assert_eq!(
            Fact::timestamp(UNIX_EPOCH - Duration::from_secs(86_400)).to_string(),
            "1969-12-31 00:00 UTC"
        );
        let shown = |secs: u64| Fact::duration(Duration::from_secs(secs)).to_string();
        assert_eq!(
            Fact::duration(Duration::from_millis(750)).to_string(),
            "750 ms"
        );
        assert_eq!(shown(45), "45 s");
        assert_eq!(shown(300), "5 min");
        assert_eq!(shown(330), "5 min 30 s");
        assert_eq!(shown(9000), "2 h 30 min");
        assert_eq!(shown(7200), "2 h");
        assert_eq!(shown(86_400), "1 day");
        assert_eq!(shown(3 * 86_400 + 4 * 3600 + 59), "3 days 4 h");
    }

    #[test]
    fn absolute_paths_are_shown_absolute() {
        let absolute = PathName::from_slashes("/data/x.txt");
        let relative = PathName::from_slashes("data/x.txt");
        assert!(absolute.is_absolute() && !relative.is_absolute());
        assert_eq!(absolute.components(), relative.components());
        assert_eq!(absolute, PathName::absolute(["data", "x.txt"]));
        assert_eq!(
            Fact::path(absolute.clone()).to_string(),
            "caller-supplied path /«data»/«x.txt»"
        );
        assert_eq!(
            Fact::path(relative.clone()).to_string(),
            "caller-supplied path «data»/«x.txt»"
        );
        assert_ne!(absolute, relative);
        assert_eq!(
            Fact::path(PathName::from_slashes("/")).to_string(),
            "caller-supplied path /"
        );
        // A component spelling the root is one framed component, not the separator.
        assert_eq!(
            Fact::path(PathName::new(["/data", "x.txt"])).to_string(),
            "caller-supplied path «/data»/«x.txt»"
        );
        let deep = |path: PathName| Fact::path(path).to_string();
        let parts: Vec<String> = (1..=15).map(|n| format!("d{n}")).collect();
        let (abs, rel) = (
            deep(PathName::absolute(parts.clone())),
            deep(PathName::new(parts)),
        );
        assert!(abs.starts_with("caller-supplied path /«d1»/«d2»/«d3»/<… 6 components elided"));
        assert_eq!(abs.replacen("path /", "path ", 1).len(), rel.len());
        assert_ne!(
            abs.replacen("path /", "path ", 1),
            rel,
            "the digests differ too"
        );
    }

    #[test]
    fn a_component_cannot_imitate_the_separator() {
        let one = Fact::path(PathName::new(["a»/«b"])).to_string();
        let two = Fact::path(PathName::new(["a", "b"])).to_string();
        let slash = Fact::path(PathName::new(["a/b"])).to_string();
        assert_eq!(one, "caller-supplied path «a<U+00BB>/<U+00AB>b»");
        assert_eq!(two, "caller-supplied path «a»/«b»");
        assert_eq!(slash, "caller-supplied path «a/b»");
        assert_ne!(one, two);
        assert_ne!(slash, two);
    }

    #[test]
    fn long_names_and_deep_paths_are_elided_visibly() {
        let long = format!("{}{}", "a".repeat(90), "end.txt");
        assert_eq!(
            name(&long),
            format!(
                "caller-supplied name «{}<… 25 characters elided, digest {} …>{}end.txt»",
                "a".repeat(56),
                Digest::of([long.as_bytes()]),
                "a".repeat(9)
            )
        );
        assert_eq!(
            name(&"b".repeat(80)),
            format!("caller-supplied name «{}»", "b".repeat(80))
        );
        let deep: Vec<String> = (1..=15).map(|n| format!("d{n}")).collect();
        let digest =
            Digest::of(std::iter::once(b"".as_slice()).chain(deep.iter().map(String::as_bytes)));
        assert_eq!(
            Fact::path(PathName::new(deep)).to_string(),
            format!(
                "caller-supplied path «d1»/«d2»/«d3»/<… 6 components elided, digest {digest} …>/«d10»/«d11»/«d12»/«d13»/«d14»/«d15»"
            )
        );
        // Escapes count as one character each, so a name of invisible characters is capped too.
        let hidden = name(&"\u{200B}".repeat(200));
        assert!(
            hidden.contains("<… 128 characters elided, digest "),
            "{hidden}"
        );
    }

    #[test]
    fn the_digest_is_sha256_of_the_whole_in_hex() {
        // SHA-256 of the 8-byte big-endian length 3 and then "abc", first 8 bytes.
        use sha2::Digest as _;
        let mut whole = 3u64.to_be_bytes().to_vec();
        whole.extend_from_slice(b"abc");
        let expected: String = sha2::Sha256::digest(&whole)[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(Digest::of([b"abc".as_slice()]).to_string(), expected);
        assert_eq!(expected.len(), 16);
        // Components are hashed after their lengths: regrouping them changes the digest.
        assert_ne!(
            Digest::of([b"ab".as_slice(), b"c"]).to_string(),
            Digest::of([b"a".as_slice(), b"bc"]).to_string()
        );
    }

    #[test]
    fn two_long_names_differing_only_in_the_middle_render_apart() {
        let one = format!("{}{}{}", "q".repeat(60), "first draft", "r".repeat(30));
        let two = format!("{}{}{}", "q".repeat(60), "final draft", "r".repeat(30));
        assert_ne!(name(&one), name(&two));
        // Positive control: without their digests, the two renderings are the same text.
        let strip = |shown: String| {
            let start = shown.find(", digest ").unwrap();
            let end = shown.find(" …>").unwrap();
            format!("{}{}", &shown[..start], &shown[end..])
        };
        assert_eq!(strip(name(&one)), strip(name(&two)));
        // The same for two deep paths that differ only in an elided component.
        let path = |middle: &str| {
            let mut parts: Vec<String> = (1..=15).map(|n| format!("d{n}")).collect();
            parts[6] = middle.to_owned();
            Fact::path(PathName::new(parts)).to_string()
        };
        assert_ne!(path("keep"), path("wipe"));
        assert_eq!(strip(path("keep")), strip(path("wipe")));
    }

    /// A small deterministic generator (xorshift), so the property below runs the same cases
    /// on every run and a failure names the seed.
    struct Cases(u64);

    impl Cases {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
            from[(self.next() % from.len() as u64) as usize]
        }

        /// A name built from pieces that imitate frames, separators, escapes and elisions,
        /// sometimes with a long middle.
        fn name(&mut self) -> String {
            const PIECES: &[&str] = &[
                "a",
                "b",
                "/",
                "«",
                "»",
                "》",
                "《",
                "∕",
                "⧸",
                "⁄",
                "／",
                "<",
                ">",
                "U+2215",
                "<U+2215>",
                "…",
                " characters elided",
                ", digest ",
                "0123456789abcdef",
                "‹",
                "›",
                "〈",
                "〉",
                " ",
                "\u{202E}",
                "\u{200B}",
                "\n",
                "»/«",
                "caller-supplied name ",
            ];
            let mut out = String::new();
            for _ in 0..self.next() % 6 {
                out.push_str(self.pick(PIECES));
            }
            if self.next().is_multiple_of(3) {
                let middle = self.pick(PIECES);
                let filler = "m".repeat(70 + (self.next() % 4) as usize);
                out = format!("{out}{filler}{middle}{filler}");
            }
            out
        }
    }

    #[test]
    fn distinct_names_and_paths_never_render_alike() {
        let mut cases = Cases(0x9E37_79B9_7F4A_7C15);
        let mut names = std::collections::HashMap::new();
        let mut paths = std::collections::HashMap::new();
        for _ in 0..4_000 {
            let one = cases.name();
            let shown = name(&one);
            if let Some(other) = names.insert(shown.clone(), one.clone()) {
                assert_eq!(other, one, "two names render as {shown}");
            }
            let parts: Vec<String> = (0..cases.next() % 15).map(|_| cases.name()).collect();
            let path = if cases.next().is_multiple_of(2) {
                PathName::absolute(parts)
            } else {
                PathName::new(parts)
            };
            let shown = Fact::path(path.clone()).to_string();
            if let Some(other) = paths.insert(shown.clone(), path.clone()) {
                assert_eq!(other, path, "two paths render as {shown}");
            }
        }
        // Positive control: the generator does produce repeats (so the map check is live),
        // and elided names among them.
        assert!(names.len() < 4_000, "no name was generated twice");
        assert!(
            names
                .keys()
                .any(|shown| shown.contains("characters elided, digest"))
        );
        assert!(
            paths
                .keys()
                .any(|shown| shown.contains("components elided, digest"))
        );
    }

    #[test]
    fn a_link_is_its_base_and_validated_segments_and_never_leaves_the_base() {
        use crate::question::{Configured, Id, Link};
        let id = |s: &str| Id::new(s).expect("id");
        let link = |base: &'static str, segments: &[&str]| {
            Fact::link(Link::new(
                Configured::fixed(base),
                segments.iter().map(|s| id(s)),
            ))
            .to_string()
        };
        assert_eq!(
            link("https://gist.example.org/", &["alice", "3f2a9c91e"]),
            "https://gist.example.org/alice/3f2a9c91e"
        );
        assert_eq!(
            link("http://127.0.0.1:6157/og", &["bob", "x"]),
            "http://127.0.0.1:6157/og/bob/x"
        );
        // A dot segment is shown escaped, so the link cannot climb out of the base.
        assert_eq!(
            link("https://h/og", &["..", "admin"]),
            "https://h/og/<U+002E><U+002E>/admin"
        );
        assert_eq!(link("https://h", &["a.b", "..c"]), "https://h/a.b/..c");
        // The operator's base stays one line, as a configured value does.
        assert_eq!(
            link("https://h/\nApprove", &["a"]),
            "https://h/<U+000A>Approve/a"
        );
    }
}
