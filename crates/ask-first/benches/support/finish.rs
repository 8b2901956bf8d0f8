//! Driving a future from a benchmark without measuring a scheduler.

use std::task::{Context, Poll, Waker};

use tokio::runtime::Runtime;

/// Runs `future` to its end: polled once in place (what the benchmarks time, an exempt call,
/// a token's issue or a cached credential check, finishes without waiting, so no scheduler is
/// measured with it), on `runtime` if it has to wait. Call it inside `runtime.enter()`.
pub(crate) fn finish<F: Future>(runtime: &Runtime, future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => runtime.block_on(future),
    }
}
