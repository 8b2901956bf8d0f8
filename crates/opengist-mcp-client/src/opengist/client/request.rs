//! The request core every call goes through: URLs, sending (reads retried, writes never),
//! status checks, error bodies, JSON parsing within a size cap, and transport failures
//! told apart for the model.

use super::*;

impl OpengistClient {
    /// `<base>/<segments...>`, each segment percent-encoded as one path segment.
    pub(in crate::opengist) fn endpoint(&self, segments: &[&str]) -> Result<Url, OpengistError> {
        build_url(&self.inner.base, segments)
    }

    pub(super) fn raw_file_url(
        &self,
        id: &GistId,
        sha: &Sha,
        filename: &str,
    ) -> Result<Url, OpengistError> {
        let mut url = self.endpoint(&["api", "gists", id.as_str(), "files", sha.as_str()])?;
        // Appended already encoded: `set_path` keeps `%XX` escapes as they are.
        let path = format!("{}/{}", url.path(), raw_filename_segment(filename));
        url.set_path(&path);
        Ok(url)
    }

    /// A 404 for a gist this token cannot see; cheap (one commit).
    pub(super) async fn ensure_visible(&self, id: &GistId) -> Result<(), OpengistError> {
        let mut url = self.endpoint(&["api", "gists", id.as_str(), "commits"])?;
        add_paging(&mut url, 1, 1);
        let call = CallInfo::new("read a gist", Scope::GistRead, format!("gist {id}"));
        let response = self
            .send_read(url, HeaderValue::from_static("application/json"), &call)
            .await?;
        self.check(response, &call).await.map(drop)
    }

    /// A JSON GET as [`send_read`](Self::send_read) sends it, and when Opengist began
    /// answering at the earliest (its `Date` header less the time the request took).
    pub(super) async fn send_read_timed(
        &self,
        url: Url,
        call: &CallInfo,
    ) -> Result<(Response, Option<ReadTime>), OpengistError> {
        let started = Instant::now();
        let response = self
            .send_read(url, HeaderValue::from_static("application/json"), call)
            .await?;
        let date = response
            .headers()
            .get(header::DATE)
            .and_then(|v| v.to_str().ok());
        let read = ReadTime::from_date_header(date, started.elapsed());
        Ok((response, read))
    }

    /// GET with retries on 502/503/504 and dropped connections. Returns any status.
    pub(super) async fn send_read(
        &self,
        url: Url,
        accept: HeaderValue,
        call: &CallInfo,
    ) -> Result<Response, OpengistError> {
        self.send_get(url, accept, None, call).await
    }

    /// [`send_read`](Self::send_read), with `authorization` in place of the API's when given.
    pub(super) async fn send_get(
        &self,
        url: Url,
        accept: HeaderValue,
        authorization: Option<&HeaderValue>,
        call: &CallInfo,
    ) -> Result<Response, OpengistError> {
        let mut attempt = 0usize;
        loop {
            let started = Instant::now();
            let mut request = self
                .http()?
                .get(url.clone())
                .header(header::ACCEPT, accept.clone());
            if let Some(value) = authorization.or(self.inner.api_auth.as_ref()) {
                request = request.header(header::AUTHORIZATION, value.clone());
            }
            let turn = self.inner.limiter.turn(call).await?;
            let result = request.send().await;
            drop(turn);
            let elapsed_ms = started.elapsed().as_millis() as u64;
            let retry_delay = self.inner.retry_delays.get(attempt).copied();
            match result {
                Ok(response) => {
                    let status = response.status().as_u16();
                    tracing::debug!(
                    target: LOG_TARGET,
                                method = "GET",
                                path = url.path(),
                                status,
                                elapsed_ms,
                                attempt,
                                "opengist request"
                            );
                    match retry_delay {
                        Some(delay) if matches!(status, 502..=504) => {
                            drop(response);
                            tokio::time::sleep(delay).await;
                            attempt += 1;
                        }
                        _ => return Ok(response),
                    }
                }
                Err(e) => {
                    tracing::debug!(
                    target: LOG_TARGET,
                                method = "GET",
                                path = url.path(),
                                failure = failure_kind(&e),
                                elapsed_ms,
                                attempt,
                                "opengist request failed"
                            );
                    match retry_delay {
                        Some(delay) if was_dropped(&e) => {
                            tokio::time::sleep(delay).await;
                            attempt += 1;
                        }
                        _ => return Err(self.transport_error(&e, call)),
                    }
                }
            }
        }
    }

    /// The one way a request with a side effect is sent. Never retried. Private to
    /// `opengist/`: the public write methods (here and in each guarded operation's file)
    /// consume a clearance or approval before calling it.
    pub(in crate::opengist) async fn send_write<B: Serialize + ?Sized>(
        &self,
        method: Method,
        url: Url,
        body: Option<&B>,
        call: &CallInfo,
    ) -> Result<Response, OpengistError> {
        let started = Instant::now();
        let mut request = self.http()?.request(method.clone(), url.clone());
        if let Some(value) = &self.inner.api_auth {
            request = request.header(header::AUTHORIZATION, value.clone());
        }
        if let Some(body) = body {
            let bytes = serde_json::to_vec(body).map_err(|_| OpengistError::InvalidArgument {
                message: "the request could not be encoded as JSON".into(),
            })?;
            request = request.body(bytes);
        }
        let turn = self.inner.limiter.turn(call).await?;
        let result = request.send().await;
        drop(turn);
        let elapsed_ms = started.elapsed().as_millis() as u64;
        match result {
            Ok(response) => {
                tracing::debug!(target: LOG_TARGET, method = %method, path = url.path(), status = response.status().as_u16(), elapsed_ms, "opengist request");
                Ok(response)
            }
            Err(e) => {
                tracing::debug!(target: LOG_TARGET, method = %method, path = url.path(), failure = failure_kind(&e), elapsed_ms, "opengist request failed");
                // Past the connect phase the request may have reached Opengist: say so, never
                // "try again" (the write tools read back to learn the outcome).
                Err(match answer_lost(&e, self.inner.request_timeout) {
                    Some(cause) => OpengistError::AnswerLost {
                        operation: call.operation,
                        cause,
                    },
                    None => self.transport_error(&e, call),
                })
            }
        }
    }

    pub(super) async fn get_json<T: DeserializeOwned>(
        &self,
        url: Url,
        call: &CallInfo,
    ) -> Result<T, OpengistError> {
        let response = self
            .send_read(url, HeaderValue::from_static("application/json"), call)
            .await?;
        let response = self.check(response, call).await?;
        self.parse_json(response, call).await
    }

    pub(super) async fn get_page<T: DeserializeOwned>(
        &self,
        url: Url,
        page: u32,
        per_page: u32,
        call: &CallInfo,
    ) -> Result<Page<T>, OpengistError> {
        self.get_page_timed(url, page, per_page, call)
            .await
            .map(|(page, _)| page)
    }

    /// One page of a list, and when Opengist began answering it at the earliest.
    pub(super) async fn get_page_timed<T: DeserializeOwned>(
        &self,
        url: Url,
        page: u32,
        per_page: u32,
        call: &CallInfo,
    ) -> Result<(Page<T>, Option<ReadTime>), OpengistError> {
        let (response, read) = self.send_read_timed(url, call).await?;
        let response = self.check(response, call).await?;
        let headers = PageHeaders::parse(response.headers());
        let items: Vec<T> = self.parse_json(response, call).await?;
        Ok((headers.into_page(items, page, per_page), read))
    }

    /// Passes 2xx through; turns anything else into its error.
    pub(in crate::opengist) async fn check(
        &self,
        response: Response,
        call: &CallInfo,
    ) -> Result<Response, OpengistError> {
        if response.status().is_success() {
            Ok(response)
        } else {
            Err(self.error_from(response, call).await)
        }
    }

    pub(in crate::opengist) async fn error_from(
        &self,
        response: Response,
        call: &CallInfo,
    ) -> OpengistError {
        let status = response.status().as_u16();
        if matches!(status, 401 | 403) {
            // The token or its scopes may have changed: learn them again on next use.
            self.inner.access.forget();
        }
        if status == 401 && self.inner.has_token {
            self.inner.rejected.store(true, Ordering::Relaxed);
        }
        // A body that cannot be read only loses Opengist's message, not the status.
        let body = self
            .read_capped(response, MAX_ERROR_BYTES, call)
            .await
            .unwrap_or_default();
        error::from_status(status, &body, call, &self.inner.base)
            .with_token_use(self.inner.token_use)
    }

    pub(in crate::opengist) async fn parse_json<T: DeserializeOwned>(
        &self,
        response: Response,
        call: &CallInfo,
    ) -> Result<T, OpengistError> {
        let bytes = self.read_capped(response, MAX_JSON_BYTES, call).await?;
        serde_json::from_slice(&bytes).map_err(|e| OpengistError::UnexpectedResponse {
            operation: call.operation,
            detail: error::describe_json_error(&e),
        })
    }

    /// Reads a body chunk by chunk, refusing more than `limit` bytes. A body cut short by a
    /// limit of [`MAX_ERROR_BYTES`] is returned cut.
    pub(in crate::opengist) async fn read_capped(
        &self,
        mut response: Response,
        limit: u64,
        call: &CallInfo,
    ) -> Result<Vec<u8>, OpengistError> {
        // Sized once when Opengist sends a Content-Length (Go's HTTP server does for small
        // answers), instead of growing by doubling.
        let expected = response.content_length().unwrap_or(0).min(limit);
        let mut out = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport_error(&e, call))?
        {
            let room = limit.saturating_sub(out.len() as u64) as usize;
            if chunk.len() > room {
                if limit == MAX_ERROR_BYTES {
                    out.extend_from_slice(chunk.get(..room).unwrap_or_default());
                    return Ok(out);
                }
                return Err(OpengistError::ResponseTooLarge {
                    operation: call.operation,
                    limit,
                });
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }

    /// After a successful PATCH: the gist from the answer, or read back.
    pub(in crate::opengist) async fn written_detail(
        &self,
        response: Response,
        id: &GistId,
        call: &CallInfo,
    ) -> Result<GistDetail, OpengistError> {
        let response = self.check(response, call).await?;
        let parsed = match self.read_capped(response, MAX_JSON_BYTES, call).await {
            Ok(body) => serde_json::from_slice::<GistDetail>(&body).ok(),
            Err(_) => None,
        };
        if let Some(mut detail) = parsed {
            self.complete_head(&mut detail).await;
            return Ok(detail);
        }
        self.get_gist(id)
            .await
            .map_err(|e| OpengistError::WrittenButUnread {
                id: id.to_string(),
                action: "updated",
                reason: e.to_string(),
            })
    }

    pub(super) fn transport_error(&self, e: &reqwest::Error, call: &CallInfo) -> OpengistError {
        let base = &self.inner.base;
        if e.is_timeout() {
            let (phase, after) = if e.is_connect() {
                (TimeoutPhase::Connect, self.inner.connect_timeout)
            } else {
                (TimeoutPhase::Request, self.inner.request_timeout)
            };
            return OpengistError::Timeout {
                phase,
                after,
                host: display_host(base),
                operation: call.operation,
            };
        }
        if has_io_kind(e, &[std::io::ErrorKind::ConnectionRefused]) {
            return OpengistError::ConnectionRefused {
                base: display_base(base),
            };
        }
        let detail = if e.is_dns() {
            "its host name could not be resolved (check OPENGIST_URL)"
        } else if is_tls_problem(e) {
            "the TLS handshake failed (for a self-signed certificate set OPENGIST_INSECURE_TLS=true; for a plain-http instance use http://)"
        } else if was_dropped(e) {
            "the connection was closed before a complete answer arrived (a proxy or the instance may have dropped it); try again"
        } else if e.is_connect() {
            "the connection could not be opened (check OPENGIST_URL and the network)"
        } else if e.is_body() || e.is_decode() {
            "the answer could not be read to the end; try again"
        } else {
            "the request failed before an answer arrived; try again"
        };
        OpengistError::Connection {
            base: display_base(base),
            detail,
        }
    }
}
