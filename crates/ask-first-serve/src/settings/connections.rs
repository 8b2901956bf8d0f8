//! The settings that bound connections before anyone is identified: how many one peer address
//! holds, how many may be open without a credential, how long a connection may go without
//! presenting one, and how many places only authenticated connections may take. Read with the
//! other HTTP limits ([`ConnectionBounds::from_lookup`]) and enforced by
//! `crate::http`'s accept loop.
//!
//! | setting | default | what it bounds |
//! |---|---|---|
//! | `<PREFIX>_HTTP_CONNECTIONS_PER_PEER` | 128 (never above the connection cap) | connections open at once from one peer address |
//! | `<PREFIX>_HTTP_MAX_UNAUTHENTICATED` | 128 (never above the connection cap less the reserve) | connections open at once whose requests have not passed the gate yet |
//! | `<PREFIX>_HTTP_AUTHENTICATED_RESERVE` | a quarter of the connection cap | connection places that only authenticated connections take |
//! | `<PREFIX>_HTTP_CREDENTIAL_DEADLINE_SECS` | 5 | how long a connection may stay open before a request of it passes the gate |
//!
//! A connection is *authenticated* once one of its requests passed the gate (the credential
//! check included); before that it is *unauthenticated*, whatever it sent. The reserve must
//! stay below the connection cap, so that new connections always find a place.

use std::time::Duration;

use super::SettingError;

/// Default of the cap on connections per peer address.
pub const DEFAULT_CONNECTIONS_PER_PEER: u64 = 128;
/// Default of the cap on unauthenticated connections, in all.
pub const DEFAULT_MAX_UNAUTHENTICATED: u64 = 128;
/// Default of the deadline to present a credential, in seconds.
pub const DEFAULT_CREDENTIAL_DEADLINE_SECS: u64 = 5;

/// The names of the settings of this block, as messages show them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionNames {
    /// Connections per peer address (`<PREFIX>_HTTP_CONNECTIONS_PER_PEER`).
    pub per_peer: String,
    /// Unauthenticated connections in all (`<PREFIX>_HTTP_MAX_UNAUTHENTICATED`).
    pub max_unauthenticated: String,
    /// Places only authenticated connections take (`<PREFIX>_HTTP_AUTHENTICATED_RESERVE`).
    pub reserve: String,
    /// The deadline to present a credential (`<PREFIX>_HTTP_CREDENTIAL_DEADLINE_SECS`).
    pub credential_deadline: String,
}

impl ConnectionNames {
    /// Every name, to rename them all at once (a server's own spelling) or to check each is
    /// declared.
    pub fn each_mut(&mut self) -> impl Iterator<Item = &mut String> {
        [
            &mut self.per_peer,
            &mut self.max_unauthenticated,
            &mut self.reserve,
            &mut self.credential_deadline,
        ]
        .into_iter()
    }

    /// `<prefix>_HTTP_CONNECTIONS_PER_PEER`, `<prefix>_HTTP_MAX_UNAUTHENTICATED`,
    /// `<prefix>_HTTP_AUTHENTICATED_RESERVE` and `<prefix>_HTTP_CREDENTIAL_DEADLINE_SECS`.
    pub fn with_prefix(prefix: &str) -> Self {
        let name = |suffix: &str| format!("{prefix}_{suffix}");
        Self {
            per_peer: name("HTTP_CONNECTIONS_PER_PEER"),
            max_unauthenticated: name("HTTP_MAX_UNAUTHENTICATED"),
            reserve: name("HTTP_AUTHENTICATED_RESERVE"),
            credential_deadline: name("HTTP_CREDENTIAL_DEADLINE_SECS"),
        }
    }
}

/// Bounds on connections before their caller is identified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionBounds {
    /// Connections open at once from one peer address (held at or below the connection cap:
    /// [`ConnectionBounds::peer_cap`]). Behind a reverse proxy every connection comes from the
    /// proxy's address: raise it to the connection cap there.
    pub per_peer: usize,
    /// Connections open at once that no request has authenticated yet (held at or below the
    /// connection cap less the reserve: [`ConnectionBounds::unauthenticated_cap`]).
    pub max_unauthenticated: usize,
    /// Connection places unauthenticated connections never take; `None`: a quarter of the
    /// connection cap. Always below the connection cap.
    pub reserve: Option<usize>,
    /// How long a connection may stay open before one of its requests passes the gate.
    pub credential_deadline: Duration,
}

impl Default for ConnectionBounds {
    fn default() -> Self {
        Self {
            per_peer: DEFAULT_CONNECTIONS_PER_PEER as usize,
            max_unauthenticated: DEFAULT_MAX_UNAUTHENTICATED as usize,
            reserve: None,
            credential_deadline: Duration::from_secs(DEFAULT_CREDENTIAL_DEADLINE_SECS),
        }
    }
}

impl ConnectionBounds {
    /// The places reserved with `max_connections` connections: the setting, or a quarter of
    /// them, and never all of them.
    pub fn reserve_of(&self, max_connections: usize) -> usize {
        self.reserve
            .unwrap_or(max_connections / 4)
            .min(max_connections.saturating_sub(1))
    }

    /// The unauthenticated connections allowed at once with `max_connections` connections:
    /// the setting, never above the places left by the reserve, and at least one.
    pub fn unauthenticated_cap(&self, max_connections: usize) -> usize {
        self.max_unauthenticated
            .min(max_connections.saturating_sub(self.reserve_of(max_connections)))
            .max(1)
    }

    /// The connections one peer address may hold with `max_connections` connections.
    pub fn peer_cap(&self, max_connections: usize) -> usize {
        self.per_peer.min(max_connections).max(1)
    }

    /// Reads the settings `names` through `get` (a value, or `None` when unset or empty).
    /// `max_connections` is the connection cap in force, named `connections_setting`: a
    /// reserve at or above it is refused.
    pub fn from_lookup(
        names: &ConnectionNames,
        max_connections: usize,
        connections_setting: &str,
        mut get: impl FnMut(&str) -> Option<String>,
    ) -> Result<Self, SettingError> {
        let mut number = |setting: &String, min: u64, max: u64| match get(setting) {
            Some(raw) => raw
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|value| (min..=max).contains(value))
                .map(Some)
                .ok_or_else(|| SettingError::Number {
                    setting: setting.clone(),
                    min,
                    max,
                }),
            None => Ok(None),
        };
        let defaults = Self::default();
        let reserve = number(&names.reserve, 0, 65_535)?.map(|v| v as usize);
        if let Some(reserve) = reserve
            && reserve >= max_connections
        {
            return Err(SettingError::ReserveNotBelowConnections {
                setting: names.reserve.clone(),
                connections_setting: connections_setting.to_owned(),
                connections: max_connections,
            });
        }
        Ok(Self {
            per_peer: number(&names.per_peer, 1, 65_536)?.map_or(defaults.per_peer, |v| v as usize),
            max_unauthenticated: number(&names.max_unauthenticated, 1, 65_536)?
                .map_or(defaults.max_unauthenticated, |v| v as usize),
            reserve,
            credential_deadline: number(&names.credential_deadline, 1, 3600)?
                .map_or(defaults.credential_deadline, Duration::from_secs),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)], connections: usize) -> Result<ConnectionBounds, SettingError> {
        let names = ConnectionNames::with_prefix("NOTES");
        ConnectionBounds::from_lookup(&names, connections, "NOTES_HTTP_MAX_CONNECTIONS", |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        })
    }

    #[test]
    fn defaults_and_values() {
        let defaults = read(&[], 256).expect("defaults");
        assert_eq!(defaults, ConnectionBounds::default());
        assert_eq!(defaults.reserve_of(256), 64);
        assert_eq!(defaults.unauthenticated_cap(256), 128);
        assert_eq!(defaults.unauthenticated_cap(100), 75);
        assert_eq!(defaults.unauthenticated_cap(1), 1);
        assert_eq!(defaults.peer_cap(256), 128);
        assert_eq!(defaults.peer_cap(5), 5);
        let set = read(
            &[
                ("NOTES_HTTP_CONNECTIONS_PER_PEER", "3"),
                ("NOTES_HTTP_MAX_UNAUTHENTICATED", "9"),
                ("NOTES_HTTP_AUTHENTICATED_RESERVE", "0"),
                ("NOTES_HTTP_CREDENTIAL_DEADLINE_SECS", "2"),
            ],
            256,
        )
        .expect("values");
        assert_eq!(
            set,
            ConnectionBounds {
                per_peer: 3,
                max_unauthenticated: 9,
                reserve: Some(0),
                credential_deadline: Duration::from_secs(2),
            }
        );
        assert_eq!(set.unauthenticated_cap(256), 9);
        assert_eq!(set.unauthenticated_cap(4), 4);
    }

    #[test]
    fn bad_values_name_their_setting() {
        for (name, bad) in [
            ("NOTES_HTTP_CONNECTIONS_PER_PEER", "0"),
            ("NOTES_HTTP_MAX_UNAUTHENTICATED", "many"),
            ("NOTES_HTTP_AUTHENTICATED_RESERVE", "-1"),
            ("NOTES_HTTP_CREDENTIAL_DEADLINE_SECS", "0"),
            ("NOTES_HTTP_CREDENTIAL_DEADLINE_SECS", "3601"),
        ] {
            let error = read(&[(name, bad)], 256).expect_err(name);
            assert!(error.to_string().starts_with(name), "{error}");
        }
        let error = read(&[("NOTES_HTTP_AUTHENTICATED_RESERVE", "256")], 256).expect_err("all");
        let text = error.to_string();
        assert!(
            text.contains("NOTES_HTTP_AUTHENTICATED_RESERVE")
                && text.contains("NOTES_HTTP_MAX_CONNECTIONS"),
            "{text}"
        );
    }
}
