//! The settings that bound work per session and per person over HTTP: guarded calls waiting
//! on a person (pushed dialogs), long-lived response streams, and legacy sessions per person. Read with the other HTTP
//! limits ([`HttpBounds::from_lookup`]) and enforced by [`crate::http`]'s stream layer.
//!
//! | setting | default | what it caps |
//! |---|---|---|
//! | `<PREFIX>_HTTP_MAX_DIALOGS` | 64 | dialogs waiting on a person, in all |
//! | `<PREFIX>_HTTP_DIALOGS_PER_SESSION` | 4 | dialogs waiting on a person, per legacy session |
//! | `<PREFIX>_HTTP_DIALOGS_PER_PRINCIPAL` | 16 | dialogs waiting on a person, per principal |
//! | `<PREFIX>_HTTP_MAX_STREAMS` | 3/4 of the connection cap | long-lived streams, in all |
//! | `<PREFIX>_HTTP_STREAMS_PER_PRINCIPAL` | 32 | long-lived streams, per principal |
//! | `<PREFIX>_HTTP_STREAM_IDLE_SECS` | 300 | how long a `GET` or `subscriptions/listen` stream may carry nothing but keep-alives |
//! | `<PREFIX>_HTTP_SESSIONS_PER_PRINCIPAL` | 64 (never above the session cap) | legacy sessions open at once, per principal |
//!
//! The stream cap must stay below the connection cap, so that short requests always find a
//! connection slot.

use std::time::Duration;

use super::SettingError;

/// Default of the cap on dialogs waiting on a person, in all.
pub const DEFAULT_MAX_DIALOGS: u64 = 64;
/// Default of the cap on dialogs waiting on a person, per legacy session.
pub const DEFAULT_DIALOGS_PER_SESSION: u64 = 4;
/// Default of the cap on dialogs waiting on a person, per principal.
pub const DEFAULT_DIALOGS_PER_PRINCIPAL: u64 = 16;
/// Default of the cap on long-lived streams per principal.
pub const DEFAULT_STREAMS_PER_PRINCIPAL: u64 = 32;
/// Default of the idle-stream timeout, in seconds.
pub const DEFAULT_STREAM_IDLE_SECS: u64 = 300;
/// Default of the cap on legacy sessions per principal (held at or below the session cap).
pub const DEFAULT_SESSIONS_PER_PRINCIPAL: u64 = 64;

/// The names of the settings of this block, as messages show them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundNames {
    /// Dialogs in all (`<PREFIX>_HTTP_MAX_DIALOGS`).
    pub max_dialogs: String,
    /// Dialogs per session (`<PREFIX>_HTTP_DIALOGS_PER_SESSION`).
    pub dialogs_per_session: String,
    /// Dialogs per principal (`<PREFIX>_HTTP_DIALOGS_PER_PRINCIPAL`).
    pub dialogs_per_principal: String,
    /// Long-lived streams in all (`<PREFIX>_HTTP_MAX_STREAMS`).
    pub max_streams: String,
    /// Long-lived streams per principal (`<PREFIX>_HTTP_STREAMS_PER_PRINCIPAL`).
    pub streams_per_principal: String,
    /// The idle-stream timeout (`<PREFIX>_HTTP_STREAM_IDLE_SECS`).
    pub stream_idle: String,
    /// Legacy sessions per principal (`<PREFIX>_HTTP_SESSIONS_PER_PRINCIPAL`).
    pub sessions_per_principal: String,
}

impl BoundNames {
    /// Every name of this block, to change each in place.
    pub fn each_mut(&mut self) -> impl Iterator<Item = &mut String> {
        [
            &mut self.max_dialogs,
            &mut self.dialogs_per_session,
            &mut self.dialogs_per_principal,
            &mut self.max_streams,
            &mut self.streams_per_principal,
            &mut self.stream_idle,
            &mut self.sessions_per_principal,
        ]
        .into_iter()
    }

    /// `<prefix>_HTTP_MAX_DIALOGS`, `<prefix>_HTTP_DIALOGS_PER_SESSION`,
    /// `<prefix>_HTTP_DIALOGS_PER_PRINCIPAL`, `<prefix>_HTTP_MAX_STREAMS`,
    /// `<prefix>_HTTP_STREAMS_PER_PRINCIPAL`, `<prefix>_HTTP_STREAM_IDLE_SECS` and
    /// `<prefix>_HTTP_SESSIONS_PER_PRINCIPAL`.
    pub fn with_prefix(prefix: &str) -> Self {
        let name = |suffix: &str| format!("{prefix}_{suffix}");
        Self {
            max_dialogs: name("HTTP_MAX_DIALOGS"),
            dialogs_per_session: name("HTTP_DIALOGS_PER_SESSION"),
            dialogs_per_principal: name("HTTP_DIALOGS_PER_PRINCIPAL"),
            max_streams: name("HTTP_MAX_STREAMS"),
            streams_per_principal: name("HTTP_STREAMS_PER_PRINCIPAL"),
            stream_idle: name("HTTP_STREAM_IDLE_SECS"),
            sessions_per_principal: name("HTTP_SESSIONS_PER_PRINCIPAL"),
        }
    }
}

/// Caps on guarded calls waiting on a person and on long-lived streams.
///
/// A *dialog* is a guarded call whose approval dialog was pushed (2025-11-25 sessions) and is
/// waiting for the person's answer; its response stream stays open meanwhile, so it also
/// takes a stream place. A *long-lived stream* is a `GET` stream of a legacy session, a
/// `subscriptions/listen` stream, or a response stream held open by a pending dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpBounds {
    /// Dialogs waiting on a person, in all.
    pub max_dialogs: usize,
    /// Dialogs waiting on a person, per legacy session.
    pub dialogs_per_session: usize,
    /// Dialogs waiting on a person, per principal.
    pub dialogs_per_principal: usize,
    /// Long-lived streams in all; `None`: three quarters of the connection cap. Always held
    /// below the connection cap ([`HttpBounds::stream_cap`]).
    pub max_streams: Option<usize>,
    /// Long-lived streams per principal.
    pub streams_per_principal: usize,
    /// How long a `GET` or `subscriptions/listen` stream may carry nothing but keep-alives
    /// before it is ended (the client may open another).
    pub stream_idle: Duration,
    /// Legacy (stateful) sessions open at once per principal, so that one person cannot take
    /// every session place; held at or below the session cap. A new `initialize` past it gets
    /// `429` with `Retry-After`.
    pub sessions_per_principal: usize,
}

impl Default for HttpBounds {
    fn default() -> Self {
        Self {
            max_dialogs: DEFAULT_MAX_DIALOGS as usize,
            dialogs_per_session: DEFAULT_DIALOGS_PER_SESSION as usize,
            dialogs_per_principal: DEFAULT_DIALOGS_PER_PRINCIPAL as usize,
            max_streams: None,
            streams_per_principal: DEFAULT_STREAMS_PER_PRINCIPAL as usize,
            stream_idle: Duration::from_secs(DEFAULT_STREAM_IDLE_SECS),
            sessions_per_principal: DEFAULT_SESSIONS_PER_PRINCIPAL as usize,
        }
    }
}

impl HttpBounds {
    /// The long-lived streams allowed in all with `max_connections` connections: the setting,
    /// or three quarters of the connections, and never more than one below them.
    pub fn stream_cap(&self, max_connections: usize) -> usize {
        self.max_streams
            .unwrap_or(max_connections.saturating_mul(3) / 4)
            .min(max_connections.saturating_sub(1))
    }

    /// The legacy sessions one principal may hold with `max_sessions` in all: the setting, never
    /// above the session cap.
    pub fn session_cap(&self, max_sessions: usize) -> usize {
        self.sessions_per_principal.min(max_sessions).max(1)
    }

    /// Reads the settings `names` through `get` (a value, or `None` when unset or empty).
    /// `max_connections` is the connection cap in force, named `connections_setting`: a stream
    /// cap at or above it is refused.
    pub fn from_lookup(
        names: &BoundNames,
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
        let count = |value: Option<u64>, default: usize| value.map_or(default, |v| v as usize);
        let max_streams = number(&names.max_streams, 1, 65_535)?.map(|v| v as usize);
        if let Some(streams) = max_streams
            && streams >= max_connections
        {
            return Err(SettingError::StreamsNotBelowConnections {
                setting: names.max_streams.clone(),
                connections_setting: connections_setting.to_owned(),
                connections: max_connections,
            });
        }
        Ok(Self {
            max_dialogs: count(number(&names.max_dialogs, 1, 65_536)?, defaults.max_dialogs),
            dialogs_per_session: count(
                number(&names.dialogs_per_session, 1, 65_536)?,
                defaults.dialogs_per_session,
            ),
            dialogs_per_principal: count(
                number(&names.dialogs_per_principal, 1, 65_536)?,
                defaults.dialogs_per_principal,
            ),
            max_streams,
            streams_per_principal: count(
                number(&names.streams_per_principal, 1, 65_536)?,
                defaults.streams_per_principal,
            ),
            stream_idle: number(&names.stream_idle, 1, 86_400)?
                .map_or(defaults.stream_idle, Duration::from_secs),
            sessions_per_principal: count(
                number(&names.sessions_per_principal, 1, 1_000_000)?,
                defaults.sessions_per_principal,
            ),
        })
    }
}

/// The limits of one HTTP server: its `<PREFIX>_HTTP_*` timeouts and caps, read with the
/// other serving settings and enforced by the HTTP layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// How long a connection may take to send a request head.
    pub header_timeout: Duration,
    /// How long a request body may take to arrive, from the end of the head.
    pub body_timeout: Duration,
    /// Connections served at once.
    pub max_connections: usize,
    /// Legacy (stateful) sessions open at once.
    pub max_sessions: usize,
    /// How long a legacy session may be idle before it is closed.
    pub session_idle: Duration,
    /// Caps on guarded calls waiting on a person and on long-lived streams.
    pub bounds: HttpBounds,
    /// Bounds on connections before their caller is identified.
    pub connections: super::ConnectionBounds,
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(super::DEFAULT_HEADER_TIMEOUT_SECS),
            body_timeout: Duration::from_secs(super::DEFAULT_BODY_TIMEOUT_SECS),
            max_connections: super::DEFAULT_MAX_CONNECTIONS as usize,
            max_sessions: super::DEFAULT_MAX_SESSIONS as usize,
            session_idle: Duration::from_secs(super::DEFAULT_SESSION_IDLE_SECS),
            bounds: HttpBounds::default(),
            connections: super::ConnectionBounds::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)], connections: usize) -> Result<HttpBounds, SettingError> {
        let names = BoundNames::with_prefix("NOTES");
        HttpBounds::from_lookup(&names, connections, "NOTES_HTTP_MAX_CONNECTIONS", |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        })
    }

    #[test]
    fn defaults_and_values() {
        let defaults = read(&[], 256).expect("defaults");
        assert_eq!(defaults, HttpBounds::default());
        assert_eq!(defaults.stream_cap(256), 192);
        assert_eq!(defaults.stream_cap(1), 0);
        assert_eq!(defaults.stream_cap(2), 1);
        let set = read(
            &[
                ("NOTES_HTTP_MAX_DIALOGS", "9"),
                ("NOTES_HTTP_DIALOGS_PER_SESSION", "1"),
                ("NOTES_HTTP_DIALOGS_PER_PRINCIPAL", "2"),
                ("NOTES_HTTP_MAX_STREAMS", "10"),
                ("NOTES_HTTP_STREAMS_PER_PRINCIPAL", "3"),
                ("NOTES_HTTP_STREAM_IDLE_SECS", "7"),
                ("NOTES_HTTP_SESSIONS_PER_PRINCIPAL", "5"),
            ],
            256,
        )
        .expect("values");
        assert_eq!(
            set,
            HttpBounds {
                max_dialogs: 9,
                dialogs_per_session: 1,
                dialogs_per_principal: 2,
                max_streams: Some(10),
                streams_per_principal: 3,
                stream_idle: Duration::from_secs(7),
                sessions_per_principal: 5,
            }
        );
        assert_eq!(set.stream_cap(256), 10);
        assert_eq!(set.stream_cap(5), 4);
    }

    #[test]
    fn bad_values_name_their_setting() {
        for (name, bad) in [
            ("NOTES_HTTP_MAX_DIALOGS", "0"),
            ("NOTES_HTTP_DIALOGS_PER_SESSION", "many"),
            ("NOTES_HTTP_DIALOGS_PER_PRINCIPAL", "-1"),
            ("NOTES_HTTP_STREAMS_PER_PRINCIPAL", "1.5"),
            ("NOTES_HTTP_STREAM_IDLE_SECS", "86401"),
            ("NOTES_HTTP_SESSIONS_PER_PRINCIPAL", "0"),
        ] {
            let error = read(&[(name, bad)], 256).expect_err(name);
            assert!(error.to_string().starts_with(name), "{error}");
        }
        let error = read(&[("NOTES_HTTP_MAX_STREAMS", "256")], 256).expect_err("not below");
        let text = error.to_string();
        assert!(
            text.contains("NOTES_HTTP_MAX_STREAMS") && text.contains("NOTES_HTTP_MAX_CONNECTIONS"),
            "{text}"
        );
    }
}
