//! The proofs a guarded operation consumes: [`Approved`], [`Exempt`] and [`Clearance`].
//!
//! None of them can be built outside this crate except through the [`Guard`](crate::Guard),
//! none is `Clone`, `Copy`, `Default` or `Deserialize`, and each owns its target, so the
//! operation that runs is the one that was approved.

use crate::target::{Conditional, Target};

/// How an approval was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApprovedBy {
    /// A person accepted the question in a dialog shown by the client.
    Dialog,
    /// The same call was made twice, the second quoting the token the first returned. This
    /// proves nothing more than that.
    Token,
    /// The person approved the server-held record on the approval page, with their passkey.
    Page,
    /// The person's identity provider approved the server-held record on their device
    /// (OpenID Connect CIBA), in a token checked against the record.
    Ciba,
}

/// Proof that exactly this target was approved: by a person in a dialog, or by the two-call
/// token where no dialog could be shown.
///
/// Only the [`Guard`](crate::Guard) makes one. An operation that must not run unapproved takes
/// it by value.
#[must_use = "an approval does nothing until the operation consumes it"]
pub struct Approved<T: Target> {
    target: T,
    by: ApprovedBy,
}

impl<T: Target> Approved<T> {
    pub(crate) fn new(target: T, by: ApprovedBy) -> Self {
        Self { target, by }
    }

    /// The approved target.
    pub fn target(&self) -> &T {
        &self.target
    }

    /// How the approval was obtained.
    pub fn approved_by(&self) -> ApprovedBy {
        self.by
    }

    /// Consumes the approval, giving back its target.
    pub fn into_target(self) -> T {
        self.target
    }
}

impl<T: Target + std::fmt::Debug> std::fmt::Debug for Approved<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approved")
            .field("target", &self.target)
            .field("by", &self.by)
            .finish()
    }
}

/// Proof that the guard evaluated a conditional target's condition and found that no one
/// needs to be asked. Exists only for [`Conditional`] targets.
#[must_use = "an exemption does nothing until the operation consumes it"]
pub struct Exempt<T: Conditional> {
    target: T,
}

impl<T: Conditional> Exempt<T> {
    pub(crate) fn new(target: T) -> Self {
        Self { target }
    }

    /// The target.
    pub fn target(&self) -> &T {
        &self.target
    }

    /// Consumes the exemption, giving back its target.
    pub fn into_target(self) -> T {
        self.target
    }
}

impl<T: Conditional + std::fmt::Debug> std::fmt::Debug for Exempt<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exempt")
            .field("target", &self.target)
            .finish()
    }
}

/// What a conditionally guarded operation consumes: an approval, or an exemption.
#[must_use = "a clearance does nothing until the operation consumes it"]
pub enum Clearance<T: Conditional> {
    /// The condition held and the target was approved.
    Approved(Approved<T>),
    /// The condition did not hold; no one needed to be asked.
    Exempt(Exempt<T>),
}

impl<T: Conditional> Clearance<T> {
    /// The cleared target.
    pub fn target(&self) -> &T {
        match self {
            Self::Approved(approved) => approved.target(),
            Self::Exempt(exempt) => exempt.target(),
        }
    }

    /// How the target was approved, or `None` when it was exempt.
    pub fn approved_by(&self) -> Option<ApprovedBy> {
        match self {
            Self::Approved(approved) => Some(approved.approved_by()),
            Self::Exempt(_) => None,
        }
    }

    /// Consumes the clearance, giving back its target.
    pub fn into_target(self) -> T {
        match self {
            Self::Approved(approved) => approved.into_target(),
            Self::Exempt(exempt) => exempt.into_target(),
        }
    }
}

impl<T: Conditional + std::fmt::Debug> std::fmt::Debug for Clearance<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Approved(approved) => approved.fmt(f),
            Self::Exempt(exempt) => exempt.fmt(f),
        }
    }
}
