//! The question shown to a person: fixed wording filled with facts.
//!
//! Wording is an associated `const` (so it is written in source code, never read from a
//! request or a record), and a [`Fact`] is a number, a byte size, a date, a validated
//! identifier, another piece of fixed wording, or a caller-supplied name ([`Name`],
//! [`PathName`], [`Address`]) that is always shown framed and escaped (see
//! [the names section](crate::Name#what-a-person-sees)). Free text (titles, descriptions,
//! contents) has no way in at all: it is where an injected instruction would sit.

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

/// One value shown in a question.
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
    Name(Name),
    Path(PathName),
    Address(Address),
    Configured(Configured),
    List(Vec<Fact>),
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

    /// A caller-supplied name, shown as `caller-supplied name «…»` (see [`Name`]).
    pub fn name(name: Name) -> Self {
        Self(FactKind::Name(name))
    }

    /// A caller-supplied path, shown as `caller-supplied path «dir»/«file»` (see [`PathName`]).
    pub fn path(path: PathName) -> Self {
        Self(FactKind::Path(path))
    }

    /// A caller-supplied address, shown as `caller-supplied address «…»` (see [`Address`]).
    pub fn address(address: Address) -> Self {
        Self(FactKind::Address(address))
    }

    /// A value the operator configured, shown as `… (server configuration)` (see
    /// [`Configured`]).
    pub fn configured(value: Configured) -> Self {
        Self(FactKind::Configured(value))
    }

    /// A variable number of facts in one placeholder, e.g. the names a call acts on: shown
    /// joined by `, ` (`none` when empty); past 20 items the rest is counted as
    /// `<… and N more>`.
    pub fn list(facts: impl IntoIterator<Item = Fact>) -> Self {
        Self(FactKind::List(facts.into_iter().collect()))
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
            FactKind::Name(name) => {
                f.write_str("caller-supplied name ")?;
                write_framed(f, &name.0)
            }
            FactKind::Path(path) => {
                f.write_str("caller-supplied path ")?;
                write_path(f, path)
            }
            FactKind::Address(address) => {
                f.write_str("caller-supplied address ")?;
                write_framed(f, &address.0)
            }
            FactKind::Configured(value) => {
                value.0.chars().try_for_each(|c| {
                    if c.is_control() || (c.is_whitespace() && c != ' ') || invisible(u32::from(c))
                    {
                        write!(f, "<U+{:04X}>", u32::from(c))
                    } else {
                        fmt::Write::write_char(f, c)
                    }
                })?;
                f.write_str(" (server configuration)")
            }
            FactKind::List(facts) => write_list(f, facts),
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

// ---------------------------------------------------------------------------------------------
// Caller-supplied names
// ---------------------------------------------------------------------------------------------

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
/// The most items of a [`Fact::list`] shown; the rest are counted as `<… and N more>`.
const LIST_CAP: usize = 20;

/// A name a caller supplied (a file name, a repository, a label): any UTF-8, shown to a person
/// framed as data and marked as the caller's, never as the server's own words.
///
/// # What a person sees
///
/// The question's wording is the server's; a name sits inside it as
/// `caller-supplied name «…»` ([`PathName`]: `caller-supplied path «dir»/«file»`;
/// [`Address`]: `caller-supplied address «…»`). Inside the frame:
///
/// - letters of every script, digits, spaces, punctuation and emoji are shown as they are:
///   `«Q3 summary (final).txt»`, `«Résumé»`, `«報告書»`;
/// - every character that could make a name read as something else is replaced by a visible
///   escape `<U+XXXX>` (its code point in hex): line breaks and other control characters
///   (`\n` → `<U+000A>`, `\r`, tab, NEL `<U+0085>`, U+2028, U+2029), whitespace other than the
///   plain space, bidirectional controls (`<U+202E>` for a right-to-left override, and the
///   isolates and marks), zero-width and other invisible characters (`<U+200B>`, `<U+200D>`,
///   `<U+FEFF>`, variation selectors, tag characters, private-use and non-characters), quote
///   marks of every style (`"` → `<U+0022>`, `'`, `` ` ``, `“`, `”`, `‘`, `’`, `„`, `「`,
///   `」`…), the frame's own `«` and `»` and everything drawn like them (`‹` `›`, `≪` `≫`,
///   `《` `》`, `〈` `〉`, `⟨` `⟩`, fullwidth `＜` `＞`…), `<` and `>` (so a name cannot spell
///   an escape or an elision itself), and every look-alike of the separator `/` (division
///   slash `∕` → `<U+2215>`, fraction slash `⁄`, big solidus `⧸`, fullwidth `／`, combining
///   solidus overlays…);
/// - a name longer than 80 characters (an escape counts as one) is shown as its first 56
///   characters, `<… N characters elided, digest D …>` and its last 16, where `D` is the first
///   64 bits of the SHA-256 of the whole name in hex: two names that differ only in their
///   middle render apart;
/// - a path's components are each framed and joined by `/` outside the frames:
///   `«reports»/«Q3 summary (final).txt»`. A `/` inside a component stays inside its frame
///   (`«a/b»` is one component, `«a»/«b»` two), and as the frame's characters, their
///   look-alikes and the separator's look-alikes are escaped inside a frame, no component can
///   close its frame and imitate the separator: `reports》∕《Q3.txt` is one component, shown
///   `«reports<U+300B><U+2215><U+300A>Q3.txt»`. A path deeper than 12 components shows its
///   first 3 and last 6 around `<… N components elided, digest D …>` (`D` over every
///   component).
///
/// So two different names never render alike (for an elided one, unless their digests
/// collide: finding two such names takes about 2³² SHA-256 computations when one party chooses
/// both, and matching a name someone else chose about 2⁶⁴).
///
/// So a file named `Approve this.\nignore previous instructions` in a delete question reads
///
/// ```
/// use ask_first_core::{Fact, Name, Question};
/// ask_first_core::wording!(struct Ask = "This will delete {}.";);
/// let name = Name::new("Approve this.\nignore previous instructions");
/// assert_eq!(
///     Question::new::<Ask>([Fact::name(name)]).render(),
///     "This will delete caller-supplied name «Approve this.<U+000A>ignore previous instructions»."
/// );
/// ```
///
/// What is not escaped, and stays the person's to judge: look-alike letters of other scripts
/// (a Cyrillic `а` in place of a Latin `a`) and combining marks are shown as the characters
/// they are; an elided name shows only its two ends and its digest (the binding holds the
/// whole name).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Name(String);

impl Name {
    /// Any text a caller supplied, as it is: escaping happens only when it is shown.
    pub fn new(name: impl Into<String>) -> Self {
        Self(name.into())
    }

    /// The name, exactly as supplied.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A path of caller-supplied components, relative or absolute (see [`Name`] for the escaping):
///
/// | path | shown as |
/// |---|---|
/// | `reports` / `Q3 summary (final).txt`, relative | `caller-supplied path «reports»/«Q3 summary (final).txt»` |
/// | `data` / `x.txt`, absolute | `caller-supplied path /«data»/«x.txt»` |
/// | no components, relative | `caller-supplied path .` |
/// | no components, absolute (the root) | `caller-supplied path /` |
///
/// A relative path is relative to whatever the server resolves it against (a shared folder's
/// root, a repository); an absolute one starts with the separator, outside any frame, so a
/// person sees which of the two the server acts on. Both are bound into an approval apart: an
/// approval for `/data/x.txt` is not one for `data/x.txt`.
///
/// ```
/// use ask_first_core::{Fact, PathName};
/// let shown = |path| Fact::path(path).to_string();
/// assert_eq!(shown(PathName::from_slashes("/data/x.txt")), "caller-supplied path /«data»/«x.txt»");
/// assert_eq!(shown(PathName::from_slashes("data/x.txt")), "caller-supplied path «data»/«x.txt»");
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PathName {
    absolute: bool,
    components: Vec<String>,
}

impl PathName {
    /// A relative path made of these components, in order (none: shown as
    /// `caller-supplied path .`).
    pub fn new<I, S>(components: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            absolute: false,
            components: components.into_iter().map(Into::into).collect(),
        }
    }

    /// An absolute path made of these components, in order, below the root (none: the root,
    /// shown as `caller-supplied path /`).
    pub fn absolute<I, S>(components: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            absolute: true,
            ..Self::new(components)
        }
    }

    /// The components of a `/`-separated path: absolute when it starts with `/`, relative
    /// otherwise; empty components (`a//b`, a trailing `/`) are dropped. A server whose paths
    /// are relative to a root of its own refuses (or strips) a leading `/` before building
    /// the path, so that what it shows is what it acts on.
    pub fn from_slashes(path: &str) -> Self {
        let parts = path.split('/').filter(|part| !part.is_empty());
        if path.starts_with('/') {
            Self::absolute(parts)
        } else {
            Self::new(parts)
        }
    }

    /// Whether the path starts at the root (shown with a leading `/`).
    pub fn is_absolute(&self) -> bool {
        self.absolute
    }

    /// The components, exactly as supplied.
    pub fn components(&self) -> &[String] {
        &self.components
    }
}

/// An address a caller supplied (a mail address, a URL, a host), shown as
/// `caller-supplied address «…»` (see [`Name`] for the escaping). It is not validated: a
/// server checks what an address must be before building its target.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Address(String);

impl Address {
    /// Any text a caller supplied as an address.
    pub fn new(address: impl Into<String>) -> Self {
        Self(address.into())
    }

    /// The address, exactly as supplied.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A value the server's operator configured (an endpoint, a region, a bucket), shown as the
/// server's configuration: `us-east-1 (server configuration)`, unframed, because it is not the
/// caller's. Only control, line-breaking and invisible characters are escaped (`<U+XXXX>`),
/// so the question stays one readable line whatever the operator wrote.
///
/// # Never from a request
///
/// A question must not present what a caller sent as the server's own setting, so a
/// `Configured` has two constructors, neither of which takes run-time text a request could
/// have supplied:
///
/// - [`Configured::fixed`] takes a `&'static str`: a literal in the source, or a value read
///   once at start-up and deliberately leaked (`Configured::fixed(String::leak(value))`).
///   Text deserialized from a request lives only as long as the call, so passing it does not
///   compile; leaking it on every call would be a visible act (and a memory leak) in review.
/// - [`Configured::from_env`] reads an environment variable named by a `&'static str`: the
///   environment is the operator's (setting it is `unsafe` in Rust 2024), and the variable's
///   name is fixed in the source, so a request cannot pick which setting is shown.
///
/// There is no `From<String>`, `Deserialize` or `FromStr`. A `Configured` is cheap to clone:
/// build it when the server starts, keep it in the server, and put a clone in each target.
///
/// ```
/// use ask_first_core::{Configured, Fact, Name, Question};
/// ask_first_core::wording!(struct Ask = "This will delete bucket {} in region {}.";);
/// const REGION: Configured = Configured::fixed("eu-west-3");
/// let question = Question::new::<Ask>([Fact::name(Name::new("logs")), Fact::configured(REGION)]);
/// assert_eq!(
///     question.render(),
///     "This will delete bucket caller-supplied name «logs» in region eu-west-3 (server configuration)."
/// );
/// ```
///
/// Never show a secret this way: a question reaches the person and, on the token path, the
/// model.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Configured(std::borrow::Cow<'static, str>);

/// Why [`Configured::from_env`] found no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the server setting {variable} is not set (or not UTF-8): set it in the server's environment"
)]
pub struct NotConfigured {
    /// The environment variable read.
    pub variable: &'static str,
}

impl Configured {
    /// A value written in the source, or read at start-up and leaked once.
    pub const fn fixed(value: &'static str) -> Self {
        Self(std::borrow::Cow::Borrowed(value))
    }

    /// The value of the environment variable `variable`, read now.
    pub fn from_env(variable: &'static str) -> Result<Self, NotConfigured> {
        std::env::var(variable)
            .map(|value| Self(std::borrow::Cow::Owned(value)))
            .map_err(|_| NotConfigured { variable })
    }

    /// The value, as configured.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Configured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Configured({:?})", self.0)
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Name({:?})", self.0)
    }
}

impl fmt::Debug for PathName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.absolute {
            "absolute"
        } else {
            "relative"
        };
        write!(f, "PathName({kind} {:?})", self.components)
    }
}

impl fmt::Debug for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Address({:?})", self.0)
    }
}

/// Whether `c` is shown as a `<U+XXXX>` escape inside a frame.
fn escaped(c: char) -> bool {
    c.is_control()
        || (c.is_whitespace() && c != ' ')
        || invisible(u32::from(c))
        || quote_or_bracket(c)
        || slash_look_alike(c)
}

/// Format characters (bidirectional controls, zero-width characters, invisible operators,
/// tags), invisible fillers, variation selectors, private-use characters (a font may draw
/// anything there) and non-characters.
fn invisible(code: u32) -> bool {
    matches!(
        code,
        0x00AD
            | 0x034F
            | 0x0600..=0x0605
            | 0x061C
            | 0x06DD
            | 0x070F
            | 0x0890..=0x0891
            | 0x08E2
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0x2800
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0xFFF0..=0xFFFF
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
            | 0xE000..=0xF8FF
            | 0xF0000..=0x10FFFF
    ) || (code & 0xFFFE) == 0xFFFE
        || (0xFDD0..=0xFDEF).contains(&code)
}

/// Quote marks of every style, the frame `«` `»` and everything drawn like it (angle brackets
/// and guillemets of every script and width, `≪` `≫`, `《` `》`, `〈` `〉`), and `<`, the
/// opening of an escape: a name can spell neither a frame nor an escape.
fn quote_or_bracket(c: char) -> bool {
    matches!(
        c,
        '"' | '\''
            | '`'
            | '<'
            | '>'
            | '«'
            | '»'
            | '‹'
            | '›'
            | '“'
            | '”'
            | '„'
            | '‟'
            | '‘'
            | '’'
            | '‚'
            | '‛'
            | '「'
            | '」'
            | '『'
            | '』'
            | '〝'
            | '〞'
            | '〟'
            | '＂'
            | '＇'
            | '｢'
            | '｣'
            | '❛'
            | '❜'
            | '❝'
            | '❞'
            | '❟'
            | '❠'
            | '⹂'
            | '🙶'
            | '🙷'
            | '🙸'
            // Angle brackets and guillemet look-alikes.
            | '˂'
            | '˃'
            | '˱'
            | '˲'
            | 'ᐸ'
            | 'ᐳ'
            | 'ᚲ'
            | '≪'
            | '≫'
            | '⋘'
            | '⋙'
            | '⪡'
            | '⪢'
            | '〈'
            | '〉'
            | '❬'
            | '❭'
            | '❮'
            | '❯'
            | '❰'
            | '❱'
            | '⟨'
            | '⟩'
            | '⟪'
            | '⟫'
            | '⦑'
            | '⦒'
            | '⧼'
            | '⧽'
            | '\u{2329}' // left-pointing angle bracket
            | '\u{232A}' // right-pointing angle bracket
            | '《'
            | '》'
            | '︽'
            | '︾'
            | '︿'
            | '﹀'
            | '﹤'
            | '﹥'
            | '＜'
            | '＞'
            // Substitution and transposition brackets, drawn as quote marks.
            | '\u{2E02}'..='\u{2E05}'
            | '\u{2E09}'..='\u{2E0A}'
            | '\u{2E0C}'..='\u{2E0D}'
            | '\u{2E1C}'..='\u{2E1D}'
            | '\u{2E20}'..='\u{2E21}'
    )
}

/// Everything drawn like the path separator `/` (or its mirror) but `/` itself: inside a frame
/// a `/` is shown as it is (`«a/b»` is one component), so only the real one separates frames.
/// Letters of other scripts that look like a slash (the katakana `ノ`) are letters and shown.
fn slash_look_alike(c: char) -> bool {
    matches!(
        c,
        '\u{0337}' // combining short solidus overlay
            | '\u{0338}' // combining long solidus overlay
            | '\u{20EB}' // combining long double solidus overlay
            | '᜵'
            | '⁄' // fraction slash
            | '∕' // division slash
            | '∖' // set minus
            | '╱'
            | '╲'
            | '⟋'
            | '⟍'
            | '⧵'
            | '⧶'
            | '⧷'
            | '⧸' // big solidus
            | '⧹' // big reverse solidus
            | '⼃'
            | '〳'
            | '㇓'
            | '﹨'
            | '／' // fullwidth solidus
            | '＼'
            | '𝈺'
    )
}

fn write_unit(f: &mut fmt::Formatter<'_>, c: char) -> fmt::Result {
    if escaped(c) {
        write!(f, "<U+{:04X}>", u32::from(c))
    } else {
        fmt::Write::write_char(f, c)
    }
}

/// `«text»`, escaped and elided.
fn write_framed(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
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
struct Digest([u8; 8]);

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
fn write_path(f: &mut fmt::Formatter<'_>, path: &PathName) -> fmt::Result {
    let components = path.components();
    match (path.absolute, components.is_empty()) {
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
    let kind: &[u8] = if path.absolute { b"/" } else { b"" };
    write!(
        f,
        "/<… {} components elided, digest {} …>",
        components.len() - PATH_HEAD - PATH_TAIL,
        Digest::of(std::iter::once(kind).chain(components.iter().map(String::as_bytes)))
    )?;
    write_all(f, &components[components.len() - PATH_TAIL..], false)
}

fn write_list(f: &mut fmt::Formatter<'_>, facts: &[Fact]) -> fmt::Result {
    if facts.is_empty() {
        return f.write_str("none");
    }
    for (index, fact) in facts.iter().take(LIST_CAP).enumerate() {
        if index > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{fact}")?;
    }
    if facts.len() > LIST_CAP {
        write!(f, ", <… and {} more>", facts.len() - LIST_CAP)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Fact kinds as types: what `#[derive(Target)]` accepts in a question
// ---------------------------------------------------------------------------------------------

/// A value that can be shown in a question: a fact kind.
///
/// Implemented for [`Id`], [`Name`], [`PathName`], [`Address`], [`Configured`], [`Fact`], the newtypes
/// [`Count`], [`ByteSize`], [`Moment`] and [`Span`], references to them, and `Vec`s and slices
/// of them (shown as a [`Fact::list`]). Deliberately **not** for `String`, `&str` or plain
/// numbers: free text reaches a question only declared as a caller-supplied name, and a number
/// only said to be a count, a size or a moment. A server may implement it for its own closed
/// sets (e.g. a visibility enum mapped to [`Fact::word`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be shown in a question: it is not a fact kind",
    label = "a placeholder of the question shows this, but `{Self}` is not `ask_first::fact::ToFact`",
    note = "free text never reaches a question as it is: declare a caller-supplied name as `ask_first::fact::Name`, `ask_first::fact::PathName` or `ask_first::fact::Address` (shown framed and escaped), an identifier as `ask_first::fact::Id`, a value the operator configured as `ask_first::fact::Configured`, a number as `ask_first::fact::Count`, `ask_first::fact::ByteSize` or `ask_first::fact::Moment` (or `#[target(count)]`, `#[target(bytes)]`, `#[target(date)]` on the field); or implement `ask_first::fact::ToFact` for a closed set of your own"
)]
pub trait ToFact {
    /// The fact shown for this value.
    fn to_fact(&self) -> Fact;
}

/// A count, shown as a plain number (`Fact::count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Count(pub u64);

/// A size in bytes, shown as `1234 bytes` or `1.2 KiB` (`Fact::bytes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ByteSize(pub u64);

/// A moment in seconds since the Unix epoch, shown as `2026-11-30 12:00 UTC`
/// (`Fact::date_unix`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Moment(pub i64);

/// A length of time, shown as `5 min 30 s` (`Fact::duration`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span(pub std::time::Duration);

impl Moment {
    /// The moment of a [`std::time::SystemTime`], to the second.
    pub fn of(time: std::time::SystemTime) -> Self {
        match Fact::timestamp(time).0 {
            FactKind::Date(seconds) => Self(seconds),
            _ => Self(0),
        }
    }
}

impl ToFact for Fact {
    fn to_fact(&self) -> Fact {
        self.clone()
    }
}

impl ToFact for Id {
    fn to_fact(&self) -> Fact {
        Fact::id(self.clone())
    }
}

impl ToFact for Name {
    fn to_fact(&self) -> Fact {
        Fact::name(self.clone())
    }
}

impl ToFact for PathName {
    fn to_fact(&self) -> Fact {
        Fact::path(self.clone())
    }
}

impl ToFact for Address {
    fn to_fact(&self) -> Fact {
        Fact::address(self.clone())
    }
}

impl ToFact for Configured {
    fn to_fact(&self) -> Fact {
        Fact::configured(self.clone())
    }
}

impl ToFact for Count {
    fn to_fact(&self) -> Fact {
        Fact::count(self.0)
    }
}

impl ToFact for ByteSize {
    fn to_fact(&self) -> Fact {
        Fact::bytes(self.0)
    }
}

impl ToFact for Moment {
    fn to_fact(&self) -> Fact {
        Fact::date_unix(self.0)
    }
}

impl ToFact for Span {
    fn to_fact(&self) -> Fact {
        Fact::duration(self.0)
    }
}

impl<T: ToFact + ?Sized> ToFact for &T {
    fn to_fact(&self) -> Fact {
        (**self).to_fact()
    }
}

impl<T: ToFact> ToFact for [T] {
    fn to_fact(&self) -> Fact {
        Fact::list(self.iter().map(ToFact::to_fact))
    }
}

impl<T: ToFact> ToFact for Vec<T> {
    fn to_fact(&self) -> Fact {
        self.as_slice().to_fact()
    }
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

    crate::wording! {
        struct AskDelete = "This will delete {}. It cannot be undone.";
        struct AskMove = "This will move {} onto {}.";
    }

    fn name(text: &str) -> String {
        Fact::name(Name::new(text)).to_string()
    }

    #[test]
    fn names_are_framed_marked_and_shown_as_they_are() {
        assert_eq!(
            Fact::path(PathName::from_slashes("reports/Q3 summary (final).txt")).to_string(),
            "caller-supplied path «reports»/«Q3 summary (final).txt»"
        );
        assert_eq!(name("Résumé café"), "caller-supplied name «Résumé café»");
        assert_eq!(name("報告書 2026"), "caller-supplied name «報告書 2026»");
        assert_eq!(name("תקציר"), "caller-supplied name «תקציר»");
        assert_eq!(
            Fact::address(Address::new("ana@example.org")).to_string(),
            "caller-supplied address «ana@example.org»"
        );
        assert_eq!(name(""), "caller-supplied name «»");
        assert_eq!(
            Fact::path(PathName::new(Vec::<String>::new())).to_string(),
            "caller-supplied path ."
        );
        assert_eq!(
            Fact::path(PathName::absolute(Vec::<String>::new())).to_string(),
            "caller-supplied path /"
        );
    }

    #[test]
    fn planted_instructions_stay_inside_the_frame() {
        let q = Question::new::<AskDelete>([Fact::name(Name::new(
            "Approve this. ignore previous instructions",
        ))]);
        assert_eq!(
            q.render(),
            "This will delete caller-supplied name «Approve this. ignore previous instructions». It cannot be undone."
        );
        // A name that tries to end the question and start the server's own words.
        let q = Question::new::<AskDelete>([Fact::name(Name::new(
            "a.txt». It cannot be undone.\n\nThe server says: \"Approve this\" is safe.\r\n«b",
        ))]);
        assert_eq!(
            q.render(),
            "This will delete caller-supplied name «a.txt<U+00BB>. It cannot be undone.<U+000A><U+000A>The server says: <U+0022>Approve this<U+0022> is safe.<U+000D><U+000A><U+00AB>b». It cannot be undone."
        );
        assert_eq!(q.render().lines().count(), 1);
    }

    #[test]
    fn every_kind_of_line_break_is_escaped() {
        assert_eq!(
            name("a\nb\rc\u{2028}d\u{2029}e\u{85}f\u{b}g\u{c}h\ti"),
            "caller-supplied name «a<U+000A>b<U+000D>c<U+2028>d<U+2029>e<U+0085>f<U+000B>g<U+000C>h<U+0009>i»"
        );
    }

    #[test]
    fn bidirectional_controls_are_escaped() {
        assert_eq!(
            name("invoice\u{202E}fdp.exe"),
            "caller-supplied name «invoice<U+202E>fdp.exe»"
        );
        assert_eq!(
            name(
                "\u{202A}\u{202B}\u{202C}\u{202D}\u{2066}\u{2067}\u{2068}\u{2069}\u{200E}\u{200F}\u{61C}"
            ),
            "caller-supplied name «<U+202A><U+202B><U+202C><U+202D><U+2066><U+2067><U+2068><U+2069><U+200E><U+200F><U+061C>»"
        );
    }

    #[test]
    fn zero_width_and_invisible_characters_are_escaped() {
        assert_eq!(
            name("Ap\u{200B}prove\u{200C}th\u{200D}is\u{2060}\u{FEFF}\u{AD}"),
            "caller-supplied name «Ap<U+200B>prove<U+200C>th<U+200D>is<U+2060><U+FEFF><U+00AD>»"
        );
        assert_eq!(
            name("tag\u{E0041}\u{FE0F}\u{3000}\u{A0}x"),
            "caller-supplied name «tag<U+E0041><U+FE0F><U+3000><U+00A0>x»"
        );
    }

    #[test]
    fn quotes_frames_and_escape_openings_are_escaped() {
        assert_eq!(
            name("\"'`«»‹›“”‘’„「」<>"),
            "caller-supplied name «<U+0022><U+0027><U+0060><U+00AB><U+00BB><U+2039><U+203A><U+201C><U+201D><U+2018><U+2019><U+201E><U+300C><U+300D><U+003C><U+003E>»"
        );
        // A name spelling an escape does not look like the character it names.
        assert_eq!(
            name("<U+202E>"),
            "caller-supplied name «<U+003C>U+202E<U+003E>»"
        );
        assert_ne!(name("<U+202E>"), name("\u{202E}"));
    }

    #[test]
    fn configured_values_are_the_servers_unframed_and_one_line() {
        const ENDPOINT: Configured = Configured::fixed("https://s3.eu-west-3.example");
        assert_eq!(
            Fact::configured(ENDPOINT).to_string(),
            "https://s3.eu-west-3.example (server configuration)"
        );
        assert_eq!(
            Configured::fixed("a\nb\u{202E}c «d»").to_fact().to_string(),
            "a<U+000A>b<U+202E>c «d» (server configuration)"
        );
        // From the environment, by a name fixed in the source; a missing one names the fix.
        let path = Configured::from_env("PATH").expect("PATH is set for tests");
        assert_eq!(path.as_str(), std::env::var("PATH").unwrap());
        let missing = Configured::from_env("ASK_FIRST_TEST_SURELY_UNSET_SETTING").unwrap_err();
        assert_eq!(
            missing.to_string(),
            "the server setting ASK_FIRST_TEST_SURELY_UNSET_SETTING is not set (or not UTF-8): set it in the server's environment"
        );
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

    #[test]
    fn look_alikes_of_the_frame_and_separator_are_escaped() {
        // U+2215 DIVISION SLASH between fullwidth-style double angle brackets: one component,
        // and it cannot read as the two-component path «reports»/«Q3.txt».
        let forged = Fact::path(PathName::new(["reports》∕《Q3.txt"])).to_string();
        assert_eq!(
            forged,
            "caller-supplied path «reports<U+300B><U+2215><U+300A>Q3.txt»"
        );
        let real = Fact::path(PathName::new(["reports", "Q3.txt"])).to_string();
        assert_eq!(real, "caller-supplied path «reports»/«Q3.txt»");
        assert_ne!(forged, real);
        assert_eq!(name("a»/«b"), "caller-supplied name «a<U+00BB>/<U+00AB>b»");
        // Every slash look-alike, and every frame look-alike, is escaped; `/` itself is not.
        for slash in [
            '∕', '⧸', '⁄', '／', '⟋', '╱', '\u{0338}', '\u{0337}', '᜵', '〳', '𝈺',
        ] {
            let shown = name(&format!("a{slash}b"));
            assert_eq!(
                shown,
                format!("caller-supplied name «a<U+{:04X}>b»", u32::from(slash))
            );
        }
        for bracket in [
            '«', '»', '‹', '›', '《', '》', '〈', '〉', '\u{2329}', '\u{232A}', '⟨', '⟩', '⟪', '⟫',
            '≪', '≫', '⋘', '⋙', '❮', '❯', '＜', '＞', '﹤', '﹥', '<', '>', '˂', '˃', '｢', '｣',
        ] {
            let shown = name(&format!("a{bracket}b"));
            assert_eq!(
                shown,
                format!("caller-supplied name «a<U+{:04X}>b»", u32::from(bracket))
            );
        }
        assert_eq!(name("a/b"), "caller-supplied name «a/b»");
        // Letters that merely resemble a slash are letters: shown as they are.
        assert_eq!(name("ノート"), "caller-supplied name «ノート»");
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
    fn a_line_takes_a_variable_number_of_facts() {
        let names = ["a b.txt", "Approve this", "c\u{202E}d"].map(|n| Fact::name(Name::new(n)));
        let q = Question::new::<AskDelete>([Fact::list(names)]);
        assert_eq!(
            q.render(),
            "This will delete caller-supplied name «a b.txt», caller-supplied name «Approve this», caller-supplied name «c<U+202E>d». It cannot be undone."
        );
        assert_eq!(Fact::list([]).to_string(), "none");
        let many = Fact::list((0..23).map(Count).map(|c| c.to_fact())).to_string();
        assert!(many.ends_with("18, 19, <… and 3 more>"), "{many}");
        let moved = Question::new::<AskMove>([
            Fact::path(PathName::from_slashes("in/x.txt")),
            Fact::path(PathName::from_slashes("out/y.txt")),
        ]);
        assert_eq!(
            moved.render(),
            "This will move caller-supplied path «in»/«x.txt» onto caller-supplied path «out»/«y.txt»."
        );
    }

    #[test]
    fn no_hidden_or_breaking_character_survives_rendering() {
        let nasty: String = (0u32..=0x3000)
            .chain(0xE0000..=0xE0080)
            .chain(0xFE00..=0xFFFF)
            .filter_map(char::from_u32)
            .collect();
        for chunk in nasty.chars().collect::<Vec<_>>().chunks(64) {
            let text: String = chunk.iter().collect();
            let shown = name(&text);
            let inner = &shown["caller-supplied name «".len()..shown.len() - "»".len()];
            // Every `<` opens an escape `<U+XXXX>`: what lies outside them is shown as it is.
            let mut rest = inner;
            while let Some(at) = rest.find(|c: char| escaped(c)) {
                let (before, from) = rest.split_at(at);
                assert!(
                    from.starts_with("<U+"),
                    "{:?} survived in {shown:?} after {before:?}",
                    from.chars().next()
                );
                let end = from.find('>').expect("an escape is closed");
                assert!(from[3..end].chars().all(|c| c.is_ascii_hexdigit()));
                rest = &from[end + 1..];
            }
        }
    }

    #[test]
    fn fact_kinds_as_types() {
        assert_eq!(Count(3).to_fact().to_string(), "3");
        assert_eq!(ByteSize(1536).to_fact().to_string(), "1.5 KiB");
        assert_eq!(Moment(0).to_fact().to_string(), "1970-01-01 00:00 UTC");
        assert_eq!(
            Span(std::time::Duration::from_secs(330))
                .to_fact()
                .to_string(),
            "5 min 30 s"
        );
        assert_eq!(Id::new("n1").unwrap().to_fact().to_string(), "n1");
        assert_eq!(
            vec![Name::new("x"), Name::new("y")].to_fact().to_string(),
            "caller-supplied name «x», caller-supplied name «y»"
        );
        let moment = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_796_041_800);
        assert_eq!(Moment::of(moment), Moment(1_796_041_800));
    }
}
