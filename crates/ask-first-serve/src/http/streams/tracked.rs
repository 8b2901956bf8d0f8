//! A long-lived response stream with what it holds: its places, its dialog carrier's token,
//! its idle timer, and the token that ends it when its credential is found revoked.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use futures::Stream;
use http::header;
use tokio_util::sync::{CancellationToken, DropGuard, WaitForCancellationFutureOwned};

/// Wraps an event-stream response's body so that `held` lives as long as the stream, `gone` is
/// cancelled if the client drops it before its end, and it ends after `idle` without an event
/// or when `end` is cancelled. Other responses are returned as they are (their places freed at
/// once).
pub(super) fn track(
    response: Response,
    held: Option<Box<dyn Send + Sync>>,
    gone: Option<DropGuard>,
    idle: Option<Duration>,
    end: Option<CancellationToken>,
) -> Response {
    let streaming = response.status().is_success()
        && response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|kind| kind.starts_with("text/event-stream"));
    if !streaming {
        if let Some(gone) = gone {
            gone.disarm();
        }
        return response;
    }
    let (parts, body) = response.into_parts();
    let tracked = Tracked {
        inner: body.into_data_stream(),
        held,
        gone,
        idle: idle.map(|idle| (idle, Box::pin(tokio::time::sleep(idle)))),
        end: end.map(|end| Box::pin(end.cancelled_owned())),
        ended: false,
    };
    Response::from_parts(parts, Body::from_stream(tracked))
}

/// A response stream with its places, its carrier token and its idle timer.
struct Tracked {
    inner: axum::body::BodyDataStream,
    held: Option<Box<dyn Send + Sync>>,
    gone: Option<DropGuard>,
    idle: Option<(Duration, Pin<Box<tokio::time::Sleep>>)>,
    /// Ends the stream when its credential is found revoked.
    end: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    ended: bool,
}

impl Tracked {
    /// The stream reached its end: the carrier is not gone, the places are freed.
    fn end(&mut self) {
        self.ended = true;
        if let Some(gone) = self.gone.take() {
            gone.disarm();
        }
        self.held = None;
    }
}

impl Stream for Tracked {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(None);
        }
        if this
            .end
            .as_mut()
            .is_some_and(|end| end.as_mut().poll(cx).is_ready())
        {
            tracing::info!("ended a long-lived stream whose credential is no longer accepted");
            this.end();
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(None) => {
                this.end();
                Poll::Ready(None)
            }
            Poll::Ready(Some(Ok(bytes))) => {
                // SSE comments (`:`) are keep-alives; anything else is an event.
                if !bytes.starts_with(b":")
                    && let Some((idle, sleep)) = &mut this.idle
                {
                    sleep.as_mut().reset(tokio::time::Instant::now() + *idle);
                }
                Poll::Ready(Some(Ok(bytes)))
            }
            Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(error))),
            Poll::Pending => {
                let idle_out = this
                    .idle
                    .as_mut()
                    .is_some_and(|(_, sleep)| sleep.as_mut().poll(cx).is_ready());
                if idle_out {
                    tracing::info!("ended a long-lived stream that carried no event for too long");
                    this.end();
                    return Poll::Ready(None);
                }
                Poll::Pending
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::http::streams) fn event_stream(
        chunks: Vec<&'static [u8]>,
        end: bool,
    ) -> Response {
        use futures::StreamExt;
        let stream = futures::stream::iter(
            chunks
                .into_iter()
                .map(|chunk| Ok::<_, std::convert::Infallible>(Bytes::from_static(chunk))),
        );
        let body = if end {
            Body::from_stream(stream)
        } else {
            Body::from_stream(stream.chain(futures::stream::pending()))
        };
        http::Response::builder()
            .header(header::CONTENT_TYPE, "text/event-stream")
            .body(body)
            .expect("response")
    }

    #[tokio::test]
    async fn a_stream_dropped_before_its_end_cancels_its_carrier_and_an_ended_one_does_not() {
        use futures::StreamExt;
        let gone = CancellationToken::new();
        let response = track(
            event_stream(vec![b"data: 1\n\n"], false),
            None,
            Some(gone.clone().drop_guard()),
            None,
            None,
        );
        let mut body = response.into_body().into_data_stream();
        assert!(body.next().await.is_some());
        assert!(!gone.is_cancelled());
        drop(body);
        assert!(gone.is_cancelled());

        let gone = CancellationToken::new();
        let response = track(
            event_stream(vec![b"data: 1\n\n"], true),
            None,
            Some(gone.clone().drop_guard()),
            None,
            None,
        );
        let bytes = axum::body::to_bytes(response.into_body(), 1024)
            .await
            .expect("body");
        assert_eq!(&bytes[..], b"data: 1\n\n");
        assert!(!gone.is_cancelled());
    }
}
