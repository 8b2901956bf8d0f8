//! How a field's value enters a [`Binding`]: what `#[derive(Target)]` writes for each bound
//! field.

use std::collections::{BTreeSet, HashSet};

use crate::question::{Address, ByteSize, Configured, Count, Id, Moment, Name, PathName, Span};
use crate::target::Binding;

/// A value that can be bound into an approval: `#[derive(Target)]` binds every field (but
/// those marked `#[target(skip)]`) with `value.bind_value("field", binding)`.
///
/// Implemented for text (`String`, `str`, [`Id`], [`Name`], [`Address`], [`Configured`]:
/// [`Binding::text`]),
/// numbers and the fact newtypes ([`Binding::number`]; signed ones as their bytes), `bool`
/// ([`Binding::flag`]), [`PathName`] and `Vec`s or slices of text (ordered:
/// [`Binding::list`]), `BTreeSet`/`HashSet` of text ([`Binding::set`]), `Vec<u8>` ([`Binding::bytes`]) and
/// `Option` of any of them (`None` as [`Binding::optional_text`]'s `None`; an `Option<String>`
/// binds exactly as `optional_text`). Implement it for a type of your own to bind
/// it with the calls that decide what it means.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be bound into an approval",
    label = "`#[derive(Target)]` binds this field, but `{Self}` is not `ask_first::BindValue`",
    note = "implement `ask_first::BindValue` for `{Self}` (write what decides what runs with `Binding::text`, `number`, `flag`, `list`, `set`), or mark the field `#[target(skip)]` if it does not decide what runs"
)]
pub trait BindValue {
    /// Writes this value into `binding` under `name`.
    fn bind_value(&self, name: &str, binding: &mut Binding);
}

macro_rules! bind_text {
    ($($ty:ty => |$v:ident| $e:expr),+ $(,)?) => {$(
        impl BindValue for $ty {
            fn bind_value(&self, name: &str, binding: &mut Binding) {
                let $v = self;
                binding.text(name, $e);
            }
        }
    )+};
}

bind_text! {
    String => |v| v,
    str => |v| v,
    Id => |v| v.as_str(),
    Name => |v| v.as_str(),
    Address => |v| v.as_str(),
    Configured => |v| v.as_str(),
}

macro_rules! bind_number {
    ($($ty:ty => |$v:ident| $e:expr),+ $(,)?) => {$(
        impl BindValue for $ty {
            fn bind_value(&self, name: &str, binding: &mut Binding) {
                let $v = self;
                binding.number(name, $e);
            }
        }
    )+};
}

bind_number! {
    u8 => |v| u64::from(*v),
    u16 => |v| u64::from(*v),
    u32 => |v| u64::from(*v),
    u64 => |v| *v,
    usize => |v| *v as u64,
    Count => |v| v.0,
    ByteSize => |v| v.0,
}

impl BindValue for i64 {
    fn bind_value(&self, name: &str, binding: &mut Binding) {
        binding.bytes(name, &self.to_be_bytes());
    }
}

impl BindValue for Moment {
    fn bind_value(&self, name: &str, binding: &mut Binding) {
        self.0.bind_value(name, binding);
    }
}

impl BindValue for Span {
    fn bind_value(&self, name: &str, binding: &mut Binding) {
        let nanos = self.0.as_nanos().to_be_bytes();
        binding.bytes(name, &nanos);
    }
}

impl BindValue for bool {
    fn bind_value(&self, name: &str, binding: &mut Binding) {
        binding.flag(name, *self);
    }
}

/// A relative path binds its components as a list; an absolute one binds a `true` flag under
/// the same name before that list, so the two never bind alike.
impl BindValue for PathName {
    fn bind_value(&self, name: &str, binding: &mut Binding) {
        if self.is_absolute() {
            binding.flag(name, true);
        }
        binding.list(name, self.components());
    }
}

/// A value bound as text, alone or in a list or set: `String`, `str`, [`Id`], [`Name`],
/// [`Address`], [`Configured`].
pub trait BindText {
    /// The text bound.
    fn bound_text(&self) -> &str;
}

macro_rules! bind_text_items {
    ($($ty:ty => |$v:ident| $e:expr),+ $(,)?) => {$(
        impl BindText for $ty {
            fn bound_text(&self) -> &str {
                let $v = self;
                $e
            }
        }
    )+};
}

bind_text_items! {
    String => |v| v,
    str => |v| v,
    Id => |v| v.as_str(),
    Name => |v| v.as_str(),
    Address => |v| v.as_str(),
    Configured => |v| v.as_str(),
}

impl<T: BindText> BindValue for [T] {
    fn bind_value(&self, name: &str, binding: &mut Binding) {
        binding.list(name, self.iter().map(BindText::bound_text));
    }
}

impl<T: BindText> BindValue for Vec<T> {
    fn bind_value(&self, name: &str, binding: &mut Binding) {
        self.as_slice().bind_value(name, binding);
    }
}

impl BindValue for Vec<u8> {
    fn bind_value(&self, name: &str, binding: &mut Binding) {
        binding.bytes(name, self);
    }
}

impl<T: BindText> BindValue for BTreeSet<T> {
    fn bind_value(&self, name: &str, binding: &mut Binding) {
        binding.set(name, self.iter().map(BindText::bound_text));
    }
}

impl<T: BindText, S: std::hash::BuildHasher> BindValue for HashSet<T, S> {
    fn bind_value(&self, name: &str, binding: &mut Binding) {
        binding.set(name, self.iter().map(BindText::bound_text));
    }
}

impl<T: BindValue> BindValue for Option<T> {
    fn bind_value(&self, name: &str, binding: &mut Binding) {
        match self {
            Some(value) => value.bind_value(name, binding),
            None => {
                binding.optional_text(name, None);
            }
        }
    }
}

impl<T: BindValue + ?Sized> BindValue for &T {
    fn bind_value(&self, name: &str, binding: &mut Binding) {
        (**self).bind_value(name, binding);
    }
}

impl<T: BindValue + ?Sized> BindValue for Box<T> {
    fn bind_value(&self, name: &str, binding: &mut Binding) {
        (**self).bind_value(name, binding);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::question::Question;
    use crate::target::{Fingerprint, Target};

    struct At(PathName);

    crate::wording!(struct Shown = "{}";);

    impl Target for At {
        const OPERATION: &'static str = "at";
        fn bind(&self, binding: &mut Binding) {
            self.0.bind_value("path", binding);
        }
        fn question(&self) -> Question {
            Question::new::<Shown>([crate::Fact::path(self.0.clone())])
        }
    }

    fn bound(path: PathName) -> Fingerprint {
        crate::target::binding_fingerprint(&At(path))
    }

    #[test]
    fn absolute_and_relative_paths_bind_apart() {
        let absolute = bound(PathName::from_slashes("/data/x.txt"));
        assert_ne!(absolute, bound(PathName::from_slashes("data/x.txt")));
        // Positive control: the same path binds the same, whichever way it was built.
        assert_eq!(absolute, bound(PathName::absolute(["data", "x.txt"])));
    }
}
