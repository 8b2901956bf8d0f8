//! Every guard scenario runs in both protocol eras ([`ask_first::testing::Era`]), for the
//! integration tests that drive a guarded server with an in-process rmcp client
//! (`behaviour.rs`, `cancellation.rs`, `ciba.rs`).

/// Runs each scenario (an `async fn(Era)` at the test file's root) once per era, as
/// `legacy::name` and `modern::name`.
macro_rules! in_both_eras {
    ($($name:ident),+ $(,)?) => {
        mod legacy {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(ask_first::testing::Era::Legacy).await;
                }
            )+
        }
        mod modern {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(ask_first::testing::Era::Modern).await;
                }
            )+
        }
    };
}
