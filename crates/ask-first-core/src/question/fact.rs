//! One value shown in a question ([`Fact`]), the validated identifier ([`Id`]), and the
//! kinds of facts as types ([`ToFact`] and the number newtypes) that `#[derive(Target)]`
//! accepts in a placeholder.

use std::fmt;

use super::name::{Address, Configured, Link, Name, PathName};
use super::render::{
    write_bytes, write_configured, write_date, write_duration, write_framed, write_link, write_path,
};
use super::wording::Wording;

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
    Link(Link),
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

    /// A link on the operator's site, shown unframed: `https://gist.example.org/alice/3f2a9c91e`
    /// (see [`Link`]).
    pub fn link(link: Link) -> Self {
        Self(FactKind::Link(link))
    }

    /// A variable number of facts in one placeholder, e.g. the names a call acts on: shown
    /// joined by `, ` (`none` when empty); past 20 items the rest is counted as
    /// `<… and N more>`. Several caller-supplied facts of one kind are introduced once:
    /// `caller-supplied names «a», «b» and «c»`.
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
            FactKind::Name(_) | FactKind::Path(_) | FactKind::Address(_) => {
                if let Some((label, _)) = self.caller_supplied() {
                    write!(f, "{label} ")?;
                }
                self.write_framed_body(f)
            }
            FactKind::Configured(value) => write_configured(f, value.as_str()),
            FactKind::Link(link) => write_link(f, link),
            FactKind::List(facts) => write_list(f, facts),
        }
    }
}

impl Fact {
    /// How a caller-supplied fact is introduced, one and several (`caller-supplied name`,
    /// `caller-supplied names`); `None` for a fact the server vouches for.
    fn caller_supplied(&self) -> Option<(&'static str, &'static str)> {
        match &self.0 {
            FactKind::Name(_) => Some(("caller-supplied name", "caller-supplied names")),
            FactKind::Path(_) => Some(("caller-supplied path", "caller-supplied paths")),
            FactKind::Address(_) => Some(("caller-supplied address", "caller-supplied addresses")),
            _ => None,
        }
    }

    /// A caller-supplied fact without its introduction: framed and escaped (`«a.txt»`,
    /// `«dir»/«file»`); any other fact as it is shown.
    fn write_framed_body(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            FactKind::Name(name) => write_framed(f, name.as_str()),
            FactKind::Path(path) => write_path(f, path),
            FactKind::Address(address) => write_framed(f, address.as_str()),
            _ => write!(f, "{self}"),
        }
    }
}

/// The most items of a [`Fact::list`] shown; the rest are counted as `<… and N more>`.
const LIST_CAP: usize = 20;

/// A list, joined by `, `. Several caller-supplied facts of one kind are introduced once:
/// `caller-supplied names «a», «b» and «c»`, each still framed and escaped.
fn write_list(f: &mut fmt::Formatter<'_>, facts: &[Fact]) -> fmt::Result {
    let Some(first) = facts.first() else {
        return f.write_str("none");
    };
    let shown = &facts[..facts.len().min(LIST_CAP)];
    let more = facts.len() - shown.len();
    let kind = first.caller_supplied().filter(|kind| {
        facts.len() > 1
            && facts
                .iter()
                .all(|fact| fact.caller_supplied() == Some(*kind))
    });
    if let Some((_, several)) = kind {
        write!(f, "{several} ")?;
    }
    for (index, fact) in shown.iter().enumerate() {
        if index > 0 {
            let last = index + 1 == shown.len() && more == 0;
            f.write_str(if last && kind.is_some() {
                " and "
            } else {
                ", "
            })?;
        }
        if kind.is_some() {
            fact.write_framed_body(f)?;
        } else {
            write!(f, "{fact}")?;
        }
    }
    if more > 0 {
        write!(f, ", <… and {more} more>")?;
    }
    Ok(())
}

impl fmt::Debug for Fact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fact({self})")
    }
}

/// A value that can be shown in a question: a fact kind.
///
/// Implemented for [`Id`], [`Name`], [`PathName`], [`Address`], [`Configured`], [`Link`], [`Fact`], the newtypes
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

impl ToFact for Link {
    fn to_fact(&self) -> Fact {
        Fact::link(self.clone())
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

#[cfg(test)]
mod tests {
    use super::*;

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
        // Several caller-supplied names are introduced once, each still framed.
        assert_eq!(
            vec![Name::new("x"), Name::new("y")].to_fact().to_string(),
            "caller-supplied names «x» and «y»"
        );
        assert_eq!(
            vec![Name::new("x"), Name::new("y»"), Name::new("z")]
                .to_fact()
                .to_string(),
            "caller-supplied names «x», «y<U+00BB>» and «z»"
        );
        assert_eq!(
            vec![Name::new("x")].to_fact().to_string(),
            "caller-supplied name «x»"
        );
        // Of several kinds, each is introduced (positive control of the rule above).
        assert_eq!(
            Fact::list([
                Fact::name(Name::new("x")),
                Fact::address(Address::new("a@example.org"))
            ])
            .to_string(),
            "caller-supplied name «x», caller-supplied address «a@example.org»"
        );
        assert_eq!(
            Fact::list([
                Fact::id(Id::new("n1").unwrap()),
                Fact::id(Id::new("n2").unwrap())
            ])
            .to_string(),
            "n1, n2"
        );
        let many: Vec<Name> = (0..22).map(|n| Name::new(format!("f{n}"))).collect();
        let shown = many.to_fact().to_string();
        assert!(
            shown.starts_with("caller-supplied names «f0», «f1», ")
                && shown.ends_with("«f19», <… and 2 more>")
                && shown.matches("caller-supplied").count() == 1,
            "{shown}"
        );
        let moment = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_796_041_800);
        assert_eq!(Moment::of(moment), Moment(1_796_041_800));
    }
}
