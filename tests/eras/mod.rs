//! The two protocol eras every guard scenario runs in, for the integration tests that drive a
//! guarded server with an in-process rmcp client (`behaviour.rs`, `cancellation.rs`).

/// Which protocol a scenario's client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize` handshake, 2025-11-25: the guard pushes `elicitation/create`.
    Legacy,
    /// `server/discover`, 2026-07-28: the guard returns `input_required`.
    Modern,
}

/// Runs each scenario (an `async fn(Era)` at the test file's root) once per era, as
/// `legacy::name` and `modern::name`.
macro_rules! in_both_eras {
    ($($name:ident),+ $(,)?) => {
        mod legacy {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(super::eras::Era::Legacy).await;
                }
            )+
        }
        mod modern {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(super::eras::Era::Modern).await;
                }
            )+
        }
    };
}
