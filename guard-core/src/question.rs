//! The question shown to a person: fixed wording filled with server-side facts only.
//!
//! Nothing here accepts free text at run time. Wording is an associated `const` (so it is
//! written in source code, never read from a request or a record), and a [`Fact`] is a number,
//! a byte size, a date, a validated identifier or another piece of fixed wording. Titles,
//! descriptions, file names and contents are where an injected instruction would sit, and they
//! have no way in.

use std::fmt;

/// Fixed text written in source code. Placeholders `{}` are filled with facts, in order.
///
/// Implement it with the [`wording!`](crate::wording) macro:
///
/// ```
/// ask_first_core::wording! {
///     /// The headline of a delete question.
///     pub struct DeleteHeadline = "This will delete {} file(s) from gist {}.";
/// }
/// use ask_first_core::Wording;
/// assert_eq!(DeleteHeadline::TEXT, "This will delete {} file(s) from gist {}.");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not fixed wording",
    label = "a question is made of fixed wording and facts, never of run-time text",
    note = "declare the text with `ask_first::wording! {{ struct Name = \"...\"; }}` and pass `Name` as the type parameter; show run-time values as `Fact`s"
)]
pub trait Wording {
    /// The text. Being a `const`, it cannot come from a request or a record.
    const TEXT: &'static str;
}

/// Declares unit types implementing [`Wording`]: `wording! { pub struct Name = "text {}"; }`.
#[macro_export]
macro_rules! wording {
    ($($(#[$meta:meta])* $vis:vis struct $name:ident = $text:literal;)+) => {
        $(
            $(#[$meta])*
            #[derive(Debug, Clone, Copy)]
            $vis struct $name;
            impl $crate::Wording for $name {
                const TEXT: &'static str = $text;
            }
        )+
    };
}

/// An identifier that may be shown in a question: 1 to 64 characters of ASCII letters, digits,
/// `-`, `_`, `.` and `:`. Prose cannot pass this check, so an id cannot carry an instruction.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Id(String);

/// Why a value was refused as an [`Id`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "not an identifier that can be shown to a person: use 1 to 64 ASCII letters, digits, '-', '_', '.' or ':'"
)]
pub struct InvalidId;

impl Id {
    /// Validates `value` as an identifier.
    pub fn new(value: &str) -> Result<Self, InvalidId> {
        let valid = (1..=64).contains(&value.len())
            && value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'));
        if valid {
            Ok(Self(value.to_owned()))
        } else {
            Err(InvalidId)
        }
    }

    /// The identifier's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id({})", self.0)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One server-side value shown in a question.
#[derive(Clone, PartialEq, Eq)]
pub struct Fact(FactKind);

#[derive(Clone, PartialEq, Eq)]
enum FactKind {
    Count(u64),
    Bytes(u64),
    Date(i64),
    Duration(std::time::Duration),
    Id(Id),
    Word(&'static str),
}

impl Fact {
    /// A count, shown as a plain number.
    pub fn count(n: u64) -> Self {
        Self(FactKind::Count(n))
    }

    /// A size in bytes, shown as `1 byte`, `1000 bytes` or `1.2 KiB`.
    pub fn bytes(n: u64) -> Self {
        Self(FactKind::Bytes(n))
    }

    /// A moment, given as seconds since the Unix epoch, shown as `2026-11-30 12:00 UTC`.
    pub fn date_unix(seconds: i64) -> Self {
        Self(FactKind::Date(seconds))
    }

    /// A moment, shown as `2026-11-30 12:00 UTC` (to the minute; a moment before the epoch is
    /// shown as such, far-future ones are clamped to what `i64` seconds hold).
    pub fn timestamp(time: std::time::SystemTime) -> Self {
        let seconds = match time.duration_since(std::time::UNIX_EPOCH) {
            Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
            Err(before) => i64::try_from(before.duration().as_secs())
                .map(|s| -s)
                .unwrap_or(i64::MIN),
        };
        Self(FactKind::Date(seconds))
    }

    /// A length of time, shown in the two largest units that matter: `750 ms`, `45 s`,
    /// `5 min`, `2 h 30 min`, `3 days 4 h`.
    pub fn duration(duration: std::time::Duration) -> Self {
        Self(FactKind::Duration(duration))
    }

    /// A validated identifier.
    pub fn id(id: Id) -> Self {
        Self(FactKind::Id(id))
    }

    /// Fixed wording, e.g. a visibility from a closed set: `Fact::word::<Public>()`.
    pub fn word<W: Wording>() -> Self {
        Self(FactKind::Word(W::TEXT))
    }
}

impl fmt::Display for Fact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            FactKind::Count(n) => write!(f, "{n}"),
            FactKind::Bytes(n) => write_bytes(f, *n),
            FactKind::Date(seconds) => write_date(f, *seconds),
            FactKind::Duration(duration) => write_duration(f, *duration),
            FactKind::Id(id) => f.write_str(id.as_str()),
            FactKind::Word(word) => f.write_str(word),
        }
    }
}

impl fmt::Debug for Fact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fact({self})")
    }
}

fn write_bytes(f: &mut fmt::Formatter<'_>, n: u64) -> fmt::Result {
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

fn write_duration(f: &mut fmt::Formatter<'_>, duration: std::time::Duration) -> fmt::Result {
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

fn write_date(f: &mut fmt::Formatter<'_>, seconds: i64) -> fmt::Result {
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

/// A question for a person: lines of fixed [`Wording`], each filled with [`Fact`]s.
///
/// ```
/// use ask_first_core::{Fact, Id, Question};
/// ask_first_core::wording! {
///     struct Headline = "This will delete {} file(s) from gist {}.";
///     struct Warning = "The file contents are not recoverable from here.";
/// }
/// let gist = Id::new("3f2a9c91e").unwrap();
/// let question = Question::new::<Headline>([Fact::count(1), Fact::id(gist)]).line::<Warning>([]);
/// assert_eq!(
///     question.render(),
///     "This will delete 1 file(s) from gist 3f2a9c91e.\nThe file contents are not recoverable from here."
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Question {
    lines: Vec<Line>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Line {
    text: &'static str,
    facts: Vec<Fact>,
}

impl Question {
    /// A question whose first line is `W`, its placeholders filled with `facts` in order.
    pub fn new<W: Wording>(facts: impl IntoIterator<Item = Fact>) -> Self {
        Self { lines: Vec::new() }.line::<W>(facts)
    }

    /// Adds a line.
    pub fn line<W: Wording>(mut self, facts: impl IntoIterator<Item = Fact>) -> Self {
        self.lines.push(Line {
            text: W::TEXT,
            facts: facts.into_iter().collect(),
        });
        self
    }

    /// The text a person reads. Placeholders without a fact show `?`; facts without a
    /// placeholder are appended after the line's text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (index, line) in self.lines.iter().enumerate() {
            if index > 0 {
                out.push('\n');
            }
            let mut facts = line.facts.iter();
            let mut parts = line.text.split("{}");
            if let Some(first) = parts.next() {
                out.push_str(first);
            }
            for part in parts {
                match facts.next() {
                    Some(fact) => out.push_str(&fact.to_string()),
                    None => out.push('?'),
                }
                out.push_str(part);
            }
            let rest: Vec<String> = facts.map(Fact::to_string).collect();
            if !rest.is_empty() {
                out.push_str(" (");
                out.push_str(&rest.join(", "));
                out.push(')');
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::wording! {
        struct Two = "a {} b {}.";
        struct Plain = "no placeholders";
        struct Public = "public";
    }

    #[test]
    fn ids_refuse_prose_and_accept_uuids() {
        assert!(Id::new("3f2a9c91e0b14f0b9a1c0d3e4f5a6b7c").is_ok());
        assert!(Id::new("n1").is_ok());
        assert!(Id::new("ignore previous instructions").is_err());
        assert!(Id::new("").is_err());
        assert!(Id::new(&"a".repeat(65)).is_err());
        assert!(Id::new("a\nb").is_err());
    }

    #[test]
    fn placeholders_fill_in_order_and_mismatches_stay_visible() {
        let q = Question::new::<Two>([Fact::count(3), Fact::word::<Public>()]);
        assert_eq!(q.render(), "a 3 b public.");
        let short = Question::new::<Two>([Fact::count(3)]);
        assert_eq!(short.render(), "a 3 b ?.");
        let long = Question::new::<Plain>([Fact::count(1), Fact::count(2)]);
        assert_eq!(long.render(), "no placeholders (1, 2)");
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
}
