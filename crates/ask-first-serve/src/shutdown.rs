//! Graceful shutdown: the signals that stop a server.

/// Completes on Ctrl-C (SIGINT) or, on Unix, SIGTERM: what a terminal, a process manager or a
/// container runtime sends. HTTP serving then cancels every session (pending calls and open
/// dialogs end, streams close) and waits for open requests to finish.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}
